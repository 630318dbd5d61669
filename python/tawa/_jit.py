"""`@tawa.jit`: a Python function whose source the compiler reads.

A call `kernel[grid](*args, **kwargs)` does what Triton's JIT does on the
host: bind the arguments to the parameters, derive the specialization
(tensor dtypes as `*fp16`, 16-byte alignment of data pointers, integers
divisible by 16 and integers equal to 1, the values of `tl.constexpr`
parameters, except where `do_not_specialize` says otherwise), find or
compile the kernel for it (in memory, then on disk, then through the Rust
pipeline), evaluate the grid over the arguments and launch on the current
device's current stream through `tawa.runtime.driver.active`.

The specialization of one call is a tuple of small tuples, one per
parameter, cheap to compute and hash; the Triton signature string the
compiler takes is derived from it only when a new one is compiled.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tempfile
import threading

from . import language as tl
from ._errors import unsupported
from .runtime.driver import driver as _driver
from . import profiler as _profiler

#: Launch options a call takes besides the kernel's parameters, and their
#: defaults (Triton's).
OPTIONS = {
    "num_warps": 4,
    "num_stages": 3,
    "num_ctas": 1,
    "maxnreg": None,
    "enable_fp_fusion": True,
    "launch_cooperative_grid": False,
    "launch_pdl": False,
    "debug": None,
    "sanitize_overflow": None,
}

# PyTorch's dtype names (`str(torch.float16)` less `torch.`) to Triton's.
_TORCH_DTYPES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}

_dtype_names = {}


def dtype_name(dtype) -> str:
    """Triton's name (`fp16`) of a PyTorch dtype or a `tl.dtype`."""
    try:
        return _dtype_names[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, tl.dtype):
        name = dtype.name
    else:
        text = str(dtype).rsplit(".", 1)[-1]
        name = _TORCH_DTYPES.get(text)
        if name is None:
            raise TypeError(f"tensors of dtype {dtype} cannot be passed to a tawa kernel "
                            f"(supported: {', '.join(sorted(_TORCH_DTYPES))})")
    try:
        _dtype_names[dtype] = name
    except TypeError:
        pass
    return name


class KernelParam:
    """One parameter of a jit function."""

    def __init__(self, index, param: inspect.Parameter, do_not_specialize, do_not_specialize_on_alignment):
        self.index = index
        self.name = param.name
        self.annotation = param.annotation
        ann = param.annotation
        self.is_constexpr = ann is tl.constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")
        self.default = param.default
        self.has_default = param.default is not inspect.Parameter.empty
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment
        self.specialize_alignment = not (do_not_specialize or do_not_specialize_on_alignment)
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise unsupported(f"`{param}` in a kernel's parameters", "*args / **kwargs parameters")


def _int_type(v: int, name: str) -> str:
    if -(2**31) <= v < 2**31:
        return "i32"
    if -(2**63) <= v < 2**63:
        return "i64"
    if 0 <= v < 2**64:
        return "u64"
    raise ValueError(f"argument `{name}` = {v} does not fit 64 bits")


def specialize(param: KernelParam, value):
    """The specialization of one argument: `(key, values)`, `key` a small
    hashable tuple from which the signature entry and the launch values'
    names follow ([`signature_entry`], [`launch_names`]), `values` the
    launch values this argument contributes."""
    if param.is_constexpr:
        return ("c", constexpr_key(value)), ()
    f = _SPECIALIZERS.get(type(value))
    if f is None:
        f = _specializer_for(type(value), param)
    return f(param, value)


def _spec_bool(param, value):
    return ("b",), (int(value),)


def _spec_int(param, value):
    if param.do_not_specialize:
        return ("i", _int_type(value, param.name), False), (value,)
    if value == 1:
        return _ONE, ()
    if -(2**31) <= value < 2**31:
        return _I32_KEYS[not value & 15], (value,)
    return ("i", _int_type(value, param.name), value % 16 == 0), (value,)


