//! Execution of ops: the per-program interpreter loop, structured control
//! flow, and the semantics of every [`OpKind`].

use std::rc::Rc;

use super::float::{self, round, TF32};
use super::host::{Host, WsLaunch};
use super::value::*;
use super::{ArgValue, InterpError, InterpOptions};
use crate::function::{Block, Function, Op, Value};
use crate::ops::*;
use crate::types::{Elem, ScalarType, Type};
use crate::EntityRef;

/// Errors below the op level: a message that the caller completes with the
/// op, location and program id.
type R<T> = Result<T, String>;

pub(super) fn run_grid(
    func: &Function,
    args: &[ArgValue],
    grid: [u32; 3],
    host: &mut dyn Host,
    opts: &InterpOptions,
) -> Result<(), InterpError> {
    let launch_err = |message: String| InterpError {
        message,
        op: "launch".into(),
        loc: Loc::UNKNOWN,
        pid: [0; 3],
    };
    if args.len() != func.params.len() {
        return Err(launch_err(format!(
            "kernel `{}` takes {} arguments, {} given",
            func.name,
            func.params.len(),
            args.len()
        )));
    }
    let mut bound = Vec::with_capacity(args.len());
    for (p, a) in func.params.iter().zip(args) {
        let v = bind_arg(func.ty(p.value), *a)
            .map_err(|m| launch_err(format!("argument `{}`: {m}", p.name)))?;
        bound.push(Rc::new(v));
    }
    let mut interp = Interp {
        func,
        sync: host.wants_sync_points(),
        host,
        env: vec![None; func.values.len()],
        pid: [0; 3],
        grid,
        steps: 0,
        max_steps: opts.max_steps,
    };
    // A stream-K program waits only for programs of higher x
    // (`FuncAttrs::stream_k`): run those first.
    let xs = |n: u32| -> Box<dyn Iterator<Item = u32>> {
        if func.attrs.stream_k {
            Box::new((0..n).rev())
        } else {
            Box::new(0..n)
        }
    };
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in xs(grid[0]) {
                interp.pid = [x, y, z];
                for (p, v) in func.params.iter().zip(&bound) {
                    interp.env[p.value.index()] = Some(v.clone());
                }
                interp.exec_block(func.body, Vec::new())?;
            }
        }
    }
    Ok(())
}

pub(super) fn run_region(
    func: &Function,
    block: Block,
    env: Vec<Option<RVal>>,
    pid: [u32; 3],
    grid: [u32; 3],
    host: &mut dyn Host,
    max_steps: Option<u64>,
) -> Result<(), InterpError> {
    let mut env: Vec<Option<Rc<RVal>>> = env.into_iter().map(|v| v.map(Rc::new)).collect();
    env.resize(func.values.len(), None);
    let mut interp = Interp {
        func,
        sync: host.wants_sync_points(),
        host,
        env,
        pid,
        grid,
        steps: 0,
        max_steps,
    };
    interp.exec_block(block, Vec::new())?;
    Ok(())
}

fn scalar_tile(elem: Elem, n: Num) -> Tile {
    Tile::from_nums(Vec::new(), elem, std::iter::once(n))
}

fn bind_arg(ty: &Type, a: ArgValue) -> R<RVal> {
    let Type::Scalar(elem) = ty else {
        return Err(format!(
            "parameters of type {ty} cannot be passed (pass base pointer, shape and strides)"
        ));
    };
    let n = match (*elem, a) {
        (Elem::Ptr(_), ArgValue::Ptr(p)) => Num::I(p as i64),
        (Elem::Ptr(_), ArgValue::Int(i)) => Num::I(i),
        (Elem::Scalar(st), ArgValue::Float(f)) if st.is_float() => Num::F(round(st, f, false)),
        (Elem::Scalar(st), ArgValue::Int(i)) if st.is_float() => {
            Num::F(int_to_float(ScalarType::I64, st, i))
        }
        (Elem::Scalar(st), ArgValue::Int(i)) => Num::I(wrap(st, i)),
        (_, a) => return Err(format!("{a:?} given for a parameter of type {ty}")),
    };
    Ok(RVal::Tile(scalar_tile(*elem, n)))
}

/// Name of an op kind in error messages (the text format's spelling).
pub(super) fn op_name(kind: &OpKind) -> String {
    match kind {
        OpKind::Constant(_) => "constant",
        OpKind::ProgramId(_) => "program_id",
        OpKind::NumPrograms(_) => "num_programs",
        OpKind::MakeRange { .. } => "make_range",
        OpKind::Splat => "splat",
        OpKind::Broadcast => "broadcast",
        OpKind::ExpandDims { .. } => "expand_dims",
        OpKind::Reshape => "reshape",
        OpKind::Trans { .. } => "trans",
        OpKind::Join => "join",
        OpKind::Split => "split",
        OpKind::Binary(b) => b.name(),
        OpKind::Unary(u) => u.name(),
        OpKind::Fma => "fma",
        OpKind::Cmp(_) => "cmp",
        OpKind::Select => "select",
        OpKind::Cast { .. } => "cast",
        OpKind::Bitcast => "bitcast",
        OpKind::AddPtr => "addptr",
        OpKind::Load { .. } => "load",
        OpKind::Store { .. } => "store",
        OpKind::Dot { .. } => "dot",
        OpKind::DotWait { .. } => "dot_wait",
        OpKind::Reduce { .. } => "reduce",
        OpKind::Scan { .. } => "scan",
        OpKind::MakeBlockPtr { .. } => "make_block_ptr",
        OpKind::Advance => "advance",
        OpKind::MakeTensorDesc => "make_tensor_desc",
        OpKind::DescLoad { .. } => "desc_load",
        OpKind::DescStore => "desc_store",
        OpKind::AtomicRmw { .. } => "atomic_rmw",
        OpKind::AtomicCas { .. } => "atomic_cas",
        OpKind::Hint { .. } => "hint",
        OpKind::For(_) => "for",
        OpKind::If => "if",
        OpKind::While => "while",
        OpKind::Yield => "yield",
        OpKind::Condition => "condition",
        OpKind::Return => "return",
        OpKind::ArefCreate => "aref.create",
        OpKind::ArefPut => "aref.put",
        OpKind::ArefGet => "aref.get",
        OpKind::ArefConsumed => "aref.consumed",
        OpKind::WarpSpecialize { .. } => "ws",
        OpKind::DebugBarrier => "debug_barrier",
        OpKind::TurnTake => "turn.take",
        OpKind::TurnPass => "turn.pass",
        OpKind::ClusterSum => "cluster.sum",
        OpKind::StreamKPut => "stream_k.put",
        OpKind::StreamKTake => "stream_k.take",
        OpKind::Print { .. } => "print",
        OpKind::Assert { .. } => "assert",
    }
    .to_string()
}

struct Interp<'a> {
    func: &'a Function,
    host: &'a mut dyn Host,
    /// Whether the host wants [`Host::sync_point`] calls.
    sync: bool,
    env: Vec<Option<Rc<RVal>>>,
    pid: [u32; 3],
    grid: [u32; 3],
    steps: u64,
    max_steps: Option<u64>,
}

fn as_tile(r: &RVal) -> R<&Tile> {
    match r {
        RVal::Tile(t) => Ok(t),
        _ => Err("expected a scalar or tile operand".into()),
    }
}

fn scalar_int(r: &RVal) -> R<i64> {
    let t = as_tile(r)?;
    if t.numel() != 1 {
        return Err("expected a scalar operand".into());
    }
    Ok(t.int(0))
}

fn scalar_type_of(elem: Elem) -> ScalarType {
    match elem {
        Elem::Scalar(s) => s,
        // Pointers compare and wrap as 64-bit unsigned addresses.
        Elem::Ptr(_) => ScalarType::U64,
    }
}

/// `a < b` in the integer type `st`.
fn int_lt(st: ScalarType, a: i64, b: i64) -> bool {
    if is_unsigned(st) {
        (a as u64) < (b as u64)
    } else {
        a < b
    }
}

/// Checks that every tile has `n` elements or one (which broadcasts).
fn check_lanes(n: usize, tiles: &[&Tile]) -> R<()> {
    for t in tiles {
        if t.numel() != n && t.numel() != 1 {
            return Err(format!(
                "operand of shape {:?} does not match {n} lanes",
                t.shape
            ));
        }
    }
    Ok(())
}

