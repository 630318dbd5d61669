# signature: *i64:16, *i32:16, i32, 64, 64
# Base pointers and row strides loaded per group from device arrays. A
# tile off a loaded base needs a tensor map built on the device, which can
# only copy it when the base and the row stride are 16-byte aligned: `a`
# has no such promise and stays a load; `h` is the same tile with its base
# and stride hinted (`tl.multiple_of`), a TMA copy whose map the kernel
# builds, its unchecked dimensions at the largest extent (rows may
# overlap: the copy reads the addresses the load did).
import triton
import triton.language as tl


@triton.jit
def pointer_arrays(ptrs, lds, groups, BM: tl.constexpr, BK: tl.constexpr):
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for g in range(groups):
        ld = tl.load(lds + g)
        base = tl.load(ptrs + g).to(tl.pointer_type(tl.float16))
        rows = tl.arange(0, BM)
        ks = tl.arange(0, BK)
        a = tl.load(base + rows[:, None] * ld + ks[None, :])
        hinted = tl.multiple_of(tl.load(ptrs + groups + g).to(tl.pointer_type(tl.float16)), 16)
        hld = tl.multiple_of(tl.load(lds + groups + g), 8)
        h = tl.load(hinted + (g * BM + rows)[:, None] * hld + ks[None, :], mask=ks[None, :] < ld, other=0.0)
        acc += a.to(tl.float32) + h.to(tl.float32)
    out = tl.load(ptrs).to(tl.pointer_type(tl.float32))
    tl.store(out + tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :], acc)
