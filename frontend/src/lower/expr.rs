//! Expressions: names, constants, operators, attributes, subscripts,
//! conditional expressions and calls.

use tawa_ir::{Elem, OpKind, ScalarType, Type};

use super::builtins::{suggest, CallArgs};
use super::semantic::{const_compare, shape_text};
use super::value::{dtype_by_tl_name, Arg, Class, Const, ModuleRef, Val};
use super::{Lowerer, R};
use crate::ast::{BoolOpKind, CmpOpKind, Expr, ExprKind, UnaryOpKind};
use crate::diagnostics::{Diagnostic, Span};

/// Triton's limit on the elements of one tile (`TRITON_MAX_TENSOR_NUMEL`).
pub const MAX_TILE_ELEMENTS: i128 = 1 << 20;

impl Lowerer<'_> {
    pub fn expr(&mut self, e: &Expr) -> R<Val> {
        match &e.kind {
            ExprKind::Name(n) => self.lookup(n, &e.span),
            ExprKind::Int(i) => Ok(Val::int(*i)),
            ExprKind::Float(f) => Ok(Val::Const(Const::Float(*f))),
            ExprKind::Str(s) => Ok(Val::Const(Const::Str(s.clone()))),
            ExprKind::Bool(b) => Ok(Val::Const(Const::Bool(*b))),
            ExprKind::None => Ok(Val::Const(Const::None)),
            ExprKind::Attribute {
                value,
                attr,
                attr_span,
            } => {
                let recv = self.expr(value)?;
                self.attribute(recv, &value.span, attr, attr_span)
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                let callee = self.expr(func)?;
                let name = match &callee {
                    Val::Builtin(b) => b.clone(),
                    Val::JitFn(f) | Val::PyFn(f) => f.name.clone(),
                    Val::Method(_, m) => m.clone(),
                    _ => self.text(&func.span).to_string(),
                };
                let call = self.call_args(args, keywords, &e.span, &name)?;
                self.call(callee, &func.span, call)
            }
            ExprKind::BinOp { op, left, right } => {
                let a = self.expr(left)?;
                let b = self.expr(right)?;
                self.binary(
                    *op,
                    Arg {
                        val: a,
                        span: left.span.clone(),
                    },
                    Arg {
                        val: b,
                        span: right.span.clone(),
                    },
                    &e.span,
                )
            }
            ExprKind::UnaryOp { op, operand } => {
                let v = self.expr(operand)?;
                let a = Arg {
                    val: v,
                    span: operand.span.clone(),
                };
                match op {
                    UnaryOpKind::Neg => self.negate(a, &e.span),
                    UnaryOpKind::Pos => {
                        self.to_ir_or_const(&a)?;
                        Ok(a.val)
                    }
                    UnaryOpKind::Invert => self.invert(a, &e.span),
                    UnaryOpKind::Not => self.logical_not(a, &e.span),
                }
            }
            ExprKind::BoolOp { op, left, right } => self.bool_op(*op, left, right, &e.span),
            ExprKind::Compare { left, rest } => self.compare_chain(left, rest, &e.span),
            ExprKind::IfExp { cond, body, orelse } => self.if_exp(cond, body, orelse, &e.span),
            ExprKind::Subscript { value, index } => {
                let v = self.expr(value)?;
                self.subscript(v, &value.span, index, &e.span)
            }
            ExprKind::Slice { .. } => Err(Diagnostic::error(
                e.span.clone(),
                "a slice can only appear inside `[...]`",
            )),
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let mut out = Vec::new();
                for i in items {
                    if let ExprKind::Starred(inner) = &i.kind {
                        match self.expr(inner)? {
                            Val::Tuple(t) => out.extend(t),
                            other => {
                                return Err(Diagnostic::error(
                                    inner.span.clone(),
                                    format!("cannot unpack {} with `*`", self.describe(&other)),
                                ))
                            }
                        }
                    } else {
                        out.push(self.expr(i)?);
                    }
                }
                Ok(Val::Tuple(out))
            }
            ExprKind::Starred(_) => Err(Diagnostic::error(
                e.span.clone(),
                "`*` unpacking is only supported in calls and tuple displays",
            )),
            ExprKind::Unsupported(what) => Err(Diagnostic::error(
                e.span.clone(),
                format!("{what} is not supported in Triton kernels"),
            )
            .with_label(format!("unsupported {what}"))),
        }
    }

    fn to_ir_or_const(&mut self, a: &Arg) -> R<()> {
        match &a.val {
            Val::Const(Const::Int(_) | Const::Float(_) | Const::Bool(_)) => Ok(()),
            _ => self.to_ir(a).map(|_| ()),
        }
    }

    // ---- attributes --------------------------------------------------

    pub fn attribute(
        &mut self,
        recv: Val,
        recv_span: &Span,
        attr: &str,
        attr_span: &Span,
    ) -> R<Val> {
        let span = recv_span.start..attr_span.end;
        match &recv {
            Val::Module(m) => self.module_attr(m, attr, attr_span),
            Val::Ir(v) => {
                let ty = self.ty(*v);
                match attr {
                    "dtype" => match &ty {
                        Type::Scalar(e) | Type::Tensor { elem: e, .. } => Ok(Val::Dtype(*e)),
                        Type::BlockPtr { pointee, .. } => Ok(Val::Dtype(Elem::Ptr(*pointee))),
                        Type::TensorDesc { elem, .. } => Ok(Val::Dtype(Elem::Scalar(*elem))),
                        // Arefs come from the partitioner, never from source.
                        Type::Aref { .. } => Err(Diagnostic::error(
                            span,
                            format!("`.dtype` of a value of type {ty}"),
                        )),
                    },
                    "shape" | "block_shape" => Ok(Val::Tuple(
                        ty.shape().iter().map(|&d| Val::int(d as i128)).collect(),
                    )),
                    "numel" => Ok(Val::int(ty.numel() as i128)),
                    "T" => {
                        if ty.shape().len() != 2 {
                            return Err(Diagnostic::error(
                                span,
                                format!("`.T` needs a 2-D tile, found {ty}"),
                            ));
                        }
                        let shape = vec![ty.shape()[1], ty.shape()[0]];
                        let elem = ty.elem().unwrap_or(Elem::Scalar(ScalarType::F32));
                        Ok(Val::Ir(self.emit1(
                            OpKind::Trans { perm: vec![1, 0] },
                            vec![*v],
                            Type::tensor(shape, elem),
                            &span,
                        )))
                    }
                    _ if TENSOR_METHODS.contains(&attr) => {
                        let desc = matches!(ty, Type::TensorDesc { .. });
                        if desc != matches!(attr, "load" | "store") {
                            return Err(self.no_attr(&recv, attr, attr_span));
                        }
                        Ok(Val::Method(Box::new(recv.clone()), attr.to_string()))
                    }
                    _ => Err(self.no_attr(&recv, attr, attr_span)),
                }
            }
            Val::Dtype(d) => match attr {
                "element_ty" => match d {
                    Elem::Ptr(s) => Ok(Val::Dtype(Elem::Scalar(*s))),
                    Elem::Scalar(_) => Err(Diagnostic::error(
                        attr_span.clone(),
                        "`element_ty` exists only on pointer dtypes",
                    )),
                },
                "primitive_bitwidth" => match d {
                    Elem::Scalar(s) => Ok(Val::int(s.bits() as i128)),
                    Elem::Ptr(_) => Ok(Val::int(64)),
                },
                "int_bitwidth" | "fp_mantissa_width" => match (attr, d) {
                    ("int_bitwidth", Elem::Scalar(s)) if s.is_int() => {
                        Ok(Val::int(s.bits() as i128))
                    }
                    ("fp_mantissa_width", Elem::Scalar(s)) if s.is_float() => {
                        Ok(Val::int(s.mantissa_bits().unwrap_or(0) as i128))
                    }
                    _ => Err(self.no_attr(&recv, attr, attr_span)),
                },
                _ if DTYPE_METHODS.contains(&attr) => {
                    Ok(Val::Method(Box::new(recv.clone()), attr.to_string()))
                }
                _ => Err(self.no_attr(&recv, attr, attr_span)),
            },
            Val::Const(c) => match attr {
                "value" => Ok(recv.clone()),
                _ => Err(Diagnostic::error(
                    attr_span.clone(),
                    format!(
                        "{} has no attribute `{attr}`",
                        self.describe(&Val::Const(c.clone()))
                    ),
                )),
            },
            Val::Undefined(why) => Err(Diagnostic::error(
                recv_span.clone(),
                "this value is undefined here",
            )
            .with_label(why.clone())),
            _ => Err(self.no_attr(&recv, attr, attr_span)),
        }
    }

    fn no_attr(&self, recv: &Val, attr: &str, attr_span: &Span) -> Diagnostic {
        let mut d = Diagnostic::error(
            attr_span.clone(),
            format!("{} has no attribute `{attr}`", self.describe(recv)),
        );
        let cands: &[&str] = match recv {
            Val::Ir(v) if matches!(self.ty(*v), Type::TensorDesc { .. }) => {
                &["load", "store", "dtype", "block_shape"]
            }
            Val::Ir(_) => TENSOR_METHODS,
            Val::Dtype(_) => DTYPE_METHODS,
            _ => &[],
        };
        if let Some(s) = suggest(attr, cands.iter().copied()) {
            d = d.with_note(format!("help: did you mean `{s}`?"));
        }
        d
    }

    /// `module.attr` for the modules a kernel may name.
    pub fn module_attr(&mut self, m: &ModuleRef, attr: &str, span: &Span) -> R<Val> {
        let found = match m {
            ModuleRef::Triton => match attr {
                "language" => Some(Val::Module(ModuleRef::Tl)),
                "jit" | "cdiv" | "next_power_of_2" | "autotune" | "heuristics" | "Config"
                | "constexpr_function" => Some(Val::Builtin(format!("triton.{attr}"))),
                _ => None,
            },
            ModuleRef::Tl | ModuleRef::TlCore => match attr {
                "constexpr" => Some(Val::Class(Class::Constexpr)),
                "tensor" => Some(Val::Class(Class::Tensor)),
                "tensor_descriptor" => Some(Val::Class(Class::TensorDescriptor)),
                "dtype" => Some(Val::Class(Class::Dtype)),
                "math" => Some(Val::Module(ModuleRef::Math)),
                "extra" => Some(Val::Module(ModuleRef::Extra)),
                "core" | "standard" | "semantic" => Some(Val::Module(ModuleRef::TlCore)),
                "float8e4m3fn" => Some(Val::Dtype(Elem::Scalar(ScalarType::F8E4M3))),
                "float8e5m2" => Some(Val::Dtype(Elem::Scalar(ScalarType::F8E5M2))),
                _ => {
                    if let Some(s) = dtype_by_tl_name(attr) {
                        Some(Val::Dtype(Elem::Scalar(s)))
                    } else if TL_FUNCS.contains(&attr) {
                        Some(Val::Builtin(format!("tl.{attr}")))
                    } else {
                        None
                    }
                }
            },
            ModuleRef::Math => {
                if MATH_FUNCS.contains(&attr) {
                    Some(Val::Builtin(format!("tl.{attr}")))
                } else {
                    None
                }
            }
            ModuleRef::Extra => match attr {
                "cuda" => Some(Val::Module(ModuleRef::ExtraCuda)),
                "libdevice" => Some(Val::Module(ModuleRef::Libdevice)),
                _ => None,
            },
            ModuleRef::ExtraCuda => match attr {
                "libdevice" => Some(Val::Module(ModuleRef::Libdevice)),
                "gdc_wait" | "gdc_launch_dependents" => {
                    Some(Val::Builtin(format!("tl.extra.cuda.{attr}")))
                }
                _ => None,
            },
            ModuleRef::Libdevice => {
                if LIBDEVICE_FUNCS.contains(&attr) {
                    Some(Val::Builtin(format!("libdevice.{attr}")))
                } else {
                    None
                }
            }
            ModuleRef::Other(path) => {
                return Err(Diagnostic::error(
                    span.clone(),
                    format!("module `{path}` cannot be used inside a Triton kernel"),
                )
                .with_label(format!(
                    "`{path}.{attr}` runs on the host, not in the kernel"
                )));
            }
        };
        found.ok_or_else(|| {
            let cands: Vec<&str> = match m {
                ModuleRef::Tl | ModuleRef::TlCore => TL_FUNCS
                    .iter()
                    .copied()
                    .chain([
                        "constexpr",
                        "float16",
                        "float32",
                        "bfloat16",
                        "int32",
                        "int64",
                    ])
                    .collect(),
                ModuleRef::Math => MATH_FUNCS.to_vec(),
                ModuleRef::Libdevice => LIBDEVICE_FUNCS.to_vec(),
                ModuleRef::Triton => vec!["jit", "cdiv", "next_power_of_2", "language"],
                _ => vec![],
            };
            let mut d = Diagnostic::error(
                span.clone(),
                format!("module `{}` has no attribute `{attr}`", m.path()),
            )
            .with_label("not supported by tawa-rs (or not part of Triton)");
            if let Some(s) = suggest(attr, cands.into_iter()) {
                d = d.with_note(format!("help: did you mean `{s}`?"));
            }
            d
        })
    }

    // ---- operators ---------------------------------------------------

    fn bool_op(&mut self, op: BoolOpKind, left: &Expr, right: &Expr, span: &Span) -> R<Val> {
        let a = self.expr(left)?;
        if let Some(t) = self.static_truth(&a) {
            // Python short-circuit on a compile-time left operand.
            return match (op, t) {
                (BoolOpKind::And, false) | (BoolOpKind::Or, true) => Ok(a),
                _ => self.expr(right),
            };
        }
        let b = self.expr(right)?;
        let x = self.to_ir(&Arg {
            val: a,
            span: left.span.clone(),
        })?;
        let x = self.to_bool(x, &left.span)?;
        let y = self.to_ir(&Arg {
            val: b,
            span: right.span.clone(),
        })?;
        let y = self.to_bool(y, &right.span)?;
        let (x, y) = self.broadcast_pair(x, y, &left.span, &right.span, span)?;
        let ty = self.ty(x);
        let kind = match op {
            BoolOpKind::And => tawa_ir::BinaryOp::And,
            BoolOpKind::Or => tawa_ir::BinaryOp::Or,
        };
        Ok(Val::Ir(self.emit1(
            OpKind::Binary(kind),
            vec![x, y],
            ty,
            span,
        )))
    }

    fn compare_chain(&mut self, left: &Expr, rest: &[(CmpOpKind, Expr)], span: &Span) -> R<Val> {
        let mut lhs = Arg {
            val: self.expr(left)?,
            span: left.span.clone(),
        };
        let mut result: Option<Val> = None;
        for (op, e) in rest {
            let rhs = Arg {
                val: self.expr(e)?,
                span: e.span.clone(),
            };
            let part_span = lhs.span.start..e.span.end;
            let r = self.compare_one(*op, lhs.clone(), rhs.clone(), &part_span)?;
            result = Some(match result {
                None => r,
                Some(prev) => {
                    let p = Arg {
                        val: prev,
                        span: span.clone(),
                    };
                    let q = Arg {
                        val: r,
                        span: part_span.clone(),
                    };
                    if let (Some(a), Some(b)) =
                        (self.static_truth(&p.val), self.static_truth(&q.val))
                    {
                        Val::Const(Const::Bool(a && b))
                    } else {
                        let x = self.to_ir(&p)?;
                        let y = self.to_ir(&q)?;
                        let (x, y) = self.broadcast_pair(x, y, &p.span, &q.span, span)?;
                        let ty = self.ty(x);
                        Val::Ir(self.emit1(
                            OpKind::Binary(tawa_ir::BinaryOp::And),
                            vec![x, y],
                            ty,
                            span,
                        ))
                    }
                }
            });
            lhs = rhs;
        }
        Ok(result.unwrap_or(Val::Const(Const::Bool(true))))
    }

    fn compare_one(&mut self, op: CmpOpKind, a: Arg, b: Arg, span: &Span) -> R<Val> {
        match op {
            CmpOpKind::In | CmpOpKind::NotIn => {
                let Val::Tuple(items) = &b.val else {
                    return Err(Diagnostic::error(
                        b.span.clone(),
                        "`in` needs a compile-time tuple on the right",
                    ));
                };
                let mut found = false;
                for i in items {
                    if self.static_equal(&a.val, i, &a.span)? {
                        found = true;
                    }
                }
                Ok(Val::Const(Const::Bool(found == (op == CmpOpKind::In))))
            }
            CmpOpKind::Is | CmpOpKind::IsNot | CmpOpKind::Eq | CmpOpKind::Ne
                if !matches!(a.val, Val::Ir(_)) && !matches!(b.val, Val::Ir(_)) =>
            {
                let eq = self.static_equal(&a.val, &b.val, span)?;
                let want = matches!(op, CmpOpKind::Is | CmpOpKind::Eq);
                Ok(Val::Const(Const::Bool(eq == want)))
            }
            _ => self.compare(op, a, b, span),
        }
    }

    /// Equality of two compile-time values (dtypes, constants, tuples).
    fn static_equal(&self, a: &Val, b: &Val, span: &Span) -> R<bool> {
        Ok(match (a, b) {
            (Val::Const(x), Val::Const(y)) => const_compare(CmpOpKind::Eq, x, y).unwrap_or(false),
            (Val::Tuple(x), Val::Tuple(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (p, q) in x.iter().zip(y) {
                    if !self.static_equal(p, q, span)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Val::Ir(_), _) | (_, Val::Ir(_)) => {
                return Err(Diagnostic::error(
                    span.clone(),
                    "cannot compare a runtime value here",
                ));
            }
            _ => a.same(b),
        })
    }

    fn if_exp(&mut self, cond: &Expr, body: &Expr, orelse: &Expr, span: &Span) -> R<Val> {
        let c = self.expr(cond)?;
        if let Some(t) = self.static_truth(&c) {
            return self.expr(if t { body } else { orelse });
        }
        let cv = self.to_ir(&Arg {
            val: c,
            span: cond.span.clone(),
        })?;
        if !self.ty(cv).is_scalar() {
            return Err(Diagnostic::error(
                cond.span.clone(),
                format!(
                    "the condition of `... if ... else ...` must be a scalar, found {}",
                    self.ty(cv)
                ),
            )
            .with_note("use `tl.where(cond, a, b)` to choose element-wise between tensors"));
        }
        let cv = self.to_bool(cv, &cond.span)?;
        // Both arms become regions of an `if` op so that only the taken one runs.
        let outer = self.block;
        let then_b = self.f.new_block(vec![]);
        self.block = then_b;
        let a = self.expr(body);
        let else_b = self.f.new_block(vec![]);
        self.block = else_b;
        let b = self.expr(orelse);
        self.block = outer;
        let (a, b) = (a?, b?);
        let (la, lb, shape) = self.unify_branch_values(
            "the conditional expression",
            &a,
            &b,
            then_b,
            else_b,
            &body.span,
            &orelse.span,
        )?;
        let results = self.finish_if(outer, cv, (then_b, la), (else_b, lb), span);
        Ok(super::rebuild(&shape, &mut results.into_iter()))
    }

    // ---- subscripts --------------------------------------------------

    fn subscript(&mut self, v: Val, vspan: &Span, index: &[Expr], span: &Span) -> R<Val> {
        match &v {
            Val::Tuple(items) => {
                let [ix] = index else {
                    return Err(Diagnostic::error(span.clone(), "a tuple takes one index"));
                };
                if let ExprKind::Slice { lower, upper, step } = &ix.kind {
                    let n = items.len() as i128;
                    let mut bound = |e: &Option<Box<Expr>>, default: i128| -> R<i128> {
                        match e {
                            None => Ok(default),
                            Some(e) => match self.expr(e)? {
                                Val::Const(c) => c.as_int().ok_or_else(|| {
                                    Diagnostic::error(
                                        e.span.clone(),
                                        "slice bounds must be integers",
                                    )
                                }),
                                _ => Err(Diagnostic::error(
                                    e.span.clone(),
                                    "slice bounds must be compile-time integers",
                                )),
                            },
                        }
                    };
                    let st = bound(step, 1)?;
                    if st <= 0 {
                        return Err(Diagnostic::error(
                            ix.span.clone(),
                            "only positive slice steps are supported",
                        ));
                    }
                    let norm = |i: i128| if i < 0 { (i + n).max(0) } else { i.min(n) };
                    let lo = norm(bound(lower, 0)?);
                    let hi = norm(bound(upper, n)?);
                    let out = (lo..hi)
                        .step_by(usize::try_from(st).unwrap_or(usize::MAX))
                        .map(|i| items[i as usize].clone())
                        .collect();
                    return Ok(Val::Tuple(out));
                }
                let i = match self.expr(ix)? {
                    Val::Const(c) => c.as_int(),
                    _ => None,
                }
                .ok_or_else(|| {
                    Diagnostic::error(
                        ix.span.clone(),
                        "a tuple index must be a compile-time integer",
                    )
                })?;
                let n = items.len() as i128;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(Diagnostic::error(
                        ix.span.clone(),
                        format!("tuple index {i} out of range for a tuple of {n}"),
                    ));
                }
                Ok(items[j as usize].clone())
            }
            Val::Ir(x) => {
                let x = *x;
                let ty = self.ty(x);
                let Type::Tensor { shape, elem } = &ty else {
                    return Err(Diagnostic::error(vspan.clone(), format!("cannot index {ty}"))
                        .with_note("only tiles can be indexed, and only with `None` and `:` (e.g. `x[:, None]`)"));
                };
                let mut new_shape = Vec::new();
                let mut axes = Vec::new();
                let mut src = shape.iter();
                for ix in index {
                    match &ix.kind {
                        ExprKind::None => {
                            axes.push(new_shape.len() as u32);
                            new_shape.push(1);
                        }
                        ExprKind::Slice {
                            lower: None,
                            upper: None,
                            step: None,
                        } => match src.next() {
                            Some(&d) => new_shape.push(d),
                            None => {
                                return Err(Diagnostic::error(
                                    ix.span.clone(),
                                    format!("too many `:` for a {}-D tile", shape.len()),
                                ));
                            }
                        },
                        _ => {
                            return Err(Diagnostic::error(ix.span.clone(), "tiles can only be indexed with `None` and `:`")
                                .with_label("unsupported index")
                                .with_note("Triton tiles have no element access; use masks, `tl.where` or reductions"));
                        }
                    }
                }
                new_shape.extend(src.copied());
                let mut cur = x;
                let mut cur_shape = shape.clone();
                for a in axes {
                    cur_shape.insert(a as usize, 1);
                    cur = self.emit1(
                        OpKind::ExpandDims { axis: a },
                        vec![cur],
                        Type::tensor(cur_shape.clone(), *elem),
                        span,
                    );
                }
                debug_assert_eq!(cur_shape, new_shape);
                Ok(Val::Ir(cur))
            }
            Val::Undefined(why) => Err(Diagnostic::error(
                vspan.clone(),
                "this value is undefined here",
            )
            .with_label(why.clone())),
            other => Err(Diagnostic::error(
                vspan.clone(),
                format!("{} cannot be indexed", self.describe(other)),
            )),
        }
    }

    // ---- calls -------------------------------------------------------

    pub fn call(&mut self, callee: Val, callee_span: &Span, call: CallArgs) -> R<Val> {
        match callee {
            Val::Builtin(name) => self.call_builtin(&name, call),
            Val::JitFn(def) => self.call_jit(def, &call),
            Val::PyFn(def) => Err(Diagnostic::error(
                callee_span.clone(),
                format!("`{}` is not a `@triton.jit` function", def.name),
            )
            .with_secondary(def.name_span.clone(), "defined here without `@triton.jit`")
            .with_note("only `@triton.jit` functions can be called from a kernel")),
            Val::Method(recv, name) => self.call_method(*recv, &name, call),
            Val::Class(c) => self.call_class(c, call),
            Val::Dtype(d) => {
                // `tl.float16(x)` is not Triton; suggest `.to`.
                Err(Diagnostic::error(
                    callee_span.clone(),
                    format!("dtype {} is not callable", super::value::dtype_name(d)),
                )
                .with_note("convert with `x.to(tl.float16)`"))
            }
            Val::Undefined(why) => Err(Diagnostic::error(
                callee_span.clone(),
                "this value is undefined here",
            )
            .with_label(why)),
            other => Err(Diagnostic::error(
                callee_span.clone(),
                format!("{} is not callable", self.describe(&other)),
            )),
        }
    }

    fn call_class(&mut self, c: Class, call: CallArgs) -> R<Val> {
        let b = call.bind(&["value"], 1)?;
        let a = b[0].clone().expect("bound");
        match c {
            Class::Constexpr => match &a.val {
                Val::Ir(_) => Err(Diagnostic::error(
                    a.span.clone(),
                    "`tl.constexpr(...)` needs a compile-time value",
                )),
                v => Ok(v.clone()),
            },
            _ => Err(Diagnostic::error(
                call.span.clone(),
                format!("{c:?} cannot be constructed in a kernel"),
            )),
        }
    }

    /// A shape argument: an int or a tuple/list of compile-time ints, each
    /// a power of two, [`MAX_TILE_ELEMENTS`] in all at most.
    pub fn shape_arg(&self, a: &Arg, what: &str) -> R<Vec<u32>> {
        let items: Vec<Val> = match &a.val {
            Val::Tuple(t) => t.clone(),
            Val::Const(Const::Int(_)) => vec![a.val.clone()],
            _ => {
                return Err(Diagnostic::error(
                    a.span.clone(),
                    format!(
                        "`{what}` must be a list of compile-time integers, found {}",
                        self.describe(&a.val)
                    ),
                ));
            }
        };
        let mut out = Vec::new();
        for i in items {
            let Val::Const(Const::Int(d)) = i else {
                return Err(Diagnostic::error(
                    a.span.clone(),
                    format!(
                        "`{what}` must be a list of compile-time integers, found {}",
                        self.describe(&i)
                    ),
                ));
            };
            if d > MAX_TILE_ELEMENTS {
                return Err(Diagnostic::error(
                    a.span.clone(),
                    format!("{what} dimension {d} is more than Triton's limit of {MAX_TILE_ELEMENTS} (2^20) elements per tile"),
                ));
            }
            if d <= 0 || (d & (d - 1)) != 0 {
                return Err(Diagnostic::error(a.span.clone(), format!("{what} dimension {d} is not a power of two"))
                    .with_note("Triton tiles have power-of-two dimensions; pad the tile and mask the extra elements"));
            }
            out.push(d as u32);
        }
        let numel: u64 = out.iter().map(|&d| d as u64).product();
        if numel > MAX_TILE_ELEMENTS as u64 {
            return Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "a tile of shape {} has {numel} elements, more than Triton's limit of {MAX_TILE_ELEMENTS} (2^20)",
                    shape_text(&out)
                ),
            ));
        }
        Ok(out)
    }
}

