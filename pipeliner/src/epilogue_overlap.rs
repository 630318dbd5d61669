//! `epilogue_overlap`: store a persistent GEMM's tile while the tensor
//! core runs the next tile's first group.
//!
//! A persistent consumer's tile loop ends each tile with its epilogue:
//! the K loop's last group retires, the accumulator is converted and
//! stored, and only then does the next tile's K loop issue its first
//! group. With cooperative consumers both warpgroups store at once, so the
//! tensor core idles for the whole store (on the H100, about 2.3 K cycles
//! of a 128x256 tile's 145 K at K = 8192; ten times that share at
//! K = 1024). The pass defers each tile's store into the next iteration,
//! after that tile's first `dot` has issued:
//!
//! ```text
//! %n = for %t = ... iter_args(%i = %i0) {
//!   %acc, %n1 = for %k = %lb to %ub step %s iter_args(%a = %zero, %j = %i) {
//!     %x, %y = aref.get %ring, %j
//!     %a1 = dot %x, %y, %a
//!     aref.consumed %ring, %j
//!     yield %a1, %j + 1
//!   }
//!   %c = cast %acc
//!   desc_store %desc, %c, %m, %n
//!   yield %n1
//! }
//! ```
//!
//! becomes (the K loop's first iteration peeled, the previous tile's store
//! between its async `dot` and the wait for it):
//!
//! ```text
//! %n, %pc, %pm, %pn, %pending = for %t = ... iter_args(%i = %i0,
//!     %c0 = zeros, %m0 = 0, %n0 = 0, %has = false) {
//!   %acc1, %j1 = if %lb < %ub {
//!     %x, %y = aref.get %ring, %i
//!     %a1 = dot %x, %y, %zero {async}
//!     if %has { desc_store %desc, %c0, %m0, %n0 }
//!     %a2 = dot_wait %a1 {pending = 0}
//!     aref.consumed %ring, %i
//!     yield %a2, %i + 1
//!   } else {
//!     if %has { desc_store %desc, %c0, %m0, %n0 }
//!     yield %zero, %i
//!   }
//!   %acc, %n1 = for %k = %lb + %s to %ub step %s iter_args(%a = %acc1, %j = %j1) {...}
//!   %c = cast %acc
//!   yield %n1, %c, %m, %n, true
//! }
//! if %pending { desc_store %desc, %pc, %pm, %pn }
//! ```
//!
//! Each store keeps its program order with every other memory access of
//! the partition: the tile loop's body does nothing with memory before
//! its K loop (whose consumer only reads ring slots), and nothing after
//! the store. The stored tile (64 registers a thread for a 128x256 f16
//! tile over two warpgroups) is live beside the next accumulator during
//! the peeled iteration only, so the pass applies where both and the
//! addresses fit the consumer's registers (see [`HEADROOM`]).
//!
//! It runs after [`crate::occupancy`] (a consumer of one warpgroup sharing
//! its SM has another block's groups to cover its epilogue, and fewer
//! registers), on K loops MMA pipelining left synchronous, and not beside
//! the passes that rewrite the tile loop (stream-K, CTA pairs, ping-pong
//! tiles), whose schedules the measurements do not cover.

use std::collections::HashMap;

use tawa_ir::function::{Op, Value};
use tawa_ir::{BinaryOp, CmpPred, ConstValue, Elem, Function, OpKind, ScalarType, Type};

use crate::mma_pipeline::{candidate, dot_wait, position};
use crate::software_pipeline::defined_in;
use crate::tile_pingpong::has_aref_ops;
use crate::Schedule;

/// Registers a consumer thread needs beside the tiles it holds during the
/// peeled iteration: the stored tile's shared-memory addresses, the
/// slot's descriptors, indices (the occupancy estimate's headroom).
pub const HEADROOM: u32 = crate::occupancy::HEADROOM;

