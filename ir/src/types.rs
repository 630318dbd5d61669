//! Types of the tile IR.
//!
//! A value is a scalar, a tile (`tensor<64x32xf16>`), a block pointer, a
//! tensor descriptor or an aref (a ring of shared-memory slots joining the
//! partitions of a warp-specialized kernel, `aref<3 x (tensor<128x64xf16>,
//! tensor<64x128xf16>)>`). Element types are scalars or pointers to scalars.
//! Tile shapes are static; Triton requires every dimension to be a power of
//! two and the frontend enforces that, the IR only requires them non-zero.

use std::fmt;

/// Scalar element types. Names follow the IR's text format (`i32`, `f16`,
/// `f8e4m3`); [`ScalarType::triton_name`] gives Triton's (`int32`, `fp16`,
/// `float8e4nv`).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum ScalarType {
    I1,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F8E4M3,
    F8E5M2,
    F16,
    BF16,
    F32,
    F64,
}

impl ScalarType {
    pub const ALL: [ScalarType; 15] = [
        ScalarType::I1,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F8E4M3,
        ScalarType::F8E5M2,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Name in the IR text format.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I1 => "i1",
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::F8E4M3 => "f8e4m3",
            ScalarType::F8E5M2 => "f8e5m2",
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// Name in Triton's language (`tl.float16` is `fp16`, as in signatures).
    pub fn triton_name(self) -> &'static str {
        match self {
            ScalarType::I1 => "int1",
            ScalarType::I8 => "int8",
            ScalarType::I16 => "int16",
            ScalarType::I32 => "int32",
            ScalarType::I64 => "int64",
            ScalarType::U8 => "uint8",
            ScalarType::U16 => "uint16",
            ScalarType::U32 => "uint32",
            ScalarType::U64 => "uint64",
            ScalarType::F8E4M3 => "fp8e4nv",
            ScalarType::F8E5M2 => "fp8e5",
            ScalarType::F16 => "fp16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "fp32",
            ScalarType::F64 => "fp64",
        }
    }

    /// Parses an IR name (`f16`) or any of Triton's spellings (`fp16`,
    /// `float16`, `int32`, `i32`, `u32`, `fp8e4nv`, `float8_e4m3fn`).
    pub fn parse(s: &str) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match s {
            "i1" | "int1" | "bool" => I1,
            "i8" | "int8" => I8,
            "i16" | "int16" => I16,
            "i32" | "int32" => I32,
            "i64" | "int64" => I64,
            "u8" | "uint8" => U8,
            "u16" | "uint16" => U16,
            "u32" | "uint32" => U32,
            "u64" | "uint64" => U64,
            "f8e4m3" | "fp8e4nv" | "float8e4nv" | "fp8e4m3" | "float8_e4m3fn" => F8E4M3,
            "f8e5m2" | "fp8e5" | "float8e5" | "fp8e5m2" | "float8_e5m2" => F8E5M2,
            "f16" | "fp16" | "float16" | "half" => F16,
            "bf16" | "bfloat16" => BF16,
            "f32" | "fp32" | "float32" | "float" => F32,
            "f64" | "fp64" | "float64" | "double" => F64,
            _ => return None,
        })
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F8E4M3
                | ScalarType::F8E5M2
                | ScalarType::F16
                | ScalarType::BF16
                | ScalarType::F32
                | ScalarType::F64
        )
    }

    /// Integer types, `i1` included.
    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    /// Signed integers (`i1` counts as signed, as in Triton's `int1`).
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarType::I1 | ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        )
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64
        )
    }

    pub fn is_fp8(self) -> bool {
        matches!(self, ScalarType::F8E4M3 | ScalarType::F8E5M2)
    }

    /// Width in bits (`i1` is 1).
    pub fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            I1 => 1,
            I8 | U8 | F8E4M3 | F8E5M2 => 8,
            I16 | U16 | F16 | BF16 => 16,
            I32 | U32 | F32 => 32,
            I64 | U64 | F64 => 64,
        }
    }

    /// Bytes one element occupies in memory (`i1` is stored as a byte, as in
    /// Triton).
    pub fn byte_size(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Mantissa bits (explicit, without the hidden bit) of a float type.
    pub fn mantissa_bits(self) -> Option<u32> {
        use ScalarType::*;
        match self {
            F8E4M3 => Some(3),
            F8E5M2 => Some(2),
            F16 => Some(10),
            BF16 => Some(7),
            F32 => Some(23),
            F64 => Some(52),
            _ => None,
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Element of a scalar or tile: a number, or a pointer to numbers in global
/// memory (`ptr<f16>`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Elem {
    Scalar(ScalarType),
    Ptr(ScalarType),
}

impl Elem {
    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Elem::Scalar(s) => Some(s),
            Elem::Ptr(_) => None,
        }
    }
    pub fn pointee(self) -> Option<ScalarType> {
        match self {
            Elem::Ptr(s) => Some(s),
            Elem::Scalar(_) => None,
        }
    }
    pub fn is_ptr(self) -> bool {
        matches!(self, Elem::Ptr(_))
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Elem::Scalar(s) => write!(f, "{s}"),
            Elem::Ptr(s) => write!(f, "ptr<{s}>"),
        }
    }
}

