//! File tests of `stream_k` (`--stream-k`): every `stream_k/<name>.tir`
//! (warp-specialized tile IR, persistent, with its ring depths chosen)
//! goes through `tawa_pipeliner::stream_k::stream_k` as asked; the IR
//! (which must verify and read back identically) and the pass's decision
//! are compared with the blessed `stream_k/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test stream_k`.

mod common;

use tawa_pipeliner::stream_k::stream_k;
use tawa_pipeliner::Schedule;

#[test]
fn stream_k_file_tests() {
    common::pass_file_tests("stream_k", |_, func, schedule| {
        stream_k(func, true, schedule);
    });
}

/// Which kernels the pass rewrites, and the reason it gives for the
/// others.
#[test]
fn which_kernels_share_the_last_wave() {
    for (name, why) in [
        ("swap_ab_decode", None),
        ("glu_two_sums", None),
        (
            "counter_read_as_coordinate",
            Some("neither a slot counter nor a sum"),
        ),
        ("bounds_depend_on_tile", Some("bounds depend on the tile")),
        ("reads_program_id_y", Some("program ids along y or z")),
    ] {
        let (_, mut func) = common::input("stream_k", name);
        let mut schedule = Schedule::default();
        let applied = stream_k(&mut func, true, &mut schedule);
        assert_eq!(applied, why.is_none(), "{name}: {:?}", schedule.decisions);
        assert_eq!(func.attrs.stream_k, applied, "{name}");
        if let Some(why) = why {
            assert!(
                schedule.decisions.iter().any(|d| d.contains(why)),
                "{name}: {:?}",
                schedule.decisions
            );
        }
        // Not asked: nothing.
        let (_, mut func) = common::input("stream_k", name);
        assert!(!stream_k(&mut func, false, &mut Schedule::default()));
        assert!(!func.attrs.stream_k, "{name}");
    }
}
