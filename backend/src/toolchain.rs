//! Finds the two CUDA tools the backend needs on the host: NVRTC (the shared
//! library `libnvrtc.so.*`, loaded at run time) and `ptxas` (a program run for
//! register and spill reports); and, on the GPU machine only, cuBLAS
//! ([`find_cublas`], searched like NVRTC with `$TAWA_CUBLAS` first) for the
//! harness's GEMM references and baselines.
//!
//! Neither needs a GPU. CI installs both from NVIDIA's PyPI wheels into the
//! project-local folder `.tools/cuda` (see `.ci/install-cuda-tools.sh`), so
//! the search prefers explicit settings, then that folder, then whatever CUDA
//! the system has. In order:
//!
//! | NVRTC                              | ptxas                              |
//! |------------------------------------|------------------------------------|
//! | `$TAWA_NVRTC` (full path to the library) | `$TAWA_PTXAS` (full path)    |
//! | under `$TAWA_CUDA_TOOLS` (when set, nowhere else) | same        |
//! | under `<workspace>/.tools/cuda`    | under `<workspace>/.tools/cuda`    |
//! | under `.tools/cuda` in an ancestor of the running executable | same    |
//! | `lib64`, `lib` of `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`, the toolkit of `nvcc` on `$PATH` | `bin` of the same |
//! | the system loader (`libnvrtc.so.13`, `libnvrtc.so`) | `$PATH`           |
//!
//! `<workspace>` is the parent of this crate's manifest directory, fixed at
//! build time; the executable's ancestors cover a binary that was moved out
//! of its build tree but still sits inside a checkout. "Under" means a
//! bounded recursive search, because the wheels nest their files
//! (`nvidia/cu13/lib/libnvrtc.so.13`, `nvidia/cu13/bin/ptxas`) and other
//! layouts (`lib64/`, `bin/`) should work too.
//!
//! An explicit setting that points at nothing is an error, not a reason to
//! look elsewhere: silently using another NVRTC than the one asked for would
//! make compile results depend on the machine. So is a `$TAWA_CUDA_TOOLS`
//! folder without NVRTC or ptxas; cuBLAS, which the wheels there do not
//! hold, is still searched for further down.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable: full path to `libnvrtc.so.*`.
pub const ENV_NVRTC: &str = "TAWA_NVRTC";
/// Environment variable: full path to `ptxas`.
pub const ENV_PTXAS: &str = "TAWA_PTXAS";
/// Environment variable: full path to `libcublas.so.*`.
pub const ENV_CUBLAS: &str = "TAWA_CUBLAS";
/// Environment variable: a folder holding the unpacked CUDA wheels.
pub const ENV_CUDA_TOOLS: &str = "TAWA_CUDA_TOOLS";
/// The project-local install folder, relative to the workspace root.
pub const LOCAL_TOOLS_DIR: &str = ".tools/cuda";

/// cuBLAS names tried through the system loader.
const CUBLAS_SONAMES: &[&str] = &["libcublas.so.13", "libcublas.so"];

/// Library names tried through the system loader, newest first. Only CUDA 13
/// and the unversioned development link: the backend targets CUDA 13's NVRTC.
const NVRTC_SONAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so"];

/// Where CUDA toolkit installers put the toolkit.
const DEFAULT_CUDA_HOME: &str = "/usr/local/cuda";

/// How deep the search goes below a tools folder (the wheels need 3).
const MAX_SEARCH_DEPTH: usize = 6;

/// Which tool a [`ToolchainError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Nvrtc,
    Ptxas,
    /// `libcublas.so`: only the GPU harness's references and baselines use
    /// it, so only the GPU machine needs it.
    Cublas,
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tool::Nvrtc => "NVRTC (libnvrtc.so)",
            Tool::Ptxas => "ptxas",
            Tool::Cublas => "cuBLAS (libcublas.so)",
        })
    }
}

/// Where a tool was found, for messages and for tests that want to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundVia {
    /// `$TAWA_NVRTC` or `$TAWA_PTXAS`.
    ExplicitPath,
    /// Under `$TAWA_CUDA_TOOLS`.
    ToolsEnv,
    /// Under `.tools/cuda` of the workspace or of an executable's ancestor.
    LocalTools,
    /// Under `$CUDA_HOME` or `$CUDA_PATH`.
    CudaHome,
    /// The system's dynamic loader resolved a bare library name.
    SystemLoader,
    /// Found on `$PATH`.
    Path,
}

