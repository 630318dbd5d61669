//! `mma_pipeline`: keep tensor-core groups in flight across iterations of
//! a consumer loop.
//!
//! The partitioner's consumer loop gets a slot, runs the `dot`s that read
//! it and releases it:
//!
//! ```text
//! %acc_1 = for %k = ... iter_args(%acc_2 = %acc) {
//!   %a, %b = aref.get %ring, %k
//!   %acc_3 = dot %a, %b, %acc_2
//!   aref.consumed %ring, %k
//!   yield %acc_3
//! }
//! ```
//!
//! which waits for every WGMMA before the next iteration's can issue. With
//! `P` groups in flight (CUTLASS's `K_PIPE_MMAS`, Triton's MMA pipelining)
//! the `dot`s become async, the iteration waits until at most `P` groups
//! are pending, and releases the slot of iteration `i - P` — the newest
//! slot whose readers have provably retired — carrying the indices of the
//! last `P` slots it holds as loop values (`-1`: none yet):
//!
//! ```text
//! %none = constant -1
//! %acc_1, %p1 = for %k = ... iter_args(%acc_2 = %acc, %prev = %none) {
//!   %a, %b = aref.get %ring, %k
//!   %acc_3 = dot %a, %b, %acc_2 {async}
//!   %acc_4 = dot_wait %acc_3 {pending = 1}
//!   if %prev >= 0 { aref.consumed %ring, %prev }
//!   yield %acc_4, %k
//! }
//! %acc_5 = dot_wait %acc_1 {pending = 0}
//! if %p1 >= 0 { aref.consumed %ring, %p1 }
//! ```
//!
//! Releases keep the order of the gets, as the aref contract asks, and a
//! slot is released only after the `dot_wait` that retires every group
//! reading it (the simulator checks exactly this). The ring must be deeper
//! than `P`: the producer refills the slot of iteration `i + D` only after
//! iteration `i` is released, at iteration `i + P`, so `D > P` keeps it
//! `D - P` iterations ahead.
//!
//! The loop qualifies when, in its dependence graph ([`LoopGraph`]), the
//! slot it gets is read only by `dot` operands (directly or through a 2-D
//! `trans`, which the backend reads in place), those `dot`s' accumulators
//! are carried by the loop (or come from each other) and their results
//! reach nothing but later `dot`s of the chain and the `yield`: nothing in
//! the iteration waits for them, so nothing is lost by not waiting.

use tawa_ir::function::{Block, Op, Value};
use tawa_ir::{CmpPred, ConstValue, Elem, Function, Loc, OpKind, ScalarType, Type};

use crate::dep_graph::{is_dot, LoopGraph};
use crate::Schedule;

/// A consumer loop that can keep its `dot`s in flight.
pub(crate) struct Candidate {
    the_loop: Op,
    body: Block,
    ring: Value,
    /// The iteration index the loop gets and releases.
    index: Value,
    consumed: Op,
    /// The `dot`s reading the slot, in body order.
    pub(crate) dots: Vec<Op>,
    /// Yield positions of the chains' results (in flight at the yield).
    pub(crate) yielded: Vec<usize>,
    ring_depth: u32,
}

/// The groups a loop keeps in flight when `--mma-depth` is not given: 1
/// in a partition of one warpgroup, whose tensor-core groups nothing else
/// issues beside while it waits for them (on the H100 a 4-warp
/// 128x128x64 GEMM ran 17% faster so); 0 in one of two or more, where
/// the warpgroups' groups interleave and one's cover the other's wait
/// (1 in flight measured level or slower there).
pub fn default_depth(partition_warps: u32) -> u32 {
    u32::from(partition_warps <= 4)
}

/// How many groups the loops keep in flight, and who said so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaDepth {
    /// `--mma-depth N`.
    Asked(u32),
    /// [`default_depth`] of each loop's partition.
    PerPartition,
    /// The default without warp specialization: none in flight.
    NoWsDefault,
}

