//! The GPU harness: one launch case of an example, compiled through the
//! whole pipeline, run on the GPU and checked element by element.
//!
//! For each case ([`run_case`]):
//! 1. [`compile_case`]: frontend → verifier → CUDA ([`tawa_backend::generate_cuda`])
//!    → NVRTC (on-disk cache), the same functions as the CLI's
//!    [`crate::driver`].
//! 2. Inputs from the case's seeded generator (never zeros), uploaded;
//!    outputs without an `init` are poisoned with 0xFF bytes (NaN for every
//!    float type), so an element the kernel skips cannot pass; pointer arrays
//!    hold the device addresses of their tensors.
//! 3. Launch arguments bound to the kernel's parameters by name
//!    ([`launch`]): parameters the frontend specialized away take no
//!    argument, descriptors expand to base, shapes and strides; the
//!    kernel's TMA tensor maps follow, encoded from the same arguments.
//! 4. After the launch every buffer comes back and [`check::check_written`]
//!    compares every output element with the expectation, checks that no
//!    input byte changed and that nothing outside an output's view (the
//!    gaps of strided outputs) was written.
//!
//! Expectations: the CPU interpreter running the same tile IR for ordinary
//! cases; for cases tagged `large`, where the interpreter would take hours,
//! an independent GPU reference ([`gpu_reference`]: cuBLAS for the GEMM
//! part of GEMM-like examples with the plain-Rust epilogue on the host,
//! cuBLAS + a hand-written softmax for attention) or, for memory-bound
//! examples, the plain-Rust reference on the CPU.

pub mod check;
pub mod gpu_reference;
pub mod launch;

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::time::{Duration, Instant};

use tawa_backend::runtime::blas::Blas;
use tawa_backend::runtime::{Compiled, DeviceBuffer, Gpu, KernelArg};
use tawa_backend::{KernelParam, KernelSource};
use tawa_frontend::CompileOptions;
use tawa_ir::interp::{run_grid, InterpOptions, Memory};
use tawa_ir::{Function, Module};
use tawa_pipeliner::PipelineOptions;
use triton_examples::reference::Outputs;
use triton_examples::{build_inputs, run_reference, Case, Example, ExampleSpec, HostTensor};

use crate::cli::{CaseSelection, RunCommand};
use crate::driver::{self, Failure};
use check::Written;
use launch::BoundArg;

/// Ops (over the whole grid) after which an interpreter run is taken for a
/// hang.
pub const MAX_INTERP_STEPS: u64 = 50_000_000;

/// Where a case failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Reading the example or its cases, generating inputs.
    Setup,
    Frontend,
    Codegen,
    Nvrtc,
    /// Allocation, upload, launch, the kernel's own execution.
    Launch,
    /// Computing the expectation (interpreter, cuBLAS, CPU reference).
    Reference,
    /// The outputs are wrong or something was written that must not be.
    Check,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Setup => "setup",
            Stage::Frontend => "frontend",
            Stage::Codegen => "codegen",
            Stage::Nvrtc => "nvrtc",
            Stage::Launch => "launch",
            Stage::Reference => "reference",
            Stage::Check => "check",
        })
    }
}

/// A failed case: the stage and everything a person needs to see.
#[derive(Debug, Clone)]
pub struct CaseFailure {
    pub stage: Stage,
    pub message: String,
}

impl CaseFailure {
    pub fn new(stage: Stage, message: impl Into<String>) -> CaseFailure {
        CaseFailure {
            stage,
            message: message.into(),
        }
    }
}

impl fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.stage, self.message.trim_end())
    }
}

/// The frontend options a case implies.
pub fn frontend_options(spec: &ExampleSpec, case: &Case) -> Result<CompileOptions, String> {
    let args = spec.compile_args(case)?;
    Ok(CompileOptions {
        kernel: args.kernel,
        signature: args.signature,
        defines: args.defines,
        num_warps: args.num_warps,
        num_stages: args.num_stages,
    })
}

/// The case's kernel after the frontend and the verifier (diagnostics
/// rendered without colour).
pub fn frontend_module(example: &Example, case: &Case) -> Result<Module, CaseFailure> {
    let source = driver::read_source(&example.py_path)
        .map_err(|f| CaseFailure::new(Stage::Setup, f.message))?;
    let opts =
        frontend_options(&example.spec, case).map_err(|e| CaseFailure::new(Stage::Setup, e))?;
    driver::frontend(
        &example.py_path.display().to_string(),
        &source,
        &opts,
        false,
    )
    .map_err(|f| CaseFailure::new(Stage::Frontend, f.message))
}

