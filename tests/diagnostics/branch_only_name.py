# args: --signature "*fp32, i32"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n):
    offs = tl.arange(0, 16)
    if n > 4:
        y = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, y)
