//! `tma_lower`: the tile loads the TMA inference turned into copies become
//! what a copy is — a `desc_load` of a tensor descriptor built from the
//! recipe — so that everything after it (the partitioner, the aref
//! simulator, the backend) sees one kind of TMA load, written in the IR.
//!
//! For each recipe of a pointer-tile or block-pointer load:
//!
//! - the descriptor (`make_tensor_desc` of the recipe's base, extents and
//!   strides) is built once, at the top of the kernel body, since its
//!   operands are kernel parameters; the backend turns such a descriptor
//!   into a `CUtensorMap` the host encodes at launch;
//! - the load becomes `desc_load` of it at the recipe's coordinates,
//!   computed where the load was (a loop's iteration number as
//!   `(iv - lb) / step`);
//! - the address arithmetic the load used is left for dead-code removal.
//!
//! Only recipes whose copy *is* the tile are rewritten: the boxes cover
//! exactly the tile's dimensions (no extra dimension of box 1), in the
//! tile's order or — for a tile only `dot`s read, a column-major operand —
//! in another, which becomes `trans` of the copied block (wgmma reads it
//! in place with its transpose bit), out-of-bounds elements read as zero, and
//! every extent and stride is a polynomial in kernel parameters. An
//! `Unbounded` outermost extent (a dimension the kernel never checks) is
//! any extent that covers the load's coordinates: [`unchecked_extent`]. The
//! others stay ordinary loads. Descriptor loads already are what they
//! mean and are left alone.

use tawa_ir::host_expr::host_expr;
use tawa_ir::{BinaryOp, ConstValue, Elem, Function, Loc, Op, OpKind, Type, Value};

use crate::affine::{Atom, Poly};
use crate::tma_infer::{Extent, LoadStyle, OobFill, TmaPlan, TmaRecipe};

/// Rewrites the loads of `plan` (computed on `func`) that are tiles (see
/// the module docs); returns the new `desc_load` ops.
pub fn lower_tma_loads(func: &mut Function, plan: &TmaPlan) -> Vec<Op> {
    let recipes: Vec<TmaRecipe> = plan
        .recipes()
        .filter(|r| is_whole_tile_copy(func, r))
        .cloned()
        .collect();
    let mut loads = Vec::new();
    // Descriptors go at the top of the body, in recipe order.
    let mut prologue = Vec::new();
    for r in &recipes {
        if let Some(load) = rewrite(func, r, &mut prologue) {
            loads.push(load);
        }
    }
    let body = func.body;
    func.blocks[body].ops.splice(0..0, prologue);
    loads
}

/// Whether the recipe's copy writes exactly the loaded tile, with
/// extents and strides the host computes: the recipes
/// [`lower_tma_loads`] rewrites.
pub fn is_whole_tile_copy(func: &Function, r: &TmaRecipe) -> bool {
    matches!(r.source, LoadStyle::PointerTile | LoadStyle::BlockPtr)
        && why_not_lowered(func, r).is_none()
}

