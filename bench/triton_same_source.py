#!/usr/bin/env python3
"""Times Triton compiling the *same kernel source* tawa-rs compiles, on an
example's launch cases, against cuBLAS (torch.matmul) in the same process.

    python3 bench/triton_same_source.py triton-examples/kernels/matmul.py \
        --case square_8192 --case square_4096 [--iters 50] [--json]

For each case of the example's `.toml` (the same file `tawa-rs bench`
reads): builds the arguments from the case (random fp16/bf16 tensors with
the case's shapes and strides, scalars, strides, constexprs), launches the
kernel with Triton (`num_warps`, `num_stages` and grid from the case),
checks the output against torch (the case's `reference`: `matmul` or
`matmul_leaky_relu`), then times the kernel and cuBLAS interleaved with
CUDA events: warm-up, median of `--iters`. Prints one line per case (or
JSON), with the ratio cuBLAS time / Triton time, so that it can be set
beside `tawa-rs bench`'s ratio of the same run (same device command).

Needs PyTorch and Triton (the GPU machine has both); not part of the tests.
"""
import argparse
import ast
import importlib.util
import os
import tempfile
import json
import math
import statistics
import sys
import tomllib

import torch
import triton

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def cdiv(a, b):
    return -(-a // b)


def evaluate(expr, env):
    """A size expression of the launch-case schema (`M`, `cdiv(M, 128) * 2`)."""
    if isinstance(expr, int):
        return expr
    return int(eval(str(expr), {"__builtins__": {}}, dict(env, cdiv=cdiv, min=min, max=max)))


def load_kernel(path, name):
    """The `@triton.jit` functions of `path`, defined from their source
    with `triton.jit` alone (the file's other decorators, such as
    `@triton.autotune`, and its module-level code, such as a tutorial's
    tests and benchmarks, are left out: the case gives the config)."""
    tree = ast.parse(open(path).read(), path)
    jitted = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        decos = [d for d in node.decorator_list if ast.unparse(d).split("(")[0].endswith("jit")]
        if decos:
            node.decorator_list = [ast.parse("triton.jit").body[0].value]
            jitted.append(node)
    module = ast.Module(body=jitted, type_ignores=[])
    namespace = {"triton": triton, "tl": triton.language}
    # Triton's JIT reads each function's source from its file: write the
    # extracted functions to a file of their own.
    out = os.path.join(tempfile.mkdtemp(), os.path.basename(path))
    with open(out, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n" + ast.unparse(module) + "\n")
    spec = importlib.util.spec_from_file_location("tawa_same_source", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def build_args(spec, case):
    env = dict(case.get("sizes", {}))
    env.update({k: v for k, v in case.get("constexprs", {}).items() if isinstance(v, int)})
    tensors, args = {}, []
    for a in case["args"]:
        kind = a["kind"]
        if kind == "tensor":
            shape = [evaluate(d, env) for d in a["shape"]]
            dtype = DTYPES[a["dtype"]]
            strides = a.get("strides")
            if strides:
                strides = [evaluate(s, env) for s in strides]
                size = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
                base = torch.empty(size, device="cuda", dtype=dtype)
                t = torch.as_strided(base, shape, strides)
            else:
                t = torch.empty(shape, device="cuda", dtype=dtype)
            if a.get("output"):
                t.fill_(float("nan"))
            else:
                t.copy_(torch.randn(shape, device="cuda", dtype=torch.float32).to(dtype))
            tensors[a["name"]] = t
            args.append(t)
        elif kind == "scalar":
            args.append(evaluate(a["value"], env))
        elif kind == "stride":
            args.append(tensors[a["of"]].stride(a["dim"]))
        else:
            raise SystemExit(f"argument kind `{kind}` is not supported by this script")
    return env, tensors, args


def reference(spec, tensors):
    roles = spec.get("roles", {})
    a, b = tensors[roles["a"]], tensors[roles["b"]]
    out = torch.matmul(a.float(), b.float())
    if spec.get("reference") == "matmul_leaky_relu":
        out = torch.where(out >= 0, out, 0.01 * out)
    return out, roles["c"]


def time_interleaved(fns, iters, warmup):
    for _ in range(warmup):
        for f in fns:
            f()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for _ in range(iters):
        for i, f in enumerate(fns):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            f()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("example")
    p.add_argument("--case", action="append", required=True)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.add_argument("--cases-file", help="the launch-case .toml (default: beside the kernel file)")
    opts = p.parse_args()
    toml_path = opts.cases_file or opts.example[: -len(".py")] + ".toml"
    with open(toml_path, "rb") as f:
        spec = tomllib.load(f)
    kernel = load_kernel(opts.example, spec["kernel"])
    torch.manual_seed(1)
    failed = False
    for name in opts.case:
        case = next((c for c in spec["case"] if c["name"] == name), None)
        if case is None:
            raise SystemExit(f"no case `{name}` in {toml_path}")
        env, tensors, args = build_args(spec, case)
        grid = tuple(evaluate(g, env) for g in case["grid"])
        constexprs = case.get("constexprs", {})
        launch = lambda: kernel[grid](
            *args, num_warps=case.get("num_warps", 4), num_stages=case.get("num_stages", 3),
            **constexprs)
        launch()
        torch.cuda.synchronize()
        ref, out_name = reference(spec, tensors)
        out = tensors[out_name].float()
        err = (torch.linalg.norm(out - ref) / torch.linalg.norm(ref)).item()
        ok = math.isfinite(err) and err < 1e-2
        failed |= not ok
        roles = spec["roles"]
        a, b = tensors[roles["a"]], tensors[roles["b"]]
        cublas = lambda: torch.matmul(a, b)
        t_triton, t_cublas = time_interleaved([launch, cublas], opts.iters, opts.warmup)
        flops = evaluate(case["bench"]["flops"], env) if "bench" in case else 0
        row = {
            "example": spec["kernel"], "case": name, "triton_version": triton.__version__,
            "device": torch.cuda.get_device_name(), "rel_error": err, "correct": ok,
            "triton_ms": t_triton, "cublas_ms": t_cublas,
            "triton_tflops": flops / t_triton * 1e-9, "cublas_tflops": flops / t_cublas * 1e-9,
            "ratio_vs_cublas": t_cublas / t_triton,
        }
        if opts.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"triton {triton.__version__} {spec['kernel']}/{name}: {t_triton:.4f} ms "
                  f"({row['triton_tflops']:.0f} TFLOP/s), cuBLAS {t_cublas:.4f} ms "
                  f"({row['cublas_tflops']:.0f} TFLOP/s), ratio {row['ratio_vs_cublas']:.3f}x, "
                  f"rel. error {err:.2e}{'' if ok else ' WRONG'}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
