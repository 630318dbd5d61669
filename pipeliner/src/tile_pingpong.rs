//! `tile_pingpong`: ping-pong consumers across the tiles of a persistent
//! GEMM (CUTLASS's sm90 `KernelTmaWarpSpecializedPingpong`).
//!
//! A persistent GEMM's consumer partition walks its program's tiles; with
//! two warpgroups (8 warps) they split each tile's rows and run the
//! mainloop together, then the epilogue together, while the tensor core
//! idles (the producer runs ahead into the next tile's K loop, but nobody
//! issues WGMMAs). Here the consumer becomes two partitions of one
//! warpgroup each, on alternate tiles of the tile loop, taking turns over
//! the mainloop so that the tensor core serves one at a time and one's
//! epilogue overlaps the other's mainloop:
//!
//! ```text
//! consumer0: | mainloop tile 0 | epilogue 0 | (wait)           | mainloop tile 2 | ...
//! consumer1: | (wait)          | mainloop tile 1               | epilogue 1 | mainloop tile 3
//! ```
//!
//! The rewrite, for warpgroup `w` of 2 (a copy of the consumer's region
//! each):
//!
//! ```text
//! for %tile = %first to %tiles step %stride iter_args(%i = %i0) {      // before
//!   ...; %acc, %i1 = for %k = %lb to %ub step %s iter_args(..., %j = %i) {...}; epilogue
//!   yield %i1
//! }
//! %trips = max((%ub - %lb + %s - 1) / %s, 0)      // hoisted: the same for every tile
//! for %tile = %first + w * %stride to %tiles step 2 * %stride
//!     iter_args(%i = %i0 + w * %trips) {                                 // after
//!   ...; turn.take; %acc, %i1 = for ... {...}; turn.pass; epilogue
//!   yield %i1 + %trips                 // skip the other warpgroup's tile
//! }
//! ```
//!
//! The producer is unchanged: it keeps filling one ring in tile order, and
//! the ring is *dealt* between the two consumer partitions (they take
//! turns, `Function::turn_partitions`): each iteration is got and released
//! by exactly one of them, so the ring's `empty` barriers expect one
//! warpgroup's arrivals (`tawa-aref` docs, `aref_lower.rs`). The turns also
//! keep the dealing sound: warpgroup 1 gets tile 1's slots only after
//! warpgroup 0 got every slot of tile 0, so no wait can see the parity of
//! a round two phases old.
//!
//! It applies where the counter skip is exact and the tile fits one
//! warpgroup: the consumer partition is a tile loop and pure ops, the tile
//! loop carries only ring counters and values advanced by the same amount
//! every tile (tutorial 09's epilogue tile counter, `tile_id_c +=
//! NUM_SMS`, which a warpgroup then advances twice), each tile's one mainloop (a K loop of
//! `dot`s reading ring slots, nothing else computed on tiles) has a
//! positive constant step and bounds computed without the tile (so its
//! trip count is the same for every tile and each warpgroup computes it
//! before its tile loop), and the mainloop's accumulators need at most 128
//! registers a thread in one warpgroup (128x128 fp32; 128x256 needs 256:
//! the cooperative split stays). A 4-warp consumer gains a second
//! warpgroup (the kernel grows to three); an 8-warp one becomes two of
//! four. The consumers' `setmaxnreg` budget is refitted to three
//! warpgroups (232 beside a 40-register producer).
//!
//! By default ([`auto_choice`]) for an 8-warp consumer whose K loop is
//! short at the launch compiled for (the epilogue then weighs on every
//! tile), with a launch guard saying so; `--tile-pingpong` asks for it
//! wherever it applies, `--no-tile-pingpong` never. Run by the driver on
//! the partitioner's split before the shared memory is measured, since
//! each consumer partition then has its own scratch and TMA-store staging.

use std::collections::HashMap;

use tawa_ir::function::Block;
use tawa_ir::{BinaryOp, ConstValue, Function, Loc, Op, OpKind, Partition, Type, Value};

use crate::persistent::{hoist, hoistable};
use crate::Schedule;

/// Most accumulator registers a thread may hold for the tile to go to one
/// warpgroup: 128x128 fp32 (the rest of a 232-register budget is the
/// epilogue's and the addresses').
pub const MAX_ACC_REGS: u32 = 128;