/// A case compiled through the whole pipeline.
pub struct CompiledCase {
    pub module: Module,
    pub kernel: KernelSource,
    pub compiled: Compiled,
    /// Frontend to cubin (NVRTC may have been a cache hit).
    pub compile_time: Duration,
}

impl CompiledCase {
    pub fn function(&self) -> &Function {
        &self.module.functions[0]
    }

    /// The warning `run` and `bench` print when the kernel spills to
    /// local memory (from ptxas's report in NVRTC's log), `None` when it
    /// does not.
    pub fn local_memory_warning(&self) -> Option<String> {
        let report = self.compiled.resources();
        let k = report.kernel(&self.kernel.symbol)?;
        driver::local_memory_warning(&self.kernel.name, k)
    }
}

/// Frontend → verifier → CUDA → NVRTC.
///
/// `ws`: warp-specialize and pipeline so where the partitioner finds a
/// loop to split (`None`: the plain kernel).
pub fn compile_case(
    example: &Example,
    case: &Case,
    ws: Option<&PipelineOptions>,
) -> Result<CompiledCase, CaseFailure> {
    let start = Instant::now();
    let module = frontend_module(example, case)?;
    let source = driver::read_source(&example.py_path)
        .map_err(|f| CaseFailure::new(Stage::Setup, f.message))?;
    let path = example.py_path.display().to_string();
    let func = driver::kernel_function(&module)
        .map_err(|f| CaseFailure::new(Stage::Frontend, f.message))?;
    // The case's launch is the one compiled for: schedules chosen from
    // the launch's arguments (a short K loop's ping-pong consumers) see it.
    let ws = ws
        .map(|opts| -> Result<PipelineOptions, CaseFailure> {
            let mut opts = opts.clone();
            opts.launch_values = case
                .int_launch_values()
                .map_err(|e| CaseFailure::new(Stage::Setup, e))?;
            Ok(opts)
        })
        .transpose()?;
    let kernel = driver::compile_to_cuda(&path, &source, func, ws.as_ref(), false)
        .map(|k| k.source)
        .map_err(|f| CaseFailure::new(Stage::Codegen, f.message))?;
    let compiled = driver::nvrtc(&kernel).map_err(|f| CaseFailure::new(Stage::Nvrtc, f.message))?;
    Ok(CompiledCase {
        module,
        kernel,
        compiled,
        compile_time: start.elapsed(),
    })
}

/// Whether a tensor is poisoned before the launch: outputs the case gives
/// no initial values (accumulating outputs start from their `init`).
fn poisoned(case: &Case, t: &HostTensor) -> bool {
    t.output
        && case
            .tensor(&t.name)
            .map(|spec| spec.init.is_none())
            .unwrap_or(false)
}

/// The bytes of every tensor before a launch, pointer arrays filled from
/// `address` (of the tensors they point at).
pub fn initial_bytes(
    case: &Case,
    tensors: &[HostTensor],
    address: &dyn Fn(&str) -> Option<u64>,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    for t in tensors {
        let bytes = if let Some(targets) = &t.pointers_to {
            let mut bytes = Vec::with_capacity(targets.len() * 8);
            for name in targets {
                let addr = address(name)
                    .ok_or_else(|| format!("pointer array `{}`: no tensor `{name}`", t.name))?;
                bytes.extend_from_slice(&addr.to_le_bytes());
            }
            bytes
        } else if poisoned(case, t) {
            vec![0xFF; t.data.len() * t.dtype.byte_size() as usize]
        } else {
            check::encode(t.dtype, &t.data)
        };
        out.insert(t.name.clone(), bytes);
    }
    Ok(out)
}

/// One set of a case's tensors in device memory.
pub struct DeviceTensors {
    pub buffers: BTreeMap<String, DeviceBuffer>,
    /// What each buffer held before the launch.
    pub initial: BTreeMap<String, Vec<u8>>,
    /// The workspace of tensor maps the kernel builds on the device
    /// ([`launch::launch_args`]), kept as long as the buffers.
    pub workspace: std::cell::RefCell<launch::Workspaces>,
}