/// Formats lane `i` of a tile of `shape` as `lane i (index [r, c])`.
fn lane_desc(i: usize, shape: &[u32]) -> String {
    if shape.len() <= 1 {
        return format!("lane {i}");
    }
    let mut idx = vec![0; shape.len()];
    unflatten(i, shape, &mut idx);
    format!("lane {i} (index {idx:?})")
}

impl Interp<'_> {
    fn err(&self, op: Op, message: impl Into<String>) -> InterpError {
        let data = &self.func.ops[op];
        InterpError {
            message: message.into(),
            op: op_name(&data.kind),
            loc: data.loc,
            pid: self.pid,
        }
    }

    /// The value of `v` as an op reads it: a slot view is read through
    /// the host now.
    fn get(&self, v: Value) -> R<Rc<RVal>> {
        let x = self.get_raw(v)?;
        match &*x {
            RVal::View(view) => self.host.read_view(view).map(Rc::new),
            _ => Ok(x),
        }
    }

    /// The value of `v` as stored, for ops that only pass it on (yields,
    /// loop inits, hints): a slot view stays a view.
    fn get_raw(&self, v: Value) -> R<Rc<RVal>> {
        self.env
            .get(v.index())
            .and_then(|x| x.clone())
            .ok_or_else(|| format!("value {v} used before it is defined"))
    }

    /// Whether another partition could observe `op` or change what it
    /// reads: the ops before which [`Host::sync_point`] is called.
    fn is_shared_access(&self, op: Op) -> bool {
        let data = &self.func.ops[op];
        let touches_shared_state = matches!(
            data.kind,
            OpKind::Load { .. }
                | OpKind::Store { .. }
                | OpKind::DescLoad { .. }
                | OpKind::DescStore
                | OpKind::AtomicRmw { .. }
                | OpKind::AtomicCas { .. }
                | OpKind::ArefPut
                | OpKind::ArefGet
                | OpKind::ArefConsumed
                | OpKind::ClusterSum
                | OpKind::StreamKPut
                | OpKind::StreamKTake
                | OpKind::Print { .. }
        );
        touches_shared_state
            || data.operands.iter().any(|v| {
                matches!(
                    self.env.get(v.index()).and_then(|x| x.as_deref()),
                    Some(RVal::View(_))
                )
            })
    }

    /// Runs `block` with `args` bound to its arguments; returns the operands
    /// of its terminator (empty if it has none).
    fn exec_block(
        &mut self,
        block: Block,
        args: Vec<Rc<RVal>>,
    ) -> Result<Vec<Rc<RVal>>, InterpError> {
        let func = self.func;
        let bdata = &func.blocks[block];
        for (&a, v) in bdata.args.iter().zip(args) {
            self.env[a.index()] = Some(v);
        }
        for &op in &bdata.ops {
            self.steps += 1;
            if let Some(max) = self.max_steps {
                if self.steps > max {
                    return Err(self.err(
                        op,
                        format!("step limit exceeded ({max} ops); a loop may not terminate"),
                    ));
                }
            }
            let data = &func.ops[op];
            if self.sync && self.is_shared_access(op) {
                self.host.sync_point(op).map_err(|m| self.err(op, m))?;
            }
            let results: Vec<Rc<RVal>> = match &data.kind {
                OpKind::Yield | OpKind::Condition | OpKind::Return => {
                    return data
                        .operands
                        .iter()
                        .map(|&v| self.get_raw(v))
                        .collect::<R<Vec<_>>>()
                        .map_err(|m| self.err(op, m));
                }
                OpKind::For(_) => self.exec_for(op)?,
                OpKind::If => {
                    let cond = self
                        .get(data.operands[0])
                        .and_then(|c| scalar_int(&c))
                        .map_err(|m| self.err(op, m))?;
                    let region = if cond != 0 {
                        data.regions.first()
                    } else {
                        data.regions.get(1)
                    };
                    match region {
                        Some(&r) => self.exec_block(r, Vec::new())?,
                        None => Vec::new(),
                    }
                }
                OpKind::While => self.exec_while(op)?,
                OpKind::WarpSpecialize { .. } => {
                    let env = self.env.iter().map(|v| v.as_deref().cloned()).collect();
                    self.host.warp_specialize(WsLaunch {
                        func,
                        op,
                        env,
                        pid: self.pid,
                        grid: self.grid,
                        max_steps: self.max_steps,
                    })?;
                    Vec::new()
                }
                OpKind::Hint { .. } => {
                    vec![self
                        .get_raw(data.operands[0])
                        .map_err(|m| self.err(op, m))?]
                }
                _ => self
                    .eval(op)
                    .map_err(|m| self.err(op, m))?
                    .into_iter()
                    .map(Rc::new)
                    .collect(),
            };
            if results.len() != data.results.len() {
                return Err(self.err(
                    op,
                    format!(
                        "produced {} values for {} results",
                        results.len(),
                        data.results.len()
                    ),
                ));
            }
            for (&v, r) in data.results.iter().zip(results) {
                self.env[v.index()] = Some(r);
            }
        }
        Ok(Vec::new())
    }

    fn exec_for(&mut self, op: Op) -> Result<Vec<Rc<RVal>>, InterpError> {
        let data = &self.func.ops[op];
        let (lb, ub, step, st) = (|| -> R<_> {
            if data.operands.len() < 3 || data.regions.is_empty() {
                return Err("for needs lb, ub, step and a body".into());
            }
            let lb = self.get(data.operands[0])?;
            let st = scalar_type_of(as_tile(&lb)?.elem);
            Ok((
                scalar_int(&lb)?,
                scalar_int(&*self.get(data.operands[1])?)?,
                scalar_int(&*self.get(data.operands[2])?)?,
                st,
            ))
        })()
        .map_err(|m| self.err(op, m))?;
        let mut carried = data.operands[3..]
            .iter()
            .map(|&v| self.get_raw(v))
            .collect::<R<Vec<_>>>()
            .map_err(|m| self.err(op, m))?;
        let body = data.regions[0];
        let iv_elem = Elem::Scalar(st);
        let mut iv = lb;
        while int_lt(st, iv, ub) {
            if step == 0 || (!is_unsigned(st) && step < 0) {
                return Err(self.err(op, format!("for loop step must be positive, got {step}")));
            }
            let mut args = Vec::with_capacity(carried.len() + 1);
            args.push(Rc::new(RVal::Tile(scalar_tile(iv_elem, Num::I(iv)))));
            args.extend(carried);
            carried = self.exec_block(body, args)?;
            match iv.checked_add(step) {
                Some(next) if !is_unsigned(st) || (next as u64) > (iv as u64) => iv = next,
                _ => break,
            }
        }
        Ok(carried)
    }

    fn exec_while(&mut self, op: Op) -> Result<Vec<Rc<RVal>>, InterpError> {
        let data = &self.func.ops[op];
        if data.regions.len() != 2 {
            return Err(self.err(op, "while needs a before and an after region"));
        }
        let mut carried = data
            .operands
            .iter()
            .map(|&v| self.get_raw(v))
            .collect::<R<Vec<_>>>()
            .map_err(|m| self.err(op, m))?;
        loop {
            let mut fwd = self.exec_block(data.regions[0], carried)?;
            if fwd.is_empty() {
                return Err(self.err(op, "before region must end in condition"));
            }
            let cond = scalar_int(&fwd.remove(0)).map_err(|m| self.err(op, m))?;
            if cond == 0 {
                return Ok(fwd);
            }
            carried = self.exec_block(data.regions[1], fwd)?;
            // Count each trip so that `while True` stops at the step limit
            // even with empty regions.
            self.steps += 1;
            if let Some(max) = self.max_steps {
                if self.steps > max {
                    return Err(self.err(
                        op,
                        format!("step limit exceeded ({max} ops); a loop may not terminate"),
                    ));
                }
            }
        }
    }

    /// Evaluates a non-region op; returns its results.
    fn eval(&mut self, op: Op) -> R<Vec<RVal>> {
        let func = self.func;
        let data = &func.ops[op];
        let ops = &data.operands;
        let res_ty = |i: usize| -> R<&Type> {
            data.results
                .get(i)
                .map(|&v| func.ty(v))
                .ok_or_else(|| "missing result".to_string())
        };
        let res_elem = |i: usize| -> R<Elem> {
            res_ty(i)?
                .elem()
                .ok_or_else(|| "result must be a scalar or tile".to_string())
        };
        let operand = |i: usize| -> R<Rc<RVal>> {
            let v = *ops.get(i).ok_or_else(|| format!("missing operand {i}"))?;
            self.get(v)
        };
        let tile = |t: Tile| Ok(vec![RVal::Tile(t)]);
        match &data.kind {
            OpKind::Constant(c) => {
                let ty = res_ty(0)?;
                let elem = res_elem(0)?;
                let n = match (elem, *c) {
                    (Elem::Scalar(st), ConstValue::Float(f)) if st.is_float() => {
                        Num::F(round(st, f, false))
                    }
                    (Elem::Scalar(st), ConstValue::Int(i)) if st.is_float() => {
                        Num::F(int_to_float(ScalarType::I64, st, i))
                    }
                    (Elem::Scalar(st), ConstValue::Float(f)) => Num::I(float_to_int(st, f)),
                    (Elem::Scalar(st), ConstValue::Int(i)) => Num::I(wrap(st, i)),
                    (_, ConstValue::Bool(b)) => Num::I(b as i64),
                    (Elem::Ptr(_), ConstValue::Int(i)) => Num::I(i),
                    (Elem::Ptr(_), ConstValue::Float(_)) => {
                        return Err("float constant of pointer type".into())
                    }
                };
                let n_el = ty.numel() as usize;
                tile(Tile::from_nums(
                    ty.shape().to_vec(),
                    elem,
                    std::iter::repeat_n(n, n_el),
                ))
            }
            OpKind::ProgramId(a) => tile(scalar_tile(
                Elem::Scalar(ScalarType::I32),
                Num::I(self.pid[a.index()] as i64),
            )),
            OpKind::NumPrograms(a) => tile(scalar_tile(
                Elem::Scalar(ScalarType::I32),
                Num::I(self.grid[a.index()] as i64),
            )),
            OpKind::MakeRange { start, end } => tile(Tile {
                shape: vec![(end - start).max(0) as u32],
                elem: Elem::Scalar(ScalarType::I32),
                data: Data::I((*start as i64..*end as i64).collect()),
            }),
            OpKind::Splat => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                let ty = res_ty(0)?;
                tile(Tile::from_nums(
                    ty.shape().to_vec(),
                    x.elem,
                    std::iter::repeat_n(x.get(0), ty.numel() as usize),
                ))
            }
            OpKind::Broadcast => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                let out_shape = res_ty(0)?.shape().to_vec();
                if x.numel() == 1 {
                    let n = out_shape.iter().map(|&d| d as usize).product();
                    return tile(Tile::from_nums(
                        out_shape,
                        x.elem,
                        std::iter::repeat_n(x.get(0), n),
                    ));
                }
                if x.shape.len() != out_shape.len()
                    || x.shape
                        .iter()
                        .zip(&out_shape)
                        .any(|(&a, &b)| a != b && a != 1)
                {
                    return Err(format!(
                        "cannot broadcast shape {:?} to {out_shape:?}",
                        x.shape
                    ));
                }
                let src = strides_of(&x.shape);
                let strides: Vec<usize> = (0..out_shape.len())
                    .map(|d| if x.shape[d] == 1 { 0 } else { src[d] })
                    .collect();
                tile(gather(x, out_shape, &strides))
            }
            OpKind::ExpandDims { .. } | OpKind::Reshape => {
                let x = operand(0)?;
                let mut t = as_tile(&x)?.clone();
                let ty = res_ty(0)?;
                if ty.numel() as usize != t.numel() {
                    return Err("reshape changes the element count".into());
                }
                t.shape = ty.shape().to_vec();
                tile(t)
            }
            OpKind::Trans { perm } => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                let src = strides_of(&x.shape);
                if perm.len() != x.shape.len() || perm.iter().any(|&p| p as usize >= src.len()) {
                    return Err("bad permutation".into());
                }
                let out_shape: Vec<u32> = perm.iter().map(|&p| x.shape[p as usize]).collect();
                let strides: Vec<usize> = perm.iter().map(|&p| src[p as usize]).collect();
                tile(gather(x, out_shape, &strides))
            }
            OpKind::Join => {
                let (x, y) = (operand(0)?, operand(1)?);
                let (x, y) = (as_tile(&x)?, as_tile(&y)?);
                let n = x.numel();
                check_lanes(n, &[x, y])?;
                let nums = (0..2 * n).map(|i| {
                    if i % 2 == 0 {
                        x.get(i / 2)
                    } else {
                        y.get(i / 2)
                    }
                });
                tile(Tile::from_nums(res_ty(0)?.shape().to_vec(), x.elem, nums))
            }
            OpKind::Split => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                if x.shape.last() != Some(&2) {
                    return Err("split needs a last dimension of 2".into());
                }
                let half = x.numel() / 2;
                let shape = res_ty(0)?.shape().to_vec();
                let a = Tile::from_nums(shape.clone(), x.elem, (0..half).map(|i| x.get(2 * i)));
                let b = Tile::from_nums(shape, x.elem, (0..half).map(|i| x.get(2 * i + 1)));
                Ok(vec![RVal::Tile(a), RVal::Tile(b)])
            }
            OpKind::Binary(b) => {
                let (x, y) = (operand(0)?, operand(1)?);
                let (x, y) = (as_tile(&x)?, as_tile(&y)?);
                let elem = res_elem(0)?;
                let st = scalar_type_of(elem);
                let n = res_ty(0)?.numel() as usize;
                check_lanes(n, &[x, y])?;
                let nums = (0..n)
                    .map(|i| binary(*b, st, x.get(i), y.get(i)))
                    .collect::<R<Vec<_>>>()?;
                tile(Tile::from_nums(
                    res_ty(0)?.shape().to_vec(),
                    elem,
                    nums.into_iter(),
                ))
            }
            OpKind::Unary(u) => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                let st = scalar_type_of(x.elem);
                let nums = (0..x.numel())
                    .map(|i| unary(*u, st, x.get(i)))
                    .collect::<R<Vec<_>>>()?;
                tile(Tile::from_nums(
                    x.shape.clone(),
                    res_elem(0)?,
                    nums.into_iter(),
                ))
            }
            OpKind::Fma => {
                let (a, b, c) = (operand(0)?, operand(1)?, operand(2)?);
                let (a, b, c) = (as_tile(&a)?, as_tile(&b)?, as_tile(&c)?);
                let elem = res_elem(0)?;
                let st = scalar_type_of(elem);
                let n = res_ty(0)?.numel() as usize;
                check_lanes(n, &[a, b, c])?;
                let nums = (0..n).map(|i| {
                    if st.is_float() {
                        Num::F(fma(st, a.float(i), b.float(i), c.float(i)))
                    } else {
                        Num::I(wrap(
                            st,
                            a.int(i).wrapping_mul(b.int(i)).wrapping_add(c.int(i)),
                        ))
                    }
                });
                tile(Tile::from_nums(res_ty(0)?.shape().to_vec(), elem, nums))
            }
            OpKind::Cmp(p) => {
                let (x, y) = (operand(0)?, operand(1)?);
                let (x, y) = (as_tile(&x)?, as_tile(&y)?);
                let st = scalar_type_of(x.elem);
                let n = res_ty(0)?.numel() as usize;
                check_lanes(n, &[x, y])?;
                let nums = (0..n).map(|i| Num::I(compare(*p, st, x.get(i), y.get(i)) as i64));
                tile(Tile::from_nums(
                    res_ty(0)?.shape().to_vec(),
                    res_elem(0)?,
                    nums,
                ))
            }
            OpKind::Select => {
                let (c, a, b) = (operand(0)?, operand(1)?, operand(2)?);
                let (c, a, b) = (as_tile(&c)?, as_tile(&a)?, as_tile(&b)?);
                let ty = res_ty(0)?;
                let nums =
                    (0..ty.numel() as usize)
                        .map(|i| if c.int(i) != 0 { a.get(i) } else { b.get(i) });
                tile(Tile::from_nums(ty.shape().to_vec(), res_elem(0)?, nums))
            }
            OpKind::Cast { rounding } => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                let dst = res_elem(0)?;
                let rtz = *rounding == Rounding::Rtz;
                let nums = (0..x.numel()).map(|i| cast(x.elem, dst, x.get(i), rtz));
                tile(Tile::from_nums(x.shape.clone(), dst, nums))
            }
            OpKind::Bitcast => {
                let x = operand(0)?;
                let x = as_tile(&x)?;
                let dst = res_elem(0)?;
                let nums = (0..x.numel()).map(|i| from_bits(dst, to_bits(x.elem, x.get(i))));
                tile(Tile::from_nums(x.shape.clone(), dst, nums))
            }
            OpKind::AddPtr => {
                let (p, o) = (operand(0)?, operand(1)?);
                let (p, o) = (as_tile(&p)?, as_tile(&o)?);
                let size = match p.elem {
                    Elem::Ptr(st) => st.byte_size() as i64,
                    Elem::Scalar(_) => return Err("addptr on a non-pointer".into()),
                };
                let ty = res_ty(0)?;
                let n = p.numel().max(o.numel());
                let nums =
                    (0..n).map(|i| Num::I(p.int(i).wrapping_add(o.int(i).wrapping_mul(size))));
                tile(Tile::from_nums(ty.shape().to_vec(), p.elem, nums))
            }
            OpKind::Load {
                has_mask,
                has_other,
                boundary_check,
                padding,
                ..
            } => {
                let p = operand(0)?;
                if let RVal::BlockPtr(bp) = &*p {
                    return tile(self.block_load(bp, boundary_check, *padding)?);
                }
                let p = as_tile(&p)?;
                let st = p.elem.pointee().ok_or("load from a non-pointer")?;
                let mask = if *has_mask { Some(operand(1)?) } else { None };
                let mask = mask.as_deref().map(as_tile).transpose()?;
                let other = if *has_other {
                    Some(operand(1 + *has_mask as usize)?)
                } else {
                    None
                };
                let other = other.as_deref().map(as_tile).transpose()?;
                let ty = res_ty(0)?;
                let shape = ty.shape().to_vec();
                let zero = if st.is_float() {
                    Num::F(0.0)
                } else {
                    Num::I(0)
                };
                let mut nums = Vec::with_capacity(ty.numel() as usize);
                let mem = self.host.memory();
                for i in 0..ty.numel() as usize {
                    let on = mask.is_none_or(|m| m.int(i) != 0);
                    nums.push(if on {
                        mem.load(st, p.int(i) as u64)
                            .map_err(|e| format!("{}: {e}", lane_desc(i, &shape)))?
                    } else {
                        other.map_or(zero, |o| o.get(i))
                    });
                }
                tile(Tile::from_nums(shape, Elem::Scalar(st), nums.into_iter()))
            }
            OpKind::Store {
                has_mask,
                boundary_check,
                ..
            } => {
                let p = operand(0)?;
                let v = operand(1)?;
                let v = as_tile(&v)?;
                if let RVal::BlockPtr(bp) = &*p {
                    self.block_store(bp, v, boundary_check)?;
                    return Ok(vec![]);
                }
                let p = as_tile(&p)?;
                let st = p.elem.pointee().ok_or("store to a non-pointer")?;
                let mask = if *has_mask { Some(operand(2)?) } else { None };
                let mask = mask.as_deref().map(as_tile).transpose()?;
                let n = p.numel().max(v.numel());
                check_lanes(n, &[p, v])?;
                if let Some(m) = mask {
                    check_lanes(n, &[m])?;
                }
                let shape = if p.numel() >= v.numel() {
                    &p.shape
                } else {
                    &v.shape
                };
                let mem = self.host.memory();
                for i in 0..n {
                    if mask.is_none_or(|m| m.int(i) != 0) {
                        mem.store(st, p.int(i) as u64, v.get(i))
                            .map_err(|e| format!("{}: {e}", lane_desc(i, shape)))?;
                    }
                }
                Ok(vec![])
            }
            OpKind::Dot {
                input_precision,
                is_async,
                ..
            } => {
                let (a, b, c) = (operand(0)?, operand(1)?, operand(2)?);
                let result = dot(as_tile(&a)?, as_tile(&b)?, as_tile(&c)?, *input_precision)?;
                // The product is computed here, from the slots as they are
                // at issue; the host checks that they stay untouched until
                // the group retires (no release while it is in flight).
                if *is_async {
                    let mut reads = Vec::new();
                    for &v in &ops[..2] {
                        if let RVal::View(view) = &*self.get_raw(v)? {
                            reads.push(*view);
                        }
                    }
                    self.host.mma_issued(data.loc, reads)?;
                } else {
                    self.host.mma_wait(0)?;
                }
                tile(result)
            }
            OpKind::DotWait { pending } => {
                self.host.mma_wait(*pending)?;
                ops.iter()
                    .map(|&v| self.get_raw(v).map(|x| (*x).clone()))
                    .collect()
            }
            OpKind::Reduce { kind, axis } => {
                let x = operand(0)?;
                tile(reduce(as_tile(&x)?, *kind, *axis as usize, res_elem(0)?)?)
            }
            OpKind::Scan {
                kind,
                axis,
                reverse,
            } => {
                let x = operand(0)?;
                tile(scan(as_tile(&x)?, *kind, *axis as usize, *reverse)?)
            }
            OpKind::MakeBlockPtr { .. } => {
                let Type::BlockPtr { pointee, shape } = res_ty(0)? else {
                    return Err("make_block_ptr must return a block pointer".into());
                };
                let r = shape.len();
                if ops.len() != 1 + 3 * r {
                    return Err(format!("expected {} operands for rank {r}", 1 + 3 * r));
                }
                let base = scalar_int(&*operand(0)?)? as u64;
                let ints = |from: usize| -> R<Vec<i64>> {
                    (from..from + r)
                        .map(|i| scalar_int(&*operand(i)?))
                        .collect()
                };
                Ok(vec![RVal::BlockPtr(BlockPtr {
                    base,
                    pointee: *pointee,
                    shape: ints(1)?,
                    strides: ints(1 + r)?,
                    offsets: ints(1 + 2 * r)?,
                    block: shape.clone(),
                })])
            }
            OpKind::Advance => {
                let p = operand(0)?;
                let RVal::BlockPtr(bp) = &*p else {
                    return Err("advance of a non-block pointer".into());
                };
                let mut bp = bp.clone();
                if ops.len() != 1 + bp.offsets.len() {
                    return Err("advance needs one offset per dimension".into());
                }
                for d in 0..bp.offsets.len() {
                    bp.offsets[d] = bp.offsets[d].wrapping_add(scalar_int(&*operand(1 + d)?)?);
                }
                Ok(vec![RVal::BlockPtr(bp)])
            }
            OpKind::MakeTensorDesc => {
                let Type::TensorDesc { elem, block } = res_ty(0)? else {
                    return Err("make_tensor_desc must return a tensor descriptor".into());
                };
                let r = block.len();
                if ops.len() != 1 + 2 * r {
                    return Err(format!("expected {} operands for rank {r}", 1 + 2 * r));
                }
                let base = scalar_int(&*operand(0)?)? as u64;
                let ints = |from: usize| -> R<Vec<i64>> {
                    (from..from + r)
                        .map(|i| scalar_int(&*operand(i)?))
                        .collect()
                };
                Ok(vec![RVal::Desc(TensorDesc {
                    base,
                    elem: *elem,
                    shape: ints(1)?,
                    strides: ints(1 + r)?,
                    block: block.clone(),
                })])
            }
            OpKind::DescLoad { .. } => {
                let d = operand(0)?;
                let RVal::Desc(desc) = &*d else {
                    return Err("desc_load of a non-descriptor".into());
                };
                let offsets = (1..ops.len())
                    .map(|i| scalar_int(&*operand(i)?))
                    .collect::<R<Vec<_>>>()?;
                let mut t = self.desc_load(desc, &offsets)?;
                let ty = res_ty(0)?;
                if ty.numel() as usize == t.numel() {
                    t.shape = ty.shape().to_vec();
                }
                tile(t)
            }
            OpKind::DescStore => {
                let d = operand(0)?;
                let RVal::Desc(desc) = &*d else {
                    return Err("desc_store to a non-descriptor".into());
                };
                let v = operand(1)?;
                let offsets = (2..ops.len())
                    .map(|i| scalar_int(&*operand(i)?))
                    .collect::<R<Vec<_>>>()?;
                self.desc_store(desc, as_tile(&v)?, &offsets)?;
                Ok(vec![])
            }
            OpKind::AtomicRmw {
                op: aop, has_mask, ..
            } => {
                let (p, v) = (operand(0)?, operand(1)?);
                let (p, v) = (as_tile(&p)?, as_tile(&v)?);
                let mask = if *has_mask { Some(operand(2)?) } else { None };
                let mask = mask.as_deref().map(as_tile).transpose()?;
                let st = p.elem.pointee().ok_or("atomic on a non-pointer")?;
                let zero = if st.is_float() {
                    Num::F(0.0)
                } else {
                    Num::I(0)
                };
                let n = res_ty(0)?.numel() as usize;
                check_lanes(n, &[p, v])?;
                if let Some(m) = mask {
                    check_lanes(n, &[m])?;
                }
                let mut old = Vec::with_capacity(n);
                let mem = self.host.memory();
                for i in 0..n {
                    if mask.is_some_and(|m| m.int(i) == 0) {
                        old.push(zero);
                        continue;
                    }
                    let addr = p.int(i) as u64;
                    let lane = |e: String| format!("{}: {e}", lane_desc(i, &p.shape));
                    let o = mem.load(st, addr).map_err(lane)?;
                    let new = atomic_combine(*aop, st, o, v.get(i))?;
                    mem.store(st, addr, new).map_err(lane)?;
                    old.push(o);
                }
                tile(Tile::from_nums(
                    res_ty(0)?.shape().to_vec(),
                    Elem::Scalar(st),
                    old.into_iter(),
                ))
            }
            OpKind::AtomicCas { .. } => {
                let (p, c, v) = (operand(0)?, operand(1)?, operand(2)?);
                let (p, c, v) = (as_tile(&p)?, as_tile(&c)?, as_tile(&v)?);
                let st = p.elem.pointee().ok_or("atomic on a non-pointer")?;
                let el = Elem::Scalar(st);
                let n = res_ty(0)?.numel() as usize;
                check_lanes(n, &[p, c, v])?;
                let mut old = Vec::with_capacity(n);
                let mem = self.host.memory();
                for i in 0..n {
                    let addr = p.int(i) as u64;
                    let lane = |e: String| format!("{}: {e}", lane_desc(i, &p.shape));
                    let o = mem.load(st, addr).map_err(lane)?;
                    // Compare-and-swap compares bits, as the hardware does.
                    if to_bits(el, o) == to_bits(el, c.get(i)) {
                        mem.store(st, addr, v.get(i)).map_err(lane)?;
                    }
                    old.push(o);
                }
                tile(Tile::from_nums(
                    res_ty(0)?.shape().to_vec(),
                    el,
                    old.into_iter(),
                ))
            }
            OpKind::ArefCreate => Ok(vec![self.host.aref_create(op, res_ty(0)?)?]),
            OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed => {
                let RVal::Aref(aref) = *operand(0)? else {
                    return Err("operand 0 is not an aref".into());
                };
                let index = scalar_int(&*operand(1)?)?;
                if index < 0 {
                    return Err(format!("iteration index {index} is negative"));
                }
                match data.kind {
                    OpKind::ArefPut => {
                        let n = self.func.put_values(op).len();
                        let values = (2..2 + n)
                            .map(|i| operand(i).map(|v| (*v).clone()))
                            .collect::<R<Vec<_>>>()?;
                        if self.func.put_multicast(op).is_some() {
                            let multicast = (2 + n..2 + 2 * n)
                                .map(|i| operand(i).and_then(|v| scalar_int(&v)).map(|b| b != 0))
                                .collect::<R<Vec<_>>>()?;
                            self.host
                                .aref_put_multicast(op, aref, index, values, multicast)?;
                        } else {
                            self.host.aref_put(op, aref, index, values)?;
                        }
                        Ok(vec![])
                    }
                    OpKind::ArefGet => self.host.aref_get(op, aref, index),
                    _ => {
                        if self.func.consumed_peer(op).is_some() {
                            let peer = scalar_int(&*operand(2)?)? != 0;
                            self.host.aref_consumed_paired(op, aref, index, peer)?;
                        } else {
                            self.host.aref_consumed(op, aref, index)?;
                        }
                        Ok(vec![])
                    }
                }
            }
            OpKind::DebugBarrier => Ok(vec![]),
            OpKind::TurnTake => {
                self.host.turn_take(op)?;
                Ok(vec![])
            }
            OpKind::TurnPass => {
                self.host.turn_pass(op)?;
                Ok(vec![])
            }
            OpKind::ClusterSum => {
                let split = scalar_int(&*operand(1)?)?;
                Ok(vec![self.host.cluster_sum(
                    op,
                    (*operand(0)?).clone(),
                    split,
                )?])
            }
            OpKind::StreamKPut => {
                let sums = (0..ops.len())
                    .map(|i| operand(i).map(|v| (*v).clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                self.host.stream_k_put(op, self.pid, sums)?;
                Ok(vec![])
            }
            OpKind::StreamKTake => {
                let from = scalar_int(&*operand(0)?)?;
                let sums = (1..ops.len())
                    .map(|i| operand(i).map(|v| (*v).clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                self.host.stream_k_take(op, self.pid, from, sums)
            }
            OpKind::Print { prefix, hex } => {
                let mut line = format!(
                    "pid ({}, {}, {}) {prefix}",
                    self.pid[0], self.pid[1], self.pid[2]
                );
                for i in 0..ops.len() {
                    let v = operand(i)?;
                    match &*v {
                        RVal::Tile(t) => match &t.data {
                            Data::I(xs) if *hex => {
                                let s: Vec<String> = xs.iter().map(|x| format!("{x:#x}")).collect();
                                line += &format!(" [{}]", s.join(", "));
                            }
                            Data::I(xs) => line += &format!(" {xs:?}"),
                            Data::F(xs) => line += &format!(" {xs:?}"),
                        },
                        other => line += &format!(" {other:?}"),
                    }
                }
                eprintln!("{line}");
                Ok(vec![])
            }
            OpKind::Assert { message } => {
                let c = operand(0)?;
                let c = as_tile(&c)?;
                if let Some(i) = (0..c.numel()).find(|&i| c.int(i) == 0) {
                    return Err(format!(
                        "device assertion failed: {message} ({})",
                        lane_desc(i, &c.shape)
                    ));
                }
                Ok(vec![])
            }
            OpKind::Hint { .. }
            | OpKind::WarpSpecialize { .. }
            | OpKind::For(_)
            | OpKind::If
            | OpKind::While
            | OpKind::Yield
            | OpKind::Condition
            | OpKind::Return => Err("handled by exec_block".into()),
        }
    }

    /// Address and in-bounds flag of every element of a block-pointer tile;
    /// errors on an out-of-bounds dimension not in `checked`.
    fn block_addrs(&self, bp: &BlockPtr, checked: &[u32]) -> R<Vec<Option<u64>>> {
        let r = bp.block.len();
        if bp.shape.len() != r || bp.strides.len() != r || bp.offsets.len() != r {
            return Err("block pointer rank mismatch".into());
        }
        let n: usize = bp.block.iter().map(|&d| d as usize).product();
        let size = bp.pointee.byte_size() as i64;
        let mut idx = vec![0; r];
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            unflatten(i, &bp.block, &mut idx);
            let mut inb = true;
            let mut off = 0i64;
            for (d, &ix) in idx.iter().enumerate() {
                let c = bp.offsets[d] + ix as i64;
                if c < 0 || c >= bp.shape[d] {
                    if !checked.contains(&(d as u32)) {
                        return Err(format!(
                            "{}: block pointer coordinate {c} of dimension {d} is outside [0, {}) and dimension {d} is not in boundary_check",
                            lane_desc(i, &bp.block),
                            bp.shape[d]
                        ));
                    }
                    inb = false;
                }
                off = off.wrapping_add(c.wrapping_mul(bp.strides[d]));
            }
            out.push(inb.then(|| bp.base.wrapping_add(off.wrapping_mul(size) as u64)));
        }
        Ok(out)
    }

    fn block_load(&mut self, bp: &BlockPtr, checked: &[u32], padding: Padding) -> R<Tile> {
        let st = bp.pointee;
        let pad = match (st.is_float(), padding) {
            (true, Padding::Nan) => Num::F(f64::NAN),
            (true, _) => Num::F(0.0),
            (false, _) => Num::I(0),
        };
        let addrs = self.block_addrs(bp, checked)?;
        let mem = self.host.memory();
        let nums = addrs
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Some(a) => mem
                    .load(st, *a)
                    .map_err(|e| format!("{}: {e}", lane_desc(i, &bp.block))),
                None => Ok(pad),
            })
            .collect::<R<Vec<_>>>()?;
        Ok(Tile::from_nums(
            bp.block.clone(),
            Elem::Scalar(st),
            nums.into_iter(),
        ))
    }

    fn block_store(&mut self, bp: &BlockPtr, v: &Tile, checked: &[u32]) -> R<()> {
        let addrs = self.block_addrs(bp, checked)?;
        check_lanes(addrs.len(), &[v])?;
        let mem = self.host.memory();
        for (i, a) in addrs.iter().enumerate() {
            if let Some(a) = a {
                mem.store(bp.pointee, *a, v.get(i))
                    .map_err(|e| format!("{}: {e}", lane_desc(i, &bp.block)))?;
            }
        }
        Ok(())
    }

    /// Addresses of a descriptor tile at `offsets`; `None` out of bounds.
    fn desc_addrs(desc: &TensorDesc, offsets: &[i64]) -> R<Vec<Option<u64>>> {
        let r = desc.block.len();
        if offsets.len() != r || desc.shape.len() != r || desc.strides.len() != r {
            return Err(format!("descriptor of rank {r} needs {r} offsets"));
        }
        let n: usize = desc.block.iter().map(|&d| d as usize).product();
        let size = desc.elem.byte_size() as i64;
        let mut idx = vec![0; r];
        Ok((0..n)
            .map(|i| {
                unflatten(i, &desc.block, &mut idx);
                let mut off = 0i64;
                for d in 0..r {
                    let c = offsets[d] + idx[d] as i64;
                    if c < 0 || c >= desc.shape[d] {
                        return None;
                    }
                    off = off.wrapping_add(c.wrapping_mul(desc.strides[d]));
                }
                Some(desc.base.wrapping_add(off.wrapping_mul(size) as u64))
            })
            .collect())
    }

    fn desc_load(&mut self, desc: &TensorDesc, offsets: &[i64]) -> R<Tile> {
        let st = desc.elem;
        let zero = if st.is_float() {
            Num::F(0.0)
        } else {
            Num::I(0)
        };
        let mem = self.host.memory();
        let nums = Self::desc_addrs(desc, offsets)?
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                Some(a) => mem
                    .load(st, *a)
                    .map_err(|e| format!("{}: {e}", lane_desc(i, &desc.block))),
                None => Ok(zero),
            })
            .collect::<R<Vec<_>>>()?;
        Ok(Tile::from_nums(
            desc.block.clone(),
            Elem::Scalar(st),
            nums.into_iter(),
        ))
    }

    fn desc_store(&mut self, desc: &TensorDesc, v: &Tile, offsets: &[i64]) -> R<()> {
        let addrs = Self::desc_addrs(desc, offsets)?;
        check_lanes(addrs.len(), &[v])?;
        let mem = self.host.memory();
        for (i, a) in addrs.iter().enumerate() {
            if let Some(a) = a {
                mem.store(desc.elem, *a, v.get(i))
                    .map_err(|e| format!("{}: {e}", lane_desc(i, &desc.block)))?;
            }
        }
        Ok(())
    }
}

