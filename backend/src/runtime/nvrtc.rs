//! NVRTC: CUDA C++ source to PTX and cubin for `sm_90a`, without a GPU.
//!
//! Why not cudarc's NVRTC bindings: cudarc's dynamic loader only takes bare
//! library names (`libnvrtc.so`, `libnvrtc.so.13`, ...) resolved by the
//! system loader and cannot be pointed at a path. Preloading the wheel's
//! `libnvrtc.so.13` by path would satisfy its `libnvrtc.so.13` candidate, but
//! cudarc tries the unversioned `libnvrtc.so` first, so a machine with a CUDA
//! toolkit on its loader path (the GPU machine) would silently compile with
//! that toolkit's NVRTC instead. So the dozen NVRTC entry points used here
//! are loaded with `libloading` from the exact file [`crate::toolchain`]
//! found; cudarc stays in charge of the driver (`libcuda.so`), which is always
//! the system's.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::cache;
use super::error::{NvrtcDiagnostic, RuntimeError};
use super::ptxas::{parse_report, PtxasReport};
use crate::toolchain;

/// The architecture every kernel is compiled for.
pub const DEFAULT_ARCH: &str = "sm_90a";

/// Options of one NVRTC compile. They are part of the cache key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// Virtual/real architecture, passed as `--gpu-architecture=`.
    pub arch: String,
    /// `-std=` value.
    pub std: String,
    /// `--use_fast_math`. Off by default: generated kernels must match the
    /// interpreter's results, and fast math changes division, sqrt and exp.
    pub fast_math: bool,
    /// `-lineinfo`: source lines in the PTX/SASS for profilers and
    /// compute-sanitizer, at no run-time cost.
    pub lineinfo: bool,
    /// `--ptxas-options=-v`: NVRTC runs ptxas for the cubin anyway; with
    /// `-v` its log carries ptxas's resource report (registers, spills,
    /// stack frame) for [`Compiled::resources`], at no extra compile.
    pub resource_report: bool,
    /// Further options, passed as given (e.g. `-DBLOCK=128`, `-G`).
    pub extra: Vec<String>,
    /// Use the on-disk compile cache (see [`cache`]).
    pub use_cache: bool,
    /// Cache folder; `None`: `$TAWA_CACHE_DIR`, else `$XDG_CACHE_HOME/tawa-rs`,
    /// else `~/.cache/tawa-rs`. Not part of the key.
    pub cache_dir: Option<PathBuf>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            arch: DEFAULT_ARCH.into(),
            std: "c++17".into(),
            fast_math: false,
            lineinfo: true,
            resource_report: true,
            extra: Vec::new(),
            use_cache: true,
            cache_dir: None,
        }
    }
}

impl CompileOptions {
    /// The command-line options handed to `nvrtcCompileProgram`.
    pub fn nvrtc_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("--gpu-architecture={}", self.arch),
            format!("-std={}", self.std),
        ];
        if self.lineinfo {
            args.push("-lineinfo".into());
        }
        if self.resource_report {
            args.push("--ptxas-options=-v".into());
        }
        if self.fast_math {
            args.push("--use_fast_math".into());
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// The result of [`compile_cuda`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub kernel_name: String,
    /// PTX text (NUL terminator stripped).
    pub ptx: String,
    /// The `sm_90a` ELF cubin, loadable with `cuModuleLoadData`.
    pub cubin: Vec<u8>,
    /// NVRTC's log (warnings), empty when it had nothing to say.
    pub log: String,
    /// The NVRTC version that compiled it, `(major, minor)`.
    pub nvrtc_version: (i32, i32),
    /// True when this came from the on-disk cache, not from NVRTC.
    pub cache_hit: bool,
    /// The cache key (hex SHA-256), also the cache files' stem.
    pub cache_key: String,
}

impl Compiled {
    /// ptxas's resource report of the cubin (registers, spills, stack
    /// frame per kernel), from NVRTC's log; empty when compiled without
    /// [`CompileOptions::resource_report`].
    pub fn resources(&self) -> PtxasReport {
        parse_report(&self.log)
    }
}

type NvrtcProgram = *mut c_void;
type NvrtcResult = c_int;

