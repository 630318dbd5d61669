//! The GPU side, on cudarc's driver API with dynamic loading: device,
//! buffers, module loading, launches, CUDA-event timing.
//!
//! One [`Gpu`] owns the device's primary context and one stream; every copy,
//! memset and launch goes to that stream in order, so cudarc's per-buffer
//! event tracking (for multi-stream use) is turned off. Launch errors are
//! asynchronous: a bad kernel shows up at the next [`Gpu::synchronize`] or
//! download, and the error then names the last kernel launched. An illegal
//! address or a trap poisons the context; create a new process to go on.
//!
//! Nothing here panics when no driver is installed: [`Gpu::available`]
//! answers false and [`Gpu::new`] returns [`RuntimeError::NoDriver`]. cudarc
//! resolves driver symbols lazily and panics on a missing one (an old
//! driver); entry points catch that and turn it into an error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::result::{self as cu, DriverError};
use cudarc::driver::sys::{
    self, CUdevice_attribute, CUevent_flags, CUfunction_attribute, CUlaunchAttribute,
    CUlaunchAttributeID, CUlaunchConfig,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr};

use super::error::RuntimeError;
use super::nvrtc::Compiled;

/// Dynamic shared memory a kernel may use without opting in.
pub const DEFAULT_DYN_SMEM_LIMIT: u32 = 48 * 1024;

/// Human-readable form of a driver error: `CUDA_ERROR_X: description`.
fn describe(e: &DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    }
}

fn drv(call: &str, kernel: Option<&str>, e: DriverError) -> RuntimeError {
    RuntimeError::driver(call, kernel, describe(&e))
}

/// Runs `f`, turning a panic inside cudarc (a symbol this driver lacks) into
/// an error instead of unwinding through the caller.
pub(crate) fn guarded<T>(
    call: &str,
    f: impl FnOnce() -> Result<T, RuntimeError>,
) -> Result<T, RuntimeError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic in the CUDA bindings".into());
        Err(RuntimeError::driver(call, None, message))
    })
}

fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library by its usual names.
    catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// One argument of a kernel launch, passed by value as the kernel's
/// parameter list declares it.
#[derive(Debug, Clone, PartialEq)]
pub enum KernelArg {
    /// A device pointer (`T*`), e.g. [`DeviceBuffer::ptr`].
    Ptr(u64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    /// Two bytes, e.g. the bits of an `__half` or `__nv_bfloat16` scalar.
    U16(u16),
    /// Raw bytes of a by-value struct, e.g. a 128-byte `CUtensorMap` passed
    /// as `const __grid_constant__ CUtensorMap`. Kept 64-byte aligned.
    Bytes(Vec<u8>),
}

impl KernelArg {
    /// How many bytes the driver copies into the parameter.
    pub fn byte_len(&self) -> usize {
        match self {
            KernelArg::Ptr(_) | KernelArg::U64(_) | KernelArg::I64(_) | KernelArg::F64(_) => 8,
            KernelArg::I32(_) | KernelArg::U32(_) | KernelArg::F32(_) => 4,
            KernelArg::U16(_) => 2,
            KernelArg::Bytes(b) => b.len(),
        }
    }

