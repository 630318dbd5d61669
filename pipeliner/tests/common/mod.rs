//! What the pipeliner's file tests share: their inputs, the printed
//! form of a schedule, and the loop of a test of one pass.

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

/// The file tests of one pass: every input of `folder` must verify, goes
/// through `pass` (given the input's text too, for options written in
/// it), and its [`scheduled_output`] must equal the blessed `.out` beside
/// it (`UPDATE_EXPECT=1` blesses).
#[allow(dead_code)] // not every test binary that has this module calls it
pub fn pass_file_tests(folder: &str, pass: impl Fn(&str, &mut Function, &mut Schedule)) {
    for path in input_files(folder) {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut func = parse_function(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        verify_function(&func).unwrap_or_else(|e| panic!("{name}: input: {e:?}"));
        let mut schedule = Schedule::default();
        pass(&text, &mut func, &mut schedule);
        let out = scheduled_output(&name, &func, &schedule);
        expect_test::expect_file![path.with_extension("out")].assert_eq(&out);
    }
}

/// Each aref ring of `func`: its slots and its bytes (2-byte elements).
#[allow(dead_code)] // not every test binary that has this module calls it
pub fn ring_slots_and_bytes(func: &Function) -> Vec<(u32, u32)> {
    let mut total = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, tawa_ir::OpKind::ArefCreate) {
            if let tawa_ir::Type::Aref { depth, buffers } = func.ty(func.ops[op].results[0]) {
                let slot: u32 = buffers
                    .iter()
                    .map(|t| t.shape().iter().product::<u32>() * 2)
                    .sum();
                total.push((*depth, slot * depth));
            }
        }
    });
    total
}

/// The parsed input `name` of test folder `folder` and its text.
#[allow(dead_code)] // not every test binary that has this module calls it
pub fn input(folder: &str, name: &str) -> (String, Function) {
    let path = input_files(folder)
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == name))
        .unwrap_or_else(|| panic!("{name}: no such input"));
    let text = fs::read_to_string(&path).unwrap();
    let func = parse_function(&text).unwrap();
    (text, func)
}
