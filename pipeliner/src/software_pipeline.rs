//! `software_pipeline`: `num_stages` for kernels that are not
//! warp-specialized (`--no-ws`): one partition both copies the tiles and
//! computes on them, its copies running `L` iterations ahead.
//!
//! The partitioner's split of a loop into a producer and a consumer is
//! also the right starting point for classic software pipelining (Triton's
//! `num_stages` on a plain kernel): the producer loop is exactly the
//! iteration's copies, the consumer loop its use of them. Instead of
//! running the two concurrently in separate warps, this pass fuses them
//! back into one partition, shifted:
//!
//! ```text
//! ws {
//!   partition producer { pre_p; for %i = lb to ub step s { copies(%i); aref.put %ring, %i, ... } }
//!   partition consumer { pre_c; for %j = lb to ub step s { aref.get %ring, %j; use; aref.consumed %ring, %j } post_c }
//! }
//! ```
//!
//! becomes
//!
//! ```text
//! ws {
//!   partition pipelined {
//!     pre_p
//!     for %i = lb to min(ub, lb + L*s) step s { copies(%i); aref.put %ring, %i, ... }   // prologue
//!     pre_c
//!     for %j = lb to ub step s {
//!       if %j + L*s < ub { copies(%j + L*s); aref.put %ring, %j + L*s, ... }        // L ahead
//!       aref.get %ring, %j; use; aref.consumed %ring, %j
//!     }
//!     post_c
//!   }
//! }
//! ```
//!
//! with a ring of `D = L + 1` slots (plus one per WGMMA group kept in
//! flight, which releases its slot that much later). The put of iteration
//! `j + L` reuses the slot of iteration `j + L - D = j - 1`, which the
//! partition released at the end of its previous iteration: the put never
//! waits on itself, so one partition cannot deadlock, and every TMA copy
//! overlaps the `L` iterations of work before its tile is used. A
//! one-partition `ws` op is the only place where a partition may both put
//! into an aref and get from it (rule 11 of the verifier).
//!
//! The loops may carry the ring counter (`aref.put %ring, %c` with `%c`
//! advanced by a loop-invariant step; the copies `L` iterations ahead use
//! `%c + L * step`), and may sit inside an outer loop of the same bounds
//! in both partitions, as a persistent kernel's K loop sits in its tile
//! loop: the two outer loops become one, the producer's straight-line code
//! of each tile before the consumer's, and the K loops are fused inside it
//! as above, with a prologue per tile (copies run ahead within a tile, not
//! into the next one). Any other shape (the producer doing more than
//! copies, two aref loops in a row) is left plain, and the pass says why.

use std::collections::HashMap;

use tawa_ir::function::{Block, Op, Value, ValueDef};
use tawa_ir::{BinaryOp, CmpPred, ConstValue, Elem, Function, OpKind, Partition, ScalarType, Type};

/// The role of the one partition of a software-pipelined `ws` op.
pub const ROLE: &str = "pipelined";

/// Fuses the producer and consumer of `func`'s `ws` op into one partition
/// whose copies run `lookahead` iterations ahead (see the module docs),
/// or says why the kernel does not have the shape this needs. On an error
/// `func` may hold detached blocks: the caller drops it for the plain
/// kernel.
pub fn fuse(func: &mut Function, lookahead: u32) -> Result<(), String> {
    if lookahead == 0 {
        return Err("internal: a software pipeline runs at least one iteration ahead".into());
    }
    let (ws, producer, consumer, consumer_warps) = find_ws(func)?;
    let loc = func.ops[ws].loc;
    let fused = func.new_block(vec![]);
    let mut map: HashMap<Value, Value> = HashMap::new();
    let mut equiv: HashMap<Value, Value> = HashMap::new();
    fuse_level(
        func, producer, consumer, fused, &mut map, &mut equiv, lookahead, true,
    )?;
    func.append_op(fused, OpKind::Yield, vec![], vec![], vec![], loc);

    let data = &mut func.ops[ws];
    data.kind = OpKind::WarpSpecialize {
        partitions: vec![Partition {
            role: ROLE.into(),
            num_warps: consumer_warps,
            regs: None,
        }],
    };
    data.regions = vec![fused];
    func.blocks[fused].parent = Some(ws);
    Ok(())
}

