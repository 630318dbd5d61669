//! The runtime's one error type. Every failure of a CUDA tool, library or
//! driver call ends up here with enough context to act on (which kernel,
//! which call, which source line); nothing in the runtime panics because a
//! library is missing.

use std::fmt;
use std::path::PathBuf;

use crate::toolchain::ToolchainError;

/// One diagnostic from NVRTC's log, e.g. `saxpy.cu(12): error: ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvrtcDiagnostic {
    /// 1-based line in the compiled source.
    pub line: usize,
    /// `error`, `warning`, `remark`, ... as NVRTC wrote it (`catastrophic
    /// error` included).
    pub severity: String,
    pub message: String,
}

/// Everything that can go wrong in the runtime.
#[derive(Debug)]
pub enum RuntimeError {
    /// NVRTC or ptxas is not installed where we looked.
    ToolNotFound(ToolchainError),
    /// A shared library was found but could not be loaded or lacks a symbol.
    LibraryLoad { library: PathBuf, message: String },
    /// An NVRTC API call failed (not a compile error in the source).
    NvrtcCall {
        call: &'static str,
        code: i32,
        message: String,
    },
    /// NVRTC rejected the source. `rendered` has each diagnostic with the
    /// source line it points at; `log` is NVRTC's full log.
    Compile {
        kernel: String,
        diagnostics: Vec<NvrtcDiagnostic>,
        rendered: String,
        log: String,
    },
    /// The source compiled but has no `extern "C"` entry of that name.
    KernelNotFound {
        kernel: String,
        entries: Vec<String>,
    },
    /// ptxas failed to run or rejected the PTX.
    Ptxas { message: String, log: String },
    /// A file system operation failed (temporary files, the cache).
    Io {
        what: String,
        source: std::io::Error,
    },
    /// No CUDA driver library (`libcuda.so`) on this machine.
    NoDriver,
    /// A CUDA driver call failed. `kernel` names the kernel involved (for a
    /// synchronize: the last kernel launched).
    Driver {
        call: String,
        kernel: Option<String>,
        message: String,
    },
    /// A launch that cannot be right (argument count or size mismatch, zero
    /// grid, ...), caught before calling the driver.
    InvalidLaunch { kernel: String, message: String },
}

impl RuntimeError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        RuntimeError::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn driver(
        call: impl Into<String>,
        kernel: Option<&str>,
        e: impl fmt::Display,
    ) -> Self {
        RuntimeError::Driver {
            call: call.into(),
            kernel: kernel.map(str::to_owned),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::ToolNotFound(e) => write!(f, "{e}"),
            RuntimeError::LibraryLoad { library, message } => {
                write!(f, "cannot load {}: {message}", library.display())
            }
            RuntimeError::NvrtcCall {
                call,
                code,
                message,
            } => write!(f, "{call} failed with NVRTC error {code}: {message}"),
            RuntimeError::Compile {
                kernel, rendered, ..
            } => write!(f, "NVRTC could not compile kernel `{kernel}`:\n{rendered}"),
            RuntimeError::KernelNotFound { kernel, entries } => write!(
                f,
                "the compiled module has no kernel `{kernel}` (entries: {}); is it declared extern \"C\" __global__?",
                if entries.is_empty() {
                    "none".to_string()
                } else {
                    entries.join(", ")
                }
            ),
            RuntimeError::Ptxas { message, log } => {
                write!(f, "ptxas: {message}")?;
                if !log.trim().is_empty() {
                    write!(f, "\n{}", log.trim_end())?;
                }
                Ok(())
            }
            RuntimeError::Io { what, source } => write!(f, "{what}: {source}"),
            RuntimeError::NoDriver => write!(
                f,
                "no CUDA driver on this machine (libcuda.so could not be loaded)"
            ),
            RuntimeError::Driver {
                call,
                kernel,
                message,
            } => match kernel {
                Some(k) => write!(f, "{call} (kernel `{k}`): {message}"),
                None => write!(f, "{call}: {message}"),
            },
            RuntimeError::InvalidLaunch { kernel, message } => {
                write!(f, "invalid launch of kernel `{kernel}`: {message}")
            }
        }
    }
}

impl std::error::Error for RuntimeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RuntimeError::ToolNotFound(e) => Some(e),
            RuntimeError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<ToolchainError> for RuntimeError {
    fn from(e: ToolchainError) -> Self {
        RuntimeError::ToolNotFound(e)
    }
}
