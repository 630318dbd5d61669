//! A case's launch arguments bound to a compiled kernel's parameters.
//!
//! The case lists one argument per non-constexpr parameter of the Python
//! function (`Case::launch_args`); the compiled kernel may take fewer: the
//! frontend specializes some away (an integer argument equal to 1 becomes a
//! constant, as Triton does) and expands a tensor descriptor `x` into
//! `x_base`, `x_shape0..`, `x_stride0..`. So arguments are matched to the
//! kernel's parameters by name, in the kernel's order; an argument without
//! a parameter is dropped, a parameter without an argument is an error.
//! The same binding feeds the interpreter ([`ArgValue`]) and the GPU
//! ([`KernelArg`]).
//!
//! A kernel with TMA copies also takes tensor maps after its parameters
//! ([`tawa_backend::KernelSource::tensor_maps`]); [`tensor_map_specs`]
//! evaluates their recipes over the same bound arguments, so the maps
//! always describe the buffers and sizes the launch passes.

use std::collections::BTreeMap;

use std::cell::Cell;

use tawa_backend::runtime::tensor_map::{TensorMapSpec, TmaL2Promotion, TmaSwizzle};
use tawa_backend::runtime::{DeviceBuffer, Gpu, KernelArg, LaunchConfig};
use tawa_backend::{HostExpr, KernelParam, KernelSource, ParamType, TensorMapParam};
use tawa_ir::interp::ArgValue;
use tawa_ir::ScalarType;
use triton_examples::{Case, LaunchArg};

/// The launch geometry of `kernel` asked for `grid` with arguments
/// `bound` on a device running `resident` of its programs at once: the
/// grid it starts ([`KernelSource::launch_grid_for`]), its threads, shared
/// memory and clusters ([`KernelSource::launch_cluster`]).
///
/// `TAWA_WAVE_BALANCE=0` starts a persistent kernel's `resident` programs
/// even where fewer walk its tiles in as many waves (the ablation
/// baseline of [`tawa_backend::codegen::wave_balanced`]); the variable is
/// read once, at a process's first launch.
pub fn launch_config(
    kernel: &KernelSource,
    grid: [u32; 3],
    resident: u32,
    bound: &[BoundArg],
) -> LaunchConfig {
    static BALANCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let balance = *BALANCE
        .get_or_init(|| std::env::var("TAWA_WAVE_BALANCE").map_or(true, |v| v.trim() != "0"));
    // A kernel walking its own tiles counts them from its arguments.
    let param = |i: usize| match bound.get(i).map(|b| &b.source) {
        Some(ArgSource::Int(v)) => Some(*v),
        _ => None,
    };
    LaunchConfig {
        grid: kernel.launch_grid_for(grid, resident, balance, &param),
        block: [kernel.num_threads, 1, 1],
        dyn_smem: kernel.dyn_smem_bytes,
        cluster: kernel.launch_cluster(grid, resident),
        programmatic: kernel.programmatic_launch,
    }
}

/// Where one parameter's value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgSource {
    /// The address of the tensor (or pointer array) of this name.
    Buffer(String),
    Int(i64),
    Float(f64),
}

/// One kernel parameter with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundArg {
    pub param: String,
    pub ty: ParamType,
    pub source: ArgSource,
}

/// The case's arguments, expanded as the frontend lays out parameters
/// (descriptors into base, shapes and strides), by parameter name.
fn expanded_args(case: &Case) -> Result<Vec<(String, ArgSource)>, String> {
    let mut out = Vec::new();
    for (name, arg) in case.launch_args()? {
        match arg {
            LaunchArg::Tensor(t) => out.push((name, ArgSource::Buffer(t))),
            LaunchArg::PtrArray(_) => out.push((name.clone(), ArgSource::Buffer(name))),
            LaunchArg::Int { value, .. } => out.push((name, ArgSource::Int(value))),
            LaunchArg::Float { value, .. } => out.push((name, ArgSource::Float(value))),
            LaunchArg::Desc {
                of, shape, strides, ..
            } => {
                out.push((format!("{name}_base"), ArgSource::Buffer(of)));
                for (d, s) in shape.iter().enumerate() {
                    out.push((format!("{name}_shape{d}"), ArgSource::Int(*s)));
                }
                for (d, s) in strides.iter().enumerate() {
                    out.push((format!("{name}_stride{d}"), ArgSource::Int(*s)));
                }
            }
        }
    }
    Ok(out)
}

