//! Calls of Triton's builtins (`tl.*`, `libdevice.*`, `triton.*`), Python
//! builtins on compile-time values, and methods of tensors and dtypes.
//!
//! Each builtin binds its arguments like Python would (positional, then
//! keywords by name, defaults for the rest), so misspelt keywords and wrong
//! argument counts get the same diagnostics everywhere.

use tawa_ir::{
    Axis, BinaryOp, CacheModifier, ConstValue, Elem, EvictionPolicy, InputPrecision, MemScope,
    MemSem, OpKind, Padding, ReduceKind, Rounding, ScalarType, ScanKind, Type, UnaryOp, Value,
};

use super::semantic::shape_text;
use super::value::{dtype_name, Arg, Class, Const, Val};
use super::{Lowerer, R};
use crate::ast::{BinOpKind, Expr, ExprKind, Keyword};
use crate::diagnostics::{Diagnostic, Span};

/// Evaluated arguments of one call.
#[derive(Clone, Debug)]
pub struct CallArgs {
    pub pos: Vec<Arg>,
    /// `(name, span of the name, value)`.
    pub kw: Vec<(String, Span, Arg)>,
    /// The whole call expression.
    pub span: Span,
    /// What is called, for messages (`tl.load`, `_attn_fwd_inner`).
    pub name: String,
}

impl CallArgs {
    /// Binds arguments to `params` (Python's rules); the first `required`
    /// parameters must be given.
    pub fn bind(&self, params: &[&str], required: usize) -> R<Vec<Option<Arg>>> {
        let name = self.name.clone();
        self.bind_named(params, required, &name)
    }

    pub fn bind_named(&self, params: &[&str], required: usize, fname: &str) -> R<Vec<Option<Arg>>> {
        let mut out: Vec<Option<Arg>> = vec![None; params.len()];
        if self.pos.len() > params.len() {
            let extra = &self.pos[params.len()];
            return Err(Diagnostic::error(
                extra.span.clone(),
                format!(
                    "`{fname}` takes at most {} argument{} but {} were given",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    self.pos.len()
                ),
            )
            .with_label("unexpected argument")
            .with_note(format!("parameters: {}", params.join(", "))));
        }
        for (i, a) in self.pos.iter().enumerate() {
            out[i] = Some(a.clone());
        }
        for (k, kspan, a) in &self.kw {
            let Some(i) = params.iter().position(|p| p == k) else {
                let mut d = Diagnostic::error(
                    kspan.clone(),
                    format!("`{fname}` has no parameter named `{k}`"),
                )
                .with_label("unknown keyword argument");
                if let Some(s) = suggest(k, params.iter().copied()) {
                    d = d.with_note(format!("help: did you mean `{s}`?"));
                } else {
                    d = d.with_note(format!("parameters: {}", params.join(", ")));
                }
                return Err(d);
            };
            if out[i].is_some() {
                return Err(Diagnostic::error(
                    kspan.clone(),
                    format!("`{fname}` got multiple values for `{k}`"),
                ));
            }
            out[i] = Some(a.clone());
        }
        for (i, p) in params.iter().enumerate().take(required) {
            if out[i].is_none() {
                return Err(Diagnostic::error(
                    self.span.clone(),
                    format!("`{fname}` is missing the argument `{p}`"),
                )
                .with_note(format!("parameters: {}", params.join(", "))));
            }
        }
        Ok(out)
    }

    /// Like [`CallArgs::bind`] for functions with a trailing `*rest`
    /// parameter: positional arguments past `params` are returned apart.
    pub fn bind_varargs(
        &self,
        params: &[&str],
        required: usize,
    ) -> R<(Vec<Option<Arg>>, Vec<Arg>)> {
        let split = self.pos.len().min(params.len());
        let head = CallArgs {
            pos: self.pos[..split].to_vec(),
            kw: self.kw.clone(),
            span: self.span.clone(),
            name: self.name.clone(),
        };
        Ok((head.bind(params, required)?, self.pos[split..].to_vec()))
    }
}

/// Python builtins usable in kernels.
pub fn python_builtin(name: &str) -> Option<Val> {
    match name {
        "range" | "min" | "max" | "len" | "int" | "float" | "bool" | "abs" | "isinstance"
        | "print" | "tuple" | "str" => Some(Val::Builtin(name.to_string())),
        "True" => Some(Val::Const(Const::Bool(true))),
        "False" => Some(Val::Const(Const::Bool(false))),
        "None" => Some(Val::Const(Const::None)),
        _ => None,
    }
}

/// The candidate closest to `name` in edit distance, if close enough to be
/// a plausible typo.
pub fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    // One- and two-letter names are too short for a typo to be guessed.
    if name.chars().count() <= 2 {
        return None;
    }
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = edit_distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let sub = prev[j - 1] + (a[i - 1] != b[j - 1]) as usize;
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn unary_for(name: &str) -> Option<UnaryOp> {
    Some(match name {
        "exp" | "fast_expf" => UnaryOp::Exp,
        "exp2" => UnaryOp::Exp2,
        "log" | "fast_logf" => UnaryOp::Log,
        "log2" => UnaryOp::Log2,
        "sqrt" | "sqrt_rn" => UnaryOp::Sqrt,
        "rsqrt" => UnaryOp::Rsqrt,
        "sin" => UnaryOp::Sin,
        "cos" => UnaryOp::Cos,
        "tan" => UnaryOp::Tan,
        "tanh" => UnaryOp::Tanh,
        "erf" => UnaryOp::Erf,
        "floor" => UnaryOp::Floor,
        "ceil" => UnaryOp::Ceil,
        "rint" | "nearbyint" => UnaryOp::Rint,
        "trunc" => UnaryOp::Trunc,
        "log1p" => UnaryOp::Log1p,
        "expm1" => UnaryOp::Expm1,
        "sinh" => UnaryOp::Sinh,
        "cosh" => UnaryOp::Cosh,
        "asin" => UnaryOp::Asin,
        "acos" => UnaryOp::Acos,
        "atan" => UnaryOp::Atan,
        "cbrt" => UnaryOp::Cbrt,
        "abs" | "fabs" => UnaryOp::Abs,
        "isnan" => UnaryOp::IsNan,
        "isinf" => UnaryOp::IsInf,
        _ => return None,
    })
}

fn reduce_for(name: &str) -> Option<ReduceKind> {
    Some(match name {
        "sum" => ReduceKind::Sum,
        "max" => ReduceKind::Max,
        "min" => ReduceKind::Min,
        "argmax" => ReduceKind::Argmax,
        "argmin" => ReduceKind::Argmin,
        "xor_sum" => ReduceKind::Xor,
        "reduce_or" => ReduceKind::Or,
        _ => return None,
    })
}

