"""`triton.tools`: host-side helpers (`tensor_descriptor.TensorDescriptor`)."""

from . import tensor_descriptor  # noqa: F401
