//! `tma_store` file tests: every `tests/tma_store/*.py` is compiled
//! (header lines as in the TMA inference's file tests), its tile stores
//! decided (`infer_tma_stores`) and the TMA-able ones lowered
//! (`lower_tma_stores`), dead code removed, the result checked by the
//! verifier, and the decisions (one `// line:col: ...` comment per tile
//! store) followed by the printed IR compared with the blessed
//! `<name>.tir` beside it. The header line `# stored: N` is how many
//! stores must become `desc_store`s of descriptors the host builds. Bless
//! with `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test tma_store`.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use expect_test::expect_file;
use tawa_ir::{axis_info, eliminate_dead_code, print_function, verify_function};
use tawa_partitioner::infer_tma_stores;
use tawa_partitioner::tma_store::{
    host_descriptor_store, lower_tma_stores, store_decisions, StorePolicy,
};

#[test]
fn store_file_tests() {
    let dir = file_kernel::test_dir("tma_store");
    for k in file_kernel::compile_dir("tma_store", 6) {
        let name = &k.name;
        let expected: usize = k
            .source
            .lines()
            .find_map(|l| l.strip_prefix("# stored:"))
            .unwrap_or_else(|| panic!("{name}: no `# stored:` line"))
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}: `# stored:` is not a count: {e}"));
        let mut func = k.func.clone();
        let plan = infer_tma_stores(&func, &axis_info::analyze(&func));
        // The rewrite of every store TMA can write, small tiles too.
        let every = StorePolicy {
            small_store_bytes: 0,
        };
        let stores = lower_tma_stores(&mut func, &plan, every);
        let decisions = store_decisions(&func, &plan, every);
        eliminate_dead_code(&mut func);
        if let Err(errors) = verify_function(&func) {
            let text = print_function(&func);
            panic!("{name}: the lowered IR does not verify: {errors:?}\n{text}");
        }
        for &op in &stores {
            assert!(
                host_descriptor_store(&func, op),
                "{name}: a lowered store's descriptor is not the host's"
            );
        }
        assert_eq!(stores.len(), expected, "{name}: the stores lowered");
        let mut text = String::new();
        for d in &decisions {
            let what = match &d.tma {
                Ok(()) => "TMA store".to_string(),
                Err(why) => format!("not a TMA store: {why}"),
            };
            text.push_str(&format!("// {}:{}: {what}\n", d.loc.line, d.loc.col));
        }
        text.push_str(&print_function(&func));
        expect_file![dir.join(format!("{name}.tir"))].assert_eq(&text);
    }
}
