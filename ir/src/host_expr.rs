//! Host expressions: integers a kernel computes from its parameters and
//! its grid alone (`+`, `-`, `*`, `/`, `max`, constants, widening casts,
//! `num_programs`), which the host can therefore compute at launch from the
//! same arguments and grid. The TMA path needs them: a `CUtensorMap`'s
//! extents and strides are encoded on the host, so a descriptor is only
//! turned into one when `host_expr` gives all its operands
//! (`tawa_partitioner::tma_lower` decides with it what the producer may
//! copy, and the backend writes the expressions into the launch contract).

use crate::{Axis, BinaryOp, ConstValue, Function, OpKind, Value};

/// An integer computed on the host from a kernel's parameters and grid
/// (64-bit, wrapping like the kernel's own i64 arithmetic).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HostExpr {
    Const(i64),
    /// The value of parameter `i` of the function (`Function::params[i]`).
    Param(usize),
    /// The number of programs along an axis of the grid the launch asks
    /// for. For a persistent kernel (`grid_param`) that is more than it
    /// starts along x, each started program walking several of the asked
    /// programs' tiles: the host evaluates with the asked grid, whose
    /// bounds cover every tile walked.
    NumPrograms(Axis),
    Add(Box<HostExpr>, Box<HostExpr>),
    Sub(Box<HostExpr>, Box<HostExpr>),
    Mul(Box<HostExpr>, Box<HostExpr>),
    /// Integer division rounding toward zero, as the kernel's `//` on
    /// integers does; no value when the divisor is 0.
    Div(Box<HostExpr>, Box<HostExpr>),
    Max(Box<HostExpr>, Box<HostExpr>),
}

impl HostExpr {
    /// Evaluates with `param(i)` giving integer parameter `i`'s value;
    /// `None` when a parameter has no integer value or the expression
    /// needs the grid (see [`HostExpr::eval_in_grid`]).
    pub fn eval(&self, param: &dyn Fn(usize) -> Option<i64>) -> Option<i64> {
        self.eval_in_grid(param, None)
    }

    /// [`HostExpr::eval`] for a launch of `grid` programs, when known.
    pub fn eval_in_grid(
        &self,
        param: &dyn Fn(usize) -> Option<i64>,
        grid: Option<[u32; 3]>,
    ) -> Option<i64> {
        let e = |x: &HostExpr| x.eval_in_grid(param, grid);
        Some(match self {
            HostExpr::Const(c) => *c,
            HostExpr::Param(i) => param(*i)?,
            HostExpr::NumPrograms(axis) => i64::from(grid?[axis.index()]),
            HostExpr::Add(a, b) => e(a)?.wrapping_add(e(b)?),
            HostExpr::Sub(a, b) => e(a)?.wrapping_sub(e(b)?),
            HostExpr::Mul(a, b) => e(a)?.wrapping_mul(e(b)?),
            HostExpr::Div(a, b) => e(a)?.checked_div(e(b)?)?,
            HostExpr::Max(a, b) => e(a)?.max(e(b)?),
        })
    }

    /// Whether the expression reads the launch's grid.
    pub fn uses_grid(&self) -> bool {
        match self {
            HostExpr::NumPrograms(_) => true,
            HostExpr::Const(_) | HostExpr::Param(_) => false,
            HostExpr::Add(a, b)
            | HostExpr::Sub(a, b)
            | HostExpr::Mul(a, b)
            | HostExpr::Div(a, b)
            | HostExpr::Max(a, b) => a.uses_grid() || b.uses_grid(),
        }
    }

