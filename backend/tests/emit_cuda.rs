//! Structure of the CUDA generated for the example kernels: what runs in
//! the main loops (no layout conversions, tensor cores, vector accesses),
//! checked on the text, without a GPU or NVRTC. The compile-and-run checks
//! are `tests/compile_examples.rs` and the GPU suite at the workspace root.

mod common;

use common::compile;
use tawa_backend::{generate_cuda, CodegenOptions};

fn cuda(example: &str, case: &str) -> String {
    let func = compile(example, case);
    generate_cuda(&func, &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("{example}/{case}: {e}"))
        .cuda
}

/// The text of the first `for (` loop of the kernel whose header is not
/// a register loop (`for (int r` / `g` / `e` ...), up to its closing brace.
fn main_loop(cuda: &str) -> &str {
    let start = cuda
        .match_indices("  for (int ")
        .map(|(i, _)| i)
        .find(|&i| {
            let rest = &cuda[i + "  for (int ".len()..];
            let var: String = rest.chars().take_while(|c| *c != ' ').collect();
            var.len() > 2
        })
        .expect("kernel has a main loop");
    let indent = cuda[..start].rfind('\n').map_or(start, |nl| start - nl - 1) + 2;
    let close = format!("\n{}}}", " ".repeat(indent));
    let end = cuda[start..].find(&close).expect("loop closes") + start;
    &cuda[start..end]
}

#[test]
fn matmul_tutorial_loop_has_no_conversions_and_uses_wgmma() {
    let text = cuda("matmul", "square_4096");
    let body = main_loop(&text);
    assert!(
        !body.contains("// convert"),
        "conversion in the K loop:\n{body}"
    );
    assert!(body.contains("wgmma.mma_async"), "no wgmma in the K loop");
    // a_ptrs and b_ptrs are loaded 16 bytes at a time.
    assert!(
        body.matches("*(const uint4*)").count() >= 2,
        "loads are not 16-byte vectors:\n{body}"
    );
}

#[test]
fn acc_plus_dot_accumulates_in_place() {
    // `acc += tl.dot(a, b)`: one accumulator, no add after the wgmma.
    let text = cuda("matmul_block_ptr", "square_4096");
    let body = main_loop(&text);
    assert!(
        !body.contains("// convert"),
        "conversion in the K loop:\n{body}"
    );
    assert!(body.contains("wgmma.mma_async"));
    // The dot accumulates into the carried `acc` (ir::combine); before,
    // it started from its own zero tile and an add followed.
    let dot = &body[body.find("// dot ").expect("a dot in the loop")..];
    let init = dot
        .lines()
        .find(|l| l.contains("[r] = "))
        .unwrap_or_default();
    assert!(
        init.contains("= acc_"),
        "the dot does not start from acc: {init}"
    );
}

#[test]
fn attention_keeps_row_statistics_in_the_accumulator_layout() {
    let text = cuda("fused_attention", "noncausal_d64_16k");
    let body = main_loop(&text);
    assert!(
        !body.contains("// convert"),
        "conversion in the KV loop:\n{body}"
    );
    assert_eq!(
        body.matches("wgmma.mma_async").count(),
        2,
        "two dots per iteration"
    );
    // q is written to its operand buffer once, before the loop.
    let before = &text[..text.find(body).unwrap()];
    assert!(
        before.contains("tw_smem_raw + 0 + tw_swz"),
        "q is not staged before the loop"
    );
}

/// The softmax's math as Triton lowers it: `tl.math.exp2` one
/// `ex2.approx.ftz.f32`, the cast of P to f16 two elements at a time, the
/// epilogue's `acc / l_i` Triton's `div.full.f32` (not CUDA's IEEE `/`).
#[test]
fn attention_softmax_uses_tritons_exp2_division_and_paired_casts() {
    let text = cuda("fused_attention", "noncausal_d64_16k");
    let body = main_loop(&text);
    assert!(body.contains("tw_ex2("), "exp2 in the loop:\n{body}");
    assert!(
        !body.contains("exp2f("),
        "CUDA's exp2f in the loop:\n{body}"
    );
    assert!(body.contains("tw_f2h2("), "paired f16 casts:\n{body}");
    let after = &text[text.find(body).unwrap() + body.len()..];
    assert!(
        after.contains("tw_div_full("),
        "Triton's division in the epilogue"
    );
}

