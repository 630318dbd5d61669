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
//! `TAWA_UPSTREAM_DIR=/path cargo test --test upstream -- --ignored --nocapture`

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;

const SEED: u64 = 1;

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

#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test upstream -- --ignored"]
fn upstream_tutorials_match_references_on_the_interpreter() {
    let Some(dir) = std::env::var_os("TAWA_UPSTREAM_DIR") else {
        panic!("set TAWA_UPSTREAM_DIR to the directory of the upstream Triton tutorials");
    };
    let dir = PathBuf::from(dir);
    let mut ran = 0;
    let mut failures = Vec::new();
    for file in common::upstream_case_files() {
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let stem = common::upstream_stem(&file);
        let spec = match common::load_spec_file(&file) {
            Ok(spec) => spec,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let py = dir.join(format!("{stem}.py"));
        if !py.is_file() {
            failures.push(format!("{name}: {} is missing", py.display()));
            continue;
        }
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
