"""C = A @ B (fp16 in, fp16 out) through host-built tensor descriptors.

The host wraps A [M, K], B [K, N] and C [M, N] in `TensorDescriptor`s whose
block shapes match the kernel's tiles; the kernel only indexes tiles.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_tma_host_kernel(
    a_desc, b_desc, c_desc,
    M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    off_m = (pid // tiles_n) * BLOCK_M
    off_n = (pid % tiles_n) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))
