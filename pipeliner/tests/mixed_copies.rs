//! File tests of `mixed_copies`: every `mixed_copies/<name>.tir`
//! (warp-specialized tile IR) goes through
//! `tawa_pipeliner::mixed_copies::mixed_copies` as `--mixed-copies` asks;
//! the IR (with its `mixed_copies` attribute where a put qualifies, which
//! must verify and read back identically) and the pass's decision are
//! compared with the blessed `mixed_copies/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test mixed_copies`.

mod common;

use tawa_ir::OpKind;
use tawa_pipeliner::mixed_copies::{by_default, decide, mixed_copies, MixedCopies};
use tawa_pipeliner::Schedule;

#[test]
fn mixed_copies_file_tests() {
    common::pass_file_tests("mixed_copies", |_, func, schedule| {
        mixed_copies(func, true, schedule);
    });
}

/// Which kernels get mixed copies, and which tile of their put the
/// threads copy: the 128x256 GEMM's `a` (16 KiB a step against `b`'s 32);
/// attention's puts carry one tile or rank-reduced boxes, which stay TMA.
/// Not asked, nothing changes.
#[test]
fn which_tile_the_threads_copy() {
    for (name, copied) in [
        ("matmul_128x256_persistent", Some(0)),
        ("gemm_row_reduce", Some(0)),
        ("host_descriptors", Some(0)),
        ("host_descriptors_in_tile_loop", Some(0)),
        ("descriptors_per_tile", Some(0)),
        ("attention_refused", None),
    ] {
        let (_, mut func) = common::input("mixed_copies", name);
        let before = tawa_ir::print_function(&func);
        mixed_copies(&mut func, false, &mut Schedule::default());
        assert_eq!(tawa_ir::print_function(&func), before, "{name}: not asked");
        mixed_copies(&mut func, true, &mut Schedule::default());
        let mut puts = Vec::new();
        func.walk(&mut |op| {
            if matches!(func.ops[op].kind, OpKind::ArefPut) {
                puts.push(func.thread_copied(op));
            }
        });
        assert_eq!(func.attrs.mixed_copies, copied.is_some(), "{name}");
        assert_eq!(puts.iter().find_map(|&c| c), copied, "{name}: {puts:?}");
    }
}

/// The default takes mixed copies only in the shape measured faster: the
/// 128x256 GEMM's A (128-byte rows, a third of the slot, a descriptor
/// made before the loops, or the host's wherever its op sits). Not a
/// 128x128 slot's half, not descriptors the kernel makes per tile;
/// attention has no put that qualifies. `--no-mixed-copies` never,
/// `--mixed-copies` wherever a put qualifies, and a schedule flag the
/// measurements did not cover turns the default off with a note naming
/// it.
#[test]
fn the_default_keeps_to_the_measured_shape() {
    for (name, default) in [
        ("matmul_128x256_persistent", Ok(())),
        ("gemm_row_reduce", Err("a third")),
        ("host_descriptors", Ok(())),
        ("host_descriptors_in_tile_loop", Ok(())),
        ("descriptors_per_tile", Err("inside a loop")),
        ("attention_refused", Err("no put qualifies")),
    ] {
        let (_, func) = common::input("mixed_copies", name);
        match (by_default(&func), default) {
            (Ok(()), Ok(())) => {}
            (Err(why), Err(part)) => assert!(why.contains(part), "{name}: {why}"),
            (got, want) => panic!("{name}: {got:?}, expected {want:?}"),
        }
        let qualifies = name != "attention_refused";
        for (mode, taken) in [
            (MixedCopies::Off, false),
            (MixedCopies::Asked, true),
            (MixedCopies::Default { excluded_by: None }, default.is_ok()),
            (
                MixedCopies::Default {
                    excluded_by: Some("--mma-depth"),
                },
                false,
            ),
        ] {
            let mut schedule = Schedule::default();
            assert_eq!(
                decide(&func, mode, &mut schedule),
                taken,
                "{name}: {mode:?}"
            );
            let noted = schedule
                .decisions
                .iter()
                .any(|d| d.contains("not by default"));
            let declined = matches!(mode, MixedCopies::Default { .. }) && !taken && qualifies;
            assert_eq!(
                noted, declined,
                "{name}: {mode:?}: {:?}",
                schedule.decisions
            );
            if declined && mode != (MixedCopies::Default { excluded_by: None }) {
                assert!(
                    schedule.decisions[0].contains("--mma-depth"),
                    "{:?}",
                    schedule.decisions
                );
            }
        }
    }
}
