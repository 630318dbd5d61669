# args: --signature "*fp16, *fp16, *fp32"
import triton
import triton.language as tl


@triton.jit
def kernel(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 64)
    k = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + k[None, :])
    b = tl.load(b_ptr + r[:, None] * 64 + r[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], c)
