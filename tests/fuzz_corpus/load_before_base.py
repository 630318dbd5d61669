# args: --signature "*fp32:16, *fp32:16, 128" --emit cuda
import triton
import triton.language as tl


@triton.jit
def shift(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs - 1)
    tl.store(y_ptr + offs, a)
