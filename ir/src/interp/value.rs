//! Runtime values of the interpreter.
//!
//! A scalar is a tile of shape `[]` with one element. Tiles are flat,
//! row-major vectors: floats as `f64` holding a value exactly representable in
//! the element type, integers as `i64` in canonical form (signed types
//! sign-extended, unsigned types and `i1` zero-extended, `u64` as its bit
//! pattern), pointers as `i64` holding the address bits.

use crate::types::{Elem, ScalarType};

#[derive(Clone, Debug)]
pub enum Data {
    F(Vec<f64>),
    I(Vec<i64>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::F(v) => v.len(),
            Data::I(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One element, as stored in [`Data`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    F(f64),
    I(i64),
}

#[derive(Clone, Debug)]
pub struct Tile {
    pub shape: Vec<u32>,
    pub elem: Elem,
    pub data: Data,
}

impl Tile {
    pub fn numel(&self) -> usize {
        self.data.len()
    }

    /// Element `i`; a one-element tile broadcasts to every index.
    pub fn get(&self, i: usize) -> Num {
        match &self.data {
            Data::F(v) => Num::F(if v.len() == 1 { v[0] } else { v[i] }),
            Data::I(v) => Num::I(if v.len() == 1 { v[0] } else { v[i] }),
        }
    }

    /// Element `i` as an integer (floats truncate; only for i1/int operands).
    pub fn int(&self, i: usize) -> i64 {
        match self.get(i) {
            Num::I(x) => x,
            Num::F(x) => x as i64,
        }
    }

    /// Element `i` as a float (ints convert).
    pub fn float(&self, i: usize) -> f64 {
        match self.get(i) {
            Num::F(x) => x,
            Num::I(x) => x as f64,
        }
    }

    /// A tile from a list of elements of `elem`'s representation.
    pub fn from_nums(shape: Vec<u32>, elem: Elem, nums: impl Iterator<Item = Num>) -> Tile {
        let data = if is_float_elem(elem) {
            Data::F(
                nums.map(|n| match n {
                    Num::F(x) => x,
                    Num::I(x) => x as f64,
                })
                .collect(),
            )
        } else {
            Data::I(
                nums.map(|n| match n {
                    Num::I(x) => x,
                    Num::F(x) => x as i64,
                })
                .collect(),
            )
        };
        Tile { shape, elem, data }
    }
}

/// Whether elements of `elem` are stored as floats.
pub fn is_float_elem(elem: Elem) -> bool {
    matches!(elem, Elem::Scalar(s) if s.is_float())
}

/// A block pointer: `block` tile at `offsets` inside a `shape` tensor with
/// `strides` (in elements) starting at `base`.
#[derive(Clone, Debug)]
pub struct BlockPtr {
    pub base: u64,
    pub pointee: ScalarType,
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub offsets: Vec<i64>,
    pub block: Vec<u32>,
}

/// A tensor descriptor: a `shape` tensor with `strides` (in elements) at
/// `base`, moved in `block` tiles.
#[derive(Clone, Debug)]
pub struct TensorDesc {
    pub base: u64,
    pub elem: ScalarType,
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub block: Vec<u32>,
}

/// One buffer of one slot of an aref, as `aref.get` returns it. The view
/// is not a copy: every op that reads it asks the host for the slot's
/// contents at that moment, as a WGMMA reading shared memory would see
/// them, so a slot refilled too early shows up in the results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotView {
    /// The aref, as numbered by the host ([`RVal::Aref`]).
    pub aref: u32,
    /// Which of the aref's buffers.
    pub buffer: u32,
    /// The iteration whose `aref.get` made the view (slot `iteration % D`).
    pub iteration: i64,
}

#[derive(Clone, Debug)]
pub enum RVal {
    Tile(Tile),
    BlockPtr(BlockPtr),
    Desc(TensorDesc),
    /// An aref made by `aref.create`; the number is the host's.
    Aref(u32),
    /// A view of an aref slot's buffer (see [`SlotView`]).
    View(SlotView),
}

/// Wraps an integer to the canonical form of `st` (two's complement wrap).
pub fn wrap(st: ScalarType, x: i64) -> i64 {
    match st {
        ScalarType::I1 => x & 1,
        ScalarType::I8 => x as i8 as i64,
        ScalarType::I16 => x as i16 as i64,
        ScalarType::I32 => x as i32 as i64,
        ScalarType::U8 => x as u8 as i64,
        ScalarType::U16 => x as u16 as i64,
        ScalarType::U32 => x as u32 as i64,
        _ => x,
    }
}

/// Whether integer comparisons and divisions of `st` are unsigned. `i1` is a
/// bool here (Triton extends it with `extui`).
pub fn is_unsigned(st: ScalarType) -> bool {
    st.is_unsigned_int() || st == ScalarType::I1
}

/// Row-major strides (in elements) of `shape`.
pub fn strides_of(shape: &[u32]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1] as usize;
    }
    s
}

/// Multi-index of flat index `i` in a row-major `shape`.
pub fn unflatten(mut i: usize, shape: &[u32], out: &mut [usize]) {
    for d in (0..shape.len()).rev() {
        let n = shape[d] as usize;
        out[d] = i % n;
        i /= n;
    }
}

/// Float to integer conversion of a GPU (`cvt.rzi`): truncation toward zero,
/// saturating at the type's range, NaN to 0. To `i1` it is `x != 0`, as
/// Triton casts to bool.
pub fn float_to_int(st: ScalarType, x: f64) -> i64 {
    use ScalarType::*;
    // Rust's float-to-int `as` truncates, saturates and maps NaN to 0.
    match st {
        I1 => (x != 0.0) as i64,
        I8 => x as i8 as i64,
        I16 => x as i16 as i64,
        I32 => x as i32 as i64,
        I64 => x as i64,
        U8 => x as u8 as i64,
        U16 => x as u16 as i64,
        U32 => x as u32 as i64,
        U64 => x as u64 as i64,
        _ => x as i64,
    }
}

/// Integer (canonical form of `src`) to a float of type `dst`, rounded to
/// nearest even.
pub fn int_to_float(src: ScalarType, dst: ScalarType, x: i64) -> f64 {
    let unsigned = src == ScalarType::U64;
    match dst {
        // Direct conversions round once.
        ScalarType::F32 if unsigned => (x as u64) as f32 as f64,
        ScalarType::F32 => x as f32 as f64,
        _ => {
            let f = if unsigned {
                (x as u64) as f64
            } else {
                x as f64
            };
            super::float::round(dst, f, false)
        }
    }
}
