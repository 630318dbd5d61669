"""`tawa.language`: what Python evaluates of `triton.language` outside a kernel.

Kernel bodies are never run by Python: the compiler reads their source.
What Python does evaluate is the module's top level and the decorators:
`tl.constexpr` annotations and module-level `tl.constexpr(...)` globals,
the dtypes (`tl.float16`, passed as constexpr arguments or compared on the
host) and the names a file imports. Those are real objects here; calling a
kernel-only function (`tl.load`, `tl.program_id`, ...) from host code raises
NotImplementedError saying so, as Triton does outside a kernel.
"""

from __future__ import annotations

from .._errors import unsupported


class constexpr:
    """A compile-time constant: `x: tl.constexpr` annotates a parameter,
    `X = tl.constexpr(4)` makes a module-level constant kernels can read."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value.__index__()

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __bool__(self):
        return bool(self.value)

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return self.value == _unwrap(other)

    def __ne__(self, other):
        return self.value != _unwrap(other)

    def __lt__(self, other):
        return self.value < _unwrap(other)

    def __le__(self, other):
        return self.value <= _unwrap(other)

    def __gt__(self, other):
        return self.value > _unwrap(other)

    def __ge__(self, other):
        return self.value >= _unwrap(other)

    def __add__(self, other):
        return constexpr(self.value + _unwrap(other))

    def __radd__(self, other):
        return constexpr(_unwrap(other) + self.value)

    def __sub__(self, other):
        return constexpr(self.value - _unwrap(other))

    def __rsub__(self, other):
        return constexpr(_unwrap(other) - self.value)

    def __mul__(self, other):
        return constexpr(self.value * _unwrap(other))

    def __rmul__(self, other):
        return constexpr(_unwrap(other) * self.value)

    def __floordiv__(self, other):
        return constexpr(self.value // _unwrap(other))

    def __truediv__(self, other):
        return constexpr(self.value / _unwrap(other))

    def __mod__(self, other):
        return constexpr(self.value % _unwrap(other))

    def __neg__(self):
        return constexpr(-self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


class dtype:
    """A Triton scalar type. `name` is Triton's (`fp16`), as in signatures."""

    def __init__(self, name: str, attr: str, bits: int):
        self.name = name
        self.attr = attr
        self.primitive_bitwidth = bits

    def __repr__(self):
        return f"triton.language.{self.attr}"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def is_fp8(self):
        return self.name.startswith("fp8")

    def is_fp16(self):
        return self.name == "fp16"

    def is_bf16(self):
        return self.name == "bf16"

    def is_fp32(self):
        return self.name == "fp32"

    def is_floating(self):
        return self.name.startswith(("fp", "bf"))

    def is_int(self):
        return self.name.startswith(("int", "uint"))

    @property
    def itemsize(self):
        return max(1, self.primitive_bitwidth // 8)


class pointer_type:
    def __init__(self, element_ty: dtype):
        self.element_ty = element_ty

    def __repr__(self):
        return f"pointer<{self.element_ty.name}>"


def _dt(name, attr, bits):
    t = dtype(name, attr, bits)
    globals()[attr] = t
    return t


int1 = _dt("i1", "int1", 1)
int8 = _dt("i8", "int8", 8)
int16 = _dt("i16", "int16", 16)
int32 = _dt("i32", "int32", 32)
int64 = _dt("i64", "int64", 64)
uint8 = _dt("u8", "uint8", 8)
uint16 = _dt("u16", "uint16", 16)
uint32 = _dt("u32", "uint32", 32)
uint64 = _dt("u64", "uint64", 64)
float8e4nv = _dt("fp8e4nv", "float8e4nv", 8)
float8e5 = _dt("fp8e5", "float8e5", 8)
float16 = _dt("fp16", "float16", 16)
bfloat16 = _dt("bf16", "bfloat16", 16)
float32 = _dt("fp32", "float32", 32)
float64 = _dt("fp64", "float64", 64)
float8e4b15 = _dt("fp8e4b15", "float8e4b15", 8)

# Triton's type names (`fp16`) and torch's (`float16`) to the dtype.
_BY_NAME = {t.name: t for t in list(globals().values()) if isinstance(t, dtype)}
_BY_NAME.update({t.attr: t for t in list(_BY_NAME.values())})
_BY_NAME.update({
    "bool": int1,
    "half": float16,
    "float": float32,
    "double": float64,
    "float8_e4m3fn": float8e4nv,
    "float8_e5m2": float8e5,
    "short": int16,
    "int": int32,
    "long": int64,
})


def _kernel_only(name):
    def f(*args, **kwargs):
        raise NotImplementedError(
            f"tl.{name} can only be called inside a @tawa.jit kernel, which the "
            f"compiler reads rather than Python running it")

    f.__name__ = name
    f.__qualname__ = name
    return f


# Everything a kernel body may call; outside a kernel, each says so.
_KERNEL_ONLY = """
program_id num_programs arange zeros zeros_like full load store dot dot_scaled
where maximum minimum max min sum reduce argmax argmin exp exp2 log log2 sqrt
sqrt_rn rsqrt abs fma sigmoid softmax cdiv cast broadcast_to broadcast reshape
view permute trans expand_dims join split cat atomic_add atomic_cas atomic_xchg
atomic_max atomic_min atomic_and atomic_or atomic_xor make_block_ptr advance
make_tensor_descriptor load_tensor_descriptor store_tensor_descriptor
static_range range static_assert static_print device_print device_assert
multiple_of max_contiguous max_constancy assume debug_barrier inline_asm_elementwise
cumsum cumprod sort flip clamp floor ceil sin cos erf div_rn fdiv umulhi
associative_scan histogram swizzle2d randint rand randn philox
""".split()

for _name in _KERNEL_ONLY:
    globals()[_name] = _kernel_only(_name)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(f"triton.language.{name}",
                      "tawa provides the parts of triton.language that the Triton tutorials use")


from . import math  # noqa: E402,F401
from . import extra  # noqa: E402,F401
