//! `cluster_split_k` (`--cluster-split-k`, off by default): a persistent
//! warp-specialized kernel whose CTA pairs may split each tile's K loop,
//! so that twice the SMs work on a grid of fewer tiles than SMs (a GEMM
//! with a small output and a long K: on the H100, matmul.py at M = N =
//! 1024, K = 65536 ran 1.8x faster with 128x256 tiles, 32 tiles on 132
//! SMs, 1.70-1.82x Triton 3.6 on the same source, and 1.3x with 128x128
//! tiles; `bench/RESULTS.md`).
//!
//! ```text
//! for %tile = pid to T step n {          s = n >= 2 * T ? 2 : 1
//!   for %k = lb to ub step st {          for %tile = pid / s to T step n / s {
//!     ... %acc = dot(.., .., %acc)  =>     for %k = lb + (pid % s) * st to ub step s * st {
//!   }                                        ... %acc = dot(.., .., %acc) ...
//!   epilogue(%acc)                         }
//! }                                        %sum = cluster.sum %acc, s
//!                                          if pid % s == 0 { epilogue(%sum) }
//!                                        }
//! ```
//!
//! The launcher decides per launch (`KernelSource::splits_k`): where the
//! tiles fill at most half the programs the device holds it starts two
//! programs a tile in clusters of 2, else the usual persistent grid
//! without clusters, and the kernel tells the two apart by its program
//! count. Both CTAs of a pair walk the same tiles; rank `r` runs the K
//! steps `r, r + 2, ...` of each, through rings of its own. After the K
//! loop, `cluster.sum` brings rank 1's partial sums to rank 0 (the
//! backend: distributed shared memory and a pair of cluster-scope
//! mbarriers, no global workspace, no atomics), which adds them to its
//! own in a fixed order and alone runs the epilogue. The sum differs from
//! one loop's only in the order f32 partial sums are added, as any
//! split-K's does. Unsplit, the kernel runs as before but for a few
//! integer ops a tile and the branches around the exchange: the 128x256
//! GEMM at 8192^3 measured level, the one-warpgroup 128x128 GEMM 1.7%
//! slower.
//!
//! What makes the split sound, checked here: each K loop carries nothing
//! but slot counters advanced by 1 an iteration and (the consumer's)
//! sums that only its dots add to, starting from zero, so that the
//! iterations a CTA skips change nothing but what the sums hold; the
//! producer's and the consumer's K loops are split alike, so each CTA's
//! puts and gets stay paired; nothing after the consumer's K loop feeds
//! the tile loop's next iteration, so rank 1 may skip it; and the K loops
//! write nothing but their rings. A split launch gives each pair one
//! tile, so the exchange reuses the slots of the largest ring, idle once
//! the K loop is done; the partial sums must fit them.
//!
//! Not the default: the compiler does not know the grid, the kernels of
//! cooperative consumers it would change have not all been timed unsplit
//! (a default for them passed the GPU suite), and where the
//! mainloop waits on memory twice the SMs gain nothing (the swap-AB
//! decode GEMM 16x8192x8192, 64 tiles, measured 0.94-0.95x Triton split
//! against 0.97-0.98x unsplit: its 64 CTAs already draw about 3 TB/s
//! while streaming). Not with `--tma-multicast`, whose pairs share
//! copies, nor with consumers on alternate tiles (`--tile-pingpong`).

use tawa_ir::{BinaryOp, Block, CmpPred, ConstValue, Function, Op, OpKind, Type, Value};

use crate::slot_split::{cast_to, insert_value, int};
use crate::Schedule;

/// What the pass found to rewrite.
pub(crate) struct Plan {
    /// Per partition: its block, its tile loop, its K loop (in the tile
    /// loop's body).
    pub(crate) loops: Vec<(Block, Op, Op)>,
    /// The consumer's K loop and the positions of its results that are
    /// sums (block argument `i + 1` is result `i`).
    pub(crate) consumer_loop: Op,
    pub(crate) sums: Vec<usize>,
}

