//! `slot_merge`: each slot of a GEMM's ring holds several K steps.
//!
//! Every use of a slot costs a handover: the producer waits for the slot
//! to be empty and arms its full barrier, the consumers wait for it to be
//! full and release it. Merging `f` consecutive K steps into one slot
//! makes `f` times fewer handovers in the same shared memory: the ring
//! has `1/f` of the slots, each `f` times the bytes, the loops run `1/f`
//! of the iterations, each copying `f` steps' tiles as one box (`f` times
//! as deep along K) and multiplying them in one dot (one WGMMA group of
//! `f` times the instructions). It is what a source with `f` times the
//! `BLOCK_K` would compile to, with the source's own `BLOCK_K`.
//!
//! Why it pays was measured, not derived (`bench/RESULTS.md`, in-kernel
//! cycle counts of the 128x256x64 GEMM on the H100): a K step of the
//! cooperative consumer took 1086 cycles against 1024 of tensor-core
//! work, 1070 with the copies left out but the handovers kept, 1028 with
//! neither, and the consumers almost never waited for data. Merging two
//! steps took the GEMM from 0.97-0.98x Triton to 0.99-1.01x at 8192³;
//! halving the barrier handovers alone (pairs of slots sharing barriers)
//! gained less than half of that.
//!
//! ```text
//! producer:                                consumer:
//! for %kt = 0 to %ub step 1 {              for %kt = 0 to %ub step 1 iter_args(%acc_2 = ..) {
//!   %a = desc_load %da, %m, 64*%kt           %a, %b = aref.get %ring, %i
//!   %b = desc_load %db, 64*%kt, %n           %acc_3 = dot %a, %b, %acc_2
//!   aref.put %ring, %i, %a, %b               aref.consumed %ring, %i
//! }                                        }
//! ```
//!
//! becomes, for `f = 2`, loops of step 2 copying boxes of 128 along K
//! into `aref<D/2 x (tensor<128x128>, tensor<128x256>)>` and one
//! 128x256x128 dot an iteration. The dot's WGMMAs run in the same K
//! order into the same accumulator, so the sums are the same.
//!
//! When the trip count `t` is not a multiple of `f`, the merged loops
//! start `p = (f - t % f) % f` steps early, at step `-p` (`range(-p, t,
//! f)`: as many iterations as `cdiv(t, f)`), so that the first box reaches
//! `p` steps before K's start. TMA reads those as zeros in both operands
//! (coordinates are signed; the full box still counts toward the slot's
//! bytes), and products of zeros add nothing to the accumulator: the
//! spare steps' tensor-core work is spent on them. Starting early, not
//! running past the end, keeps this right whatever the loop's bound: a
//! loop up to `K // BLOCK_K`, or over a `K` that is not the descriptor's
//! extent (tutorial 09's host descriptors), would read values inside the
//! tensor past its end. The loops must run from 0 by 1 with each copy's
//! K coordinate `W * %kt` (`W` the K of its tile), or from 0 by `W` with
//! the coordinate `%k` (`range(0, K, BLOCK_K)`). The ring must qualify
//! as for [`crate::slot_split`] (one
//! put in a loop, its tiles straight from TMA copies; one get and release
//! in another, its tiles read only by dots), the loops may carry nothing
//! but the slot counter (and the consumer's accumulators), the consumer's
//! loop do nothing but get, multiply the slot's tiles into sums it
//! carries, and release, and the ring keep at least two slots.
//!
//! By default a ring read by a consumer of two or more warpgroups (the
//! cooperative GEMM, which keeps no WGMMA group in flight) merges 2 steps
//! a slot where the merged slots other than the one being read hold at
//! least [`LOOKAHEAD_FLOPS`] of tensor-core work, so that a slot's copies
//! land before the consumers reach it; an odd depth is rounded up to
//! whole merged slots where shared memory has room and the depth holds
//! the cooperative rule's extra slot of [`crate::aref_depth`], the
//! compiler's own slack (not where it came from `num_stages` alone, whose
//! N would then compile as N + 1, nor from `--aref-depth`). A consumer of
//! one warpgroup keeps a group
//! in flight, which holds two slots, and is left alone. On the H100 (same
//! source, against Triton 3.6 in one process, `bench/RESULTS.md`):
//! - the 128x256x64 GEMM's 4 slots, 2 merged: from 0.97-0.98x to
//!   0.99-1.01x at 8192³ (fp16, bf16, tutorial 03), from 0.96x to
//!   0.97-0.98x at K = 16384, within 1% at 4096³ and K = 1024; the
//!   kernel-built descriptor GEMM and the GeGLU dual GEMM gained 0.5-1%;
//! - the 128x128x64 GEMMs of 8 warps, 5 slots rounded up to 6, 3 merged:
//!   matmul 8192³ from 1.16x to 1.22x, the GEMM with a row reduction
//!   from 1.03-1.04x to 1.09x, the batched GEMM level; 2 merged slots
//!   of the same ring (4 steps) fell to 0.99x.
//!
//! `--slot-merge N` asks for `N` steps a slot wherever a ring qualifies at
//! its depth (`--slot-merge 1`: none); `--explain` says which rings merged
//! or why not. Under `--mma-depth`, `--slot-split`, `--tile-pingpong` or
//! `--tma-multicast` the default is 1 ([`crate::pipeline`]): CTA pairs
//! measured 2-4% slower merged on the 128x256x64 GEMM.

