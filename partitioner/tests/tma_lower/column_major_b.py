# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:16, 64, 64, 64
# lowered: a, b_box
# B given column-major through a block pointer (`order=(0, 1)`, its K
# stride the constant 1): its copy is a [BN, BK] box, the transpose of
# the tile, which only the dot reads, so B becomes `trans` of a desc_load
# of that box (`b_box`); row-major A, a masked pointer tile, becomes a
# desc_load.
import triton
import triton.language as tl


@triton.jit
def matmul_b_column_major(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    b_block = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(1, stride_bn),
                                offsets=(0, pid_n * BN), block_shape=(BK, BN), order=(0, 1))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k + ks)[None, :],
                    mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        b_block = tl.advance(b_block, (BK, 0))
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))