    /// The expression as text, parameter `i` written `param(i)`: for
    /// `--explain`.
    pub fn render(&self, param: &dyn Fn(usize) -> String) -> String {
        let r = |x: &HostExpr| x.render(param);
        match self {
            HostExpr::Const(c) => c.to_string(),
            HostExpr::Param(i) => param(*i),
            HostExpr::NumPrograms(axis) => format!("num_programs({})", axis.index()),
            HostExpr::Add(a, b) => format!("{} + {}", r(a), r(b)),
            HostExpr::Sub(a, b) => format!("{} - {}", r(a), r(b)),
            HostExpr::Mul(a, b) => format!("{}*{}", r_paren(a, param), r_paren(b, param)),
            HostExpr::Div(a, b) => format!("{} // {}", r_paren(a, param), r_paren(b, param)),
            HostExpr::Max(a, b) => format!("max({}, {})", r(a), r(b)),
        }
    }
}

/// The launches a kernel's schedule was chosen for: a value the host
/// computes from the launch's arguments (say, a K loop's trip count) and
/// the range it was in when the compiler chose. The kernel is correct at
/// every launch; outside the range another schedule is faster, so a
/// launcher that compiles on demand (the Python package) compiles again
/// for a launch the guard does not hold for, and keeps both.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LaunchGuard {
    /// The value tested, over the kernel's parameters.
    pub value: HostExpr,
    /// Inclusive bounds of the range chosen for (`None`: unbounded).
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// What the value is, for messages ("the K loop at 33:5's trip
    /// count").
    pub what: String,
}

impl LaunchGuard {
    /// Whether a launch with integer parameters `param` is one the
    /// schedule was chosen for. A value the arguments do not give (a
    /// parameter that is no integer) holds: nothing says otherwise.
    pub fn holds(&self, param: &dyn Fn(usize) -> Option<i64>) -> bool {
        match self.value.eval(param) {
            Some(v) => self.min.is_none_or(|m| v >= m) && self.max.is_none_or(|m| v <= m),
            None => true,
        }
    }

    /// The condition as text (`(K + 63) // 64 <= 16`), parameter `i`
    /// written `param(i)`: for `--explain`.
    pub fn render(&self, param: &dyn Fn(usize) -> String) -> String {
        let v = self.value.render(param);
        match (self.min, self.max) {
            (Some(lo), Some(hi)) => format!("{lo} <= {v} <= {hi}"),
            (Some(lo), None) => format!("{v} >= {lo}"),
            (None, Some(hi)) => format!("{v} <= {hi}"),
            (None, None) => "always".into(),
        }
    }
}

/// `e` rendered, in parentheses when it is a sum or difference.
fn r_paren(e: &HostExpr, param: &dyn Fn(usize) -> String) -> String {
    match e {
        HostExpr::Add(..) | HostExpr::Sub(..) => format!("({})", e.render(param)),
        _ => e.render(param),
    }
}

/// Whether tensor descriptor `desc` is made by `make_tensor_desc` from
/// values the host computes at launch: the descriptors the host can encode
/// a `CUtensorMap` for (TMA loads and stores).
pub fn host_descriptor(func: &Function, desc: Value) -> bool {
    let Some(make) = func.def_op(desc) else {
        return false;
    };
    matches!(func.ops[make].kind, OpKind::MakeTensorDesc)
        && func.ops[make]
            .operands
            .iter()
            .all(|&v| host_expr(func, v).is_some())
}

/// Whether `make_tensor_desc` op `make` rebuilds a host `TensorDescriptor`
/// parameter: the frontend expands a parameter `x` into the parameters
/// `x_base, x_shape0.., x_stride0..`, in that order, and rebuilds the
/// descriptor from them (see `triton_examples::LaunchArg::Desc`). Its
/// innermost stride is 1 by the constructor's contract.
pub fn from_host_descriptor(func: &Function, make: crate::Op) -> bool {
    let operands = &func.ops[make].operands;
    let param_of = |v: Value| func.params.iter().position(|p| p.value == v);
    let Some(first) = operands.first().and_then(|&v| param_of(v)) else {
        return false;
    };
    let Some(prefix) = func.params[first].name.strip_suffix("_base") else {
        return false;
    };
    let rank = (operands.len() - 1) / 2;
    operands.iter().enumerate().all(|(i, &v)| {
        let expected = match i {
            0 => format!("{prefix}_base"),
            i if i <= rank => format!("{prefix}_shape{}", i - 1),
            i => format!("{prefix}_stride{}", i - 1 - rank),
        };
        param_of(v) == Some(first + i) && func.params[first + i].name == expected
    })
}

