//! Layout anchors on the example kernels.

mod common;

use common::compile;
use tawa_backend::axis_info::analyze;
use tawa_backend::layout::Layout;
use tawa_backend::layout_assign::load_anchor;
use tawa_ir::{Op, OpKind};

fn loads(func: &tawa_ir::Function) -> Vec<Op> {
    let mut out = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::Load { .. })
            && func.ty(func.ops[op].results[0]).is_tensor()
        {
            out.push(op);
        }
    });
    out
}

fn blocked(l: Option<Layout>) -> (Vec<u32>, Vec<u32>) {
    match l {
        Some(Layout::Blocked(b)) => (b.order, b.size_per_thread),
        other => panic!("not a blocked layout: {other:?}"),
    }
}

#[test]
fn attention_k_tile_is_read_along_the_head_dimension() {
    // k = tl.load(k_base + offs_d[:, None] + keys[None, :] * stride_kn): a
    // [HEAD_DIM, BLOCK_N] tile contiguous along dim 0.
    let func = compile("fused_attention", "noncausal_d64");
    let axis = analyze(&func);
    let nw = func.attrs.num_warps;
    let k_load = loads(&func)
        .into_iter()
        .find(|&op| {
            axis.get(func.ops[op].operands[0])
                .contiguity
                .first()
                .copied()
                .unwrap_or(1)
                > 1
        })
        .expect("a load contiguous along dim 0");
    let (order, spt) = blocked(load_anchor(&func, k_load, nw, Some(&axis)));
    assert_eq!(order, vec![0, 1]);
    assert_eq!(
        spt[0], 8,
        "16 bytes of fp16 per thread along the head dimension"
    );
    // Without axis facts: the default, last dimension first.
    let (order, _) = blocked(load_anchor(&func, k_load, nw, None));
    assert_eq!(order, vec![1, 0]);
}

#[test]
fn row_major_loads_keep_the_default_anchor() {
    let func = compile("matmul", "square_4096");
    let axis = analyze(&func);
    for op in loads(&func) {
        assert_eq!(
            load_anchor(&func, op, func.attrs.num_warps, Some(&axis)),
            load_anchor(&func, op, func.attrs.num_warps, None),
        );
    }
}

/// The subtiled epilogue (`reshape` -> `permute` -> `split` of the
/// accumulator) moves no element: each step is a register rename, and the
/// halves are accumulators of half the width.
#[test]
fn the_subtiled_epilogue_renames_the_accumulator_halves() {
    use tawa_backend::layout::{Mma, MmaVersion};
    use tawa_backend::layout_assign::{assign_layouts, Regroup};
    for (case, warps, half_n) in [("square_4096", [8, 1], 64), ("ragged_100x90", [4, 1], 32)] {
        let func = compile("matmul_subtiled_epilogue", case);
        let layouts = assign_layouts(&func).unwrap();
        let mut seen = Vec::new();
        func.walk(&mut |op| {
            let data = &func.ops[op];
            if matches!(data.kind, OpKind::Reshape | OpKind::Split) {
                assert!(
                    matches!(layouts.regroup(op), Some(Regroup::Rename { .. })),
                    "{case}: {:?} is {:?}",
                    data.kind,
                    layouts.regroup(op)
                );
                seen.push(tawa_ir::printer::op_name(&data.kind));
            }
            if matches!(data.kind, OpKind::Split) {
                for &half in &data.results {
                    assert_eq!(
                        layouts.home(half),
                        Some(&Layout::Mma(Mma {
                            version: MmaVersion::V3,
                            warps_per_cta: warps,
                            instr_n: half_n,
                        })),
                        "{case}"
                    );
                }
            }
        });
        assert_eq!(seen, ["reshape", "split"], "{case}");
    }
}