impl DeviceTensors {
    /// Allocates and fills every tensor of the case.
    pub fn upload(gpu: &Gpu, case: &Case, tensors: &[HostTensor]) -> Result<DeviceTensors, String> {
        let mut buffers = BTreeMap::new();
        for t in tensors {
            let len = t.data.len() * t.dtype.byte_size() as usize;
            let buf = gpu
                .alloc(len)
                .map_err(|e| format!("allocating `{}` ({len} bytes): {e}", t.name))?;
            buffers.insert(t.name.clone(), buf);
        }
        let addresses: BTreeMap<String, u64> =
            buffers.iter().map(|(n, b)| (n.clone(), b.ptr())).collect();
        let initial = initial_bytes(case, tensors, &|n| addresses.get(n).copied())?;
        for (name, bytes) in &initial {
            let buf = buffers.get_mut(name).expect("allocated above");
            gpu.upload_into(buf, bytes)
                .map_err(|e| format!("uploading `{name}`: {e}"))?;
        }
        Ok(DeviceTensors {
            buffers,
            initial,
            workspace: Default::default(),
        })
    }

    /// Restores every buffer's initial contents (before a second launch).
    pub fn reset(&mut self, gpu: &Gpu) -> Result<(), String> {
        for (name, bytes) in &self.initial {
            let buf = self.buffers.get_mut(name).expect("same names");
            gpu.upload_into(buf, bytes)
                .map_err(|e| format!("uploading `{name}`: {e}"))?;
        }
        Ok(())
    }

    pub fn address(&self, name: &str) -> Option<u64> {
        self.buffers.get(name).map(DeviceBuffer::ptr)
    }

    /// The launch arguments for these buffers.
    pub fn kernel_args(&self, bound: &[BoundArg]) -> Result<Vec<KernelArg>, String> {
        launch::kernel_args(bound, &|n| self.address(n))
    }

    /// Everything `kernel` is launched with on these buffers over `grid`
    /// (the grid launched): the parameters' arguments, then its TMA tensor
    /// maps encoded for these buffers' addresses (each set of buffers needs
    /// its own maps).
    pub fn launch_args(
        &self,
        gpu: &Gpu,
        kernel: &KernelSource,
        bound: &[BoundArg],
        grid: [u32; 3],
        launched: [u32; 3],
    ) -> Result<Vec<KernelArg>, String> {
        launch::launch_args(
            gpu,
            kernel,
            bound,
            grid,
            launched,
            &|n| self.address(n),
            &mut self.workspace.borrow_mut(),
        )
    }
}

/// The interpreter's outputs for the case: the same tile IR run on the
/// CPU over the same inputs.
pub fn interpreter_outputs(
    func: &Function,
    params: &[KernelParam],
    case: &Case,
    tensors: &[HostTensor],
) -> Result<Outputs, String> {
    let mut mem = Memory::new();
    let mut buffers = BTreeMap::new();
    for t in tensors {
        // Pointer arrays are i64 tensors of the addresses.
        buffers.insert(t.name.clone(), mem.alloc(t.dtype, t.data.len()));
    }
    let address = |n: &str| buffers.get(n).map(|b| b.base);
    let initial = initial_bytes(case, tensors, &address)?;
    for (name, bytes) in &initial {
        mem.bytes_mut(&buffers[name]).copy_from_slice(bytes);
    }
    let bound = launch::bind_launch_args(case, params)?;
    let args = launch::interp_args(&bound, &address)?;
    let opts = InterpOptions {
        max_steps: Some(MAX_INTERP_STEPS),
    };
    run_grid(func, &args, case.grid()?, &mut mem, &opts)
        .map_err(|e| format!("interpreter: {e}"))?;
    let after: BTreeMap<String, Vec<u8>> = buffers
        .iter()
        .map(|(n, b)| (n.clone(), mem.bytes(b).to_vec()))
        .collect();
    Ok(check::outputs_of(tensors, &after))
}

/// A GPU with the helpers the harness needs, made once per process.
pub struct GpuSession {
    pub gpu: Gpu,
    blas: OnceCell<Result<Blas, String>>,
}

impl GpuSession {
    pub fn new(device: usize) -> Result<GpuSession, String> {
        let gpu = Gpu::new(device).map_err(|e| e.to_string())?;
        Ok(GpuSession {
            gpu,
            blas: OnceCell::new(),
        })
    }

