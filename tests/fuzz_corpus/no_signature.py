# args: --num-warps 8
import triton
import triton.language as tl


@triton.jit
def untyped(a_ptr, b_ptr, M, N, stride_am, BLOCK_M: tl.constexpr):
    offs = tl.arange(0, BLOCK_M)
    tl.store(b_ptr + offs, tl.load(a_ptr + offs * stride_am, mask=offs < M), mask=offs < N)