/// A located tool. For [`FoundVia::SystemLoader`] `path` is a bare library
/// name (e.g. `libnvrtc.so.13`) that `dlopen` resolves, not a file path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub via: FoundVia,
}

/// A tool could not be found; says everything that was tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainError {
    pub tool: Tool,
    /// Each place tried, in order, with why it did not do.
    pub searched: Vec<String>,
}

impl fmt::Display for ToolchainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} not found; searched:", self.tool)?;
        for place in &self.searched {
            writeln!(f, "  - {place}")?;
        }
        write!(
            f,
            "install it with `.ci/install-cuda-tools.sh` (into {LOCAL_TOOLS_DIR}) or set ${}",
            match self.tool {
                Tool::Nvrtc => ENV_NVRTC,
                Tool::Ptxas => ENV_PTXAS,
                Tool::Cublas => ENV_CUBLAS,
            }
        )
    }
}

impl std::error::Error for ToolchainError {}

/// Why NVRTC or ptxas cannot be used (each tool's search, and how to install
/// it), `None` when both are found. For the compile tests, which are
/// `#[ignore]`d so that a plain `cargo test` reports them as not run rather
/// than passing without the tools; `.ci/run` installs the tools and runs
/// them, and there a missing tool is a failure.
pub fn missing_compile_tools() -> Option<String> {
    let missing: Vec<String> = [find_nvrtc().err(), find_ptxas().err()]
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    (!missing.is_empty()).then(|| missing.join("\n"))
}

/// The workspace root as seen at build time (parent of this crate).
pub fn build_time_workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The tools folders to search, in order, each with its [`FoundVia`] and a
/// description for error messages. Deduplicated.
fn tool_dirs() -> Vec<(PathBuf, FoundVia, String)> {
    let mut dirs: Vec<(PathBuf, FoundVia, String)> = Vec::new();
    let mut push = |dir: PathBuf, via: FoundVia, what: String| {
        if !dirs.iter().any(|(d, _, _)| *d == dir) {
            dirs.push((dir, via, what));
        }
    };
    if let Some(dir) = env_path(ENV_CUDA_TOOLS) {
        push(dir, FoundVia::ToolsEnv, format!("${ENV_CUDA_TOOLS}"));
    }
    push(
        build_time_workspace_root().join(LOCAL_TOOLS_DIR),
        FoundVia::LocalTools,
        "the workspace's tools folder".into(),
    );
    if let Ok(exe) = std::env::current_exe() {
        for ancestor in exe.ancestors().skip(1) {
            let dir = ancestor.join(LOCAL_TOOLS_DIR);
            if dir.is_dir() {
                push(
                    dir,
                    FoundVia::LocalTools,
                    "tools folder beside the executable".into(),
                );
            }
        }
    }
    dirs
}