/// Splits the K loops of `func` between CTA pairs where `asked` and the
/// kernel allows; notes what it did or why not. Returns the shared memory
/// it adds: the exchanges' barriers (their buffers reuse a ring's slots),
/// 16 bytes each, in the 1 KiB the backend keeps the scratch area after
/// them aligned to.
pub fn cluster_split_k(func: &mut Function, asked: bool, schedule: &mut Schedule) -> u32 {
    if !asked {
        return 0;
    }
    let loc = crate::ws_ops(func)
        .first()
        .map_or(tawa_ir::Loc::UNKNOWN, |&op| func.ops[op].loc);
    let plan = match plan(func) {
        Ok(p) => p,
        Err(why) => {
            schedule.note(loc, format!("cluster split-K: not applied: {why}"));
            return 0;
        }
    };
    // Each sum's buffer 16-byte aligned, as the backend places them.
    let bytes: u64 = plan
        .sums
        .iter()
        .map(|&i| {
            let ty = func.ty(func.ops[plan.consumer_loop].results[i]);
            (ty.shape().iter().map(|&d| u64::from(d)).product::<u64>() * 4).div_ceil(16) * 16
        })
        .sum();
    let ring_bytes = largest_ring_bytes(func);
    if bytes > ring_bytes {
        schedule.note(
            loc,
            format!(
                "cluster split-K: not applied: the partial sums ({} KiB) exceed the largest \
                 ring's slots ({} KiB), which the pair's exchange reuses",
                bytes.div_ceil(1024),
                ring_bytes >> 10
            ),
        );
        return 0;
    }
    apply(func, &plan);
    schedule.note(
        loc,
        format!(
            "cluster split-K (--cluster-split-k): where the tiles fill at most half the \
             programs the GPU holds, the launcher starts CTA pairs that take one tile each, rank \
             r running K steps r, r + 2, ...; rank 1's partial sums ({} KiB) reach rank 0 \
             through distributed shared memory, in the ring's slots once the K loop is done, \
             and rank 0 runs the epilogue",
            bytes.div_ceil(1024)
        ),
    );
    (16 * plan.sums.len() as u32).div_ceil(1024) * 1024
}

/// Bytes of the slots of the largest aref ring of `func`.
fn largest_ring_bytes(func: &Function) -> u64 {
    let mut most = 0;
    func.walk(&mut |op| {
        if let OpKind::ArefCreate = func.ops[op].kind {
            if let Type::Aref { depth, buffers } = func.ty(func.ops[op].results[0]) {
                let slot: u64 = buffers
                    .iter()
                    .map(|t| {
                        let elem = t.scalar_type().map_or(4, |s| s.byte_size()) as u64;
                        t.shape().iter().fold(elem, |n, &d| n * u64::from(d))
                    })
                    .sum();
                most = most.max(slot * u64::from(*depth));
            }
        }
    });
    most
}

pub(crate) fn plan(func: &Function) -> Result<Plan, String> {
    if func.attrs.grid_param.is_none() {
        return Err("the kernel is not persistent (no tile loop to share)".into());
    }
    if func.attrs.cluster != 1 {
        return Err("the kernel already runs in clusters (--tma-multicast)".into());
    }
    let ws = match crate::ws_ops(func).as_slice() {
        [one] => *one,
        _ => return Err("not one ws op".into()),
    };
    // The simulator and the pair's kernel end: nothing after the ws op.
    let body = &func.blocks[func.body].ops;
    let at = body.iter().position(|&o| o == ws).expect("in the body");
    if !body[at + 1..]
        .iter()
        .all(|&o| matches!(func.ops[o].kind, OpKind::Return))
    {
        return Err("the kernel does work after its ws op".into());
    }
    if func.turn_partitions(ws).len() > 1 {
        return Err("consumers take alternate tiles (tile ping-pong)".into());
    }
    let mut loops = Vec::new();
    let mut consumer = None;
    for &region in &func.ops[ws].regions {
        let tile_loop = crate::persistent::tile_loop_in(func, region)
            .ok_or("a partition has no tile loop from the program id by the programs")?;
        let tile_body = func.ops[tile_loop].regions[0];
        let k_loops: Vec<Op> = func.blocks[tile_body]
            .ops
            .iter()
            .copied()
            .filter(|&o| count(func, o, is_aref_access) > 0)
            .collect();
        let [k_loop] = k_loops.as_slice() else {
            return Err("a partition's tile loop does not hold one loop of aref ops".into());
        };
        // A ring used once a tile (attention's `q`) would be got by rank 0
        // alone where its epilogue gets it.
        if func.blocks[tile_body]
            .ops
            .iter()
            .any(|&o| is_aref_access(&func.ops[o].kind))
        {
            return Err("a ring is used once a tile, outside the K loop".into());
        }
        if !matches!(func.ops[*k_loop].kind, OpKind::For(_)) {
            return Err("a partition's aref ops are not in a loop".into());
        }
        let sums = check_k_loop(func, *k_loop)?;
        let gets = count(func, *k_loop, |k| matches!(k, OpKind::ArefGet));
        let puts = count(func, *k_loop, |k| matches!(k, OpKind::ArefPut));
        if gets > 0 {
            if consumer.is_some() {
                return Err("two partitions read the rings".into());
            }
            if sums.is_empty() {
                return Err("the consumer's loop carries no sum of dots".into());
            }
            check_epilogue(func, tile_loop, *k_loop)?;
            consumer = Some((*k_loop, sums));
        } else if puts == 0 || !sums.is_empty() {
            return Err("a partition's loop neither only puts nor gets".into());
        }
        loops.push((region, tile_loop, *k_loop));
    }
    let (consumer_loop, sums) = consumer.ok_or("no partition reads the rings")?;
    Ok(Plan {
        loops,
        consumer_loop,
        sums,
    })
}