/// The type of an IR value.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    /// `i32`, `f16`, `ptr<f16>`.
    Scalar(Elem),
    /// `tensor<64x32xf16>`, `tensor<64xptr<f32>>`. Shape is never empty.
    Tensor { shape: Vec<u32>, elem: Elem },
    /// A block pointer (`tl.make_block_ptr`): `block_ptr<tensor<64x32xf16>>`.
    /// Describes a tile of `shape` inside a strided global tensor.
    BlockPtr {
        pointee: ScalarType,
        shape: Vec<u32>,
    },
    /// A tensor descriptor (`tl.make_tensor_descriptor`):
    /// `tensordesc<tensor<64x32xf16>>`; loads and stores move `block` tiles.
    TensorDesc { elem: ScalarType, block: Vec<u32> },
    /// An asynchronous reference: a ring of `depth` slots, each holding one
    /// value of every type in `buffers` (A and B tiles travel together),
    /// `aref<3 x (tensor<128x64xf16>, tensor<64x128xf16>)>`. Only
    /// `aref.create` defines one and only the aref ops use it; the semantics
    /// are documented in the `tawa-aref` crate.
    Aref { depth: u32, buffers: Vec<Type> },
}

impl Type {
    pub fn scalar(s: ScalarType) -> Type {
        Type::Scalar(Elem::Scalar(s))
    }
    pub fn ptr(pointee: ScalarType) -> Type {
        Type::Scalar(Elem::Ptr(pointee))
    }
    pub fn tensor(shape: Vec<u32>, elem: Elem) -> Type {
        Type::Tensor { shape, elem }
    }
    pub const I1: Type = Type::Scalar(Elem::Scalar(ScalarType::I1));
    pub const I32: Type = Type::Scalar(Elem::Scalar(ScalarType::I32));
    pub const I64: Type = Type::Scalar(Elem::Scalar(ScalarType::I64));
    pub const F32: Type = Type::Scalar(Elem::Scalar(ScalarType::F32));

    /// Element of a scalar or tile; `None` for block pointers and descriptors.
    pub fn elem(&self) -> Option<Elem> {
        match self {
            Type::Scalar(e) | Type::Tensor { elem: e, .. } => Some(*e),
            _ => None,
        }
    }

    /// Numeric element of a scalar or tile.
    pub fn scalar_type(&self) -> Option<ScalarType> {
        self.elem().and_then(Elem::scalar)
    }

    /// Tile shape; empty for scalars and arefs.
    pub fn shape(&self) -> &[u32] {
        match self {
            Type::Tensor { shape, .. } | Type::BlockPtr { shape, .. } => shape,
            Type::TensorDesc { block, .. } => block,
            Type::Scalar(_) | Type::Aref { .. } => &[],
        }
    }

    pub fn is_aref(&self) -> bool {
        matches!(self, Type::Aref { .. })
    }

    pub fn is_tensor(&self) -> bool {
        matches!(self, Type::Tensor { .. })
    }

    pub fn is_scalar(&self) -> bool {
        matches!(self, Type::Scalar(_))
    }

    /// Number of elements of a scalar (1) or tile.
    pub fn numel(&self) -> u64 {
        self.shape().iter().map(|&d| d as u64).product()
    }

    /// Bytes of a scalar's or tile's numbers (`None` for pointers, block
    /// pointers, descriptors and arefs).
    pub fn data_bytes(&self) -> Option<u64> {
        Some(self.numel() * self.scalar_type()?.byte_size() as u64)
    }

    /// The same shape (scalar or tile) with another element type.
    pub fn with_elem(&self, elem: Elem) -> Type {
        match self {
            Type::Tensor { shape, .. } => Type::Tensor {
                shape: shape.clone(),
                elem,
            },
            _ => Type::Scalar(elem),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn dims(f: &mut fmt::Formatter<'_>, shape: &[u32]) -> fmt::Result {
            for d in shape {
                write!(f, "{d}x")?;
            }
            Ok(())
        }
        match self {
            Type::Scalar(e) => write!(f, "{e}"),
            Type::Tensor { shape, elem } => {
                f.write_str("tensor<")?;
                dims(f, shape)?;
                write!(f, "{elem}>")
            }
            Type::BlockPtr { pointee, shape } => {
                f.write_str("block_ptr<tensor<")?;
                dims(f, shape)?;
                write!(f, "{pointee}>>")
            }
            Type::TensorDesc { elem, block } => {
                f.write_str("tensordesc<tensor<")?;
                dims(f, block)?;
                write!(f, "{elem}>>")
            }
            Type::Aref { depth, buffers } => {
                write!(f, "aref<{depth} x (")?;
                for (i, t) in buffers.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")>")
            }
        }
    }
}
