"""Layer normalization forward over the last dimension of an fp16 [M, N]
matrix: y = (x - mean) / sqrt(var + eps) * w + b, one row per program.

Rows may be longer than one block, so each pass (mean, variance, output)
walks the row in BLOCK_SIZE chunks. Statistics are computed in fp32 and the
per-row mean and 1/std are stored for the backward pass.
"""
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr,
                          row_stride, N, eps,
                          BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride

    partial_sum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        partial_sum += x
    mean = tl.sum(partial_sum, axis=0) / N

    partial_sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        # Padding lanes would otherwise add mean^2 each.
        centered = tl.where(cols < N, x - mean, 0.0)
        partial_sq += centered * centered
    var = tl.sum(partial_sq, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)

    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        in_row = cols < N
        w = tl.load(w_ptr + cols, mask=in_row)
        b = tl.load(b_ptr + cols, mask=in_row)
        x = tl.load(x_row + cols, mask=in_row, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(tl.float16), mask=in_row)
