# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32, 64, 64, 32
# A GEMM whose A rows are K elements apart with K not known to be a
# multiple of 8 (no `:16` hint): TMA refuses A (its row stride is not a
# multiple of 16 bytes) but takes B. A is still a mainloop operand of the
# dot, so the producer's threads copy it (`producer_copy`): the producer
# moves both loads, the masked pointer-tile load of A and the descriptor
# load of B, and puts both tiles into one aref per K step.
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))
