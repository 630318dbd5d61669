# signature: *fp16:16, i32:16, 1, 64, 64
# stored: 1
# An unmasked store promises that every address it writes is valid: the
# outer extent is the largest coordinate TMA takes, the inner one the
# last column the grid reaches plus the block, computed on the host.
import triton
import triton.language as tl


@triton.jit
def fill(y_ptr, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    y = tl.zeros((BM, BN), dtype=tl.float16) + 1.0
    tl.store(y_ptr + rows[:, None] * stride_m + cols[None, :] * stride_n, y)