/// Registers a producer warpgroup keeps when none was set.
const PRODUCER_REGS: u32 = 40;

/// Most registers `setmaxnreg` gives a consumer.
const CONSUMER_REGS: u32 = 240;

/// The longest K loop (in iterations) that the default gives ping-pong
/// consumers. Short loops leave the cooperative consumers' epilogue a
/// large share of each tile, with the tensor core idle through it; longer
/// ones favour the cooperative split. On the H200, 128x128x64 tiles with
/// 8 warps, against the cooperative split (`bench/RESULTS.md`,
/// 2026-11-28): the batched GEMM of 32 x 512x512 tiles 14% faster at 2
/// iterations (K = 128) and 10% at 4 (K = 256), 1-2% slower at 8 and 7%
/// at 16 (K = 512, 1024); larger GEMMs 1-5% slower at 64 and 128.
pub const SHORT_MAINLOOP_TRIPS: i64 = 4;

/// What the default (`PipelineOptions::tile_pingpong` unset) makes of a
/// kernel: ping-pong consumers where the kernel qualifies with an 8-warp
/// consumer (two warpgroups already: the kernel keeps its shape) and its
/// K loop runs at most [`SHORT_MAINLOOP_TRIPS`] iterations at the launch
/// compiled for (`launch_values`, the integer arguments by parameter
/// name), the cooperative split otherwise. The trip count is a launch
/// value, so the choice comes with the guard it was made under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoChoice {
    pub on: bool,
    /// The launches the choice was made for; `None` where nothing was
    /// chosen from the launch (the kernel does not qualify, or no launch
    /// values were given).
    pub guard: Option<tawa_ir::host_expr::LaunchGuard>,
    /// Why, at the tile loop, for `--explain` (`None` where the kernel
    /// does not qualify: nothing to say beyond the passes' own notes).
    pub note: Option<(Loc, String)>,
}

/// [`AutoChoice`] for the split `func`.
pub fn auto_choice(func: &Function, launch_values: &[(String, i64)]) -> AutoChoice {
    use tawa_ir::host_expr::{host_expr, HostExpr, LaunchGuard};
    let off = AutoChoice {
        on: false,
        guard: None,
        note: None,
    };
    let wss = crate::ws_ops(func);
    let [ws] = wss.as_slice() else {
        return off;
    };
    let Ok(p) = plan(func, *ws) else {
        return off;
    };
    let OpKind::WarpSpecialize { partitions } = &func.ops[*ws].kind else {
        return off;
    };
    if partitions[p.consumer].num_warps != 8 {
        return off;
    }
    let loc = func.ops[p.tile_loop].loc;
    let kloc = loc_text(func.ops[p.mainloop].loc);
    let bounds = &func.ops[p.mainloop].operands[..3];
    let step = crate::const_int(func, bounds[2]).unwrap_or(1);
    let (Some(lb), Some(ub)) = (host_expr(func, bounds[0]), host_expr(func, bounds[1])) else {
        return AutoChoice {
            note: Some((
                loc,
                format!(
                    "tile loop: cooperative, no tile ping-pong: the trip count of the K loop at \
                     {kloc} is not computed from the launch's arguments alone"
                ),
            )),
            ..off
        };
    };
    let b = Box::new;
    // max((ub - lb + step - 1) // step, 0), as the kernel's loop runs
    // (written without the terms that do nothing, for `--explain`).
    let span = match lb {
        HostExpr::Const(0) => ub,
        lb => HostExpr::Sub(b(ub), b(lb)),
    };
    let steps = match step {
        1 => span,
        _ => HostExpr::Div(
            b(HostExpr::Add(b(span), b(HostExpr::Const(step - 1)))),
            b(HostExpr::Const(step)),
        ),
    };
    let trips = HostExpr::Max(b(steps), b(HostExpr::Const(0)));
    let name = |i: usize| func.params[i].name.clone();
    let value = |i: usize| {
        launch_values
            .iter()
            .find(|(n, _)| *n == func.params[i].name)
            .map(|&(_, v)| v)
    };
    let Some(n) = trips.eval(&value) else {
        return AutoChoice {
            note: Some((
                loc,
                format!(
                    "tile loop: cooperative, no tile ping-pong: the launch's arguments are not \
                     known (`--launch-value NAME=VALUE`, or `--case`), and the K loop at {kloc} runs \
                     {} iterations; ping-pong consumers are the default for at most \
                     {SHORT_MAINLOOP_TRIPS}",
                    trips.render(&name)
                ),
            )),
            ..off
        };
    };
    let on = n <= SHORT_MAINLOOP_TRIPS;
    let guard = LaunchGuard {
        value: trips,
        min: (!on).then_some(SHORT_MAINLOOP_TRIPS + 1),
        max: on.then_some(SHORT_MAINLOOP_TRIPS),
        what: format!("the trip count of the K loop at {kloc}"),
    };
    let text = if on {
        format!(
            "tile loop: ping-pong consumers chosen: the K loop at {kloc} runs {n} iterations at \
             the launch compiled for, at most {SHORT_MAINLOOP_TRIPS}, so the epilogue is a large \
             share of each tile (kept for launches with {}; --no-tile-pingpong keeps the \
             cooperative split)",
            guard.render(&name)
        )
    } else {
        format!(
            "tile loop: cooperative, no tile ping-pong: the K loop at {kloc} runs {n} iterations \
             at the launch compiled for, more than {SHORT_MAINLOOP_TRIPS} (kept for launches with \
             {}; --tile-pingpong asks for ping-pong consumers)",
            guard.render(&name)
        )
    };
    AutoChoice {
        on,
        guard: Some(guard),
        note: Some((loc, text)),
    }
}

