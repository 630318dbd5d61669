# signature: *fp16:16, *bf16:16, *i8:16, *u32:16, *fp32:16
# Triton's promotion rules: weak Python scalars, f16 division in f32,
# f16 with bf16 -> f16 (Triton tests fp16 first), int8 with uint32 -> uint32,
# int `/` int -> f32,
# `//` and `%` on ints, comparisons and where().
import triton
import triton.language as tl


@triton.jit
def kernel(h_ptr, b_ptr, i8_ptr, u32_ptr, out_ptr):
    r = tl.arange(0, 16)
    h = tl.load(h_ptr + r)
    b = tl.load(b_ptr + r)
    i = tl.load(i8_ptr + r)
    u = tl.load(u32_ptr + r)
    h2 = h * 2 + 1.5
    q = h / h2
    mixed = h + b
    iu = i + u
    idiv = iu // 3 + iu % 5
    fdiv = r / 4
    sel = tl.where(h > 0, h, 0.0)
    tl.store(out_ptr + r, q + mixed + idiv + fdiv + sel + tl.maximum(h2, -1))
