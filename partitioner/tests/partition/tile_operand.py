# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32, 4
# Attention's q in a persistent kernel: a tile loaded once per tile, before
# two K loops (the causal off-band loop and the diagonal block) whose dots
# both read it. The producer copies it through an aref of its own with one
# slot, put before its K loops and indexed by the tile loop's trip counter
# (one put per tile); the consumer gets it where it was loaded and releases
# it after the second loop, the last op reading it. The K loops' tiles keep
# their own ring and counter.
import triton
import triton.language as tl


@triton.jit
def tile_operand(q_ptr, k_ptr, o_ptr, M, N, D,
                 BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr, PROGRAMS: tl.constexpr):
    num_tiles = tl.cdiv(M, BM)
    rd = tl.arange(0, BD)
    rn = tl.arange(0, BN)
    half = (N // 2) // BN * BN
    for tile in range(tl.program_id(0), num_tiles, PROGRAMS):
        rm = tile * BM + tl.arange(0, BM)
        q = tl.load(q_ptr + rm[:, None] * BD + rd[None, :], mask=rm[:, None] < M, other=0.0)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for n in range(0, half, BN):
            k = tl.load(k_ptr + rd[:, None] * N + (n + rn)[None, :])
            acc = tl.dot(q, k, acc)
        for n in range(half, N, BN):
            k = tl.load(k_ptr + rd[:, None] * N + (n + rn)[None, :])
            acc = tl.dot(q, k, acc)
        tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc, mask=rm[:, None] < M)
