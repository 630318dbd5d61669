//! File tests of `coarse_pipeline`: every `coarse_pipeline/<name>.tir`
//! (warp-specialized tile IR as the partitioner and the earlier pipeliner
//! passes leave it) goes through `tawa_pipeliner::coarse_pipeline`; the
//! scheduled IR (which must verify and read back identically) and the
//! pass's decisions are compared with the blessed
//! `coarse_pipeline/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test coarse_pipeline`.

mod common;

use tawa_pipeliner::coarse_pipeline::coarse_pipeline;

#[test]
fn coarse_pipeline_file_tests() {
    common::pass_file_tests("coarse_pipeline", |_, func, schedule| {
        coarse_pipeline(func, schedule);
    });
}
