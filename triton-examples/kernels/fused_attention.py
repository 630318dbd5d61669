"""Flash-attention forward: O = softmax(Q K^T * sm_scale) V, fp16 in and out.

Q, K, V, O are contiguous [Z, H, N_CTX, HEAD_DIM]. Program (m, z*H + h)
computes BLOCK_M query rows of one head, streaming over key blocks with a
running row max (m_i) and running row sum (l_i) in base-2 units: scores are
scaled by sm_scale * log2(e) and exponentiated with exp2. It also stores
M = m_i + log2(l_i) per row (the base-2 logsumexp of the scaled scores) for
the backward pass.

STAGE = 1: non-causal, every key block. STAGE = 3: causal, first the key
blocks strictly left of the diagonal block (no mask), then the diagonal block
with the causal mask. N_CTX need not be a multiple of the block sizes: rows
and keys past the end are masked.
"""
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                    start_m, qk_scale, N_CTX,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                    STAGE: tl.constexpr):
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
    else:
        lo, hi = 0, N_CTX
    for start_n in tl.range(lo, hi, BLOCK_N):
        keys = start_n + offs_n
        key_ok = keys < N_CTX
        # K is read transposed: a [HEAD_DIM, BLOCK_N] tile.
        k = tl.load(k_base + offs_d[:, None] + keys[None, :] * stride_kn,
                    mask=key_ok[None, :], other=0.0)
        qk = tl.dot(q, k)
        if STAGE == 2:
            causal = offs_m[:, None] >= keys[None, :]
            qk = qk * qk_scale + tl.where(causal, 0.0, -1.0e6)
        else:
            qk = qk * qk_scale + tl.where(key_ok[None, :], 0.0, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + keys[:, None] * stride_vn + offs_d[None, :],
                    mask=key_ok[:, None], other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,
              stride_qz, stride_qh, stride_qm,
              stride_kz, stride_kh, stride_kn,
              stride_vz, stride_vh, stride_vn,
              stride_oz, stride_oh, stride_om,
              H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              STAGE: tl.constexpr):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_base = Q + off_z * stride_qz + off_h * stride_qh
    k_base = K + off_z * stride_kz + off_h * stride_kh
    v_base = V + off_z * stride_vz + off_h * stride_vh
    o_base = Out + off_z * stride_oz + off_h * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N_CTX
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=row_ok[:, None], other=0.0)

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1 / ln(2)

    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                        start_m, qk_scale, N_CTX,
                                        BLOCK_M, BLOCK_N, HEAD_DIM, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                        start_m, qk_scale, N_CTX,
                                        BLOCK_M, BLOCK_N, HEAD_DIM, 2)

    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i, mask=row_ok)
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(tl.float16),
             mask=row_ok[:, None])
