//! CLI diagnostics for bad kernels: every `tests/diagnostics/*.py` is run
//! through the real binary with the arguments on its first line
//! (`# args: ...`); it must fail with exit code 1, print nothing on standard
//! output, and print exactly the blessed `<name>.stderr` (bless with
//! `UPDATE_EXPECT=1 cargo test --test diagnostics`).

use std::path::Path;
use std::process::Command;

use expect_test::expect_file;

#[test]
fn bad_kernels_get_rendered_diagnostics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/diagnostics");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "expected at least 15 bad kernels");

    for file in files {
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let source = std::fs::read_to_string(&file).unwrap();
        let args_line = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# args:"))
            .unwrap_or_else(|| panic!("{name}.py: first line must be `# args: ...`"));
        let args = shlex::split(args_line).expect("args line is shell-quoted");
        let rel = format!("tests/diagnostics/{name}.py");
        let out = Command::new(env!("CARGO_BIN_EXE_tawa-rs"))
            .current_dir(root)
            .arg(&rel)
            .args(&args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{name}: exit code; stderr:\n{stderr}"
        );
        assert!(out.stdout.is_empty(), "{name}: wrote to stdout");
        assert!(!stderr.contains("panicked"), "{name}: panicked:\n{stderr}");
        assert!(
            stderr.starts_with("error"),
            "{name}: not an error:\n{stderr}"
        );
        // Every diagnostic points into the file, with a caret line.
        assert!(
            stderr.contains(&format!("{rel}:")),
            "{name}: no file:line:col"
        );
        assert!(stderr.contains('^'), "{name}: no caret");
        expect_file![dir.join(format!("{name}.stderr"))].assert_eq(&stderr);
    }
}

#[test]
fn unknown_arch_is_a_usage_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_tawa-rs"))
        .current_dir(root)
        .args(["tests/diagnostics/undefined_name.py", "--arch", "sm80"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("unsupported architecture `sm80`"),
        "stderr:\n{stderr}"
    );
}
