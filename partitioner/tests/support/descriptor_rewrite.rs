//! The meaning of a TMA recipe in tile IR, for tests: a load the TMA
//! inference turns into a copy is replaced by a tensor descriptor built
//! from the recipe's base, extents and strides (in TMA order, with the
//! recipe's boxes and copies as one block) and loaded at the recipe's
//! coordinates, then reshaped (and transposed) back to the tile. The
//! interpreter gives descriptor loads TMA's semantics (zeros out of
//! bounds), so running both kernels checks the recipe.
//!
//! This is `tawa_partitioner::tma_lower` (whose pieces it is built from)
//! for every recipe, not only those whose box is the tile: transposed
//! boxes, dimensions of box 1 and unbounded extents too. The descriptor
//! is built at the load rather than at the top of the kernel, where an
//! extent computed in a loop would not be in scope.
//!
//! Shared by `partitioner/tests/tma_semantics.rs` and the root package's
//! `tests/tma_recipes.rs` (included there with `#[path]`).
#![allow(dead_code)]

use tawa_ir::axis_info;
use tawa_ir::{Elem, Function, Loc, Op, OpKind, Type, Value};
use tawa_partitioner::affine::Poly;
use tawa_partitioner::tma_infer::{infer_tma, Extent, ExtentOrigin, LoadStyle, OobFill, TmaRecipe};
use tawa_partitioner::tma_lower::{load_descriptor, make_descriptor, replace_load};

pub fn reshape(
    func: &mut Function,
    v: Value,
    shape: Vec<u32>,
    elem: Elem,
    loc: Loc,
    ops: &mut Vec<Op>,
) -> Value {
    let op = func.create_op(
        OpKind::Reshape,
        vec![v],
        vec![Type::tensor(shape, elem)],
        vec![],
        loc,
    );
    ops.push(op);
    func.ops[op].results[0]
}

/// Replaces the load of `r` by a descriptor load doing what the copy does.
pub fn rewrite(func: &mut Function, r: &TmaRecipe) {
    let loc = r.loc;
    let tile_shape = func.ty(func.ops[r.op].results[0]).shape().to_vec();
    // Unchecked: the kernel reads whatever its coordinates give.
    let mut bounded = r.clone();
    for d in &mut bounded.dims {
        if d.extent == Extent::Unbounded {
            d.extent = Extent::Expr(Poly::constant(i64::from(i32::MAX)), ExtentOrigin::Tile);
        }
    }
    let mut ops = Vec::new();
    let block_shape: Vec<u32> = r.dims.iter().map(|d| d.box_size * d.copies).collect();
    let desc = make_descriptor(func, &bounded, block_shape.clone(), Some(r.op), &mut ops)
        .expect("the extents and strides are computable at the load");
    let elem = Elem::Scalar(r.elem);
    let boxed = Type::tensor(block_shape, elem);
    let mut value = load_descriptor(func, r, desc, boxed, &mut ops)
        .expect("the coordinates are computable at the load");

    // The box holds the moving tile dimensions in the recipe's order.
    let order: Vec<usize> = r.dims.iter().filter_map(|d| d.tile_dim).collect();
    let in_box_order: Vec<u32> = order.iter().map(|&t| tile_shape[t]).collect();
    value = reshape(func, value, in_box_order, elem, loc, &mut ops);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    if sorted != order {
        let perm: Vec<u32> = sorted
            .iter()
            .map(|t| order.iter().position(|o| o == t).unwrap() as u32)
            .collect();
        let shape: Vec<u32> = sorted.iter().map(|&t| tile_shape[t]).collect();
        let op = func.create_op(
            OpKind::Trans { perm },
            vec![value],
            vec![Type::tensor(shape, elem)],
            vec![],
            loc,
        );
        ops.push(op);
        value = func.ops[op].results[0];
    }
    value = reshape(func, value, tile_shape, elem, loc, &mut ops);
    replace_load(func, r.op, ops, value).expect("the load is in a block");
}

/// The recipes the rewrite applies to: pointer tiles and block pointers
/// (descriptor loads already are what they mean), zero fill (descriptor
/// loads cannot fill NaN).
pub fn rewritable_recipes(func: &Function) -> Vec<TmaRecipe> {
    let axis = axis_info::analyze(func);
    let plan = infer_tma(func, &axis);
    plan.recipes()
        .filter(|r| matches!(r.source, LoadStyle::PointerTile | LoadStyle::BlockPtr))
        .filter(|r| r.oob_fill == OobFill::Zero)
        .cloned()
        .collect()
}

/// Rewrites every load of [`rewritable_recipes`]; the count.
pub fn rewrite_tma_loads(func: &mut Function) -> usize {
    let recipes = rewritable_recipes(func);
    for r in &recipes {
        rewrite(func, r);
    }
    recipes.len()
}
