"""GEGLU feed-forward input projection: H = gelu(A @ Wg) * (A @ Wu).

Two GEMMs share every A tile: each K step loads one A tile and issues two
dots into two fp32 accumulators. GELU is the tanh approximation written with
exp: 0.5 x (1 + tanh(u)) == x * sigmoid(2u) == x / (1 + exp(-2u)).
"""
import triton
import triton.language as tl


@triton.jit
def _gelu_tanh(x):
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2/pi) * (...)
    return x / (1.0 + tl.exp(-2.0 * u))


@triton.jit
def geglu_dual_gemm_kernel(
    a_ptr, wg_ptr, wu_ptr, h_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_wk, stride_wn,
    stride_hm, stride_hn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_SIZE_M * tiles_n
    first_m = (pid // tiles_per_group) * GROUP_SIZE_M
    group_rows = min(tiles_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % tiles_per_group) % group_rows
    pid_n = (pid % tiles_per_group) // group_rows

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    # Wg and Wu have the same shape and strides.
    w_offs = ks[:, None] * stride_wk + cols[None, :] * stride_wn

    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a_mask = (rows[:, None] < M) & (ks[None, :] < K - k0)
        w_mask = (ks[:, None] < K - k0) & (cols[None, :] < N)
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        wg = tl.load(wg_ptr + w_offs, mask=w_mask, other=0.0)
        wu = tl.load(wu_ptr + w_offs, mask=w_mask, other=0.0)
        gate = tl.dot(a, wg, gate)
        up = tl.dot(a, wu, up)
        a_ptrs += BLOCK_K * stride_ak
        w_offs += BLOCK_K * stride_wk

    h = _gelu_tanh(gate) * up
    h_ptrs = h_ptr + rows[:, None] * stride_hm + cols[None, :] * stride_hn
    tl.store(h_ptrs, h.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))
