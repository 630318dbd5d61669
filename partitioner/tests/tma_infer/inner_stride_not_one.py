# signature: *fp16:16, *fp16:16, i32:16, i32:16, i32, 64, 64
# The column stride is a plain argument: TMA needs the innermost stride to
# be known to be 1 (Triton specializes an argument equal to 1 to the
# constant 1; this signature does not).
import triton
import triton.language as tl


@triton.jit
def copy_rows(a_ptr, out_ptr, M, stride_am, stride_ak, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                mask=rows[:, None] < M, other=0.0)
    tl.store(out_ptr + rows[:, None] * BK + ks[None, :], a, mask=rows[:, None] < M)
