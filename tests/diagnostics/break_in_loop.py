# args: --signature "*fp32, i32"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n):
    offs = tl.arange(0, 16)
    for i in range(n):
        if i > 3:
            break
        tl.store(x_ptr + offs, offs)
