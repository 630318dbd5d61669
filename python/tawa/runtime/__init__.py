"""`triton.runtime`: the driver, the JIT and the autotuner."""

from .._errors import unsupported


def _ext():
    """The extension module, imported on first use so that the pure-Python
    parts work (and are tested) where it is not built."""
    from .. import _tawa
    return _tawa


from .driver import driver  # noqa: E402
from .. import _jit as jit  # noqa: E402
from .._jit import JITFunction, KernelInterface  # noqa: E402
from .._autotune import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: E402
from .._errors import Unsupported  # noqa: E402



class OutOfResources(Exception):
    """A configuration that needs more of a resource than the device has."""

    def __init__(self, required, limit, name):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(f"out of resource: {name}, required: {required}, hardware limit: {limit}")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"triton.runtime.{name}")