/// Binds the case's arguments to `params` (the compiled kernel's, in its
/// order). See the module docs.
pub fn bind_launch_args(case: &Case, params: &[KernelParam]) -> Result<Vec<BoundArg>, String> {
    bind_with(case, params, Vec::new())
}

/// [`bind_launch_args`] for a compiled kernel, whose launch contract may
/// add parameters: a persistent kernel's grid parameters get the x (and
/// y) size of the case's grid.
pub fn bind_kernel_args(case: &Case, kernel: &KernelSource) -> Result<Vec<BoundArg>, String> {
    let mut extra = Vec::new();
    for (axis, param) in [kernel.grid_param, kernel.grid_param_y, kernel.grid_param_z]
        .into_iter()
        .enumerate()
    {
        if let Some(i) = param {
            let name = kernel
                .params
                .get(i)
                .ok_or("internal: grid parameter out of range")?;
            extra.push((name.name.clone(), ArgSource::Int(case.grid()?[axis] as i64)));
        }
    }
    // The walk's step: the source's until `launch_args` knows the launch.
    if let Some(w) = &kernel.own_walk {
        let name = kernel
            .params
            .get(w.step_param)
            .ok_or("internal: the walk's step parameter is out of range")?;
        extra.push((name.name.clone(), ArgSource::Int(i64::from(w.asked))));
    }
    bind_with(case, &kernel.params, extra)
}

fn bind_with(
    case: &Case,
    params: &[KernelParam],
    extra: Vec<(String, ArgSource)>,
) -> Result<Vec<BoundArg>, String> {
    let mut args: BTreeMap<String, ArgSource> = expanded_args(case)?.into_iter().collect();
    args.extend(extra);
    bind_by_name(params, &args, &format!("case `{}`", case.name))
}

/// Binds named arguments (expanded as the frontend lays out parameters:
/// descriptors into `_base`, `_shapeD`, `_strideD`) to `params`, in the
/// kernel's order: arguments without a parameter are dropped, a parameter
/// without an argument or of another kind is an error naming `launch`
/// (e.g. "case `x`"). The launch cases of `run` and the Python package's
/// calls both bind here.
pub fn bind_by_name(
    params: &[KernelParam],
    args: &BTreeMap<String, ArgSource>,
    launch: &str,
) -> Result<Vec<BoundArg>, String> {
    params
        .iter()
        .map(|p| {
            let source = args.get(&p.name).cloned().ok_or_else(|| {
                format!(
                    "kernel parameter `{}` has no launch argument in {launch} (arguments: {})",
                    p.name,
                    args.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            })?;
            match (&p.ty, &source) {
                (ParamType::Ptr(_), ArgSource::Buffer(_))
                | (ParamType::Scalar(_), ArgSource::Int(_) | ArgSource::Float(_)) => {}
                _ => {
                    return Err(format!(
                        "kernel parameter `{}` of type {:?} cannot take {source:?}",
                        p.name, p.ty
                    ))
                }
            }
            Ok(BoundArg {
                param: p.name.clone(),
                ty: p.ty,
                source,
            })
        })
        .collect()
}

/// A scalar in the parameter's own type and width, as `emit_cuda` declares
/// it (`bool` and `char` are one byte, `__half`/`bf16` their bits).
fn scalar_arg(param: &str, ty: ScalarType, source: &ArgSource) -> Result<KernelArg, String> {
    let int = |v: i64, lo: i64, hi: i64| -> Result<i64, String> {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(format!("`{param}` = {v} does not fit {ty}"))
        }
    };
    let value = match source {
        ArgSource::Int(v) => *v as f64,
        ArgSource::Float(v) => *v,
        ArgSource::Buffer(_) => return Err(format!("`{param}`: a buffer for a scalar")),
    };
    let int_value = match source {
        ArgSource::Int(v) => Some(*v),
        _ => None,
    };
    let need_int = || int_value.ok_or_else(|| format!("`{param}`: a float for {ty}"));
    Ok(match ty {
        ScalarType::I1 => KernelArg::Bytes(vec![(need_int()? != 0) as u8]),
        ScalarType::I8 => KernelArg::Bytes(vec![int(need_int()?, -128, 127)? as i8 as u8]),
        ScalarType::U8 => KernelArg::Bytes(vec![int(need_int()?, 0, 255)? as u8]),
        ScalarType::I16 => KernelArg::U16(int(need_int()?, -32768, 32767)? as i16 as u16),
        ScalarType::U16 => KernelArg::U16(int(need_int()?, 0, 65535)? as u16),
        ScalarType::I32 => {
            KernelArg::I32(int(need_int()?, i32::MIN as i64, i32::MAX as i64)? as i32)
        }
        ScalarType::U32 => KernelArg::U32(int(need_int()?, 0, u32::MAX as i64)? as u32),
        ScalarType::I64 => KernelArg::I64(need_int()?),
        ScalarType::U64 => KernelArg::U64(int(need_int()?, 0, i64::MAX)? as u64),
        ScalarType::F32 => KernelArg::F32(value as f32),
        ScalarType::F64 => KernelArg::F64(value),
        ScalarType::F16 | ScalarType::BF16 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => {
            let bits = super::check::encode(ty, &[value]);
            if bits.len() == 2 {
                KernelArg::U16(u16::from_le_bytes([bits[0], bits[1]]))
            } else {
                KernelArg::Bytes(bits)
            }
        }
    })
}

