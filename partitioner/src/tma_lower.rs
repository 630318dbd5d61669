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
//! exactly the tile's dimensions, in the tile's order or — for a tile only
//! `dot`s read, a column-major operand — in another, which becomes `trans`
//! of the copied block (wgmma reads it in place with its transpose bit),
//! out-of-bounds elements read as zero, and every extent and stride is a
//! polynomial in kernel parameters. Extra dimensions of box 1 (a batch or
//! head offset of the base pointer) are dimensions of the descriptor but
//! not of the loaded block: the `desc_load` is rank-reduced (its result is
//! the block without its dimensions of 1), since a box of 1 adds nothing
//! to the bytes a copy writes. An `Unbounded` extent (a dimension the
//! kernel never checks) is any extent that covers the load's coordinates:
//! [`unchecked_extent`]. The others stay ordinary loads. Descriptor loads
//! already are what they mean and are left alone.
//!
//! A recipe whose base is loaded from memory (a grouped GEMM's pointer
//! array; [`TmaRecipe::device_built`]) gets a descriptor of the values the
//! kernel computes, made before the loop that loads from it, in the block
//! where the base is loaded (the backend builds its tensor map on the
//! device, again only when the values change); its unchecked dimensions
//! take the largest extent, [`UNCHECKED_OUTER_EXTENT`], since rows of a
//! tensor map may overlap and the copy then reads the addresses the load
//! did.

use tawa_ir::host_expr::{host_descriptor, host_expr, HostExpr};
use tawa_ir::{BinaryOp, ConstValue, Elem, Function, Loc, Op, OpKind, Type, Value};