use tawa_ir::function::{Op, Value};
use tawa_ir::{BinaryOp, Function, OpKind, Type};

use crate::aref_depth::SmemModel;
use crate::slot_split::{candidate, rebox, reshape_ring, ring_depth, ring_name, rings, Candidate};
use crate::Schedule;

/// How many K steps a slot is to hold, and who said so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// `--slot-merge N`: wherever a ring qualifies, at its depth.
    Asked(u32),
    /// The default (module docs): 2 where a ring is read by two or more
    /// warpgroups and its merged slots keep [`LOOKAHEAD_FLOPS`] of work
    /// ahead. `smem` is the kernel's shared memory by ring depth where
    /// the depth holds a slot of the compiler's own beyond `num_stages`'s
    /// (the cooperative rule's extra slot of [`crate::aref_depth`]) and
    /// was not asked for (`None` otherwise, or without a model): an odd
    /// depth is rounded up to whole merged slots only there, and where
    /// that fits.
    Default { smem: Option<SmemModel> },
}

/// Tensor-core work (flops) the merged slots must hold ahead of the one a
/// consumer reads, so that the producer's copies into a released slot
/// land before the consumers need it: 2048 cycles of an H100 SM's dense
/// fp16 rate, the 128x256x128 slot of a merged 128x256x64 GEMM. Measured
/// on the H100 (same source against Triton 3.6, `bench/RESULTS.md`):
/// merging the 128x128x64 GEMM's ring into 2 slots (one slot of 4 Mi
/// flops ahead) took it from 1.16x to 0.99x Triton, into 3 slots (8 Mi
/// flops ahead) to 1.22x; the 128x256x64 GEMM's 2 merged slots (8 Mi
/// ahead) gained 2-3%.
pub const LOOKAHEAD_FLOPS: u64 = 8 << 20;

/// The default's plan for a ring of `depth` slots (K steps) of
/// `slot_flops` each, read by a partition of `consumer_warps` warps:
/// `Ok((steps a slot, slots))`, or why not (`None`: nothing to say,
/// a consumer of one warpgroup). `room`: the deepest ring that fits, when
/// the depth may be rounded up ([`Merge::Default`]).
pub fn default_plan(
    depth: u32,
    consumer_warps: u32,
    slot_flops: u64,
    room: Option<u32>,
) -> Result<(u32, u32), Option<String>> {
    // A consumer of one warpgroup keeps a WGMMA group in flight, which
    // holds two slots: a merged ring would stall its producer.
    if consumer_warps < 8 {
        return Err(None);
    }
    let steps = 2u32;
    let slots = depth.div_ceil(steps);
    if slots < 2 {
        return Err(Some(format!(
            "{depth} slot(s) do not make 2 slots of {steps} K steps"
        )));
    }
    if slots * steps > depth && room.is_none_or(|r| slots * steps > r) {
        return Err(Some(format!(
            "{slots} slots of {steps} K steps would round the depth {depth} up to {}, {}",
            slots * steps,
            if room.is_none() {
                "and only a depth the compiler chose beyond num_stages's (the cooperative \
                 rule's extra slot, no --aref-depth) is rounded up"
            } else {
                "which does not fit in shared memory"
            }
        )));
    }
    let ahead = u64::from(slots.saturating_sub(1)) * u64::from(steps) * slot_flops;
    if ahead < LOOKAHEAD_FLOPS {
        return Err(Some(format!(
            "{slots} slots of {steps} K steps would keep {:.1} Mi flops of tensor-core work \
             ahead of the slot being read, under the {} Mi that cover a copy",
            ahead as f64 / f64::from(1 << 20),
            LOOKAHEAD_FLOPS >> 20
        )));
    }
    Ok((steps, slots))
}

