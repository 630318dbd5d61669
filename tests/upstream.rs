//! Opt-in check against the upstream Triton tutorials (not part of the
//! repository): set `TAWA_UPSTREAM_DIR` to a directory holding the tutorial
//! files (`01-vector-add.py`, `05-layer-norm.py`, ...). Every launch-case
//! file `tests/upstream/<stem>.toml` (the triton-examples schema; `kernel`
//! names the `@triton.jit` function to launch) must have its
//! `<stem>.py` there, and each of its `small` cases must compile, verify and
//! match its reference on the interpreter. A second kernel of the same file
//! gets `<stem>--<what>.toml` (one kernel per launch-case file). The test is
//! `#[ignore]`d; asked for without the variable, it fails.
//!
//! A second test, as opt-in, compiles every case, small and large, to PTX
//! and an sm_90a cubin without spills (it needs the CUDA tools too, see
//! the README), both as the driver specializes it and plain (`--no-ws`);
//! the tutorials in [`WS_TUTORIALS`] (and the large cases of
//! [`WS_LARGE_TUTORIALS`]) must come out warp-specialized, with TMA
//! copies (or the producer's thread copies, `cp.async`, of the tiles TMA
//! refuses), mbarrier waits, `setmaxnreg` and wgmma in their PTX.
//!
//! `TAWA_UPSTREAM_DIR=/path cargo test --test upstream -- --ignored --nocapture`

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;

const SEED: u64 = 1;

/// Launch-case files whose every case the driver must warp-specialize.
const WS_TUTORIALS: &[&str] = &["06-fused-attention"];

/// Launch-case files whose large cases the driver must warp-specialize
/// (their small ones are ragged: row strides TMA cannot copy, or blocks
/// too small for wgmma, keep them plain). The GEMM-like kernels with a
/// `tl.dot` in a loop; tutorial 08's descriptor variant through tensor
/// maps built on the device (its base pointers are loaded per group), its
/// pointer variant through the producer's thread copies (its loaded base
/// pointers and leading dimensions are not known to be 16-byte aligned,
/// which TMA needs; `tl.multiple_of` on them would make it so).
const WS_LARGE_TUTORIALS: &[&str] = &[
    "03-matrix-multiplication",
    "08-grouped-gemm",
    "08-grouped-gemm--tma",
    "09-persistent-matmul",
    "09-persistent-matmul--naive",
    "09-persistent-matmul--tma",
    "09-persistent-matmul--tma-persistent",
    "09-persistent-matmul--descriptor",
];

/// Cases that do not compile yet, with a piece of the error they give:
/// the compile test checks that they still fail that way (and asks for
/// the entry to go once one compiles). `example/case` names both ways of
/// compiling it, `example/case (plain)` or `(ws)` one.
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// What a warp-specialized kernel's PTX is made of; each entry is met by
/// any of its alternatives (TMA copies, or the producer's thread copies
/// of the tiles TMA refuses).
const WS_INSTRUCTIONS: [&[&str]; 4] = [
    &["cp.async.bulk.tensor", "cp.async.mbarrier.arrive.noinc"],
    &["mbarrier.try_wait"],
    &["setmaxnreg"],
    &["wgmma.mma_async"],
];

/// The launch-case files parse and validate, with or without the tutorials.
#[test]
fn upstream_launch_cases_are_valid() {
    let files = common::upstream_case_files();
    assert!(!files.is_empty(), "no tests/upstream/*.toml");
    for file in files {
        let spec = common::load_spec_file(&file).unwrap();
        assert!(
            spec.cases.iter().any(|c| c.has_tag("small")),
            "{}: no small case",
            file.display()
        );
    }
}

/// `$TAWA_UPSTREAM_DIR`: the tests are `#[ignore]`d, so asked for without
/// it they fail.
fn upstream_dir() -> PathBuf {
    match std::env::var_os("TAWA_UPSTREAM_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => panic!("set TAWA_UPSTREAM_DIR to the directory of the upstream Triton tutorials"),
    }
}

/// Every launch-case file as an example over its tutorial in `dir` (named
/// as the file: `09-persistent-matmul--descriptor`), or why it is not one.
fn upstream_examples(dir: &std::path::Path) -> Vec<Result<triton_examples::Example, String>> {
    common::upstream_case_files()
        .into_iter()
        .map(|file| {
            let name = file.file_stem().unwrap().to_str().unwrap().to_string();
            let spec = common::load_spec_file(&file)?;
            let py_path = dir.join(format!("{}.py", common::upstream_stem(&file)));
            if !py_path.is_file() {
                return Err(format!("{name}: {} is missing", py_path.display()));
            }
            Ok(triton_examples::Example {
                name,
                py_path,
                spec,
            })
        })
        .collect()
}

