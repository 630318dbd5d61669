//! TMA inference tests.
//!
//! File tests: every `tests/tma_infer/*.py` is compiled (header lines
//! `# signature: ...`, `# kernel: NAME`, `# define: NAME=VALUE` as in the
//! frontend's file tests) and its `--explain` text compared with the
//! blessed `<name>.explain` beside it. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test tma_infer`.
//!
//! Example tests: the GEMM-like examples' A/B loads (and attention's Q, K,
//! V) with their launch cases' signatures: which are TMA is asserted here,
//! and the whole explanation is snapshotted in
//! `tests/tma_infer/examples/<example>.explain`.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use std::path::Path;

use expect_test::expect_file;
use tawa_frontend::{compile, CompileOptions};
use tawa_ir::axis_info;
use tawa_ir::{Function, Module};
use tawa_partitioner::tma_infer::{explain, infer_tma, Extent, LoadStyle, TmaPlan, TmaRecipe};

fn the_kernel(module: Module, name: Option<&str>) -> Function {
    let mut fs = module.functions;
    match name {
        Some(n) => fs.into_iter().find(|f| f.name == n).expect("kernel"),
        None => {
            assert_eq!(fs.len(), 1, "one kernel per file");
            fs.remove(0)
        }
    }
}

fn plan_of(func: &Function) -> TmaPlan {
    let axis = axis_info::analyze(func);
    infer_tma(func, &axis)
}

#[test]
fn explain_file_tests() {
    let dir = file_kernel::test_dir("tma_infer");
    for k in file_kernel::compile_dir("tma_infer", 10) {
        let text = explain(&k.rel, &k.func, &plan_of(&k.func));
        assert!(!text.is_empty(), "{}: no tile loads", k.name);
        expect_file![dir.join(format!("{}.explain", k.name))].assert_eq(&text);
    }
}

// ------------------------------------------------------------------ examples

/// The case's kernel, specialized as the case launches it.
fn example_kernel(example: &str, case: &str) -> (String, Function) {
    let ex = triton_examples::load(example).expect("example loads");
    let case = ex.spec.case(case).expect("case exists");
    let args = ex.spec.compile_args(case).expect("compile args");
    let opts = CompileOptions {
        kernel: args.kernel,
        signature: args.signature,
        defines: args.defines,
        num_warps: args.num_warps,
        num_stages: args.num_stages,
    };
    let source = std::fs::read_to_string(&ex.py_path).expect("kernel file reads");
    let rel = format!("triton-examples/kernels/{example}.py");
    let module = compile(&rel, &source, &opts)
        .unwrap_or_else(|d| panic!("frontend error:\n{}", d.render(false)));
    (rel, the_kernel(module, Some(&ex.spec.kernel)))
}

/// The decision for the load whose result is named `name` (the first
/// such load in program order; `k_1` for the second inlined copy).
fn decision<'p>(
    func: &Function,
    plan: &'p TmaPlan,
    name: &str,
) -> &'p Result<TmaRecipe, tawa_partitioner::NotTma> {
    let names = tawa_ir::printer::value_names(func);
    plan.decisions
        .iter()
        .find(|d| {
            let op = match d {
                Ok(r) => r.op,
                Err(n) => n.op,
            };
            names.get(&func.ops[op].results[0]).map(String::as_str) == Some(name)
        })
        .unwrap_or_else(|| panic!("no load named `{name}`"))
}

fn tma<'p>(func: &Function, plan: &'p TmaPlan, name: &str) -> &'p TmaRecipe {
    match decision(func, plan, name) {
        Ok(r) => r,
        Err(n) => panic!("`{name}` is not TMA: {}", n.reason),
    }
}

fn not_tma(func: &Function, plan: &TmaPlan, name: &str) -> String {
    match decision(func, plan, name) {
        Ok(r) => panic!("`{name}` is TMA: {r:?}"),
        Err(n) => n.reason.clone(),
    }
}

