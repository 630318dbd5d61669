# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 64, 128, 64
# A GEMM on a grid of column blocks (x) by row blocks (y), as a decode
# product launches it with one row block: B's box moves with pid x (BN
# columns apart, its width) and with the K loop (BK rows a step, its
# height), so the launch reads B once where the grid has one program
# along y and z; A's moves with pid y and the loop, once where it has
# one along x and z.
import triton
import triton.language as tl


@triton.jit
def gemm_columns_by_rows(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :],
                    mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :],
                    mask=((k + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
