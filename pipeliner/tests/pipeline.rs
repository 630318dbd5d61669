//! File tests of the pipeliner: every `pipeline/<name>.tir` (warp-specialized
//! tile IR, as the partitioner makes it) goes through
//! `tawa_pipeliner::pipeline`; the scheduled IR (printed, which must
//! verify and read back identically) and the schedule's decisions are
//! compared with the blessed `pipeline/<name>.out`. Options come from the
//! input's first line, a comment such as
//! `// pipeline: mma_depth = 2, aref_depth = 3, num_stages = 4,
//! smem = 232448/1024/49152` (limit / fixed / per slot bytes); absent ones
//! take the defaults (no shared-memory model). Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test pipeline`.

use std::fs;
use std::path::{Path, PathBuf};

use expect_test::expect_file;
use tawa_ir::{parse_function, print_function, verify_function};
use tawa_pipeliner::{pipeline, PipelineOptions, SmemModel};

fn input_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pipeline");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tir"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "expected file tests in {}", dir.display());
    files
}

/// The options of the header comment: pipeline options, `num_stages`
/// override and a shared-memory model.
fn header(text: &str) -> (PipelineOptions, Option<u32>, Option<SmemModel>) {
    let mut opts = PipelineOptions::default();
    let (mut stages, mut smem) = (None, None);
    let Some(line) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// pipeline:"))
    else {
        return (opts, stages, smem);
    };
    for item in line.split(',') {
        let (key, value) = item.split_once('=').expect("key = value");
        let value = value.trim();
        match key.trim() {
            "mma_depth" => opts.mma_depth = value.parse().unwrap(),
            "aref_depth" => opts.aref_depth = Some(value.parse().unwrap()),
            "num_stages" => stages = Some(value.parse().unwrap()),
            "smem" => {
                let n: Vec<u32> = value.split('/').map(|x| x.parse().unwrap()).collect();
                smem = Some(SmemModel {
                    limit: n[0],
                    fixed: n[1],
                    per_slot: n[2],
                });
            }
            other => panic!("unknown option `{other}`"),
        }
    }
    (opts, stages, smem)
}

#[test]
fn pipeline_file_tests() {
    for path in input_files() {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut func = parse_function(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        verify_function(&func).unwrap_or_else(|e| panic!("{name}: input: {e:?}"));
        let (opts, stages, smem) = header(&text);
        if let Some(s) = stages {
            func.attrs.num_stages = s;
        }
        let out = match pipeline(&mut func, &opts, smem.as_ref()) {
            Ok(schedule) => {
                if let Err(e) = verify_function(&func) {
                    panic!("{name}: the pipelined IR does not verify: {e:?}");
                }
                let printed = print_function(&func);
                let reparsed = parse_function(&printed).unwrap();
                assert_eq!(print_function(&reparsed), printed, "{name}: round trip");
                let mut out: String = schedule
                    .decisions
                    .iter()
                    .map(|d| format!("// {d}\n"))
                    .collect();
                out.push_str(&printed);
                out
            }
            Err(e) => format!("// error: {e}\n"),
        };
        expect_file![path.with_extension("out")].assert_eq(&out);
    }
}
