//! `tawa_ir::eliminate_dead_code` checked by meaning on every example.
//!
//! - Every small launch case of every example kernel: the compiled module
//!   with the pass run over each function must verify, survive the text
//!   round trip, and match the plain-Rust reference on the interpreter.
//! - The GEMM-like examples, warp-specialized as in `tests/ws_simulate.rs`
//!   (every parameter claimed `:16` so the ragged cases have TMA-able
//!   loads): the WS IR with the pass run over it must verify, and the aref
//!   simulator must write exactly the bytes the plain interpreter writes for
//!   the unpartitioned kernel.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use tawa_aref::sim::SimOptions;
use tawa_aref::simulate_grid;
use tawa_ir::interp::{run_grid, InterpOptions};
use tawa_ir::{axis_info, eliminate_dead_code, print_function, verify_function};
use tawa_partitioner::{infer_tma, warp_specialize, WsOptions};
use triton_examples::{Case, Example};

const SEED: u64 = 3;

fn check_plain_case(ex: &Example, case: &Case) -> Result<bool, String> {
    let mut module = common::compile_case(&ex.py_path, &ex.spec, case)?;
    let mut changed = false;
    for func in &mut module.functions {
        changed |= eliminate_dead_code(func);
        verify_function(func).map_err(|e| format!("does not verify after DCE: {e:?}"))?;
    }
    common::check_round_trip(&module)?;
    common::run_module_on_interpreter(&module, &ex.spec, case, SEED)?;
    Ok(changed)
}

#[test]
fn small_cases_still_match_references_after_dce() {
    let examples = triton_examples::load_all().expect("launch cases load");
    let (mut ran, mut changed) = (0, 0);
    let mut failures = Vec::new();
    for ex in &examples {
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
            ran += 1;
            let what = format!("{}/{}", ex.name, case.name);
            let result = catch_unwind(AssertUnwindSafe(|| check_plain_case(ex, case)))
                .unwrap_or_else(|p| Err(format!("panicked: {}", common::panic_message(&*p))));
            match result {
                Ok(c) => {
                    changed += usize::from(c);
                    eprintln!("ok   {what}{}", if c { " (changed)" } else { "" });
                }
                Err(msg) => failures.push(format!("{what}:\n{msg}")),
            }
        }
    }
    eprintln!("{changed} of {ran} cases changed by DCE");
    assert!(ran > 0, "no small cases found");
    assert!(
        failures.is_empty(),
        "{} of {ran} small cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn check_ws_example(name: &str) {
    let ex = triton_examples::load(name).unwrap();
    let mut checked = 0;
    for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
        let what = format!("{name}/{}", case.name);
        let mut opts = common::compile_options(&ex.spec, case).unwrap();
        opts.signature = opts.signature.as_deref().map(common::claim_alignment);
        let source = std::fs::read_to_string(&ex.py_path).unwrap();
        let module = tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts)
            .unwrap_or_else(|d| panic!("{what}: {}", d.render(false)));
        let plain = common::kernel_function(&module, &ex.spec).unwrap().clone();
        let plan = infer_tma(&plain, &axis_info::analyze(&plain));
        let (_, expected) =
            common::run_module_with(&module, &ex.spec, case, SEED, &mut |f, args, grid, mem| {
                run_grid(f, args, grid, mem, &InterpOptions::default()).map_err(|e| e.to_string())
            })
            .unwrap_or_else(|e| panic!("{what}: plain run: {e}"));
        let mut ws = warp_specialize(&plain, &plan, &WsOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .unwrap_or_else(|| panic!("{what}: not warp-specialized"));
        let changed = eliminate_dead_code(&mut ws);
        if let Err(errors) = verify_function(&ws) {
            panic!(
                "{what}: the WS IR does not verify after DCE: {errors:?}\n{}",
                print_function(&ws)
            );
        }
        let mut ws_module = module.clone();
        let slot = ws_module
            .functions
            .iter_mut()
            .find(|f| f.name == ex.spec.kernel)
            .unwrap();
        *slot = ws;
        let sim = SimOptions {
            max_steps: Some(50_000_000),
            ..SimOptions::default()
        };
        let (_, got) = common::run_module_with(
            &ws_module,
            &ex.spec,
            case,
            SEED,
            &mut |f, args, grid, mem| {
                simulate_grid(f, args, grid, mem, &sim)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        )
        .unwrap_or_else(|e| panic!("{what}: simulated WS run after DCE: {e}"));
        assert!(got == expected, "{what}: bytes differ from the plain run");
        eprintln!("ok   {what}{}", if changed { " (changed)" } else { "" });
        checked += 1;
    }
    assert!(checked > 0, "{name}: no small case");
}

#[test]
fn ws_gemms_still_simulate_after_dce() {
    for name in [
        "matmul",
        "matmul_block_ptr",
        "matmul_descriptor",
        "persistent_matmul",
        "gemm_row_reduce",
        "geglu_dual_gemm",
    ] {
        check_ws_example(name);
    }
}
