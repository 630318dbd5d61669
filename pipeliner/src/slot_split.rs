//! `slot_split`: each slot of a GEMM's ring holds a part of a K step.
//!
//! A cooperative consumer (two warpgroups splitting each tile's rows)
//! releases a slot only after the WGMMA groups reading it retire. With no
//! group kept in flight the tensor core idles while both warpgroups wait
//! for their groups and issue the next ones; with one in flight
//! ([`crate::mma_pipeline`]) the consumer holds two slots, and a ring of
//! four 48 KiB slots (the 128x256x64 GEMM, all that fits in shared
//! memory) keeps the producer only two K steps ahead instead of three.
//! Splitting every slot in `f` along K keeps both: the ring has `f` times
//! the slots, each `1/f` of the bytes (the same shared memory), the loops
//! run `f` times the iterations, each copying and multiplying `1/f` of a
//! K step, and one group in flight holds only `1/f` of a step beside the
//! slot being read.
//!
//! Off by default (`--slot-split N` asks): on the H100 it measured no
//! faster, and on some kernels much slower. The 128x256x64 GEMM at
//! 8192^3 (`tawa-rs bench`, against cuBLAS in each process, two rounds):
//! 0.961 / 0.957 split with one group in flight, 0.964 / 0.967 whole
//! slots with none, 0.967 / 0.965 whole with one. The same tiles copied
//! through host descriptors in row-major tile order: 0.85 / 0.84 split
//! against 0.85 / 0.95 whole; the unmasked GLU dual GEMM 0.87 / 0.89
//! against 0.99 / 0.99. The part's copies of a K-major operand are rows
//! of 64 bytes, half a 128-byte line (`bench/RESULTS.md`).
//!
//! ```text
//! producer:                                consumer:
//! for %kt = %lb to %ub step %s {           for %kt = %lb to %ub step %s iter_args(%acc_2 = ..) {
//!   %a = desc_load %da, %m, 64*%kt           %a, %b = aref.get %ring, %i
//!   %b = desc_load %db, 64*%kt, %n           %acc_3 = dot %a, %b, %acc_2
//!   aref.put %ring, %i, %a, %b               aref.consumed %ring, %i
//! }                                        }
//! ```
//!
//! becomes, for `f = 2` (`%j` the new induction variable, `%kt` computed
//! from it as `%lb + (%j / 2) * %s` and `%h = %j % 2`):
//!
//! ```text
//! for %j = 0 to 2 * trips step 1 {         for %j = 0 to 2 * trips step 1 iter_args(..) {
//!   %a = desc_load %da', %m, 64*%kt + 32*%h  %a, %b = aref.get %ring, %i   // 128x32, 32x256
//!   %b = desc_load %db', 64*%kt + 32*%h, %n  %acc_3 = dot %a, %b, %acc_2
//!   aref.put %ring, %i, %a, %b               aref.consumed %ring, %i
//! }                                        }
//! ```
//!
//! with descriptors `%da'`, `%db'` of the split boxes and the ring
//! `aref<2D x (tensor<128x32>, tensor<32x256>)>`. Each part accumulates
//! into the same accumulator in K order, so the sums are the same; a copy
//! past the tensor's K extent reads zeros (TMA), as the whole box's did.
//!
//! A ring splits when its one `aref.put` sits in a loop and takes tiles
//! straight from `desc_load`s of descriptors a `make_tensor_desc` of the
//! kernel builds (what TMA inference, `tl.make_tensor_descriptor` and a
//! host `TensorDescriptor` parameter become: the launcher encodes each
//! one's tensor map with the box its type gives), its one `aref.get` and
//! `aref.consumed` sit in another loop, and the slot's tiles are read
//! only as the operands of `dot`s both of whose operands come from the
//! slot (the K axis of each tile is then known: the last of a left
//! operand, the first of a right one). Each part's K must be a whole
//! number of 32-byte chunks and at least 64 bytes (a TMA box row that
//! keeps a 64-byte swizzle, and whole WGMMA K steps).
//!
//! `--slot-split N` asks for `N` parts wherever a ring qualifies; the
//! loops reading a split ring keep one WGMMA group in flight unless
//! `--mma-depth` says otherwise (a part's group in flight is what the
//! split is for).

