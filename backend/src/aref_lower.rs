//! The warp-specialized part of `emit_cuda`: the `ws` op, arefs and TMA
//! copies, lowered as the `tawa_aref` crate documents them.
//!
//! - **Partitions.** A `ws` op's partitions get consecutive warps, in the
//!   order of its regions (the producer first: warpgroup 0). Each branch
//!   starts with `setmaxnreg` (`dec` below the launch's even share, `inc`
//!   above) and renames `tid`, `warp` and `lane` from its own first thread,
//!   so that layouts and thread-0 guards inside it see a CTA of its own
//!   width. A `ws` op of one partition (the `--no-ws` software pipeline)
//!   is a plain block of every warp, without `setmaxnreg`. Every barrier the emitter writes inside a partition is `bar.sync
//!   id, threads` over that partition (id = its index + 1; 0 stays
//!   `__syncthreads`), and only the last partition may use the scratch
//!   area (the producer's TMA issue needs none) — or, where one-warpgroup
//!   partitions take turns with each other, each of them its own copy of
//!   it and of the TMA stores' staging buffer (`scratch_owners`): their
//!   epilogues run at the same time. Their turns are one named barrier
//!   each, as for the warpgroups of one partition.
//! - **Rings.** An `aref<D x (T...)>` is `D` slots of one buffer per `Ti`
//!   in shared memory, after the operand buffers, plus `D` `full` and `D`
//!   `empty` mbarriers. `aref.create` initializes them (one thread,
//!   `fence.mbarrier_init`, a CTA barrier) before the partitions branch.
//!   A buffer holds its tile as the `dot` that reads it wants it
//!   ([`OperandSmem`]): K-major when the tile's contiguous dimension is K,
//!   MN-major otherwise, in `w`-byte swizzle atoms — which is exactly what
//!   a TMA copy with the `w`-byte swizzle writes, box after box.
//! - **put** (producer): every buffer must come from a `desc_load` of a
//!   descriptor (`tma_lower`); the load itself emits
//!   nothing. One thread waits on `empty[s]` with parity `((i / D) & 1) ^
//!   1`, arrives on `full[s]` with `expect_tx` of the slot's bytes, and
//!   issues one `cp.async.bulk.tensor` per box (2-D, or up to 5-D for a
//!   rank-reduced `desc_load` whose descriptor has extra boxes of 1 — a
//!   batch or head offset — which add no bytes to the slot); the copy
//!   engine completes the phase. A partition that also gets from the ring (the op's only
//!   one) reconverges its warps with `__syncwarp` after the put: the
//!   `.aligned` wgmma that follows needs every lane.
//! - **Producer copies** (`producer_copy` in the partitioner): a buffer
//!   may instead come from a plain `load` of a pointer tile that TMA
//!   refused; every thread of the partition copies its 16-byte chunks of
//!   it (`cp.async`, or element copies where a chunk is not aligned;
//!   without the zero-fill size where all of a thread's chunks are inside
//!   the mask) and arrives once on `full[s]`, whose arrival count is then the
//!   partition's threads, plus one when the put also issues TMA copies
//!   (`expect_tx` of their bytes only). Those writes go through the
//!   generic proxy: the consumer fences (`fence.proxy.async`) after its
//!   wait on `full`, before wgmma reads the slot.
//! - **Mixed copies** (`FuncAttrs::mixed_copies`, the tile
//!   `Function::thread_copied` names): every thread of the partition waits
//!   on `empty[s]`; where the tile's box lies inside the tensor (a test
//!   the threads all compute alike) each copies its 16-byte chunks with
//!   `cp.async` into the slot's swizzled layout and arrives when they land,
//!   while thread 0's `expect_tx` counts the other tiles' TMA bytes; where
//!   it does not, thread 0 copies it with TMA too (zero fill past the
//!   edge) and the threads arrive at once. `full` counts the partition's
//!   threads plus thread 0's `expect_tx`; the consumer fences after its
//!   wait, as for producer copies.
//! - **Tensor maps built on the device.** A descriptor whose base,
//!   extents or strides the producer computes (loaded from a pointer
//!   array) has no map the host can encode: the host encodes a template
//!   (element type, box, swizzle) and the issuing thread rebuilds the map
//!   in its program's slot of a global workspace before the copies that
//!   need it, only when its values changed (`Emitter::device_map_update`).
//! - **get** (consumer): every thread waits on `full[s]` with parity
//!   `(i / D) & 1`; the results are views of the slot's buffers that the
//!   `dot`s read in place (no fence: nothing wrote them through the
//!   generic proxy).
//! - **CTA pairs** (`cluster = 2`, `tawa_pipeliner::tma_multicast`):
//!   `empty` counts the consumer warps of both CTAs, and the barriers'
//!   initialization is followed by a cluster barrier. A put tile whose
//!   multicast predicate holds is copied in halves: this CTA's rows
//!   `[rank * R/2, (rank + 1) * R/2)` through a tensor map of half-row
//!   boxes, `.multicast::cluster` into the same offset of both CTAs'
//!   slots, completing on the `full` barrier at the same offset in each;
//!   `full` always expects the whole slot. A release arrives on its own
//!   `empty[s]` and, while the peer has a tile this round, on the peer's
//!   (`mapa`, `mbarrier.arrive.shared::cluster`), else twice on its own.
//!   Both arrivals and the producer's wait keep the default CTA scope, as
//!   CUTLASS's cluster barriers do: what a release orders is reads of the
//!   slot that `wgmma.wait_group` already saw complete, so the peer's
//!   producer needs to see the arrival, not to acquire memory through it
//!   (`.release.cluster` arrivals and `.acquire.cluster` waits made the
//!   paired 128x256 GEMM run at half speed on the H100). The kernel ends
//!   with a cluster barrier of every thread, so that no CTA exits while
//!   its peer may still write its shared memory or arrive on its
//!   barriers.
//! - **consumed**: lane 0 of every consumer warp arrives on `empty[s]`
//!   (arrival count = the consuming warps; of a ring dealt between
//!   one-warpgroup partitions that take turns with each other — tile
//!   ping-pong — one partition's, which alone releases each slot). The `dot` before it already
//!   ran `wgmma.wait_group 0` in each warp, so that warp's reads of the
//!   slot are done when it arrives — the release rule of the aref docs.

use std::collections::HashMap;

use tawa_ir::{Function, Op, OpKind, Type, Value};

use super::{elem_cty, operand_swizzle, unsupported, Emitter, OperandSmem, Res};
use crate::codegen::{TensorMapParam, MAX_DYN_SMEM_BYTES};
use crate::layout::{Layout, MmaVersion, WARP_SIZE};
use crate::layout_assign::LayoutMap;
use tawa_ir::host_expr::{host_expr, HostExpr};

/// What a tensor map's copies do: its L2 promotion depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum MapUse {
    /// TMA loads into shared memory (aref slots).
    Load,
    /// TMA stores from the staging buffer (`tma_store_lower`).
    Store,
}

/// Where the code being emitted runs: one partition of a `ws` op.
#[derive(Clone, Copy, Debug)]
pub(super) struct PartitionCtx {
    /// Named barrier id (1, 2, ...).
    pub bar_id: u32,
    pub threads: u32,
    /// The partition that may use the scratch area.
    pub owns_scratch: bool,
    /// Which copy of the scratch area (and of the TMA stores' staging
    /// buffer) it uses: 0, or its place among the partitions that take
    /// turns with each other, which run epilogues at the same time
    /// ([`scratch_owners`]).
    pub scratch_slot: u32,
    /// The `ws` op's only partition (a software-pipelined loop), which
    /// reads what it puts.
    pub alone: bool,
    /// Ping-pong turns (`turn.take`/`turn.pass`): the named barrier of
    /// warpgroup 0's turn (warpgroup `w` waits at this id + `w`), the
    /// number of warpgroups, and this partition's place among them when
    /// it is one of the one-warpgroup partitions that take turns with each
    /// other (`None`: its own warpgroups take turns); `None` when the
    /// partition has no turn ops.
    pub turns: Option<(u32, u32, Option<u32>)>,
}

/// One aref ring in shared memory.
#[derive(Clone, Debug)]
pub(super) struct Ring {
    /// Byte offset of slot 0 from `tw_smem_raw`.
    base: u32,
    slot_bytes: u32,
    depth: u32,
    /// Per buffer: offset within a slot, layout, byte count.
    buffers: Vec<(u32, OperandSmem, u32)>,
    /// Byte offsets of the `full` and `empty` mbarrier arrays.
    full: u32,
    empty: u32,
    /// Arrivals that complete an `empty` phase: the consuming warps.
    empty_count: u32,
    /// Arrivals that complete a `full` phase: one for the thread that
    /// issues the TMA copies (`expect_tx`), one per thread of the putting
    /// partition when its threads copy tiles too (`Emitter::copy_chunks`).
    full_count: u32,
    /// Some buffer is written by the producer's threads (`cp.async` or
    /// plain stores: the generic proxy), which wgmma (the async proxy)
    /// reads only after a proxy fence.
    copied: bool,
    /// The kernel runs in CTA pairs whose producers multicast into both
    /// CTAs' slots (`tawa_pipeliner::tma_multicast`): `empty_count` counts
    /// the peer's consumers too.
    paired: bool,
}

impl Ring {
    /// The byte offset and size of the ring's slots (its barriers lie
    /// elsewhere).
    pub(super) fn slots_range(&self) -> (u32, u32) {
        (self.base, self.depth * self.slot_bytes)
    }
}

