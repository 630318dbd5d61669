//! `copy_split`: a producer loop split where its copies' masks stop being
//! whole, so that the steps before run the copies without a mask
//! (`--no-copy-split` keeps one masked loop).
//!
//! A producer copy ([`producer_copy`]) of a K loop's tile is masked by a
//! bound that moves with the loop (`ks < K - k * BK`): every step but the
//! ragged last one copies whole chunks, yet each step computes the mask
//! and decides per thread between the plain `cp.async` and the
//! zero-filling one. On the H200 that cost matmul.py's 128x256x64 GEMM
//! with mixed copies 10%: 0.89x Triton at K = 16384 against 1.01x for
//! the same CUDA with the mask dropped by hand, 1.01x with the loop split
//! by hand as this pass splits it, and 1.00-1.01x as the pass splits it
//! (`bench/RESULTS.md`) — the copies' instructions differ by one
//! predicate; why that costs so much is not settled.
//!
//! The split is inductive range-check elimination (LLVM's IRCE) on the
//! mask's affine form ([`crate::affine`]): a mask that is the
//! conjunction of bounds `i_d < limit` on the tile index `i_d` is whole
//! exactly when `size_d <= limit` for each. A limit `rest - a * t` (`t`
//! the loop's iteration number, `a > 0` constant, `rest` the same in
//! every iteration) holds it for the first `max(rest - size_d + a, 0) /
//! a` iterations; a limit that does not move holds it for all of them or
//! none. The loop `for iv in range(lb, ub, step)` becomes
//!
//! ```text
//! split = lb + min(n, trips) * step        (computed before the loop)
//! for iv in range(lb, split, step): ...    the loads without their masks
//! for iv in range(split, ub, step): ...    the loop as it was
//! ```
//!
//! the second loop carrying on from the first's results. Whichever the
//! launch, the split is correct: a mask is dropped only in iterations
//! where it is whole, and a mask whose form the analysis cannot follow
//! leaves the loop as it was. Only loads whose tiles an `aref.put` of a
//! warp-specialized producer partition takes are unmasked (what the
//! backend lowers to `cp.async`), and only a loop all of whose masked
//! such loads have followable masks is split.
//!
//! [`producer_copy`]: crate::producer_copy

use std::collections::HashMap;

use tawa_ir::{BinaryOp, Block, CmpPred, ConstValue, Function, Loc, Op, OpKind, Type, Value};

use crate::affine::{self, Atom, Form, Poly};

/// One split loop, for `--explain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The loop split.
    pub loc: Loc,
    /// The loads whose masks the first loop drops.
    pub loads: Vec<Loc>,
}

/// How one bound of a mask stays whole over a loop's iterations.
enum Whole {
    /// For the first `max(rest - size + a, 0) / a` iterations.
    Prefix { rest: Poly, size: i64, a: i64 },
    /// In every iteration when `size <= rest`, in none otherwise.
    Always { rest: Poly, size: i64 },
}

/// Splits every producer loop of `func` whose copies' masks can be
/// dropped in a prefix of its iterations; returns what was split.
pub fn copy_split(func: &mut Function) -> Vec<Split> {
    let forms = affine::analyze(func);
    let mut plans = Vec::new();
    for the_loop in producer_loops(func) {
        if let Some(plan) = plan_loop(func, &forms, the_loop) {
            plans.push(plan);
        }
    }
    let mut done = Vec::new();
    for (the_loop, loads, bounds) in plans {
        if let Some(split) = split_loop(func, the_loop, &loads, &bounds) {
            done.push(split);
        }
    }
    done
}

/// The `for` loops of producer partitions whose body holds a masked load
/// that an `aref.put` of the same body takes, in program order.
fn producer_loops(func: &Function) -> Vec<Op> {
    let mut loops = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let OpKind::WarpSpecialize { partitions } = &data.kind else {
            return;
        };
        for (p, &region) in partitions.iter().zip(&data.regions) {
            if p.role != "producer" {
                continue;
            }
            func.walk_block(region, &mut |inner| {
                if !matches!(func.ops[inner].kind, OpKind::For(_)) {
                    return;
                }
                let body = func.ops[inner].regions[0];
                if !put_loads(func, body).is_empty() {
                    loops.push(inner);
                }
            });
        }
    });
    loops
}