/// `$CUDA_HOME`, `$CUDA_PATH`, the toolkit's default prefix, then the
/// toolkit of any `nvcc` on `$PATH`: the GPU machine's image has a CUDA 13
/// toolkit without `CUDA_HOME` set.
fn cuda_homes() -> Vec<(PathBuf, String)> {
    let mut homes: Vec<(PathBuf, String)> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|var| env_path(var).map(|p| (p, format!("${var}"))))
        .collect();
    let mut push = |home: PathBuf, what: String| {
        if !homes.iter().any(|(p, _)| *p == home) {
            homes.push((home, what));
        }
    };
    push(PathBuf::from(DEFAULT_CUDA_HOME), DEFAULT_CUDA_HOME.into());
    // A toolkit elsewhere whose `bin/` is on $PATH (nvcc is the marker).
    if let Some(path_var) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path_var) {
            if dir.join("nvcc").is_file() {
                if let Some(home) = dir.parent() {
                    push(home.to_path_buf(), "the toolkit of nvcc on $PATH".into());
                }
            }
        }
    }
    homes
}

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The places every tool is searched first, in order: the explicit variable
/// (`Some(Err)` when it points at nothing), then the tools folders, then the
/// CUDA homes' `subdirs`. `None`: not found there, `searched` says where.
/// `tools_env_only`: a tool `$TAWA_CUDA_TOOLS` must hold when it is set.
fn search_common(
    tool: Tool,
    env_var: &str,
    matches: fn(&OsStr) -> bool,
    home_subdirs: &[&str],
    tools_env_only: bool,
    searched: &mut Vec<String>,
) -> Option<Result<Located, ToolchainError>> {
    if let Some(path) = env_path(env_var) {
        if path.is_file() {
            return Some(Ok(Located {
                path,
                via: FoundVia::ExplicitPath,
            }));
        }
        searched.push(format!(
            "${env_var} = {} (no such file; not looking elsewhere)",
            path.display()
        ));
        return Some(Err(ToolchainError {
            tool,
            searched: std::mem::take(searched),
        }));
    }
    // A tools folder the user named but that is not there, or that lacks
    // NVRTC or ptxas, is a mistake to report, not a reason to quietly use
    // another toolchain.
    if let Some(dir) = env_path(ENV_CUDA_TOOLS) {
        let refused = if !dir.is_dir() {
            Some("no such folder")
        } else if !tools_env_only {
            None
        } else if let Some(path) = find_below(&dir, matches) {
            return Some(Ok(Located {
                path,
                via: FoundVia::ToolsEnv,
            }));
        } else {
            Some("not in it")
        };
        if let Some(why) = refused {
            searched.push(format!(
                "${ENV_CUDA_TOOLS} = {} ({why}; not looking elsewhere)",
                dir.display()
            ));
            return Some(Err(ToolchainError {
                tool,
                searched: std::mem::take(searched),
            }));
        }
    }
    for (dir, via, what) in tool_dirs() {
        match find_below(&dir, matches) {
            Some(path) => return Some(Ok(Located { path, via })),
            None => searched.push(format!("{what}: {} ({})", dir.display(), why_empty(&dir))),
        }
    }
    for (home, what) in cuda_homes() {
        for sub in home_subdirs {
            let dir = home.join(sub);
            if let Some(path) = find_in(&dir, matches) {
                return Some(Ok(Located {
                    path,
                    via: FoundVia::CudaHome,
                }));
            }
            searched.push(format!(
                "{what}/{sub}: {} ({})",
                dir.display(),
                why_empty(&dir)
            ));
        }
    }
    None
}

/// Finds NVRTC. See the module docs for the order.
pub fn find_nvrtc() -> Result<Located, ToolchainError> {
    find_library(Tool::Nvrtc, ENV_NVRTC, is_nvrtc_name, NVRTC_SONAMES, true)
}

/// A shared library: the env override, the tools folders and CUDA homes'
/// `lib64` and `lib`, then the system loader by soname.
fn find_library(
    tool: Tool,
    env: &str,
    is_name: fn(&OsStr) -> bool,
    sonames: &[&str],
    tools_env_only: bool,
) -> Result<Located, ToolchainError> {
    let mut searched = Vec::new();
    if let Some(found) = search_common(
        tool,
        env,
        is_name,
        &["lib64", "lib"],
        tools_env_only,
        &mut searched,
    ) {
        return found;
    }
    for name in sonames {
        // SAFETY: loading the library runs only its (and its dependencies')
        // ELF initializers, which do not assume anything of the caller.
        match unsafe { libloading::Library::new(*name) } {
            Ok(_) => {
                return Ok(Located {
                    path: PathBuf::from(name),
                    via: FoundVia::SystemLoader,
                })
            }
            Err(e) => searched.push(format!("system loader: {name} ({})", library_error(&e))),
        }
    }
    Err(ToolchainError { tool, searched })
}

/// Finds ptxas. See the module docs for the order.
pub fn find_ptxas() -> Result<Located, ToolchainError> {
    let mut searched = Vec::new();
    if let Some(found) = search_common(
        Tool::Ptxas,
        ENV_PTXAS,
        is_ptxas_name,
        &["bin"],
        true,
        &mut searched,
    ) {
        return found;
    }
    match std::env::var_os("PATH") {
        Some(path_var) => {
            for dir in std::env::split_paths(&path_var) {
                if let Some(path) = find_in(&dir, is_ptxas_name) {
                    return Ok(Located {
                        path,
                        via: FoundVia::Path,
                    });
                }
            }
            searched.push("$PATH (no ptxas in any of its folders)".into());
        }
        None => searched.push("$PATH (not set)".into()),
    }
    Err(ToolchainError {
        tool: Tool::Ptxas,
        searched,
    })
}