/// Copies `x` into a tile of `out_shape` whose element at multi-index `idx`
/// is `x`'s element at flat offset `sum(idx[d] * strides[d])`.
fn gather(x: &Tile, out_shape: Vec<u32>, strides: &[usize]) -> Tile {
    let n: usize = out_shape.iter().map(|&d| d as usize).product();
    let mut offs = Vec::with_capacity(n);
    let mut idx = vec![0usize; out_shape.len()];
    let mut off = 0usize;
    for _ in 0..n {
        offs.push(off);
        // Odometer increment of the multi-index, keeping `off` in step.
        for d in (0..out_shape.len()).rev() {
            idx[d] += 1;
            off += strides[d];
            if idx[d] < out_shape[d] as usize {
                break;
            }
            off -= strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    let data = match &x.data {
        Data::F(v) => Data::F(offs.iter().map(|&o| v[o]).collect()),
        Data::I(v) => Data::I(offs.iter().map(|&o| v[o]).collect()),
    };
    Tile {
        shape: out_shape,
        elem: x.elem,
        data,
    }
}

fn fma(st: ScalarType, a: f64, b: f64, c: f64) -> f64 {
    match st {
        ScalarType::F64 => a.mul_add(b, c),
        ScalarType::F32 => (a as f32).mul_add(b as f32, c as f32) as f64,
        _ => round(st, a.mul_add(b, c), false),
    }
}

fn binary(b: BinaryOp, st: ScalarType, x: Num, y: Num) -> R<Num> {
    use BinaryOp::*;
    if st.is_float() {
        let (Num::F(x), Num::F(y)) = (x, y) else {
            return Err("float operation on integer operands".into());
        };
        let r = match b {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            // The interpreter is the reference: `div` is checked against it
            // with the tolerance of its 2 ulp on the GPU.
            Div | DivRn => x / y,
            Rem => x % y,
            // Rust's max/min are IEEE maxNum/minNum: a NaN operand is ignored.
            Max => x.max(y),
            Min => x.min(y),
            Pow => x.powf(y),
            Atan2 => x.atan2(y),
            IDiv | And | Or | Xor | Shl | Shr => {
                return Err(format!("`{}` is not defined on {st}", b.name()))
            }
        };
        return Ok(Num::F(round(st, r, false)));
    }
    let (Num::I(x), Num::I(y)) = (x, y) else {
        return Err("integer operation on float operands".into());
    };
    let u = is_unsigned(st);
    let bits = st.bits() as u64;
    let r = match b {
        Add => x.wrapping_add(y),
        Sub => x.wrapping_sub(y),
        Mul => x.wrapping_mul(y),
        // Division by zero does not trap on a GPU; PTX gives all ones.
        IDiv if y == 0 => -1,
        IDiv if u => ((x as u64) / (y as u64)) as i64,
        IDiv => x.wrapping_div(y),
        Rem if y == 0 => x,
        Rem if u => ((x as u64) % (y as u64)) as i64,
        Rem => x.wrapping_rem(y),
        And => x & y,
        Or => x | y,
        Xor => x ^ y,
        // PTX clamps shift amounts to the width.
        Shl if (y as u64) >= bits => 0,
        Shl => x << y,
        Shr if u && (y as u64) >= bits => 0,
        Shr if (y as u64) >= bits => x >> 63,
        Shr if u => ((x as u64) >> y) as i64,
        Shr => x >> y,
        Max => {
            if int_lt(st, x, y) {
                y
            } else {
                x
            }
        }
        Min => {
            if int_lt(st, y, x) {
                y
            } else {
                x
            }
        }
        Div | DivRn | Pow | Atan2 => return Err(format!("`{}` is not defined on {st}", b.name())),
    };
    Ok(Num::I(wrap(st, r)))
}

fn unary(u: UnaryOp, st: ScalarType, x: Num) -> R<Num> {
    use UnaryOp::*;
    match x {
        Num::F(x) => {
            let r = match u {
                Neg => -x,
                Abs => x.abs(),
                Exp => x.exp(),
                Exp2 => x.exp2(),
                Log => x.ln(),
                Log2 => x.log2(),
                Sqrt => x.sqrt(),
                Rsqrt => 1.0 / x.sqrt(),
                Sin => x.sin(),
                Cos => x.cos(),
                Tan => x.tan(),
                Tanh => x.tanh(),
                Erf => float::erf(x),
                Floor => x.floor(),
                Ceil => x.ceil(),
                Rint => x.round_ties_even(),
                Trunc => x.trunc(),
                Log1p => x.ln_1p(),
                Expm1 => x.exp_m1(),
                Sinh => x.sinh(),
                Cosh => x.cosh(),
                Asin => x.asin(),
                Acos => x.acos(),
                Atan => x.atan(),
                Cbrt => x.cbrt(),
                IsNan => return Ok(Num::I(x.is_nan() as i64)),
                IsInf => return Ok(Num::I(x.is_infinite() as i64)),
                Not => return Err(format!("`not` is not defined on {st}")),
            };
            Ok(Num::F(round(st, r, false)))
        }
        Num::I(x) => {
            let r = match u {
                Neg => x.wrapping_neg(),
                Not => !x,
                Abs if is_unsigned(st) => x,
                Abs => x.wrapping_abs(),
                IsNan | IsInf => return Ok(Num::I(0)),
                _ => return Err(format!("`{}` is not defined on {st}", u.name())),
            };
            Ok(Num::I(wrap(st, r)))
        }
    }
}

fn compare(p: CmpPred, st: ScalarType, x: Num, y: Num) -> bool {
    use std::cmp::Ordering;
    let ord = match (x, y) {
        (Num::F(a), Num::F(b)) => a.partial_cmp(&b),
        (Num::I(a), Num::I(b)) if is_unsigned(st) => Some((a as u64).cmp(&(b as u64))),
        (Num::I(a), Num::I(b)) => Some(a.cmp(&b)),
        (a, b) => {
            let f = |n: Num| match n {
                Num::F(x) => x,
                Num::I(x) => x as f64,
            };
            f(a).partial_cmp(&f(b))
        }
    };
    // Unordered (NaN) compares false except for `ne`.
    match (p, ord) {
        (CmpPred::Ne, None) => true,
        (_, None) => false,
        (CmpPred::Eq, Some(o)) => o == Ordering::Equal,
        (CmpPred::Ne, Some(o)) => o != Ordering::Equal,
        (CmpPred::Lt, Some(o)) => o == Ordering::Less,
        (CmpPred::Le, Some(o)) => o != Ordering::Greater,
        (CmpPred::Gt, Some(o)) => o == Ordering::Greater,
        (CmpPred::Ge, Some(o)) => o != Ordering::Less,
    }
}

fn cast(src: Elem, dst: Elem, x: Num, rtz: bool) -> Num {
    match (dst, x) {
        (Elem::Ptr(_), Num::I(x)) => Num::I(x),
        (Elem::Ptr(_), Num::F(x)) => Num::I(x as i64),
        (Elem::Scalar(d), Num::F(x)) if d.is_float() => Num::F(round(d, x, rtz)),
        (Elem::Scalar(d), Num::F(x)) => Num::I(float_to_int(d, x)),
        (Elem::Scalar(d), Num::I(x)) if d.is_float() => {
            Num::F(int_to_float(scalar_type_of(src), d, x))
        }
        (Elem::Scalar(ScalarType::I1), Num::I(x)) => Num::I((x != 0) as i64),
        (Elem::Scalar(d), Num::I(x)) => Num::I(wrap(d, x)),
    }
}

fn to_bits(elem: Elem, x: Num) -> u64 {
    match (elem, x) {
        (Elem::Scalar(st), Num::F(x)) => float::encode(st, x),
        (_, Num::I(x)) => x as u64,
        (_, Num::F(x)) => x as i64 as u64,
    }
}

fn from_bits(elem: Elem, bits: u64) -> Num {
    match elem {
        Elem::Scalar(st) if st.is_float() => Num::F(float::decode(st, bits)),
        Elem::Scalar(st) => Num::I(wrap(st, bits as i64)),
        Elem::Ptr(_) => Num::I(bits as i64),
    }
}

fn atomic_combine(op: AtomicOp, st: ScalarType, old: Num, v: Num) -> R<Num> {
    Ok(match op {
        AtomicOp::Add => binary(BinaryOp::Add, st, old, v)?,
        AtomicOp::Max => binary(BinaryOp::Max, st, old, v)?,
        AtomicOp::Min => binary(BinaryOp::Min, st, old, v)?,
        AtomicOp::And => binary(BinaryOp::And, st, old, v)?,
        AtomicOp::Or => binary(BinaryOp::Or, st, old, v)?,
        AtomicOp::Xor => binary(BinaryOp::Xor, st, old, v)?,
        AtomicOp::Xchg => v,
    })
}

/// `a @ b + c` for rank-2 tiles (or rank-3 with a leading batch dimension).
fn dot(a: &Tile, b: &Tile, c: &Tile, prec: InputPrecision) -> R<Tile> {
    let (batch, m, k, n) = match (a.shape.as_slice(), b.shape.as_slice()) {
        ([m, k], [k2, n]) if k == k2 => (1, *m, *k, *n),
        ([bt, m, k], [bt2, k2, n]) if k == k2 && bt == bt2 => (*bt, *m, *k, *n),
        _ => {
            return Err(format!(
                "dot operand shapes {:?} and {:?} do not match",
                a.shape, b.shape
            ))
        }
    };
    let (m, k, n) = (m as usize, k as usize, n as usize);
    if c.numel() != batch as usize * m * n {
        return Err("dot accumulator shape does not match".into());
    }
    let acc_st = scalar_type_of(c.elem);
    let a_st = scalar_type_of(a.elem);
    let b_st = scalar_type_of(b.elem);
    let mut out = c.clone();
    if acc_st.is_float() {
        // f32 operands are rounded to tf32 unless the precision says f32.
        let prep = |t: &Tile, st: ScalarType| -> Vec<f64> {
            let tf32 = st == ScalarType::F32 && prec == InputPrecision::Tf32;
            (0..t.numel())
                .map(|i| {
                    let x = t.float(i);
                    if tf32 {
                        float::round_fmt(x, TF32, false)
                    } else {
                        x
                    }
                })
                .collect()
        };
        let (av, bv) = (prep(a, a_st), prep(b, b_st));
        let Data::F(acc) = &mut out.data else {
            return Err("float accumulator holds integers".into());
        };
        for bt in 0..batch as usize {
            let (ao, bo, co) = (bt * m * k, bt * k * n, bt * m * n);
            for i in 0..m {
                for j in 0..n {
                    let idx = co + i * n + j;
                    if acc_st == ScalarType::F32 {
                        let mut s = acc[idx] as f32;
                        for kk in 0..k {
                            s = (av[ao + i * k + kk] as f32).mul_add(bv[bo + kk * n + j] as f32, s);
                        }
                        acc[idx] = s as f64;
                    } else {
                        let mut s = acc[idx];
                        for kk in 0..k {
                            s = fma(acc_st, av[ao + i * k + kk], bv[bo + kk * n + j], s);
                        }
                        acc[idx] = s;
                    }
                }
            }
        }
    } else {
        let Data::I(acc) = &mut out.data else {
            return Err("integer accumulator holds floats".into());
        };
        for bt in 0..batch as usize {
            let (ao, bo, co) = (bt * m * k, bt * k * n, bt * m * n);
            for i in 0..m {
                for j in 0..n {
                    let idx = co + i * n + j;
                    let mut s = acc[idx];
                    for kk in 0..k {
                        s = s.wrapping_add(
                            a.int(ao + i * k + kk).wrapping_mul(b.int(bo + kk * n + j)),
                        );
                    }
                    acc[idx] = wrap(acc_st, s);
                }
            }
        }
    }
    Ok(out)
}

/// Splits a tile around `axis`: (outer count, axis length, inner count).
fn split_axis(shape: &[u32], axis: usize) -> R<(usize, usize, usize)> {
    if axis >= shape.len() {
        return Err(format!("axis {axis} out of range for rank {}", shape.len()));
    }
    let p = |s: &[u32]| s.iter().map(|&d| d as usize).product::<usize>();
    Ok((
        p(&shape[..axis]),
        shape[axis] as usize,
        p(&shape[axis + 1..]),
    ))
}

fn reduce(x: &Tile, kind: ReduceKind, axis: usize, res_elem: Elem) -> R<Tile> {
    let (outer, len, inner) = split_axis(&x.shape, axis)?;
    let st = scalar_type_of(x.elem);
    let mut shape = x.shape.clone();
    shape.remove(axis);
    let combine = |a: Num, b: Num| -> R<Num> {
        let bop = match kind {
            ReduceKind::Sum => BinaryOp::Add,
            ReduceKind::Prod => BinaryOp::Mul,
            ReduceKind::Max => BinaryOp::Max,
            ReduceKind::Min => BinaryOp::Min,
            ReduceKind::And => BinaryOp::And,
            ReduceKind::Or => BinaryOp::Or,
            ReduceKind::Xor => BinaryOp::Xor,
            ReduceKind::Argmax | ReduceKind::Argmin => unreachable!("handled below"),
        };
        binary(bop, st, a, b)
    };
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| x.get((o * len + j) * inner + i);
            if matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin) {
                let want = if kind == ReduceKind::Argmax {
                    CmpPred::Gt
                } else {
                    CmpPred::Lt
                };
                // Lowest index of the extreme; NaNs never win a comparison.
                let mut best = 0;
                let mut bv = at(0);
                for j in 1..len {
                    let v = at(j);
                    let bv_nan = matches!(bv, Num::F(f) if f.is_nan());
                    if compare(want, st, v, bv) || (bv_nan && !matches!(v, Num::F(f) if f.is_nan()))
                    {
                        best = j;
                        bv = v;
                    }
                }
                out.push(Num::I(best as i64));
                continue;
            }
            // Pairwise tree: element j with j + half, as a butterfly would.
            let mut v: Vec<Num> = (0..len).map(at).collect();
            let mut n = len;
            while n > 1 {
                let h = n.div_ceil(2);
                for j in 0..n - h {
                    v[j] = combine(v[j], v[j + h])?;
                }
                n = h;
            }
            out.push(v[0]);
        }
    }
    Ok(Tile::from_nums(shape, res_elem, out.into_iter()))
}

