# args: --signature "*i32"
# Unbounded recursion: the error names the limit and labels each call site
# once, not once per level.
import triton
import triton.language as tl


@triton.jit
def down(x):
    return down(x + 1)


@triton.jit
def kernel(x_ptr):
    tl.store(x_ptr, down(0))
