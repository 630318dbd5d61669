# signature: *fp16:16, *fp32:16, i32, i32, i32, 1, 64, 64
# stored: 0
# Two stores that stay as written: a row stride not known to be a
# multiple of 16 bytes (no `:16` hint), and a 1-D tile.
import triton
import triton.language as tl


@triton.jit
def fill(y_ptr, s_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    y = tl.zeros((BM, BN), dtype=tl.float16) + 1.0
    tl.store(y_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n, y,
             mask=(rows[:, None] < M) & (cols[None, :] < N))
    tl.store(s_ptr + rows, tl.sum(y.to(tl.float32), axis=1), mask=rows < M)