    /// cuBLAS on this GPU's stream, loaded at first use.
    pub fn blas(&self) -> Result<&Blas, String> {
        self.blas
            .get_or_init(|| Blas::new(&self.gpu).map_err(|e| format!("cuBLAS: {e}")))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// `NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)`.
    pub fn describe(&self) -> String {
        let name = self.gpu.name().unwrap_or_else(|_| "unknown GPU".into());
        let cc = self
            .gpu
            .compute_capability()
            .map(|(a, b)| format!("sm_{a}{b}"))
            .unwrap_or_default();
        let sms = self.gpu.sm_count().unwrap_or(0);
        let l2 = self.gpu.l2_cache_bytes().unwrap_or(0) >> 20;
        format!("{name} ({cc}, {sms} SMs, {l2} MiB L2)")
    }
}

/// What a passing case checked.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// Where the expectations came from (`interpreter`, `cuBLAS`, ...).
    pub expected_from: String,
    /// Each output with its largest absolute error.
    pub outputs: Vec<(String, f64)>,
    pub compile_time: Duration,
    /// Whether NVRTC's result came from the cache.
    pub cache_hit: bool,
    pub registers: Option<i32>,
    /// [`CompiledCase::local_memory_warning`].
    pub local_memory: Option<String>,
}

/// The expected outputs of a case, and where they come from (module docs).
fn expected_outputs(
    session: &GpuSession,
    example: &Example,
    case: &Case,
    compiled: &CompiledCase,
    tensors: &[HostTensor],
    device: &DeviceTensors,
) -> Result<(Outputs, String), String> {
    if !case.has_tag("large") {
        let outputs = {
            // The interpreter runs the unspecialized kernel: its own
            // parameters, not the compiled kernel's launch contract (a
            // persistent kernel has one more).
            let func = compiled.function();
            let params = tawa_backend::codegen::kernel_params(func).map_err(|e| e.to_string())?;
            interpreter_outputs(func, &params, case, tensors)?
        };
        return Ok((outputs, "interpreter".into()));
    }
    match gpu_reference::gpu_reference_kind(&example.spec.reference) {
        Some(kind) => {
            let blas = session.blas()?;
            let outputs = gpu_reference::expected_on_gpu(
                &session.gpu,
                blas,
                &example.spec,
                case,
                tensors,
                &device.buffers,
            )?;
            Ok((outputs, kind.into()))
        }
        None => Ok((
            run_reference(&example.spec, case, tensors)?,
            "CPU reference".into(),
        )),
    }
}

/// Compiles, launches and checks one case (see the module docs).
pub fn run_case(
    session: &GpuSession,
    example: &Example,
    case: &Case,
    seed: u64,
    ws: Option<&PipelineOptions>,
) -> Result<CaseReport, CaseFailure> {
    let compiled = compile_case(example, case, ws)?;
    check_compiled(session, example, case, &compiled, seed)
}

/// Launches an already compiled case once and checks it.
pub fn check_compiled(
    session: &GpuSession,
    example: &Example,
    case: &Case,
    compiled: &CompiledCase,
    seed: u64,
) -> Result<CaseReport, CaseFailure> {
    let gpu = &session.gpu;
    let setup = |e: String| CaseFailure::new(Stage::Setup, e);
    let launch_err = |e: String| CaseFailure::new(Stage::Launch, e);
    let tensors = build_inputs(case, seed).map_err(setup)?;
    let grid = case.grid().map_err(setup)?;
    let bound = launch::bind_kernel_args(case, &compiled.kernel).map_err(setup)?;
    let device = DeviceTensors::upload(gpu, case, &tensors).map_err(launch_err)?;
    let kernel = gpu
        .load(&compiled.compiled, &compiled.kernel.symbol)
        .map_err(|e| launch_err(e.to_string()))?;
    let resident = tawa_backend::runtime::resident_programs(gpu, &kernel, &compiled.kernel)
        .map_err(|e| launch_err(e.to_string()))?;
    // Tensor-map extents taken from the grid are the grid asked for, the
    // tiles a persistent kernel walks, not the programs it starts.
    let cfg = launch::launch_config(&compiled.kernel, grid, resident, &bound);
    let args = device
        .launch_args(gpu, &compiled.kernel, &bound, grid, cfg.grid)
        .map_err(setup)?;
    gpu.launch_with(&kernel, &cfg, &args)
        .map_err(|e| launch_err(e.to_string()))?;
    gpu.synchronize().map_err(|e| launch_err(e.to_string()))?;
    let mut after = BTreeMap::new();
    for (name, buf) in &device.buffers {
        let bytes = gpu
            .download(buf)
            .map_err(|e| launch_err(format!("downloading `{name}`: {e}")))?;
        after.insert(name.clone(), bytes);
    }

    let (expected, expected_from) =
        expected_outputs(session, example, case, compiled, &tensors, &device)
            .map_err(|e| CaseFailure::new(Stage::Reference, e))?;
    let written: Vec<Written> = tensors
        .iter()
        .map(|t| Written {
            tensor: t,
            before: &device.initial[&t.name],
            after: &after[&t.name],
        })
        .collect();
    let outputs = check::check_written(&written, &expected, case.tolerance, &expected_from)
        .map_err(|e| {
            CaseFailure::new(Stage::Check, format!("against the {expected_from}:\n{e}"))
        })?;
    Ok(CaseReport {
        expected_from,
        outputs,
        compile_time: compiled.compile_time,
        cache_hit: compiled.compiled.cache_hit,
        registers: kernel.num_regs().ok(),
        local_memory: compiled.local_memory_warning(),
    })
}

