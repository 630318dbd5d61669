"""C = A @ B (fp16 in, fp16 out) whose epilogue also accumulates the row
sums of the fp32 product: row_sum[m] += sum_n (A @ B)[m, n].

Each program reduces its accumulator tile along N and adds its partial sums
atomically, so row_sum must start at zero. Padding columns are zero (masked
loads of B), so they do not disturb the sums.
"""
import triton
import triton.language as tl


@triton.jit
def gemm_row_reduce_kernel(
    a_ptr, b_ptr, c_ptr, row_sum_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = ks < K - k0
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)

    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(tl.float16),
             mask=row_ok[:, None] & col_ok[None, :])
    partial = tl.sum(acc, axis=1)
    tl.atomic_add(row_sum_ptr + rows, partial, mask=row_ok)
