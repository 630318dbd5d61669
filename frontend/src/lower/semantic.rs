//! Triton's typing rules (`triton/language/semantic.py`): how Python
//! constants become IR values, type promotion of binary operands,
//! broadcasting, casts and pointer arithmetic.
//!
//! Python scalars are *weak*: in `x * 2` or `x + 1.0` with an `f16` tile `x`
//! the constant adopts the tile's type when it is of a lower or equal kind
//! (bool < int < float), as in PyTorch. Between two runtime values the wider
//! type wins, `f16`/`bf16` division and remainder compute in `f32`, and
//! integer `/` gives `f32`.

use tawa_ir::{
    BinaryOp, CmpPred, ConstValue, Elem, OpKind, Rounding, ScalarType, Type, UnaryOp, Value,
};

use super::value::{dtype_name, Arg, Const, Val};
use super::{Lowerer, R};
use crate::ast::{BinOpKind, CmpOpKind};
use crate::diagnostics::{Diagnostic, Span};

/// Triton's type of an integer literal: `int32` when it fits, else `int64`,
/// else `uint64`.
pub fn int_const_type(i: i128) -> Option<ScalarType> {
    if i32::try_from(i).is_ok() {
        Some(ScalarType::I32)
    } else if i64::try_from(i).is_ok() {
        Some(ScalarType::I64)
    } else if u64::try_from(i).is_ok() {
        Some(ScalarType::U64)
    } else {
        None
    }
}

/// Kinds for weak-scalar promotion (Triton's `dtype.KIND`: boolean <
/// integral < floating; signed and unsigned integers are one kind).
fn kind_rank(s: ScalarType) -> u8 {
    if s == ScalarType::I1 {
        0
    } else if s.is_int() {
        1
    } else {
        2
    }
}

fn const_kind_rank(c: &Const) -> Option<u8> {
    match c {
        Const::Bool(_) => Some(0),
        Const::Int(_) => Some(1),
        Const::Float(_) => Some(2),
        _ => None,
    }
}

/// Integer promotion of two integer types (`integer_promote_impl`).
fn integer_promote(a: ScalarType, b: ScalarType) -> ScalarType {
    if a == b {
        return a;
    }
    let (sa, sb) = (a.is_unsigned_int(), b.is_unsigned_int());
    if sa == sb {
        return if a.bits() >= b.bits() { a } else { b };
    }
    let (u, s) = if sa { (a, b) } else { (b, a) };
    if u.bits() >= s.bits() {
        u
    } else {
        s
    }
}

/// What an operand of a binary operation is, for promotion.
#[derive(Clone, Copy)]
enum Operand {
    /// A runtime value of this element type.
    Runtime(ScalarType),
    /// A Python constant of this kind rank and default type.
    Weak(u8, ScalarType),
}

impl Operand {
    fn ty(self) -> ScalarType {
        match self {
            Operand::Runtime(t) | Operand::Weak(_, t) => t,
        }
    }
}

fn is_f16_like(s: ScalarType) -> bool {
    matches!(s, ScalarType::F16 | ScalarType::BF16)
}

/// Triton's `computation_type_impl`: the type both operands convert to.
fn computation_type(a: Operand, b: Operand, div_or_mod: bool) -> Result<ScalarType, String> {
    match (a, b) {
        (Operand::Weak(rank, _), Operand::Runtime(t))
        | (Operand::Runtime(t), Operand::Weak(rank, _))
            if rank <= kind_rank(t) =>
        {
            if div_or_mod && is_f16_like(t) {
                return Ok(ScalarType::F32);
            }
            return Ok(t);
        }
        _ => {}
    }
    let (x, y) = (a.ty(), b.ty());
    use ScalarType::*;
    if x == F64 || y == F64 {
        return Ok(F64);
    }
    if x == F32 || y == F32 {
        return Ok(F32);
    }
    if x == F16 || y == F16 {
        return Ok(if div_or_mod { F32 } else { F16 });
    }
    if x == BF16 && y == BF16 {
        return Ok(if div_or_mod { F32 } else { BF16 });
    }
    if x == BF16 || y == BF16 {
        return Ok(F32);
    }
    if x.is_fp8() && y.is_fp8() {
        return Ok(if x == y { x } else { F16 });
    }
    if x.is_fp8() || y.is_fp8() {
        return Ok(F16);
    }
    if div_or_mod && x.is_unsigned_int() != y.is_unsigned_int() && x != I1 && y != I1 {
        return Err(format!(
            "cannot mix signed and unsigned integers ({} and {}) in `//` or `%`; cast one with `.to(...)`",
            x.triton_name(),
            y.triton_name()
        ));
    }
    Ok(integer_promote(x, y))
}