fn scan(x: &Tile, kind: ScanKind, axis: usize, reverse: bool) -> R<Tile> {
    let (outer, len, inner) = split_axis(&x.shape, axis)?;
    let st = scalar_type_of(x.elem);
    let bop = match kind {
        ScanKind::Sum => BinaryOp::Add,
        ScanKind::Prod => BinaryOp::Mul,
    };
    let mut out: Vec<Num> = (0..x.numel()).map(|i| x.get(i)).collect();
    for o in 0..outer {
        for i in 0..inner {
            let pos = |j: usize| (o * len + if reverse { len - 1 - j } else { j }) * inner + i;
            for j in 1..len {
                out[pos(j)] = binary(bop, st, out[pos(j - 1)], out[pos(j)])?;
            }
        }
    }
    Ok(Tile::from_nums(x.shape.clone(), x.elem, out.into_iter()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn ib(op: BinaryOp, st: ScalarType, x: i64, y: i64) -> i64 {
        match binary(op, st, Num::I(wrap(st, x)), Num::I(wrap(st, y))).unwrap() {
            Num::I(v) => v,
            Num::F(_) => panic!("float result"),
        }
    }

    #[test]
    fn integer_semantics() {
        use BinaryOp::*;
        assert_eq!(ib(IDiv, I32, -7, 2), -3);
        assert_eq!(ib(Rem, I32, -7, 2), -1);
        assert_eq!(ib(Rem, I32, 7, -2), 1);
        assert_eq!(ib(IDiv, I32, i32::MIN as i64, -1), i32::MIN as i64);
        assert_eq!(ib(IDiv, I32, 5, 0), -1);
        assert_eq!(ib(IDiv, U32, 0xffff_fffe, 2), 0x7fff_ffff);
        assert_eq!(ib(Add, I8, 127, 1), -128);
        assert_eq!(ib(Add, U8, 255, 1), 0);
        assert_eq!(ib(Mul, I16, 300, 300), (90000i32 as i16) as i64);
        assert_eq!(ib(Shl, I32, 1, 31), i32::MIN as i64);
        assert_eq!(ib(Shl, I32, 1, 40), 0);
        assert_eq!(ib(Shr, I32, -8, 1), -4);
        assert_eq!(ib(Shr, I32, -8, 40), -1);
        assert_eq!(ib(Shr, U32, 0xffff_ffff, 4), 0x0fff_ffff);
        assert_eq!(ib(Max, U32, 0xffff_ffff, 1), 0xffff_ffff);
        assert_eq!(ib(Max, I32, -1, 1), 1);
        assert_eq!(ib(Min, U64, -1, 1), 1);
        assert_eq!(ib(Xor, I1, 1, 1), 0);
        assert!(binary(Div, I32, Num::I(1), Num::I(2)).is_err());
        assert_eq!(unary(UnaryOp::Not, I1, Num::I(1)).unwrap(), Num::I(0));
        assert_eq!(unary(UnaryOp::Abs, I8, Num::I(-128)).unwrap(), Num::I(-128));
        assert!(compare(CmpPred::Gt, U32, Num::I(0xffff_ffff), Num::I(1)));
        assert!(!compare(CmpPred::Gt, I32, Num::I(-1), Num::I(1)));
    }

    #[test]
    fn float_semantics() {
        use BinaryOp::*;
        let fb = |op, st, x: f64, y: f64| match binary(op, st, Num::F(x), Num::F(y)).unwrap() {
            Num::F(v) => v,
            Num::I(_) => panic!(),
        };
        assert_eq!(fb(Rem, F32, -7.5, 2.0), -1.5);
        assert_eq!(fb(Max, F32, f64::NAN, 1.0), 1.0);
        assert_eq!(fb(Min, F32, 1.0, f64::NAN), 1.0);
        assert_eq!(fb(Add, F32, 1.0, 1e-8), 1.0);
        assert_eq!(fb(Add, F64, 1.0, 1e-8), 1.0 + 1e-8);
        assert_eq!(fb(Div, F32, 1.0, 3.0), (1.0f32 / 3.0) as f64);
        assert!(compare(
            CmpPred::Ne,
            F32,
            Num::F(f64::NAN),
            Num::F(f64::NAN)
        ));
        assert!(!compare(
            CmpPred::Eq,
            F32,
            Num::F(f64::NAN),
            Num::F(f64::NAN)
        ));
        assert!(!compare(CmpPred::Lt, F32, Num::F(f64::NAN), Num::F(1.0)));
        assert_eq!(
            fma(F32, 0.1f32 as f64, 10.0, -1.0),
            0.1f32.mul_add(10.0, -1.0) as f64
        );
        // Rint is ties-to-even, casts to int truncate.
        assert_eq!(unary(UnaryOp::Rint, F32, Num::F(2.5)).unwrap(), Num::F(2.0));
        let e = Elem::Scalar;
        assert_eq!(cast(e(F32), e(I32), Num::F(-2.7), false), Num::I(-2));
        assert_eq!(cast(e(F32), e(U8), Num::F(-2.7), false), Num::I(0));
        assert_eq!(cast(e(I1), e(F32), Num::I(1), false), Num::F(1.0));
        assert_eq!(
            cast(e(U64), e(F32), Num::I(-1), false),
            Num::F(18446744073709551616.0)
        );
        assert_eq!(
            cast(e(F32), e(F16), Num::F(1.0 + 1.0 / 1024.0 * 0.99), true),
            Num::F(1.0)
        );
        // Bitcasts move encodings.
        assert_eq!(
            from_bits(e(I16), to_bits(e(F16), Num::F(-2.0))),
            Num::I(0xc000u16 as i16 as i64)
        );
        assert_eq!(
            from_bits(e(BF16), to_bits(e(I16), Num::I(0x3f80))),
            Num::F(1.0)
        );
    }

    #[test]
    fn trans_and_reverse_scan() {
        let t = Tile {
            shape: vec![2, 3],
            elem: Elem::Scalar(I32),
            data: Data::I(vec![0, 1, 2, 3, 4, 5]),
        };
        let s = strides_of(&t.shape);
        let tr = gather(&t, vec![3, 2], &[s[1], s[0]]);
        let Data::I(v) = &tr.data else { panic!() };
        assert_eq!(v, &vec![0, 3, 1, 4, 2, 5]);
        let sc = scan(&t, ScanKind::Sum, 1, true).unwrap();
        let Data::I(v) = &sc.data else { panic!() };
        assert_eq!(v, &vec![3, 3, 2, 12, 9, 5]);
        let r = reduce(&t, ReduceKind::Prod, 0, Elem::Scalar(I32)).unwrap();
        let Data::I(v) = &r.data else { panic!() };
        assert_eq!(v, &vec![0, 4, 10]);
    }
}