/// Clones into `out` one level of the two partitions: the producer's
/// straight-line code before its aref loop, then the consumer's code with
/// the two aref loops fused. At the level whose loops hold the aref ops
/// themselves (the K loop), the producer's loop becomes a prologue of
/// `lookahead` iterations and its body is issued `lookahead` iterations
/// ahead inside the consumer's; above it (a persistent kernel's tile
/// loop), the two loops become one whose body is the next level fused.
/// `equiv` pairs the producer's values with the consumer's that are equal
/// at run time (induction variables, ring counters of the levels above).
#[allow(clippy::too_many_arguments)]
fn fuse_level(
    func: &mut Function,
    producer: Block,
    consumer: Block,
    out: Block,
    map: &mut HashMap<Value, Value>,
    equiv: &mut HashMap<Value, Value>,
    lookahead: u32,
    top: bool,
) -> Result<(), String> {
    let (p_loop, direct) = aref_loop(func, producer, |k| matches!(k, OpKind::ArefPut))?;
    let (c_loop, c_direct) = aref_loop(func, consumer, |k| matches!(k, OpKind::ArefGet))?;
    if direct != c_direct {
        return Err("the producer's and the consumer's aref loops are nested differently".into());
    }
    // Nothing but pure straight-line code around the producer's loop:
    // that code is cloned once, before the consumer's.
    let ops = func.blocks[producer].ops.clone();
    let loop_at = ops.iter().position(|&o| o == p_loop).unwrap();
    if ops.len() != loop_at + 2 {
        return Err("the producer does more after its loop".into());
    }
    if let Some(&o) = ops[..loop_at]
        .iter()
        .find(|&&o| !func.ops[o].kind.is_pure() || !func.ops[o].regions.is_empty())
    {
        return Err(format!(
            "the producer runs `{}` before its loop",
            tawa_ir::printer::op_name(&func.ops[o].kind)
        ));
    }
    for (k, what) in ["lower bound", "upper bound", "step"].iter().enumerate() {
        let (p, c) = (func.ops[p_loop].operands[k], func.ops[c_loop].operands[k]);
        if !same_value(func, p, c, equiv, 0) {
            return Err(format!(
                "the producer's and the consumer's loops differ in their {what}"
            ));
        }
    }
    let counters = match_counters(func, p_loop, c_loop, direct, equiv)?;
    for &op in &ops[..loop_at] {
        func.clone_op(op, out, map);
    }
    let at = |map: &HashMap<Value, Value>, v: Value| map.get(&v).copied().unwrap_or(v);
    let (p_body, c_body) = (func.ops[p_loop].regions[0], func.ops[c_loop].regions[0]);
    let loc = func.ops[c_loop].loc;
    // Prologue: the first `lookahead` iterations' copies, issued as soon
    // as their operands are known (before the consumer's own set-up).
    let mut span = None;
    if direct {
        let (lb, ub, step) = {
            let o = &func.ops[p_loop].operands;
            (at(map, o[0]), at(map, o[1]), at(map, o[2]))
        };
        let iv_ty = func.ty(lb).clone();
        let ahead = func.append_value(
            out,
            OpKind::Constant(ConstValue::Int(lookahead.into())),
            vec![],
            iv_ty.clone(),
            loc,
        );
        let by = func.append_value(
            out,
            OpKind::Binary(BinaryOp::Mul),
            vec![ahead, step],
            iv_ty.clone(),
            loc,
        );
        let end = func.append_value(
            out,
            OpKind::Binary(BinaryOp::Add),
            vec![lb, by],
            iv_ty.clone(),
            loc,
        );
        let prologue_ub = func.append_value(
            out,
            OpKind::Binary(BinaryOp::Min),
            vec![ub, end],
            iv_ty,
            loc,
        );
        let prologue = func.clone_op(p_loop, out, map);
        func.ops[prologue].operands[1] = prologue_ub;
        span = Some(by);
    }
    for op in func.blocks[consumer].ops.clone() {
        if top && matches!(func.ops[op].kind, OpKind::Yield) {
            continue;
        }
        if op != c_loop {
            func.clone_op(op, out, map);
            continue;
        }
        if !direct {
            // One loop for both: the consumer's, with the producer's
            // induction variable and counters read from it.
            let c_args = func.blocks[c_body].args.clone();
            let types = c_args.iter().map(|&a| func.ty(a).clone()).collect();
            let body = func.new_block(types);
            let args = func.blocks[body].args.clone();
            for (&old, &new) in c_args.iter().zip(&args) {
                map.insert(old, new);
                func.values[new].name = func.values[old].name.clone();
            }
            let p_args = func.blocks[p_body].args.clone();
            map.insert(p_args[0], args[0]);
            equiv.insert(p_args[0], c_args[0]);
            for &(k, m, _) in &counters {
                map.insert(p_args[k + 1], args[m + 1]);
                equiv.insert(p_args[k + 1], c_args[m + 1]);
            }
            fuse_level(func, p_body, c_body, body, map, equiv, lookahead, false)?;
            let data = func.ops[c_loop].clone();
            let operands = data.operands.iter().map(|&v| at(map, v)).collect();
            let types = data.results.iter().map(|&v| func.ty(v).clone()).collect();
            let fused = func.append_op(out, data.kind, operands, types, vec![body], data.loc);
            for (k, &old) in data.results.iter().enumerate() {
                let new = func.ops[fused].results[k];
                func.values[new].name = func.values[old].name.clone();
                map.insert(old, new);
            }
            continue;
        }
        let span = span.expect("the prologue of a direct loop");
        let ub = at(map, func.ops[p_loop].operands[1]);
        let iv_ty = func.ty(ub).clone();
        // The consumer's loop, which issues the copies of iteration
        // `j + L` before it gets the slot of iteration `j`.
        let clone = func.clone_op(c_loop, out, map);
        let body = func.ops[clone].regions[0];
        let j = func.blocks[body].args[0];
        let mut next = 0;
        let mut insert = |func: &mut Function, kind: OpKind, operands: Vec<Value>, ty: Type| {
            let op = func.insert_op(body, next, kind, operands, vec![ty], vec![], loc);
            next += 1;
            func.ops[op].results[0]
        };
        let ahead_iv = insert(
            func,
            OpKind::Binary(BinaryOp::Add),
            vec![j, span],
            iv_ty.clone(),
        );
        let mut shifted = map.clone();
        shifted.insert(func.blocks[p_body].args[0], ahead_iv);
        // A ring counter `L` iterations on: its value here plus `L` times
        // its loop-invariant increment.
        for &(k, m, inc) in &counters {
            let counter = func.blocks[body].args[m + 1];
            let cty = func.ty(counter).clone();
            let l = insert(
                func,
                OpKind::Constant(ConstValue::Int(lookahead.into())),
                vec![],
                cty.clone(),
            );
            let inc = inc.expect("the increment of a direct loop's counter");
            let inc = match func.def_op(inc).map(|o| func.ops[o].kind.clone()) {
                Some(OpKind::Constant(c)) => insert(func, OpKind::Constant(c), vec![], cty.clone()),
                _ => at(map, inc),
            };
            let by = insert(
                func,
                OpKind::Binary(BinaryOp::Mul),
                vec![l, inc],
                cty.clone(),
            );
            let counter_ahead = insert(func, OpKind::Binary(BinaryOp::Add), vec![counter, by], cty);
            shifted.insert(func.blocks[p_body].args[k + 1], counter_ahead);
        }
        let i1 = Type::Scalar(Elem::Scalar(ScalarType::I1));
        let in_range = insert(func, OpKind::Cmp(CmpPred::Lt), vec![ahead_iv, ub], i1);
        let copies = func.new_block(vec![]);
        for op in func.blocks[p_body].ops.clone() {
            if !matches!(func.ops[op].kind, OpKind::Yield) {
                func.clone_op(op, copies, &mut shifted);
            }
        }
        func.append_op(copies, OpKind::Yield, vec![], vec![], vec![], loc);
        let otherwise = func.new_block(vec![]);
        func.append_op(otherwise, OpKind::Yield, vec![], vec![], vec![], loc);
        func.insert_op(
            body,
            next,
            OpKind::If,
            vec![in_range],
            vec![],
            vec![copies, otherwise],
            loc,
        );
    }
    Ok(())
}

