"""GEGLU projection H = gelu(A @ Wg) * (A @ Wu), written as fused GLU
kernels often are: no masks at all, the launcher promising that M, N and K
are multiples of the blocks. Each K step loads one A tile for both dots.

Nothing bounds the loads. Their rows (the outer dimension) take any
extent, the kernel promising its addresses are valid; their columns take
the largest index the launch lets them read, plus the block: A's from the
K loop's bound (`K // BLOCK_K` steps), W's from the grid (`num_programs(1)`
blocks of BLOCK_N). `--explain` prints both; the host computes them, and
refuses the tensor map if those columns ran past a row.
"""
import triton
import triton.language as tl


@triton.jit
def _gelu_tanh(x):
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return x / (1.0 + tl.exp(-2.0 * u))


@triton.jit
def glu_dual_gemm_unmasked_kernel(
    a_ptr, wg_ptr, wu_ptr, h_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_wk, stride_wn,
    stride_hm, stride_hn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    wg_ptrs = wg_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
    wu_ptrs = wu_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K // BLOCK_K):
        a = tl.load(a_ptrs)
        gate += tl.dot(a, tl.load(wg_ptrs))
        up += tl.dot(a, tl.load(wu_ptrs))
        a_ptrs += BLOCK_K * stride_ak
        wg_ptrs += BLOCK_K * stride_wk
        wu_ptrs += BLOCK_K * stride_wk

    h = _gelu_tanh(gate) * up
    tl.store(h_ptr + offs_m[:, None] * stride_hm + offs_n[None, :] * stride_hn, h.to(tl.float16))
