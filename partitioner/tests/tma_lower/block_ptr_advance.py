# signature: *fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, 1, i32:16, 1, i32:16, 1, i32, i32, 64, 128, 32
# lowered: a, b
# A block-pointer GEMM whose tiles move with `tl.advance` in the K loop,
# whose bounds and step are kernel arguments (the launcher passes BK as
# the step). The K coordinate is BK times the loop's iteration number,
# `(k - lo) / step`, which the desc_load computes at the load (with a
# constant step the inference would write it with `k` alone, as in
# matmul_wrapped.py). The carried block pointers die.
import triton
import triton.language as tl


@triton.jit
def matmul_block_ptr(a_ptr, b_ptr, c_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn,
                     stride_cm, stride_cn, lo, step,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_block = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                                offsets=(pid_m * BM, 0), block_shape=(BM, BK), order=(1, 0))
    b_block = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                                offsets=(0, pid_n * BN), block_shape=(BK, BN), order=(1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(lo, K, step):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        a_block = tl.advance(a_block, (0, BK))
        b_block = tl.advance(b_block, (BK, 0))
    c_block = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                                offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN),
                                order=(1, 0))
    tl.store(c_block, acc.to(tl.float16), boundary_check=(0, 1))
