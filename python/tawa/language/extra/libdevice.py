"""`libdevice`: kernel-only functions (the compiler reads the calls)."""

from .. import _kernel_only


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _kernel_only(f"extra.libdevice.{name}")
