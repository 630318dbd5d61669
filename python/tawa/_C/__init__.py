"""`triton._C`: the parts of Triton's native module that scripts import
directly (`from triton._C.libtriton import nvidia`, tutorial 09's cuBLAS
baseline). Compilation itself is tawa-rs's (`tawa._tawa`)."""

from . import libtriton  # noqa: F401
