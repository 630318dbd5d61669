//! `tawa-rs KERNEL.py --explain`: the TMA inference's decision for every
//! tile load on standard error, one line each, while standard output keeps
//! what `--emit` asks for.

mod common;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_tawa(args, &[])
}

/// `--explain --emit ws-ir` of `kernel`'s launch case `case` with
/// `flags`, which must compile: its WS IR and its explanation.
fn explain_ws_ir(kernel: &str, case: &str, flags: &[&str]) -> (String, String) {
    explain_emit("ws-ir", &[kernel, "--case", case], flags)
}

/// `--explain --emit EMIT` of `args` (a kernel and its case or signature)
/// with `flags`, which must compile: the output and the explanation.
fn explain_emit(emit: &str, args: &[&str], flags: &[&str]) -> (String, String) {
    let mut args = args.to_vec();
    args.extend(flags);
    args.extend(["--explain", "--emit", emit]);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    (stdout, stderr)
}

/// The text of `text` after the first `start` and before the next `end`
/// (a partition's, from its header to the next one's).
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    text.split_once(start)
        .and_then(|(_, rest)| rest.split(end).next())
        .unwrap_or_else(|| panic!("no {start:?}:\n{text}"))
}

/// The first line of `stderr` containing `what`.
fn line_with<'a>(stderr: &'a str, what: &str) -> &'a str {
    stderr
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what:?}:\n{stderr}"))
}

#[test]
fn explain_prints_one_line_per_tile_load_on_stderr() {
    let (code, stdout, stderr) = run(&[
        "triton-examples/kernels/matmul.py",
        "--case",
        "square_4096",
        "--explain",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("// source:"), "stdout keeps the tile IR");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0]
            .starts_with("triton-examples/kernels/matmul.py:49:13: %a: TMA 2-D box [128, 64] f16"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(
            "triton-examples/kernels/matmul.py:50:13: %b: TMA 2-D box [64, 64] f16 x4 copies"
        ),
        "{stderr}"
    );
}