#[test]
fn unsupported_warp_specialized_ir_is_refused_with_its_location() {
    // Arefs carry 2-D dot operands that TMA writes; anything else (here
    // 1-D tiles put from registers) must stop at the aref, not be
    // mis-compiled. The supported forms are `tests/aref_lower/`.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ir/tests/text/warp_specialize.tir"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let module = tawa_ir::parse_module(&text).unwrap();
    let err = generate_cuda(&module.functions[0], &CodegenOptions::default()).unwrap_err();
    assert_eq!(
        (err.loc.line, err.loc.col, err.message.as_str()),
        (
            7,
            12,
            "aref buffer of type tensor<64xf16>: only 2-D tiles travel through arefs"
        )
    );
}

/// The text of the kernel's main loop from its `// dot ` comment on.
fn first_dot(body: &str) -> &str {
    &body[body.find("// dot ").expect("a dot in the loop")..]
}

#[test]
fn linear_reads_the_weight_transpose_k_major_from_its_operand_buffer() {
    // `tl.dot(x, w.T)`: the loaded [BLOCK_N, BLOCK_K] tile is written, at
    // its transposed coordinates, into a K-major buffer with 16-byte
    // stores; the transpose itself emits nothing and nothing converts.
    let text = cuda("linear", "ragged");
    let body = main_loop(&text);
    assert!(
        !body.contains("// convert") && !body.contains("through shared memory"),
        "conversion in the K loop:\n{body}"
    );
    assert_eq!(
        body.matches("*(uint4*)(tw_smem_raw + ").count(),
        2,
        "x and w.T are not both written to their buffers with 16-byte stores:\n{body}"
    );
    let dot = first_dot(body);
    assert!(dot.contains("wgmma.mma_async"), "no wgmma:\n{dot}");
    assert!(
        !dot.contains("tw_desc_mn"),
        "an operand is read MN-major:\n{dot}"
    );
    // Neither operand is staged at the dot: both come from their buffers.
    let setup = &dot[..dot.find("wgmma.fence").expect("a wgmma fence")];
    assert!(
        !setup.contains("tw_swz("),
        "an operand is staged at the dot:\n{setup}"
    );
}

#[test]
fn swap_ab_reads_the_transposed_b_mn_major_and_never_converts_the_accumulator() {
    let text = cuda("matmul_swap_ab", "decode_ragged");
    let body = main_loop(&text);
    assert!(
        !body.contains("// convert") && !body.contains("through shared memory"),
        "conversion in the K loop:\n{body}"
    );
    let dot = first_dot(body);
    // trans(b), contiguous along the MMA's M: MN-major, the transpose bit
    // set for A only ("p, 1, 1, 1, 0").
    assert!(dot.contains("tw_desc_mn"), "A is not read MN-major:\n{dot}");
    assert!(dot.contains("p, 1, 1, 1, 0;"), "transpose bits:\n{dot}");
    // The transposed accumulator is its registers renamed, and its 16x64
    // fp16 tile (2 KiB, at most tawa_ir::SMALL_STORE_BYTES) is stored
    // straight from them: no trip through shared memory, no TMA store.
    let after = &text[text.find(body).unwrap() + body.len()..];
    assert_eq!(
        after.matches("through shared memory").count() + after.matches("// convert").count(),
        0,
        "the accumulator is converted:\n{after}"
    );
    assert!(!after.contains("tw_tma_store"), "a TMA store:\n{after}");
    assert!(
        after.contains("= c_"),
        "no store from the registers:\n{after}"
    );
    // Two row tiles of 32x128 (8 KiB): stored through the pointers'
    // coalesced layout, one trip through shared memory at the store.
    let text = cuda("matmul_swap_ab", "two_row_tiles");
    let body = main_loop(&text);
    let after = &text[text.find(body).unwrap() + body.len()..];
    assert_eq!(
        after.matches("through shared memory").count() + after.matches("// convert").count(),
        1,
        "the accumulator is not converted exactly once:\n{after}"
    );
}

