#!/usr/bin/env python3
"""tawa against Triton and PyTorch on the Triton tutorials' own benchmarks,
in one process and one run, and the Python-side cost of a cached launch.

    python3 bench/python_tutorials.py --upstream DIR [--out FILE.md] [--points N]
        [--only 01,02] [--launches N]

Each tutorial of DIR is loaded twice as a module, with Triton's imports
and with `tawa`'s (`python/tutorials.py` rewrites them), keeping only its
definitions: the statements that launch kernels at the top level (the
tutorial's own checks and `benchmark.run(...)`) are left out, so that this
script calls the tutorial's `perf_report` functions itself, on `--points`
evenly spaced x values of each benchmark table (the tutorial's shapes,
arguments and metric). Providers whose name contains "triton" run twice,
as Triton and as tawa (through `tawa.testing.do_bench`); the others
(torch, cuBLAS) are the baseline. Tutorial 05 is benchmarked forward,
tutorial 06 forward in fp16, each output first checked against PyTorch's
SDPA (cuDNN / flash), which is also the baseline (with the one autotuning config the tutorial uses under pytest,
unless `--attention-configs all`), tutorial 09 on its default shape (8192 x 8192 x 512) through its
host functions, each result compared with torch.matmul.

Launch overhead: tutorial 01's `add_kernel` on 1024 elements, launched
`--launches` times after warm-up; host microseconds per launch (the
Python call until it returns; the GPU is idle, so the host is the limit),
tawa and Triton alike. A cell that failed reads "error: ...".
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import math
import os
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TUTORIALS = ["01-vector-add", "02-fused-softmax", "03-matrix-multiplication", "05-layer-norm",
             "06-fused-attention", "08-grouped-gemm", "09-persistent-matmul"]


def _load_runner():
    spec = importlib.util.spec_from_file_location("tawa_tutorials_runner", os.path.join(ROOT, "python", "tutorials.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _decorated_as_kernel(node) -> bool:
    for d in node.decorator_list:
        for n in ast.walk(d):
            if isinstance(n, ast.Attribute) and n.attr in ("jit", "autotune", "heuristics"):
                return True
    return False


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls(node):
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Name):
                out.add(f.id)
    return out


def _targets(node):
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
    return out


def definitions_only(text: str) -> str:
    """`text` with the top-level statements that launch kernels (or use
    what those computed) blanked out, line numbers kept."""
    tree = ast.parse(text)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    users = {n.name for n in defs if _decorated_as_kernel(n)}
    changed = True
    while changed:  # functions and classes that reach a kernel
        changed = False
        for n in defs:
            if n.name not in users and _names(n) & users:
                users.add(n.name)
                changed = True
    poisoned = set()
    drop = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.Expr, ast.Assert)):
            drop.append(node)
            continue
        if isinstance(node, ast.If) and "__name__" in _names(node.test):
            drop.append(node)
            continue
        if _calls(node) & users or _names(node) & poisoned:
            drop.append(node)
            poisoned |= _targets(node)
            continue
        if _names(node) & users:  # an alias: `attention = _attention.apply`
            users |= _targets(node)
    lines = text.splitlines(keepends=True)
    for node in drop:
        for i in range(node.lineno - 1, node.end_lineno):
            lines[i] = "\n"
    return "".join(lines)


def load_tutorial(path: str, use_tawa: bool, folder: str):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if use_tawa:
        text, _ = RUNNER.rewrite(text)
    text = definitions_only(text)
    stem = os.path.basename(path)[:-3]
    return import_source(text, ("tawa_" if use_tawa else "triton_") + stem.replace("-", "_"), folder)


def import_source(text: str, name: str, folder: str):
    """`text` imported as module `name`. It is written to `folder` first:
    Triton's and tawa's JITs read a kernel's source from its file."""
    file = os.path.join(folder, name + ".py")
    with open(file, "w", encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def subsample(xs, n):
    xs = list(xs)
    if n <= 0 or len(xs) <= n:
        return xs
    if n == 1:
        return [xs[-1]]
    return [xs[round(i * (len(xs) - 1) / (n - 1))] for i in range(n)]


def _metric(ret):
    return ret[0] if isinstance(ret, (tuple, list)) else ret


def _err(e):
    first = (str(e).strip().splitlines() or [""])[0]
    return f"error: {type(e).__name__}: {first[:100]}"


def measure(fn):
    """The metric `fn` returns, or the error text; the CUDA context is
    checked after each call, so that a failed launch is charged to it."""
    import torch
    try:
        v = _metric(fn())
        torch.cuda.synchronize()
        return float(v)
    except Exception as e:  # noqa: BLE001 - every failure is a table cell
        traceback.print_exc()
        return _err(e)


def marks(mod):
    return {k: v for k, v in vars(mod).items()
            if type(v).__name__ == "Mark" and hasattr(v, "benchmarks") and hasattr(v, "fn")}


def bench_marks(stem, tawa_mod, triton_mod, points, rows):
    tm, rm = marks(tawa_mod), marks(triton_mod)
    for name, mark in tm.items():
        benches = mark.benchmarks if isinstance(mark.benchmarks, list) else [mark.benchmarks]
        ref_benches = rm[name].benchmarks if isinstance(rm[name].benchmarks, list) else [rm[name].benchmarks]
        for bench, ref_bench in zip(benches, ref_benches):
            args = dict(bench.args)
            if stem.startswith("05"):
                args["mode"] = "forward"
            if stem.startswith("06") and (args.get("mode") != "fwd"):
                continue
            for x in subsample(bench.x_vals, points):
                xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
                x_args = dict(zip(bench.x_names, xs))
                label = ", ".join(f"{k}={v}" for k, v in x_args.items())
                for provider, pname in zip(bench.line_vals, bench.line_names):
                    if stem.startswith("06") and provider != "triton-fp16":
                        continue
                    call = lambda m: m.fn(**x_args, **{bench.line_arg: provider}, **args)  # noqa: E731
                    if stem.startswith("06"):
                        # The tutorial checks the fp16 forward only in its
                        # backward tests: check it here, against SDPA.
                        checked = lambda m, mod: (check_attention(mod, x_args, args), call(m))[1]  # noqa: E731
                        t = measure(lambda: checked(rm[name], triton_mod))
                        w = measure(lambda: checked(mark, tawa_mod))
                        rows.append((stem, bench.plot_name, label, pname, bench.ylabel, t, w))
                    elif "triton" in str(provider).lower():
                        t = measure(lambda: call(rm[name]))
                        w = measure(lambda: call(mark))
                        rows.append((stem, bench.plot_name, label, pname, bench.ylabel, t, w))
                    else:
                        b = measure(lambda: call(mark))
                        rows.append((stem, bench.plot_name, label, pname + " (baseline)", bench.ylabel, b, None))
                if stem.startswith("06"):
                    rows.append((stem, bench.plot_name, label, "torch SDPA (baseline)", "TFLOPS",
                                 measure(lambda: sdpa_tflops(tawa_mod, x_args, args)), None))


def check_attention(mod, x_args, args):
    """The tutorial's forward against PyTorch's SDPA on this shape."""
    import torch
    B, H, N, D = args["BATCH"], args["H"], x_args["N_CTX"], args["HEAD_DIM"]
    q, k, v = (torch.randn((B, H, N, D), dtype=torch.float16, device="cuda") for _ in range(3))
    o = mod.attention(q, k, v, args["causal"], 1.3, args["warp_specialize"])
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=args["causal"], scale=1.3)
    err = (o.float() - ref.float()).abs().max().item()
    if not err <= 1e-2:
        raise AssertionError(f"differs from SDPA by up to {err:.3g} (atol 1e-2)")


