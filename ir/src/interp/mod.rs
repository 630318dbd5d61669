//! CPU interpreter of the tile IR with Triton semantics: the correctness
//! oracle of the project.
//!
//! [`run_grid`] runs a kernel over a whole grid, one program at a time in
//! x-fastest order, on buffers of a simulated global [`Memory`]. Each program
//! evaluates its ops on whole tiles (flat row-major vectors, see
//! [`value`](self::value)).
//!
//! Semantics, per element type (see [`float`] for float formats):
//! - integers wrap in their width; `IDiv` truncates, `Rem` has the dividend's
//!   sign; division by zero gives all ones (`IDiv`) or the dividend (`Rem`),
//!   as nothing traps on a GPU; shifts by the width or more give 0 (or the
//!   sign for arithmetic right shifts), as PTX clamps shift amounts;
//! - floats are computed in f64 and rounded to the element type after every
//!   op (f32 `fma` and `dot` use a fused f32 multiply-add);
//! - `dot` accumulates products in the accumulator type one `k` at a time,
//!   rounding after each add; f32 operands are rounded to tf32 first unless
//!   the input precision is `ieee` (or `tf32x3`, taken as f32-accurate);
//!   tf32 rounding is to nearest even; `max_num_imprecise_acc` is ignored
//!   (fp8 products are summed as precisely as any other);
//! - `reduce` combines in a fixed pairwise tree (element `i` with `i + n/2`),
//!   rounding after each combine; `max`/`min` ignore NaN (maxnum); `argmax`
//!   and `argmin` return the lowest index of the extreme and skip NaNs (all-NaN
//!   gives 0); scans are sequential;
//! - memory: masked-off lanes never touch memory; any access that is performed
//!   must be aligned and inside one allocated buffer, otherwise the program
//!   fails with an [`InterpError`]. Block pointers: dimensions in
//!   `boundary_check` read padding / skip writes out of the tensor's bounds,
//!   any other dimension out of bounds is an error. Descriptors read zero and
//!   skip writes out of bounds.
//! - `max_steps` counts executed ops (plus one per `while` trip, so that an
//!   empty `while true` stops too) over the whole grid; each partition a
//!   simulator runs through [`run_region`] counts its own.
//! - `print` writes one line per op to stderr; `assert` fails on the first
//!   false lane; `debug_barrier` does nothing (programs run one at a time).
//! - warp-specialized IR (`ws`, aref ops) needs a [`Host`] that knows
//!   partitions: [`run_grid`] reports it as an error; the aref simulator in
//!   `tawa-aref` runs it through [`run_grid_with_host`] and [`run_region`].
//!   Values that `aref.get` returns are [`value::SlotView`]s, read through
//!   the host by every op that uses them.

mod eval;
pub mod float;
mod host;
mod memory;
pub mod value;

use std::fmt;

pub use host::{Host, PlainHost, WsLaunch};
pub use memory::{Buffer, Memory};

use crate::function::{Block, Function};
use crate::ops::Loc;

/// A kernel argument: integers and floats for scalar parameters, addresses
/// (a [`Buffer`]'s `base`, possibly offset) for pointer parameters.
#[derive(Clone, Copy, Debug)]
pub enum ArgValue {
    Int(i64),
    Float(f64),
    Ptr(u64),
}

#[derive(Clone, Debug, Default)]
pub struct InterpOptions {
    /// Fail once more than this many ops have run (over the whole grid).
    pub max_steps: Option<u64>,
}

/// Why a program failed: the op (its name, as in the text format), where it
/// came from, and which program ran it.
#[derive(Clone, Debug)]
pub struct InterpError {
    pub message: String,
    pub op: String,
    pub loc: Loc,
    pub pid: [u32; 3],
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.pid;
        write!(
            f,
            "program ({x}, {y}, {z}), op `{}` at {}:{}: {}",
            self.op, self.loc.line, self.loc.col, self.message
        )
    }
}

impl std::error::Error for InterpError {}

/// Runs `func` once per program of `grid` (x fastest), with `args` bound to
/// `func.params` in order.
pub fn run_grid(
    func: &Function,
    args: &[ArgValue],
    grid: [u32; 3],
    mem: &mut Memory,
    opts: &InterpOptions,
) -> Result<(), InterpError> {
    eval::run_grid(func, args, grid, &mut PlainHost { mem }, opts)
}

/// [`run_grid`] with another [`Host`] (memory and warp specialization).
pub fn run_grid_with_host(
    func: &Function,
    args: &[ArgValue],
    grid: [u32; 3],
    host: &mut dyn Host,
    opts: &InterpOptions,
) -> Result<(), InterpError> {
    eval::run_grid(func, args, grid, host, opts)
}

/// Runs `block` (a region without arguments, such as a partition of a
/// `ws` op) of program `pid` with the values of `env` (indexed by
/// [`crate::Value`] index, as in [`WsLaunch::env`]) and stops at its
/// terminator. `max_steps` limits the ops this run executes.
pub fn run_region(
    func: &Function,
    block: Block,
    env: Vec<Option<value::RVal>>,
    pid: [u32; 3],
    grid: [u32; 3],
    host: &mut dyn Host,
    max_steps: Option<u64>,
) -> Result<(), InterpError> {
    eval::run_region(func, block, env, pid, grid, host, max_steps)
}
