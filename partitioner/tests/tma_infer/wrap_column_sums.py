# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32
# Rows wrapped by `% M` are summed into column sums: every stored value
# depends on them, so A stays an ordinary load. B's wrapped columns only
# reach the masked column sums.
import triton
import triton.language as tl


@triton.jit
def column_sums(a_ptr, b_ptr, s_ptr, M, N, K,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + (rows % M)[:, None] * K + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * N + (cols % N)[None, :])
        acc = tl.dot(a, b, acc)
    tl.atomic_add(s_ptr + cols, tl.sum(acc, axis=0), mask=cols < N)
