# signature: *fp16:16, i32, i32, 1, i32:16, 64, 64
# stored: 0
# The tile's rows are the tensor's contiguous dimension (a column-major
# output): the staged box would be the transpose of the tile, so the
# store stays as written.
import triton
import triton.language as tl


@triton.jit
def fill(y_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    y = tl.zeros((BM, BN), dtype=tl.float16) + 1.0
    tl.store(y_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n, y,
             mask=(rows[:, None] < M) & (cols[None, :] < N))