/// The values the producer's loop carries, each a ring counter the
/// consumer's loop carries too: `(k, m, increment)` for producer carried
/// value `k`, equal at every iteration to consumer carried value `m` (same
/// initial value, same update); in the loop that puts (`direct`), advanced
/// by the loop-invariant `increment` each iteration.
fn match_counters(
    func: &Function,
    p_loop: Op,
    c_loop: Op,
    direct: bool,
    equiv: &HashMap<Value, Value>,
) -> Result<Vec<(usize, usize, Option<Value>)>, String> {
    let (p_body, c_body) = (func.ops[p_loop].regions[0], func.ops[c_loop].regions[0]);
    let p_yield = terminator(func, p_body);
    let c_yield = terminator(func, c_body);
    let p_inits = &func.ops[p_loop].operands[3..];
    let c_inits = &func.ops[c_loop].operands[3..];
    let mut out = Vec::new();
    for (k, &p_init) in p_inits.iter().enumerate() {
        let p_arg = func.blocks[p_body].args[k + 1];
        let p_next = func.ops[p_yield].operands[k];
        // `arg + increment`, the increment defined outside the loop.
        let inc = func.def_op(p_next).and_then(|d| {
            let data = &func.ops[d];
            // A constant anywhere is loop-invariant too (the partitioner
            // puts the counter's `1` in the body).
            let outside = |v: Value| {
                !defined_in(func, v, p_body)
                    || func
                        .def_op(v)
                        .is_some_and(|o| matches!(func.ops[o].kind, OpKind::Constant(_)))
            };
            match (&data.kind, data.operands.as_slice()) {
                (OpKind::Binary(BinaryOp::Add), &[a, b]) if a == p_arg && outside(b) => Some(b),
                (OpKind::Binary(BinaryOp::Add), &[a, b]) if b == p_arg && outside(a) => Some(a),
                _ => None,
            }
        });
        // Only the loop that puts needs the increment (to run ahead);
        // the loops around it pass the counter through.
        if direct && inc.is_none() {
            return Err("the producer's loop carries a value that is not a ring counter".into());
        }
        let m = (0..c_inits.len()).find(|&m| {
            let c_arg = func.blocks[c_body].args[m + 1];
            let mut with_arg = equiv.clone();
            with_arg.insert(p_arg, c_arg);
            same_value(func, p_init, c_inits[m], equiv, 0)
                && same_value(func, p_next, func.ops[c_yield].operands[m], &with_arg, 0)
        });
        let Some(m) = m else {
            return Err("the consumer's loop does not carry the producer's ring counter".into());
        };
        out.push((k, m, inc));
    }
    Ok(out)
}