/// Tutorial 05's backward pass guards its partial sums with a spin lock:
/// every thread of the program must wait on the lock thread 0 takes (its
/// old value broadcast through shared memory), and the atomics order the
/// guarded loads and stores (`acq_rel` by default: a fence on each side).
#[test]
fn spin_lock_atomics_are_ordered_and_their_old_value_reaches_every_thread() {
    let source = r#"
import triton
import triton.language as tl

@triton.jit
def locked_add(X, Acc, Lock, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + tl.program_id(0) * N + cols, mask=mask)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(Acc + cols, tl.load(Acc + cols, mask=mask) + x, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0, sem="release")
"#;
    let opts = tawa_frontend::CompileOptions {
        kernel: None,
        signature: Some("*fp32:16, *fp32:16, *i32:16, i32, 256".into()),
        defines: vec![],
        num_warps: Some(4),
        num_stages: Some(3),
    };
    let module = tawa_frontend::compile("locked_add.py", source, &opts)
        .unwrap_or_else(|d| panic!("frontend error:\n{}", d.render(false)));
    let text = generate_cuda(&module.functions[0], &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .cuda;
    let spin = &text[text.find("while (true)").expect("the spin loop")..];
    let cas = spin
        .find("atomicCAS((int*)")
        .expect("atomicCAS in the loop");
    // Thread 0 takes the lock, fenced on both sides, and publishes the old
    // value; every thread reads it after a barrier.
    assert!(spin[..cas].contains("__threadfence(); old = "), "{spin}");
    assert!(spin[cas..].contains("__threadfence(); }"), "{spin}");
    let publish = spin
        .find("*(int*)tw_smem = old;")
        .expect("old value published");
    let barrier = publish
        + spin[publish..]
            .find("__syncthreads();")
            .expect("barrier after");
    assert!(
        spin[barrier..].contains("= (int)*(int*)tw_smem;"),
        "old value not read back after the barrier:\n{spin}"
    );
    // `sem="release"`: a fence before the exchange only.
    let unlock = text
        .lines()
        .find(|l| l.contains("atomicExch"))
        .expect("the unlock");
    assert!(
        unlock.contains("__threadfence(); old = atomicExch"),
        "{unlock}"
    );
    assert!(!unlock.contains("); __threadfence();"), "{unlock}");
}

#[test]
fn the_subtiled_epilogue_splits_the_accumulator_without_shared_memory() {
    let text = cuda("matmul_subtiled_epilogue", "square_4096");
    for what in ["reshape", "split"] {
        assert!(
            text.contains(&format!("// {what}: a register rename")),
            "{what} is not renamed:\n{text}"
        );
        assert!(!text.contains(&format!("// {what} through shared memory")));
    }
    // Each half is stored through the coalesced layout of its pointers,
    // one conversion each, as a whole accumulator would be.
    assert_eq!(text.matches("through shared memory").count(), 2, "{text}");
}

/// Tutorial 06's subtiled rescale, which its Blackwell path writes: the
/// accumulator split into halves, each scaled, joined back. Every step is
/// a register rename, and the rebuilt tile is the dot's accumulator again,
/// so the store converts it once, as it would the accumulator itself.
#[test]
fn split_halves_join_back_into_the_accumulator_without_shared_memory() {
    let source = r#"
import triton
import triton.language as tl

@triton.jit
def rescale_halves(a_ptr, b_ptr, s_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ks = tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * BK + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * BN + cols[None, :])
    acc = tl.dot(a, b)
    acc0, acc1 = acc.reshape([BM, 2, BN // 2]).permute(0, 2, 1).split()
    alpha = tl.load(s_ptr + rows)
    acc0 = acc0 * alpha[:, None]
    acc1 = acc1 * 2.0
    acc = tl.join(acc0, acc1).permute(0, 2, 1).reshape([BM, BN])
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc.to(tl.float16))
"#;
    let opts = tawa_frontend::CompileOptions {
        signature: Some("*fp16:16, *fp16:16, *fp32:16, *fp16:16, 128, 128, 64".into()),
        num_warps: Some(8),
        ..Default::default()
    };
    let module = tawa_frontend::compile("rescale_halves.py", source, &opts)
        .unwrap_or_else(|d| panic!("{}", d.render(false)));
    let func = &module.functions[0];
    let layouts = tawa_backend::layout_assign::assign_layouts(func).unwrap();
    let mut dot_home = None;
    let mut last_reshape_home = None;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        match data.kind {
            tawa_ir::OpKind::Dot { .. } => dot_home = layouts.home(data.results[0]).cloned(),
            tawa_ir::OpKind::Reshape => last_reshape_home = layouts.home(data.results[0]).cloned(),
            _ => {}
        }
    });
    assert!(dot_home.is_some());
    assert_eq!(
        last_reshape_home, dot_home,
        "rebuilt in the accumulator's own layout"
    );
    let text = generate_cuda(func, &CodegenOptions::default())
        .unwrap()
        .cuda;
    for what in ["reshape", "split", "join"] {
        assert!(
            text.contains(&format!("// {what}: a register rename")),
            "{what} is not renamed:\n{text}"
        );
    }
    assert_eq!(text.matches("// reshape: a register rename").count(), 2);
    assert!(!text.contains("join through shared memory"), "{text}");
    assert!(!text.contains("split through shared memory"), "{text}");
}

