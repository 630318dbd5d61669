//! File tests of `eliminate_dead_code`: every `dce/<name>.tir` must
//! verify, is run through the pass, must still verify, and its printed IR
//! is compared with the blessed `dce/<name>.dce.tir` beside it. The pass
//! must report a change exactly when the text changed, and a second run
//! must find nothing left to remove. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-ir --test dce`.

use std::fs;
use std::path::{Path, PathBuf};

use expect_test::expect_file;
use tawa_ir::{eliminate_dead_code, parse_function, print_function, verify_function};

fn input_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dce");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.ends_with(".tir") && !name.ends_with(".dce.tir")
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "expected the file tests in {}",
        dir.display()
    );
    files
}

#[test]
fn dce_file_tests() {
    for path in input_files() {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut func = parse_function(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(errors) = verify_function(&func) {
            panic!("{name}: the input does not verify: {errors:?}");
        }
        let before = print_function(&func);
        let changed = eliminate_dead_code(&mut func);
        if let Err(errors) = verify_function(&func) {
            panic!(
                "{name}: the output does not verify: {errors:?}\n{}",
                print_function(&func)
            );
        }
        let after = print_function(&func);
        assert_eq!(
            changed,
            after != before,
            "{name}: reported change {changed} but the text says otherwise"
        );
        assert!(
            !eliminate_dead_code(&mut func),
            "{name}: a second run still removed something"
        );
        expect_file![path.with_extension("dce.tir")].assert_eq(&after);
    }
}
