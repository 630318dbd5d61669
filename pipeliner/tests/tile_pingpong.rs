//! File tests of `tile_pingpong`: every `tile_pingpong/<name>.tir`
//! (warp-specialized tile IR as the partitioner and the pipeliner leave
//! it) goes through `tawa_pipeliner::tile_pingpong`; the IR with its two
//! consumer partitions (which must verify and read back identically) and
//! the pass's decisions are compared with the blessed
//! `tile_pingpong/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test tile_pingpong`.

mod common;

use std::fs;

use tawa_ir::{parse_function, OpKind};
use tawa_pipeliner::tile_pingpong::tile_pingpong;
use tawa_pipeliner::Schedule;

#[test]
fn tile_pingpong_file_tests() {
    common::pass_file_tests("tile_pingpong", |_, func, schedule| {
        tile_pingpong(func, schedule);
    });
}

/// The kernels the pass is for come out with three partitions, the two
/// consumers of one warpgroup each taking turns; the others keep two.
#[test]
fn which_kernels_split() {
    for (name, split) in [
        ("matmul_four_warps", true),
        ("matmul_128x128_eight_warps", true),
        ("matmul_mma_pipelined", false),
        ("persistent_tile_counter", true),
        ("matmul_128x256_cooperative", false),
        ("matmul_not_persistent", false),
    ] {
        let path = common::input_files("tile_pingpong")
            .into_iter()
            .find(|p| p.file_stem().is_some_and(|s| s == name))
            .unwrap();
        let mut func = parse_function(&fs::read_to_string(&path).unwrap()).unwrap();
        tile_pingpong(&mut func, &mut Schedule::default());
        let mut shapes = Vec::new();
        func.walk(&mut |op| {
            if let OpKind::WarpSpecialize { .. } = func.ops[op].kind {
                shapes.push(op);
            }
        });
        let [ws] = shapes.as_slice() else {
            panic!("{name}: one ws op")
        };
        let OpKind::WarpSpecialize { partitions } = &func.ops[*ws].kind else {
            unreachable!()
        };
        assert_eq!(partitions.len() == 3, split, "{name}");
        if split {
            assert!(partitions[1..].iter().all(|p| p.num_warps == 4));
            assert_eq!(func.turn_partitions(*ws), vec![1, 2], "{name}");
        }
    }
}
