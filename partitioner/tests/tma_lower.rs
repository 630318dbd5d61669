//! `tma_lower` file tests: every `tests/tma_lower/*.py` is compiled
//! (header lines as in the TMA inference's file tests), its TMA loads
//! lowered (`lower_tma_loads` with the inference's plan) and dead code
//! removed, checked by the verifier, and its printed IR compared with the
//! blessed `<name>.tir` beside it. The header line `# lowered: a, b` names
//! the loads (by result name) that must become `desc_load`s of
//! descriptors the host can build; every other load must stay. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test tma_lower`.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use expect_test::expect_file;
use tawa_ir::{axis_info, eliminate_dead_code, print_function, verify_function};
use tawa_partitioner::infer_tma;
use tawa_partitioner::tma_lower::{host_descriptor_load, lower_tma_loads};

#[test]
fn lower_file_tests() {
    let dir = file_kernel::test_dir("tma_lower");
    for k in file_kernel::compile_dir("tma_lower", 4) {
        let name = &k.name;
        let expected: Vec<&str> = k
            .source
            .lines()
            .find_map(|l| l.strip_prefix("# lowered:"))
            .unwrap_or_else(|| panic!("{name}: no `# lowered:` line"))
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let mut func = k.func.clone();
        let plan = infer_tma(&func, &axis_info::analyze(&func));
        let loads = lower_tma_loads(&mut func, &plan);
        eliminate_dead_code(&mut func);
        if let Err(errors) = verify_function(&func) {
            let text = print_function(&func);
            panic!("{name}: the lowered IR does not verify: {errors:?}\n{text}");
        }
        let names = tawa_ir::printer::value_names(&func);
        let lowered: Vec<&str> = loads
            .iter()
            .map(|&op| {
                assert!(
                    host_descriptor_load(&func, op),
                    "{name}: a lowered load's descriptor is not the host's"
                );
                names[&func.ops[op].results[0]].as_str()
            })
            .collect();
        assert_eq!(lowered, expected, "{name}: the loads lowered");
        expect_file![dir.join(format!("{name}.tir"))].assert_eq(&print_function(&func));
    }
}
