# signature: *fp16:16, *fp32:16, i32:16, i32:16, i32:16
# Tiles one row high: a block pointer's and a descriptor's row dimension
# carries the address and the bound of the row even with a box of 1; a
# column one element wide is too narrow for TMA.
import triton
import triton.language as tl


@triton.jit
def rows_of_one(x_ptr, out_ptr, M, K, stride_m):
    row = tl.program_id(0)
    bp = tl.make_block_ptr(base=x_ptr, shape=(M, K), strides=(stride_m, 1),
                           offsets=(row, 0), block_shape=(1, 64), order=(1, 0))
    a = tl.load(bp, boundary_check=(0, 1))
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, K], strides=[stride_m, 1],
                                     block_shape=[1, 64])
    b = desc.load([row, 64])
    col = tl.make_block_ptr(base=x_ptr, shape=(M, K), strides=(stride_m, 1),
                            offsets=(0, row), block_shape=(64, 1), order=(1, 0))
    c = tl.load(col, boundary_check=(0, 1))
    total = tl.sum(a.to(tl.float32)) + tl.sum(b.to(tl.float32)) + tl.sum(c.to(tl.float32))
    tl.store(out_ptr + row, total)
