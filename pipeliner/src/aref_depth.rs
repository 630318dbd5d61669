//! `aref_depth`: how many slots each aref ring gets.
//!
//! Triton's `num_stages` is the user's knob for "how many tiles are in
//! flight". In a software-pipelined loop (`--no-ws`) that is the ring
//! depth: `num_stages` buffers, one being computed on while the others
//! load. A warp-specialized consumer holds its slot for the whole WGMMA
//! of an iteration and the producer cannot refill it before the release,
//! so the warp-specialized ring gets one slot more ([`Slack::ConsumerSlot`]):
//! `num_stages` tiles in flight besides the one being read. That slot is
//! taken when it fits in shared memory: a warp-specialized block holds
//! all of its SM's registers, so a deeper ring never costs a resident
//! block. On the H100 the 128x256x64 GEMM runs 1-2% faster at depth 4
//! than 3 (`bench/RESULTS.md`).
//!
//! The slot covers the consumer's hold, so it is taken only where the
//! hold is long against a copy: where the dots do at least
//! [`CONSUMER_SLOT_FLOPS_PER_BYTE`] flops per byte of the slots they read
//! ([`slot_tensor_flops`] over the streaming rings' slot bytes). A
//! memory-bound loop (a decode GEMM's 128x16x128 dots: 14 flops a byte)
//! releases its slot about as soon as it lands; there the extra slot only
//! puts more copies in flight, and on the H100 the swap-AB decode GEMM
//! (64 programs streaming 128 MiB) ran 5% slower with it (depth 5
//! against 4).
//!
//! Cooperative consumers (two or more warpgroups splitting each tile)
//! of a GEMM's ring (its slots read by nothing but dots whose operands
//! both come from the slot) take one slot more where it fits
//! ([`COOPERATIVE_EXTRA_SLOTS`]): the warpgroups release a slot at
//! different times and the producer refills it only after the later
//! one. It applies to slots of at most [`COOPERATIVE_SLOT_FLOPS`] of
//! tensor-core work (128x128x64), where it was measured. On the
//! H100, same source against Triton 3.6 in one process, 128x128x64 tiles
//! over 8 warps at `num_stages` 3, depth 5 against 4: the split-K GEMM
//! 1.20 / 1.21x against 1.14 / 1.13x, the GEMM with a row reduction 1.05
//! / 1.05x against 0.98 / 0.97x, the subtiled-epilogue GEMM 1.01 / 1.01x
//! against 0.99 / 0.99x, the batched GEMM level (`bench/RESULTS.md`).
//!
//! Shared memory caps the depth at the most slots that fit;
//! `--aref-depth` overrides both, and is an error when it does not fit.
//!
//! Shared memory is the backend's business, so the driver measures it and
//! passes a [`SmemModel`]: what the kernel needs besides the rings, and
//! what one more slot of every ring costs.
//!
//! A ring put once per iteration of a loop around the loops that put the
//! others ([`one_slot_rings`]: attention's `q`, one copy per tile of a
//! persistent kernel) keeps its one slot whatever `num_stages` or
//! `--aref-depth` say: the consumer holds it through all the inner loops
//! of a tile and releases it after them, so the producer copies the next
//! tile's while the consumer runs its epilogue, and a second slot would
//! take shared memory the streaming rings need for their depth. Its bytes
//! are part of the model's `fixed` share.

use tawa_ir::{Function, Loc, OpKind, Type};

use crate::{PipelineError, Schedule};

/// Shared memory of a warp-specialized kernel as a function of its ring
/// depth `D` (every ring at the same depth): `fixed + D * per_slot` bytes,
/// at most `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmemModel {
    /// What a block may have (227 KiB on sm_90).
    pub limit: u32,
    /// Operand buffers, scratch, alignment: everything but the ring slots.
    pub fixed: u32,
    /// One slot of every ring, with its barriers and alignment.
    pub per_slot: u32,
}

