//! TMA tensor maps (`CUtensorMap`): what a kernel's TMA copies read their
//! global tensor's shape, strides and box from. Built at launch from a
//! [`TensorMapSpec`] (the runtime half of a TMA descriptor recipe) and
//! passed by value as a `const __grid_constant__ CUtensorMap` parameter
//! ([`KernelArg::Bytes`], 128 bytes, 64-byte aligned).
//!
//! [`TensorMapSpec::validate`] checks the requirements the driver documents
//! for `cuTensorMapEncodeTiled` before calling it, so a recipe the driver
//! would reject is an error that names the rule, on any machine, instead
//! of a bare `CUDA_ERROR_INVALID_VALUE` on the GPU one:
//!
//! - rank 1 to 5; every extent non-zero and at most 2^32;
//! - the base address 16-byte aligned;
//! - each stride (of the dimensions after the innermost, in bytes) a
//!   multiple of 16 and below 2^40. Strides need not nest: a view whose
//!   rows overlap (tutorial 06's fp8 V, `[HEAD_DIM, Z*H*N]` with row stride
//!   `N`) or whose dimensions are listed out of stride order (attention over
//!   `[B, N, H, D]` tensors) is a valid map for copies into shared memory;
//! - every box extent 1 to 256, the innermost one a multiple of 16 bytes
//!   and, with a swizzle, no wider than the swizzle span (32, 64 or 128
//!   bytes); element strides 1;
//! - an element type TMA copies (8-, 16-, 32- and 64-bit; fp8 travels as
//!   `UINT8`).
//!
//! Dimensions are listed innermost first, as the driver takes them: a
//! row-major `M x K` matrix has extents `[K, M]` and strides `[K * size]`.

use std::fmt;

use cudarc::driver::sys;
use tawa_ir::ScalarType;

use super::gpu::{Gpu, KernelArg};

/// The shared-memory swizzle a TMA copy writes (must match the layout the
/// readers assume: wgmma descriptors, `tw_swz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TmaSwizzle {
    None,
    B32,
    B64,
    B128,
}

impl TmaSwizzle {
    /// Bytes of one swizzled line (`None`: no limit).
    pub fn span(self) -> Option<u64> {
        match self {
            TmaSwizzle::None => None,
            TmaSwizzle::B32 => Some(32),
            TmaSwizzle::B64 => Some(64),
            TmaSwizzle::B128 => Some(128),
        }
    }

    fn to_sys(self) -> sys::CUtensorMapSwizzle {
        match self {
            TmaSwizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
}

/// How much the L2 cache fetches from memory for a line a copy misses on
/// (`CUtensorMapL2promotion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TmaL2Promotion {
    None,
    B64,
    B128,
    B256,
}

impl TmaL2Promotion {
    /// The promotion of `bytes` (0, 64, 128 or 256), if it is one.
    pub fn from_bytes(bytes: u32) -> Option<TmaL2Promotion> {
        Some(match bytes {
            0 => TmaL2Promotion::None,
            64 => TmaL2Promotion::B64,
            128 => TmaL2Promotion::B128,
            256 => TmaL2Promotion::B256,
            _ => return None,
        })
    }

    fn to_sys(self) -> sys::CUtensorMapL2promotion {
        use sys::CUtensorMapL2promotion as P;
        match self {
            TmaL2Promotion::None => P::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            TmaL2Promotion::B64 => P::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            TmaL2Promotion::B128 => P::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            TmaL2Promotion::B256 => P::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        }
    }
}

/// A tiled tensor map: a global tensor and the box one TMA copy moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapSpec {
    pub elem: ScalarType,
    /// Device address of element (0, ..., 0).
    pub base: u64,
    /// Extents, innermost first. Out-of-range box elements read as zero.
    pub extents: Vec<u64>,
    /// Byte strides of `extents[1..]` (the innermost dimension is dense).
    pub strides: Vec<u64>,
    /// Box extents, innermost first.
    pub box_extents: Vec<u32>,
    pub swizzle: TmaSwizzle,
    pub l2_promotion: TmaL2Promotion,
}

