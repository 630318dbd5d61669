# signature: *fp16:16, *fp16:16, i32, 128, tl.float32
# The `tawa` Python package is a drop-in for `triton`: `import tawa as
# triton` and `import tawa.language as tl` name Triton's modules, and a
# dtype constexpr is given through the file's own alias.
import tawa as triton
import tawa.language as tl


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACC: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(ACC)
    tl.store(y_ptr + offs, (x * 2).to(tl.float16), mask=offs < n)