/// Splits the consumer partition of every `ws` op that qualifies (module
/// docs) into two ping-pong partitions, noting each decision; whether it
/// split any.
pub fn tile_pingpong(func: &mut Function, schedule: &mut Schedule) -> bool {
    let mut split = false;
    for ws in crate::ws_ops(func) {
        let loc = func.ops[ws].loc;
        match plan(func, ws) {
            Ok(p) => {
                let note = apply(func, ws, &p);
                schedule.note(func.ops[p.tile_loop].loc, note);
                split = true;
            }
            Err(why) => schedule.note(loc, format!("tile loop: no tile ping-pong: {why}")),
        }
    }
    split
}

/// How a value the tile loop carries advances from one tile to the next,
/// which a warpgroup skipping the other's tile does twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Carried {
    /// A ring counter: the mainloop advances it by one an iteration, so
    /// by the mainloop's trip count a tile.
    Ring,
    /// `x + d` with `d` the same for every tile (tutorial 09's
    /// `tile_id_c += NUM_SMS`, the epilogue's own tile counter).
    Stride,
}

/// What [`plan`] found in a `ws` op that qualifies.
struct Plan {
    /// Index of the consumer partition.
    consumer: usize,
    /// The tile loop (top level of the consumer's region) and its one
    /// mainloop (top level of the tile loop's body).
    tile_loop: Op,
    mainloop: Op,
    /// Per iter arg of the tile loop, how it advances a tile.
    counters: Vec<Carried>,
    acc_regs: u32,
    acc_text: String,
}

fn is_aref_op(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::ArefGet | OpKind::ArefConsumed | OpKind::ArefPut
    )
}

/// Whether `op` is an aref op or holds one in its regions.
pub(crate) fn has_aref_ops(func: &Function, op: Op) -> bool {
    let mut found = is_aref_op(&func.ops[op].kind);
    for &r in &func.ops[op].regions {
        func.walk_block(r, &mut |o| found |= is_aref_op(&func.ops[o].kind));
    }
    found
}

/// The ops using `v` (each once per operand position).
fn uses(func: &Function, v: Value) -> Vec<(Op, usize)> {
    let mut out = Vec::new();
    for (op, data) in func.ops.iter() {
        for (i, &o) in data.operands.iter().enumerate() {
            if o == v {
                out.push((op, i));
            }
        }
    }
    // Only ops still placed in a block count.
    out.retain(|&(op, _)| func.block_of(op).is_some());
    out
}

/// Whether `op` computes on tiles beside the mainloop's dots.
fn computes_on_tiles(func: &Function, op: Op) -> bool {
    crate::pingpong::yields_tile(func, op)
        && !matches!(
            func.ops[op].kind,
            OpKind::Dot { .. }
                | OpKind::DotWait { .. }
                | OpKind::ArefGet
                | OpKind::Trans { .. }
                | OpKind::Constant(_)
        )
}

