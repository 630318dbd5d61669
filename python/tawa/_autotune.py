"""`@tawa.autotune`, `tawa.Config` and `@tawa.heuristics`, with Triton's
semantics: the best config is chosen per value of the `key` arguments (and
the dtypes of the tensor arguments), after `prune_configs_by`, timing each
config with `do_bench` between `reset_to_zero` / `restore_value` hooks.

Unlike Triton, the configs are compiled before any is timed, all at once
on a thread pool: the Rust compiler releases the GIL, so the configs
compile in parallel.
"""

from __future__ import annotations

import builtins
import os
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

from ._jit import JITFunction, KernelInterface


class Config:
    """One autotuning candidate: meta-parameter values (`kwargs`) and
    launch options."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None,
                 ir_override=None):
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override

    def all_kwargs(self):
        options = {"num_warps": self.num_warps, "num_stages": self.num_stages, "num_ctas": self.num_ctas}
        if self.maxnreg is not None:
            options["maxnreg"] = self.maxnreg
        return {**self.kwargs, **options}

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}"]
        if self.maxnreg is not None:
            parts.append(f"maxnreg: {self.maxnreg}")
        return ", ".join(parts)

    __repr__ = __str__

    def __hash__(self):
        return hash((tuple(sorted(self.kwargs.items(), key=lambda kv: kv[0])), self.num_warps, self.num_stages,
                     self.num_ctas, self.maxnreg, self.pre_hook))

    def __eq__(self, other):
        return isinstance(other, Config) and self.__dict__ == other.__dict__


class AutotunerError(RuntimeError):
    pass


def _jit_function(fn):
    while not isinstance(fn, JITFunction):
        fn = getattr(fn, "fn", None)
        if fn is None:
            return None
    return fn


class Autotuner(KernelInterface):

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.cache = {}
        self.nargs = None
        self.best_config = None
        self.configs_timings = None
        self.configs_errors = {}
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        for name in self.reset_to_zero + self.restore_value:
            if name not in arg_names:
                raise ValueError(f"autotune: `{name}` (reset_to_zero / restore_value) is no argument of "
                                 f"`{getattr(fn, '__name__', fn)}` ({', '.join(arg_names)})")
        self.restore_copies = {}
        self.user_pre_hook = pre_hook
        self.user_post_hook = post_hook
        prune_configs_by = prune_configs_by or {}
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.perf_model = prune_configs_by.get("perf_model")
        self.configs_top_k = prune_configs_by.get("top_k", 1.0)
        if use_cuda_graph:
            from ._errors import unsupported
            raise unsupported("autotune(use_cuda_graph=True)")
        if do_bench is None:
            if warmup is not None or rep is not None:
                from .testing import do_bench as bench
                w, r = warmup or 25, rep or 100
                do_bench = lambda kernel_call, quantiles: bench(kernel_call, warmup=w, rep=r, quantiles=quantiles)
        self._do_bench = do_bench
        self.__name__ = getattr(fn, "__name__", "autotuner")

    @property
    def do_bench(self):
        if self._do_bench is not None:
            return self._do_bench
        from .runtime.driver import driver
        return driver.active.get_benchmarker()

    def pre_hook(self, nargs, reset_only=False):
        if self.user_pre_hook is not None:
            return self.user_pre_hook(nargs)
        for name in self.reset_to_zero:
            nargs[name].zero_()
        if not reset_only:
            self.restore_copies = {name: nargs[name].clone() for name in self.restore_value}

    def post_hook(self, nargs, exception):
        if self.user_post_hook is not None:
            return self.user_post_hook(nargs, exception)
        for name in self.restore_value:
            nargs[name].copy_(self.restore_copies[name])
        self.restore_copies = {}

    def prune_configs(self, kwargs):
        pruned = self.configs
        if self.early_config_prune:
            pruned = self.early_config_prune(self.configs, self.nargs, **kwargs)
            if not pruned:
                raise AutotunerError("No valid autotuner configs after pruning. `early_config_prune` should "
                                     "return at least one config.")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(self.configs) * top_k)
            elif not isinstance(top_k, int):
                raise TypeError("Error while pruning configs, top_k must be either 1) a float <= 1.0 or 2) an int")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**self.nargs, **kwargs, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=est.get)[:top_k]
        return list(pruned)

    def precompile(self, configs, args, kwargs):
        """Compiles every config's kernel on a thread pool; returns the
        error of each config that does not compile."""
        jit_fn = _jit_function(self.fn)
        if jit_fn is not self.fn:
            return {}  # a heuristics layer between decides the arguments
        jobs = []
        errors = {}
        for config in configs:
            current = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
            current.update(config.all_kwargs())
            if config.pre_hook is not None:
                # A pre_hook may change what the specialization sees (a
                # descriptor's block shape): run it before binding.
                config.pre_hook({**self.nargs, **current})
            try:
                _, key, values, options = jit_fn._bind(args, current)
            except Exception as e:  # noqa: BLE001 - reported per config
                errors[config] = e
                continue
            if key not in jit_fn.cache:
                jobs.append((config, key, options, values))
        if not jobs:
            return errors
        workers = int(os.environ.get("TAWA_COMPILE_THREADS", "0")) or min(len(jobs), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            # For this call's launch: a schedule chosen from it holds here.
            futures = [(config, pool.submit(jit_fn.compile, key, options, values))
                       for config, key, options, values in jobs]
            for config, fut in futures:
                try:
                    fut.result()
                except Exception as e:  # noqa: BLE001 - reported per config
                    errors[config] = e
        return errors

    def _bench(self, *args, config, **meta):
        conflicts = meta.keys() & config.kwargs.keys()
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                             " Make sure that you don't re-define auto-tuned symbols.")
        current = dict(meta, **config.all_kwargs())
        full_nargs = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            try:
                self.fn.run(*args, **current)
            except Exception as e:
                try:
                    self.post_hook(full_nargs, exception=e)
                finally:
                    raise
            self.post_hook(full_nargs, exception=None)

        return self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        used_cached_result = True
        if len(self.configs) > 1:
            all_args = {**self.nargs, **kwargs}
            _args = {k: v for (k, v) in all_args.items() if k in self.arg_names}
            key = [_args[k] for k in self.keys if k in _args]
            for _, arg in _args.items():
                if hasattr(arg, "dtype"):
                    key.append(str(arg.dtype))
            key = tuple(key)
            if key not in self.cache:
                used_cached_result = False
                pruned = self.prune_configs(kwargs)
                start = time.time()
                errors = self.precompile(pruned, args, kwargs)
                compile_s = time.time() - start
                timings = {}
                for config in pruned:
                    if config in errors:
                        timings[config] = [float("inf")] * 3
                        continue
                    try:
                        timings[config] = self._bench(*args, config=config, **kwargs)
                    except Exception as e:  # noqa: BLE001 - a config that fails is not chosen
                        errors[config] = e
                        timings[config] = [float("inf")] * 3
                if len(errors) == len(pruned):
                    first = next(iter(errors.values()))
                    raise AutotunerError(f"every autotuning config of `{self.__name__}` failed; the first: "
                                         f"{type(first).__name__}: {first}") from first
                for config, e in errors.items():
                    warnings.warn(f"autotune `{self.__name__}`: config {{{config}}} skipped: "
                                  f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                self.configs_errors = errors
                self.bench_time = time.time() - start
                self.compile_time = compile_s
                self.cache[key] = builtins.min(timings, key=lambda c: _first(timings[c]))
                full_nargs = {**self.nargs, **kwargs, **self.cache[key].all_kwargs()}
                self.pre_hook(full_nargs, reset_only=True)
                self.configs_timings = timings
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        if not used_cached_result and os.environ.get("TRITON_PRINT_AUTOTUNING", "") == "1":
            print(f"Triton autotuning for function {self.__name__} finished after {self.bench_time:.2f}s "
                  f"(configs compiled in parallel in {self.compile_time:.2f}s); best config selected: {config};",
                  file=sys.stderr)
        full_nargs = {**self.nargs, **kwargs, **config.all_kwargs()}
        if config.pre_hook is not None:
            config.pre_hook(full_nargs)
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret

    def warmup(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        ret = [self.fn.warmup(*args, **kwargs, **config.all_kwargs()) for config in self.prune_configs(kwargs)]
        self.nargs = None
        return ret


def _first(timing):
    return timing[0] if isinstance(timing, (list, tuple)) else timing


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """Triton's `@triton.autotune`."""

    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)

    return decorator


class Heuristics(KernelInterface):
    """Meta-parameters computed from the other arguments."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.values = values
        self.arg_names = arg_names
        self.__name__ = getattr(fn, "__name__", "heuristics")

    def run(self, *args, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, **kwargs)

    def warmup(self, *args, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.warmup(*args, **kwargs)


def heuristics(values):
    """Triton's `@triton.heuristics({"NAME": lambda args: ...})`."""

    def decorator(fn):
        return Heuristics(fn, fn.arg_names, values)

    return decorator
