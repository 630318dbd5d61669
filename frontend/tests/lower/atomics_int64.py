# signature: *fp32:16, *fp32, *i32, i32, i32, 32
# 64-bit index arithmetic, atomics with masks, cache and eviction hints,
# debug_barrier and the hints multiple_of / max_contiguous.
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, sum_ptr, max_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(offs, 16), 16)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n, other=0.0,
                cache_modifier=".cg", eviction_policy="evict_first")
    tl.debug_barrier()
    tl.atomic_add(sum_ptr + offs, x, mask=offs < n)
    tl.atomic_max(max_ptr, tl.max(x.to(tl.int32), axis=0))