/// A rule of `cuTensorMapEncodeTiled` a spec breaks, or the driver's
/// refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapError {
    pub message: String,
}

impl fmt::Display for TensorMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TMA tensor map: {}", self.message)
    }
}

impl std::error::Error for TensorMapError {}

fn err(message: String) -> Result<(), TensorMapError> {
    Err(TensorMapError { message })
}

/// The driver's name for an element type TMA can copy.
fn data_type(elem: ScalarType) -> Option<sys::CUtensorMapDataType> {
    use sys::CUtensorMapDataType as T;
    Some(match elem {
        ScalarType::I8 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => {
            T::CU_TENSOR_MAP_DATA_TYPE_UINT8
        }
        ScalarType::I16 => T::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        ScalarType::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        ScalarType::BF16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        ScalarType::I32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
        ScalarType::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        ScalarType::I64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
        ScalarType::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        _ => return None,
    })
}

impl TensorMapSpec {
    pub fn rank(&self) -> usize {
        self.extents.len()
    }

    /// Bytes one copy writes to shared memory (the `expect_tx` count).
    pub fn box_bytes(&self) -> u64 {
        self.box_extents.iter().map(|&b| b as u64).product::<u64>() * self.elem.byte_size() as u64
    }

    /// Checks the driver's requirements (module docs).
    pub fn validate(&self) -> Result<(), TensorMapError> {
        let rank = self.rank();
        let size = self.elem.byte_size() as u64;
        if data_type(self.elem).is_none() {
            return err(format!("TMA does not copy {} elements", self.elem));
        }
        if !(1..=5).contains(&rank) {
            return err(format!("rank {rank}: TMA copies tensors of rank 1 to 5"));
        }
        if self.strides.len() + 1 != rank || self.box_extents.len() != rank {
            return err(format!(
                "rank {rank} needs {} strides and {rank} box extents, got {} and {}",
                rank - 1,
                self.strides.len(),
                self.box_extents.len()
            ));
        }
        if !self.base.is_multiple_of(16) {
            return err(format!(
                "base address {:#x} is not 16-byte aligned",
                self.base
            ));
        }
        for (d, &e) in self.extents.iter().enumerate() {
            if e == 0 || e > 1 << 32 {
                return err(format!("extent {e} of dimension {d} is not in 1..=2^32"));
            }
        }
        for (i, &s) in self.strides.iter().enumerate() {
            let d = i + 1;
            if !s.is_multiple_of(16) {
                return err(format!(
                    "stride {s} bytes of dimension {d} is not a multiple of 16"
                ));
            }
            if s >= 1 << 40 {
                return err(format!(
                    "stride {s} bytes of dimension {d} is not below 2^40"
                ));
            }
        }
        for (d, &b) in self.box_extents.iter().enumerate() {
            if b == 0 || b > 256 {
                return err(format!("box extent {b} of dimension {d} is not in 1..=256"));
            }
        }
        let inner = self.box_extents[0] as u64 * size;
        if !inner.is_multiple_of(16) {
            return err(format!(
                "the box's innermost extent is {inner} bytes, not a multiple of 16"
            ));
        }
        if let Some(span) = self.swizzle.span() {
            if inner > span {
                return err(format!(
                    "the box's innermost extent is {inner} bytes, wider than the {span}-byte swizzle"
                ));
            }
        }
        Ok(())
    }

