//! `coarse_pipeline`: FlashAttention-3's intra-warpgroup overlap, chosen
//! from the dependence graph of a consumer loop.
//!
//! A consumer loop whose first `dot` (D1) feeds, through elementwise ops
//! and reductions, the A or B operand of a second `dot` (D2) that
//! accumulates into a carried value runs, as written, D1 → the chain in
//! between → D2, each `dot` waited before the next op: the tensor core
//! idles while the warpgroup computes the chain (attention's softmax). The
//! loop is split into two stages:
//!
//! - **stage 2**: D2, the ops that compute its accumulator from the carried
//!   one (attention's `acc * alpha`), everything else that depends on them,
//!   the cheap shape ops (`splat`, `broadcast`, `expand_dims`, `trans`,
//!   the `aref.get` of D2's tiles) used only by them, and the release of
//!   D2's slot;
//! - **stage 1**: everything else, D1 and the chain included.
//!
//! The schedule is legal when nothing of stage 1 depends on stage 2, in
//! the same iteration or through the loop's carried values: then stage 1
//! of iteration `j + 1` may run before stage 2 of iteration `j`. The loop
//! becomes a prologue (stage 1 of the first iteration), a loop whose
//! iteration `j + 1` issues D1 of `j + 1` and D2 of `j` as async WGMMA
//! groups, in that order, waits for D1 only (`dot_wait {pending = 1}`:
//! groups retire in commit order, so the older D1 is done while D2 may
//! still run), computes the chain of `j + 1` while D2 of `j` runs on the
//! tensor core, and then waits for D2 (`pending = 0`); and an epilogue
//! (stage 2 of the last iteration). The values stage 2 of iteration `j`
//! takes from stage 1 (attention's `p` and `alpha`, the slot index) are
//! carried by the new loop. Prologue and epilogue are guarded by the trip
//! count, so a loop of no iteration still runs none.
//!
//! ```text
//! prologue:  get K(0); S(0) = D1; release K(0); softmax(0)
//! iteration: get K(j+1); S(j+1) = D1 async; O *= alpha(j); get V(j);
//!            O = D2(P(j), V(j), O) async; wait 1; release K(j+1);
//!            softmax(j+1); wait 0; release V(j)
//! epilogue:  O *= alpha(n-1); get V(n-1); O = D2 async; wait 0;
//!            release V(n-1)
//! ```
//!
//! The two `dot`s' tiles must travel in different arefs: the iteration
//! holds the slot D1 of `j + 1` reads and the one D2 of `j` reads at the
//! same time, and each is got and released inside one iteration (the
//! backend reads a slot in place through the views its `aref.get`
//! returns, which do not cross iterations). An aref whose slot carries
//! both is split in two (every put, get and release of it), D1's tiles
//! first, so the producer copies K of `j` before V of `j`, which is also
//! the order the consumer needs them in. Each consumer then holds at most
//! one slot of each ring, so the schedule needs no deeper ring than the
//! loop had.
//!
//! Register pressure: stage 2's carried values (attention's 16-bit `p`)
//! live across the chain of the next iteration beside its 32-bit scores
//! and the accumulator; the pass refuses a loop whose estimate of those
//! exceeds what a consumer thread may hold ([`REGISTER_BUDGET`]).

use std::collections::{HashMap, HashSet};

use tawa_ir::function::{Block, Op, Value, ValueDef};
use tawa_ir::{BinaryOp, CmpPred, ConstValue, Function, Loc, OpKind, ScalarType, Type};

use crate::dep_graph::{is_dot, LoopGraph};
use crate::mma_pipeline::{dot_wait, position};
use crate::Schedule;

/// 32-bit registers per consumer thread that the tiles live across the
/// overlapped chain may take: the consumer's `setmaxnreg` budget (232 with
/// one producer warpgroup and two consumer warpgroups) less what the
/// addresses, loop counters, row statistics and the chain's temporaries
/// need. FA3's head-dim-128 forward holds the same three tiles (scores,
/// accumulator, 16-bit probabilities: 64 + 64 + 32 registers a thread at a
/// 128 x 128 tile over 256 threads).
pub const REGISTER_BUDGET: u32 = 176;