impl SmemModel {
    /// The model of a kernel measured at depths 1 and 2 (`bytes_at_1`,
    /// `bytes_at_2`). `None` when the numbers do not make a line.
    pub fn from_two_depths(limit: u32, bytes_at_1: u32, bytes_at_2: u32) -> Option<SmemModel> {
        let per_slot = bytes_at_2.checked_sub(bytes_at_1)?;
        let fixed = bytes_at_1.checked_sub(per_slot)?;
        (per_slot > 0).then_some(SmemModel {
            limit,
            fixed,
            per_slot,
        })
    }

    /// The deepest rings that fit (0 when not even one slot does).
    pub fn max_depth(&self) -> u32 {
        self.limit.saturating_sub(self.fixed) / self.per_slot.max(1)
    }

    /// Bytes at depth `d`, `None` on overflow.
    pub fn bytes(&self, d: u32) -> Option<u64> {
        (self.per_slot as u64)
            .checked_mul(d as u64)?
            .checked_add(self.fixed as u64)
    }
}

/// Slots a ring gets besides the `num_stages` in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slack {
    /// None: `num_stages` buffers in all (software pipelining).
    None,
    /// One for the slot a warp-specialized consumer holds while its WGMMA
    /// runs, when it is free (module docs).
    ConsumerSlot,
}

fn kib(bytes: u64) -> String {
    let k = bytes as f64 / 1024.0;
    if k.fract() == 0.0 {
        format!("{k:.0} KiB")
    } else {
        format!("{k:.1} KiB")
    }
}

/// The `aref.create` ops of `func`, in program order.
fn aref_creates(func: &Function) -> Vec<tawa_ir::function::Op> {
    let mut creates = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::ArefCreate) {
            creates.push(op);
        }
    });
    creates
}

/// How many `for` loops enclose `op`.
fn loop_depth(func: &Function, op: tawa_ir::function::Op) -> usize {
    let mut depth = 0;
    let mut cur = op;
    while let Some(parent) = func.block_of(cur).and_then(|b| func.blocks[b].parent) {
        depth += usize::from(matches!(func.ops[parent].kind, OpKind::For(_)));
        cur = parent;
    }
    depth
}

/// The rings whose puts all sit in fewer loops than another ring's: put
/// once per iteration of an outer loop (a tile) around the inner loops
/// that stream the others. They keep one slot (module docs).
pub fn one_slot_rings(func: &Function) -> Vec<tawa_ir::Value> {
    let mut deepest_put: Vec<(tawa_ir::Value, usize)> = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if matches!(data.kind, OpKind::ArefPut) {
            let (ring, depth) = (data.operands[0], loop_depth(func, op));
            match deepest_put.iter_mut().find(|(r, _)| *r == ring) {
                Some((_, d)) => *d = (*d).max(depth),
                None => deepest_put.push((ring, depth)),
            }
        }
    });
    let deepest = deepest_put.iter().map(|&(_, d)| d).max().unwrap_or(0);
    deepest_put
        .into_iter()
        .filter(|&(_, d)| d < deepest)
        .map(|(r, _)| r)
        .collect()
}

/// Tensor-core work (flops, 2·M·N·K a dot) a consumer does per slot of
/// the streaming rings above which one slot ahead covers a TMA copy:
/// about 1500 cycles of an SM's tensor cores (4096 dense f16 flops a
/// cycle on the H100), what a copy takes to land under load. Measured on
/// the H100/H200: tutorial 06's attention at d128 (8 Mi flops a slot, two
/// dots) runs 3-5% faster with two slots and a TMA-store epilogue than
/// with three and element-wise stores; the 128x256x64 GEMM (4 Mi flops a
/// slot) wants its fourth slot (module docs). Where the streaming loops'
/// [`slot_tensor_flops`] reach it, a ring of two loses nothing to one of
/// three, and shared memory may go to something else (a TMA-store
/// epilogue's staging).
pub const ONE_SLOT_AHEAD_FLOPS: u64 = 6 << 20;

