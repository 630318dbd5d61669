# args: --signature "*fp32, i32" -D BLOCK=1048576 --emit cuda
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