/// Why the copy of recipe `r` does not reach the warp-specialized backend
/// as a TMA copy (for `--explain`), or `None` when it does: a pointer tile
/// or block pointer that `lower_tma_loads` rewrites, or a descriptor load
/// of a descriptor the host can build. Each reason ends with the smallest
/// source change that lifts it.
pub fn why_not_lowered(func: &Function, r: &TmaRecipe) -> Option<String> {
    if matches!(r.source, LoadStyle::TensorDesc | LoadStyle::HostTensorDesc) {
        return (!host_descriptor_load(func, r.op)).then(|| {
            "its descriptor is made from values the host does not have at launch; \
             build it from the kernel's arguments (shapes and strides passed in) \
             or pass it as a host `TensorDescriptor`"
                .to_string()
        });
    }
    let tile = func.ty(func.ops[r.op].results[0]).shape().to_vec();
    if r.oob_fill != OobFill::Zero {
        return Some(
            "out-of-bounds elements read as NaN, which descriptor loads cannot express; \
             load with `padding_option=\"zero\"`"
                .into(),
        );
    }
    if r.dims.len() != tile.len() {
        return Some(
            "the copy has dimensions the tile does not (boxes of 1: a batch or head \
             offset of the base pointer), which the warp-specialized backend does not \
             copy yet"
                .into(),
        );
    }
    let Some(perm) = box_order(r, &tile) else {
        return Some("the copy's boxes do not cover the tile dimension by dimension".into());
    };
    let in_order = perm.iter().enumerate().all(|(i, &p)| p as usize == i);
    if !in_order && !only_dot_operand(func, r.op) {
        return Some(
            "the copy's boxes run in another order than the tile (a transposed view), and \
             the tile is used other than as a `tl.dot` operand; use the transposed tile \
             only in `tl.dot`"
                .into(),
        );
    }
    let unextended = r
        .dims
        .iter()
        .enumerate()
        .find(|(j, d)| d.extent == Extent::Unbounded && unchecked_extent(r, *j).is_none());
    if let Some((_, d)) = unextended {
        let which = d.tile_dim.map_or("a dimension".to_string(), |t| {
            format!("dimension {t} of the tile")
        });
        return Some(format!(
            "{which} is unchecked (no mask or bound) and not the outermost, so its extent \
             is unknown at launch (a tensor map's rows may not overlap, and nothing shows \
             the load stays inside one); bound it in the load's mask (`& (offs < K)` along \
             it) or wrap its index (`offs % K`), and the extent becomes that kernel argument"
        ));
    }
    let host_shape = r.dims.iter().enumerate().all(|(j, d)| {
        let extent = match &d.extent {
            Extent::Expr(e, _) => Some(e.clone()),
            Extent::Unbounded => unchecked_extent(r, j),
        };
        extent.is_some_and(|e| over_params(func, &e)) && over_params(func, &d.stride)
    });
    if !host_shape {
        return Some(
            "an extent or stride is computed in the kernel, so the host cannot build its \
             tensor map; pass it as a kernel argument"
                .into(),
        );
    }
    None
}

/// The largest coordinate a TMA copy can name (coordinates are signed
/// 32-bit): the extent of an unchecked outermost dimension.
pub const UNCHECKED_OUTER_EXTENT: i64 = i32::MAX as i64;

/// The extent the copy of recipe `r` gets along dimension `j` (outermost
/// first) when the kernel never checks it. An unmasked load promises that
/// every address it reads is valid, so any extent covering its
/// coordinates is correct: the outermost dimension gets the largest
/// coordinate TMA takes, [`UNCHECKED_OUTER_EXTENT`]. An inner one has no
/// such extent: a tensor map's rows may not overlap, so its extent is at
/// most the next-outer stride, and nothing proves the kernel's columns
/// stay below it (an unmasked load may read on into the next row):
/// `None`.
pub fn unchecked_extent(_r: &TmaRecipe, j: usize) -> Option<Poly> {
    (j == 0).then(|| Poly::constant(UNCHECKED_OUTER_EXTENT))
}

/// For a copy whose boxes cover the tile exactly, dimension by dimension
/// (possibly in another order: a column-major operand's box runs K or M
/// innermost), the tile's dimensions in box order: `trans` of the copied
/// block by this permutation is the tile. `None` otherwise.
fn box_order(r: &TmaRecipe, tile: &[u32]) -> Option<Vec<u32>> {
    if r.dims.len() != tile.len() {
        return None;
    }
    let mut perm = vec![u32::MAX; tile.len()];
    for (j, d) in r.dims.iter().enumerate() {
        let t = d.tile_dim?;
        if t >= tile.len() || perm[t] != u32::MAX || d.box_size * d.copies != tile[t] {
            return None;
        }
        perm[t] = j as u32;
    }
    Some(perm)
}

/// Whether every use of `load`'s tile is an A or B operand of a `dot`: a
/// transposed copy is then read by wgmma in place, through its transpose
/// bit, with no register transpose.
fn only_dot_operand(func: &Function, load: Op) -> bool {
    let tile = func.ops[load].results[0];
    let mut used = false;
    let mut only_dots = true;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        for (i, &v) in data.operands.iter().enumerate() {
            if v == tile {
                used = true;
                only_dots &= matches!(data.kind, OpKind::Dot { .. }) && i < 2;
            }
        }
    });
    used && only_dots
}

/// Whether every atom of `p` is a kernel parameter.
fn over_params(func: &Function, p: &Poly) -> bool {
    p.atoms().all(|a| match a {
        Atom::Value(v) => func.params.iter().any(|q| q.value == v),
        _ => false,
    })
}