_ONE = ("one",)
#: `_spec_int`'s keys of an i32, indexed by divisibility by 16.
_I32_KEYS = (("i", "i32", False), ("i", "i32", True))


def _spec_float(param, value):
    return ("f",), (value,)


def _spec_tensor(param, value):
    if getattr(value, "is_cuda", True) is False:
        raise ValueError(
            f"argument `{param.name}` is a tensor on {getattr(value, 'device', 'the CPU')}; "
            f"tawa kernels take CUDA tensors")
    ptr = value.data_ptr()
    dt = value.dtype
    name = _dtype_names.get(dt) or dtype_name(dt)
    return ("p", name, not ptr & 15 and param.specialize_alignment), (ptr,)


def _spec_desc(param, value):
    base = value.base
    if value.padding != "zero":
        raise unsupported(f"TensorDescriptor(padding={value.padding!r})")
    ptr = base.data_ptr()
    shape = tuple(int(s) for s in value.shape)
    strides = tuple(int(s) for s in value.strides)
    block = tuple(int(b) for b in value.block_shape)
    if len(block) != len(shape):
        raise ValueError(f"argument `{param.name}`: a TensorDescriptor of {len(shape)} dimensions "
                         f"with block_shape {list(block)}")
    return ("d", dtype_name(base.dtype), block, len(shape)), (ptr,) + shape + strides


def _spec_constexpr(param, value):
    return ("c", constexpr_key(value)), ()


_SPECIALIZERS = {bool: _spec_bool, int: _spec_int, float: _spec_float, str: _spec_constexpr,
                 type(None): _spec_constexpr, tl.dtype: _spec_constexpr, tl.constexpr: _spec_constexpr}


def _specializer_for(t, param):
    """The specializer of values of type `t` (remembered per type)."""
    from .tools.tensor_descriptor import TensorDescriptor
    if issubclass(t, TensorDescriptor):
        f = _spec_desc
    elif hasattr(t, "data_ptr"):
        f = _spec_tensor
    elif t.__module__ == "torch" and t.__name__ == "dtype":
        f = _spec_constexpr
    elif issubclass(t, (JITFunction, _MockTensor)):
        f = _spec_constexpr
    else:
        raise TypeError(f"argument `{param.name}` of type {t.__name__} cannot be passed to a tawa kernel "
                        f"(tensors, ints, floats, bools, TensorDescriptors and constexprs can)")
    _SPECIALIZERS[t] = f
    return f


def _is_torch_dtype(v) -> bool:
    return type(v).__module__ == "torch" and type(v).__name__ == "dtype"


def constexpr_key(value):
    """A hashable stand-in for a constexpr value."""
    t = type(value)
    if t is int or t is bool or t is str or t is float or value is None:
        # The common values, as the general path below keys them.
        return (t.__name__, value)
    if isinstance(value, tl.constexpr):
        value = value.value
    if isinstance(value, _MockTensor):
        value = value.dtype
    if isinstance(value, JITFunction):
        return ("fn", value.__name__)
    if isinstance(value, tl.dtype) or _is_torch_dtype(value):
        return ("dtype", dtype_name(value))
    try:
        hash(value)
    except TypeError:
        if isinstance(value, list):
            return ("list", tuple(constexpr_key(v) for v in value))
        raise TypeError(f"constexpr value {value!r} is not hashable")
    # 1 and True are equal in Python but not as constexprs.
    return (type(value).__name__, value)


def constexpr_text(key, tl_alias: str) -> str:
    """Python source text for a constexpr value (what the signature takes)."""
    kind, value = key
    if kind == "fn":
        return value
    if kind == "dtype":
        attr = tl._BY_NAME[value].attr
        return f"{tl_alias}.{attr}"
    if kind == "list":
        return "[" + ", ".join(constexpr_text(k, tl_alias) for k in value) + "]"
    if kind == "float":
        if value != value:
            return "float('nan')"
        if value in (float("inf"), float("-inf")):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if kind in ("int", "bool", "NoneType", "str"):
        return repr(value)
    raise TypeError(f"a constexpr of type {kind} cannot be given to the compiler")


