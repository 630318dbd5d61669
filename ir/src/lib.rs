//! The tile IR shared by every stage of tawa-rs.
//!
//! - [`types`]: scalar, tile, block-pointer and descriptor types.
//! - [`ops`]: the operations (Triton's TTIR, structured control flow).
//! - [`function`]: arenas with typed handles for values, ops and blocks.
//! - [`printer`], [`parser`]: the textual form, which round-trips exactly.
//! - [`verifier`]: the IR's invariants, checked after every pass in tests.
//! - [`axis_info`]: Triton's AxisInfo analysis (contiguity, divisibility,
//!   constancy of every value per dimension). Target-independent, as in
//!   Triton's `lib/Analysis`: the backend derives vector widths from it and
//!   the TMA inference alignment facts.
//! - [`dce`]: dead ops and dead `for` carried values (the pointer tiles a
//!   loop keeps advancing after its loads became descriptor loads).
//! - [`interp`]: the CPU interpreter, the reference of every correctness
//!   test.
//!
//! The IR knows nothing about Python or CUDA. Warp specialization appears
//! only as the `ws` region op (partitions with a role, warp count and
//! register budget) and arefs (`aref.create`/`put`/`get`/`consumed`);
//! their semantics, simulation and lowering live in `tawa-aref`.

pub mod axis_info;
pub mod combine;
pub mod dce;
pub mod function;
pub mod host_expr;
pub mod interp;
pub mod ops;
pub mod parser;
pub mod printer;
pub mod types;
pub mod verifier;

pub use dce::eliminate_dead_code;
pub use function::{
    Block, BlockData, FuncAttrs, Function, Module, Op, OpData, Param, ParamHints, TileIds, Value,
    ValueData, ValueDef, MIXED_COPY_THREADS,
};
pub use ops::*;
pub use parser::{parse_function, parse_module, parse_type, ParseError};
pub use printer::{print_function, print_module};
pub use types::{Elem, ScalarType, Type};
pub use verifier::{verify_function, verify_module, VerifyError};

/// Re-exported so passes can key side tables by [`Value`], [`Op`], [`Block`].
pub use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};

/// The largest tile, in bytes, that a program stores with `st.global`
/// straight from the registers that hold it, in their layout: no TMA
/// store (the partitioner's `tma_store`, the default of
/// `--small-store-bytes`) and no conversion to a coalesced layout first
/// (the backend's pointer stores). For a tile this small the
/// staging, proxy fence, barriers and bulk-copy wait of a TMA store, or
/// the round trip through shared memory of a conversion, take longer than
/// the stores they would make efficient, and they sit at the end of the
/// program, where nothing hides them (the swap-AB decode's 16x128 fp16
/// tile: about 1 us of its 56 us).
pub const SMALL_STORE_BYTES: u64 = 4096;
