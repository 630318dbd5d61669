# signature: *i32:16
# tl.join, tl.split (also as a method) and tl.interleave.
import triton
import triton.language as tl


@triton.jit
def kernel(out_ptr):
    a = tl.arange(0, 4)
    b = a + 10
    j = tl.join(a, b)
    lo, hi = j.split()
    inter = tl.interleave(lo * 100, hi)
    tl.store(out_ptr + tl.arange(0, 8), inter)