    /// Writes the parameter's bytes into `out[..self.byte_len()]`.
    fn write_bytes(&self, out: &mut [u8]) {
        let n = self.byte_len();
        match self {
            KernelArg::Ptr(v) | KernelArg::U64(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::I32(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::U32(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::I64(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::F32(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::F64(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::U16(v) => out[..n].copy_from_slice(&v.to_ne_bytes()),
            KernelArg::Bytes(b) => out[..n].copy_from_slice(b),
        }
    }

    /// The bytes the driver copies into the parameter.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![0; self.byte_len()];
        self.write_bytes(&mut bytes);
        bytes
    }
}

impl From<&DeviceBuffer> for KernelArg {
    fn from(b: &DeviceBuffer) -> Self {
        KernelArg::Ptr(b.ptr())
    }
}

/// 64-byte aligned storage for one packed argument (`CUtensorMap` needs 64).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u8; 64]);

/// The argument values in the layout `cuLaunchKernel` expects: an array of
/// pointers, each to one argument's bytes. The pointees live in `storage`,
/// one run of 64-byte chunks per argument, starting at `first[i]`: a
/// launch packs its arguments with two allocations, not two per argument
/// (it runs at every launch of a kernel called in a loop).
struct PackedArgs {
    storage: Vec<Chunk>,
    first: Vec<usize>,
}

impl PackedArgs {
    fn new(args: &[KernelArg]) -> Self {
        let chunks_of = |a: &KernelArg| a.byte_len().div_ceil(64).max(1);
        let mut first = Vec::with_capacity(args.len());
        let mut chunks = 0;
        for a in args {
            first.push(chunks);
            chunks += chunks_of(a);
        }
        let mut storage = vec![Chunk([0; 64]); chunks];
        for (a, &at) in args.iter().zip(&first) {
            let n = chunks_of(a);
            // SAFETY: chunks `at..at + n` are `n * 64` initialized bytes
            // of `storage`, which `Chunk`'s `repr(C)` lays out densely.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(
                    storage[at..at + n].as_mut_ptr().cast::<u8>(),
                    n * 64,
                )
            };
            a.write_bytes(bytes);
        }
        PackedArgs { storage, first }
    }

    fn pointers(&mut self) -> Vec<*mut std::ffi::c_void> {
        let base = self.storage.as_mut_ptr();
        self.first
            .iter()
            // SAFETY: each `first` index is within `storage` (`new`).
            .map(|&at| unsafe { base.add(at) }.cast())
            .collect()
    }
}

/// Device memory owned by a [`Gpu`]'s stream; freed on drop.
pub struct DeviceBuffer {
    slice: CudaSlice<u8>,
    ptr: u64,
    len: usize,
}

impl DeviceBuffer {
    /// The device address, for [`KernelArg::Ptr`].
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({:#x}, {} bytes)", self.ptr, self.len)
    }
}

/// A kernel loaded into a [`Gpu`]'s context.
pub struct Kernel {
    name: String,
    func: CudaFunction,
    /// The dynamic shared memory limit set so far (opt-in above 48 KiB).
    dyn_smem_limit: AtomicU32,
    /// `(offset, size)` of each parameter, when the driver can tell
    /// (`cuFuncGetParamInfo`, CUDA 12.4+); used to check launches.
    params: Option<Vec<(usize, usize)>>,
}

impl Kernel {
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Registers per thread, as loaded.
    pub fn num_regs(&self) -> Result<i32, RuntimeError> {
        self.func
            .num_regs()
            .map_err(|e| drv("cuFuncGetAttribute", Some(&self.name), e))
    }
    /// Static shared memory in bytes.
    pub fn static_smem(&self) -> Result<i32, RuntimeError> {
        self.func
            .shared_size_bytes()
            .map_err(|e| drv("cuFuncGetAttribute", Some(&self.name), e))
    }
    /// Parameter sizes in bytes, when the driver reports them.
    pub fn param_sizes(&self) -> Option<Vec<usize>> {
        self.params
            .as_ref()
            .map(|p| p.iter().map(|&(_, s)| s).collect())
    }
}

/// Launch geometry. `cluster` launches with thread-block clusters
/// (`cuLaunchKernelEx` + `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`); the grid
/// must then be a multiple of it. `programmatic` launches as a
/// programmatic dependent of the kernel before it on the stream
/// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): the kernel
/// may start once every block of that one has issued
/// `griddepcontrol.launch_dependents` (or exited), so it must run
/// `griddepcontrol.wait` before it touches memory (what
/// `CodegenOptions::programmatic_launch` emits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_smem: u32,
    pub cluster: Option<[u32; 3]>,
    pub programmatic: bool,
}

/// The launch attribute asking for thread-block clusters of `cluster`.
fn cluster_attribute(cluster: [u32; 3]) -> CUlaunchAttribute {
    // SAFETY: all-zero is a valid bit pattern for this C union.
    let mut attr: CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster[0];
    attr.value.clusterDim.y = cluster[1];
    attr.value.clusterDim.z = cluster[2];
    attr
}

/// The launch attribute letting the kernel start before the one before
/// it on the stream has finished ([`LaunchConfig::programmatic`]).
fn programmatic_attribute() -> CUlaunchAttribute {
    // SAFETY: all-zero is a valid bit pattern for this C union.
    let mut attr: CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    attr
}

/// One CUDA device: primary context, one stream.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: usize,
    max_dyn_smem_optin: u32,
    last_kernel: Mutex<Option<String>>,
}

impl Gpu {
    /// True when a CUDA driver is installed and reports at least one device.
    /// Never panics, also without any NVIDIA software installed.
    pub fn available() -> bool {
        Self::device_count().is_ok_and(|n| n > 0)
    }

    /// Number of CUDA devices; [`RuntimeError::NoDriver`] without a driver.
    pub fn device_count() -> Result<usize, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::NoDriver);
        }
        guarded("cuDeviceGetCount", || {
            cu::init().map_err(|e| drv("cuInit", None, e))?;
            let n = cu::device::get_count().map_err(|e| drv("cuDeviceGetCount", None, e))?;
            Ok(n.max(0) as usize)
        })
    }

