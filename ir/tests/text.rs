//! File tests of the textual IR.
//!
//! - `text/*.tir`: must parse, verify, and print back byte-exactly.
//! - `text/errors/*.tir`: first line `// error: LINE:COL: message`; parsing
//!   must fail with exactly that error.
//! - `verify/*.tir`: first line `// error: message`; the file parses and
//!   round-trips but verification must fail with an error whose text is
//!   exactly `message`.

use std::fs;
use std::path::{Path, PathBuf};

use tawa_ir::{parse_module, print_module, verify_module};

fn tir_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .tir files in {}", dir.display());
    files
}

fn expectation(text: &str, path: &Path) -> String {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("// error: "))
        .unwrap_or_else(|| panic!("{}: first line must be '// error: ...'", path.display()))
        .to_string()
}

#[test]
fn round_trip_files() {
    let mut failures = Vec::new();
    for path in tir_files("text") {
        let text = fs::read_to_string(&path).unwrap();
        let module = match parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}:{e}", path.display()));
                continue;
            }
        };
        if let Err(errs) = verify_module(&module) {
            for e in errs {
                failures.push(format!("{}: verifier: {e}", path.display()));
            }
        }
        let printed = print_module(&module);
        if printed != text {
            failures.push(format!(
                "{}: does not round-trip; printed:\n{printed}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn parse_error_files() {
    let mut failures = Vec::new();
    for path in tir_files("text/errors") {
        let text = fs::read_to_string(&path).unwrap();
        let expected = expectation(&text, &path);
        match parse_module(&text) {
            Ok(_) => failures.push(format!("{}: parsed without error", path.display())),
            Err(e) if e.to_string() == expected => {}
            Err(e) => failures.push(format!(
                "{}:\n  expected: {expected}\n  actual:   {e}",
                path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn verify_error_files() {
    let mut failures = Vec::new();
    for path in tir_files("verify") {
        let text = fs::read_to_string(&path).unwrap();
        let expected = expectation(&text, &path);
        let module = match parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}:{e}", path.display()));
                continue;
            }
        };
        match verify_module(&module) {
            Ok(()) => failures.push(format!("{}: verified without error", path.display())),
            Err(errs) => {
                let actual: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
                if !actual.contains(&expected) {
                    failures.push(format!(
                        "{}:\n  expected: {expected}\n  actual:   {}",
                        path.display(),
                        actual.join("\n            ")
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
