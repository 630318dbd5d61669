# args: --signature "*fp32, 64, 32"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, A: tl.constexpr, B: tl.constexpr):
    a = tl.arange(0, A)
    b = tl.arange(0, B)
    tl.store(x_ptr + a, a + b)