/// MMA-pipelines every consumer loop of every `ws` partition with
/// `mma_depth` groups in flight, noting each decision. Loops over the
/// rings of `split` (their slots hold parts of a K step,
/// [`crate::slot_split`]) keep 1 group in flight unless `--mma-depth`
/// says otherwise, whatever their partition: a part's group in flight is
/// what the split is for.
pub fn pipeline_mmas(
    func: &mut Function,
    mma_depth: MmaDepth,
    split: &[Value],
    schedule: &mut Schedule,
) {
    let mut loops = Vec::new();
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind {
            for (p, &region) in partitions.iter().zip(&func.ops[op].regions) {
                let depth = match mma_depth {
                    MmaDepth::Asked(n) => n,
                    MmaDepth::PerPartition => default_depth(p.num_warps),
                    MmaDepth::NoWsDefault => 0,
                };
                func.walk_block(region, &mut |o| {
                    if matches!(func.ops[o].kind, OpKind::For(_)) {
                        loops.push((o, depth, p.num_warps / 4));
                    }
                });
            }
        }
    });
    // A tile loop's get of a one-slot ring (a tile's operand) is not a
    // slot the loop streams.
    let one_slot = crate::aref_depth::one_slot_rings(func);
    // A memory-bound loop's dots (under CONSUMER_SLOT_FLOPS_PER_BYTE flops
    // a byte of their slots) take a sliver of the time the next slot's
    // copy does: a group in flight overlaps nothing, and holding its slot
    // one iteration longer keeps one copy fewer in flight (the swap-AB
    // decode on the H100: 0.97x Triton with one in flight, 0.98-0.99x
    // without).
    let memory_bound = crate::aref_depth::slot_flops_per_byte(func)
        .filter(|&f| f < crate::aref_depth::CONSUMER_SLOT_FLOPS_PER_BYTE);
    for (l, depth, groups) in loops {
        let loc = func.ops[l].loc;
        match candidate(func, l, &one_slot) {
            Ok(None) => {}
            Err(why) => schedule.note(loc, format!("loop: no MMA pipelining: {why}")),
            Ok(Some(c)) => {
                let depth = match mma_depth {
                    MmaDepth::PerPartition if split.contains(&c.ring) => 1,
                    MmaDepth::PerPartition if memory_bound.is_some() => 0,
                    _ => depth,
                };
                let p = depth.min(c.ring_depth - 1);
                if p == 0 {
                    let why = match mma_depth {
                        _ if depth > 0 => format!(
                            "the aref ring has {} slot(s); keeping a group in flight needs more",
                            c.ring_depth
                        ),
                        MmaDepth::Asked(_) => "--mma-depth 0".to_string(),
                        MmaDepth::PerPartition => match memory_bound {
                            Some(f) => format!(
                                "a memory-bound loop: its dots do {f} flops a byte of the slot, \
                                 under {}, and a group in flight would overlap nothing but hold \
                                 its slot longer; --mma-depth 1 keeps one in flight",
                                crate::aref_depth::CONSUMER_SLOT_FLOPS_PER_BYTE
                            ),
                            None => format!(
                                "the default for {groups} warpgroups: their groups interleave, \
                                 one's covering the other's wait; --mma-depth 1 keeps one in flight"
                            ),
                        },
                        MmaDepth::NoWsDefault => {
                            "the default without warp specialization".to_string()
                        }
                    };
                    schedule.note(
                        loc,
                        format!(
                            "loop: no MMA pipelining ({why}): each iteration waits for its \
                             WGMMAs (wait_group 0) and releases its own slot"
                        ),
                    );
                    continue;
                }
                let n = c.dots.len();
                apply(func, &c, p);
                schedule.note(
                    loc,
                    format!(
                        "loop: MMA pipelining, {p} WGMMA group(s) in flight ({n} async dot(s), \
                         wait_group {p}); iteration i releases the slot of iteration i-{p}, and \
                         the loop drains after its last iteration"
                    ),
                );
            }
        }
    }
}

