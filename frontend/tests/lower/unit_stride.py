# signature: *fp32:16, *fp32:16, i32:16, 1, 64
# A plain (not constexpr) integer parameter bound to `1` by the signature,
# as Triton specializes integer arguments equal to 1: `stride` becomes a
# compile-time constant and is no parameter of the kernel.
import triton
import triton.language as tl


@triton.jit
def strided_copy(src, dst, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs * stride, mask=offs < n)
    tl.store(dst + offs, x, mask=offs < n)
