//! File tests of `slot_merge`: every `slot_merge/<name>.tir`
//! (warp-specialized tile IR with its ring depths chosen) goes through
//! `tawa_pipeliner::slot_merge::slot_merge`, with the steps its
//! first-line comment `// slot_merge = N` asks for; the IR (which must
//! verify and read back identically) and the pass's decisions are
//! compared with the blessed `slot_merge/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test slot_merge`.

mod common;

use tawa_pipeliner::slot_merge::{slot_merge, Merge};
use tawa_pipeliner::Schedule;

fn asked(text: &str) -> Merge {
    let line = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// slot_merge ="));
    Merge::Asked(
        line.expect("a first line `// slot_merge = N`")
            .trim()
            .parse()
            .expect("// slot_merge = N"),
    )
}

#[test]
fn slot_merge_file_tests() {
    common::pass_file_tests("slot_merge", |text, func, schedule| {
        slot_merge(func, asked(text), schedule);
    });
}

/// Which rings merge, into how many slots, and that merging keeps the
/// ring's bytes.
#[test]
fn which_rings_merge() {
    for (name, merged_depth) in [
        ("matmul_128x256_persistent", Some(2)),
        ("matmul_descriptor_offsets", Some(2)),
        ("weight_grad_transposed", Some(2)),
        ("gemm_index_is_induction_variable", None),
        ("gemm_accumulator_not_carried", None),
        ("gemm_row_reduce", Some(2)),
        ("attention_refused", None),
    ] {
        let (text, mut func) = common::input("slot_merge", name);
        let before = common::ring_slots_and_bytes(&func);
        let (merged, _) = slot_merge(&mut func, asked(&text), &mut Schedule::default());
        let after = common::ring_slots_and_bytes(&func);
        assert_eq!(merged.is_empty(), merged_depth.is_none(), "{name}");
        if let Some(d) = merged_depth {
            assert_eq!(after[0].0, d, "{name}");
        }
        let total = |v: &[(u32, u32)]| v.iter().map(|&(_, b)| b).sum::<u32>();
        assert_eq!(total(&before), total(&after), "{name}: the ring's bytes");
    }
}
