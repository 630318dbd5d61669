# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 64, 32, 4
# A persistent loop that forgets to reset its accumulator: rows wrapped
# for one tile are carried into the next tile's iteration, whose store
# masks other rows, so A is not TMA. B's columns do not change between
# tiles (one column of tiles), so its wrap stays proven.
import triton
import triton.language as tl


@triton.jit
def persistent_no_reset(a_ptr, b_ptr, c_ptr, M, N, K,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                        NUM_SMS: tl.constexpr):
    cols = tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for tile in range(tl.program_id(0), tl.cdiv(M, BM), NUM_SMS):
        rows = tile * BM + tl.arange(0, BM)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + (rows % M)[:, None] * K + (k + ks)[None, :],
                        mask=(k + ks)[None, :] < K, other=0.0)
            b = tl.load(b_ptr + (k + ks)[:, None] * N + (cols % N)[None, :],
                        mask=(k + ks)[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))
