"""C = A @ B (fp16 in, fp16 out) through device-side tensor descriptors.

A is [M, K], B is [K, N], C is [M, N], all row-major and contiguous. The
descriptors carry the global shape, so out-of-bounds parts of a tile read
as zeros and are not written back. Programs are ordered in groups of
GROUP_SIZE_M rows of tiles, as in matmul.py (and tutorial 09's descriptor
kernels), so that the tiles running at once share their A rows and B
columns in L2.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_descriptor_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1],
                                       block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])

    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    # Column-major tile order: neighbouring programs share a B tile column.
    pid_m = pid % tiles_m
    pid_n = pid // tiles_m
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))