/// The last op of `block` (its `yield`).
fn terminator(func: &Function, block: Block) -> Op {
    *func.blocks[block]
        .ops
        .last()
        .expect("a loop body ends with its yield")
}

/// Whether `v` is defined inside `block` (an argument or an op's result at
/// any depth).
pub(crate) fn defined_in(func: &Function, v: Value, block: Block) -> bool {
    let op = match func.values[v].def {
        ValueDef::Arg(b, _) if b == block => return true,
        ValueDef::Arg(b, _) => match func.blocks[b].parent {
            Some(op) => op,
            None => return false,
        },
        ValueDef::Result(op, _) => op,
    };
    let mut b = func.block_of(op);
    while let Some(cur) = b {
        if cur == block {
            return true;
        }
        b = func.blocks[cur].parent.and_then(|p| func.block_of(p));
    }
    false
}

/// The `ws` op of `func` with its producer and consumer bodies and the
/// consumer's warps, or why the kernel does not have that shape.
fn find_ws(func: &Function) -> Result<(Op, Block, Block, u32), String> {
    let mut wss = Vec::new();
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { .. } = func.ops[op].kind {
            wss.push(op);
        }
    });
    let ws = match wss.as_slice() {
        [ws] => *ws,
        _ => return Err(format!("{} warp-specialized regions, not one", wss.len())),
    };
    let data = &func.ops[ws];
    let OpKind::WarpSpecialize { partitions } = &data.kind else {
        unreachable!()
    };
    if partitions.len() != 2 {
        return Err(format!(
            "{} partitions, not a producer and a consumer",
            partitions.len()
        ));
    }
    Ok((
        ws,
        data.regions[0],
        data.regions[1],
        partitions[1].num_warps,
    ))
}

