# args: --signature "*fp32, i32"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n):
    offs = tl.arange(0, 16)
    with open("log.txt") as f:
        tl.store(x_ptr + offs, offs)