use tawa_ir::function::{Block, Op, Value};
use tawa_ir::{BinaryOp, ConstValue, Function, OpKind, Type};

use crate::aref_depth::one_slot_rings;
use crate::Schedule;

/// A ring that can split (or merge, [`crate::slot_merge`]), and where.
pub(crate) struct Candidate {
    pub(crate) ring: Value,
    pub(crate) producer_loop: Op,
    pub(crate) consumer_loop: Op,
    /// Per buffer of the ring: its K axis, the `desc_load` filling it and
    /// the K axis of that load's descriptor (a copy may drop size-1 boxes
    /// dimensions: a batched GEMM's `[1, 128, 64]` box fills a 128x64
    /// tile).
    pub(crate) buffers: Vec<(usize, Op, usize)>,
}

/// Splits the slots of every ring that qualifies (module docs) into
/// `parts`, noting each ring's outcome. Returns the rings split.
pub fn slot_split(func: &mut Function, parts: u32, schedule: &mut Schedule) -> Vec<Value> {
    let mut split = Vec::new();
    if parts <= 1 {
        return split;
    }
    for (create, ring) in rings(func) {
        let loc = func.ops[create].loc;
        let name = ring_name(func, ring);
        let checked = candidate(func, ring).and_then(|c| check_parts(func, &c, parts).map(|()| c));
        let c = match checked {
            Ok(c) => c,
            Err(why) => {
                schedule.note(loc, format!("aref %{name}: slots kept whole: {why}"));
                continue;
            }
        };
        apply(func, &c, parts);
        let depth = ring_depth(func, ring);
        schedule.note(
            loc,
            format!(
                "aref %{name}: each slot split in {parts} along K (--slot-split {parts}): \
                 {depth} slots of 1/{parts} of a K step, the loops running {parts} iterations a \
                 step"
            ),
        );
        split.push(ring);
    }
    split
}

/// A ring's name in `--explain`'s notes.
pub(crate) fn ring_name(func: &Function, ring: Value) -> String {
    func.values[ring]
        .name
        .clone()
        .unwrap_or_else(|| "ring".into())
}

/// A ring's slots.
pub(crate) fn ring_depth(func: &Function, ring: Value) -> u32 {
    match func.ty(ring) {
        Type::Aref { depth, .. } => *depth,
        _ => unreachable!("a ring is an aref"),
    }
}

/// The streaming rings of `func` (not the one-slot ones), with their
/// `aref.create`s.
pub(crate) fn rings(func: &Function) -> Vec<(Op, Value)> {
    let one_slot = one_slot_rings(func);
    let mut found = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::ArefCreate) {
            let ring = func.ops[op].results[0];
            if !one_slot.contains(&ring) {
                found.push((op, ring));
            }
        }
    });
    found
}

/// The `for` op whose body block directly holds `op`.
fn enclosing_loop(func: &Function, op: Op) -> Option<(Op, Block)> {
    let block = func.block_of(op)?;
    let parent = func.blocks[block].parent?;
    matches!(func.ops[parent].kind, OpKind::For(_)).then_some((parent, block))
}

