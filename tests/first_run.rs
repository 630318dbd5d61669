//! What a new user meets first, through the real binary: the advertised
//! form `tawa-rs kernel.py --arch sm90` on every example, the `--signature`
//! template for a kernel without launch cases, and the exit codes and
//! messages of plausible bad inputs (options, sizes, environment).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary in the repository root: (exit code, stdout, stderr).
fn tawa(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tawa-rs"));
    cmd.current_dir(root()).args(args).env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh directory under the target directory for files a test writes.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example_kernels() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("triton-examples/kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "examples missing");
    files
}

#[test]
fn advertised_form_compiles_the_first_launch_case_and_says_so() {
    for file in example_kernels() {
        let rel = file.strip_prefix(root()).unwrap().to_str().unwrap();
        let spec = triton_examples::load_beside(&file).unwrap().spec;
        let first = &spec.cases[0].name;
        let (code, stdout, stderr) = tawa(&[rel, "--arch", "sm90"], &[]);
        assert_eq!(code, 0, "{rel}: {stderr}");
        assert!(stdout.starts_with("// source:"), "{rel}: tile IR expected");
        assert!(
            stderr.contains(&format!("compiling launch case `{first}`"))
                && stderr.contains("--case NAME"),
            "{rel}: which case, and how to pick another:\n{stderr}"
        );
        // Explicit options still win: a signature means no case is used.
        let (code, _, stderr) = tawa(&[rel, "--signature", "1"], &[]);
        assert_ne!(code, 0, "{rel}");
        assert!(!stderr.contains("compiling launch case"), "{rel}: {stderr}");
    }
}

/// Without launch cases, the error names every untyped parameter and shows
/// a complete signature; pasted back, it compiles the kernel (CUDA
/// included) for every example but those whose guesses are known wrong.
#[test]
fn kernels_without_cases_get_a_signature_template_that_compiles() {
    // grouped_gemm's `sizes` and `lds` hold integers and its `*_ptrs`
    // hold addresses: nothing in the names says so.
    let known_misses = ["grouped_gemm"];
    let dir = scratch("signature_template");
    for file in example_kernels() {
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let copy = dir.join(format!("{name}.py"));
        std::fs::copy(&file, &copy).unwrap();
        let copy = copy.to_str().unwrap();
        let (code, stdout, stderr) = tawa(&[copy, "--arch", "sm90"], &[]);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stdout.is_empty(), "{name}");
        assert!(stderr.starts_with("error: no type"), "{name}: {stderr}");
        let spec = triton_examples::load_beside(&file).unwrap().spec;
        for param in &spec.params {
            if !spec.cases[0].constexprs.contains_key(param) {
                assert!(stderr.contains(&format!("`{param}`")), "{name}: {param}");
            }
        }
        let line = stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("--signature \""))
            .unwrap_or_else(|| panic!("{name}: no template:\n{stderr}"));
        let sig = line.strip_suffix('"').unwrap();
        assert_eq!(
            signature_entries(sig),
            spec.params.len(),
            "{name}: one entry per parameter: {sig}"
        );
        let (code, _, stderr) = tawa(&[copy, "--signature", sig, "--emit", "cuda"], &[]);
        if known_misses.contains(&name.as_str()) {
            assert_eq!(code, 1, "{name}: a known miss now compiles; drop it");
        } else {
            assert_eq!(code, 0, "{name}: the template does not compile:\n{stderr}");
        }
    }
}

fn signature_entries(sig: &str) -> usize {
    tawa_frontend::signature::split(sig).len()
}