/// Coarse-pipelines every consumer loop of every `ws` partition that has
/// the shape (module docs), noting each decision; loops with fewer than
/// two `dot`s are left alone without a note.
pub fn coarse_pipeline(func: &mut Function, schedule: &mut Schedule) {
    let mut loops = Vec::new();
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind {
            for (p, &region) in partitions.iter().zip(&func.ops[op].regions) {
                func.walk_block(region, &mut |o| {
                    if matches!(func.ops[o].kind, OpKind::For(_)) {
                        loops.push((o, p.num_warps));
                    }
                });
            }
        }
    });
    for (l, warps) in loops {
        let loc = func.ops[l].loc;
        // The rewrite splits arefs before it knows whether the loop
        // qualifies; a copy keeps `func` intact when it does not.
        let mut trial = func.clone();
        match schedule_loop(&mut trial, l, warps) {
            Ok(None) => {}
            Ok(Some(text)) => {
                *func = trial;
                schedule.note(loc, text);
            }
            Err(why) => schedule.note(loc, format!("loop: no coarse pipelining: {why}")),
        }
    }
}

/// What the stages of one loop are.
struct Plan {
    the_loop: Op,
    body: Block,
    d1: Op,
    d2: Op,
    /// Stage 2 and stage 1, in body order, without the yield.
    stage2: Vec<Op>,
    stage1: Vec<Op>,
    /// The stage-1 ops D1 depends on, D1 included: issued first.
    prefix: HashSet<Op>,
    /// Per iteration argument (without the induction variable): whether
    /// stage 2 yields it.
    stage2_arg: Vec<bool>,
    /// Values of stage 1 (or the induction variable, or a stage-1
    /// argument) that stage 2 uses: carried by the new loop.
    crossing: Vec<Value>,
}

/// Plans and rewrites loop `l`: `Ok(None)` when it is not a loop with two
/// `dot`s reading aref slots, `Ok(Some(decision))` when rewritten.
fn schedule_loop(func: &mut Function, l: Op, warps: u32) -> Result<Option<String>, String> {
    let body = func.ops[l].regions[0];
    let ops = func.blocks[body].ops.clone();
    let dots: Vec<Op> = ops.iter().copied().filter(|&o| is_dot(func, o)).collect();
    let gets: Vec<Op> = ops
        .iter()
        .copied()
        .filter(|&o| matches!(func.ops[o].kind, OpKind::ArefGet))
        .collect();
    if dots.len() < 2 || gets.is_empty() {
        return Ok(None);
    }
    if dots
        .iter()
        .any(|&d| matches!(func.ops[d].kind, OpKind::Dot { is_async: true, .. }))
    {
        return Err("its dots are already async (MMA pipelining)".into());
    }
    if dots.len() > 2 {
        return Err(format!(
            "{} dots in the loop body; the schedule overlaps a chain between two",
            dots.len()
        ));
    }
    for &o in &ops {
        let mut nested = false;
        for &r in &func.ops[o].regions {
            func.walk_block(r, &mut |i| {
                nested |= matches!(
                    func.ops[i].kind,
                    OpKind::ArefGet | OpKind::ArefConsumed | OpKind::Dot { .. }
                );
            });
        }
        if nested {
            return Err("aref ops or dots inside control flow of the loop body".into());
        }
    }
    let g = LoopGraph::of_loop(func, l);
    let (d1, d2) = order_dots(func, &g, dots[0], dots[1])?;

    // Which dot reads each buffer of each slot; split a slot both read.
    let mut readers_of = Vec::new();
    for &get in &gets {
        readers_of.push((get, slot_readers(func, &g, get, d1, d2)?));
    }
    for (get, readers) in readers_of {
        let firsts: Vec<usize> = (0..readers.len()).filter(|&b| readers[b] == d1).collect();
        if !firsts.is_empty() && firsts.len() < readers.len() {
            split_ring(func, func.ops[get].operands[0], &firsts);
        }
    }
    let plan = plan(func, l, d1, d2)?;
    let estimate = register_estimate(func, &plan, warps);
    if estimate > REGISTER_BUDGET {
        return Err(format!(
            "the tiles live across the overlapped chain take about {estimate} registers a \
             thread (more than {REGISTER_BUDGET}): they would spill"
        ));
    }
    let crossing = plan.crossing.len();
    apply(func, &plan);
    Ok(Some(format!(
        "loop: coarse pipelining (FA3 intra-warpgroup overlap): the dot at {} of iteration j+1 \
         and the dot at {} of iteration j are issued async, the chain between them of \
         iteration j+1 runs while the second is in flight (wait_group 1, then 0); {crossing} \
         value(s) carried to the next iteration, about {estimate} registers a thread live \
         across the chain",
        loc_text(func.ops[d1].loc),
        loc_text(func.ops[d2].loc),
    )))
}

