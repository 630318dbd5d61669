//! Backend: layouts, shared-memory allocation, CUDA C++ + inline PTX emission
//! and the cudarc runtime.
//!
//! - [`layout`]: distributed layouts (which thread holds which element,
//!   in which register), with the split of every coordinate into a
//!   per-thread base and per-register constants that emission relies on.
//! - [`toolchain`]: finds NVRTC and ptxas (project-local `.tools/cuda`
//!   from `.ci/install-cuda-tools.sh`, env overrides, system toolkits).
//! - [`axis_info`]: re-export of [`tawa_ir::axis_info`] (Triton's AxisInfo
//!   analysis, which lives in the IR crate because it is target
//!   independent); emission takes vector widths from it.
//! - [`runtime`]: NVRTC compile with an on-disk cache, ptxas resource
//!   reports, and the GPU side on cudarc (buffers, launch, event timing).
//! - [`layout_assign`]: the pass giving every tile value its home layout
//!   (anchors, backward preferences, forward propagation, loop fixpoint).
//! - [`emit_cuda`]: one `__global__` function per kernel: tiles as register
//!   arrays with compile-time indices, masked vector loads and stores,
//!   shuffle + shared-memory reductions, WGMMA / `mma.sync` for `dot`,
//!   layout conversions through shared memory; its child modules
//!   `aref_lower` (warp-specialized IR) and `tma_store_lower` (TMA
//!   stores of `desc_store`s: staging, fence, bulk copies).
//! - [`codegen`]: the entry point running those three and describing the
//!   launch (parameters, threads, dynamic shared memory).

pub mod codegen;
pub mod emit_cuda;
pub mod layout;
pub mod layout_assign;
pub mod runtime;
pub mod toolchain;

/// The axis analysis lives in the IR crate (it is target independent);
/// re-exported so that `crate::axis_info` in `emit_cuda` still names it.
pub use tawa_ir::axis_info;

pub use codegen::{
    cuda_symbol, generate_cuda, layout_notes, shared_memory_bytes, CodegenError, CodegenOptions,
    HostExpr, KernelParam, KernelSource, ParamType, TensorMapParam, MAX_DYN_SMEM_BYTES,
};
pub use emit_cuda::tma_store_lower::{
    store_decision as tma_store_decision, store_shape as tma_store_shape, TmaStoreShape,
};
