# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32
# C = (A^T)^T @ B^T with A stored [K, M] and B stored [N, K], both
# transposed in the loop (the swap-AB GEMM's form): the consumer reads the
# got tiles only through `trans`, views of the slot (wgmma reads them in
# place with its transpose bit), so the slot is released after the dot
# that reads the views, not after the `trans`es.
import triton
import triton.language as tl


@triton.jit
def matmul_bt(a_ptr, b_ptr, c_ptr, M, N, K,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rk[:, None] * M + rm[None, :]
    b_ptrs = b_ptr + rn[:, None] * K + rk[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rm[None, :] < M, other=0.0)
        b = tl.load(b_ptrs, mask=rn[:, None] < N, other=0.0)
        acc = tl.dot(tl.trans(a), tl.trans(b), acc)
        a_ptrs += BK * M
        b_ptrs += BK
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))
