//! `stream_k` (`--stream-k`): a persistent warp-specialized kernel whose
//! programs share the K loops of the tiles past its last whole wave, so
//! that no SM idles through the last wave while others finish it (2048
//! tiles on 132 SMs are 15 waves and 68 tiles: a sixteenth wave with
//! half the SMs idle).
//!
//! ```text
//! for %tile = pid to T step n {      R = T % n, the tiles past the last whole wave
//!   for %k = lb to ub step st {      I = the K loop's trip count, S = R * I
//!     ... dot ...                    m = min(n, 2R) programs share the S K steps
//!   }                                (m = min(n, R) where I = 1), program c the
//!   epilogue(%acc)                   run [start(c), start(c + 1)) of them
//! }
//!                         =>         for %tile = pid to T - R step n { as before }
//!                                    for %seg = 0 to 2 {    (a run spans at most two tiles)
//!                                      t, k0, k1 = the part of tile T - R + t in the run
//!                                      if k0 < k1 {
//!                                        for %k = lb + k0 * st to min(ub, lb + k1 * st) ...
//!                                        if k0 == 0 {         (the tile's first K step: its owner)
//!                                          sums += stream_k.take of each later program in the tile
//!                                          epilogue(sums)
//!                                        } else {
//!                                          stream_k.put sums  (to the workspace; a flag raised)
//!                                        }
//!                                      }
//!                                    }
//! ```
//!
//! The whole waves run the kernel's own tile loop, untouched. A run is
//! shorter than a tile (`S / m <= I`), so it ends in at most two tiles:
//! the end of one (a part after the tile's first K step: put) and the
//! start of the next (the tile's first step: the owner, which takes).
//! A program puts at most once (only the first part of its run can start
//! after a tile's first step), and its put comes before any take of its
//! own: so every wait is for a program of higher x whose put waits for
//! nothing, and the persistent launch holds all of them at once, as the
//! kernel needs (the pass refuses kernels that read program ids along y
//! or z, whose launches may hold more programs than the GPU runs at
//! once). The sums differ from one loop's only in the order f32 partial
//! sums are added, as any split-K's do; the owner adds them in program
//! order, so the result does not depend on timing.
//!
//! Off by default. Measured on the H100 against the defaults in the
//! same runs (`bench/RESULTS.md`): 1.00-1.01x at 8192^3 and +1% on the
//! 8-warp 128x128 GEMM, but 0.90x at 4096^3 (512 tiles, 116 past the
//! third wave): the runs sit at different K steps of their tiles, so the
//! programs no longer read the same K slices at once and miss in L2 (ncu:
//! 288 MB read from DRAM against 187 MB); and a one-warpgroup consumer's
//! K loop, copied, gets its wgmma descriptors out of vector registers
//! (ptxas), 2% slower where no tile is shared. The launcher's
//! wave-balanced program count (`codegen::wave_balanced`) leaves no
//! partial wave at 2048 or 512 tiles on 132 SMs anyway.
//!
//! What makes the split sound is what `cluster_split_k` checks (the K
//! loops carry only slot counters and sums from zero, write nothing, and
//! nothing after the consumer's K loop feeds the next tile); besides,
//! the K loop's bounds must be computable before the tile loop (the
//! runs are counted in its steps).

use std::collections::HashMap;

use tawa_ir::{Axis, BinaryOp, Block, CmpPred, Function, Loc, Op, OpKind, Type, Value};

use crate::cluster_split_k::{plan, Plan};
use crate::persistent::{hoist, hoistable};
use crate::slot_split::{cast_to, insert_value, int};
use crate::Schedule;

/// Cuts the tiles past the last whole wave of `func` into runs of K steps
/// shared by its programs where `asked` and the kernel allows; notes what
/// it did or why not. Returns whether it did.
pub fn stream_k(func: &mut Function, asked: bool, schedule: &mut Schedule) -> bool {
    if !asked {
        return false;
    }
    let loc = crate::ws_ops(func)
        .first()
        .map_or(Loc::UNKNOWN, |&op| func.ops[op].loc);
    let plan = match plan(func).and_then(|p| check(func, &p).map(|()| p)) {
        Ok(p) => p,
        Err(why) => {
            schedule.note(loc, format!("stream-K: not applied: {why}"));
            return false;
        }
    };
    apply(func, &plan);
    schedule.note(
        loc,
        "stream-K (--stream-k): the tiles past the last whole wave of the programs are cut \
         into runs of K steps, one a program, each at least half a tile; each tile's \
         partial sums meet, through a workspace in global memory, at the program that \
         runs its first K step, which runs the epilogue"
            .to_string(),
    );
    true
}