impl Lowerer<'_> {
    /// Evaluates call arguments (`*t` on a tuple expands).
    pub fn call_args(
        &mut self,
        args: &[Expr],
        keywords: &[Keyword],
        span: &Span,
        name: &str,
    ) -> R<CallArgs> {
        let mut pos = Vec::new();
        for a in args {
            if let ExprKind::Starred(inner) = &a.kind {
                match self.expr(inner)? {
                    Val::Tuple(items) => pos.extend(items.into_iter().map(|v| Arg {
                        val: v,
                        span: inner.span.clone(),
                    })),
                    other => {
                        return Err(Diagnostic::error(
                            inner.span.clone(),
                            format!("cannot unpack {} with `*`", self.describe(&other)),
                        ))
                    }
                }
            } else {
                pos.push(Arg {
                    val: self.expr(a)?,
                    span: a.span.clone(),
                });
            }
        }
        let mut kw = Vec::new();
        for k in keywords {
            if k.name.is_empty() {
                return Err(Diagnostic::error(
                    k.value.span.clone(),
                    "`**kwargs` in calls is not supported",
                ));
            }
            let v = self.expr(&k.value)?;
            kw.push((
                k.name.clone(),
                k.name_span.clone(),
                Arg {
                    val: v,
                    span: k.value.span.clone(),
                },
            ));
        }
        Ok(CallArgs {
            pos,
            kw,
            span: span.clone(),
            name: name.to_string(),
        })
    }

    // ---- argument helpers --------------------------------------------

    fn const_int(&self, a: &Arg, what: &str) -> R<i128> {
        match &a.val {
            Val::Const(c) => c.as_int().ok_or_else(|| {
                Diagnostic::error(
                    a.span.clone(),
                    format!(
                        "`{what}` must be an integer, found {}",
                        self.describe(&a.val)
                    ),
                )
            }),
            _ => Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "`{what}` must be a compile-time integer (`tl.constexpr`), found {}",
                    self.describe(&a.val)
                ),
            )),
        }
    }

    fn const_str(&self, a: &Option<Arg>, what: &str) -> R<String> {
        match a {
            None => Ok(String::new()),
            Some(Arg {
                val: Val::Const(Const::Str(s)),
                ..
            }) => Ok(s.clone()),
            Some(Arg {
                val: Val::Const(Const::None),
                ..
            }) => Ok(String::new()),
            Some(a) => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` must be a string, found {}", self.describe(&a.val)),
            )),
        }
    }

    fn const_bool(&self, a: &Option<Arg>, what: &str, default: bool) -> R<bool> {
        match a {
            None => Ok(default),
            Some(Arg {
                val: Val::Const(Const::None),
                ..
            }) => Ok(default),
            Some(Arg {
                val: Val::Const(c), ..
            }) => Ok(c.truthy()),
            Some(a) => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` must be a compile-time boolean"),
            )),
        }
    }

    fn dtype_arg(&self, a: &Arg, what: &str) -> R<Elem> {
        match &a.val {
            Val::Dtype(d) => Ok(*d),
            Val::Const(Const::Str(s)) => ScalarType::parse(s)
                .map(Elem::Scalar)
                .ok_or_else(|| Diagnostic::error(a.span.clone(), format!("unknown dtype `{s}`"))),
            _ => Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "`{what}` must be a dtype such as `tl.float16`, found {}",
                    self.describe(&a.val)
                ),
            )),
        }
    }

    fn scalar_dtype_arg(&self, a: &Arg, what: &str) -> R<ScalarType> {
        match self.dtype_arg(a, what)? {
            Elem::Scalar(s) => Ok(s),
            Elem::Ptr(_) => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` must be a numeric dtype, not a pointer"),
            )),
        }
    }

    /// A list of compile-time integers (`(0, 1)`, `[1]`, or one int).
    fn const_int_list(&self, a: &Arg, what: &str) -> R<Vec<i128>> {
        match &a.val {
            Val::Tuple(items) => items
                .iter()
                .map(|v| {
                    self.const_int(
                        &Arg {
                            val: v.clone(),
                            span: a.span.clone(),
                        },
                        what,
                    )
                })
                .collect(),
            Val::Const(Const::Int(i)) => Ok(vec![*i]),
            _ => Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "`{what}` must be a compile-time integer or a tuple of them, found {}",
                    self.describe(&a.val)
                ),
            )),
        }
    }

    /// The elements of a tuple argument, each with the argument's span.
    fn tuple_items(&self, a: &Arg, what: &str) -> R<Vec<Arg>> {
        match &a.val {
            Val::Tuple(items) => Ok(items
                .iter()
                .map(|v| Arg {
                    val: v.clone(),
                    span: a.span.clone(),
                })
                .collect()),
            _ => Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "`{what}` must be a tuple or list, found {}",
                    self.describe(&a.val)
                ),
            )),
        }
    }

    /// Shape given as varargs (`reshape(x, 4, 8)`) or one tuple.
    fn varargs_shape(&self, rest: &[Arg], what: &str, span: &Span) -> R<Vec<Arg>> {
        match rest {
            [one] if matches!(one.val, Val::Tuple(_)) => self.tuple_items(one, what),
            [] => Err(Diagnostic::error(
                span.clone(),
                format!("`{what}` is missing"),
            )),
            _ => Ok(rest.to_vec()),
        }
    }

    fn axis_arg(&self, a: &Arg, rank: usize) -> R<u32> {
        let i = self.const_int(a, "axis")?;
        let r = rank as i128;
        let j = if i < 0 { i + r } else { i };
        if j < 0 || j >= r {
            return Err(Diagnostic::error(
                a.span.clone(),
                format!("axis {i} is out of range for a {rank}-D tile"),
            ));
        }
        Ok(j as u32)
    }

    fn tensor_arg(&mut self, a: &Arg, what: &str) -> R<(Value, Vec<u32>, Elem)> {
        let v = self.to_ir(a)?;
        match self.ty(v) {
            Type::Tensor { shape, elem } => Ok((v, shape, elem)),
            t => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` needs a tile, found {t}"),
            )),
        }
    }

    fn float_value(&mut self, a: &Arg, what: &str) -> R<Value> {
        let v = self.to_ir(a)?;
        let ty = self.ty(v);
        match ty.scalar_type() {
            Some(s) if s.is_float() => Ok(v),
            _ => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` needs a floating-point argument, found {ty}"),
            )
            .with_note("convert it first, e.g. `x.to(tl.float32)`")),
        }
    }

    fn arg_or(b: &[Option<Arg>], i: usize) -> Option<&Arg> {
        b.get(i)
            .and_then(|a| a.as_ref())
            .filter(|a| !matches!(a.val, Val::Const(Const::None)))
    }

    // ---- dispatch ----------------------------------------------------

    pub fn call_builtin(&mut self, name: &str, call: CallArgs) -> R<Val> {
        let span = call.span.clone();
        let short = name
            .strip_prefix("tl.")
            .or_else(|| name.strip_prefix("libdevice."))
            .unwrap_or(name);
        let is_lib = name.starts_with("libdevice.");
        match name {
            "range" | "tl.range" | "tl.static_range" => Err(Diagnostic::error(
                span,
                format!("`{name}` can only be used as the iterable of a `for` loop"),
            )),
            "triton.jit"
            | "triton.autotune"
            | "triton.heuristics"
            | "triton.Config"
            | "triton.constexpr_function" => Err(Diagnostic::error(
                span,
                format!("`{name}` is host-side and cannot be called inside a kernel"),
            )),
            "triton.cdiv" | "tl.cdiv" => {
                let b = call.bind(&["x", "div"], 2)?;
                let (x, d) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let one = Arg {
                    val: Val::int(1),
                    span: d.span.clone(),
                };
                let dm1 = self.binary(BinOpKind::Sub, d.clone(), one, &span)?;
                let s = self.binary(
                    BinOpKind::Add,
                    x,
                    Arg {
                        val: dm1,
                        span: d.span.clone(),
                    },
                    &span,
                )?;
                self.binary(
                    BinOpKind::FloorDiv,
                    Arg {
                        val: s,
                        span: span.clone(),
                    },
                    d,
                    &span,
                )
            }
            "triton.next_power_of_2" => {
                let b = call.bind(&["n"], 1)?;
                let a = b[0].clone().expect("bound");
                let n = self.const_int(&a, "n")?;
                if n <= 0 {
                    return Ok(Val::int(1));
                }
                let mut p: i128 = 1;
                while p < n {
                    p <<= 1;
                }
                Ok(Val::int(p))
            }
            "min" | "max" => self.py_min_max(name == "min", call),
            "len" => {
                let b = call.bind(&["obj"], 1)?;
                let a = b[0].clone().expect("bound");
                match &a.val {
                    Val::Tuple(t) => Ok(Val::int(t.len() as i128)),
                    Val::Const(Const::Str(s)) => Ok(Val::int(s.chars().count() as i128)),
                    Val::Ir(v) => match self.ty(*v).shape().first() {
                        Some(&d) => Ok(Val::int(d as i128)),
                        None => Err(Diagnostic::error(a.span, "`len` of a scalar")),
                    },
                    other => Err(Diagnostic::error(
                        a.span.clone(),
                        format!("`len` of {}", self.describe(other)),
                    )),
                }
            }
            "int" | "float" | "bool" | "abs" => {
                let b = call.bind(&["x"], if name == "abs" { 1 } else { 0 })?;
                let Some(a) = b[0].clone() else {
                    return Ok(Val::Const(match name {
                        "int" => Const::Int(0),
                        "float" => Const::Float(0.0),
                        _ => Const::Bool(false),
                    }));
                };
                if name == "abs" && matches!(a.val, Val::Ir(_)) {
                    return self.unary_math(UnaryOp::Abs, &a, "abs", &span);
                }
                let Val::Const(c) = &a.val else {
                    return Err(Diagnostic::error(
                        a.span.clone(),
                        format!(
                            "`{name}(...)` needs a compile-time value, found {}",
                            self.describe(&a.val)
                        ),
                    )
                    .with_note("convert runtime values with `.to(tl.int32)` / `.to(tl.float32)`"));
                };
                let r = match (name, c) {
                    ("int", Const::Str(s)) => s.trim().parse::<i128>().ok().map(Const::Int),
                    ("float", Const::Str(s)) => match s.trim().to_ascii_lowercase().as_str() {
                        "inf" | "+inf" | "infinity" => Some(Const::Float(f64::INFINITY)),
                        "-inf" | "-infinity" => Some(Const::Float(f64::NEG_INFINITY)),
                        "nan" => Some(Const::Float(f64::NAN)),
                        t => t.parse::<f64>().ok().map(Const::Float),
                    },
                    ("int", Const::Float(f)) if f.is_finite() => {
                        Some(Const::Int(f.trunc() as i128))
                    }
                    ("int", c) => c.as_int().map(Const::Int),
                    ("float", c) => c.as_float().map(Const::Float),
                    ("bool", c) => Some(Const::Bool(c.truthy())),
                    ("abs", Const::Float(f)) => Some(Const::Float(f.abs())),
                    ("abs", c) => c.as_int().and_then(i128::checked_abs).map(Const::Int),
                    _ => None,
                };
                r.map(Val::Const).ok_or_else(|| {
                    Diagnostic::error(
                        a.span.clone(),
                        format!("cannot convert {} with `{name}`", self.describe(&a.val)),
                    )
                })
            }
            "tuple" => {
                let b = call.bind(&["iterable"], 0)?;
                match b[0].clone() {
                    None => Ok(Val::Tuple(vec![])),
                    Some(Arg {
                        val: Val::Tuple(t), ..
                    }) => Ok(Val::Tuple(t)),
                    Some(a) => Err(Diagnostic::error(
                        a.span.clone(),
                        format!("`tuple` of {}", self.describe(&a.val)),
                    )),
                }
            }
            "isinstance" => {
                let b = call.bind(&["obj", "class"], 2)?;
                let (o, c) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let classes: Vec<Val> = match &c.val {
                    Val::Tuple(t) => t.clone(),
                    v => vec![v.clone()],
                };
                let mut hit = false;
                for cls in classes {
                    let cls = match cls {
                        Val::Builtin(b) => match b.as_str() {
                            "int" => Val::Class(Class::Int),
                            "float" => Val::Class(Class::Float),
                            "bool" => Val::Class(Class::Bool),
                            "str" => Val::Class(Class::Str),
                            "tuple" => Val::Class(Class::Tuple),
                            _ => Val::Builtin(b),
                        },
                        other => other,
                    };
                    let Val::Class(k) = cls else {
                        return Err(Diagnostic::error(
                            c.span.clone(),
                            "`isinstance` needs a class such as `tl.constexpr` or `tl.tensor`",
                        ));
                    };
                    hit |= match (k, &o.val) {
                        (Class::Constexpr, Val::Const(_) | Val::Dtype(_) | Val::Tuple(_)) => true,
                        (Class::Tensor, Val::Ir(v)) => {
                            !matches!(self.ty(*v), Type::TensorDesc { .. })
                        }
                        (Class::TensorDescriptor, Val::Ir(v)) => {
                            matches!(self.ty(*v), Type::TensorDesc { .. })
                        }
                        (Class::Int, Val::Const(Const::Int(_) | Const::Bool(_))) => true,
                        (Class::Float, Val::Const(Const::Float(_))) => true,
                        (Class::Bool, Val::Const(Const::Bool(_))) => true,
                        (Class::Str, Val::Const(Const::Str(_))) => true,
                        (Class::Tuple, Val::Tuple(_)) => true,
                        (Class::Dtype, Val::Dtype(_)) => true,
                        _ => false,
                    };
                }
                Ok(Val::Const(Const::Bool(hit)))
            }
            "print" | "tl.device_print" => self.device_print(name, call),
            "tl.static_print" => {
                let parts: Vec<String> = call
                    .pos
                    .iter()
                    .map(|a| match &a.val {
                        Val::Const(Const::Str(s)) => s.clone(),
                        Val::Const(c) => c.repr(),
                        other => self.describe(other),
                    })
                    .collect();
                eprintln!("{}", parts.join(" "));
                Ok(Val::Const(Const::None))
            }
            "tl.static_assert" => {
                let b = call.bind(&["cond", "msg"], 1)?;
                let c = b[0].clone().expect("bound");
                let msg = self.const_str(&b[1], "msg")?;
                match self.static_truth(&c.val) {
                    Some(true) => Ok(Val::Const(Const::None)),
                    Some(false) => Err(Diagnostic::error(
                        c.span.clone(),
                        if msg.is_empty() {
                            "static assertion failed".to_string()
                        } else {
                            format!("static assertion failed: {msg}")
                        },
                    )
                    .with_label(format!("`{}` is false", self.text(&c.span)))),
                    None => Err(Diagnostic::error(
                        c.span.clone(),
                        "`tl.static_assert` needs a compile-time condition",
                    )
                    .with_note("use `tl.device_assert` for runtime checks")),
                }
            }
            "tl.device_assert" => {
                let b = call.bind(&["cond", "msg", "mask"], 1)?;
                let c = b[0].clone().expect("bound");
                let msg = self.const_str(&b[1], "msg")?;
                if let Some(t) = self.static_truth(&c.val) {
                    if !t {
                        return Err(Diagnostic::error(
                            c.span.clone(),
                            format!("device assertion is always false: {msg}"),
                        ));
                    }
                    return Ok(Val::Const(Const::None));
                }
                let v = self.to_ir(&c)?;
                let mut v = self.to_bool(v, &c.span)?;
                if let Some(m) = Self::arg_or(&b, 2) {
                    // Lanes outside the mask pass: cond | !mask.
                    let mv = self.to_ir(m)?;
                    let mv = self.to_bool(mv, &m.span)?;
                    let (cv, mv) = self.broadcast_pair(v, mv, &c.span, &m.span, &span)?;
                    let ty = self.ty(mv);
                    let not_m =
                        self.emit1(OpKind::Unary(UnaryOp::Not), vec![mv], ty.clone(), &span);
                    v = self.emit1(OpKind::Binary(BinaryOp::Or), vec![cv, not_m], ty, &span);
                }
                self.emit(OpKind::Assert { message: msg }, vec![v], vec![], &span);
                Ok(Val::Const(Const::None))
            }
            // Grid dependency control (Triton's `launch_pdl`): the kernel
            // asks to be launched as a programmatic dependent. The wait
            // such a kernel gets at entry precedes every global access,
            // so it covers this one wherever it stands, and letting the
            // next kernel start from the entry is only earlier than here.
            "tl.extra.cuda.gdc_wait" | "tl.extra.cuda.gdc_launch_dependents" => {
                call.bind(&[], 0)?;
                self.f.attrs.programmatic_launch_asked = true;
                Ok(Val::Const(Const::None))
            }
            "tl.debug_barrier" => {
                call.bind(&[], 0)?;
                self.emit(OpKind::DebugBarrier, vec![], vec![], &span);
                Ok(Val::Const(Const::None))
            }
            "tl.assume" => {
                call.bind(&["cond"], 1)?;
                Ok(Val::Const(Const::None))
            }
            "tl.program_id" | "tl.num_programs" => {
                let b = call.bind(&["axis"], 1)?;
                let a = b[0].clone().expect("bound");
                let i = self.const_int(&a, "axis")?;
                let axis = i64::try_from(i)
                    .ok()
                    .and_then(Axis::from_index)
                    .ok_or_else(|| {
                        Diagnostic::error(
                            a.span.clone(),
                            format!("grid axis must be 0, 1 or 2, found {i}"),
                        )
                    })?;
                let kind = if name == "tl.program_id" {
                    OpKind::ProgramId(axis)
                } else {
                    OpKind::NumPrograms(axis)
                };
                Ok(Val::Ir(self.emit1(kind, vec![], Type::I32, &span)))
            }
            "tl.arange" => {
                let b = call.bind(&["start", "end"], 2)?;
                let (s, e) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let start = self.const_int(&s, "start")?;
                let end = self.const_int(&e, "end")?;
                if end <= start {
                    return Err(Diagnostic::error(
                        span,
                        format!("`tl.arange({start}, {end})`: end must be greater than start"),
                    ));
                }
                let n = end.saturating_sub(start);
                if n > super::expr::MAX_TILE_ELEMENTS {
                    return Err(Diagnostic::error(span, format!("`tl.arange({start}, {end})` has {n} elements, more than Triton's limit of {} (2^20) per tile", super::expr::MAX_TILE_ELEMENTS))
                        .with_note("split the range over more programs or loop iterations"));
                }
                if n & (n - 1) != 0 {
                    return Err(Diagnostic::error(span, format!("`tl.arange({start}, {end})` has {n} elements, which is not a power of two"))
                        .with_note("Triton ranges have power-of-two lengths; round up and mask the extra elements"));
                }
                let (Ok(start), Ok(end)) = (i32::try_from(start), i32::try_from(end)) else {
                    return Err(Diagnostic::error(
                        span,
                        "`tl.arange` bounds must fit in int32",
                    ));
                };
                Ok(Val::Ir(self.emit1(
                    OpKind::MakeRange { start, end },
                    vec![],
                    Type::tensor(vec![n as u32], Elem::Scalar(ScalarType::I32)),
                    &span,
                )))
            }
            "tl.zeros" | "tl.full" => {
                let (shape_a, value, dtype_a) = if name == "tl.zeros" {
                    let b = call.bind(&["shape", "dtype"], 2)?;
                    (
                        b[0].clone().expect("bound"),
                        Arg {
                            val: Val::int(0),
                            span: span.clone(),
                        },
                        b[1].clone().expect("bound"),
                    )
                } else {
                    let b = call.bind(&["shape", "value", "dtype"], 3)?;
                    (
                        b[0].clone().expect("bound"),
                        b[1].clone().expect("bound"),
                        b[2].clone().expect("bound"),
                    )
                };
                let shape = self.shape_arg(&shape_a, "shape")?;
                let st = self.scalar_dtype_arg(&dtype_a, "dtype")?;
                self.full(&shape, &value, st, &span).map(Val::Ir)
            }
            "tl.zeros_like" | "tl.full_like" => {
                let (input, value, dtype) = if name == "tl.zeros_like" {
                    let b = call.bind(&["input", "dtype"], 1)?;
                    (
                        b[0].clone().expect("bound"),
                        Arg {
                            val: Val::int(0),
                            span: span.clone(),
                        },
                        b[1].clone(),
                    )
                } else {
                    let b = call.bind(&["input", "fill_value", "dtype"], 2)?;
                    (
                        b[0].clone().expect("bound"),
                        b[1].clone().expect("bound"),
                        b[2].clone(),
                    )
                };
                let v = self.to_ir(&input)?;
                let ty = self.ty(v);
                let st = match dtype.filter(|d| !matches!(d.val, Val::Const(Const::None))) {
                    Some(d) => self.scalar_dtype_arg(&d, "dtype")?,
                    None => ty.scalar_type().ok_or_else(|| {
                        Diagnostic::error(input.span.clone(), format!("`{name}` of {ty}"))
                    })?,
                };
                let shape = ty.shape().to_vec();
                self.full(&shape, &value, st, &span).map(Val::Ir)
            }
            "tl.load" => self.load(call).map(Val::Ir),
            "tl.store" => {
                self.store(call)?;
                Ok(Val::Const(Const::None))
            }
            "tl.dot" => {
                let b = call.bind(
                    &[
                        "input",
                        "other",
                        "acc",
                        "input_precision",
                        "allow_tf32",
                        "max_num_imprecise_acc",
                        "out_dtype",
                    ],
                    2,
                )?;
                let (x, y) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let xv = self.to_ir(&x)?;
                let yv = self.to_ir(&y)?;
                let acc = match Self::arg_or(&b, 2) {
                    Some(a) => Some(self.to_ir(a)?),
                    None => None,
                };
                let mut precision = InputPrecision::Tf32;
                if let Some(a) = Self::arg_or(&b, 4) {
                    if !self.const_bool(&Some(a.clone()), "allow_tf32", true)? {
                        precision = InputPrecision::Ieee;
                    }
                }
                if let Some(a) = Self::arg_or(&b, 3) {
                    precision = match self
                        .const_str(&Some(a.clone()), "input_precision")?
                        .as_str()
                    {
                        "tf32" => InputPrecision::Tf32,
                        "tf32x3" => InputPrecision::Tf32x3,
                        "ieee" => InputPrecision::Ieee,
                        other => {
                            return Err(Diagnostic::error(
                                a.span.clone(),
                                format!("unknown input_precision `{other}`"),
                            )
                            .with_note("expected \"tf32\", \"tf32x3\" or \"ieee\""))
                        }
                    };
                }
                let imprecise = match Self::arg_or(&b, 5) {
                    Some(a) => Some(
                        u32::try_from(self.const_int(a, "max_num_imprecise_acc")?).map_err(
                            |_| {
                                Diagnostic::error(
                                    a.span.clone(),
                                    "`max_num_imprecise_acc` must be non-negative",
                                )
                            },
                        )?,
                    ),
                    None => None,
                };
                let out = match Self::arg_or(&b, 6) {
                    Some(a) => Some(self.scalar_dtype_arg(a, "out_dtype")?),
                    None => None,
                };
                // Triton's default out_dtype is float32; only a non-default
                // value constrains an int8 dot.
                let out = match (out, self.ty(xv).scalar_type()) {
                    (Some(ScalarType::F32), Some(s)) if s.is_int() => None,
                    (o, _) => o,
                };
                self.dot(
                    xv, yv, acc, precision, imprecise, out, &x.span, &y.span, &span,
                )
                .map(Val::Ir)
            }
            "tl.sum" | "tl.max" | "tl.min" | "tl.argmax" | "tl.argmin" | "tl.xor_sum"
            | "tl.reduce_or" => self.reduction(short, call),
            "tl.cumsum" | "tl.cumprod" => {
                let b = call.bind(&["input", "axis", "reverse", "dtype"], 1)?;
                let x = b[0].clone().expect("bound");
                let (mut v, shape, elem) = self.tensor_arg(&x, name)?;
                let axis = match Self::arg_or(&b, 1) {
                    Some(a) => self.axis_arg(a, shape.len())?,
                    None => 0,
                };
                let reverse = self.const_bool(&b[2], "reverse", false)?;
                if let Some(d) = Self::arg_or(&b, 3) {
                    let st = self.scalar_dtype_arg(d, "dtype")?;
                    v = self.cast(v, Elem::Scalar(st), &span)?;
                } else if let Some(s) = elem.scalar() {
                    if s.is_int() && s.bits() < 32 {
                        let to = if s.is_unsigned_int() {
                            ScalarType::U32
                        } else {
                            ScalarType::I32
                        };
                        v = self.cast(v, Elem::Scalar(to), &span)?;
                    }
                }
                let kind = if short == "cumsum" {
                    ScanKind::Sum
                } else {
                    ScanKind::Prod
                };
                let ty = self.ty(v);
                Ok(Val::Ir(self.emit1(
                    OpKind::Scan {
                        kind,
                        axis,
                        reverse,
                    },
                    vec![v],
                    ty,
                    &span,
                )))
            }
            "tl.sigmoid" => {
                let b = call.bind(&["x"], 1)?;
                let x = b[0].clone().expect("bound");
                let v = self.float_value(&x, name)?;
                // 1 / (1 + exp(-x)), as Triton's `sigmoid`.
                let ty = self.ty(v);
                let neg = self.emit1(OpKind::Unary(UnaryOp::Neg), vec![v], ty.clone(), &span);
                let e = self.emit1(OpKind::Unary(UnaryOp::Exp), vec![neg], ty.clone(), &span);
                let sp = span.clone();
                let one = Arg {
                    val: Val::Const(Const::Float(1.0)),
                    span: sp.clone(),
                };
                let den = self.binary(
                    BinOpKind::Add,
                    one.clone(),
                    Arg {
                        val: Val::Ir(e),
                        span: sp.clone(),
                    },
                    &sp,
                )?;
                self.binary(
                    BinOpKind::Div,
                    one,
                    Arg {
                        val: den,
                        span: sp.clone(),
                    },
                    &sp,
                )
            }
            "tl.softmax" => {
                let b = call.bind(&["x", "dim", "keep_dims", "ieee_rounding"], 1)?;
                let x = b[0].clone().expect("bound");
                let (v, shape, _) = self.tensor_arg(&x, name)?;
                self.float_value(&x, name)?;
                let axis = match Self::arg_or(&b, 1) {
                    Some(a) => self.axis_arg(a, shape.len())?,
                    None => shape.len() as u32 - 1,
                };
                let m = self.reduce_value(v, ReduceKind::Max, axis, true, &span)?;
                let z = self.binary(
                    BinOpKind::Sub,
                    Arg {
                        val: Val::Ir(v),
                        span: span.clone(),
                    },
                    Arg {
                        val: Val::Ir(m),
                        span: span.clone(),
                    },
                    &span,
                )?;
                let zv = self.to_ir(&Arg {
                    val: z,
                    span: span.clone(),
                })?;
                let zt = self.ty(zv);
                let num = self.emit1(OpKind::Unary(UnaryOp::Exp), vec![zv], zt, &span);
                let den = self.reduce_value(num, ReduceKind::Sum, axis, true, &span)?;
                self.binary(
                    BinOpKind::Div,
                    Arg {
                        val: Val::Ir(num),
                        span: span.clone(),
                    },
                    Arg {
                        val: Val::Ir(den),
                        span: span.clone(),
                    },
                    &span,
                )
            }
            "tl.fma" | "libdevice.fma" => {
                let b = call.bind(&["x", "y", "z"], 3)?;
                let (x, y, z) = (
                    b[0].clone().expect("bound"),
                    b[1].clone().expect("bound"),
                    b[2].clone().expect("bound"),
                );
                let (xv, yv, st) = self.promote_pair(&x, &y, false, "fma", &span)?;
                let xa = Arg {
                    val: Val::Ir(xv),
                    span: x.span.clone(),
                };
                let (xv2, zv, st2) = self.promote_pair(&xa, &z, false, "fma", &span)?;
                let _ = xv2;
                if st2 != st || !st.is_float() {
                    return Err(Diagnostic::error(
                        span,
                        "`fma` needs floating-point operands of one type",
                    ));
                }
                let [xv, yv, zv] =
                    self.broadcast_all([(xv, &x.span), (yv, &y.span), (zv, &z.span)], &span)?;
                let ty = self.ty(xv);
                Ok(Val::Ir(self.emit1(
                    OpKind::Fma,
                    vec![xv, yv, zv],
                    ty,
                    &span,
                )))
            }
            "tl.where" => {
                let b = call.bind(&["condition", "x", "y"], 3)?;
                let (c, x, y) = (
                    b[0].clone().expect("bound"),
                    b[1].clone().expect("bound"),
                    b[2].clone().expect("bound"),
                );
                if let Some(t) = self.static_truth(&c.val) {
                    // Triton still promotes both arms; keep their common type.
                    let (xv, yv, _) = self.promote_pair(&x, &y, false, "where", &span)?;
                    return Ok(Val::Ir(if t { xv } else { yv }));
                }
                let cv = self.to_ir(&c)?;
                let cv = self.to_bool(cv, &c.span)?;
                let (xv, yv) = if self.ty_is_ptr(&x.val) || self.ty_is_ptr(&y.val) {
                    let xv = self.to_ir(&x)?;
                    let yv = self.to_ir(&y)?;
                    if self.ty(xv).elem() != self.ty(yv).elem() {
                        return Err(Diagnostic::error(
                            span,
                            "`tl.where` arms are pointers of different types",
                        ));
                    }
                    (xv, yv)
                } else {
                    let (xv, yv, _) = self.promote_pair(&x, &y, false, "where", &span)?;
                    (xv, yv)
                };
                let [cv, xv, yv] =
                    self.broadcast_all([(cv, &c.span), (xv, &x.span), (yv, &y.span)], &span)?;
                let ty = self.ty(xv);
                Ok(Val::Ir(self.emit1(
                    OpKind::Select,
                    vec![cv, xv, yv],
                    ty,
                    &span,
                )))
            }
            "tl.maximum" | "tl.minimum" | "libdevice.fmax" | "libdevice.fmin" => {
                let b = call.bind(&["x", "y", "propagate_nan"], 2)?;
                let (x, y) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let op = if matches!(short, "maximum" | "fmax") {
                    BinaryOp::Max
                } else {
                    BinaryOp::Min
                };
                self.min_max_values(op, x, y, &span)
            }
            "tl.clamp" => {
                let b = call.bind(&["x", "min", "max", "propagate_nan"], 3)?;
                let (x, lo, hi) = (
                    b[0].clone().expect("bound"),
                    b[1].clone().expect("bound"),
                    b[2].clone().expect("bound"),
                );
                let m = self.min_max_values(BinaryOp::Max, x.clone(), lo, &span)?;
                self.min_max_values(
                    BinaryOp::Min,
                    Arg {
                        val: m,
                        span: x.span.clone(),
                    },
                    hi,
                    &span,
                )
            }
            "tl.div_rn" | "tl.fdiv" | "libdevice.div_rn" | "libdevice.fast_dividef" => {
                let b = call.bind(&["x", "y", "ieee_rounding"], 2)?;
                let (x, y) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let (xv, yv, st) = self.promote_pair(&x, &y, true, short, &span)?;
                if !st.is_float() {
                    return Err(Diagnostic::error(
                        span,
                        format!("`{name}` needs floating-point operands"),
                    ));
                }
                // Triton: `div_rn` rounds correctly; `fdiv` does only when
                // asked (`ieee_rounding=True`), else it is `/`.
                let ieee = match name {
                    "tl.div_rn" | "libdevice.div_rn" => true,
                    "tl.fdiv" => self.const_bool(&b[2], "ieee_rounding", false)?,
                    _ => false,
                };
                let op = if ieee { BinaryOp::DivRn } else { BinaryOp::Div };
                let ty = self.ty(xv);
                Ok(Val::Ir(self.emit1(
                    OpKind::Binary(op),
                    vec![xv, yv],
                    ty,
                    &span,
                )))
            }
            "libdevice.pow" | "libdevice.powf" | "libdevice.atan2" | "libdevice.fmod" => {
                let b = call.bind(&["x", "y"], 2)?;
                let (x, y) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let (xv, yv, st) = self.promote_pair(&x, &y, false, short, &span)?;
                if !st.is_float() {
                    return Err(Diagnostic::error(
                        span,
                        format!("`{name}` needs floating-point operands"),
                    )
                    .with_note("convert with `.to(tl.float32)`"));
                }
                let op = match short {
                    "atan2" => BinaryOp::Atan2,
                    "fmod" => BinaryOp::Rem,
                    _ => BinaryOp::Pow,
                };
                let ty = self.ty(xv);
                Ok(Val::Ir(self.emit1(
                    OpKind::Binary(op),
                    vec![xv, yv],
                    ty,
                    &span,
                )))
            }
            "libdevice.log10" | "libdevice.exp10" | "libdevice.erfc" => {
                let b = call.bind(&["x"], 1)?;
                let x = b[0].clone().expect("bound");
                let v = self.float_value(&x, name)?;
                let ty = self.ty(v);
                let sp = span.clone();
                match short {
                    "log10" => {
                        let l = self.emit1(OpKind::Unary(UnaryOp::Log2), vec![v], ty, &sp);
                        self.binary(
                            BinOpKind::Mul,
                            Arg {
                                val: Val::Ir(l),
                                span: sp.clone(),
                            },
                            Arg {
                                val: Val::Const(Const::Float(std::f64::consts::LOG10_2)),
                                span: sp.clone(),
                            },
                            &sp,
                        )
                    }
                    "exp10" => {
                        let s = self.binary(
                            BinOpKind::Mul,
                            Arg {
                                val: Val::Ir(v),
                                span: sp.clone(),
                            },
                            Arg {
                                val: Val::Const(Const::Float(std::f64::consts::LOG2_10)),
                                span: sp.clone(),
                            },
                            &sp,
                        )?;
                        let sv = self.to_ir(&Arg {
                            val: s,
                            span: sp.clone(),
                        })?;
                        Ok(Val::Ir(self.emit1(
                            OpKind::Unary(UnaryOp::Exp2),
                            vec![sv],
                            ty,
                            &sp,
                        )))
                    }
                    _ => {
                        let e = self.emit1(OpKind::Unary(UnaryOp::Erf), vec![v], ty, &sp);
                        self.binary(
                            BinOpKind::Sub,
                            Arg {
                                val: Val::Const(Const::Float(1.0)),
                                span: sp.clone(),
                            },
                            Arg {
                                val: Val::Ir(e),
                                span: sp.clone(),
                            },
                            &sp,
                        )
                    }
                }
            }
            "tl.trans" | "tl.permute" => {
                let (b, rest) = call.bind_varargs(&["input"], 1)?;
                let x = b[0].clone().expect("bound");
                let (v, shape, elem) = self.tensor_arg(&x, name)?;
                let perm: Vec<u32> = if rest.is_empty() {
                    if name == "tl.permute" {
                        return Err(Diagnostic::error(
                            span,
                            "`tl.permute` needs the new order of dimensions",
                        ));
                    }
                    if shape.len() != 2 {
                        return Err(Diagnostic::error(
                            x.span.clone(),
                            format!(
                                "`tl.trans` without dims needs a 2-D tile, found {}",
                                self.ty(v)
                            ),
                        ));
                    }
                    vec![1, 0]
                } else {
                    let items = self.varargs_shape(&rest, "dims", &span)?;
                    let mut p = Vec::new();
                    for a in &items {
                        p.push(self.axis_arg(a, shape.len())?);
                    }
                    let mut sorted = p.clone();
                    sorted.sort_unstable();
                    if sorted != (0..shape.len() as u32).collect::<Vec<_>>() {
                        return Err(Diagnostic::error(
                            span,
                            format!(
                                "dims {} are not a permutation of the {} dimensions",
                                shape_text(&p),
                                shape.len()
                            ),
                        ));
                    }
                    p
                };
                let new_shape: Vec<u32> = perm.iter().map(|&i| shape[i as usize]).collect();
                Ok(Val::Ir(self.emit1(
                    OpKind::Trans { perm },
                    vec![v],
                    Type::tensor(new_shape, elem),
                    &span,
                )))
            }
            "tl.reshape" | "tl.view" | "tl.ravel" => {
                let (b, rest) = call.bind_varargs(&["input"], 1)?;
                let x = b[0].clone().expect("bound");
                let v = self.to_ir(&x)?;
                let ty = self.ty(v);
                let elem = ty.elem().ok_or_else(|| {
                    Diagnostic::error(x.span.clone(), format!("cannot reshape {ty}"))
                })?;
                let rest: Vec<Arg> = rest.into_iter().collect();
                let shape = if name == "tl.ravel" {
                    vec![ty.numel() as u32]
                } else {
                    let items = self.varargs_shape(&rest, "shape", &span)?;
                    let tuple = Arg {
                        val: Val::Tuple(items.iter().map(|a| a.val.clone()).collect()),
                        span: items
                            .first()
                            .map(|a| a.span.clone())
                            .unwrap_or(span.clone()),
                    };
                    self.shape_arg(&tuple, "shape")?
                };
                let n: u64 = shape.iter().map(|&d| d as u64).product();
                if n != ty.numel() {
                    return Err(Diagnostic::error(
                        span,
                        format!(
                            "cannot reshape {ty} ({} elements) to {} ({n} elements)",
                            ty.numel(),
                            shape_text(&shape)
                        ),
                    ));
                }
                if ty.is_scalar() {
                    return Ok(Val::Ir(self.emit1(
                        OpKind::Splat,
                        vec![v],
                        Type::tensor(shape, elem),
                        &span,
                    )));
                }
                if ty.shape() == shape.as_slice() {
                    return Ok(Val::Ir(v));
                }
                Ok(Val::Ir(self.emit1(
                    OpKind::Reshape,
                    vec![v],
                    Type::tensor(shape, elem),
                    &span,
                )))
            }
            "tl.expand_dims" => {
                let b = call.bind(&["input", "axis"], 2)?;
                let (x, a) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let v = self.to_ir(&x)?;
                let ty = self.ty(v);
                let elem = ty.elem().ok_or_else(|| {
                    Diagnostic::error(x.span.clone(), format!("cannot expand {ty}"))
                })?;
                let axes = self.const_int_list(&a, "axis")?;
                let mut shape = ty.shape().to_vec();
                let mut cur = v;
                if shape.is_empty() {
                    cur = self.emit1(OpKind::Splat, vec![v], Type::tensor(vec![1], elem), &span);
                    shape = vec![1];
                    if axes.len() == 1 {
                        return Ok(Val::Ir(cur));
                    }
                }
                let final_rank = ty.shape().len() + axes.len();
                let mut norm: Vec<u32> = Vec::new();
                for &ax in &axes {
                    let j = if ax < 0 { ax + final_rank as i128 } else { ax };
                    if j < 0 || j >= final_rank as i128 {
                        return Err(Diagnostic::error(
                            a.span.clone(),
                            format!("axis {ax} is out of range"),
                        ));
                    }
                    norm.push(j as u32);
                }
                norm.sort_unstable();
                for ax in norm {
                    if shape.len() >= final_rank {
                        break;
                    }
                    shape.insert(ax as usize, 1);
                    cur = self.emit1(
                        OpKind::ExpandDims { axis: ax },
                        vec![cur],
                        Type::tensor(shape.clone(), elem),
                        &span,
                    );
                }
                Ok(Val::Ir(cur))
            }
            "tl.broadcast_to" => {
                let (b, rest) = call.bind_varargs(&["input"], 1)?;
                let x = b[0].clone().expect("bound");
                let v = self.to_ir(&x)?;
                let items = self.varargs_shape(&rest, "shape", &span)?;
                let tuple = Arg {
                    val: Val::Tuple(items.iter().map(|a| a.val.clone()).collect()),
                    span: span.clone(),
                };
                let shape = self.shape_arg(&tuple, "shape")?;
                self.broadcast_to(v, &shape, &span).map(Val::Ir)
            }
            "tl.join" | "tl.interleave" => {
                let b = call.bind(&["a", "b"], 2)?;
                let (x, y) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let (xv, yv, _) = self.promote_pair(&x, &y, false, name, &span)?;
                let ty = self.ty(xv);
                let elem = ty.elem().expect("promote_pair gives numbers");
                let mut shape = ty.shape().to_vec();
                if name == "tl.interleave" && shape.is_empty() {
                    return Err(Diagnostic::error(
                        span,
                        "`tl.interleave` needs tiles, not scalars",
                    ));
                }
                shape.push(2);
                let j = self.emit1(
                    OpKind::Join,
                    vec![xv, yv],
                    Type::tensor(shape.clone(), elem),
                    &span,
                );
                if name == "tl.join" {
                    return Ok(Val::Ir(j));
                }
                // interleave(a, b) = join(a, b) with the last two dims merged.
                shape.pop();
                let last = shape.pop().expect("checked non-scalar");
                shape.push(2 * last);
                Ok(Val::Ir(self.emit1(
                    OpKind::Reshape,
                    vec![j],
                    Type::tensor(shape, elem),
                    &span,
                )))
            }
            "tl.split" => {
                let b = call.bind(&["a"], 1)?;
                let x = b[0].clone().expect("bound");
                let (v, shape, elem) = self.tensor_arg(&x, name)?;
                if shape.last() != Some(&2) {
                    return Err(Diagnostic::error(x.span.clone(), format!("`tl.split` needs a last dimension of size 2, found {}", self.ty(v)))
                        .with_note("reshape first, e.g. `tl.reshape(x, (M, 2, N // 2))` then `tl.permute(x, (0, 2, 1))`"));
                }
                let half = &shape[..shape.len() - 1];
                let rty = if half.is_empty() {
                    Type::Scalar(elem)
                } else {
                    Type::tensor(half.to_vec(), elem)
                };
                let op = self.emit(OpKind::Split, vec![v], vec![rty.clone(), rty], &span);
                let r = self.f.ops[op].results.clone();
                Ok(Val::Tuple(vec![Val::Ir(r[0]), Val::Ir(r[1])]))
            }
            "tl.broadcast" => {
                let b = call.bind(&["input", "other"], 2)?;
                let (x, y) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let xv = self.to_ir(&x)?;
                let yv = self.to_ir(&y)?;
                let (xv, yv) = self.broadcast_pair(xv, yv, &x.span, &y.span, &span)?;
                Ok(Val::Tuple(vec![Val::Ir(xv), Val::Ir(yv)]))
            }
            "tl.make_block_ptr" => self.make_block_ptr(call).map(Val::Ir),
            "tl.advance" => {
                let b = call.bind(&["base", "offsets"], 2)?;
                let (p, o) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let pv = self.to_ir(&p)?;
                let ty = self.ty(pv);
                let Type::BlockPtr { shape, .. } = &ty else {
                    return Err(Diagnostic::error(
                        p.span.clone(),
                        format!("`tl.advance` needs a block pointer, found {ty}"),
                    ));
                };
                let offs = self.tuple_items(&o, "offsets")?;
                if offs.len() != shape.len() {
                    return Err(Diagnostic::error(
                        o.span.clone(),
                        format!(
                            "{} offsets for a {}-D block pointer",
                            offs.len(),
                            shape.len()
                        ),
                    ));
                }
                let mut operands = vec![pv];
                for a in &offs {
                    operands.push(self.int_operand(a, ScalarType::I32, "offset")?);
                }
                Ok(Val::Ir(self.emit1(OpKind::Advance, operands, ty, &span)))
            }
            "tl.make_tensor_descriptor" => self.make_tensor_descriptor(call).map(Val::Ir),
            "tl.multiple_of" | "tl.max_contiguous" | "tl.max_constancy" => {
                let b = call.bind(&["input", "values"], 2)?;
                let (x, vals) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
                let v = self.to_ir(&x)?;
                let rank = self.ty(v).shape().len().max(1);
                let list = self.const_int_list(&vals, "values")?;
                if list.len() != rank {
                    return Err(Diagnostic::error(
                        vals.span.clone(),
                        format!(
                            "`{name}` needs {rank} value(s) for {}, found {}",
                            self.ty(v),
                            list.len()
                        ),
                    ));
                }
                let list: Vec<u32> = list
                    .iter()
                    .map(|&i| u32::try_from(i).ok().filter(|&u| u > 0))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        Diagnostic::error(
                            vals.span.clone(),
                            "hint values must be positive integers",
                        )
                    })?;
                // Consecutive hints on one value merge into one op.
                let (src, mut mo, mut mc, mut mk) =
                    match self.f.def_op(v).map(|op| self.f.ops[op].kind.clone()) {
                        Some(OpKind::Hint {
                            multiple_of,
                            max_contiguous,
                            max_constancy,
                        }) if self.f.ops[self.f.def_op(v).expect("checked")]
                            .operands
                            .len()
                            == 1 =>
                        {
                            (
                                self.f.ops[self.f.def_op(v).expect("checked")].operands[0],
                                multiple_of,
                                max_contiguous,
                                max_constancy,
                            )
                        }
                        _ => (v, vec![], vec![], vec![]),
                    };
                match short {
                    "multiple_of" => mo = list,
                    "max_contiguous" => mc = list,
                    _ => mk = list,
                }
                let ty = self.ty(src);
                Ok(Val::Ir(self.emit1(
                    OpKind::Hint {
                        multiple_of: mo,
                        max_contiguous: mc,
                        max_constancy: mk,
                    },
                    vec![src],
                    ty,
                    &span,
                )))
            }
            "tl.atomic_add" | "tl.atomic_max" | "tl.atomic_min" | "tl.atomic_and"
            | "tl.atomic_or" | "tl.atomic_xor" | "tl.atomic_xchg" => {
                self.atomic_rmw(short, call).map(Val::Ir)
            }
            "tl.atomic_cas" => self.atomic_cas(call).map(Val::Ir),
            "tl.cast" => {
                let b = call.bind(&["input", "dtype", "fp_downcast_rounding", "bitcast"], 2)?;
                let x = b[0].clone().expect("bound");
                self.cast_call(x, &b[1..], &span)
            }
            "tl.pointer_type" => {
                let b = call.bind(&["element_ty", "address_space", "const"], 1)?;
                let e = self.scalar_dtype_arg(b[0].as_ref().expect("bound"), "element_ty")?;
                Ok(Val::Dtype(Elem::Ptr(e)))
            }
            "tl.swizzle2d" => {
                let b = call.bind(&["i", "j", "size_i", "size_j", "size_g"], 5)?;
                let a: Vec<Arg> = b.into_iter().map(|a| a.expect("bound")).collect();
                self.swizzle2d(&a, &span)
            }
            _ => {
                if let Some(op) = unary_for(short) {
                    let b = call.bind(&["x"], 1)?;
                    let x = b[0].clone().expect("bound");
                    return self.unary_math(op, &x, name, &span);
                }
                if is_lib || name.starts_with("tl.") {
                    return Err(Diagnostic::error(
                        span,
                        format!("`{name}` is not supported by tawa-rs yet"),
                    ));
                }
                Err(Diagnostic::error(
                    span,
                    format!("`{name}` cannot be called in a kernel"),
                ))
            }
        }
    }

    fn ty_is_ptr(&self, v: &Val) -> bool {
        matches!(v, Val::Ir(x) if self.ty(*x).elem().is_some_and(|e| e.is_ptr()))
    }

    /// An integer scalar operand converted to `st`.
    fn int_operand(&mut self, a: &Arg, st: ScalarType, what: &str) -> R<Value> {
        match &a.val {
            Val::Const(Const::Int(_) | Const::Bool(_)) => self.coerce(a, st, &a.span),
            Val::Ir(v) => {
                let ty = self.ty(*v);
                match ty {
                    Type::Scalar(Elem::Scalar(s)) if s.is_int() => {
                        self.cast(*v, Elem::Scalar(st), &a.span)
                    }
                    t => Err(Diagnostic::error(
                        a.span.clone(),
                        format!("{what} must be an integer scalar, found {t}"),
                    )),
                }
            }
            other => Err(Diagnostic::error(
                a.span.clone(),
                format!("{what} must be an integer, found {}", self.describe(other)),
            )),
        }
    }

    fn full(&mut self, shape: &[u32], value: &Arg, st: ScalarType, span: &Span) -> R<Value> {
        let v = match &value.val {
            Val::Const(c @ (Const::Int(_) | Const::Float(_) | Const::Bool(_))) => {
                let c = c.clone();
                if shape.is_empty() {
                    return Ok(self.const_scalar(&c, st, span));
                }
                let cv = if st.is_float() {
                    ConstValue::Float(c.as_float().unwrap_or(0.0))
                } else if st == ScalarType::I1 {
                    ConstValue::Bool(c.truthy())
                } else {
                    ConstValue::Int(match c {
                        Const::Float(f) => f as i64,
                        other => other.as_int().unwrap_or(0) as i64,
                    })
                };
                return Ok(self.constant(cv, Type::tensor(shape.to_vec(), Elem::Scalar(st)), span));
            }
            _ => {
                let v = self.to_ir(value)?;
                if !self.ty(v).is_scalar() {
                    return Err(Diagnostic::error(
                        value.span.clone(),
                        format!("the fill value must be a scalar, found {}", self.ty(v)),
                    ));
                }
                self.cast(v, Elem::Scalar(st), span)?
            }
        };
        self.broadcast_to(v, shape, span)
    }

    fn unary_math(&mut self, op: UnaryOp, x: &Arg, name: &str, span: &Span) -> R<Val> {
        let v = self.to_ir(x)?;
        let ty = self.ty(v);
        let st = ty
            .scalar_type()
            .ok_or_else(|| Diagnostic::error(x.span.clone(), format!("`{name}` of {ty}")))?;
        if op.float_only() && !st.is_float() {
            return Err(Diagnostic::error(
                x.span.clone(),
                format!("`{name}` needs a floating-point argument, found {ty}"),
            )
            .with_note("convert it first, e.g. `x.to(tl.float32)`"));
        }
        let rty = if matches!(op, UnaryOp::IsNan | UnaryOp::IsInf) {
            ty.with_elem(Elem::Scalar(ScalarType::I1))
        } else {
            ty
        };
        Ok(Val::Ir(self.emit1(OpKind::Unary(op), vec![v], rty, span)))
    }

    fn min_max_values(&mut self, op: BinaryOp, x: Arg, y: Arg, span: &Span) -> R<Val> {
        if let (Val::Const(a), Val::Const(b)) = (&x.val, &y.val) {
            let pick_a = match (a.as_float(), b.as_float()) {
                (Some(p), Some(q)) => {
                    if op == BinaryOp::Max {
                        p >= q
                    } else {
                        p <= q
                    }
                }
                _ => return Err(Diagnostic::error(span.clone(), "min/max of non-numbers")),
            };
            return Ok(if pick_a { x.val } else { y.val });
        }
        let (xv, yv, _) = self.promote_pair(
            &x,
            &y,
            false,
            if op == BinaryOp::Max {
                "maximum"
            } else {
                "minimum"
            },
            span,
        )?;
        let ty = self.ty(xv);
        Ok(Val::Ir(self.emit1(
            OpKind::Binary(op),
            vec![xv, yv],
            ty,
            span,
        )))
    }

    fn py_min_max(&mut self, is_min: bool, call: CallArgs) -> R<Val> {
        let name = if is_min { "min" } else { "max" };
        let items: Vec<Arg> = match call.pos.as_slice() {
            [one] => match &one.val {
                Val::Tuple(t) => t
                    .iter()
                    .map(|v| Arg {
                        val: v.clone(),
                        span: one.span.clone(),
                    })
                    .collect(),
                _ => {
                    return Err(Diagnostic::error(
                        one.span.clone(),
                        format!("`{name}` of a single value; pass two or more values or a tuple"),
                    ))
                }
            },
            [] => {
                return Err(Diagnostic::error(
                    call.span.clone(),
                    format!("`{name}` needs arguments"),
                ))
            }
            many => many.to_vec(),
        };
        if let Some((k, ks, _)) = call.kw.first() {
            return Err(Diagnostic::error(
                ks.clone(),
                format!("`{name}` takes no keyword `{k}` in a kernel"),
            ));
        }
        let op = if is_min { BinaryOp::Min } else { BinaryOp::Max };
        let mut it = items.into_iter();
        let first = it.next().ok_or_else(|| {
            Diagnostic::error(call.span.clone(), format!("`{name}` of an empty tuple"))
        })?;
        let mut acc = first.val;
        for a in it {
            acc = self.min_max_values(
                op,
                Arg {
                    val: acc,
                    span: call.span.clone(),
                },
                a,
                &call.span,
            )?;
        }
        Ok(acc)
    }

    fn device_print(&mut self, name: &str, call: CallArgs) -> R<Val> {
        let mut prefix = String::new();
        let mut values = Vec::new();
        let mut hex = false;
        for (k, ks, a) in &call.kw {
            if k == "hex" {
                hex = self.const_bool(&Some(a.clone()), "hex", false)?;
            } else {
                return Err(Diagnostic::error(
                    ks.clone(),
                    format!("`{name}` has no parameter named `{k}`"),
                ));
            }
        }
        for (i, a) in call.pos.iter().enumerate() {
            match &a.val {
                Val::Const(Const::Str(s)) if i == 0 => prefix = s.clone(),
                Val::Const(Const::Str(s)) => prefix.push_str(s),
                _ => values.push(self.to_ir(a)?),
            }
        }
        self.emit(OpKind::Print { prefix, hex }, values, vec![], &call.span);
        Ok(Val::Const(Const::None))
    }

    // ---- reductions --------------------------------------------------

    /// Reduces `v` along `axis`; with `keep_dims` the axis stays as size 1.
    pub fn reduce_value(
        &mut self,
        v: Value,
        kind: ReduceKind,
        axis: u32,
        keep_dims: bool,
        span: &Span,
    ) -> R<Value> {
        let ty = self.ty(v);
        let Type::Tensor { shape, elem } = &ty else {
            return Err(Diagnostic::error(
                span.clone(),
                format!("cannot reduce {ty}"),
            ));
        };
        let out_elem = if matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin) {
            Elem::Scalar(ScalarType::I32)
        } else {
            *elem
        };
        let mut s = shape.clone();
        s.remove(axis as usize);
        let rty = if s.is_empty() {
            Type::Scalar(out_elem)
        } else {
            Type::tensor(s.clone(), out_elem)
        };
        let r = self.emit1(OpKind::Reduce { kind, axis }, vec![v], rty, span);
        if !keep_dims {
            return Ok(r);
        }
        if s.is_empty() {
            return Ok(self.emit1(
                OpKind::Splat,
                vec![r],
                Type::tensor(vec![1], out_elem),
                span,
            ));
        }
        s.insert(axis as usize, 1);
        Ok(self.emit1(
            OpKind::ExpandDims { axis },
            vec![r],
            Type::tensor(s, out_elem),
            span,
        ))
    }

    fn reduction(&mut self, short: &str, call: CallArgs) -> R<Val> {
        let span = call.span.clone();
        let kind = reduce_for(short).expect("dispatched on reduction names");
        let params: &[&str] = match short {
            "sum" => &["input", "axis", "keep_dims", "dtype"],
            "max" | "min" => &[
                "input",
                "axis",
                "return_indices",
                "return_indices_tie_break_left",
                "keep_dims",
            ],
            "argmax" | "argmin" => &["input", "axis", "tie_break_left", "keep_dims"],
            _ => &["input", "axis", "keep_dims"],
        };
        let required = if matches!(short, "argmax" | "argmin") {
            2
        } else {
            1
        };
        let b = call.bind(params, required)?;
        let x = b[0].clone().expect("bound");
        let name = format!("tl.{short}");
        let mut v = self.to_ir(&x)?;
        let mut ty = self.ty(v);
        let Some(st) = ty.scalar_type() else {
            return Err(Diagnostic::error(
                x.span.clone(),
                format!("`{name}` of {ty}"),
            ));
        };
        if ty.is_scalar() {
            return Err(Diagnostic::error(
                x.span.clone(),
                format!("`{name}` needs a tile, found the scalar {ty}"),
            ));
        }
        if matches!(kind, ReduceKind::Xor | ReduceKind::Or) && !st.is_int() {
            return Err(Diagnostic::error(
                x.span.clone(),
                format!("`{name}` needs integers, found {ty}"),
            ));
        }
        let keep_idx = params
            .iter()
            .position(|p| *p == "keep_dims")
            .expect("every reduction has keep_dims");
        let keep_dims = self.const_bool(&b[keep_idx], "keep_dims", false)?;
        let axis = match Self::arg_or(&b, 1) {
            Some(a) => self.axis_arg(a, ty.shape().len())?,
            None => {
                // All dimensions: flatten first.
                if ty.shape().len() > 1 {
                    let n = ty.numel() as u32;
                    let elem = ty.elem().expect("numeric");
                    v = self.emit1(OpKind::Reshape, vec![v], Type::tensor(vec![n], elem), &span);
                    ty = self.ty(v);
                }
                0
            }
        };
        let _ = ty;
        if short == "sum" {
            if let Some(d) = Self::arg_or(&b, 3) {
                let to = self.scalar_dtype_arg(d, "dtype")?;
                v = self.cast(v, Elem::Scalar(to), &span)?;
            } else if st.is_int() && st.bits() < 32 {
                let to = if st.is_unsigned_int() {
                    ScalarType::U32
                } else {
                    ScalarType::I32
                };
                v = self.cast(v, Elem::Scalar(to), &span)?;
            }
        }
        if matches!(short, "max" | "min") && self.const_bool(&b[2], "return_indices", false)? {
            let arg_kind = if short == "max" {
                ReduceKind::Argmax
            } else {
                ReduceKind::Argmin
            };
            let m = self.reduce_value(v, kind, axis, keep_dims, &span)?;
            let i = self.reduce_value(v, arg_kind, axis, keep_dims, &span)?;
            return Ok(Val::Tuple(vec![Val::Ir(m), Val::Ir(i)]));
        }
        self.reduce_value(v, kind, axis, keep_dims, &span)
            .map(Val::Ir)
    }

    // ---- memory ------------------------------------------------------

    fn cache_modifier(&self, a: &Option<Arg>, store: bool) -> R<CacheModifier> {
        let s = self.const_str(a, "cache_modifier")?;
        Ok(match (s.as_str(), store) {
            ("", _) => CacheModifier::None,
            (".ca", false) => CacheModifier::Ca,
            (".cg", _) => CacheModifier::Cg,
            (".cv", false) => CacheModifier::Cv,
            (".cs", _) => CacheModifier::Cs,
            (".wb", true) => CacheModifier::Wb,
            (".wt", true) => CacheModifier::Wt,
            (other, _) => {
                let span = a.as_ref().map(|a| a.span.clone()).unwrap_or_default();
                return Err(
                    Diagnostic::error(span, format!("unknown cache modifier `{other}`")).with_note(
                        if store {
                            "stores take \".wb\", \".cg\", \".cs\" or \".wt\""
                        } else {
                            "loads take \".ca\", \".cg\" or \".cv\""
                        },
                    ),
                );
            }
        })
    }

    fn eviction(&self, a: &Option<Arg>) -> R<EvictionPolicy> {
        let s = self.const_str(a, "eviction_policy")?;
        Ok(match s.as_str() {
            "" | "evict_normal" => EvictionPolicy::Normal,
            "evict_first" => EvictionPolicy::EvictFirst,
            "evict_last" => EvictionPolicy::EvictLast,
            other => {
                let span = a.as_ref().map(|a| a.span.clone()).unwrap_or_default();
                return Err(
                    Diagnostic::error(span, format!("unknown eviction policy `{other}`"))
                        .with_note("expected \"evict_first\" or \"evict_last\""),
                );
            }
        })
    }

    fn boundary_check(&self, a: &Option<Arg>, rank: usize) -> R<Vec<u32>> {
        let Some(a) = a else { return Ok(vec![]) };
        if matches!(a.val, Val::Const(Const::None)) {
            return Ok(vec![]);
        }
        let list = self.const_int_list(a, "boundary_check")?;
        let mut out = Vec::new();
        for i in list {
            if i < 0 || i >= rank as i128 {
                return Err(Diagnostic::error(
                    a.span.clone(),
                    format!("boundary_check dimension {i} is out of range for a {rank}-D block"),
                ));
            }
            if !out.contains(&(i as u32)) {
                out.push(i as u32);
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    fn load(&mut self, call: CallArgs) -> R<Value> {
        let span = call.span.clone();
        let b = call.bind(
            &[
                "pointer",
                "mask",
                "other",
                "boundary_check",
                "padding_option",
                "cache_modifier",
                "eviction_policy",
                "volatile",
            ],
            1,
        )?;
        let p = b[0].clone().expect("bound");
        let pv = self.to_ir(&p)?;
        let pty = self.ty(pv);
        let cache = self.cache_modifier(&b[5], false)?;
        let evict = self.eviction(&b[6])?;
        let volatile = self.const_bool(&b[7], "volatile", false)?;
        if let Type::BlockPtr { pointee, shape } = &pty {
            for (i, what) in [(1, "mask"), (2, "other")] {
                if let Some(a) = Self::arg_or(&b, i) {
                    return Err(Diagnostic::error(
                        a.span.clone(),
                        format!("`{what}` cannot be used with a block pointer"),
                    )
                    .with_note(
                        "block pointers use `boundary_check=(0, 1)` and `padding_option=\"zero\"`",
                    ));
                }
            }
            let boundary_check = self.boundary_check(&b[3], shape.len())?;
            let padding = match self.const_str(&b[4], "padding_option")?.as_str() {
                "" => Padding::None,
                "zero" => Padding::Zero,
                "nan" => Padding::Nan,
                other => {
                    let sp = b[4]
                        .as_ref()
                        .map(|a| a.span.clone())
                        .unwrap_or(span.clone());
                    return Err(
                        Diagnostic::error(sp, format!("unknown padding option `{other}`"))
                            .with_note("expected \"zero\" or \"nan\""),
                    );
                }
            };
            let rty = Type::tensor(shape.clone(), Elem::Scalar(*pointee));
            return Ok(self.emit1(
                OpKind::Load {
                    has_mask: false,
                    has_other: false,
                    boundary_check,
                    padding,
                    cache,
                    evict,
                    volatile,
                },
                vec![pv],
                rty,
                &span,
            ));
        }
        let Some(Elem::Ptr(pointee)) = pty.elem() else {
            return Err(Diagnostic::error(
                p.span.clone(),
                format!("`tl.load` needs a pointer, found {pty}"),
            )
            .with_note(
                "pointer arguments are declared in the signature as `*fp16`, `*fp32`, ...",
            ));
        };
        if Self::arg_or(&b, 3).is_some() {
            let a = Self::arg_or(&b, 3).expect("checked");
            if !matches!(&a.val, Val::Tuple(t) if t.is_empty()) {
                return Err(Diagnostic::error(
                    a.span.clone(),
                    "`boundary_check` only applies to block pointers",
                ));
            }
        }
        let mut operands = vec![pv];
        let mut pv = pv;
        let mask = match Self::arg_or(&b, 1) {
            Some(m) if matches!(m.val, Val::Const(Const::Bool(true))) => None,
            Some(m) => {
                let mv = self.to_ir(m)?;
                let mv = self.to_bool(mv, &m.span)?;
                let (p2, m2) = self.broadcast_pair(pv, mv, &p.span, &m.span, &span)?;
                pv = p2;
                Some(m2)
            }
            None => None,
        };
        let pty = self.ty(pv);
        let want = pty.with_elem(Elem::Scalar(pointee));
        let other = match Self::arg_or(&b, 2) {
            Some(o) => {
                if mask.is_none() {
                    return Err(Diagnostic::error(o.span.clone(), "`other` needs a `mask`")
                        .with_note("`other` gives the value of masked-off elements"));
                }
                let ov = self.coerce(o, pointee, &o.span)?;
                Some(self.broadcast_to(ov, want.shape(), &o.span)?)
            }
            None => None,
        };
        operands[0] = pv;
        let has_mask = mask.is_some();
        let has_other = other.is_some();
        operands.extend(mask);
        operands.extend(other);
        Ok(self.emit1(
            OpKind::Load {
                has_mask,
                has_other,
                boundary_check: vec![],
                padding: Padding::None,
                cache,
                evict,
                volatile,
            },
            operands,
            want,
            &span,
        ))
    }

    fn store(&mut self, call: CallArgs) -> R<()> {
        let span = call.span.clone();
        let b = call.bind(
            &[
                "pointer",
                "value",
                "mask",
                "boundary_check",
                "cache_modifier",
                "eviction_policy",
            ],
            2,
        )?;
        let (p, val) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
        let pv = self.to_ir(&p)?;
        let pty = self.ty(pv);
        let cache = self.cache_modifier(&b[4], true)?;
        let evict = self.eviction(&b[5])?;
        if let Type::BlockPtr { pointee, shape } = &pty {
            if let Some(a) = Self::arg_or(&b, 2) {
                return Err(Diagnostic::error(
                    a.span.clone(),
                    "`mask` cannot be used with a block pointer",
                )
                .with_note("block pointers use `boundary_check=(0, 1)`"));
            }
            let boundary_check = self.boundary_check(&b[3], shape.len())?;
            let vv = self.coerce(&val, *pointee, &val.span)?;
            let vv = self.broadcast_to(vv, shape, &val.span)?;
            self.emit(
                OpKind::Store {
                    has_mask: false,
                    boundary_check,
                    cache,
                    evict,
                },
                vec![pv, vv],
                vec![],
                &span,
            );
            return Ok(());
        }
        let Some(Elem::Ptr(pointee)) = pty.elem() else {
            return Err(Diagnostic::error(
                p.span.clone(),
                format!("`tl.store` needs a pointer, found {pty}"),
            ));
        };
        if let Val::Ir(v) = &val.val {
            if let Some(Elem::Ptr(_)) = self.ty(*v).elem() {
                return Err(Diagnostic::error(
                    val.span.clone(),
                    format!(
                        "cannot store {} through a pointer to {}",
                        self.ty(*v),
                        pointee.triton_name()
                    ),
                )
                .with_label("this is a pointer, not a value")
                .with_secondary(
                    p.span.clone(),
                    format!("stores {} elements", pointee.triton_name()),
                )
                .with_note("load the value first with `tl.load(...)`"));
            }
        }
        let vv = self.coerce(&val, pointee, &val.span)?;
        let vty = self.ty(vv);
        let mut pv = pv;
        if pty.is_scalar() && vty.is_tensor() {
            // Triton rejects this; a tile of values needs a tile of pointers.
            return Err(Diagnostic::error(
                val.span.clone(),
                format!("cannot store {vty} through the scalar pointer {pty}"),
            )
            .with_secondary(p.span.clone(), "a scalar pointer")
            .with_note("add offsets to the pointer, e.g. `ptr + tl.arange(0, BLOCK)`"));
        }
        let mut mask = None;
        if let Some(m) = Self::arg_or(&b, 2) {
            if !matches!(m.val, Val::Const(Const::Bool(true))) {
                let mv = self.to_ir(m)?;
                let mv = self.to_bool(mv, &m.span)?;
                let (p2, m2) = self.broadcast_pair(pv, mv, &p.span, &m.span, &span)?;
                pv = p2;
                mask = Some(m2);
            }
        }
        let shape = self.ty(pv).shape().to_vec();
        let vv = self.broadcast_to(vv, &shape, &val.span).map_err(|d| {
            d.with_secondary(p.span.clone(), format!("the pointer is {}", self.ty(pv)))
        })?;
        let mut operands = vec![pv, vv];
        let has_mask = mask.is_some();
        operands.extend(mask);
        self.emit(
            OpKind::Store {
                has_mask,
                boundary_check: vec![],
                cache,
                evict,
            },
            operands,
            vec![],
            &span,
        );
        Ok(())
    }

    fn make_block_ptr(&mut self, call: CallArgs) -> R<Value> {
        let span = call.span.clone();
        let b = call.bind(
            &[
                "base",
                "shape",
                "strides",
                "offsets",
                "block_shape",
                "order",
            ],
            6,
        )?;
        let a: Vec<Arg> = b.into_iter().map(|a| a.expect("bound")).collect();
        let base = self.to_ir(&a[0])?;
        let Type::Scalar(Elem::Ptr(pointee)) = self.ty(base) else {
            return Err(Diagnostic::error(
                a[0].span.clone(),
                format!("`base` must be a scalar pointer, found {}", self.ty(base)),
            ));
        };
        let block = self.shape_arg(&a[4], "block_shape")?;
        let rank = block.len();
        let shape = self.tuple_items(&a[1], "shape")?;
        let strides = self.tuple_items(&a[2], "strides")?;
        let offsets = self.tuple_items(&a[3], "offsets")?;
        for (what, l, arg) in [
            ("shape", &shape, &a[1]),
            ("strides", &strides, &a[2]),
            ("offsets", &offsets, &a[3]),
        ] {
            if l.len() != rank {
                return Err(Diagnostic::error(
                    arg.span.clone(),
                    format!(
                        "`{what}` has {} entries but `block_shape` has {rank}",
                        l.len()
                    ),
                ));
            }
        }
        let order = self.const_int_list(&a[5], "order")?;
        let order: Vec<u32> = order.iter().map(|&i| i as u32).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        if sorted != (0..rank as u32).collect::<Vec<_>>() {
            return Err(Diagnostic::error(
                a[5].span.clone(),
                format!("`order` must be a permutation of 0..{rank}"),
            ));
        }
        let mut operands = vec![base];
        for s in &shape {
            operands.push(self.int_operand(s, ScalarType::I64, "shape")?);
        }
        for s in &strides {
            operands.push(self.int_operand(s, ScalarType::I64, "stride")?);
        }
        for s in &offsets {
            operands.push(self.int_operand(s, ScalarType::I32, "offset")?);
        }
        Ok(self.emit1(
            OpKind::MakeBlockPtr { order },
            operands,
            Type::BlockPtr {
                pointee,
                shape: block,
            },
            &span,
        ))
    }

    fn make_tensor_descriptor(&mut self, call: CallArgs) -> R<Value> {
        let span = call.span.clone();
        let b = call.bind(
            &["base", "shape", "strides", "block_shape", "padding_option"],
            4,
        )?;
        let base_a = b[0].clone().expect("bound");
        let base = self.to_ir(&base_a)?;
        let Type::Scalar(Elem::Ptr(elem)) = self.ty(base) else {
            return Err(Diagnostic::error(
                base_a.span.clone(),
                format!("`base` must be a scalar pointer, found {}", self.ty(base)),
            ));
        };
        let block_a = b[3].clone().expect("bound");
        let block = self.shape_arg(&block_a, "block_shape")?;
        let rank = block.len();
        let shape_a = b[1].clone().expect("bound");
        let strides_a = b[2].clone().expect("bound");
        let shape = self.tuple_items(&shape_a, "shape")?;
        let strides = self.tuple_items(&strides_a, "strides")?;
        for (what, l, arg) in [
            ("shape", &shape, &shape_a),
            ("strides", &strides, &strides_a),
        ] {
            if l.len() != rank {
                return Err(Diagnostic::error(
                    arg.span.clone(),
                    format!(
                        "`{what}` has {} entries but `block_shape` has {rank}",
                        l.len()
                    ),
                ));
            }
        }
        if let Some(Arg {
            val: Val::Const(c), ..
        }) = strides.last()
        {
            if c.as_int() != Some(1) {
                return Err(Diagnostic::error(
                    strides_a.span.clone(),
                    "the last stride of a tensor descriptor must be 1",
                )
                .with_note("TMA needs the innermost dimension contiguous"));
            }
        }
        let inner_bytes = *block.last().unwrap_or(&1) as u64 * elem.byte_size() as u64;
        if inner_bytes < 16 {
            return Err(Diagnostic::error(block_a.span.clone(), format!("the innermost block dimension is {inner_bytes} bytes; tensor descriptors need at least 16")));
        }
        let mut operands = vec![base];
        for s in &shape {
            operands.push(self.int_operand(s, ScalarType::I32, "shape")?);
        }
        for s in &strides {
            operands.push(self.int_operand(s, ScalarType::I64, "stride")?);
        }
        Ok(self.emit1(
            OpKind::MakeTensorDesc,
            operands,
            Type::TensorDesc { elem, block },
            &span,
        ))
    }

    fn atomic_common(&mut self, p: &Arg, span: &Span) -> R<(Value, ScalarType)> {
        let pv = self.to_ir(p)?;
        let pty = self.ty(pv);
        match pty.elem() {
            Some(Elem::Ptr(s)) if !matches!(pty, Type::BlockPtr { .. }) => Ok((pv, s)),
            _ => Err(Diagnostic::error(
                p.span.clone(),
                format!("atomics need a pointer or a tile of pointers, found {pty}"),
            )
            .with_secondary(span.clone(), "in this call")),
        }
    }

    fn sem_scope(&self, sem: &Option<Arg>, scope: &Option<Arg>) -> R<(MemSem, MemScope)> {
        let s = match self.const_str(sem, "sem")?.as_str() {
            "" | "acq_rel" => MemSem::AcqRel,
            "relaxed" => MemSem::Relaxed,
            "acquire" => MemSem::Acquire,
            "release" => MemSem::Release,
            other => {
                let sp = sem.as_ref().map(|a| a.span.clone()).unwrap_or_default();
                return Err(
                    Diagnostic::error(sp, format!("unknown memory semantics `{other}`"))
                        .with_note("expected \"relaxed\", \"acquire\", \"release\" or \"acq_rel\""),
                );
            }
        };
        let c = match self.const_str(scope, "scope")?.as_str() {
            "" | "gpu" => MemScope::Gpu,
            "cta" => MemScope::Cta,
            "sys" => MemScope::Sys,
            other => {
                let sp = scope.as_ref().map(|a| a.span.clone()).unwrap_or_default();
                return Err(Diagnostic::error(sp, format!("unknown scope `{other}`"))
                    .with_note("expected \"gpu\", \"cta\" or \"sys\""));
            }
        };
        Ok((s, c))
    }

    fn atomic_rmw(&mut self, short: &str, call: CallArgs) -> R<Value> {
        let span = call.span.clone();
        let b = call.bind(&["pointer", "val", "mask", "sem", "scope"], 2)?;
        let (p, val) = (b[0].clone().expect("bound"), b[1].clone().expect("bound"));
        let (mut pv, pointee) = self.atomic_common(&p, &span)?;
        let op = match short {
            "atomic_add" => tawa_ir::AtomicOp::Add,
            "atomic_max" => tawa_ir::AtomicOp::Max,
            "atomic_min" => tawa_ir::AtomicOp::Min,
            "atomic_and" => tawa_ir::AtomicOp::And,
            "atomic_or" => tawa_ir::AtomicOp::Or,
            "atomic_xor" => tawa_ir::AtomicOp::Xor,
            _ => tawa_ir::AtomicOp::Xchg,
        };
        if matches!(
            op,
            tawa_ir::AtomicOp::And | tawa_ir::AtomicOp::Or | tawa_ir::AtomicOp::Xor
        ) && !pointee.is_int()
        {
            return Err(Diagnostic::error(
                p.span.clone(),
                format!(
                    "`tl.{short}` needs integer elements, found {}",
                    pointee.triton_name()
                ),
            ));
        }
        let (sem, scope) = self.sem_scope(&b[3], &b[4])?;
        let mut vv = self.coerce(&val, pointee, &val.span)?;
        let (p2, v2) = self.broadcast_pair(pv, vv, &p.span, &val.span, &span)?;
        pv = p2;
        vv = v2;
        let mut operands = vec![pv, vv];
        let mut has_mask = false;
        if let Some(m) = Self::arg_or(&b, 2) {
            let mv = self.to_ir(m)?;
            let mv = self.to_bool(mv, &m.span)?;
            let shape = self.ty(pv).shape().to_vec();
            let mv = self.broadcast_to(mv, &shape, &m.span)?;
            operands.push(mv);
            has_mask = true;
        }
        let rty = self.ty(vv);
        Ok(self.emit1(
            OpKind::AtomicRmw {
                op,
                sem,
                scope,
                has_mask,
            },
            operands,
            rty,
            &span,
        ))
    }

    fn atomic_cas(&mut self, call: CallArgs) -> R<Value> {
        let span = call.span.clone();
        let b = call.bind(&["pointer", "cmp", "val", "sem", "scope"], 3)?;
        let (p, c, val) = (
            b[0].clone().expect("bound"),
            b[1].clone().expect("bound"),
            b[2].clone().expect("bound"),
        );
        let (pv, pointee) = self.atomic_common(&p, &span)?;
        let (sem, scope) = self.sem_scope(&b[3], &b[4])?;
        let shape = self.ty(pv).shape().to_vec();
        let cv = self.coerce(&c, pointee, &c.span)?;
        let cv = self.broadcast_to(cv, &shape, &c.span)?;
        let vv = self.coerce(&val, pointee, &val.span)?;
        let vv = self.broadcast_to(vv, &shape, &val.span)?;
        let rty = self.ty(vv);
        Ok(self.emit1(
            OpKind::AtomicCas { sem, scope },
            vec![pv, cv, vv],
            rty,
            &span,
        ))
    }

    /// `x.to(dtype, fp_downcast_rounding=None, bitcast=False)` and `tl.cast`.
    fn cast_call(&mut self, x: Arg, rest: &[Option<Arg>], span: &Span) -> R<Val> {
        let d = rest[0].clone().expect("bound");
        let to = self.dtype_arg(&d, "dtype")?;
        let rounding = match self.const_str(&rest[1], "fp_downcast_rounding")?.as_str() {
            "" | "rtne" => Rounding::Rtne,
            "rtz" => Rounding::Rtz,
            other => {
                let sp = rest[1]
                    .as_ref()
                    .map(|a| a.span.clone())
                    .unwrap_or(span.clone());
                return Err(Diagnostic::error(sp, format!("unknown rounding `{other}`"))
                    .with_note("expected \"rtne\" or \"rtz\""));
            }
        };
        let bitcast = self.const_bool(&rest[2], "bitcast", false)?;
        if let Val::Const(c) = &x.val {
            // Casting a constant makes a typed scalar.
            if let Elem::Scalar(st) = to {
                if !bitcast && matches!(c, Const::Int(_) | Const::Float(_) | Const::Bool(_)) {
                    return Ok(Val::Ir(self.const_scalar(c, st, span)));
                }
            }
        }
        let v = self.to_ir(&x)?;
        let ty = self.ty(v);
        if bitcast {
            let from = ty
                .elem()
                .ok_or_else(|| Diagnostic::error(x.span.clone(), format!("cannot bitcast {ty}")))?;
            let bits = |e: Elem| match e {
                Elem::Scalar(s) => s.bits(),
                Elem::Ptr(_) => 64,
            };
            if bits(from) != bits(to) {
                return Err(Diagnostic::error(
                    span.clone(),
                    format!(
                        "cannot bitcast {} ({} bits) to {} ({} bits)",
                        dtype_name(from),
                        bits(from),
                        dtype_name(to),
                        bits(to)
                    ),
                ));
            }
            if from == to {
                return Ok(Val::Ir(v));
            }
            return Ok(Val::Ir(self.emit1(
                OpKind::Bitcast,
                vec![v],
                ty.with_elem(to),
                span,
            )));
        }
        if rounding == Rounding::Rtz {
            let (Some(f), Elem::Scalar(t)) = (ty.scalar_type(), to) else {
                return Err(Diagnostic::error(
                    span.clone(),
                    "`fp_downcast_rounding` applies to float-to-float casts",
                ));
            };
            if !(f.is_float() && t.is_float() && t.bits() < f.bits()) {
                return Err(Diagnostic::error(
                    span.clone(),
                    "`fp_downcast_rounding` applies only to narrowing float casts",
                ));
            }
            return Ok(Val::Ir(self.emit1(
                OpKind::Cast { rounding },
                vec![v],
                ty.with_elem(to),
                span,
            )));
        }
        self.cast(v, to, span).map(Val::Ir)
    }

    fn swizzle2d(&mut self, a: &[Arg], span: &Span) -> R<Val> {
        // Triton's `swizzle2d`, written with the same integer operations.
        let sp = span.clone();
        let arg = |v: Val| Arg {
            val: v,
            span: sp.clone(),
        };
        let ij = self.binary(BinOpKind::Mul, a[0].clone(), a[3].clone(), span)?;
        let ij = self.binary(BinOpKind::Add, arg(ij), a[1].clone(), span)?;
        let size_gj = self.binary(BinOpKind::Mul, a[4].clone(), a[3].clone(), span)?;
        let group_id = self.binary(
            BinOpKind::FloorDiv,
            arg(ij.clone()),
            arg(size_gj.clone()),
            span,
        )?;
        let off_i = self.binary(BinOpKind::Mul, arg(group_id), a[4].clone(), span)?;
        let rem = self.binary(BinOpKind::Sub, a[2].clone(), arg(off_i.clone()), span)?;
        let size_g = self.min_max_values(BinaryOp::Min, arg(rem), a[4].clone(), span)?;
        let ij = self.binary(BinOpKind::Mod, arg(ij), arg(size_gj), span)?;
        let ni = self.binary(BinOpKind::Mod, arg(ij.clone()), arg(size_g.clone()), span)?;
        let new_i = self.binary(BinOpKind::Add, arg(off_i), arg(ni), span)?;
        let new_j = self.binary(BinOpKind::FloorDiv, arg(ij), arg(size_g), span)?;
        Ok(Val::Tuple(vec![new_i, new_j]))
    }

    // ---- methods -----------------------------------------------------

    pub fn call_method(&mut self, recv: Val, name: &str, call: CallArgs) -> R<Val> {
        let span = call.span.clone();
        match &recv {
            Val::Dtype(d) => {
                call.bind(&[], 0)?;
                let (s, ptr) = match d {
                    Elem::Scalar(s) => (Some(*s), false),
                    Elem::Ptr(_) => (None, true),
                };
                let is = |f: fn(ScalarType) -> bool| s.is_some_and(f);
                let r = match name {
                    "is_ptr" => ptr,
                    "is_fp8" => is(ScalarType::is_fp8),
                    "is_fp16" => s == Some(ScalarType::F16),
                    "is_bf16" => s == Some(ScalarType::BF16),
                    "is_fp32" => s == Some(ScalarType::F32),
                    "is_fp64" => s == Some(ScalarType::F64),
                    "is_floating" => is(ScalarType::is_float),
                    "is_int" => is(ScalarType::is_int),
                    "is_int_signed" => is(ScalarType::is_signed_int),
                    "is_int_unsigned" => is(ScalarType::is_unsigned_int),
                    "is_bool" | "is_int1" => s == Some(ScalarType::I1),
                    "is_int8" => s == Some(ScalarType::I8),
                    "is_int16" => s == Some(ScalarType::I16),
                    "is_int32" => s == Some(ScalarType::I32),
                    "is_int64" => s == Some(ScalarType::I64),
                    "is_uint8" => s == Some(ScalarType::U8),
                    "is_uint16" => s == Some(ScalarType::U16),
                    "is_uint32" => s == Some(ScalarType::U32),
                    "is_uint64" => s == Some(ScalarType::U64),
                    _ => {
                        return Err(Diagnostic::error(
                            span,
                            format!("dtype method `{name}` is not supported"),
                        ))
                    }
                };
                Ok(Val::Const(Const::Bool(r)))
            }
            Val::Ir(v) => {
                let v = *v;
                let recv_arg = Arg {
                    val: recv.clone(),
                    span: span.clone(),
                };
                match name {
                    "to" => {
                        let b = call.bind(&["dtype", "fp_downcast_rounding", "bitcast"], 1)?;
                        self.cast_call(recv_arg, &b, &span)
                    }
                    "load" | "store" => self.desc_access(v, name == "store", call),
                    _ => {
                        // `x.sum(0)` is `tl.sum(x, 0)`.
                        let mut c = call;
                        c.pos.insert(0, recv_arg);
                        c.name = format!("tl.{name}");
                        let n = c.name.clone();
                        self.call_builtin(&n, c)
                    }
                }
            }
            other => Err(Diagnostic::error(
                span,
                format!("{} has no method `{name}`", self.describe(other)),
            )),
        }
    }

    fn desc_access(&mut self, desc: Value, store: bool, call: CallArgs) -> R<Val> {
        let span = call.span.clone();
        let Type::TensorDesc { elem, block } = self.ty(desc) else {
            return Err(Diagnostic::error(
                span,
                "`load`/`store` methods exist only on tensor descriptors",
            ));
        };
        let b = if store {
            call.bind(&["offsets", "value"], 2)?
        } else {
            call.bind(&["offsets"], 1)?
        };
        let offs_a = b[0].clone().expect("bound");
        let offs = self.tuple_items(&offs_a, "offsets")?;
        if offs.len() != block.len() {
            return Err(Diagnostic::error(
                offs_a.span.clone(),
                format!(
                    "{} offsets for a {}-D tensor descriptor",
                    offs.len(),
                    block.len()
                ),
            ));
        }
        let mut offsets = Vec::new();
        for a in &offs {
            offsets.push(self.int_operand(a, ScalarType::I32, "offset")?);
        }
        if store {
            let val = b[1].clone().expect("bound");
            let vv = self.coerce(&val, elem, &val.span)?;
            let vty = self.ty(vv);
            if vty.is_tensor() && vty.shape() != block.as_slice() {
                return Err(Diagnostic::error(
                    val.span.clone(),
                    format!(
                        "the stored tile is {vty} but the descriptor's block is {}",
                        shape_text(&block)
                    ),
                ));
            }
            let vv = self.broadcast_to(vv, &block, &val.span)?;
            let mut operands = vec![desc, vv];
            operands.extend(offsets);
            self.emit(OpKind::DescStore, operands, vec![], &span);
            return Ok(Val::Const(Const::None));
        }
        let mut operands = vec![desc];
        operands.extend(offsets);
        let ty = Type::tensor(block, Elem::Scalar(elem));
        Ok(Val::Ir(self.emit1(
            OpKind::DescLoad { read_once: None },
            operands,
            ty,
            &span,
        )))
    }
}
