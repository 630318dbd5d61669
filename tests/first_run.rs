//! What a new user meets first, through the real binary: the advertised
//! form `tawa-rs kernel.py --arch sm90` on every example, the `--signature`
//! template for a kernel without launch cases, and the exit codes and
//! messages of plausible bad inputs (options, sizes, environment).

use std::path::{Path, PathBuf};

mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

use common::run_tawa as tawa;

/// A fresh directory under the target directory for files a test writes.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example_kernels() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("triton-examples/kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "examples missing");
    files
}

#[test]
fn advertised_form_compiles_the_first_launch_case_and_says_so() {
    for file in example_kernels() {
        let rel = file.strip_prefix(root()).unwrap().to_str().unwrap();
        let spec = triton_examples::load_beside(&file).unwrap().spec;
        let first = &spec.cases[0].name;
        let (code, stdout, stderr) = tawa(&[rel, "--arch", "sm90"], &[]);
        assert_eq!(code, 0, "{rel}: {stderr}");
        assert!(stdout.starts_with("// source:"), "{rel}: tile IR expected");
        assert!(
            stderr.contains(&format!("compiling launch case `{first}`"))
                && stderr.contains("--case NAME"),
            "{rel}: which case, and how to pick another:\n{stderr}"
        );
        // Explicit options still win: a signature means no case is used.
        let (code, _, stderr) = tawa(&[rel, "--signature", "1"], &[]);
        assert_ne!(code, 0, "{rel}");
        assert!(!stderr.contains("compiling launch case"), "{rel}: {stderr}");
    }
}

/// Without launch cases, the error names every untyped parameter and shows
/// a complete signature; pasted back, it compiles the kernel (CUDA
/// included) for every example but those whose guesses are known wrong.
#[test]
fn kernels_without_cases_get_a_signature_template_that_compiles() {
    // grouped_gemm's `sizes` and `lds` hold integers and its `*_ptrs`
    // hold addresses: nothing in the names says so.
    let known_misses = ["grouped_gemm"];
    let dir = scratch("signature_template");
    for file in example_kernels() {
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let copy = dir.join(format!("{name}.py"));
        std::fs::copy(&file, &copy).unwrap();
        let copy = copy.to_str().unwrap();
        let (code, stdout, stderr) = tawa(&[copy, "--arch", "sm90"], &[]);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stdout.is_empty(), "{name}");
        assert!(stderr.starts_with("error: no type"), "{name}: {stderr}");
        let spec = triton_examples::load_beside(&file).unwrap().spec;
        for param in &spec.params {
            if !spec.cases[0].constexprs.contains_key(param) {
                assert!(stderr.contains(&format!("`{param}`")), "{name}: {param}");
            }
        }
        let line = stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("--signature \""))
            .unwrap_or_else(|| panic!("{name}: no template:\n{stderr}"));
        let sig = line.strip_suffix('"').unwrap();
        assert_eq!(
            signature_entries(sig),
            spec.params.len(),
            "{name}: one entry per parameter: {sig}"
        );
        let (code, _, stderr) = tawa(&[copy, "--signature", sig, "--emit", "cuda"], &[]);
        if known_misses.contains(&name.as_str()) {
            assert_eq!(code, 1, "{name}: a known miss now compiles; drop it");
        } else {
            assert_eq!(code, 0, "{name}: the template does not compile:\n{stderr}");
        }
    }
}

fn signature_entries(sig: &str) -> usize {
    tawa_frontend::signature::split(sig).len()
}