/// Merges K steps into each slot of every ring that qualifies (module
/// docs), noting each ring's outcome. Returns the rings merged and how
/// many slots (of one K step) the default added to round a depth up.
pub fn slot_merge(func: &mut Function, merge: Merge, schedule: &mut Schedule) -> (Vec<Value>, u32) {
    let mut merged = Vec::new();
    let mut added = 0;
    if merge == Merge::Asked(1) {
        return (merged, added);
    }
    for (create, ring) in rings(func) {
        let loc = func.ops[create].loc;
        let name = ring_name(func, ring);
        let Ok(c) = candidate(func, ring) else {
            if let Merge::Asked(_) = merge {
                let why = candidate(func, ring).err().unwrap_or_default();
                schedule.note(loc, format!("aref %{name}: one K step a slot: {why}"));
            }
            continue;
        };
        let depth = ring_depth(func, ring);
        let plan = match merge {
            Merge::Asked(n) if depth % n != 0 || depth / n < 2 => Err(Some(format!(
                "{depth} slots do not make at least 2 slots of {n} K steps"
            ))),
            Merge::Asked(n) => Ok((n, depth / n, format!("--slot-merge {n}"))),
            Merge::Default { smem } => {
                let warps = partition_warps(func, c.consumer_loop).unwrap_or(0);
                let flops = crate::aref_depth::slot_tensor_flops(func).unwrap_or(0);
                let room = smem.map(|m| m.max_depth());
                default_plan(depth, warps, flops, room).map(|(steps, slots)| {
                    let rounded = if slots * steps > depth {
                        let bytes = smem.and_then(|m| m.bytes(slots * steps)).unwrap_or(0);
                        format!(
                            ", {depth} slots rounded up to {} ({} KiB of shared memory)",
                            slots * steps,
                            bytes.div_ceil(1024)
                        )
                    } else {
                        String::new()
                    };
                    let why = format!(
                        "the default for a ring read by {} warpgroups{rounded}; \
                         --slot-merge 1 keeps one",
                        warps / 4
                    );
                    (steps, slots, why)
                })
            }
        };
        let (steps, slots, why_steps) = match plan {
            Ok(plan) => plan,
            Err(why) => {
                if let Some(why) = why {
                    schedule.note(loc, format!("aref %{name}: one K step a slot: {why}"));
                }
                continue;
            }
        };
        if let Err(why) = check_merge(func, &c) {
            schedule.note(loc, format!("aref %{name}: one K step a slot: {why}"));
            continue;
        }
        added += (slots * steps).saturating_sub(depth);
        apply(func, &c, steps, slots);
        let ahead = u64::from(slots - 1) * crate::aref_depth::slot_tensor_flops(func).unwrap_or(0);
        schedule.note(
            loc,
            format!(
                "aref %{name}: {steps} K steps a slot ({why_steps}): {slots} slots, the loops \
                 running one iteration a {steps} steps, one handover a slot, {:.1} Mi flops \
                 of tensor-core work ahead of the slot being read",
                ahead as f64 / f64::from(1 << 20)
            ),
        );
        merged.push(ring);
    }
    (merged, added)
}

/// The warps of the `ws` partition whose region holds `op`.
fn partition_warps(func: &Function, op: Op) -> Option<u32> {
    let mut op = op;
    loop {
        let block = func.block_of(op)?;
        let parent = func.blocks[block].parent?;
        if let OpKind::WarpSpecialize { partitions } = &func.ops[parent].kind {
            let region = func.ops[parent].regions.iter().position(|&r| r == block)?;
            return partitions.get(region).map(|p| p.num_warps);
        }
        op = parent;
    }
}