/// Python integer semantics on i128, with overflow reported.
fn python_int_binop(op: BinOpKind, a: i128, b: i128) -> Result<Const, String> {
    let overflow = || "integer overflow in a compile-time expression".to_string();
    Ok(match op {
        BinOpKind::Add => Const::Int(a.checked_add(b).ok_or_else(overflow)?),
        BinOpKind::Sub => Const::Int(a.checked_sub(b).ok_or_else(overflow)?),
        BinOpKind::Mul => Const::Int(a.checked_mul(b).ok_or_else(overflow)?),
        BinOpKind::Div => {
            if b == 0 {
                return Err("division by zero".into());
            }
            Const::Float(a as f64 / b as f64)
        }
        BinOpKind::FloorDiv => {
            if b == 0 {
                return Err("integer division by zero".into());
            }
            Const::Int(a.checked_div_euclid(b).ok_or_else(overflow).map(|_| {
                let q = a / b;
                if (a % b != 0) && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            })?)
        }
        BinOpKind::Mod => {
            if b == 0 {
                return Err("integer modulo by zero".into());
            }
            let r = a % b;
            Const::Int(if r != 0 && ((r < 0) != (b < 0)) {
                r + b
            } else {
                r
            })
        }
        BinOpKind::Pow => {
            if b < 0 {
                Const::Float((a as f64).powf(b as f64))
            } else {
                let e = u32::try_from(b).map_err(|_| overflow())?;
                Const::Int(a.checked_pow(e).ok_or_else(overflow)?)
            }
        }
        BinOpKind::BitAnd => Const::Int(a & b),
        BinOpKind::BitOr => Const::Int(a | b),
        BinOpKind::BitXor => Const::Int(a ^ b),
        BinOpKind::LShift => {
            let s = u32::try_from(b).map_err(|_| "negative shift count".to_string())?;
            if s >= 127 {
                return Err(overflow());
            }
            let r = a.checked_shl(s).ok_or_else(overflow)?;
            if (r >> s) != a {
                return Err(overflow());
            }
            Const::Int(r)
        }
        BinOpKind::RShift => {
            let s = u32::try_from(b).map_err(|_| "negative shift count".to_string())?;
            Const::Int(a >> s.min(127))
        }
        BinOpKind::MatMul => return Err("`@` needs tensors".into()),
    })
}

fn python_float_binop(op: BinOpKind, a: f64, b: f64) -> Result<Const, String> {
    Ok(Const::Float(match op {
        BinOpKind::Add => a + b,
        BinOpKind::Sub => a - b,
        BinOpKind::Mul => a * b,
        BinOpKind::Div => {
            if b == 0.0 {
                return Err("float division by zero".into());
            }
            a / b
        }
        BinOpKind::FloorDiv => {
            if b == 0.0 {
                return Err("float floor division by zero".into());
            }
            (a / b).floor()
        }
        BinOpKind::Mod => {
            if b == 0.0 {
                return Err("float modulo by zero".into());
            }
            let r = a % b;
            if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
                r + b
            } else {
                r
            }
        }
        BinOpKind::Pow => a.powf(b),
        _ => {
            return Err(format!(
                "unsupported operand types for `{}`: float",
                op.symbol()
            ))
        }
    }))
}

/// Python semantics of a binary operator on two constants.
pub fn const_binop(op: BinOpKind, a: &Const, b: &Const) -> Result<Const, String> {
    match (a, b) {
        (Const::Str(x), Const::Str(y)) if op == BinOpKind::Add => Ok(Const::Str(format!("{x}{y}"))),
        (Const::Float(_), _) | (_, Const::Float(_)) => {
            let (Some(x), Some(y)) = (a.as_float(), b.as_float()) else {
                return Err(format!(
                    "unsupported operand types for `{}`: {} and {}",
                    op.symbol(),
                    a.type_name(),
                    b.type_name()
                ));
            };
            python_float_binop(op, x, y)
        }
        _ => {
            let (Some(x), Some(y)) = (a.as_int(), b.as_int()) else {
                return Err(format!(
                    "unsupported operand types for `{}`: {} and {}",
                    op.symbol(),
                    a.type_name(),
                    b.type_name()
                ));
            };
            if let (Const::Bool(p), Const::Bool(q)) = (a, b) {
                match op {
                    BinOpKind::BitAnd => return Ok(Const::Bool(*p & *q)),
                    BinOpKind::BitOr => return Ok(Const::Bool(*p | *q)),
                    BinOpKind::BitXor => return Ok(Const::Bool(*p ^ *q)),
                    _ => {}
                }
            }
            python_int_binop(op, x, y)
        }
    }
}

