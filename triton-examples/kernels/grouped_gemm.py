"""A group of independent GEMMs C_g = A_g @ B_g (fp16 in, fp16 out) in one
persistent launch.

The problems are described by device arrays: `a_ptrs`, `b_ptrs`, `c_ptrs`
hold int64 addresses, `sizes` holds (M, N, K) per problem and `lds` the
leading dimensions (lda, ldb, ldc) of the row-major operands. NUM_SMS
programs walk the concatenated tile list of all problems with stride NUM_SMS.
"""
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(
    a_ptrs, b_ptrs, c_ptrs, sizes, lds, group_count,
    NUM_SMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    tile = tl.program_id(0)
    group_start = 0  # index of the first tile of problem g
    for g in range(group_count):
        M = tl.load(sizes + g * 3)
        N = tl.load(sizes + g * 3 + 1)
        K = tl.load(sizes + g * 3 + 2)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        group_tiles = tiles_m * tiles_n
        while tile >= group_start and tile < group_start + group_tiles:
            lda = tl.load(lds + g * 3)
            ldb = tl.load(lds + g * 3 + 1)
            ldc = tl.load(lds + g * 3 + 2)
            a_ptr = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float16))

            local = tile - group_start
            tile_m = local // tiles_n
            tile_n = local % tiles_n
            rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            ks = tl.arange(0, BLOCK_K)
            a_tile = a_ptr + rows[:, None] * lda + ks[None, :]
            b_tile = b_ptr + ks[:, None] * ldb + cols[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < K - k0), other=0.0)
                b = tl.load(b_tile, mask=(ks[:, None] < K - k0) & (cols[None, :] < N), other=0.0)
                acc += tl.dot(a, b)
                a_tile += BLOCK_K
                b_tile += BLOCK_K * ldb
            c_tile = c_ptr + rows[:, None] * ldc + cols[None, :]
            tl.store(c_tile, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))
            tile += NUM_SMS
        group_start += group_tiles
