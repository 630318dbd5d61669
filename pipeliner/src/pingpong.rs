//! `pingpong`: FlashAttention-3's warpgroup scheduling between the
//! warpgroups of one consumer partition, chosen from the dependence graph
//! of its loops.
//!
//! A consumer partition of two warpgroups (8 warps) splits each tile's
//! rows between them; both run the same loop in lockstep with the ring.
//! When an iteration issues its tensor-core groups (async `dot`s) and then
//! computes on tiles beside them (attention's softmax, which
//! [`crate::coarse_pipeline`] already overlaps with the iteration's own
//! second `dot`), both warpgroups otherwise issue their groups at about
//! the same moment and compute their chains at about the same moment: the
//! tensor core idles during the part of the chain that the own groups do
//! not cover. With turns, each warpgroup issues its groups only in its
//! turn (`turn.take` before the first async `dot` of the iteration,
//! `turn.pass` after the last one issued before the iteration's first
//! `dot_wait`), so the warpgroups fall half an iteration apart: one's
//! chain runs while the other's groups keep the tensor core busy.
//!
//! ```text
//! warpgroup 0: | issue S, O | softmax ......... | issue S, O | softmax ...
//! warpgroup 1:              | issue S, O | softmax ......... | issue S, O
//! ```
//!
//! The turns cost nothing in correctness: `turn.take`/`turn.pass` only
//! order the two warpgroups (verifier rule 14 keeps them paired), and the
//! aref simulator runs a partition that has them as one thread per
//! warpgroup, so its deadlock check sees every way the turns and the
//! rings' barriers can interleave.
//!
//! Chosen when the partition has two or more warpgroups and the loop
//! computes on tiles that depend on a `dot_wait`'s result (the chain); a
//! loop whose iteration is its `dot`s alone (a GEMM mainloop) gains
//! nothing from taking turns — the cooperative split already keeps the
//! tensor core fed from both warpgroups — and is left alone with a note.
//! A partition with atomics is left alone too: the simulator runs each
//! warpgroup over the partition's whole tiles, and an atomic would count
//! twice there.

use tawa_ir::function::Block;
use tawa_ir::{Function, Loc, Op, OpKind, Type};

use crate::coarse_pipeline::loc_text;
use crate::dep_graph::LoopGraph;
use crate::Schedule;

/// Adds turns to every consumer loop that qualifies (module docs),
/// noting each decision.
pub fn pingpong(func: &mut Function, schedule: &mut Schedule) {
    let mut loops = Vec::new();
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind {
            for (p, &region) in partitions.iter().zip(&func.ops[op].regions) {
                let groups = p.num_warps / 4;
                if groups < 2 {
                    continue;
                }
                let mut atomics = false;
                let mut in_region = Vec::new();
                func.walk_block(region, &mut |o| match func.ops[o].kind {
                    OpKind::AtomicRmw { .. } | OpKind::AtomicCas { .. } => atomics = true,
                    OpKind::For(_) => in_region.push(o),
                    _ => {}
                });
                loops.extend(in_region.into_iter().map(|l| (l, groups, atomics)));
            }
        }
    });
    for (l, groups, atomics) in loops {
        let loc = func.ops[l].loc;
        match plan(func, l) {
            Plan::NoDots => {}
            Plan::NothingToOverlap => schedule.note(
                loc,
                format!(
                    "loop: cooperative, no ping-pong: the {groups} consumer warpgroups split each \
                     tile's rows, and the iteration computes nothing beside its dots that another \
                     warpgroup's tensor-core groups could overlap"
                ),
            ),
            Plan::Turns { .. } if atomics => schedule.note(
                loc,
                "loop: no ping-pong: the partition has atomics (the simulator, which checks the \
                 turns, runs each warpgroup over the whole tile)"
                    .into(),
            ),
            Plan::Turns { first, last, chain } => {
                let body = func.ops[l].regions[0];
                let first_loc = func.ops[first].loc;
                let last_loc = func.ops[last].loc;
                insert_turn(func, body, last, 1, OpKind::TurnPass, last_loc);
                insert_turn(func, body, first, 0, OpKind::TurnTake, first_loc);
                let dots = if first == last {
                    format!("the dot at {}", loc_text(first_loc))
                } else {
                    format!(
                        "the dots from {} to {}",
                        loc_text(first_loc),
                        loc_text(last_loc)
                    )
                };
                schedule.note(
                    loc,
                    format!(
                        "loop: ping-pong (FA3 warpgroup scheduling): the {groups} consumer \
                         warpgroups take turns issuing {dots} (named barriers), so that one's \
                         chain of {chain} tile op(s) overlaps the other's tensor-core groups"
                    ),
                );
            }
        }
    }
}