use crate::affine::{Atom, Poly};
use crate::partition::ancestor_in;
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
        return (!host_descriptor_load(func, r.op) && !r.device_built).then(|| {
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
    let extra = r.dims.iter().any(|d| d.tile_dim.is_none());
    if extra && tile.contains(&1) {
        return Some(
            "the copy has dimensions of 1 the tile does not (a batch or head offset of \
             the base pointer) and the tile has a dimension of 1 too, which a rank-reduced \
             copy cannot tell apart; load the tile without its dimension of 1 and \
             `tl.reshape` it"
                .into(),
        );
    }
    if r.dims.last().is_some_and(|d| d.tile_dim.is_none()) {
        return Some("the copy's innermost dimension is not one of the tile's".into());
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
    // A map built on the device takes the extents and strides the kernel
    // computes, and an unchecked dimension the largest coordinate.
    if r.device_built {
        return None;
    }
    let unextended =
        r.dims.iter().enumerate().find(|(j, d)| {
            d.extent == Extent::Unbounded && unchecked_extent(func, r, *j).is_none()
        });
    if let Some((_, d)) = unextended {
        let which = d.tile_dim.map_or("a dimension".to_string(), |t| {
            format!("dimension {t} of the tile")
        });
        return Some(format!(
            "{which} is unchecked (no mask or bound) and not the outermost, and its index \
             has no bound the launch knows (program ids, `for` loop indices and `% P` \
             indices have one), so its extent is unknown at launch; bound it in the load's \
             mask (`& (offs < K)` along it) or wrap its index (`offs % K`), and the extent \
             becomes that kernel argument"
        ));
    }
    let host_shape = r.dims.iter().all(|d| {
        let extent_ok = match &d.extent {
            Extent::Expr(e, _) => over_params(func, e),
            Extent::Unbounded => true,
        };
        extent_ok && over_params(func, &d.stride)
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

/// The extent a copy gets along a dimension the kernel never checks (see
/// [`unchecked_extent`]).
#[derive(Clone, Debug, PartialEq)]
pub enum UncheckedExtent {
    /// The outermost dimension: [`UNCHECKED_OUTER_EXTENT`].
    Outer,
    /// An inner dimension: the largest coordinate the load names plus its
    /// block, which the host computes at launch from the arguments and
    /// the grid.
    Covering(HostExpr),
}

impl UncheckedExtent {
    /// For `--explain`: the extent and where it comes from.
    pub fn describe(&self, func: &Function, name: &dyn Fn(Atom) -> String) -> String {
        match self {
            UncheckedExtent::Outer => format!("{UNCHECKED_OUTER_EXTENT} (unchecked)"),
            UncheckedExtent::Covering(e) => {
                let param = |i: usize| name(Atom::Value(func.params[i].value));
                let from = if e.uses_grid() {
                    "the grid and the arguments"
                } else {
                    "the arguments"
                };
                format!(
                    "{} (unchecked: the last index read plus one, from {from} at launch)",
                    e.render(&param)
                )
            }
        }
    }
}

/// The extent the copy of recipe `r` gets along dimension `j` (outermost
/// first) when the kernel never checks it. An unmasked load promises that
/// every address it reads is valid, so any extent covering its
/// coordinates is correct:
///
/// - the outermost dimension gets the largest coordinate TMA takes,
///   [`UNCHECKED_OUTER_EXTENT`];
/// - an inner one gets the largest coordinate the load can name plus its
///   block ([`UncheckedExtent::Covering`]), from what the launch knows:
///   program ids are below the grid, a loop's index below its bound, a
///   `% P` index below `P`. The host computes it; if the rows of that
///   extent overlapped (the load's index runs past its row into the next
///   one, which no tensor map can name) the tensor map is refused at
///   launch instead of reading zeros there.
///
/// `None` when the coordinate has an index with no such bound (a value
/// carried by a `while` loop, a loaded one).
pub fn unchecked_extent(func: &Function, r: &TmaRecipe, j: usize) -> Option<UncheckedExtent> {
    if j == 0 {
        return Some(UncheckedExtent::Outer);
    }
    let d = &r.dims[j];
    let last = coordinate_bound(func, &d.coord)?;
    let block = HostExpr::Const(i64::from(d.box_size * d.copies));
    // At least one block: a loop that never runs still launches with a
    // valid tensor map.
    let covering = add(last, block.clone());
    Some(UncheckedExtent::Covering(HostExpr::Max(
        Box::new(covering),
        Box::new(block),
    )))
}

/// `a + b`, without adding 0.
fn add(a: HostExpr, b: HostExpr) -> HostExpr {
    match (a, b) {
        (HostExpr::Const(0), x) | (x, HostExpr::Const(0)) => x,
        (a, b) => HostExpr::Add(Box::new(a), Box::new(b)),
    }
}

/// `a * b`, without multiplying by 1.
fn mul(a: HostExpr, b: HostExpr) -> HostExpr {
    match (a, b) {
        (HostExpr::Const(1), x) | (x, HostExpr::Const(1)) => x,
        (a, b) => HostExpr::Mul(Box::new(a), Box::new(b)),
    }
}

/// An upper bound of `coord` over every program and iteration, as a host
/// expression: terms over launch constants are exact, terms of program
/// ids, loop indices and wrapped indices take their largest values
/// (negative ones, of indices that are never negative, their smallest:
/// 0). `None` when a term has no such bound.
fn coordinate_bound(func: &Function, coord: &Poly) -> Option<HostExpr> {
    let exact = |a: &Atom| match a {
        Atom::Value(v) => host_expr(func, *v),
        _ => None,
    };
    let mut sum = HostExpr::Const(0);
    for (atoms, c) in coord.terms() {
        let term = if let Some(values) = atoms.iter().map(exact).collect::<Option<Vec<_>>>() {
            values.into_iter().fold(HostExpr::Const(c), mul)
        } else if c < 0 {
            if !atoms.iter().all(|a| non_negative(func, *a)) {
                return None;
            }
            continue;
        } else if let [a] = atoms[..] {
            // c * a with c > 0 is largest where a is, whatever a's sign
            // (a wrapped index is below its modulus either way).
            mul(HostExpr::Const(c), atom_max(func, a)?)
        } else {
            let mut t = HostExpr::Const(c);
            for &a in atoms {
                if !non_negative(func, a) {
                    return None;
                }
                t = mul(t, atom_max(func, a)?);
            }
            t
        };
        sum = add(sum, term);
    }
    Some(sum)
}

/// Whether `a` is never negative: a program id, a loop's iteration
/// number, the index of a loop from a non-negative constant start, a
/// `% P` of one.
fn non_negative(func: &Function, a: Atom) -> bool {
    match a {
        Atom::Iter(_) => true,
        Atom::Value(v) => match index_kind(func, v) {
            Some(Index::ProgramId(_)) => true,
            Some(Index::LoopIndex { lb, .. }) => {
                constant_of(func, lb).is_some_and(|c| c >= 0)
                    || matches!(index_kind(func, lb), Some(Index::ProgramId(_)))
            }
            Some(Index::Wrapped { of, .. }) | Some(Index::Quotient { of, .. }) => {
                non_negative(func, Atom::Value(of))
            }
            None => non_negative_value(func, v),
        },
        Atom::Carried(..) => false,
    }
}

/// Whether scalar `v` is never negative by construction: a constant of
/// at least 0, a persistent kernel's grid size (a launch contract
/// parameter), or a sum, product, quotient, minimum or maximum of such
/// values, a remainder of one (C's `%` takes the dividend's sign).
/// A persistent kernel's banded tile walk computes its coordinates so.
fn non_negative_value(func: &Function, v: Value) -> bool {
    if let Some(p) = func.params.iter().find(|p| p.value == v) {
        let a = &func.attrs;
        return [&a.grid_param, &a.grid_param_y, &a.grid_param_z]
            .iter()
            .any(|g| g.as_deref() == Some(p.name.as_str()));
    }
    let Some(op) = func.def_op(v) else {
        return false;
    };
    let data = &func.ops[op];
    let nn = |i: usize| non_negative(func, Atom::Value(data.operands[i]));
    match data.kind {
        OpKind::Constant(ConstValue::Int(c)) => c >= 0,
        OpKind::Binary(BinaryOp::Rem) => nn(0),
        OpKind::Binary(
            BinaryOp::Add | BinaryOp::Mul | BinaryOp::IDiv | BinaryOp::Min | BinaryOp::Max,
        ) => nn(0) && nn(1),
        _ => false,
    }
}

/// The largest value of index `a` over the launch, as a host expression.
fn atom_max(func: &Function, a: Atom) -> Option<HostExpr> {
    let minus_one = |e: HostExpr| HostExpr::Sub(Box::new(e), Box::new(HostExpr::Const(1)));
    match a {
        // Iteration `(ub - lb - 1) // step` is the last of a loop with a
        // positive step.
        Atom::Iter(the_loop) => {
            let ops = &func.ops[the_loop].operands;
            let (lb, ub, step) = (ops.first()?, ops.get(1)?, ops.get(2)?);
            constant_of(func, *step).filter(|&s| s > 0)?;
            let span = HostExpr::Sub(
                Box::new(host_expr(func, *ub)?),
                Box::new(host_expr(func, *lb)?),
            );
            Some(HostExpr::Div(
                Box::new(minus_one(span)),
                Box::new(host_expr(func, *step)?),
            ))
        }
        Atom::Value(v) => match index_kind(func, v)? {
            Index::ProgramId(axis) => Some(minus_one(HostExpr::NumPrograms(axis))),
            Index::LoopIndex { ub, step, .. } => {
                constant_of(func, step).filter(|&s| s > 0)?;
                Some(minus_one(host_expr(func, ub)?))
            }
            Index::Wrapped { modulus, .. } => Some(minus_one(host_expr(func, modulus)?)),
            Index::Quotient { rows, .. } => Some(minus_one(host_expr(func, rows)?)),
        },
        Atom::Carried(..) => None,
    }
}

/// An index whose range the launch bounds.
enum Index {
    ProgramId(tawa_ir::Axis),
    /// The induction variable of a `for` loop.
    LoopIndex {
        lb: Value,
        ub: Value,
        step: Value,
    },
    /// `of % modulus`, the modulus a launch constant (positive, or the
    /// kernel's `%` would fault).
    Wrapped {
        of: Value,
        modulus: Value,
    },
    /// `of // per` of a loop index `of` below `per * rows` (or
    /// `rows * per`): below `rows`. A persistent kernel's tile loop runs
    /// its index below `tw_grid_x * tw_grid_y` and takes the source's
    /// program id along y as `tile // tw_grid_x`, which this bounds by the
    /// grid's y size as the program id was.
    Quotient {
        of: Value,
        rows: Value,
    },
}

fn index_kind(func: &Function, v: Value) -> Option<Index> {
    if let Some(op) = func.def_op(v) {
        let data = &func.ops[op];
        return match data.kind {
            OpKind::ProgramId(axis) => Some(Index::ProgramId(axis)),
            OpKind::Binary(BinaryOp::Rem) if host_expr(func, data.operands[1]).is_some() => {
                Some(Index::Wrapped {
                    of: data.operands[0],
                    modulus: data.operands[1],
                })
            }
            OpKind::Binary(BinaryOp::IDiv) => {
                let (of, per) = (data.operands[0], data.operands[1]);
                let Some(Index::LoopIndex { ub, step, .. }) = index_kind(func, of) else {
                    return None;
                };
                // A positive step keeps the index below `ub`.
                constant_of(func, step).filter(|&s| s > 0).or_else(|| {
                    matches!(func.ops[func.def_op(step)?].kind, OpKind::NumPrograms(_)).then_some(1)
                })?;
                let product = &func.ops[func.def_op(ub)?];
                if !matches!(product.kind, OpKind::Binary(BinaryOp::Mul)) {
                    return None;
                }
                let rows = match product.operands[..] {
                    [x, y] if x == per => y,
                    [x, y] if y == per => x,
                    _ => return None,
                };
                host_expr(func, rows)?;
                Some(Index::Quotient { of, rows })
            }
            _ => None,
        };
    }
    // A block argument: the induction variable of a `for` (its first).
    let loop_op = func.ops.iter().find_map(|(op, data)| {
        if !matches!(data.kind, OpKind::For(_)) {
            return None;
        }
        let body = *data.regions.first()?;
        (func.blocks[body].args.first() == Some(&v)).then_some(op)
    })?;
    let ops = &func.ops[loop_op].operands;
    Some(Index::LoopIndex {
        lb: *ops.first()?,
        ub: *ops.get(1)?,
        step: *ops.get(2)?,
    })
}

/// `v`'s value when it is an integer constant.
pub(crate) fn constant_of(func: &Function, v: Value) -> Option<i64> {
    match func.ops[func.def_op(v)?].kind {
        OpKind::Constant(ConstValue::Int(c)) => Some(c),
        _ => None,
    }
}

/// For a copy whose boxes cover the tile exactly, dimension by dimension
/// (possibly in another order: a column-major operand's box runs K or M
/// innermost), besides extra dimensions of box 1, the tile's dimensions in
/// the copied block's order: `trans` of the block by this permutation is
/// the tile. `None` otherwise.
fn box_order(r: &TmaRecipe, tile: &[u32]) -> Option<Vec<u32>> {
    let mut perm = vec![u32::MAX; tile.len()];
    let mut j = 0;
    for d in &r.dims {
        let Some(t) = d.tile_dim else {
            if d.box_size * d.copies != 1 {
                return None;
            }
            continue;
        };
        if t >= tile.len() || perm[t] != u32::MAX || d.box_size * d.copies != tile[t] {
            return None;
        }
        perm[t] = j;
        j += 1;
    }
    (j as usize == tile.len()).then_some(perm)
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
pub(crate) fn over_params(func: &Function, p: &Poly) -> bool {
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
    // The descriptor's block, in box order, and the block the copy writes:
    // the same without the boxes of 1 of extra dimensions (a rank-reduced
    // load); a transposed view is the `trans` of it.
    let block: Vec<u32> = r.dims.iter().map(|d| d.box_size * d.copies).collect();
    let copied_block: Vec<u32> = r
        .dims
        .iter()
        .filter(|d| d.tile_dim.is_some())
        .map(|d| d.box_size * d.copies)
        .collect();
    let mut at_top = Vec::new();
    // A map the kernel builds is made where its base is, before the loop
    // that loads from it; the others at the top of the kernel.
    let anchor = if r.device_built {
        Some(device_descriptor_anchor(func, r)?)
    } else {
        None
    };
    let desc = make_descriptor(func, r, block, anchor, &mut at_top)?;
    let mut at_load = Vec::new();
    let block_ty = Type::tensor(copied_block, Elem::Scalar(r.elem));
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
    match anchor {
        Some(anchor) => {
            let block = func.block_of(anchor)?;
            let at = func.blocks[block].ops.iter().position(|&o| o == anchor)?;
            func.blocks[block].ops.splice(at..at, at_top);
        }
        None => prologue.append(&mut at_top),
    }
    Some(new_load)
}

/// Where the descriptor of recipe `r`, built on the device from values
/// the kernel computes, is made: before the op of the block defining its
/// base that holds the load (the loop the load is in), when every value
/// its extents and strides use is defined before that op. `None`
/// otherwise.
fn device_descriptor_anchor(func: &Function, r: &TmaRecipe) -> Option<Op> {
    let base_def = func.def_op(r.base)?;
    let block = func.block_of(base_def)?;
    let anchor = ancestor_in(func, block, r.op)?;
    let polys = r.dims.iter().flat_map(|d| {
        let extent = match &d.extent {
            Extent::Expr(e, _) => Some(e),
            Extent::Unbounded => None,
        };
        extent.into_iter().chain(std::iter::once(&d.stride))
    });
    for p in polys {
        for a in p.atoms() {
            match a {
                Atom::Value(v) if defined_before(func, v, anchor) => {}
                _ => return None,
            }
        }
    }
    defined_before(func, r.base, anchor).then_some(anchor)
}

/// [`unchecked_extent`], except that every unchecked dimension of a map
/// built on the device takes [`UNCHECKED_OUTER_EXTENT`] (see the module
/// docs).
fn unchecked_extent_of(func: &Function, r: &TmaRecipe, j: usize) -> Option<UncheckedExtent> {
    if r.device_built {
        return Some(UncheckedExtent::Outer);
    }
    unchecked_extent(func, r, j)
}

/// Whether `v` is in scope and computed before `at` runs: a parameter, an
/// argument of a block enclosing `at`, or the result of an op before the
/// one holding `at` in a block enclosing it.
fn defined_before(func: &Function, v: Value, at: Op) -> bool {
    match func.values[v].def {
        tawa_ir::ValueDef::Arg(b, _) => {
            func.params.iter().any(|p| p.value == v) || ancestor_in(func, b, at).is_some()
        }
        tawa_ir::ValueDef::Result(d, _) => {
            let Some(b) = func.block_of(d) else {
                return false;
            };
            let Some(holder) = ancestor_in(func, b, at) else {
                return false;
            };
            let ops = &func.blocks[b].ops;
            let pos = |o: Op| ops.iter().position(|&x| x == o);
            matches!((pos(d), pos(holder)), (Some(i), Some(j)) if i < j)
        }
    }
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
            Extent::Expr(e, _) => materialize(func, e, at, r.loc, ops)?,
            Extent::Unbounded => match unchecked_extent_of(func, r, j)? {
                UncheckedExtent::Outer => materialize(
                    func,
                    &Poly::constant(UNCHECKED_OUTER_EXTENT),
                    at,
                    r.loc,
                    ops,
                )?,
                UncheckedExtent::Covering(e) => I64Builder {
                    func: &mut *func,
                    loc: r.loc,
                    ops: &mut *ops,
                }
                .host(&e),
            },
        };
        operands.push(e);
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
    let load = func.create_op(
        OpKind::DescLoad { read_once: None },
        operands,
        vec![ty],
        vec![],
        r.loc,
    );
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
pub(crate) fn materialize(
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

    /// Computes host expression `e` (from parameters, constants and the
    /// grid, so anywhere in the kernel).
    fn host(&mut self, e: &HostExpr) -> Value {
        let bin = |b: &mut Self, op, x: &HostExpr, y: &HostExpr| {
            let (x, y) = (b.host(x), b.host(y));
            b.op(OpKind::Binary(op), vec![x, y])
        };
        match e {
            HostExpr::Const(c) => self.op(OpKind::Constant(ConstValue::Int(*c)), vec![]),
            HostExpr::Param(i) => {
                let p = self.func.params[*i].value;
                self.widen(p)
            }
            HostExpr::NumPrograms(axis) => {
                let op = self.func.create_op(
                    OpKind::NumPrograms(*axis),
                    vec![],
                    vec![Type::I32],
                    vec![],
                    self.loc,
                );
                self.ops.push(op);
                let n = self.func.ops[op].results[0];
                self.widen(n)
            }
            HostExpr::Add(x, y) => bin(self, BinaryOp::Add, x, y),
            HostExpr::Sub(x, y) => bin(self, BinaryOp::Sub, x, y),
            HostExpr::Mul(x, y) => bin(self, BinaryOp::Mul, x, y),
            HostExpr::Div(x, y) => bin(self, BinaryOp::IDiv, x, y),
            HostExpr::Max(x, y) => bin(self, BinaryOp::Max, x, y),
        }
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
    matches!(data.kind, OpKind::DescLoad { .. }) && host_descriptor(func, data.operands[0])
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
                ok &= !matches!(func.ops[def].kind, OpKind::DescLoad { .. });
            }
        }
    });
    ok
}
