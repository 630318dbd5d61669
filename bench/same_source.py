#!/usr/bin/env python3
"""tawa, Triton and cuBLAS on the same kernel source, in one process.

    python3 bench/same_source.py triton-examples/kernels/matmul.py \\
        [--case square_8192 ...] [--cases-file CASES.toml] [--iters 30] \\
        [--warmup 5] [--sides tawa,triton,cublas] [--json OUT.jsonl]
    python3 bench/same_source.py --report OUT.jsonl [--out OUT.md]

For each launch case of an example's `.toml` (the file `tawa-rs bench`
reads, beside the kernel file unless `--cases-file` names one; without
`--case`, its cases tagged `large`):

- the kernel file's `@triton.jit` functions are taken from its source
  (their text as written; other decorators such as `@triton.autotune`,
  and the file's other code, such as a tutorial's tests, are left out: the
  case gives the config) and loaded twice, once under `import triton` and
  once under `import tawa as triton` (the `tawa` package compiles them
  through tawa-rs); nothing else differs between the two;
- the case's tensors are made once, on the GPU (seeded random inputs,
  outputs NaN unless the case initializes them), and both launches use
  them, with the case's grid, `num_warps`, `num_stages` and constexprs;
- each side's output is checked against torch (the case's `reference`,
  with the case's tolerance, the reference rounded to the output's dtype
  first, as the Rust harness does); a side that fails to compile, to
  launch or to be correct is reported as such (and not timed), never a
  crash of the whole run;
- tawa, Triton and cuBLAS (torch.matmul doing the reference's matrix
  products, results in the operands' dtype, as `tawa-rs bench`'s
  baseline) are timed interleaved, call by call, with CUDA events: warm-up,
  then `--iters` rounds, in orders such that each follows each other
  equally often (`call_orders`), the L2 flushed before each call and the
  host's launch cost kept out of the figure (`time_interleaved`); the
  figure is the median. Same process, same inputs, same clocks: the
  ratios can be divided. Back to back the large GEMMs run at the power
  cap, at one clock for all the sides of a process, set by all of them
  (`--clocks` measures it): a kernel drawing more power lowers it for
  its neighbours as for itself, and the ratio is the kernels' at that
  clock. `--cooldown-ms` leaves the GPU idle before each call (full
  clocks), and `--sustained` times each side alone back to back, with
  joules a call where NVML has the energy counter.

One line per case is printed (and a JSON object per case appended to
`--json`): TFLOP/s of each side, tawa/Triton, tawa/cuBLAS, Triton/cuBLAS
(speed ratios: above 1, the first is faster). `--report` turns JSON
lines from any number of runs into a markdown table, with the issue-10
comparison of the persistent and descriptor examples with the plain grid
at the same shape (each normalized by its own run's cuBLAS, since they
ran in separate processes).

`--clocks` samples the GPU's SM clock (NVML, through the driver's
library) while the timed calls run and reports, per side, the median of
each call's mean clock and the cycles a call at it: whether the sides
ran at the same clocks, and which needs more cycles at them.

`--kernel-times` adds, per side, the GPU durations of the kernels it
launches as CUPTI records them (torch.profiler) under the same flush and
sleep, and the gap between the sleep's end and each kernel's start: an
event pair times both, this tells them apart.

`TAWA_FLAGS` (the compiler's pipeline flags, e.g. `--mma-depth 1`, read
by the `tawa` package) applies to the tawa side only, and is recorded in
each JSON object as `tawa_flags`.

Needs PyTorch, Triton and the `tawa` wheel (bench/same-source-session.sh
installs it) on a CUDA GPU. The case parsing and source extraction need
neither (bench/test_same_source.py tests them without torch).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
import tomllib
import traceback

#: The `.toml` dtype names as torch's attribute names.
TORCH_DTYPES = {
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "i1": "bool",
}

SIDES = ("tawa", "triton", "cublas")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_tutorials import RUNNER, import_source  # noqa: E402


# ----------------------------------------------------------------------------
# The launch cases (no torch needed)


def cdiv(a, b):
    return -(-a // b)


def evaluate(expr, env):
    """An integer expression of the launch-case schema (`M`, `cdiv(M, 128) * 2`,
    `min(NUM_SMS, ...)`): Python's meaning, as the Rust evaluator's."""
    if isinstance(expr, bool):
        return int(expr)
    if isinstance(expr, int):
        return expr
    value = eval(str(expr), {"__builtins__": {}}, dict(env, cdiv=cdiv, min=min, max=max))  # noqa: S307
    if not isinstance(value, int):
        raise ValueError(f"`{expr}` is not an integer expression (it gave {value!r})")
    return value


def load_spec(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def cases_file_for(example_py):
    return example_py[: -len(".py")] + ".toml" if example_py.endswith(".py") else example_py + ".toml"


def select_cases(spec, names, tags):
    """The cases named (in that order), else those carrying every tag."""
    by_name = {c["name"]: c for c in spec.get("case", [])}
    if names:
        missing = [n for n in names if n not in by_name]
        if missing:
            raise SystemExit(f"no case {', '.join(missing)} (there are: {', '.join(by_name)})")
        return [by_name[n] for n in names]
    return [c for c in spec.get("case", []) if all(t in c.get("tags", []) for t in tags)]


def case_env(case):
    """Sizes and integer/boolean constexprs: the names of the expressions."""
    env = dict(case.get("sizes", {}))
    for k, v in case.get("constexprs", {}).items():
        if isinstance(v, (bool, int)):
            if k in env:
                raise ValueError(f"`{k}` is both a size and a constexpr")
            env[k] = int(v)
    return env


def role(spec, name):
    """The tensor playing reference role `name` (the role itself when the
    spec's `roles` table does not map it)."""
    return spec.get("roles", {}).get(name, name)


def plan_case(spec, case):
    """Everything about a case that needs no GPU: the tensors to make (name
    -> dict with dtype, shape, strides or None, init or None, output), the
    launch arguments in parameter order (`(name, kind, value)`: a tensor's
    name, an int or float, `(of, dim)` of a stride, `(of, block)` of a host
    descriptor, the tensor names of a pointer array), the grid, the
    constexprs, the launch options and the work count."""
    env = case_env(case)
    tensors = {}

    def add_tensor(t):
        shape = [evaluate(d, env) for d in t["shape"]]
        strides = t.get("strides")
        init = t.get("init")
        if init and init.get("dist") == "values":
            init = dict(init, values=[evaluate(v, env) for v in init["values"]])
        tensors[t["name"]] = {
            "dtype": t["dtype"], "shape": shape,
            "strides": [evaluate(s, env) for s in strides] if strides else None,
            "init": init, "output": bool(t.get("output", False)),
        }

    for b in case.get("buffers", []):
        add_tensor(b)
    args = []
    for a in case.get("args", []):
        kind, name = a["kind"], a["name"]
        if kind == "tensor":
            add_tensor(a)
            args.append((name, "tensor", name))
        elif kind == "scalar":
            v = a["value"]
            if a.get("dtype", "i32").startswith(("fp", "bf")):
                args.append((name, "float", float(evaluate(v, env) if isinstance(v, str) else v)))
            else:
                args.append((name, "int", evaluate(v, env)))
        elif kind == "stride":
            args.append((name, "stride", (a["of"], a["dim"])))
        elif kind == "desc":
            args.append((name, "desc", (a["of"], [evaluate(b, env) for b in a["block"]])))
        elif kind == "ptr_array":
            args.append((name, "ptr_array", list(a["of"])))
        else:
            raise ValueError(f"argument `{name}`: kind `{kind}` is not supported")
    for name, kind, value in args:
        refers = [value[0]] if kind in ("stride", "desc") else value if kind == "ptr_array" else []
        for n in refers:
            if n not in tensors:
                raise ValueError(f"argument `{name}` refers to `{n}`, which is no tensor of the case")
    bench = case.get("bench") or {}
    return {
        "name": case["name"], "tags": case.get("tags", []), "sizes": case.get("sizes", {}),
        "tensors": tensors, "args": args, "grid": tuple(evaluate(g, env) for g in case["grid"]),
        "constexprs": dict(case.get("constexprs", {})),
        "num_warps": case.get("num_warps", 4), "num_stages": case.get("num_stages", 3),
        "tolerance": case.get("tolerance", {"atol": 1e-2, "rtol": 1e-2}),
        "flops": evaluate(bench["flops"], env) if "flops" in bench else None,
        "bytes": evaluate(bench["bytes"], env) if "bytes" in bench else None,
    }


def pointer_array(spec, plan, role_name):
    """The tensor names of the pointer-array argument playing `role_name`."""
    want = role(spec, role_name)
    for name, kind, value in plan["args"]:
        if kind == "ptr_array" and name == want:
            return value
    raise ValueError(f"no pointer-array argument `{want}`")


#: The references the script can check (the GEMM-like ones of the Rust
#: harness), each as the matrix products it is made of, `(a, b,
#: b_transposed)` tensor names (the cuBLAS baseline does these), and the
#: outputs it gives.
def reference_products(spec, plan):
    ref = spec["reference"]
    if ref in ("matmul", "gemm_row_reduce", "batched_matmul"):
        return [(role(spec, "a"), role(spec, "b"), False)]
    if ref == "matmul_bt":
        return [(role(spec, "a"), role(spec, "bt"), True)]
    if ref == "geglu":
        return [(role(spec, "a"), role(spec, "wg"), False), (role(spec, "a"), role(spec, "wu"), False)]
    if ref == "grouped_gemm":
        a, b = pointer_array(spec, plan, "a_ptrs"), pointer_array(spec, plan, "b_ptrs")
        if len(a) != len(b):
            raise ValueError("grouped_gemm: a_ptrs and b_ptrs differ in length")
        return [(x, y, False) for x, y in zip(a, b)]
    raise ValueError(f"no torch reference for `{ref}` in this script (GEMM-like references only)")


def output_roles(spec, plan):
    """The output tensors the reference gives, in its order."""
    ref = spec["reference"]
    if ref in ("matmul", "matmul_bt", "batched_matmul"):
        return [role(spec, "c")]
    if ref == "geglu":
        return [role(spec, "h")]
    if ref == "gemm_row_reduce":
        return [role(spec, "c"), role(spec, "row_sum")]
    if ref == "grouped_gemm":
        return list(pointer_array(spec, plan, "c_ptrs"))
    raise ValueError(f"no torch reference for `{ref}` in this script (GEMM-like references only)")


# ----------------------------------------------------------------------------
# The kernel source, under either import (no torch needed)


def _is_jit(decorator) -> bool:
    text = ast.unparse(decorator)
    return text.split("(")[0].split(".")[-1] == "jit"


def kernel_source(text, use_tawa, path="<kernel>"):
    """The module both sides compile: the file's `@jit` functions, their
    text as written and on the lines where they are written (so that
    messages and the generated code's comments point into the original
    file), each with `@triton.jit` as its only decorator, and the two
    imports (`triton` or `tawa as triton`) on the first two lines; every
    other line is blank. Returns the text and the names of the functions."""
    tree = ast.parse(text, path)
    lines = text.splitlines(keepends=True)
    out = ["\n"] * len(lines)
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            # `node.lineno` is the `def` line; its decorators (one may span
            # lines, as a tutorial's autotune list does) are above it, and
            # the first of them becomes the only one.
            out[node.decorator_list[0].lineno - 1] = "@triton.jit\n"
            for i in range(node.lineno - 1, node.end_lineno):
                out[i] = lines[i] if lines[i].endswith("\n") else lines[i] + "\n"
            names.append(node.name)
    head = ["import triton\n", "import triton.language as tl\n"]
    if out[:2] == ["\n", "\n"]:
        out[:2] = head
    else:  # a kernel on the file's first lines: one line later, then
        out = head + out
    text = "".join(out)
    if use_tawa:
        # The imports switched as the package's tutorial runner switches them.
        text, _ = RUNNER.rewrite(text)
    return text, names


def load_kernel(path, name, use_tawa=False, folder=None):
    """`name` from `path`'s `@jit` functions (see `kernel_source`), under
    Triton or tawa. Both JITs read a function's source from its file, so
    the extracted module is written to a file of its own."""
    with open(path, encoding="utf-8") as f:
        source, names = kernel_source(f.read(), use_tawa, path)
    if name not in names:
        raise SystemExit(f"{path}: no @jit function `{name}` (there are: {', '.join(names)})")
    folder = folder or tempfile.mkdtemp(prefix="tawa-same-source-")
    stem = os.path.basename(path)[:-3].replace("-", "_").replace(".", "_")
    mod = import_source(source, ("tawa_" if use_tawa else "triton_") + stem, folder)
    return getattr(mod, name)


# ----------------------------------------------------------------------------
# On the GPU


def make_tensors(torch, plan, seed):
    """The case's tensors on the GPU, inputs seeded (in plan order)."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    out = {}
    for name, t in plan["tensors"].items():
        dtype = getattr(torch, TORCH_DTYPES[t["dtype"]])
        shape, strides = t["shape"], t["strides"]
        if strides:
            span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
            x = torch.as_strided(torch.empty(span, device="cuda", dtype=dtype), shape, strides)
        else:
            x = torch.empty(shape, device="cuda", dtype=dtype)
        out[name] = x
        fill(torch, x, t, gen)
    return out


def fill(torch, x, t, gen=None):
    """Initial values of one tensor: its `init`, randn for an input
    without one, NaN (or the smallest integer) for an output without one."""
    init = t["init"]
    if init is None and t["output"]:
        x.fill_(float("nan") if x.dtype.is_floating_point else torch.iinfo(x.dtype).min)
        return
    init = init or {"dist": "randn"}
    dist = init["dist"]
    shape = list(x.shape)
    if dist == "randn":
        v = torch.randn(shape, device="cuda", generator=gen) * init.get("scale", 1.0) + init.get("mean", 0.0)
    elif dist == "uniform":
        v = torch.rand(shape, device="cuda", generator=gen) * (init["high"] - init["low"]) + init["low"]
    elif dist == "randint":
        v = torch.randint(init["low"], init["high"], shape, device="cuda", generator=gen)
    elif dist == "zeros":
        v = torch.zeros(shape, device="cuda")
    elif dist == "values":
        v = torch.tensor(init["values"], device="cuda").reshape(shape)
    else:
        raise ValueError(f"init `{dist}` is not supported")
    x.copy_(v.to(x.dtype))


def reset_outputs(torch, plan, tensors):
    """Outputs back to their initial state (before each side's checked run:
    atomic accumulators start from zero, untouched elements read NaN)."""
    for name, t in plan["tensors"].items():
        if t["output"]:
            fill(torch, tensors[name], t)


def launch_args(torch, plan, tensors, descriptor_type, keep):
    """The positional arguments, `TensorDescriptor`s of the side's own class;
    pointer arrays are made once (`keep`) and shared by the sides."""
    out = []
    for _, kind, value in plan["args"]:
        if kind == "tensor":
            out.append(tensors[value])
        elif kind in ("int", "float"):
            out.append(value)
        elif kind == "stride":
            out.append(tensors[value[0]].stride(value[1]))
        elif kind == "desc":
            out.append(descriptor_type.from_tensor(tensors[value[0]], list(value[1])))
        elif kind == "ptr_array":
            key = tuple(value)
            if key not in keep:
                keep[key] = torch.tensor([tensors[n].data_ptr() for n in key], device="cuda", dtype=torch.int64)
            out.append(keep[key])
    return out


def torch_reference(torch, spec, plan, tensors):
    """Expected outputs (fp32, before rounding), by tensor name."""
    ref = spec["reference"]
    prods = reference_products(spec, plan)

    def product(a, b, bt):
        x, y = tensors[a].float(), tensors[b].float()
        return torch.matmul(x, y.transpose(-1, -2) if bt else y)

    outs = output_roles(spec, plan)
    if ref in ("matmul", "matmul_bt", "batched_matmul"):
        c = product(*prods[0])
        act = plan["constexprs"].get("ACTIVATION", "")
        if act == "leaky_relu":
            c = torch.where(c >= 0, c, 0.01 * c)
        elif act:
            raise ValueError(f"ACTIVATION {act!r} has no reference here")
        return {outs[0]: c}
    if ref == "geglu":
        g, u = product(*prods[0]), product(*prods[1])
        gelu = 0.5 * g * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g * g * g)))
        return {outs[0]: gelu * u}
    if ref == "gemm_row_reduce":
        c = product(*prods[0])
        return {outs[0]: c, outs[1]: c.sum(dim=1)}
    if ref == "grouped_gemm":
        return {o: product(*p) for o, p in zip(outs, prods)}
    raise ValueError(f"no torch reference for `{ref}`")


def compare(torch, plan, tensors, expected):
    """`(ok, worst relative error, text)`: every output within the case's
    tolerance of the reference rounded to the output's dtype."""
    tol = plan["tolerance"]
    worst, bad = 0.0, []
    for name, exp in expected.items():
        out = tensors[name]
        want = exp.to(out.dtype).float()
        got = out.float()
        diff = (got - want).abs()
        limit = tol["atol"] + tol["rtol"] * want.abs()
        outside = int((~(diff <= limit)).sum().item())  # NaN counts as outside
        rel = (torch.linalg.norm(torch.nan_to_num(got - want, nan=float("inf"))) /
               torch.linalg.norm(want).clamp_min(1e-30)).item()
        worst = max(worst, rel) if math.isfinite(rel) else math.inf
        if outside:
            bad.append(f"{name}: {outside} of {got.numel()} elements outside atol {tol['atol']}, "
                       f"rtol {tol['rtol']} (max |diff| {torch.nan_to_num(diff, nan=math.inf).max().item():.3g})")
    return not bad, worst, "; ".join(bad)


def call_orders(n, rotated=False):
    """The orders of one cycle of rounds over `n` functions, such that,
    calls following each other across rounds too, each function follows
    each other equally often in a cycle. Back to back, the call before
    sets the clocks a call starts at: plain rotation ([0, 1, 2], [1, 2,
    0], [2, 0, 1]) has 0 follow 2 in two transitions of three and 1 only
    in one. For a prime `n`, round d steps by d (0, d, 2d, ... mod n):
    each round is a cycle of step d, and its last call steps by d to the
    next round's first, so the n - 1 rounds take every ordered pair of
    distinct functions once. Other counts, and `rotated` (the order of
    the runs logged before 2026-11-29's twentieth session, kept to
    compare with them: `--call-order rotated`), rotate."""
    if not rotated and n > 1 and all(n % p for p in range(2, int(n ** 0.5) + 1)):
        return [[(d * j) % n for j in range(n)] for d in range(1, n)]
    return [[(r + j) % n for j in range(n)] for r in range(max(n, 1))]


def clock_per_call(samples, windows):
    """The mean of the `(time, MHz)` clock `samples` inside each of the
    `(start, end)` `windows` (host seconds; a call's window starts its
    event-timed length before the host saw it end), `None` for a window
    no sample fell in."""
    out = []
    for a, b in windows:
        inside = [mhz for t, mhz in samples if a <= t <= b]
        out.append(statistics.mean(inside) if inside else None)
    return out


class ClockSampler:
    """NVML's SM clock of the current device, sampled every
    `period_s` on a thread of its own while in a `with` block:
    `samples` holds `(perf_counter seconds, MHz)`."""

    def __init__(self, read, period_s=0.0002):
        self.read, self.period_s, self.samples = read, period_s, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self.read()))
            time.sleep(self.period_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def time_interleaved(fns, iters, warmup, cooldown_ms=0.0, rotated=False, clocks=None):
    """Median milliseconds of each of `fns`, timed call by call with CUDA
    events, interleaved in the orders of `call_orders`, round after round,
    so that each function follows each other equally often (exactly, for
    `iters` a multiple of the cycle: two rounds for three functions). Before each timed call
    the GPU clears a buffer larger than the L2 (as Triton's `do_bench`
    does: no call finds its operands left in L2 by the one before) and then
    sleeps, so that the host's launch cost, paid while it sleeps, is not in
    the figure (tawa's and Triton's Python launchers differ in it).

    `cooldown_ms` leaves the GPU idle that long before each call (the host
    waits with nothing queued). Back to back, in a power-limited run,
    the sides run at one clock that all of them set: a kernel that draws
    more power lowers its neighbours' clock as well as its own, for
    longer than one call. With a cooldown each call starts from an idle
    GPU.

    `clocks`, a list, receives per function the median over its calls of
    the SM clock's mean during the call (MHz; `None` without samples),
    sampled with `ClockSampler` (NVML, `nvml_clock_reader`)."""
    import torch
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    sleep = getattr(torch.cuda, "_sleep", None)

    def settle():
        flush.zero_()
        if sleep is not None:
            sleep(1_000_000)  # about 0.5 ms at Hopper's clocks

    for _ in range(warmup):
        for f in fns:
            f()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    windows = [[] for _ in fns]
    orders = call_orders(len(fns), rotated)
    read = nvml_clock_reader(torch) if clocks is not None else None
    sampler = ClockSampler(read) if read else None
    with sampler or contextlib.nullcontext():
        for r in range(iters):
            for i in orders[r % len(orders)]:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                if cooldown_ms > 0:
                    time.sleep(cooldown_ms / 1000)
                settle()
                start.record()
                fns[i]()
                end.record()
                end.synchronize()
                seen = time.perf_counter()
                times[i].append(start.elapsed_time(end))
                windows[i].append((seen - times[i][-1] / 1000, seen))
    if clocks is not None:
        for w in windows:
            per_call = [c for c in clock_per_call(sampler.samples if sampler else [], w) if c]
            clocks.append(statistics.median(per_call) if per_call else None)
    del flush
    return [statistics.median(t) for t in times]


def summarize_kernels(events):
    """Chrome-trace kernel events (`name`, `ts`, `dur` in microseconds) of
    calls each preceded by the harness's flush (torch's fill kernel) and
    sleep (its spin kernel): per other kernel, in order of first launch, how many
    ran, their median duration and the median gap from the end of the
    kernel before it (the sleep, for a call's first kernel) to their start.
    A kernel right after the flush has no gap (there was no sleep)."""
    per, prev_end = {}, None
    for e in sorted(events, key=lambda e: e["ts"]):
        name = e["name"]
        if "spin_kernel" in name:  # torch.cuda._sleep
            prev_end = e["ts"] + e["dur"]
            continue
        if "FillFunctor" in name:  # the flush's zero_()
            prev_end = None
            continue
        d = per.setdefault(name[:80], {"us": [], "gap": []})
        d["us"].append(e["dur"])
        if prev_end is not None:
            d["gap"].append(e["ts"] - prev_end)
        prev_end = e["ts"] + e["dur"]
    return [{"kernel": k, "n": len(d["us"]), "us": statistics.median(d["us"]),
             "gap_us": statistics.median(d["gap"]) if d["gap"] else None}
            for k, d in per.items()]


def kernel_times(fns, iters):
    """Each of `fns` again, `iters` calls under the same flush and sleep as
    `time_interleaved`, recorded by torch.profiler (CUPTI): per GPU kernel
    they launch, its median duration on the GPU and the median gap between
    the end of the kernel before it (the sleep) and its start, in
    microseconds. Separates what a kernel takes from what its launch adds
    (an event pair times both). `[{"kernel", "n", "us", "gap_us"}]` per
    function."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    sleep = getattr(torch.cuda, "_sleep", None)
    out = []
    for f in fns:
        f()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                flush.zero_()
                if sleep is not None:
                    sleep(1_000_000)
                f()
            torch.cuda.synchronize()
        with tempfile.NamedTemporaryFile(suffix=".json") as trace:
            prof.export_chrome_trace(trace.name)
            with open(trace.name) as t:
                events = [e for e in json.load(t)["traceEvents"] if e.get("cat") == "kernel"]
        out.append(summarize_kernels(events))
    del flush
    return out


_energy_readers = {}


def nvml_energy_reader(torch):
    """A function returning the GPU's energy counter in joules (NVML's
    total energy since the driver loaded, read through the driver's own
    library with ctypes: no Python package needed), or None where NVML or
    the counter is not there. Made once per device and process."""
    device = torch.cuda.current_device()
    if device not in _energy_readers:
        _energy_readers[device] = _make_energy_reader(torch, device)
    return _energy_readers[device]


def nvml_clock_reader(torch):
    """A function returning the current SM clock in MHz (NVML, as
    `nvml_energy_reader`), or None where NVML is not there."""
    found = _nvml_device(torch, torch.cuda.current_device())
    if found is None:
        return None
    import ctypes

    nvml, handle = found
    mhz = ctypes.c_uint()

    def read():
        nvml.nvmlDeviceGetClockInfo(handle, 1, ctypes.byref(mhz))  # NVML_CLOCK_SM
        return mhz.value

    return read


def _nvml_device(torch, device):
    """NVML's library and its handle of CUDA device `device`, or None."""
    import ctypes

    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    if nvml.nvmlInit_v2() != 0:
        return None
    handle = ctypes.c_void_p()
    props = torch.cuda.get_device_properties(device)
    bus = getattr(props, "pci_bus_id", None)
    found = 1
    if bus is not None:
        # NVML counts devices its own way; the PCI address names this one.
        pci = f"{getattr(props, 'pci_domain_id', 0):08x}:{bus:02x}:{getattr(props, 'pci_device_id', 0):02x}.0"
        found = nvml.nvmlDeviceGetHandleByPciBusId_v2(pci.encode(), ctypes.byref(handle))
    if found != 0 and nvml.nvmlDeviceGetHandleByIndex_v2(device, ctypes.byref(handle)) != 0:
        return None
    return nvml, handle


