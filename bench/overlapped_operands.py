"""matmul.py's kernel at 8192^3, tawa against Triton and cuBLAS in one
process, on ordinary operands and on operands whose rows overlap (views with
a row stride of 64 elements over 2 MB in all, so every load hits L2): which
side of the 128x256 GEMM's mainloop limits it, the operands' supply from
L2 and DRAM or the consumer warpgroups. Checks rows 0-255 against torch,
then times as bench/same_source.py does. Run from the checkout's root on
the GPU machine with the `tawa` wheel installed (bench/tawa-wheel.sh):
`python3 bench/overlapped_operands.py`."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import same_source as ss  # noqa: E402

path = "triton-examples/kernels/matmul.py"
kern = {"triton": ss.load_kernel(path, "matmul_kernel", False),
        "tawa": ss.load_kernel(path, "matmul_kernel", True)}
M = N = K = 8192
torch.manual_seed(1)

def operands(mode):
    if mode == "normal":
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    else:
        ba = torch.randn(M * 64 + K, device="cuda", dtype=torch.float16)
        bb = torch.randn(K * 64 + N, device="cuda", dtype=torch.float16)
        a = ba.as_strided((M, K), (64, 1))
        b = bb.as_strided((K, N), (64, 1))
    return a, b, torch.empty(M, N, device="cuda", dtype=torch.float16)

grid = ((M // 128) * (N // 256),)
def launcher(k, a, b, c):
    return lambda: k[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           c.stride(0), c.stride(1), BLOCK_SIZE_M=128, BLOCK_SIZE_N=256,
                           BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="", num_warps=8, num_stages=3)

for mode in ["normal", "overlapped", "normal", "overlapped"]:
    a, b, c = operands(mode)
    ref = (a[:256].float() @ b.float()).half()
    fns, names = [], []
    for side, k in kern.items():
        f = launcher(k, a, b, c)
        try:
            c.zero_(); f(); torch.cuda.synchronize()
            err = (c[:256].float() - ref.float()).abs().max().item()
            print(f"{mode} {side}: max err rows 0-255 {err:.3g}", flush=True)
            fns.append(f); names.append(side)
        except Exception as e:
            print(f"{mode} {side}: failed: {e}", flush=True)
    fns.append(lambda: torch.matmul(a, b)); names.append("cublas")
    ms = ss.time_interleaved(fns, 20, 3)
    flops = 2 * M * N * K
    print(mode, "  ".join(f"{n} {flops / t * 1e-9:.0f} TFLOP/s" for n, t in zip(names, ms)),
          f"tawa/triton {ms[0] / ms[1]:.3f}" if len(ms) == 3 else "", flush=True)
