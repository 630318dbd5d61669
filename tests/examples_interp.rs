//! Every example kernel (`triton-examples/kernels/*.py`), every launch case
//! tagged `small`: the frontend compiles it, the verifier accepts the IR, the
//! IR survives the text round trip (`print(parse(print(m))) == print(m)`,
//! and the parsed module verifies), and the interpreter's outputs match the
//! plain-Rust reference within the case's tolerance, with nothing written
//! outside the outputs' views. Every failure is collected and reported
//! together at the end.
//!
//! Run with `--nocapture` to see per-case timings.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use triton_examples::spec::Expr;
use triton_examples::{Arg, Case, Example};

/// Inputs are seeded so that failures reproduce.
const SEED: u64 = 1;

fn check_case(ex: &Example, case: &Case) -> Result<String, String> {
    let module = common::compile_case(&ex.py_path, &ex.spec, case)?;
    common::check_round_trip(&module)?;
    let report = common::run_module_on_interpreter(&module, &ex.spec, case, SEED)?;
    let errors: Vec<String> = report
        .outputs
        .iter()
        .map(|(name, err)| format!("{name} max err {err:.2e}"))
        .collect();
    Ok(format!(
        "grid {:?}, interpreter {:.2}s, {}",
        report.grid,
        report.interp_time.as_secs_f64(),
        errors.join(", ")
    ))
}

#[test]
fn small_cases_match_references_on_the_interpreter() {
    let examples = triton_examples::load_all().expect("launch cases load");
    let mut ran = 0;
    let mut failures = Vec::new();
    for ex in &examples {
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
            ran += 1;
            let what = format!("{}/{}", ex.name, case.name);
            let start = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| check_case(ex, case)))
                .unwrap_or_else(|p| Err(format!("panicked: {}", common::panic_message(&*p))));
            let secs = start.elapsed().as_secs_f64();
            match result {
                Ok(summary) => eprintln!("ok   {what} ({secs:.2}s): {summary}"),
                Err(msg) => {
                    eprintln!("FAIL {what} ({secs:.2}s)");
                    failures.push(format!("{what}:\n{msg}"));
                }
            }
        }
    }
    assert!(ran > 0, "no small cases found");
    assert!(
        failures.is_empty(),
        "{} of {ran} small cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The harness itself: a kernel that writes a contiguous output where the
/// case declares a strided one (stride 2) must fail on both counts, values
/// (odd logical elements never written) and writes into the gaps.
#[test]
fn harness_catches_writes_outside_a_strided_output() {
    let ex = triton_examples::load("vector_add").unwrap();
    let mut case = ex.spec.case("ragged_1000").unwrap().clone();
    for arg in &mut case.args {
        if let Arg::Tensor(t) = arg {
            if t.output {
                t.strides = Some(vec![Expr::Int(2)]);
            }
        }
    }
    let module = common::compile_case(&ex.py_path, &ex.spec, &case).unwrap();
    let err = common::run_module_on_interpreter(&module, &ex.spec, &case, SEED).unwrap_err();
    assert!(err.contains("elements differ"), "{err}");
    assert!(err.contains("outside the tensor's view"), "{err}");
}
