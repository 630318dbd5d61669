"""What a launch costs the host: tawa against Triton 3.6 calling the same
kernel source, in one process.

    python3 bench/launch_cost.py [--shape B M N K] [--calls 3000] [--loops 7]

The kernel is `triton-examples/kernels/batched_matmul.py` (twelve launch
values, two TMA tensor maps under tawa), loaded twice: under `import
triton` and under `import tawa as triton`. Each figure is the median (and
the best) of `--loops` loops of `--calls` calls, timed on the host
without synchronizing inside the loop. With the default shape (one
128x128 tile, K = 128) the GPU finishes each kernel before the host has
issued the next, so a loop measures the host; a larger `--shape` shows
where the kernel takes over.

tawa's call is split in two: the Python half (binding, the kernel cache,
the grid: the call with a driver that launches nothing) and the native
half (`Kernel.launch` with the values the Python half passed: tensor
maps, argument packing, `cuLaunchKernel`). `torch x.add_(1)` is a
reference for what one PyTorch launch costs on the same host.

Needs a GPU, PyTorch, Triton and the `tawa` wheel.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

from same_source import load_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "triton-examples", "kernels", "batched_matmul.py")


def per_call(fn, calls, loops):
    """Median and best microseconds a call over `loops` loops of `calls`."""
    import torch
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(loops):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times), min(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", nargs=4, type=int, default=[1, 128, 128, 128], metavar=("B", "M", "N", "K"),
                   help="batch, M, N, K (multiples of 128, 128 and 64; default 1 128 128 128)")
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--loops", type=int, default=7)
    opts = p.parse_args(argv)
    _, M, N, K = opts.shape
    if M % 128 or N % 128 or K % 64 or min(opts.shape) <= 0:
        p.error("--shape: M and N must be multiples of 128 and K of 64")

    with tempfile.TemporaryDirectory() as folder:
        measure(opts, folder)


def measure(opts, folder):
    """Loads both sides from `folder` (the JITs read their source there
    at the first call) and prints the table."""
    B, M, N, K = opts.shape
    import torch
    from tawa.runtime.driver import driver

    # Both sides as bench/same_source.py loads them: the file's @jit
    # functions under `import triton` and under `import tawa as triton`.
    triton_side = load_kernel(SOURCE, "batched_matmul_kernel", False, folder)
    tawa_side = load_kernel(SOURCE, "batched_matmul_kernel", True, folder)
    assert type(tawa_side).__module__.startswith("tawa"), type(tawa_side)

    a = torch.randn(B, M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(B, K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(B, M, N, device="cuda", dtype=torch.float16)
    grid = (M // 128, N // 128, B)

    def call(kernel):
        return lambda: kernel[grid](a, b, c, M, N, K, M * K, K, 1, K * N, N, 1, M * N, N, 1,
                                    BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=4)

    rows = {}
    rows["triton"] = per_call(call(triton_side), opts.calls, opts.loops)
    rows["tawa"] = per_call(call(tawa_side), opts.calls, opts.loops)
    expected = torch.bmm(a.float(), b.float())
    torch.testing.assert_close(c.float(), expected, atol=2e-1, rtol=2e-2)

    cuda = driver.active
    launches = []

    class NotLaunching:
        """The real driver, except that a launch is not run (the first
        is kept, for the native half)."""

        def __getattr__(self, name):
            return getattr(cuda, name)

        def launch(self, kernel, dims, values, device):
            if not launches:
                launches.append((kernel, dims, values, device))

    driver.set_active(NotLaunching())
    try:
        call(tawa_side)()
        if not launches:
            sys.exit("the tawa call launched nothing through the driver")
        rows["tawa python half"] = per_call(call(tawa_side), opts.calls, opts.loops)
    finally:
        driver.set_active(cuda)
    kernel, dims, values, device = launches[0]
    stream = cuda.get_current_stream(device)
    rows["tawa native half"] = per_call(lambda: kernel.launch(dims, values, stream, device),
                                        opts.calls, opts.loops)
    x = torch.zeros(16, device="cuda")
    rows["torch x.add_(1)"] = per_call(lambda: x.add_(1), opts.calls, opts.loops)

    print(f"batched GEMM B={B} M={M} N={N} K={K}, grid {grid}, {kernel.num_tensor_maps} tensor maps, "
          f"{len(values)} launch values; {torch.cuda.get_device_name()}")
    for name, (median, best) in rows.items():
        print(f"  {name:20s} {median:7.2f} us a call, median ({best:.2f} best) of {opts.loops} x {opts.calls}")


if __name__ == "__main__":
    main()
