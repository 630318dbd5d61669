//! Helpers shared by the integration tests: compiling a launch case with the
//! frontend, checking the IR (verifier, text round trip) and running the
//! case on the CPU interpreter against its plain-Rust reference.
//!
//! Each test file includes this module with `mod common;` and uses only part
//! of it, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tawa_frontend::CompileOptions;
use tawa_ir::interp::{run_grid, ArgValue, Buffer, InterpOptions, Memory};
use tawa_ir::{parse_module, print_module, verify_module, Function, Module};
use tawa_rs::harness::check::{check_written, Written};
use triton_examples::{build_inputs, run_reference, Case, ExampleSpec, LaunchArg};

/// Runs the `tawa-rs` binary in the repository root with `args` and the
/// environment variables `env` (colors off): exit code (-1 when killed),
/// standard output, standard error.
pub fn run_tawa(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tawa-rs"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the tawa-rs binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Reads and validates a launch-case file outside triton-examples (the
/// `tests/upstream/*.toml` files).
pub fn load_spec_file(path: &Path) -> Result<ExampleSpec, String> {
    triton_examples::read_spec(path)
}

/// `tests/upstream/*.toml`, sorted.
pub fn upstream_case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstream");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// The tutorial a launch-case file is for: `09-persistent-matmul` for
/// `09-persistent-matmul--descriptor.toml`.
pub fn upstream_stem(case_file: &Path) -> String {
    let name = case_file.file_stem().unwrap().to_str().unwrap();
    name.split("--").next().unwrap().to_string()
}

/// Ops (over the whole grid) after which a run is taken for a hang. Small
/// cases run a few thousand tile ops; this only stops runaway loops.
pub const MAX_STEPS: u64 = 20_000_000;

/// What a successful interpreter run checked.
#[derive(Debug, Clone)]
pub struct CaseReport {
    pub grid: [u32; 3],
    /// Each checked output tensor and its largest absolute error.
    pub outputs: Vec<(String, f64)>,
    /// Time spent in `run_grid` alone.
    pub interp_time: Duration,
}

/// The frontend options of a case (the harness's, so that the tests compile
/// cases exactly as `tawa-rs run` does).
pub fn compile_options(spec: &ExampleSpec, case: &Case) -> Result<CompileOptions, String> {
    tawa_rs::harness::frontend_options(spec, case)
}

/// Verifier errors, one per line.
pub fn verify_text(module: &Module) -> Result<(), String> {
    verify_module(module).map_err(|errors| {
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Compiles the case's kernel (diagnostics rendered without colour) and
/// runs the verifier on the result.
pub fn compile_case(py_path: &Path, spec: &ExampleSpec, case: &Case) -> Result<Module, String> {
    let source = std::fs::read_to_string(py_path)
        .map_err(|e| format!("cannot read {}: {e}", py_path.display()))?;
    let opts = compile_options(spec, case)?;
    let module = tawa_frontend::compile(&py_path.display().to_string(), &source, &opts)
        .map_err(|d| format!("frontend error:\n{}", d.render(false)))?;
    verify_text(&module).map_err(|e| format!("verifier rejects the frontend's IR:\n{e}"))?;
    Ok(module)
}

/// The printed tile IR of a case's kernel.
pub fn printed_ir(py_path: &Path, spec: &ExampleSpec, case: &Case) -> Result<String, String> {
    compile_case(py_path, spec, case).map(|m| print_module(&m))
}

/// `print(parse(print(m))) == print(m)`, and the parsed module verifies.
pub fn check_round_trip(module: &Module) -> Result<(), String> {
    let text = print_module(module);
    let parsed = parse_module(&text)
        .map_err(|e| format!("printed IR does not parse back: {e}\n--- IR ---\n{text}"))?;
    verify_text(&parsed).map_err(|e| format!("re-parsed IR does not verify:\n{e}"))?;
    let again = print_module(&parsed);
    if again != text {
        let (line, a, b) = text
            .lines()
            .zip(again.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i + 1, a.to_string(), b.to_string()))
            .unwrap_or((
                text.lines().count().min(again.lines().count()) + 1,
                "<end>".into(),
                "<end>".into(),
            ));
        return Err(format!(
            "text round trip differs at line {line}:\n  printed:   {a}\n  reprinted: {b}"
        ));
    }
    Ok(())
}

/// Compiles a case and runs it on the interpreter against its reference.
pub fn run_case_on_interpreter(
    py_path: &Path,
    spec: &ExampleSpec,
    case: &Case,
    seed: u64,
) -> Result<CaseReport, String> {
    let module = compile_case(py_path, spec, case)?;
    run_module_on_interpreter(&module, spec, case, seed)
}

/// The function `spec.kernel` of a compiled module.
pub fn kernel_function<'m>(module: &'m Module, spec: &ExampleSpec) -> Result<&'m Function, String> {
    module
        .functions
        .iter()
        .find(|f| f.name == spec.kernel)
        .ok_or_else(|| {
            let names: Vec<&str> = module.functions.iter().map(|f| f.name.as_str()).collect();
            format!(
                "module has no function `{}` (functions: {names:?})",
                spec.kernel
            )
        })
}

/// Runs an already compiled case: inputs from `seed`, outputs poisoned,
/// every output compared with the reference, and every byte that the kernel
/// must not write (inputs, gaps between the rows of strided outputs)
/// compared with its value before the launch.
pub fn run_module_on_interpreter(
    module: &Module,
    spec: &ExampleSpec,
    case: &Case,
    seed: u64,
) -> Result<CaseReport, String> {
    let opts = InterpOptions {
        max_steps: Some(MAX_STEPS),
    };
    run_module_with(module, spec, case, seed, &mut |func, args, grid, mem| {
        run_grid(func, args, grid, mem, &opts).map_err(|e| format!("interpreter: {e}"))
    })
    .map(|(report, _)| report)
}

/// How a launch runs a kernel: the interpreter, or the aref simulator.
pub type Runner<'r> =
    dyn FnMut(&Function, &[ArgValue], [u32; 3], &mut Memory) -> Result<(), String> + 'r;

/// Programs a persistent kernel is started with on the CPU (each walks
/// several tiles of a small case's grid).
const PERSISTENT_PROGRAMS: u32 = 2;

/// Programs a kernel that walks its own tiles is started with on the CPU
/// when asked for more (its source's step): each then walks tiles the
/// source gave to other programs.
const OWN_WALK_PROGRAMS: u32 = 2;

/// Programs a stream-K kernel is started with on the CPU: three, so that
/// a grid's last tiles (its tiles modulo 3) are shared by two or three
/// programs, a tile's sums meeting from up to three.
pub const STREAM_K_PROGRAMS: u32 = 3;

/// The programs a GPU is taken to hold at once when deciding whether a
/// kernel's CTA pairs split K (`KernelSource::splits_k`): grids of up to
/// 4 tiles split, larger ones run as without the pass.
pub const SPLIT_K_RESIDENT: u32 = 8;

/// The tiles of `case` a kernel whose CTA pairs may split K walks, when
/// its launch splits them (`KernelSource::splits_k` on
/// [`SPLIT_K_RESIDENT`] programs); `None` when it does not.
pub fn split_k_tiles(func: &Function, case: &Case) -> Result<Option<u32>, String> {
    if !func.attrs.cluster_split_k {
        return Ok(None);
    }
    let (tiles, planes) = tawa_backend::codegen::walked_tiles(
        case.grid()?,
        func.attrs.grid_param_y.is_some(),
        func.attrs.grid_param_z.is_some(),
    );
    Ok(tawa_backend::codegen::split_k_fits(tiles, planes, SPLIT_K_RESIDENT).then_some(tiles))
}

/// [`run_module_on_interpreter`] with the kernel run by `runner`; also
/// the bytes of every tensor after the launch, in input order.
pub fn run_module_with(
    module: &Module,
    spec: &ExampleSpec,
    case: &Case,
    seed: u64,
    runner: &mut Runner<'_>,
) -> Result<(CaseReport, Vec<Vec<u8>>), String> {
    let func = kernel_function(module, spec)?;
    let inputs = build_inputs(case, seed)?;
    let expected = run_reference(spec, case, &inputs)
        .map_err(|e| format!("reference `{}` failed: {e}", spec.reference))?;

    // Allocate every tensor (buffers, tensor arguments, pointer arrays) with
    // its initial storage, poison included.
    let mut mem = Memory::new();
    let mut buffers: BTreeMap<&str, Buffer> = BTreeMap::new();
    for t in &inputs {
        let buf = mem.alloc_from_f64(t.dtype, &t.data);
        buffers.insert(t.name.as_str(), buf);
    }
    for t in &inputs {
        if let Some(targets) = &t.pointers_to {
            let addrs = targets
                .iter()
                .map(|name| {
                    buffers
                        .get(name.as_str())
                        .map(|b| b.base as f64)
                        .ok_or_else(|| format!("pointer array `{}`: no tensor `{name}`", t.name))
                })
                .collect::<Result<Vec<f64>, String>>()?;
            mem.write_f64(&buffers[t.name.as_str()], &addrs);
        }
    }
    let before: BTreeMap<&str, Vec<u8>> = buffers
        .iter()
        .map(|(n, b)| (*n, mem.bytes(b).to_vec()))
        .collect();

    // Launch arguments in parameter order; descriptors expand to
    // `x_base, x_shape0.., x_stride0..` as the frontend lays them out.
    let buffer = |name: &str| -> Result<Buffer, String> {
        buffers
            .get(name)
            .copied()
            .ok_or_else(|| format!("no tensor `{name}`"))
    };
    let mut names = Vec::new();
    let mut args = Vec::new();
    for (name, arg) in case.launch_args()? {
        match arg {
            LaunchArg::Tensor(t) => {
                names.push(name.clone());
                args.push(ArgValue::Ptr(buffer(&t)?.base));
            }
            LaunchArg::PtrArray(_) => {
                names.push(name.clone());
                args.push(ArgValue::Ptr(buffer(&name)?.base));
            }
            // An integer argument equal to 1 is compiled in as a constant
            // (Triton's specialization, see `triton_examples::spec`): the
            // kernel has no parameter for it, so nothing is passed.
            LaunchArg::Int { .. } if !func.params.iter().any(|p| p.name == name) => {}
            LaunchArg::Int { value, .. } => {
                names.push(name.clone());
                args.push(ArgValue::Int(value));
            }
            LaunchArg::Float { value, .. } => {
                names.push(name.clone());
                args.push(ArgValue::Float(value));
            }
            LaunchArg::Desc {
                of, shape, strides, ..
            } => {
                names.push(format!("{name}_base"));
                args.push(ArgValue::Ptr(buffer(&of)?.base));
                for (d, s) in shape.iter().enumerate() {
                    names.push(format!("{name}_shape{d}"));
                    args.push(ArgValue::Int(*s));
                }
                for (d, s) in strides.iter().enumerate() {
                    names.push(format!("{name}_stride{d}"));
                    args.push(ArgValue::Int(*s));
                }
            }
        }
    }
    let mut grid = case.grid()?;
    if let Some(p) = &func.attrs.grid_param {
        // A persistent kernel: it gets the grid's size and walks it with
        // fewer programs, so that each program does several tiles.
        // A stream-K kernel starts all its programs even for fewer tiles
        // (`KernelSource::launch_grid`): they share those tiles' K steps.
        let stream_k = func.attrs.stream_k;
        let programs = |tiles: u32| {
            if stream_k {
                STREAM_K_PROGRAMS
            } else {
                tiles.min(PERSISTENT_PROGRAMS)
            }
        };
        names.push(p.clone());
        args.push(ArgValue::Int(grid[0] as i64));
        match (&func.attrs.grid_param_y, &func.attrs.grid_param_z) {
            (Some(py), Some(pz)) => {
                names.push(py.clone());
                args.push(ArgValue::Int(grid[1] as i64));
                names.push(pz.clone());
                args.push(ArgValue::Int(grid[2] as i64));
                grid = [programs(grid[0] * grid[1] * grid[2]), 1, 1];
            }
            (Some(py), None) => {
                names.push(py.clone());
                args.push(ArgValue::Int(grid[1] as i64));
                grid = [programs(grid[0] * grid[1]), 1, grid[2]];
            }
            (None, _) => grid[0] = programs(grid[0]),
        }
        // A kernel of CTA pairs starts an even number of programs
        // (`KernelSource::launch_grid`): program 2c + 1 is 2c's peer. A
        // kernel whose pairs may split K starts two programs a tile where
        // the launcher would.
        if let Some(tiles) = split_k_tiles(func, case)? {
            grid[0] = 2 * tiles;
        } else if func.attrs.cluster == 2 {
            grid[0] += grid[0] % 2;
        }
    }
    if let Some((name, asked)) = &func.attrs.walk_step {
        // A kernel walking its own tiles (`tawa_pipeliner::own_walk`)
        // launched on its step's programs: fewer of them, stepping by
        // their count, as a launcher may start (every tile walked once).
        let step = if grid == [*asked, 1, 1] && *asked > OWN_WALK_PROGRAMS {
            grid[0] = OWN_WALK_PROGRAMS;
            OWN_WALK_PROGRAMS
        } else {
            *asked
        };
        names.push(name.clone());
        args.push(ArgValue::Int(i64::from(step)));
    }
    let params: Vec<&str> = func.params.iter().map(|p| p.name.as_str()).collect();
    if params != names.iter().map(String::as_str).collect::<Vec<_>>() {
        return Err(format!(
            "kernel parameters {params:?} do not match the launch arguments {names:?}"
        ));
    }
    let start = Instant::now();
    runner(func, &args, grid, &mut mem)?;
    let interp_time = start.elapsed();

    // The same checks as on the GPU (tawa_rs::harness::check): outputs
    // against the reference, inputs untouched, nothing written outside an
    // output's view.
    let written: Vec<Written> = inputs
        .iter()
        .map(|t| {
            let buf = buffers[t.name.as_str()];
            Written {
                tensor: t,
                before: &before[t.name.as_str()],
                after: mem.bytes(&buf),
            }
        })
        .collect();
    let reference = format!("reference `{}`", spec.reference);
    let outputs = check_written(&written, &expected, case.tolerance, &reference)?;
    let bytes = written.iter().map(|w| w.after.to_vec()).collect();
    Ok((
        CaseReport {
            grid,
            outputs,
            interp_time,
        },
        bytes,
    ))
}

/// A panic payload as text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

/// Declares every integer and pointer parameter of a signature `:16`. The
/// tests that check TMA recipes and warp specialization by meaning use it
/// so that ragged cases (whose row strides are not 16-byte multiples, which
/// the TMA inference rightly refuses) still have copies to check:
/// alignment decides legality on the GPU, not the interpreter's results.
pub fn claim_alignment(signature: &str) -> String {
    signature
        .split(',')
        .map(|entry| {
            let e = entry.trim();
            let typed = e.starts_with('*') || e.starts_with('i') || e.starts_with('u');
            if typed && !e.contains(':') && !e.contains('[') {
                format!("{e}:16")
            } else {
                e.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
