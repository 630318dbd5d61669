//! `tawa._tawa`: the extension module of the `tawa` Python package.
//!
//! Two things cross the boundary, and nothing else:
//! - [`compile`]: a kernel's source file, its name and a Triton signature
//!   string (the specialization the Python side derived from the call's
//!   arguments) through the same driver functions as `tawa-rs`: frontend,
//!   verifier, warp specialization and pipelining, CUDA generation, NVRTC.
//!   The Python interpreter lock is released meanwhile, so that autotuning
//!   compiles its configs on several threads.
//! - [`Kernel::launch`]: the call's argument values, bound to the compiled
//!   kernel's parameters by name as the `run` harness binds a launch case
//!   (`tawa_rs::harness::launch`), tensor maps encoded the same way, and
//!   launched on the device's primary context (the one PyTorch uses) on the
//!   caller's stream.
//!
//! Specialization keys, caches, grids, autotuning and every error the
//! Python side can detect live in Python (python/tawa/).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use tawa_backend::runtime::{self, Compiled, Gpu};
use tawa_backend::{KernelSource, ParamType};
use tawa_frontend::CompileOptions;
use tawa_pipeliner::PipelineOptions;
use tawa_rs::cli::parse_pipeline_flags;
use tawa_rs::driver;
use tawa_rs::harness::launch::{self, ArgSource, BoundArg};

create_exception!(
    _tawa,
    CompilationError,
    PyException,
    "A kernel that does not compile: the message is the compiler's diagnostic (file:line:col, the source line, a caret)."
);
create_exception!(
    _tawa,
    LaunchError,
    PyRuntimeError,
    "A launch the CUDA driver or the launch checks refused."
);

/// The kind of one launch argument, as the Python side names it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum ArgKind {
    Ptr,
    Int,
    Float,
}

impl ArgKind {
    fn parse(s: &str) -> PyResult<ArgKind> {
        match s {
            "ptr" => Ok(ArgKind::Ptr),
            "int" => Ok(ArgKind::Int),
            "float" => Ok(ArgKind::Float),
            other => Err(PyValueError::new_err(format!(
                "argument kind `{other}` (expected ptr, int or float)"
            ))),
        }
    }
}

/// Where each kernel parameter's value comes from at launch.
#[derive(Clone, Debug)]
enum Slot {
    /// Launch value number `i` (the order of the names given to [`compile`]).
    Arg(usize),
    /// A persistent kernel's grid parameter: the requested grid's x size.
    GridX,
    /// A persistent kernel's second grid parameter: the y size.
    GridY,
    /// A persistent kernel's third grid parameter: the z size.
    GridZ,
    /// The step of a kernel that walks its own tiles: the source's, until
    /// `launch::launch_args` knows how many programs the launch starts.
    WalkStep(u32),
}

/// A compiled kernel: CUDA, cubin, and how the call's arguments reach its
/// parameters.
#[pyclass(frozen, module = "tawa._tawa")]
struct Kernel {
    source: KernelSource,
    compiled: Compiled,
    warp_specialized: bool,
    /// The launch values' names and kinds, in the order `launch` takes them.
    args: Vec<(String, ArgKind)>,
    /// One per kernel parameter.
    slots: Vec<Slot>,
    /// The module loaded per device ordinal, with the programs that run at
    /// once there (`runtime::resident_programs`, a driver query asked
    /// once per device rather than at every launch).
    loaded: Mutex<HashMap<usize, (Arc<runtime::Kernel>, u32)>>,
    /// The workspaces of the kernel's launches (device-built tensor maps,
    /// stream-K partial sums), per device ordinal and stream: launches on one stream run in
    /// order, so they can share it; launches on two streams may overlap,
    /// so they do not. Freed with the kernel.
    workspaces: Mutex<HashMap<(usize, usize), launch::Workspaces>>,
}

