//! Warp-specialization partitioner: decides which ops run in the producer
//! warpgroup (TMA tile copies and the address arithmetic only they use) and
//! which in the consumer warpgroups, and joins them with arefs.
//!
//! Written so far: the analyses the partitioning rests on.
//!
//! - [`tma_infer`]: which loads can become TMA tile copies, with the
//!   recipe (base, extents, strides, box, swizzle, coordinates) for each
//!   and a one-sentence reason for each that cannot; `tawa-rs --explain`
//!   prints them.
//! - [`affine`]: symbolic forms of integer, pointer and mask values
//!   (polynomials over kernel scalars, per-dimension index terms, bound
//!   checks) that the TMA inference reads addresses from.
//! - [`wrap_proof`]: the proof that rows read through a wrapped index
//!   (`% M`) only reach stores that mask them.
//! - [`before_base`]: unmasked loads and stores that provably start before
//!   their tensor (the driver warns about them).
//!
//! - [`partition`]: the producer/consumer split itself
//!   ([`warp_specialize`]): a top-level loop whose TMA tile loads feed
//!   dots becomes a `ws` op with a producer partition putting the tiles
//!   into one aref and a consumer partition getting them; `tawa-rs --emit
//!   ws-ir` prints the result.
//! - [`tma_lower`]: the loads the TMA inference decided on become
//!   `desc_load`s of descriptors built from their recipes at the top of
//!   the kernel, the form the partitioner moves and the backend turns
//!   into `cp.async.bulk.tensor` copies.
//! - [`producer_copy`]: the mainloop tiles TMA refused that the producer's
//!   threads copy into the aref slot (`cp.async`), with the access width
//!   proven or checked at run time.
//! - [`copy_split`]: a producer loop split where its copies' masks stop
//!   being whole, the steps before copying without them.
//! - [`read_once`]: the TMA copies in a loop whose elements the launch
//!   reads once, marked for the backend's L2 eviction policy.
//! - [`tma_store`]: the tile stores the same analysis expresses as a copy
//!   of the whole tile become `desc_store`s of host-built descriptors,
//!   which the backend writes back with TMA stores.

pub mod affine;
pub mod before_base;
pub mod tma_infer;
pub mod wrap_proof;

pub use tma_infer::{explain, infer_tma, infer_tma_stores, NotTma, TmaPlan, TmaRecipe};
pub mod copy_split;
pub mod partition;
pub mod producer_copy;
pub mod read_once;
pub mod tma_lower;
pub mod tma_store;

pub use partition::{warp_specialize, warp_specialize_with_copies, PartitionError, WsOptions};
pub use tma_lower::lower_tma_loads;
pub use tma_store::lower_tma_stores;
