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
//! The pass takes the partitioner's simplest shape only — one producer
//! loop without carried values, one consumer loop with the same bounds —
//! and says why it leaves any other kernel plain.

use std::collections::HashMap;

use tawa_ir::function::{Block, Op, Value};
use tawa_ir::{BinaryOp, CmpPred, ConstValue, Elem, Function, OpKind, Partition, ScalarType, Type};

/// The role of the one partition of a software-pipelined `ws` op.
pub const ROLE: &str = "pipelined";

/// The loops of a two-partition `ws` op that [`fuse`] can pipeline.
struct Split {
    ws: Op,
    producer: Block,
    producer_loop: Op,
    consumer: Block,
    consumer_loop: Op,
    consumer_warps: u32,
}

/// Fuses the producer and consumer of `func`'s `ws` op into one partition
/// whose copies run `lookahead` iterations ahead (see the module docs),
/// or says why the kernel does not have the shape this needs.
pub fn fuse(func: &mut Function, lookahead: u32) -> Result<(), String> {
    if lookahead == 0 {
        return Err("internal: a software pipeline runs at least one iteration ahead".into());
    }
    let split = find_split(func)?;
    let (lb, ub, step) = {
        let o = &func.ops[split.producer_loop].operands;
        (o[0], o[1], o[2])
    };
    let iv_ty = func.ty(lb).clone();
    let loc = func.ops[split.producer_loop].loc;
    let fused = func.new_block(vec![]);
    let mut map: HashMap<Value, Value> = HashMap::new();

    // The producer's code before its loop: descriptors, program ids,
    // bounds.
    for op in func.blocks[split.producer].ops.clone() {
        if op == split.producer_loop {
            break;
        }
        func.clone_op(op, fused, &mut map);
    }
    let at = |map: &HashMap<Value, Value>, v: Value| map.get(&v).copied().unwrap_or(v);
    let (lb, ub, step) = (at(&map, lb), at(&map, ub), at(&map, step));

    // Prologue: the first `lookahead` iterations' copies.
    let ahead = func.append_value(
        fused,
        OpKind::Constant(ConstValue::Int(lookahead.into())),
        vec![],
        iv_ty.clone(),
        loc,
    );
    let span = func.append_value(
        fused,
        OpKind::Binary(BinaryOp::Mul),
        vec![ahead, step],
        iv_ty.clone(),
        loc,
    );
    let end = func.append_value(
        fused,
        OpKind::Binary(BinaryOp::Add),
        vec![lb, span],
        iv_ty.clone(),
        loc,
    );
    let prologue_ub = func.append_value(
        fused,
        OpKind::Binary(BinaryOp::Min),
        vec![ub, end],
        iv_ty.clone(),
        loc,
    );
    let prologue = func.clone_op(split.producer_loop, fused, &mut map);
    func.ops[prologue].operands[1] = prologue_ub;

    // The consumer, whose loop issues the copies of iteration `j + L`
    // before it gets the slot of iteration `j`.
    for op in func.blocks[split.consumer].ops.clone() {
        if matches!(func.ops[op].kind, OpKind::Yield) {
            continue;
        }
        let clone = func.clone_op(op, fused, &mut map);
        if op != split.consumer_loop {
            continue;
        }
        let body = func.ops[clone].regions[0];
        let j = func.blocks[body].args[0];
        let ahead_iv = func.insert_op(
            body,
            0,
            OpKind::Binary(BinaryOp::Add),
            vec![j, span],
            vec![iv_ty.clone()],
            vec![],
            loc,
        );
        let ahead_iv = func.ops[ahead_iv].results[0];
        let i1 = Type::Scalar(Elem::Scalar(ScalarType::I1));
        let in_range = func.insert_op(
            body,
            1,
            OpKind::Cmp(CmpPred::Lt),
            vec![ahead_iv, ub],
            vec![i1],
            vec![],
            loc,
        );
        let in_range = func.ops[in_range].results[0];
        let copies = func.new_block(vec![]);
        let producer_body = func.ops[split.producer_loop].regions[0];
        let mut shifted = map.clone();
        shifted.insert(func.blocks[producer_body].args[0], ahead_iv);
        for op in func.blocks[producer_body].ops.clone() {
            func.clone_op(op, copies, &mut shifted);
        }
        let otherwise = func.new_block(vec![]);
        func.append_op(otherwise, OpKind::Yield, vec![], vec![], vec![], loc);
        func.insert_op(
            body,
            2,
            OpKind::If,
            vec![in_range],
            vec![],
            vec![copies, otherwise],
            loc,
        );
    }
    func.append_op(fused, OpKind::Yield, vec![], vec![], vec![], loc);

    let ws = &mut func.ops[split.ws];
    ws.kind = OpKind::WarpSpecialize {
        partitions: vec![Partition {
            role: ROLE.into(),
            num_warps: split.consumer_warps,
            regs: None,
        }],
    };
    ws.regions = vec![fused];
    func.blocks[fused].parent = Some(split.ws);
    Ok(())
}