/// Compiles `kernel` of `source` (the text of file `path`) for `signature`
/// (Triton's format: `*fp16:16, i32, 64, ...`), then binds `args` (the
/// launch values' names, expanded as the frontend lays out parameters, and
/// kinds) to the kernel's parameters. `launch_values` are the integer
/// arguments of the launch compiled for, by name: schedules chosen from
/// them hold for the launches [`Kernel::chosen_for`] accepts. `flags` are
/// `tawa-rs`'s pipeline flags in one string (the package's `TAWA_FLAGS`,
/// e.g. `--mma-depth 1 --no-persistent`); `--no-ws` among them, like
/// `warp_specialize=False`, turns warp specialization off.
#[pyfunction]
#[pyo3(signature = (source, path, kernel, signature, args, num_warps=4, num_stages=3, warp_specialize=true, to_cubin=true, *, flags=None, launch_values=None))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    source: String,
    path: String,
    kernel: String,
    signature: String,
    args: Vec<(String, String)>,
    num_warps: u32,
    num_stages: u32,
    warp_specialize: bool,
    to_cubin: bool,
    flags: Option<String>,
    launch_values: Option<Vec<(String, i64)>>,
) -> PyResult<Kernel> {
    let args = args
        .into_iter()
        .map(|(n, k)| Ok((n, ArgKind::parse(&k)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let mut pipeline = match flags {
        Some(flags) => parse_pipeline_flags(&flags).map_err(|e| {
            CompilationError::new_err(format!("the pipeline flags `{flags}` (TAWA_FLAGS): {e}"))
        })?,
        None => PipelineOptions::default(),
    };
    pipeline.warp_specialize &= warp_specialize;
    pipeline.launch_values = launch_values.unwrap_or_default();
    let opts = CompileOptions {
        kernel: Some(kernel),
        signature: Some(signature),
        defines: Vec::new(),
        num_warps: Some(num_warps),
        num_stages: Some(num_stages),
    };
    let result =
        py.detach(move || compile_detached(&source, &path, &opts, args, &pipeline, to_cubin));
    result.map_err(CompilationError::new_err)
}

fn compile_detached(
    source: &str,
    path: &str,
    opts: &CompileOptions,
    args: Vec<(String, ArgKind)>,
    pipeline: &PipelineOptions,
    to_cubin: bool,
) -> Result<Kernel, String> {
    let module = driver::frontend(path, source, opts, false).map_err(|f| f.message)?;
    let func = driver::kernel_function(&module).map_err(|f| f.message)?;
    // As the command line does: options even without warp specialization
    // (`--no-ws --no-tma-store` is a software pipeline storing from
    // registers).
    let cuda = driver::compile_to_cuda(path, source, func, Some(pipeline), false)
        .map_err(|f| f.message)?;
    let compiled = if to_cubin {
        driver::nvrtc(&cuda.source).map_err(|f| f.message)?
    } else {
        Compiled {
            kernel_name: cuda.source.symbol.clone(),
            ptx: String::new(),
            cubin: Vec::new(),
            log: String::new(),
            nvrtc_version: (0, 0),
            cache_hit: false,
            cache_key: String::new(),
        }
    };
    let slots = slots_for(&cuda.source, &args)?;
    Ok(Kernel {
        warp_specialized: cuda.warp_specialized,
        source: cuda.source,
        compiled,
        args,
        slots,
        loaded: Mutex::new(HashMap::new()),
        workspaces: Mutex::new(HashMap::new()),
    })
}

/// Binds the launch values by name, once per compiled kernel, through the
/// harness's binding (placeholder values: only the names and kinds
/// matter here).
fn slots_for(source: &KernelSource, args: &[(String, ArgKind)]) -> Result<Vec<Slot>, String> {
    let mut named: BTreeMap<String, ArgSource> = args
        .iter()
        .map(|(name, kind)| {
            let placeholder = match kind {
                ArgKind::Ptr => ArgSource::Buffer(name.clone()),
                ArgKind::Int => ArgSource::Int(0),
                ArgKind::Float => ArgSource::Float(0.0),
            };
            (name.clone(), placeholder)
        })
        .collect();
    let name_of = |i: Option<usize>| i.and_then(|i| source.params.get(i)).map(|p| p.name.clone());
    let grid_param = name_of(source.grid_param);
    let grid_param_y = name_of(source.grid_param_y);
    let grid_param_z = name_of(source.grid_param_z);
    for name in grid_param.iter().chain(&grid_param_y).chain(&grid_param_z) {
        named.insert(name.clone(), ArgSource::Int(1));
    }
    let walk_step = source
        .own_walk
        .as_ref()
        .and_then(|w| Some((name_of(Some(w.step_param))?, w.asked)));
    if let Some((name, asked)) = &walk_step {
        named.insert(name.clone(), ArgSource::Int(i64::from(*asked)));
    }
    let bound = launch::bind_by_name(&source.params, &named, "this call")?;
    Ok(bound
        .iter()
        .map(|b| {
            if Some(&b.param) == grid_param.as_ref() {
                Slot::GridX
            } else if Some(&b.param) == grid_param_y.as_ref() {
                Slot::GridY
            } else if Some(&b.param) == grid_param_z.as_ref() {
                Slot::GridZ
            } else if let Some((_, asked)) = walk_step.as_ref().filter(|(n, _)| *n == b.param) {
                Slot::WalkStep(*asked)
            } else {
                let i = args
                    .iter()
                    .position(|(n, _)| n == &b.param)
                    .expect("bound by name above");
                Slot::Arg(i)
            }
        })
        .collect())
}

/// One [`Gpu`] per device ordinal, opened on first use: the device's
/// primary context, which PyTorch uses too.
fn gpu(ordinal: usize) -> Result<Arc<Gpu>, String> {
    static GPUS: OnceLock<Mutex<HashMap<usize, Arc<Gpu>>>> = OnceLock::new();
    let mut gpus = GPUS
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| "the device table is poisoned".to_string())?;
    if let Some(g) = gpus.get(&ordinal) {
        return Ok(g.clone());
    }
    let g = Arc::new(Gpu::new(ordinal).map_err(|e| e.to_string())?);
    gpus.insert(ordinal, g.clone());
    Ok(g)
}

#[pymethods]
impl Kernel {
    /// The kernel's name in the Python source.
    #[getter]
    fn name(&self) -> &str {
        &self.source.name
    }
    /// The `__global__` function's symbol.
    #[getter]
    fn symbol(&self) -> &str {
        &self.source.symbol
    }
    #[getter]
    fn cuda(&self) -> &str {
        &self.source.cuda
    }
    #[getter]
    fn ptx(&self) -> &str {
        &self.compiled.ptx
    }
    #[getter]
    fn cubin<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.compiled.cubin)
    }
    /// Threads per block.
    #[getter]
    fn num_threads(&self) -> u32 {
        self.source.num_threads
    }
    /// Dynamic shared memory per block, in bytes.
    #[getter]
    fn dyn_smem(&self) -> u32 {
        self.source.dyn_smem_bytes
    }
    /// Whether the kernel was warp-specialized (producer and consumer
    /// warpgroups over aref rings).
    #[getter]
    fn warp_specialized(&self) -> bool {
        self.warp_specialized
    }
    /// Whether the kernel waits for the kernel before it at entry and is
    /// launched as its programmatic dependent (by default where its
    /// programs walk the tiles; `--pdl` or `--no-pdl` in `TAWA_FLAGS` for
    /// every kernel or none).
    #[getter]
    fn programmatic_launch(&self) -> bool {
        self.source.programmatic_launch
    }
    /// Whether NVRTC's cache had the cubin.
    #[getter]
    fn nvrtc_cache_hit(&self) -> bool {
        self.compiled.cache_hit
    }
    /// The compiled kernel's parameters: `(name, type)` pairs in order.
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        self.source
            .params
            .iter()
            .map(|p| (p.name.clone(), param_type_text(&p.ty)))
            .collect()
    }
    /// How many TMA tensor maps the host encodes at each launch.
    #[getter]
    fn num_tensor_maps(&self) -> usize {
        self.source.tensor_maps.len()
    }
    /// ptxas's report: `(registers, spill stores, spill loads, static shared
    /// bytes)`, `None` without one.
    #[getter]
    fn resources(&self) -> Option<(u32, u64, u64, u64)> {
        let report = self.compiled.resources();
        let k = report.kernel(&self.source.symbol)?;
        Some((
            k.registers,
            k.spill_store_bytes,
            k.spill_load_bytes,
            k.shared_bytes,
        ))
    }

    /// Whether a launch with `values` (in the order of the names given to
    /// `compile`) is one the kernel's schedule was chosen for: `False`
    /// when a choice made from the launch compiled for (ping-pong
    /// consumers for a short K loop) does not hold for it, so that the
    /// caller compiles again for it. The kernel is correct either way.
    fn chosen_for(&self, values: &Bound<'_, PyTuple>) -> bool {
        let int = |i: usize| -> Option<i64> {
            match self.slots.get(i)? {
                Slot::Arg(a) if matches!(self.args.get(*a)?.1, ArgKind::Int) => {
                    values.get_item(*a).ok()?.extract::<i64>().ok()
                }
                _ => None,
            }
        };
        self.source.chosen_for(&int)
    }

    /// What the kernel's schedule was chosen for, as text (`None`: every
    /// launch).
    #[getter]
    fn launch_guard(&self) -> Option<String> {
        let g = self.source.launch_guard.as_ref()?;
        Some(format!(
            "{}: {}",
            g.what,
            g.render(&|i| self
                .source
                .params
                .get(i)
                .map_or_else(|| format!("param{i}"), |p| p.name.clone()))
        ))
    }

    /// Launches on device `device`, on the stream whose raw handle is
    /// `stream` (0: the legacy default stream), with `values` in the order
    /// of the names given to `compile`: ints for pointers (device
    /// addresses) and integers, floats for floats.
    fn launch(
        &self,
        grid: (u32, u32, u32),
        values: &Bound<'_, PyTuple>,
        stream: usize,
        device: usize,
    ) -> PyResult<()> {
        if values.len() != self.args.len() {
            return Err(PyTypeError::new_err(format!(
                "`{}` takes {} launch values, {} given",
                self.source.name,
                self.args.len(),
                values.len()
            )));
        }
        let mut sources = Vec::with_capacity(self.args.len());
        let mut pointers: Vec<(&str, u64)> = Vec::new();
        for (v, (name, kind)) in values.iter().zip(&self.args) {
            sources.push(match kind {
                ArgKind::Ptr => {
                    let address = v.extract::<u64>().map_err(|_| {
                        PyTypeError::new_err(format!("`{name}`: expected a device address"))
                    })?;
                    pointers.push((name, address));
                    ArgSource::Buffer(name.clone())
                }
                ArgKind::Int => ArgSource::Int(v.extract::<i64>().map_err(|_| {
                    PyTypeError::new_err(format!("`{name}`: expected an integer that fits 64 bits"))
                })?),
                ArgKind::Float => ArgSource::Float(
                    v.extract::<f64>()
                        .map_err(|_| PyTypeError::new_err(format!("`{name}`: expected a float")))?,
                ),
            });
        }
        let grid = [grid.0, grid.1, grid.2];
        let bound: Vec<BoundArg> = self
            .source
            .params
            .iter()
            .zip(&self.slots)
            .map(|(p, slot)| BoundArg {
                param: p.name.clone(),
                ty: p.ty,
                source: match slot {
                    Slot::Arg(i) => sources[*i].clone(),
                    Slot::GridX => ArgSource::Int(i64::from(grid[0])),
                    Slot::GridY => ArgSource::Int(i64::from(grid[1])),
                    Slot::GridZ => ArgSource::Int(i64::from(grid[2])),
                    Slot::WalkStep(asked) => ArgSource::Int(i64::from(*asked)),
                },
            })
            .collect();
        let address = |name: &str| pointers.iter().find(|(n, _)| *n == name).map(|&(_, a)| a);
        let gpu = gpu(device).map_err(LaunchError::new_err)?;
        let (loaded, resident) = self.load(&gpu)?;
        // Tensor-map extents taken from the grid are the grid asked for
        // (the tiles a persistent kernel walks), as in the `run` harness.
        let mut workspaces = self
            .workspaces
            .lock()
            .map_err(|_| LaunchError::new_err("a launch panicked while holding the workspaces"))?;
        let workspace = workspaces.entry((device, stream)).or_default();
        let cfg = launch::launch_config(&self.source, grid, resident, &bound);
        let args = launch::launch_args(
            &gpu,
            &self.source,
            &bound,
            grid,
            cfg.grid,
            &address,
            workspace,
        )
        .map_err(PyValueError::new_err)?;
        gpu.launch_on_stream(&loaded, &cfg, &args, stream)
            .map_err(|e| LaunchError::new_err(e.to_string()))
    }

    /// Loads the module on device `device` now (it is otherwise loaded at
    /// the first launch there).
    fn load_on(&self, device: usize) -> PyResult<()> {
        let gpu = gpu(device).map_err(LaunchError::new_err)?;
        self.load(&gpu).map(|_| ())
    }

    /// The kernel and its launch contract as bytes, for the on-disk cache.
    fn serialize<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &serialize(self))
    }

    /// The inverse of `serialize`.
    #[staticmethod]
    fn deserialize(bytes: &[u8]) -> PyResult<Kernel> {
        deserialize(bytes).map_err(|e| PyValueError::new_err(format!("corrupt cache entry: {e}")))
    }
}