/// Rings of every `aref.create` of `func`, laid out from byte `start`
/// (a multiple of 1024, which 128-byte swizzled TMA boxes need); returns
/// them and the end offset.
pub(super) fn plan_rings(
    func: &Function,
    layouts: &LayoutMap,
    start: u32,
) -> Res<(HashMap<Value, Ring>, u32)> {
    let mut creates = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::ArefCreate) {
            creates.push(op);
        }
    });
    let mut rings = HashMap::new();
    let mut at = start.div_ceil(1024) * 1024;
    for op in creates {
        let data = &func.ops[op];
        let ring = data.results[0];
        let Type::Aref { depth, buffers } = func.ty(ring) else {
            return Err(unsupported(
                data.loc,
                "internal: aref.create of a non-aref type",
            ));
        };
        let (gets, consumers) = ring_users(func, ring);
        let (copy_threads, tma) = ring_producers(func, ring);
        let paired = func.attrs.cluster == 2;
        if consumers == 0 {
            // An mbarrier needs a positive arrival count, and a ring no one
            // releases stalls its producer after `depth` puts.
            return Err(unsupported(
                data.loc,
                "an aref that no partition releases (`aref.consumed`)",
            ));
        }
        // Sizes in u64 and bounded by what a block may have: the depth is
        // the user's (`--aref-depth`), and any product may overflow u32.
        let too_big = |bytes: u64| {
            unsupported(
                data.loc,
                format!(
                    "an aref ring of {depth} slots needs at least {bytes} bytes of shared memory; \
                     an sm_90 block can have at most {MAX_DYN_SMEM_BYTES} (use fewer aref slots, \
                     `--aref-depth`, or smaller blocks)"
                ),
            )
        };
        let limit = u64::from(MAX_DYN_SMEM_BYTES);
        let mut slot = Vec::new();
        let mut slot_bytes: u64 = 0;
        for (j, ty) in buffers.iter().enumerate() {
            let smem =
                buffer_smem(func, layouts, &gets, j, ty).map_err(|m| unsupported(data.loc, m))?;
            let bytes = ty.shape().iter().fold(
                u64::from(ty.scalar_type().map_or(4, |s| s.byte_size())),
                |n, &d| n.saturating_mul(u64::from(d)),
            );
            if slot_bytes.saturating_add(bytes) > limit {
                return Err(too_big(slot_bytes.saturating_add(bytes)));
            }
            slot.push((slot_bytes as u32, smem, bytes as u32));
            slot_bytes += bytes.div_ceil(1024) * 1024;
        }
        let ring_end = u64::from(at)
            .saturating_add(slot_bytes.saturating_mul(u64::from(*depth)))
            .saturating_add(16u64.saturating_mul(u64::from(*depth)));
        if ring_end > limit {
            return Err(too_big(ring_end - u64::from(at)));
        }
        // Every size below is at most `limit`, which fits u32.
        let slot_bytes = slot_bytes as u32;
        let ring_bytes = slot_bytes * depth;
        let full = at + ring_bytes;
        let empty = full + 8 * depth;
        rings.insert(
            ring,
            Ring {
                base: at,
                slot_bytes,
                depth: *depth,
                buffers: slot,
                full,
                empty,
                // A slot is free for either CTA's producer once the
                // consumers of both CTAs released it.
                empty_count: consumers * if paired { 2 } else { 1 },
                full_count: copy_threads + u32::from(tma || copy_threads == 0),
                copied: copy_threads > 0,
                paired,
            },
        );
        at = (empty + 8 * depth).div_ceil(1024) * 1024;
    }
    Ok((rings, at))
}

impl Ring {
    /// Whether the producer's threads write some buffer of the ring.
    pub(super) fn copied(&self) -> bool {
        self.copied
    }
}

/// The dots reading slot tile `v` (the op and the operand index), each
/// with whether it reads it through a 2-D `trans`; an error naming any
/// other use.
fn slot_readers(func: &Function, v: Value) -> Result<Vec<((Op, usize), bool)>, String> {
    // The ops of the kernel, not every op of the arena: passes leave the
    // ops they replaced there, detached, and a tile got outside a loop
    // the pipeliner rewrote (a tile's operand) is read by those too.
    let mut live = Vec::new();
    func.walk(&mut |op| live.push(op));
    let mut readers = Vec::new();
    for (op, data) in live.iter().map(|&op| (op, &func.ops[op])) {
        for (i, &o) in data.operands.iter().enumerate() {
            if o != v {
                continue;
            }
            match &data.kind {
                OpKind::Dot { .. } if i < 2 => readers.push(((op, i), false)),
                OpKind::Trans { perm } if perm.as_slice() == [1, 0] => {
                    let t = data.results[0];
                    for (top, tdata) in live.iter().map(|&op| (op, &func.ops[op])) {
                        for (ti, &to) in tdata.operands.iter().enumerate() {
                            if to != t {
                                continue;
                            }
                            if !matches!(tdata.kind, OpKind::Dot { .. }) || ti >= 2 {
                                return Err(format!(
                                    "a transposed tile got from an aref is used by `{}`; only `tl.dot` operands read aref slots through `trans`",
                                    tawa_ir::printer::op_name(&tdata.kind)
                                ));
                            }
                            readers.push(((top, ti), true));
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "a tile got from an aref is used by `{}`; only `tl.dot` operands are read from aref slots",
                        tawa_ir::printer::op_name(other)
                    ))
                }
            }
        }
    }
    Ok(readers)
}

/// The `aref.get` ops of `ring` and the warps of the partitions that
/// release it.
fn ring_users(func: &Function, ring: Value) -> (Vec<Op>, u32) {
    let mut gets = Vec::new();
    let mut warps = 0;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if matches!(data.kind, OpKind::ArefGet) && data.operands[0] == ring {
            gets.push(op);
        }
        if let OpKind::WarpSpecialize { partitions } = &data.kind {
            let together = func.turn_partitions(op);
            let mut releasers = Vec::new();
            for (i, (p, &region)) in partitions.iter().zip(&data.regions).enumerate() {
                let mut releases = false;
                func.walk_block(region, &mut |o| {
                    let d = &func.ops[o];
                    releases |= matches!(d.kind, OpKind::ArefConsumed) && d.operands[0] == ring;
                });
                if releases {
                    releasers.push((i, p.num_warps));
                }
            }
            // Partitions that take turns with each other deal the ring:
            // each slot is released by one of them (`tawa-aref` docs).
            let dealt = releasers.len() >= 2 && releasers.iter().all(|(i, _)| together.contains(i));
            warps += if dealt {
                releasers.iter().map(|&(_, w)| w).max().unwrap_or(0)
            } else {
                releasers.iter().map(|&(_, w)| w).sum()
            };
        }
    });
    (gets, warps)
}

/// Who completes a `full` phase of `ring`: the threads of the partition
/// whose puts copy tiles with its threads (a plain `load` put), and
/// whether some put issues TMA copies (a `desc_load`), whose one thread
/// arrives with `expect_tx`.
fn ring_producers(func: &Function, ring: Value) -> (u32, bool) {
    let mut threads = 0;
    let mut tma = false;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let OpKind::WarpSpecialize { partitions } = &data.kind else {
            return;
        };
        for (p, &region) in partitions.iter().zip(&data.regions) {
            func.walk_block(region, &mut |o| {
                let d = &func.ops[o];
                if !matches!(d.kind, OpKind::ArefPut) || d.operands[0] != ring {
                    return;
                }
                for &v in func.put_values(o) {
                    match func.def_op(v).map(|l| &func.ops[l].kind) {
                        Some(OpKind::Load { .. }) => threads = p.num_warps * WARP_SIZE,
                        _ => tma = true,
                    }
                }
                // Mixed copies: the threads copy one TMA tile (and arrive
                // even where TMA copies it instead).
                if func.thread_copied(o).is_some() {
                    threads = p.num_warps * WARP_SIZE;
                }
            });
        }
    });
    (threads, tma)
}

/// The partitions of `ws` op `op` that use the scratch area (and the TMA
/// stores' staging buffer), each its own copy, in the order of the
/// copies: those that take turns with each other (tile ping-pong: each
/// runs its epilogue while the other runs its mainloop), and the last
/// partition; only the last where none do.
pub(super) fn scratch_owners(func: &Function, op: Op) -> Vec<usize> {
    let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind else {
        return Vec::new();
    };
    let mut owners = func.turn_partitions(op);
    let last = partitions.len().saturating_sub(1);
    if !owners.contains(&last) {
        owners.push(last);
    }
    owners
}

/// How buffer `j` of a ring lies in shared memory: as the `dot`s reading
/// it (through `aref.get`) want it, given that a TMA copy writes it with
/// its contiguous (last) dimension along the swizzle lines.
fn buffer_smem(
    func: &Function,
    layouts: &LayoutMap,
    gets: &[Op],
    j: usize,
    ty: &Type,
) -> Result<OperandSmem, String> {
    let shape = ty.shape();
    let eb = ty.scalar_type().map_or(4, |s| s.byte_size());
    if shape.len() != 2 {
        return Err(format!(
            "aref buffer of type {ty}: only 2-D tiles travel through arefs"
        ));
    }
    // Which operand of the dots reads the slot, its bytes per wgmma, and
    // whether it is read through `trans` (a column-major operand copied
    // in box order).
    let mut role = None;
    for &get in gets {
        let v = func.ops[get].results[j];
        for (reader, transposed) in slot_readers(func, v)? {
            let data = &func.ops[reader.0];
            let i = reader.1;
            let Some(Layout::Mma(mma)) = layouts.home(data.results[0]) else {
                return Err("internal: dot without an MMA layout".into());
            };
            if mma.version != MmaVersion::V3 {
                return Err(
                    "aref slots are read by wgmma only (use 4 or 8 warps and BLOCK_M >= 64)".into(),
                );
            }
            let per_instr = if i == 0 { 64 } else { mma.instr_n } * eb;
            if role.is_some_and(|(r, _, t)| r != i || t != transposed) {
                return Err("one aref buffer feeds dots as different operands".into());
            }
            role = Some((i, per_instr, transposed));
        }
    }
    let Some((role, per_instr, transposed)) = role else {
        return Err("an aref buffer no dot reads".into());
    };
    // In the operand's coordinates (what the dot reads): K is dimension 1
    // of `a`, 0 of `b`; the slot's last dimension is the contiguous one,
    // which is the operand's other dimension when read through `trans`.
    let k_dim = 1 - role;
    let contiguous = if transposed { 0 } else { 1 };
    let mn_major = k_dim != contiguous;
    let w = operand_swizzle(shape[1] * eb).ok_or_else(|| {
        format!(
            "aref buffer of type {ty}: its contiguous dimension must make 32, 64 or a multiple of 128 bytes"
        )
    })?;
    if mn_major && (eb != 2 || !per_instr.is_multiple_of(w)) {
        return Err(format!(
            "aref buffer of type {ty}: an M/N-contiguous operand must be 16-bit with whole swizzle lines per wgmma"
        ));
    }
    Ok(OperandSmem { k_dim, mn_major, w })
}

