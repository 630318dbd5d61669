//! Backend: layouts, shared-memory allocation, CUDA C++ + inline PTX emission
//! and the cudarc runtime.
//!
//! - [`layout`]: distributed layouts (which thread holds which element,
//!   in which register), with the split of every coordinate into a
//!   per-thread base and per-register constants that emission relies on.
//! - [`toolchain`]: finds NVRTC and ptxas (project-local `.tools/cuda`
//!   from `.ci/install-cuda-tools.sh`, env overrides, system toolkits).
//! - [`axis_info`]: Triton's AxisInfo analysis (contiguity, divisibility,
//!   constancy of every value per dimension) and the vector width of a
//!   global access that follows from it.
//! - [`runtime`]: NVRTC compile with an on-disk cache, ptxas resource
//!   reports, and the GPU side on cudarc (buffers, launch, event timing).
//!
//! Still to come for the plain backend (issue "Plain backend and GPU
//! runtime"), in this order:
//!
//! 1. `layout_assign`: anchors (global loads/stores get the default blocked
//!    layout of their shape, vectorized along the contiguous dimension;
//!    `dot` operands and results get the MMA layouts), forward and backward
//!    propagation through elementwise ops, slices through reductions and
//!    `expand_dims`, and explicit conversions (through shared memory) where
//!    two assignments meet.
//! 2. `smem_alloc`: shared-memory scratch for conversions and cross-warp
//!    reductions, reused between non-overlapping lifetimes.
//! 3. `emit_cuda`: one `__global__` function per kernel; tiles as register
//!    arrays, unrolled loops over registers, masked vector loads/stores,
//!    shuffle + shared-memory reductions, `mma.sync`/WGMMA for `dot`.

pub mod axis_info;
pub mod codegen;
pub mod emit_cuda;
pub mod layout;
pub mod layout_assign;
pub mod runtime;
pub mod toolchain;

pub use codegen::{
    generate_cuda, CodegenError, CodegenOptions, KernelParam, KernelSource, ParamType,
};
