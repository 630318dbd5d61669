#!/usr/bin/env python3
"""Attention forward: cuDNN (torch SDPA), Triton on the tutorial 06 source
and tawa-rs on the same source, same shapes, same run; a markdown table.

    python3 bench/attention.py --tutorial /path/to/06-fused-attention.py \
        --tawa gpu-bin/tawa-rs [--case noncausal_d128_4k ...] \
        [--iters 20] [--reps 2] [--triton-configs quick|full] \
        [--tawa-python [--tawa-configs case|tutorial]] \
        [--variant "no ping-pong=--no-pingpong" ...] \
        [--out attention.md] [--json attention.jsonl]

The shapes are the `large` cases of `tests/upstream/06-fused-attention.toml`
(`--cases-file`): fp16, B = 4, H = 32, N_CTX = 4096 and 16384, head dim
128 and 64, causal and not. For each shape, `--reps` times over:

- in this process, interleaved call by call (CUDA events, warm-up, median
  of `--iters`): torch's `scaled_dot_product_attention` with the cuDNN
  backend forced (flash attention where cuDNN is not available; the table
  says which), and Triton running the tutorial's `_attn_fwd` as the
  tutorial launches it on this GPU (`@triton.jit` functions taken from the
  file's source, as `bench/same_source.py` does; on Hopper
  warp-specialized with device-side descriptors, or not with host
  `TensorDescriptor`s), with the best of the tutorial's configurations for
  the shape (`--triton-configs quick`: BLOCK_M 128, BLOCK_N 64/128, 3
  stages, 4/8 warps, warp specialization on and off where the tutorial
  offers it; `full`: the tutorial's whole autotuning space);
- with `--tawa-python`, the `tawa` package (`import tawa as triton`) on
  the same source in this process, timed with the others: at the case's
  configuration, or with `--tawa-configs tutorial` at its best of the
  configurations Triton was given (what autotuning over the tutorial's
  space picks for each compiler; the table says which);
- then `tawa-rs bench --json --no-baseline` on the same case (its own
  process: it checks the case against cuBLAS and a reference softmax,
  then times it with CUDA events over rotated inputs).

Each `--variant LABEL=FLAGS` adds a tawa-rs column compiled with those
flags (an ablation: `--no-pingpong`, `--no-coarse-pipeline`), timed in
the same repetitions; the ratios are the default build's. The reported
time of each is the median over the repetitions. TFLOP/s
count the tutorial's flops (two matmuls, halved when causal). Triton's
and cuDNN's outputs are checked against each other before timing.

Needs PyTorch, Triton (3.5 or 3.6, whose tutorial this is) and a CUDA GPU;
fails with a message, not a hang, when any of them, the tutorial, the
binary or a case is missing (a watchdog ends the run after `--timeout`
seconds). Exit code 1 when any measurement failed.
"""
import argparse
import faulthandler
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def die(msg):
    print(f"attention.py: {msg}", file=sys.stderr, flush=True)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tutorial", required=True, help="the unmodified 06-fused-attention.py")
    p.add_argument("--tawa", default=os.path.join(ROOT, "gpu-bin", "tawa-rs"),
                   help="the tawa-rs binary (default gpu-bin/tawa-rs)")
    p.add_argument("--cases-file", default=os.path.join(ROOT, "tests", "upstream", "06-fused-attention.toml"))
    p.add_argument("--case", action="append", help="only these large cases (repeatable)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--triton-configs", choices=["quick", "full"], default="quick")
    p.add_argument("--tawa-configs", choices=["case", "tutorial"], default="case",
                   help="with --tawa-python, which configurations tawa runs: the case's own "
                        "(default), or the best of the same tutorial configurations Triton is given "
                        "(what `import tawa as triton` autotuning over the tutorial's space picks)")
    p.add_argument("--tawa-flag", action="append", default=[],
                   help="extra flag for `tawa-rs bench` (repeatable), e.g. --tawa-flag=--mma-depth=1")
    p.add_argument("--tawa-python", action="store_true",
                   help="also run tawa-rs in this process, through the `tawa` package (`import tawa as "
                        "triton`) on the same source, timed interleaved with SDPA and Triton: the ratios "
                        "then compare that figure (the `tawa-rs bench` column stays, its own process)")
    p.add_argument("--no-tawa-bench", action="store_true",
                   help="with --tawa-python, skip the `tawa-rs bench` column (and the variants), whose "
                        "check against cuBLAS takes about 25 s a case")
    p.add_argument("--variant", action="append", default=[], metavar="LABEL=FLAGS",
                   help="also time tawa-rs with these flags (space-separated), in a column LABEL (repeatable)")
    p.add_argument("--out", help="also write the markdown table here")
    p.add_argument("--json", help="also write one JSON object per shape here")
    p.add_argument("--timeout", type=float, default=540.0,
                   help="seconds after which the whole run is stopped (default 540)")
    return p.parse_args()