pub(crate) fn candidate(func: &Function, ring: Value) -> Result<Candidate, String> {
    let Type::Aref { buffers, .. } = func.ty(ring).clone() else {
        return Err("internal: aref.create of a non-aref".into());
    };
    let ring_uses = crate::value_uses(func, ring);
    let of = |k: fn(&OpKind) -> bool| -> Vec<Op> {
        ring_uses
            .iter()
            .filter(|(o, i)| *i == 0 && k(&func.ops[*o].kind))
            .map(|(o, _)| *o)
            .collect()
    };
    let puts = of(|k| matches!(k, OpKind::ArefPut));
    let gets = of(|k| matches!(k, OpKind::ArefGet));
    let releases = of(|k| matches!(k, OpKind::ArefConsumed));
    let ([put], [get], [consumed]) = (puts.as_slice(), gets.as_slice(), releases.as_slice()) else {
        return Err("the ring is not put, got and released once each".into());
    };
    let (producer_loop, _) =
        enclosing_loop(func, *put).ok_or("the ring is not put in a loop's body")?;
    let (consumer_loop, body) =
        enclosing_loop(func, *get).ok_or("the ring is not got in a loop's body")?;
    if func.block_of(*consumed) != Some(body) {
        return Err("the slot is released outside the loop that gets it".into());
    }
    for l in [producer_loop, consumer_loop] {
        match crate::const_int(func, func.ops[l].operands[2]) {
            Some(s) if s > 0 => {}
            _ => return Err("a loop's step is not a positive constant".into()),
        }
    }
    if func.ops[*consumed].operands[1] != func.ops[*get].operands[1] {
        return Err("the slot is released by another index than it was got with".into());
    }
    for (op, l) in [(*put, producer_loop), (*get, consumer_loop)] {
        if !counts_iterations(func, l, func.ops[op].operands[1]) {
            return Err(
                "a slot index is carried by the loop but not advanced by 1 an iteration".into(),
            );
        }
    }

    let axes = slot_dot_axes(func, *get)?;

    // The desc_load filling each buffer.
    let mut filled = Vec::new();
    for (b, (&axis, ty)) in axes.iter().zip(&buffers).enumerate() {
        let v = func.ops[*put].operands[2 + b];
        let load = func
            .def_op(v)
            .filter(|&o| matches!(func.ops[o].kind, OpKind::DescLoad { .. }))
            .ok_or("a tile put in the slot is not a descriptor load (a TMA copy)")?;
        if crate::value_uses(func, v).len() != 1 {
            return Err("a copied tile is used besides the put".into());
        }
        let desc = func.ops[load].operands[0];
        let made = func
            .def_op(desc)
            .is_some_and(|o| matches!(func.ops[o].kind, OpKind::MakeTensorDesc));
        if !made {
            return Err(
                "a copy reads a descriptor no `make_tensor_desc` of the kernel builds".into(),
            );
        }
        if ty.shape().len() != 2 || func.ty(v) != ty {
            return Err("a copied tile is not the slot's 2-D buffer".into());
        }
        let Type::TensorDesc { block, .. } = func.ty(desc) else {
            return Err("internal: a desc_load of a non-descriptor".into());
        };
        let desc_axis = descriptor_axis(block, ty.shape(), axis)
            .ok_or("a copy's box is not the tile with size-1 dimensions added")?;
        filled.push((axis, load, desc_axis));
    }
    Ok(Candidate {
        ring,
        producer_loop,
        consumer_loop,
        buffers: filled,
    })
}

/// Whether `index`, a ring's slot index in `the_loop`, is either
/// computed in the iteration or carried and advanced by 1 an iteration
/// (the forms [`index_parts`] knows).
fn counts_iterations(func: &Function, the_loop: Op, index: Value) -> bool {
    let body = func.ops[the_loop].regions[0];
    let args = &func.blocks[body].args;
    let Some(p) = args.iter().position(|&a| a == index) else {
        return true;
    };
    if p == 0 {
        return true; // the induction variable itself: computed from the step
    }
    let Some(&yield_op) = func.blocks[body].ops.last() else {
        return false;
    };
    let Some(&next) = func.ops[yield_op].operands.get(p - 1) else {
        return false;
    };
    let Some(add) = func.def_op(next) else {
        return false;
    };
    let data = &func.ops[add];
    matches!(data.kind, OpKind::Binary(BinaryOp::Add))
        && (data.operands == [index, data.operands[1]]
            && crate::const_int(func, data.operands[1]) == Some(1)
            || data.operands == [data.operands[0], index]
                && crate::const_int(func, data.operands[0]) == Some(1))
}