impl Kernel {
    fn load(&self, gpu: &Gpu) -> PyResult<(Arc<runtime::Kernel>, u32)> {
        let mut loaded = self
            .loaded
            .lock()
            .map_err(|_| LaunchError::new_err("the module table is poisoned"))?;
        if let Some((k, resident)) = loaded.get(&gpu.ordinal()) {
            return Ok((k.clone(), *resident));
        }
        if self.compiled.cubin.is_empty() {
            return Err(LaunchError::new_err(format!(
                "`{}` was compiled without a cubin (to_cubin=False)",
                self.source.name
            )));
        }
        let k = Arc::new(
            gpu.load(&self.compiled, &self.source.symbol)
                .map_err(|e| LaunchError::new_err(e.to_string()))?,
        );
        let resident = runtime::resident_programs(gpu, &k, &self.source)
            .map_err(|e| LaunchError::new_err(e.to_string()))?;
        loaded.insert(gpu.ordinal(), (k.clone(), resident));
        Ok((k, resident))
    }
}

fn param_type_text(ty: &ParamType) -> String {
    match ty {
        ParamType::Ptr(t) => format!("*{t}"),
        ParamType::Scalar(t) => t.to_string(),
    }
}

/// What the on-disk cache keeps of a kernel besides its cubin.
#[derive(serde::Serialize, serde::Deserialize)]
struct CachedKernel {
    source: KernelSource,
    ptx: String,
    log: String,
    warp_specialized: bool,
    args: Vec<(String, ArgKind)>,
}