def signature_entry(key, tl_alias: str) -> str:
    kind = key[0]
    if kind == "one":
        return "i32:1"
    if kind == "c":
        return constexpr_text(key[1], tl_alias)
    if kind == "b":
        return "i1"
    if kind == "i":
        return key[1] + (":16" if key[2] else "")
    if kind == "f":
        return "fp32"
    if kind == "p":
        return f"*{key[1]}" + (":16" if key[2] else "")
    if kind == "d":
        return f"tensordesc<{key[1]}[{', '.join(str(b) for b in key[2])}]>"
    raise AssertionError(key)


def launch_names(name: str, key):
    """The launch values' names and kinds one argument contributes, as
    the compiler lays out parameters (a descriptor `d` becomes `d_base`,
    `d_shape0`.., `d_stride0`..)."""
    kind = key[0]
    if kind in ("c", "one"):
        return []
    if kind in ("b", "i"):
        return [(name, "int")]
    if kind == "f":
        return [(name, "float")]
    if kind == "p":
        return [(name, "ptr")]
    if kind == "d":
        rank = key[3]
        return ([(f"{name}_base", "ptr")] + [(f"{name}_shape{d}", "int") for d in range(rank)]
                + [(f"{name}_stride{d}", "int") for d in range(rank)])
    raise AssertionError(key)


def _fast_binder(fn):
    """A function binding a call of `fn` as `JITFunction._bind_checked`
    does, generated for its parameters (as Triton generates its binder):
    Python's own call binds the arguments, each value's specializer is
    looked up by its type, the key and the launch values are built as
    tuples. It raises where `_bind_checked` would (or where it cannot
    tell), and `_bind` then asks `_bind_checked` for the error. False
    where a parameter is named like a launch option or like the binder's
    own names."""
    names = [p.name for p in fn.params]
    if any(n in OPTIONS or n.startswith("_tw") for n in names):
        return False
    env = {"_tw_OPTIONS": OPTIONS, "_tw_SPEC": _SPECIALIZERS, "_tw_spec_for": _specializer_for,
           "_tw_ckey": constexpr_key, "_tw_opts": _options_of, "_tw_ONE": _ONE, "_tw_I32": _I32_KEYS}
    sig, body, key, values = [], [], [], []
    for i, p in enumerate(fn.params):
        if p.has_default:
            env[f"_tw_d{i}"] = p.default
            sig.append(f"{p.name}=_tw_d{i}")
        else:
            sig.append(p.name)
        if p.is_constexpr:
            key.append(f'("c", _tw_ckey({p.name}))')
            continue
        env[f"_tw_p{i}"] = p
        general = (f"_tw_f = _tw_SPEC.get(type({p.name})) or _tw_spec_for(type({p.name}), _tw_p{i})\n"
                   f"    _tw_k{i}, _tw_v{i} = _tw_f(_tw_p{i}, {p.name})")
        if p.do_not_specialize:
            body.append("    " + general)
        else:
            # `_spec_int`'s common cases written out: a call per integer
            # argument is most of a launch's binding.
            body.append(f"    if type({p.name}) is int and -2147483648 <= {p.name} < 2147483648:\n"
                        f"        if {p.name} == 1:\n"
                        f"            _tw_k{i}, _tw_v{i} = _tw_ONE, ()\n"
                        f"        else:\n"
                        f"            _tw_k{i}, _tw_v{i} = _tw_I32[not {p.name} & 15], ({p.name},)\n"
                        f"    else:\n"
                        f"        " + general.replace("\n    ", "\n        "))
        key.append(f"_tw_k{i}")
        values.append(f"_tw_v{i}")
    named = ", ".join(f"{n!r}: {n}" for n in names)
    src = (f"def _tw_bind({', '.join(sig + ['**_tw_kw'])}):\n"
           + "".join(line + "\n" for line in body)
           + "    _tw_o = _tw_opts(_tw_kw) if _tw_kw else _tw_OPTIONS\n"
           + f"    return ({{{named}}}, ({''.join(k + ', ' for k in key)}"
           + '(_tw_o["num_warps"], _tw_o["num_stages"]),), '
           + (" + ".join(values) if values else "()") + ", _tw_o)\n")
    exec(compile(src, f"<tawa binder of {fn.__name__}>", "exec"), env)  # noqa: S102
    return env["_tw_bind"]


