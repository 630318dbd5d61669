//! `tawa-rs`: compiles `@triton.jit` kernels for Hopper, runs and times the
//! examples on the GPU.
//!
//! The binary is a thin shell over the library (`src/lib.rs`): it parses
//! the command line and turns every failure into a rendered message and a
//! non-zero exit code (1 for errors in the user's kernel or files and for
//! failing `run`/`bench` cases, 2 for bad command lines, 3 for internal
//! compiler errors). It never panics on input.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use tawa_rs::cli::{Cli, Command};
use tawa_rs::{bench, driver, harness};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let result = match &cli.command {
        None => driver::run(&cli.compile, color),
        Some(Command::Run(cmd)) => harness::run_command(cmd),
        Some(Command::Bench(cmd)) => bench::bench_command(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprint!("{}", failure.message);
            ExitCode::from(failure.exit_code)
        }
    }
}