    /// Opens device `ordinal` (its primary context).
    pub fn new(ordinal: usize) -> Result<Gpu, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::NoDriver);
        }
        guarded("cuDevicePrimaryCtxRetain", || {
            let ctx = CudaContext::new(ordinal)
                .map_err(|e| drv(&format!("opening CUDA device {ordinal}"), None, e))?;
            // SAFETY: every buffer of this Gpu is used on its one stream only.
            unsafe { ctx.disable_event_tracking() };
            let stream = ctx.default_stream();
            let max_dyn_smem_optin = ctx
                .attribute(
                    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                )
                .map_err(|e| drv("cuDeviceGetAttribute", None, e))?
                .max(0) as u32;
            Ok(Gpu {
                ctx,
                stream,
                ordinal,
                max_dyn_smem_optin,
                last_kernel: Mutex::new(None),
            })
        })
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> Result<String, RuntimeError> {
        self.ctx.name().map_err(|e| drv("cuDeviceGetName", None, e))
    }

    /// `(major, minor)`, e.g. `(9, 0)` for Hopper.
    pub fn compute_capability(&self) -> Result<(i32, i32), RuntimeError> {
        self.ctx
            .compute_capability()
            .map_err(|e| drv("cuDeviceGetAttribute", None, e))
    }

    /// The stream every operation of this Gpu goes to (for cuBLAS).
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn attribute(&self, attr: CUdevice_attribute) -> Result<u32, RuntimeError> {
        self.ctx
            .attribute(attr)
            .map(|v| v.max(0) as u32)
            .map_err(|e| drv("cuDeviceGetAttribute", None, e))
    }

    /// The L2 cache size in bytes (50 MiB on an H100 SXM).
    pub fn l2_cache_bytes(&self) -> Result<u32, RuntimeError> {
        self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
    }

    /// The number of streaming multiprocessors (132 on an H100 SXM).
    pub fn sm_count(&self) -> Result<u32, RuntimeError> {
        self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    }

    /// 32-bit registers per SM (65536 on an H100).
    pub fn registers_per_sm(&self) -> Result<u32, RuntimeError> {
        self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)
    }

    /// Threads per warp (32).
    pub fn warp_size(&self) -> Result<u32, RuntimeError> {
        self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE)
    }

    /// The most shared memory one block can opt in to, in bytes.
    pub fn max_dyn_smem_optin(&self) -> u32 {
        self.max_dyn_smem_optin
    }

    fn last_kernel(&self) -> Option<String> {
        self.last_kernel.lock().map(|k| k.clone()).unwrap_or(None)
    }

    /// An error of asynchronous work: names the last kernel launched.
    fn async_err(&self, call: &str, e: DriverError) -> RuntimeError {
        let kernel = self.last_kernel();
        let mut message = describe(&e);
        if kernel.is_some() {
            message.push_str(" (reported for the last kernel launched: errors of asynchronous work surface at the next synchronizing call)");
        }
        RuntimeError::Driver {
            call: call.into(),
            kernel,
            message,
        }
    }

    /// Allocates `len` bytes, zeroed.
    pub fn alloc(&self, len: usize) -> Result<DeviceBuffer, RuntimeError> {
        // A zero-byte cuMemAlloc fails; hand out one byte that is never read.
        let slice = self
            .stream
            .alloc_zeros::<u8>(len.max(1))
            .map_err(|e| self.async_err("cuMemAlloc", e))?;
        let ptr = slice.device_ptr(&self.stream).0;
        Ok(DeviceBuffer { ptr, slice, len })
    }

    /// Allocates a buffer holding a copy of `bytes`.
    pub fn upload(&self, bytes: &[u8]) -> Result<DeviceBuffer, RuntimeError> {
        let mut buf = self.alloc(bytes.len())?;
        self.upload_into(&mut buf, bytes)?;
        Ok(buf)
    }

    /// Copies `bytes` to the start of `buf`.
    pub fn upload_into(&self, buf: &mut DeviceBuffer, bytes: &[u8]) -> Result<(), RuntimeError> {
        if bytes.len() > buf.len {
            return Err(RuntimeError::driver(
                "cuMemcpyHtoD",
                None,
                format!("{} bytes do not fit a {}-byte buffer", bytes.len(), buf.len),
            ));
        }
        if bytes.is_empty() {
            return Ok(());
        }
        let mut view = buf.slice.slice_mut(..bytes.len());
        self.stream
            .memcpy_htod(bytes, &mut view)
            .map_err(|e| self.async_err("cuMemcpyHtoD", e))
    }

    /// Copies the whole buffer back (waits for the stream).
    pub fn download(&self, buf: &DeviceBuffer) -> Result<Vec<u8>, RuntimeError> {
        let mut out = vec![0u8; buf.len];
        self.download_into(buf, &mut out)?;
        Ok(out)
    }

    /// Copies the first `out.len()` bytes of `buf` into `out`.
    pub fn download_into(&self, buf: &DeviceBuffer, out: &mut [u8]) -> Result<(), RuntimeError> {
        if out.len() > buf.len {
            return Err(RuntimeError::driver(
                "cuMemcpyDtoH",
                None,
                format!("asked for {} bytes of a {}-byte buffer", out.len(), buf.len),
            ));
        }
        if !out.is_empty() {
            let view = buf.slice.slice(..out.len());
            self.stream
                .memcpy_dtoh(&view, out)
                .map_err(|e| self.async_err("cuMemcpyDtoH", e))?;
        }
        self.synchronize()
    }

    /// Fills `buf` with `byte` (e.g. 0xFF to poison outputs, so a kernel
    /// that skips a store is caught).
    pub fn memset(&self, buf: &mut DeviceBuffer, byte: u8) -> Result<(), RuntimeError> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| drv("cuCtxSetCurrent", None, e))?;
        // SAFETY: `buf` owns `len` bytes at `ptr`, used on this stream only.
        unsafe { cu::memset_d8_async(buf.ptr, byte, buf.len, self.stream.cu_stream()) }
            .map_err(|e| self.async_err("cuMemsetD8Async", e))
    }

    /// Copies `len` bytes from the start of `src` to the start of `dst` on
    /// the device (asynchronous; the bandwidth baseline of `tawa-rs bench`).
    pub fn copy_device(
        &self,
        dst: &mut DeviceBuffer,
        src: &DeviceBuffer,
        len: usize,
    ) -> Result<(), RuntimeError> {
        if len > dst.len || len > src.len {
            return Err(RuntimeError::driver(
                "cuMemcpyDtoDAsync",
                None,
                format!(
                    "{len} bytes from a {}-byte buffer to a {}-byte one",
                    src.len, dst.len
                ),
            ));
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| drv("cuCtxSetCurrent", None, e))?;
        // SAFETY: both buffers own at least `len` bytes and are used on
        // this stream only.
        unsafe { cu::memcpy_dtod_async(dst.ptr, src.ptr, len, self.stream.cu_stream()) }
            .map_err(|e| self.async_err("cuMemcpyDtoDAsync", e))
    }

    /// Loads `compiled`'s cubin and looks up `kernel_name` in it.
    pub fn load(&self, compiled: &Compiled, kernel_name: &str) -> Result<Kernel, RuntimeError> {
        if kernel_name.contains('\0') {
            return Err(RuntimeError::KernelNotFound {
                kernel: kernel_name.into(),
                entries: Vec::new(),
            });
        }
        guarded("cuModuleLoadData", || {
            let module = self
                .ctx
                .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin.clone()))
                .map_err(|e| drv("cuModuleLoadData", Some(kernel_name), e))?;
            let func = module
                .load_function(kernel_name)
                .map_err(|e| drv("cuModuleGetFunction", Some(kernel_name), e))?;
            let params = entry_param_count(&compiled.ptx, kernel_name)
                .and_then(|count| param_info(&func, count));
            Ok(Kernel {
                name: kernel_name.into(),
                func,
                dyn_smem_limit: AtomicU32::new(DEFAULT_DYN_SMEM_LIMIT),
                params,
            })
        })
    }

    /// Launches `kernel` on this Gpu's stream (asynchronous).
    pub fn launch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        dyn_smem: u32,
        args: &[KernelArg],
    ) -> Result<(), RuntimeError> {
        self.launch_with(
            kernel,
            &LaunchConfig {
                grid,
                block,
                dyn_smem,
                cluster: None,
                programmatic: false,
            },
            args,
        )
    }

    /// [`Gpu::launch`] with a full [`LaunchConfig`] (clusters).
    pub fn launch_with(
        &self,
        kernel: &Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<(), RuntimeError> {
        self.launch_in(kernel, cfg, args, self.stream.cu_stream())
    }

    /// [`Gpu::launch_with`] on another stream of this device's primary
    /// context, given by its raw `CUstream` handle (0: the legacy default
    /// stream), e.g. the caller's current PyTorch stream
    /// (`torch.cuda.current_stream().cuda_stream`): a library launching
    /// for a framework must order its kernels with the framework's work.
    /// The handle must name a live stream of this Gpu's context; the
    /// launch is asynchronous and [`Gpu::synchronize`] does not wait for
    /// it.
    pub fn launch_on_stream(
        &self,
        kernel: &Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
        stream: usize,
    ) -> Result<(), RuntimeError> {
        self.launch_in(kernel, cfg, args, stream as sys::CUstream)
    }

    fn launch_in(
        &self,
        kernel: &Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
        stream: sys::CUstream,
    ) -> Result<(), RuntimeError> {
        let name = kernel.name.as_str();
        let invalid = |message: String| RuntimeError::InvalidLaunch {
            kernel: name.into(),
            message,
        };
        if cfg.grid.contains(&0) || cfg.block.contains(&0) {
            return Err(invalid(format!(
                "grid {:?} and block {:?} must be non-zero",
                cfg.grid, cfg.block
            )));
        }
        if let Some(cluster) = cfg.cluster {
            // `%`, not `is_multiple_of`: the workspace's rust-version is 1.85.
            #[allow(clippy::manual_is_multiple_of)]
            if cluster.contains(&0) || (0..3).any(|i| cfg.grid[i] % cluster[i] != 0) {
                return Err(invalid(format!(
                    "grid {:?} is not a multiple of cluster {cluster:?}",
                    cfg.grid
                )));
            }
        }
        if let Some(params) = &kernel.params {
            if params.len() != args.len() {
                return Err(invalid(format!(
                    "{} arguments given, the kernel takes {}",
                    args.len(),
                    params.len()
                )));
            }
            for (i, (arg, &(_, size))) in args.iter().zip(params).enumerate() {
                let given = arg.byte_len();
                if given != size {
                    return Err(invalid(format!(
                        "argument {i} ({arg:?}) is {given} bytes, the parameter is {size}"
                    )));
                }
            }
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| drv("cuCtxSetCurrent", Some(name), e))?;
        self.ensure_dyn_smem(kernel, cfg.dyn_smem)?;

        let mut packed = PackedArgs::new(args);
        let mut pointers = packed.pointers();
        let result = match (cfg.cluster, cfg.programmatic) {
            (None, false) => {
                // SAFETY: `pointers` has one pointer per kernel parameter
                // (checked above when the driver reports parameters), each
                // to a value of the parameter's size, alive for the call.
                unsafe {
                    cu::launch_kernel(
                        kernel.func.cu_function(),
                        (cfg.grid[0], cfg.grid[1], cfg.grid[2]),
                        (cfg.block[0], cfg.block[1], cfg.block[2]),
                        cfg.dyn_smem,
                        stream,
                        &mut pointers,
                    )
                }
                .map_err(|e| drv("cuLaunchKernel", Some(name), e))
            }
            (cluster, programmatic) => guarded("cuLaunchKernelEx", || {
                let mut attrs: Vec<CUlaunchAttribute> = cluster
                    .map(cluster_attribute)
                    .into_iter()
                    .chain(programmatic.then(programmatic_attribute))
                    .collect();
                let config = CUlaunchConfig {
                    gridDimX: cfg.grid[0],
                    gridDimY: cfg.grid[1],
                    gridDimZ: cfg.grid[2],
                    blockDimX: cfg.block[0],
                    blockDimY: cfg.block[1],
                    blockDimZ: cfg.block[2],
                    sharedMemBytes: cfg.dyn_smem,
                    hStream: stream,
                    attrs: attrs.as_mut_ptr(),
                    numAttrs: attrs.len() as u32,
                };
                // SAFETY: as for cuLaunchKernel; `attrs` outlives the call.
                unsafe {
                    sys::cuLaunchKernelEx(
                        &config,
                        kernel.func.cu_function(),
                        pointers.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                }
                .result()
                .map_err(|e| drv("cuLaunchKernelEx", Some(name), e))
            }),
        };
        if let Ok(mut last) = self.last_kernel.lock() {
            // Named again only when it changes: no allocation for a
            // kernel launched in a loop.
            if last.as_deref() != Some(name) {
                *last = Some(name.to_string());
            }
        }
        result
    }

    /// How many clusters of `cluster` blocks (each `block` threads with
    /// `dyn_smem` bytes of dynamic shared memory) can be resident on the
    /// device at once (`cuOccupancyMaxActiveClusters`): the grid a
    /// persistent clustered kernel should launch is this many clusters.
    /// Opts the kernel in to `dyn_smem` first, as a launch would, since the
    /// driver answers for the kernel's current shared memory limit.
    pub fn max_active_clusters(
        &self,
        kernel: &Kernel,
        cluster: [u32; 3],
        block: [u32; 3],
        dyn_smem: u32,
    ) -> Result<u32, RuntimeError> {
        let name = kernel.name.as_str();
        if cluster.contains(&0) || block.contains(&0) {
            return Err(RuntimeError::InvalidLaunch {
                kernel: name.into(),
                message: format!("cluster {cluster:?} and block {block:?} must be non-zero"),
            });
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| drv("cuCtxSetCurrent", Some(name), e))?;
        self.ensure_dyn_smem(kernel, dyn_smem)?;
        guarded("cuOccupancyMaxActiveClusters", || {
            let mut attr = cluster_attribute(cluster);
            // The answer does not depend on the grid; one cluster is a
            // grid the cluster divides, as a launch would need.
            let config = CUlaunchConfig {
                gridDimX: cluster[0],
                gridDimY: cluster[1],
                gridDimZ: cluster[2],
                blockDimX: block[0],
                blockDimY: block[1],
                blockDimZ: block[2],
                sharedMemBytes: dyn_smem,
                hStream: self.stream.cu_stream(),
                attrs: &mut attr,
                numAttrs: 1,
            };
            let mut count: std::ffi::c_int = 0;
            // SAFETY: a valid function handle, a config whose one attribute
            // outlives the call, and an out-pointer.
            unsafe {
                sys::cuOccupancyMaxActiveClusters(&mut count, kernel.func.cu_function(), &config)
            }
            .result()
            .map_err(|e| drv("cuOccupancyMaxActiveClusters", Some(name), e))?;
            Ok(count.max(0) as u32)
        })
    }

    /// How many blocks of `kernel` (`threads` each, `dyn_smem` bytes of
    /// dynamic shared memory) one SM holds at once
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`): what a persistent
    /// kernel compiled for several blocks an SM can really have. Opts the
    /// kernel in to `dyn_smem` first, as a launch would.
    pub fn max_active_blocks_per_sm(
        &self,
        kernel: &Kernel,
        threads: u32,
        dyn_smem: u32,
    ) -> Result<u32, RuntimeError> {
        let name = kernel.name.as_str();
        self.ctx
            .bind_to_thread()
            .map_err(|e| drv("cuCtxSetCurrent", Some(name), e))?;
        self.ensure_dyn_smem(kernel, dyn_smem)?;
        guarded("cuOccupancyMaxActiveBlocksPerMultiprocessor", || {
            let mut count: std::ffi::c_int = 0;
            // SAFETY: a valid function handle and an out-pointer.
            unsafe {
                sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &mut count,
                    kernel.func.cu_function(),
                    threads as std::ffi::c_int,
                    dyn_smem as usize,
                )
            }
            .result()
            .map_err(|e| drv("cuOccupancyMaxActiveBlocksPerMultiprocessor", Some(name), e))?;
            Ok(count.max(0) as u32)
        })
    }

    /// Opts `kernel` in to `dyn_smem` bytes of dynamic shared memory when
    /// that is above the 48 KiB default (once per new maximum).
    fn ensure_dyn_smem(&self, kernel: &Kernel, dyn_smem: u32) -> Result<(), RuntimeError> {
        if dyn_smem <= kernel.dyn_smem_limit.load(Ordering::Relaxed) {
            return Ok(());
        }
        let static_smem = kernel.static_smem().unwrap_or(0).max(0) as u32;
        if dyn_smem.saturating_add(static_smem) > self.max_dyn_smem_optin {
            return Err(RuntimeError::InvalidLaunch {
                kernel: kernel.name.clone(),
                message: format!(
                    "{dyn_smem} bytes of dynamic shared memory + {static_smem} static exceed the device's {} per block",
                    self.max_dyn_smem_optin
                ),
            });
        }
        kernel
            .func
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                dyn_smem as i32,
            )
            .map_err(|e| {
                drv(
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                    Some(&kernel.name),
                    e,
                )
            })?;
        kernel.dyn_smem_limit.store(dyn_smem, Ordering::Relaxed);
        Ok(())
    }

    /// Waits for all work on the stream. A failure names the last kernel
    /// launched, since that is almost always the culprit.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        self.stream
            .synchronize()
            .map_err(|e| self.async_err("cuStreamSynchronize", e))
    }

    /// Waits for all work of the context, on every stream: kernels this
    /// runtime launched on streams it does not own (the Python package
    /// launches on PyTorch's) included.
    pub fn synchronize_context(&self) -> Result<(), RuntimeError> {
        self.ctx
            .synchronize()
            .map_err(|e| self.async_err("cuCtxSynchronize", e))
    }

    /// Runs `launch` `n` times, each between two CUDA events on the stream,
    /// and returns the milliseconds of each run. `launch` should enqueue
    /// work (e.g. call [`Gpu::launch`]) and not synchronize.
    pub fn time_launches(
        &self,
        n: usize,
        mut launch: impl FnMut(&Gpu) -> Result<(), RuntimeError>,
    ) -> Result<Vec<f32>, RuntimeError> {
        let event = || {
            self.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| drv("cuEventCreate", None, e))
        };
        let events: Vec<_> = (0..=n).map(|_| event()).collect::<Result<_, _>>()?;
        let record = |ev: &cudarc::driver::CudaEvent| {
            ev.record(&self.stream)
                .map_err(|e| drv("cuEventRecord", None, e))
        };
        record(&events[0])?;
        for ev in &events[1..] {
            launch(self)?;
            record(ev)?;
        }
        self.synchronize()?;
        events
            .windows(2)
            .map(|w| {
                w[0].elapsed_ms(&w[1])
                    .map_err(|e| self.async_err("cuEventElapsedTime", e))
            })
            .collect()
    }
}

/// One kind of work timed by [`Gpu::time_interleaved`]: enqueues one run
/// (the argument is the round number).
pub type TimedWork<'a> = dyn FnMut(&Gpu, usize) -> Result<(), RuntimeError> + 'a;

impl Gpu {
    /// Interleaved timing: `rounds` times, runs each of `work` in turn,
    /// each between its own pair of CUDA events, and returns the
    /// milliseconds of every run, `result[w][round]`. Interleaving puts a
    /// kernel and its baseline under the same clocks and power state.
    /// Each closure gets the round number (to rotate buffers) and must only
    /// enqueue work.
    pub fn time_interleaved(
        &self,
        rounds: usize,
        work: &mut [&mut TimedWork<'_>],
    ) -> Result<Vec<Vec<f32>>, RuntimeError> {
        let event = || {
            self.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| drv("cuEventCreate", None, e))
        };
        let mut pairs: Vec<Vec<(cudarc::driver::CudaEvent, cudarc::driver::CudaEvent)>> = (0..work
            .len())
            .map(|_| Vec::with_capacity(rounds))
            .collect();
        for round in 0..rounds {
            for (w, f) in work.iter_mut().enumerate() {
                let (start, end) = (event()?, event()?);
                start
                    .record(&self.stream)
                    .map_err(|e| drv("cuEventRecord", None, e))?;
                f(self, round)?;
                end.record(&self.stream)
                    .map_err(|e| drv("cuEventRecord", None, e))?;
                pairs[w].push((start, end));
            }
        }
        self.synchronize()?;
        pairs
            .iter()
            .map(|runs| {
                runs.iter()
                    .map(|(a, b)| {
                        a.elapsed_ms(b)
                            .map_err(|e| self.async_err("cuEventElapsedTime", e))
                    })
                    .collect()
            })
            .collect()
    }
}

/// Parameter offsets and sizes of the `count` parameters via
/// `cuFuncGetParamInfo` (CUDA 12.4+); `None` when this driver cannot say.
/// The count comes from the PTX ([`entry_param_count`]): probing past the
/// last parameter would end on an error return, which compute-sanitizer
/// reports as an API error on every launch.
fn param_info(func: &CudaFunction, count: usize) -> Option<Vec<(usize, usize)>> {
    let f = func.cu_function();
    catch_unwind(move || {
        let mut params = Vec::with_capacity(count);
        for index in 0..count {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: valid function handle and out-pointers.
            let rc = unsafe { sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size) };
            if rc != sys::CUresult::CUDA_SUCCESS {
                return None;
            }
            params.push((offset, size));
        }
        Some(params)
    })
    .ok()
    .flatten()
}

/// Number of `.param`s of `.entry kernel(...)` in PTX text.
fn entry_param_count(ptx: &str, kernel: &str) -> Option<usize> {
    let entry = format!(".entry {kernel}(");
    let start = ptx.find(&entry)? + entry.len();
    let end = start + ptx[start..].find(')')?;
    Some(ptx[start..end].matches(".param").count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_parameters_are_counted_from_ptx() {
        let ptx = ".visible .entry other(\n.param .u32 a\n)\n.visible .entry k(\n\t.param .u64 .ptr .align 1 k_param_0,\n\t.param .u32 k_param_1\n)\n{\n}";
        assert_eq!(entry_param_count(ptx, "k"), Some(2));
        assert_eq!(entry_param_count(ptx, "other"), Some(1));
        assert_eq!(entry_param_count(ptx, "missing"), None);
        let none = ".visible .entry empty(\n)\n{\n}";
        assert_eq!(entry_param_count(none, "empty"), Some(0));
    }

    #[test]
    fn args_pack_little_endian_into_aligned_slots() {
        let args = [
            KernelArg::I32(-2),
            KernelArg::Ptr(0x1122_3344_5566_7788),
            KernelArg::F32(1.5),
            KernelArg::Bytes(vec![7; 128]),
            KernelArg::U16(0xbeef),
        ];
        let mut packed = PackedArgs::new(&args);
        let ptrs = packed.pointers();
        assert_eq!(ptrs.len(), 5);
        // The 128-byte map takes two chunks; the next argument follows.
        assert_eq!(ptrs[4] as usize - ptrs[3] as usize, 128);
        for p in &ptrs {
            assert_eq!(*p as usize % 64, 0);
        }
        // SAFETY: each pointer points at at least 64 initialized bytes.
        let read = |i: usize, n: usize| unsafe {
            std::slice::from_raw_parts(ptrs[i] as *const u8, n).to_vec()
        };
        assert_eq!(read(0, 4), (-2i32).to_ne_bytes());
        assert_eq!(read(1, 8), 0x1122_3344_5566_7788u64.to_ne_bytes());
        assert_eq!(read(2, 4), 1.5f32.to_ne_bytes());
        assert_eq!(read(3, 128), vec![7u8; 128]);
        assert_eq!(read(4, 2), 0xbeefu16.to_ne_bytes());
        for a in &args {
            assert_eq!(a.to_bytes().len(), a.byte_len());
        }
    }

    #[test]
    fn available_never_panics() {
        // On CI (no driver) this is false; on the GPU machine true. Either
        // way it must return.
        let _ = Gpu::available();
    }
}
