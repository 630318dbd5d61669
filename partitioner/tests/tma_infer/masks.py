# signature: *fp32:16, *fp32:16, i32:16, i32:16, i32, 128
# Which masks become extents: `offs < n` and `offs <= n` do (extent n and
# n + 1); a second bound on the same dimension, `|`, `==`, a lower bound, a
# bound that moves with the program, and a non-zero `other` do not.
import triton
import triton.language as tl


@triton.jit
def masked_loads(x_ptr, out_ptr, n, m, lo, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    lt = tl.load(x_ptr + offs, mask=offs < n)
    le = tl.load(x_ptr + offs, mask=offs <= n, other=0.0)
    gt = tl.load(x_ptr + offs, mask=n > offs)
    twice = tl.load(x_ptr + offs, mask=(offs < n) & (offs < m))
    either = tl.load(x_ptr + offs, mask=(offs < n) | (offs < m))
    even = tl.load(x_ptr + offs, mask=offs % 2 == 0)
    lower = tl.load(x_ptr + offs, mask=offs >= lo)
    moving = tl.load(x_ptr + offs, mask=tl.arange(0, BLOCK) < n - pid)
    ones = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    total = lt + le + gt + twice + either + even + lower + moving + ones
    tl.store(out_ptr + offs, total, mask=offs < n)
