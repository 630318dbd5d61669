//! What the pipeliner's file tests share: their inputs and the printed
//! form of a schedule.

use std::fs;
use std::path::{Path, PathBuf};

use tawa_ir::{parse_function, print_function, verify_function, Function};
use tawa_pipeliner::Schedule;

/// The `.tir` inputs of test folder `folder`, sorted.
pub fn input_files(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(folder);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tir"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "expected file tests in {}", dir.display());
    files
}

/// The decisions as comments, then the scheduled IR, which must verify
/// and read back identically.
pub fn scheduled_output(name: &str, func: &Function, schedule: &Schedule) -> String {
    if let Err(e) = verify_function(func) {
        panic!("{name}: the pipelined IR does not verify: {e:?}");
    }
    let printed = print_function(func);
    let reparsed = parse_function(&printed).unwrap();
    assert_eq!(print_function(&reparsed), printed, "{name}: round trip");
    let mut out: String = schedule
        .decisions
        .iter()
        .map(|d| format!("// {d}\n"))
        .collect();
    out.push_str(&printed);
    out
}
