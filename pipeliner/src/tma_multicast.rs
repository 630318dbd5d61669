//! `tma_multicast` (`--tma-multicast`, off by default): a persistent
//! warp-specialized kernel runs in clusters of 2 CTAs whose tiles share
//! an operand, and each CTA copies half of a shared box and multicasts it
//! into both CTAs' shared memory (what cuBLAS and CUTLASS do on Hopper:
//! the L2-to-SM traffic of a shared operand halves).
//!
//! The launcher starts an even number of programs in clusters of 2 along
//! x, so that with the tile loop `for tile = pid; tile < T; tile +=
//! num_programs` the peer CTA's tile in the same round is `tile ^ 1`, and
//! it exists iff `(tile ^ 1) < T`. Both CTAs of a pair run the same rounds
//! but the last, where rank 1 may have no tile. No value is exchanged
//! between the CTAs: each computes what the other does.
//!
//! - **Producer.** For each tile an `aref.put` writes, both producers
//!   compute the same predicate `peer has a tile && coords(tile) ==
//!   coords(tile ^ 1)`, the tile's coordinate arithmetic evaluated for the
//!   peer's tile too (its backward slice from the tile index cloned with
//!   `tile ^ 1` substituted). The put carries the predicates (one `i1` per
//!   tile, `Function::put_multicast`); where one holds, the backend has
//!   each CTA issue its half of the box's rows with `.multicast::cluster`
//!   into both CTAs' slots, else the whole box locally. The `full`
//!   barrier always expects the whole slot.
//! - **Consumers.** Each `aref.consumed` carries whether the peer has a
//!   tile this round (`Function::consumed_peer`): a producer may write
//!   the peer's slot only once the peer's consumers released it too, so
//!   `empty` expects twice the consumer arrivals and a consumer arrives
//!   on its own and on the peer's barrier (or twice on its own when the
//!   peer has no tile).
//! - **The kernel** gets `cluster = 2`: the backend initializes the
//!   barriers for the cluster and ends the kernel with a cluster barrier
//!   (a CTA must not exit while its peer may still write its shared
//!   memory or arrive on its barriers), the launchers launch clusters.
//!
//! The ring positions of the two CTAs stay in lockstep only if every put
//! runs equally often for every tile: the loops around the puts must not
//! take their bounds from the tile. Kernels it leaves alone, with the
//! reason: not persistent, several `ws` ops, consumers on alternate tiles
//! (`--tile-pingpong`), puts in loops whose trip counts depend on the
//! tile or under an `if`, tiles the producer's threads copy or whose
//! tensor map the kernel builds, coordinates carried across iterations
//! (an advanced block pointer), a slot released in the tile after the
//! one that got it (attention's per-tile `q` ring), and boxes with a
//! dimension of 1 between their rows and columns. A rank-reduced copy
//! whose boxes of 1 come before the rows (a batched GEMM's batch offset)
//! is split along its rows like a 2-D one, and a copy the backend issues
//! as several boxes side by side (an MN-major operand whose rows are wider
//! than the 128-byte swizzle line) is split box by box.

use std::collections::{HashMap, HashSet};

use tawa_ir::{
    BinaryOp, Block, CmpPred, ConstValue, Elem, Function, Op, OpKind, ScalarType, Type, Value,
    ValueDef,
};

use crate::Schedule;