/// The loop's MMA-pipelining candidate: `Ok(None)` when it gets no slot
/// (not a consumer loop), `Err` with the reason when it gets one but does
/// not qualify.
pub(crate) fn candidate(
    func: &Function,
    the_loop: Op,
    one_slot: &[Value],
) -> Result<Option<Candidate>, String> {
    let g = LoopGraph::of_loop(func, the_loop);
    let body = g.body;
    let ops = &func.blocks[body].ops;
    let streamed = |o: Op| {
        matches!(func.ops[o].kind, OpKind::ArefGet | OpKind::ArefConsumed)
            && !one_slot.contains(&func.ops[o].operands[0])
    };
    let gets: Vec<Op> = ops
        .iter()
        .copied()
        .filter(|&o| streamed(o) && matches!(func.ops[o].kind, OpKind::ArefGet))
        .collect();
    let nested_aref_op = ops.iter().any(|&o| {
        let mut found = false;
        for &r in &func.ops[o].regions {
            func.walk_block(r, &mut |i| found |= streamed(i));
        }
        found
    });
    let get = match gets.as_slice() {
        [] => return Ok(None),
        [g] => *g,
        _ => return Err("the loop gets slots of several arefs".into()),
    };
    if nested_aref_op {
        return Err("aref ops inside control flow of the loop body".into());
    }
    let (ring, index) = (func.ops[get].operands[0], func.ops[get].operands[1]);
    let consumed: Vec<Op> = ops
        .iter()
        .copied()
        .filter(|&o| {
            matches!(func.ops[o].kind, OpKind::ArefConsumed) && func.ops[o].operands[0] == ring
        })
        .collect();
    let consumed = match consumed.as_slice() {
        [c] if func.ops[*c].operands[1] == index => *c,
        _ => return Err("the slot is not released once, by the index it was got with".into()),
    };
    let Type::Aref { depth, .. } = func.ty(ring) else {
        return Err("internal: aref.get of a non-aref".into());
    };

    // Readers of the slot: dot operands only, directly or through a 2-D
    // `trans` (a column-major operand, `tl.dot(a, b.T)`): the backend reads
    // the slot in place through the transpose, wgmma's transpose bit, and
    // allows a slot no other reader (`aref_lower::slot_readers`).
    let mut dots: Vec<Op> = Vec::new();
    let not_a_dot = |user: Op| {
        format!(
            "the slot is read by `{}`; only dot operands can stay in flight",
            tawa_ir::printer::op_name(&func.ops[user].kind)
        )
    };
    for &v in &func.ops[get].results {
        for (user, pos) in g.users(func, get, v) {
            let readers = match &func.ops[user].kind {
                OpKind::Trans { perm } if perm.as_slice() == [1, 0] && pos == Some(0) => {
                    let t = func.ops[user].results[0];
                    g.users(func, user, t)
                }
                _ => vec![(user, pos)],
            };
            for (reader, pos) in readers {
                if !(is_dot(func, reader) && matches!(pos, Some(0 | 1))) {
                    return Err(not_a_dot(reader));
                }
                if !dots.contains(&reader) {
                    dots.push(reader);
                }
            }
        }
    }
    if dots.is_empty() {
        return Err("no dot reads the slot".into());
    }
    dots.sort_by_key(|&d| g.position(d));
    let yield_op = *ops.last().ok_or("internal: empty loop body")?;
    let args = &func.blocks[body].args;
    let mut yielded = Vec::new();
    for &d in &dots {
        if matches!(func.ops[d].kind, OpKind::Dot { is_async: true, .. }) {
            return Err("its dots are already async".into());
        }
        let acc = func.ops[d].operands[2];
        let carried = args[1..].contains(&acc);
        let chained = func.def_op(acc).is_some_and(|o| dots.contains(&o));
        if !carried && !chained {
            return Err("a dot's accumulator is not carried by the loop".into());
        }
        let r = func.ops[d].results[0];
        for (user, pos) in g.users(func, d, r) {
            if user == yield_op {
                for (j, &y) in func.ops[yield_op].operands.iter().enumerate() {
                    if y == r && !yielded.contains(&j) {
                        yielded.push(j);
                    }
                }
            } else if !(dots.contains(&user) && pos == Some(2)) {
                return Err(format!(
                    "a dot's result is used by `{}` in the same iteration",
                    tawa_ir::printer::op_name(&func.ops[user].kind)
                ));
            }
        }
    }
    if yielded.is_empty() {
        return Err("no dot result is carried to the next iteration".into());
    }
    // The iteration arguments that receive results in flight may only be
    // accumulators of the chain.
    for &j in &yielded {
        let arg = args[j + 1];
        let mut bad = None;
        func.walk_block(body, &mut |o| {
            for (i, &v) in func.ops[o].operands.iter().enumerate() {
                let ok = dots.contains(&o) && i == 2;
                if v == arg && !ok && o != yield_op {
                    bad = Some(o);
                }
            }
        });
        if let Some(o) = bad {
            return Err(format!(
                "the carried accumulator is also used by `{}`",
                tawa_ir::printer::op_name(&func.ops[o].kind)
            ));
        }
    }
    let last_dot = *dots.last().unwrap();
    if g.position(consumed) < g.position(last_dot) {
        return Err("the slot is released before its last dot".into());
    }
    Ok(Some(Candidate {
        the_loop,
        body,
        ring,
        index,
        consumed,
        dots,
        yielded,
        ring_depth: *depth,
    }))
}