/// What stream-K needs beyond what `cluster_split_k`'s plan checks.
fn check(func: &Function, plan: &Plan) -> Result<(), String> {
    let mut other_axis = false;
    func.walk(&mut |op| {
        if let OpKind::ProgramId(a) | OpKind::NumPrograms(a) = func.ops[op].kind {
            other_axis |= a != Axis::X;
        }
    });
    if other_axis {
        return Err(
            "the kernel reads program ids along y or z: its launch may hold more programs \
             than the GPU runs at once, and a program must not wait for one not started"
                .into(),
        );
    }
    for &(_, tile_loop, k_loop) in &plan.loops {
        let tile_body = func.ops[tile_loop].regions[0];
        for i in [0, 1] {
            if !hoistable(func, tile_body, func.ops[k_loop].operands[i]) {
                return Err(
                    "a K loop's bounds depend on the tile (the runs are counted in K steps \
                     before the tile loop)"
                        .into(),
                );
            }
        }
    }
    Ok(())
}

/// Integer arithmetic inserted at a moving position of one block.
struct Ints {
    block: Block,
    at: usize,
    ty: Type,
    loc: Loc,
}

impl Ints {
    fn op(&mut self, func: &mut Function, kind: OpKind, operands: Vec<Value>) -> Value {
        insert_value(
            func,
            self.block,
            &mut self.at,
            kind,
            operands,
            &self.ty,
            self.loc,
        )
    }
    fn int(&mut self, func: &mut Function, c: i64) -> Value {
        self.op(func, int(c), vec![])
    }
    fn bin(&mut self, func: &mut Function, op: BinaryOp, a: Value, b: Value) -> Value {
        self.op(func, OpKind::Binary(op), vec![a, b])
    }
    fn cmp(&mut self, func: &mut Function, pred: CmpPred, a: Value, b: Value) -> Value {
        insert_value(
            func,
            self.block,
            &mut self.at,
            OpKind::Cmp(pred),
            vec![a, b],
            &Type::I1,
            self.loc,
        )
    }
    fn select(&mut self, func: &mut Function, c: Value, a: Value, b: Value) -> Value {
        self.op(func, OpKind::Select, vec![c, a, b])
    }
}

/// The share of the stream-K steps, computed after a partition's tile
/// loop: the same in every partition, each computing its own.
struct Share {
    /// Tiles of the whole waves: the stream-K tiles follow.
    whole: Value,
    /// The K loop's trip count, and at least 1.
    trips: Value,
    trips1: Value,
    /// Steps a program (`base`, one more for the first `extra`).
    base: Value,
    extra: Value,
    /// This program's run of stream-K steps.
    start: Value,
    end: Value,
    program: Value,
}

impl Share {
    /// The program whose run holds stream-K step `x`.
    fn owner_of(&self, func: &mut Function, b: &mut Ints, x: Value) -> Value {
        let one = b.int(func, 1);
        let longer = b.bin(func, BinaryOp::Add, self.base, one);
        let lim = b.bin(func, BinaryOp::Mul, self.extra, longer);
        let lo = b.bin(func, BinaryOp::IDiv, x, longer);
        let past = b.bin(func, BinaryOp::Sub, x, lim);
        let q = b.bin(func, BinaryOp::IDiv, past, self.base);
        let hi = b.bin(func, BinaryOp::Add, self.extra, q);
        let early = b.cmp(func, CmpPred::Lt, x, lim);
        b.select(func, early, lo, hi)
    }
}

fn apply(func: &mut Function, plan: &Plan) {
    func.attrs.stream_k = true;
    for &(region, tile_loop, k_loop) in &plan.loops {
        let consumer = k_loop == plan.consumer_loop;
        // The whole waves: the tile loop as it was, over their tiles
        // (T - T % n); the rest is computed after it, so that nothing
        // more lives through it.
        let [tiles, programs] = [1, 2].map(|i| func.ops[tile_loop].operands[i]);
        let b = &mut Ints {
            block: region,
            at: crate::mma_pipeline::position(func, region, tile_loop),
            ty: func.ty(tiles).clone(),
            loc: func.ops[tile_loop].loc,
        };
        let rest = b.bin(func, BinaryOp::Rem, tiles, programs);
        let whole = b.bin(func, BinaryOp::Sub, tiles, rest);
        func.ops[tile_loop].operands[1] = whole;
        let (share, at) = share_after(func, region, tile_loop, k_loop, rest, whole);
        stream_k_loop(
            func,
            region,
            tile_loop,
            at,
            k_loop,
            &share,
            consumer.then_some(&plan.sums[..]),
        );
    }
}

