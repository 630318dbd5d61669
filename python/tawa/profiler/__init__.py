"""`triton.profiler` (Proton), the part tutorial 09 uses: sessions
(`start`, `activate`, `deactivate`, `finalize`), `scope`, and with
`hook="triton"` every tawa kernel launch, named by the kernel's
`launch_metadata` when it has one. Times come from CUDA events on the
current stream around each launch or scope; `finalize` writes
`NAME.hatchet` (JSON), which `tawa.profiler.viewer` reads.

Unlike Proton there is one flat level of nodes (a name, its calls, its
total time and its metrics such as `flops16` and `bytes`), not a call tree.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

_session = None


class _Session:

    def __init__(self, name, hook):
        self.name = name or "proton"
        self.hook = hook
        self.active = True
        self.records = []  # (name, metrics, start event, end event)


def _events():
    import torch
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def _synchronize():
    import torch
    torch.cuda.synchronize()


def start(name=None, *, context="shadow", data="tree", backend=None, hook=None, **kwargs):
    """Starts the (only) session; returns its id, 0."""
    global _session
    _session = _Session(name, hook)
    return 0


def activate(session=None):
    if _session is not None:
        _session.active = True


def deactivate(session=None, flushing=False):
    if _session is not None:
        _session.active = False


def hooked():
    """Whether kernel launches are being recorded now."""
    return _session is not None and _session.active and _session.hook == "triton"


def record_launch(name, metrics, launch):
    """Runs `launch()` between two CUDA events, recorded under `name`."""
    start_ev, end_ev = _events()
    start_ev.record()
    launch()
    end_ev.record()
    _session.records.append((name, metrics, start_ev, end_ev))


@contextmanager
def _scope(name, metrics):
    if _session is None or not _session.active:
        yield
        return
    start_ev, end_ev = _events()
    start_ev.record()
    try:
        yield
    finally:
        end_ev.record()
        _session.records.append((name, dict(metrics or {}), start_ev, end_ev))


def scope(name, metrics=None):
    """`with proton.scope("name", {"flops16": ...}):` times the block."""
    return _scope(name, metrics)


def finalize(session=None, output_format="hatchet"):
    """Waits for the recorded work and writes `NAME.hatchet`."""
    global _session
    if _session is None:
        return
    _synchronize()
    nodes = {}
    for name, metrics, s, e in _session.records:
        node = nodes.setdefault(name, {"name": name, "count": 0, "time_ms": 0.0, "metrics": {}})
        node["count"] += 1
        node["time_ms"] += s.elapsed_time(e)
        for k, v in metrics.items():
            if isinstance(v, (int, float)):
                node["metrics"][k] = node["metrics"].get(k, 0.0) + v
    with open(f"{_session.name}.{output_format}", "w") as f:
        json.dump(sorted(nodes.values(), key=lambda n: n["name"]), f, indent=1)
    _session = None