/// The GPU arguments: buffers by name give device addresses.
pub fn kernel_args(
    bound: &[BoundArg],
    address: &dyn Fn(&str) -> Option<u64>,
) -> Result<Vec<KernelArg>, String> {
    bound
        .iter()
        .map(|b| match (&b.ty, &b.source) {
            (ParamType::Ptr(_), ArgSource::Buffer(name)) => address(name)
                .map(KernelArg::Ptr)
                .ok_or_else(|| format!("`{}`: no buffer `{name}`", b.param)),
            (ParamType::Scalar(st), source) => scalar_arg(&b.param, *st, source),
            (ty, source) => Err(format!("`{}`: {ty:?} cannot take {source:?}", b.param)),
        })
        .collect()
}

/// The name under which [`tensor_map_specs`] finds the workspace of a
/// kernel's device-built tensor maps (no launch argument can have it: it
/// is no Python identifier). Their templates are encoded over it.
pub const DEVICE_MAP_WORKSPACE: &str = "<tensor-map workspace>";

/// The global-memory workspaces of a kernel's launches, kept by the
/// caller across launches: reused while large enough, replaced
/// otherwise (once the context's work on every stream is done, so that
/// no running launch reads the freed one); launches that share them must
/// not overlap (one stream).
///
/// They also keep the tensor maps the last launch encoded, by map: a map
/// is a pure function of its spec, and a kernel called in a loop passes
/// the same buffers and sizes every time, so [`launch_args`] reuses the
/// bytes where the spec is equal instead of asking the driver again
/// (`cuTensorMapEncodeTiled` is a good part of a small launch's host time).
#[derive(Default)]
pub struct Workspaces {
    /// The tensor maps a kernel builds on the device (contents need no
    /// initialization: each program builds its maps at its first copy).
    pub tensor_maps: Option<DeviceBuffer>,
    /// A stream-K kernel's partial sums and flags: zeroed when allocated,
    /// and each launch leaves its flags zero again.
    pub stream_k: Option<DeviceBuffer>,
    /// The last launch's encoded tensor maps, one per map of the kernel,
    /// with the spec each was encoded from.
    encoded_maps: Vec<Option<(TensorMapSpec, KernelArg)>>,
}

impl Workspaces {
    /// Map `index` encoded for `spec`: the last launch's bytes where it
    /// had the same spec, `encode`'s (the driver's) otherwise.
    fn encoded_map(
        &mut self,
        index: usize,
        spec: TensorMapSpec,
        encode: impl FnOnce(&TensorMapSpec) -> Result<KernelArg, String>,
    ) -> Result<KernelArg, String> {
        if self.encoded_maps.len() <= index {
            self.encoded_maps.resize(index + 1, None);
        }
        let slot = &mut self.encoded_maps[index];
        if let Some((last, bytes)) = slot {
            if *last == spec {
                return Ok(bytes.clone());
            }
        }
        let bytes = encode(&spec)?;
        *slot = Some((spec, bytes.clone()));
        Ok(bytes)
    }
}

/// `bytes_per * programs` of `grid` as a byte count.
fn per_program(bytes_per: u64, grid: [u32; 3], what: &str) -> Result<usize, String> {
    grid.iter()
        .try_fold(bytes_per, |n, &g| n.checked_mul(u64::from(g)))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("the {what} of the grid overflows"))
}

