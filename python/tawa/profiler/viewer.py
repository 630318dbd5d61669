"""Reads what `tawa.profiler.finalize` wrote: `parse` then `print_tree`.

Metrics: `time/ms` (total), `time/s`, `count`, and `tflopN/s` /
`gflopN/s` (the `flopsN` metric over the node's total time), `gbyte/s`.
"""

from __future__ import annotations

import json
import re


def _value(node, metric):
    t_ms = node["time_ms"]
    m = re.fullmatch(r"([tg])flop(\d*)/s", metric)
    if m:
        flops = node["metrics"].get(f"flops{m.group(2)}", node["metrics"].get("flops"))
        if flops is None or t_ms <= 0:
            return None
        return flops / (t_ms * 1e-3) / (1e12 if m.group(1) == "t" else 1e9)
    if metric == "time/ms":
        return t_ms
    if metric == "time/s":
        return t_ms * 1e-3
    if metric == "count":
        return node["count"]
    if metric == "gbyte/s":
        b = node["metrics"].get("bytes")
        return None if b is None or t_ms <= 0 else b / (t_ms * 1e-3) / 1e9
    raise ValueError(f"unknown metric {metric!r} (time/ms, time/s, count, tflopN/s, gflopN/s, gbyte/s)")


def parse(metrics, filename, include=None, exclude=None, threshold=None, depth=100):
    with open(filename) as f:
        nodes = json.load(f)
    tree = [dict(n, values={m: _value(n, m) for m in metrics}) for n in nodes]
    if include:
        tree = [n for n in tree if re.search(include, n["name"])]
    if exclude:
        tree = [n for n in tree if not re.search(exclude, n["name"])]
    return tree, list(metrics)


def print_tree(tree, metrics, depth=100, format=None, print_sorted=False):
    rows = sorted(tree, key=lambda n: -(n["values"][metrics[0]] or 0)) if print_sorted else tree
    for n in rows:
        vals = " ".join("-" if n["values"][m] is None else f"{n['values'][m]:.3f}" for m in metrics)
        print(f"{vals} {n['name']}")