/// The NVRTC entry points used, resolved from one loaded library.
struct Nvrtc {
    path: PathBuf,
    version: (i32, i32),
    get_error_string: unsafe extern "C" fn(NvrtcResult) -> *const c_char,
    create_program: unsafe extern "C" fn(
        *mut NvrtcProgram,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> NvrtcResult,
    compile_program: unsafe extern "C" fn(NvrtcProgram, c_int, *const *const c_char) -> NvrtcResult,
    destroy_program: unsafe extern "C" fn(*mut NvrtcProgram) -> NvrtcResult,
    get_ptx_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> NvrtcResult,
    get_ptx: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> NvrtcResult,
    get_cubin_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> NvrtcResult,
    get_cubin: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> NvrtcResult,
    get_log_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> NvrtcResult,
    get_log: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> NvrtcResult,
    // Kept last and never dropped (the value lives in a static): the
    // function pointers above point into it.
    _lib: libloading::Library,
    _builtins: Option<libloading::Library>,
}

/// Why NVRTC could not be loaded, kept so every later call reports the same.
#[derive(Debug, Clone)]
enum LoadFailure {
    NotFound(toolchain::ToolchainError),
    Load { library: PathBuf, message: String },
}

impl From<&LoadFailure> for RuntimeError {
    fn from(f: &LoadFailure) -> Self {
        match f {
            LoadFailure::NotFound(e) => RuntimeError::ToolNotFound(e.clone()),
            LoadFailure::Load { library, message } => RuntimeError::LibraryLoad {
                library: library.clone(),
                message: message.clone(),
            },
        }
    }
}

static NVRTC: OnceLock<Result<Nvrtc, LoadFailure>> = OnceLock::new();

fn nvrtc() -> Result<&'static Nvrtc, RuntimeError> {
    NVRTC
        .get_or_init(load_nvrtc)
        .as_ref()
        .map_err(RuntimeError::from)
}

fn load_nvrtc() -> Result<Nvrtc, LoadFailure> {
    let located = toolchain::find_nvrtc().map_err(LoadFailure::NotFound)?;
    let path = located.path;
    let fail = |message: String| LoadFailure::Load {
        library: path.clone(),
        message,
    };
    let builtins = preload_builtins(&path).map_err(&fail)?;
    // SAFETY: NVRTC's initializers have no preconditions.
    let lib = unsafe { libloading::Library::new(&path) }
        .map_err(|e| fail(toolchain::library_error(&e)))?;
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the type is the one nvrtc.h declares for this symbol.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| {
                fail(format!(
                    "missing symbol {}: {}",
                    $name,
                    toolchain::library_error(&e)
                ))
            })?
        };
    }
    let version_fn: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult =
        sym!("nvrtcVersion");
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let rc = unsafe { version_fn(&mut major, &mut minor) };
    if rc != 0 {
        return Err(fail(format!("nvrtcVersion returned {rc}")));
    }
    Ok(Nvrtc {
        path: path.clone(),
        version: (major, minor),
        get_error_string: sym!("nvrtcGetErrorString"),
        create_program: sym!("nvrtcCreateProgram"),
        compile_program: sym!("nvrtcCompileProgram"),
        destroy_program: sym!("nvrtcDestroyProgram"),
        get_ptx_size: sym!("nvrtcGetPTXSize"),
        get_ptx: sym!("nvrtcGetPTX"),
        get_cubin_size: sym!("nvrtcGetCUBINSize"),
        get_cubin: sym!("nvrtcGetCUBIN"),
        get_log_size: sym!("nvrtcGetProgramLogSize"),
        get_log: sym!("nvrtcGetProgramLog"),
        _lib: lib,
        _builtins: builtins,
    })
}

/// NVRTC `dlopen`s its builtins library (`libnvrtc-builtins.so.13.0`) by
/// bare name at the first compile, and the wheel's `libnvrtc.so.13` has no
/// RPATH, so outside a CUDA install that fails ("failed to open
/// libnvrtc-builtins.so.13.0"). Loading the builtins beside it by full path
/// first makes that `dlopen` find the already-loaded library by its SONAME.
/// Only builtins from NVRTC's own folder are preloaded, so one install's
/// builtins never mix with another's NVRTC; none there (a system install
/// whose folder the loader searches anyway) is fine.
fn preload_builtins(nvrtc: &Path) -> Result<Option<libloading::Library>, String> {
    let Some(dir) = nvrtc.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(None);
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut builtins: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so."))
        })
        .collect();
    // Longest name first: `libnvrtc-builtins.so.13.0` over a shorter link.
    builtins.sort();
    builtins.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    match builtins.first() {
        // SAFETY: as for NVRTC itself.
        Some(path) => unsafe { libloading::Library::new(path) }
            .map(Some)
            .map_err(|e| {
                format!(
                    "cannot load {}: {}",
                    path.display(),
                    toolchain::library_error(&e)
                )
            }),
        None => Ok(None),
    }
}

impl Nvrtc {
    fn check(&self, call: &'static str, rc: NvrtcResult) -> Result<(), RuntimeError> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString accepts any value and returns a static
        // string (or null on very old versions).
        let ptr = unsafe { (self.get_error_string)(rc) };
        let message = if ptr.is_null() {
            "unknown error".to_string()
        } else {
            // SAFETY: non-null, NUL-terminated, static.
            unsafe { CStr::from_ptr(ptr) }
                .to_string_lossy()
                .into_owned()
        };
        Err(RuntimeError::NvrtcCall {
            call,
            code: rc,
            message,
        })
    }