/// Computes the stream-K share right after `tile_loop` in `region` (its
/// `rest` tiles past the `whole` waves' ones); also the position after
/// it.
fn share_after(
    func: &mut Function,
    region: Block,
    tile_loop: Op,
    k_loop: Op,
    rest: Value,
    whole: Value,
) -> (Share, usize) {
    let loc = func.ops[tile_loop].loc;
    let [program, programs] = [0, 2].map(|i| func.ops[tile_loop].operands[i]);
    let ty = func.ty(program).clone();
    // The K loop's bounds, computed after the tile loop by copies of the
    // ops of its body that compute them.
    let tile_body = func.ops[tile_loop].regions[0];
    let pre = func.new_block(vec![]);
    let mut map = HashMap::new();
    let [lb, ub, st] =
        [0, 1, 2].map(|i| hoist(func, tile_body, func.ops[k_loop].operands[i], pre, &mut map));
    let mut at = crate::mma_pipeline::position(func, region, tile_loop) + 1;
    let moved: Vec<Op> = std::mem::take(&mut func.blocks[pre].ops);
    let hoisted = moved.len();
    func.blocks[region].ops.splice(at..at, moved);
    at += hoisted;
    let [lb, ub, st] = [lb, ub, st].map(|v| {
        let c = cast_to(func, region, at, v, &ty, loc);
        if c != v {
            at += 1;
        }
        c
    });
    let b = &mut Ints {
        block: region,
        at,
        ty,
        loc,
    };
    let zero = b.int(func, 0);
    let one = b.int(func, 1);
    let two = b.int(func, 2);
    // I = max(0, ceil((ub - lb) / st)).
    let span = b.bin(func, BinaryOp::Sub, ub, lb);
    let st1 = b.bin(func, BinaryOp::Sub, st, one);
    let span = b.bin(func, BinaryOp::Add, span, st1);
    let trips = b.bin(func, BinaryOp::IDiv, span, st);
    let trips = b.bin(func, BinaryOp::Max, trips, zero);
    let trips1 = b.bin(func, BinaryOp::Max, trips, one);
    // m = min(n, R * min(I, 2)) programs, each at least half a tile's
    // steps (a tile's sums then meet from at most three programs).
    let per_tile = b.bin(func, BinaryOp::Min, trips, two);
    let wanted = b.bin(func, BinaryOp::Mul, rest, per_tile);
    let sharing = b.bin(func, BinaryOp::Min, programs, wanted);
    let sharing1 = b.bin(func, BinaryOp::Max, sharing, one);
    let steps = b.bin(func, BinaryOp::Mul, rest, trips);
    let base = b.bin(func, BinaryOp::IDiv, steps, sharing1);
    let extra = b.bin(func, BinaryOp::Rem, steps, sharing1);
    // start(c) = c * base + min(c, extra), for c <= m.
    let start_of = |func: &mut Function, b: &mut Ints, c: Value| {
        let c = b.bin(func, BinaryOp::Min, c, sharing);
        let whole_steps = b.bin(func, BinaryOp::Mul, c, base);
        let more = b.bin(func, BinaryOp::Min, c, extra);
        b.bin(func, BinaryOp::Add, whole_steps, more)
    };
    let start = start_of(func, b, program);
    let next = b.bin(func, BinaryOp::Add, program, one);
    let end = start_of(func, b, next);
    func.set_name(start, "sk_start");
    func.set_name(end, "sk_end");
    let at = b.at;
    (
        Share {
            whole,
            trips,
            trips1,
            base,
            extra,
            start,
            end,
            program,
        },
        at,
    )
}