/// Flops per slot byte below which the consumer's hold earns no slot of
/// its own (module docs). An H100 SM does about 300 dense f16 flops in
/// the time its share of DRAM bandwidth brings a byte (100 for L2): at 32
/// the consumer holds a slot for a tenth of what a copy from DRAM takes.
/// The GEMMs' tiles are at 32 (64x64x32) to 85 (128x256x64).
pub const CONSUMER_SLOT_FLOPS_PER_BYTE: u64 = 32;

/// Slots a ring read by cooperative consumers gets besides `num_stages`
/// and the consumer's slot, where they fit (module docs).
pub const COOPERATIVE_EXTRA_SLOTS: u32 = 1;

/// Tensor-core work a slot (flops) up to which cooperative consumers get
/// [`COOPERATIVE_EXTRA_SLOTS`]: the 128x128x64 slots it was measured on
/// (2 Mi flops). The 128x256x64 GEMM (4 Mi) measured best at
/// `num_stages` 3 plus the consumer's slot, which fill shared memory; at
/// fewer stages it keeps what `num_stages` says.
pub const COOPERATIVE_SLOT_FLOPS: u64 = 2 << 20;

/// Whether the streaming rings of `func` feed cooperative GEMM consumers
/// (module docs): a consumer partition of two or more warpgroups, every
/// streaming ring's slot read only as the operands of dots whose two
/// operands both come from the slot, and at most
/// [`COOPERATIVE_SLOT_FLOPS`] of tensor-core work a slot.
pub fn cooperative_gemm(func: &Function) -> bool {
    let mut cooperative = false;
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind {
            cooperative |= partitions
                .iter()
                .any(|p| p.role != "producer" && p.num_warps >= 8);
        }
    });
    let one_slot = one_slot_rings(func);
    let mut gets = 0;
    let mut dots_only = true;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if matches!(data.kind, OpKind::ArefGet) && !one_slot.contains(&data.operands[0]) {
            gets += 1;
            dots_only &= crate::slot_split::slot_dot_axes(func, op).is_ok();
        }
    });
    let light = slot_tensor_flops(func).is_some_and(|f| f <= COOPERATIVE_SLOT_FLOPS);
    cooperative && gets > 0 && dots_only && light
}

/// Flops per byte of the streaming rings' slots ([`slot_tensor_flops`]
/// over the bytes of a slot of every ring but the one-slot ones); `None`
/// without a streaming loop of dots.
pub fn slot_flops_per_byte(func: &Function) -> Option<u64> {
    let one_slot = one_slot_rings(func);
    let bytes: u64 = aref_creates(func)
        .into_iter()
        .map(|op| func.ops[op].results[0])
        .filter(|r| !one_slot.contains(r))
        .map(|r| slot_bytes(func, r))
        .sum();
    Some(slot_tensor_flops(func)? / bytes.max(1))
}

/// The consumer's tensor-core work per ring slot: of the loops that get
/// from the streaming rings (not [`one_slot_rings`]), each advancing
/// every ring by one slot an iteration, the least flops (2·M·N·K) of the
/// dots one iteration runs. `None` without such a loop.
pub fn slot_tensor_flops(func: &Function) -> Option<u64> {
    let one_slot = one_slot_rings(func);
    let mut least: Option<u64> = None;
    func.walk(&mut |op| {
        let OpKind::For(_) = func.ops[op].kind else {
            return;
        };
        let mut streams = false;
        let mut flops = 0u64;
        for &b in &func.ops[op].regions {
            for &o in &func.blocks[b].ops {
                let data = &func.ops[o];
                match data.kind {
                    OpKind::ArefGet => streams |= !one_slot.contains(&data.operands[0]),
                    OpKind::Dot { .. } => {
                        let out = func.ty(data.results[0]).shape();
                        let k = func.ty(data.operands[0]).shape().last().copied();
                        if let ([m, n], Some(k)) = (out, k) {
                            flops += 2 * u64::from(*m) * u64::from(*n) * u64::from(k);
                        }
                    }
                    _ => {}
                }
            }
        }
        if streams && flops > 0 {
            least = Some(least.map_or(flops, |l| l.min(flops)));
        }
    });
    least
}

