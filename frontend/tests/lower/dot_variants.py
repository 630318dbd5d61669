# signature: *fp16:16, *fp16:16, *fp32:16, *fp8e4nv:16
# `@`, dot with acc=, out_dtype=, input_precision=, trans and fp8.
import triton
import triton.language as tl


@triton.jit
def kernel(a_ptr, b_ptr, c_ptr, f8_ptr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
    acc = a @ b
    acc = tl.dot(a, tl.trans(b), acc=acc)
    h = tl.dot(a, b, out_dtype=tl.float16)
    f = tl.dot(acc, acc, input_precision="ieee")
    q = tl.load(f8_ptr + r[:, None] * 32 + r[None, :])
    g = tl.dot(q, q)
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], acc + h + f + g)