def import_gpu_stack():
    try:
        import torch
    except ImportError as e:
        die(f"PyTorch is not installed ({e})")
    try:
        import triton
    except ImportError as e:
        die(f"Triton is not installed ({e})")
    if not torch.cuda.is_available():
        die("no CUDA GPU is visible to PyTorch")
    sys.path.insert(0, HERE)
    from same_source import load_kernel, time_interleaved
    return torch, triton, load_kernel, time_interleaved


def large_cases(path, only):
    try:
        with open(path, "rb") as f:
            spec = tomllib.load(f)
    except OSError as e:
        die(f"cannot read the launch cases: {e}")
    cases = [c for c in spec["case"] if "large" in c.get("tags", [])]
    if only:
        names = {c["name"] for c in cases}
        missing = [n for n in only if n not in names]
        if missing:
            die(f"no large case {', '.join(missing)} in {path} (there are: {', '.join(sorted(names))})")
        cases = [c for c in cases if c["name"] in only]
    if not cases:
        die(f"no large cases in {path}")
    shapes = []
    for c in cases:
        s, k = c["sizes"], c["constexprs"]
        shapes.append({
            "case": c["name"], "B": s["Z"], "H": s["H"], "N": s["N_CTX"], "D": k["HEAD_DIM"],
            "causal": k["STAGE"] == 3,
            # The case's launch configuration, what tawa compiles.
            "config": (k["BLOCK_M"], k["BLOCK_N"], c.get("num_stages", 3), c.get("num_warps", 4),
                       bool(k.get("warp_specialize", True))),
        })
    return spec, shapes


def flops(shape):
    f = 4.0 * shape["B"] * shape["H"] * shape["N"] ** 2 * shape["D"]
    return f / 2 if shape["causal"] else f


def triton_configs(torch, shape, which):
    """The tutorial's configurations (its `keep` and `prune_invalid_configs`
    rules and `BLOCK_N <= HEAD_DIM`), crossed with warp specialization where
    the tutorial's benchmark offers it on this GPU."""
    major = torch.cuda.get_device_capability()[0]
    hopper, blackwell = major == 9, major == 10
    if which == "full":
        space = [(bm, bn, s, w) for bm in (64, 128) for bn in (32, 64, 128)
                 for s in (2, 3, 4) for w in (4, 8)]
    else:
        space = [(128, bn, 3, w) for bn in (64, 128) for w in (4, 8)]
    keep = [c for c in space
            if not (hopper and c[0] * c[1] < 128 * 128 and c[3] == 8)
            and c[0] <= shape["N"] and c[1] <= shape["D"]
            and (c[0] >= c[1] or not shape["causal"])]
    ws_options = [False, True] if (blackwell or (hopper and not shape["causal"])) else [False]
    return [(bm, bn, s, w, ws) for (bm, bn, s, w) in keep for ws in ws_options]


class TritonAttention:
    """`_attn_fwd` launched as the tutorial's `_attention.forward` does."""

    def __init__(self, torch, triton, kernel, q, k, v, causal, sm_scale):
        from triton.tools.tensor_descriptor import TensorDescriptor
        self.torch, self.triton, self.kernel = torch, triton, kernel
        self.TensorDescriptor = TensorDescriptor
        self.q, self.k, self.v, self.causal, self.sm_scale = q, k, v, causal, sm_scale
        self.o = torch.empty_like(q)
        self.M = torch.empty(q.shape[:3], device=q.device, dtype=torch.float32)
        major = torch.cuda.get_device_capability()[0]
        self.hopper = major == 9
        self.host_descriptors = major >= 9
        triton.set_allocator(lambda size, align, _: torch.empty(size, dtype=torch.int8, device="cuda"))

    def launcher(self, config):
        bm, bn, stages, warps, ws = config
        B, H, N, D = self.q.shape
        # The tutorial: host descriptors where the GPU has TMA, except on
        # Hopper with warp specialization (device-side descriptors there).
        if self.host_descriptors and not (self.hopper and ws):
            y = B * H * N
            desc = lambda t, rows: self.TensorDescriptor(t, shape=[y, D], strides=[D, 1], block_shape=[rows, D])
            args = (desc(self.q, bm), desc(self.k, bn), desc(self.v, bn), desc(self.o, bm))
        else:
            args = (self.q, self.k, self.v, self.o)
        grid = (self.triton.cdiv(N, bm), B * H, 1)
        kernel = self.kernel

        def run():
            kernel[grid](self.sm_scale, self.M, B, H, *args, N_CTX=N, HEAD_DIM=D,
                         BLOCK_M=bm, BLOCK_N=bn, FP8_OUTPUT=False, STAGE=3 if self.causal else 1,
                         warp_specialize=ws, IS_HOPPER=self.hopper,
                         num_warps=warps, num_stages=stages)
        return run


