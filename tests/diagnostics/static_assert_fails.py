# args: --signature "*fp32, 48"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs)
