# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 64, 32
# K indices wrapped by `% K`: the wrapped part is the dot's reduction
# dimension, so every result element depends on it; neither load is TMA.
import triton
import triton.language as tl


@triton.jit
def wrapped_k(a_ptr, b_ptr, c_ptr, M, N, K,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        ks = (k + tl.arange(0, BK)) % K
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :],
                    mask=rows[:, None] < M, other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :],
                    mask=cols[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