fn plan(func: &Function, ws: Op) -> Result<Plan, String> {
    let OpKind::WarpSpecialize { partitions } = &func.ops[ws].kind else {
        return Err("internal: not a ws op".into());
    };
    let regions = &func.ops[ws].regions;
    let mut getters = Vec::new();
    let mut turns = false;
    for (i, &r) in regions.iter().enumerate() {
        let mut gets = false;
        func.walk_block(r, &mut |o| {
            gets |= matches!(func.ops[o].kind, OpKind::ArefGet);
            turns |= func.ops[o].kind.is_turn();
        });
        if gets {
            getters.push(i);
        }
    }
    if partitions.len() != 2 || getters.len() != 1 || getters[0] == 0 {
        return Err(format!(
            "the ws op has {} partitions; a producer and one consumer split into two",
            partitions.len()
        ));
    }
    if turns {
        return Err(
            "the consumer's warpgroups take turns within each tile already (FA3 ping-pong)".into(),
        );
    }
    let consumer = getters[0];
    let warps = partitions[consumer].num_warps;
    if warps != 4 && warps != 8 {
        return Err(format!(
            "the consumer has {warps} warps; one or two warpgroups become two"
        ));
    }
    let region = regions[consumer];
    // The region: pure ops and one tile loop.
    let mut tile_loop = None;
    for &o in &func.blocks[region].ops {
        let data = &func.ops[o];
        match data.kind {
            OpKind::For(_) if has_aref_ops(func, o) => {
                if tile_loop.replace(o).is_some() {
                    return Err("the consumer runs two loops over the ring".into());
                }
            }
            OpKind::Yield => {}
            _ if data.kind.is_pure() && data.regions.is_empty() => {}
            _ => {
                return Err(format!(
                    "the consumer does more than its tile loop (`{}` at {}): both warpgroups \
                     would do it",
                    tawa_ir::printer::op_name(&data.kind),
                    loc_text(data.loc)
                ))
            }
        }
    }
    let Some(tile_loop) = tile_loop else {
        return Err("the consumer has no loop over tiles".into());
    };
    let tiles = func.ops[tile_loop].regions[0];
    let mut mainloop = None;
    for &o in &func.blocks[tiles].ops {
        if !has_aref_ops(func, o) {
            continue;
        }
        if !matches!(func.ops[o].kind, OpKind::For(_)) || mainloop.replace(o).is_some() {
            return Err(
                "the consumer's tile loop uses the ring outside one K loop (a second loop, or \
                 MMA pipelining's drain: tile ping-pong comes before MMA pipelining)"
                    .into(),
            );
        }
    }
    let Some(mainloop) = mainloop else {
        return Err("the consumer's loop has no K loop".into());
    };
    let body = func.ops[mainloop].regions[0];
    // The mainloop: dots reading slots, nothing else on tiles.
    let mut acc_regs = 0;
    let mut accs = Vec::new();
    let mut other = None;
    func.walk_block(body, &mut |o| {
        let data = &func.ops[o];
        if let OpKind::Dot { .. } = data.kind {
            let ty = func.ty(data.results[0]);
            if let Type::Tensor { shape, elem } = ty {
                let eb = ty.scalar_type().map_or(4, |s| s.byte_size());
                let bytes = shape.iter().product::<u32>() * eb;
                acc_regs += bytes / 4 / 128;
                accs.push(format!(
                    "{} {}",
                    shape
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join("x"),
                    elem
                ));
            }
        } else if computes_on_tiles(func, o) {
            other.get_or_insert(o);
        }
    });
    if let Some(o) = other {
        return Err(format!(
            "the K loop computes on tiles beside its dots (`{}` at {}), not a GEMM mainloop",
            tawa_ir::printer::op_name(&func.ops[o].kind),
            loc_text(func.ops[o].loc)
        ));
    }
    if accs.is_empty() {
        return Err("the K loop has no dot".into());
    }
    let acc_text = accs.join(" + ");
    if acc_regs > MAX_ACC_REGS {
        return Err(format!(
            "cooperative: the {acc_text} accumulator needs {acc_regs} registers a thread in one \
             warpgroup (at most {MAX_ACC_REGS} leave room for the epilogue), so the consumer \
             warpgroups keep splitting each tile's rows"
        ));
    }
    // Bounds: the same for every tile, the step a positive constant.
    let bounds = &func.ops[mainloop].operands[..3];
    if let Some(b) = bounds.iter().find(|&&b| !hoistable(func, tiles, b)) {
        let which =
            ["lower bound", "upper bound", "step"][bounds.iter().position(|x| x == b).unwrap_or(0)];
        return Err(format!(
            "the K loop's {which} depends on the tile: the warpgroups could not skip each other's \
             slots without computing the other's tile"
        ));
    }
    if crate::const_int(func, bounds[2]).is_none_or(|s| s <= 0) {
        return Err("the K loop's step is not a positive constant".into());
    }
    let index_ty = func.ty(bounds[0]).clone();
    // Every value the tile loop carries is a ring counter that the K loop
    // advances by one an iteration.
    let targs = &func.blocks[tiles].args;
    let tyield = *func.blocks[tiles]
        .ops
        .last()
        .expect("a loop body ends in yield");
    let kargs = &func.blocks[body].args;
    let kyield = *func.blocks[body]
        .ops
        .last()
        .expect("a loop body ends in yield");
    let mut counters = Vec::new();
    for (j, &a) in targs.iter().enumerate().skip(1) {
        let j = j - 1;
        let not_counter = || {
            format!(
                "the tile loop carries a value that is neither a ring counter nor advanced by \
                 the same amount every tile (iter arg {j}): a warpgroup skipping tiles could not \
                 advance it past the other's"
            )
        };
        if stride_of(func, tiles, a, func.ops[tyield].operands[j]).is_some() {
            counters.push(Carried::Stride);
            continue;
        }
        let u = uses(func, a);
        let [(user, at)] = u.as_slice() else {
            return Err(not_counter());
        };
        if *user != mainloop || *at < 3 {
            return Err(not_counter());
        }
        let m = at - 3;
        let karg = kargs[1 + m];
        let next = func.ops[kyield].operands[m];
        let steps_by_one = func.def_op(next).is_some_and(|d| {
            let dd = &func.ops[d];
            matches!(dd.kind, OpKind::Binary(BinaryOp::Add))
                && dd.operands.contains(&karg)
                && dd
                    .operands
                    .iter()
                    .any(|&x| x != karg && crate::const_int(func, x) == Some(1))
        });
        if !steps_by_one
            || func.ops[tyield].operands[j] != func.ops[mainloop].results[m]
            || func.ty(a) != &index_ty
        {
            return Err(not_counter());
        }
        let indexes_ring = uses(func, karg).iter().any(|&(o, i)| {
            i == 1 && matches!(func.ops[o].kind, OpKind::ArefGet | OpKind::ArefConsumed)
        });
        if !indexes_ring {
            return Err(not_counter());
        }
        counters.push(Carried::Ring);
    }
    if !counters.contains(&Carried::Ring) {
        return Err("the tile loop carries no ring counter".into());
    }
    Ok(Plan {
        consumer,
        tile_loop,
        mainloop,
        counters,
        acc_regs,
        acc_text,
    })
}