impl Emitter<'_> {
    /// A barrier over the threads of the code being emitted.
    pub(super) fn partition_barrier(&mut self) -> bool {
        if let Some(take) = self.turn_held {
            self.barrier_in_turn.get_or_insert(take);
        }
        match self.partition {
            Some(p) => {
                self.line(format!(
                    "asm volatile(\"bar.sync {}, {};\" ::: \"memory\");",
                    p.bar_id, p.threads
                ));
                true
            }
            None => false,
        }
    }

    /// `aref.create`: the ring's mbarriers, initialized before any
    /// partition or the copy engine uses them.
    pub(super) fn aref_create(&mut self, op: Op) -> Res<()> {
        let data = &self.func.ops[op];
        if self.partition.is_some() {
            return Err(unsupported(
                data.loc,
                "internal: aref.create inside a partition",
            ));
        }
        let ring = self.rings[&data.results[0]].clone();
        self.line(format!(
            "// aref: {} slots of {} bytes at {}, full/empty barriers at {}/{}",
            ring.depth, ring.slot_bytes, ring.base, ring.full, ring.empty
        ));
        self.line(format!(
            "if (threadIdx.x == 0) {{\n#pragma unroll\n  for (int s = 0; s < {d}; ++s) {{\n    tw_mbar_init(tw_smem_u32 + {f} + 8 * s, {c});\n    tw_mbar_init(tw_smem_u32 + {e} + 8 * s, {n});\n  }}\n  asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n}}\n__syncthreads();",
            d = ring.depth,
            f = ring.full,
            e = ring.empty,
            n = ring.empty_count,
            c = ring.full_count
        ));
        if ring.paired {
            // The peer's producer multicasts onto these barriers and its
            // consumers arrive on them: initialized before either CTA goes on.
            self.line("tw_cluster_sync();");
        }
        Ok(())
    }

    /// The `ws` op: one branch per partition.
    pub(super) fn warp_specialize(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let OpKind::WarpSpecialize { partitions } = &data.kind else {
            unreachable!()
        };
        if self.partition.is_some() {
            return Err(unsupported(data.loc, "nested `ws` ops are not supported"));
        }
        let mut first_warp = 0;
        // Named barriers: 0 is `__syncthreads`, 1..=P the partitions',
        // then one per warpgroup of each partition that takes turns.
        let mut next_bar = partitions.len() as u32 + 1;
        // One-warpgroup partitions that take turns with each other: their
        // barriers, one each, come first.
        let together = f.turn_partitions(op);
        let together_bars = next_bar;
        next_bar += together.len() as u32;
        let owners = scratch_owners(f, op);
        self.init_exchanges();
        for (i, (p, &region)) in partitions.iter().zip(&data.regions).enumerate() {
            let threads = p.num_warps * WARP_SIZE;
            let first = first_warp * WARP_SIZE;
            let cond = if partitions.len() == 1 {
                "{".to_string()
            } else if i + 1 == partitions.len() {
                "} else {".to_string()
            } else if i == 0 {
                format!("if (threadIdx.x < {}) {{", first + threads)
            } else {
                format!("}} else if (threadIdx.x < {}) {{", first + threads)
            };
            self.line(cond);
            self.indent += 1;
            self.line(format!(
                "// partition {} ({} warps, from warp {first_warp})",
                p.role, p.num_warps
            ));
            if let Some(regs) = p.regs {
                if !(24..=256).contains(&regs) || regs % 8 != 0 {
                    return Err(unsupported(
                        data.loc,
                        format!(
                            "partition `{}` asks for {regs} registers; `setmaxnreg` takes a multiple of 8 from 24 to 256",
                            p.role
                        ),
                    ));
                }
                let even = self.kernel_regs;
                let dir = if regs < even { "dec" } else { "inc" };
                if regs != even {
                    self.line(format!(
                        "asm volatile(\"setmaxnreg.{dir}.sync.aligned.u32 {regs};\" ::: \"memory\");"
                    ));
                }
            }
            self.line(format!("const int tid = threadIdx.x - {first};"));
            self.line("const int lane = tid & 31;");
            self.line("const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);");
            self.line("(void)tid; (void)lane; (void)warp;");
            let mut has_turns = false;
            f.walk_block(region, &mut |o| has_turns |= f.ops[o].kind.is_turn());
            if let Some(slot) = owners.iter().position(|&o| o == i).filter(|&s| s > 0) {
                // Its own copy of the scratch area: the partitions taking
                // turns run their epilogues at the same time.
                self.line(format!(
                    "unsigned char* const tw_smem = tw_smem_raw + {} + {slot}u * tw_scratch_stride;",
                    self.operand_buffer_bytes
                ));
            }
            let turns = if let Some(place) = together.iter().position(|&t| t == i) {
                let groups = together.len() as u32;
                if together_bars + groups > 16 {
                    return Err(unsupported(
                        data.loc,
                        format!(
                            "internal: {groups} partitions take turns with named barriers \
                             {together_bars}.. (16 exist)"
                        ),
                    ));
                }
                if place == 0 {
                    self.line(format!(
                        "// ping-pong: {groups} partitions take turns at named barriers {together_bars}..{}",
                        together_bars + groups - 1
                    ));
                }
                // As between the warpgroups of one partition (below): the
                // last one arrives once before any turn.
                if place as u32 + 1 == groups {
                    self.line(format!(
                        "asm volatile(\"bar.arrive {together_bars}, 256;\" ::: \"memory\");"
                    ));
                }
                Some((together_bars, groups, Some(place as u32)))
            } else if has_turns {
                let groups = p.num_warps / 4;
                if groups < 2 || next_bar + groups > 16 {
                    return Err(unsupported(
                        data.loc,
                        format!(
                            "internal: partition `{}` takes turns between {groups} warpgroup(s) \
                             with named barriers {next_bar}.. (16 exist)",
                            p.role
                        ),
                    ));
                }
                // Warpgroup w's turn is a barrier of its 128 threads
                // waiting (`bar.sync`) and the previous warpgroup's 128
                // arriving (`bar.arrive`). The last warpgroup arrives once
                // before any turn, so that warpgroup 0 goes first.
                self.line(format!(
                    "// ping-pong: {groups} warpgroups take turns at named barriers {next_bar}..{}",
                    next_bar + groups - 1
                ));
                self.line(format!(
                    "if ((warp >> 2) == {}) asm volatile(\"bar.arrive {next_bar}, 256;\" ::: \"memory\");",
                    groups - 1
                ));
                let t = (next_bar, groups, None);
                next_bar += groups;
                Some(t)
            } else {
                None
            };
            let saved = (self.partition, self.num_warps);
            self.partition = Some(PartitionCtx {
                bar_id: i as u32 + 1,
                threads,
                owns_scratch: owners.contains(&i),
                scratch_slot: owners.iter().position(|&o| o == i).unwrap_or(0) as u32,
                alone: partitions.len() == 1,
                turns,
            });
            self.num_warps = p.num_warps;
            self.copies.push(HashMap::new());
            self.partition_body(region)?;
            self.drain_tma_stores();
            let mut thread_copies = false;
            f.walk_block(region, &mut |o| {
                let d = &f.ops[o];
                thread_copies |= matches!(d.kind, OpKind::ArefPut)
                    && f.put_values(o).iter().any(|&v| {
                        f.def_op(v)
                            .is_some_and(|l| matches!(f.ops[l].kind, OpKind::Load { .. }))
                    });
            });
            if thread_copies {
                // The thread's last copies land (and arrive on `full`)
                // before it leaves the partition.
                self.line("asm volatile(\"cp.async.wait_all;\" ::: \"memory\");");
            }
            self.copies.pop();
            (self.partition, self.num_warps) = saved;
            self.indent -= 1;
            first_warp += p.num_warps;
        }
        self.line("}");
        Ok(())
    }

    /// The ops of a partition's `region`. A producer with copies the
    /// launch reads once (`desc_load {read_once}`) is emitted twice: where
    /// the launch's grid is what one of their marks needs, with those
    /// copies asking L2 to evict first; otherwise as without the marks.
    /// So a launch whose grid shares the operands runs the copies it ran
    /// before the marks existed (the same C, beside the other version). The
    /// first form, a policy on every marked copy (of normal priority where
    /// the grid shares the operands), ran such GEMMs 13-24% slower on the
    /// H200; whether the policy or the code around it cost that was not
    /// measured apart.
    /// Partitions with dots (a fused `--no-ws` kernel) and producers that
    /// build tensor maps on the device are emitted once, without hints.
    fn partition_body(&mut self, region: tawa_ir::Block) -> Res<()> {
        let tests = self.read_once_tests(region)?;
        if tests.is_empty() {
            return self.block(region);
        }
        if tests.iter().any(|t| t == "true") {
            self.read_once_hints = true;
            let emitted = self.block(region);
            self.read_once_hints = false;
            return emitted;
        }
        self.line(format!("if ({}) {{", tests.join(" || ")));
        self.indent += 1;
        self.read_once_hints = true;
        let hinted = self.block(region);
        self.read_once_hints = false;
        hinted?;
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        self.copies.pop();
        self.copies.push(HashMap::new());
        self.block(region)?;
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// The distinct launch tests ([`Self::read_once_test`]) of the copies
    /// in `region` the launch reads once; none where the region has a
    /// dot or a descriptor the host does not build.
    fn read_once_tests(&self, region: tawa_ir::Block) -> Res<Vec<String>> {
        let f = self.func;
        let (mut marks, mut other) = (Vec::new(), false);
        f.walk_block(region, &mut |o| match &f.ops[o].kind {
            OpKind::Dot { .. } => other = true,
            OpKind::DescLoad { read_once } => {
                if !tawa_ir::host_expr::host_descriptor(f, f.ops[o].operands[0]) {
                    other = true;
                } else if let Some(axes) = read_once {
                    marks.push(axes.clone());
                }
            }
            _ => {}
        });
        if other {
            return Ok(Vec::new());
        }
        let mut tests: Vec<String> = Vec::new();
        for axes in marks {
            let t = self.read_once_test(&axes)?;
            if !tests.contains(&t) {
                tests.push(t);
            }
        }
        Ok(tests)
    }

    /// `turn.take` (`take`) or `turn.pass`: this warpgroup waits at its own
    /// turn barrier, or arrives at the next warpgroup's.
    pub(super) fn turn(&mut self, op: Op, take: bool) -> Res<()> {
        let Some((first, groups, place)) = self.partition.and_then(|p| p.turns) else {
            return Err(unsupported(
                self.func.ops[op].loc,
                "internal: a turn op outside a partition that takes turns",
            ));
        };
        self.turn_held = take.then_some(self.func.ops[op].loc);
        let me = place.map_or("(warp >> 2)".to_string(), |k| k.to_string());
        let (inst, id) = if take {
            ("bar.sync", format!("{first} + {me}"))
        } else {
            ("bar.arrive", format!("{first} + ({me} + 1) % {groups}"))
        };
        self.line(format!(
            "asm volatile(\"{inst} %0, 256;\" :: \"r\"({id}) : \"memory\");"
        ));
        Ok(())
    }

    /// `(slot, phase parity)` C expressions of iteration `i` of `ring`.
    fn slot_of(&mut self, ring: &Ring, i: Value) -> Res<(String, String)> {
        let i = self.scalar(i)?;
        let s = self.tmp("slot");
        let k = self.tmp("parity");
        self.line(format!(
            "const unsigned {s} = (unsigned)({i}) % {d}u, {k} = ((unsigned)({i}) / {d}u) & 1u;",
            d = ring.depth
        ));
        Ok((s, k))
    }

    /// `aref.put` of TMA-loaded tiles and of tiles the producer's threads
    /// copy ([`Self::copy_chunks`]).
    pub(super) fn aref_put(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let ring = self.rings[&data.operands[0]].clone();
        let (s, k) = self.slot_of(&ring, data.operands[1])?;
        let iteration = self.scalar(data.operands[1])?;
        let mut bytes: u32 = 0;
        let mut copies = Vec::new();
        let mut thread_copies = Vec::new();
        let mixed = f.thread_copied(op);
        let mut mixed_put = None;
        for (j, &v) in f.put_values(op).iter().enumerate() {
            let load = f.def_op(v).ok_or_else(|| {
                unsupported(data.loc, "internal: an aref.put of a tile no op defines")
            })?;
            if matches!(f.ops[load].kind, OpKind::Load { .. }) {
                thread_copies.push((load, j));
                continue;
            }
            if !matches!(f.ops[load].kind, OpKind::DescLoad { .. }) {
                return Err(unsupported(
                    data.loc,
                    "internal: an aref.put of a tile that is neither a descriptor load nor a pointer-tile load (the producer issues TMA copies and thread copies only)",
                ));
            }
            let (off, smem, b) = ring.buffers[j];
            let dst = format!("{} + {s} * {} + {off}", ring.base, ring.slot_bytes);
            let bar = format!("tw_smem_u32 + {} + 8 * {s}", ring.full);
            let whole = self.tma_copies(load, smem, &dst, &bar, (&ring, &iteration))?;
            if mixed == Some(j) {
                mixed_put = Some((load, smem, dst, b, whole));
                continue;
            }
            bytes += b;
            match f.put_multicast(op).map(|p| p[j]) {
                Some(pred) => {
                    // Both CTAs' producers agree on the predicate: each
                    // copies half of the rows into both CTAs' slots, or
                    // the whole box into its own.
                    let pred = self.scalar(pred)?;
                    copies.push(format!("if ({pred}) {{"));
                    copies.extend(
                        self.tma_multicast_halves(load, smem, &dst, &bar, data.loc)?
                            .into_iter()
                            .map(|l| format!("  {l}")),
                    );
                    copies.push("} else {".into());
                    copies.extend(whole.into_iter().map(|l| format!("  {l}")));
                    copies.push("}".into());
                }
                None => copies.extend(whole),
            }
        }
        if let Some((load, smem, dst, tile_bytes, tma)) = mixed_put {
            return self.mixed_put(
                &ring,
                (&s, &k),
                (load, smem, &dst, tile_bytes, tma),
                (bytes, copies),
                data.loc,
            );
        }
        if !copies.is_empty() {
            self.line("if (tid == 0) {");
            self.indent += 1;
            self.line(format!(
                "tw_mbar_wait(tw_smem_u32 + {} + 8 * {s}, {k} ^ 1u);",
                ring.empty
            ));
            self.line(format!(
                "tw_mbar_expect_tx(tw_smem_u32 + {} + 8 * {s}, {bytes});",
                ring.full
            ));
            for c in copies {
                self.line(c);
            }
            self.indent -= 1;
            self.line("}");
            if self.partition.is_some_and(|p| p.alone) {
                // Thread 0 branched off; its warp runs `.aligned` wgmma next.
                self.line("__syncwarp();");
            }
        }
        if !thread_copies.is_empty() {
            self.copy_chunks(&ring, &s, &k, &thread_copies, data.loc)?;
        }
        Ok(())
    }

    /// A put under mixed copies ([`tawa_ir::FuncAttrs::mixed_copies`]):
    /// the tile `mixed` (its `desc_load` op, layout, slot address, bytes
    /// and the TMA copies that would write it) is copied by every thread
    /// of the partition where its box lies inside the tensor (and the row
    /// stride fits in 32 bits), 16 bytes a `cp.async` into the slot's
    /// swizzled layout, each thread then arriving on `full[s]` when its
    /// copies land (`cp.async.mbarrier.arrive.noinc`); where the box
    /// reaches past an edge (a ragged last tile or K step) thread 0 copies
    /// it with TMA, which zero-fills, and the threads arrive at once. The other tiles
    /// (`tma`: their bytes and copies) are TMA copies as in any put. Every
    /// thread waits on `empty[s]`; the test is the same in all of them.
    fn mixed_put(
        &mut self,
        ring: &Ring,
        (s, k): (&str, &str),
        mixed: (Op, OperandSmem, &str, u32, Vec<String>),
        tma: (u32, Vec<String>),
        loc: tawa_ir::Loc,
    ) -> Res<()> {
        let (load, smem, dst, tile_bytes, tile_tma) = mixed;
        let (bytes, copies) = tma;
        let f = self.func;
        let data = &f.ops[load];
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let eb = self.scalar_of(r).byte_size();
        let threads = self.partition.map_or(0, |p| p.threads);
        let per_chunk = 16 / eb.max(1);
        let chunks_per_row = shape[1] * eb / 16;
        let chunks = shape[0] * chunks_per_row;
        let make = f.def_op(data.operands[0]).map(|m| &f.ops[m]);
        // `Function::thread_copied` chose a tile these hold for; only the
        // partition's width is the backend's to check.
        let (Some(make), true) = (
            make.filter(|m| matches!(m.kind, OpKind::MakeTensorDesc) && m.operands.len() == 5),
            shape.len() == 2 && threads == tawa_ir::MIXED_COPY_THREADS,
        ) else {
            return Err(unsupported(
                loc,
                "internal: a mixed copy outside a producer warpgroup, or of a tile that is not a \
                 2-D box of a descriptor the kernel makes",
            ));
        };
        let base = self.scalar(make.operands[0])?;
        let (rows, cols) = (
            self.scalar(make.operands[1])?,
            self.scalar(make.operands[2])?,
        );
        let stride = self.scalar(make.operands[3])?;
        let (row0, col0) = (
            self.scalar(data.operands[1])?,
            self.scalar(data.operands[2])?,
        );
        let cty = elem_cty(self.elem(r));
        let inside = self.tmp("inside");
        self.line(format!(
            "tw_mbar_wait(tw_smem_u32 + {} + 8 * {s}, {k} ^ 1u);",
            ring.empty
        ));
        // In elements: the box's rows and columns within the extents, its
        // first column on a 16-byte boundary (the base and the row stride
        // are, as TMA requires), and the row stride within 32 bits, so that
        // the threads address rows by a 32-bit stride (`stride32`).
        let stride32 = format!("(long long)(int)({stride})");
        self.line(format!(
            "const bool {inside} = (long long)({row0}) >= 0 && (long long)({row0}) + {} <= (long long)({rows}) && (long long)({col0}) >= 0 && (long long)({col0}) + {} <= (long long)({cols}) && (long long)({col0}) % {per_chunk} == 0 && {stride32} == (long long)({stride});",
            shape[0], shape[1]
        ));
        let full = format!("tw_smem_u32 + {} + 8 * {s}", ring.full);
        self.line("if (tid == 0) {");
        self.indent += 1;
        self.line(format!(
            "tw_mbar_expect_tx({full}, {inside} ? {bytes}u : {}u);",
            bytes + tile_bytes
        ));
        for c in copies {
            self.line(c);
        }
        self.line(format!("if (!{inside}) {{"));
        self.indent += 1;
        for c in tile_tma {
            self.line(c);
        }
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        self.line(format!("if ({inside}) {{"));
        self.indent += 1;
        // Chunk q = tid + threads * i: row q / chunks_per_row, chunk
        // q % chunks_per_row, so that a warp's lanes read whole rows. The
        // rows' offset multiplies by the stride's 32-bit value
        // (`stride32`, which `inside` checks), the step between a thread's
        // rows by the stride as given; both are measured choices (H200,
        // `bench/RESULTS.md`, twenty-fourth session). With a host
        // descriptor's 64-bit stride in both, NVRTC recomputed the rows'
        // 64-bit offsets every K step, and tutorial 09's TMA-persistent
        // kernel ran 5% slower than with them hoisted, its L2 reading
        // 70% more sectors for the same loads (ncu; why it counts more is
        // not known). With the 32-bit value in both, kernels whose stride
        // is an int widened (linear, GEGLU, split-K) stepped from a 32-bit
        // register with `IMAD.WIDE` and ran 11-24% slower. As written,
        // those kernels' SASS is what it was, and tutorial 09's hoists its
        // offsets: 1.01x Triton, against 1.00x with TMA alone.
        self.line(format!(
            "const {cty}* src = ({cty}*)({base}) + ((long long)({row0}) + tid / {chunks_per_row}) * {stride32} + (long long)({col0}) + (tid % {chunks_per_row}) * {per_chunk};"
        ));
        self.line("#pragma unroll");
        self.line(format!("for (int i = 0; i < {}; ++i) {{", chunks / threads));
        self.indent += 1;
        self.line(format!(
            "const int q = tid + {threads} * i, row = q / {chunks_per_row};"
        ));
        self.line(format!(
            "tw_cp_async16(tw_smem_u32 + {dst} + tw_swz(row, (q % {chunks_per_row}) * 16, {}, {}), src + (long long)({} * i / {chunks_per_row}) * (long long)({stride}), 16u);",
            shape[0], smem.w, threads
        ));
        self.indent -= 1;
        self.line("}");
        self.line(format!("tw_cp_async_arrive({full});"));
        self.indent -= 1;
        // TMA copied the tile: the threads' arrivals complete the count.
        self.line(format!("}} else {{ tw_mbar_arrive({full}); }}"));
        if self.partition.is_some_and(|p| p.alone) {
            self.line("__syncwarp();");
        }
        Ok(())
    }

    /// The producer copy of the `load`s of pointer tiles in `loads` (op,
    /// buffer index) into slot `s` (phase parity `k`) of `ring`: every
    /// thread of the partition waits for the slot to be free, copies its
    /// elements of each tile to where the slot's swizzled layout puts them
    /// and arrives once on `full[s]` (whose count is the partition's
    /// threads). A thread whose 16-byte chunks (the tile's registers run
    /// along its contiguous last dimension, which the slot's lines hold)
    /// are all 16-byte aligned issues one `cp.async.cg` per chunk, masked
    /// ones with source size 0 (zero fill), and arrives when they land
    /// (`cp.async.mbarrier.arrive.noinc`); the alignment is checked at run
    /// time unless the axis facts prove it. Another thread copies element
    /// by element through registers, fences its stores for the async proxy
    /// and arrives. The consumer fences again after its wait
    /// ([`Self::aref_get`]): `cp.async` writes through the generic proxy
    /// and wgmma reads through the async one.
    fn copy_chunks(
        &mut self,
        ring: &Ring,
        s: &str,
        k: &str,
        loads: &[(Op, usize)],
        loc: tawa_ir::Loc,
    ) -> Res<()> {
        let f = self.func;
        self.line(format!(
            "tw_mbar_wait(tw_smem_u32 + {} + 8 * {s}, {k} ^ 1u);",
            ring.empty
        ));
        struct Tile {
            ptrs: String,
            mask: Option<String>,
            /// The mask is not proven constant over each chunk: a chunk
            /// is copied whole only where it is at run time.
            mask_varies: bool,
            regs: u32,
            /// Elements per 16-byte chunk, 1 when the registers do not
            /// hold whole chunks (element copies only).
            chunk: u32,
            aligned: bool,
            eb: u32,
            cty: String,
            line: String,
            along: String,
            /// The same, of register `g` (a chunk's first).
            line_g: String,
            along_g: String,
            /// The slot buffer's byte offset from the start of shared
            /// memory (a C expression).
            base: String,
            /// The swizzle's lines and width (`tw_swz`'s last arguments).
            lines_w: String,
        }
        let mut tiles = Vec::new();
        for &(load, j) in loads {
            let data = &f.ops[load];
            let OpKind::Load { has_mask, .. } = data.kind else {
                unreachable!()
            };
            let r = data.results[0];
            let shape = self.ty(r).shape().to_vec();
            let layout = self.layouts.home(r).cloned().ok_or_else(|| {
                unsupported(data.loc, "internal: a producer copy without a layout")
            })?;
            let eb = self.scalar_of(r).byte_size().max(1);
            let (off, smem, _) = ring.buffers[j];
            let w = smem.w;
            // A slot's swizzle lines run along the tile's last dimension,
            // as TMA writes them (`buffer_smem`), whether the dots read the
            // tile or its transpose: in the tile's coordinates, lines are
            // its rows.
            let (line_dim, along_dim) = (0, 1);
            if shape.len() != 2 {
                return Err(unsupported(
                    loc,
                    "internal: a producer copy of a tile that is not 2-D",
                ));
            }
            let per_chunk = 16 / eb;
            let ptr = data.operands[0];
            // The proven facts, not the kernel's hints: a chunk copied
            // whole on a run-time alignment check must not straddle a
            // wrap that a `max_contiguous` hint papers over.
            let info = self.proven_axis.get(ptr);
            let runs = matches!(
                (&layout, layout.digits(&shape).first()),
                (Layout::Blocked(b), Some(d))
                    if d.dim == 1 && d.stride == 1 && b.size_per_thread[1] == d.size
                        && d.size % per_chunk == 0
            );
            let contiguous = info.contiguity.get(1).is_some_and(|&c| c % per_chunk == 0);
            let mask_whole = !has_mask
                || self
                    .proven_axis
                    .get(data.operands[1])
                    .constancy
                    .get(1)
                    .is_some_and(|&c| c % per_chunk == 0);
            let chunk = if runs && contiguous && 16 % eb == 0 {
                per_chunk
            } else {
                1
            };
            let aligned = chunk > 1 && info.divisibility.get(1).is_some_and(|&d| d % 16 == 0);
            let ptrs = self.tile(ptr, &layout)?;
            let mask = if has_mask {
                Some(self.tile(data.operands[1], &layout)?)
            } else {
                None
            };
            tiles.push(Tile {
                ptrs,
                mask,
                mask_varies: !mask_whole,
                regs: layout.regs_per_thread(&shape),
                chunk,
                aligned,
                eb,
                cty: elem_cty(self.elem(r)),
                line: Self::coord_c(&layout, &shape, line_dim, "r"),
                along: Self::coord_c(&layout, &shape, along_dim, "r"),
                line_g: Self::coord_c(&layout, &shape, line_dim, "g"),
                along_g: Self::coord_c(&layout, &shape, along_dim, "g"),
                base: format!("{} + {s} * {} + {off}", ring.base, ring.slot_bytes),
                lines_w: format!("{}, {w}", shape[line_dim]),
            });
        }
        let full = format!("tw_smem_u32 + {} + 8 * {s}", ring.full);
        let wide_ok = tiles.iter().all(|t| t.chunk > 1);
        let proven = tiles.iter().all(|t| t.aligned && !t.mask_varies);
        let wide = self.tmp("wide");
        if wide_ok && proven {
            self.line(format!("const bool {wide} = true;"));
        } else if wide_ok {
            self.line(format!("bool {wide} = true;"));
            for t in &tiles {
                if !t.aligned {
                    self.line(format!(
                        "#pragma unroll\nfor (int r = 0; r < {}; r += {}) {wide} &= (((unsigned long long){}[r]) & 15ull) == 0;",
                        t.regs, t.chunk, t.ptrs
                    ));
                }
                if let (true, Some(m)) = (t.mask_varies, &t.mask) {
                    // A chunk is copied whole or zero-filled whole.
                    self.line(format!(
                        "#pragma unroll\nfor (int r = 0; r < {}; ++r) {wide} &= {m}[r] == {m}[r - r % {}];",
                        t.regs, t.chunk
                    ));
                }
            }
        } else {
            self.line(format!("const bool {wide} = false;"));
        }
        self.line(format!("if ({wide}) {{"));
        self.indent += 1;
        if wide_ok {
            // Where every chunk this thread copies is inside the mask (all
            // but a tile's ragged edge), the copies go without the
            // zero-fill size: a `cp.async` whose size is a register issues
            // in its source-valid form, which made mixed copies of the
            // 128x256 GEMM 0.80-0.89x Triton (H200). Even so a per-step
            // mask cost 10% (0.89x against 1.01x with none; ptxas
            // predicates both forms into one block): `copy_split` runs
            // the steps whose masks are whole in a loop of their own,
            // whose copies come here unmasked.
            let masks: Vec<(&Tile, &String)> = tiles
                .iter()
                .filter_map(|t| t.mask.as_ref().map(|m| (t, m)))
                .collect();
            if !masks.is_empty() {
                let inside = self.tmp("inside");
                self.line(format!("bool {inside} = true;"));
                for (t, m) in &masks {
                    self.line(format!(
                        "#pragma unroll\nfor (int r = 0; r < {}; r += {}) {inside} &= {m}[r];",
                        t.regs, t.chunk
                    ));
                }
                self.line(format!("if ({inside}) {{"));
                self.indent += 1;
            }
            let copies = |e: &mut Self, masked: bool| {
                for t in &tiles {
                    let (base, lines_w) = (&t.base, &t.lines_w);
                    let size = match &t.mask {
                        Some(m) if masked => format!("{m}[r] ? 16u : 0u"),
                        _ => "16u".into(),
                    };
                    e.line(format!(
                        "#pragma unroll\nfor (int r = 0; r < {}; r += {}) tw_cp_async16(tw_smem_u32 + {base} + tw_swz({}, ({}) * {}, {lines_w}), {}[r], {size});",
                        t.regs, t.chunk, t.line, t.along, t.eb, t.ptrs
                    ));
                }
            };
            copies(self, false);
            if !masks.is_empty() {
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                copies(self, true);
                self.indent -= 1;
                self.line("}");
            }
            self.line(format!("tw_cp_async_arrive({full});"));
        }
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        for t in &tiles {
            let (base, lines_w) = (&t.base, &t.lines_w);
            // Within a chunk the pointers are contiguous: only its first
            // one is read, so the others need no registers.
            let (p, m) = if t.chunk > 1 {
                (
                    format!("({}[g] + (r - g))", t.ptrs),
                    t.mask.as_ref().map(|m| {
                        if t.mask_varies {
                            format!("{m}[r]")
                        } else {
                            format!("{m}[g]")
                        }
                    }),
                )
            } else {
                (
                    format!("{}[r]", t.ptrs),
                    t.mask.as_ref().map(|m| format!("{m}[r]")),
                )
            };
            let value = match m {
                Some(m) => format!("{m} ? *{p} : ({})0", t.cty),
                None => format!("*{p}"),
            };
            // A swizzle moves whole 16-byte chunks: an element's address
            // is its chunk's (the one the 16-byte path computes; hoisted
            // out of the loop for every element, they would not fit the
            // producer's registers) plus its bytes into the chunk.
            let (at_r, plus) = if t.chunk > 1 {
                ("g", format!(" + (r - g) * {}", t.eb))
            } else {
                ("r", String::new())
            };
            let (line, along) = if at_r == "g" {
                (&t.line_g, &t.along_g)
            } else {
                (&t.line, &t.along)
            };
            // A chunk at a time (an empty asm with a memory clobber
            // between them): loads hoisted above the stores of earlier
            // chunks would hold the whole tile in the producer's few
            // registers.
            let group = t.regs.min(16 / t.eb).max(1);
            self.line(format!(
                "#pragma unroll\nfor (int g = 0; g < {}; g += {group}) {{\n#pragma unroll\n  for (int r = g; r < g + {group}; ++r) *({}*)(tw_smem_raw + {base} + tw_swz({line}, ({along}) * {}, {lines_w}){plus}) = {value};\n  asm volatile(\"\" ::: \"memory\");\n}}",
                t.regs, t.cty, t.eb
            ));
        }
        self.line("asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");");
        self.line(format!("tw_mbar_arrive({full});"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// The `cp.async.bulk.tensor` lines that copy `desc_load` op `load`'s
    /// tile into shared memory at byte offset `dst` (a C expression),
    /// completing on mbarrier `bar`, for put number `put.1` (a C
    /// expression) of ring `put.0`; before them, for a tensor map the
    /// kernel builds, the lines that rebuild it when its values changed
    /// ([`Self::device_map_update`]).
    fn tma_copies(
        &mut self,
        load: Op,
        smem: OperandSmem,
        dst: &str,
        bar: &str,
        put: (&Ring, &str),
    ) -> Res<Vec<String>> {
        let f = self.func;
        let data = &f.ops[load];
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let eb = self.scalar_of(r).byte_size();
        let tmap = self.tensor_map(data.operands[0], smem.w, None, MapUse::Load, data.loc)?;
        let mut lines = Vec::new();
        let map_ptr = match self.tensor_maps.iter().position(|t| t.name == tmap) {
            Some(i) if self.tensor_maps[i].device_built => {
                let (ptr, update) = self.device_map_update(data.operands[0], i, put)?;
                lines.extend(update);
                ptr
            }
            _ => format!("&{tmap}"),
        };
        let coords: Vec<String> = data.operands[1..]
            .iter()
            .map(|&c| self.scalar(c).map(|c| format!("(int)({c})")))
            .collect::<Res<_>>()?;
        let box_inner = smem.w / eb;
        // Coordinates innermost first, as the copy takes them; dimensions
        // of box 1 (a rank-reduced copy) only move the origin.
        let rank = coords.len();
        let outer: Vec<&str> = coords[..rank - 1]
            .iter()
            .rev()
            .map(|c| c.as_str())
            .collect();
        // A copy the launch reads once asks L2 to evict its lines first
        // where the launch's grid is what the mark needs.
        let (copy, once) = match &data.kind {
            OpKind::DescLoad {
                read_once: Some(axes),
            } if self.read_once_hints => {
                self.l2_policy_ranks.insert(rank);
                let once = self.read_once_test(axes)?;
                (format!("tw_tma_{rank}d_once"), format!(", {once}"))
            }
            _ => (format!("tw_tma_{rank}d"), String::new()),
        };
        for c in 0..shape[1] / box_inner {
            lines.push(format!(
                "{copy}(tw_smem_u32 + {dst} + {}, {map_ptr}, {} + {}, {}, {bar}{once});",
                c * shape[0] * smem.w,
                coords[rank - 1],
                c * box_inner,
                outer.join(", ")
            ));
        }
        Ok(lines)
    }

    /// The C test that the launch's grid has one program along each of
    /// `axes` (a `desc_load`'s `read_once`): in a persistent kernel the
    /// source's grid sizes are parameters, and an axis without one has a
    /// single tile coordinate; otherwise the launch's own grid.
    fn read_once_test(&self, axes: &[tawa_ir::Axis]) -> Res<String> {
        let f = self.func;
        let persistent = f.attrs.grid_param.is_some();
        let mut tests = Vec::new();
        for &axis in axes {
            let (param, dim) = match axis {
                tawa_ir::Axis::X => (&f.attrs.grid_param, "x"),
                tawa_ir::Axis::Y => (&f.attrs.grid_param_y, "y"),
                tawa_ir::Axis::Z => (&f.attrs.grid_param_z, "z"),
            };
            match param {
                Some(name) => {
                    let p = f.params.iter().find(|p| &p.name == name).ok_or_else(|| {
                        unsupported(
                            tawa_ir::Loc::UNKNOWN,
                            format!("internal: no grid parameter `{name}`"),
                        )
                    })?;
                    tests.push(format!("{} == 1", self.scalar(p.value)?));
                }
                None if persistent => {}
                None => tests.push(format!("gridDim.{dim} == 1")),
            }
        }
        Ok(if tests.is_empty() {
            "true".into()
        } else {
            tests.join(" && ")
        })
    }

    /// The copies of this CTA's half of `desc_load` op `load`'s box rows
    /// (rank `r` of the pair: rows `[r * R/2, (r + 1) * R/2)`), each
    /// multicast into the same offset of both CTAs' shared memory and
    /// completing on the barrier at `bar`'s offset in each: a tensor map
    /// of boxes of `R/2` rows, each box's half at its rows' place.
    fn tma_multicast_halves(
        &mut self,
        load: Op,
        smem: OperandSmem,
        dst: &str,
        bar: &str,
        loc: tawa_ir::Loc,
    ) -> Res<Vec<String>> {
        let f = self.func;
        let data = &f.ops[load];
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let eb = self.scalar_of(r).byte_size();
        // Coordinates outermost first; the rows are the last but one (a
        // rank-reduced copy's boxes of 1 come before them).
        let rank = data.operands.len() - 1;
        if shape.len() != 2 || rank < 2 || shape[0] % 2 != 0 {
            return Err(unsupported(
                loc,
                "internal: a multicast copy of a box that is not 2-D with an even number of rows",
            ));
        }
        let half = shape[0] / 2;
        let tmap = self.tensor_map(data.operands[0], smem.w, Some(half), MapUse::Load, data.loc)?;
        let coords: Vec<String> = data.operands[1..]
            .iter()
            .map(|&c| self.scalar(c).map(|c| format!("(int)({c})")))
            .collect::<Res<_>>()?;
        let (col, row) = (&coords[rank - 1], &coords[rank - 2]);
        // Innermost first after the rows, as the copy takes them.
        let outer: String = coords[..rank - 2]
            .iter()
            .rev()
            .map(|c| format!("{c}, "))
            .collect();
        let box_inner = smem.w / eb;
        Ok((0..shape[1] / box_inner)
            .map(|c| {
                format!(
                    "tw_tma_{rank}d_multicast(tw_smem_u32 + {dst} + {} + tw_cta_rank() * {}u, &{tmap}, {col} + {}, {row} + (int)tw_cta_rank() * {half}, {outer}{bar}, (unsigned short)3);",
                    c * shape[0] * smem.w,
                    half * smem.w,
                    c * box_inner,
                )
            })
            .collect())
    }

    /// For a copy of descriptor `desc` through the tensor map the kernel
    /// builds (`self.tensor_maps[index]`, a template): the C expression of
    /// the map in this program's workspace, and the lines (run by the one
    /// thread that issues the copies, after it waited for the slot) that
    /// rebuild it when the descriptor's values differ from those it was
    /// last built from, or at the program's first put (the workspace is
    /// not initialized, and may hold a map of an earlier launch):
    ///
    /// - the copies still in flight may read the old map, so the thread
    ///   first waits until every earlier put of ring `put.0` (the slot
    ///   being filled was already released) has landed;
    /// - a value TMA cannot take (a base not 16-byte aligned, a stride not
    ///   a multiple of 16 bytes or past 2^40, an extent of 0 or past
    ///   2^32 - 1) traps: the kernel fails loudly instead of copying
    ///   wrong data, as the host refuses such a map at launch;
    /// - the template is copied into the slot, its address, extents and
    ///   strides replaced (`tensormap.replace`, strides in bytes), the
    ///   values recorded, and the writes released to the tensor-map proxy
    ///   and acquired by this thread (`fence.proxy.tensormap::generic`)
    ///   before its next copy.
    fn device_map_update(
        &mut self,
        desc: Value,
        index: usize,
        (ring, iteration): (&Ring, &str),
    ) -> Res<(String, Vec<String>)> {
        let t = self.tensor_maps[index].clone();
        let slot = self.tensor_maps[..index]
            .iter()
            .filter(|m| m.device_built)
            .count() as u32
            * DEVICE_MAP_SLOT_BYTES;
        let parts = self.bundle(desc)?;
        let rank = t.box_extents.len();
        let eb = t.elem.byte_size();
        // Bundle: base, shape0.., stride0.. (outermost first).
        let (shape, strides) = parts[1..].split_at(rank);
        let mut values = vec![format!("(unsigned long long)({})", parts[0])];
        values.extend(
            shape
                .iter()
                .rev()
                .map(|e| format!("(unsigned long long)({e})")),
        );
        values.extend(
            strides[..rank - 1]
                .iter()
                .rev()
                .map(|e| format!("(unsigned long long)({e}) * {eb}ull")),
        );
        let n = values.len();
        let m = self.tmp("dmap");
        let v = self.tmp("dval");
        let mut lines = vec![
            format!(
                // The program's slots (`tw_dmap_ws_bytes`, known once every
                // map is), then this map's.
                "tw_tmap* const {m} = (tw_tmap*)(tw_tmap_ws + tw_program_linear() * tw_dmap_ws_bytes + {slot}ull);"
            ),
            format!("const unsigned long long {v}[{n}] = {{{}}};", values.join(", ")),
            format!(
                "if (tw_dmap_stale({m}, {v}, {n}, (unsigned)({iteration}) == 0u)) {{"
            ),
        ];
        // Wait for the copies of the earlier puts still in flight.
        if ring.depth > 1 {
            lines.push(format!(
                "  for (unsigned tw_j = 1u; tw_j < {d}u && tw_j <= (unsigned)({iteration}); ++tw_j) {{ const unsigned tw_p = (unsigned)({iteration}) - tw_j; tw_mbar_wait(tw_smem_u32 + {full} + 8 * (tw_p % {d}u), (tw_p / {d}u) & 1u); }}",
                d = ring.depth,
                full = ring.full
            ));
        }
        lines.push(format!("  tw_dmap_check({v}, {rank});"));
        lines.push(format!("  tw_dmap_copy({m}, &{});", t.name));
        lines.push(format!(
            "  asm volatile(\"tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;\" :: \"l\"(__cvta_generic_to_global({m})), \"l\"({v}[0]) : \"memory\");"
        ));
        for d in 0..rank {
            lines.push(format!(
                "  asm volatile(\"tensormap.replace.tile.global_dim.global.b1024.b32 [%0], {d}, %1;\" :: \"l\"(__cvta_generic_to_global({m})), \"r\"((unsigned){v}[{}]) : \"memory\");",
                1 + d
            ));
        }
        for d in 0..rank - 1 {
            lines.push(format!(
                "  asm volatile(\"tensormap.replace.tile.global_stride.global.b1024.b64 [%0], {d}, %1;\" :: \"l\"(__cvta_generic_to_global({m})), \"l\"({v}[{}]) : \"memory\");",
                1 + rank + d
            ));
        }
        lines.push(format!("  tw_dmap_publish({m}, {v}, {n});"));
        lines.push("}".to_string());
        Ok((m, lines))
    }

    /// The kernel's tensor-map parameter for descriptor `desc` (made by a
    /// host-computable `make_tensor_desc`), boxes of `w` bytes along the
    /// contiguous dimension and, with `rows`, of that many rows instead of
    /// the descriptor block's (a TMA store's band, a multicast copy's
    /// half), for copies of kind `usage`.
    pub(super) fn tensor_map(
        &mut self,
        desc: Value,
        w: u32,
        rows: Option<u32>,
        usage: MapUse,
        loc: tawa_ir::Loc,
    ) -> Res<String> {
        let f = self.func;
        let not_host = || {
            unsupported(
                loc,
                "internal: a TMA copy of a descriptor the host cannot build (tma_lower makes only host-computable ones)",
            )
        };
        let make = f
            .def_op(desc)
            .filter(|&m| matches!(f.ops[m].kind, OpKind::MakeTensorDesc))
            .ok_or_else(not_host)?;
        if let Some(name) = self.tensor_map_names.get(&(make, w, rows, usage)) {
            return Ok(name.clone());
        }
        let Type::TensorDesc { elem, block } = f.ty(desc) else {
            return Err(not_host());
        };
        let rank = block.len();
        // The copied block is 2-D: the descriptor's, or its without the
        // boxes of 1 of extra dimensions (batch or head offsets), whose
        // innermost dimension is the block's.
        let copied = if rank == 2 {
            Some(block.clone())
        } else {
            tawa_ir::verifier::squeezed_block(block)
        };
        if !(2..=5).contains(&rank) || copied.is_none_or(|c| c.len() != 2) || block[rank - 1] == 1 {
            return Err(unsupported(
                loc,
                "TMA copies of 2-D tiles only (descriptors of rank 2 to 5 whose other boxes are 1)",
            ));
        }
        let ops = &f.ops[make].operands;
        let base = f.params.iter().position(|p| p.value == ops[0]);
        let exprs: Option<Vec<HostExpr>> = ops[1..].iter().map(|&v| host_expr(f, v)).collect();
        // A descriptor of values the kernel computes is built on the
        // device, for copies into aref slots only (`rows` is a TMA
        // store's band, which takes host-built maps).
        let device_built = base.is_none() || exprs.is_none();
        if device_built && rows.is_some() {
            return Err(not_host());
        }
        let exprs = exprs.unwrap_or_default();
        let (shape, strides) = exprs.split_at(if device_built { 0 } else { rank });
        let mut block = block.clone();
        if let Some(rows) = rows {
            block[rank - 2] = rows;
        }
        if let Some(rows) = block[..rank - 1].iter().find(|&&b| b > MAX_BOX) {
            return Err(unsupported(
                loc,
                format!("TMA box of {rows} rows: at most {MAX_BOX}"),
            ));
        }
        let name = format!("tw_tmap{}", self.tensor_maps.len());
        let box_extents: Vec<u32> = std::iter::once(w / elem.byte_size())
            .chain(block[..rank - 1].iter().rev().copied())
            .collect();
        let (extents, strides) = if device_built {
            template_geometry(&box_extents, elem.byte_size())
        } else {
            (
                shape.iter().rev().cloned().collect(),
                // The innermost stride is 1 (TMA and Triton's descriptors
                // both require it); the host takes the others.
                strides[..rank - 1].iter().rev().cloned().collect(),
            )
        };
        self.tensor_maps.push(TensorMapParam {
            name: name.clone(),
            elem: *elem,
            base: base.unwrap_or(0),
            extents,
            strides,
            box_extents,
            // Rows of 16 bytes are not swizzled.
            swizzle_bytes: if w >= 32 { w } else { 0 },
            // A store's band is written once; only loads gain from
            // fetching the rows' continuation into L2.
            l2_promotion_bytes: match usage {
                MapUse::Load => self.load_l2_promotion,
                MapUse::Store => 128,
            },
            device_built,
        });
        self.tensor_map_names
            .insert((make, w, rows, usage), name.clone());
        Ok(name)
    }

    /// `aref.get`: wait for the slot; its buffers become views.
    pub(super) fn aref_get(&mut self, op: Op) -> Res<()> {
        let data = &self.func.ops[op];
        let ring = self.rings[&data.operands[0]].clone();
        let (s, k) = self.slot_of(&ring, data.operands[1])?;
        self.line(format!(
            "tw_mbar_wait(tw_smem_u32 + {} + 8 * {s}, {k});",
            ring.full
        ));
        if ring.copied {
            // The producer's threads wrote the slot through the generic
            // proxy; wgmma reads it through the async proxy.
            self.line("asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");");
        }
        for (j, &r) in data.results.iter().enumerate() {
            let (off, smem, _) = ring.buffers[j];
            self.views.insert(
                r,
                (
                    format!("({} + {s} * {} + {off})", ring.base, ring.slot_bytes),
                    smem,
                ),
            );
        }
        Ok(())
    }

    /// `aref.consumed`: each warp releases the slot once its wgmmas (waited
    /// by the `dot`) are done.
    pub(super) fn aref_consumed(&mut self, op: Op) -> Res<()> {
        let data = &self.func.ops[op];
        let ring = self.rings[&data.operands[0]].clone();
        let (s, _) = self.slot_of(&ring, data.operands[1])?;
        let empty = format!("tw_smem_u32 + {} + 8 * {s}", ring.empty);
        match self.func.consumed_peer(op) {
            Some(peer) if ring.paired => {
                // Its own barrier, then the peer's (the peer's producer
                // may multicast into this CTA's slot once both CTAs'
                // consumers released it); twice its own when the peer has
                // no tile this round, the count being both CTAs'.
                let peer = self.scalar(peer)?;
                self.line(format!(
                    "if (lane == 0) {{ tw_mbar_arrive({empty}); if ({peer}) tw_mbar_arrive_peer({empty}); else tw_mbar_arrive({empty}); }}"
                ));
            }
            None if !ring.paired => {
                self.line(format!("if (lane == 0) tw_mbar_arrive({empty});"));
            }
            _ => {
                return Err(unsupported(
                    data.loc,
                    "internal: a release of a ring of CTA pairs without the peer's state, or with it in a kernel of single CTAs",
                ))
            }
        }
        Ok(())
    }

    /// Whether `v` is a plain `load` of a pointer tile whose only use is an
    /// `aref.put`: the put copies it with the partition's threads
    /// ([`Self::copy_chunks`]), the load emits nothing.
    pub(super) fn is_copy_put_operand(&self, v: Value) -> bool {
        let f = self.func;
        self.only_put(v)
            && f.def_op(v).is_some_and(|l| {
                matches!(f.ops[l].kind, OpKind::Load { .. })
                    && f.ty(f.ops[l].operands[0]).is_tensor()
            })
    }

    /// Whether `v` is a `desc_load` whose only use is an `aref.put`: the
    /// put issues it as a TMA copy, the load emits nothing.
    pub(super) fn is_tma_put_operand(&self, v: Value) -> bool {
        let f = self.func;
        self.only_put(v)
            && f.def_op(v)
                .is_some_and(|l| matches!(f.ops[l].kind, OpKind::DescLoad { .. }))
    }

    /// Whether an `aref.put` is the only use of `v`, as one of its tiles.
    fn only_put(&self, v: Value) -> bool {
        let mut users = self.func.ops.values().filter(|d| d.operands.contains(&v));
        users
            .next()
            .is_some_and(|d| matches!(d.kind, OpKind::ArefPut) && d.operands[0] != v)
            && users.next().is_none()
    }
}

/// Most elements of a TMA box along one dimension.
pub(super) const MAX_BOX: u32 = 256;

/// Bytes of a program's workspace per tensor map it builds: the
/// 128-byte map, then the values it was built from (address, extents,
/// byte strides: at most 10 words), so that it is rebuilt only when they
/// change.
pub(super) const DEVICE_MAP_SLOT_BYTES: u32 = 256;

/// [`crate::codegen::KernelSource::device_map_workspace`] of a kernel
/// with these tensor maps.
pub(super) fn device_map_workspace(maps: &[TensorMapParam]) -> u32 {
    maps.iter().filter(|t| t.device_built).count() as u32 * DEVICE_MAP_SLOT_BYTES
}

/// Extents and element strides (innermost first, as `TensorMapParam`
/// lists them) of a device-built map's template: a dense tensor of one
/// box, rows padded to the 16 bytes TMA strides need. The kernel replaces
/// them before any copy; they only have to encode.
fn template_geometry(box_extents: &[u32], elem_bytes: u32) -> (Vec<HostExpr>, Vec<HostExpr>) {
    let align = i64::from((16 / elem_bytes).max(1));
    let mut strides = Vec::new();
    let mut stride = 1i64;
    for &b in &box_extents[..box_extents.len() - 1] {
        stride = (stride * i64::from(b) + align - 1) / align * align;
        strides.push(HostExpr::Const(stride));
    }
    let extents = box_extents
        .iter()
        .map(|&b| HostExpr::Const(i64::from(b)))
        .collect();
    (extents, strides)
}

/// The `CUtensorMap` a kernel receives as a `__grid_constant__`
/// parameter; [`WS_PRELUDE`] starts with it.
pub(super) const TMAP_TYPE: &str = "
struct __align__(64) tw_tmap { unsigned long long words[16]; };
";

/// PTX helpers of the producer copies ([`Emitter::copy_chunks`]).
pub(super) const COPY_PRELUDE: &str = r#"
static __device__ __forceinline__ void tw_cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
static __device__ __forceinline__ void tw_cp_async_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(bar) : "memory");
}
"#;

/// PTX helpers of the warp-specialized kernels.
pub(super) const WS_PRELUDE: &str = r#"
struct __align__(64) tw_tmap { unsigned long long words[16]; };
static __device__ __forceinline__ void tw_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void tw_mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}
static __device__ __forceinline__ void tw_mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
static __device__ __forceinline__ void tw_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void tw_tma_2d(unsigned dst, const tw_tmap* map, int c0, int c1, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
"#;

/// PTX helpers of a kernel launched in CTA pairs
/// (`tawa_pipeliner::tma_multicast`): the CTA's rank in its cluster, the
/// cluster barrier (every thread of both CTAs; the `.aligned` form needs
/// the whole warp), an arrive on the peer CTA's barrier at the same
/// offset, and a TMA copy multicast into both CTAs.
pub(super) const CLUSTER_PRELUDE: &str = r#"
static __device__ __forceinline__ unsigned tw_cta_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
static __device__ __forceinline__ void tw_cluster_sync() {
  __syncwarp();
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
static __device__ __forceinline__ void tw_mbar_arrive_peer(unsigned bar) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(tw_cta_rank() ^ 1u));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" :: "r"(remote) : "memory");
}
static __device__ __forceinline__ void tw_tma_2d_multicast(unsigned dst, const tw_tmap* map, int c0, int c1, unsigned bar, unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
"#;

/// Helpers of the tensor maps a kernel builds on the device (see
/// `Emitter::device_map_update`), for a workspace of `bytes` per program.
/// A map's slot in it is the 128-byte map followed by the values it was
/// built from.
pub(super) fn device_map_prelude(bytes: u32) -> String {
    format!(
        "\nstatic constexpr unsigned long long tw_dmap_ws_bytes = {bytes}ull;{DEVICE_MAP_HELPERS}"
    )
}

const DEVICE_MAP_HELPERS: &str = r#"
static __device__ __forceinline__ unsigned long long tw_program_linear() {
  return (unsigned long long)blockIdx.x + (unsigned long long)gridDim.x * ((unsigned long long)blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
}
static __device__ __forceinline__ bool tw_dmap_stale(const tw_tmap* m, const unsigned long long* v, int n, bool first) {
  const unsigned long long* built = (const unsigned long long*)(m + 1);
  bool stale = first;
  for (int i = 0; i < n; ++i) stale |= built[i] != v[i];
  return stale;
}
static __device__ __forceinline__ void tw_dmap_check(const unsigned long long* v, int rank) {
  bool bad = (v[0] & 15ull) != 0ull;
  for (int d = 0; d < rank; ++d) bad |= v[1 + d] == 0ull || v[1 + d] > 0xffffffffull;
  for (int d = 0; d + 1 < rank; ++d) bad |= (v[1 + rank + d] & 15ull) != 0ull || v[1 + rank + d] >= (1ull << 40);
  if (bad) __trap();
}
static __device__ __forceinline__ void tw_dmap_copy(tw_tmap* m, const tw_tmap* tmpl) {
  for (int w = 0; w < 16; ++w) m->words[w] = tmpl->words[w];
}
static __device__ __forceinline__ void tw_dmap_publish(tw_tmap* m, const unsigned long long* v, int n) {
  unsigned long long* built = (unsigned long long*)(m + 1);
  for (int i = 0; i < n; ++i) built[i] = v[i];
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(m) : "memory");
}
"#;

/// A copy helper's `rank` coordinates (innermost first): its C
/// parameters `int c0, ...`, their PTX operands `%2, ...` (after the
/// destination and the map) and their asm inputs `"r"(c0), ...`.
fn coordinate_operands(rank: usize) -> (Vec<String>, Vec<String>, Vec<String>) {
    let params = (0..rank).map(|i| format!("int c{i}")).collect();
    let regs = (0..rank).map(|i| format!("%{}", i + 2)).collect();
    let args = (0..rank).map(|i| format!("\"r\"(c{i})")).collect();
    (params, regs, args)
}

/// The copies of a `desc_load` the launch reads once
/// (`tawa_partitioner::read_once`): where `once` holds (the launch's grid
/// is what the mark needs), with an L2 policy that evicts the lines
/// first; otherwise the plain copy of [`tma_nd_helper`], not a policy of
/// normal priority (see `Emitter::partition_body`).
pub(super) fn tma_read_once_helper(rank: usize) -> String {
    let (params, regs, args) = coordinate_operands(rank);
    format!(
        r#"static __device__ __forceinline__ void tw_tma_{rank}d_once(unsigned dst, const tw_tmap* map, {params}, unsigned bar, bool once) {{
  if (once) {{
    unsigned long long policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {{{regs}}}], [%{bar_reg}], %{pol_reg};"
                 :: "r"(dst), "l"((unsigned long long)map), {args}, "r"(bar), "l"(policy) : "memory");
  }} else {{
    asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {{{regs}}}], [%{bar_reg}];"
                 :: "r"(dst), "l"((unsigned long long)map), {args}, "r"(bar) : "memory");
  }}
}}
"#,
        params = params.join(", "),
        regs = regs.join(", "),
        bar_reg = rank + 2,
        pol_reg = rank + 3,
        args = args.join(", ")
    )
}

