# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, 1, i32:16, 1, i32:16, 1, 128, 256, 64
# lowered: a, b
# The matmul tutorial's pointer tiles: rows and columns wrapped `% M` and
# `% N` (the wrap proof lets the copy read zeros there instead), K masked
# by `k_left`. A is one [128, 64] box; B's 256 fp16 columns are four
# [64, 64] boxes, still one desc_load of the whole [64, 256] tile. The
# pointer tiles and their carried increments die.
import triton
import triton.language as tl


@triton.jit
def matmul_wrapped(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = (pid_m * BM + tl.arange(0, BM)) % M
    cols = (pid_n * BN + tl.arange(0, BN)) % N
    rows = tl.max_contiguous(tl.multiple_of(rows, BM), BM)
    cols = tl.max_contiguous(tl.multiple_of(cols, BN), BN)
    ks = tl.arange(0, BK)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        k_left = K - kt * BK
        a = tl.load(a_ptrs, mask=ks[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    out_rows = pid_m * BM + tl.arange(0, BM)
    out_cols = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16),
             mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))
