# signature: *fp16:16, *fp16:16, *fp16:16, i32, i32, i32:16, i32:16, 1, i32:16, 1, i32:16, 1, 128, 256, 64
# stored: 1
# The matmul epilogue: rows and columns of C masked by M and N (which
# need not be multiples of anything), the row stride 16-byte aligned.
# The store becomes a desc_store of a descriptor of C with extents M and
# N: TMA drops the rows and columns the mask dropped.
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K,
           stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :] * stride_ak)
        b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk + cols[None, :] * stride_bn)
        acc = tl.dot(a, b, acc)
    c = acc.to(tl.float16)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(rows[:, None] < M) & (cols[None, :] < N))