/// The masked loads of `body` whose results an `aref.put` of `body`
/// takes (and nothing else reads).
fn put_loads(func: &Function, body: Block) -> Vec<Op> {
    let ops = &func.blocks[body].ops;
    let mut loads = Vec::new();
    for &op in ops {
        if !matches!(func.ops[op].kind, OpKind::ArefPut) {
            continue;
        }
        for &v in func.put_values(op) {
            let Some(def) = func.def_op(v) else { continue };
            let masked = matches!(func.ops[def].kind, OpKind::Load { has_mask: true, .. });
            if masked && ops.contains(&def) && only_read_by(func, v, op) && !loads.contains(&def) {
                loads.push(def);
            }
        }
    }
    loads
}

fn only_read_by(func: &Function, v: Value, user: Op) -> bool {
    let mut ok = true;
    func.walk(&mut |op| {
        if op != user && func.ops[op].operands.contains(&v) {
            ok = false;
        }
    });
    ok
}

/// The loads to unmask in `the_loop` and the bounds of their masks, when
/// every masked load its puts take has a mask the forms follow.
fn plan_loop(
    func: &Function,
    forms: &affine::AffineForms,
    the_loop: Op,
) -> Option<(Op, Vec<Op>, Vec<Whole>)> {
    let data = &func.ops[the_loop];
    // A positive constant step: the iterations run upwards.
    if crate::tma_lower::constant_of(func, data.operands[2])? <= 0 {
        return None;
    }
    let loads = put_loads(func, data.regions[0]);
    let scopes = forms.scopes();
    let mut bounds = Vec::new();
    for &load in &loads {
        let mask = func.ops[load].operands[1];
        let Form::Mask(m) = forms.form(mask) else {
            return None;
        };
        if m.bounds.is_empty() {
            return None;
        }
        let shape = func.ty(mask).shape().to_vec();
        for b in &m.bounds {
            let size = i64::from(*shape.get(b.dim)?);
            // limit = rest + c * iter, nothing else moving with the loop.
            let mut rest = Poly::zero();
            let mut c = 0i64;
            for (atoms, coef) in b.limit.terms() {
                let moving: Vec<&Atom> = atoms
                    .iter()
                    .filter(|&&a| scopes.varies_in(func, the_loop, a))
                    .collect();
                match moving.as_slice() {
                    [] => rest = rest.checked_add(&Poly::monomial(atoms.to_vec(), coef))?,
                    [Atom::Iter(l)] if *l == the_loop && atoms.len() == 1 => c = coef,
                    _ => return None,
                }
            }
            bounds.push(match c {
                0 => Whole::Always { rest, size },
                c if c < 0 => Whole::Prefix {
                    rest,
                    size,
                    a: c.checked_neg()?,
                },
                // A limit that grows: the mask is whole at the end, not at
                // the start.
                _ => return None,
            });
        }
    }
    Some((the_loop, loads, bounds))
}

/// Scalar ops for the count before a loop, created unplaced so that a
/// split given up halfway leaves nothing behind.
struct Before<'a> {
    func: &'a mut Function,
    ops: Vec<Op>,
    loc: Loc,
}

impl Before<'_> {
    fn op(&mut self, kind: OpKind, operands: Vec<Value>, ty: Type) -> Value {
        let op = self
            .func
            .create_op(kind, operands, vec![ty], vec![], self.loc);
        self.ops.push(op);
        self.func.ops[op].results[0]
    }
    fn int(&mut self, c: i64) -> Value {
        self.op(OpKind::Constant(ConstValue::Int(c)), vec![], Type::I64)
    }
    fn bin(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = self.func.ty(a).clone();
        self.op(OpKind::Binary(op), vec![a, b], ty)
    }
    fn i64(&mut self, v: Value) -> Value {
        if self.func.ty(v) == &Type::I64 {
            v
        } else {
            self.cast(v, Type::I64)
        }
    }
    fn cast(&mut self, v: Value, ty: Type) -> Value {
        self.op(
            OpKind::Cast {
                rounding: Default::default(),
            },
            vec![v],
            ty,
        )
    }
    /// `p` as an i64.
    fn poly(&mut self, p: &Poly, the_loop: Op) -> Option<Value> {
        crate::tma_lower::materialize(self.func, p, Some(the_loop), self.loc, &mut self.ops)
    }
}

