# args: --kernel softmax_kernel --signature '*fp32:16, *fp32:16, i32, i32, 1e9, i32, 1024' -D 'BLOCK_SIZE=1024' --num-warps 4
"""Row-wise softmax of an fp32 matrix, one row per program.

The row is loaded once into registers (BLOCK_SIZE is the next power of two
of the row length); padding lanes read -inf so they vanish in the max and
contribute exp(-inf) = 0 to the sum.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    if row < n_rows:
        cols = tl.arange(0, BLOCK_SIZE)
        col_mask = cols < n_cols
        row_in = in_ptr + row * in_row_stride
        x = tl.load(row_in + cols, mask=col_mask, other=-float("inf"))
        # Subtracting the row max keeps exp() in range.
        shifted = x - tl.max(x, axis=0)
        numer = tl.exp(shifted)
        denom = tl.sum(numer, axis=0)
        y = numer / denom
        row_out = out_ptr + row * out_row_stride
        tl.store(row_out + cols, y, mask=col_mask)