/// Makes `func` run in CTA pairs that multicast shared TMA copies, and
/// notes what it did; or notes why not and leaves `func` alone. Returns
/// whether it applied.
pub fn tma_multicast(func: &mut Function, schedule: &mut Schedule) -> bool {
    let plan = match plan(func) {
        Ok(plan) => plan,
        Err((loc, why)) => {
            schedule.note(loc, format!("tma multicast: not applied: {why}"));
            return false;
        }
    };
    let names = tawa_ir::printer::value_names(func);
    let name = |v: Value| {
        names
            .get(&v)
            .map_or("a tile".to_string(), |n| format!("%{n}"))
    };
    let mut said = Vec::new();
    let peer = peer_of(func, &plan.producer);
    let mut memo = HashMap::new();
    for put in &plan.puts {
        let mut preds = Vec::new();
        for (j, &v) in func.put_values(put.op).to_vec().iter().enumerate() {
            let load = func.def_op(v).expect("checked: a desc_load");
            let (pred, how) = match &put.halves[j] {
                Err(why) => (
                    constant_bool(func, put.op, false),
                    format!("copied whole ({why})"),
                ),
                Ok(()) => {
                    let coords = func.ops[load].operands[1..].to_vec();
                    let mut conds = vec![peer.has_tile];
                    let mut tiled = 0;
                    for c in coords {
                        let p = peer_value(func, &plan.producer, c, peer.tile, &mut memo)
                            .expect("checked by the plan");
                        if p != c {
                            tiled += 1;
                            let bool_ty = i1();
                            conds.push(insert_before(
                                func,
                                put.op,
                                OpKind::Cmp(CmpPred::Eq),
                                vec![c, p],
                                bool_ty,
                            ));
                        }
                    }
                    let mut pred = conds[0];
                    for &c in &conds[1..] {
                        pred = insert_before(
                            func,
                            put.op,
                            OpKind::Binary(BinaryOp::And),
                            vec![pred, c],
                            i1(),
                        );
                    }
                    let how = if tiled == 0 {
                        "halves multicast whenever the peer has a tile (its coordinates do not depend on the tile)".to_string()
                    } else {
                        format!(
                            "halves multicast where the peer's tile copies it from the same \
                             coordinates ({tiled} of {} depend on the tile)",
                            func.ops[load].operands.len() - 1
                        )
                    };
                    (pred, how)
                }
            };
            preds.push(pred);
            said.push(format!("{}: {how}", name(v)));
        }
        func.ops[put.op].operands.extend(preds);
    }
    for consumer in &plan.consumers {
        let peer = peer_of(func, consumer);
        for &c in &consumer.releases {
            func.ops[c].operands.push(peer.has_tile);
        }
    }
    func.attrs.cluster = 2;
    schedule.note(
        plan.loc,
        format!(
            "tma multicast: clusters of 2 CTAs along x, the peer's tile `tile ^ 1`; {}; each \
             consumer releases its slots in both CTAs while the peer has a tile, the full \
             barrier expects the whole slot",
            said.join(", ")
        ),
    );
    true
}

/// One partition's tile loop: `for tile = program_id x to T step
/// num_programs x`.
struct TileLoop {
    op: Op,
    body: Block,
    tile: Value,
    count: Value,
    /// Every op inside the loop (nested regions included).
    inside: HashSet<Op>,
    /// `aref.consumed` ops (consumer partitions).
    releases: Vec<Op>,
}

struct Put {
    op: Op,
    /// Per tile: whether its box can be copied in halves, or why not.
    halves: Vec<Result<(), String>>,
}

struct Plan {
    loc: tawa_ir::Loc,
    producer: TileLoop,
    puts: Vec<Put>,
    consumers: Vec<TileLoop>,
}

type Refusal = (tawa_ir::Loc, String);

