"""Adds x into acc with `tl.atomic_add` and keeps what acc held before:
old = acc; acc += x, element-wise, each element added by one program.

The atomic's old values are used, so where the adds go in vectors
(fp32, contiguous and aligned pointers, a mask constant over the
vector) each vector is an `atom` that returns them, not a `red`.
"""
import triton
import triton.language as tl


@triton.jit
def accumulate_kernel(x_ptr, acc_ptr, old_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    old = tl.atomic_add(acc_ptr + offsets, x, mask=in_bounds)
    tl.store(old_ptr + offsets, old, mask=in_bounds)