/// Bytes of one slot of `ring` (each buffer in whole KiB, as the backend
/// lays them out).
fn slot_bytes(func: &Function, ring: tawa_ir::Value) -> u64 {
    let Type::Aref { buffers, .. } = func.ty(ring) else {
        return 0;
    };
    buffers
        .iter()
        .map(|t| {
            let elem = t.scalar_type().map_or(4, |s| s.byte_size()) as u64;
            let bytes = t.shape().iter().fold(elem, |n, &d| n * d as u64);
            bytes.div_ceil(1024) * 1024
        })
        .sum()
}

/// Gives every aref ring of `func` but the one-slot ones
/// ([`one_slot_rings`]) `depth` slots.
pub fn set_depths(func: &mut Function, depth: u32) {
    let one_slot = one_slot_rings(func);
    for op in aref_creates(func) {
        let ring = func.ops[op].results[0];
        if one_slot.contains(&ring) {
            continue;
        }
        if let Type::Aref { depth: d, .. } = &mut func.values[ring].ty {
            *d = depth;
        }
    }
}

/// The depth of the rings that stream (all but [`one_slot_rings`]), which
/// [`set_depths`] gives one value; `None` when there are none.
pub fn streaming_depth(func: &Function) -> Option<u32> {
    let one_slot = one_slot_rings(func);
    aref_creates(func)
        .into_iter()
        .map(|op| func.ops[op].results[0])
        .filter(|ring| !one_slot.contains(ring))
        .filter_map(|ring| match &func.values[ring].ty {
            Type::Aref { depth, .. } => Some(*depth),
            _ => None,
        })
        .max()
}