/// Takes every turn op out of `func`: the backend found a barrier over
/// both warpgroups inside a turn (an operand it must stage through shared
/// memory), where the turns would hang the kernel.
pub fn remove_turns(func: &mut Function) {
    let mut turns = Vec::new();
    func.walk(&mut |op| {
        if func.ops[op].kind.is_turn() {
            turns.push(op);
        }
    });
    for op in turns {
        if let Some(block) = func.block_of(op) {
            func.blocks[block].ops.retain(|&o| o != op);
        }
    }
}

/// What [`pingpong`] makes of one loop.
enum Plan {
    /// No async `dot` at the top of the body: nothing to take turns for.
    NoDots,
    /// The iteration is its `dot`s (and their shape ops) alone.
    NothingToOverlap,
    /// Take the turn before `first`, pass it after `last`; `chain` tile
    /// ops depend on the groups' results.
    Turns { first: Op, last: Op, chain: usize },
}

fn plan(func: &Function, l: Op) -> Plan {
    let body = func.ops[l].regions[0];
    let ops = &func.blocks[body].ops;
    let is_async_dot = |o: Op| matches!(func.ops[o].kind, OpKind::Dot { is_async: true, .. });
    let Some(start) = ops.iter().position(|&o| is_async_dot(o)) else {
        // A synchronous dot waits for its own group: there is no window in
        // which another warpgroup's chain could run beside it that the
        // turns would create; note loops with dots as cooperative.
        return if ops
            .iter()
            .any(|&o| matches!(func.ops[o].kind, OpKind::Dot { .. }))
        {
            Plan::NothingToOverlap
        } else {
            Plan::NoDots
        };
    };
    // The issue window: async dots up to the first wait for any of them.
    let first_wait = ops[start..]
        .iter()
        .position(|&o| matches!(func.ops[o].kind, OpKind::DotWait { .. }))
        .map_or(ops.len(), |i| start + i);
    let Some(last) = ops[start..first_wait]
        .iter()
        .rev()
        .copied()
        .find(|&o| is_async_dot(o))
    else {
        return Plan::NoDots;
    };
    // The chain: tile computations that need a group's result.
    let graph = LoopGraph::of_loop(func, l);
    let waits: Vec<Op> = ops
        .iter()
        .copied()
        .filter(|&o| matches!(func.ops[o].kind, OpKind::DotWait { .. }))
        .collect();
    let chain = graph
        .dependents(&waits, false)
        .into_iter()
        .filter(|&o| computes_on_tiles(func, o))
        .count();
    if chain == 0 {
        return Plan::NothingToOverlap;
    }
    Plan::Turns {
        first: ops[start],
        last,
        chain,
    }
}

/// Whether `op` does arithmetic on a tile (not a shape op, a copy or
/// tensor-core work), the kind of work the turns overlap.
fn computes_on_tiles(func: &Function, op: Op) -> bool {
    let data = &func.ops[op];
    yields_tile(func, op)
        && matches!(
            data.kind,
            OpKind::Binary(_)
                | OpKind::Unary(_)
                | OpKind::Fma
                | OpKind::Cmp(_)
                | OpKind::Select
                | OpKind::Cast { .. }
                | OpKind::Reduce { .. }
                | OpKind::Scan { .. }
        )
}

/// Whether `op`'s first result is a tile (a tensor value).
pub(crate) fn yields_tile(func: &Function, op: Op) -> bool {
    func.ops[op]
        .results
        .first()
        .is_some_and(|&r| matches!(func.ty(r), Type::Tensor { .. }))
}

/// Inserts a turn op just before (`offset` 0) or after (1) `at` in `body`.
fn insert_turn(func: &mut Function, body: Block, at: Op, offset: usize, kind: OpKind, loc: Loc) {
    let i = func.blocks[body]
        .ops
        .iter()
        .position(|&o| o == at)
        .expect("the op is in the loop body");
    func.insert_op(body, i + offset, kind, vec![], vec![], vec![], loc);
}
