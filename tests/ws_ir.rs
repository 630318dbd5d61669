//! `tawa-rs KERNEL.py --emit ws-ir`: the tile IR after warp specialization
//! (`--no-ws` turns the partitioner off; a kernel with nothing to
//! specialize prints plain).

use std::path::Path;

mod common;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_tawa(args, &[])
}

const MATMUL: [&str; 3] = ["triton-examples/kernels/matmul.py", "--case", "square_4096"];

#[test]
fn ws_ir_splits_the_matmul_into_producer_and_consumer() {
    let mut args = MATMUL.to_vec();
    // One program per tile, so that the ring index is the K loop's own.
    args.extend(["--emit", "ws-ir", "--aref-depth", "3", "--no-persistent"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "%ring = aref.create : aref<3 x (tensor<128x64xf16>, tensor<64x256xf16>)>",
        "partition producer (num_warps = 4, regs = 40) {",
        "aref.put %ring, %kt, %a, %b",
        "partition consumer (num_warps = 8, regs = 232) {",
        "%a_1, %b_1 = aref.get %ring, %kt_1 : tensor<128x64xf16>, tensor<64x256xf16>",
        "aref.consumed %ring, %kt_1",
    ] {
        assert!(stdout.contains(expected), "no `{expected}` in:\n{stdout}");
    }
    // The printed WS IR parses back and verifies.
    let module = tawa_ir::parse_module(&stdout).expect("ws-ir parses");
    tawa_ir::verify_module(&module).expect("ws-ir verifies");
}

#[test]
fn no_ws_prints_one_software_pipelined_partition() {
    let mut args = MATMUL.to_vec();
    args.extend(["--emit", "ws-ir", "--no-ws"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "partition pipelined (num_warps = 8) {",
        "aref.put %ring",
        "aref.get %ring",
        "aref.consumed %ring",
    ] {
        assert!(stdout.contains(expected), "no `{expected}` in:\n{stdout}");
    }
    assert!(!stdout.contains("partition producer"), "{stdout}");
    let module = tawa_ir::parse_module(&stdout).expect("ws-ir parses");
    tawa_ir::verify_module(&module).expect("ws-ir verifies");
}

#[test]
fn no_ws_at_one_stage_prints_the_plain_tile_ir() {
    let mut plain_args = MATMUL.to_vec();
    plain_args.extend(["--emit", "tile-ir", "--num-stages", "1"]);
    let (_, plain, _) = run(&plain_args);
    let mut args = MATMUL.to_vec();
    args.extend(["--emit", "ws-ir", "--no-ws", "--num-stages", "1"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("aref"), "{stdout}");
    assert_eq!(stdout, plain);
}

#[test]
fn a_kernel_without_a_dot_loop_stays_plain() {
    let args = ["triton-examples/kernels/vector_add.py", "--case"];
    let ex = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("triton-examples/kernels/vector_add.toml"),
    )
    .unwrap();
    let case = ex
        .lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("a case");
    let mut ws_args = args.to_vec();
    ws_args.extend([case, "--emit", "ws-ir"]);
    let (code, ws, stderr) = run(&ws_args);
    assert_eq!(code, 0, "{stderr}");
    let mut plain_args = args.to_vec();
    plain_args.extend([case, "--emit", "tile-ir"]);
    let (_, plain, _) = run(&plain_args);
    assert_eq!(ws, plain);
}

#[test]
fn aref_depth_zero_is_refused() {
    let mut args = MATMUL.to_vec();
    args.extend(["--emit", "ws-ir", "--aref-depth", "0"]);
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 2, "{stderr}");
}

const ATTENTION: [&str; 3] = [
    "triton-examples/kernels/fused_attention.py",
    "--case",
    "noncausal_d64",
];

#[test]
fn attention_is_coarse_pipelined_unless_asked_not_to() {
    let mut args = ATTENTION.to_vec();
    args.extend(["--emit", "ws-ir", "--explain"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    // K and V in rings of their own, the QK^T of iteration j+1 and the PV
    // of iteration j in flight together, then waited one at a time.
    for expected in [
        "%ring_dot1 = aref.create : aref<",
        "%ring_dot2 = aref.create : aref<",
        " x (tensor<32x64xf16>)>",
        "{async} : tensor<64x32xf32>",
        "{async} : tensor<64x64xf32>",
        "{pending = 1} : tensor<64x32xf32>",
        "{pending = 0} : tensor<64x64xf32>",
    ] {
        assert!(stdout.contains(expected), "no `{expected}` in:\n{stdout}");
    }
    assert!(
        stderr.contains("loop: coarse pipelining (FA3 intra-warpgroup overlap)"),
        "{stderr}"
    );
    let module = tawa_ir::parse_module(&stdout).expect("ws-ir parses");
    tawa_ir::verify_module(&module).expect("ws-ir verifies");

    let mut args = ATTENTION.to_vec();
    args.extend(["--emit", "ws-ir", "--explain", "--no-coarse-pipeline"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("%ring = aref.create"), "{stdout}");
    assert!(!stdout.contains("{async}"), "{stdout}");
    assert!(!stderr.contains("coarse pipelining"), "{stderr}");
}

/// Attention's `q`, loaded once per tile before the KV loop, is the
/// producer's copy through a one-slot ring of its own (put in the
/// producer, got and released by the consumer), which `--explain` names;
/// `--no-per-tile-copies` leaves the load in the consumer.
#[test]
fn attention_q_is_copied_by_the_producer_unless_asked_not_to() {
    let mut args = ATTENTION.to_vec();
    args.extend(["--emit", "ws-ir", "--explain"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "%ring_q = aref.create : aref<1 x (tensor<64x64xf16>)>",
        "aref.put %ring_q, ",
        "= aref.get %ring_q, ",
        "aref.consumed %ring_q, ",
    ] {
        assert!(stdout.contains(expected), "no `{expected}` in:\n{stdout}");
    }
    assert!(
        stderr.contains("aref %ring_q: depth 1, whatever num_stages or --aref-depth say"),
        "{stderr}"
    );
    let module = tawa_ir::parse_module(&stdout).expect("ws-ir parses");
    tawa_ir::verify_module(&module).expect("ws-ir verifies");

    let mut args = ATTENTION.to_vec();
    args.extend(["--emit", "ws-ir", "--no-per-tile-copies"]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("%ring_q"), "{stdout}");
    assert!(stdout.contains("%q = desc_load"), "{stdout}");
}

/// `--no-tma-loads`: the swap-AB decode's tiles, read by the dot through
/// `tl.trans`, are copied by the producer's threads with `cp.async` into
/// the swizzled slots TMA would have written (the lines along the tile's
/// rows), and `--explain` says so; without the flag they are TMA copies.
#[test]
fn no_tma_loads_leaves_the_copies_to_the_producers_threads() {
    let decode = [
        "triton-examples/kernels/matmul_swap_ab.py",
        "--case",
        "decode_16x8192x8192",
        "--emit",
        "cuda",
        "--explain",
    ];
    let (code, stdout, stderr) = run(&decode);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("tw_tma_2d(tw_smem_u32"), "{stdout}");
    assert!(!stdout.contains("tw_cp_async16(tw_smem_u32"), "{stdout}");

    let mut args = decode.to_vec();
    args.push("--no-tma-loads");
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("tw_tma_2d(tw_smem_u32"), "{stdout}");
    assert!(stdout.contains("tw_cp_async16(tw_smem_u32"), "{stdout}");
    for expected in [
        "%a: not TMA: TMA loads are off (--no-tma-loads)",
        "mainloop: %b: producer copy (cp.async, 16-byte",
        "partitions: producer (4 warps, 128 registers)",
    ] {
        assert!(stderr.contains(expected), "no `{expected}` in:\n{stderr}");
    }
}

/// The GEMM-like examples' large cases load no tile themselves in the
/// warp-specialized kernel: every tile a loop reads comes through an aref
/// from the producer. (A persistent kernel once kept the B tiles of the
/// unmasked dual GEMM in its consumers: their extent came from the grid's
/// y size, which the tile loop's `tile // tw_grid_x` hid from the bound
/// analysis, and the consumers loaded them through registers at half the
/// speed.)
#[test]
fn gemm_examples_load_no_tile_in_their_partitions() {
    let tile_load = |line: &str| {
        let Some((_, rest)) = line.split_once("= load %") else {
            return false;
        };
        rest.split_once(" : ")
            .is_some_and(|(_, ty)| ty.starts_with("tensor<"))
    };
    let mut failures = Vec::new();
    for name in [
        "matmul",
        "matmul_block_ptr",
        "matmul_descriptor",
        "persistent_matmul",
        "geglu_dual_gemm",
        "glu_dual_gemm_unmasked",
        "gemm_row_reduce",
        "weight_grad",
        "persistent_matmul_clamped",
        "linear",
        "matmul_swap_ab",
        "batched_matmul",
        "split_k_matmul",
        "matmul_subtiled_epilogue",
    ] {
        let ex = triton_examples::load(name).unwrap();
        let path = ex.py_path.display().to_string();
        for case in ex.spec.cases.iter().filter(|c| c.has_tag("large")) {
            let (code, stdout, stderr) = run(&[&path, "--case", &case.name, "--emit", "ws-ir"]);
            assert_eq!(code, 0, "{name}/{}: {stderr}", case.name);
            assert!(
                stdout.contains("partition producer"),
                "{name}/{}",
                case.name
            );
            let loads: Vec<&str> = stdout.lines().filter(|l| tile_load(l)).collect();
            if !loads.is_empty() {
                failures.push(format!("{name}/{}: {}", case.name, loads.join("\n  ")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
