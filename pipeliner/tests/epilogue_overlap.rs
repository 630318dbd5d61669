//! File tests of `epilogue_overlap`: every `epilogue_overlap/<name>.tir`
//! (warp-specialized tile IR after the rest of the pipeline, as
//! `tawa-rs --emit ws-ir` writes it with the command on its first line)
//! goes through `tawa_pipeliner::epilogue_overlap::epilogue_overlap`
//! enabled; the IR (which must verify and read back identically) and the
//! pass's decisions are compared with the blessed
//! `epilogue_overlap/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test epilogue_overlap`.

mod common;

use tawa_pipeliner::epilogue_overlap::epilogue_overlap;
use tawa_pipeliner::Schedule;

#[test]
fn epilogue_overlap_file_tests() {
    common::pass_file_tests("epilogue_overlap", |_, func, schedule| {
        epilogue_overlap(func, true, schedule);
    });
}

/// Which tile loops the pass rewrites; disabled, it rewrites none but
/// says where it would.
#[test]
fn which_tile_loops_overlap() {
    for (name, overlaps) in [
        ("matmul_128x256_persistent", true),
        ("subtiled_two_stores", true),
        ("mma_pipelined_refused", false),
        ("descriptor_in_tile_loop_refused", false),
        ("element_wise_store_refused", false),
        ("registers_refused", false),
    ] {
        let (_, mut func) = common::input("epilogue_overlap", name);
        let before = tawa_ir::print_function(&func);
        let mut schedule = Schedule::default();
        assert_eq!(
            epilogue_overlap(&mut func, false, &mut schedule),
            0,
            "{name}"
        );
        assert_eq!(tawa_ir::print_function(&func), before, "{name}: disabled");
        let would = schedule
            .decisions
            .iter()
            .any(|d| d.contains("--epilogue-overlap asks for it"));
        assert_eq!(would, overlaps, "{name}: {:#?}", schedule.decisions);
        let changed = epilogue_overlap(&mut func, true, &mut Schedule::default());
        assert_eq!(changed, usize::from(overlaps), "{name}");
    }
}
