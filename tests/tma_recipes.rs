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
#[path = "../partitioner/tests/support/descriptor_rewrite.rs"]
mod descriptor_rewrite;

use descriptor_rewrite::{rewritable_recipes, rewrite, rewrite_tma_loads};
use tawa_ir::axis_info;
use tawa_ir::{Function, Op, OpKind, Value};
use tawa_partitioner::affine::Poly;
use tawa_partitioner::tma_infer::infer_tma;

const SEED: u64 = 3;

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
            opts.signature = opts.signature.as_deref().map(common::claim_alignment);
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
            let dot_loads: Vec<Op> = rewritable_recipes(func)
                .iter()
                .map(|r| r.op)
                .filter(|&op| is_dot_operand(func, func.ops[op].results[0]))
                .collect();
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
    opts.signature = opts.signature.as_deref().map(common::claim_alignment);
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