def sdpa_tflops(mod, x_args, args):
    import torch
    B, H, N, D = args["BATCH"], args["H"], x_args["N_CTX"], args["HEAD_DIM"]
    q, k, v = (torch.randn((B, H, N, D), dtype=torch.float16, device="cuda") for _ in range(3))
    causal = args["causal"]
    fn = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=1.3)  # noqa: E731
    ms = mod.triton.testing.do_bench(fn)
    flops = 4.0 * B * H * N * N * D * (0.5 if causal else 1.0)
    return flops * 1e-12 / (ms * 1e-3)


def bench_09(tawa_mod, triton_mod, rows):
    import torch
    M = N = 8192
    K = 512
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16).T.contiguous()
    expect = torch.matmul(a, b.T)
    flops = 2.0 * M * N * K
    label = f"M={M}, N={N}, K={K}"

    def tflops(mod, f, *args):
        out = f(*args)
        ok = torch.allclose(out.to(expect.dtype), expect, atol=1.0)
        if not ok:
            raise AssertionError("result differs from torch.matmul (atol 1.0)")
        ms = mod.triton.testing.do_bench(lambda: f(*args))
        return flops * 1e-12 / (ms * 1e-3)

    rows.append(("09-persistent-matmul", "matmul", label, "torch (baseline)", "TFLOPS",
                 measure(lambda: tflops(tawa_mod, lambda x, y: torch.matmul(x, y.T), a, b)), None))
    cases = [
        ("naive", lambda m: (m.matmul, a, b.T)),
        ("persistent", lambda m: (m.matmul_persistent, a, b.T)),
        ("tma", lambda m: (lambda x, y: m.matmul_tma(x, y, False), a, b)),
        ("tma_persistent", lambda m: (lambda x, y: m.matmul_tma_persistent(x, y, False), a, b)),
        ("descriptor_persistent", lambda m: (lambda x, y: m.matmul_descriptor_persistent(x, y, False), a, b)),
        ("descriptor_persistent_ws", lambda m: (lambda x, y: m.matmul_descriptor_persistent(x, y, True), a, b)),
    ]
    for pname, get in cases:
        t = measure(lambda: tflops(triton_mod, *get(triton_mod)))
        w = measure(lambda: tflops(tawa_mod, *get(tawa_mod)))
        rows.append(("09-persistent-matmul", "matmul", label, pname, "TFLOPS", t, w))


