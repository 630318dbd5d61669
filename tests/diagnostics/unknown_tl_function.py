# args: --signature "*fp32, i32, 64"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.lod(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x, mask=offs < n)