fn plan(func: &Function) -> Result<Plan, Refusal> {
    let unknown = tawa_ir::Loc::UNKNOWN;
    let wss = crate::ws_ops(func);
    let [ws] = wss.as_slice() else {
        return Err((
            unknown,
            format!("{} ws ops (one warp-specialized loop nest only)", wss.len()),
        ));
    };
    let ws = *ws;
    let loc = func.ops[ws].loc;
    let refuse = |why: &str| Err((loc, why.to_string()));
    if func.attrs.cluster_split_k {
        return refuse("its CTA pairs split K (--cluster-split-k)");
    }
    if func.attrs.grid_param.is_none() {
        return refuse(
            "the kernel is not made persistent by the compiler (no `grid_param` launch contract \
             whose grid the launcher can round to CTA pairs)",
        );
    }
    if func.attrs.cluster != 1 {
        return refuse("the kernel runs in clusters already");
    }
    if !func.turn_partitions(ws).is_empty() {
        return refuse(
            "its consumers take alternate tiles (tile ping-pong): their releases are not per tile",
        );
    }
    let OpKind::WarpSpecialize { partitions } = &func.ops[ws].kind else {
        unreachable!()
    };
    let regions = func.ops[ws].regions.clone();
    let mut producer = None;
    let mut consumers = Vec::new();
    for (p, &region) in partitions.iter().zip(&regions) {
        let (mut puts, mut releases, mut aref_ops) = (Vec::new(), Vec::new(), 0);
        func.walk_block(region, &mut |o| match func.ops[o].kind {
            OpKind::ArefPut => {
                puts.push(o);
                aref_ops += 1;
            }
            OpKind::ArefConsumed => {
                releases.push(o);
                aref_ops += 1;
            }
            OpKind::ArefGet => aref_ops += 1,
            _ => {}
        });
        if aref_ops == 0 {
            continue;
        }
        let Some(mut tl) = tile_loop(func, region) else {
            return Err((
                loc,
                format!("partition `{}` has no tile loop over the programs", p.role),
            ));
        };
        let mut outside = 0;
        func.walk_block(region, &mut |o| {
            let aref = matches!(
                func.ops[o].kind,
                OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
            );
            outside += usize::from(aref && !tl.inside.contains(&o));
        });
        if outside > 0 {
            return Err((
                loc,
                format!("partition `{}` uses a ring outside its tile loop", p.role),
            ));
        }
        if !puts.is_empty() {
            if !releases.is_empty() || producer.is_some() {
                return refuse("more than one partition puts, or the producer also releases");
            }
            producer = Some((tl, puts));
        } else {
            for &c in &releases {
                // A release carried into the next tile would tell the
                // peer's state of the wrong round.
                let i = func.ops[c].operands[1];
                if matches!(func.values[i].def, ValueDef::Arg(b, k) if b == tl.body && k > 0) {
                    return Err((
                        func.ops[c].loc,
                        "a slot is released in the tile after the one that got it".into(),
                    ));
                }
            }
            tl.releases = releases;
            consumers.push(tl);
        }
    }
    let Some((producer, put_ops)) = producer else {
        return refuse("no partition puts into a ring");
    };
    if consumers.is_empty() {
        return refuse("no partition releases the rings");
    }
    let mut memo = HashMap::new();
    let mut puts = Vec::new();
    for put in put_ops {
        let ploc = func.ops[put].loc;
        // The loops around the put, up to the tile loop: equal trip counts
        // in both CTAs keep their ring positions in lockstep.
        let mut at = put;
        loop {
            let Some(parent) = parent_op(func, at) else {
                return Err((ploc, "internal: a put outside its tile loop".into()));
            };
            if parent == producer.op {
                break;
            }
            match func.ops[parent].kind {
                OpKind::For(_) => {
                    if func.ops[parent].operands[..3]
                        .iter()
                        .any(|&b| depends(func, &producer, b, &mut memo))
                    {
                        return Err((
                            func.ops[parent].loc,
                            "the loop around a put takes its bounds from the tile: the CTAs of a \
                             pair would put different numbers of tiles"
                                .into(),
                        ));
                    }
                }
                _ => {
                    return Err((
                        ploc,
                        format!(
                        "a put inside `{}`: the CTAs of a pair may put different numbers of tiles",
                        tawa_ir::printer::op_name(&func.ops[parent].kind)
                    ),
                    ))
                }
            }
            at = parent;
        }
        let mut halves = Vec::new();
        for &v in func.put_values(put) {
            let load = func
                .def_op(v)
                .filter(|&l| matches!(func.ops[l].kind, OpKind::DescLoad { .. }));
            let Some(load) = load else {
                return Err((
                    ploc,
                    "the producer's threads copy a tile (multicast takes TMA copies only)".into(),
                ));
            };
            if !host_built(func, func.ops[load].operands[0]) {
                return Err((
                    ploc,
                    "a tensor map the kernel builds on the device (multicast takes host-built maps only)"
                        .into(),
                ));
            }
            for &c in &func.ops[load].operands[1..] {
                let mut probe = HashMap::new();
                if let Err(why) = peer_slice_ok(func, &producer, c, &mut probe, &mut memo) {
                    return Err((func.ops[load].loc, why));
                }
            }
            halves.push(halves_ok(func, load));
        }
        if halves.iter().all(|h| h.is_err()) {
            let mut whys: Vec<String> = halves
                .iter()
                .filter_map(|h| h.as_ref().err())
                .cloned()
                .collect();
            whys.dedup();
            let why = whys.join("; ");
            return Err((
                ploc,
                format!("no tile of the put can be copied in halves: {why}"),
            ));
        }
        puts.push(Put { op: put, halves });
    }
    Ok(Plan {
        loc,
        producer,
        puts,
        consumers,
    })
}