/// A tile loop whose store can wait for the next tile's first group.
struct Plan {
    tile_loop: Op,
    k_loop: Op,
    /// The K loop's `dot`s reading the slot, and the positions of the
    /// results its iteration yields in flight.
    dots: Vec<Op>,
    yielded: Vec<usize>,
    /// The epilogue's stores, in program order.
    stores: Vec<Op>,
    /// Operands of the stores the tile loop carries to the next iteration
    /// (defined in its body): the stored tiles and their coordinates.
    carried: Vec<Value>,
}

/// Defers the epilogue store of every consumer tile loop that qualifies
/// (module docs), noting each decision; `enabled` false (the default,
/// without `--epilogue-overlap`) only notes where it would apply. Returns
/// how many loops changed.
pub fn epilogue_overlap(func: &mut Function, enabled: bool, schedule: &mut Schedule) -> usize {
    let mut loops = Vec::new();
    for ws in crate::ws_ops(func) {
        let OpKind::WarpSpecialize { partitions } = &func.ops[ws].kind else {
            continue;
        };
        let turns = func.turn_partitions(ws).len() > 1;
        for (p, &region) in partitions.iter().zip(&func.ops[ws].regions) {
            let regs = p.regs;
            let threads = p.num_warps * 32;
            for &o in &func.blocks[region].ops {
                if matches!(func.ops[o].kind, OpKind::For(_)) && gets_slots_in_loop(func, o) {
                    loops.push((o, regs, threads, turns));
                }
            }
        }
    }
    let one_slot = crate::aref_depth::one_slot_rings(func);
    let mut changed = 0;
    for (tile_loop, regs, threads, turns) in loops {
        let loc = func.ops[tile_loop].loc;
        let why_not = if func.attrs.cluster_split_k {
            Some("CTA pairs split the tile's K loop (--cluster-split-k)".to_string())
        } else if func.attrs.stream_k {
            Some("stream-K shares the last tiles' K loops (--stream-k)".to_string())
        } else if func.attrs.cluster != 1 {
            Some("the kernel runs in clusters (--tma-multicast)".to_string())
        } else if turns {
            Some("consumers take alternate tiles (tile ping-pong)".to_string())
        } else {
            None
        };
        let plan = match why_not {
            Some(why) => Err(why),
            None => plan(func, tile_loop, &one_slot, regs, threads),
        };
        match plan {
            Err(why) => schedule.note(loc, format!("tile loop: no epilogue overlap: {why}")),
            Ok(_) if !enabled => schedule.note(
                loc,
                "tile loop: no epilogue overlap (the default; --epilogue-overlap asks for it): \
                 each tile's store runs before the next tile's first WGMMA group issues"
                    .into(),
            ),
            Ok(plan) => {
                apply(func, &plan);
                changed += 1;
                schedule.note(
                    loc,
                    "tile loop: epilogue overlap: each tile's store runs after the next tile's \
                     first WGMMA group has issued (the K loop's first iteration peeled; the \
                     last tile's store after the loop)"
                        .into(),
                );
            }
        }
    }
    changed
}

/// Whether a loop nested in `op`'s body gets ring slots: `op` is the
/// tile loop of a consumer (a K loop directly in the partition, one
/// program a tile, holds no such loop and is not looked at).
fn gets_slots_in_loop(func: &Function, op: Op) -> bool {
    let mut found = false;
    func.walk_block(func.ops[op].regions[0], &mut |o| {
        if matches!(func.ops[o].kind, OpKind::For(_) | OpKind::While) {
            for &r in &func.ops[o].regions {
                func.walk_block(r, &mut |i| {
                    found |= matches!(func.ops[i].kind, OpKind::ArefGet);
                });
            }
        }
    });
    found
}

/// The zero of scalar or tile type `ty`, the carried values' start (never
/// stored: the flag says no tile is pending).
fn zero_of(ty: &Type) -> Option<ConstValue> {
    match ty.scalar_type()? {
        s if s.is_float() => Some(ConstValue::Float(0.0)),
        ScalarType::I1 => Some(ConstValue::Bool(false)),
        _ => Some(ConstValue::Int(0)),
    }
}