/// The cached kernel as JSON, a NUL byte, then the cubin.
fn serialize(k: &Kernel) -> Vec<u8> {
    let cached = CachedKernel {
        source: k.source.clone(),
        ptx: k.compiled.ptx.clone(),
        log: k.compiled.log.clone(),
        warp_specialized: k.warp_specialized,
        args: k.args.clone(),
    };
    // Strings, numbers and lists only (no map with non-string keys): JSON
    // encoding cannot fail.
    let mut out = serde_json::to_vec(&cached).expect("a kernel serializes to JSON");
    out.push(0);
    out.extend_from_slice(&k.compiled.cubin);
    out
}

fn deserialize(bytes: &[u8]) -> Result<Kernel, String> {
    let nul = bytes.iter().position(|&b| b == 0).ok_or("no header")?;
    let cached: CachedKernel = serde_json::from_slice(&bytes[..nul]).map_err(|e| e.to_string())?;
    let slots = slots_for(&cached.source, &cached.args)?;
    Ok(Kernel {
        compiled: Compiled {
            kernel_name: cached.source.symbol.clone(),
            ptx: cached.ptx,
            cubin: bytes[nul + 1..].to_vec(),
            log: cached.log,
            nvrtc_version: (0, 0),
            cache_hit: true,
            cache_key: String::new(),
        },
        source: cached.source,
        warp_specialized: cached.warp_specialized,
        args: cached.args,
        slots,
        loaded: Mutex::new(HashMap::new()),
        workspaces: Mutex::new(HashMap::new()),
    })
}