/// `d` when `next` is `arg + d` (or `d + arg`) with `d` of `arg`'s type
/// and computable before the tile loop owning `body`.
fn stride_of(func: &Function, body: Block, arg: Value, next: Value) -> Option<Value> {
    let def = func.def_op(next)?;
    let data = &func.ops[def];
    if !matches!(data.kind, OpKind::Binary(BinaryOp::Add)) || !data.operands.contains(&arg) {
        return None;
    }
    let d = *data.operands.iter().find(|&&o| o != arg)?;
    (func.ty(d) == func.ty(arg) && hoistable(func, body, d)).then_some(d)
}

fn loc_text(loc: Loc) -> String {
    crate::coarse_pipeline::loc_text(loc)
}

fn position(func: &Function, block: Block, op: Op) -> usize {
    crate::mma_pipeline::position(func, block, op)
}

/// Splits the consumer of `ws` as planned; returns the note.
fn apply(func: &mut Function, ws: Op, plan: &Plan) -> String {
    let region = func.ops[ws].regions[plan.consumer];
    let (old_warps, producer_regs) = match &func.ops[ws].kind {
        OpKind::WarpSpecialize { partitions } => (
            partitions[plan.consumer].num_warps,
            partitions
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != plan.consumer)
                .map(|(_, p)| (p.num_warps, p.regs.unwrap_or(PRODUCER_REGS)))
                .collect::<Vec<_>>(),
        ),
        _ => unreachable!("planned on a ws op"),
    };
    // Registers: the launch's even share over every warp, what the other
    // partitions keep, the rest to the two consumers.
    let other_warps: u32 = producer_regs.iter().map(|&(w, _)| w).sum();
    let threads = (other_warps + 8) * 32;
    let even = ((65536 / threads).min(255) / 8) * 8;
    let pool = even * threads;
    let kept: u32 = producer_regs.iter().map(|&(w, r)| w * 32 * r).sum();
    let consumer_regs = (pool.saturating_sub(kept) / 256 / 8 * 8).min(CONSUMER_REGS);

    // The second warpgroup's copy of the region.
    let copy = func.new_block(vec![]);
    let mut map = HashMap::new();
    for op in func.blocks[region].ops.clone() {
        func.clone_op(op, copy, &mut map);
    }
    func.blocks[copy].parent = Some(ws);
    func.ops[ws].regions.insert(plan.consumer + 1, copy);
    if let OpKind::WarpSpecialize { partitions } = &mut func.ops[ws].kind {
        let base = partitions[plan.consumer].role.clone();
        partitions[plan.consumer] = Partition {
            role: format!("{base}0"),
            num_warps: 4,
            regs: Some(consumer_regs),
        };
        partitions.insert(
            plan.consumer + 1,
            Partition {
                role: format!("{base}1"),
                num_warps: 4,
                regs: Some(consumer_regs),
            },
        );
    }
    let tile_at = position(func, region, plan.tile_loop);
    let tiles = func.ops[plan.tile_loop].regions[0];
    let main_at = position(func, tiles, plan.mainloop);
    let mut trips_text = String::new();
    for (w, block) in [(0, region), (1, copy)] {
        let tile_loop = func.blocks[block].ops[tile_at];
        let tiles = func.ops[tile_loop].regions[0];
        let mainloop = func.blocks[tiles].ops[main_at];
        let trips = rewrite(func, block, tile_loop, mainloop, w, &plan.counters);
        if let Some(t) = crate::const_int(func, trips) {
            trips_text = t.to_string();
        }
    }
    let trips_text = if trips_text.is_empty() {
        "the K loop's trip count, the same for every tile".to_string()
    } else {
        format!("{trips_text}, the K loop's trip count")
    };
    let growth = if old_warps == 4 {
        "a second consumer warpgroup added, 3 warpgroups in all"
    } else {
        "the 2 consumer warpgroups no longer split each tile's rows"
    };
    format!(
        "tile loop: tile ping-pong: two consumer warpgroups on alternate tiles ({growth}), \
         taking turns over the K loop at {} (named barriers) so that one's epilogue overlaps \
         the other's mainloop; one ring dealt between them, each skipping the other's slots \
         ({trips_text}); the {} accumulator takes {} registers a thread of one warpgroup; \
         {consumer_regs} registers each",
        loc_text(func.ops[plan.mainloop].loc),
        plan.acc_text,
        plan.acc_regs
    )
}

