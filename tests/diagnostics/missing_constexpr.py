# args: --signature "*fp32, i32"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs, mask=offs < n)
