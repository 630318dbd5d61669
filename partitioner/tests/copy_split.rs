//! File tests of `copy_split`: every `copy_split/<name>.tir`
//! (warp-specialized tile IR as `tawa-rs --emit ws-ir --no-copy-split`
//! prints it) goes through `tawa_partitioner::copy_split::copy_split`;
//! the loops split (as comments) and the IR, which must verify and read
//! back identically, are compared with the blessed `copy_split/<name>.out`.
//! Bless with `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test
//! copy_split`. Whether the split computes the right count is checked
//! where the kernels run: `tests/ws_simulate.rs` runs the split kernels
//! of the examples' ragged cases on the aref simulator against the
//! interpreter.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use std::fs;

use tawa_ir::{parse_function, print_function, verify_function, Function, OpKind};
use tawa_partitioner::copy_split::copy_split;

fn inputs() -> Vec<(String, String)> {
    let dir = file_kernel::test_dir("copy_split");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tir"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "expected file tests in {}", dir.display());
    files
        .iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            (name, fs::read_to_string(p).unwrap())
        })
        .collect()
}

fn split(name: &str, text: &str) -> (Function, String) {
    let mut func = parse_function(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    verify_function(&func).unwrap_or_else(|e| panic!("{name}: input: {e:?}"));
    let splits = copy_split(&mut func);
    tawa_ir::eliminate_dead_code(&mut func);
    verify_function(&func).unwrap_or_else(|e| panic!("{name}: split: {e:?}"));
    let printed = print_function(&func);
    let reparsed = parse_function(&printed).unwrap();
    assert_eq!(print_function(&reparsed), printed, "{name}: round trip");
    let mut out: String = splits
        .iter()
        .map(|s| {
            let loads: Vec<String> = s
                .loads
                .iter()
                .map(|l| format!("{}:{}", l.line, l.col))
                .collect();
            format!(
                "// split the loop at {}:{}, unmasking {}\n",
                s.loc.line,
                s.loc.col,
                loads.join(", ")
            )
        })
        .collect();
    out.push_str(&printed);
    (func, out)
}

#[test]
fn copy_split_file_tests() {
    for (name, text) in inputs() {
        let (_, out) = split(&name, &text);
        let path = file_kernel::test_dir("copy_split").join(format!("{name}.out"));
        expect_test::expect_file![path].assert_eq(&out);
    }
}

/// Masked loads and `for` loops of `func`.
fn count(func: &Function) -> (usize, usize) {
    let (mut masked, mut loops) = (0, 0);
    func.walk(&mut |op| match func.ops[op].kind {
        OpKind::Load { has_mask: true, .. } => masked += 1,
        OpKind::For(_) => loops += 1,
        _ => {}
    });
    (masked, loops)
}

/// A split adds one loop and one unmasked copy of the load; a refusal
/// leaves the IR as it was.
#[test]
fn which_loops_split() {
    for (name, splits) in [
        ("k_bound_falls", true),
        ("bound_fixed", true),
        ("bound_grows", false),
    ] {
        let (_, text) = inputs().into_iter().find(|(n, _)| n == name).unwrap();
        let before = parse_function(&text).unwrap();
        let (after, _) = split(name, &text);
        let ((m0, l0), (m1, l1)) = (count(&before), count(&after));
        if splits {
            assert_eq!((m1, l1), (m0, l0 + 1), "{name}");
        } else {
            assert_eq!(
                print_function(&after),
                print_function(&{
                    let mut f = before.clone();
                    tawa_ir::eliminate_dead_code(&mut f);
                    f
                }),
                "{name}"
            );
        }
    }
}
