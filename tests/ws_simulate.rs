//! The partitioner checked by meaning: every small launch case of the
//! GEMM-like examples is warp-specialized (`tawa_partitioner::partition`)
//! at aref depths 1 to 4, the result must pass the verifier, and the aref
//! simulator (several scheduler seeds) must write exactly the bytes the
//! plain interpreter writes for the unpartitioned kernel — and pass the
//! example's reference check — with no deadlock.
//!
//! As in `tests/tma_recipes.rs`, the kernels are compiled with every
//! integer and pointer parameter declared `:16`, so that the ragged cases
//! (whose row strides are not 16-byte multiples, which TMA inference
//! rightly refuses) still have TMA-able loads to partition: alignment
//! decides legality on the GPU, not the results of the simulation.

mod common;

use tawa_aref::sim::SimOptions;
use tawa_aref::simulate_grid;
use tawa_ir::axis_info;
use tawa_ir::interp::{run_grid, InterpOptions};
use tawa_ir::{verify_function, Function, OpKind};
use tawa_partitioner::{infer_tma, warp_specialize, WsOptions};

const INPUT_SEED: u64 = 5;
const SCHEDULER_SEEDS: [u64; 3] = [0, 1, 7];

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

fn has_ws(func: &Function) -> bool {
    let mut found = false;
    func.walk(&mut |op| found |= matches!(func.ops[op].kind, OpKind::WarpSpecialize { .. }));
    found
}

fn check_example(name: &str) -> usize {
    let ex = triton_examples::load(name).unwrap();
    let mut checked = 0;
    for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
        let what = format!("{name}/{}", case.name);
        let mut opts = common::compile_options(&ex.spec, case).unwrap();
        opts.signature = opts.signature.as_deref().map(claim_alignment);
        let source = std::fs::read_to_string(&ex.py_path).unwrap();
        let module = tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts)
            .unwrap_or_else(|d| panic!("{what}: {}", d.render(false)));
        let plain = common::kernel_function(&module, &ex.spec).unwrap().clone();
        let plan = infer_tma(&plain, &axis_info::analyze(&plain));
        let (_, expected) = common::run_module_with(
            &module,
            &ex.spec,
            case,
            INPUT_SEED,
            &mut |f, args, grid, mem| {
                run_grid(f, args, grid, mem, &InterpOptions::default()).map_err(|e| e.to_string())
            },
        )
        .unwrap_or_else(|e| panic!("{what}: plain run: {e}"));
        for depth in 1..=4 {
            let ws_opts = WsOptions {
                depth,
                ..WsOptions::default()
            };
            let ws = warp_specialize(&plain, &plan, &ws_opts)
                .unwrap_or_else(|e| panic!("{what}: {e}"))
                .unwrap_or_else(|| panic!("{what}: not warp-specialized"));
            assert!(has_ws(&ws), "{what}: no ws op");
            if let Err(errors) = verify_function(&ws) {
                let text = tawa_ir::print_function(&ws);
                panic!("{what}: the WS IR does not verify: {errors:?}\n{text}");
            }
            let mut ws_module = module.clone();
            let slot = ws_module
                .functions
                .iter_mut()
                .find(|f| f.name == ex.spec.kernel)
                .unwrap();
            *slot = ws;
            for seed in SCHEDULER_SEEDS {
                let sim = SimOptions {
                    seed,
                    max_steps: Some(50_000_000),
                    ..SimOptions::default()
                };
                let (_, got) = common::run_module_with(
                    &ws_module,
                    &ex.spec,
                    case,
                    INPUT_SEED,
                    &mut |f, args, grid, mem| {
                        simulate_grid(f, args, grid, mem, &sim)
                            .map(|_| ())
                            .map_err(|e| e.to_string())
                    },
                )
                .unwrap_or_else(|e| panic!("{what} depth {depth} seed {seed}: {e}"));
                assert!(
                    got == expected,
                    "{what} depth {depth} seed {seed}: bytes differ from the plain run"
                );
                checked += 1;
            }
        }
        eprintln!("ok   {what}: depths 1-4, seeds {SCHEDULER_SEEDS:?}");
    }
    assert!(checked > 0, "{name}: no small case");
    checked
}

#[test]
fn matmul() {
    check_example("matmul");
}

#[test]
fn matmul_block_ptr() {
    check_example("matmul_block_ptr");
}

#[test]
fn matmul_descriptor() {
    check_example("matmul_descriptor");
}

#[test]
fn persistent_matmul() {
    check_example("persistent_matmul");
}

#[test]
fn gemm_row_reduce() {
    check_example("gemm_row_reduce");
}

#[test]
fn geglu_dual_gemm() {
    check_example("geglu_dual_gemm");
}

/// The check is not vacuous: releasing the slot before the dot reads it
/// (`aref.consumed` moved right after `aref.get`) is caught.
#[test]
fn an_early_release_is_caught() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let mut opts = common::compile_options(&ex.spec, case).unwrap();
    opts.signature = opts.signature.as_deref().map(claim_alignment);
    let source = std::fs::read_to_string(&ex.py_path).unwrap();
    let mut module =
        tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts).unwrap();
    let plain = &module.functions[0];
    let plan = infer_tma(plain, &axis_info::analyze(plain));
    let mut ws = warp_specialize(plain, &plan, &WsOptions::default())
        .unwrap()
        .expect("matmul is warp-specialized");
    let mut moved = false;
    let blocks: Vec<_> = ws.blocks.keys().collect();
    for b in blocks {
        let ops = ws.blocks[b].ops.clone();
        let get = ops
            .iter()
            .position(|&o| matches!(ws.ops[o].kind, OpKind::ArefGet));
        let consumed = ops
            .iter()
            .position(|&o| matches!(ws.ops[o].kind, OpKind::ArefConsumed));
        if let (Some(g), Some(c)) = (get, consumed) {
            assert!(c > g + 1, "the release follows the reads");
            let op = ws.blocks[b].ops.remove(c);
            ws.blocks[b].ops.insert(g + 1, op);
            moved = true;
        }
    }
    assert!(moved);
    verify_function(&ws).expect("still well-formed");
    module.functions[0] = ws;
    let sim = SimOptions {
        max_steps: Some(50_000_000),
        ..SimOptions::default()
    };
    let result = common::run_module_with(&module, &ex.spec, case, INPUT_SEED, &mut |f, a, g, m| {
        simulate_grid(f, a, g, m, &sim)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let err = result.expect_err("an early release must fail");
    assert!(err.contains("release") || err.contains("released"), "{err}");
}

#[test]
fn matmul_tma_host() {
    check_example("matmul_tma_host");
}

/// Attention's K and V tiles of one KV step travel in one aref; the
/// consumer releases the slot after the second dot (P @ V).
#[test]
fn fused_attention() {
    check_example("fused_attention");
}