    /// Reads one of the program's outputs through its size/get pair.
    fn read(
        &self,
        prog: NvrtcProgram,
        what: (&'static str, &'static str),
        size_fn: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> NvrtcResult,
        get_fn: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> NvrtcResult,
    ) -> Result<Vec<u8>, RuntimeError> {
        let mut size = 0usize;
        // SAFETY: `prog` is a live program; `size` a valid out-pointer.
        self.check(what.0, unsafe { size_fn(prog, &mut size) })?;
        let mut buf = vec![0u8; size];
        if size > 0 {
            // SAFETY: `buf` holds exactly the `size` bytes NVRTC asked for.
            self.check(what.1, unsafe { get_fn(prog, buf.as_mut_ptr().cast()) })?;
        }
        Ok(buf)
    }
}

/// Destroys the NVRTC program on every exit path.
struct ProgramGuard<'a> {
    nvrtc: &'a Nvrtc,
    prog: NvrtcProgram,
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        unsafe { (self.nvrtc.destroy_program)(&mut self.prog) };
    }
}

/// The loaded NVRTC's version, loading it if needed.
pub fn nvrtc_version() -> Result<(i32, i32), RuntimeError> {
    nvrtc().map(|n| n.version)
}

/// The file (or loader name) NVRTC was loaded from.
pub fn nvrtc_library() -> Result<&'static Path, RuntimeError> {
    nvrtc().map(|n| n.path.as_path())
}

