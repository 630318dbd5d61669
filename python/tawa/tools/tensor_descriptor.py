"""Host tensor descriptors (`triton.tools.tensor_descriptor`).

A `TensorDescriptor` argument reaches the kernel as its base pointer,
shape and strides (`x_base`, `x_shape0`.., `x_stride0`..); the block shape
is part of the specialization (`tensordesc<fp16[64, 64]>`). The TMA tensor
maps the kernel copies with are encoded by the launcher from those values,
as `tawa-rs run` encodes them, at every launch.

The block shape may be changed after construction (autotuning pre-hooks
set it from the config, as tutorial 06 does), so it is checked at launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List

from .._errors import unsupported


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        if rank == 0:
            raise ValueError("a TensorDescriptor needs at least one dimension")
        if len(self.strides) != rank:
            raise ValueError(f"TensorDescriptor: {rank} dimensions in shape {list(self.shape)} "
                             f"but {len(self.strides)} strides {list(self.strides)}")
        if len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: {rank} dimensions in shape {list(self.shape)} "
                             f"but {len(self.block_shape)} in block_shape {list(self.block_shape)}")
        if int(self.strides[-1]) != 1:
            raise ValueError(f"TensorDescriptor: the last dimension must be contiguous (stride 1), "
                             f"not {self.strides[-1]}")
        elem = _element_size(self.base)
        for d, s in enumerate(self.strides[:-1]):
            if (int(s) * elem) % 16 != 0:
                raise ValueError(f"TensorDescriptor: stride {s} of dimension {d} is {int(s) * elem} bytes, "
                                 f"not a multiple of 16 (TMA needs 16-byte aligned strides)")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', not {self.padding!r}")
        if self.padding == "nan":
            raise unsupported("TensorDescriptor(padding='nan')", "out-of-bounds reads give zeros")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding="zero"):
        return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), block_shape, padding)


def _element_size(base) -> int:
    size = getattr(base, "element_size", None)
    if callable(size):
        return int(size())
    from .._jit import dtype_name
    from ..language import _BY_NAME
    return _BY_NAME[dtype_name(base.dtype)].itemsize