/// `v` with integer casts and multiplications by 1 looked through: the
/// frontend writes an extent `K` as `1 * (i64) K`.
fn strip(func: &Function, mut v: Value) -> Value {
    loop {
        let Some(op) = func.def_op(v) else { return v };
        let data = &func.ops[op];
        v = match data.kind {
            OpKind::Cast { .. } if is_int(func, data.operands[0]) && is_int(func, v) => {
                data.operands[0]
            }
            OpKind::Binary(BinaryOp::Mul)
                if crate::const_int(func, data.operands[0]) == Some(1) =>
            {
                data.operands[1]
            }
            OpKind::Binary(BinaryOp::Mul)
                if crate::const_int(func, data.operands[1]) == Some(1) =>
            {
                data.operands[0]
            }
            _ => return v,
        };
    }
}

fn is_int(func: &Function, v: Value) -> bool {
    func.ty(v).scalar_type().is_some_and(|s| s.is_int()) && func.ty(v).shape().is_empty()
}

/// Whether `coord` is `w * %iv` (either order, casts looked through).
fn is_scaled_iv(func: &Function, coord: Value, iv: Value, w: i64) -> bool {
    let Some(mul) = func.def_op(coord) else {
        return false;
    };
    let mul = &func.ops[mul];
    if !matches!(mul.kind, OpKind::Binary(BinaryOp::Mul)) {
        return false;
    }
    let [x, y] = [mul.operands[0], mul.operands[1]];
    (crate::const_int(func, x) == Some(w) && strip(func, y) == iv)
        || (crate::const_int(func, y) == Some(w) && strip(func, x) == iv)
}

/// How a loop over K counts: `for %kt = 0 to cdiv(E, W) step 1` with
/// the copies at `W * %kt`, or `for %k = 0 to E step W` with the copies at
/// `%k` (`range(0, K, BLOCK_K)`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoopForm {
    Tiles,
    Offsets,
}

/// The form of `the_loop` (a ring's producer or consumer loop): from 0
/// by 1, or by the K `W` of every copied tile.
fn loop_form(
    func: &Function,
    the_loop: Op,
    copies: &[(Op, usize, i64)],
) -> Result<LoopForm, String> {
    let [lb, step] = [0, 2].map(|i| func.ops[the_loop].operands[i]);
    if crate::const_int(func, lb) != Some(0) {
        return Err("a loop does not start at 0".into());
    }
    match crate::const_int(func, step) {
        Some(1) => Ok(LoopForm::Tiles),
        Some(s) if copies.iter().all(|&(_, _, w)| s == w) => Ok(LoopForm::Offsets),
        Some(_) => Err("a loop's step is neither 1 nor the K of every copied tile".into()),
        None => Err("a loop's step is not a constant".into()),
    }
}