/// `buffer`, replaced by a fresh zeroed allocation of `bytes` unless it
/// holds that many already.
fn ensure<'w>(
    gpu: &Gpu,
    buffer: &'w mut Option<DeviceBuffer>,
    bytes: usize,
    what: &str,
) -> Result<&'w DeviceBuffer, String> {
    if buffer.as_ref().is_none_or(|w| w.len() < bytes) {
        if buffer.is_some() {
            // The buffer it replaces is freed on the context's own stream,
            // but launches on other streams (the Python package's, on
            // PyTorch's) may still be reading it: wait for every stream
            // first. Workspaces grow a few times a process at most.
            gpu.synchronize_context()
                .map_err(|e| format!("replacing the {what}: {e}"))?;
        }
        let fresh = gpu
            .alloc(bytes)
            .map_err(|e| format!("allocating the {what}: {e}"))?;
        // The allocation is ordered on the context's own stream; a
        // launch on another stream must find it done.
        gpu.synchronize()
            .map_err(|e| format!("allocating the {what}: {e}"))?;
        *buffer = Some(fresh);
    }
    Ok(buffer.as_ref().expect("allocated above"))
}

/// Everything `kernel` is launched with: the parameters' arguments
/// ([`kernel_args`]), then its TMA tensor maps encoded for the buffers'
/// addresses (each set of buffers needs its own maps), then, for a kernel
/// that builds tensor maps on the device, the address of its workspace
/// (`KernelSource::device_map_workspace` bytes per program of `grid`, the
/// grid asked for, which covers the programs started), then, for a
/// stream-K kernel, the address of its workspace
/// (`KernelSource::stream_k_workspace` bytes and a flag per program of
/// `launched`, the grid started). Both are `workspaces`'.
pub fn launch_args(
    gpu: &Gpu,
    kernel: &KernelSource,
    bound: &[BoundArg],
    grid: [u32; 3],
    launched: [u32; 3],
    address: &dyn Fn(&str) -> Option<u64>,
    workspaces: &mut Workspaces,
) -> Result<Vec<KernelArg>, String> {
    let mut args = kernel_args(bound, address)?;
    // A kernel walking its own tiles steps by the programs started where
    // the launch started fewer than the source's step.
    if let (Some(w), Some(step)) = (&kernel.own_walk, kernel.walk_step(grid, launched)) {
        let step = i32::try_from(step).map_err(|_| "the walk's step overflows an i32")?;
        *args
            .get_mut(w.step_param)
            .ok_or("internal: the walk's step parameter is out of range")? = KernelArg::I32(step);
    }
    if kernel.device_map_workspace > 0 {
        let what = "tensor-map workspace";
        let bytes = per_program(u64::from(kernel.device_map_workspace), grid, what)?;
        ensure(gpu, &mut workspaces.tensor_maps, bytes, what)?;
    }
    let ws = workspaces.tensor_maps.as_ref().map(DeviceBuffer::ptr);
    let address = |name: &str| match name {
        DEVICE_MAP_WORKSPACE => ws,
        _ => address(name),
    };
    let specs = tensor_map_specs(&kernel.tensor_maps, bound, grid, &address)?;
    for (i, (map, spec)) in kernel.tensor_maps.iter().zip(specs).enumerate() {
        args.push(
            workspaces
                .encoded_map(i, spec, |spec| spec.encode(gpu).map_err(|e| e.to_string()))
                .map_err(|e| format!("tensor map `{}`: {e}", map.name))?,
        );
    }
    if kernel.device_map_workspace > 0 {
        args.push(KernelArg::Ptr(
            ws.ok_or("internal: no tensor-map workspace")?,
        ));
    }
    if kernel.stream_k_workspace > 0 {
        use tawa_backend::emit_cuda::stream_k_lower::{STREAM_K_FLAG_BYTES, STREAM_K_MAX_PROGRAMS};
        let what = "stream-K workspace";
        let programs = per_program(1, launched, what)?;
        if programs > STREAM_K_MAX_PROGRAMS as usize {
            return Err(format!(
                "a stream-K launch of {programs} programs: its workspace has flags for {STREAM_K_MAX_PROGRAMS}"
            ));
        }
        let bytes = per_program(u64::from(kernel.stream_k_workspace), launched, what)?
            .checked_add(STREAM_K_FLAG_BYTES as usize)
            .ok_or_else(|| format!("the {what} of the grid overflows"))?;
        let buffer = ensure(gpu, &mut workspaces.stream_k, bytes, what)?;
        args.push(KernelArg::Ptr(buffer.ptr()));
    }
    Ok(args)
}

/// The interpreter's arguments: buffers by name give simulated addresses.
pub fn interp_args(
    bound: &[BoundArg],
    address: &dyn Fn(&str) -> Option<u64>,
) -> Result<Vec<ArgValue>, String> {
    bound
        .iter()
        .map(|b| match &b.source {
            ArgSource::Buffer(name) => address(name)
                .map(ArgValue::Ptr)
                .ok_or_else(|| format!("`{}`: no buffer `{name}`", b.param)),
            ArgSource::Int(v) => Ok(ArgValue::Int(*v)),
            ArgSource::Float(v) => Ok(ArgValue::Float(*v)),
        })
        .collect()
}