pub(crate) fn loc_text(loc: Loc) -> String {
    if loc.is_known() {
        format!("{}:{}", loc.line, loc.col)
    } else {
        "?".into()
    }
}

/// Every value `op` uses, inside its regions too.
fn uses_of(func: &Function, op: Op) -> Vec<Value> {
    let mut out = func.ops[op].operands.clone();
    for &r in &func.ops[op].regions {
        func.walk_block(r, &mut |i| out.extend(func.ops[i].operands.iter().copied()));
    }
    out
}

/// Which of the two dots is D1 (its result reaches the other's A or B
/// operand in the same iteration) and which D2.
fn order_dots(func: &Function, g: &LoopGraph, a: Op, b: Op) -> Result<(Op, Op), String> {
    for (d1, d2) in [(a, b), (b, a)] {
        let reached = g.dependents(&[d1], false);
        let feeds = func.ops[d2].operands[..2].iter().any(|&v| {
            func.def_op(v)
                .is_some_and(|o| o == d1 || reached.contains(&o))
        });
        if feeds {
            return Ok((d1, d2));
        }
    }
    Err("neither dot's result reaches the other's operands".into())
}

/// For each buffer of the slot `get` returns, the dot that reads it (as
/// its A or B operand, directly or through `trans`).
fn slot_readers(
    func: &Function,
    g: &LoopGraph,
    get: Op,
    d1: Op,
    d2: Op,
) -> Result<Vec<Op>, String> {
    let mut readers = Vec::new();
    for &tile in &func.ops[get].results {
        let mut reader: Option<Op> = None;
        let mut work = vec![(get, tile)];
        while let Some((def, v)) = work.pop() {
            for (u, pos) in g.users(func, def, v) {
                let data = &func.ops[u];
                match (&data.kind, pos) {
                    (OpKind::Trans { .. }, Some(0)) => work.push((u, data.results[0])),
                    (OpKind::Dot { .. }, Some(0 | 1)) if u == d1 || u == d2 => {
                        if reader.is_some_and(|r| r != u) {
                            return Err("a slot tile is read by both dots".into());
                        }
                        reader = Some(u);
                    }
                    _ => {
                        return Err(format!(
                            "a slot tile is read by `{}`; only the two dots' operands may \
                             read slots",
                            tawa_ir::printer::op_name(&data.kind)
                        ))
                    }
                }
            }
        }
        readers.push(reader.ok_or("a slot tile no dot reads")?);
    }
    Ok(readers)
}

/// Splits aref `ring` in two: the buffers `firsts` in one, the others in
/// a second, every put, get and release of it doubled (first ring first).
fn split_ring(func: &mut Function, ring: Value, firsts: &[usize]) {
    let Type::Aref { depth, buffers } = func.ty(ring).clone() else {
        unreachable!("aref.get of an aref")
    };
    let create = func.def_op(ring).expect("arefs come from aref.create");
    let block = func.block_of(create).expect("aref.create sits in a block");
    let at = position(func, block, create);
    let name = func.values[ring].name.clone().unwrap_or("ring".into());
    let pick = |first: bool| -> Vec<usize> {
        (0..buffers.len())
            .filter(|b| firsts.contains(b) == first)
            .collect()
    };
    let (one, two) = (pick(true), pick(false));
    let mut rings = Vec::new();
    for (k, part) in [&one, &two].into_iter().enumerate() {
        let ty = Type::Aref {
            depth,
            buffers: part.iter().map(|&b| buffers[b].clone()).collect(),
        };
        let loc = func.ops[create].loc;
        let op = func.insert_op(
            block,
            at + k,
            OpKind::ArefCreate,
            vec![],
            vec![ty],
            vec![],
            loc,
        );
        let r = func.ops[op].results[0];
        func.set_name(r, format!("{name}_dot{}", k + 1));
        rings.push(r);
    }
    let at = position(func, block, create);
    func.blocks[block].ops.remove(at);

    let mut uses = Vec::new();
    func.walk(&mut |op| {
        let d = &func.ops[op];
        if matches!(
            d.kind,
            OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
        ) && d.operands[0] == ring
        {
            uses.push(op);
        }
    });
    for op in uses {
        let block = func.block_of(op).expect("aref ops sit in blocks");
        let at = position(func, block, op);
        let data = func.ops[op].clone();
        let index = data.operands[1];
        func.blocks[block].ops.remove(at);
        for (k, part) in [&one, &two].into_iter().enumerate() {
            let mut operands = vec![rings[k], index];
            let mut types = Vec::new();
            match data.kind {
                OpKind::ArefPut => operands.extend(part.iter().map(|&b| data.operands[2 + b])),
                OpKind::ArefGet => types.extend(part.iter().map(|&b| buffers[b].clone())),
                _ => {}
            }
            let new = func.insert_op(
                block,
                at + k,
                data.kind.clone(),
                operands,
                types,
                vec![],
                data.loc,
            );
            if let OpKind::ArefGet = data.kind {
                for (j, &b) in part.iter().enumerate() {
                    let old = data.results[b];
                    let nv = func.ops[new].results[j];
                    if let Some(n) = func.values[old].name.clone() {
                        func.set_name(nv, n);
                    }
                    func.replace_uses(old, nv, &[]);
                }
            }
        }
    }
}

