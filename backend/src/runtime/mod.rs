//! The CUDA runtime of the backend: compile generated CUDA C++ with NVRTC,
//! check it with ptxas, and (on a machine with a GPU) load, launch and time
//! it. The only module of the workspace that talks to CUDA; the driver side
//! is cudarc with dynamic loading, so nothing CUDA is needed to build and a
//! machine without a driver still compiles and checks kernels.
//!
//! No GPU needed:
//! - [`compile_cuda`]`(src, kernel_name, &`[`CompileOptions`]`) -> `[`Compiled`]:
//!   NVRTC for `sm_90a` (`-std=c++17 -lineinfo`, fast math off), PTX + cubin +
//!   log (with ptxas's resource report: [`Compiled::resources`]), through
//!   an on-disk cache ([`cache`]) keyed by SHA-256 of source, kernel name,
//!   options and NVRTC version. `Compiled::cache_hit` tells
//!   whether NVRTC ran. A rejected source gives [`RuntimeError::Compile`],
//!   whose message shows each diagnostic with its source line (±1 line).
//! - [`ptxas_info`]`(ptx) -> `[`PtxasReport`]: `ptxas -arch=sm_90a -v`,
//!   registers, spills, stack, static shared memory per kernel;
//!   [`ptxas_cubin`] also keeps the cubin (`--emit cubin`).
//!
//! GPU:
//! - [`Gpu::available`] (never panics), [`Gpu::new`]`(ordinal)`.
//! - Buffers: [`Gpu::alloc`], [`Gpu::upload`], [`Gpu::upload_into`],
//!   [`Gpu::download`], [`Gpu::memset`] (byte pattern, for poisoning).
//! - [`Gpu::load`]`(&Compiled, name) -> `[`Kernel`]; [`Gpu::launch`]`(&Kernel,
//!   grid, block, dyn_smem, &[`[`KernelArg`]`])`, opting in to dynamic shared
//!   memory above 48 KiB; [`Gpu::launch_with`] for clusters.
//! - [`Gpu::synchronize`] names the last kernel launched in its error;
//!   [`Gpu::time_launches`]`(n, f)` gives per-launch milliseconds from CUDA
//!   events, [`Gpu::time_interleaved`] the same for several kinds of work
//!   run in turn (a kernel and its baseline); [`Gpu::copy_device`].
//! - [`blas::Blas`]: cuBLAS GEMMs (fp16/bf16/fp32, fp32 accumulation,
//!   row-major through the transpose trick, strided views) on the Gpu's
//!   stream.
//!
//! - [`tensor_map::TensorMapSpec`]: TMA tensor maps (`CUtensorMap`),
//!   validated against the driver's rules on any machine, encoded with
//!   `cuTensorMapEncodeTiled` into a launch argument.
//!
//! Where the tools come from: [`crate::toolchain`].

pub mod blas;
pub mod cache;
mod error;
mod gpu;
mod nvrtc;
mod ptxas;
pub mod tensor_map;

pub use error::{NvrtcDiagnostic, RuntimeError};
pub use gpu::{
    DeviceBuffer, Gpu, Kernel, KernelArg, LaunchConfig, TimedWork, DEFAULT_DYN_SMEM_LIMIT,
};
pub use nvrtc::{
    compile_cuda, nvrtc_library, nvrtc_version, parse_log, ptx_entries, render_diagnostics,
    CompileOptions, Compiled, DEFAULT_ARCH,
};
pub use ptxas::{
    parse_report, ptxas_cubin, ptxas_info, ptxas_info_for, KernelResources, PtxasReport,
};

/// How many programs of the generated `source` (loaded as `kernel`) run at
/// once on `gpu`: one a SM, or for a kernel compiled for several blocks
/// an SM (`occupancy`), as many as the driver says fit, at most that
/// many; for a kernel launched in thread-block clusters, the clusters
/// that fit at once times their size (the CTAs of a pair need SMs of one
/// GPC: `cuOccupancyMaxActiveClusters`). What
/// [`crate::KernelSource::launch_grid`] gives a persistent kernel.
///
/// `TAWA_PERSISTENT_PROGRAMS=N` caps it at N (rounded down to whole
/// clusters, at least one): a persistent kernel then walks a small grid
/// with few programs, several tiles each, as the CPU tests run it (the
/// GPU suite's stream-K runs, which need more tiles than programs).
pub fn resident_programs(
    gpu: &Gpu,
    kernel: &Kernel,
    source: &crate::KernelSource,
) -> Result<u32, RuntimeError> {
    let resident = resident_on_gpu(gpu, kernel, source)?;
    let cap = std::env::var("TAWA_PERSISTENT_PROGRAMS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&n| n > 0);
    let size: u32 = source.cluster.map_or(1, |c| c.iter().product());
    Ok(match cap {
        Some(n) => resident.min((n / size).max(1) * size),
        None => resident,
    })
}

fn resident_on_gpu(
    gpu: &Gpu,
    kernel: &Kernel,
    source: &crate::KernelSource,
) -> Result<u32, RuntimeError> {
    let sms = gpu.sm_count()?;
    if let Some(cluster) = source.cluster {
        let size: u32 = cluster.iter().product();
        let clusters = gpu.max_active_clusters(
            kernel,
            cluster,
            [source.num_threads, 1, 1],
            source.dyn_smem_bytes,
        )?;
        let most = sms.saturating_mul(source.occupancy.max(1)).max(size);
        return Ok(clusters.saturating_mul(size).clamp(size, most));
    }
    if source.occupancy <= 1 {
        return Ok(sms);
    }
    let fit = gpu.max_active_blocks_per_sm(kernel, source.num_threads, source.dyn_smem_bytes)?;
    Ok(sms.saturating_mul(source.occupancy.min(fit).max(1)))
}
