#!/usr/bin/env python3
"""Ablation of tawa-rs's pipelining options on one example case.

    python3 bench/ablation.py triton-examples/kernels/matmul.py \
        --case square_8192 --out results/ [--iters 50] [--bin gpu-bin/tawa-rs]

Runs `tawa-rs bench --json` on the case once per point of the option
matrix below (each point is checked for correctness by `bench` before it
is timed, against cuBLAS interleaved in the same invocation), and writes
`ablation.csv`, `ablation.json` and `ablation.svg` (a bar chart of TFLOP/s
per option with the cuBLAS figures of the same run as a line, in the style
of the Tawa paper's ablation figure) into `--out`.

The matrix: no warp specialization (`--no-ws`) at num_stages 1 (the
plain kernel, loads through registers), 2, 3 and 4 (one partition whose
TMA copies run num_stages - 1 iterations ahead); the warp-specialized kernel at aref
depths 1 to 4 with no MMA pipelining (`--mma-depth 0`); at depths 2 to
4 with 1 WGMMA group in flight and at depth 4 with 2; the defaults; and
not persistent (`--no-persistent`; the warp-specialized points are persistent, the default);
and without coarse pipelining (`--no-coarse-pipeline`: the same as the
defaults on a kernel with one dot a loop, the baseline of attention's);
and without ping-pong between the consumer warpgroups (`--no-pingpong`;
GEMM loops take no turns, so only attention-like kernels differ);
and the epilogue's stores element-wise instead of TMA stores (`--no-tma-store`; the
other points store with TMA where the store allows it, the default);
and ping-pong consumers instead of cooperative ones (`--tile-pingpong`: two
consumer warpgroups on alternate tiles, one's epilogue beside the other's
mainloop; it applies where a tile's accumulator fits one warpgroup, 128x128
fp32 at most, and is the defaults elsewhere: `--explain` says which);
and cooperative consumers where the defaults choose ping-pong ones
(`--no-tile-pingpong`: the defaults give an 8-warp GEMM ping-pong
consumers where its K loop runs at most 4 iterations at the case's
launch; the defaults elsewhere);
and CTA pairs multicasting their shared TMA copies (`--tma-multicast`: the
defaults where it does not apply, `--explain` says which);
and each ring slot holding one K step (`--slot-merge 1`: the baseline of
the default's two steps a slot where a ring qualifies; the explicit
`--mma-depth` points keep one step a slot too, `--explain` says which);
and the smallest tile of a GEMM ring's slot copied by the producer's
threads wherever a slot allows (`--mixed-copies`: `cp.async` beside
TMA's copies of the others where its box lies inside the tensor; by
default only in the measured shape, A of the 128x256x64 GEMMs) or
nowhere (`--no-mixed-copies`, the baseline of the default's; both the
defaults where no put has two TMA tiles, `--explain` says which);
and every TMA copy at L2's normal priority (`--no-read-once`: the
baseline of the default's evict-first copies where the launch reads a
copy's elements once, the swap-AB decode's weight; the defaults
elsewhere, `--explain` says which copies are marked);
and the producer's masked copies in one loop (`--no-copy-split`: the
baseline of the default's split at the first step whose mask is not
whole; the defaults where no producer copy is masked);
and each ring slot holding half a K step (`--slot-split 2`: twice the
slots, the same shared memory, one WGMMA group in flight holding half a
step; the defaults where a ring does not qualify, `--explain` says which);
and CTA pairs that split each tile's K loop (`--cluster-split-k`: the
defaults where the grid fills more than half the GPU, as a large case's
does); and the tiles past the last whole wave shared by all programs
(`--stream-k`: the defaults where the programs walk the tiles in whole
waves); and each tile stored after the next tile's first WGMMA group
has issued (`--epilogue-overlap`: the defaults where the K loop keeps
groups in flight, as a one-warpgroup consumer's does); and the persistent launch on one program a resident block
instead of as few as walk the tiles in as many waves
(`TAWA_WAVE_BALANCE=0`: a point's `NAME=VALUE` words are its
environment, not flags); and TMA loads' tensor maps with the L2 cache's
128-byte promotion instead of the default 256
(`TAWA_DISABLE=wide-l2-promotion`); and the producer's threads copying
with `cp.async` what TMA would copy (`--no-tma-loads`: where their
registers allow, `--explain` says which).
`--points nows-s3,ws-d4-m1,ws-defaults` runs a subset, named by the
points' short ids (`--list` prints them with their labels and flags).
Needs a GPU and the tawa-rs binary; nothing else (the plot is plain SVG).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

# (id, label, tawa-rs flags). Labels are what the plot shows; ids are
# what `--points` selects by (labels contain commas, the list's separator).
POINTS = [
    ("nows-s1", "no-ws, stages 1", ["--no-ws", "--num-stages", "1"]),
    ("nows-s2", "no-ws, stages 2", ["--no-ws", "--num-stages", "2"]),
    ("nows-s3", "no-ws, stages 3", ["--no-ws", "--num-stages", "3"]),
    ("nows-s4", "no-ws, stages 4", ["--no-ws", "--num-stages", "4"]),
    ("ws-d1-m0", "ws, depth 1, mma 0", ["--aref-depth", "1", "--mma-depth", "0"]),
    ("ws-d2-m0", "ws, depth 2, mma 0", ["--aref-depth", "2", "--mma-depth", "0"]),
    ("ws-d3-m0", "ws, depth 3, mma 0", ["--aref-depth", "3", "--mma-depth", "0"]),
    ("ws-d4-m0", "ws, depth 4, mma 0", ["--aref-depth", "4", "--mma-depth", "0"]),
    ("ws-d2-m1", "ws, depth 2, mma 1", ["--aref-depth", "2", "--mma-depth", "1"]),
    ("ws-d3-m1", "ws, depth 3, mma 1", ["--aref-depth", "3", "--mma-depth", "1"]),
    ("ws-d4-m1", "ws, depth 4, mma 1", ["--aref-depth", "4", "--mma-depth", "1"]),
    ("ws-d4-m2", "ws, depth 4, mma 2", ["--aref-depth", "4", "--mma-depth", "2"]),
    ("ws-defaults", "ws, defaults", []),
    ("ws-no-persistent", "ws, not persistent", ["--no-persistent"]),
    ("ws-no-coarse", "ws, no coarse pipeline", ["--no-coarse-pipeline"]),
    ("ws-no-pingpong", "ws, no ping-pong", ["--no-pingpong"]),
    ("ws-no-tma-store", "ws, no TMA store", ["--no-tma-store"]),
    ("ws-tile-pingpong", "ws, tile ping-pong", ["--tile-pingpong"]),
    ("ws-no-tile-pingpong", "ws, cooperative consumers", ["--no-tile-pingpong"]),
    ("ws-tma-multicast", "ws, TMA multicast", ["--tma-multicast"]),
    ("ws-slot-merge-1", "ws, one K step a slot", ["--slot-merge", "1"]),
    ("ws-mixed-copies", "ws, A by the producer's threads", ["--mixed-copies"]),
    ("ws-no-mixed-copies", "ws, every tile by TMA", ["--no-mixed-copies"]),
    ("ws-no-copy-split", "ws, masked copies in one loop", ["--no-copy-split"]),
    ("ws-slot-split", "ws, slots split in 2", ["--slot-split", "2"]),
    ("ws-cluster-split-k", "ws, CTA pairs split K", ["--cluster-split-k"]),
    ("ws-stream-k", "ws, stream-K last wave", ["--stream-k"]),
    ("ws-epilogue-overlap", "ws, epilogue overlap", ["--epilogue-overlap"]),
    ("ws-all-resident", "ws, all resident programs", ["TAWA_WAVE_BALANCE=0"]),
    ("ws-l2-promotion-128", "ws, 128-byte L2 promotion", ["TAWA_DISABLE=wide-l2-promotion"]),
    ("ws-no-read-once", "ws, no evict-first for read-once copies", ["--no-read-once"]),
    ("ws-no-tma-loads", "ws, producer copies, no TMA loads", ["--no-tma-loads"]),
    ("ws-small-stores-tma", "ws, small tiles TMA-stored too", ["--small-store-bytes", "0"]),
]


def select_points(spec):
    """The points `--points` names: comma-separated ids (`ws-d4-m1`), in
    the matrix's order; an unknown id is an error listing the known ones."""
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    ids = [pt[0] for pt in POINTS]
    unknown = [w for w in wanted if w not in ids]
    if unknown or not wanted:
        raise SystemExit(f"ablation.py: unknown point id(s) {', '.join(unknown) or '(none given)'}; "
                         f"the ids are: {', '.join(ids)}")
    return [pt for pt in POINTS if pt[0] in wanted]