def _options_of(kwargs):
    """The launch options of a call's keywords that are no parameter, or a
    KeyError where one is no option either (`_bind_checked` says which)."""
    for k in kwargs:
        if k not in OPTIONS:
            raise KeyError(k)
    return {**OPTIONS, **kwargs}


class KernelInterface:
    def __getitem__(self, grid):
        """`kernel[grid](*args, **kwargs)` launches over `grid`: a tuple of
        one to three sizes, or a callable taking the call's arguments by
        name (constexprs and autotuned meta-parameters included)."""
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


#: CUDA's largest grid along x, y and z.
_GRID_LIMITS = (2**31 - 1, 65535, 65535)
_X_MAX, _YZ_MAX = _GRID_LIMITS[0], _GRID_LIMITS[1]


def evaluate_grid(grid, named_args):
    """The launch grid as three ints."""
    if type(grid) is tuple:
        # The common grids, within the limits checked below, without the
        # general path.
        n = len(grid)
        if n == 1 and type(grid[0]) is int and 0 <= grid[0] <= _X_MAX:
            return (grid[0], 1, 1)
        if n == 2:
            x, y = grid
            if type(x) is int and type(y) is int and 0 <= x <= _X_MAX and 0 <= y <= _YZ_MAX:
                return (x, y, 1)
        elif n == 3:
            x, y, z = grid
            if (type(x) is int and type(y) is int and type(z) is int and 0 <= x <= _X_MAX
                    and 0 <= y <= _YZ_MAX and 0 <= z <= _YZ_MAX):
                return grid
    if callable(grid):
        grid = grid(named_args)
    if isinstance(grid, int):
        grid = (grid,)
    try:
        dims = tuple(int(g) for g in grid)
    except (TypeError, ValueError):
        raise TypeError(f"the grid must be a tuple of 1 to 3 ints or a callable returning one, not {grid!r}")
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"the grid must have 1 to 3 dimensions, not {len(dims)}: {dims}")
    dims = dims + (1,) * (3 - len(dims))
    for axis, (d, lim) in enumerate(zip(dims, _GRID_LIMITS)):
        if d < 0 or d > lim:
            raise ValueError(f"grid dimension {axis} is {d}; CUDA allows 0 to {lim}")
    return dims