/// Python comparison of two constants.
pub fn const_compare(op: CmpOpKind, a: &Const, b: &Const) -> Result<bool, String> {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (a, b) {
        (Const::Str(x), Const::Str(y)) => Some(x.cmp(y)),
        (Const::None, Const::None) => Some(Ordering::Equal),
        (Const::None, _) | (_, Const::None) | (Const::Str(_), _) | (_, Const::Str(_)) => {
            return match op {
                CmpOpKind::Eq | CmpOpKind::Is => Ok(false),
                CmpOpKind::Ne | CmpOpKind::IsNot => Ok(true),
                _ => Err(format!(
                    "`{}` is not supported between {} and {}",
                    cmp_symbol(op),
                    a.type_name(),
                    b.type_name()
                )),
            };
        }
        (Const::Float(_), _) | (_, Const::Float(_)) => {
            let (x, y) = (
                a.as_float().unwrap_or(f64::NAN),
                b.as_float().unwrap_or(f64::NAN),
            );
            x.partial_cmp(&y)
        }
        _ => Some(a.as_int().cmp(&b.as_int())),
    };
    Ok(match (op, ord) {
        (CmpOpKind::Eq | CmpOpKind::Is, o) => o == Some(Ordering::Equal),
        (CmpOpKind::Ne | CmpOpKind::IsNot, o) => o != Some(Ordering::Equal),
        (CmpOpKind::Lt, o) => o == Some(Ordering::Less),
        (CmpOpKind::Le, o) => matches!(o, Some(Ordering::Less | Ordering::Equal)),
        (CmpOpKind::Gt, o) => o == Some(Ordering::Greater),
        (CmpOpKind::Ge, o) => matches!(o, Some(Ordering::Greater | Ordering::Equal)),
        (CmpOpKind::In | CmpOpKind::NotIn, _) => {
            return Err("`in` needs a tuple on the right".into())
        }
    })
}

pub fn cmp_symbol(op: CmpOpKind) -> &'static str {
    match op {
        CmpOpKind::Eq => "==",
        CmpOpKind::Ne => "!=",
        CmpOpKind::Lt => "<",
        CmpOpKind::Le => "<=",
        CmpOpKind::Gt => ">",
        CmpOpKind::Ge => ">=",
        CmpOpKind::Is => "is",
        CmpOpKind::IsNot => "is not",
        CmpOpKind::In => "in",
        CmpOpKind::NotIn => "not in",
    }
}