def split_env(flags):
    """A point's flags: its `NAME=VALUE` words (environment variables of
    the launch, such as `TAWA_WAVE_BALANCE=0`) and the rest (tawa-rs
    flags)."""
    env = dict(w.split("=", 1) for w in flags if "=" in w and not w.startswith("-"))
    rest = [w for w in flags if not ("=" in w and not w.startswith("-"))]
    return env, rest


def run_point(binary, example, case, flags, iters):
    env, flags = split_env(flags)
    cmd = [binary, "bench", example, "--case", case, "--iters", str(iters), "--json"] + flags
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
    rows = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not rows:
        return None, (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return rows[0], None


def svg_chart(rows, baseline, title):
    """Horizontal bars of TFLOP/s per option, cuBLAS as a vertical line."""
    bar_h, gap, left, width = 22, 8, 190, 520
    top = 40
    height = top + len(rows) * (bar_h + gap) + 40
    peak = max([r["tflops"] for r in rows if r["tflops"]] + [baseline or 0]) * 1.1
    x = lambda v: left + v / peak * width
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 80}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<text x="{left}" y="20" font-size="14">{title}</text>',
    ]
    for i, r in enumerate(rows):
        y = top + i * (bar_h + gap)
        out.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{r["label"]}</text>')
        if r["tflops"]:
            color = "#8da0cb" if r["label"].startswith("no-ws") else "#66c2a5"
            out.append(f'<rect x="{left}" y="{y}" width="{x(r["tflops"]) - left:.1f}" '
                       f'height="{bar_h}" fill="{color}"/>')
            out.append(f'<text x="{x(r["tflops"]) + 4:.1f}" y="{y + 15}">{r["tflops"]:.0f}</text>')
        else:
            out.append(f'<text x="{left + 4}" y="{y + 15}" fill="#b00">failed: {r["error"]}</text>')
    if baseline:
        bx = x(baseline)
        out.append(f'<line x1="{bx:.1f}" y1="{top - 8}" x2="{bx:.1f}" y2="{height - 30}" '
                   f'stroke="#d95f02" stroke-dasharray="4,3"/>')
        out.append(f'<text x="{bx:.1f}" y="{height - 14}" text-anchor="middle" fill="#d95f02">'
                   f'cuBLAS {baseline:.0f} TFLOP/s (median of this run)</text>')
    out.append("</svg>")
    return "\n".join(out)


