# signature: *fp16:16, *i32:16, *fp32:16, i32:16, i32:16, 64, 64
# lowered: unchecked, checked
# Loads whose extents the host cannot compute stay ordinary loads.
# `unchecked` has no bound on its rows: the inference makes it a copy of
# unbounded extent (only the kernel's own addresses limit it), which
# tma_lower lowers with the largest extent a copy can address (2^31 - 1
# rows): the unmasked load promises that its addresses are valid.
# `ragged`, bounded by a row count read from memory, is no copy at all
# (the inference refuses extents that are not computed from parameters).
# `checked`, bounded by the parameter M, is lowered.
import triton
import triton.language as tl


@triton.jit
def row_counts(x_ptr, len_ptr, out_ptr, M, stride,
               BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    ptrs = x_ptr + rows[:, None] * stride + ks[None, :]
    unchecked = tl.load(ptrs)
    n = tl.load(len_ptr)
    ragged = tl.load(ptrs, mask=rows[:, None] < n, other=0.0)
    checked = tl.load(ptrs, mask=rows[:, None] < M, other=0.0)
    total = unchecked.to(tl.float32) + ragged.to(tl.float32) + checked.to(tl.float32)
    tl.store(out_ptr + rows[:, None] * BK + ks[None, :], total)
