"""`tl.math`: kernel-only functions; see `tawa.language`."""

from . import _kernel_only

for _name in "exp exp2 log log2 sqrt rsqrt abs fma sin cos erf floor ceil div_rn fdiv umulhi".split():
    globals()[_name] = _kernel_only(f"math.{_name}")