def write_results(out, example, case, rows, baselines):
    """Writes the table, JSON and chart of the points run so far: called
    after every point, so that a run stopped at a time limit keeps what it
    measured (and `--resume` can take it up)."""
    baseline = statistics.median(baselines) if baselines else None
    with open(os.path.join(out, "ablation.json"), "w") as f:
        json.dump({"example": example, "case": case, "cublas_median_tflops": baseline,
                   "points": rows}, f, indent=1)
    with open(os.path.join(out, "ablation.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    title = f"{os.path.basename(example)} {case}: TFLOP/s per option"
    with open(os.path.join(out, "ablation.svg"), "w") as f:
        f.write(svg_chart(rows, baseline, title))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("example")
    p.add_argument("--case", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--bin", default=os.environ.get("TAWA_BIN", "tawa-rs"))
    p.add_argument("--points", help="comma-separated point ids to run (default: all; --list shows them)")
    p.add_argument("--list", action="store_true", help="print the points' ids, labels and flags, and exit")
    p.add_argument("--resume", help="an ablation.json of an earlier run of the same case: its "
                   "points are kept (figures of that run) and only the others run")
    opts = p.parse_args()
    if opts.list:
        for pid, label, flags in POINTS:
            print(f"{pid:<18} {label:<24} {' '.join(flags)}")
        return
    done = {}
    if opts.resume:
        with open(opts.resume) as f:
            done = {r["label"]: r for r in json.load(f)["points"] if not r.get("error")}
    points = select_points(opts.points) if opts.points else POINTS
    os.makedirs(opts.out, exist_ok=True)
    rows, baselines = [], []
    for pid, label, flags in points:
        if label in done:
            # Results of runs before the ids existed get theirs here.
            rows.append({"id": pid, **done[label]})
            if done[label].get("cublas_tflops"):
                baselines.append(done[label]["cublas_tflops"])
            print(f"{label:<22} {' '.join(flags):<40} (kept from {opts.resume})", flush=True)
            continue
        row, err = run_point(opts.bin, opts.example, opts.case, flags, opts.iters)
        rec = {"id": pid, "label": label, "flags": " ".join(flags), "tflops": None, "ms": None,
               "cublas_tflops": None, "ratio": None, "error": err}
        if row:
            rec.update(tflops=row.get("kernel_tflops"), ms=row["kernel_ms"]["median"],
                       cublas_tflops=row.get("baseline_tflops"), ratio=row.get("ratio"))
            if rec["cublas_tflops"]:
                baselines.append(rec["cublas_tflops"])
        rows.append(rec)
        shown = f'{rec["tflops"]:.1f} TFLOP/s, {rec["ratio"]:.3f}x cuBLAS' if row else f"FAILED: {err}"
        print(f"{label:<22} {' '.join(flags):<40} {shown}", flush=True)
        write_results(opts.out, opts.example, opts.case, rows, baselines)
    if rows:
        write_results(opts.out, opts.example, opts.case, rows, baselines)
    sys.exit(1 if any(r["error"] for r in rows) else 0)


if __name__ == "__main__":
    main()
