# signature: *fp32:16, *fp32:16, i32, 256
# Triton's grid dependency control (`launch_pdl`): the calls leave no op,
# the function is marked `programmatic_launch_asked`, also from a helper.
import triton
import triton.language as tl


@triton.jit
def _wait_for_the_kernel_before():
    tl.extra.cuda.gdc_wait()


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    _wait_for_the_kernel_before()
    x = tl.load(x_ptr + offs, mask=mask)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(out_ptr + offs, x * 2.0, mask=mask)
