# signature: *fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, 64, 64, 32
# A tile loaded before the K loop whose dot reads it, but also read by an
# elementwise op: aref slots feed only dots (wgmma reads them in place), so
# the consumer keeps that load, and only the loop's tiles go through the
# producer's ring.
import triton
import triton.language as tl


@triton.jit
def tile_operand_read_by_chain(q_ptr, k_ptr, o_ptr, M, N, D,
                               BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, BD)
    rn = tl.arange(0, BN)
    q = tl.load(q_ptr + rm[:, None] * BD + rd[None, :], mask=rm[:, None] < M, other=0.0)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for n in range(0, N, BN):
        k = tl.load(k_ptr + rd[:, None] * N + (n + rn)[None, :])
        acc = tl.dot(q, k, acc)
    qsum = tl.sum(q.to(tl.float32), axis=1)
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc + qsum[:, None], mask=rm[:, None] < M)