/// The stages of loop `l` (module docs), or why it has none.
fn plan(func: &Function, l: Op, d1: Op, d2: Op) -> Result<Plan, String> {
    let g = LoopGraph::of_loop(func, l);
    let body = g.body;
    let ops = func.blocks[body].ops.clone();
    let yield_op = *ops.last().ok_or("internal: empty loop body")?;
    let yielded = func.ops[yield_op].operands.clone();
    if g.users_of(d2).iter().any(|&u| u != yield_op) {
        return Err("the second dot's result is used in the iteration, not only carried".into());
    }
    if !yielded.contains(&func.ops[d2].results[0]) {
        return Err("the second dot's result is not carried to the next iteration".into());
    }

    // Stage 2: D2 and everything depending on it, in the iteration or
    // through the values the loop carries.
    let mut stage2 = g.dependents(&[d2], true);
    stage2.insert(d2);
    stage2.remove(&yield_op);
    if stage2.contains(&d1) {
        return Err(
            "the first dot depends on the second dot's chain of the previous iteration".into(),
        );
    }
    // Cheap ops used only by stage 2 join it: their operands cross instead
    // of their (larger) results, and D2's slot is got where it is read.
    loop {
        let mut grew = false;
        for &o in ops.iter().rev() {
            let cheap = matches!(
                func.ops[o].kind,
                OpKind::Constant(_)
                    | OpKind::Splat
                    | OpKind::Broadcast
                    | OpKind::ExpandDims { .. }
                    | OpKind::Trans { .. }
                    | OpKind::ArefGet
            );
            let users = g.users_of(o);
            if cheap
                && !stage2.contains(&o)
                && !users.is_empty()
                && users.iter().all(|u| stage2.contains(u))
            {
                stage2.insert(o);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    // A slot is released in the stage that got it.
    let rings_of_stage2: HashSet<Value> = stage2
        .iter()
        .filter(|&&o| matches!(func.ops[o].kind, OpKind::ArefGet))
        .map(|&o| func.ops[o].operands[0])
        .collect();
    for &o in &ops {
        if let OpKind::ArefConsumed = func.ops[o].kind {
            if rings_of_stage2.contains(&func.ops[o].operands[0]) {
                stage2.insert(o);
            } else {
                stage2.remove(&o);
            }
        }
    }
    let stage2_ops: Vec<Op> = ops.iter().copied().filter(|o| stage2.contains(o)).collect();
    let stage1_ops: Vec<Op> = ops
        .iter()
        .copied()
        .filter(|o| !stage2.contains(o) && *o != yield_op)
        .collect();
    if let Some(&o) = stage2_ops
        .iter()
        .find(|&&o| matches!(func.ops[o].kind, OpKind::ArefPut))
    {
        return Err(format!(
            "`{}` depends on the second dot",
            tawa_ir::printer::op_name(&func.ops[o].kind)
        ));
    }
    // Nothing of stage 1 depends on stage 2 (the closure makes it so; the
    // releases moved).
    let stage1_set: HashSet<Op> = stage1_ops.iter().copied().collect();
    let late = g.dependents(&stage2_ops, true);
    if let Some(&o) = stage1_ops.iter().find(|o| late.contains(o)) {
        return Err(format!(
            "`{}` of the first stage depends on the second dot's chain",
            tawa_ir::printer::op_name(&func.ops[o].kind)
        ));
    }
    let stage2_arg: Vec<bool> = yielded
        .iter()
        .map(|&y| func.def_op(y).is_some_and(|o| stage2.contains(&o)))
        .collect();

    // Values stage 2 takes from stage 1: results, the induction variable
    // and the arguments stage 1 carries.
    let mut crossing = Vec::new();
    for &o in &stage2_ops {
        for v in uses_of(func, o) {
            let from_stage1 = match func.values[v].def {
                ValueDef::Arg(b, i) => b == body && (i == 0 || !stage2_arg[i as usize - 1]),
                ValueDef::Result(def, _) => stage1_set.contains(&def),
            };
            if from_stage1 && !crossing.contains(&v) {
                crossing.push(v);
            }
        }
    }

    // D1 and what it depends on: issued first.
    let mut prefix: HashSet<Op> = g
        .dependences(&[d1])
        .into_iter()
        .filter(|o| stage1_set.contains(o))
        .collect();
    prefix.insert(d1);
    Ok(Plan {
        the_loop: l,
        body,
        d1,
        d2,
        stage2: stage2_ops,
        stage1: stage1_ops,
        prefix,
        stage2_arg,
        crossing,
    })
}

/// 32-bit registers a consumer thread holds across the overlapped chain:
/// D1's result (32-bit), D2's accumulator, and the tiles stage 2 takes
/// from stage 1, each spread over the partition's threads.
fn register_estimate(func: &Function, plan: &Plan, warps: u32) -> u32 {
    let regs = |ty: &Type| crate::tile_registers(ty, warps * 32);
    let mut total = regs(func.ty(func.ops[plan.d1].results[0]));
    total += regs(func.ty(func.ops[plan.d2].results[0]));
    for &v in &plan.crossing {
        total += regs(func.ty(v));
    }
    total
}

/// Rewrites the loop into prologue, pipelined loop and epilogue.
fn apply(func: &mut Function, plan: &Plan) {
    let l = plan.the_loop;
    let loc = func.ops[l].loc;
    let parent = func.block_of(l).expect("the loop sits in a block");
    let loop_kind = func.ops[l].kind.clone();
    let (lb, ub, step) = {
        let o = &func.ops[l].operands;
        (o[0], o[1], o[2])
    };
    let inits: Vec<Value> = func.ops[l].operands[3..].to_vec();
    let args = func.blocks[plan.body].args.clone();
    let yield_op = *func.blocks[plan.body].ops.last().unwrap();
    let yielded = func.ops[yield_op].operands.clone();
    let iv_ty = func.ty(lb).clone();
    let n_args = inits.len();
    let stage1_args: Vec<usize> = (0..n_args).filter(|&i| !plan.stage2_arg[i]).collect();
    let stage2_args: Vec<usize> = (0..n_args).filter(|&i| plan.stage2_arg[i]).collect();
    let mut at = position(func, parent, l);
    let i1 = Type::scalar(ScalarType::I1);
    let runs = func.insert_op(
        parent,
        at,
        OpKind::Cmp(CmpPred::Lt),
        vec![lb, ub],
        vec![i1],
        vec![],
        loc,
    );
    let runs = func.ops[runs].results[0];
    at += 1;

    // Prologue: stage 1 of the first iteration.
    let then = func.new_block(vec![]);
    let mut map: HashMap<Value, Value> = HashMap::new();
    map.insert(args[0], lb);
    for i in 0..n_args {
        map.insert(args[i + 1], inits[i]);
    }
    for &o in &plan.stage1 {
        func.clone_op(o, then, &mut map);
    }
    let get = |map: &HashMap<Value, Value>, v: Value| map.get(&v).copied().unwrap_or(v);
    let mut then_yield: Vec<Value> = stage1_args.iter().map(|&i| get(&map, yielded[i])).collect();
    then_yield.extend(plan.crossing.iter().map(|&v| get(&map, v)));
    let otherwise = func.new_block(vec![]);
    let mut else_yield: Vec<Value> = stage1_args.iter().map(|&i| inits[i]).collect();
    for &v in &plan.crossing {
        let stand_in = match func.values[v].def {
            ValueDef::Arg(_, 0) => lb,
            ValueDef::Arg(_, i) => inits[i as usize - 1],
            ValueDef::Result(..) => zero(func, otherwise, v, loc),
        };
        else_yield.push(stand_in);
    }
    let prologue = guarded(
        func,
        (parent, at),
        runs,
        (then, &then_yield),
        (otherwise, else_yield),
        loc,
    );
    at += 1;
    let pro = func.ops[prologue].results.clone();
    let pro_crossing = &pro[stage1_args.len()..];

    // The loop from the second iteration on.
    let second = func.insert_op(
        parent,
        at,
        OpKind::Binary(BinaryOp::Add),
        vec![lb, step],
        vec![iv_ty.clone()],
        vec![],
        loc,
    );
    let second = func.ops[second].results[0];
    at += 1;
    let mut loop_inits: Vec<Value> = inits
        .iter()
        .enumerate()
        .map(
            |(i, &init)| match stage1_args.iter().position(|&s| s == i) {
                Some(k) => pro[k],
                None => init,
            },
        )
        .collect();
    loop_inits.extend_from_slice(pro_crossing);
    let mut arg_types = vec![iv_ty.clone()];
    arg_types.extend(loop_inits.iter().map(|&v| func.ty(v).clone()));
    let nbody = func.new_block(arg_types);
    let nargs = func.blocks[nbody].args.clone();
    for (k, &a) in args.iter().enumerate() {
        if let Some(n) = func.values[a].name.clone() {
            func.set_name(nargs[k], n);
        }
    }
    for (k, &v) in plan.crossing.iter().enumerate() {
        if let Some(n) = func.values[v].name.clone() {
            func.set_name(nargs[1 + n_args + k], format!("{n}_prev"));
        }
    }
    // Stage 1 of iteration j + 1 reads the new arguments; stage 2 of
    // iteration j reads the carried crossing values.
    let mut map1: HashMap<Value, Value> = HashMap::new();
    for (k, &a) in args.iter().enumerate() {
        map1.insert(a, nargs[k]);
    }
    let mut map2: HashMap<Value, Value> = HashMap::new();
    for &i in &stage2_args {
        map2.insert(args[i + 1], nargs[i + 1]);
    }
    for (k, &v) in plan.crossing.iter().enumerate() {
        map2.insert(v, nargs[1 + n_args + k]);
    }
    let releases: HashSet<Op> = plan
        .stage1
        .iter()
        .chain(&plan.stage2)
        .copied()
        .filter(|&o| matches!(func.ops[o].kind, OpKind::ArefConsumed))
        .collect();
    let is_release = |o: Op| releases.contains(&o);
    for &o in plan.stage1.iter().filter(|o| plan.prefix.contains(o)) {
        let c = func.clone_op(o, nbody, &mut map1);
        if o == plan.d1 {
            set_async(func, c);
        }
    }
    for &o in plan.stage2.iter().filter(|&&o| !is_release(o)) {
        let c = func.clone_op(o, nbody, &mut map2);
        if o == plan.d2 {
            set_async(func, c);
        }
    }
    // Groups retire in commit order: with D2 of j issued after D1 of
    // j + 1, one pending group leaves D2 in flight and D1 done.
    let s = func.ops[plan.d1].results[0];
    let end = func.blocks[nbody].ops.len();
    let wait1 = dot_wait(func, nbody, end, &[get(&map1, s)], 1, func.ops[plan.d1].loc);
    map1.insert(s, func.ops[wait1].results[0]);
    for &o in plan.stage1.iter().filter(|&&o| is_release(o)) {
        func.clone_op(o, nbody, &mut map1);
    }
    for &o in plan
        .stage1
        .iter()
        .filter(|&&o| !plan.prefix.contains(&o) && !is_release(o))
    {
        func.clone_op(o, nbody, &mut map1);
    }
    let o_val = func.ops[plan.d2].results[0];
    let end = func.blocks[nbody].ops.len();
    let wait0 = dot_wait(
        func,
        nbody,
        end,
        &[get(&map2, o_val)],
        0,
        func.ops[plan.d2].loc,
    );
    map2.insert(o_val, func.ops[wait0].results[0]);
    for &o in plan.stage2.iter().filter(|&&o| is_release(o)) {
        func.clone_op(o, nbody, &mut map2);
    }
    let mut body_yield = Vec::new();
    for (i, &y) in yielded.iter().enumerate() {
        body_yield.push(if plan.stage2_arg[i] {
            get(&map2, y)
        } else {
            get(&map1, y)
        });
    }
    body_yield.extend(plan.crossing.iter().map(|&v| get(&map1, v)));
    func.append_op(nbody, OpKind::Yield, body_yield, vec![], vec![], loc);
    let mut operands = vec![second, ub, step];
    operands.extend(loop_inits.iter().copied());
    let result_types: Vec<Type> = loop_inits.iter().map(|&v| func.ty(v).clone()).collect();
    let new_loop = func.insert_op(
        parent,
        at,
        loop_kind,
        operands,
        result_types,
        vec![nbody],
        loc,
    );
    at += 1;
    let loop_results = func.ops[new_loop].results.clone();

    // Epilogue: stage 2 of the last iteration.
    let then = func.new_block(vec![]);
    let mut map3: HashMap<Value, Value> = HashMap::new();
    for &i in &stage2_args {
        map3.insert(args[i + 1], loop_results[i]);
    }
    for (k, &v) in plan.crossing.iter().enumerate() {
        map3.insert(v, loop_results[n_args + k]);
    }
    // D2 async and waited at once, as in the loop: the backend then packs
    // its register operands the same way (before the wgmma fence), so that
    // ptxas need not fence them itself inside the guard, which would
    // serialize every wgmma of the kernel.
    for &o in plan.stage2.iter().filter(|&&o| !is_release(o)) {
        let c = func.clone_op(o, then, &mut map3);
        if o == plan.d2 {
            set_async(func, c);
        }
    }
    let end = func.blocks[then].ops.len();
    let wait = dot_wait(
        func,
        then,
        end,
        &[get(&map3, o_val)],
        0,
        func.ops[plan.d2].loc,
    );
    map3.insert(o_val, func.ops[wait].results[0]);
    for &o in plan.stage2.iter().filter(|&&o| is_release(o)) {
        func.clone_op(o, then, &mut map3);
    }
    let then_yield: Vec<Value> = stage2_args
        .iter()
        .map(|&i| get(&map3, yielded[i]))
        .collect();
    let otherwise = func.new_block(vec![]);
    let else_yield: Vec<Value> = stage2_args.iter().map(|&i| loop_results[i]).collect();
    let epilogue = guarded(
        func,
        (parent, at),
        runs,
        (then, &then_yield),
        (otherwise, else_yield),
        loc,
    );
    let epi = func.ops[epilogue].results.clone();

    // The old loop's results, from the new loop or the epilogue.
    let old_results = func.ops[l].results.clone();
    for (i, &r) in old_results.iter().enumerate() {
        let new = match stage2_args.iter().position(|&s| s == i) {
            Some(k) => epi[k],
            None => loop_results[i],
        };
        if let Some(n) = func.values[r].name.clone() {
            func.set_name(new, n);
        }
        func.replace_uses(r, new, &[]);
    }
    let at = position(func, parent, l);
    func.blocks[parent].ops.remove(at);
}

/// Inserts at `at` in `block` an `if runs` whose branches end by
/// yielding the given values (the results' types are the then-branch's).
fn guarded(
    func: &mut Function,
    (block, at): (Block, usize),
    runs: Value,
    (then, then_yield): (Block, &[Value]),
    (otherwise, else_yield): (Block, Vec<Value>),
    loc: Loc,
) -> Op {
    func.append_op(
        then,
        OpKind::Yield,
        then_yield.to_vec(),
        vec![],
        vec![],
        loc,
    );
    func.append_op(otherwise, OpKind::Yield, else_yield, vec![], vec![], loc);
    let types: Vec<Type> = then_yield.iter().map(|&v| func.ty(v).clone()).collect();
    func.insert_op(
        block,
        at,
        OpKind::If,
        vec![runs],
        types,
        vec![then, otherwise],
        loc,
    )
}

fn set_async(func: &mut Function, op: Op) {
    if let OpKind::Dot { is_async, .. } = &mut func.ops[op].kind {
        *is_async = true;
    }
}

/// A zero of `like`'s type appended to `block`: what the prologue's
/// no-iteration branch yields for a value that no iteration computed (the
/// loop after it runs no iteration either, and the epilogue is skipped).
fn zero(func: &mut Function, block: Block, like: Value, loc: Loc) -> Value {
    let ty = func.ty(like).clone();
    let value = match ty.scalar_type() {
        Some(ScalarType::I1) => ConstValue::Bool(false),
        Some(s) if s.is_float() => ConstValue::Float(0.0),
        _ => ConstValue::Int(0),
    };
    func.append_value(block, OpKind::Constant(value), vec![], ty, loc)
}
