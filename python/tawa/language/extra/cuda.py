"""`tl.extra.cuda`: kernel-only functions."""

from .. import _kernel_only
from . import libdevice  # noqa: F401


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _kernel_only(f"extra.cuda.{name}")
