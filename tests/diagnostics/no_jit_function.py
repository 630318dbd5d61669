# args: --signature "*fp32"
import triton.language as tl


def kernel(x_ptr):
    offs = tl.arange(0, 16)
