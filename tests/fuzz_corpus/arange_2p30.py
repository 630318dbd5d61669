# args: --signature "*fp32, i32" -D BLOCK=1073741824
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
