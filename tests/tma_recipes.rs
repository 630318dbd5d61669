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
use tawa_ir::{Function, OpKind, Value};
use tawa_partitioner::affine::Poly;
use tawa_partitioner::tma_infer::{infer_tma, infer_tma_stores};
use tawa_partitioner::tma_store::{lower_tma_stores, StorePolicy};

/// Every store a TMA store can write, however small its tile.
const EVERY_STORE: StorePolicy = StorePolicy {
    small_store_bytes: 0,
};

const SEED: u64 = 3;

fn is_dot_operand(func: &Function, v: Value) -> bool {
    func.ops
        .values()
        .any(|o| matches!(o.kind, OpKind::Dot { .. }) && o.operands[..2].contains(&v))
}

#[test]
fn descriptor_loads_built_from_the_recipes_compute_the_same_results() {
    let mut dot_operands_rewritten = 0;
    let (failures, rewritten_total) = rewrite_and_run("loads", &mut |func| {
        // The loads feeding dots, before the rewrite renames them.
        dot_operands_rewritten += rewritable_recipes(func)
            .iter()
            .filter(|r| is_dot_operand(func, func.ops[r.op].results[0]))
            .count();
        rewrite_tma_loads(func)
    });
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

/// Every small case of every example, compiled as the module docs say,
/// its kernel rewritten by `rewrite` (which returns how many `what` it
/// rewrote), verified and run on the interpreter against its reference:
/// the cases that fail, and how many `what` were rewritten in all.
fn rewrite_and_run(
    what_ops: &str,
    rewrite: &mut dyn FnMut(&mut Function) -> usize,
) -> (Vec<String>, usize) {
    let examples = triton_examples::load_all().expect("launch cases load");
    let mut failures = Vec::new();
    let mut total = 0;
    for ex in &examples {
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
            let what = format!("{}/{}", ex.name, case.name);
            let mut module = compile_aligned(ex, case);
            let func = module
                .functions
                .iter_mut()
                .find(|f| f.name == ex.spec.kernel)
                .unwrap();
            let n = rewrite(func);
            total += n;
            if let Err(e) = common::verify_text(&module) {
                failures.push(format!("{what}: the rewritten IR does not verify:\n{e}"));
                continue;
            }
            match common::run_module_on_interpreter(&module, &ex.spec, case, SEED) {
                Ok(report) => eprintln!(
                    "ok   {what}: {n} {what_ops} as descriptors, {:?}",
                    report.outputs
                ),
                Err(e) => failures.push(format!("{what} ({n} {what_ops} as descriptors):\n{e}")),
            }
        }
    }
    (failures, total)
}

/// The rewrite itself is checked: a recipe with a wrong coordinate must
/// make the case fail.
#[test]
fn a_wrong_coordinate_is_caught() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let mut module = compile_aligned(&ex, case);
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

/// The same for stores: every store `tma_store` turns into a `desc_store`
/// (the interpreter drops its out-of-bounds elements, as a TMA store
/// does) leaves every small case of every example matching its
/// reference, writing nothing outside its outputs: the mask-derived
/// extents of ragged cases clip exactly the rows and columns the masks
/// dropped.
#[test]
fn descriptor_stores_built_from_the_recipes_compute_the_same_results() {
    let (failures, lowered_total) = rewrite_and_run("stores", &mut |func| {
        let plan = infer_tma_stores(func, &axis_info::analyze(func));
        // Every store TMA can write, small tiles too (the rewrite is what is
        // checked here, not the policy).
        let n = lower_tma_stores(func, &plan, EVERY_STORE).len();
        tawa_ir::eliminate_dead_code(func);
        n
    });
    assert!(
        failures.is_empty(),
        "{} cases differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(lowered_total >= 15, "only {lowered_total} stores lowered");
}

/// And the store rewrite is checked: a store one row off must fail.
#[test]
fn a_store_one_row_off_is_caught() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let mut module = compile_aligned(&ex, case);
    let func = &mut module.functions[0];
    let mut plan = infer_tma_stores(func, &axis_info::analyze(func));
    let Some(Ok(r)) = plan.decisions.first_mut() else {
        panic!("the C store is TMA-able");
    };
    let outer = r.dims.first_mut().unwrap();
    outer.coord = outer.coord.checked_add(&Poly::constant(1)).unwrap();
    assert_eq!(lower_tma_stores(func, &plan, EVERY_STORE).len(), 1);
    common::verify_text(&module).unwrap();
    assert!(common::run_module_on_interpreter(&module, &ex.spec, case, SEED).is_err());
}

/// `ex`'s kernel for `case`, every integer and pointer parameter declared
/// `:16` (see the module docs).
fn compile_aligned(ex: &triton_examples::Example, case: &triton_examples::Case) -> tawa_ir::Module {
    let mut opts = common::compile_options(&ex.spec, case).unwrap();
    opts.signature = opts.signature.as_deref().map(common::claim_alignment);
    let source = std::fs::read_to_string(&ex.py_path).unwrap();
    tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts)
        .unwrap_or_else(|d| panic!("{}/{}: {}", ex.name, case.name, d.render(false)))
}