impl Lowerer<'_> {
    /// A constant of scalar type `st`.
    pub fn const_scalar(&mut self, c: &Const, st: ScalarType, span: &Span) -> Value {
        let cv = if st.is_float() {
            ConstValue::Float(c.as_float().unwrap_or(0.0))
        } else if st == ScalarType::I1 {
            ConstValue::Bool(c.truthy())
        } else {
            let i = match c {
                Const::Float(f) => *f as i128,
                other => other.as_int().unwrap_or(0),
            };
            ConstValue::Int(wrap_to(i, st))
        };
        self.constant(cv, Type::scalar(st), span)
    }

    /// Any value usable as a runtime operand, as an IR value: constants get
    /// their default Triton type.
    pub fn to_ir(&mut self, a: &Arg) -> R<Value> {
        match &a.val {
            Val::Ir(v) => Ok(*v),
            Val::Const(c) => {
                let st = match c {
                    Const::Int(i) => int_const_type(*i).ok_or_else(|| {
                        Diagnostic::error(
                            a.span.clone(),
                            format!("integer {i} does not fit in 64 bits"),
                        )
                    })?,
                    Const::Float(_) => ScalarType::F32,
                    Const::Bool(_) => ScalarType::I1,
                    other => {
                        return Err(Diagnostic::error(
                            a.span.clone(),
                            format!(
                                "expected a number or tensor, found {}",
                                self.describe(&Val::Const(other.clone()))
                            ),
                        ))
                    }
                };
                Ok(self.const_scalar(c, st, &a.span))
            }
            Val::Undefined(why) => Err(Diagnostic::error(
                a.span.clone(),
                "this value is undefined here",
            )
            .with_label(why.clone())),
            other => Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "expected a number or tensor, found {}",
                    self.describe(other)
                ),
            )),
        }
    }

    /// A value with `i1` elements: `v != 0` unless it already is.
    pub fn to_bool(&mut self, v: Value, span: &Span) -> R<Value> {
        let ty = self.ty(v);
        match ty.elem() {
            Some(Elem::Scalar(ScalarType::I1)) => Ok(v),
            Some(Elem::Scalar(st)) => {
                let zero = self.splat_const(&Const::Int(0), st, &ty, span);
                Ok(self.emit1(
                    OpKind::Cmp(CmpPred::Ne),
                    vec![v, zero],
                    ty.with_elem(Elem::Scalar(ScalarType::I1)),
                    span,
                ))
            }
            _ => Err(Diagnostic::error(
                span.clone(),
                format!("expected a boolean condition, found {ty}"),
            )),
        }
    }

    /// A constant with the shape of `like` and element `st`.
    pub fn splat_const(&mut self, c: &Const, st: ScalarType, like: &Type, span: &Span) -> Value {
        let s = self.const_scalar(c, st, span);
        match like {
            Type::Tensor { shape, .. } => {
                let ty = Type::tensor(shape.clone(), Elem::Scalar(st));
                self.emit1(OpKind::Splat, vec![s], ty, span)
            }
            _ => s,
        }
    }

    /// Converts `v` to element type `to`, keeping its shape.
    pub fn cast(&mut self, v: Value, to: Elem, span: &Span) -> R<Value> {
        let ty = self.ty(v);
        let Some(from) = ty.elem() else {
            return Err(Diagnostic::error(
                span.clone(),
                format!("cannot convert {ty} to {}", dtype_name(to)),
            ));
        };
        if from == to {
            return Ok(v);
        }
        match (from, to) {
            (_, Elem::Scalar(ScalarType::I1)) if !from.is_ptr() => self.to_bool(v, span),
            (Elem::Ptr(_), Elem::Ptr(_)) => {
                Ok(self.emit1(OpKind::Bitcast, vec![v], ty.with_elem(to), span))
            }
            (Elem::Ptr(_), Elem::Scalar(s)) | (Elem::Scalar(s), Elem::Ptr(_))
                if s.is_int() && s.bits() == 64 =>
            {
                Ok(self.emit1(
                    OpKind::Cast {
                        rounding: Rounding::Rtne,
                    },
                    vec![v],
                    ty.with_elem(to),
                    span,
                ))
            }
            (Elem::Ptr(_), _) | (_, Elem::Ptr(_)) => Err(Diagnostic::error(
                span.clone(),
                format!("cannot convert {} to {}", dtype_name(from), dtype_name(to)),
            )
            .with_note("pointers convert only to and from 64-bit integers and other pointers")),
            _ => Ok(self.emit1(
                OpKind::Cast {
                    rounding: Rounding::Rtne,
                },
                vec![v],
                ty.with_elem(to),
                span,
            )),
        }
    }

    /// `a` as a value of element `st` with the shape of `like`
    /// (constants adopt the type; runtime values are cast, then broadcast).
    pub fn coerce(&mut self, a: &Arg, st: ScalarType, span: &Span) -> R<Value> {
        match &a.val {
            Val::Const(c @ (Const::Int(_) | Const::Float(_) | Const::Bool(_))) => {
                if st.is_int() && st != ScalarType::I1 {
                    if let Const::Int(i) = c {
                        if !fits(*i, st) {
                            return Err(Diagnostic::error(
                                a.span.clone(),
                                format!("constant {i} does not fit in {}", st.triton_name()),
                            ));
                        }
                    }
                }
                Ok(self.const_scalar(c, st, &a.span))
            }
            _ => {
                let v = self.to_ir(a)?;
                self.cast(v, Elem::Scalar(st), span)
            }
        }
    }

    fn operand_kind(&self, a: &Arg) -> R<Operand> {
        match &a.val {
            Val::Ir(v) => match self.ty(*v).elem() {
                Some(Elem::Scalar(s)) => Ok(Operand::Runtime(s)),
                _ => Err(Diagnostic::error(
                    a.span.clone(),
                    format!("expected a number or tensor, found {}", self.ty(*v)),
                )),
            },
            Val::Const(c) => {
                let rank = const_kind_rank(c).ok_or_else(|| {
                    Diagnostic::error(
                        a.span.clone(),
                        format!(
                            "expected a number or tensor, found {}",
                            self.describe(&a.val)
                        ),
                    )
                })?;
                let st = match c {
                    Const::Int(i) => int_const_type(*i).unwrap_or(ScalarType::I64),
                    Const::Float(_) => ScalarType::F32,
                    _ => ScalarType::I1,
                };
                Ok(Operand::Weak(rank, st))
            }
            Val::Undefined(why) => Err(Diagnostic::error(
                a.span.clone(),
                "this value is undefined here",
            )
            .with_label(why.clone())),
            other => Err(Diagnostic::error(
                a.span.clone(),
                format!(
                    "expected a number or tensor, found {}",
                    self.describe(other)
                ),
            )),
        }
    }

    /// Converts both operands to their computation type and a common shape.
    pub fn promote_pair(
        &mut self,
        a: &Arg,
        b: &Arg,
        div_or_mod: bool,
        what: &str,
        span: &Span,
    ) -> R<(Value, Value, ScalarType)> {
        let (ka, kb) = (self.operand_kind(a)?, self.operand_kind(b)?);
        let st = computation_type(ka, kb, div_or_mod).map_err(|m| {
            Diagnostic::error(span.clone(), format!("invalid operands of `{what}`: {m}"))
        })?;
        let x = self.coerce(a, st, span)?;
        let y = self.coerce(b, st, span)?;
        let (x, y) = self.broadcast_pair(x, y, &a.span, &b.span, span)?;
        Ok((x, y, st))
    }

    /// The broadcast shape of two shapes (numpy rules, right-aligned).
    pub fn broadcast_shape(&self, a: &[u32], b: &[u32]) -> Option<Vec<u32>> {
        let n = a.len().max(b.len());
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let da = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let db = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            out.push(if da == db || db == 1 {
                da
            } else if da == 1 {
                db
            } else {
                return None;
            });
        }
        Some(out)
    }

    /// `v` broadcast to `shape` (splat for scalars, new leading dims, then
    /// size-1 dims grown).
    pub fn broadcast_to(&mut self, v: Value, shape: &[u32], span: &Span) -> R<Value> {
        let ty = self.ty(v);
        let elem = ty
            .elem()
            .ok_or_else(|| Diagnostic::error(span.clone(), format!("cannot broadcast {ty}")))?;
        if shape.is_empty() {
            if ty.is_scalar() {
                return Ok(v);
            }
            return Err(Diagnostic::error(
                span.clone(),
                format!("cannot broadcast {ty} to a scalar"),
            ));
        }
        match &ty {
            Type::Scalar(_) => Ok(self.emit1(
                OpKind::Splat,
                vec![v],
                Type::tensor(shape.to_vec(), elem),
                span,
            )),
            Type::Tensor { shape: s, .. } => {
                if s.as_slice() == shape {
                    return Ok(v);
                }
                if s.len() > shape.len() {
                    return Err(Diagnostic::error(
                        span.clone(),
                        format!("cannot broadcast {ty} to shape {}", shape_text(shape)),
                    ));
                }
                let mut cur = v;
                let mut cur_shape = s.clone();
                while cur_shape.len() < shape.len() {
                    cur_shape.insert(0, 1);
                    cur = self.emit1(
                        OpKind::ExpandDims { axis: 0 },
                        vec![cur],
                        Type::tensor(cur_shape.clone(), elem),
                        span,
                    );
                }
                for (d, (&have, &want)) in cur_shape.iter().zip(shape).enumerate() {
                    if have != want && have != 1 {
                        return Err(Diagnostic::error(span.clone(), format!(
                            "cannot broadcast {ty} to shape {}: dimension {d} is {have}, expected {want} or 1",
                            shape_text(shape)
                        )));
                    }
                }
                if cur_shape.as_slice() != shape {
                    cur = self.emit1(
                        OpKind::Broadcast,
                        vec![cur],
                        Type::tensor(shape.to_vec(), elem),
                        span,
                    );
                }
                Ok(cur)
            }
            _ => Err(Diagnostic::error(
                span.clone(),
                format!("cannot broadcast {ty}"),
            )),
        }
    }

    pub fn broadcast_pair(
        &mut self,
        x: Value,
        y: Value,
        sx: &Span,
        sy: &Span,
        span: &Span,
    ) -> R<(Value, Value)> {
        let (tx, ty) = (self.ty(x), self.ty(y));
        let shape = self.broadcast_shape(tx.shape(), ty.shape()).ok_or_else(|| {
            Diagnostic::error(span.clone(), format!("incompatible shapes {} and {}", shape_text(tx.shape()), shape_text(ty.shape())))
                .with_label("these cannot be broadcast together")
                .with_secondary(sx.clone(), format!("{tx}"))
                .with_secondary(sy.clone(), format!("{ty}"))
                .with_note("shapes broadcast when each dimension (aligned from the right) is equal or 1; use `x[:, None]` or `x[None, :]` to add a dimension")
        })?;
        let x = self.broadcast_to(x, &shape, sx)?;
        let y = self.broadcast_to(y, &shape, sy)?;
        Ok((x, y))
    }

    /// Broadcasts several values to their common shape.
    pub fn broadcast_all<const N: usize>(
        &mut self,
        vals: [(Value, &Span); N],
        span: &Span,
    ) -> R<[Value; N]> {
        let mut shape: Vec<u32> = Vec::new();
        for (v, _) in &vals {
            let s = self.ty(*v).shape().to_vec();
            shape = match self.broadcast_shape(&shape, &s) {
                Some(s) => s,
                None => {
                    let mut d = Diagnostic::error(span.clone(), "operands of incompatible shapes")
                        .with_label("these cannot be broadcast together");
                    for (v, sp) in &vals {
                        d = d.with_secondary((*sp).clone(), format!("{}", self.ty(*v)));
                    }
                    return Err(d);
                }
            };
        }
        let mut out = vals.map(|(v, _)| v);
        for (o, (_, sp)) in out.iter_mut().zip(vals.iter()) {
            *o = self.broadcast_to(*o, &shape, sp)?;
        }
        Ok(out)
    }

    /// Lowers `a <op> b` with Triton's semantics (Python's when both are
    /// compile-time constants).
    pub fn binary(&mut self, op: BinOpKind, a: Arg, b: Arg, span: &Span) -> R<Val> {
        if let (Val::Const(x), Val::Const(y)) = (&a.val, &b.val) {
            return const_binop(op, x, y)
                .map(Val::Const)
                .map_err(|m| Diagnostic::error(span.clone(), m));
        }
        if let (Val::Tuple(x), Val::Tuple(y)) = (&a.val, &b.val) {
            if op == BinOpKind::Add {
                return Ok(Val::Tuple(x.iter().chain(y).cloned().collect()));
            }
        }
        if op == BinOpKind::MatMul {
            let x = self.to_ir(&a)?;
            let y = self.to_ir(&b)?;
            return self
                .dot(
                    x,
                    y,
                    None,
                    Default::default(),
                    None,
                    None,
                    &a.span,
                    &b.span,
                    span,
                )
                .map(Val::Ir);
        }
        // Pointer arithmetic.
        let a_ptr = self.is_ptr(&a.val);
        let b_ptr = self.is_ptr(&b.val);
        if a_ptr || b_ptr {
            return self
                .pointer_arith(op, a, b, a_ptr, b_ptr, span)
                .map(Val::Ir);
        }
        let sym = op.symbol();
        let kind = match op {
            BinOpKind::Add => BinaryOp::Add,
            BinOpKind::Sub => BinaryOp::Sub,
            BinOpKind::Mul => BinaryOp::Mul,
            BinOpKind::Div => {
                let (x, y, st) = self.promote_pair(&a, &b, true, sym, span)?;
                let (x, y) = if st.is_int() {
                    (
                        self.cast(x, Elem::Scalar(ScalarType::F32), span)?,
                        self.cast(y, Elem::Scalar(ScalarType::F32), span)?,
                    )
                } else {
                    (x, y)
                };
                let ty = self.ty(x);
                return Ok(Val::Ir(self.emit1(
                    OpKind::Binary(BinaryOp::Div),
                    vec![x, y],
                    ty,
                    span,
                )));
            }
            BinOpKind::FloorDiv => BinaryOp::IDiv,
            BinOpKind::Mod => BinaryOp::Rem,
            BinOpKind::Pow => {
                return Err(Diagnostic::error(span.clone(), "`**` is not supported on tensors")
                    .with_note("use `libdevice.pow(x, y)` (from `triton.language.extra import libdevice`), or multiply"));
            }
            BinOpKind::BitAnd => BinaryOp::And,
            BinOpKind::BitOr => BinaryOp::Or,
            BinOpKind::BitXor => BinaryOp::Xor,
            BinOpKind::LShift => BinaryOp::Shl,
            BinOpKind::RShift => BinaryOp::Shr,
            BinOpKind::MatMul => unreachable!("handled above"),
        };
        let div_or_mod = matches!(op, BinOpKind::FloorDiv | BinOpKind::Mod);
        let (x, y, st) = self.promote_pair(&a, &b, div_or_mod, sym, span)?;
        let int_only = matches!(
            kind,
            BinaryOp::IDiv
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Xor
                | BinaryOp::Shl
                | BinaryOp::Shr
        );
        if int_only && !st.is_int() {
            let ta = self.describe(&a.val);
            let tb = self.describe(&b.val);
            return Err(Diagnostic::error(
                span.clone(),
                format!("`{sym}` needs integer operands, found {ta} and {tb}"),
            )
            .with_note(if op == BinOpKind::FloorDiv {
                "for floats, divide with `/` and round with `libdevice.floor`"
            } else {
                "bitwise operators apply to integers and booleans"
            }));
        }
        let ty = self.ty(x);
        Ok(Val::Ir(self.emit1(
            OpKind::Binary(kind),
            vec![x, y],
            ty,
            span,
        )))
    }

    fn is_ptr(&self, v: &Val) -> bool {
        match v {
            Val::Ir(x) => self.ty(*x).elem().is_some_and(|e| e.is_ptr()),
            _ => false,
        }
    }

    fn pointer_arith(
        &mut self,
        op: BinOpKind,
        a: Arg,
        b: Arg,
        a_ptr: bool,
        b_ptr: bool,
        span: &Span,
    ) -> R<Value> {
        let bad = |this: &Self| {
            Diagnostic::error(
                span.clone(),
                format!(
                    "`{}` is not defined between {} and {}",
                    op.symbol(),
                    this.describe(&a.val),
                    this.describe(&b.val)
                ),
            )
            .with_note("pointers support `ptr + offset` and `ptr - offset` with integer offsets")
        };
        let (p, off, negate) = match (op, a_ptr, b_ptr) {
            (BinOpKind::Add, true, false) => (&a, &b, false),
            (BinOpKind::Add, false, true) => (&b, &a, false),
            (BinOpKind::Sub, true, false) => (&a, &b, true),
            _ => return Err(bad(self)),
        };
        let pv = self.to_ir(p)?;
        let off_kind = self.operand_kind(off)?;
        let ost = off_kind.ty();
        if !ost.is_int() || ost == ScalarType::I1 {
            return Err(Diagnostic::error(
                off.span.clone(),
                format!(
                    "a pointer offset must be an integer, found {}",
                    self.describe(&off.val)
                ),
            )
            .with_secondary(p.span.clone(), "pointer"));
        }
        let mut ov = self.to_ir(off)?;
        if negate {
            let ty = self.ty(ov);
            ov = self.emit1(OpKind::Unary(UnaryOp::Neg), vec![ov], ty, span);
        }
        let (pv, ov) = self.broadcast_pair(pv, ov, &p.span, &off.span, span)?;
        let ty = self.ty(pv);
        Ok(self.emit1(OpKind::AddPtr, vec![pv, ov], ty, span))
    }

    /// `a <cmp> b` on runtime values.
    pub fn compare(&mut self, op: CmpOpKind, a: Arg, b: Arg, span: &Span) -> R<Val> {
        if let (Val::Const(x), Val::Const(y)) = (&a.val, &b.val) {
            return const_compare(op, x, y)
                .map(|b| Val::Const(Const::Bool(b)))
                .map_err(|m| Diagnostic::error(span.clone(), m));
        }
        let pred = match op {
            CmpOpKind::Eq => CmpPred::Eq,
            CmpOpKind::Ne => CmpPred::Ne,
            CmpOpKind::Lt => CmpPred::Lt,
            CmpOpKind::Le => CmpPred::Le,
            CmpOpKind::Gt => CmpPred::Gt,
            CmpOpKind::Ge => CmpPred::Ge,
            CmpOpKind::Is | CmpOpKind::IsNot => {
                // `x is None` on a runtime value: never None.
                if matches!(b.val, Val::Const(Const::None))
                    || matches!(a.val, Val::Const(Const::None))
                {
                    return Ok(Val::Const(Const::Bool(op == CmpOpKind::IsNot)));
                }
                return Err(Diagnostic::error(
                    span.clone(),
                    "`is` compares only with `None` in Triton kernels",
                ));
            }
            CmpOpKind::In | CmpOpKind::NotIn => {
                return Err(Diagnostic::error(
                    span.clone(),
                    "`in` needs compile-time values on both sides",
                ));
            }
        };
        let (x, y) = if self.is_ptr(&a.val) || self.is_ptr(&b.val) {
            let x = self.to_ir(&a)?;
            let y = self.to_ir(&b)?;
            if self.ty(x).elem() != self.ty(y).elem() {
                return Err(Diagnostic::error(
                    span.clone(),
                    format!("cannot compare {} with {}", self.ty(x), self.ty(y)),
                ));
            }
            self.broadcast_pair(x, y, &a.span, &b.span, span)?
        } else {
            let (x, y, _) = self.promote_pair(&a, &b, false, cmp_symbol(op), span)?;
            (x, y)
        };
        let ty = self.ty(x).with_elem(Elem::Scalar(ScalarType::I1));
        Ok(Val::Ir(self.emit1(OpKind::Cmp(pred), vec![x, y], ty, span)))
    }

    /// Unary minus, `~` and `not` on runtime values.
    pub fn negate(&mut self, a: Arg, span: &Span) -> R<Val> {
        match &a.val {
            Val::Const(Const::Int(i)) => i.checked_neg().map(Val::int).ok_or_else(|| {
                Diagnostic::error(
                    span.clone(),
                    "integer overflow in a compile-time expression",
                )
            }),
            Val::Const(Const::Bool(b)) => Ok(Val::int(-(*b as i128))),
            Val::Const(Const::Float(f)) => Ok(Val::Const(Const::Float(-f))),
            _ => {
                let v = self.to_ir(&a)?;
                let ty = self.ty(v);
                if ty.elem().is_none_or(|e| e.is_ptr()) {
                    return Err(Diagnostic::error(
                        span.clone(),
                        format!("cannot negate {ty}"),
                    ));
                }
                Ok(Val::Ir(self.emit1(
                    OpKind::Unary(UnaryOp::Neg),
                    vec![v],
                    ty,
                    span,
                )))
            }
        }
    }

    pub fn invert(&mut self, a: Arg, span: &Span) -> R<Val> {
        match &a.val {
            Val::Const(Const::Int(i)) => Ok(Val::int(!i)),
            Val::Const(Const::Bool(b)) => Ok(Val::int(!(*b as i128))),
            _ => {
                let v = self.to_ir(&a)?;
                let ty = self.ty(v);
                if !ty.scalar_type().is_some_and(|s| s.is_int()) {
                    return Err(Diagnostic::error(
                        span.clone(),
                        format!("`~` needs an integer or boolean operand, found {ty}"),
                    ));
                }
                Ok(Val::Ir(self.emit1(
                    OpKind::Unary(UnaryOp::Not),
                    vec![v],
                    ty,
                    span,
                )))
            }
        }
    }

    pub fn logical_not(&mut self, a: Arg, span: &Span) -> R<Val> {
        if let Some(t) = self.static_truth(&a.val) {
            return Ok(Val::Const(Const::Bool(!t)));
        }
        let v = self.to_ir(&a)?;
        let b = self.to_bool(v, span)?;
        let ty = self.ty(b);
        Ok(Val::Ir(self.emit1(
            OpKind::Unary(UnaryOp::Not),
            vec![b],
            ty,
            span,
        )))
    }

    /// `tl.dot`: checks shapes and types, picks the accumulator.
    #[allow(clippy::too_many_arguments)]
    pub fn dot(
        &mut self,
        a: Value,
        b: Value,
        acc: Option<Value>,
        input_precision: tawa_ir::InputPrecision,
        max_num_imprecise_acc: Option<u32>,
        out_dtype: Option<ScalarType>,
        sa: &Span,
        sb: &Span,
        span: &Span,
    ) -> R<Value> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        let (
            Type::Tensor {
                shape: shape_a,
                elem: ea,
            },
            Type::Tensor {
                shape: shape_b,
                elem: eb,
            },
        ) = (&ta, &tb)
        else {
            let (bad, t) = if ta.is_tensor() { (sb, &tb) } else { (sa, &ta) };
            return Err(Diagnostic::error(
                bad.clone(),
                format!("`tl.dot` needs 2-D tiles, found {t}"),
            ));
        };
        if shape_a.len() != 2 || shape_b.len() != 2 {
            let (bad, t) = if shape_a.len() != 2 {
                (sa, &ta)
            } else {
                (sb, &tb)
            };
            return Err(Diagnostic::error(
                bad.clone(),
                format!("`tl.dot` needs 2-D tiles, found {t}"),
            )
            .with_note("batched (3-D) dots are not supported yet"));
        }
        let (m, k, k2, n) = (shape_a[0], shape_a[1], shape_b[0], shape_b[1]);
        if k != k2 {
            return Err(Diagnostic::error(
                span.clone(),
                format!("`tl.dot` inner dimensions differ: {ta} @ {tb}"),
            )
            .with_secondary(sa.clone(), format!("K = {k} here"))
            .with_secondary(sb.clone(), format!("K = {k2} here"))
            .with_note("the first operand is M x K and the second K x N"));
        }
        for (what, d, s) in [("M", m, sa), ("K", k, sa), ("N", n, sb)] {
            if d < 16 {
                return Err(Diagnostic::error(
                    s.clone(),
                    format!("`tl.dot` needs every dimension to be at least 16, but {what} = {d}"),
                )
                .with_note("tensor cores work on tiles of at least 16x16x16"));
            }
        }
        let (Some(sta), Some(stb)) = (ea.scalar(), eb.scalar()) else {
            return Err(Diagnostic::error(
                span.clone(),
                "`tl.dot` operands must be numbers, not pointers",
            ));
        };
        let a_ok = |s: ScalarType| {
            s.is_float() && s != ScalarType::F64 || matches!(s, ScalarType::I8 | ScalarType::U8)
        };
        for (s, sp) in [(sta, sa), (stb, sb)] {
            if !a_ok(s) {
                return Err(Diagnostic::error(
                    sp.clone(),
                    format!("`tl.dot` does not support {} operands", s.triton_name()),
                )
                .with_note("supported: fp8, fp16, bf16, fp32 (as tf32) and int8"));
            }
        }
        let (a, b) = if sta != stb {
            if sta.is_fp8() && stb.is_fp8() {
                (a, b)
            } else {
                return Err(Diagnostic::error(
                    span.clone(),
                    format!(
                        "`tl.dot` operands have different types: {} and {}",
                        sta.triton_name(),
                        stb.triton_name()
                    ),
                )
                .with_secondary(sa.clone(), format!("{ta}"))
                .with_secondary(sb.clone(), format!("{tb}"))
                .with_note("cast one with `.to(...)`"));
            }
        } else {
            (a, b)
        };
        // Mixed fp8 operands: compute on a common fp8 type is not possible;
        // upcast both to f16 (exact for every fp8 value).
        let (a, b) = if sta != stb {
            (
                self.cast(a, Elem::Scalar(ScalarType::F16), sa)?,
                self.cast(b, Elem::Scalar(ScalarType::F16), sb)?,
            )
        } else {
            (a, b)
        };
        let default_out = if sta.is_int() {
            ScalarType::I32
        } else {
            ScalarType::F32
        };
        let out = out_dtype.unwrap_or(default_out);
        let acc_ty = Type::tensor(vec![m, n], Elem::Scalar(out));
        let acc = match acc {
            Some(c) => {
                let tc = self.ty(c);
                if tc.shape() != [m, n] || !tc.is_tensor() {
                    return Err(Diagnostic::error(
                        span.clone(),
                        format!("the accumulator of `tl.dot` must be {m}x{n}, found {tc}"),
                    ));
                }
                let cst = tc.scalar_type().unwrap_or(ScalarType::F32);
                if out_dtype.is_some_and(|o| o != cst) {
                    return Err(Diagnostic::error(
                        span.clone(),
                        format!(
                            "the accumulator is {} but `out_dtype` is {}",
                            cst.triton_name(),
                            out.triton_name()
                        ),
                    ));
                }
                c
            }
            None => {
                let zero = if out.is_float() {
                    Const::Float(0.0)
                } else {
                    Const::Int(0)
                };
                self.splat_const(&zero, out, &acc_ty, span)
            }
        };
        let ty = self.ty(acc);
        Ok(self.emit1(
            OpKind::Dot {
                input_precision,
                max_num_imprecise_acc,
                is_async: false,
            },
            vec![a, b, acc],
            ty,
            span,
        ))
    }
}

/// Whether integer `i` is representable in `st` (unsigned types also accept
/// the signed range of their width, as bit patterns).
pub fn fits(i: i128, st: ScalarType) -> bool {
    let bits = st.bits();
    if st == ScalarType::I1 {
        return i == 0 || i == 1;
    }
    let lo = -(1i128 << (bits - 1));
    let hi = if st.is_unsigned_int() {
        (1i128 << bits) - 1
    } else {
        (1i128 << (bits - 1)) - 1
    };
    i >= lo && i <= hi
}

/// Two's-complement wrap of `i` to `st`'s width, as a signed i64 bit pattern.
fn wrap_to(i: i128, st: ScalarType) -> i64 {
    let bits = st.bits();
    if bits >= 64 {
        return i as i64;
    }
    let m = (1i128 << bits) - 1;
    let v = i & m;
    if st.is_unsigned_int() {
        v as i64
    } else if v >= 1i128 << (bits - 1) {
        (v - (1i128 << bits)) as i64
    } else {
        v as i64
    }
}

pub fn shape_text(s: &[u32]) -> String {
    format!(
        "[{}]",
        s.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
