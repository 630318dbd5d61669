# args: --arch sm90
# The advertised form on a kernel without launch cases: every untyped
# parameter is named, and a complete signature is shown, ready to paste.
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, out_ptr, stride_xm, n_cols, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, x * alpha, mask=cols < n_cols)
