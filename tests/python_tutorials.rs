//! The Triton tutorials run through the `tawa` Python package on a GPU:
//! each tutorial file, unmodified but for its import lines
//! (`python/tutorials.py` switches them), run with PyTorch, its own
//! correctness checks against PyTorch and its own benchmarks (through
//! `tawa.testing.do_bench`) included. A tutorial passes when it exits 0
//! and prints no "❌" (tutorials 03 and 09 report a mismatch that way
//! instead of failing).
//!
//! `#[ignore]`d and named `gpu_`: it needs a GPU, PyTorch and the
//! tutorials, which are not in the repository. Asked for without
//! `TAWA_UPSTREAM_DIR`, it fails.
//!
//! Environment:
//! - `TAWA_UPSTREAM_DIR`: the folder holding the tutorial files
//!   (`01-vector-add.py`, ...).
//! - `TAWA_PYTHON`: the Python with `tawa` (the wheel) and torch installed
//!   (default `python3`).
//! - `TAWA_TUTORIALS`: only the tutorials whose file name contains one of
//!   these comma-separated texts (e.g. `01,02`).
//! - `TAWA_TUTORIAL_TIMEOUT`: seconds per tutorial (default 600).
//! - `TAWA_BENCH_MAX_POINTS`: passed on; `tawa.testing.perf_report`
//!   benchmarks only this many evenly spaced x values (default here 3;
//!   `0` runs them all), so that the suite stays within a GPU session.
//! - `TAWA_GPU_LOG`: also write the summary to this file.
//!
//! `TAWA_UPSTREAM_DIR=/path/to/tutorials TAWA_PYTHON=python3 cargo test --release --test python_tutorials -- --ignored --nocapture`

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// How each tutorial is run: its file, then the runner's arguments after
/// `--` (the script's own), or a pytest selection.
struct Tutorial {
    file: &'static str,
    how: How,
}

enum How {
    /// `python FILE ARGS...`: the script's top level and `__main__`.
    Script(&'static [&'static str]),
    /// `python -m pytest FILE -k EXPR`: the tutorial's own tests.
    Pytest(&'static str),
}

const TUTORIALS: &[Tutorial] = &[
    Tutorial {
        file: "01-vector-add.py",
        how: How::Script(&[]),
    },
    Tutorial {
        file: "02-fused-softmax.py",
        how: How::Script(&[]),
    },
    Tutorial {
        file: "03-matrix-multiplication.py",
        how: How::Script(&[]),
    },
    // Its top level checks forward and backward against PyTorch and
    // benchmarks the backward pass.
    Tutorial {
        file: "05-layer-norm.py",
        how: How::Script(&[]),
    },
    // The forward tests of `test_op` (the fp16 forward is checked by the
    // backward tests, which need the backward kernels).
    Tutorial {
        file: "06-fused-attention.py",
        how: How::Pytest("fwd"),
    },
    Tutorial {
        file: "08-grouped-gemm.py",
        how: How::Script(&[]),
    },
    Tutorial {
        file: "09-persistent-matmul.py",
        how: How::Script(&["-K", "512"]),
    },
];

fn repo_root() -> PathBuf {
    // Run from the checkout's root (a test binary carried to a GPU
    // machine), else the checkout this test was built in.
    let here = std::env::current_dir().expect("a current directory");
    if here.join("python/tutorials.py").is_file() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }
}

#[test]
#[ignore = "needs a GPU, PyTorch, the tawa wheel and the upstream tutorials (TAWA_UPSTREAM_DIR)"]
fn gpu_python_tutorials() {
    let dir = PathBuf::from(
        std::env::var("TAWA_UPSTREAM_DIR")
            .expect("set TAWA_UPSTREAM_DIR to the folder of the Triton tutorials"),
    );
    let python = std::env::var("TAWA_PYTHON").unwrap_or_else(|_| "python3".into());
    let only: Vec<String> = std::env::var("TAWA_TUTORIALS")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().to_string())
        .collect();
    let timeout = std::env::var("TAWA_TUTORIAL_TIMEOUT").unwrap_or_else(|_| "600".into());
    let points = std::env::var("TAWA_BENCH_MAX_POINTS").unwrap_or_else(|_| "3".into());
    let runner = repo_root().join("python/tutorials.py");
    let mut summary = Vec::new();
    let mut failures = Vec::new();
    for t in TUTORIALS {
        if !only.is_empty() && !only.iter().any(|o| t.file.contains(o.as_str())) {
            continue;
        }
        let file = dir.join(t.file);
        assert!(file.is_file(), "{} is not there", file.display());
        let mut cmd = Command::new(&python);
        cmd.arg(&runner).arg("--timeout").arg(&timeout);
        match t.how {
            How::Script(args) => {
                cmd.arg(&file).arg("--").args(args);
            }
            How::Pytest(expr) => {
                cmd.arg("--pytest").arg(expr).arg(&file);
            }
        }
        cmd.env("TAWA_BENCH_MAX_POINTS", &points);
        let start = Instant::now();
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
        let secs = start.elapsed().as_secs_f64();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("==== {} ({secs:.0} s) ====\n{text}", t.file);
        let mismatch = text.contains('❌');
        let ok = out.status.success() && !mismatch;
        let line = format!(
            "{} {} in {secs:.0} s{}",
            if ok { "PASS" } else { "FAIL" },
            t.file,
            match (out.status.code(), mismatch) {
                (Some(0), true) => " (a check printed ❌)".to_string(),
                (Some(0), false) => String::new(),
                (Some(124), _) => format!(" (stopped after {timeout} s)"),
                (Some(c), _) => format!(" (exit code {c})"),
                (None, _) => " (killed by a signal)".to_string(),
            }
        );
        if !ok {
            // The last lines say why.
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            failures.push(format!(
                "{line}\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        summary.push(line);
    }
    let report = format!(
        "{} passed, {} failed\n{}\n",
        summary.len() - failures.len(),
        failures.len(),
        summary.join("\n")
    );
    println!("{report}");
    if let Ok(path) = std::env::var("TAWA_GPU_LOG") {
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    assert!(
        !summary.is_empty(),
        "no tutorial selected by TAWA_TUTORIALS"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