fn plan(
    func: &Function,
    tile_loop: Op,
    one_slot: &[Value],
    regs: Option<u32>,
    threads: u32,
) -> Result<Plan, String> {
    let body = func.ops[tile_loop].regions[0];
    let ops = &func.blocks[body].ops;
    let (_, ops_but_yield) = ops.split_last().ok_or("an empty tile loop")?;
    let k_loops: Vec<Op> = ops_but_yield
        .iter()
        .copied()
        .filter(|&o| has_aref_ops(func, o))
        .collect();
    let mut in_flight = false;
    for &o in &k_loops {
        for &r in &func.ops[o].regions {
            func.walk_block(r, &mut |i| {
                in_flight |= matches!(func.ops[i].kind, OpKind::Dot { is_async: true, .. });
            });
        }
    }
    if in_flight {
        return Err("its K loop keeps WGMMA groups in flight (MMA or coarse pipelining)".into());
    }
    let loops: Vec<Op> = k_loops
        .iter()
        .copied()
        .filter(|&o| matches!(func.ops[o].kind, OpKind::For(_)))
        .collect();
    let k_loop = match (k_loops.len(), loops.as_slice()) {
        (1, [k]) => *k,
        (_, [_]) => return Err("a ring is read once a tile, outside the K loop".into()),
        (_, []) => return Err("the tile's slots are not got by a `for` loop".into()),
        (_, more) => return Err(format!("the tile loop holds {} loops of slots", more.len())),
    };
    let c = match candidate(func, k_loop, one_slot) {
        Ok(Some(c)) => c,
        Ok(None) => return Err("the tile's loop gets no slot its dots read".into()),
        Err(why) => return Err(format!("its K loop does not qualify: {why}")),
    };
    match crate::const_int(func, func.ops[k_loop].operands[2]) {
        Some(s) if s > 0 => {}
        _ => return Err("the K loop's step is not a positive constant".into()),
    }
    let at = position(func, body, k_loop);
    // Before the K loop: nothing the previous tile's store, now after it,
    // could be reordered with.
    if let Some(&o) = ops_but_yield[..at]
        .iter()
        .find(|&&o| !func.ops[o].kind.is_pure() || !func.ops[o].regions.is_empty())
    {
        return Err(format!(
            "`{}` before the K loop would run before the previous tile's store",
            tawa_ir::printer::op_name(&func.ops[o].kind)
        ));
    }
    // After it: descriptor stores and pure ops only (a load there could
    // read what the deferred stores had written before).
    let after = &ops_but_yield[at + 1..];
    let effects: Vec<Op> = after
        .iter()
        .copied()
        .filter(|&o| !func.ops[o].kind.is_pure() || !func.ops[o].regions.is_empty())
        .collect();
    if effects.is_empty() {
        return Err("the tile loop stores nothing after its K loop".into());
    }
    if let Some(&o) = effects
        .iter()
        .find(|&&o| !matches!(func.ops[o].kind, OpKind::DescStore))
    {
        return Err(format!(
            "the epilogue does `{}`, not only stores of descriptors (TMA stores)",
            tawa_ir::printer::op_name(&func.ops[o].kind)
        ));
    }
    let mut carried = Vec::new();
    for &store in &effects {
        let operands = &func.ops[store].operands;
        let (desc, value, coords) = (operands[0], operands[1], &operands[2..]);
        if defined_in(func, desc, body) {
            return Err("a stored descriptor is made in the tile loop".into());
        }
        if coords.iter().any(|&v| func.ty(v).is_tensor()) {
            return Err("a store's coordinates are tiles".into());
        }
        for &v in std::iter::once(&value).chain(coords) {
            if defined_in(func, v, body) && !carried.contains(&v) {
                carried.push(v);
            }
        }
    }
    if let Some(&v) = carried.iter().find(|&&v| zero_of(func.ty(v)).is_none()) {
        return Err(format!(
            "a store's operand of type {} cannot be carried",
            func.ty(v)
        ));
    }

    // The peeled iteration holds the next tile's accumulators while the
    // stored tile is live.
    let k_results = &func.ops[k_loop].results;
    let accumulators: u32 = c
        .yielded
        .iter()
        .map(|&j| crate::tile_registers(func.ty(k_results[j]), threads))
        .sum();
    let stored: u32 = carried
        .iter()
        .map(|&v| crate::tile_registers(func.ty(v), threads))
        .sum();
    let need = accumulators + stored + HEADROOM;
    match regs {
        Some(r) if need <= r => {}
        Some(r) => {
            return Err(format!(
                "the next tile's accumulators ({accumulators} registers a thread) beside the \
                 stored tile ({stored}) and about {HEADROOM} of addresses need {need} registers, \
                 more than the consumer's {r}"
            ))
        }
        None => return Err("the consumer's register budget is not known".into()),
    }
    Ok(Plan {
        tile_loop,
        k_loop,
        dots: c.dots,
        yielded: c.yielded,
        stores: effects,
        carried,
    })
}