/// Compiles CUDA C++ `src` with NVRTC and checks it defines the
/// `extern "C"` kernel `kernel_name`. Returns PTX, cubin and NVRTC's log;
/// from the on-disk cache when `opts.use_cache` and an identical compile (same
/// source, kernel name, options and NVRTC version) was done before. No GPU
/// needed.
pub fn compile_cuda(
    src: &str,
    kernel_name: &str,
    opts: &CompileOptions,
) -> Result<Compiled, RuntimeError> {
    let nvrtc = nvrtc()?;
    let args = opts.nvrtc_args();
    let key = cache::key(src, kernel_name, &args, nvrtc.version);
    let cache_dir = if opts.use_cache {
        opts.cache_dir.clone().or_else(cache::default_dir)
    } else {
        None
    };
    if let Some(dir) = &cache_dir {
        if let Some(entry) = cache::load(dir, &key) {
            return Ok(Compiled {
                kernel_name: kernel_name.into(),
                ptx: entry.ptx,
                cubin: entry.cubin,
                log: entry.log,
                nvrtc_version: nvrtc.version,
                cache_hit: true,
                cache_key: key,
            });
        }
    }

    let program_name = format!("{kernel_name}.cu");
    let c_src = CString::new(src).map_err(|_| RuntimeError::Compile {
        kernel: kernel_name.into(),
        diagnostics: Vec::new(),
        rendered: "the source contains a NUL byte".into(),
        log: String::new(),
    })?;
    let c_name = CString::new(program_name.clone()).unwrap_or_default();
    let c_args: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|_| RuntimeError::NvrtcCall {
            call: "nvrtcCompileProgram",
            code: -1,
            message: "an option contains a NUL byte".into(),
        })?;
    let arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();

    let mut prog: NvrtcProgram = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings; no headers.
    let rc = unsafe {
        (nvrtc.create_program)(
            &mut prog,
            c_src.as_ptr(),
            c_name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    nvrtc.check("nvrtcCreateProgram", rc)?;
    let guard = ProgramGuard { nvrtc, prog };
    // SAFETY: `arg_ptrs` points at `c_args`, alive for the call.
    let compile_rc =
        unsafe { (nvrtc.compile_program)(guard.prog, arg_ptrs.len() as c_int, arg_ptrs.as_ptr()) };
    let log = text(nvrtc.read(
        guard.prog,
        ("nvrtcGetProgramLogSize", "nvrtcGetProgramLog"),
        nvrtc.get_log_size,
        nvrtc.get_log,
    )?);
    if compile_rc != 0 {
        let diagnostics = parse_log(&log, &program_name);
        let rendered = render_diagnostics(src, &program_name, &diagnostics, &log);
        return Err(RuntimeError::Compile {
            kernel: kernel_name.into(),
            diagnostics,
            rendered,
            log,
        });
    }
    let ptx = text(nvrtc.read(
        guard.prog,
        ("nvrtcGetPTXSize", "nvrtcGetPTX"),
        nvrtc.get_ptx_size,
        nvrtc.get_ptx,
    )?);
    let cubin = nvrtc.read(
        guard.prog,
        ("nvrtcGetCUBINSize", "nvrtcGetCUBIN"),
        nvrtc.get_cubin_size,
        nvrtc.get_cubin,
    )?;
    drop(guard);

    let entries = ptx_entries(&ptx);
    if !entries.iter().any(|e| e == kernel_name) {
        return Err(RuntimeError::KernelNotFound {
            kernel: kernel_name.into(),
            entries,
        });
    }
    if let Some(dir) = &cache_dir {
        // Best effort: a read-only or full disk costs speed, not correctness.
        let _ = cache::store(dir, &key, &ptx, &cubin, &log);
    }
    Ok(Compiled {
        kernel_name: kernel_name.into(),
        ptx,
        cubin,
        log,
        nvrtc_version: nvrtc.version,
        cache_hit: false,
        cache_key: key,
    })
}

/// NVRTC's outputs are NUL-terminated C strings.
fn text(mut bytes: Vec<u8>) -> String {
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Names of the `.entry` (kernel) functions in PTX text.
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| {
            let rest = line.trim_start();
            let rest = rest.strip_prefix(".visible ").unwrap_or(rest);
            let rest = rest.strip_prefix(".weak ").unwrap_or(rest);
            let rest = rest.trim_start().strip_prefix(".entry")?;
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// Parses `PROGRAM(LINE): SEVERITY: MESSAGE` lines of an NVRTC log. Lines
/// about other files (headers) are not ours to show and are skipped.
pub fn parse_log(log: &str, program_name: &str) -> Vec<NvrtcDiagnostic> {
    let prefix = format!("{program_name}(");
    log.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(&prefix)?;
            let (num, rest) = rest.split_once("):")?;
            let line_no: usize = num.trim().parse().ok()?;
            let (severity, message) = rest.trim_start().split_once(':')?;
            Some(NvrtcDiagnostic {
                line: line_no,
                severity: severity.trim().to_string(),
                message: message.trim().to_string(),
            })
        })
        .collect()
}

/// Each diagnostic followed by the source line it points at, numbered, with
/// one line of context either side (`>` marks the line); then NVRTC's own
/// log, which may say more (notes, instantiation chains).
pub fn render_diagnostics(
    src: &str,
    program_name: &str,
    diagnostics: &[NvrtcDiagnostic],
    log: &str,
) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&format!(
            "{program_name}:{}: {}: {}\n",
            d.line, d.severity, d.message
        ));
        if d.line == 0 || d.line > lines.len() {
            continue;
        }
        let first = d.line.saturating_sub(1).max(1);
        let last = (d.line + 1).min(lines.len());
        let width = last.to_string().len();
        for n in first..=last {
            let mark = if n == d.line { '>' } else { ' ' };
            out.push_str(&format!("{mark} {n:>width$} | {}\n", lines[n - 1]));
        }
    }
    if diagnostics.is_empty() {
        out.push_str("(no diagnostic in NVRTC's log points at the source)\n");
    }
    out.push_str("--- NVRTC log ---\n");
    out.push_str(log.trim_end());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str =
        "k.cu(3): error: identifier \"oops\" is undefined\n      y[i] = oops;\n             ^\n\
                       k.cu(4): warning #177-D: variable \"z\" was declared but never referenced\n\
                       cuda_fp16.h(10): error: header trouble\n\
                       1 error detected in the compilation of \"k.cu\".\n";

    #[test]
    fn parses_nvrtc_log_lines_of_the_program_only() {
        let d = parse_log(LOG, "k.cu");
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].line, 3);
        assert_eq!(d[0].severity, "error");
        assert_eq!(d[0].message, "identifier \"oops\" is undefined");
        assert_eq!(d[1].severity, "warning #177-D");
    }

    #[test]
    fn renders_the_offending_line_with_context() {
        let src = "a\nb\ny[i] = oops;\nd\n";
        let d = parse_log(LOG, "k.cu");
        let text = render_diagnostics(src, "k.cu", &d[..1], LOG);
        assert!(text.starts_with(
            "k.cu:3: error: identifier \"oops\" is undefined\n  2 | b\n> 3 | y[i] = oops;\n  4 | d\n"
        ));
        assert!(text.contains("--- NVRTC log ---"));
    }

    #[test]
    fn finds_ptx_entries() {
        let ptx = ".version 9.0\n.visible .entry saxpy(\n.param .u64 a\n)\n.entry hidden_k(\n.func helper(\n";
        assert_eq!(ptx_entries(ptx), vec!["saxpy", "hidden_k"]);
    }

    #[test]
    fn default_options() {
        assert_eq!(
            CompileOptions::default().nvrtc_args(),
            vec![
                "--gpu-architecture=sm_90a",
                "-std=c++17",
                "-lineinfo",
                "--ptxas-options=-v"
            ]
        );
    }
}