/// Whether the ring's loops and copies allow merging `steps` K steps a
/// slot (module docs).
fn check_merge(func: &Function, c: &Candidate) -> Result<(), String> {
    let Type::Aref { buffers, .. } = func.ty(c.ring) else {
        return Err("internal: not an aref".into());
    };
    // Per copy: its descriptor axis along K and the tile's K.
    let copies: Vec<(Op, usize, i64)> = c
        .buffers
        .iter()
        .zip(buffers)
        .map(|(&(axis, load, desc_axis), ty)| (load, desc_axis, i64::from(ty.shape()[axis])))
        .collect();
    // Both loops from 0, one tile a step.
    let producer_form = loop_form(func, c.producer_loop, &copies)?;
    if loop_form(func, c.consumer_loop, &copies)? != producer_form {
        return Err("the producer's and the consumer's loops step differently".into());
    }
    // The K coordinate of each copy is W * %kt (or %k), and nothing else
    // the producer computes depends on it.
    let producer_body = func.ops[c.producer_loop].regions[0];
    let iv = func.blocks[producer_body].args[0];
    let mut on_iv = vec![iv];
    for &op in &func.blocks[producer_body].ops {
        if func.ops[op].operands.iter().any(|v| on_iv.contains(v)) {
            on_iv.extend(func.ops[op].results.iter().copied());
        }
    }
    for &(load, desc_axis, w) in &copies {
        let coords = &func.ops[load].operands[1..];
        let k = coords[desc_axis];
        match producer_form {
            LoopForm::Tiles if !is_scaled_iv(func, k, iv, w) => {
                return Err(format!(
                    "a copy's K coordinate is not {w} * the loop's induction variable"
                ));
            }
            LoopForm::Offsets if strip(func, k) != iv => {
                return Err("a copy's K coordinate is not the loop's induction variable".into());
            }
            _ => {}
        }
        if coords
            .iter()
            .enumerate()
            .any(|(d, v)| d != desc_axis && on_iv.contains(v))
        {
            return Err(
                "a copy's other coordinates depend on the loop's induction variable".into(),
            );
        }
    }
    let put = crate::value_uses(func, c.ring)
        .into_iter()
        .find(|(o, i)| *i == 0 && matches!(func.ops[*o].kind, OpKind::ArefPut))
        .map(|(o, _)| o)
        .expect("the candidate's put");
    if !func.blocks[producer_body].args[1..].contains(&func.ops[put].operands[1]) {
        return Err("the slot index is not a counter the producer's loop carries".into());
    }
    // What the loops carry, and what the consumer's loop does.
    if func.blocks[producer_body].args.len() != 2 {
        return Err("the producer's loop carries more than the slot counter".into());
    }
    let consumer_body = func.ops[c.consumer_loop].regions[0];
    let body = &func.blocks[consumer_body];
    // The slot's tiles as the consumer reads them, transposed or not.
    let views: Vec<(Value, Value)> = body
        .ops
        .iter()
        .filter(|&&o| matches!(func.ops[o].kind, OpKind::ArefGet))
        .flat_map(|&o| crate::slot_split::slot_views(func, o))
        .collect();
    let tiles: Vec<Value> = views.iter().map(|&(_, view)| view).collect();
    let yielded = body
        .ops
        .last()
        .filter(|&&o| matches!(func.ops[o].kind, OpKind::Yield))
        .map(|&o| func.ops[o].operands.clone())
        .unwrap_or_default();
    for &op in &body.ops {
        let data = &func.ops[op];
        let ok = match &data.kind {
            OpKind::ArefGet | OpKind::ArefConsumed => data.operands[0] == c.ring,
            OpKind::Constant(_) | OpKind::Yield => true,
            OpKind::Trans { .. } => views.iter().any(|&(t, v)| v == data.results[0] && t != v),
            // The slot counter's increment; an add on tiles would see
            // one step's tile where the merged slot holds several.
            OpKind::Binary(BinaryOp::Add) => is_int(func, data.results[0]),
            OpKind::Dot { .. } => {
                // The merged dot sums `steps` K steps into the same
                // accumulator, which is what the loop computes only when
                // it multiplies the slot's own tiles and carries the sum
                // from one iteration to the next.
                let acc = data.operands[2];
                let carried = body.args[1..].iter().position(|&a| a == acc);
                if !tiles.contains(&data.operands[0]) || !tiles.contains(&data.operands[1]) {
                    return Err("a dot of the consumer's loop multiplies other values than \
                                the slot's tiles"
                        .into());
                }
                if carried.is_none_or(|i| yielded.get(i) != Some(&data.results[0])) {
                    return Err(
                        "a dot of the consumer's loop does not accumulate into a sum \
                                the loop carries, so merged steps would add up what one \
                                step computes"
                            .into(),
                    );
                }
                true
            }
            _ => false,
        };
        if !ok {
            return Err(format!(
                "the consumer's loop does `{}` besides getting, multiplying and releasing",
                tawa_ir::printer::op_name(&data.kind)
            ));
        }
    }
    let uses_iv = |body| {
        let iv = func.blocks[body].args[0];
        func.blocks[body]
            .ops
            .iter()
            .any(|&o| func.ops[o].operands.contains(&iv))
    };
    if uses_iv(consumer_body) {
        return Err("the consumer's loop reads its induction variable".into());
    }
    Ok(())
}