/// The K axis of each tile `get` borrows, when every one is read only as
/// an operand of dots whose two operands both come from the slot (a
/// GEMM's slot), directly or through a 2-D transpose (a column-major
/// operand copied as it lies, or `tl.dot(x, w.T)`): the last of a left
/// operand, the first of a right one, swapped through a transpose. `Err`
/// says why not.
pub(crate) fn slot_dot_axes(func: &Function, get: Op) -> Result<Vec<usize>, String> {
    let results = &func.ops[get].results;
    let views = slot_views(func, get);
    let from_slot = |v: &Value| views.iter().any(|&(_, view)| view == *v);
    let mut axes = Vec::new();
    for &r in results {
        let mut axis = None;
        for &(tile, view) in views.iter().filter(|&&(tile, _)| tile == r) {
            let transposed = view != tile;
            let uses = crate::value_uses(func, view);
            if transposed && uses.is_empty() {
                return Err("a transpose of a tile of the slot is not read".into());
            }
            for (user, pos) in uses {
                let both_from_slot = matches!(func.ops[user].kind, OpKind::Dot { .. })
                    && func.ops[user].operands[..2].iter().all(from_slot);
                let this = match pos {
                    0 if both_from_slot => 1,
                    1 if both_from_slot => 0,
                    _ => {
                        let tile = if transposed {
                            "a transpose of a tile"
                        } else {
                            "a tile"
                        };
                        let reader = match func.ops[user].kind {
                            OpKind::Dot { .. } => {
                                "a dot whose other operand does not come from the slot".to_string()
                            }
                            ref kind => format!("`{}`", tawa_ir::printer::op_name(kind)),
                        };
                        return Err(format!(
                            "{tile} of the slot is read by {reader}; only dots of two of the \
                             slot's tiles qualify"
                        ));
                    }
                };
                let this = if transposed { 1 - this } else { this };
                if axis.is_some_and(|a| a != this) {
                    return Err("a tile of the slot is both a left and a right dot operand".into());
                }
                axis = Some(this);
            }
        }
        axes.push(axis.ok_or("a tile of the slot is not read by a dot")?);
    }
    Ok(axes)
}

/// The tiles `get` borrows and how the consumer sees them: each tile as
/// `(tile, tile)`, and each 2-D transpose of a 2-D tile (`trans` with
/// `perm = [1, 0]`) as `(tile, transpose)`. A tile read by anything else
/// is paired with itself, which [`slot_dot_axes`] checks.
pub(crate) fn slot_views(func: &Function, get: Op) -> Vec<(Value, Value)> {
    let mut views = Vec::new();
    for &r in &func.ops[get].results {
        let mut direct = false;
        for (user, _) in crate::value_uses(func, r) {
            let data = &func.ops[user];
            match &data.kind {
                OpKind::Trans { perm } if perm[..] == [1, 0] && data.results.len() == 1 => {
                    views.push((r, data.results[0]));
                }
                _ => direct = true,
            }
        }
        if direct || views.iter().all(|&(t, _)| t != r) {
            views.push((r, r));
        }
    }
    views
}

/// The axis of descriptor box `block` that is axis `axis` of `tile`:
/// the same when the ranks agree, else counting only the box's
/// dimensions other than 1 (those the copy drops).
fn descriptor_axis(block: &[u32], tile: &[u32], axis: usize) -> Option<usize> {
    if block.len() == tile.len() {
        return (block == tile).then_some(axis);
    }
    let kept: Vec<usize> = (0..block.len()).filter(|&d| block[d] != 1).collect();
    let same = kept.len() == tile.len() && kept.iter().zip(tile).all(|(&d, &t)| block[d] == t);
    same.then(|| kept[axis])
}

