# args: --signature "*i32"
import triton
import triton.language as tl


@triton.jit
def down(x):
    return down(x + 1)


@triton.jit
def rec(x_ptr):
    tl.store(x_ptr, down(0))