/// Rewrites the load of `r`, appending its descriptor to `prologue`; the
/// new `desc_load`, or `None` (and nothing changed) where a form cannot
/// be computed.
fn rewrite(func: &mut Function, r: &TmaRecipe, prologue: &mut Vec<Op>) -> Option<Op> {
    let tile_ty = func.ty(func.ops[r.op].results[0]).clone();
    debug_assert_eq!(tile_ty.elem(), Some(Elem::Scalar(r.elem)));
    let perm = box_order(r, tile_ty.shape())?;
    // The block the copy writes, in box order; a transposed view is the
    // `trans` of it.
    let block: Vec<u32> = r.dims.iter().map(|d| d.box_size * d.copies).collect();
    let mut at_top = Vec::new();
    let desc = make_descriptor(func, r, block.clone(), None, &mut at_top)?;
    let mut at_load = Vec::new();
    let block_ty = Type::tensor(block, Elem::Scalar(r.elem));
    let copied = load_descriptor(func, r, desc, block_ty, &mut at_load)?;
    let new_load = *at_load.last()?;
    let value = if perm.iter().enumerate().all(|(i, &p)| p as usize == i) {
        copied
    } else {
        let trans = func.create_op(
            OpKind::Trans { perm },
            vec![copied],
            vec![tile_ty],
            vec![],
            r.loc,
        );
        at_load.push(trans);
        if let Some(name) = func.values[func.ops[r.op].results[0]].name.clone() {
            func.set_name(copied, format!("{name}_box"));
        }
        func.ops[trans].results[0]
    };
    replace_load(func, r.op, at_load, value)?;
    prologue.append(&mut at_top);
    Some(new_load)
}

/// Appends to `ops` the `make_tensor_desc` of the recipe's base, extents
/// (an unchecked one as [`unchecked_extent`]) and strides, with block
/// shape `block`; its value. `at` is where the ops will be (see
/// [`materialize`]). `None` if a form is not computable at `at`.
pub fn make_descriptor(
    func: &mut Function,
    r: &TmaRecipe,
    block: Vec<u32>,
    at: Option<Op>,
    ops: &mut Vec<Op>,
) -> Option<Value> {
    let mut operands = vec![r.base];
    for (j, d) in r.dims.iter().enumerate() {
        let e = match &d.extent {
            Extent::Expr(e, _) => e.clone(),
            Extent::Unbounded => unchecked_extent(r, j)?,
        };
        operands.push(materialize(func, &e, at, r.loc, ops)?);
    }
    for d in &r.dims {
        operands.push(materialize(func, &d.stride, at, r.loc, ops)?);
    }
    let desc_ty = Type::TensorDesc {
        elem: r.elem,
        block,
    };
    let desc = func.create_op(
        OpKind::MakeTensorDesc,
        operands,
        vec![desc_ty],
        vec![],
        r.loc,
    );
    ops.push(desc);
    Some(func.ops[desc].results[0])
}

/// Appends to `ops` the `desc_load` of `desc` at the recipe's coordinates
/// (computed for the recipe's load), of type `ty`; its value. `None` if a
/// coordinate is not computable there.
pub fn load_descriptor(
    func: &mut Function,
    r: &TmaRecipe,
    desc: Value,
    ty: Type,
    ops: &mut Vec<Op>,
) -> Option<Value> {
    let mut operands = vec![desc];
    for d in &r.dims {
        operands.push(materialize(func, &d.coord, Some(r.op), r.loc, ops)?);
    }
    let load = func.create_op(OpKind::DescLoad, operands, vec![ty], vec![], r.loc);
    ops.push(load);
    Some(func.ops[load].results[0])
}

/// Puts `ops` where `load` was and makes every use of its result use
/// `value` (which takes over its name). `None` if `load` is in no block.
pub fn replace_load(func: &mut Function, load: Op, ops: Vec<Op>, value: Value) -> Option<()> {
    let old = func.ops[load].results[0];
    let block = func.block_of(load)?;
    if let Some(name) = func.values[old].name.clone() {
        func.set_name(value, name);
    }
    let at = func.blocks[block].ops.iter().position(|&o| o == load)?;
    func.blocks[block].ops.splice(at..=at, ops);
    let all_ops: Vec<Op> = func.ops.keys().collect();
    for op in all_ops {
        for operand in &mut func.ops[op].operands {
            if *operand == old {
                *operand = value;
            }
        }
    }
    Some(())
}