/// Whether each buffer's K splits in `parts` (module docs).
fn check_parts(func: &Function, c: &Candidate, parts: u32) -> Result<(), String> {
    let Type::Aref { buffers, .. } = func.ty(c.ring) else {
        return Err("internal: not an aref".into());
    };
    for ((axis, _, _), ty) in c.buffers.iter().zip(buffers) {
        let k = ty.shape()[*axis];
        let elem = ty.scalar_type().map_or(4, |s| s.byte_size()).max(1);
        if k % parts != 0 {
            return Err(format!("K = {k} of a tile does not split in {parts}"));
        }
        let part_bytes = k / parts * elem;
        if part_bytes % 32 != 0 || part_bytes < 64 {
            return Err(format!(
                "1/{parts} of a tile's K ({} elements, {part_bytes} bytes) is not a whole \
                 number of 32-byte chunks of at least 64 bytes",
                k / parts
            ));
        }
    }
    Ok(())
}

/// Gives `c`'s ring `depth(d)` slots whose buffers are `k(K)` deep along
/// their K axes, the consumer's views of the slot too; returns the new
/// buffer types.
pub(crate) fn reshape_ring(
    func: &mut Function,
    c: &Candidate,
    depth: impl Fn(u32) -> u32,
    k: impl Fn(u32) -> u32,
) -> Vec<Type> {
    if let Type::Aref { depth: d, buffers } = &mut func.values[c.ring].ty {
        *d = depth(*d);
        for ((axis, _, _), ty) in c.buffers.iter().zip(buffers.iter_mut()) {
            if let Type::Tensor { shape, .. } = ty {
                shape[*axis] = k(shape[*axis]);
            }
        }
    }
    let Type::Aref { buffers, .. } = func.ty(c.ring).clone() else {
        unreachable!()
    };
    let get = crate::value_uses(func, c.ring)
        .into_iter()
        .find(|(o, i)| *i == 0 && matches!(func.ops[*o].kind, OpKind::ArefGet))
        .map(|(o, _)| o)
        .expect("the candidate's get");
    for (i, ty) in buffers.iter().enumerate() {
        let r = func.ops[get].results[i];
        func.values[r].ty = ty.clone();
    }
    for (tile, view) in slot_views(func, get) {
        if view != tile {
            let mut ty = func.ty(tile).clone();
            if let Type::Tensor { shape, .. } = &mut ty {
                shape.reverse();
            }
            func.values[view].ty = ty;
        }
    }
    buffers
}

fn apply(func: &mut Function, c: &Candidate, parts: u32) {
    // The ring: `parts` times the slots, each 1/parts of K.
    let buffers = reshape_ring(func, c, |d| d * parts, |k| k / parts);

    let part_of_producer = split_loop(func, c.producer_loop, parts);
    let part_of_consumer = split_loop(func, c.consumer_loop, parts);
    index_parts(func, c.ring, c.producer_loop, part_of_producer, parts);
    index_parts(func, c.ring, c.consumer_loop, part_of_consumer, parts);

    // Each copy: a descriptor of the part's box, and the part's K offset.
    for (b, &(_, load, axis)) in c.buffers.iter().enumerate() {
        let part_desc_ty = rebox(func, load, axis, buffers[b].clone(), |k| k / parts);

        // offset[axis] + part * (K / parts)
        let coord = func.ops[load].operands[1 + axis];
        let coord_ty = func.ty(coord).clone();
        let body = func.block_of(load).expect("placed");
        let at = crate::mma_pipeline::position(func, body, load);
        let loc = func.ops[load].loc;
        let part = cast_to(func, body, at, part_of_producer, &coord_ty, loc);
        let mut at = crate::mma_pipeline::position(func, body, load);
        let Type::TensorDesc { block, .. } = &part_desc_ty else {
            unreachable!()
        };
        let width = i64::from(block[axis]);
        let width = insert_value(func, body, &mut at, int(width), vec![], &coord_ty, loc);
        let mul = binary(BinaryOp::Mul);
        let off = insert_value(func, body, &mut at, mul, vec![part, width], &coord_ty, loc);
        let add = binary(BinaryOp::Add);
        let sum = insert_value(func, body, &mut at, add, vec![coord, off], &coord_ty, loc);
        func.ops[load].operands[1 + axis] = sum;
    }
}

