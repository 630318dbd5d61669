//! The TMA inference's recipes, checked by meaning rather than by text:
//! every load the inference turns into a TMA copy is replaced, in the tile
//! IR, by what the copy does — a tensor descriptor built from the recipe's
//! base, extents and strides, loaded at the recipe's coordinates (the
//! interpreter gives descriptors TMA's semantics: zeros out of bounds) —
//! and every small launch case of every example must still match its
//! plain-Rust reference on the interpreter, writing nothing outside its
//! outputs. The rewritten IR must pass the verifier, which also checks that
//! every value a coordinate names is in scope at the load.
//!
//! This exercises the wrapped rows of the matmul tutorial on ragged sizes
//! (zeros where the original read wrapped rows, which the store must drop),
//! the mask-derived extents, transposed boxes (attention's K, a
//! column-major B), extra dimensions of box 1 and loop-carried pointers.
//! So that ragged cases (whose strides are not multiples of 16 bytes) are
//! covered too, the kernels are compiled with every integer and pointer
//! parameter declared `:16`: alignment only decides legality, which the
//! interpreter does not need, and the file tests check it.

mod common;

use tawa_ir::axis_info;
use tawa_ir::{BinaryOp, ConstValue, Elem, Function, Loc, Op, OpKind, Type, Value};
use tawa_partitioner::affine::{Atom, Poly};
use tawa_partitioner::tma_infer::{infer_tma, Extent, LoadStyle, TmaRecipe};

const SEED: u64 = 3;

/// Declares every integer and pointer parameter of a signature `:16`.
fn claim_alignment(signature: &str) -> String {
    signature
        .split(',')
        .map(|entry| {
            let e = entry.trim();
            let typed = e.starts_with('*') || e.starts_with('i') || e.starts_with('u');
            if typed && !e.contains(':') && !e.contains('[') {
                format!("{e}:16")
            } else {
                e.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends to `ops` the ops computing `p` as an i64 scalar.
fn materialize(func: &mut Function, p: &Poly, loc: Loc, ops: &mut Vec<Op>) -> Value {
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

fn reshape(
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
fn rewrite(func: &mut Function, r: &TmaRecipe) {
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

/// Rewrites every pointer-tile and block-pointer TMA load; the count.
fn rewrite_tma_loads(func: &mut Function) -> usize {
    let axis = axis_info::analyze(func);
    let plan = infer_tma(func, &axis);
    let recipes: Vec<TmaRecipe> = plan
        .recipes()
        .filter(|r| matches!(r.source, LoadStyle::PointerTile | LoadStyle::BlockPtr))
        .cloned()
        .collect();
    for r in &recipes {
        rewrite(func, r);
    }
    recipes.len()
}

fn is_dot_operand(func: &Function, v: Value) -> bool {
    func.ops
        .values()
        .any(|o| matches!(o.kind, OpKind::Dot { .. }) && o.operands[..2].contains(&v))
}

#[test]
fn descriptor_loads_built_from_the_recipes_compute_the_same_results() {
    let examples = triton_examples::load_all().expect("launch cases load");
    let mut failures = Vec::new();
    let mut rewritten_total = 0;
    let mut dot_operands_rewritten = 0;
    for ex in &examples {
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
            let what = format!("{}/{}", ex.name, case.name);
            let mut opts = common::compile_options(&ex.spec, case).unwrap();
            opts.signature = opts.signature.as_deref().map(claim_alignment);
            let source = std::fs::read_to_string(&ex.py_path).unwrap();
            let mut module =
                tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts)
                    .unwrap_or_else(|d| panic!("{what}: {}", d.render(false)));
            let func = module
                .functions
                .iter_mut()
                .find(|f| f.name == ex.spec.kernel)
                .unwrap();
            // The loads feeding dots, before the rewrite renames them.
            let dot_loads: Vec<Op> = {
                let axis = axis_info::analyze(func);
                let plan = infer_tma(func, &axis);
                plan.recipes()
                    .filter(|r| matches!(r.source, LoadStyle::PointerTile | LoadStyle::BlockPtr))
                    .map(|r| r.op)
                    .filter(|&op| is_dot_operand(func, func.ops[op].results[0]))
                    .collect()
            };
            let n = rewrite_tma_loads(func);
            rewritten_total += n;
            dot_operands_rewritten += dot_loads.len();
            if let Err(e) = common::verify_text(&module) {
                failures.push(format!("{what}: the rewritten IR does not verify:\n{e}"));
                continue;
            }
            match common::run_module_on_interpreter(&module, &ex.spec, case, SEED) {
                Ok(report) => eprintln!(
                    "ok   {what}: {n} loads as descriptors, {:?}",
                    report.outputs
                ),
                Err(e) => failures.push(format!("{what} ({n} loads as descriptors):\n{e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // Every GEMM-like example but grouped GEMM (pointer arrays) has its A
    // and B loads rewritten: the test is not vacuous.
    assert!(
        dot_operands_rewritten >= 30,
        "only {dot_operands_rewritten} dot operands rewritten"
    );
    assert!(rewritten_total > dot_operands_rewritten);
}

/// The rewrite itself is checked: a recipe with a wrong coordinate must
/// make the case fail.
#[test]
fn a_wrong_coordinate_is_caught() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let mut opts = common::compile_options(&ex.spec, case).unwrap();
    opts.signature = opts.signature.as_deref().map(claim_alignment);
    let source = std::fs::read_to_string(&ex.py_path).unwrap();
    let mut module =
        tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts).unwrap();
    let func = &mut module.functions[0];
    let axis = axis_info::analyze(func);
    let plan = infer_tma(func, &axis);
    let mut r = plan.recipes().next().expect("the A load is TMA").clone();
    // Shift the K origin by one element.
    let inner = r.dims.last_mut().unwrap();
    inner.coord = inner.coord.checked_add(&Poly::constant(1)).unwrap();
    rewrite(func, &r);
    common::verify_text(&module).unwrap();
    assert!(common::run_module_on_interpreter(&module, &ex.spec, case, SEED).is_err());
}
