"""`tl.extra`: the namespaces kernels import `libdevice` from."""

from . import cuda  # noqa: F401
from . import libdevice  # noqa: F401