/// `aref.put`, `aref.get` or `aref.consumed`.
fn is_aref_access(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
    )
}

/// The ops inside `op`'s regions for which `want` holds.
fn count(func: &Function, op: Op, want: fn(&OpKind) -> bool) -> usize {
    let mut n = 0;
    for &r in &func.ops[op].regions {
        func.walk_block(r, &mut |o| n += usize::from(want(&func.ops[o].kind)));
    }
    n
}

/// Checks that `k_loop` may skip iterations: it carries only slot
/// counters (advanced by 1) and sums of dots starting from zero, has a
/// constant positive step, and writes nothing but its rings. Returns the
/// result positions of the sums.
fn check_k_loop(func: &Function, k_loop: Op) -> Result<Vec<usize>, String> {
    let data = &func.ops[k_loop];
    match crate::const_int(func, data.operands[2]) {
        Some(s) if s > 0 => {}
        _ => return Err("a K loop's step is not a positive constant".into()),
    }
    let body = data.regions[0];
    let args = func.blocks[body].args.clone();
    let yield_op = *func.blocks[body].ops.last().ok_or("an empty loop")?;
    let yielded = func.ops[yield_op].operands.clone();
    let mut sums = Vec::new();
    for (i, &arg) in args.iter().enumerate().skip(1) {
        let next = yielded[i - 1];
        let next_def = func.def_op(next).map(|o| &func.ops[o]);
        // A slot counter: advanced by 1 and read only as the ring
        // position of aref ops, which a CTA that skips iterations may
        // number on (its rings are its own); a counter read otherwise
        // would hold other values in the steps a CTA runs.
        let next_is_add = next_def.is_some_and(|d| {
            matches!(d.kind, OpKind::Binary(BinaryOp::Add))
                && d.operands.contains(&arg)
                && d.operands
                    .iter()
                    .any(|&o| o != arg && crate::const_int(func, o) == Some(1))
        });
        let is_counter = next_is_add
            && crate::value_uses(func, arg).iter().all(|&(user, pos)| {
                func.def_op(next) == Some(user) || pos == 1 && is_aref_access(&func.ops[user].kind)
            });
        if is_counter {
            continue;
        }
        let is_sum = next_def.is_some_and(|d| {
            matches!(d.kind, OpKind::Dot { .. }) && d.operands.get(2) == Some(&arg)
        }) && crate::value_uses(func, arg).len() == 1;
        if !is_sum {
            return Err(
                "a K loop carries a value that is neither a slot counter nor a sum only its \
                 dots add to"
                    .into(),
            );
        }
        let init = data.operands[3 + i - 1];
        let zero = func.def_op(init).is_some_and(
            |o| matches!(func.ops[o].kind, OpKind::Constant(ConstValue::Float(z)) if z == 0.0),
        );
        if !zero || func.ty(init).scalar_type() != Some(tawa_ir::ScalarType::F32) {
            return Err("a sum of the K loop does not start from an f32 zero".into());
        }
        sums.push(i - 1);
    }
    let mut writes = None;
    func.walk_block(body, &mut |o| {
        if matches!(
            func.ops[o].kind,
            OpKind::Store { .. }
                | OpKind::DescStore
                | OpKind::AtomicRmw { .. }
                | OpKind::AtomicCas { .. }
                | OpKind::Print { .. }
                | OpKind::Assert { .. }
        ) {
            writes.get_or_insert(tawa_ir::printer::op_name(&func.ops[o].kind));
        }
    });
    match writes {
        Some(w) => Err(format!("a K loop does `{w}`, which rank 1 would skip")),
        None => Ok(sums),
    }
}

/// Checks that what follows the consumer's K loop in the tile loop's body
/// feeds nothing the tile loop carries (rank 1 skips it).
fn check_epilogue(func: &Function, tile_loop: Op, k_loop: Op) -> Result<(), String> {
    let tile_body = func.ops[tile_loop].regions[0];
    let ops = &func.blocks[tile_body].ops;
    let at = ops.iter().position(|&o| o == k_loop).expect("in the body");
    let (yield_op, after) = ops[at + 1..].split_last().ok_or("an empty tile loop")?;
    let defined: Vec<Value> = after
        .iter()
        .flat_map(|&o| func.ops[o].results.iter().copied())
        .collect();
    if func.ops[*yield_op]
        .operands
        .iter()
        .any(|v| defined.contains(v))
    {
        return Err("the epilogue computes what the tile loop carries".into());
    }
    Ok(())
}

