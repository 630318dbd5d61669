//! Partitioner file tests: every `tests/partition/*.py` is compiled
//! (header lines `# signature: ...`, `# kernel: NAME`, `# define:
//! NAME=VALUE` as in the TMA inference's file tests), warp-specialized
//! with the default options, checked by the verifier, and its printed IR
//! compared with the blessed `<name>.ws.tir` beside it: the WS IR, or the
//! plain IR when there is nothing to specialize. The loads TMA refuses that
//! the producer's threads can copy (`producer_copy`) move too. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-partitioner --test partition`.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use expect_test::expect_file;
use tawa_ir::{axis_info, print_function, verify_function, Function, OpKind};
use tawa_partitioner::{
    infer_tma, producer_copy, warp_specialize, warp_specialize_with_copies, WsOptions,
};

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
        let axis = axis_info::analyze(func);
        let plan = infer_tma(func, &axis);
        let copies = producer_copy::producer_copies(func, &plan);
        let ws = warp_specialize_with_copies(
            func,
            &plan,
            &producer_copy::copy_ops(&copies),
            &WsOptions::default(),
        )
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

/// The register budgets follow the warp count: the consumer's is lowered
/// until the partitions fit what the CTA holds at entry (`4 x 40 + 8 x 232
/// = 12 x 168`, `4 x 40 + 16 x 104 <= 20 x 96`), and a warp count that
/// leaves no room for the producer is refused with a message, not left to
/// the verifier.
#[test]
fn register_budgets_follow_num_warps() {
    for (warps, budgets) in [
        (4, Some((40, 248))),
        (8, Some((40, 232))),
        (16, Some((40, 104))),
        (32, None),
    ] {
        let mut func = file_kernel::kernel("partition", "matmul.py");
        func.attrs.num_warps = warps;
        let plan = infer_tma(&func, &axis_info::analyze(&func));
        let result = warp_specialize(&func, &plan, &WsOptions::default());
        match budgets {
            Some((producer, consumer)) => {
                let ws = result.unwrap().expect("specialized");
                verify_function(&ws).unwrap_or_else(|e| panic!("{warps} warps: {e:?}"));
                let mut regs = Vec::new();
                ws.walk(&mut |op| {
                    if let OpKind::WarpSpecialize { partitions } = &ws.ops[op].kind {
                        regs = partitions.iter().map(|p| (p.num_warps, p.regs)).collect();
                    }
                });
                assert_eq!(
                    regs,
                    [(4, Some(producer)), (warps, Some(consumer))],
                    "{warps} warps"
                );
            }
            None => {
                let err = warp_specialize(&func, &plan, &WsOptions::default()).unwrap_err();
                assert!(
                    err.to_string()
                        .contains("leaves no room for the producer warpgroup"),
                    "{err}"
                );
                drop(result);
            }
        }
    }
}
