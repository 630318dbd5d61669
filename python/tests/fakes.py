"""Duck-typed stand-ins for PyTorch tensors and the CUDA driver, so that
the package's host side is tested without torch and without a GPU."""

import itertools

from tawa.runtime.driver import GPUTarget


class FakeTensor:
    """A tensor as the launcher sees it: a data pointer, a dtype, a shape
    and strides; `zero_`/`clone`/`copy_` act on `data` (a list)."""

    _next = itertools.count(1)

    def __init__(self, shape=(16,), dtype="torch.float16", ptr=None, strides=None, data=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._ptr = ptr if ptr is not None else 0x7F0000000000 + 4096 * next(self._next)
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shape):
                strides.insert(0, acc)
                acc *= s
        self._strides = tuple(strides)
        self.data = list(data) if data is not None else [1.0] * 4
        self.is_cuda = True

    def data_ptr(self):
        return self._ptr

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def element_size(self):
        return {"torch.float16": 2, "torch.bfloat16": 2, "torch.float32": 4, "torch.int64": 8}.get(self.dtype, 4)

    def zero_(self):
        self.data = [0.0] * len(self.data)
        return self

    def clone(self):
        return FakeTensor(self.shape, self.dtype, self._ptr, self._strides, self.data)

    def copy_(self, other):
        self.data = list(other.data)
        return self


class FakeEvent:
    def __init__(self, clock, enable_timing=True):
        self.clock = clock
        self.t = None

    def record(self):
        self.t = self.clock.now

    def elapsed_time(self, other):
        return other.t - self.t


class FakeDeviceInterface:
    """`torch.cuda` as do_bench uses it; time advances by `clock.step`
    per timed call, which the benchmarked function sets."""

    def __init__(self, clock):
        self.clock = clock

    def Event(self, enable_timing=True):
        return FakeEvent(self.clock, enable_timing)

    def synchronize(self):
        pass


class Clock:
    def __init__(self):
        self.now = 0.0

    def advance(self, ms):
        self.now += ms


class RecordingDriver:
    """`driver.active` that records launches instead of running them."""

    def __init__(self, timings=None):
        self.launches = []
        self.clock = Clock()
        self.timings = timings
        self.utils = self

    def get_device_properties(self, device):
        return {"multiprocessor_count": 132, "max_shared_mem": 232448, "max_num_regs": 65536, "warpSize": 32}

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_device_interface(self):
        return FakeDeviceInterface(self.clock)

    def get_empty_cache_for_benchmark(self):
        return FakeTensor()

    def clear_cache(self, cache):
        cache.zero_()

    def get_benchmarker(self):
        from tawa.testing import do_bench
        return do_bench

    def launch(self, kernel, grid, values, device):
        self.launches.append((kernel, grid, values, device))
        if self.timings is not None:
            self.clock.advance(self.timings(kernel))
