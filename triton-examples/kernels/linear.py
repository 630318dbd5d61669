"""y = x @ W^T: a linear layer's forward pass. x is [M, K] (tokens by
input features) and W the weight as the layer stores it, [N, K] (output by
input features), both row-major.

The kernel loads W's tile as it lies, [BLOCK_N, BLOCK_K] with K
contiguous, and multiplies by its transpose, `tl.dot(x, w.T)`. The
transpose moves no data: its layout is the load's with the dimensions
swapped, and the [BLOCK_K, BLOCK_N] operand it names lies K-major in
shared memory, the way wgmma reads B without its transpose bit. fp16 in,
fp32 accumulation, fp16 out; M, N and K are masked.
"""
import triton
import triton.language as tl


@triton.jit
def linear_kernel(
    x_ptr, w_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
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
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + ks[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + offs_n[:, None] * stride_wn + ks[None, :] * stride_wk,
                    mask=(offs_n[:, None] < N) & (ks[None, :] < K), other=0.0)
        acc = tl.dot(x, w.T, acc)

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