def _make_energy_reader(torch, device):
    import ctypes

    found = _nvml_device(torch, device)
    if found is None:
        return None
    nvml, handle = found
    millijoules = ctypes.c_ulonglong()

    def read():
        if nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(millijoules)) != 0:
            raise RuntimeError("NVML has no energy counter for this GPU")
        return millijoules.value / 1000

    read()
    return read


def sustained(fns, calls, rounds, energy):
    """Each of `fns` run its `calls` count of times back to back, nothing
    between (no flush, no sleep), after one call to warm up; the functions
    take turns `rounds` times and each figure is the median over its
    turns. Per
    function: milliseconds a call and, with `energy` (a joule counter),
    joules a call and mean watts. What a loop calling one kernel sees,
    its clocks those its own power draw leaves under the cap; from the
    same turns the energy says which kernel gets more work out of a
    joule. The GPU idles 0.2 s before each turn, so that no turn starts
    at the clocks the one before left."""
    import torch

    seen = [{"ms": [], "j": [], "w": []} for _ in fns]
    for _ in range(rounds):
        for i, (f, n) in enumerate(zip(fns, calls)):
            f()
            torch.cuda.synchronize()
            time.sleep(0.2)
            e0, t0 = (energy() if energy else None), time.perf_counter()
            for _ in range(n):
                f()
            torch.cuda.synchronize()
            t1, e1 = time.perf_counter(), (energy() if energy else None)
            seen[i]["ms"].append((t1 - t0) * 1000 / n)
            if energy:
                seen[i]["j"].append((e1 - e0) / n)
                seen[i]["w"].append((e1 - e0) / (t1 - t0))
    return [{k: statistics.median(v) for k, v in d.items() if v} for d in seen]


