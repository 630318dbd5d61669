//! File tests of `tma_multicast`: every `tma_multicast/<name>.tir`
//! (warp-specialized tile IR as the pipeliner's other passes leave it)
//! goes through `tawa_pipeliner::tma_multicast`; the IR (which must
//! verify and read back identically) and the pass's decision are compared
//! with the blessed `tma_multicast/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test tma_multicast`.

mod common;

use std::fs;

use tawa_ir::{parse_function, OpKind};
use tawa_pipeliner::tma_multicast::tma_multicast;
use tawa_pipeliner::Schedule;

#[test]
fn tma_multicast_file_tests() {
    common::pass_file_tests("tma_multicast", |_, func, schedule| {
        tma_multicast(func, schedule);
    });
}

/// Which kernels run in CTA pairs; those that do carry one predicate per
/// put tile and the peer's state on every release.
#[test]
fn which_kernels_pair() {
    for (name, paired) in [
        // An MN-major operand copied as several boxes side by side: each
        // box in halves.
        ("matmul_128x256_square", true),
        ("matmul_mma_pipelined", true),
        ("batched_3d_grid", true),
        ("matmul_not_persistent", false),
        ("matmul_tile_pingpong", false),
        ("user_persistent", false),
        ("block_ptr_square", true),
    ] {
        let path = common::input_files("tma_multicast")
            .into_iter()
            .find(|p| p.file_stem().is_some_and(|s| s == name))
            .unwrap_or_else(|| panic!("{name}: no such input"));
        let mut func = parse_function(&fs::read_to_string(&path).unwrap()).unwrap();
        let applied = tma_multicast(&mut func, &mut Schedule::default());
        assert_eq!(applied, paired, "{name}");
        assert_eq!(func.attrs.cluster, if paired { 2 } else { 1 }, "{name}");
        let (mut puts, mut releases) = (0, 0);
        func.walk(&mut |op| match func.ops[op].kind {
            OpKind::ArefPut => {
                puts += 1;
                assert_eq!(func.put_multicast(op).is_some(), paired, "{name}");
            }
            OpKind::ArefConsumed => {
                releases += 1;
                assert_eq!(func.consumed_peer(op).is_some(), paired, "{name}");
            }
            _ => {}
        });
        assert!(puts > 0 && releases > 0, "{name}");
    }
}
