# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, 64, 64, 32
# A K loop starting at a runtime offset: the aref index is the trip
# counter (k - lo) / BK, computed in each partition.
import triton
import triton.language as tl


@triton.jit
def offset_start(a_ptr, b_ptr, c_ptr, M, N, K, lo,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(lo, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))