/// After `tile_loop` in `region`: the loop over this program's (at most
/// two) parts of stream-K tiles, each a copy of the tile loop's body;
/// `sums` are the consumer's K loop results to gather (None in a
/// producer).
fn stream_k_loop(
    func: &mut Function,
    region: Block,
    tile_loop: Op,
    after: usize,
    k_loop: Op,
    share: &Share,
    sums: Option<&[usize]>,
) {
    let loc = func.ops[tile_loop].loc;
    let ty = func.ty(share.program).clone();
    let tile_body = func.ops[tile_loop].regions[0];
    let carried: Vec<Value> = func.ops[tile_loop].results.clone();
    let carried_types: Vec<Type> = carried.iter().map(|&v| func.ty(v).clone()).collect();

    // for %seg = 0 to 2 iter_args(carried)
    let mut at = after;
    let (zero, two, one) = {
        let b = &mut Ints {
            block: region,
            at,
            ty: ty.clone(),
            loc,
        };
        let v = (b.int(func, 0), b.int(func, 2), b.int(func, 1));
        at = b.at;
        v
    };
    let mut arg_types = vec![ty.clone()];
    arg_types.extend(carried_types.iter().cloned());
    let seg_body = func.new_block(arg_types);
    let seg_args = func.blocks[seg_body].args.clone();
    let mut operands = vec![zero, two, one];
    operands.extend(carried.iter().copied());
    let seg_loop = func.insert_op(
        region,
        at,
        OpKind::For(Default::default()),
        operands,
        carried_types.clone(),
        vec![seg_body],
        loc,
    );
    let seg_results = func.ops[seg_loop].results.clone();
    for (&old, &new) in carried.iter().zip(&seg_results) {
        func.replace_uses(old, new, &[seg_loop]);
    }

    // The part of the run in tile `whole + t`: steps [k0, k1) of it.
    let b = &mut Ints {
        block: seg_body,
        at: 0,
        ty: ty.clone(),
        loc,
    };
    let first = b.bin(func, BinaryOp::IDiv, share.start, share.trips1);
    let t = b.bin(func, BinaryOp::Add, first, seg_args[0]);
    let tile = b.bin(func, BinaryOp::Add, share.whole, t);
    let tile_start = b.bin(func, BinaryOp::Mul, t, share.trips);
    let zero = b.int(func, 0);
    let k0 = b.bin(func, BinaryOp::Sub, share.start, tile_start);
    let k0 = b.bin(func, BinaryOp::Max, k0, zero);
    let k1 = b.bin(func, BinaryOp::Sub, share.end, tile_start);
    let k1 = b.bin(func, BinaryOp::Min, k1, share.trips);
    let has = b.cmp(func, CmpPred::Lt, k0, k1);
    func.set_name(tile, "sk_tile");
    func.set_name(k0, "sk_k0");
    func.set_name(k1, "sk_k1");

    // if k0 < k1 { the tile's body } else { carried as is }
    let then = func.new_block(vec![]);
    let mut map: HashMap<Value, Value> = HashMap::new();
    let tile_args = func.blocks[tile_body].args.clone();
    map.insert(tile_args[0], tile);
    for (&a, &s) in tile_args[1..].iter().zip(&seg_args[1..]) {
        map.insert(a, s);
    }
    let body_ops = func.blocks[tile_body].ops.clone();
    let (yield_op, body_ops) = body_ops.split_last().expect("a yield");
    let mut new_k_loop = None;
    for &o in body_ops {
        let n = func.clone_op(o, then, &mut map);
        if o == k_loop {
            new_k_loop = Some(n);
        }
    }
    let new_k_loop = new_k_loop.expect("the K loop is in the tile loop's body");
    let yielded: Vec<Value> = func.ops[*yield_op]
        .operands
        .iter()
        .map(|v| map.get(v).copied().unwrap_or(*v))
        .collect();
    func.append_op(then, OpKind::Yield, yielded, vec![], vec![], loc);
    let otherwise = func.new_block(vec![]);
    func.append_op(
        otherwise,
        OpKind::Yield,
        seg_args[1..].to_vec(),
        vec![],
        vec![],
        loc,
    );
    let part = func.append_op(
        seg_body,
        OpKind::If,
        vec![has],
        carried_types,
        vec![then, otherwise],
        loc,
    );
    let part_results = func.ops[part].results.clone();
    func.append_op(seg_body, OpKind::Yield, part_results, vec![], vec![], loc);

    // The copy's K loop runs steps [k0, k1).
    let kloc = func.ops[new_k_loop].loc;
    let [lb, ub, st] = [0, 1, 2].map(|i| func.ops[new_k_loop].operands[i]);
    let kty = func.ty(lb).clone();
    let mut at = crate::mma_pipeline::position(func, then, new_k_loop);
    let k0k = cast_to(func, then, at, k0, &kty, kloc);
    at = crate::mma_pipeline::position(func, then, new_k_loop);
    let k1k = cast_to(func, then, at, k1, &kty, kloc);
    at = crate::mma_pipeline::position(func, then, new_k_loop);
    let b = &mut Ints {
        block: then,
        at,
        ty: kty,
        loc: kloc,
    };
    let skip = b.bin(func, BinaryOp::Mul, k0k, st);
    let from = b.bin(func, BinaryOp::Add, lb, skip);
    let upto = b.bin(func, BinaryOp::Mul, k1k, st);
    let upto = b.bin(func, BinaryOp::Add, lb, upto);
    let to = b.bin(func, BinaryOp::Min, ub, upto);
    func.ops[new_k_loop].operands[0] = from;
    func.ops[new_k_loop].operands[1] = to;

    if let Some(sums) = sums {
        gather(func, then, new_k_loop, sums, share, (t, k0), loc);
    }
}

