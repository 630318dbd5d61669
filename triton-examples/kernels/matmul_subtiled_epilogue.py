"""C = A @ B (fp16 in, fp32 accumulate, fp16 out) whose epilogue stores the
accumulator in two halves of BLOCK_SIZE_N // 2 columns, split off with
`reshape` -> `permute` -> `split` (tutorial 09's EPILOGUE_SUBTILE, on
pointer stores): each half is converted and stored on its own, so that
fewer output registers are live at once.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_subtiled_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    tiles_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    ks = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - kt * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    halves = tl.permute(tl.reshape(acc, (BLOCK_SIZE_M, 2, BLOCK_SIZE_N // 2)), (0, 2, 1))
    left, right = tl.split(halves)
    half_cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N // 2)
    row_ok = rows[:, None] < M
    c_ptrs = c_ptr + rows[:, None] * stride_cm + half_cols[None, :] * stride_cn
    tl.store(c_ptrs, left.to(tl.float16), mask=row_ok & (half_cols[None, :] < N))
    right_cols = half_cols + BLOCK_SIZE_N // 2
    c_ptrs = c_ptr + rows[:, None] * stride_cm + right_cols[None, :] * stride_cn
    tl.store(c_ptrs, right.to(tl.float16), mask=row_ok & (right_cols[None, :] < N))