fn apply(func: &mut Function, plan: &Plan) {
    func.attrs.cluster_split_k = true;
    for &(region, tile_loop, k_loop) in &plan.loops {
        let loc = func.ops[tile_loop].loc;
        let [pid, tiles, programs] = [0, 1, 2].map(|i| func.ops[tile_loop].operands[i]);
        let ty = func.ty(pid).clone();
        let i1 = Type::Scalar(tawa_ir::Elem::Scalar(tawa_ir::ScalarType::I1));
        let mut at = crate::mma_pipeline::position(func, region, tile_loop);
        let mut before = |func: &mut Function, kind: OpKind, operands: Vec<Value>, ty: &Type| {
            insert_value(func, region, &mut at, kind, operands, ty, loc)
        };
        // Two programs a tile (the launcher's pairs) or fewer.
        let one = before(func, int(1), vec![], &ty);
        let two = before(func, int(2), vec![], &ty);
        let both = before(func, OpKind::Binary(BinaryOp::Mul), vec![tiles, two], &ty);
        let paired = before(func, OpKind::Cmp(CmpPred::Ge), vec![programs, both], &i1);
        let split = before(func, OpKind::Select, vec![paired, two, one], &ty);
        let pair = before(func, OpKind::Binary(BinaryOp::IDiv), vec![pid, split], &ty);
        let rank = before(func, OpKind::Binary(BinaryOp::Rem), vec![pid, split], &ty);
        let pairs = before(
            func,
            OpKind::Binary(BinaryOp::IDiv),
            vec![programs, split],
            &ty,
        );
        func.set_name(split, "split_k");
        func.set_name(rank, "cta_rank");
        func.ops[tile_loop].operands[0] = pair;
        func.ops[tile_loop].operands[2] = pairs;

        // The K loop: from lb + rank * s by split * s.
        let tile_body = func.ops[tile_loop].regions[0];
        let kloc = func.ops[k_loop].loc;
        let [lb, step] = [0, 2].map(|i| func.ops[k_loop].operands[i]);
        let kty = func.ty(lb).clone();
        let before_k = |func: &Function| crate::mma_pipeline::position(func, tile_body, k_loop);
        let rank_k = cast_to(func, tile_body, before_k(func), rank, &kty, kloc);
        let split_k = cast_to(func, tile_body, before_k(func), split, &kty, kloc);
        let mut at = before_k(func);
        let mut before = |func: &mut Function, kind: OpKind, operands: Vec<Value>| {
            insert_value(func, tile_body, &mut at, kind, operands, &kty, kloc)
        };
        let offset = before(func, OpKind::Binary(BinaryOp::Mul), vec![rank_k, step]);
        let start = before(func, OpKind::Binary(BinaryOp::Add), vec![lb, offset]);
        let stride = before(func, OpKind::Binary(BinaryOp::Mul), vec![split_k, step]);
        func.ops[k_loop].operands[0] = start;
        func.ops[k_loop].operands[2] = stride;

        if k_loop != plan.consumer_loop {
            continue;
        }
        // The sums meet at rank 0, which alone runs the epilogue.
        let mut at = crate::mma_pipeline::position(func, tile_body, k_loop) + 1;
        for &i in &plan.sums {
            let partial = func.ops[k_loop].results[i];
            let ty = func.ty(partial).clone();
            let sum = insert_value(
                func,
                tile_body,
                &mut at,
                OpKind::ClusterSum,
                vec![partial, split],
                &ty,
                kloc,
            );
            let sum_op = func.def_op(sum).expect("an op result");
            func.replace_uses(partial, sum, &[sum_op]);
        }
        let rest: Vec<Op> = {
            let ops = &func.blocks[tile_body].ops;
            ops[at..ops.len() - 1].to_vec()
        };
        if rest.is_empty() {
            continue;
        }
        func.blocks[tile_body].ops.retain(|o| !rest.contains(o));
        let zero = insert_value(func, tile_body, &mut at, int(0), vec![], &ty, loc);
        let i1 = Type::Scalar(tawa_ir::Elem::Scalar(tawa_ir::ScalarType::I1));
        let is_rank0 = insert_value(
            func,
            tile_body,
            &mut at,
            OpKind::Cmp(CmpPred::Eq),
            vec![rank, zero],
            &i1,
            loc,
        );
        let then = func.new_block(vec![]);
        func.blocks[then].ops = rest;
        func.append_op(then, OpKind::Yield, vec![], vec![], vec![], loc);
        let otherwise = func.new_block(vec![]);
        func.append_op(otherwise, OpKind::Yield, vec![], vec![], vec![], loc);
        func.insert_op(
            tile_body,
            at,
            OpKind::If,
            vec![is_rank0],
            vec![],
            vec![then, otherwise],
            loc,
        );
    }
}