/// Makes copy `load` fill a tile of type `tile`: a descriptor like the
/// one it reads, its box's `axis` resized by `resize`, made beside it
/// (the old one removed when nothing else reads it: it would still be
/// encoded and passed to the kernel). Returns the new descriptor's type.
pub(crate) fn rebox(
    func: &mut Function,
    load: Op,
    axis: usize,
    tile: Type,
    resize: impl Fn(u32) -> u32,
) -> Type {
    let desc = func.ops[load].operands[0];
    let made = func.def_op(desc).expect("a kernel-built descriptor");
    let Type::TensorDesc { elem, mut block } = func.ty(desc).clone() else {
        unreachable!("a desc_load reads a descriptor")
    };
    block[axis] = resize(block[axis]);
    let new_ty = Type::TensorDesc { elem, block };
    let block = func.block_of(made).expect("placed");
    let at = crate::mma_pipeline::position(func, block, made) + 1;
    let operands = func.ops[made].operands.clone();
    let loc = func.ops[made].loc;
    let new_desc = func.insert_value(
        block,
        at,
        OpKind::MakeTensorDesc,
        operands,
        new_ty.clone(),
        loc,
    );
    func.ops[load].operands[0] = new_desc;
    if crate::value_uses(func, desc).is_empty() {
        let at = crate::mma_pipeline::position(func, block, made);
        func.blocks[block].ops.remove(at);
    }
    let out = func.ops[load].results[0];
    func.values[out].ty = tile;
    new_ty
}

/// Makes the ring's slot indices in `the_loop` (split by [`split_loop`])
/// count parts. An index the loop carries (a counter the iteration
/// advances) counts iterations, which are parts now; any other was
/// computed from the step (the loop's old induction variable, now the
/// step index) and becomes `index * parts + part`, the same in the
/// producer's loop and the consumer's, consecutive as before.
fn index_parts(func: &mut Function, ring: Value, the_loop: Op, part: Value, parts: u32) {
    let body = func.ops[the_loop].regions[0];
    let ops: Vec<Op> = func.blocks[body]
        .ops
        .iter()
        .copied()
        .filter(|&o| {
            matches!(
                func.ops[o].kind,
                OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
            ) && func.ops[o].operands[0] == ring
        })
        .collect();
    let mut rewritten: Vec<(Value, Value)> = Vec::new();
    for op in ops {
        let index = func.ops[op].operands[1];
        if func.blocks[body].args.contains(&index) {
            continue;
        }
        if let Some(&(_, new)) = rewritten.iter().find(|(old, _)| *old == index) {
            func.ops[op].operands[1] = new;
            continue;
        }
        let ty = func.ty(index).clone();
        let loc = func.ops[op].loc;
        let mut at = crate::mma_pipeline::position(func, body, op);
        let part = cast_to(func, body, at, part, &ty, loc);
        at = crate::mma_pipeline::position(func, body, op);
        let parts = int(i64::from(parts));
        let parts = insert_value(func, body, &mut at, parts, vec![], &ty, loc);
        let mul = binary(BinaryOp::Mul);
        let scaled = insert_value(func, body, &mut at, mul, vec![index, parts], &ty, loc);
        let add = binary(BinaryOp::Add);
        let new = insert_value(func, body, &mut at, add, vec![scaled, part], &ty, loc);
        func.ops[op].operands[1] = new;
        rewritten.push((index, new));
    }
}

