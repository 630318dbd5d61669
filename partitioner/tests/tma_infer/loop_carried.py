# signature: *fp16:16, *fp32:16, i32:16, i32:16, i32, 64, 64
# Loop-carried offsets and pointers keep their affine form: an integer
# tile advanced by BK, a pointer tile advanced by BK * stride, a loop with
# a non-zero start, and an offset carried by a `while` loop (an opaque
# scalar, still a fine coordinate).
import triton
import triton.language as tl


@triton.jit
def loop_carried(x_ptr, out_ptr, K, stride, lo, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    offs = ks
    ptrs = x_ptr + rows[:, None] * stride + ks[None, :]
    for k in range(lo, K, BK):
        acc += tl.load(x_ptr + rows[:, None] * stride + offs[None, :],
                       mask=offs[None, :] < K, other=0.0).to(tl.float32)
        acc += tl.load(ptrs, mask=ks[None, :] < K - (k - lo), other=0.0).to(tl.float32)
        offs += BK
        ptrs += BK
    i = 0
    while i < K:
        acc += tl.load(x_ptr + rows[:, None] * stride + (i + ks)[None, :]).to(tl.float32)
        i += BK
    tl.store(out_ptr + rows[:, None] * BK + ks[None, :], acc)
