//! The project's Triton-style example kernels (`kernels/*.py`) and their
//! launch cases (`kernels/<name>.toml`), read by the interpreter tests, the
//! GPU tests (`tawa-rs run`) and the benchmarks (`tawa-rs bench`).
//!
//! # Launch case schema
//!
//! ```toml
//! kernel = "matmul_kernel"       # the @triton.jit function to launch
//! reference = "matmul"           # a name in reference::REFERENCES
//! # every kernel parameter in order, constexprs included
//! params = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "...", "BLOCK_SIZE_M", "..."]
//! roles = { a = "a_ptr", b = "b_ptr", c = "c_ptr" }  # reference role -> tensor name
//!
//! [[case]]
//! name = "ragged_100"
//! tags = ["small"]               # small: interpreter + GPU; large: GPU + bench
//! sizes = { M = 100, N = 100, K = 100 }
//! # TOML ints, bools, floats; strings are Python strings ("" binds ''),
//! # { py = "tl.float16" } is passed verbatim
//! constexprs = { BLOCK_SIZE_M = 64, ACTIVATION = "leaky_relu" }
//! num_warps = 4                  # optional
//! num_stages = 3                 # optional
//! grid = ["cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)"]   # 1 to 3 exprs
//! tolerance = { atol = 1e-2, rtol = 1e-2 }
//! bench = { flops = "2*M*N*K" }  # and/or bytes = "..."; optional
//!
//! # the non-constexpr parameters, in parameter order:
//! [[case.args]]
//! kind = "tensor"                # pointer to a tensor's first element
//! name = "a_ptr"
//! dtype = "fp16"
//! shape = ["M", "K"]
//! strides = ["1", "M"]           # optional, elements; default row-major
//! init = { dist = "randn", scale = 1.0 }  # randn{scale,mean} | uniform{low,high}
//!                                # | randint{low,high} | zeros | values{values}
//! output = false                 # outputs without init are poisoned (NaN)
//! [[case.args]]
//! kind = "scalar"                # dtype i32/i64/fp32...; value: int, float or expr
//! name = "M"
//! dtype = "i32"
//! value = "M"
//! [[case.args]]
//! kind = "stride"                # sugar: element stride of tensor `of` along `dim`
//! name = "stride_am"
//! of = "a_ptr"
//! dim = 0
//! [[case.args]]
//! kind = "desc"                  # host TensorDescriptor over tensor `of`
//! name = "a_desc"
//! of = "a"
//! block = ["BLOCK_M", "BLOCK_K"]
//! [[case.args]]
//! kind = "ptr_array"             # int64 device array of the tensors' addresses
//! name = "a_ptrs"
//! of = ["a0", "a1"]
//!
//! # tensors reached only through desc/ptr_array arguments
//! [[case.buffers]]
//! name = "a"
//! dtype = "fp16"
//! shape = ["M", "K"]
//! ```
//!
//! Expressions (sizes, grid, shapes, scalar values, bench) are integers,
//! names (sizes and int/bool constexprs), `+ - * // % **`, parentheses,
//! `cdiv(a, b)`, `min(...)`, `max(...)`; see [`expr`].
//!
//! Derived from a case: [`ExampleSpec::signature`] (Triton's AOT format:
//! `*fp16:16` for tensors, `i32`/`i32:16` for integers as Triton
//! specializes multiples of 16, the bare constant `1` for integers equal to
//! 1 (Triton binds those as constants, so the compiled kernel has no such
//! parameter and runners skip its argument), `fp32` for floats, `*i64:16` for pointer
//! arrays, `tensordesc<fp16[64, 64]>` for descriptors, the Python value of
//! each constexpr), [`ExampleSpec::compile_args`], [`Case::grid`],
//! [`Case::launch_args`]. A `tensordesc` parameter `x` is expanded by the
//! compiler into `x_base` (pointer), `x_shape0..` (i32), `x_stride0..`
//! (i64); runners pass them in that order (see [`LaunchArg::Desc`]).

pub mod expr;
pub mod inputs;
pub mod reference;
pub mod spec;

use std::path::{Path, PathBuf};

pub use inputs::{build_inputs, check_close, round_to, HostTensor, Mismatch};
pub use reference::{run_reference, run_reference_with, MatmulFn};
pub use spec::{Arg, Case, CompileArgs, Constexpr, ExampleSpec, Init, LaunchArg, Tolerance};

/// One example: the kernel file and its launch cases.
#[derive(Debug, Clone)]
pub struct Example {
    /// File stem: `matmul` for `kernels/matmul.py`.
    pub name: String,
    pub py_path: PathBuf,
    pub spec: ExampleSpec,
}

/// Environment variable: the folder holding the examples' `*.py` and
/// `*.toml` files, for binaries run away from the checkout they were built
/// in (the GPU machine runs prebuilt test binaries from another folder).
pub const ENV_EXAMPLES_DIR: &str = "TAWA_EXAMPLES_DIR";

/// `$TAWA_EXAMPLES_DIR` when set, else `triton-examples/kernels` of the
/// checkout this crate was built from.
pub fn examples_dir() -> PathBuf {
    match std::env::var_os(ENV_EXAMPLES_DIR).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels"),
    }
}

/// Reads and validates `kernels/<name>.toml`.
pub fn load(name: &str) -> Result<Example, String> {
    load_beside(&examples_dir().join(format!("{name}.py")))
}

/// The example whose kernel is `py_path`, with the launch cases of the
/// `.toml` file beside it (any directory, not only `kernels/`).
pub fn load_beside(py_path: &Path) -> Result<Example, String> {
    let toml_path = py_path.with_extension("toml");
    let name = py_path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{}: not a file name", py_path.display()))?
        .to_string();
    let spec = read_spec(&toml_path)?;
    if !py_path.is_file() {
        return Err(format!("{}: no kernel file", py_path.display()));
    }
    Ok(Example {
        name,
        py_path: py_path.to_path_buf(),
        spec,
    })
}

/// Reads and validates a launch-case file anywhere (e.g. the launch cases
/// of the upstream tutorials in the root package's `tests/upstream/`).
pub fn read_spec(toml_path: &Path) -> Result<ExampleSpec, String> {
    let text =
        std::fs::read_to_string(toml_path).map_err(|e| format!("{}: {e}", toml_path.display()))?;
    let spec: ExampleSpec =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", toml_path.display()))?;
    spec.validate()
        .map_err(|e| format!("{}: {e}", toml_path.display()))?;
    Ok(spec)
}

/// Every example, sorted by name.
pub fn load_all() -> Result<Vec<Example>, String> {
    let dir = examples_dir();
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                names.push(stem.to_string());
            }
        }
    }
    names.sort();
    names.iter().map(|n| load(n)).collect()
}

#[cfg(test)]
mod tests;
