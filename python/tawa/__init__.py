"""tawa: the Triton Python API over the tawa-rs compiler.

`import tawa as triton` and `import tawa.language as tl` in place of
Triton's imports run a Triton script's kernels through tawa-rs: `@jit`
kernels are specialized and compiled by the Rust pipeline (frontend,
warp specialization, pipeliner, CUDA, NVRTC) and launched on PyTorch's
current stream. What Triton offers and tawa does not raises
NotImplementedError naming it (`tawa.Unsupported`).
"""

from __future__ import annotations

from ._errors import Unsupported, unsupported
from ._jit import CompiledKernel, JITFunction, KernelInterface, jit
from ._autotune import Autotuner, Config, Heuristics, autotune, heuristics
from . import language, profiler, runtime, testing, tools  # noqa: F401

__version__ = "3.6.0+tawa"


def cdiv(x, y):
    """Ceiling division, as Triton's (also for `tl.constexpr`s)."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    if n <= 1:
        return 1
    return 1 << (n - 1).bit_length()


_allocator = None


def set_allocator(allocator):
    """Triton's hook for the global scratch memory of device-side tensor
    descriptors (`tl.make_tensor_descriptor`). tawa-rs builds those
    descriptors' TMA tensor maps on the host from the kernel's arguments,
    so no scratch is needed: the allocator is kept (`get_allocator`) but not
    called."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_allocator takes a callable (size, alignment, stream) -> tensor, not {allocator!r}")
    _allocator = allocator


def get_allocator():
    return _allocator


def __getattr__(name):
    if name in ("CompilationError", "LaunchError"):
        from . import _tawa
        return getattr(_tawa, name)
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"triton.{name}")