/// `v` as a host expression: a parameter (of any type), or an integer
/// scalar computed from parameters, constants and `num_programs` by `+`,
/// `-`, `*`, `/`, `max` and widening integer casts; `None` otherwise.
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
        OpKind::NumPrograms(axis) => Some(HostExpr::NumPrograms(*axis)),
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
        OpKind::Binary(BinaryOp::IDiv) => Some(HostExpr::Div(operand(0)?, operand(1)?)),
        OpKind::Binary(BinaryOp::Max) => Some(HostExpr::Max(operand(0)?, operand(1)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(e: HostExpr) -> Box<HostExpr> {
        Box::new(e)
    }

    #[test]
    fn grid_division_and_max_evaluate_at_launch() {
        // max(64 * (num_programs(1) - 1) + 64, 64) // stride, with `stride`
        // parameter 0.
        let last = HostExpr::Mul(
            b(HostExpr::Const(64)),
            b(HostExpr::Sub(
                b(HostExpr::NumPrograms(Axis::Y)),
                b(HostExpr::Const(1)),
            )),
        );
        let covering = HostExpr::Max(
            b(HostExpr::Add(b(last), b(HostExpr::Const(64)))),
            b(HostExpr::Const(64)),
        );
        let e = HostExpr::Div(b(covering), b(HostExpr::Param(0)));
        let param = |i: usize| (i == 0).then_some(2);
        assert!(e.uses_grid());
        assert_eq!(e.eval_in_grid(&param, Some([7, 3, 1])), Some(96));
        // A grid of no programs along y still gives one block.
        assert_eq!(e.eval_in_grid(&param, Some([7, 0, 1])), Some(32));
        // Without the grid, or dividing by zero, there is no value.
        assert_eq!(e.eval(&param), None);
        assert_eq!(e.eval_in_grid(&|_| Some(0), Some([7, 3, 1])), None);
        assert_eq!(
            e.render(&|i| format!("%p{i}")),
            "max(64*(num_programs(1) - 1) + 64, 64) // %p0"
        );
    }

    #[test]
    fn launch_guards_hold_inside_their_range() {
        // max((param(0) - 0 + 63) // 64, 0) <= 16: a K loop of at most 16
        // steps of 64.
        let trips = HostExpr::Max(
            b(HostExpr::Div(
                b(HostExpr::Add(b(HostExpr::Param(0)), b(HostExpr::Const(63)))),
                b(HostExpr::Const(64)),
            )),
            b(HostExpr::Const(0)),
        );
        let short = LaunchGuard {
            value: trips.clone(),
            min: None,
            max: Some(16),
            what: "the K loop's trip count".into(),
        };
        let long = LaunchGuard {
            min: Some(17),
            max: None,
            ..short.clone()
        };
        let k = |v: i64| move |i: usize| (i == 0).then_some(v);
        assert!(short.holds(&k(128)) && short.holds(&k(1024)));
        assert!(!short.holds(&k(1025)) && long.holds(&k(1025)));
        assert!(!long.holds(&k(64)));
        // No integer for the parameter: nothing says the guard fails.
        assert!(short.holds(&|_| None) && long.holds(&|_| None));
        assert_eq!(
            short.render(&|i| format!("p{i}")),
            "max((p0 + 63) // 64, 0) <= 16"
        );
        assert_eq!(
            long.render(&|i| format!("p{i}")),
            "max((p0 + 63) // 64, 0) >= 17"
        );
    }
}