/// Sets the depth of every `aref.create` of `func` (see the module docs).
pub fn choose_aref_depths(
    func: &mut Function,
    explicit: Option<u32>,
    smem: Option<&SmemModel>,
    slack: Slack,
    schedule: &mut Schedule,
) -> Result<(), PipelineError> {
    let one_slot = one_slot_rings(func);
    let creates = aref_creates(func);
    if creates.is_empty() {
        return Ok(());
    }
    let stages = func.attrs.num_stages.max(1);
    let loc = func.ops[creates[0]].loc;
    let fit = smem.map(|m| (m, m.max_depth()));
    let (depth, why) = match (explicit, fit) {
        (Some(0), _) => {
            return Err(PipelineError {
                loc: Loc::UNKNOWN,
                message: "--aref-depth must be at least 1".into(),
            })
        }
        (Some(d), Some((m, max))) if d > max => {
            let need = m.bytes(d).map_or("more than 4 GiB".to_string(), kib);
            return Err(PipelineError {
                loc,
                message: format!(
                    "--aref-depth {d}: {d} slots of {} need {need} of shared memory, more than \
                     the {} a block can have; at most {max} fit",
                    kib(m.per_slot as u64),
                    kib(m.limit as u64)
                ),
            });
        }
        (Some(d), _) => (d, "--aref-depth".to_string()),
        (None, Some((m, max))) if stages > max => (
            max.max(1),
            format!(
                "num_stages {stages} capped: {} a slot, at most {max} fit beside {} of other \
                 shared memory in {}",
                kib(m.per_slot as u64),
                kib(m.fixed as u64),
                kib(m.limit as u64)
            ),
        ),
        (None, fit) => {
            let extra = stages.saturating_add(1);
            // A warp-specialized block takes every register of its SM
            // (its warps hold the even share of the register file at
            // entry, which `setmaxnreg` redistributes), so it runs alone
            // on the SM whatever its shared memory: the slot only has to
            // fit.
            let free = match fit {
                Some((_, max)) => extra <= max,
                None => false,
            };
            let brief = slot_flops_per_byte(func).filter(|&f| f < CONSUMER_SLOT_FLOPS_PER_BYTE);
            match brief {
                Some(intensity) if slack == Slack::ConsumerSlot && free => (
                    stages,
                    format!(
                        "num_stages {stages}; no slot for the consumer's read: its dots do \
                         {intensity} flops a byte of the slot, under \
                         {CONSUMER_SLOT_FLOPS_PER_BYTE}, so the consumer holds a slot briefly \
                         against a copy (a memory-bound loop)"
                    ),
                ),
                _ if slack == Slack::ConsumerSlot
                    && fit.is_some_and(|(_, max)| {
                        extra.saturating_add(COOPERATIVE_EXTRA_SLOTS) <= max
                    })
                    && cooperative_gemm(func) =>
                {
                    (
                        extra + COOPERATIVE_EXTRA_SLOTS,
                        format!(
                            "num_stages {stages} in flight, the slot the consumer reads and \
                             {COOPERATIVE_EXTRA_SLOTS} more: its cooperative warpgroups release a \
                             slot at different times and the producer refills it after the later"
                        ),
                    )
                }
                _ if slack == Slack::ConsumerSlot && free => (
                    extra,
                    format!("num_stages {stages} in flight and the slot the consumer reads"),
                ),
                _ => (stages, format!("num_stages {stages}")),
            }
        }
    };
    let name_of = |func: &Function, ring: tawa_ir::Value| {
        func.values[ring]
            .name
            .clone()
            .unwrap_or_else(|| "ring".into())
    };
    let one_slot_bytes: u64 = one_slot.iter().map(|&r| slot_bytes(func, r)).sum();
    let one_slot_names: Vec<String> = one_slot
        .iter()
        .map(|&r| format!("%{}", name_of(func, r)))
        .collect();
    let usage = match smem.and_then(|m| m.bytes(depth).map(|b| (m, b))) {
        Some((m, b)) => {
            let of_which = if one_slot.is_empty() {
                String::new()
            } else {
                format!(
                    ", of which {} the one slot of {}",
                    kib(one_slot_bytes),
                    one_slot_names.join(", ")
                )
            };
            format!(
                "; {} of shared memory ({} a slot, {} else{of_which}), {} at most",
                kib(b),
                kib(m.per_slot as u64),
                kib(m.fixed as u64),
                kib(m.limit as u64)
            )
        }
        None => String::new(),
    };
    set_depths(func, depth);
    for op in creates {
        let ring = func.ops[op].results[0];
        let name = name_of(func, ring);
        let text = if one_slot.contains(&ring) {
            format!(
                "aref %{name}: depth 1, whatever num_stages or --aref-depth say: put once per \
                 iteration of the loop around the loops that stream the other rings (a tile's \
                 operand) and released after them: the producer copies the next tile's as \
                 soon as the consumer's loops are done with this one, while the consumer runs \
                 its epilogue (a second slot would copy it a whole tile earlier for {slot} more \
                 shared memory); its dots read the slot in place (wgmma's shared-memory \
                 operand, as the consumer's own buffer was: the backend keeps only a dot's \
                 result, attention's p, in registers for wgmma's register-A form); {slot} a \
                 slot, counted with the other shared memory",
                slot = kib(slot_bytes(func, ring))
            )
        } else {
            format!("aref %{name}: depth {depth} (from {why}){usage}")
        };
        schedule.note(func.ops[op].loc, text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_from_two_depths() {
        let m = SmemModel::from_two_depths(227 * 1024, 50_176, 99_328).unwrap();
        assert_eq!(m.per_slot, 49_152);
        assert_eq!(m.fixed, 1024);
        assert_eq!(m.max_depth(), 4);
        assert_eq!(m.bytes(3), Some(148_480));
        assert!(SmemModel::from_two_depths(1000, 500, 400).is_none());
    }
}
