//! File tests of `slot_split`: every `slot_split/<name>.tir`
//! (warp-specialized tile IR with its ring depths chosen) goes through
//! `tawa_pipeliner::slot_split::slot_split`, with the parts its
//! first-line comment `// slot_split = N` asks for; the IR
//! (which must verify and read back identically) and the pass's
//! decisions are compared with the blessed `slot_split/<name>.out`.
//! Bless with `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test
//! slot_split`.

mod common;

use tawa_pipeliner::slot_split::slot_split;
use tawa_pipeliner::Schedule;

fn asked(text: &str) -> u32 {
    let line = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// slot_split ="));
    line.expect("a first line `// slot_split = N`")
        .trim()
        .parse()
        .expect("// slot_split = N")
}

#[test]
fn slot_split_file_tests() {
    common::pass_file_tests("slot_split", |text, func, schedule| {
        slot_split(func, asked(text), schedule);
    });
}

/// Which rings split, into how many slots, and that the split keeps the
/// ring's bytes.
#[test]
fn which_rings_split() {
    for (name, split_depth) in [
        ("matmul_128x256_persistent", Some(8)),
        ("gemm_index_is_induction_variable", Some(6)),
        ("gemm_row_reduce_split", Some(8)),
        ("attention_refused", None),
        ("matmul_four_parts_too_narrow", None),
        ("matmul_64x32x32_halves_too_narrow", None),
    ] {
        let (text, mut func) = common::input("slot_split", name);
        let before = common::ring_slots_and_bytes(&func);
        let split = slot_split(&mut func, asked(&text), &mut Schedule::default());
        let after = common::ring_slots_and_bytes(&func);
        assert_eq!(split.is_empty(), split_depth.is_none(), "{name}");
        if let Some(d) = split_depth {
            assert_eq!(after[0].0, d, "{name}");
        }
        let total = |v: &[(u32, u32)]| v.iter().map(|&(_, b)| b).sum::<u32>();
        assert_eq!(total(&before), total(&after), "{name}: the ring's bytes");
    }
}