/// Methods of runtime values (`x.to(...)`, `x.sum(0)`, `desc.load(...)`).
pub(crate) const TENSOR_METHODS: &[&str] = &[
    "to",
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "reshape",
    "view",
    "trans",
    "permute",
    "expand_dims",
    "broadcast_to",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "abs",
    "sin",
    "cos",
    "sigmoid",
    "cumsum",
    "cumprod",
    "load",
    "store",
    "xor_sum",
    "reduce",
    "softmax",
    "erf",
    "floor",
    "ceil",
    "logical_and",
    "split",
    "logical_or",
];

/// Methods of dtypes.
pub(crate) const DTYPE_METHODS: &[&str] = &[
    "is_fp8",
    "is_fp16",
    "is_bf16",
    "is_fp32",
    "is_fp64",
    "is_floating",
    "is_int",
    "is_int_signed",
    "is_int_unsigned",
    "is_bool",
    "is_ptr",
    "is_int1",
    "is_int8",
    "is_int16",
    "is_int32",
    "is_int64",
    "is_uint8",
    "is_uint16",
    "is_uint32",
    "is_uint64",
    "to_ir",
];

/// Functions of `triton.language`.
pub(crate) const TL_FUNCS: &[&str] = &[
    "program_id",
    "num_programs",
    "arange",
    "zeros",
    "zeros_like",
    "full",
    "load",
    "store",
    "dot",
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "xor_sum",
    "reduce_or",
    "cumsum",
    "cumprod",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "sqrt_rn",
    "rsqrt",
    "sin",
    "cos",
    "abs",
    "floor",
    "ceil",
    "erf",
    "sigmoid",
    "softmax",
    "fma",
    "where",
    "maximum",
    "minimum",
    "clamp",
    "cdiv",
    "trans",
    "permute",
    "reshape",
    "view",
    "expand_dims",
    "broadcast_to",
    "broadcast",
    "make_block_ptr",
    "advance",
    "make_tensor_descriptor",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "static_assert",
    "static_print",
    "device_print",
    "device_assert",
    "debug_barrier",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cas",
    "cast",
    "pointer_type",
    "range",
    "static_range",
    "div_rn",
    "fdiv",
    "umulhi",
    "ravel",
    "full_like",
    "swizzle2d",
    "assume",
    "log1p",
    "tanh",
    "flip",
    "interleave",
    "join",
    "split",
    "histogram",
    "inline_asm_elementwise",
    "associative_scan",
    "reduce",
    "map_elementwise",
    "rand",
    "randn",
    "randint",
    "erf",
    "isnan",
    "isinf",
];

/// Functions of `triton.language.math` (the same as `tl.<name>`).
pub(crate) const MATH_FUNCS: &[&str] = &[
    "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "abs", "floor", "ceil",
    "erf", "fma", "div_rn", "fdiv", "umulhi", "maximum", "minimum", "clamp", "log1p", "tanh",
];

/// `libdevice` functions tawa-rs implements.
pub(crate) const LIBDEVICE_FUNCS: &[&str] = &[
    "tanh",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log1p",
    "log10",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "pow",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "fabs",
    "abs",
    "cbrt",
    "isnan",
    "isinf",
    "fmax",
    "fmin",
    "fast_expf",
    "fast_logf",
    "fast_dividef",
    "div_rn",
    "fma",
    "erfc",
    "nearbyint",
    "llrint",
    "signbit",
    "copysign",
    "hypot",
    "exp10",
    "fmod",
    "pown",
    "powf",
];
