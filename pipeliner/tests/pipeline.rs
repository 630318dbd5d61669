//! File tests of the pipeliner: every `pipeline/<name>.tir` (warp-specialized
//! tile IR, as the partitioner makes it) goes through
//! `tawa_pipeliner::pipeline` (or `pipeline_without_ws` when the header
//! says `no_ws = true`); the scheduled IR (printed, which must
//! verify and read back identically) and the schedule's decisions are
//! compared with the blessed `pipeline/<name>.out`. Options come from the
//! input's first line, a comment such as
//! `// pipeline: mma_depth = 2, aref_depth = 3, num_stages = 4,
//! occupancy = 1, slot_split = 2, slot_merge = 2, mixed_copies = false,
//! smem = 232448/1024/49152` (limit / fixed / per slot bytes); absent ones
//! take the defaults (no shared-memory model). Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test pipeline`.

mod common;

use std::fs;

use expect_test::expect_file;
use tawa_ir::{parse_function, verify_function};
use tawa_pipeliner::{pipeline, pipeline_without_ws, PipelineOptions, Pipelined, SmemModel};

/// The options of the header comment.
#[derive(Default)]
struct Header {
    opts: PipelineOptions,
    /// `num_stages` override.
    stages: Option<u32>,
    smem: Option<SmemModel>,
    /// Software pipelining without warp specialization.
    no_ws: bool,
}

fn header(text: &str) -> Header {
    let mut h = Header::default();
    let Some(line) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// pipeline:"))
    else {
        return h;
    };
    for item in line.split(',') {
        let (key, value) = item.split_once('=').expect("key = value");
        let value = value.trim();
        match key.trim() {
            "mma_depth" => h.opts.mma_depth = Some(value.parse().unwrap()),
            "aref_depth" => h.opts.aref_depth = Some(value.parse().unwrap()),
            "num_stages" => h.stages = Some(value.parse().unwrap()),
            "no_ws" => h.no_ws = value.parse().unwrap(),
            "occupancy" => h.opts.occupancy = Some(value.parse().unwrap()),
            "slot_split" => h.opts.slot_split = Some(value.parse().unwrap()),
            "slot_merge" => h.opts.slot_merge = Some(value.parse().unwrap()),
            "mixed_copies" => h.opts.mixed_copies = Some(value.parse().unwrap()),
            "smem" => {
                let n: Vec<u32> = value.split('/').map(|x| x.parse().unwrap()).collect();
                h.smem = Some(SmemModel {
                    limit: n[0],
                    fixed: n[1],
                    per_slot: n[2],
                });
            }
            other => panic!("unknown option `{other}`"),
        }
    }
    h
}

#[test]
fn pipeline_file_tests() {
    for path in common::input_files("pipeline") {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut func = parse_function(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        verify_function(&func).unwrap_or_else(|e| panic!("{name}: input: {e:?}"));
        let h = header(&text);
        if let Some(s) = h.stages {
            func.attrs.num_stages = s;
        }
        let result = if h.no_ws {
            pipeline_without_ws(&mut func, &h.opts, h.smem.as_ref())
        } else {
            pipeline(&mut func, &h.opts, h.smem.as_ref()).map(Pipelined::Yes)
        };
        let out = match result {
            Ok(Pipelined::No(why)) => format!("// left plain: {why}\n"),
            Ok(Pipelined::Yes(schedule)) => common::scheduled_output(&name, &func, &schedule),
            Err(e) => format!("// error: {e}\n"),
        };
        expect_file![path.with_extension("out")].assert_eq(&out);
    }
}
