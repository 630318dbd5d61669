# args: --signature "*fp32, i32"
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n):
    acc = 0
    offs = tl.arange(0, 16)
    for i in range(n):
        acc = acc + tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, acc)
