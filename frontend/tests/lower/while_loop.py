# signature: *i32:16, i32
# A `while` loop with two carried scalars and a conditional expression.
import triton
import triton.language as tl


@triton.jit
def kernel(out_ptr, n):
    i = 0
    total = 0
    while i < n:
        total += i if i % 2 == 0 else -i
        i += 1
    tl.store(out_ptr, total)