/// The example and the cases `select` names (all when none), in file order.
pub fn select_cases(select: &CaseSelection) -> Result<(Example, Vec<Case>), Failure> {
    let example = crate::driver::load_launch_cases(&select.example)?;
    for name in &select.cases {
        if example.spec.case(name).is_err() {
            let names: Vec<&str> = example.spec.cases.iter().map(|c| c.name.as_str()).collect();
            return Err(Failure::user(format!(
                "error: `{}` has no case `{name}`; cases: {}\n",
                select.example.display(),
                names.join(", ")
            )));
        }
    }
    let cases: Vec<Case> = example
        .spec
        .cases
        .iter()
        .filter(|c| select.cases.is_empty() || select.cases.contains(&c.name))
        .filter(|c| select.tags.iter().all(|t| c.has_tag(t)))
        .cloned()
        .map(|mut c| {
            c.num_stages = select.num_stages.or(c.num_stages);
            c
        })
        .collect();
    if cases.is_empty() {
        return Err(Failure::user(format!(
            "error: no case of `{}` matches the selection\n",
            select.example.display()
        )));
    }
    Ok((example, cases))
}

/// Formats `(name, max error)` pairs: `out max err 1.2e-3, m max err 0`.
pub fn describe_errors(outputs: &[(String, f64)]) -> String {
    outputs
        .iter()
        .map(|(n, e)| format!("{n} max err {e:.2e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `tawa-rs run EXAMPLE.py [--case NAME]...`: a progress line per case,
/// details of failures indented below it, exit code 1 when any failed.
pub fn run_command(cmd: &RunCommand) -> Result<(), Failure> {
    let (example, cases) = select_cases(&cmd.select)?;
    let session =
        GpuSession::new(cmd.select.device).map_err(|e| Failure::user(format!("error: {e}\n")))?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "device {}: {}", cmd.select.device, session.describe());
    let total = cases.len();
    let mut failed = Vec::new();
    let mut context_lost = false;
    for (i, case) in cases.iter().enumerate() {
        let what = format!("{}/{}", example.name, case.name);
        let _ = write!(out, "[{}/{total}] {what} ... ", i + 1);
        let _ = out.flush();
        if context_lost {
            let _ = writeln!(out, "SKIP (the CUDA context was lost by an earlier case)");
            failed.push(what);
            continue;
        }
        let start = Instant::now();
        let result = run_case(
            &session,
            &example,
            case,
            cmd.select.seed,
            cmd.select.pipeline_options().as_ref(),
        );
        let secs = start.elapsed().as_secs_f64();
        match result {
            Ok(report) => {
                let _ = writeln!(
                    out,
                    "OK vs {}: {} ({secs:.2}s, compile {:.2}s{}{})",
                    report.expected_from,
                    describe_errors(&report.outputs),
                    report.compile_time.as_secs_f64(),
                    if report.cache_hit { " cached" } else { "" },
                    report
                        .registers
                        .map(|r| format!(", {r} regs"))
                        .unwrap_or_default(),
                );
                for line in report.local_memory.iter().flat_map(|w| w.lines()) {
                    let _ = writeln!(out, "    {line}");
                }
            }
            Err(failure) => {
                let _ = writeln!(out, "FAIL ({secs:.2}s)");
                for line in failure.to_string().lines() {
                    let _ = writeln!(out, "    {line}");
                }
                if failure.stage == Stage::Launch && session.gpu.synchronize().is_err() {
                    context_lost = true;
                }
                failed.push(what);
            }
        }
        let _ = out.flush();
    }
    let _ = writeln!(
        out,
        "run: {total} cases, {} OK, {} failed",
        total - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::user(format!(
            "error: {} of {total} cases failed: {}\n",
            failed.len(),
            failed.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tawa_backend::runtime::blas::{plan_gemm, Matrix};
    use triton_examples::check_close;

    /// The harness's own way to the interpreter (parameters bound by name,
    /// outputs poisoned with 0xFF, pointer arrays filled, descriptors
    /// expanded) gives the plain-Rust reference's results on every small
    /// case: the expectations the GPU is held to are right.
    #[test]
    fn interpreter_expectations_match_the_references() {
        let mut ran = 0;
        let mut failures = Vec::new();
        for ex in triton_examples::load_all().unwrap() {
            for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
                let what = format!("{}/{}", ex.name, case.name);
                let result = (|| -> Result<(), String> {
                    let module = frontend_module(&ex, case).map_err(|f| f.to_string())?;
                    let func = &module.functions[0];
                    let params =
                        tawa_backend::codegen::kernel_params(func).map_err(|e| e.to_string())?;
                    let tensors = build_inputs(case, 3)?;
                    let got = interpreter_outputs(func, &params, case, &tensors)?;
                    let want = run_reference(&ex.spec, case, &tensors)?;
                    if got.keys().ne(want.keys()) {
                        return Err(format!("outputs {:?} vs {:?}", got.keys(), want.keys()));
                    }
                    for (name, values) in &want {
                        check_close(name, &got[name], values, case.tolerance)
                            .map_err(|m| m.to_string())?;
                    }
                    Ok(())
                })();
                ran += 1;
                if let Err(e) = result {
                    failures.push(format!("{what}: {e}"));
                }
            }
        }
        assert!(ran > 10, "only {ran} small cases");
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    /// Every small GEMM-like case has operands cuBLAS can read as they lie
    /// in device memory (transposed `B` views included). Large cases are
    /// plain row-major; recording their products runs the epilogues over
    /// 2^26 elements, too slow for a debug-build unit test.
    #[test]
    fn gemm_cases_have_views_cublas_accepts() {
        let mut planned = 0;
        // The upstream tutorials' launch cases too (their kernel files are
        // not needed to build inputs and record the products).
        let upstream = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/upstream"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| triton_examples::Example {
                name: p.file_stem().unwrap().to_string_lossy().into_owned(),
                spec: triton_examples::read_spec(&p).unwrap(),
                py_path: p.with_extension("py"),
            });
        let mut tutorial_09_tma = 0;
        for ex in triton_examples::load_all()
            .unwrap()
            .into_iter()
            .chain(upstream)
        {
            if !gpu_reference::GEMM_REFERENCES.contains(&ex.spec.reference.as_str()) {
                continue;
            }
            for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
                let tensors = build_inputs(case, 1).unwrap();
                let products = crate::bench::reference_products(&ex, case, &tensors)
                    .unwrap_or_else(|e| panic!("{}/{}: {e}", ex.name, case.name));
                assert!(!products.is_empty(), "{}/{}", ex.name, case.name);
                let address = |_: &str| Some(0x1000u64);
                for (a, b) in &products {
                    let ma = gpu_reference::matrix_of(a, &address).unwrap();
                    let mb = gpu_reference::matrix_of(b, &address).unwrap();
                    let mc = Matrix::row_major(0x2000, tawa_ir::ScalarType::F32, ma.rows, mb.cols);
                    plan_gemm(&ma, &mb, &mc)
                        .unwrap_or_else(|e| panic!("{}/{}: {e}", ex.name, case.name));
                    planned += 1;
                    tutorial_09_tma += usize::from(ex.spec.reference == "matmul_bt");
                }
            }
        }
        assert!(planned > 10, "only {planned} products planned");
        assert!(tutorial_09_tma > 0, "no `matmul_bt` product planned");
    }
}