/// The top-level `for tile = program_id x to T step num_programs x` of a
/// partition's region.
fn tile_loop(func: &Function, region: Block) -> Option<TileLoop> {
    let op = crate::persistent::tile_loop_in(func, region)?;
    let body = func.ops[op].regions[0];
    let mut inside = HashSet::new();
    func.walk_block(body, &mut |o| {
        inside.insert(o);
    });
    Some(TileLoop {
        op,
        body,
        tile: func.blocks[body].args[0],
        count: func.ops[op].operands[1],
        inside,
        releases: Vec::new(),
    })
}

/// The op whose region holds `op`.
fn parent_op(func: &Function, op: Op) -> Option<Op> {
    let block = func.block_of(op)?;
    func.blocks[block].parent
}

/// Whether descriptor `desc` is one the host encodes (a `make_tensor_desc`
/// of a parameter's base and host-computable extents and strides).
fn host_built(func: &Function, desc: Value) -> bool {
    let Some(make) = func
        .def_op(desc)
        .filter(|&m| matches!(func.ops[m].kind, OpKind::MakeTensorDesc))
    else {
        return false;
    };
    let ops = &func.ops[make].operands;
    func.params.iter().any(|p| p.value == ops[0])
        && ops[1..]
            .iter()
            .all(|&v| tawa_ir::host_expr::host_expr(func, v).is_some())
}

/// Whether the box of `desc_load` op `load` can be copied as two halves of
/// its rows, each landing where the whole box's rows would: a 2-D box
/// (after leading boxes of 1) of an even number of rows whose half starts on a swizzle pattern's
/// boundary (1024 bytes) in every box the backend splits it into.
fn halves_ok(func: &Function, load: Op) -> Result<(), String> {
    let ty = func.ty(func.ops[load].results[0]);
    let Type::TensorDesc { block, .. } = func.ty(func.ops[load].operands[0]) else {
        return Err("not a descriptor load".into());
    };
    let shape = ty.shape();
    // A rank-reduced copy (a batch or head offset before the rows) is
    // split along its rows like a 2-D one; a box of 1 between the rows
    // and the columns is not.
    let rows_dim = block.len().wrapping_sub(2);
    if shape.len() != 2
        || block.len() < 2
        || block[..rows_dim].iter().any(|&b| b != 1)
        || block[rows_dim..] != shape[..]
    {
        return Err("a copy whose box has a dimension of 1 between its rows and columns".into());
    }
    let eb = ty.scalar_type().map_or(0, |s| s.byte_size());
    let row_bytes = shape[1] * eb;
    // The swizzle the backend gives a slot buffer: 128 bytes where the
    // rows are multiples of it, the row itself otherwise.
    let w = if row_bytes % 128 == 0 { 128 } else { row_bytes };
    let rows = shape[0];
    if rows % 2 != 0 || (rows / 2 * w) % 1024 != 0 {
        return Err(format!(
            "half of its {rows} rows of {w}-byte swizzle lines does not start on a 1024-byte swizzle boundary"
        ));
    }
    Ok(())
}

/// Whether `v` depends on the tile index of `tl` (conservatively: values
/// carried across iterations inside the tile loop do).
fn depends(func: &Function, tl: &TileLoop, v: Value, memo: &mut HashMap<Value, bool>) -> bool {
    if let Some(&d) = memo.get(&v) {
        return d;
    }
    let d = match func.values[v].def {
        _ if v == tl.tile => true,
        ValueDef::Arg(block, k) => match func.blocks[block].parent {
            Some(parent) if tl.inside.contains(&parent) || parent == tl.op => {
                if parent != tl.op && k == 0 && matches!(func.ops[parent].kind, OpKind::For(_)) {
                    // An induction variable: lb + i * step.
                    let ops = func.ops[parent].operands.clone();
                    depends(func, tl, ops[0], memo) || depends(func, tl, ops[2], memo)
                } else {
                    true
                }
            }
            _ => false,
        },
        ValueDef::Result(op, _) => {
            if !tl.inside.contains(&op) {
                false
            } else if !func.ops[op].regions.is_empty() {
                true
            } else {
                func.ops[op]
                    .operands
                    .clone()
                    .into_iter()
                    .any(|o| depends(func, tl, o, memo))
            }
        }
    };
    memo.insert(v, d);
    d
}