/// A kernel file of `body` (indented already) under `dir`, with no launch
/// cases beside it.
fn kernel_file(dir: &Path, name: &str, params: &str, body: &str) -> String {
    let path = dir.join(format!("{name}.py"));
    let text = format!(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef {name}({params}):\n{body}"
    );
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_bad_warp_count_is_a_usage_error() {
    for bad in ["0", "3", "64"] {
        let (code, stdout, stderr) = tawa(
            &["triton-examples/kernels/vector_add.py", "--num-warps", bad],
            &[],
        );
        assert_eq!(code, 2, "--num-warps {bad}: {stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.contains("power of two from 1 to 32"),
            "--num-warps {bad}: {stderr}"
        );
    }
}

#[test]
fn a_missing_tools_folder_is_an_error_not_a_fallback() {
    let (code, _, stderr) = tawa(
        &["triton-examples/kernels/vector_add.py", "--emit", "ptx"],
        &[("TAWA_CUDA_TOOLS", "/nonexistent/tawa-tools")],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("TAWA_CUDA_TOOLS = /nonexistent/tawa-tools (no such folder"),
        "{stderr}"
    );
    // A folder without the tools is no reason to use others either.
    let empty = scratch("empty_tools");
    let (code, _, stderr) = tawa(
        &["triton-examples/kernels/vector_add.py", "--emit", "ptx"],
        &[("TAWA_CUDA_TOOLS", empty.to_str().unwrap())],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("(not in it; not looking elsewhere)"),
        "{stderr}"
    );
}

/// Tiles past what registers can hold are refused before any code is
/// written: NVRTC would run for minutes on the unrolled code.
#[test]
fn huge_tiles_are_refused_quickly_with_the_limit() {
    for (block, per_thread) in [("1048576", "8192"), ("65536", "512")] {
        let start = std::time::Instant::now();
        let (code, _, stderr) = tawa(
            &[
                "triton-examples/kernels/vector_add.py",
                "-D",
                &format!("BLOCK_SIZE={block}"),
                "--emit",
                "cuda",
            ],
            &[],
        );
        assert_eq!(code, 1, "{block}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "is {per_thread} elements per thread over 4 warps; tiles live in registers, at most 256"
            )),
            "{block}: {stderr}"
        );
        assert!(stderr.contains("vector_add.py:13:"), "{block}: {stderr}");
        assert!(start.elapsed().as_secs() < 30, "{block}: slow refusal");
    }
}

