//! The meaning of a TMA recipe in tile IR, for tests: a load the TMA
//! inference turns into a copy is replaced by a tensor descriptor built
//! from the recipe's base, extents and strides (in TMA order, with the
//! recipe's boxes and copies as one block) and loaded at the recipe's
//! coordinates, then reshaped (and transposed) back to the tile. The
//! interpreter gives descriptor loads TMA's semantics (zeros out of
//! bounds), so running both kernels checks the recipe.
//!
//! Shared by `partitioner/tests/tma_semantics.rs` and the root package's
//! `tests/tma_recipes.rs` (included there with `#[path]`).
#![allow(dead_code)]

use tawa_ir::axis_info;
use tawa_ir::{BinaryOp, ConstValue, Elem, Function, Loc, Op, OpKind, Type, Value};
use tawa_partitioner::affine::{Atom, Poly};
use tawa_partitioner::tma_infer::{infer_tma, Extent, LoadStyle, OobFill, TmaRecipe};

/// Appends to `ops` the ops computing `p` as an i64 scalar.
pub fn materialize(func: &mut Function, p: &Poly, loc: Loc, ops: &mut Vec<Op>) -> Value {
    let mut emit = |func: &mut Function, kind: OpKind, operands: Vec<Value>| {
        let op = func.create_op(kind, operands, vec![Type::I64], vec![], loc);
        ops.push(op);
        func.ops[op].results[0]
    };
    let mut sum: Option<Value> = None;
    for (atoms, c) in p.terms() {
        let mut term = emit(func, OpKind::Constant(ConstValue::Int(c)), vec![]);
        for &a in atoms {
            let Atom::Value(v) = a else {
                panic!("a coordinate needs a loop's iteration number: {a:?}");
            };
            let v = if func.ty(v) == &Type::I64 {
                v
            } else {
                emit(
                    func,
                    OpKind::Cast {
                        rounding: Default::default(),
                    },
                    vec![v],
                )
            };
            term = emit(func, OpKind::Binary(BinaryOp::Mul), vec![term, v]);
        }
        sum = Some(match sum {
            None => term,
            Some(s) => emit(func, OpKind::Binary(BinaryOp::Add), vec![s, term]),
        });
    }
    sum.unwrap_or_else(|| emit(func, OpKind::Constant(ConstValue::Int(0)), vec![]))
}

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
    let load = r.op;
    let loc = r.loc;
    let old = func.ops[load].results[0];
    let tile_shape = func.ty(old).shape().to_vec();
    let block = func.block_of(load).expect("the load is in a block");
    let mut ops = Vec::new();

    let mut operands = vec![r.base];
    for d in &r.dims {
        operands.push(match &d.extent {
            Extent::Expr(e, _) => materialize(func, e, loc, &mut ops),
            // Unchecked: the kernel reads whatever its coordinates give.
            Extent::Unbounded => {
                materialize(func, &Poly::constant(i64::from(i32::MAX)), loc, &mut ops)
            }
        });
    }
    for d in &r.dims {
        operands.push(materialize(func, &d.stride, loc, &mut ops));
    }
    let block_shape: Vec<u32> = r.dims.iter().map(|d| d.box_size * d.copies).collect();
    let desc_ty = Type::TensorDesc {
        elem: r.elem,
        block: block_shape.clone(),
    };
    let desc = func.create_op(OpKind::MakeTensorDesc, operands, vec![desc_ty], vec![], loc);
    ops.push(desc);
    let desc = func.ops[desc].results[0];

    let mut coords = vec![desc];
    for d in &r.dims {
        coords.push(materialize(func, &d.coord, loc, &mut ops));
    }
    let elem = Elem::Scalar(r.elem);
    let boxed = func.create_op(
        OpKind::DescLoad,
        coords,
        vec![Type::tensor(block_shape, elem)],
        vec![],
        loc,
    );
    ops.push(boxed);
    let mut value = func.ops[boxed].results[0];

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

    // Splice the new ops in place of the load and rename its uses.
    let at = func.blocks[block]
        .ops
        .iter()
        .position(|&o| o == load)
        .unwrap();
    func.blocks[block].ops.splice(at..=at, ops);
    let all_ops: Vec<Op> = func.ops.keys().collect();
    for op in all_ops {
        for operand in &mut func.ops[op].operands {
            if *operand == old {
                *operand = value;
            }
        }
    }
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
