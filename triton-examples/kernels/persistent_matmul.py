"""Persistent C = A @ B (fp16 in, fp16 out): NUM_SMS programs, each looping
over output tiles pid, pid + NUM_SMS, ... in grouped order (GROUP_SIZE_M rows
of tiles share B columns in L2), with the K loop nested inside.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_coords(tile_id, tiles_m, tiles_n, GROUP_SIZE_M: tl.constexpr):
    tiles_per_group = GROUP_SIZE_M * tiles_n
    group = tile_id // tiles_per_group
    first_m = group * GROUP_SIZE_M
    group_rows = min(tiles_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + ((tile_id % tiles_per_group) % group_rows)
    pid_n = (tile_id % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.jit
def persistent_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr,
):
    start_pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_SIZE_M)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = tiles_m * tiles_n
    offs_k = tl.arange(0, BLOCK_SIZE_K)

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, tiles_m, tiles_n, GROUP_SIZE_M)
        rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        # Clamp-free wrap: rows past M re-read row data that is never stored.
        rows_in = tl.max_contiguous(tl.multiple_of(rows % M, BLOCK_SIZE_M), BLOCK_SIZE_M)
        cols_in = tl.max_contiguous(tl.multiple_of(cols % N, BLOCK_SIZE_N), BLOCK_SIZE_N)

        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for kt in range(k_tiles):
            ks = kt * BLOCK_SIZE_K + offs_k
            a = tl.load(a_ptr + rows_in[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=ks[None, :] < K, other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + cols_in[None, :] * stride_bn,
                        mask=ks[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)

        c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
        tl.store(c_ptrs, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))
