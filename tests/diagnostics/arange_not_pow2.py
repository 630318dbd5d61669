# args: --signature "*fp32, 100"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs)
