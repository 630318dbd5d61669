//! The kernels of the file tests: `tests/<dir>/<name>.py`, whose leading
//! comment lines may say `# signature: ...` (Triton's AOT format),
//! `# kernel: NAME` (which function of the file, when there are several)
//! and `# define: NAME=VALUE`, compiled by the frontend.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tawa_frontend::{compile, CompileOptions};
use tawa_ir::Function;

/// One compiled file test.
pub struct FileKernel {
    /// The file's stem.
    pub name: String,
    /// The path shown in diagnostics, `tests/<dir>/<name>.py`.
    pub rel: String,
    pub source: String,
    pub func: Function,
}

/// The directory `tests/<dir>` of this package.
pub fn test_dir(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir)
}

/// The frontend options the header lines of `source` ask for.
pub fn header_options(source: &str) -> CompileOptions {
    let mut opts = CompileOptions::default();
    for line in source.lines().take_while(|l| l.starts_with('#')) {
        let line = line.trim_start_matches('#').trim();
        if let Some(s) = line.strip_prefix("signature:") {
            opts.signature = Some(s.trim().to_string());
        } else if let Some(k) = line.strip_prefix("kernel:") {
            opts.kernel = Some(k.trim().to_string());
        } else if let Some(d) = line.strip_prefix("define:") {
            let (n, v) = d.trim().split_once('=').expect("define: NAME=VALUE");
            opts.defines
                .push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    opts
}

/// Compiles `tests/<dir>/<file>`; panics with the rendered diagnostics if
/// it does not compile.
pub fn compile_file(dir: &str, file: &str) -> FileKernel {
    let path = test_dir(dir).join(file);
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_str().unwrap().to_string();
    let rel = format!("tests/{dir}/{file}");
    let opts = header_options(&source);
    let module = compile(&rel, &source, &opts)
        .unwrap_or_else(|d| panic!("{name}: does not compile:\n{}", d.render(false)));
    let mut functions = module.functions;
    let func = match opts.kernel.as_deref() {
        Some(k) => functions
            .into_iter()
            .find(|f| f.name == k)
            .unwrap_or_else(|| panic!("{name}: no kernel `{k}`")),
        None => {
            assert_eq!(functions.len(), 1, "{name}: one kernel per file");
            functions.remove(0)
        }
    };
    FileKernel {
        name,
        rel,
        source,
        func,
    }
}

/// The kernel of `tests/<dir>/<file>`.
pub fn kernel(dir: &str, file: &str) -> Function {
    compile_file(dir, file).func
}

/// Every `tests/<dir>/*.py`, compiled, in file-name order; at least
/// `at_least` of them, so that a moved directory fails.
pub fn compile_dir(dir: &str, at_least: usize) -> Vec<FileKernel> {
    let path = test_dir(dir);
    let mut files: Vec<String> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", path.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    files.sort();
    assert!(
        files.len() >= at_least,
        "expected at least {at_least} file tests in {}",
        path.display()
    );
    files.iter().map(|f| compile_file(dir, f)).collect()
}
