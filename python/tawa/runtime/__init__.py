"""`triton.runtime`: the driver, the JIT and the autotuner."""

from .._errors import unsupported


def _ext():
    """The extension module, imported on first use so that the pure-Python
    parts work (and are tested) where it is not built."""
    from .. import _tawa
    return _tawa


from .driver import driver  # noqa: E402
from .._errors import Unsupported  # noqa: E402,F401

# Defined where `tawa` defines them (which imports this package first).
_FROM_JIT = {"JITFunction", "KernelInterface", "jit"}
_FROM_AUTOTUNE = {"Autotuner", "Config", "Heuristics", "autotune", "heuristics"}


def __getattr__(name):
    if name in _FROM_JIT:
        from .. import _jit
        return _jit if name == "jit" else getattr(_jit, name)
    if name in _FROM_AUTOTUNE:
        from .. import _autotune
        return getattr(_autotune, name)
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"triton.runtime.{name}")
