"""`triton.testing`: benchmarking (`do_bench`, `perf_report`,
`Benchmark`) and `assert_close`, with Triton's semantics.

Timing goes through `tawa.runtime.driver.active` (CUDA events of PyTorch's
current stream, the L2 flushed before each run), so that the same code is
tested on the CPU with a fake driver. Tables need neither pandas nor
matplotlib: `Mark.run` prints and saves CSV itself, and returns a pandas
DataFrame only where pandas is installed (`return_df=True`).
"""

from __future__ import annotations

import math
import os
import statistics


def _quantiles(values, qs):
    """Linear interpolation between order statistics (torch.quantile's
    default)."""
    s = sorted(values)
    out = []
    for q in qs:
        if not 0 <= q <= 1:
            raise ValueError(f"quantile {q} is not in [0, 1]")
        pos = q * (len(s) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(s) - 1)
        out.append(s[lo] + (s[hi] - s[lo]) * (pos - lo))
    return out


def _summarize_statistics(times, quantiles, return_mode):
    if quantiles is not None:
        ret = _quantiles(times, quantiles)
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return times
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "mean":
        return statistics.mean(times)
    if return_mode == "median":
        return statistics.median(times)
    raise ValueError(f"return_mode must be one of min, max, mean, median, all; not {return_mode!r}")


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Milliseconds per call of `fn`: about `warmup` ms of warm-up calls,
    then about `rep` ms of calls each between two CUDA events, the L2
    cleared before each (Triton's `do_bench`)."""
    from .runtime.driver import driver
    d = driver.active
    di = d.get_device_interface()
    fn()
    di.synchronize()
    cache = d.get_empty_cache_for_benchmark()
    start = di.Event(enable_timing=True)
    end = di.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        d.clear_cache(cache)
        fn()
    end.record()
    di.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    starts = [di.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [di.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for i in range(n_repeat):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        d.clear_cache(cache)
        starts[i].record()
        fn()
        ends[i].record()
    di.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return _summarize_statistics(times, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    from ._errors import unsupported
    raise unsupported("triton.testing.do_bench_cudagraph", "use do_bench")


def _to_numpy(x):
    import numpy as np
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        if str(x.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):
            x = x.float()
        return x.numpy()
    return np.array(x)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Triton's `assert_close`: element-wise, `atol` 1e-2 and `rtol` 0 by
    default (either may be a function of the dtype)."""
    import numpy as np
    if callable(atol):
        atol = atol(x.dtype)
    if callable(rtol):
        rtol = rtol(x.dtype)
    atol = 1e-2 if atol is None else atol
    rtol = 0 if rtol is None else rtol
    x, y = _to_numpy(x), _to_numpy(y)
    if x.size > 1 or y.size > 1:
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
        return
    if not np.allclose(x, y, atol=atol, rtol=rtol):
        raise AssertionError(f"{err_msg} {x} is not close to {y} (atol={atol}, rtol={rtol})")


class Benchmark:
    """One benchmark table: `x_names` over `x_vals` (rows), one column per
    `line_vals` value of `line_arg`."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args, xlabel="", ylabel="",
                 x_log=False, y_log=False, styles=None):
        self.x_names = x_names
        self.x_vals = x_vals
        self.x_log = x_log
        self.line_arg = line_arg
        self.line_vals = line_vals
        self.line_names = line_names
        self.y_log = y_log
        self.styles = styles
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.plot_name = plot_name
        self.args = args


class Table:
    """A benchmark's results: `columns` and `rows` (lists of values)."""

    def __init__(self, columns, rows):
        self.columns = columns
        self.rows = rows

    def to_string(self, columns=None):
        columns = columns or self.columns
        idx = [self.columns.index(c) for c in columns]
        cells = [[str(c) for c in columns]]
        for i, row in enumerate(self.rows):
            cells.append([_fmt(row[j]) for j in idx])
        widths = [max(len(r[k]) for r in cells) for k in range(len(columns))]
        lines = []
        for i, r in enumerate(cells):
            prefix = " " * (len(str(len(self.rows)))) if i == 0 else str(i - 1).ljust(len(str(len(self.rows))))
            lines.append(prefix + "  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
        return "\n".join(lines)

    def to_markdown(self, columns=None):
        columns = columns or self.columns
        idx = [self.columns.index(c) for c in columns]
        out = ["| " + " | ".join(str(c) for c in columns) + " |", "|" + "---|" * len(columns)]
        for row in self.rows:
            out.append("| " + " | ".join(_fmt(row[j]) for j in idx) + " |")
        return "\n".join(out)

    def to_csv(self, path, columns=None, precision=6):
        columns = columns or self.columns
        idx = [self.columns.index(c) for c in columns]
        with open(path, "w") as f:
            f.write(",".join(str(c) for c in columns) + "\n")
            for row in self.rows:
                f.write(",".join(_fmt(row[j], precision) for j in idx) + "\n")


def _subsample(xs):
    """`xs`, or `$TAWA_BENCH_MAX_POINTS` of them evenly spaced (the first
    and last included) when that is set and smaller: a knob of tawa's GPU
    suite, which runs whole tutorials within a session."""
    xs = list(xs)
    n = int(os.environ.get("TAWA_BENCH_MAX_POINTS", "0") or 0)
    if n <= 0 or len(xs) <= n:
        return xs
    if n == 1:
        return [xs[-1]]
    return [xs[round(i * (len(xs) - 1) / (n - 1))] for i in range(n)]


def _fmt(v, precision=6):
    if isinstance(v, float):
        return f"{v:.{precision}f}".rstrip("0").rstrip(".") if math.isfinite(v) else str(v)
    return str(v)


class Mark:

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def _run(self, bench, save_path, show_plots, print_data, diff_col=False, save_precision=6, **kwargs):
        y_mean = bench.line_names
        y_min = [f"{y}-min" for y in bench.line_names]
        y_max = [f"{y}-max" for y in bench.line_names]
        x_names = list(bench.x_names)
        rows = []
        for x in _subsample(bench.x_vals):
            if not isinstance(x, (list, tuple)):
                x = [x for _ in x_names]
            if len(x) != len(x_names):
                raise ValueError(f"Expected {len(x_names)} values, got {x}")
            x_args = dict(zip(x_names, x))
            means, mins, maxs = [], [], []
            for y in bench.line_vals:
                ret = self.fn(**x_args, **{bench.line_arg: y}, **bench.args, **kwargs)
                try:
                    m, lo, hi = ret
                except TypeError:
                    m, lo, hi = ret, None, None
                means.append(m)
                mins.append(lo)
                maxs.append(hi)
            rows.append(list(x) + means + mins + maxs)
        table = Table(x_names + y_mean + y_min + y_max, rows)
        shown = x_names + list(y_mean)
        if diff_col and len(y_mean) == 2:
            col0, col1 = y_mean
            table.columns.append("Diff")
            for r in table.rows:
                r.append(r[table.columns.index(col1)] - r[table.columns.index(col0)])
            shown.append("Diff")
        if show_plots or save_path:
            self._plot(bench, table, x_names, save_path, show_plots)
        if print_data:
            print(bench.plot_name + ":")
            print(table.to_string(shown))
        if save_path:
            table.to_csv(os.path.join(save_path, f"{bench.plot_name}.csv"), shown, save_precision)
        return table

    def _plot(self, bench, table, x_names, save_path, show_plots):
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            return  # plots are optional: the data is printed and saved
        plt.figure()
        ax = plt.subplot()
        first_x = x_names[0]
        xs = [r[table.columns.index(first_x)] for r in table.rows]
        for i, name in enumerate(bench.line_names):
            ys = [r[table.columns.index(name)] for r in table.rows]
            col, sty = bench.styles[i] if bench.styles else (None, None)
            ax.plot(xs, ys, label=name, color=col, ls=sty)
        ax.legend()
        ax.set_xlabel(bench.xlabel or first_x)
        ax.set_ylabel(bench.ylabel)
        ax.set_xscale("log" if bench.x_log else "linear")
        ax.set_yscale("log" if bench.y_log else "linear")
        if show_plots:
            plt.show()
        if save_path:
            plt.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
        plt.close()

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        has_single_bench = isinstance(self.benchmarks, Benchmark)
        benchmarks = [self.benchmarks] if has_single_bench else self.benchmarks
        result = []
        html = None
        if save_path:
            os.makedirs(save_path, exist_ok=True)
            html = open(os.path.join(save_path, "results.html"), "w")
            html.write("<html><body>\n")
        try:
            for bench in benchmarks:
                table = self._run(bench, save_path, show_plots, print_data, **kwargs)
                result.append(_as_dataframe(table))
                if html:
                    html.write(f'<image src="{bench.plot_name}.png"/>\n')
        finally:
            if html:
                html.write("</body></html>\n")
                html.close()
        if return_df:
            return result[0] if has_single_bench else result
        return None


def _as_dataframe(table):
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame(table.rows, columns=table.columns)


def perf_report(benchmarks):
    """`@perf_report(Benchmark(...))`: the decorated function gets `.run`."""

    def wrapper(fn):
        return Mark(fn, benchmarks)

    return wrapper


def get_dram_gbps(device=None):
    from ._errors import unsupported
    raise unsupported("triton.testing.get_dram_gbps")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from ._errors import unsupported
    raise unsupported(f"triton.testing.{name}")