/// A dot operand whose pointers have no alignment proof takes 16-byte
/// vectors where a thread's turn out aligned at run time, on the
/// strength of contiguity the code proves (`cols = pid * BN + arange`);
/// not on a `max_contiguous` hint (`% N` wraps the columns, so a vector
/// from column 96 of N = 100 would read past the row: the H100's memcheck
/// found such reads in the matmul example's ragged case).
#[test]
fn run_time_aligned_vectors_rest_on_proven_contiguity_not_hints() {
    let source = |cols: &str| {
        format!(
            r#"
import triton
import triton.language as tl

@triton.jit
def gemm(a_ptr, b_ptr, c_ptr, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, BM)
    {cols}
    ks = tl.arange(0, BK)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * N + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16))
"#
        )
    };
    let k_loop = |cols: &str| {
        let opts = tawa_frontend::CompileOptions {
            signature: Some("*fp16, *fp16, *fp16, i32, i32, 64, 64, 32".into()),
            num_warps: Some(4),
            num_stages: Some(1),
            ..Default::default()
        };
        let module = tawa_frontend::compile("gemm.py", &source(cols), &opts)
            .unwrap_or_else(|d| panic!("{}", d.render(false)));
        let text = generate_cuda(&module.functions[0], &CodegenOptions::default())
            .unwrap()
            .cuda;
        main_loop(&text).to_string()
    };
    let proven = k_loop("cols = pid * BN + tl.arange(0, BN)");
    assert_eq!(
        proven.matches("bool aligned").count(),
        2,
        "A and B take vectors where aligned at run time:\n{proven}"
    );
    let hinted = k_loop(
        "cols = tl.max_contiguous(tl.multiple_of((pid * BN + tl.arange(0, BN)) % N, BN), BN)",
    );
    assert_eq!(
        hinted.matches("bool aligned").count(),
        1,
        "only A (runs along K from arange) takes vectors:\n{hinted}"
    );
}

/// Split-K adds its fp32 accumulator into C atomically. The wgmma
/// accumulator holds pairs of adjacent columns in each thread and C's
/// columns are contiguous and 16-byte aligned, so each pair is one
/// `red.global.add.v2.f32` (the atomic's result has no use): half the
/// requests of one `atomicAdd` per element.
#[test]
fn split_k_adds_its_accumulator_in_pairs() {
    let text = cuda("split_k_matmul", "skinny_1024x1024x16384");
    let adds: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("tw_red_add_v2f32((float*)"))
        .collect();
    assert_eq!(adds.len(), 1, "one loop of pair adds:\n{text}");
    // 64 accumulator registers a thread (128x128 over two warpgroups).
    assert!(
        adds[0].contains("for (int g = 0; g < 32; ++g)"),
        "{}",
        adds[0]
    );
    assert!(
        !text.contains("atomicAdd("),
        "a scalar atomic is left:\n{text}"
    );
}

