"""`triton._C.libtriton`: `nvidia.cublas.CublasLt`, the cuBLAS baseline
tutorial 09 measures its kernels against.

Triton binds cuBLASLt itself; here the same product runs through PyTorch,
whose `torch.matmul` calls cuBLAS on the tensors' device and stream. The
contract is Triton's: `matmul(a, b, c)` writes `a @ b.T` into `c`, with
`a` `[M, K]`, `b` `[N, K]` (K-contiguous, as cuBLASLt's transposed B) and
`c` `[M, N]`, all of one dtype. torch is imported at the first call, so
that the package still imports without it.
"""

from __future__ import annotations

from types import SimpleNamespace


class CublasLt:
    """A cuBLAS handle over `workspace` (a byte tensor Triton gives
    cuBLASLt for its algorithms; PyTorch keeps its own, so it is only
    checked and held)."""

    def __init__(self, workspace):
        if not hasattr(workspace, "numel"):
            raise TypeError(f"CublasLt takes a workspace tensor, not {workspace!r}")
        self.workspace = workspace

    def matmul(self, a, b, c):
        """`c = a @ b.T` (Triton's `CublasLt.matmul`)."""
        if len(a.shape) != 2 or len(b.shape) != 2 or len(c.shape) != 2:
            raise ValueError("CublasLt.matmul takes 2-D a [M, K], b [N, K] and c [M, N]")
        (m, k), (n, k2) = a.shape, b.shape
        if k != k2 or tuple(c.shape) != (m, n):
            raise ValueError(f"CublasLt.matmul: a {list(a.shape)}, b {list(b.shape)} and "
                             f"c {list(c.shape)} are not [M, K], [N, K] and [M, N]")
        if not (a.dtype == b.dtype == c.dtype):
            raise ValueError(f"CublasLt.matmul: a, b and c differ in dtype "
                             f"({a.dtype}, {b.dtype}, {c.dtype})")
        import torch

        torch.matmul(a, b.t(), out=c)


nvidia = SimpleNamespace(cublas=SimpleNamespace(CublasLt=CublasLt))