def _err(e):
    first = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {first[:200]}"


def speed_ratio(x_ms, y_ms):
    """How many times faster x is than y (time of y over time of x)."""
    if isinstance(x_ms, float) and isinstance(y_ms, float) and x_ms > 0 and y_ms > 0:
        return y_ms / x_ms
    return None


def constexpr_values(plan, package):
    """The case's constexprs as one side passes them: `{ py = "tl.float16" }`
    evaluated against that side's package (`triton` or `tawa`)."""
    return {k: eval(v["py"], {"__builtins__": {}, "triton": package, "tl": package.language})  # noqa: S307
            if isinstance(v, dict) else v for k, v in plan["constexprs"].items()}


def bench_case(torch, spec, plan, kernels, packages, descriptor_types, opts):
    """One case: check each side, time those that passed. The row for the
    JSON and the table."""
    row = {"case": plan["name"], "sizes": plan["sizes"], "grid": list(plan["grid"]),
           "num_warps": plan["num_warps"], "num_stages": plan["num_stages"],
           "dtypes": sorted({t["dtype"] for t in plan["tensors"].values() if not t["output"]}),
           "flops": plan["flops"]}
    tensors = make_tensors(torch, plan, opts.seed)
    expected = torch_reference(torch, spec, plan, tensors)
    keep = {}
    launches = {}
    for side in ("tawa", "triton"):
        if side not in opts.sides:
            continue
        kernel = kernels.get(side)
        if isinstance(kernel, str):  # the module did not load
            row[side] = {"error": kernel}
            continue
        try:
            args = launch_args(torch, plan, tensors, descriptor_types[side], keep)
            call = kernel[plan["grid"]]
            kw = dict(constexpr_values(plan, packages[side]), num_warps=plan["num_warps"],
                      num_stages=plan["num_stages"])
            launch = (lambda call=call, args=args, kw=kw: call(*args, **kw))
            reset_outputs(torch, plan, tensors)
            t0 = time.time()
            launch()
            torch.cuda.synchronize()
            first_s = time.time() - t0
            ok, rel, why = compare(torch, plan, tensors, expected)
        except Exception as e:  # noqa: BLE001 - a side that fails is a table cell
            traceback.print_exc()
            row[side] = {"error": _err(e)}
            continue
        row[side] = {"correct": ok, "rel_error": rel, "first_launch_s": first_s}
        if ok:
            launches[side] = launch
        else:
            row[side]["error"] = f"wrong result: {why}"
    if "cublas" in opts.sides:
        pairs = [(tensors[a], tensors[b].transpose(-1, -2) if bt else tensors[b])
                 for a, b, bt in reference_products(spec, plan)]
        launches["cublas"] = lambda: [torch.matmul(x, y) for x, y in pairs]
        row["cublas"] = {}
    names = list(launches)
    if names:
        try:
            clocks = [] if opts.clocks else None
            ms = time_interleaved([launches[n] for n in names], opts.iters, opts.warmup, opts.cooldown_ms,
                                  opts.call_order == "rotated", clocks)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            for n in names:
                row[n]["error"] = f"timing: {_err(e)}"
            ms = [None] * len(names)
        for n, t in zip(names, ms):
            if t is not None:
                row[n]["ms"] = t
                if plan["flops"]:
                    row[n]["tflops"] = plan["flops"] / t * 1e-9
        for n, mhz in zip(names, clocks or []):
            if mhz and row[n].get("ms"):
                row[n]["sm_mhz"] = mhz
                row[n]["mcycles"] = row[n]["ms"] * mhz / 1000
        if clocks:
            print("  SM clock in the timed calls: " + ", ".join(
                f"{n} {row[n]['sm_mhz']:.0f} MHz, {row[n]['mcycles']:.3f} Mcycles a call"
                for n in names if "sm_mhz" in row[n]), flush=True)
        timed = [n for n in names if row[n].get("ms")]
        if opts.sustained and timed:
            try:
                energy = nvml_energy_reader(torch)
                # About `--sustained` seconds a turn, from the timed call's length.
                calls = [max(10, round(opts.sustained * 1000 / row[n]["ms"])) for n in timed]
                for n, x in zip(timed, sustained([launches[n] for n in timed], calls, 3, energy)):
                    if plan["flops"]:
                        x["tflops"] = plan["flops"] / x["ms"] * 1e-9
                    row[n]["sustained"] = x
                    print(f"  {n} sustained: {x['ms']:.4f} ms a call"
                          + (f", {x['tflops']:.0f} TFLOP/s" if "tflops" in x else "")
                          + (f", {x['j']:.3f} J a call at {x['w']:.0f} W" if "j" in x else ""), flush=True)
            except Exception as e:  # noqa: BLE001 - an extra, like the kernel times
                traceback.print_exc()
                row["sustained_error"] = _err(e)
        if opts.kernel_times:
            try:
                for n, k in zip(names, kernel_times([launches[n] for n in names], opts.iters)):
                    row[n]["kernels"] = k
                    print(f"  {n}: " + "; ".join(
                        f"{x['kernel'][:40]} {x['us']:.2f} us on the GPU"
                        + (f", {x['gap_us']:.2f} us after the sleep" if x["gap_us"] is not None else "")
                        for x in k), flush=True)
            except Exception as e:  # noqa: BLE001 - the profiler is an extra
                traceback.print_exc()
                row["kernel_times_error"] = _err(e)
    ms = {s: row.get(s, {}).get("ms") for s in SIDES}
    row["tawa_vs_triton"] = speed_ratio(ms["tawa"], ms["triton"])
    row["tawa_vs_cublas"] = speed_ratio(ms["tawa"], ms["cublas"])
    row["triton_vs_cublas"] = speed_ratio(ms["triton"], ms["cublas"])
    del tensors, expected, keep
    torch.cuda.empty_cache()
    return row


