# args: --signature "*fp32"
import triton
import triton.language as tl


@triton.jit
def first(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), 1.0)


@triton.jit
def second(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), 2.0)