/// The runtime spec of each of a kernel's tensor maps (`maps`, in order)
/// for the launch `bound` describes (one bound argument per kernel
/// parameter, in the kernel's order, as [`bind_launch_args`] gives them):
/// the base is the address of the buffer bound to the map's pointer
/// parameter, extents and strides are the map's expressions over the bound
/// integer arguments, strides turned from elements into bytes. Each spec
/// is validated, so a map the driver would refuse is an error naming the
/// map before any GPU call.
pub fn tensor_map_specs(
    maps: &[TensorMapParam],
    bound: &[BoundArg],
    grid: [u32; 3],
    address: &dyn Fn(&str) -> Option<u64>,
) -> Result<Vec<TensorMapSpec>, String> {
    maps.iter()
        .map(|map| tensor_map_spec(map, bound, grid, address))
        .collect()
}

fn tensor_map_spec(
    map: &TensorMapParam,
    bound: &[BoundArg],
    grid: [u32; 3],
    address: &dyn Fn(&str) -> Option<u64>,
) -> Result<TensorMapSpec, String> {
    if map.device_built {
        // A template: its extents and strides are constants, its address
        // any the driver accepts (the kernel replaces all three).
        let what = || format!("tensor map template `{}`", map.name);
        let base = address(DEVICE_MAP_WORKSPACE).ok_or_else(|| {
            format!(
                "{}: no workspace for tensor maps built on the device",
                what()
            )
        })?;
        return tensor_map_spec_at(map, base, bound, grid, &what);
    }
    let base_arg = bound.get(map.base).ok_or_else(|| {
        format!(
            "tensor map `{}`: base parameter {} does not exist (the kernel has {})",
            map.name,
            map.base,
            bound.len()
        )
    })?;
    // Error text only: built where a launch fails, not at every launch.
    let what = || format!("tensor map `{}` over `{}`", map.name, base_arg.param);
    let base = match (&base_arg.ty, &base_arg.source) {
        (ParamType::Ptr(_), ArgSource::Buffer(name)) => {
            address(name).ok_or_else(|| format!("{}: no buffer `{name}`", what()))?
        }
        (ty, source) => {
            return Err(format!(
                "{}: the base parameter is {ty:?} bound to {source:?}, not a buffer",
                what()
            ))
        }
    };
    tensor_map_spec_at(map, base, bound, grid, &what)
}

/// The spec of `map` over base address `base`; `what` names it in errors.
fn tensor_map_spec_at(
    map: &TensorMapParam,
    base: u64,
    bound: &[BoundArg],
    grid: [u32; 3],
    what: &dyn Fn() -> String,
) -> Result<TensorMapSpec, String> {
    let size = u64::from(map.elem.byte_size());
    let extents = map
        .extents
        .iter()
        .enumerate()
        .map(|(d, e)| {
            host_value(e, bound, grid, &|| {
                format!("{}: extent of dimension {d}", what())
            })
        })
        .collect::<Result<Vec<u64>, String>>()?;
    let strides = map
        .strides
        .iter()
        .enumerate()
        .map(|(i, e)| {
            // Strides describe dimensions 1.. (the innermost is dense).
            let dim = || format!("{}: stride of dimension {}", what(), i + 1);
            let elements = host_value(e, bound, grid, &dim)?;
            elements.checked_mul(size).ok_or_else(|| {
                format!(
                    "{}: {elements} elements of {size} bytes overflow 64 bits",
                    dim()
                )
            })
        })
        .collect::<Result<Vec<u64>, String>>()?;
    let swizzle = match map.swizzle_bytes {
        0 => TmaSwizzle::None,
        32 => TmaSwizzle::B32,
        64 => TmaSwizzle::B64,
        128 => TmaSwizzle::B128,
        other => {
            return Err(format!(
                "{}: swizzle of {other} bytes (TMA swizzles 0, 32, 64 or 128)",
                what()
            ))
        }
    };
    let l2_promotion = TmaL2Promotion::from_bytes(map.l2_promotion_bytes).ok_or_else(|| {
        format!(
            "{}: L2 promotion of {} bytes (TMA promotes 0, 64, 128 or 256)",
            what(),
            map.l2_promotion_bytes
        )
    })?;
    let spec = TensorMapSpec {
        elem: map.elem,
        base,
        extents,
        strides,
        box_extents: map.box_extents.clone(),
        swizzle,
        l2_promotion,
    };
    spec.validate().map_err(|e| format!("{}: {e}", what()))?;
    Ok(spec)
}

