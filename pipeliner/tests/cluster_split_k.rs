//! File tests of `cluster_split_k` (`--cluster-split-k`): every
//! `cluster_split_k/<name>.tir` (warp-specialized tile IR, persistent,
//! with its ring depths chosen) goes through
//! `tawa_pipeliner::cluster_split_k::cluster_split_k` as asked, with no
//! cap on shared memory; the IR (which must verify and read back
//! identically) and the pass's decision are compared with the blessed
//! `cluster_split_k/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test cluster_split_k`.

mod common;

use tawa_pipeliner::cluster_split_k::cluster_split_k;
use tawa_pipeliner::Schedule;

#[test]
fn cluster_split_k_file_tests() {
    common::pass_file_tests("cluster_split_k", |_, func, schedule| {
        cluster_split_k(func, true, schedule);
    });
}

/// Which kernels split, and the bytes of their exchanges' barriers.
#[test]
fn which_kernels_split() {
    for (name, bytes) in [
        ("swap_ab_decode", 1024),
        ("glu_two_sums", 1024),
        ("gemm_accumulator_not_carried", 0),
        ("counter_read_as_coordinate", 0),
    ] {
        let (_, mut func) = common::input("cluster_split_k", name);
        let got = cluster_split_k(&mut func, true, &mut Schedule::default());
        assert_eq!(got, bytes, "{name}");
        assert_eq!(func.attrs.cluster_split_k, bytes > 0, "{name}");
        // Not asked: nothing.
        let (_, mut func) = common::input("cluster_split_k", name);
        assert_eq!(
            cluster_split_k(&mut func, false, &mut Schedule::default()),
            0
        );
        assert!(!func.attrs.cluster_split_k, "{name}");
    }
    // Partial sums larger than the ring's slots, which the exchange reuses:
    // the GLU's two 64x64 sums (32 KiB) against 2 slots of 12 KiB.
    let (_, mut func) = common::input("cluster_split_k", "glu_two_sums");
    let ring = func
        .values
        .iter()
        .find(|(_, d)| matches!(d.ty, tawa_ir::Type::Aref { .. }))
        .map(|(v, _)| v)
        .unwrap();
    if let tawa_ir::Type::Aref { depth, .. } = &mut func.values[ring].ty {
        *depth = 2;
    }
    let mut schedule = Schedule::default();
    assert_eq!(cluster_split_k(&mut func, true, &mut schedule), 0);
    assert!(!func.attrs.cluster_split_k);
    assert!(
        schedule.decisions[0].contains("exceed the largest ring's slots (24 KiB)"),
        "{:?}",
        schedule.decisions
    );
}
