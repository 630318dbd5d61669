# signature: *fp32:16, *fp32:16, *fp32:16
# Float division as Triton spells it: `/` and `tl.fdiv` are Triton's
# (not correctly rounded on NVIDIA GPUs), `tl.div_rn` and
# `tl.fdiv(..., ieee_rounding=True)` round correctly.
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, y_ptr, out_ptr):
    r = tl.arange(0, 16)
    x = tl.load(x_ptr + r)
    y = tl.load(y_ptr + r)
    a = x / y
    b = tl.fdiv(x, y)
    c = tl.div_rn(x, y)
    d = tl.fdiv(x, y, ieee_rounding=True)
    tl.store(out_ptr + r, a + b + c + d)