class CompiledKernel:
    """One specialization of a jit function, compiled. `kernel[grid](...)`
    launches it with the jit function's arguments (constexprs included, as
    Triton's compiled kernels take them), which must match the
    specialization it was compiled for."""

    def __init__(self, fn, key, kernel, options, launch_names):
        self.fn = fn
        self.key = key
        self.kernel = kernel
        self.options = options
        self.launch_names = launch_names
        self.name = kernel.name
        res = kernel.resources
        self.n_regs = res[0] if res else None
        self.n_spills = (res[1] + res[2]) if res else None
        static_smem = res[3] if res else 0
        self.metadata = _Metadata(
            name=kernel.name,
            num_warps=options["num_warps"],
            num_stages=options["num_stages"],
            num_ctas=1,
            shared=static_smem + kernel.dyn_smem,
            warp_specialized=kernel.warp_specialized,
        )
        self.asm = {"cuda": kernel.cuda, "ptx": kernel.ptx}
        # What the schedule was chosen for (`None`: every launch).
        self.launch_guard = kernel.launch_guard

    def chosen_for(self, values):
        """Whether a call with launch `values` is one this kernel's
        schedule was chosen for (always, unless a choice depended on the
        launch compiled for; `values` `None`: no call to ask about)."""
        return self.launch_guard is None or values is None or self.kernel.chosen_for(tuple(values))

    def _init_handles(self):
        """Loads the module on the current device (Triton loads lazily too)."""
        from .runtime.driver import driver
        device = driver.active.get_current_device()
        self.kernel.load_on(device)

    def __getitem__(self, grid):
        def runner(*args, **kwargs):
            named, key, values, _ = self.fn._bind(args, kwargs)
            # Launch options were fixed at compile time; the arguments must
            # specialize the same way.
            if key[:-1] != self.key[:-1]:
                raise ValueError(
                    f"the arguments of this call to `{self.name}` do not match the specialization "
                    f"it was compiled for ({self.fn._describe(self.key)}; this call: {self.fn._describe(key)})")
            self.fn._launch(self, grid, named, values)
        return runner

    def __repr__(self):
        return f"<tawa CompiledKernel {self.name} {self.fn._describe(self.key)}>"


class _Metadata:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return f"Metadata({self.__dict__})"


_compiler_version = None
_version_lock = threading.Lock()


