//! The `tawa-rs` library behind the binary and the integration tests.
//!
//! - [`cli`]: the command line (clap): the plain compile form and the `run`
//!   and `bench` subcommands.
//! - [`driver`]: the pipeline (frontend → verifier → CUDA → NVRTC → ptxas)
//!   with rendered failures and exit codes.
//! - [`harness`]: one launch case on the GPU, checked element by element
//!   against the CPU interpreter or an independent GPU reference; the
//!   buffer checks (inputs untouched, nothing written outside an output's
//!   view) the interpreter tests share.
//! - [`bench`]: timing with CUDA events against a same-run baseline.

pub mod bench;
pub mod cli;
pub mod driver;
pub mod harness;
