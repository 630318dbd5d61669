# signature: *fp16:16, *fp32:16, i32:16, i32:16, i32, i32:16, 64, 64
# lowered: q, x
# `q`: rows of one head of a [Z, H, N, 64] tensor, the batch and head
# offsets of the base pointer dimensions of box 1 (a 4-D descriptor whose
# desc_load is rank-reduced to the 64 x 64 tile); the head's extent is
# `H` (the index is `% H`), the batch's the largest. `x`: a [rows, cols]
# matrix read with no mask, its unchecked columns' extent the last K step
# read plus one (`K // 64` steps). `w`: columns carried by a `while` loop,
# no bound the launch knows, so it stays an ordinary load.
import triton
import triton.language as tl


@triton.jit
def head_offset_unmasked(q_ptr, out_ptr, stride_z, stride_h, H, K,
                         BM: tl.constexpr, D: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_hz = tl.program_id(1)
    off_z = pid_hz // H
    off_h = pid_hz % H
    rows = pid_m * BM + tl.arange(0, BM)
    cols = tl.arange(0, D)
    base = q_ptr + off_z * stride_z + off_h * stride_h
    q = tl.load(base + rows[:, None] * D + cols[None, :])
    acc = q.to(tl.float32)
    for k in range(0, K // D):
        x = tl.load(q_ptr + rows[:, None] * K + (k * D + cols)[None, :])
        acc += x.to(tl.float32)
    i = 0
    while i < K:
        w = tl.load(q_ptr + rows[:, None] * K + (i + cols)[None, :])
        acc += w.to(tl.float32)
        i += D
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], acc)