#[test]
fn many_reassignments_of_one_variable_print_in_linear_time() {
    let dir = scratch("reassignments");
    let body = format!(
        "    a = tl.load(x_ptr)\n{}    tl.store(x_ptr, a)\n",
        "    a = a + 1\n".repeat(20_000)
    );
    let file = kernel_file(&dir, "reassign", "x_ptr", &body);
    let start = std::time::Instant::now();
    let (code, stdout, stderr) = tawa(&[&file, "--signature", "*i32"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("%a_20000 = "), "every value named");
    // Quadratic name search took minutes here; linear takes about a second.
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}

#[test]
fn an_endless_while_loop_is_warned_about() {
    let dir = scratch("endless_loop");
    let body = "    i = 0\n    while True:\n        i += 1\n    tl.store(x_ptr, i)\n";
    let file = kernel_file(&dir, "spin", "x_ptr", body);
    let (code, stdout, stderr) = tawa(&[&file, "--signature", "*i32"], &[]);
    assert_eq!(code, 0, "a warning, not an error: {stderr}");
    assert!(!stdout.is_empty());
    assert!(
        stderr.starts_with("warning: this `while` loop never ends")
            && stderr.contains("spin.py:8:5"),
        "{stderr}"
    );
    // A loop with a real condition gets no warning.
    let body = "    i = 0\n    while i < 10:\n        i += 1\n    tl.store(x_ptr, i)\n";
    let file = kernel_file(&dir, "bounded", "x_ptr", body);
    let (code, _, stderr) = tawa(&[&file, "--signature", "*i32"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn an_error_in_a_megabyte_line_prints_a_window_of_it() {
    let dir = scratch("long_line");
    let body = format!(
        "    a = tl.load(x_ptr){} + undefined_name\n    tl.store(x_ptr, a)\n",
        " + 1".repeat(150)
    );
    let long = format!("{body}    b = 0{}\n", " + 0".repeat(250_000));
    let file = kernel_file(&dir, "long", "x_ptr", &long);
    let (code, _, stderr) = tawa(&[&file, "--signature", "*i32"], &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.len() < 4096, "{} bytes of stderr", stderr.len());
    assert!(stderr.contains("long.py:"), "{stderr}");
    assert!(stderr.contains('^'), "{stderr}");
}

#[test]
fn run_and_bench_without_launch_cases_say_what_is_missing() {
    let dir = scratch("no_cases");
    let file = kernel_file(&dir, "lonely", "x_ptr", "    tl.store(x_ptr, 1)\n");
    for sub in ["run", "bench"] {
        let (code, _, stderr) = tawa(&[sub, &file], &[]);
        assert_eq!(code, 1, "{sub}: {stderr}");
        assert!(
            stderr.contains("has no launch cases") && stderr.contains("lonely.toml"),
            "{sub}: {stderr}"
        );
    }
    let (code, _, stderr) = tawa(&[&file, "--case", "small"], &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("has no launch cases"), "{stderr}");
}

/// `--emit ptx` and `--emit cubin` (the forms that run ptxas, inside
/// NVRTC or on its own) tell the registers of the kernel, and warn when it
/// spills to local memory.
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn ptx_and_cubin_report_registers_and_spills() {
    require_tools();
    let dir = scratch("resource_report");
    let out = dir.join("k.out");
    let out = out.to_str().unwrap();
    let ex = "triton-examples/kernels/vector_add.py";
    for emit in ["ptx", "cubin"] {
        let (code, _, stderr) = tawa(&[ex, "--emit", emit, "-o", out], &[]);
        assert_eq!(code, 0, "{emit}: {stderr}");
        assert!(
            stderr.contains("note: kernel `add_kernel`: ")
                && stderr.contains("registers per thread"),
            "{emit}: {stderr}"
        );
        assert!(!stderr.contains("local memory"), "{emit}: {stderr}");
        // 256 fp32 elements per thread: inside the limit, past the registers.
        let (code, _, stderr) = tawa(
            &[ex, "-D", "BLOCK_SIZE=32768", "--emit", emit, "-o", out],
            &[],
        );
        assert_eq!(code, 0, "{emit}: {stderr}");
        assert!(
            stderr.contains("warning: kernel `add_kernel` uses local memory: ")
                && stderr.contains("bytes of spill stores"),
            "{emit}: {stderr}"
        );
    }
}

/// `run` and `bench` print [`CompiledCase::local_memory_warning`] under a
/// case's line; it comes from the report in NVRTC's log (the launch itself
/// needs a GPU, the warning does not).
#[test]
#[ignore = "needs NVRTC and ptxas: `bash .ci/run` installs them and runs this"]
fn run_and_bench_know_when_a_case_spills() {
    require_tools();
    let example =
        triton_examples::load_beside(&root().join("triton-examples/kernels/vector_add.py"))
            .unwrap();
    let mut case = example.spec.cases[0].clone();
    let compiled =
        tawa_rs::harness::compile_case(&example, &case, None).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(compiled.local_memory_warning(), None);
    case.constexprs
        .insert("BLOCK_SIZE".into(), triton_examples::Constexpr::Int(32768));
    let compiled =
        tawa_rs::harness::compile_case(&example, &case, None).unwrap_or_else(|f| panic!("{f}"));
    let warning = compiled.local_memory_warning().expect("a warning");
    assert!(
        warning.starts_with("warning: kernel `add_kernel` uses local memory"),
        "{warning}"
    );
}

fn require_tools() {
    if let Some(why) = tawa_backend::toolchain::missing_compile_tools() {
        panic!("the CUDA tools are missing (bash .ci/run installs them):\n{why}");
    }
}

/// `--num-stages` is the aref ring depth of a warp-specialized kernel: it
/// changes the generated CUDA, `--explain` shows the depth taken, and the
/// help says so.
#[test]
fn num_stages_sets_the_ring_depth_of_a_warp_specialized_kernel() {
    let mut cuda = Vec::new();
    for (stages, depth) in [("2", "3"), ("3", "4")] {
        let (code, stdout, stderr) = tawa(
            &[
                "triton-examples/kernels/matmul.py",
                "--case",
                "square_4096",
                "--num-stages",
                stages,
                "--explain",
                "--emit",
                "cuda",
            ],
            &[],
        );
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "depth {depth} (from num_stages {stages} in flight and the slot the consumer reads"
            )),
            "{stages}: {stderr}"
        );
        cuda.push(stdout);
    }
    assert_ne!(cuda[0], cuda[1], "--num-stages 2 and 3 give the same CUDA");
    let (code, help, _) = tawa(&["--help"], &[]);
    assert_eq!(code, 0);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("In a warp-specialized kernel it sets the depth of the aref rings"),
        "{help}"
    );
}

