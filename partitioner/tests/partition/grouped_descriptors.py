# signature: *i64:16, *i64:16, *i64:16, *i32:16, i32, 64, 64, 32, 2
# Groups of GEMMs whose matrices, sizes and leading dimensions live in
# device arrays: each program tests whether the group holds its next tile,
# makes the group's descriptors from the loaded values, and walks its
# tiles in a `while`. Both partitions run the group loop, the `if` and the
# `while`; the producer re-loads the group's scalars and carries the tile
# index, and the aref counter runs through all of them (forwarded by the
# `while`'s condition, yielded by both branches of the `if`).
import triton
import triton.language as tl


@triton.jit
def grouped(a_ptrs, b_ptrs, c_ptrs, dims, groups,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PROGRAMS: tl.constexpr):
    tile = tl.program_id(0)
    first = 0
    for g in range(groups):
        m = tl.load(dims + g * 4)
        n = tl.load(dims + g * 4 + 1)
        k = tl.load(dims + g * 4 + 2)
        ld = tl.load(dims + g * 4 + 3)
        tiles_n = tl.cdiv(n, BN)
        count = tl.cdiv(m, BM) * tiles_n
        if tile >= first and tile < first + count:
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))
            a_desc = tl.make_tensor_descriptor(a, shape=[m, k], strides=[ld, 1], block_shape=[BM, BK])
            b_desc = tl.make_tensor_descriptor(b, shape=[k, n], strides=[n, 1], block_shape=[BK, BN])
            c_desc = tl.make_tensor_descriptor(c, shape=[m, n], strides=[n, 1], block_shape=[BM, BN])
            while tile >= first and tile < first + count:
                row = (tile - first) // tiles_n * BM
                col = (tile - first) % tiles_n * BN
                acc = tl.zeros((BM, BN), dtype=tl.float32)
                for kk in range(0, tl.cdiv(k, BK)):
                    acc += tl.dot(a_desc.load([row, kk * BK]), b_desc.load([kk * BK, col]))
                c_desc.store([row, col], acc.to(tl.float16))
                tile += PROGRAMS
        first = first + count