def compiler_version() -> str:
    """The extension's version and a hash of its binary (any rebuild
    changes the cache key), and NVRTC's version."""
    global _compiler_version
    with _version_lock:
        if _compiler_version is None:
            from . import _tawa
            h = hashlib.sha256()
            with open(_tawa.__file__, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            nvrtc = _tawa.nvrtc_version()
            _compiler_version = f"{_tawa.__version__}+{h.hexdigest()[:16]}+nvrtc{nvrtc[0]}.{nvrtc[1]}"
    return _compiler_version


def cache_dir():
    """Where compiled kernels are kept: `$TAWA_PY_CACHE_DIR`, else
    `~/.cache/tawa/python`; `None` (no on-disk cache) when
    `TAWA_PY_CACHE_DIR` is empty."""
    d = os.environ.get("TAWA_PY_CACHE_DIR")
    if d is not None:
        return d or None
    return os.path.join(os.path.expanduser("~"), ".cache", "tawa", "python")


class JITFunction(KernelInterface):
    """What `@tawa.jit` returns."""

    def __init__(self, fn, do_not_specialize=None, do_not_specialize_on_alignment=None, debug=None,
                 noinline=None, repr=None, launch_metadata=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__globals__ = fn.__globals__
        self.launch_metadata = launch_metadata
        self.debug = debug
        self.noinline = noinline
        self.repr = repr
        signature = inspect.signature(fn)
        self.signature = signature
        self.arg_names = list(signature.parameters)
        dns = self._indices(do_not_specialize)
        dnsa = self._indices(do_not_specialize_on_alignment)
        self.params = [
            KernelParam(i, p, i in dns, i in dnsa) for i, p in enumerate(signature.parameters.values())
        ]
        self._param_index = {p.name: p.index for p in self.params}
        self.constexprs = [p.index for p in self.params if p.is_constexpr]
        try:
            self.src_file = inspect.getsourcefile(fn)
            with open(self.src_file, encoding="utf-8") as f:
                self.module_source = f.read()
            self.src = inspect.getsource(fn)
        except (OSError, TypeError) as e:
            self.src_file = None
            self.module_source = None
            self.src = None
            self._source_error = e
        self.cache = {}
        # The generated binder (`_fast_binder`), made at the first launch;
        # False where there is none.
        self._fast_bind = None
        # Every kernel compiled for a key: more than one where a schedule
        # was chosen for the launch compiled for (`CompiledKernel.chosen_for`).
        self._variants = {}
        self._cache_lock = threading.Lock()
        self.used_global_vals = {}

    def _indices(self, names):
        out = set()
        for n in names or ():
            if isinstance(n, int):
                out.add(n)
            elif n in self.signature.parameters:
                out.add(list(self.signature.parameters).index(n))
            else:
                raise ValueError(f"do_not_specialize names `{n}`, which is no parameter of `{self.__name__}`")
        return out

    @property
    def cache_key(self):
        return hashlib.sha256((self.module_source or "").encode() + self.__name__.encode()).hexdigest()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"`{self.__name__}` is a @jit kernel: launch it as `{self.__name__}[grid](...)`; "
            f"it cannot be called from Python outside a kernel")

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    # -- binding ---------------------------------------------------------

    def _bind(self, args, kwargs):
        """`(named, key, values, options)`: every parameter's value by name
        (defaults included, for the grid), the specialization key, the
        launch values, and the launch options.

        A launch binds its arguments on every call, so this is the hot
        path of a short kernel called in a loop: the binder generated for
        this function's parameters (`_fast_binder`) does it, and anything
        it does not take (a wrong call, an unknown option) goes through
        `_bind_checked`, which gives the same result or the error."""
        fast = self._fast_bind
        if fast is None:
            fast = self._fast_bind = _fast_binder(self)
        if fast is not False:
            try:
                return fast(*args, **kwargs)
            except Exception:  # noqa: BLE001 - the checked path says what is wrong
                pass
        return self._bind_checked(args, kwargs)

    def _bind_checked(self, args, kwargs):
        """`_bind` one parameter at a time, with the errors a wrong call
        gets; the reference `_fast_binder`'s functions are tested against."""
        params = self.params
        nargs = len(args)
        if nargs > len(params):
            raise TypeError(f"`{self.__name__}` takes {len(params)} arguments, {nargs} given")
        named = dict(zip(self.arg_names, args))
        options = OPTIONS
        if kwargs:
            index = self._param_index
            for k, v in kwargs.items():
                if k in OPTIONS:
                    if options is OPTIONS:
                        options = dict(OPTIONS)
                    options[k] = v
                    if k not in index:
                        continue
                i = index.get(k)
                if i is None:
                    raise TypeError(
                        f"`{self.__name__}` got an unexpected keyword argument `{k}` "
                        f"(parameters: {', '.join(self.arg_names)})")
                if i < nargs:
                    raise TypeError(f"`{self.__name__}` got multiple values for argument `{k}`")
                named[k] = v
        key = []
        values = []
        for p in params:
            try:
                v = named[p.name]
            except KeyError:
                if not p.has_default:
                    raise TypeError(f"`{self.__name__}` is missing argument `{p.name}`") from None
                v = named[p.name] = p.default
            if p.is_constexpr:
                key.append(("c", constexpr_key(v)))
                continue
            f = _SPECIALIZERS.get(type(v))
            if f is None:
                f = _specializer_for(type(v), p)
            k, vals = f(p, v)
            key.append(k)
            values.extend(vals)
        key.append((options["num_warps"], options["num_stages"]))
        return named, tuple(key), tuple(values), options

    def _describe(self, key):
        alias = self._tl_alias()
        return ", ".join(f"{p.name}: {signature_entry(k, alias)}" for p, k in zip(self.params, key))

    def _tl_alias(self):
        """The name the kernel's module binds `tawa.language` (or
        `triton.language`) to, for dtype constexprs in the signature."""
        for name, v in self.__globals__.items():
            if getattr(v, "__name__", None) in ("tawa.language", "triton.language"):
                return name
        for name, v in self.__globals__.items():
            if getattr(v, "__name__", None) in ("tawa", "triton"):
                return f"{name}.language"
        raise unsupported("a dtype constexpr in a module that does not import tawa.language")

    # -- compiling -------------------------------------------------------

    def _check_options(self, options):
        if options["num_ctas"] != 1:
            raise unsupported(f"num_ctas={options['num_ctas']}", "thread-block clusters are not launched from Python")
        if options["launch_cooperative_grid"]:
            raise unsupported("launch_cooperative_grid=True")
        # `launch_pdl` needs no check: the compiler decides whether a
        # kernel waits for the kernel before it at entry and is launched as
        # a programmatic dependent (persistent kernels by default; `--pdl`
        # or `--no-pdl` in TAWA_FLAGS for all or none), and either way the
        # kernel sees everything the kernels before it wrote.
        if options["maxnreg"] is not None:
            raise unsupported(f"maxnreg={options['maxnreg']}", "the compiler fits registers itself (setmaxnreg)")
        if not options["enable_fp_fusion"]:
            raise unsupported("enable_fp_fusion=False")
        w = options["num_warps"]
        if not isinstance(w, int) or w < 1 or w > 32 or w & (w - 1):
            raise ValueError(f"num_warps must be a power of two from 1 to 32, not {w!r}")
        s = options["num_stages"]
        if not isinstance(s, int) or s < 1:
            raise ValueError(f"num_stages must be a positive int, not {s!r}")

    def signature_of(self, key):
        """The Triton signature string the compiler takes for `key`."""
        alias = None
        entries = []
        for p, k in zip(self.params, key):
            if k[0] == "c" and k[1][0] == "dtype" and alias is None:
                alias = self._tl_alias()
            entries.append(signature_entry(k, alias or "tl"))
        return ", ".join(entries)

    def compile(self, key, options, values=None):
        """The compiled kernel for specialization `key`: from memory, from
        disk, or compiled (the GIL is released while the compiler runs).

        `values`, the launch values of a call (in the order of the
        kernel's launch names), are the launch the compiler chooses
        schedules for: where a choice depends on them (ping-pong consumers
        for a short K loop), the kernel says for which launches it holds,
        and a call outside them compiles again. Every kernel compiled for
        `key` is kept; `cache[key]` is the latest one used."""
        kernel = self.cache.get(key)
        if kernel is None:
            # `cache` is what is compiled: clearing it forgets the rest.
            self._variants.pop(key, None)
        elif kernel.chosen_for(values):
            return kernel
        for other in self._variants.get(key, ()):
            if other.chosen_for(values):
                with self._cache_lock:
                    self.cache[key] = other
                return other
        self._check_options(options)
        if self.module_source is None:
            raise unsupported(f"`{self.__name__}` without a source file",
                              f"the compiler reads the kernel's file ({self._source_error})")
        signature = self.signature_of(key)
        names = []
        for p, k in zip(self.params, key):
            names.extend(launch_names(p.name, k))
        ws = os.environ.get("TAWA_NO_WS", "") in ("", "0")
        # The compiler's pipeline flags (`tawa-rs --help`), for ablations;
        # read here, so they apply to the kernels compiled from now on.
        flags = " ".join(os.environ.get("TAWA_FLAGS", "").split())
        launch_values = None
        if values is not None:
            launch_values = [(n, v) for (n, kind), v in zip(names, values)
                             if kind == "int" and isinstance(v, int) and not isinstance(v, bool)]
        request = {
            "source": self.module_source,
            "kernel": self.__name__,
            "signature": signature,
            "args": names,
            "num_warps": options["num_warps"],
            "num_stages": options["num_stages"],
            "warp_specialize": ws,
            "flags": flags,
        }
        # One entry a specialization on disk: the kernel compiled last for
        # it, used again where it was chosen for this call's launch.
        compiled = self._from_disk(request)
        if (compiled is not None and values is not None and compiled.launch_guard is not None
                and not compiled.chosen_for(tuple(values))):
            compiled = None
        if compiled is None:
            from . import _tawa
            compiled = _tawa.compile(
                self.module_source, self.src_file, self.__name__, signature, names,
                num_warps=options["num_warps"], num_stages=options["num_stages"], warp_specialize=ws,
                flags=flags, launch_values=launch_values)
            self._to_disk(request, compiled)
        kernel = CompiledKernel(self, key, compiled, options, names)
        with self._cache_lock:
            self._variants.setdefault(key, []).append(kernel)
            self.cache[key] = kernel
        return kernel

    def _disk_path(self, request):
        d = cache_dir()
        if d is None:
            return None
        text = json.dumps(dict(request, compiler=compiler_version()), sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        return os.path.join(d, digest[:2], digest + ".tawa")

    def _from_disk(self, request):
        path = self._disk_path(request)
        if path is None or not os.path.exists(path):
            return None
        from . import _tawa
        try:
            with open(path, "rb") as f:
                return _tawa.Kernel.deserialize(f.read())
        except (OSError, ValueError):
            # A corrupt or unreadable entry is compiled again and replaced.
            return None

    def _to_disk(self, request, compiled):
        path = self._disk_path(request)
        if path is None:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(compiled.serialize())
            os.replace(tmp, path)
        except OSError:
            # The cache is an optimization: a read-only home still compiles.
            pass

    # -- launching -------------------------------------------------------

    def __getitem__(self, grid):
        # `KernelInterface.__getitem__` without going through `run`'s
        # keywords: the arguments are packed once.
        return lambda *args, **kwargs: self._run(args, kwargs, grid, False)

    def run(self, *args, grid, warmup=False, **kwargs):
        return self._run(args, kwargs, grid, warmup)

    def _run(self, args, kwargs, grid, warmup):
        named, key, values, options = self._bind(args, kwargs)
        kernel = self.cache.get(key)
        if kernel is None or not kernel.chosen_for(values):
            kernel = self.compile(key, options, values)
        if not warmup:
            self._launch(kernel, grid, named, values)
        return kernel

    def _launch(self, kernel, grid, named, values):
        dims = evaluate_grid(grid, named)
        if dims[0] * dims[1] * dims[2] == 0:
            return
        d = _driver.active
        if _profiler._session is not None and _profiler.hooked():
            name = kernel.name
            metrics = {}
            if self.launch_metadata is not None:
                metrics = dict(self.launch_metadata(dims, kernel, named))
                name = metrics.pop("name", name)
            _profiler.record_launch(name, metrics,
                                    lambda: d.launch(kernel.kernel, dims, values, d.get_current_device()))
            return
        d.launch(kernel.kernel, dims, values, d.get_current_device())

    def warmup(self, *args, grid, **kwargs):
        """Compiles for these arguments without launching. Tensors may be
        given as dtypes (`torch.float16`, `tl.float16`): a 16-byte aligned
        pointer of that type."""
        args = tuple(_MockTensor.wrap(a) for a in args)
        kwargs = {k: (v if k in OPTIONS else _MockTensor.wrap(v)) for k, v in kwargs.items()}
        return self.run(*args, grid=grid, warmup=True, **kwargs)


class _MockTensor:
    """A dtype standing for an aligned tensor of it, for `warmup`."""

    def __init__(self, dtype):
        self.dtype = dtype

    @staticmethod
    def wrap(v):
        if isinstance(v, tl.dtype) or _is_torch_dtype(v):
            return _MockTensor(v)
        return v

    def data_ptr(self):
        return 0


def jit(fn=None, *, do_not_specialize=None, do_not_specialize_on_alignment=None, debug=None,
        noinline=None, repr=None, launch_metadata=None, **unknown):
    """`@tawa.jit` / `@tawa.jit(do_not_specialize=[...])`."""
    if unknown:
        raise unsupported(f"@jit({', '.join(unknown)}=...)")

    def decorator(f):
        return JITFunction(f, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug,
                           noinline=noinline, repr=repr, launch_metadata=launch_metadata)

    return decorator(fn) if fn is not None else decorator