    /// Encodes the map with the driver. `_gpu` only proves the driver is
    /// initialized (`cuInit`); the map itself holds no context state. The
    /// result is the launch argument.
    pub fn encode(&self, _gpu: &Gpu) -> Result<KernelArg, TensorMapError> {
        self.validate()?;
        let rank = self.rank();
        let element_strides = vec![1u32; rank];
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: every array holds `rank` (strides: rank - 1) entries as
        // validated; the driver writes only into `map`.
        let rc = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                data_type(self.elem).expect("validated"),
                rank as u32,
                self.base as *mut std::ffi::c_void,
                self.extents.as_ptr(),
                self.strides.as_ptr(),
                self.box_extents.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                self.swizzle.to_sys(),
                self.l2_promotion.to_sys(),
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        }))
        .map_err(|_| TensorMapError {
            message: "the CUDA driver could not be called for cuTensorMapEncodeTiled".into(),
        })?;
        if rc != sys::CUresult::CUDA_SUCCESS {
            return Err(TensorMapError {
                message: format!("cuTensorMapEncodeTiled refused {self:?}: {rc:?}"),
            });
        }
        Ok(KernelArg::Bytes(
            map.opaque.iter().flat_map(|w| w.to_le_bytes()).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The A operand box of a 128x64 fp16 tile of a row-major 4096x4096
    /// matrix, 128-byte swizzle: what the warp-specialized GEMM loads.
    fn gemm_a() -> TensorMapSpec {
        TensorMapSpec {
            elem: ScalarType::F16,
            base: 0x7f00_0000_0000,
            extents: vec![4096, 4096],
            strides: vec![4096 * 2],
            box_extents: vec![64, 128],
            swizzle: TmaSwizzle::B128,
            l2_promotion: TmaL2Promotion::B128,
        }
    }

    fn rejected(spec: TensorMapSpec, why: &str) {
        let e = spec.validate().expect_err("spec should be rejected");
        assert!(e.message.contains(why), "{e} does not mention `{why}`");
    }

    #[test]
    fn gemm_operand_box_is_valid() {
        let spec = gemm_a();
        spec.validate().unwrap();
        assert_eq!(spec.box_bytes(), 128 * 64 * 2);
    }

    #[test]
    fn strides_need_not_nest() {
        // Rows that overlap: a [HEAD_DIM, Z*H*N] view with row stride N.
        TensorMapSpec {
            extents: vec![4096, 128],
            strides: vec![1024 * 2],
            ..gemm_a()
        }
        .validate()
        .unwrap();
        // [B, N, H, D] copied as (D, N, H) boxes: the H stride below the N one.
        TensorMapSpec {
            extents: vec![64, 4096, 32],
            strides: vec![32 * 64 * 2, 64 * 2],
            box_extents: vec![64, 128, 1],
            ..gemm_a()
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn driver_rules_are_checked() {
        rejected(
            TensorMapSpec {
                base: 0x7f00_0000_0008,
                ..gemm_a()
            },
            "16-byte aligned",
        );
        rejected(
            TensorMapSpec {
                strides: vec![4100 * 2],
                ..gemm_a()
            },
            "multiple of 16",
        );
        rejected(
            TensorMapSpec {
                box_extents: vec![64, 512],
                ..gemm_a()
            },
            "1..=256",
        );
        rejected(
            TensorMapSpec {
                box_extents: vec![128, 64],
                ..gemm_a()
            },
            "wider than the 128-byte swizzle",
        );
        rejected(
            TensorMapSpec {
                box_extents: vec![4, 64],
                ..gemm_a()
            },
            "not a multiple of 16",
        );
        rejected(
            TensorMapSpec {
                extents: vec![0, 4096],
                ..gemm_a()
            },
            "not in 1..=2^32",
        );
        rejected(
            TensorMapSpec {
                strides: vec![],
                ..gemm_a()
            },
            "needs 1 strides",
        );
        rejected(
            TensorMapSpec {
                elem: ScalarType::I1,
                ..gemm_a()
            },
            "does not copy",
        );
        // Ragged extents are fine: the box past the edge reads zeros.
        TensorMapSpec {
            extents: vec![100, 130],
            strides: vec![112 * 2],
            ..gemm_a()
        }
        .validate()
        .unwrap();
        // Without a swizzle a wide inner box is fine.
        TensorMapSpec {
            box_extents: vec![256, 16],
            swizzle: TmaSwizzle::None,
            l2_promotion: TmaL2Promotion::B128,
            ..gemm_a()
        }
        .validate()
        .unwrap();
    }
}