/// A tensor map expression's value over the bound integer arguments, as a
/// non-negative count. `what` names the number for errors.
fn host_value(
    expr: &HostExpr,
    bound: &[BoundArg],
    grid: [u32; 3],
    what: &dyn Fn() -> String,
) -> Result<u64, String> {
    // `eval` only says that some parameter had no integer value; remember
    // which, for the message.
    let missing = Cell::new(None);
    let param = |i: usize| match bound.get(i).map(|b: &BoundArg| &b.source) {
        Some(ArgSource::Int(v)) => Some(*v),
        _ => {
            missing.set(Some(i));
            None
        }
    };
    let value = expr.eval_in_grid(&param, Some(grid));
    match value {
        Some(v) => u64::try_from(v).map_err(|_| format!("{} is {v}, negative", what())),
        None => Err(match missing.get().map(|i| (i, bound.get(i))) {
            Some((_, Some(b))) => format!(
                "{} uses parameter `{}`, bound to {:?}, not an integer",
                what(),
                b.param,
                b.source
            ),
            Some((i, None)) => format!(
                "{} uses parameter {i}; the kernel has {}",
                what(),
                bound.len()
            ),
            None => format!("{}: {expr:?} has no value", what()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, ty: ParamType) -> KernelParam {
        KernelParam {
            name: name.into(),
            ty,
        }
    }

    #[test]
    fn binds_by_name_and_drops_specialized_parameters() {
        let ex = triton_examples::load("matmul").unwrap();
        let case = ex.spec.case("ragged_100").unwrap();
        // A kernel in which `stride_ak` (= 1) was specialized away.
        let params = vec![
            param("a_ptr", ParamType::Ptr(ScalarType::F16)),
            param("b_ptr", ParamType::Ptr(ScalarType::F16)),
            param("c_ptr", ParamType::Ptr(ScalarType::F16)),
            param("M", ParamType::Scalar(ScalarType::I32)),
            param("stride_am", ParamType::Scalar(ScalarType::I64)),
        ];
        let bound = bind_launch_args(case, &params).unwrap();
        assert_eq!(bound.len(), 5);
        assert_eq!(bound[3].source, ArgSource::Int(100));
        let addr = |name: &str| match name {
            "a_ptr" => Some(0x100),
            "b_ptr" => Some(0x200),
            "c_ptr" => Some(0x300),
            _ => None,
        };
        let args = kernel_args(&bound, &addr).unwrap();
        assert_eq!(args[0], KernelArg::Ptr(0x100));
        assert_eq!(args[3], KernelArg::I32(100));
        // The parameter's type decides the width, not the case's dtype.
        assert_eq!(args[4], KernelArg::I64(100));

        let missing = vec![param("not_an_arg", ParamType::Scalar(ScalarType::I32))];
        let err = bind_launch_args(case, &missing).unwrap_err();
        assert!(err.contains("`not_an_arg` has no launch argument"), "{err}");
        let wrong = vec![param("M", ParamType::Ptr(ScalarType::F16))];
        assert!(bind_launch_args(case, &wrong).is_err());
    }

    #[test]
    fn tensor_maps_are_encoded_again_only_when_their_spec_changes() {
        let spec = |base: u64, rows: u64| TensorMapSpec {
            elem: ScalarType::F16,
            base,
            extents: vec![64, rows],
            strides: vec![128],
            box_extents: vec![64, 64],
            swizzle: TmaSwizzle::B128,
            l2_promotion: TmaL2Promotion::B128,
        };
        let encodes = Cell::new(0u8);
        // A stand-in for the driver: the bytes say which call made them.
        let encode = |_: &TensorMapSpec| {
            encodes.set(encodes.get() + 1);
            Ok(KernelArg::Bytes(vec![encodes.get(); 128]))
        };
        let mut ws = Workspaces::default();
        let first = ws.encoded_map(0, spec(0x1000, 256), encode).unwrap();
        assert_eq!(ws.encoded_map(0, spec(0x1000, 256), encode).unwrap(), first);
        assert_eq!(encodes.get(), 1, "the same spec is reused");
        // Another map of the kernel has its own entry.
        let other = ws.encoded_map(1, spec(0x1000, 256), encode).unwrap();
        assert_ne!(other, first);
        // Another buffer, or the same buffer with another shape: new maps.
        ws.encoded_map(0, spec(0x2000, 256), encode).unwrap();
        ws.encoded_map(0, spec(0x2000, 512), encode).unwrap();
        assert_eq!(encodes.get(), 4);
        // A refusal is the error and keeps nothing.
        let refused = |_: &TensorMapSpec| Err("refused".to_string());
        assert!(ws.encoded_map(0, spec(0x3000, 256), refused).is_err());
        ws.encoded_map(0, spec(0x3000, 256), encode).unwrap();
        assert_eq!(encodes.get(), 5);
    }

    #[test]
    fn descriptors_expand_to_base_shapes_and_strides() {
        let ex = triton_examples::load("matmul_tma_host").unwrap();
        let case = &ex.spec.cases[0];
        let names: Vec<String> = expanded_args(case)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let desc = case
            .launch_args()
            .unwrap()
            .into_iter()
            .find_map(|(n, a)| matches!(a, LaunchArg::Desc { .. }).then_some(n))
            .expect("the example has a descriptor");
        for part in ["_base", "_shape0", "_shape1", "_stride0", "_stride1"] {
            assert!(names.contains(&format!("{desc}{part}")), "{names:?}");
        }
    }

    #[test]
    fn scalars_take_their_parameter_width() {
        let s = |ty, v| scalar_arg("x", ty, &v);
        assert_eq!(
            s(ScalarType::I1, ArgSource::Int(1)).unwrap(),
            KernelArg::Bytes(vec![1])
        );
        assert_eq!(
            s(ScalarType::F16, ArgSource::Float(1.0)).unwrap(),
            KernelArg::U16(0x3c00)
        );
        assert_eq!(
            s(ScalarType::F32, ArgSource::Int(2)).unwrap(),
            KernelArg::F32(2.0)
        );
        assert!(s(ScalarType::I32, ArgSource::Int(1 << 40)).is_err());
        assert!(s(ScalarType::I32, ArgSource::Float(0.5)).is_err());
    }

    /// The A operand of a matmul: `a_ptr` a row-major f16 `M x K` tensor
    /// with row stride `stride_am`, boxes of 64 x 128 with a 128-byte
    /// swizzle; parameters `a_ptr, M, K, stride_am`.
    fn matmul_a_map() -> (TensorMapParam, Vec<BoundArg>) {
        let map = TensorMapParam {
            name: "tw_tmap0".into(),
            elem: ScalarType::F16,
            base: 0,
            extents: vec![HostExpr::Param(2), HostExpr::Param(1)],
            strides: vec![HostExpr::Param(3)],
            box_extents: vec![64, 128],
            swizzle_bytes: 128,
            l2_promotion_bytes: 256,
            device_built: false,
        };
        let int = |name: &str, v| BoundArg {
            param: name.into(),
            ty: ParamType::Scalar(ScalarType::I32),
            source: ArgSource::Int(v),
        };
        let bound = vec![
            BoundArg {
                param: "a_ptr".into(),
                ty: ParamType::Ptr(ScalarType::F16),
                source: ArgSource::Buffer("a".into()),
            },
            int("M", 300),
            int("K", 200),
            int("stride_am", 208),
        ];
        (map, bound)
    }

    fn address(name: &str) -> Option<u64> {
        (name == "a").then_some(0x7f00_0000_1000)
    }

    /// The grid the maps are encoded for.
    const GRID: [u32; 3] = [3, 2, 1];

    #[test]
    fn tensor_maps_take_the_bound_buffer_and_sizes() {
        let (map, bound) = matmul_a_map();
        let specs = tensor_map_specs(&[map], &bound, GRID, &address).unwrap();
        assert_eq!(
            specs,
            vec![TensorMapSpec {
                elem: ScalarType::F16,
                base: 0x7f00_0000_1000,
                extents: vec![200, 300],
                // 208 elements of 2 bytes.
                strides: vec![416],
                box_extents: vec![64, 128],
                swizzle: TmaSwizzle::B128,
                l2_promotion: TmaL2Promotion::B256,
            }]
        );

        // Expressions are evaluated, not just looked up: a map of the
        // rows from the second on.
        let (mut map, bound) = matmul_a_map();
        map.extents[1] = HostExpr::Sub(Box::new(HostExpr::Param(1)), Box::new(HostExpr::Const(1)));
        let specs = tensor_map_specs(&[map], &bound, GRID, &address).unwrap();
        assert_eq!(specs[0].extents, vec![200, 299]);

        // An unchecked column extent read off the grid launched: 64
        // columns a program along y, two programs.
        let (mut map, bound) = matmul_a_map();
        map.extents[0] = HostExpr::Mul(
            Box::new(HostExpr::Const(64)),
            Box::new(HostExpr::NumPrograms(tawa_ir::Axis::Y)),
        );
        let specs = tensor_map_specs(&[map], &bound, GRID, &address).unwrap();
        assert_eq!(specs[0].extents, vec![128, 300]);
    }

    #[test]
    fn tensor_map_numbers_must_be_non_negative_integers() {
        let (mut map, mut bound) = matmul_a_map();
        bound[1].source = ArgSource::Int(-4);
        let err = tensor_map_specs(&[map.clone()], &bound, GRID, &address).unwrap_err();
        assert!(
            err.contains("tensor map `tw_tmap0` over `a_ptr`: extent of dimension 1 is -4"),
            "{err}"
        );

        bound[1].source = ArgSource::Float(4.0);
        let err = tensor_map_specs(&[map.clone()], &bound, GRID, &address).unwrap_err();
        assert!(err.contains("uses parameter `M`"), "{err}");

        // A stride whose byte count does not fit 64 bits (i64::MAX f32
        // elements; of f16 it would still fit).
        let (_, mut bound) = matmul_a_map();
        bound[3].source = ArgSource::Int(i64::MAX);
        let f32_map = TensorMapParam {
            elem: ScalarType::F32,
            ..map.clone()
        };
        let err = tensor_map_specs(&[f32_map], &bound, GRID, &address).unwrap_err();
        assert!(err.contains("stride of dimension 1"), "{err}");
        assert!(err.contains("overflow"), "{err}");

        let (_, bound) = matmul_a_map();
        map.swizzle_bytes = 48;
        let err = tensor_map_specs(&[map.clone()], &bound, GRID, &address).unwrap_err();
        assert!(err.contains("swizzle of 48 bytes"), "{err}");

        map.swizzle_bytes = 128;
        map.l2_promotion_bytes = 512;
        let err = tensor_map_specs(&[map], &bound, GRID, &address).unwrap_err();
        assert!(err.contains("L2 promotion of 512 bytes"), "{err}");
    }

    /// A map the kernel builds on the device is a template encoded over
    /// the workspace, with the constant geometry the backend gave it; no
    /// workspace is an error, not a map over another buffer.
    #[test]
    fn device_built_maps_are_templates_over_the_workspace() {
        let (mut map, bound) = matmul_a_map();
        map.device_built = true;
        map.extents = vec![HostExpr::Const(64), HostExpr::Const(128)];
        map.strides = vec![HostExpr::Const(64)];
        let workspace = 0x7000_0000u64;
        let address = |n: &str| (n == DEVICE_MAP_WORKSPACE).then_some(workspace);
        let specs = tensor_map_specs(&[map.clone()], &bound, GRID, &address).unwrap();
        assert_eq!(specs[0].base, workspace);
        assert_eq!(specs[0].extents, vec![64, 128]);
        assert_eq!(specs[0].strides, vec![128]);
        assert_eq!(specs[0].box_extents, vec![64, 128]);
        let others = |n: &str| (n != DEVICE_MAP_WORKSPACE).then_some(0x1000);
        let err = tensor_map_specs(&[map], &bound, GRID, &others).unwrap_err();
        assert!(err.contains("no workspace"), "{err}");
    }

    #[test]
    fn tensor_map_base_must_be_a_bound_buffer() {
        let (mut map, bound) = matmul_a_map();
        map.base = 1;
        let err = tensor_map_specs(&[map.clone()], &bound, GRID, &address).unwrap_err();
        assert!(err.contains("over `M`"), "{err}");
        map.base = 9;
        let err = tensor_map_specs(&[map], &bound, GRID, &address).unwrap_err();
        assert!(err.contains("base parameter 9 does not exist"), "{err}");
        let (map, bound) = matmul_a_map();
        let err = tensor_map_specs(&[map], &bound, GRID, &|_| None).unwrap_err();
        assert!(err.contains("no buffer `a`"), "{err}");
    }

    #[test]
    fn driver_rules_surface_with_the_map_name() {
        // 100 f16 elements are 200 bytes, not a multiple of 16.
        let (map, mut bound) = matmul_a_map();
        bound[3].source = ArgSource::Int(100);
        let err = tensor_map_specs(&[map], &bound, GRID, &address).unwrap_err();
        assert!(
            err.starts_with("tensor map `tw_tmap0` over `a_ptr`: TMA tensor map: stride 200 bytes"),
            "{err}"
        );
        assert!(err.contains("not a multiple of 16"), "{err}");
    }
}