def launch_overhead(tawa_mod, triton_mod, n):
    """Host microseconds per cached launch of 01's add_kernel, per module."""
    import torch
    out = {}
    for label, mod in (("Triton", triton_mod), ("tawa", tawa_mod)):
        try:
            x = torch.rand(1024, device="cuda")
            y = torch.rand(1024, device="cuda")
            o = torch.empty_like(x)
            k = mod.add_kernel
            for _ in range(100):
                k[(1, )](x, y, o, 1024, BLOCK_SIZE=1024)
            torch.cuda.synchronize()
            if not torch.allclose(o, x + y):
                raise AssertionError("add_kernel computed a wrong sum")
            best = math.inf
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(n):
                    k[(1, )](x, y, o, 1024, BLOCK_SIZE=1024)
                t1 = time.perf_counter()
                torch.cuda.synchronize()
                best = min(best, (t1 - t0) / n * 1e6)
            grid = lambda meta: (mod.triton.cdiv(1024, meta["BLOCK_SIZE"]), )  # noqa: E731
            t0 = time.perf_counter()
            for _ in range(n):
                k[grid](x, y, o, 1024, BLOCK_SIZE=1024)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            out[label] = (best, (t1 - t0) / n * 1e6)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            out[label] = (_err(e), _err(e))
    return out


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        # Three significant digits at least: 08's runtimes are 0.01 ms.
        return f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def is_time(unit):
    """Whether lower is better: a runtime, not a throughput."""
    u = unit.lower()
    return "time" in u or u in ("ms", "s", "us") or u.endswith("(ms)")


