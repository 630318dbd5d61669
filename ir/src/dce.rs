//! `dce`: dead code and dead loop-carried values.
//!
//! Later passes leave work behind that nothing reads. The sharpest case is
//! the consumer partition of a warp-specialized GEMM once its loads have
//! become TMA descriptor loads: the K loop still carries the pointer tiles
//! `a_ptrs`/`b_ptrs` (`tensor<128x64xptr<f16>>`, advanced by `addptr`
//! every iteration) although no load reads them any more. Each is a tile
//! of 64-bit addresses held in registers across the loop, hundreds of
//! registers per thread that the accumulator needs. A plain "unused
//! result" sweep cannot drop them: the loop's `yield` uses the `addptr`,
//! which uses the block argument, which the `yield` feeds — a cycle
//! through the loop that keeps every member "used".
//!
//! So the pass computes *liveness* instead of use counts (aggressive dead
//! code elimination): a value is live when something with an effect needs
//! it, and everything else goes. Seeds and propagation:
//!
//! - Operands of ops that are not [`OpKind::is_pure`] are live (stores,
//!   atomics, loads — which may fault, so they stay even when unused —,
//!   aref ops, prints, `return`), except for `for` and its `yield`:
//! - a `for` needs its bounds and step; its carried value `j` (result `j`,
//!   block argument `j + 1`, init operand `3 + j`, yield operand `j`) is
//!   live when its result or its block argument is live, and then its init
//!   and its yield operand are live. A value that only feeds its own next
//!   iteration is therefore dead, however many pure ops it passes through,
//!   and so are carried values of nested loops that only feed each other.
//! - `if` and `while` are left alone: the operands of their terminators
//!   (`yield`, `condition`) and of the `while` itself are live, so their
//!   results and carried values are kept even when unused.
//! - A pure op without regions makes its operands live when one of its
//!   results is live.
//!
//! Then the dead carried values are removed from their loops (result,
//! block argument, init, yield operand; later indices shift down), every
//! pure region-free op with no live result is removed from its block, and
//! a `for` left without results and with nothing but its `yield` is
//! removed too. That can make bounds dead, so the whole pass repeats
//! until nothing changes.
//!
//! Removed ops and values stay in the arenas, detached, as after the other
//! passes: nothing reachable from the body refers to them, which is what
//! the verifier checks.

use std::collections::HashSet;

use crate::function::{Block, Function, Op, Value, ValueDef};
use crate::ops::OpKind;

/// Removes dead ops and dead `for` carried values from `func`, to a
/// fixpoint; returns whether anything changed.
pub fn eliminate_dead_code(func: &mut Function) -> bool {
    let mut changed = false;
    loop {
        let live = live_values(func);
        let mut round = remove_dead_carried(func, &live);
        round |= remove_dead_ops(func, &live);
        round |= remove_empty_loops(func);
        if !round {
            return changed;
        }
        changed = true;
    }
}

/// The values something with an effect needs (see the module docs).
fn live_values(func: &Function) -> HashSet<Value> {
    let mut live = HashSet::new();
    let mut work = Vec::new();
    let mut for_yields = HashSet::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::For(_)) {
            for_yields.insert(body_yield(func, func.ops[op].regions[0]));
        }
    });
    func.walk(&mut |op| {
        let data = &func.ops[op];
        match &data.kind {
            OpKind::For(_) => work.extend(data.operands.iter().take(3).copied()),
            // The carried operands of a `for` body's yield follow their
            // carried value; other yields (`if`, `while`, `ws`) are seeds.
            OpKind::Yield if for_yields.contains(&op) => {}
            kind if kind.is_pure() && data.regions.is_empty() => {}
            _ => work.extend(data.operands.iter().copied()),
        }
    });
    while let Some(v) = work.pop() {
        if !live.insert(v) {
            continue;
        }
        match func.values[v].def {
            ValueDef::Result(op, index) => {
                let data = &func.ops[op];
                match data.kind {
                    OpKind::For(_) => work.extend(carried_sources(func, op, index as usize)),
                    ref kind if kind.is_pure() && data.regions.is_empty() => {
                        work.extend(data.operands.iter().copied())
                    }
                    // Operands of effectful ops, `if` and `while` are seeds.
                    _ => {}
                }
            }
            ValueDef::Arg(block, index) => {
                if let Some(op) = func.blocks[block].parent {
                    // Argument 0 of a `for` body is the induction variable.
                    if matches!(func.ops[op].kind, OpKind::For(_)) && index > 0 {
                        work.extend(carried_sources(func, op, index as usize - 1));
                    }
                }
            }
        }
    }
    live
}