/// Checks that the peer's value of `v` can be computed by cloning its
/// backward slice ([`peer_value`]).
fn peer_slice_ok(
    func: &Function,
    tl: &TileLoop,
    v: Value,
    seen: &mut HashMap<Value, ()>,
    memo: &mut HashMap<Value, bool>,
) -> Result<(), String> {
    if seen.contains_key(&v) || v == tl.tile || !depends(func, tl, v, memo) {
        return Ok(());
    }
    seen.insert(v, ());
    match func.values[v].def {
        ValueDef::Arg(..) => Err(
            "a copy's coordinates are carried across iterations (an advanced block pointer): \
             the peer's cannot be computed from its tile"
                .into(),
        ),
        ValueDef::Result(op, _) => {
            let d = &func.ops[op];
            if !d.regions.is_empty() || d.results.len() != 1 || !d.kind.is_pure() {
                return Err(format!(
                    "a copy's coordinates come from `{}`, which cannot be recomputed for the peer's tile",
                    tawa_ir::printer::op_name(&d.kind)
                ));
            }
            for &o in &d.operands {
                peer_slice_ok(func, tl, o, seen, memo)?;
            }
            Ok(())
        }
    }
}

/// `tile ^ 1` and `(tile ^ 1) < T` at the top of a tile loop's body.
struct Peer {
    tile: Value,
    has_tile: Value,
}

fn peer_of(func: &mut Function, tl: &TileLoop) -> Peer {
    let loc = func.ops[tl.op].loc;
    let ty = func.ty(tl.tile).clone();
    let one = OpKind::Constant(ConstValue::Int(1));
    let one = func.insert_value(tl.body, 0, one, vec![], ty.clone(), loc);
    let xor = OpKind::Binary(BinaryOp::Xor);
    let peer = func.insert_value(tl.body, 1, xor, vec![tl.tile, one], ty, loc);
    func.set_name(peer, "peer_tile");
    let lt = OpKind::Cmp(CmpPred::Lt);
    let has = func.insert_value(tl.body, 2, lt, vec![peer, tl.count], i1(), loc);
    func.set_name(has, "peer_has_tile");
    Peer {
        tile: peer,
        has_tile: has,
    }
}

/// The peer's value of `v`: its backward slice from the tile index
/// cloned with `peer` for the tile, each clone right after its original.
fn peer_value(
    func: &mut Function,
    tl: &TileLoop,
    v: Value,
    peer: Value,
    memo: &mut HashMap<Value, Value>,
) -> Result<Value, String> {
    if v == tl.tile {
        return Ok(peer);
    }
    if let Some(&p) = memo.get(&v) {
        return Ok(p);
    }
    let mut dep = HashMap::new();
    if !depends(func, tl, v, &mut dep) {
        return Ok(v);
    }
    let op = func.def_op(v).ok_or("a carried coordinate")?;
    let data = func.ops[op].clone();
    let mut operands = Vec::new();
    for &o in &data.operands {
        operands.push(peer_value(func, tl, o, peer, memo)?);
    }
    let block = func.block_of(op).ok_or("internal: a detached op")?;
    let at = func.blocks[block]
        .ops
        .iter()
        .position(|&o| o == op)
        .ok_or("internal: an op outside its block")?;
    let ty = func.ty(v).clone();
    let new = func.insert_op(
        block,
        at + 1,
        data.kind,
        operands,
        vec![ty],
        vec![],
        data.loc,
    );
    let p = func.ops[new].results[0];
    memo.insert(v, p);
    Ok(p)
}

fn i1() -> Type {
    Type::Scalar(Elem::Scalar(ScalarType::I1))
}

/// A one-result op inserted right before `before`.
fn insert_before(
    func: &mut Function,
    before: Op,
    kind: OpKind,
    operands: Vec<Value>,
    ty: Type,
) -> Value {
    let block = func.block_of(before).expect("the put is in a block");
    let at = func.blocks[block]
        .ops
        .iter()
        .position(|&o| o == before)
        .expect("the put is in its block");
    let loc = func.ops[before].loc;
    func.insert_value(block, at, kind, operands, ty, loc)
}

fn constant_bool(func: &mut Function, before: Op, b: bool) -> Value {
    insert_before(
        func,
        before,
        OpKind::Constant(ConstValue::Bool(b)),
        vec![],
        i1(),
    )
}