/// Runs `check` on each case and snapshots the explanations of all of
/// them in `examples/<example>.explain`.
fn example(name: &str, cases: &[&str], check: impl Fn(&str, &Function, &TmaPlan)) {
    let mut text = String::new();
    for case in cases {
        let (rel, func) = example_kernel(name, case);
        let plan = plan_of(&func);
        check(case, &func, &plan);
        text.push_str(&format!("# case {case}\n"));
        text.push_str(&explain(&rel, &func, &plan));
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tma_infer/examples");
    expect_file![dir.join(format!("{name}.explain"))].assert_eq(&text);
}

#[test]
fn matmul_tutorial_loads_are_tma_with_their_wraps_proven() {
    example(
        "matmul",
        &["square_4096", "ragged_100", "leaky_relu_grouped_bt"],
        |case, f, p| {
            match case {
                "square_4096" => {
                    let a = tma(f, p, "a");
                    assert_eq!(a.box_shape(), vec![128, 64]);
                    assert_eq!(a.copies_per_load(), 1);
                    assert_eq!(a.wrap_proofs.len(), 1, "rows wrap % M");
                    assert_eq!(a.wrap_proofs[0].tile_dim, 0);
                    let b = tma(f, p, "b");
                    // 256 fp16 columns are 512 bytes: four 128-byte boxes.
                    assert_eq!(b.box_shape(), vec![64, 64]);
                    assert_eq!(b.copies_per_load(), 4);
                    assert_eq!(b.wrap_proofs[0].tile_dim, 1);
                    assert_eq!(b.bytes_per_load(), 64 * 256 * 2);
                    assert!(!a.is_transposed() && !b.is_transposed());
                }
                // M = N = K = 100: 200-byte rows are no multiple of 16.
                _ => {
                    for load in ["a", "b"] {
                        let why = not_tma(f, p, load);
                        assert!(why.contains("multiple of 16 bytes"), "{why}");
                    }
                }
            }
        },
    );
}

#[test]
fn block_pointer_and_descriptor_matmuls_are_tma() {
    example(
        "matmul_block_ptr",
        &["square_4096", "ragged_100"],
        |case, f, p| {
            if case == "square_4096" {
                for load in ["a", "b"] {
                    assert_eq!(tma(f, p, load).source, LoadStyle::BlockPtr);
                }
            } else {
                assert!(not_tma(f, p, "a").contains("multiple of 16 bytes"));
            }
        },
    );
    example(
        "matmul_descriptor",
        &["square_4096", "ragged_100"],
        |case, f, p| {
            assert_eq!(tma(f, p, "a").source, LoadStyle::TensorDesc);
            if case == "square_4096" {
                assert_eq!(tma(f, p, "b").source, LoadStyle::TensorDesc);
            } else {
                // B's rows are N = 100 elements.
                assert!(not_tma(f, p, "b").contains("multiple of 16 bytes"));
            }
        },
    );
    example(
        "matmul_tma_host",
        &["square_8192", "ragged_100"],
        |_, f, p| {
            for load in ["a", "b"] {
                assert_eq!(tma(f, p, load).source, LoadStyle::HostTensorDesc);
            }
        },
    );
}

#[test]
fn persistent_dual_and_row_reduce_gemms_are_tma() {
    example("persistent_matmul", &["square_4096"], |_, f, p| {
        let a = tma(f, p, "a");
        assert_eq!(a.wrap_proofs.len(), 1);
        let b = tma(f, p, "b");
        assert_eq!(b.wrap_proofs.len(), 1);
    });
    example(
        "geglu_dual_gemm",
        &["ffn_4096x11008", "ragged_100"],
        |case, f, p| {
            for load in ["wg", "wu"] {
                assert!(tma(f, p, load).wrap_proofs.is_empty());
            }
            if case == "ffn_4096x11008" {
                tma(f, p, "a");
            }
        },
    );
    example("gemm_row_reduce", &["square_4096"], |_, f, p| {
        tma(f, p, "a");
        tma(f, p, "b");
    });
}

#[test]
fn grouped_gemm_pointer_arrays_are_not_tma() {
    example("grouped_gemm", &["four_square"], |_, f, p| {
        for load in ["a", "b"] {
            let why = not_tma(f, p, load);
            assert!(why.contains("loaded from memory"), "{why}");
        }
    });
}

#[test]
fn attention_q_k_v_are_tma_with_head_dimensions_of_box_one() {
    example(
        "fused_attention",
        &["noncausal_d64", "causal_d128"],
        |case, f, p| {
            let names: &[&str] = if case == "noncausal_d64" {
                &["q", "k", "v"]
            } else {
                &["q", "k", "v", "k_1", "v_1"]
            };
            for &load in names {
                let r = tma(f, p, load);
                // [z, h, rows, head_dim]: batch and head are offsets of the
                // base, dimensions of box 1.
                assert_eq!(r.rank(), 4, "{load}");
                assert_eq!(r.dims[0].box_size, 1);
                assert_eq!(r.dims[1].box_size, 1);
                assert_eq!(r.dims[0].tile_dim, None);
            }
            // K is read as a [HEAD_DIM, BLOCK_N] tile of a row-major tensor.
            assert!(tma(f, p, "k").is_transposed());
            assert!(!tma(f, p, "v").is_transposed());
        },
    );
}

#[test]
fn weight_grad_reads_x_transposed_through_tma() {
    example("weight_grad", &["tokens_8192", "ragged_all"], |_, f, p| {
        // X^T's tile [BLOCK_M, BLOCK_K] is contiguous along M: the box runs
        // [K, M], M innermost.
        let x = tma(f, p, "x_t");
        assert!(x.is_transposed());
        assert_eq!(x.dims[1].tile_dim, Some(0));
        assert!(!tma(f, p, "dy").is_transposed());
    });
}

#[test]
fn transposed_operands_are_copied_as_they_lie() {
    // `tl.dot(x, w.T)`: W's tile is copied [BLOCK_N, BLOCK_K], K innermost,
    // and read through `trans`; swap-AB transposes both row-major tiles.
    example("linear", &["square_8192", "ragged"], |_, f, p| {
        assert!(!tma(f, p, "x").is_transposed());
        assert!(!tma(f, p, "w").is_transposed());
    });
    example(
        "matmul_swap_ab",
        &["decode_16x8192x8192", "decode_ragged"],
        |_, f, p| {
            assert!(!tma(f, p, "a").is_transposed());
            assert!(!tma(f, p, "b").is_transposed());
        },
    );
}

#[test]
fn clamped_persistent_matmul_loads_are_tma() {
    example(
        "persistent_matmul_clamped",
        &["square_4096", "ragged_tma_clamped"],
        |case, f, p| {
            let a = tma(f, p, "a");
            let b = tma(f, p, "b");
            if case == "square_4096" {
                assert_eq!(a.wrap_proofs.len(), 1, "rows clamped below M");
                assert_eq!(a.wrap_proofs[0].how, "clamped below");
            }
            assert_eq!(b.wrap_proofs.len(), 1, "columns clamped below N");
        },
    );
}

#[test]
fn unmasked_dual_gemm_loads_are_lowered_with_covering_extents() {
    use tawa_partitioner::tma_lower::{unchecked_extent, why_not_lowered, UncheckedExtent};
    example("glu_dual_gemm_unmasked", &["ffn_4096x11008"], |_, f, p| {
        let r = tma(f, p, "a");
        assert!(r.dims.iter().all(|d| d.extent == Extent::Unbounded));
        assert_eq!(why_not_lowered(f, r), None);
        // Rows: the largest extent; columns: what the K loop reads,
        // `max(64*(K // 64 - 1) + 64, 64)` (parameter 6 is K).
        assert_eq!(unchecked_extent(f, r, 0), Some(UncheckedExtent::Outer));
        let Some(UncheckedExtent::Covering(e)) = unchecked_extent(f, r, 1) else {
            panic!("no covering extent");
        };
        let k = |i: usize| (i == 6).then_some(4096);
        assert_eq!(e.eval(&k), Some(4096));
        let k = |i: usize| (i == 6).then_some(4100);
        assert_eq!(e.eval(&k), Some(4096));
        let k = |i: usize| (i == 6).then_some(10);
        assert_eq!(e.eval(&k), Some(64));
        // W's columns come from the grid: 128 a program along y.
        let w = p.recipes().nth(1).expect("the W_gate load");
        let Some(UncheckedExtent::Covering(e)) = unchecked_extent(f, w, 1) else {
            panic!("no covering extent");
        };
        assert_eq!(e.eval_in_grid(&|_| None, Some([32, 86, 1])), Some(86 * 128));
    });
}

/// The same loads in the persistent kernel: the source's program id
/// along y is `tile // tw_grid_x` there, below the grid parameter
/// `tw_grid_y` as the program id was below the grid's y size, so W's
/// columns still get a covering extent (and the producer copies W).
#[test]
fn persistent_unmasked_dual_gemm_bounds_its_columns_by_the_grid_parameter() {
    use tawa_partitioner::tma_lower::{unchecked_extent, why_not_lowered, UncheckedExtent};
    let (_, mut f) = example_kernel("glu_dual_gemm_unmasked", "ffn_4096x11008");
    tawa_pipeliner::persistent::make_persistent(&mut f).expect("persistent");
    let p = plan_of(&f);
    let w = p.recipes().nth(1).expect("the W_gate load");
    assert_eq!(why_not_lowered(&f, w), None);
    let Some(UncheckedExtent::Covering(e)) = unchecked_extent(&f, w, 1) else {
        panic!("no covering extent");
    };
    let grid_y = f
        .params
        .iter()
        .position(|q| q.name == tawa_pipeliner::persistent::GRID_PARAM_Y)
        .expect("tw_grid_y");
    assert!(!e.uses_grid(), "the launched grid is one program per SM");
    assert_eq!(e.eval(&|i| (i == grid_y).then_some(86)), Some(86 * 128));
}