/// NVRTC's version, `(major, minor)`: part of the on-disk cache key.
#[pyfunction]
fn nvrtc_version() -> PyResult<(i32, i32)> {
    runtime::nvrtc_version().map_err(|e| CompilationError::new_err(e.to_string()))
}

/// Whether a CUDA driver with at least one device is present.
#[pyfunction]
fn gpu_available() -> bool {
    Gpu::available()
}

/// Device `ordinal`'s properties as Triton's
/// `driver.active.utils.get_device_properties` names them, plus `name`
/// and `capability`.
#[pyfunction]
fn device_properties(py: Python<'_>, ordinal: usize) -> PyResult<Bound<'_, PyDict>> {
    let g = gpu(ordinal).map_err(LaunchError::new_err)?;
    let err = |e: runtime::RuntimeError| LaunchError::new_err(e.to_string());
    let d = PyDict::new(py);
    d.set_item("name", g.name().map_err(err)?)?;
    d.set_item("capability", g.compute_capability().map_err(err)?)?;
    d.set_item("multiprocessor_count", g.sm_count().map_err(err)?)?;
    d.set_item("max_shared_mem", g.max_dyn_smem_optin())?;
    d.set_item("max_num_regs", g.registers_per_sm().map_err(err)?)?;
    d.set_item("warpSize", g.warp_size().map_err(err)?)?;
    Ok(d)
}

#[pymodule]
fn _tawa(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("CompilationError", m.py().get_type::<CompilationError>())?;
    m.add("LaunchError", m.py().get_type::<LaunchError>())?;
    m.add_class::<Kernel>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(nvrtc_version, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(device_properties, m)?)?;
    Ok(())
}