/// Rewrites warpgroup `w`'s copy (module docs); returns the trip count.
fn rewrite(
    func: &mut Function,
    region: Block,
    tile_loop: Op,
    mainloop: Op,
    w: u32,
    counters: &[Carried],
) -> Value {
    let loc = func.ops[tile_loop].loc;
    let kloc = func.ops[mainloop].loc;
    let tiles = func.ops[tile_loop].regions[0];
    let index_ty = func.ty(func.ops[mainloop].operands[0]).clone();
    let tile_ty = func.ty(func.ops[tile_loop].operands[0]).clone();
    // Built in a scratch block, then moved before the tile loop.
    let pre = func.new_block(vec![]);
    let mut map = HashMap::new();
    let mut hoisted = Vec::new();
    for k in 0..3 {
        let v = func.ops[mainloop].operands[k];
        hoisted.push(hoist(func, tiles, v, pre, &mut map));
    }
    let (lb, ub, step) = (hoisted[0], hoisted[1], hoisted[2]);
    let bin = |f: &mut Function, op: BinaryOp, a: Value, b: Value, ty: &Type| {
        f.append_value(pre, OpKind::Binary(op), vec![a, b], ty.clone(), loc)
    };
    let constant = |f: &mut Function, c: i64, ty: &Type| {
        f.append_value(
            pre,
            OpKind::Constant(ConstValue::Int(c)),
            vec![],
            ty.clone(),
            loc,
        )
    };
    let trips = match (
        crate::const_int(func, lb),
        crate::const_int(func, ub),
        crate::const_int(func, step),
    ) {
        (Some(l), Some(u), Some(s)) => constant(func, ((u - l + s - 1) / s).max(0), &index_ty),
        _ => {
            let one = constant(func, 1, &index_ty);
            let zero = constant(func, 0, &index_ty);
            let span = bin(func, BinaryOp::Sub, ub, lb, &index_ty);
            let round = bin(func, BinaryOp::Sub, step, one, &index_ty);
            let up = bin(func, BinaryOp::Add, span, round, &index_ty);
            let q = bin(func, BinaryOp::IDiv, up, step, &index_ty);
            bin(func, BinaryOp::Max, q, zero, &index_ty)
        }
    };
    func.set_name(trips, "k_trips");
    // What each carried value advances by a tile.
    let yield_op = *func.blocks[tiles]
        .ops
        .last()
        .expect("a loop body ends in yield");
    let mut advance = Vec::new();
    for (j, carried) in counters.iter().enumerate() {
        advance.push(match carried {
            Carried::Ring => trips,
            Carried::Stride => {
                let arg = func.blocks[tiles].args[1 + j];
                let next = func.ops[yield_op].operands[j];
                let d = stride_of(func, tiles, arg, next).expect("planned as a stride");
                hoist(func, tiles, d, pre, &mut map)
            }
        });
    }
    // This warpgroup's tiles: every other one of the program's.
    let two = constant(func, 2, &tile_ty);
    let stride = func.ops[tile_loop].operands[2];
    let stride2 = bin(func, BinaryOp::Mul, stride, two, &tile_ty);
    func.set_name(stride2, "pingpong_stride");
    func.ops[tile_loop].operands[2] = stride2;
    if w == 1 {
        let first = func.ops[tile_loop].operands[0];
        let mine = bin(func, BinaryOp::Add, first, stride, &tile_ty);
        func.set_name(mine, "pingpong_first");
        func.ops[tile_loop].operands[0] = mine;
        // Its first slot (and tile counter) follows the other
        // warpgroup's first tile.
        for (j, &d) in advance.iter().enumerate() {
            let init = func.ops[tile_loop].operands[3 + j];
            let ty = func.ty(init).clone();
            let skipped = bin(func, BinaryOp::Add, init, d, &ty);
            func.ops[tile_loop].operands[3 + j] = skipped;
        }
    }
    let at = position(func, region, tile_loop);
    let moved: Vec<Op> = std::mem::take(&mut func.blocks[pre].ops);
    func.blocks[region].ops.splice(at..at, moved);

    // Each tile: the turn around the mainloop, then skip the other
    // warpgroup's slots.
    let yield_at = func.blocks[tiles].ops.len() - 1;
    for (j, &d) in advance.iter().enumerate() {
        let after = func.ops[yield_op].operands[j];
        let ty = func.ty(after).clone();
        let next = func.insert_op(
            tiles,
            yield_at + j,
            OpKind::Binary(BinaryOp::Add),
            vec![after, d],
            vec![ty],
            vec![],
            loc,
        );
        func.ops[yield_op].operands[j] = func.ops[next].results[0];
    }
    let main_at = position(func, tiles, mainloop);
    func.insert_op(
        tiles,
        main_at + 1,
        OpKind::TurnPass,
        vec![],
        vec![],
        vec![],
        kloc,
    );
    func.insert_op(
        tiles,
        main_at,
        OpKind::TurnTake,
        vec![],
        vec![],
        vec![],
        kloc,
    );
    trips
}
