# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32
# Nothing to specialize: the K loop also stores (a running partial sum per
# step), and without alias analysis a producer running ahead could load
# tiles before an earlier iteration's store to them. The kernel stays plain.
import triton
import triton.language as tl


@triton.jit
def partial_sums(a_ptr, b_ptr, c_ptr, M, N, K,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
