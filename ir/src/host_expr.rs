//! Host expressions: integers a kernel computes from its parameters alone
//! (`+`, `-`, `*`, constants, widening casts), which the host can therefore
//! compute at launch from the same arguments. The TMA path needs them: a
//! `CUtensorMap`'s extents and strides are encoded on the host, so a
//! descriptor is only turned into one when `host_expr` gives all its
//! operands (`tawa_partitioner::tma_lower` decides with it what the
//! producer may copy, and the backend writes the expressions into the
//! launch contract).

use crate::{BinaryOp, ConstValue, Function, OpKind, Value};

/// An integer computed on the host from a kernel's parameters (64-bit,
/// wrapping like the kernel's own i64 arithmetic).
#[derive(Clone, Debug, PartialEq)]
pub enum HostExpr {
    Const(i64),
    /// The value of parameter `i` of the function (`Function::params[i]`).
    Param(usize),
    Add(Box<HostExpr>, Box<HostExpr>),
    Sub(Box<HostExpr>, Box<HostExpr>),
    Mul(Box<HostExpr>, Box<HostExpr>),
}

impl HostExpr {
    /// Evaluates with `param(i)` giving integer parameter `i`'s value;
    /// `None` when a parameter has no integer value.
    pub fn eval(&self, param: &dyn Fn(usize) -> Option<i64>) -> Option<i64> {
        Some(match self {
            HostExpr::Const(c) => *c,
            HostExpr::Param(i) => param(*i)?,
            HostExpr::Add(a, b) => a.eval(param)?.wrapping_add(b.eval(param)?),
            HostExpr::Sub(a, b) => a.eval(param)?.wrapping_sub(b.eval(param)?),
            HostExpr::Mul(a, b) => a.eval(param)?.wrapping_mul(b.eval(param)?),
        })
    }
}

/// `v` as a host expression: a parameter (of any type), or an integer
/// scalar computed from parameters and constants by `+`, `-`, `*` and
/// widening integer casts; `None` otherwise.
pub fn host_expr(func: &Function, v: Value) -> Option<HostExpr> {
    if let Some(i) = func.params.iter().position(|p| p.value == v) {
        return Some(HostExpr::Param(i));
    }
    let data = &func.ops[func.def_op(v)?];
    let int = |v: Value| func.ty(v).scalar_type().is_some_and(|s| s.is_int());
    if !int(v) || !func.ty(v).is_scalar() {
        return None;
    }
    let operand = |i: usize| host_expr(func, data.operands[i]).map(Box::new);
    match &data.kind {
        OpKind::Constant(ConstValue::Int(c)) => Some(HostExpr::Const(*c)),
        OpKind::Cast { .. } => {
            let from = func.ty(data.operands[0]).scalar_type()?;
            let to = func.ty(v).scalar_type()?;
            // Widening keeps the value; narrowing would need wrapping.
            (from.is_int() && from.byte_size() <= to.byte_size()).then_some(())?;
            host_expr(func, data.operands[0])
        }
        OpKind::Binary(BinaryOp::Add) => Some(HostExpr::Add(operand(0)?, operand(1)?)),
        OpKind::Binary(BinaryOp::Sub) => Some(HostExpr::Sub(operand(0)?, operand(1)?)),
        OpKind::Binary(BinaryOp::Mul) => Some(HostExpr::Mul(operand(0)?, operand(1)?)),
        _ => None,
    }
}