/// `if flag { stores }`, created unplaced: the epilogue's stores with
/// their operands read through `through`.
fn pending_stores(
    func: &mut Function,
    stores: &[Op],
    flag: Value,
    through: &HashMap<Value, Value>,
) -> Op {
    let loc = func.ops[stores[0]].loc;
    let then = func.new_block(vec![]);
    for &store in stores {
        let kind = func.ops[store].kind.clone();
        let operands = func.ops[store]
            .operands
            .iter()
            .map(|v| through.get(v).copied().unwrap_or(*v))
            .collect();
        func.append_op(then, kind, operands, vec![], vec![], func.ops[store].loc);
    }
    func.append_op(then, OpKind::Yield, vec![], vec![], vec![], loc);
    let otherwise = func.new_block(vec![]);
    func.append_op(otherwise, OpKind::Yield, vec![], vec![], vec![], loc);
    func.create_op(OpKind::If, vec![flag], vec![], vec![then, otherwise], loc)
}

fn apply(func: &mut Function, p: &Plan) {
    let body = func.ops[p.tile_loop].regions[0];
    let parent = func
        .block_of(p.tile_loop)
        .expect("the tile loop sits in a block");
    let loc = func.ops[p.stores[0]].loc;
    let i1 = Type::Scalar(Elem::Scalar(ScalarType::I1));

    // Carry the stored tile, its coordinates and whether one is pending.
    let mut carried_args = HashMap::new();
    let mut carried_results = HashMap::new();
    let carry = |func: &mut Function, v: Option<Value>, ty: Type, zero: ConstValue| {
        let at = position(func, parent, p.tile_loop);
        let init = func.insert_value(parent, at, OpKind::Constant(zero), vec![], ty.clone(), loc);
        func.ops[p.tile_loop].operands.push(init);
        let name = v
            .and_then(|v| func.values[v].name.clone())
            .map_or(v.map_or("pending", |_| "prev").to_string(), |n| {
                format!("prev_{n}")
            });
        let arg = func.add_block_arg(body, ty.clone(), Some(name));
        let result = func.add_result(p.tile_loop, ty);
        (arg, result)
    };
    for &v in &p.carried {
        let ty = func.ty(v).clone();
        let zero = zero_of(&ty).expect("plan checked");
        let (arg, result) = carry(func, Some(v), ty, zero);
        carried_args.insert(v, arg);
        carried_results.insert(v, result);
    }
    let (has_arg, has_result) = carry(func, None, i1.clone(), ConstValue::Bool(false));

    // The stores leave the body; the body yields what they stored.
    func.blocks[body].ops.retain(|o| !p.stores.contains(o));
    let yield_op = *func.blocks[body].ops.last().expect("a yield");
    let yes = func.insert_value(
        body,
        func.blocks[body].ops.len() - 1,
        OpKind::Constant(ConstValue::Bool(true)),
        vec![],
        i1.clone(),
        loc,
    );
    let mut yielded = p.carried.clone();
    yielded.push(yes);
    func.ops[yield_op].operands.extend(yielded);

    // Peel the K loop's first iteration around the previous tile's store.
    let k = p.k_loop;
    let kloc = func.ops[k].loc;
    let [lb, ub, step] = [0, 1, 2].map(|i| func.ops[k].operands[i]);
    let inits: Vec<Value> = func.ops[k].operands[3..].to_vec();
    let k_body = func.ops[k].regions[0];
    let k_args = func.blocks[k_body].args.clone();
    let k_ops = func.blocks[k_body].ops.clone();
    let (k_yield, k_ops) = k_ops.split_last().expect("a yield");
    let mut at = position(func, body, k);
    let nonempty = func.insert_value(body, at, OpKind::Cmp(CmpPred::Lt), vec![lb, ub], i1, kloc);
    at += 1;

    let then = func.new_block(vec![]);
    let mut map: HashMap<Value, Value> = HashMap::new();
    map.insert(k_args[0], lb);
    for (&a, &v) in k_args[1..].iter().zip(&inits) {
        map.insert(a, v);
    }
    let mut last_dot = None;
    for &o in k_ops {
        let n = func.clone_op(o, then, &mut map);
        if p.dots.contains(&o) {
            if let OpKind::Dot { is_async, .. } = &mut func.ops[n].kind {
                *is_async = true;
            }
            last_dot = Some(n);
        }
    }
    let last_dot = last_dot.expect("the K loop has dots");
    let mut then_yield: Vec<Value> = func.ops[*k_yield]
        .operands
        .iter()
        .map(|v| map.get(v).copied().unwrap_or(*v))
        .collect();
    let in_flight: Vec<Value> = p.yielded.iter().map(|&j| then_yield[j]).collect();
    let after_dot = position(func, then, last_dot) + 1;
    let store_then = pending_stores(func, &p.stores, has_arg, &carried_args);
    func.blocks[then].ops.insert(after_dot, store_then);
    let wait = dot_wait(func, then, after_dot + 1, &in_flight, 0, kloc);
    for (n, &j) in p.yielded.iter().enumerate() {
        then_yield[j] = func.ops[wait].results[n];
    }
    func.append_op(then, OpKind::Yield, then_yield, vec![], vec![], kloc);

    let otherwise = func.new_block(vec![]);
    let store_else = pending_stores(func, &p.stores, has_arg, &carried_args);
    func.blocks[otherwise].ops.push(store_else);
    func.append_op(otherwise, OpKind::Yield, inits, vec![], vec![], kloc);

    let types: Vec<Type> = func.ops[k]
        .results
        .iter()
        .map(|&r| func.ty(r).clone())
        .collect();
    let peel = func.insert_op(
        body,
        at,
        OpKind::If,
        vec![nonempty],
        types,
        vec![then, otherwise],
        kloc,
    );
    let peeled = func.ops[peel].results.clone();
    for (n, &r) in func.ops[k].results.clone().iter().enumerate() {
        if let Some(name) = func.values[r].name.clone() {
            func.set_name(peeled[n], name);
        }
    }
    let lb_ty = func.ty(lb).clone();
    let from = func.insert_value(
        body,
        at + 1,
        OpKind::Binary(BinaryOp::Add),
        vec![lb, step],
        lb_ty,
        kloc,
    );
    func.ops[k].operands[0] = from;
    func.ops[k].operands.truncate(3);
    func.ops[k].operands.extend(peeled);

    // The last tile's store, after the loop.
    let last = pending_stores(func, &p.stores, has_result, &carried_results);
    let at = position(func, parent, p.tile_loop) + 1;
    func.blocks[parent].ops.insert(at, last);
}