/// The one top-level op of `block` with aref ops in it, which must be a
/// `for` loop, and whether its body holds the ops `is` says at its top
/// level (then no aref op sits deeper in it).
fn aref_loop(
    func: &Function,
    block: Block,
    is: impl Fn(&OpKind) -> bool,
) -> Result<(Op, bool), String> {
    let uneven = || "a partition's aref ops are not all in one loop at its top level".to_string();
    let mut found = Vec::new();
    for &op in &func.blocks[block].ops {
        if is_aref_op(&func.ops[op].kind) {
            return Err(uneven());
        }
        let mut hits = 0;
        for &r in &func.ops[op].regions {
            func.walk_block(r, &mut |o| {
                hits += usize::from(is_aref_op(&func.ops[o].kind))
            });
        }
        if hits > 0 {
            found.push(op);
        }
    }
    let [the_loop] = found.as_slice() else {
        return Err(uneven());
    };
    if !matches!(func.ops[*the_loop].kind, OpKind::For(_)) {
        return Err(uneven());
    }
    let body = func.ops[*the_loop].regions[0];
    let direct = func.blocks[body].ops.iter().any(|&o| is(&func.ops[o].kind));
    if direct {
        let mut deep = false;
        for &o in &func.blocks[body].ops {
            for &r in &func.ops[o].regions {
                func.walk_block(r, &mut |x| deep |= is_aref_op(&func.ops[x].kind));
            }
        }
        if deep {
            return Err(uneven());
        }
    }
    Ok((*the_loop, direct))
}

fn is_aref_op(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
    )
}

/// Whether `a` (the producer's) and `b` (the consumer's) are provably the
/// same value: the same handle, paired in `equiv`, or results of the same
/// region-free pure op on operands that are (the partitioner gives each
/// partition its own copy of shared scalars).
fn same_value(
    func: &Function,
    a: Value,
    b: Value,
    equiv: &HashMap<Value, Value>,
    depth: u32,
) -> bool {
    if a == b || equiv.get(&a) == Some(&b) {
        return true;
    }
    if depth > 16 {
        return false;
    }
    let (Some(da), Some(db)) = (func.def_op(a), func.def_op(b)) else {
        return false;
    };
    let (x, y) = (&func.ops[da], &func.ops[db]);
    if let (OpKind::For(_), OpKind::For(_)) = (&x.kind, &y.kind) {
        return same_loop_result(func, (da, a), (db, b), equiv, depth);
    }
    x.kind == y.kind
        && x.kind.is_pure()
        && x.regions.is_empty()
        && y.regions.is_empty()
        && x.results.iter().position(|&r| r == a) == y.results.iter().position(|&r| r == b)
        && x.operands.len() == y.operands.len()
        && x.operands
            .iter()
            .zip(&y.operands)
            .all(|(&p, &q)| same_value(func, p, q, equiv, depth + 1))
}

/// Whether carried value `a` of loop `pa` (the producer's) and `b` of
/// `pb` (the consumer's) are equal when the loops end: same bounds, same
/// initial value, and the same update given that the two induction
/// variables and the two carried values are equal (a ring counter passed
/// through an inner loop, as a tile loop's is).
fn same_loop_result(
    func: &Function,
    (pa, a): (Op, Value),
    (pb, b): (Op, Value),
    equiv: &HashMap<Value, Value>,
    depth: u32,
) -> bool {
    let (x, y) = (&func.ops[pa], &func.ops[pb]);
    let r = x.results.iter().position(|&v| v == a).unwrap();
    let q = y.results.iter().position(|&v| v == b).unwrap();
    let same = |p: Value, c: Value, equiv: &HashMap<Value, Value>| {
        same_value(func, p, c, equiv, depth + 1)
    };
    if !(0..3).all(|k| same(x.operands[k], y.operands[k], equiv))
        || !same(x.operands[3 + r], y.operands[3 + q], equiv)
    {
        return false;
    }
    let (bx, by) = (x.regions[0], y.regions[0]);
    let mut inside = equiv.clone();
    inside.insert(func.blocks[bx].args[0], func.blocks[by].args[0]);
    inside.insert(func.blocks[bx].args[r + 1], func.blocks[by].args[q + 1]);
    same(
        func.ops[terminator(func, bx)].operands[r],
        func.ops[terminator(func, by)].operands[q],
        &inside,
    )
}
