//! `tawa-rs`: compiles `@triton.jit` kernels for Hopper.
//!
//! The binary is a thin driver: it reads the file, runs the pipeline in
//! [`driver`] and turns every failure into a rendered diagnostic and a
//! non-zero exit code (1 for errors in the user's kernel or files, 2 for bad
//! command lines, 3 for internal compiler errors). It never panics on input.

mod driver;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

/// Compile Triton-style Python GPU kernels (`@triton.jit`) into
/// warp-specialized CUDA for NVIDIA Hopper (sm_90a).
///
/// Example:
///   tawa-rs triton-examples/kernels/vector_add.py --arch sm90 \
///       --signature "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"
///   tawa-rs triton-examples/kernels/matmul.py --case ragged_100
#[derive(Parser, Debug)]
#[command(name = "tawa-rs", version, about, long_about, verbatim_doc_comment)]
pub struct Cli {
    /// The Python file holding the `@triton.jit` kernel(s).
    pub kernel_file: PathBuf,

    /// Target GPU architecture. Only Hopper is supported: `sm90` (also
    /// spelled `sm_90`, `sm_90a`, `sm90a`); code is generated for sm_90a.
    #[arg(long, default_value = "sm90", value_parser = parse_arch)]
    pub arch: Arch,

    /// Which `@triton.jit` function to compile when the file has several
    /// entry points, e.g. `--kernel matmul_kernel`.
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,

    /// Argument types and constexpr values, in Triton's ahead-of-time
    /// format, one entry per kernel parameter in order. `*fp16:16` is a
    /// pointer to fp16 aligned to 16 bytes, `i32:16` an i32 divisible by 16,
    /// a bare value (`64`, `'leaky_relu'`, `True`) binds a `tl.constexpr`
    /// parameter. Example: `--signature "*fp16:16, *fp16:16, i32, 64"`.
    #[arg(long, value_name = "SIG")]
    pub signature: Option<String>,

    /// Bind a `tl.constexpr` parameter by name, e.g. `-D BLOCK_SIZE=1024`
    /// or `-D ACTIVATION="'leaky_relu'"`. Repeatable; wins over the
    /// signature and the parameter's default.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
    pub define: Vec<(String, String)>,

    /// Take the kernel name, signature, constexprs, warps and stages from
    /// launch case NAME of the `.toml` file beside the kernel file (the
    /// examples in `triton-examples/kernels` have them), e.g.
    /// `--case ragged_100`. Explicit options win over the case's.
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,

    /// Warps per program (Triton's `num_warps`), e.g. `--num-warps 8`.
    /// Default 4.
    #[arg(long, value_name = "N")]
    pub num_warps: Option<u32>,

    /// Pipeline depth (Triton's `num_stages`), e.g. `--num-stages 4`.
    /// Default 3.
    #[arg(long, value_name = "N")]
    pub num_stages: Option<u32>,

    /// What to write: `tile-ir` is the specialized tile IR after the
    /// frontend, in the textual form the IR parser reads back.
    #[arg(long, value_enum, default_value_t = Emit::TileIr)]
    pub emit: Emit,

    /// Write the output to FILE instead of standard output, e.g.
    /// `-o add.tir`.
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Target architectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Hopper (H100/H200), compiled for `sm_90a`.
    Sm90,
}

/// Output kinds of `--emit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The tile IR produced by the frontend (text format).
    TileIr,
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    match s.to_ascii_lowercase().as_str() {
        "sm90" | "sm_90" | "sm90a" | "sm_90a" => Ok(Arch::Sm90),
        other => Err(format!(
            "unsupported architecture `{other}`: tawa-rs generates code for NVIDIA Hopper only; use `--arch sm90`"
        )),
    }
}

fn parse_define(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("expected NAME=VALUE, found `{s}`")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    match driver::run(&cli, color) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprint!("{}", failure.message);
            ExitCode::from(failure.exit_code)
        }
    }
}
