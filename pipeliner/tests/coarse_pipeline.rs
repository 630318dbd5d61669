//! File tests of `coarse_pipeline`: every `coarse_pipeline/<name>.tir`
//! (warp-specialized tile IR as the partitioner and the earlier pipeliner
//! passes leave it) goes through `tawa_pipeliner::coarse_pipeline`; the
//! scheduled IR (which must verify and read back identically) and the
//! pass's decisions are compared with the blessed
//! `coarse_pipeline/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test coarse_pipeline`.

mod common;

use std::fs;

use expect_test::expect_file;
use tawa_ir::{parse_function, verify_function};
use tawa_pipeliner::coarse_pipeline::coarse_pipeline;
use tawa_pipeliner::Schedule;

#[test]
fn coarse_pipeline_file_tests() {
    for path in common::input_files("coarse_pipeline") {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut func = parse_function(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        verify_function(&func).unwrap_or_else(|e| panic!("{name}: input: {e:?}"));
        let mut schedule = Schedule::default();
        coarse_pipeline(&mut func, &mut schedule);
        let out = common::scheduled_output(&name, &func, &schedule);
        expect_file![path.with_extension("out")].assert_eq(&out);
    }
}