#[test]
fn explain_says_why_a_load_is_not_tma() {
    let (code, _, stderr) = run(&[
        "triton-examples/kernels/grouped_gemm.py",
        "--case",
        "four_square",
        "--explain",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let a = line_with(&stderr, ": %a: ");
    assert!(
        a.contains("not TMA: the base pointer %a_ptr is loaded from memory"),
        "{a}"
    );
}

/// A mainloop tile TMA refuses (here: rows not known to be 16 bytes
/// apart) that the producer's threads copy instead: `--explain` says so,
/// with the access width and why, the TMA refusal and the source change
/// that would allow TMA. B's columns wrap (`% N`) under a
/// `max_contiguous` hint: no proven 16-byte runs, so it is no copy.
#[test]
fn explain_says_which_tiles_the_producer_copies() {
    let (code, _, stderr) = run(&[
        "triton-examples/kernels/matmul.py",
        "--case",
        "ragged_100",
        "--emit",
        "ws-ir",
        "--explain",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let a = line_with(&stderr, "mainloop: %a: ");
    assert!(
        a.contains("producer copy (cp.async, 16-byte when each thread's chunks are 16-byte aligned and each masked whole at run time, else 2-byte element copies"),
        "{a}"
    );
    assert!(
        a.contains("not TMA: the stride of dimension 0 (`%stride_am`) is not known to be a multiple of 16 bytes (a `:16` divisibility hint in the signature says it is)"),
        "{a}"
    );
    let b = line_with(&stderr, "mainloop: %b: ");
    assert!(
        b.contains("stays in the consumer, no producer copy: its pointers are not proven to run in 8-element (16-byte) chunks along its last dimension (a `tl.max_contiguous` hint claims them"),
        "{b}"
    );
}

/// Where the producer's registers hold only some of the copies, it keeps
/// the first (program order) and says that the others stay in the
/// consumer: the linear layer's X and W under `--no-tma-loads` (W, read
/// through `tl.trans`, is a copy only with that flag), 50 registers
/// against the 40 beside 8 consumer warps.
#[test]
fn explain_says_which_copies_the_producer_keeps() {
    let (code, _, stderr) = run(&[
        "triton-examples/kernels/linear.py",
        "--case",
        "k_tail_8_warps",
        "--no-tma-loads",
        "--emit",
        "ws-ir",
        "--explain",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let kept = line_with(&stderr, "mainloop: the producer cannot copy");
    assert!(
        kept.contains("all 2 tiles TMA refused (it copies the first 1, the others stay in the consumer): its threads would hold about 50 registers"),
        "{kept}"
    );
    assert!(!kept.contains("; they stay in the consumer"), "{kept}");
    let x = line_with(&stderr, "mainloop: %x: ");
    assert!(x.contains("producer copy (cp.async"), "{x}");
    assert!(!stderr.contains("mainloop: %w: producer copy"), "{stderr}");
}

/// The swap-AB decode's 16x128 fp16 output tile (4 KiB) is stored from
/// the registers, with the reason; `--small-store-bytes 0` makes it a TMA
/// store again.
#[test]
fn explain_says_a_small_tile_is_stored_from_registers() {
    let args = [
        "triton-examples/kernels/matmul_swap_ab.py",
        "--case",
        "decode_16x8192x8192",
        "--emit",
        "ws-ir",
        "--explain",
    ];
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    let store = line_with(&stderr, "epilogue: the store of %c");
    assert!(
        store.contains("stays element-wise (st.global): the tile is 4096 bytes (at most 4096, --small-store-bytes)"),
        "{store}"
    );
    let (code, _, stderr) = run(&[&args[..], &["--small-store-bytes", "0"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let store = line_with(&stderr, "epilogue: TMA store of %c");
    assert!(store.contains("(16x128 f16: boxes [16, 64]"), "{store}");
}

#[test]
fn without_explain_stderr_stays_quiet() {
    let (code, _, stderr) = run(&["triton-examples/kernels/matmul.py", "--case", "square_4096"]);
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
}

/// `i32:1` in a signature is Triton's "equal to 1": unit strides written
/// the Triton way are constants, and the loads they index become TMA.
#[test]
fn a_unit_stride_written_as_i32_1_allows_tma() {
    // The matmul example's explanation with its unit strides written `unit`.
    let explain = |unit: &str| {
        let sig = format!("*fp16:16, *fp16:16, *fp16:16, i32, i32, i32:16, i32:16, {unit}, i32:16, {unit}, i32:16, {unit}, 128, 128, 64, 8, ''");
        let (code, _, stderr) = run(&[
            "triton-examples/kernels/matmul.py",
            "--signature",
            &sig,
            "--explain",
        ]);
        assert_eq!(code, 0, "{stderr}");
        stderr
    };
    let stderr = explain("i32:1");
    assert_eq!(stderr.matches(": TMA 2-D box").count(), 2, "{stderr}");
    let stderr = explain("i32");
    assert_eq!(
        stderr
            .matches("write `i32:1` for it in the signature")
            .count(),
        2,
        "{stderr}"
    );
}

/// With `--no-ws`, `--explain` says why a kernel stays as written, and
/// `--aref-depth` sets the software pipeline's ring as it sets a
/// warp-specialized one.
#[test]
fn explain_says_why_no_ws_stays_plain_and_aref_depth_reaches_it() {
    let matmul = ["triton-examples/kernels/matmul.py", "--case", "square_4096"];
    let explain = |extra: &[&str]| {
        let args: Vec<&str> = matmul
            .iter()
            .chain(["--no-ws", "--explain", "--emit", "cuda"].iter())
            .chain(extra)
            .copied()
            .collect();
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        stderr
    };
    let one_stage = explain(&["--num-stages", "1"]);
    assert!(
        one_stage.contains(
            "kernel: not software-pipelined (--no-ws): num_stages 1: with one stage no copy runs ahead"
        ),
        "{one_stage}"
    );
    let depth2 = explain(&["--aref-depth", "2"]);
    assert!(
        depth2.contains("aref %ring: depth 2 (from --aref-depth)")
            && depth2.contains("TMA copies 1 iteration(s) ahead into the 2-slot ring"),
        "{depth2}"
    );
    let (code, _, plain) = run(&[
        "triton-examples/kernels/vector_add.py",
        "--no-ws",
        "--explain",
        "--emit",
        "cuda",
    ]);
    assert_eq!(code, 0, "{plain}");
    assert!(
        plain.contains(
            "kernel: not software-pipelined (--no-ws): no loop whose tile loads are TMA copies"
        ),
        "{plain}"
    );
}

/// A kernel warp specialization leaves plain says why, after the loads'
/// lines; one it splits says how (the pipeliner's decisions) instead.
#[test]
fn explain_says_why_a_kernel_stays_plain() {
    let plain = |example: &str, case: &str| {
        let path = format!("triton-examples/kernels/{example}.py");
        let (code, _, stderr) = run(&[&path, "--case", case, "--explain", "--emit", "ws-ir"]);
        assert_eq!(code, 0, "{stderr}");
        stderr
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{path}:kernel: not warp-specialized: ")))
            .map(str::to_string)
    };
    // 32-row blocks: no wgmma to read the slots.
    let why = plain("fused_attention", "noncausal_ragged_d64").expect("a reason");
    assert!(
        why.contains("has 32 rows for 4 warps, too few for wgmma"),
        "{why}"
    );
    // Base pointers loaded, not known to be aligned: no TMA copies, and
    // masks that vary within the 16-byte chunks a producer copy moves.
    let why = plain("grouped_gemm", "four_square").expect("a reason");
    assert!(why.contains("0 of 2 tile loads are TMA copies"), "{why}");
    assert_eq!(plain("fused_attention", "noncausal_d64"), None);
}

/// The epilogue's store: a TMA store of the matmul's `c` in boxes of 128
/// rows and 64 columns (four bands of the 128x256 tile, two buffers in
/// turn), element-wise with
/// `--no-tma-store`, and the reason where a store cannot be one.
#[test]
fn explain_says_how_the_epilogue_stores() {
    let matmul = [
        "triton-examples/kernels/matmul.py",
        "--case",
        "square_8192",
        "--emit",
        "ws-ir",
        "--explain",
    ];
    let (code, _, stderr) = run(&matmul);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "matmul.py:63:5: epilogue: TMA store of %c (128x256 f16: boxes [128, 64] x1 per band \
             of 64 columns (4 bands, 2 buffers), swizzle 128B"
        ),
        "{stderr}"
    );
    let (code, stdout, stderr) = run(&[&matmul[..], &["--no-tma-store"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("epilogue: TMA stores off (--no-tma-store)")
            && !stderr.contains("TMA store of"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("desc_store"),
        "the store stays a pointer store"
    );
    let (code, _, stderr) = run(&[
        "triton-examples/kernels/batched_matmul.py",
        "--case",
        "batch_4_2048",
        "--emit",
        "ws-ir",
        "--explain",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr
            .contains("stays element-wise (st.global): the copy has 3 dimensions for a tile of 2"),
        "{stderr}"
    );
}

/// A TMA store's staging buffer is shared memory the ring cannot have.
/// With a 64x256 operand a slot (4 Mi flops of dots a slot, a GEMM's),
/// staging the 128x256 output would leave room for 5 slots where
/// num_stages asks for 6: the store stays element-wise. With 128x256 (8
/// Mi flops a slot, attention's) one slot ahead covers a copy: the ring
/// gives up its third slot to the TMA store.
#[test]
fn a_tma_store_costs_the_ring_a_slot_only_where_one_slot_ahead_covers_a_copy() {
    let source = r#"import triton
import triton.language as tl


@triton.jit
def q_times_b(q_ptr, b_ptr, o_ptr, M, N,
              BM: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[M, BK], strides=[BK, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, BN], strides=[BN, 1], block_shape=[BK, BN])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[M, BN], strides=[BN, 1], block_shape=[BM, BN])
    q = q_desc.load([pid * BM, 0])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for j in range(0, N, BK):
        b = b_desc.load([j, 0])
        acc = tl.dot(q, b, acc)
    o_desc.store([pid * BM, 0], acc.to(tl.float16))
"#;
    let dir = std::env::temp_dir().join(format!("tawa-explain-staging-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("q_times_b.py");
    std::fs::write(&file, source).unwrap();
    let file = file.display().to_string();
    let compile = |bk: &str, stages: &str| {
        let signature = format!("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, 128, {bk}, 256");
        run(&[
            &file,
            "--signature",
            &signature,
            "--num-warps",
            "8",
            "--num-stages",
            stages,
            "--emit",
            "cuda",
            "--explain",
        ])
    };
    let (code, cuda, stderr) = compile("64", "6");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("aref %ring: depth 6")
            && stderr.contains(
                "epilogue: stores stay element-wise: a TMA store's staging buffer would leave \
                 room for 5 ring slot(s) instead of 6"
            ),
        "{stderr}"
    );
    assert!(
        !cuda.contains("cp.async.bulk.tensor.2d.global.shared"),
        "a TMA store"
    );
    let (code, cuda, stderr) = compile("128", "3");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("aref %ring: depth 2")
            && stderr.contains("epilogue: TMA store of")
            && stderr.contains(
                "the TMA store's staging buffer leaves room for 2 ring slot(s) instead of 3: \
                 the loop's dots take 8.0 Mi flops a slot"
            ),
        "{stderr}"
    );
    assert!(
        cuda.contains("cp.async.bulk.tensor.2d.global.shared"),
        "no TMA store"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--tile-pingpong`: where a tile's accumulator fits one warpgroup the
/// consumer becomes two on alternate tiles (the partitions line says
/// their registers); a 128x256 tile stays cooperative, and says why.
#[test]
fn explain_says_where_tile_pingpong_applies() {
    let case = |name: &str| {
        run(&[
            "triton-examples/kernels/matmul.py",
            "--case",
            name,
            "--emit",
            "ws-ir",
            "--explain",
            "--tile-pingpong",
        ])
    };
    let (code, stdout, stderr) = case("tiles_128x128_8192");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "matmul.py:47:5: tile loop: tile ping-pong: two consumer warpgroups on alternate \
             tiles (a second consumer warpgroup added, 3 warpgroups in all)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "partitions: producer (4 warps, 40 registers), consumer0 (4 warps, 232 registers), \
             consumer1 (4 warps, 232 registers)"
        ),
        "{stderr}"
    );
    assert_eq!(stdout.matches("turn.take").count(), 2, "{stdout}");
    let (code, stdout, stderr) = case("square_8192");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "tile loop: no tile ping-pong: cooperative: the 128x256 f32 accumulator needs 256 \
             registers a thread in one warpgroup"
        ),
        "{stderr}"
    );
    assert!(!stdout.contains("turn.take"), "{stdout}");
}

/// By default an 8-warp GEMM whose K loop is short at the launch
/// compiled for (the case's, or `--launch-value`) gets ping-pong
/// consumers, and `--explain` says for which launches the choice holds; a
/// long K loop, or no launch known, keeps the cooperative split;
/// `--no-tile-pingpong` keeps it everywhere.
#[test]
fn a_short_k_loop_at_the_launch_compiled_for_gets_pingpong_consumers() {
    let batched = |extra: &[&str]| {
        let mut args = vec![
            "triton-examples/kernels/batched_matmul.py",
            "--emit",
            "ws-ir",
            "--explain",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    // K = 128: 2 iterations of 64.
    let (code, stdout, stderr) = batched(&["--case", "attention_scores_32x512"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "batched_matmul.py:33:5: tile loop: ping-pong consumers chosen: the K loop at 33:5 \
             runs 2 iterations at the launch compiled for, at most 4, so the epilogue is a \
             large share of each tile (kept for launches with max((K + 63) // 64, 0) <= 4;"
        ),
        "{stderr}"
    );
    assert_eq!(stdout.matches("turn.take").count(), 2, "{stdout}");
    // K = 2048: 32 iterations.
    let (code, stdout, stderr) = batched(&["--case", "batch_4_2048"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "tile loop: cooperative, no tile ping-pong: the K loop at 33:5 runs 32 iterations \
             at the launch compiled for, more than 4 (kept for launches with \
             max((K + 63) // 64, 0) >= 5;"
        ),
        "{stderr}"
    );
    assert!(!stdout.contains("turn.take"), "{stdout}");
    // The launch given wins over the case's.
    let (code, stdout, stderr) = batched(&["--case", "batch_4_2048", "--launch-value", "K=256"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("runs 4 iterations"), "{stderr}");
    assert_eq!(stdout.matches("turn.take").count(), 2, "{stdout}");
    // Asked not to.
    let (code, stdout, stderr) =
        batched(&["--case", "attention_scores_32x512", "--no-tile-pingpong"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("ping-pong consumers chosen"), "{stderr}");
    assert!(!stdout.contains("turn.take"), "{stdout}");
    // No launch known: the cooperative split, and how to say one.
    let (code, stdout, stderr) = batched(&[
        "--signature",
        "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, 1, \
         i32:16, i32:16, 1, i32:16, i32:16, 1, 128, 128, 64",
        "--num-warps",
        "8",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "the launch's arguments are not known (`--launch-value NAME=VALUE`, or `--case`), \
             and the K loop at 33:5 runs max((K + 63) // 64, 0) iterations"
        ),
        "{stderr}"
    );
    assert!(!stdout.contains("turn.take"), "{stdout}");
    // A bad value is a usage error.
    let (code, _, stderr) = batched(&["--case", "batch_4_2048", "--launch-value", "K=big"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("expected an integer after `K=`"),
        "{stderr}"
    );
}

/// The warp-specialized ring gets a slot for the consumer's read only
/// where the consumer holds a slot long against a copy: the 128x256x64
/// GEMM (85 flops a slot byte) takes it, the swap-AB decode GEMM (14) does
/// not; `--explain` says which, and the split-K and batched GEMMs are
/// walked persistently in the order `--explain` names.
#[test]
fn the_consumer_slot_and_the_tile_walk_are_explained() {
    let explain = |file: &str, case: &str| {
        let (code, _, stderr) = run(&[file, "--case", case, "--emit", "cuda", "--explain"]);
        assert_eq!(code, 0, "{stderr}");
        stderr
    };
    let gemm = explain("triton-examples/kernels/matmul.py", "square_8192");
    assert!(
        line_with(&gemm, "aref %")
            .contains("depth 4 (from num_stages 3 in flight and the slot the consumer reads)"),
        "{gemm}"
    );
    let decode = explain(
        "triton-examples/kernels/matmul_swap_ab.py",
        "decode_16x8192x8192",
    );
    assert!(
        line_with(&decode, "aref %").contains(
            "depth 4 (from num_stages 4; no slot for the consumer's read: its dots do 14 flops a byte"
        ),
        "{decode}"
    );
    let split_k = explain(
        "triton-examples/kernels/split_k_matmul.py",
        "skinny_1024x1024x16384",
    );
    assert!(
        line_with(&split_k, "kernel:").contains(
            "persistent: one program per SM walks the grid's x * y * z tiles, x fastest, z slowest"
        ),
        "{split_k}"
    );
    let row_reduce = explain("triton-examples/kernels/gemm_row_reduce.py", "square_4096");
    assert!(
        line_with(&row_reduce, "kernel:")
            .contains("x * y tiles, in bands of 8 y values, y fastest within a band"),
        "{row_reduce}"
    );
    let attention = explain(
        "triton-examples/kernels/fused_attention.py",
        "noncausal_d128",
    );
    assert!(
        line_with(&attention, "kernel:").contains("x * y tiles, x fastest"),
        "{attention}"
    );
}

/// Mixed copies, matmul.py's default (the shape they were measured on):
/// the smallest tile of the GEMM's slot (A, 16 KiB a step against B's 32
/// KiB) is copied by the producer's threads where its box lies inside
/// the tensor and by TMA at the edges; both stay TMA in the TMA lines,
/// the producer keeps its 40 registers, the ring one K step a slot. The
/// CUDA copies A with `cp.async` from every producer thread (the full
/// barrier counts them and thread 0's `expect_tx`), keeps A's TMA copy
/// for the edges, and the consumer fences after its wait.
/// `--no-mixed-copies` has nothing of it, and two K steps a slot. A
/// kernel with no put of two TMA tiles says why none is mixed.
#[test]
fn mixed_copies_give_the_smallest_tile_to_the_producers_threads() {
    let kernel = "triton-examples/kernels/matmul.py";
    let (cuda, stderr) = explain_emit("cuda", &[kernel, "--case", "k16384_8192"], &[]);
    let (asked, _) = explain_emit(
        "cuda",
        &[kernel, "--case", "k16384_8192"],
        &["--mixed-copies"],
    );
    assert_eq!(cuda, asked, "the default is the flag's schedule here");
    assert!(
        line_with(&stderr, "mixed copies:").contains(
            "the producer's threads copy %a (cp.async, where its box lies inside the tensor; TMA \
             at the edges) while TMA copies %b"
        ),
        "{stderr}"
    );
    assert!(line_with(&stderr, "%a: TMA 2-D box [128, 64]").contains("%a"));
    assert!(
        line_with(&stderr, "partitions:")
            .contains("producer (4 warps, 40 registers), consumer (8 warps, 232 registers)"),
        "{stderr}"
    );
    assert!(!stderr.contains("2 K steps a slot"), "{stderr}");
    assert!(cuda.contains("tw_cp_async16("), "{cuda}");
    assert!(
        cuda.contains("tw_mbar_init(tw_smem_u32 + 196608 + 8 * s, 129);"),
        "{cuda}"
    );
    assert!(cuda.contains("? 32768u : 49152u);"), "{cuda}");
    assert!(cuda.contains("tw_cp_async_arrive("), "{cuda}");
    assert!(
        cuda.matches("&tw_tmap0,").count() == 1,
        "A's TMA copy, for the edges"
    );
    assert!(cuda.contains("fence.proxy.async.shared::cta;"), "{cuda}");

    let (cuda, stderr) = explain_emit(
        "cuda",
        &[kernel, "--case", "k16384_8192"],
        &["--no-mixed-copies"],
    );
    assert!(!stderr.contains("mixed copies"), "{stderr}");
    assert!(stderr.contains("2 K steps a slot"), "{stderr}");
    assert!(!cuda.contains("tw_cp_async16("), "{cuda}");

    // matmul_descriptor.py's ragged case: B is no TMA copy there.
    let (_, stderr) = explain_emit(
        "cuda",
        &[
            "triton-examples/kernels/matmul_descriptor.py",
            "--case",
            "ragged_100",
        ],
        &["--mixed-copies"],
    );
    assert!(
        line_with(&stderr, "mixed copies:")
            .contains("not applied: no producer warpgroup puts two or more TMA tiles"),
        "{stderr}"
    );
}

/// Where mixed copies measured slower the default keeps TMA alone and
/// says why, naming the flag that asks for them anyway: a 128x128 slot
/// (A half of it), a tile of 256-byte rows (weight_grad's transposed x),
/// descriptors made in the tile loop (matmul_descriptor.py's); and a
/// schedule flag the measurements did not cover (`--mma-depth`).
#[test]
fn mixed_copies_stay_off_by_default_where_they_measured_slower() {
    for (kernel, case, flags, why) in [
        (
            "gemm_row_reduce",
            "square_4096",
            &[][..],
            "16384 of the slot's 32768 bytes",
        ),
        ("weight_grad", "tokens_8192", &[], "rows are 256 bytes"),
        (
            "matmul_descriptor",
            "square_8192",
            &[],
            "made inside a loop",
        ),
        (
            "matmul",
            "square_8192",
            &["--mma-depth", "1"],
            "not measured with --mma-depth",
        ),
    ] {
        let path = format!("triton-examples/kernels/{kernel}.py");
        let (cuda, stderr) = explain_emit("cuda", &[&path, "--case", case], flags);
        let line = line_with(&stderr, "mixed copies:");
        assert!(line.contains("not by default ("), "{kernel}: {line}");
        assert!(line.contains(why), "{kernel}: {line}");
        assert!(
            line.contains("--mixed-copies asks for them"),
            "{kernel}: {line}"
        );
        assert!(!cuda.contains("tw_cp_async16("), "{kernel}");
    }
}

/// The host's descriptors get mixed copies by default too, here in a
/// kernel of one tile a program (its descriptors' ops land in the tile
/// loop the compiler makes). Their row stride is a 64-bit parameter: the
/// threads copy where it fits in 32 bits, offset their rows by that
/// 32-bit value and step between their rows by the stride as given (the
/// form measured fastest; the backend's comment has why).
#[test]
fn mixed_copies_address_host_descriptor_rows_by_a_32_bit_stride() {
    let kernel = "triton-examples/kernels/matmul_tma_host.py";
    let (cuda, stderr) = explain_emit("cuda", &[kernel, "--case", "square_8192"], &[]);
    assert!(
        line_with(&stderr, "mixed copies:").contains("the producer's threads copy %a"),
        "{stderr}"
    );
    let inside = line_with(&cuda, "const bool inside");
    assert!(
        inside.ends_with("&& (long long)(int)(a_desc_stride0_) == (long long)(a_desc_stride0_);"),
        "{inside}"
    );
    let src = line_with(&cuda, "const tw_f16* src");
    assert!(
        src.contains("+ tid / 8) * (long long)(int)(a_desc_stride0_) +"),
        "{src}"
    );
    let copy = line_with(&cuda, "tw_cp_async16(tw_smem_u32");
    assert!(
        copy.ends_with("* (long long)(a_desc_stride0_), 16u);"),
        "{copy}"
    );
}

/// A producer copy masked by the K loop's bound: the loop is split at the
/// first step whose mask is not whole, the steps before copying without
/// it (two loops in the producer); `--no-copy-split` keeps one.
#[test]
fn masked_producer_copies_split_their_loop() {
    let kernel = "triton-examples/kernels/matmul.py";
    let producer_loops = |ws_ir: &str| {
        let producer = between(ws_ir, "partition producer", "partition consumer");
        let masked = producer
            .lines()
            .filter(|l| l.contains("{mask, other}"))
            .count();
        let loops = producer
            .lines()
            .filter(|l| l.contains(" = for %kt"))
            .count();
        (loops, masked)
    };
    let (stdout, stderr) = explain_ws_ir(kernel, "ragged_100", &[]);
    assert!(
        line_with(&stderr, "loop: producer copies split").contains(
            "the steps before the first whose mask is not whole, counted at launch, copy the \
             load(s) at 49:13 without the mask"
        ),
        "{stderr}"
    );
    assert_eq!(producer_loops(&stdout), (2, 1), "{stdout}");
    let (stdout, stderr) = explain_ws_ir(kernel, "ragged_100", &["--no-copy-split"]);
    assert!(!stderr.contains("producer copies split"), "{stderr}");
    assert_eq!(producer_loops(&stdout), (1, 1), "{stdout}");
}

/// Whether the kernel is launched as a programmatic dependent is said
/// where the CUDA is generated: by default for the persistent GEMM, not
/// for the vector add (its blocks do not walk tiles) unless `--pdl`, and
/// for neither with `--no-pdl`.
#[test]
fn explain_says_whether_the_kernel_is_launched_as_a_programmatic_dependent() {
    let explain = |kernel: &str, case: &str, flags: &[&str]| {
        explain_emit("cuda", &[kernel, "--case", case], flags).1
    };
    let matmul = |flags| explain("triton-examples/kernels/matmul.py", "square_4096", flags);
    let vector_add = |flags| explain("triton-examples/kernels/vector_add.py", "large_2p26", flags);
    let pdl = "kernel: programmatic dependent launch";
    let default = matmul(&[]);
    let line = line_with(&default, pdl);
    assert!(line.contains("(--no-pdl: an ordinary launch)"), "{line}");
    let default = vector_add(&[]);
    assert!(!default.contains(pdl), "{default}");
    let line = line_with(&default, "kernel: ordinary launch");
    assert!(line.contains("do not walk the tiles"), "{line}");
    assert!(
        line.contains("(--pdl: a programmatic dependent launch anyway)"),
        "{line}"
    );
    line_with(&vector_add(&["--pdl"]), pdl);
    for off in [matmul(&["--no-pdl"]), vector_add(&["--no-pdl"])] {
        assert!(!off.contains("programmatic dependent launch:"), "{off}");
        assert!(!off.contains("ordinary launch"), "{off}");
    }
}

/// A kernel that calls `tl.extra.cuda.gdc_wait` (Triton's `launch_pdl`
/// kernels) is launched as a programmatic dependent by default although
/// its blocks do not walk tiles, and `--explain` says why; `--no-pdl`
/// still launches it the ordinary way (the calls then do nothing, as
/// under Triton without `launch_pdl`).
#[test]
fn a_kernel_calling_gdc_wait_is_a_programmatic_dependent() {
    let compile = |flags: &[&str]| {
        let kernel = "frontend/tests/lower/grid_dependency.py";
        explain_emit(
            "cuda",
            &[kernel, "--signature", "*fp32:16, *fp32:16, i32, 256"],
            flags,
        )
    };
    let (cuda, stderr) = compile(&[]);
    let line = line_with(&stderr, "kernel: programmatic dependent launch");
    assert!(
        line.contains("(the source calls `tl.extra.cuda.gdc_wait` or `gdc_launch_dependents`"),
        "{line}"
    );
    assert!(cuda.contains("griddepcontrol.wait"), "{cuda}");
    let (cuda, stderr) = compile(&["--no-pdl"]);
    assert!(
        !stderr.contains("programmatic dependent launch"),
        "{stderr}"
    );
    assert!(!cuda.contains("griddepcontrol"), "{cuda}");
}

/// The decode's weight is read once by its launch (one row of programs):
/// `read_once` marks its copies, and the producer is emitted twice: where
/// the launch's grid has one program along y (the persistent kernel's
/// `tw_grid_y`) or along x, its copies ask L2 to evict first where their
/// own mark's test holds (the weight's along y, A's, which every program
/// reads, along x); otherwise the plain copies, as with `--no-read-once`
/// and `--no-ws`.
#[test]
fn copies_the_launch_reads_once_ask_l2_to_evict_first() {
    let kernel = "triton-examples/kernels/matmul_swap_ab.py";
    let args = [kernel, "--case", "decode_16x8192x8192"];
    let (cuda, stderr) = explain_emit("cuda", &args, &[]);
    assert!(
        line_with(&stderr, "matmul_swap_ab.py:38:13: read once")
            .contains("where its grid has one program along y (the program id"),
        "{stderr}"
    );
    assert!(
        line_with(&stderr, "matmul_swap_ab.py:36:13: read once").contains("along x ("),
        "{stderr}"
    );
    let producer = between(&cuda, "// partition producer", "// partition consumer");
    let (hinted, plain) = producer
        .split_once("\n    } else {\n")
        .expect("the producer's two versions");
    assert!(
        hinted.contains("\n    if (tw_grid_x_ == 1 || tw_grid_y_ == 1) {\n"),
        "{hinted}"
    );
    let copies = |text: &str, map: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(map))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let b = copies(hinted, "&tw_tmap1,");
    assert_eq!(b.len(), 2, "{hinted}");
    for copy in &b {
        assert!(copy.starts_with("tw_tma_2d_once("), "{copy}");
        assert!(copy.ends_with(", tw_grid_y_ == 1);"), "{copy}");
    }
    for copy in copies(hinted, "&tw_tmap0,") {
        assert!(copy.ends_with(", tw_grid_x_ == 1);"), "{copy}");
    }
    for copy in copies(plain, "&tw_tmap")
        .iter()
        .filter(|l| l.starts_with("tw_tma"))
    {
        assert!(copy.starts_with("tw_tma_2d("), "{copy}");
    }
    assert!(cuda.contains("createpolicy.fractional.L2::evict_first.b64"));
    let (without, stderr) = explain_emit("cuda", &args, &["--no-read-once"]);
    assert!(!stderr.contains("read once"), "{stderr}");
    assert!(!without.contains("_once("), "{without}");
    // `--no-ws` fuses the copies into the partition of the dots, which
    // issues them without hints: nothing is marked.
    let (fused, stderr) = explain_emit("cuda", &args, &["--no-ws"]);
    assert!(!stderr.contains("read once"), "{stderr}");
    assert!(!fused.contains("_once("), "{fused}");
}
