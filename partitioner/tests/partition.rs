//! Partitioner file tests: every `tests/partition/*.py` is compiled
//! (header lines `# signature: ...`, `# kernel: NAME`, `# define:
//! NAME=VALUE` as in the TMA inference's file tests), warp-specialized
//! with the default options, checked by the verifier, and its printed IR
//! compared with the blessed `<name>.ws.tir` beside it: the WS IR, or the
//! plain IR when there is nothing to specialize. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test partition`.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use expect_test::expect_file;
use tawa_ir::{axis_info, print_function, verify_function, Function, OpKind};
use tawa_partitioner::{infer_tma, warp_specialize, WsOptions};

fn has_ws(func: &Function) -> bool {
    let mut found = false;
    func.walk(&mut |op| found |= matches!(func.ops[op].kind, OpKind::WarpSpecialize { .. }));
    found
}

#[test]
fn partition_file_tests() {
    let dir = file_kernel::test_dir("partition");
    let mut specialized = 0;
    for k in file_kernel::compile_dir("partition", 3) {
        let (name, func) = (&k.name, &k.func);
        let plan = infer_tma(func, &axis_info::analyze(func));
        let ws = warp_specialize(func, &plan, &WsOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = match &ws {
            Some(ws) => {
                if let Err(errors) = verify_function(ws) {
                    panic!("{name}: the WS IR does not verify: {errors:?}");
                }
                assert!(has_ws(ws), "{name}: specialized without a ws op");
                specialized += 1;
                print_function(ws)
            }
            None => print_function(func),
        };
        // The negative tests say so in their header; their output is the
        // input.
        let expect_plain = k
            .source
            .lines()
            .any(|l| l.starts_with("# Nothing to specialize"));
        assert_eq!(
            ws.is_none(),
            expect_plain,
            "{name}: specialized or not as its header says"
        );
        expect_file![dir.join(format!("{name}.ws.tir"))].assert_eq(&text);
    }
    assert!(specialized >= 1);
}

#[test]
fn depth_zero_is_an_error() {
    let func = Function::new("empty");
    let plan = infer_tma(&func, &axis_info::analyze(&func));
    let opts = WsOptions {
        depth: 0,
        ..WsOptions::default()
    };
    let err = warp_specialize(&func, &plan, &opts).unwrap_err();
    assert_eq!(err.to_string(), "aref depth must be at least 1");
}
