# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 64, 32
# Rows wrapped by `% M` reach a store that only masks columns: the rows at
# and past M would be stored with zeros instead of wrapped data, so A stays
# an ordinary load; B's columns are wrapped too, and the store does mask
# them.
import triton
import triton.language as tl


@triton.jit
def matmul_rows_unmasked(a_ptr, b_ptr, c_ptr, M, N, K,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + (rows % M)[:, None] * K + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * N + (cols % N)[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
             mask=cols[None, :] < N)
