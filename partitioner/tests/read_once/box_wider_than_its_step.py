# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 64, 64, 64
# A loop stepping K by half its box (64-row boxes, 32 rows a step): each
# row is read by two iterations, so A is not marked. B steps by its box
# and is read once where the grid has one program along x and z.
import triton
import triton.language as tl


@triton.jit
def overlapping_k(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(0, K // BK):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (i * 32 + ks)[None, :],
                    mask=(rows[:, None] < M) & ((i * 32 + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (i * BK + ks)[:, None] * stride_bk + cols[None, :],
                    mask=((i * BK + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))
