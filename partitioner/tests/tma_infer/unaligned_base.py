# signature: *fp16, *fp16:16, i32:16, i32:16, 64, 64
# The same copy with the unit stride specialized away, but the source
# pointer has no `:16` alignment hint; the destination has.
import triton
import triton.language as tl


@triton.jit
def copy_rows(a_ptr, out_ptr, M, stride_am, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :],
                mask=rows[:, None] < M, other=0.0)
    b = tl.load(out_ptr + rows[:, None] * stride_am + ks[None, :],
                mask=rows[:, None] < M, other=0.0)
    tl.store(out_ptr + rows[:, None] * stride_am + ks[None, :], a + b, mask=rows[:, None] < M)
