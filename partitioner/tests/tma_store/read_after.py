# signature: *fp16:16, *fp16:16, i32, i32, i32:16, 1, 64, 64
# stored: 1
# The first store is followed by a load of what it wrote: a TMA store
# completes after the program has moved on, so it stays as written. The
# second becomes a TMA store: the atomic after it updates another tensor
# (another pointer argument).
import triton
import triton.language as tl


@triton.jit
def twice(x_ptr, y_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    offs = rows[:, None] * stride_m + cols[None, :] * stride_n
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y + 1.0, mask=mask)
    tl.atomic_add(x_ptr + offs, y, mask=mask)