def ratio(t, w, unit):
    """tawa's speed over Triton's: above 1 means tawa is faster, for a
    throughput (w / t) and a runtime (t / w) alike."""
    if isinstance(t, float) and isinstance(w, float) and t > 0 and w > 0:
        return f"{t / w if is_time(unit) else w / t:.2f}x"
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="folder of the Triton tutorials")
    ap.add_argument("--out", help="write the markdown table here too")
    ap.add_argument("--points", type=int, default=4, help="x values per benchmark table (0: all)")
    ap.add_argument("--only", default="", help="comma-separated tutorial prefixes, e.g. 01,02")
    ap.add_argument("--launches", type=int, default=10000, help="launches per overhead measurement")
    ap.add_argument("--attention-configs", choices=["one", "all"], default="one",
                    help="tutorial 06: its one testing config (what it uses under pytest) or all 36 "
                         "(Triton compiles them one after another: minutes per shape)")
    a = ap.parse_args()

    import torch  # noqa: F401 - fail early without them
    import triton  # noqa: F401
    import tawa  # noqa: F401

    only = [s for s in a.only.split(",") if s]
    folder = tempfile.mkdtemp(prefix="tawa-bench-")
    sys.path.insert(0, folder)
    rows = []
    overhead = None
    started = time.time()
    for stem in TUTORIALS:
        if only and not any(stem.startswith(o) for o in only):
            continue
        path = os.path.join(a.upstream, stem + ".py")
        print(f"== {stem}", file=sys.stderr, flush=True)
        one_config = stem.startswith("06") and a.attention_configs == "one"
        if one_config:
            os.environ["PYTEST_VERSION"] = "tawa-bench"  # the tutorial's switch to its one config
        try:
            triton_mod = load_tutorial(path, False, folder)
            tawa_mod = load_tutorial(path, True, folder)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            rows.append((stem, "", "", "loading", "", _err(e), None))
            continue
        finally:
            if one_config:
                del os.environ["PYTEST_VERSION"]
        if stem.startswith("01"):
            overhead = launch_overhead(tawa_mod, triton_mod, a.launches)
        if stem.startswith("09"):
            bench_09(tawa_mod, triton_mod, rows)
        else:
            bench_marks(stem, tawa_mod, triton_mod, a.points, rows)
        write_table(a, rows, overhead, started)
    write_table(a, rows, overhead, started)


def write_table(a, rows, overhead, started):
    """The table so far (rewritten after each tutorial, so that a run
    stopped by a timeout still leaves the finished ones)."""
    import torch
    import triton
    import tawa
    props = torch.cuda.get_device_properties(0)
    lines = [
        f"Device: {props.name}; torch {torch.__version__}, Triton {triton.__version__}, "
        f"tawa {tawa._tawa.__version__ if hasattr(tawa, '_tawa') else '?'}; "
        f"{a.points or 'all'} points per table; tutorial 06 with {a.attention_configs} autotuning config(s); "
        f"{time.time() - started:.0f} s in all.",
        "",
        "| tutorial | table | shape | provider | unit | Triton (or baseline) | tawa | tawa speed / Triton |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for stem, table, label, provider, unit, t, w in rows:
        lines.append(f"| {stem} | {table} | {label} | {provider} | {unit} | {fmt(t)} | {fmt(w)} | {ratio(t, w, unit)} |")
    if overhead:
        lines += ["", "Cached launch, host microseconds per launch of tutorial 01's `add_kernel` "
                  f"(1024 elements, {a.launches} launches, best of 5; and with a grid lambda):", "",
                  "| | tuple grid (us) | lambda grid (us) |", "|---|---|---|"]
        for label, (tup, lam) in overhead.items():
            lines.append(f"| {label} | {fmt(tup)} | {fmt(lam)} |")
    text = "\n".join(lines) + "\n"
    print(text, flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


RUNNER = _load_runner()

if __name__ == "__main__":
    main()