/// The init and the yield operand of carried value `j` of `for_op`.
fn carried_sources(func: &Function, for_op: Op, j: usize) -> [Value; 2] {
    let data = &func.ops[for_op];
    let yield_op = body_yield(func, data.regions[0]);
    [data.operands[3 + j], func.ops[yield_op].operands[j]]
}

/// The terminator of a `for` body (the verifier guarantees one).
fn body_yield(func: &Function, body: Block) -> Op {
    *func.blocks[body]
        .ops
        .last()
        .expect("a verified `for` body ends in `yield`")
}

/// All blocks reachable from the body: the body and every region.
fn reachable_blocks(func: &Function) -> Vec<Block> {
    let mut blocks = vec![func.body];
    func.walk(&mut |op| blocks.extend(func.ops[op].regions.iter().copied()));
    blocks
}

/// Drops the carried values of every `for` whose result and block
/// argument are both dead.
fn remove_dead_carried(func: &mut Function, live: &HashSet<Value>) -> bool {
    let mut loops = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::For(_)) {
            loops.push(op);
        }
    });
    let mut changed = false;
    for for_op in loops {
        let body = func.ops[for_op].regions[0];
        let results = func.ops[for_op].results.clone();
        let keep: Vec<bool> = results
            .iter()
            .enumerate()
            .map(|(j, r)| live.contains(r) || live.contains(&func.blocks[body].args[j + 1]))
            .collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        changed = true;
        let yield_op = body_yield(func, body);

        let data = &mut func.ops[for_op];
        data.results = keep_where(&data.results, &keep, 0);
        data.operands = keep_where(&data.operands, &keep, 3);
        let yielded = &mut func.ops[yield_op].operands;
        *yielded = keep_where(yielded, &keep, 0);
        let args = &mut func.blocks[body].args;
        *args = keep_where(args, &keep, 1);

        // Later results and arguments moved down: their `def` says where.
        for (i, r) in func.ops[for_op].results.clone().into_iter().enumerate() {
            func.values[r].def = ValueDef::Result(for_op, i as u32);
        }
        for (i, a) in func.blocks[body].args.clone().into_iter().enumerate() {
            func.values[a].def = ValueDef::Arg(body, i as u32);
        }
    }
    changed
}

/// `items` without the carried entries `keep` rejects; the first `offset`
/// entries (bounds, induction variable) are not carried and stay.
fn keep_where(items: &[Value], keep: &[bool], offset: usize) -> Vec<Value> {
    items
        .iter()
        .enumerate()
        .filter(|&(i, _)| i < offset || keep[i - offset])
        .map(|(_, &v)| v)
        .collect()
}

/// Removes the pure, region-free ops none of whose results is live.
fn remove_dead_ops(func: &mut Function, live: &HashSet<Value>) -> bool {
    retain_ops(func, |func, op| {
        let d = &func.ops[op];
        // An op without results is there for something else (none is pure
        // today); keep it rather than guess.
        !(d.kind.is_pure()
            && d.regions.is_empty()
            && !d.results.is_empty()
            && d.results.iter().all(|r| !live.contains(r)))
    })
}

/// Removes `for` loops that have no results and whose body holds only its
/// `yield`: they compute nothing (the bounds are plain integers, so the
/// loop has no effect of its own).
fn remove_empty_loops(func: &mut Function) -> bool {
    retain_ops(func, |func, op| {
        let d = &func.ops[op];
        !(matches!(d.kind, OpKind::For(_))
            && d.results.is_empty()
            && func.blocks[d.regions[0]].ops.len() == 1)
    })
}

/// Keeps, in every reachable block, the ops `keep` accepts; whether any
/// was removed.
fn retain_ops(func: &mut Function, keep: impl Fn(&Function, Op) -> bool) -> bool {
    let mut changed = false;
    for block in reachable_blocks(func) {
        let ops = std::mem::take(&mut func.blocks[block].ops);
        let before = ops.len();
        let kept: Vec<Op> = ops.into_iter().filter(|&op| keep(func, op)).collect();
        changed |= kept.len() != before;
        func.blocks[block].ops = kept;
    }
    changed
}
