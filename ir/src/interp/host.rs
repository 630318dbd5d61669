//! What the interpreter asks of its surroundings.
//!
//! A program's ops run in the interpreter; global memory and everything
//! that joins concurrent partitions belong to a [`Host`]. The plain
//! interpreter ([`super::run_grid`]) uses [`PlainHost`]: memory and nothing
//! else, so aref ops and `ws` are errors there. The aref simulator
//! (`tawa-aref`) supplies hosts that run the partitions of a `ws` op
//! concurrently and make aref ops block as mbarriers would.

use super::memory::Memory;
use super::value::{RVal, SlotView};
use super::InterpError;
use crate::function::{Function, Op};
use crate::ops::Loc;
use crate::types::Type;

/// Why the plain interpreter stops at warp-specialized IR.
const NEEDS_SIMULATOR: &str =
    "warp-specialized IR (ws, aref ops) runs only in the aref simulator (tawa-aref)";

/// A `ws` op reached by a program, handed to [`Host::warp_specialize`].
pub struct WsLaunch<'f> {
    pub func: &'f Function,
    /// The `ws` op; its regions are the partitions.
    pub op: Op,
    /// Every value defined when the op was reached, indexed by
    /// [`crate::Value`] index, for [`super::run_region`] to start each
    /// partition with.
    pub env: Vec<Option<RVal>>,
    pub pid: [u32; 3],
    pub grid: [u32; 3],
    pub max_steps: Option<u64>,
}

/// Global memory plus the behaviour of arefs and warp specialization.
///
/// The `aref_*` methods receive the aref's number (from the [`RVal::Aref`]
/// that [`Host::aref_create`] returned) and the iteration index; errors are
/// messages that the interpreter completes with the op, its location and
/// the program id.
pub trait Host {
    /// Global memory of the launch.
    fn memory(&mut self) -> &mut Memory;

    /// Whether the interpreter calls [`Host::sync_point`] (checking each op
    /// costs a little, so hosts without partitions say no).
    fn wants_sync_points(&self) -> bool {
        false
    }

    /// Called before an op whose effect another partition can observe or
    /// alter: global memory accesses, aref ops, `print`, and any op reading
    /// a slot view. Ops in between only touch the partition's own values,
    /// so switching partitions here alone loses no interleaving's outcome.
    fn sync_point(&mut self, _op: Op) -> Result<(), String> {
        Ok(())
    }

    /// `aref.create` with result type `ty`; returns the [`RVal::Aref`].
    fn aref_create(&mut self, _op: Op, _ty: &Type) -> Result<RVal, String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// `aref.put`: `values` are copies of the written tiles.
    fn aref_put(
        &mut self,
        _op: Op,
        _aref: u32,
        _index: i64,
        _values: Vec<RVal>,
    ) -> Result<(), String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// `aref.put` in a kernel launched in CTA pairs: `multicast[j]` says
    /// whether both CTAs copy tile `j` in halves into both CTAs' slots
    /// (`Function::put_multicast`). A host that runs one program at a
    /// time has no peer CTA: the slot gets the tiles as a plain put.
    fn aref_put_multicast(
        &mut self,
        op: Op,
        aref: u32,
        index: i64,
        values: Vec<RVal>,
        _multicast: Vec<bool>,
    ) -> Result<(), String> {
        self.aref_put(op, aref, index, values)
    }

    /// `aref.consumed` in a kernel launched in CTA pairs:
    /// `peer_has_tile` says whether the peer CTA has a tile this round
    /// (`Function::consumed_peer`), whose producer then waits for this
    /// release too.
    fn aref_consumed_paired(
        &mut self,
        op: Op,
        aref: u32,
        index: i64,
        _peer_has_tile: bool,
    ) -> Result<(), String> {
        self.aref_consumed(op, aref, index)
    }

    /// `aref.get`: returns one [`RVal::View`] per buffer.
    fn aref_get(&mut self, _op: Op, _aref: u32, _index: i64) -> Result<Vec<RVal>, String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// `aref.consumed`.
    fn aref_consumed(&mut self, _op: Op, _aref: u32, _index: i64) -> Result<(), String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// An async `dot` (at `loc`) issued one tensor-core group; `reads` are
    /// the slot views among its operands, which the group may read until a
    /// `dot_wait` retires it.
    fn mma_issued(&mut self, _loc: Loc, _reads: Vec<SlotView>) -> Result<(), String> {
        Ok(())
    }

    /// `dot_wait {pending}`: every group but the `pending` newest retires.
    /// A plain `dot` waits with 0.
    fn mma_wait(&mut self, _pending: u32) -> Result<(), String> {
        Ok(())
    }

    /// `turn.take`: waits for this warpgroup's turn. Hosts that run a
    /// partition's warpgroups as one (the plain interpreter) have nothing
    /// to wait for.
    fn turn_take(&mut self, _op: Op) -> Result<(), String> {
        Ok(())
    }

    /// `turn.pass`: gives the turn to the next warpgroup.
    fn turn_pass(&mut self, _op: Op) -> Result<(), String> {
        Ok(())
    }

    /// `cluster.sum` of `partial` with `split` CTAs a tile: with 2, the
    /// sum of the CTA pair's partials at rank 0, `partial` itself at rank
    /// 1; with 1, `partial`. A host that runs one program at a time has
    /// no peer to wait for.
    fn cluster_sum(&mut self, _op: Op, partial: RVal, split: i64) -> Result<RVal, String> {
        if split == 1 {
            return Ok(partial);
        }
        Err("cluster.sum of a split tile needs the CTA pair of the aref simulator".into())
    }

    /// `stream_k.put` by program `pid`: its partial sums into its
    /// workspace slot.
    fn stream_k_put(&mut self, _op: Op, _pid: [u32; 3], _sums: Vec<RVal>) -> Result<(), String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// `stream_k.take` by program `pid` of program `from`'s partial sums
    /// (same y and z): `sums[i] + its[i]`.
    fn stream_k_take(
        &mut self,
        _op: Op,
        _pid: [u32; 3],
        _from: i64,
        _sums: Vec<RVal>,
    ) -> Result<Vec<RVal>, String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// The current contents of a viewed slot buffer.
    fn read_view(&self, _view: &SlotView) -> Result<RVal, String> {
        Err(NEEDS_SIMULATOR.into())
    }

    /// Runs the partitions of a `ws` op to completion.
    fn warp_specialize(&mut self, ws: WsLaunch<'_>) -> Result<(), InterpError> {
        let data = &ws.func.ops[ws.op];
        Err(InterpError {
            message: NEEDS_SIMULATOR.into(),
            op: "ws".into(),
            loc: data.loc,
            pid: ws.pid,
        })
    }
}

/// The plain interpreter's host: global memory only.
pub struct PlainHost<'m> {
    pub mem: &'m mut Memory,
}

impl Host for PlainHost<'_> {
    fn memory(&mut self) -> &mut Memory {
        self.mem
    }
}
