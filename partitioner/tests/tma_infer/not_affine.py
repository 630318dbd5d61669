# signature: *fp32:16, *fp32:16, i32:16, 64
# Addresses that are no affine function of the tile indices, a tile that
# repeats one row, one that runs backwards, one that starts before its
# base, pointers carried through a loop that move by different amounts,
# and a volatile load.
import triton
import triton.language as tl


@triton.jit
def odd_addresses(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    squares = tl.load(x_ptr + offs * offs)
    halves = tl.load(x_ptr + offs // 2)
    rows = tl.load(x_ptr + offs[None, :] + offs[:, None] * 0)
    volatile = tl.load(x_ptr + offs, volatile=True)
    backwards = tl.load(x_ptr + (BLOCK - 1 - offs)[:, None] * n + offs[None, :])
    before = tl.load(x_ptr + offs - 4)
    acc = squares + halves + tl.sum(rows, axis=0) + volatile + tl.sum(backwards, axis=0) + before
    by_tile = x_ptr + offs
    by_index = x_ptr + offs
    for i in range(0, n):
        acc += tl.load(by_tile)
        acc += tl.load(by_index)
        by_tile += offs
        by_index += i
    tl.store(out_ptr + offs, acc)