def sdpa_launcher(torch, q, k, v, causal, sm_scale):
    """SDPA with cuDNN forced, else flash attention; (run, backend name)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    backends = [(getattr(SDPBackend, "CUDNN_ATTENTION", None), "cuDNN"),
                (SDPBackend.FLASH_ATTENTION, "flash")]
    for backend, label in backends:
        if backend is None:
            print(f"  SDPA {label}: not in torch {torch.__version__}", file=sys.stderr)
            continue

        def run(backend=backend):
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
        try:
            out = run()
            torch.cuda.synchronize()
            return run, label, out
        except RuntimeError as e:
            print(f"  SDPA {label} not available: {str(e).splitlines()[0]}", file=sys.stderr)
    raise RuntimeError("neither the cuDNN nor the flash SDPA backend runs this shape")


def rel_error(torch, a, b):
    a, b = a.float(), b.float()
    return (torch.linalg.norm(a - b) / torch.linalg.norm(b)).item()


def tawa_bench(binary, example, case, iters, flags, deadline):
    cmd = [binary, "bench", example, "--case", case, "--iters", str(iters), "--json", "--no-baseline"] + flags
    # Ends before the watchdog, so that the child is not left running.
    left = deadline - time.monotonic() - 5
    if left < 10:
        return None, "no time left for tawa-rs"
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=left)
    except subprocess.TimeoutExpired:
        return None, f"`{' '.join(cmd)}` timed out"
    rows = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not rows:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-3:]
        return None, f"tawa-rs bench exited {proc.returncode}: " + " | ".join(tail)
    return rows[0], None


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def main():
    opts = parse_args()
    faulthandler.dump_traceback_later(opts.timeout, exit=True)
    deadline = time.monotonic() + opts.timeout
    if not os.path.isfile(opts.tutorial):
        die(f"{opts.tutorial}: no such file (the upstream tutorial is not part of the repository)")
    binary = shutil.which(opts.tawa) or (opts.tawa if os.access(opts.tawa, os.X_OK) else None)
    if binary is None:
        die(f"{opts.tawa}: no tawa-rs binary (bench/build-gpu-bin.sh builds gpu-bin/tawa-rs)")
    variants = []
    for v in opts.variant:
        label, sep, flags = v.partition("=")
        if not sep or not label.strip():
            die(f"--variant {v!r}: expected LABEL=FLAGS, e.g. 'no ping-pong=--no-pingpong'")
        variants.append((label.strip(), flags.split()))
    spec, shapes = large_cases(opts.cases_file, opts.case)
    torch, triton, load_kernel, time_interleaved = import_gpu_stack()

    # tawa-rs reads the launch cases beside the kernel file.
    work = tempfile.mkdtemp(prefix="tawa-attention-")
    example = os.path.join(work, "06-fused-attention.py")
    shutil.copyfile(opts.tutorial, example)
    shutil.copyfile(opts.cases_file, os.path.join(work, "06-fused-attention.toml"))
    kernel = load_kernel(opts.tutorial, spec["kernel"])
    tawa_kernel = None
    if opts.tawa_python:
        try:
            import tawa  # noqa: F401 (the package the wheel installs)
        except ImportError as e:
            die(f"--tawa-python: the tawa package is not importable ({e}); bench/tawa-wheel.sh installs it")
        tawa_kernel = load_kernel(opts.tutorial, spec["kernel"], use_tawa=True)

    device = torch.cuda.get_device_name()
    print(f"device {device}; torch {torch.__version__}, triton {triton.__version__}; "
          f"median of {opts.iters} runs x {opts.reps} repetitions", file=sys.stderr, flush=True)
    rows, failed = [], False
    torch.manual_seed(1)
    for shape in shapes:
        B, H, N, D, causal = shape["B"], shape["H"], shape["N"], shape["D"], shape["causal"]
        print(f"{shape['case']}: B={B} H={H} N={N} D={D} causal={causal}", file=sys.stderr, flush=True)
        row = dict(shape, device=device, torch=torch.__version__, triton=triton.__version__)
        q, k, v = (torch.randn((B, H, N, D), device="cuda", dtype=torch.float16) for _ in range(3))
        sm_scale = 1.0 / math.sqrt(D)
        try:
            sdpa, row["sdpa_backend"], ref = sdpa_launcher(torch, q, k, v, causal, sm_scale)
        except RuntimeError as e:
            sdpa, row["sdpa_backend"], ref = None, None, None
            row["sdpa_error"] = str(e)
            failed = True
        # Triton: the best of the tutorial's configurations that is correct.
        tri = TritonAttention(torch, triton, kernel, q, k, v, causal, sm_scale)
        best = None
        for config in triton_configs(torch, shape, opts.triton_configs):
            run = tri.launcher(config)
            try:
                run()
                torch.cuda.synchronize()
            except Exception as e:  # a config the compiler refuses (shared memory, ...)
                print(f"  triton {config}: {type(e).__name__}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
                continue
            if ref is not None:
                err = rel_error(torch, tri.o, ref)
                if not err < 1e-2:
                    print(f"  triton {config}: wrong (rel. error {err:.2e})", file=sys.stderr)
                    continue
            (ms,) = time_interleaved([run], max(3, opts.iters // 4), 2)
            if best is None or ms < best[0]:
                best = (ms, config, run)
        if best is None:
            row["triton_error"] = "no configuration of the tutorial ran correctly"
            failed = True
        else:
            bm, bn, s, w, ws = best[1]
            row["triton_config"] = f"{bm}x{bn}, {w} warps, {s} stages, ws={'on' if ws else 'off'}"
        # tawa in this process: the case's configuration, or the best of
        # the tutorial's that Triton was given; each checked first.
        tawa_run = None
        if tawa_kernel is not None:
            tw = TritonAttention(torch, triton, tawa_kernel, q, k, v, causal, sm_scale)
            if opts.tawa_configs == "case":
                candidates = [shape["config"]]
            else:
                # tawa always warp-specializes: Triton's `ws` switch is moot.
                candidates = list(dict.fromkeys(
                    (bm, bn, s, w, True) for (bm, bn, s, w, _) in
                    triton_configs(torch, shape, opts.triton_configs)))
            tawa_best, last_error = None, None
            for config in candidates:
                try:
                    run = tw.launcher(config)
                    run()
                    torch.cuda.synchronize()
                    if ref is not None:
                        err = rel_error(torch, tw.o, ref)
                        if not err < 1e-2:
                            raise RuntimeError(f"wrong (rel. error {err:.2e})")
                except Exception as e:
                    last_error = f"{config}: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
                    print(f"  tawa (in process) {last_error}", file=sys.stderr)
                    continue
                ms = time_interleaved([run], max(3, opts.iters // 4), 2)[0] if len(candidates) > 1 else 0.0
                if tawa_best is None or ms < tawa_best[0]:
                    tawa_best = (ms, config, run)
            if tawa_best is None:
                row["tawa_py_error"] = last_error
                failed = True
            else:
                _, (bm, bn, s, w, _), tawa_run = tawa_best
                row["tawa_py_config"] = f"{bm}x{bn}, {w} warps, {s} stages"
        sdpa_ms, triton_ms, tawa_ms, tawa_py_ms = [], [], [], []
        variant_ms = {label: [] for label, _ in variants}
        for _ in range(opts.reps):
            fns = [f for f in (sdpa, best and best[2], tawa_run) if f is not None]
            if fns:
                medians = time_interleaved(fns, opts.iters, opts.warmup)
                if sdpa is not None:
                    sdpa_ms.append(medians.pop(0))
                if best is not None:
                    triton_ms.append(medians.pop(0))
                if tawa_run is not None:
                    tawa_py_ms.append(medians.pop(0))
            if opts.no_tawa_bench and tawa_run is not None:
                continue
            result, err = tawa_bench(binary, example, shape["case"], opts.iters, opts.tawa_flag, deadline)
            if err:
                row["tawa_error"] = err
                failed = True
                print(f"  {err}", file=sys.stderr)
                break
            tawa_ms.append(result["kernel_ms"]["median"])
            row["tawa_checked_against"] = result.get("checked_against")
            for label, flags in variants:
                result, err = tawa_bench(binary, example, shape["case"], opts.iters,
                                         opts.tawa_flag + flags, deadline)
                if err:
                    row.setdefault("variant_errors", {})[label] = err
                    failed = True
                    print(f"  {label}: {err}", file=sys.stderr)
                else:
                    variant_ms[label].append(result["kernel_ms"]["median"])
        f = flops(shape)
        for name, samples in (("sdpa", sdpa_ms), ("triton", triton_ms), ("tawa", tawa_ms),
                              ("tawa_py", tawa_py_ms)):
            ms = statistics.median(samples) if samples else None
            row[f"{name}_ms"] = ms
            row[f"{name}_tflops"] = f / ms * 1e-9 if ms else None
        row["variants"] = {}
        for label, samples in variant_ms.items():
            ms = statistics.median(samples) if samples else None
            row["variants"][label] = {"ms": ms, "tflops": f / ms * 1e-9 if ms else None}
        ratio = lambda a, b: row[f"{b}_ms"] / row[f"{a}_ms"] if row[f"{a}_ms"] and row[f"{b}_ms"] else None
        # The ratios compare runs timed alike: tawa in this process when it
        # ran here, else `tawa-rs bench`'s figure.
        own = "tawa_py" if row["tawa_py_ms"] else "tawa"
        row["ratio_from"] = own
        row["tawa_vs_triton"] = ratio(own, "triton")
        row["tawa_vs_sdpa"] = ratio(own, "sdpa")
        rows.append(row)
        # Free this shape's tensors (the launchers hold them) before the next.
        q = k = v = tri = tw = tawa_run = ref = sdpa = best = None
        torch.cuda.empty_cache()

    lines = [
        f"Attention forward, fp16, on {device} (torch {torch.__version__}, Triton {triton.__version__}); "
        f"TFLOP/s from the median of {opts.iters} runs x {opts.reps} repetitions; ratio = other's time / tawa-rs's time.",
        "",
        "With `--tawa-python`, \"tawa (this process)\" is the `tawa` package running the same source "
        "here, timed interleaved with SDPA and Triton, and the ratios are its; \"tawa-rs bench\" is "
        "the binary's own process and timing (inputs rotated over twice the L2).",
        "",
        "| case | B×H×N, d | causal | SDPA TFLOP/s | Triton 06 TFLOP/s (config) | tawa (this process) TFLOP/s "
        "| tawa-rs bench TFLOP/s | tawa / Triton | tawa / SDPA |"
        + "".join(f" tawa-rs {label} TFLOP/s |" for label, _ in variants),
        "|---|---|---|---|---|---|---|---|---|" + "---|" * len(variants),
    ]
    for r in rows:
        sdpa = f"{fmt(r['sdpa_tflops'])} ({r['sdpa_backend']})" if r.get("sdpa_backend") else "failed"
        trit = f"{fmt(r['triton_tflops'])} ({r['triton_config']})" if r.get("triton_config") else "failed"
        tawa = (fmt(r["tawa_tflops"]) if r["tawa_ms"]
                else "failed" if "tawa_error" in r else "—")
        tawa_py = (f"{fmt(r['tawa_py_tflops'])} ({r['tawa_py_config']})" if r["tawa_py_ms"]
                   else "failed" if "tawa_py_error" in r else "—")
        lines.append(
            f"| {r['case']} | {r['B']}×{r['H']}×{r['N']}, {r['D']} | {'yes' if r['causal'] else 'no'} "
            f"| {sdpa} | {trit} | {tawa_py} | {tawa} | {fmt(r['tawa_vs_triton'], 3)}x "
            f"| {fmt(r['tawa_vs_sdpa'], 3)}x |"
            + "".join(f" {fmt(r['variants'][label]['tflops'])} |" for label, _ in variants))
    errors = [f"- {r['case']}: {r[k]}" for r in rows
              for k in ("sdpa_error", "triton_error", "tawa_error", "tawa_py_error") if k in r]
    errors += [f"- {r['case']} ({label}): {e}" for r in rows for label, e in r.get("variant_errors", {}).items()]
    if errors:
        lines += ["", "Failures:", *errors]
    lines += ["", "Command: `" + " ".join([os.path.basename(sys.executable)] + sys.argv) + "`"]
    table = "\n".join(lines) + "\n"
    print(table)
    if opts.out:
        with open(opts.out, "w") as f:
            f.write(table)
    if opts.json:
        with open(opts.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    faulthandler.cancel_dump_traceback_later()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