/// In the consumer's copy of the tile body `block`: after `k_loop`, the
/// owner of the tile (`k0 == 0`) takes the later programs' partial sums
/// and runs the epilogue; any other program puts its sums.
fn gather(
    func: &mut Function,
    block: Block,
    k_loop: Op,
    sums: &[usize],
    share: &Share,
    (t, k0): (Value, Value),
    loc: Loc,
) {
    let ty = func.ty(share.program).clone();
    let partials: Vec<Value> = sums.iter().map(|&i| func.ops[k_loop].results[i]).collect();
    let sum_types: Vec<Type> = partials.iter().map(|&v| func.ty(v).clone()).collect();
    let at = crate::mma_pipeline::position(func, block, k_loop) + 1;
    let rest: Vec<Op> = {
        let ops = &func.blocks[block].ops;
        ops[at..ops.len() - 1].to_vec()
    };
    func.blocks[block].ops.retain(|o| !rest.contains(o));

    // Owner: for %q = c + 1 to last + 1 { sums = stream_k.take %q, sums }
    let owner_block = func.new_block(vec![]);
    let b = &mut Ints {
        block: owner_block,
        at: 0,
        ty: ty.clone(),
        loc,
    };
    let one = b.int(func, 1);
    let next_tile = b.bin(func, BinaryOp::Add, t, one);
    let tile_end = b.bin(func, BinaryOp::Mul, next_tile, share.trips);
    let last_step = b.bin(func, BinaryOp::Sub, tile_end, one);
    let last = share.owner_of(func, b, last_step);
    let from = b.bin(func, BinaryOp::Add, share.program, one);
    let upto = b.bin(func, BinaryOp::Add, last, one);
    let mut arg_types = vec![ty.clone()];
    arg_types.extend(sum_types.iter().cloned());
    let take_body = func.new_block(arg_types);
    let take_args = func.blocks[take_body].args.clone();
    let take = func.append_op(
        take_body,
        OpKind::StreamKTake,
        take_args.clone(),
        sum_types.clone(),
        vec![],
        loc,
    );
    let taken = func.ops[take].results.clone();
    func.append_op(take_body, OpKind::Yield, taken, vec![], vec![], loc);
    let mut operands = vec![from, upto, one];
    operands.extend(partials.iter().copied());
    let at = b.at;
    let takes = func.insert_op(
        owner_block,
        at,
        OpKind::For(Default::default()),
        operands,
        sum_types,
        vec![take_body],
        loc,
    );
    let gathered = func.ops[takes].results.clone();
    func.blocks[owner_block].ops.extend(rest.iter().copied());
    for (&p, &g) in partials.iter().zip(&gathered) {
        for &o in &rest {
            for v in &mut func.ops[o].operands {
                if *v == p {
                    *v = g;
                }
            }
        }
        // Nested epilogue ops (inside ifs or loops of it) too.
        let nested: Vec<Op> = {
            let mut found = Vec::new();
            for &o in &rest {
                for &r in &func.ops[o].regions {
                    func.walk_block(r, &mut |n| found.push(n));
                }
            }
            found
        };
        for n in nested {
            for v in &mut func.ops[n].operands {
                if *v == p {
                    *v = g;
                }
            }
        }
    }
    func.append_op(owner_block, OpKind::Yield, vec![], vec![], vec![], loc);

    // Any other program: stream_k.put sums.
    let put_block = func.new_block(vec![]);
    func.append_op(put_block, OpKind::StreamKPut, partials, vec![], vec![], loc);
    func.append_op(put_block, OpKind::Yield, vec![], vec![], vec![], loc);

    let mut at = crate::mma_pipeline::position(func, block, k_loop) + 1;
    let zero = insert_value(func, block, &mut at, int(0), vec![], &ty, loc);
    let owner = insert_value(
        func,
        block,
        &mut at,
        OpKind::Cmp(CmpPred::Eq),
        vec![k0, zero],
        &Type::I1,
        loc,
    );
    func.insert_op(
        block,
        at,
        OpKind::If,
        vec![owner],
        vec![],
        vec![owner_block, put_block],
        loc,
    );
}
