# signature: *fp16:16, *fp16:16, *fp16:16, i32, i32, i32:16, i32:16, i32:16, 64, 64, 32
# Rows and columns clamped to 0 past the matrix (the persistent matmul
# tutorial's `tl.where(offs < M, offs, 0)`): like `% M`, the clamped rows
# only reach the masked store, so A and B are TMA copies with extents M
# and N. `c_bad` clamps to 1, which is not known to be a row: not TMA.
import triton
import triton.language as tl


@triton.jit
def clamped(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    rows = tl.where(offs_m < M, offs_m, 0)
    cols = tl.where(offs_n < N, offs_n, 0)
    bad_rows = tl.where(offs_m < M, offs_m, 1)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :],
                    mask=(k + ks)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :],
                    mask=(k + ks)[:, None] < K, other=0.0)
        c_bad = tl.load(a_ptr + bad_rows[:, None] * stride_am + (k + ks)[None, :],
                        mask=(k + ks)[None, :] < K, other=0.0)
        acc = tl.dot(a + c_bad, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