/// The `ws` op of `func` and its two loops, or why the kernel does not
/// have that shape.
fn find_split(func: &Function) -> Result<Split, String> {
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
    let (producer, consumer) = (data.regions[0], data.regions[1]);
    let producer_loop = the_loop_with(func, producer, |k| matches!(k, OpKind::ArefPut))?;
    let consumer_loop = the_loop_with(func, consumer, |k| matches!(k, OpKind::ArefGet))?;
    // Nothing but pure straight-line code around the producer's loop:
    // that code is cloned once, before the consumer's.
    let ops = &func.blocks[producer].ops;
    let loop_at = ops.iter().position(|&o| o == producer_loop).unwrap();
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
    let p = &func.ops[producer_loop];
    if p.operands.len() != 3 {
        return Err("the producer's loop carries values".into());
    }
    let c = &func.ops[consumer_loop];
    for (k, what) in ["lower bound", "upper bound", "step"].iter().enumerate() {
        if !same_value(func, p.operands[k], c.operands[k], 0) {
            return Err(format!(
                "the producer's and the consumer's loops differ in their {what}"
            ));
        }
    }
    Ok(Split {
        ws,
        producer,
        producer_loop,
        consumer,
        consumer_loop,
        consumer_warps: partitions[1].num_warps,
    })
}

/// The one `for` op among the top-level ops of `block` whose body has an
/// op of the kind `is` says; aref ops anywhere else make it an error.
fn the_loop_with(
    func: &Function,
    block: Block,
    is: impl Fn(&OpKind) -> bool,
) -> Result<Op, String> {
    let mut found = Vec::new();
    let mut stray = false;
    for &op in &func.blocks[block].ops {
        let mut hits = 0;
        let mut deep = false;
        for &r in &func.ops[op].regions {
            for &inner in &func.blocks[r].ops {
                hits += usize::from(is(&func.ops[inner].kind));
                for &rr in &func.ops[inner].regions {
                    func.walk_block(rr, &mut |o| deep |= is_aref_op(&func.ops[o].kind));
                }
            }
        }
        stray |= is_aref_op(&func.ops[op].kind) || deep;
        if hits > 0 {
            if !matches!(func.ops[op].kind, OpKind::For(_)) {
                stray = true;
            }
            found.push(op);
        }
    }
    match (found.as_slice(), stray) {
        ([l], false) => Ok(*l),
        _ => Err("a partition's aref ops are not all in one loop at its top level".into()),
    }
}

fn is_aref_op(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
    )
}

/// Whether `a` and `b` are provably the same value: the same handle, or
/// results of the same region-free pure op on operands that are (the
/// partitioner gives each partition its own copy of shared scalars).
fn same_value(func: &Function, a: Value, b: Value, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if depth > 16 {
        return false;
    }
    let (Some(da), Some(db)) = (func.def_op(a), func.def_op(b)) else {
        return false;
    };
    let (x, y) = (&func.ops[da], &func.ops[db]);
    x.kind == y.kind
        && x.kind.is_pure()
        && x.regions.is_empty()
        && y.regions.is_empty()
        && x.results.iter().position(|&r| r == a) == y.results.iter().position(|&r| r == b)
        && x.operands.len() == y.operands.len()
        && x.operands
            .iter()
            .zip(&y.operands)
            .all(|(&p, &q)| same_value(func, p, q, depth + 1))
}
