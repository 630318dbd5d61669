//! The tile IR shared by every stage of tawa-rs.
//!
//! - [`types`]: scalar, tile, block-pointer and descriptor types.
//! - [`ops`]: the operations (Triton's TTIR, structured control flow).
//! - [`function`]: arenas with typed handles for values, ops and blocks.
//!
//! The IR knows nothing about Python, CUDA or warps.

pub mod function;
pub mod interp;
pub mod ops;
pub mod types;

pub use function::{
    Block, BlockData, FuncAttrs, Function, Module, Op, OpData, Param, ParamHints, Value, ValueData,
    ValueDef,
};
pub use ops::*;
pub use types::{Elem, ScalarType, Type};

/// Re-exported so passes can key side tables by [`Value`], [`Op`], [`Block`].
pub use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};
