"""dW = X^T @ dY: the weight gradient of a linear layer, as backward
passes write it. X is the layer's input, [tokens, M] row-major, and dY the
output gradient, [tokens, N]; the reduction runs over the tokens (K here).

The A operand is X read transposed: its tile [BLOCK_M, BLOCK_K] is
contiguous along M (a column-major operand), so its TMA box runs M
innermost and wgmma reads it with its transpose bit. fp16 in, fp32
accumulation, fp32 out. Every dimension is masked.
"""
import triton
import triton.language as tl


@triton.jit
def weight_grad_kernel(
    x_ptr, dy_ptr, dw_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_dyk, stride_dyn,
    stride_dwm, stride_dwn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        x_t = tl.load(x_ptr + offs_m[:, None] * stride_xm + ks[None, :] * stride_xk,
                      mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        dy = tl.load(dy_ptr + ks[:, None] * stride_dyk + offs_n[None, :] * stride_dyn,
                     mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x_t, dy, acc)

    dw_ptrs = dw_ptr + offs_m[:, None] * stride_dwm + offs_n[None, :] * stride_dwn
    tl.store(dw_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