def summary_line(row):
    def side(s):
        d = row.get(s)
        if d is None:
            return f"{s} -"
        if "ms" in d:
            tf = f" {d['tflops']:.0f} TFLOP/s" if d.get("tflops") else ""
            return f"{s} {d['ms']:.4f} ms{tf}"
        return f"{s} FAILED ({d.get('error', '?')})"

    def r(k):
        return f"{row[k]:.3f}x" if row.get(k) else "-"
    return (f"{row['label']}/{row['case']}: {side('tawa')}, {side('triton')}, {side('cublas')}; "
            f"tawa/Triton {r('tawa_vs_triton')}, tawa/cuBLAS {r('tawa_vs_cublas')}, "
            f"Triton/cuBLAS {r('triton_vs_cublas')}")


def run(opts):
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("same_source.py: no CUDA GPU is visible to PyTorch")
    # Only the sides asked for are imported: `--sides triton,cublas` needs
    # no tawa wheel.
    packages, descriptors, env = {}, {}, {
        "device": torch.cuda.get_device_name(), "torch_version": torch.__version__}
    if "triton" in opts.sides:
        import triton
        from triton.tools.tensor_descriptor import TensorDescriptor
        packages["triton"], descriptors["triton"] = triton, TensorDescriptor
        env["triton_version"] = triton.__version__
        # Device-side descriptors (`tl.make_tensor_descriptor`) need
        # Triton's global scratch; tawa builds their tensor maps on the host.
        triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    if "tawa" in opts.sides:
        import tawa
        from tawa import _tawa  # the extension: its version is the compiler's
        from tawa.tools.tensor_descriptor import TensorDescriptor
        packages["tawa"], descriptors["tawa"] = tawa, TensorDescriptor
        env["tawa_version"] = _tawa.__version__
        env["tawa_flags"] = " ".join(os.environ.get("TAWA_FLAGS", "").split())
    cases_path = opts.cases_file or cases_file_for(opts.example)
    spec = load_spec(cases_path)
    cases = select_cases(spec, opts.case, opts.tag or (["large"] if not opts.case else []))
    if not cases:
        raise SystemExit(f"no case selected in {cases_path}")
    folder = tempfile.mkdtemp(prefix="tawa-same-source-")
    kernels = {}
    for side, use_tawa in (("triton", False), ("tawa", True)):
        if side in opts.sides:
            try:
                kernels[side] = load_kernel(opts.example, spec["kernel"], use_tawa, folder)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                kernels[side] = _err(e)
    label = opts.label or os.path.basename(opts.example)[:-3]
    failed = False
    for case in cases:
        try:
            plan = plan_case(spec, case)
            row = bench_case(torch, spec, plan, kernels, packages, descriptors, opts)
        except Exception as e:  # noqa: BLE001 - e.g. no reference for this example
            traceback.print_exc()
            row = {"case": case["name"], "error": _err(e)}
        row = dict(label=label, example=opts.example, kernel=spec["kernel"], iters=opts.iters,
                   cooldown_ms=opts.cooldown_ms, call_order=opts.call_order, **row, **env)
        failed |= bool(row.get("error")) or any(
            "error" in row.get(s, {}) for s in opts.sides if isinstance(row.get(s), dict))
        print(summary_line(row) if "error" not in row else f"{label}/{row['case']}: FAILED ({row['error']})",
              flush=True)
        if opts.json:
            with open(opts.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 1 if failed else 0


# ----------------------------------------------------------------------------
# The report (no torch needed)


def fmt(v, digits=0):
    return "-" if v is None else f"{v:.{digits}f}"


def cell(row, side):
    d = row.get(side)
    if not isinstance(d, dict):
        return "-"
    if d.get("tflops") is not None:
        return fmt(d["tflops"])
    if d.get("ms") is not None:
        return f"{d['ms']:.3f} ms"
    return "fails" if "error" in d else "-"


#: Issue 10: these examples against the plain grid (`matmul`) at the same shape.
PLAIN, AGAINST_PLAIN = "matmul", ("persistent_matmul", "matmul_descriptor", "matmul_tma_host")


def report(rows):
    """Markdown: one table row per case, then failures, then the issue-10
    comparison with the plain grid."""
    head = rows[0] if rows else {}
    lines = [
        f"Device: {head.get('device', '?')}; torch {head.get('torch_version', '?')}, "
        f"Triton {head.get('triton_version', '?')}, tawa {head.get('tawa_version', '?')}; median of {head.get('iters', '?')} interleaved rounds per case, "
        "tawa, Triton and cuBLAS in one process on the same inputs"
        + (f", the GPU idle {head['cooldown_ms']:g} ms before each call" if head.get("cooldown_ms") else ", back to back")
        + "; TFLOP/s, ratios of speed (above 1: the first is faster).",
        "",
        "| example | case | sizes | tawa | Triton | cuBLAS | tawa/Triton | tawa/cuBLAS | Triton/cuBLAS |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    failures = []
    for r in rows:
        sizes = " ".join(f"{k}={v}" for k, v in (r.get("sizes") or {}).items())
        if r.get("dtypes") and r["dtypes"] != ["fp16"]:
            sizes += " " + "/".join(r["dtypes"])
        lines.append(f"| {r['label']} | {r['case']} | {sizes} | {cell(r, 'tawa')} | {cell(r, 'triton')} | "
                     f"{cell(r, 'cublas')} | {fmt(r.get('tawa_vs_triton'), 2)} | {fmt(r.get('tawa_vs_cublas'), 2)} | "
                     f"{fmt(r.get('triton_vs_cublas'), 2)} |")
        if r.get("error"):
            failures.append(f"- {r['label']}/{r['case']}: {r['error']}")
        for s in SIDES:
            if isinstance(r.get(s), dict) and r[s].get("error"):
                failures.append(f"- {r['label']}/{r['case']} {s}: {r[s]['error']}")
    if failures:
        lines += ["", "Failures:", ""] + failures
    held = [r for r in rows if any(isinstance(r.get(s), dict) and "sustained" in r[s] for s in SIDES)]
    if held:
        def sus(r, side, key, digits):
            x = r.get(side, {}).get("sustained", {}) if isinstance(r.get(side), dict) else {}
            return fmt(x.get(key), digits)

        def ratio(r, a, b):
            x, y = (r.get(s, {}).get("sustained", {}).get("ms") if isinstance(r.get(s), dict) else None
                    for s in (a, b))
            return fmt(speed_ratio(x, y), 2)
        lines += ["", "Sustained (`--sustained`): each side called back to back, nothing between, in turns "
                  "of the three; TFLOP/s, speed ratio, joules a call and mean watts (NVML's energy "
                  "counter), medians of three turns:", "",
                  "| example | case | tawa | Triton | cuBLAS | tawa/Triton | J tawa / Triton / cuBLAS | W tawa / Triton / cuBLAS |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in held:
            lines.append(f"| {r['label']} | {r['case']} | {sus(r, 'tawa', 'tflops', 0)} | "
                         f"{sus(r, 'triton', 'tflops', 0)} | {sus(r, 'cublas', 'tflops', 0)} | "
                         f"{ratio(r, 'tawa', 'triton')} | "
                         f"{' / '.join(sus(r, s, 'j', 3) for s in SIDES)} | "
                         f"{' / '.join(sus(r, s, 'w', 0) for s in SIDES)} |")
    plain = {r["case"]: r for r in rows if r.get("label") == PLAIN}
    versus = []
    for r in rows:
        p = plain.get(r["case"])
        if r.get("label") in AGAINST_PLAIN and p and r.get("sizes") == p.get("sizes"):
            def rel(side, r=r, p=p):
                a, b = r.get(f"{side}_vs_cublas"), p.get(f"{side}_vs_cublas")
                return a / b if a and b else None
            versus.append(f"| {r['label']} | {r['case']} | {fmt(r.get('tawa_vs_cublas'), 2)} | "
                          f"{fmt(p.get('tawa_vs_cublas'), 2)} | {fmt(rel('tawa'), 2)} | {fmt(rel('triton'), 2)} |")
    if versus:
        lines += ["", "Against the plain grid at the same shape (`matmul`, same case name); they ran in other "
                  "processes, so each is divided by its own run's cuBLAS first (above 1: faster than the "
                  "plain grid):", "",
                  "| example | case | tawa/cuBLAS | plain tawa/cuBLAS | tawa vs plain | Triton vs plain |",
                  "|---|---|---|---|---|---|"] + versus
    return "\n".join(lines) + "\n"


def read_rows(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += [json.loads(line) for line in f if line.strip().startswith("{")]
    return rows


def dry_run(opts):
    """The cases' plans, as far as they go without a GPU."""
    cases_path = opts.cases_file or cases_file_for(opts.example)
    spec = load_spec(cases_path)
    cases = select_cases(spec, opts.case, opts.tag or (["large"] if not opts.case else []))
    with open(opts.example, encoding="utf-8") as f:
        text = f.read()
    _, names = kernel_source(text, True, opts.example)
    if spec["kernel"] not in names:
        raise SystemExit(f"{opts.example}: no @jit function `{spec['kernel']}` (there are: {', '.join(names)})")
    for case in cases:
        plan = plan_case(spec, case)
        prods = reference_products(spec, plan)
        args = ", ".join(f"{n}={v}" if k in ("int", "float") else n for n, k, v in plan["args"])
        print(f"{case['name']}: {spec['kernel']}[{plan['grid']}]({args}; "
              f"{', '.join(f'{k}={v!r}' for k, v in plan['constexprs'].items())}), "
              f"num_warps={plan['num_warps']}, num_stages={plan['num_stages']}; flops {plan['flops']}; "
              f"cuBLAS: {', '.join(f'{a} @ {b}' + ('.T' if t else '') for a, b, t in prods)}; "
              f"checks {', '.join(output_roles(spec, plan))}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("example", nargs="?", help="the kernel file")
    p.add_argument("--cases-file", help="the launch-case .toml (default: beside the kernel file)")
    p.add_argument("--case", action="append", default=[], help="a case to run (repeatable; default: "
                   "the cases tagged --tag)")
    p.add_argument("--tag", action="append", default=[], help="run the cases with this tag (default: large)")
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cooldown-ms", type=float, default=0.0, help="leave the GPU idle this long "
                   "before each timed call (default 0: back to back), so that no side runs at the "
                   "clocks another's power draw left")
    p.add_argument("--call-order", choices=["balanced", "rotated"], default="balanced",
                   help="the sides' order round by round: each follows each other equally often "
                        "(default), or each round rotated by one (as before; see `call_orders`)")
    p.add_argument("--sides", default="tawa,triton,cublas", help="which of tawa, triton, cublas to run")
    p.add_argument("--label", help="the example's name in the table (default: the file's stem)")
    p.add_argument("--json", help="append one JSON object per case to this file")
    p.add_argument("--report", nargs="+", metavar="JSONL", help="write the markdown table of these "
                   "JSON lines instead of running")
    p.add_argument("--out", help="with --report: write the table here too")
    p.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                   help="after timing, run each side back to back for about SECONDS (at least 10 "
                        "calls), three turns each (`sustained`): ms a call and, where NVML has the "
                        "GPU's energy counter, joules a call and watts")
    p.add_argument("--clocks", action="store_true", help="sample the SM clock (NVML) during the timed "
                   "calls and report each side's median and its cycles a call")
    p.add_argument("--kernel-times", action="store_true", help="after timing, run each side again "
                   "under torch.profiler and report its kernels' own GPU durations (CUPTI) and their "
                   "start after the sleep: what the kernel takes apart from what its launch adds")
    p.add_argument("--dry-run", action="store_true", help="print what each case would launch and "
                   "compare with, and check that the kernel's source extracts; needs no GPU or torch")
    opts = p.parse_args(argv)
    if opts.report:
        text = report(read_rows(opts.report))
        print(text, end="")
        if opts.out:
            with open(opts.out, "w") as f:
                f.write(text)
        return 0
    if not opts.example:
        p.error("the kernel file is required (or --report)")
    if opts.dry_run:
        return dry_run(opts)
    opts.sides = [s.strip() for s in opts.sides.split(",") if s.strip()]
    unknown = [s for s in opts.sides if s not in SIDES]
    if unknown:
        p.error(f"unknown side(s) {', '.join(unknown)}; the sides are {', '.join(SIDES)}")
    return run(opts)


if __name__ == "__main__":
    sys.exit(main())
