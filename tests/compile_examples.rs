//! Compile check of every example, no GPU needed (runs in CI): each launch
//! case of `triton-examples/kernels` goes frontend → CUDA → NVRTC PTX →
//! `ptxas -v` for sm_90a, and a table of registers, spills and shared memory
//! per kernel is printed (`--nocapture` shows it).
//!
//! Fails when any case does not compile, when any kernel spills (unless
//! `TAWA_ALLOW_SPILLS=1`, for local runs only: CI never sets it), and when
//! the matmul example's large cases do not use `wgmma.mma_async`, when a
//! GEMM-like example's large case is not warp-specialized, and when a
//! warp-specialized kernel lacks any of `cp.async.bulk.tensor`,
//! `wgmma.mma_async`, `mbarrier.try_wait` and `setmaxnreg`. The tests are
//! `#[ignore]`d (a plain `cargo test` lists them as ignored, not passed):
//! `.ci/run` installs the CUDA tools and runs them, and without the tools
//! they fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use tawa_backend::runtime::ptxas_info;
use tawa_backend::toolchain::missing_compile_tools;
use tawa_pipeliner::PipelineOptions;
use tawa_rs::harness::compile_case;
use triton_examples::{Case, Example};

/// Local escape hatch while vectorization is pending: spills are reported
/// but do not fail the test.
const ENV_ALLOW_SPILLS: &str = "TAWA_ALLOW_SPILLS";

/// One row of the report.
struct Row {
    what: String,
    kernel: String,
    registers: u32,
    spill_bytes: u64,
    static_smem: u64,
    dyn_smem: u32,
    wgmma: bool,
    /// Warp-specialized: the kernel has a producer partition (it takes
    /// host-encoded tensor maps).
    ws: bool,
    /// The PTX instructions a warp-specialized kernel is made of that it
    /// lacks.
    ws_missing: Vec<&'static str>,
    /// ptxas says it serialized wgmmas (C7514/C7515: registers of a group
    /// in flight touched by other instructions), losing MMA pipelining.
    wgmma_serialized: Option<String>,
    seconds: f64,
}

/// What every warp-specialized kernel's PTX contains: TMA copies, WGMMA,
/// mbarrier waits and the register split.
const WS_INSTRUCTIONS: [&str; 4] = [
    "cp.async.bulk.tensor",
    "wgmma.mma_async",
    "mbarrier.try_wait",
    "setmaxnreg",
];

/// Examples whose large cases must come out warp-specialized (the GEMM-like
/// ones; grouped GEMM loads its pointers from memory, which TMA cannot
/// describe with a tensor map built at launch).
const WS_EXAMPLES: [&str; 16] = [
    "matmul",
    "matmul_block_ptr",
    "matmul_descriptor",
    "matmul_tma_host",
    "persistent_matmul",
    "geglu_dual_gemm",
    "gemm_row_reduce",
    "weight_grad",
    "persistent_matmul_clamped",
    "linear",
    "matmul_swap_ab",
    "fused_attention",
    "glu_dual_gemm_unmasked",
    "batched_matmul",
    "split_k_matmul",
    "matmul_subtiled_epilogue",
];

/// Examples that read tiles through `trans`: their plain kernels
/// (`--no-ws`, what the backend emits when nothing is specialized) are
/// compiled too, since the warp-specialized ones read the transposes from
/// aref slots instead.
const TRANS_EXAMPLES: [&str; 2] = ["linear", "matmul_swap_ab"];

