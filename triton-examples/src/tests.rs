//! Checks of every launch case (parsing, expressions, grid, parameters versus
//! the Python source, deterministic non-trivial inputs, references runnable
//! on small cases) and of the references on hand-computed inputs.

use std::collections::BTreeMap;

use expect_test::expect;

use crate::spec::*;
use crate::*;

/// Parameter names of `def kernel(...)` in a Python file.
fn python_params(source: &str, kernel: &str) -> Vec<String> {
    let start = source
        .find(&format!("def {kernel}("))
        .unwrap_or_else(|| panic!("no def {kernel}"))
        + kernel.len()
        + 5;
    let mut depth = 0;
    let mut end = start;
    for (i, c) in source[start..].char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' if depth > 0 => depth -= 1,
            ')' => {
                end = start + i;
                break;
            }
            _ => {}
        }
    }
    source[start..end]
        .split(',')
        .map(|p| p.split([':', '=']).next().unwrap().trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

#[test]
fn every_example_loads_and_matches_its_kernel() {
    let examples = load_all().unwrap();
    let names: Vec<&str> = examples.iter().map(|e| e.name.as_str()).collect();
    expect![[r#"["atomic_accumulate", "batched_matmul", "fused_attention", "fused_softmax", "geglu_dual_gemm", "gemm_row_reduce", "glu_dual_gemm_unmasked", "grouped_gemm", "layer_norm_fwd", "linear", "matmul", "matmul_block_ptr", "matmul_descriptor", "matmul_subtiled_epilogue", "matmul_swap_ab", "matmul_tma_host", "persistent_matmul", "persistent_matmul_clamped", "split_k_matmul", "vector_add", "weight_grad"]"#]].assert_eq(&format!("{names:?}"));
    for ex in &examples {
        let source = std::fs::read_to_string(&ex.py_path).unwrap();
        assert!(source.contains("@triton.jit"), "{}", ex.name);
        assert_eq!(
            python_params(&source, &ex.spec.kernel),
            ex.spec.params,
            "{}",
            ex.name
        );
        assert!(
            ex.spec.cases.iter().any(|c| c.has_tag("small")),
            "{}: no small case",
            ex.name
        );
        for case in &ex.spec.cases {
            assert!(
                case.has_tag("small") || case.has_tag("large"),
                "{}/{}: tag small or large",
                ex.name,
                case.name
            );
            // Constexprs must not bind non-constexpr parameters.
            for c in case.constexprs.keys() {
                assert!(
                    source.contains(&format!("{c}: tl.constexpr")),
                    "{}/{}: `{c}` is not a tl.constexpr in the source",
                    ex.name,
                    case.name
                );
            }
        }
    }
}

/// Entries of a signature: commas inside `tensordesc<fp16[64, 64]>` do not
/// separate parameters.
fn top_level_entries(sig: &str) -> usize {
    let mut depth = 0i32;
    let mut n = 1;
    for c in sig.chars() {
        match c {
            '<' | '[' => depth += 1,
            '>' | ']' => depth -= 1,
            ',' if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}

#[test]
fn every_case_evaluates() {
    for ex in load_all().unwrap() {
        for case in &ex.spec.cases {
            let what = format!("{}/{}", ex.name, case.name);
            let grid = case.grid().unwrap();
            assert!(grid.iter().all(|g| *g >= 1), "{what}");
            let args = ex.spec.compile_args(case).unwrap();
            assert_eq!(args.kernel.as_deref(), Some(ex.spec.kernel.as_str()));
            assert_eq!(
                top_level_entries(&args.signature.unwrap()),
                ex.spec.params.len(),
                "{what}"
            );
            let launch = case.launch_args().unwrap();
            assert_eq!(launch.len(), case.args.len(), "{what}");
            if case.has_tag("large") {
                let (flops, bytes) = case.bench_work().unwrap();
                assert!(
                    flops.is_some() || bytes.is_some(),
                    "{what}: large case without bench"
                );
            }
            if case.has_tag("small") {
                if let (Some(flops), _) = case.bench_work().unwrap() {
                    assert!(
                        flops / 2 <= 5_000_000,
                        "{what}: too big for the interpreter"
                    );
                }
            }
        }
    }
}

#[test]
fn inputs_are_deterministic_and_not_trivial() {
    for ex in load_all().unwrap() {
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
            let what = format!("{}/{}", ex.name, case.name);
            let a = build_inputs(case, 7).unwrap();
            let b = build_inputs(case, 7).unwrap();
            let c = build_inputs(case, 8).unwrap();
            // NaN != NaN, so compare bit patterns.
            let bits = |ts: &[HostTensor]| -> Vec<Vec<u64>> {
                ts.iter()
                    .map(|t| t.data.iter().map(|v| v.to_bits()).collect())
                    .collect()
            };
            assert_eq!(bits(&a), bits(&b), "{what}: not deterministic");
            for (ta, tc) in a.iter().zip(&c) {
                let spec_t = case.tensors().find(|t| t.name == ta.name);
                let random = spec_t.is_some_and(|t| {
                    !t.output && !matches!(t.init, Some(Init::Values { .. }) | Some(Init::Zeros))
                });
                if random {
                    assert_ne!(
                        bits(&[ta.clone()]),
                        bits(&[tc.clone()]),
                        "{what}: seed ignored"
                    );
                    let logical = ta.logical();
                    assert!(
                        logical.iter().any(|v| *v != 0.0),
                        "{what}: `{}` all zeros",
                        ta.name
                    );
                    assert!(
                        logical.iter().all(|v| v.is_finite()),
                        "{what}: `{}`",
                        ta.name
                    );
                    assert!(
                        logical.iter().all(|v| round_to(ta.dtype, *v) == *v),
                        "{what}: `{}` not rounded",
                        ta.name
                    );
                }
                if ta.output && ta.dtype.is_float() && spec_t.is_some_and(|t| t.init.is_none()) {
                    assert!(
                        ta.logical().iter().all(|v| v.is_nan()),
                        "{what}: not poisoned"
                    );
                }
            }
        }
    }
}

#[test]
fn references_run_on_every_small_case() {
    for ex in load_all().unwrap() {
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
            let what = format!("{}/{}", ex.name, case.name);
            let inputs = build_inputs(case, 1).unwrap();
            let expected = run_reference(&ex.spec, case, &inputs).unwrap();
            let outputs: Vec<&HostTensor> = inputs.iter().filter(|t| t.output).collect();
            assert!(!outputs.is_empty(), "{what}: no outputs");
            for t in outputs {
                let e = expected
                    .get(&t.name)
                    .unwrap_or_else(|| panic!("{what}: no expectation for `{}`", t.name));
                assert_eq!(e.len(), t.numel(), "{what}");
                assert!(
                    e.iter().all(|v| v.is_finite()),
                    "{what}: `{}` not finite",
                    t.name
                );
                assert!(
                    e.iter().any(|v| *v != 0.0),
                    "{what}: `{}` all zeros",
                    t.name
                );
            }
        }
    }
}

fn sig(name: &str, case: &str) -> String {
    let ex = load(name).unwrap();
    let case = ex.spec.case(case).unwrap();
    let args = ex.spec.compile_args(case).unwrap();
    format!("{args:#?}")
}

#[test]
fn vector_add_signature() {
    expect![[r#"
        CompileArgs {
            kernel: Some(
                "add_kernel",
            ),
            signature: Some(
                "*fp32:16, *fp32:16, *fp32:16, i32, 256",
            ),
            defines: [
                (
                    "BLOCK_SIZE",
                    "256",
                ),
            ],
            num_warps: None,
            num_stages: None,
        }"#]]
    .assert_eq(&sig("vector_add", "ragged_1000"));
}

#[test]
fn matmul_signature() {
    let ex = load("matmul").unwrap();
    let sig = |c: &str| ex.spec.signature(ex.spec.case(c).unwrap()).unwrap();
    expect![
        "*fp16:16, *fp16:16, *fp16:16, i32, i32, i32, i32, 1, i32, 1, i32, 1, 64, 64, 32, 8, ''"
    ]
    .assert_eq(&sig("ragged_100"));
    expect!["*fp16:16, *fp16:16, *fp16:16, i32, i32, i32, i32, 1, 1, i32, i32, 1, 32, 32, 16, 2, 'leaky_relu'"]
        .assert_eq(&sig("leaky_relu_grouped_bt"));
    expect!["*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, 1, i32:16, 1, i32:16, 1, 128, 256, 64, 8, ''"]
        .assert_eq(&sig("square_4096"));
}

#[test]
fn descriptor_and_pointer_array_signatures() {
    let ex = load("matmul_tma_host").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    expect![[r#"tensordesc<fp16[64, 32]>, tensordesc<fp16[32, 64]>, tensordesc<fp16[64, 64]>, i32, i32, i32:16, 64, 64, 32"#]]
        .assert_eq(&ex.spec.signature(case).unwrap());
    let descs: Vec<String> = case
        .launch_args()
        .unwrap()
        .into_iter()
        .filter(|(_, a)| matches!(a, LaunchArg::Desc { .. }))
        .map(|(n, a)| format!("{n}: {a:?}"))
        .collect();
    expect![[r#"
        a_desc: Desc { of: "a", shape: [100, 96], strides: [96, 1], block: [64, 32] }
        b_desc: Desc { of: "b", shape: [96, 104], strides: [104, 1], block: [32, 64] }
        c_desc: Desc { of: "c", shape: [100, 104], strides: [104, 1], block: [64, 64] }"#]]
    .assert_eq(&descs.join("\n"));

    let ex = load("grouped_gemm").unwrap();
    let case = ex.spec.case("three_ragged").unwrap();
    expect!["*i64:16, *i64:16, *i64:16, *i32:16, *i32:16, i32, 4, 64, 64, 32"]
        .assert_eq(&ex.spec.signature(case).unwrap());
    let inputs = build_inputs(case, 0).unwrap();
    let a_ptrs = inputs.iter().find(|t| t.name == "a_ptrs").unwrap();
    assert_eq!(
        a_ptrs.pointers_to.as_deref(),
        Some(&["a0".to_string(), "a1".into(), "a2".into()][..])
    );
}

#[test]
fn expressions_and_constexpr_values() {
    let mut env = BTreeMap::new();
    env.insert("M".to_string(), 100);
    assert_eq!(Expr::Text("cdiv(M, 64)".into()).eval(&env), Ok(2));
    assert_eq!(Expr::Int(3).eval(&env), Ok(3));
    assert_eq!(Constexpr::Str("it's".into()).python(), r"'it\'s'");
    assert_eq!(Constexpr::Bool(true).python(), "True");
    assert_eq!(Constexpr::Float(1e-5).python(), "1e-5");
    assert_eq!(
        Constexpr::Raw {
            py: "tl.float16".into()
        }
        .python(),
        "tl.float16"
    );
}

#[test]
fn bad_cases_are_errors_not_panics() {
    let base = r#"
        kernel = "k"
        reference = "vector_add"
        params = ["x", "n", "B"]
        [[case]]
        name = "c"
        tags = ["small"]
        constexprs = { B = 16 }
        grid = ["cdiv(n, B)"]
        tolerance = { atol = 0.0, rtol = 0.0 }
        args = [{ kind = "tensor", name = "x", dtype = "fp32", shape = ["n"] },
                { kind = "scalar", name = "n", dtype = "i32", value = 4 }]
    "#;
    let spec: ExampleSpec = toml::from_str(base).unwrap();
    // `n` is an argument, not a size: the grid cannot see it.
    assert!(spec.validate().unwrap_err().contains("unknown name `n`"));
    let swapped = base.replace(r#"params = ["x", "n", "B"]"#, r#"params = ["n", "x", "B"]"#);
    let spec: ExampleSpec = toml::from_str(&swapped).unwrap();
    assert!(spec.validate().unwrap_err().contains("do not match"));
    // Neither small nor large: no way to check it.
    let untagged = base.replace(r#"tags = ["small"]"#, r#"tags = ["bench"]"#);
    let spec: ExampleSpec = toml::from_str(&untagged).unwrap();
    assert!(spec.validate().unwrap_err().contains("`small` and `large`"));
    let bad_kind = base.replace(r#"kind = "scalar""#, r#"kind = "scalr""#);
    assert!(toml::from_str::<ExampleSpec>(&bad_kind).is_err());
    let bad_dtype = base.replace("fp32", "fp33").replace("cdiv(n, B)", "1");
    let spec: ExampleSpec = toml::from_str(&bad_dtype).unwrap();
    assert!(spec
        .validate()
        .unwrap_err()
        .contains("unknown dtype `fp33`"));
}

/// A one-case spec over the given args, for reference checks.
fn tiny_spec(reference: &str, roles: &str, constexprs: &str, args: &str) -> (ExampleSpec, Case) {
    let text = format!(
        r#"
        kernel = "k"
        reference = "{reference}"
        params = []
        roles = {{ {roles} }}
        [[case]]
        name = "t"
        constexprs = {{ {constexprs} }}
        grid = [1]
        tolerance = {{ atol = 0.0, rtol = 0.0 }}
        args = [{args}]
    "#
    );
    let spec: ExampleSpec = toml::from_str(&text).unwrap();
    let case = spec.cases[0].clone();
    (spec, case)
}

#[test]
fn matmul_reference_2x2() {
    let (spec, case) = tiny_spec(
        "matmul",
        "",
        r#"ACTIVATION = "leaky_relu""#,
        r#"{ kind = "tensor", name = "a", dtype = "fp32", shape = [2, 2], init = { dist = "values", values = [1, 2, 3, 4] } },
           { kind = "tensor", name = "b", dtype = "fp32", shape = [2, 2], init = { dist = "values", values = [5, 6, -7, -8] } },
           { kind = "tensor", name = "c", dtype = "fp16", shape = [2, 2], output = true }"#,
    );
    let inputs = build_inputs(&case, 0).unwrap();
    let out = run_reference(&spec, &case, &inputs).unwrap();
    // [[1*5 + 2*-7, 1*6 + 2*-8], [3*5 + 4*-7, 3*6 + 4*-8]] = [[-9, -10], [-13, -14]],
    // leaky_relu scales by 0.01, then fp16 rounding.
    let want: Vec<f64> = [-0.09, -0.1, -0.13, -0.14]
        .iter()
        .map(|v| round_to(tawa_ir::types::ScalarType::F16, *v))
        .collect();
    assert_eq!(out["c"], want);
}

#[test]
fn softmax_reference_of_0_and_ln3() {
    let x = [0.0, 3f64.ln()];
    let y = reference::softmax_rows(&x, 1, 2);
    assert!(
        (y[0] - 0.25).abs() < 1e-15 && (y[1] - 0.75).abs() < 1e-15,
        "{y:?}"
    );
    // Shift invariance: large inputs do not overflow.
    let y = reference::softmax_rows(&[1000.0, 1000.0 + 3f64.ln()], 1, 2);
    assert!((y[1] - 0.75).abs() < 1e-12, "{y:?}");
}

#[test]
fn layer_norm_reference_small_row() {
    let (spec, case) = tiny_spec(
        "layer_norm",
        "",
        "",
        r#"{ kind = "tensor", name = "x", dtype = "fp32", shape = [1, 4], init = { dist = "values", values = [1, 2, 3, 6] } },
           { kind = "tensor", name = "w", dtype = "fp32", shape = [4], init = { dist = "values", values = [1, 1, 2, 2] } },
           { kind = "tensor", name = "b", dtype = "fp32", shape = [4], init = { dist = "values", values = [0, 1, 0, 1] } },
           { kind = "tensor", name = "y", dtype = "fp32", shape = [1, 4], output = true },
           { kind = "tensor", name = "mean", dtype = "fp32", shape = [1], output = true },
           { kind = "tensor", name = "rstd", dtype = "fp32", shape = [1], output = true },
           { kind = "scalar", name = "eps", dtype = "fp32", value = 0.0 }"#,
    );
    let inputs = build_inputs(&case, 0).unwrap();
    let out = run_reference(&spec, &case, &inputs).unwrap();
    // mean 3, var (4 + 1 + 0 + 9) / 4 = 3.5
    assert_eq!(out["mean"], vec![3.0]);
    let rstd = 1.0 / 3.5f64.sqrt();
    assert_eq!(out["rstd"], vec![rstd as f32 as f64]);
    let want: Vec<f64> = [-2.0 * rstd, -rstd + 1.0, 0.0, 3.0 * rstd * 2.0 + 1.0]
        .iter()
        .map(|v| *v as f32 as f64)
        .collect();
    assert_eq!(out["y"], want);
}

#[test]
fn attention_reference_hand_computed() {
    // One head, two positions, head dim 1: q = k = [0, ln 3 / s], v = [1, 5].
    let scale = 0.5;
    let kq = 3f64.ln() / scale;
    let args = format!(
        r#"{{ kind = "tensor", name = "q", dtype = "fp64", shape = [1, 1, 2, 1], init = {{ dist = "values", values = [0, 0] }} }},
           {{ kind = "tensor", name = "k", dtype = "fp64", shape = [1, 1, 2, 1], init = {{ dist = "values", values = [0, 0] }} }},
           {{ kind = "tensor", name = "v", dtype = "fp64", shape = [1, 1, 2, 1], init = {{ dist = "values", values = [1, 5] }} }},
           {{ kind = "tensor", name = "o", dtype = "fp64", shape = [1, 1, 2, 1], output = true }},
           {{ kind = "tensor", name = "m", dtype = "fp64", shape = [2], output = true }},
           {{ kind = "scalar", name = "sm_scale", dtype = "fp64", value = {scale} }}"#
    );
    for (stage, want_o, want_m) in [
        // Non-causal: row 1 scores [0, ln 3] -> weights [1/4, 3/4].
        (1, [1.0 + 0.0, 0.25 + 3.75], [1.0, 2f64.log2()]),
        // Causal: row 0 sees key 0 only.
        (3, [1.0, 4.0], [0.0, 2f64.log2()]),
    ] {
        let (spec, mut case) = tiny_spec("attention", "", &format!("STAGE = {stage}"), &args);
        let mut inputs = build_inputs(&case, 0).unwrap();
        // Values are not integers: set them directly (q0 = 0, q1 = 1, k1 = kq).
        inputs.iter_mut().find(|t| t.name == "q").unwrap().data = vec![0.0, 1.0];
        inputs.iter_mut().find(|t| t.name == "k").unwrap().data = vec![0.0, kq];
        case.name = format!("stage{stage}");
        let out = run_reference(&spec, &case, &inputs).unwrap();
        // Row 0: q = 0, every score 0.
        let row0_o = if stage == 1 { 3.0 } else { want_o[0] };
        let row0_m = if stage == 1 { 1.0 } else { want_m[0] };
        assert!(
            (out["o"][0] - row0_o).abs() < 1e-12,
            "{stage}: {:?}",
            out["o"]
        );
        assert!(
            (out["o"][1] - want_o[1]).abs() < 1e-12,
            "{stage}: {:?}",
            out["o"]
        );
        assert!(
            (out["m"][0] - row0_m).abs() < 1e-12,
            "{stage}: {:?}",
            out["m"]
        );
        // Row 1: scores [0, ln 3] -> log2(1 + 3) = 2.
        assert!((out["m"][1] - 2.0).abs() < 1e-12, "{stage}: {:?}", out["m"]);
    }
}

#[test]
fn gelu_and_row_sums() {
    assert_eq!(reference::gelu_tanh(0.0), 0.0);
    assert!((reference::gelu_tanh(1.0) - 0.841_191_990_0).abs() < 1e-9);
    assert!(reference::gelu_tanh(-10.0).abs() < 1e-20);
    assert_eq!(
        reference::matmul(&[1.0, 2.0], &[3.0, 4.0], 2, 1, 2),
        vec![3.0, 4.0, 6.0, 8.0]
    );
}

#[test]
fn check_close_reports_first_mismatches() {
    let tol = Tolerance {
        atol: 0.1,
        rtol: 0.0,
    };
    assert!(check_close("c", &[1.0, 2.05], &[1.0, 2.0], tol).is_ok());
    let err = check_close("c", &[1.0, 3.0, f64::NAN], &[1.0, 2.0, 0.0], tol).unwrap_err();
    assert_eq!(err.count, 2);
    expect![[r#"
        `c`: 2 of 3 elements differ, max abs error NaN
          [1] got 3 expected 2
          [2] got NaN expected 0
    "#]]
    .assert_eq(&err.to_string());
}
