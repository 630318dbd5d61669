"""`triton.runtime.driver`: the active GPU driver, as the tutorials reach it
(`triton.runtime.driver.active.get_current_target()`,
`.get_active_torch_device()`, `.utils.get_device_properties(i)`).

The CUDA driver here launches compiled kernels on the device's primary
context (the one PyTorch uses) and on PyTorch's current stream.
`set_active` swaps in another driver object: the CPU tests use one that
records launches instead of running them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GPUTarget:
    backend: str
    arch: int
    warp_size: int


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise RuntimeError("launching a tawa kernel needs PyTorch (`import torch` failed)") from e
    return torch


class _Utils:
    def __init__(self):
        self._props = {}

    def get_device_properties(self, device):
        """Triton's keys: `multiprocessor_count`, `max_shared_mem`,
        `max_num_regs`, `warpSize` (and `name`, `capability`)."""
        index = device if isinstance(device, int) else getattr(device, "index", None) or 0
        if index not in self._props:
            from . import _ext
            self._props[index] = dict(_ext().device_properties(index))
        return dict(self._props[index])


class CudaDriver:
    backend = "cuda"

    def __init__(self):
        self.utils = _Utils()
        self._target = {}
        self._raw_stream = None
        self._get_device = None

    def is_active(self):
        from . import _ext
        return _ext().gpu_available()

    def get_current_device(self):
        # Asked at every launch: after the first call (which initializes
        # CUDA in PyTorch, as `torch.cuda.current_device()` does), the
        # binding that call ends in, without the Python around it.
        get = self._get_device
        if get is None:
            torch = _torch()
            device = torch.cuda.current_device()
            self._get_device = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
            return device
        return get()

    def set_current_device(self, device):
        _torch().cuda.set_device(device)

    def get_active_torch_device(self):
        torch = _torch()
        return torch.device("cuda", torch.cuda.current_device())

    def get_current_stream(self, device=None):
        """The raw `CUstream` handle of PyTorch's current stream."""
        if self._raw_stream is None:
            torch = _torch()
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            self._raw_stream = raw if raw is not None else (
                lambda d: torch.cuda.current_stream(d).cuda_stream)
        if device is None:
            device = self.get_current_device()
        return self._raw_stream(device)

    def get_current_target(self):
        device = self.get_current_device()
        if device not in self._target:
            cap = self.utils.get_device_properties(device)["capability"]
            self._target[device] = GPUTarget("cuda", cap[0] * 10 + cap[1], 32)
        return self._target[device]

    def get_device_interface(self):
        return _torch().cuda

    def get_benchmarker(self):
        from ..testing import do_bench
        return do_bench

    def get_empty_cache_for_benchmark(self):
        torch = _torch()
        # Larger than the L2 (50 MB on an H100), as Triton's.
        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")

    def clear_cache(self, cache):
        cache.zero_()

    def launch(self, kernel, grid, values, device):
        """Launches a compiled kernel (`tawa._tawa.Kernel`) on `device`'s
        current stream."""
        kernel.launch(grid, values, self.get_current_stream(device), device)


class _DriverConfig:
    def __init__(self):
        self._default = None
        self._active = None

    @property
    def default(self):
        if self._default is None:
            self._default = CudaDriver()
        return self._default

    @property
    def active(self):
        if self._active is None:
            self._active = self.default
        return self._active

    def set_active(self, driver):
        self._active = driver

    def reset_active(self):
        self._active = self.default


driver = _DriverConfig()
