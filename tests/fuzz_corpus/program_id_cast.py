# args: --signature "*fp32:16, *fp32:16, i32, 128" --emit ws-ir -o /dev/null
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x * 2.0, mask=mask)