/// Rewrites the candidate loop with `p` groups in flight (module docs).
fn apply(func: &mut Function, c: &Candidate, p: u32) {
    let index_ty = func.ty(c.index).clone();
    let loc = func.ops[c.consumed].loc;
    for &d in &c.dots {
        if let OpKind::Dot { is_async, .. } = &mut func.ops[d].kind {
            *is_async = true;
        }
    }

    // Wait after the last dot, and yield the waited values.
    let body = c.body;
    let yield_op = *func.blocks[body].ops.last().unwrap();
    let last = *c.dots.last().unwrap();
    let at = position(func, body, last) + 1;
    let in_flight: Vec<Value> = c
        .yielded
        .iter()
        .map(|&j| func.ops[yield_op].operands[j])
        .collect();
    let wait = dot_wait(func, body, at, &in_flight, p, func.ops[last].loc);
    for (k, &j) in c.yielded.iter().enumerate() {
        func.ops[yield_op].operands[j] = func.ops[wait].results[k];
    }

    // Carry the indices of the last `p` slots held; release the oldest.
    let parent = func.block_of(c.the_loop).expect("the loop sits in a block");
    let loop_at = position(func, parent, c.the_loop);
    let none = func.insert_op(
        parent,
        loop_at,
        OpKind::Constant(ConstValue::Int(-1)),
        vec![],
        vec![index_ty.clone()],
        vec![],
        loc,
    );
    let none = func.ops[none].results[0];
    let mut prev = Vec::new();
    let mut held_after = Vec::new();
    for t in 1..=p {
        func.ops[c.the_loop].operands.push(none);
        let arg = func.add_block_arg(body, index_ty.clone(), Some(format!("held{t}")));
        prev.push(arg);
        held_after.push(func.add_result(c.the_loop, index_ty.clone()));
    }
    let consumed_at = position(func, body, c.consumed);
    func.blocks[body].ops.remove(consumed_at);
    release_if_held(func, body, consumed_at, c.ring, prev[p as usize - 1], loc);
    let yield_op = *func.blocks[body].ops.last().unwrap();
    func.ops[yield_op].operands.push(c.index);
    for &v in &prev[..p as usize - 1] {
        func.ops[yield_op].operands.push(v);
    }

    // Drain after the loop: wait for every group, then release what is
    // still held, oldest first.
    let loop_results: Vec<Value> = c
        .yielded
        .iter()
        .map(|&j| func.ops[c.the_loop].results[j])
        .collect();
    let mut at = position(func, parent, c.the_loop) + 1;
    let drained = dot_wait(func, parent, at, &loop_results, 0, loc);
    for (k, &r) in loop_results.iter().enumerate() {
        let w = func.ops[drained].results[k];
        func.replace_uses(r, w, &[drained]);
    }
    at += 1;
    for &held in held_after.iter().rev() {
        at += release_if_held(func, parent, at, c.ring, held, loc);
    }
}

/// Inserts `dot_wait values {pending}` at `at` in `block`.
pub(crate) fn dot_wait(
    func: &mut Function,
    block: Block,
    at: usize,
    values: &[Value],
    pending: u32,
    loc: Loc,
) -> Op {
    let types = values.iter().map(|&v| func.ty(v).clone()).collect();
    let wait = func.insert_op(
        block,
        at,
        OpKind::DotWait { pending },
        values.to_vec(),
        types,
        vec![],
        loc,
    );
    for (k, &v) in values.iter().enumerate() {
        if let Some(name) = func.values[v].name.clone() {
            let r = func.ops[wait].results[k];
            func.set_name(r, name);
        }
    }
    wait
}

/// Inserts, at `at` in `block`, `if held >= 0 { aref.consumed ring, held }`;
/// returns the number of ops inserted.
fn release_if_held(
    func: &mut Function,
    block: Block,
    at: usize,
    ring: Value,
    held: Value,
    loc: Loc,
) -> usize {
    let ty = func.ty(held).clone();
    let zero = func.insert_op(
        block,
        at,
        OpKind::Constant(ConstValue::Int(0)),
        vec![],
        vec![ty],
        vec![],
        loc,
    );
    let zero = func.ops[zero].results[0];
    let i1 = Type::Scalar(Elem::Scalar(ScalarType::I1));
    let is_held = func.insert_op(
        block,
        at + 1,
        OpKind::Cmp(CmpPred::Ge),
        vec![held, zero],
        vec![i1],
        vec![],
        loc,
    );
    let is_held = func.ops[is_held].results[0];
    let then = func.new_block(vec![]);
    func.append_op(
        then,
        OpKind::ArefConsumed,
        vec![ring, held],
        vec![],
        vec![],
        loc,
    );
    func.append_op(then, OpKind::Yield, vec![], vec![], vec![], loc);
    let otherwise = func.new_block(vec![]);
    func.append_op(otherwise, OpKind::Yield, vec![], vec![], vec![], loc);
    func.insert_op(
        block,
        at + 2,
        OpKind::If,
        vec![is_held],
        vec![],
        vec![then, otherwise],
        loc,
    );
    3
}

/// Index of `op` in `block`.
pub(crate) fn position(func: &Function, block: Block, op: Op) -> usize {
    func.blocks[block]
        .ops
        .iter()
        .position(|&o| o == op)
        .expect("the op sits in the block")
}