/// `v` as a value of type `ty`, inserted at `at` in `block` (a cast when
/// the types differ).
pub(crate) fn cast_to(
    func: &mut Function,
    block: Block,
    at: usize,
    v: Value,
    ty: &Type,
    loc: tawa_ir::Loc,
) -> Value {
    if func.ty(v) == ty {
        return v;
    }
    let cast = OpKind::Cast {
        rounding: Default::default(),
    };
    func.insert_value(block, at, cast, vec![v], ty.clone(), loc)
}

/// Inserts a one-result op of type `ty` at `*at` in `block`, advancing
/// `*at`; returns the result.
pub(crate) fn insert_value(
    func: &mut Function,
    block: Block,
    at: &mut usize,
    kind: OpKind,
    operands: Vec<Value>,
    ty: &Type,
    loc: tawa_ir::Loc,
) -> Value {
    let v = func.insert_value(block, *at, kind, operands, ty.clone(), loc);
    *at += 1;
    v
}

pub(crate) fn int(c: i64) -> OpKind {
    OpKind::Constant(ConstValue::Int(c))
}

fn binary(op: BinaryOp) -> OpKind {
    OpKind::Binary(op)
}

/// Rewrites `for %iv = %lb to %ub step %s` into `for %j = 0 to parts *
/// trips step 1`, the body computing the old induction variable as `%lb +
/// (%j / parts) * %s`; returns the part `%j % parts`.
fn split_loop(func: &mut Function, the_loop: Op, parts: u32) -> Value {
    let loc = func.ops[the_loop].loc;
    let [lb, ub, step] = [0, 1, 2].map(|i| func.ops[the_loop].operands[i]);
    let ty = func.ty(lb).clone();
    let s = crate::const_int(func, step).expect("a constant step");
    let parent = func.block_of(the_loop).expect("placed");
    let mut at = crate::mma_pipeline::position(func, parent, the_loop);
    let mut before = |func: &mut Function, kind: OpKind, operands: Vec<Value>| {
        insert_value(func, parent, &mut at, kind, operands, &ty, loc)
    };
    // trips = (ub - lb + s - 1) / s, C division: none when ub <= lb.
    let span = before(func, binary(BinaryOp::Sub), vec![ub, lb]);
    let trips = if s == 1 {
        span
    } else {
        let round = before(func, int(s - 1), vec![]);
        let up = before(func, binary(BinaryOp::Add), vec![span, round]);
        let s_v = before(func, int(s), vec![]);
        before(func, binary(BinaryOp::IDiv), vec![up, s_v])
    };
    let parts_v = before(func, int(i64::from(parts)), vec![]);
    let new_ub = before(func, binary(BinaryOp::Mul), vec![trips, parts_v]);
    let zero = before(func, int(0), vec![]);
    let one = before(func, int(1), vec![]);
    func.ops[the_loop].operands[..3].copy_from_slice(&[zero, new_ub, one]);

    // At the top of the body: the old induction variable and the part.
    let body = func.ops[the_loop].regions[0];
    let j = func.blocks[body].args[0];
    let mut at = 0;
    let mut top = |func: &mut Function, kind: OpKind, operands: Vec<Value>| {
        insert_value(func, body, &mut at, kind, operands, &ty, loc)
    };
    let parts_b = top(func, int(i64::from(parts)), vec![]);
    let step_index = top(func, binary(BinaryOp::IDiv), vec![j, parts_b]);
    let part = top(func, binary(BinaryOp::Rem), vec![j, parts_b]);
    let iv = if s == 1 {
        top(func, binary(BinaryOp::Add), vec![lb, step_index])
    } else {
        let s_b = top(func, int(s), vec![]);
        let scaled = top(func, binary(BinaryOp::Mul), vec![step_index, s_b]);
        top(func, binary(BinaryOp::Add), vec![lb, scaled])
    };
    let mine: Vec<Op> = func.blocks[body].ops[..at].to_vec();
    func.replace_uses(j, iv, &mine);
    if let Some(name) = func.values[j].name.clone() {
        func.set_name(j, format!("{name}_part"));
        func.set_name(iv, name);
    }
    part
}