#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test upstream -- --ignored"]
fn upstream_tutorials_match_references_on_the_interpreter() {
    let dir = upstream_dir();
    let mut ran = 0;
    let mut failures = Vec::new();
    for example in upstream_examples(&dir) {
        let triton_examples::Example {
            name,
            py_path: py,
            spec,
        } = match example {
            Ok(ex) => ex,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for case in spec.cases.iter().filter(|c| c.has_tag("small")) {
            ran += 1;
            let what = format!("{name}/{} ({})", case.name, spec.kernel);
            let start = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| {
                common::run_case_on_interpreter(&py, &spec, case, SEED)
            }))
            .unwrap_or_else(|p| Err(format!("panicked: {}", common::panic_message(&*p))));
            let secs = start.elapsed().as_secs_f64();
            match result {
                Ok(report) => eprintln!(
                    "ok   {what} ({secs:.2}s): grid {:?}, {:?}",
                    report.grid, report.outputs
                ),
                Err(msg) => {
                    eprintln!("FAIL {what} ({secs:.2}s)");
                    failures.push(format!("{what}:\n{msg}"));
                }
            }
        }
    }
    assert!(ran > 0 || !failures.is_empty(), "no small cases found");
    assert!(
        failures.is_empty(),
        "{} upstream failures ({ran} cases run):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
#[ignore = "needs the upstream Triton tutorials and the CUDA tools: TAWA_UPSTREAM_DIR=DIR cargo test --test upstream -- --ignored"]
fn upstream_tutorials_compile_to_sm90a() {
    let dir = upstream_dir();
    if let Err(e) =
        tawa_backend::toolchain::find_nvrtc().and_then(|_| tawa_backend::toolchain::find_ptxas())
    {
        panic!("the CUDA tools are missing (bash .ci/run installs them): {e}");
    }
    let mut compiled = 0;
    let mut failures = Vec::new();
    for example in upstream_examples(&dir) {
        let example = match example {
            Ok(ex) => ex,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let name = example.name.clone();
        for case in &example.spec.cases {
            for ws in [Some(tawa_pipeliner::PipelineOptions::default()), None] {
                let what = format!(
                    "{name}/{} ({})",
                    case.name,
                    if ws.is_some() { "ws" } else { "plain" }
                );
                let gap = KNOWN_GAPS
                    .iter()
                    .find(|(c, _)| *c == format!("{name}/{}", case.name) || *c == what);
                match (compile_checked(&example, case, ws.as_ref()), gap) {
                    (Err(e), Some((_, why))) if e.contains(why) => {
                        eprintln!("gap  {what}: {why}");
                    }
                    (Ok(_), Some(_)) => {
                        failures.push(format!("{what}: compiles now; remove it from KNOWN_GAPS"))
                    }
                    (Ok((is_ws, turns)), None) => {
                        compiled += 1;
                        let must_ws = WS_TUTORIALS.contains(&name.as_str())
                            || (WS_LARGE_TUTORIALS.contains(&name.as_str())
                                && case.has_tag("large"));
                        // Attention's two consumer warpgroups take turns
                        // (the pipeliner's ping-pong), unless the backend
                        // had to undo them.
                        let must_turn = name == "06-fused-attention" && case.num_warps == Some(8);
                        if ws.is_some() && must_ws && !is_ws {
                            failures.push(format!("{what}: not warp-specialized"));
                        } else if ws.is_some() && must_turn && !turns {
                            failures.push(format!("{what}: the warpgroups take no turns"));
                        } else {
                            eprintln!("ok   {what}");
                        }
                    }
                    (Err(e), _) => {
                        eprintln!("FAIL {what}");
                        failures.push(format!("{what}: {e}"));
                    }
                }
            }
        }
    }
    assert!(compiled > 0 || !failures.is_empty(), "no cases found");
    assert!(
        failures.is_empty(),
        "{} upstream compile failures ({compiled} compiled):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Compiles one case to PTX and a cubin; whether it is warp-specialized
/// (then with every instruction of [`WS_INSTRUCTIONS`]), and whether its
/// warpgroups take turns (`bar.arrive`, only the turns write it).
fn compile_checked(
    example: &triton_examples::Example,
    case: &triton_examples::Case,
    ws: Option<&tawa_pipeliner::PipelineOptions>,
) -> Result<(bool, bool), String> {
    let c = tawa_rs::harness::compile_case(example, case, ws).map_err(|f| f.to_string())?;
    let report = tawa_backend::runtime::ptxas_info(&c.compiled.ptx).map_err(|e| e.to_string())?;
    let kernel = report
        .kernel(&c.kernel.symbol)
        .ok_or_else(|| format!("ptxas reports no kernel:\n{}", report.log))?;
    if kernel.spills() {
        return Err(format!("spills:\n{}", report.log));
    }
    // The plain path may copy tiles with TMA too; only partitions split
    // the registers.
    let is_ws = c.compiled.ptx.contains("setmaxnreg");
    if is_ws {
        let missing: Vec<String> = WS_INSTRUCTIONS
            .into_iter()
            .filter(|alts| !alts.iter().any(|i| c.compiled.ptx.contains(i)))
            .map(|alts| alts.join(" or "))
            .collect();
        if !missing.is_empty() {
            return Err(format!("warp-specialized without {}", missing.join(", ")));
        }
    }
    Ok((is_ws, c.compiled.ptx.contains("bar.arrive")))
}