/// Which tile `atomic_add`s go in vectors, and how: f32 adds whose
/// pointers are proven contiguous and aligned and whose mask is constant
/// over the vector, 4 floats of a thread's blocked registers at a time;
/// `red` where the old values are unused, `atom` writing them where they
/// are; the memory order's fences around the whole group. An unhinted
/// stride, an `i32` add or a mask over a bound of unknown divisibility
/// keep one atomic per element.
#[test]
fn tile_atomic_adds_take_vectors_where_stores_would() {
    let source = r#"
import triton
import triton.language as tl

@triton.jit
def accumulate(x_ptr, y_ptr, old_ptr, count_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_add(y_ptr + offs, x, mask=mask)
    old = tl.atomic_add(old_ptr + offs, x, mask=mask, sem="relaxed")
    tl.store(x_ptr + offs, old, mask=mask)
    tl.atomic_add(y_ptr + offs * stride, x, mask=mask)
    tl.atomic_add(count_ptr + offs, x.to(tl.int32), mask=mask)
"#;
    let emit = |n: &str| {
        let opts = tawa_frontend::CompileOptions {
            signature: Some(format!(
                "*fp32:16, *fp32:16, *fp32:16, *i32:16, {n}, i32, 1024"
            )),
            num_warps: Some(4),
            ..Default::default()
        };
        let module = tawa_frontend::compile("accumulate.py", source, &opts)
            .unwrap_or_else(|d| panic!("{}", d.render(false)));
        generate_cuda(&module.functions[0], &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .cuda
    };
    // The statement lines around the (only) one containing `call`, with
    // the `#pragma` lines left out.
    let around = |text: &str, call: &str| -> (String, String, String) {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("#pragma") && !l.starts_with("//"))
            .collect();
        let at: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains(call))
            .collect();
        assert_eq!(at.len(), 1, "one `{call}`:\n{text}");
        let i = at[0];
        (
            lines[i - 1].to_string(),
            lines[i].to_string(),
            lines[i + 1].to_string(),
        )
    };
    let text = emit("i32:16");
    // `acq_rel` (the default): a fence on each side of the group; the
    // mask and the owner are taken at each vector's first register.
    let (pre, red, post) = around(&text, "tw_red_add_v4f32((float*)");
    assert_eq!(
        (pre.as_str(), post.as_str()),
        ("__threadfence();", "__threadfence();")
    );
    assert!(red.contains("for (int g = 0; g < 2; ++g)"), "{red}");
    assert!(red.contains("[g * 4 + 3], mask_"), "{red}");
    assert!(red.ends_with("[g * 4]);"), "{red}");
    // The old values are stored: `atom` writes them, relaxed, no fence.
    let (decl, atom, post) = around(&text, "tw_atom_add_v4f32((float*)");
    let old = decl
        .strip_prefix("float ")
        .and_then(|d| d.strip_suffix("[8];"))
        .unwrap_or_else(|| panic!("the old values' array: {decl}"));
    assert!(atom.ends_with(&format!("{old}[g * 4 + 3]);")), "{atom}");
    assert!(!post.contains("threadfence"), "{post}");
    assert!(
        text.contains(&format!("= {old}[g * 4 + e];")),
        "the old values are not what is stored:\n{text}"
    );
    // The strided pointers and the i32 add stay scalar.
    assert_eq!(text.matches("atomicAdd((float*)").count(), 1, "{text}");
    assert_eq!(text.matches("atomicAdd((int*)").count(), 1, "{text}");
    // `offs < n` with n of unknown divisibility may change within a vector.
    let text = emit("i32");
    assert!(!text.contains("tw_red_add_v4f32((float*)"), "{text}");
    assert!(!text.contains("tw_atom_add_v4f32((float*)"), "{text}");
    assert_eq!(text.matches("atomicAdd((float*)").count(), 3, "{text}");
}