/// The N-D multicast copies of a kernel of CTA pairs (see
/// [`tma_nd_helper`]; the 2-D one is in [`CLUSTER_PRELUDE`]).
pub(super) fn tma_nd_multicast_helper(rank: usize) -> String {
    let (params, regs, args) = coordinate_operands(rank);
    format!(
        r#"static __device__ __forceinline__ void tw_tma_{rank}d_multicast(unsigned dst, const tw_tmap* map, {}, unsigned bar, unsigned short mask) {{
  asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {{{}}}], [%{}], %{};"
               :: "r"(dst), "l"((unsigned long long)map), {}, "r"(bar), "h"(mask) : "memory");
}}
"#,
        params.join(", "),
        regs.join(", "),
        rank + 2,
        rank + 3,
        args.join(", ")
    )
}

/// The N-D copies (coordinates innermost first) of descriptors with extra
/// dimensions of box 1, emitted only into kernels that issue them.
pub(super) fn tma_nd_helper(rank: usize) -> String {
    let (params, regs, args) = coordinate_operands(rank);
    format!(
        r#"static __device__ __forceinline__ void tw_tma_{rank}d(unsigned dst, const tw_tmap* map, {}, unsigned bar) {{
  asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {{{}}}], [%{}];"
               :: "r"(dst), "l"((unsigned long long)map), {}, "r"(bar) : "memory");
}}
"#,
        params.join(", "),
        regs.join(", "),
        rank + 2,
        args.join(", ")
    )
}
