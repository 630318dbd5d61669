# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, 64, 64, 64
# lowered: a
# B given column-major: its copy is a [BN, BK] box, the transpose of the
# tile, so B stays an ordinary load (with its pointer tile and masks);
# row-major A becomes a desc_load.
import triton
import triton.language as tl


@triton.jit
def matmul_bt(a_ptr, b_ptr, c_ptr, M, N, K, stride_bn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :],
                    mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] + cols[None, :] * stride_bn,
                    mask=((k + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))
