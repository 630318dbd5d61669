# signature: *fp32:16, *fp32:16, i32, i32, i32:16, 1, 64, 32
# stored: 1
# A block-pointer store checked along both dimensions: the descriptor
# takes the block pointer's shape as its extents, and the f32 tile's rows
# of 128 bytes are one box wide.
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_block = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_m, stride_n),
                                offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN),
                                order=(1, 0))
    y_block = tl.make_block_ptr(base=y_ptr, shape=(M, N), strides=(stride_m, stride_n),
                                offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN),
                                order=(1, 0))
    x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
    tl.store(y_block, x * 2.0, boundary_check=(0, 1))