/// Finds cuBLAS: `$TAWA_CUBLAS`, the tools folders, the CUDA homes' `lib64`
/// and `lib`, then the system loader. Only the GPU harness needs it.
pub fn find_cublas() -> Result<Located, ToolchainError> {
    find_library(
        Tool::Cublas,
        ENV_CUBLAS,
        is_cublas_name,
        CUBLAS_SONAMES,
        false,
    )
}

/// libloading's `Display` says only "dlopen failed"; the loader's own
/// message (which file, why) is in the error's source.
pub(crate) fn library_error(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(source) => source.to_string(),
        None => e.to_string(),
    }
}

fn why_empty(dir: &Path) -> &'static str {
    if dir.is_dir() {
        "not in there"
    } else {
        "no such folder"
    }
}

/// `libnvrtc.so` or `libnvrtc.so.<version>`; not the builtins library nor
/// the wheel's `libnvrtc.alt.so.*` variant.
fn is_nvrtc_name(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    match name.strip_prefix("libnvrtc.so") {
        Some("") => true,
        Some(rest) => {
            rest.starts_with('.') && rest[1..].chars().all(|c| c.is_ascii_digit() || c == '.')
        }
        None => false,
    }
}

/// `libcublas.so` or `libcublas.so.<version>`, not `libcublasLt`.
fn is_cublas_name(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    match name.strip_prefix("libcublas.so") {
        Some("") => true,
        Some(rest) => {
            rest.starts_with('.') && rest[1..].chars().all(|c| c.is_ascii_digit() || c == '.')
        }
        None => false,
    }
}

fn is_ptxas_name(name: &OsStr) -> bool {
    name == "ptxas"
}

/// A matching regular file (or link to one) directly in `dir`.
fn find_in(dir: &Path, matches: fn(&OsStr) -> bool) -> Option<PathBuf> {
    let mut hits: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter(|entry| matches(&entry.file_name()))
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    // Deterministic, and the longest name first, so `libnvrtc.so.13` wins
    // over a `libnvrtc.so` link that may point at another version.
    hits.sort();
    hits.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    hits.into_iter().next()
}

/// Breadth-first search below `root`, at most [`MAX_SEARCH_DEPTH`] levels,
/// folders visited in name order so the answer does not depend on the file
/// system's listing order.
fn find_below(root: &Path, matches: fn(&OsStr) -> bool) -> Option<PathBuf> {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..=MAX_SEARCH_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            if let Some(hit) = find_in(dir, matches) {
                return Some(hit);
            }
            if let Ok(entries) = std::fs::read_dir(dir) {
                let mut subdirs: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .collect();
                subdirs.sort();
                next.extend(subdirs);
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_names() {
        for good in ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.13.0.88"] {
            assert!(is_nvrtc_name(OsStr::new(good)), "{good}");
        }
        for bad in [
            "libnvrtc-builtins.so.13.0",
            "libnvrtc.alt.so.13",
            "libnvrtc.so.13.bak",
            "libnvrtc.a",
        ] {
            assert!(!is_nvrtc_name(OsStr::new(bad)), "{bad}");
        }
    }

    #[test]
    fn cublas_names() {
        for good in ["libcublas.so", "libcublas.so.13", "libcublas.so.13.0.2.14"] {
            assert!(is_cublas_name(OsStr::new(good)), "{good}");
        }
        for bad in [
            "libcublasLt.so.13",
            "libcublas.so.13.bak",
            "libcublas_static.a",
        ] {
            assert!(!is_cublas_name(OsStr::new(bad)), "{bad}");
        }
    }

    #[test]
    fn search_finds_nested_files_deterministically() {
        let root = std::env::temp_dir().join(format!("tawa-toolchain-test-{}", std::process::id()));
        let lib = root.join("nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join("libnvrtc-builtins.so.13.0"), b"").unwrap();
        std::fs::write(lib.join("libnvrtc.so"), b"").unwrap();
        std::fs::write(lib.join("libnvrtc.so.13"), b"").unwrap();
        let hit = find_below(&root, is_nvrtc_name).unwrap();
        assert_eq!(hit, lib.join("libnvrtc.so.13"));
        assert_eq!(find_below(&root, is_ptxas_name), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn error_lists_what_was_searched() {
        let err = ToolchainError {
            tool: Tool::Ptxas,
            searched: vec!["$PATH (no ptxas in any of its folders)".into()],
        };
        let text = err.to_string();
        assert!(text.starts_with("ptxas not found; searched:\n  - $PATH"));
        assert!(text.contains("TAWA_PTXAS"));
    }
}
