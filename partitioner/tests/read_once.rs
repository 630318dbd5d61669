//! `read_once` file tests: every `tests/read_once/*.py` is compiled
//! (header lines as in the TMA inference's file tests), its TMA loads
//! lowered (`lower_tma_loads`) and dead code removed, then
//! `mark_read_once` run on it as on a kernel that is not persistent; the
//! verifier checks the result, and the `desc_load` lines of its printed
//! IR, with the `--explain` notes, are compared with the blessed
//! `<name>.out` beside it. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test read_once`.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use expect_test::expect_file;
use tawa_ir::{axis_info, eliminate_dead_code, print_function, verify_function};
use tawa_partitioner::infer_tma;
use tawa_partitioner::read_once::mark_read_once;
use tawa_partitioner::tma_lower::lower_tma_loads;

#[test]
fn read_once_file_tests() {
    let dir = file_kernel::test_dir("read_once");
    for k in file_kernel::compile_dir("read_once", 3) {
        let name = &k.name;
        let mut func = k.func.clone();
        let plan = infer_tma(&func, &axis_info::analyze(&func));
        lower_tma_loads(&mut func, &plan);
        eliminate_dead_code(&mut func);
        let notes = mark_read_once(&mut func, None);
        if let Err(errors) = verify_function(&func) {
            let text = print_function(&func);
            panic!("{name}: the marked IR does not verify: {errors:?}\n{text}");
        }
        let text = print_function(&func);
        // The marks round-trip through the textual IR.
        let again = tawa_ir::parse_function(&text)
            .unwrap_or_else(|e| panic!("{name}: the marked IR does not parse back: {e}"));
        assert_eq!(print_function(&again), text, "{name}: round trip");
        let mut out = String::new();
        for line in text.lines().filter(|l| l.contains("= desc_load ")) {
            out.push_str(line.trim());
            out.push('\n');
        }
        for (loc, note) in notes {
            out.push_str(&format!("{}:{}: {note}\n", loc.line, loc.col));
        }
        expect_file![dir.join(format!("{name}.out"))].assert_eq(&out);
    }
}