/// Splits `the_loop` (module docs): the count of its first iterations
/// whose `loads`' masks are whole by `bounds`, computed in i64 before
/// it; the loop runs those without the masks, and a clone of it the
/// rest, from the first loop's results. `None` (and `func` unchanged)
/// where a bound's `rest` cannot be computed there.
fn split_loop(func: &mut Function, the_loop: Op, loads: &[Op], bounds: &[Whole]) -> Option<Split> {
    let block = func.block_of(the_loop)?;
    let index = func.blocks[block].ops.iter().position(|&o| o == the_loop)?;
    let loc = func.ops[the_loop].loc;
    let (lb, ub, step) = {
        let ops = &func.ops[the_loop].operands;
        (ops[0], ops[1], ops[2])
    };
    let iv_ty = func.ty(lb).clone();
    let mut b = Before {
        func,
        ops: Vec::new(),
        loc,
    };
    // trips = max(ub - lb + step - 1, 0) / step
    let (lb64, ub64, step64) = (b.i64(lb), b.i64(ub), b.i64(step));
    let span = b.bin(BinaryOp::Sub, ub64, lb64);
    let span = b.bin(BinaryOp::Add, span, step64);
    let one = b.int(1);
    let span = b.bin(BinaryOp::Sub, span, one);
    let zero = b.int(0);
    let span = b.bin(BinaryOp::Max, span, zero);
    let trips = b.bin(BinaryOp::IDiv, span, step64);
    let mut whole = trips;
    for bound in bounds {
        let n = match bound {
            Whole::Prefix { rest, size, a } => {
                let rest = b.poly(rest, the_loop)?;
                let k = b.int(a - size);
                let num = b.bin(BinaryOp::Add, rest, k);
                let num = b.bin(BinaryOp::Max, num, zero);
                let a = b.int(*a);
                b.bin(BinaryOp::IDiv, num, a)
            }
            Whole::Always { rest, size } => {
                let rest = b.poly(rest, the_loop)?;
                let size = b.int(*size);
                let fits = b.op(OpKind::Cmp(CmpPred::Le), vec![size, rest], Type::I1);
                b.op(OpKind::Select, vec![fits, trips, zero], Type::I64)
            }
        };
        whole = b.bin(BinaryOp::Min, whole, n);
    }
    let steps = b.bin(BinaryOp::Mul, whole, step64);
    let split64 = b.bin(BinaryOp::Add, lb64, steps);
    let split = if iv_ty == Type::I64 {
        split64
    } else {
        b.cast(split64, iv_ty)
    };
    let count = std::mem::take(&mut b.ops);
    let after = index + count.len() + 1;
    func.blocks[block].ops.splice(index..index, count);
    // The second loop: a clone carrying on from the first's results.
    let mut map = HashMap::new();
    let rest_loop = func.clone_op(the_loop, block, &mut map);
    let moved = func.blocks[block].ops.pop();
    debug_assert_eq!(moved, Some(rest_loop));
    func.blocks[block].ops.insert(after, rest_loop);
    let results = func.ops[the_loop].results.clone();
    let rest_results = func.ops[rest_loop].results.clone();
    for (&r, &nr) in results.iter().zip(&rest_results) {
        func.replace_uses(r, nr, &[rest_loop]);
    }
    {
        let ops = &mut func.ops[rest_loop].operands;
        ops[0] = split;
        for (k, &r) in results.iter().enumerate() {
            ops[3 + k] = r;
        }
    }
    // The first loop: up to the split, its copies without their masks.
    func.ops[the_loop].operands[1] = split;
    let mut locs = Vec::new();
    for &load in loads {
        let data = &mut func.ops[load];
        if let OpKind::Load {
            has_mask,
            has_other,
            ..
        } = &mut data.kind
        {
            *has_mask = false;
            *has_other = false;
        }
        data.operands.truncate(1);
        locs.push(data.loc);
    }
    Some(Split { loc, loads: locs })
}
