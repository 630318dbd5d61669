# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 64, 64, 32
# Wrapped rows and columns whose results go through a block pointer with a
# boundary check on both dimensions: the check drops the same rows and
# columns, so both loads are TMA.
import triton
import triton.language as tl


@triton.jit
def matmul_block_store(a_ptr, b_ptr, c_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = (pid_m * BM + tl.arange(0, BM)) % M
    cols = (pid_n * BN + tl.arange(0, BN)) % N
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :],
                    mask=(k + ks)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + ks)[:, None] * N + cols[None, :],
                    mask=(k + ks)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    c = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(N, 1),
                          offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN),
                          order=(1, 0))
    tl.store(c, acc.to(tl.float16), boundary_check=(0, 1))