/// Appends to `ops` the ops computing `p` as an i64 scalar. `at` is the op
/// the value is computed for (to find the loops of [`Atom::Iter`] atoms);
/// `None` at the top of the body, where only parameters are in scope.
fn materialize(
    func: &mut Function,
    p: &Poly,
    at: Option<Op>,
    loc: Loc,
    ops: &mut Vec<Op>,
) -> Option<Value> {
    let mut b = I64Builder { func, loc, ops };
    let mut sum: Option<Value> = None;
    for (atoms, c) in p.terms() {
        let mut term = b.op(OpKind::Constant(ConstValue::Int(c)), vec![]);
        for &a in atoms {
            let v = match a {
                Atom::Value(v) => b.widen(v),
                // The iteration number of an enclosing loop.
                Atom::Iter(the_loop) => {
                    if !encloses(b.func, the_loop, at?) {
                        return None;
                    }
                    let data = &b.func.ops[the_loop];
                    let (lb, step) = (data.operands[0], data.operands[2]);
                    let iv = b.func.blocks[data.regions[0]].args[0];
                    let (iv, lb, step) = (b.widen(iv), b.widen(lb), b.widen(step));
                    let done = b.op(OpKind::Binary(BinaryOp::Sub), vec![iv, lb]);
                    b.op(OpKind::Binary(BinaryOp::IDiv), vec![done, step])
                }
                Atom::Carried(..) => return None,
            };
            term = b.op(OpKind::Binary(BinaryOp::Mul), vec![term, v]);
        }
        sum = Some(match sum {
            None => term,
            Some(s) => b.op(OpKind::Binary(BinaryOp::Add), vec![s, term]),
        });
    }
    Some(sum.unwrap_or_else(|| b.op(OpKind::Constant(ConstValue::Int(0)), vec![])))
}

/// Creates i64 scalar ops, in order, into `ops`.
struct I64Builder<'a> {
    func: &'a mut Function,
    loc: Loc,
    ops: &'a mut Vec<Op>,
}

impl I64Builder<'_> {
    fn op(&mut self, kind: OpKind, operands: Vec<Value>) -> Value {
        let op = self
            .func
            .create_op(kind, operands, vec![Type::I64], vec![], self.loc);
        self.ops.push(op);
        self.func.ops[op].results[0]
    }

    /// `v` as an i64 (integers of other widths are cast).
    fn widen(&mut self, v: Value) -> Value {
        if self.func.ty(v) == &Type::I64 {
            v
        } else {
            self.op(
                OpKind::Cast {
                    rounding: Default::default(),
                },
                vec![v],
            )
        }
    }
}

/// Whether `op` is (transitively) inside the body of `the_loop`.
fn encloses(func: &Function, the_loop: Op, op: Op) -> bool {
    let body = func.ops[the_loop].regions[0];
    let mut found = false;
    func.walk_block(body, &mut |o| found |= o == op);
    found
}

/// Whether `op` is a `desc_load` of a descriptor the host can build: one
/// made by `make_tensor_desc` from values the host can compute
/// (`tawa_ir::host_expr`). These are
/// the copies the backend issues with `cp.async.bulk.tensor` from a
/// `CUtensorMap` encoded at launch.
pub fn host_descriptor_load(func: &Function, op: Op) -> bool {
    let data = &func.ops[op];
    if !matches!(data.kind, OpKind::DescLoad) {
        return false;
    }
    let Some(make) = func.def_op(data.operands[0]) else {
        return false;
    };
    matches!(func.ops[make].kind, OpKind::MakeTensorDesc)
        && func.ops[make]
            .operands
            .iter()
            .all(|&v| host_expr(func, v).is_some())
}

/// Whether every `trans` of a `desc_load` that [`lower_tma_loads`] wrote
/// for a transposed view reads an aref slot instead: after partitioning,
/// the copies the producer moved are `aref.get` results, and wgmma reads
/// those in place; a transposed copy left in the consumer is not.
pub fn transposed_copies_in_slots(func: &Function) -> bool {
    let mut ok = true;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if matches!(data.kind, OpKind::Trans { .. }) {
            if let Some(def) = func.def_op(data.operands[0]) {
                ok &= !matches!(func.ops[def].kind, OpKind::DescLoad);
            }
        }
    });
    ok
}
