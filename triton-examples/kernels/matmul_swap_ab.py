"""C = A @ B for a skinny A: M of a few rows (the tokens of a decode step)
against a wide B. A warpgroup MMA takes 64 rows of its A operand, so with
M = 16 three quarters of every instruction would multiply padding. The
kernel computes the transposed product instead, C^T = B^T @ A^T: N fills
the MMA's 64-row side and M becomes its N side (a multiple of 8 is
enough), and it stores the transpose of the accumulator.

Both operands are transposes of row-major tiles: `tl.trans(b)` ([BLOCK_N,
BLOCK_K], contiguous along N) is read by wgmma MN-major with its transpose
bit, `tl.trans(a)` ([BLOCK_K, BLOCK_M], contiguous along K) K-major; the
accumulator, transposed for the store, is converted to a blocked layout.
fp16 in, fp32 accumulation, fp16 out; M, N and K are masked.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_swap_ab_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc_t = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc_t = tl.dot(tl.trans(b), tl.trans(a), acc_t)

    c = tl.trans(acc_t).to(tl.float16)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