fn apply(func: &mut Function, c: &Candidate, steps: u32, slots: u32) {
    let buffers = reshape_ring(func, c, |_| slots, |k| k * steps);
    for (b, &(_, load, axis)) in c.buffers.iter().enumerate() {
        rebox(func, load, axis, buffers[b].clone(), |k| k * steps);
    }
    for the_loop in [c.producer_loop, c.consumer_loop] {
        let parent = func.block_of(the_loop).expect("placed");
        let at = crate::mma_pipeline::position(func, parent, the_loop);
        let [ub, step] = [1, 2].map(|i| func.ops[the_loop].operands[i]);
        let old = crate::const_int(func, step).expect("checked: a constant step");
        let ty = func.ty(step).clone();
        let loc = func.ops[the_loop].loc;
        let mut at = at;
        let mut before = |func: &mut Function, kind: OpKind, operands: Vec<Value>| {
            let v = func.insert_value(parent, at, kind, operands, ty.clone(), loc);
            at += 1;
            v
        };
        let int = crate::slot_split::int;
        let bin = |b: BinaryOp| OpKind::Binary(b);
        let new_step = before(func, int(old * i64::from(steps)), vec![]);
        // The trip count t (cdiv(ub, W) in steps of W), and the loop's
        // early start -p * step with p = (f - t % f) % f (module docs).
        let w = (old != 1).then(|| before(func, int(old), vec![]));
        let trips = match w {
            None => ub,
            Some(w) => {
                let w_less_1 = before(func, int(old - 1), vec![]);
                let up = before(func, bin(BinaryOp::Add), vec![ub, w_less_1]);
                before(func, bin(BinaryOp::IDiv), vec![up, w])
            }
        };
        let f = before(func, int(i64::from(steps)), vec![]);
        let rem = before(func, bin(BinaryOp::Rem), vec![trips, f]);
        let short = before(func, bin(BinaryOp::Sub), vec![f, rem]);
        let pad = before(func, bin(BinaryOp::Rem), vec![short, f]);
        let pad = match w {
            None => pad,
            Some(w) => before(func, bin(BinaryOp::Mul), vec![pad, w]),
        };
        let zero = before(func, int(0), vec![]);
        let start = before(func, bin(BinaryOp::Sub), vec![zero, pad]);
        func.ops[the_loop].operands[0] = start;
        func.ops[the_loop].operands[2] = new_step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2·M·N·K of one K step of a BM x BN x 64 tile.
    fn step_flops(bm: u64, bn: u64) -> u64 {
        2 * bm * bn * 64
    }

    /// The default's plans for the rings measured on the H100 (module
    /// docs): the 128x256x64 GEMM's 4 slots merge into 2; the 128x128x64
    /// GEMM's 5 slots merge into 3 where 6 fit, not into 2; a consumer of
    /// one warpgroup and a ring of too few slots are left alone.
    #[test]
    fn the_default_keeps_enough_work_ahead() {
        assert_eq!(default_plan(4, 8, step_flops(128, 256), None), Ok((2, 2)));
        assert_eq!(
            default_plan(5, 8, step_flops(128, 128), Some(6)),
            Ok((2, 3))
        );
        assert_eq!(default_plan(6, 8, step_flops(128, 128), None), Ok((2, 3)));
        // 2 merged slots of 128x128: 4 Mi flops ahead.
        let short = default_plan(4, 8, step_flops(128, 128), Some(6));
        assert!(
            matches!(&short, Err(Some(why)) if why.contains("4.0 Mi")),
            "{short:?}"
        );
        // No room to round 5 up, or not the compiler's depth to round.
        for room in [Some(5), None] {
            let why = default_plan(5, 8, step_flops(128, 128), room);
            assert!(matches!(&why, Err(Some(w)) if w.contains("round the depth 5 up to 6")));
        }
        // The 128x256 GEMM at num_stages 2 (3 slots) is not rounded up
        // when the depth is num_stages's own.
        assert!(default_plan(3, 8, step_flops(128, 256), None).is_err());
        assert_eq!(default_plan(4, 4, step_flops(128, 256), None), Err(None));
        assert!(matches!(
            default_plan(2, 8, step_flops(128, 256), Some(8)),
            Err(Some(_))
        ));
    }
}
