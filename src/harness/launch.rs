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

use std::collections::BTreeMap;

use tawa_backend::runtime::KernelArg;
use tawa_backend::{KernelParam, ParamType};
use tawa_ir::interp::ArgValue;
use tawa_ir::ScalarType;
use triton_examples::{Case, LaunchArg};

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
    let args: BTreeMap<String, ArgSource> = expanded_args(case)?.into_iter().collect();
    params
        .iter()
        .map(|p| {
            let source = args.get(&p.name).cloned().ok_or_else(|| {
                format!(
                    "kernel parameter `{}` has no launch argument in case `{}` (arguments: {})",
                    p.name,
                    case.name,
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
}
