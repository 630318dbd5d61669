//! File tests of `pingpong`: every `pingpong/<name>.tir` (warp-specialized
//! tile IR as the earlier pipeliner passes leave it) goes through
//! `tawa_pipeliner::pingpong`; the IR with its turns (which must verify and
//! read back identically) and the pass's decisions are compared with the
//! blessed `pingpong/<name>.out`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-pipeliner --test pingpong`.

mod common;

use std::fs;

use tawa_ir::{parse_function, print_function, verify_function};
use tawa_pipeliner::pingpong::{pingpong, remove_turns};
use tawa_pipeliner::Schedule;

#[test]
fn pingpong_file_tests() {
    common::pass_file_tests("pingpong", |_, func, schedule| {
        pingpong(func, schedule);
    });
}

/// `remove_turns` (the driver's fallback when the backend finds a barrier
/// inside a turn) gives back the loop as it was before `pingpong`.
#[test]
fn removing_the_turns_restores_the_input() {
    let path = common::input_files("pingpong")
        .into_iter()
        .find(|p| {
            p.file_stem()
                .is_some_and(|s| s == "attention_two_warpgroups")
        })
        .unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let before = parse_function(&text).unwrap();
    let mut func = before.clone();
    pingpong(&mut func, &mut Schedule::default());
    assert_ne!(print_function(&func), print_function(&before));
    remove_turns(&mut func);
    verify_function(&func).unwrap();
    assert_eq!(print_function(&func), print_function(&before));
}
