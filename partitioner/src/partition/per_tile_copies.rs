//! Per-tile copies: a TMA load before the split loops, in the block that
//! holds them (the body of a persistent kernel's tile loop, or the kernel
//! body), whose tile only `dot`s read — attention's `q`, an operand every
//! iteration of the KV loop reads but each tile loads anew. The consumer
//! used to load it itself, a blocking load at the start of every tile;
//! the producer copies it instead, through an aref of its own with one
//! slot: `aref.put` where the load was (before the producer's loops),
//! `aref.get` there in the consumer, `aref.consumed` after the last op of
//! the block that reads the tile (the loops, and any `if` after them).
//! The ring counts tiles, not loop iterations: its index is the tile
//! loop's trip counter (0 at the top level, one put in all), so the
//! producer can copy the next tile's operand as soon as the consumer's
//! loops are done with the current one, and the copy lands while the
//! consumer runs its epilogue.

use std::collections::HashSet;

use tawa_ir::function::{Block, Op, Value};
use tawa_ir::{ConstValue, Function, Loc, OpKind, ScalarType, Type};

use super::{ancestor_in, LoopSplit};
use crate::tma_infer::TmaPlan;

/// The per-tile copies of one split (see the module docs).
pub(super) struct PerTile {
    /// The block holding the loads and the split loops.
    pub block: Block,
    /// The loads, in block order; one put carries them all.
    pub loads: Vec<Op>,
    /// The last op of `block` reading one of their tiles, after which
    /// the consumer releases the slot.
    pub last_reader: Op,
}

/// Whether every use of `v` is an A or B operand of a `dot`, directly or
/// through a 2-D `trans` (a view of the same shared memory): what an aref
/// slot may feed.
fn only_dot_operands(func: &Function, v: Value, readers: &mut Vec<Op>) -> bool {
    let mut ok = true;
    func.walk(&mut |op| {
        let d = &func.ops[op];
        for (i, &o) in d.operands.iter().enumerate() {
            if o != v {
                continue;
            }
            match &d.kind {
                OpKind::Dot { .. } if i < 2 => readers.push(op),
                OpKind::Trans { perm } if perm.as_slice() == [1, 0] => {
                    ok &= only_dot_operands(func, d.results[0], readers);
                    readers.push(op);
                }
                _ => ok = false,
            }
        }
    });
    ok && !readers.is_empty()
}

/// Whether `op` or an op of its regions writes global memory.
fn writes_memory(func: &Function, op: Op) -> bool {
    let mut writes = super::writes_memory(&func.ops[op].kind);
    for &r in &func.ops[op].regions {
        func.walk_block(r, &mut |o| {
            writes |= super::writes_memory(&func.ops[o].kind)
        });
    }
    writes
}

/// The per-tile copies of the split of `loops` (enclosed by `enclosing`,
/// outermost first), if any: the loops must share one block, which is the
/// kernel body or the body of one top-level `for` (so that the trip
/// counter of that loop counts every put).
pub(super) fn find(
    func: &Function,
    plan: &TmaPlan,
    loops: &[LoopSplit],
    enclosing: &[Op],
) -> Option<PerTile> {
    let block = func.block_of(loops.first()?.the_loop)?;
    if loops
        .iter()
        .any(|l| func.block_of(l.the_loop) != Some(block))
    {
        return None;
    }
    match enclosing {
        [] if block == func.body => {}
        [tile_loop]
            if matches!(func.ops[*tile_loop].kind, OpKind::For(_))
                && func.ops[*tile_loop].regions[0] == block
                && func.block_of(*tile_loop) == Some(func.body) => {}
        _ => return None,
    }
    let ops = &func.blocks[block].ops;
    let first_loop = ops.iter().position(|&o| o == loops[0].the_loop)?;
    let split_loops: HashSet<Op> = loops.iter().map(|l| l.the_loop).collect();
    let mut loads = Vec::new();
    let mut readers_in_block: Vec<Op> = Vec::new();
    for &op in &ops[..first_loop] {
        // The producer copies ahead of the consumer: nothing the kernel
        // wrote before the load in this block may be what it reads.
        if writes_memory(func, op) {
            break;
        }
        let data = &func.ops[op];
        let is_load = matches!(data.kind, OpKind::Load { .. } | OpKind::DescLoad { .. });
        if !is_load || plan.recipe(op).is_none_or(|r| r.device_built) {
            continue;
        }
        let tile = data.results[0];
        if func.ty(tile).shape().len() != 2 {
            continue;
        }
        let mut readers = Vec::new();
        if !only_dot_operands(func, tile, &mut readers) {
            continue;
        }
        let readers: Vec<Op> = readers
            .iter()
            .filter_map(|&r| ancestor_in(func, block, r))
            .collect();
        // Read by a dot of a split loop: invariant in that loop, varying
        // with the tile.
        if !readers.iter().any(|r| split_loops.contains(r)) {
            continue;
        }
        loads.push(op);
        readers_in_block.extend(readers);
    }
    let last_load = *loads.last()?;
    let position = |op: Op| ops.iter().position(|&o| o == op);
    // One get serves them all, where the last load was: nothing may read
    // an earlier one before it.
    if readers_in_block
        .iter()
        .any(|&r| position(r) <= position(last_load))
    {
        return None;
    }
    let last_reader = *readers_in_block.iter().max_by_key(|&&r| position(r))?;
    Some(PerTile {
        block,
        loads,
        last_reader,
    })
}

/// The ring's index in `new_block`, the partition's copy of the block:
/// the trip counter of the tile loop around it (`(iv - lb) / step`), or 0
/// at the top level.
pub(super) fn tile_index(
    func: &Function,
    per_tile: &PerTile,
    out: &mut Function,
    new_block: Block,
    map: &std::collections::HashMap<Value, Value>,
) -> Option<Value> {
    let Some(tile_loop) = func.blocks[per_tile.block].parent else {
        let zero = out.append_value(
            new_block,
            OpKind::Constant(ConstValue::Int(0)),
            vec![],
            Type::scalar(ScalarType::I32),
            Loc::UNKNOWN,
        );
        out.set_name(zero, "tile_i");
        return Some(zero);
    };
    let data = &func.ops[tile_loop];
    let iv = *map.get(&func.blocks[per_tile.block].args[0])?;
    if out.ty(iv) != &Type::scalar(ScalarType::I32) {
        return None;
    }
    let lb_step = (*map.get(&data.operands[0])?, *map.get(&data.operands[2])?);
    let orig = (data.operands[0], data.operands[2]);
    let i = LoopSplit::trip_counter(func, out, new_block, iv, lb_step, orig, data.loc);
    Some(i)
}
