# args: --signature "*fp32"
# 2^21 elements: a power of two, but past Triton's limit of 2^20 per tile.
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr):
    offs = tl.arange(0, 2097152)
    tl.store(x_ptr + offs, offs)