/// An unmasked load or store that provably starts before its pointer
/// argument (program 0, first element) is warned about without
/// `--explain`; masked, conditional and unprovable ones are not.
#[test]
fn accesses_before_a_pointer_argument_are_warned_about() {
    let dir = scratch("before_base");
    let params = "x_ptr, y_ptr, n, BLOCK: tl.constexpr";
    let sig = "*fp32:16, *fp32:16, i32, 128";
    let offs = "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n";
    let warned = [
        (
            "load_minus_one",
            "    a = tl.load(x_ptr + offs - 1)\n    tl.store(y_ptr + offs, a)\n",
            "this unmasked load reads before the start of `x_ptr`",
            "program 0 reads element -1 of `x_ptr`",
        ),
        (
            "store_minus_two",
            "    a = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs - 2, a)\n",
            "this unmasked store writes before the start of `y_ptr`",
            "`mask=offs >= 2`",
        ),
        (
            "scalar_store",
            "    tl.store(y_ptr - 3, 1.0)\n",
            "this unmasked store writes before the start of `y_ptr`",
            "the offset must not be negative",
        ),
    ];
    for (name, body, message, detail) in warned {
        let file = kernel_file(&dir, name, params, &format!("{offs}{body}"));
        let (code, stdout, stderr) = tawa(&[&file, "--signature", sig], &[]);
        assert_eq!(code, 0, "{name}: a warning, not an error: {stderr}");
        assert!(!stdout.is_empty(), "{name}");
        assert!(
            stderr.starts_with(&format!("warning: {message}"))
                && stderr.contains(detail)
                && stderr.contains(&format!("{name}.py:"))
                && stderr.contains('^'),
            "{name}: {stderr}"
        );
    }
    let quiet = [
        ("masked", "    a = tl.load(x_ptr + offs - 1, mask=offs >= 1)\n    tl.store(y_ptr + offs, a)\n"),
        ("from_zero", "    a = tl.load(x_ptr + offs)\n    tl.store(y_ptr + offs, a)\n"),
        // `n` may be anything: nothing is proven.
        ("argument_offset", "    a = tl.load(x_ptr + offs - n)\n    tl.store(y_ptr + offs, a)\n"),
        // The loop may not run.
        ("in_a_loop", "    for i in range(n):\n        a = tl.load(x_ptr + offs - 1)\n        tl.store(y_ptr + offs, a)\n"),
    ];
    for (name, body) in quiet {
        let file = kernel_file(&dir, name, params, &format!("{offs}{body}"));
        let (code, _, stderr) = tawa(&[&file, "--signature", sig], &[]);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(stderr.is_empty(), "{name}: {stderr}");
    }
}

/// When warp specialization refuses a kernel or its options, the error
/// points at the loop it was splitting and says how to compile anyway;
/// a ring deeper than shared memory holds is refused with or without
/// warp specialization, saying how deep it can be.
#[test]
fn warp_specialization_refusals_point_at_the_loop_and_suggest_no_ws() {
    let matmul = ["triton-examples/kernels/matmul.py", "--case", "square_4096"];
    for no_ws in [&[][..], &["--no-ws"][..]] {
        let args = [
            &matmul[..],
            &["--aref-depth", "9434113", "--emit", "cuda"],
            no_ws,
        ]
        .concat();
        let (code, stdout, stderr) = tawa(&args, &[]);
        assert_eq!(code, 1, "{no_ws:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.starts_with("error: --aref-depth 9434113: ")
                && stderr.contains("at most 4 fit")
                && stderr.contains("--> triton-examples/kernels/matmul.py:47:5")
                && stderr.contains("^ while pipelining this")
                && !stderr.contains("--no-ws"),
            "{no_ws:?}: {stderr}"
        );
    }
    for extra in [["--num-warps", "32"]] {
        let args: Vec<&str> = matmul.iter().chain(&extra).copied().collect();
        let (code, stdout, stderr) = tawa(&[&args[..], &["--emit", "cuda"]].concat(), &[]);
        assert_eq!(code, 1, "{extra:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.starts_with("error: ")
                && stderr.contains("--> triton-examples/kernels/matmul.py:47:5")
                && stderr.contains("^ while warp-specializing this")
                && stderr.contains("--no-ws"),
            "{extra:?}: {stderr}"
        );
        // The suggestion works.
        let (code, _, stderr) = tawa(&[&args[..], &["--emit", "cuda", "--no-ws"]].concat(), &[]);
        assert_eq!(code, 0, "{extra:?} --no-ws: {stderr}");
    }
}