fn compile_one(ex: &Example, case: &Case) -> Result<Row, String> {
    let start = Instant::now();
    let compiled =
        compile_case(ex, case, Some(&PipelineOptions::default())).map_err(|f| f.to_string())?;
    let report = ptxas_info(&compiled.compiled.ptx).map_err(|e| format!("ptxas: {e}"))?;
    let name = &compiled.kernel.symbol;
    let res = report
        .kernel(name)
        .ok_or_else(|| format!("ptxas reports no kernel `{name}`:\n{}", report.log))?;
    // What `run`, `bench` and `--emit ptx` warn from: the same ptxas report,
    // in NVRTC's log.
    let from_nvrtc = compiled.compiled.resources();
    match from_nvrtc.kernel(name) {
        Some(k) if (k.registers, k.spills()) == (res.registers, res.spills()) => {}
        other => {
            return Err(format!(
                "NVRTC's report {other:?} differs from ptxas's {res:?}:\n{}",
                from_nvrtc.log
            ))
        }
    }
    Ok(Row {
        what: format!("{}/{}", ex.name, case.name),
        kernel: name.clone(),
        registers: res.registers,
        spill_bytes: res.spill_store_bytes + res.spill_load_bytes,
        static_smem: res.shared_bytes,
        dyn_smem: compiled.kernel.dyn_smem_bytes,
        wgmma: compiled.compiled.ptx.contains("wgmma.mma_async"),
        ws: !compiled.kernel.tensor_maps.is_empty(),
        ws_missing: WS_INSTRUCTIONS
            .into_iter()
            // Two blocks an SM may split each one's 128 registers a thread
            // evenly (a producer that copies with its threads keeps 128
            // beside a 128-register consumer): no setmaxnreg to write.
            .filter(|&i| !(i == "setmaxnreg" && compiled.kernel.occupancy > 1))
            .filter(|i| !compiled.compiled.ptx.contains(i))
            .collect(),
        wgmma_serialized: report
            .log
            .lines()
            .find(|l| l.contains("wgmma.mma_async instructions are serialized"))
            .map(str::to_string),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The tests run only when asked (`--ignored`, as `.ci/run` does): then
/// missing tools are a failure, with how to install them.
fn require_tools() {
    if let Some(why) = missing_compile_tools() {
        panic!("the CUDA tools are missing (bash .ci/run installs them):\n{why}");
    }
}

#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn every_example_compiles_to_sm90a_without_spills() {
    require_tools();
    let examples = triton_examples::load_all().expect("launch cases load");
    let jobs: Vec<(&Example, &Case)> = examples
        .iter()
        .flat_map(|ex| ex.spec.cases.iter().map(move |c| (ex, c)))
        .collect();
    assert!(!jobs.is_empty(), "no example cases found");

    // NVRTC and ptxas are single-threaded per kernel; one worker per core.
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<Row, String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((ex, case)) = jobs.get(i) else {
                    break;
                };
                let result = compile_one(ex, case);
                let done = match &result {
                    Ok(r) => format!("ok   {} ({:.1}s)", r.what, r.seconds),
                    Err(_) => format!("FAIL {}/{}", ex.name, case.name),
                };
                eprintln!("{done}");
                results.lock().unwrap().push((i, result));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);

    let allow_spills = std::env::var(ENV_ALLOW_SPILLS).is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    println!(
        "{:<44} {:<24} {:>5} {:>7} {:>8} {:>8} {:>6} {:>4}",
        "case", "kernel", "regs", "spill B", "smem B", "dyn B", "wgmma", "ws"
    );
    for (i, result) in &results {
        let (ex, case) = jobs[*i];
        match result {
            Ok(r) => {
                println!(
                    "{:<44} {:<24} {:>5} {:>7} {:>8} {:>8} {:>6} {:>4}",
                    r.what,
                    r.kernel,
                    r.registers,
                    r.spill_bytes,
                    r.static_smem,
                    r.dyn_smem,
                    if r.wgmma { "yes" } else { "no" },
                    if r.ws { "yes" } else { "no" }
                );
                if r.ws && !r.ws_missing.is_empty() {
                    failures.push(format!(
                        "{}: warp-specialized, but its PTX has no {}",
                        r.what,
                        r.ws_missing.join(", no ")
                    ));
                }
                if WS_EXAMPLES.contains(&ex.name.as_str()) && case.has_tag("large") && !r.ws {
                    failures.push(format!(
                        "{}: not warp-specialized (see `tawa-rs {} --case {} --explain --emit ws-ir`)",
                        r.what,
                        ex.py_path.display(),
                        case.name
                    ));
                }
                if let Some(line) = &r.wgmma_serialized {
                    failures.push(format!("{}: {line}", r.what));
                }
                if r.spill_bytes > 0 && !allow_spills {
                    failures.push(format!(
                        "{}: spills {} bytes ({} registers); set {ENV_ALLOW_SPILLS}=1 to only report spills locally",
                        r.what, r.spill_bytes, r.registers
                    ));
                }
                if ex.name == "matmul" && case.has_tag("large") && !r.wgmma {
                    failures.push(format!(
                        "{}: the PTX has no wgmma.mma_async (tensor cores through WGMMA)",
                        r.what
                    ));
                }
            }
            Err(e) => failures.push(format!("{}/{}:\n{e}", ex.name, case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed the compile check:\n\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}

/// The plain kernels of the examples that transpose tiles compile, use
/// wgmma, do not spill, and read no transposed operand through a
/// layout conversion in the main loop (the transpose is a rename).
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn plain_kernels_with_trans_compile() {
    require_tools();
    let mut failures = Vec::new();
    for name in TRANS_EXAMPLES {
        let ex = triton_examples::load(name).expect("example loads");
        for case in &ex.spec.cases {
            let what = format!("{name}/{} (plain)", case.name);
            let compiled = match compile_case(&ex, case, None) {
                Ok(c) => c,
                Err(f) => {
                    failures.push(format!("{what}: {f}"));
                    continue;
                }
            };
            // (The plain path may copy tiles with TMA too; only a
            // warp-specialized kernel splits the registers.)
            assert!(
                !compiled.compiled.ptx.contains("setmaxnreg"),
                "{what}: warp-specialized without options"
            );
            if !compiled.compiled.ptx.contains("wgmma.mma_async") {
                failures.push(format!("{what}: no wgmma.mma_async"));
            }
            match ptxas_info(&compiled.compiled.ptx) {
                Ok(report) => match report.kernel(&compiled.kernel.symbol) {
                    Some(k) if k.spills() => {
                        failures.push(format!("{what}: spills\n{}", report.log))
                    }
                    Some(_) => eprintln!("ok   {what}"),
                    None => failures.push(format!("{what}: ptxas reports no kernel")),
                },
                Err(e) => failures.push(format!("{what}: ptxas: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `trans` in the forms the examples do not use compiles through NVRTC
/// and ptxas: a 3-D permutation stored, a transpose of light values
/// (ranges), one read by elementwise ops and by a dot in the same program,
/// and a transposed accumulator used again by a dot.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn trans_forms_compile() {
    require_tools();
    let source = r#"
import triton
import triton.language as tl

@triton.jit
def permute3(x_ptr, y_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + a * B * C + b * C + c)
    y = tl.permute(x, (2, 0, 1))
    ya = tl.arange(0, C)[:, None, None]
    yb = tl.arange(0, A)[None, :, None]
    yc = tl.arange(0, B)[None, None, :]
    tl.store(y_ptr + ya * A * B + yb * B + yc, y)

@triton.jit
def light(y_ptr, N: tl.constexpr):
    r = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    t = tl.trans(r)
    tl.store(y_ptr + r, t)

@triton.jit
def reuse(a_ptr, b_ptr, c_ptr, d_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    bt = b.T
    tl.store(d_ptr + offs, bt * 2.0)
    acc = tl.dot(a, bt)
    acc2 = tl.dot(a, tl.trans(acc).to(tl.float16))
    tl.store(c_ptr + offs, acc2)
"#;
    for (kernel, signature) in [
        ("permute3", "*fp16:16, *fp16:16, 4, 8, 16"),
        ("light", "*i32:16, 32"),
        ("reuse", "*fp16:16, *fp16:16, *fp32:16, *fp16:16, 64"),
    ] {
        let opts = tawa_frontend::CompileOptions {
            kernel: Some(kernel.into()),
            signature: Some(signature.into()),
            ..Default::default()
        };
        let ptx = ptx_without_spills("trans.py", source, &opts);
        if kernel == "reuse" {
            assert!(ptx.contains("wgmma.mma_async"), "{kernel}: no wgmma");
        }
    }
}

/// The vector f32 atomics compile to what they are named for: `red` and
/// `atom` of 4 floats from a blocked layout, and `atom` of 2 from a wgmma
/// accumulator whose old values are used (split-K's epilogue, whose
/// result is unused, is the `red` of 2 every example case compiles).
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn vector_atomic_adds_compile() {
    require_tools();
    let source = r#"
import triton
import triton.language as tl

@triton.jit
def accumulate(x_ptr, y_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.atomic_add(y_ptr + offs, x, mask=mask)
    old = tl.atomic_add(old_ptr + offs, x, mask=mask)
    tl.store(x_ptr + offs, old, mask=mask)

@triton.jit
def dot_add(a_ptr, b_ptr, c_ptr, d_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None]
    cols = tl.arange(0, N)[None, :]
    acc = tl.dot(tl.load(a_ptr + rows * N + cols), tl.load(b_ptr + rows * N + cols))
    old = tl.atomic_add(c_ptr + rows * N + cols, acc)
    tl.store(d_ptr + rows * N + cols, old)
"#;
    for (kernel, signature, wanted) in [
        (
            "accumulate",
            "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024",
            &["red.global.add.v4.f32", "atom.global.add.v4.f32"][..],
        ),
        (
            "dot_add",
            "*fp16:16, *fp16:16, *fp32:16, *fp32:16, 64",
            &["atom.global.add.v2.f32"][..],
        ),
    ] {
        let opts = tawa_frontend::CompileOptions {
            kernel: Some(kernel.into()),
            signature: Some(signature.into()),
            num_warps: Some(4),
            ..Default::default()
        };
        let ptx = ptx_without_spills("atomics.py", source, &opts);
        for w in wanted {
            assert!(ptx.contains(w), "{kernel}: no `{w}` in the PTX");
        }
        assert!(
            !ptx.contains("atom.global.add.f32"),
            "{kernel}: a scalar atomic is left"
        );
    }
}

/// The PTX of kernel `opts.kernel` of `source` through the driver's CUDA
/// path and NVRTC, after ptxas found no spills in it.
fn ptx_without_spills(file: &str, source: &str, opts: &tawa_frontend::CompileOptions) -> String {
    let kernel = opts.kernel.as_deref().unwrap_or_default();
    let module = tawa_frontend::compile(file, source, opts)
        .unwrap_or_else(|d| panic!("{kernel}: {}", d.render(false)));
    let func = module
        .functions
        .iter()
        .find(|f| f.name == kernel)
        .expect("kernel function");
    let compiled = tawa_rs::driver::compile_to_cuda(file, source, func, None, false)
        .unwrap_or_else(|f| panic!("{kernel}: {f}"));
    let out = tawa_rs::driver::nvrtc(&compiled.source).unwrap_or_else(|f| panic!("{kernel}: {f}"));
    let report = ptxas_info(&out.ptx).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    assert!(
        report.kernels.iter().all(|k| !k.spills()),
        "{kernel}: {}",
        report.log
    );
    out.ptx
}

/// The harness's hand-written attention reference kernels compile too (they
/// only run on the GPU machine, where a compile error would cost a run).
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn harness_reference_kernels_compile() {
    require_tools();
    let compiled = tawa_backend::runtime::compile_cuda(
        tawa_rs::harness::gpu_reference::REFERENCE_CUDA,
        "tawa_ref_softmax_rows",
        &tawa_backend::runtime::CompileOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let entries = tawa_backend::runtime::ptx_entries(&compiled.ptx);
    for kernel in ["tawa_ref_softmax_rows", "tawa_ref_to_f32"] {
        assert!(entries.iter().any(|e| e == kernel), "{entries:?}");
    }
    let report = ptxas_info(&compiled.ptx).unwrap_or_else(|e| panic!("{e}"));
    assert!(report.kernels.iter().all(|k| !k.spills()), "{}", report.log);
}

/// Kernel names of every kind, and whether each keeps its Python name as
/// its symbol: C++ keywords, names CUDA's headers already declare, and
/// non-ASCII letters get a mangled symbol; names kernels usually have stay
/// as they are.
const KERNEL_NAMES: [(&str, bool); 12] = [
    ("add_kernel", true),
    ("_attn_fwd", true),
    ("new", false),
    ("template", false),
    ("static_cast", false),
    ("max", false),
    ("printf", false),
    ("size_t", false),
    ("make_float4", false),
    ("main", false),
    ("ünïcode_kernel", false),
    ("カーネル", false),
];

/// A copy kernel named `name`, through the frontend and CUDA generation.
fn kernel_named(name: &str) -> tawa_backend::KernelSource {
    let source = format!(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n\
         def {name}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n\
         \x20   o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n\
         \x20   tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)\n"
    );
    let opts = tawa_frontend::CompileOptions {
        signature: Some("*fp32:16, *fp32:16, i32, 128".into()),
        ..Default::default()
    };
    let module = tawa_frontend::compile("names.py", &source, &opts)
        .unwrap_or_else(|d| panic!("{name}: {}", d.render(false)));
    tawa_rs::driver::compile_to_cuda("names.py", &source, &module.functions[0], None, false)
        .unwrap_or_else(|f| panic!("{name}: {f}"))
        .source
}

/// Messages keep the Python name; the symbol is ASCII and mangled only
/// where it has to be (no tools needed).
#[test]
fn kernel_names_are_mangled_only_where_needed() {
    for (name, kept) in KERNEL_NAMES {
        let kernel = kernel_named(name);
        assert_eq!(kernel.name, name, "messages keep the Python name");
        assert_eq!(
            kernel.symbol == name,
            kept,
            "{name}: symbol {}",
            kernel.symbol
        );
        assert!(kernel.symbol.is_ascii(), "{}", kernel.symbol);
    }
}

/// Any Python identifier is a kernel name NVRTC accepts.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn any_kernel_name_compiles() {
    require_tools();
    for (name, _) in KERNEL_NAMES {
        tawa_rs::driver::nvrtc(&kernel_named(name)).unwrap_or_else(|f| panic!("{name}: {f}"));
    }
}

/// `--no-ws` honours `num_stages` (`tawa_pipeliner::software_pipeline`):
/// the first large case of every warp-specialized example but the
/// persistent ones compiles, at the case's `num_stages`, to one partition
/// issuing TMA copies ahead of its WGMMAs (no register split), without
/// spills or serialized wgmmas; at `num_stages = 1` to the plain kernel,
/// which loads through registers.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn no_ws_kernels_are_software_pipelined() {
    require_tools();
    let mut failures = Vec::new();
    for name in WS_EXAMPLES.iter().filter(|n| !n.starts_with("persistent_")) {
        let ex = triton_examples::load(name).expect("example loads");
        let case = ex
            .spec
            .cases
            .iter()
            .find(|c| c.has_tag("large"))
            .expect("a large case");
        let what = format!("{name}/{} --no-ws", case.name);
        let mut one_stage = case.clone();
        one_stage.num_stages = Some(1);
        for (case, pipelined) in [(case, true), (&one_stage, false)] {
            let compiled = match compile_case(&ex, case, None) {
                Ok(c) => c,
                Err(f) => {
                    failures.push(format!("{what}: {f}"));
                    continue;
                }
            };
            let ptx = &compiled.compiled.ptx;
            let tma = ptx.contains("cp.async.bulk.tensor") && ptx.contains("mbarrier.try_wait");
            if tma != pipelined || ptx.contains("setmaxnreg") || !ptx.contains("wgmma.mma_async") {
                failures.push(format!(
                    "{what}, num_stages {:?}: TMA ring {tma} (expected {pipelined}), setmaxnreg {}, wgmma {}",
                    case.num_stages,
                    ptx.contains("setmaxnreg"),
                    ptx.contains("wgmma.mma_async")
                ));
            }
            let report = ptxas_info(ptx).expect("ptxas runs");
            if let Some(k) = report.kernel(&compiled.kernel.symbol) {
                if k.spill_store_bytes + k.spill_load_bytes > 0 {
                    failures.push(format!("{what}: spills ({} registers)", k.registers));
                }
            }
            if report
                .log
                .contains("wgmma.mma_async instructions are serialized")
            {
                failures.push(format!("{what}: wgmma serialized"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The warp-specialized matmul's epilogue is a TMA store (staged in shared
/// memory, fenced for the async proxy, `cp.async.bulk.tensor` from shared
/// to global memory, the buffer's reads waited for before it is written
/// again), on its large case and on a ragged one whose last tiles TMA
/// clips; `--no-tma-store` keeps it element-wise. Neither spills.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn ws_matmul_epilogue_is_a_tma_store() {
    require_tools();
    let ex = triton_examples::load("matmul").expect("example loads");
    let mut failures = Vec::new();
    for name in ["square_8192", "leaky_relu_ragged_tma"] {
        let case = ex.spec.case(name).expect("the case exists");
        for tma_store in [true, false] {
            let opts = PipelineOptions {
                tma_store,
                ..PipelineOptions::default()
            };
            let what = format!("matmul/{name}, tma_store {tma_store}");
            let Some(compiled) = compiled_or_noted(&ex, case, &opts, &what, &mut failures) else {
                continue;
            };
            let ptx = &compiled.compiled.ptx;
            let stores = ptx
                .lines()
                .filter(|l| l.contains("cp.async.bulk.tensor.2d.global.shared::cta"))
                .count();
            let ordered = ptx.contains("fence.proxy.async.shared::cta")
                && ptx.contains("cp.async.bulk.commit_group")
                && ptx.contains("cp.async.bulk.wait_group.read 0");
            if !ptx.contains("setmaxnreg") || (stores > 0) != tma_store || ordered != tma_store {
                failures.push(format!(
                    "{what}: warp-specialized {}, {stores} TMA stores, fence/commit/wait {ordered}",
                    ptx.contains("setmaxnreg")
                ));
            }
            note_spills(&compiled, &what, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `case` compiled with `opts`, or `None` with the failure noted.
fn compiled_or_noted(
    ex: &Example,
    case: &Case,
    opts: &PipelineOptions,
    what: &str,
    failures: &mut Vec<String>,
) -> Option<tawa_rs::harness::CompiledCase> {
    compile_case(ex, case, Some(opts))
        .map_err(|f| failures.push(format!("{what}: {f}")))
        .ok()
}

/// Each `(example, case)` of `cases` compiled with `opts`, given to `check`
/// with its `example/case` name; a case that does not compile is a noted
/// failure.
fn for_each_compiled(
    cases: &[(&str, &str)],
    opts: &PipelineOptions,
    failures: &mut Vec<String>,
    mut check: impl FnMut(&Example, &Case, &str, tawa_rs::harness::CompiledCase, &mut Vec<String>),
) {
    for &(example, name) in cases {
        let ex = triton_examples::load(example).expect("example loads");
        let case = ex.spec.case(name).expect("the case exists");
        let what = format!("{example}/{name}");
        if let Some(compiled) = compiled_or_noted(&ex, case, opts, &what, failures) {
            check(&ex, case, &what, compiled, failures);
        }
    }
}

/// Notes the spills ptxas reports for the kernel of `compiled`.
fn note_spills(compiled: &tawa_rs::harness::CompiledCase, what: &str, failures: &mut Vec<String>) {
    let report = ptxas_info(&compiled.compiled.ptx).expect("ptxas runs");
    if let Some(k) = report.kernel(&compiled.kernel.symbol) {
        if k.spill_store_bytes + k.spill_load_bytes > 0 {
            failures.push(format!("{what}: spills ({} registers)", k.registers));
        }
    }
}

/// Programmatic dependent launch: with `--pdl` the warp-specialized GEMMs
/// of the swap-AB decode, the batched GEMM and matmul, and the plain
/// vector add, wait for the kernel before them first thing
/// (`griddepcontrol.wait`, before any other PTX instruction of the
/// kernel's body but the tensor maps' prefetch from the parameters), then
/// let the next one start, and their launch contract asks for the
/// launch attribute. By default only the persistent GEMMs do (the vector
/// add's blocks do not walk tiles); with `--no-pdl` none.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn pdl_kernels_wait_for_the_kernel_before_them_first() {
    require_tools();
    let with = |programmatic_launch| PipelineOptions {
        programmatic_launch,
        ..PipelineOptions::default()
    };
    assert_eq!(PipelineOptions::default(), with(None));
    let mut failures = Vec::new();
    // Each case, and whether the default launches it as a dependent.
    let cases = [
        ("matmul_swap_ab", "decode_16x8192x8192", true),
        ("batched_matmul", "attention_scores_32x512", true),
        ("matmul", "ragged_100", true),
        ("vector_add", "ragged_1000", false),
    ];
    let names: Vec<(&str, &str)> = cases.iter().map(|&(e, c, _)| (e, c)).collect();
    for_each_compiled(
        &names,
        &with(Some(true)),
        &mut failures,
        |ex, case, what, pdl, failures| {
            let ptx = &pdl.compiled.ptx;
            let body = &ptx[ptx.find(".entry").expect("an entry")..];
            let body = &body[body.find('{').expect("a body")..];
            // The first memory or synchronizing instruction of the body.
            let first = body
                .lines()
                .map(str::trim)
                .find(|l| {
                    [
                        "ld.global",
                        "st.global",
                        "cp.async",
                        "mbarrier",
                        "griddepcontrol",
                        "bar.",
                    ]
                    .iter()
                    .any(|i| l.starts_with(i))
                })
                .unwrap_or_default();
            if !first.starts_with("griddepcontrol.wait")
                || !body.contains("griddepcontrol.launch_dependents")
                || !pdl.kernel.programmatic_launch
            {
                failures.push(format!(
                    "{what}: first `{first}`, launch_dependents {}, contract {}",
                    body.contains("griddepcontrol.launch_dependents"),
                    pdl.kernel.programmatic_launch
                ));
            }
            let by_default = cases
                .iter()
                .any(|&(e, c, d)| d && what == format!("{e}/{c}"));
            for (flags, expected) in [("default", by_default), ("--no-pdl", false)] {
                let opts = with(if flags == "default" {
                    None
                } else {
                    Some(false)
                });
                if let Some(k) = compiled_or_noted(ex, case, &opts, what, failures) {
                    let in_ptx = k.compiled.ptx.contains("griddepcontrol");
                    if in_ptx != expected || k.kernel.programmatic_launch != expected {
                        failures.push(format!(
                            "{what} ({flags}): griddepcontrol {in_ptx}, contract {}, expected {expected}",
                            k.kernel.programmatic_launch
                        ));
                    }
                }
            }
        },
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Tile ping-pong (`--tile-pingpong`): matmul's 64x64 tiles on 4 warps
/// and 128x128 tiles on 4 and 8 warps (ragged and 8192^3) come out with two consumer
/// warpgroups of 232 registers taking turns (named barriers), and ptxas
/// spills nothing; 128x256 tiles keep the cooperative split.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn ws_matmul_tile_pingpong_compiles_without_spills() {
    require_tools();
    let ex = triton_examples::load("matmul").expect("example loads");
    let opts = PipelineOptions {
        tile_pingpong: Some(true),
        ..PipelineOptions::default()
    };
    let mut failures = Vec::new();
    let cases: Vec<(&Case, bool)> = [
        ("leaky_relu_ragged_tma", true),
        ("tiles_128x128_ragged", true),
        ("tiles_128x128_8192", true),
        ("tiles_128x128_8192_8_warps", true),
        ("square_8192", false),
    ]
    .into_iter()
    .map(|(name, split)| (ex.spec.case(name).expect("the case exists"), split))
    .collect();
    for &(case, split) in &cases {
        let what = format!("matmul/{}", case.name);
        let Some(compiled) = compiled_or_noted(&ex, case, &opts, &what, &mut failures) else {
            continue;
        };
        let ptx = &compiled.compiled.ptx;
        let turns = ptx.contains("bar.arrive");
        let consumers = ptx.matches("setmaxnreg.inc.sync.aligned.u32 232").count();
        if turns != split || (consumers == 2) != split {
            failures.push(format!(
                "{what}: turns {turns}, {consumers} consumers at 232 registers (split expected: {split})"
            ));
        }
        note_spills(&compiled, &what, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// CTA pairs that split K (`--cluster-split-k`): the swap-AB decode GEMM,
/// matmul's 128x128 tiles of one consumer warpgroup (64 KiB of partial
/// sums) and 128x256 tiles of two (128 KiB), and the GLU dual GEMM (two
/// sums) compile to kernels without
/// static clusters whose pairs exchange through distributed shared memory
/// (`mapa`, `st.shared::cluster`, cluster-scope barriers), and ptxas
/// spills nothing. The launcher starts pairs (two programs a tile in
/// clusters of 2) only where the tiles fill at most half the programs
/// the device holds. Without the flag no kernel has the exchange.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn ws_cluster_split_k_compiles_without_spills() {
    require_tools();
    let opts = PipelineOptions {
        cluster_split_k: true,
        ..PipelineOptions::default()
    };
    let mut failures = Vec::new();
    let cases = [
        ("matmul_swap_ab", "decode_16x8192x8192"),
        ("matmul", "tiles_128x128_ragged"),
        ("matmul", "square_8192"),
        ("glu_dual_gemm_unmasked", "blocks_64x128x160"),
    ];
    for_each_compiled(
        &cases,
        &opts,
        &mut failures,
        |ex, case, what, compiled, failures| {
            let (k, ptx) = (&compiled.kernel, &compiled.compiled.ptx);
            let got = (
                k.cluster_split_k,
                k.cluster,
                ptx.contains("st.shared::cluster.f32"),
                ptx.contains("mbarrier.try_wait.parity.acquire.cluster"),
                ptx.contains("%cluster_nctarank"),
            );
            if got != (true, None, true, true, true) {
                failures.push(format!(
                    "{what}: (split-capable, static cluster, remote stores, cluster-scope waits, \
                 cluster size read) {got:?}"
                ));
            }
            note_spills(&compiled, what, failures);
            for (tiles, resident, grid, cluster) in [
                (64, 132, 128, Some([2, 1, 1])),
                (66, 132, 132, Some([2, 1, 1])),
                (67, 132, 67, None),
                // 16 waves of 128 programs, as few as walk them in 16.
                (2048, 132, 128, None),
                (2049, 132, 129, None),
            ] {
                let asked = [tiles, 1, 1];
                let got = (
                    k.launch_grid(asked, resident),
                    k.launch_cluster(asked, resident),
                );
                // The 2-D grids (swap-AB's) walk x * y tiles: one row of y.
                if got != ([grid, 1, 1], cluster) {
                    failures.push(format!(
                        "{what}: {tiles} tiles on {resident} resident programs: {got:?}, expected \
                     ({grid}, {cluster:?})"
                    ));
                }
            }
            let plain = compiled_or_noted(ex, case, &PipelineOptions::default(), what, failures);
            if plain.is_some_and(|p| p.kernel.cluster_split_k || p.kernel.cuda.contains("tw_xchg"))
            {
                failures.push(format!("{what}: split K without --cluster-split-k"));
            }
        },
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// TMA multicast (`--tma-multicast`): kernels whose copies are single
/// boxes (linear's K-major operands, matmul's 64-column TMA cases) and
/// kernels with an MN-major operand copied as several boxes side by side
/// (matmul's 128x256 tiles, the batched GEMM) come out in CTA pairs
/// (`KernelSource::cluster`), issuing multicast copies, releasing slots
/// on the peer's barriers and syncing the cluster, and ptxas spills
/// nothing; `ragged_100`, whose tiles the producer's threads copy (TMA
/// refused them), stays in single CTAs and compiles as without the flag.
/// Without the flag no kernel mentions clusters.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn ws_matmul_tma_multicast_compiles_without_spills() {
    require_tools();
    let opts = PipelineOptions {
        tma_multicast: true,
        ..PipelineOptions::default()
    };
    let mut failures = Vec::new();
    for (example, name, paired) in [
        ("square_8192", true),
        ("bf16_8192", true),
        ("leaky_relu_ragged_tma", true),
        ("bf16_ragged_tma", true),
        ("ragged_100", false),
    ]
    .into_iter()
    .map(|(name, paired)| ("matmul", name, paired))
    .chain([
        ("linear", "square_8192", true),
        ("batched_matmul", "batch_4_2048", true),
    ]) {
        let ex = triton_examples::load(example).expect("example loads");
        let case = ex.spec.case(name).expect("the case exists");
        let what = format!("{example}/{name}");
        let Some(compiled) = compiled_or_noted(&ex, case, &opts, &what, &mut failures) else {
            continue;
        };
        let ptx = &compiled.compiled.ptx;
        let got = (
            compiled.kernel.cluster,
            ptx.contains(".multicast::cluster"),
            ptx.contains("mapa.shared::cluster"),
            ptx.contains("barrier.cluster.arrive"),
        );
        let want = if paired {
            (Some([2, 1, 1]), true, true, true)
        } else {
            (None, false, false, false)
        };
        if got != want {
            failures.push(format!(
                "{what}: (cluster, multicast copies, remote arrives, cluster barrier) {got:?}, expected {want:?}"
            ));
        }
        note_spills(&compiled, &what, &mut failures);
        if paired {
            // Pairs of programs: as many as the device holds, rounded
            // down to pairs, never more pairs than the tiles fill.
            let k = &compiled.kernel;
            for (tiles, resident, want) in
                [(2048, 132, 132), (2048, 133, 132), (7, 132, 8), (1, 132, 2)]
            {
                let got = k.launch_grid([tiles, 1, 1], resident);
                if got != [want, 1, 1] {
                    failures.push(format!(
                        "{what}: launch_grid of {tiles} tiles on {resident} resident programs: {got:?}, expected {want}"
                    ));
                }
            }
        }
        let plain = compiled_or_noted(&ex, case, &PipelineOptions::default(), &what, &mut failures);
        if let Some(plain) = plain {
            if plain.kernel.cluster.is_some() || plain.kernel.cuda.contains("cluster_sync") {
                failures.push(format!("{what}: clusters without --tma-multicast"));
            }
            if !paired && plain.kernel.cuda != compiled.kernel.cuda {
                failures.push(format!(
                    "{what}: --tma-multicast changed a kernel it does not apply to"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
