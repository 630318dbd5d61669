//! Producer copies: the mainloop tiles TMA cannot take (a base pointer
//! loaded from memory with no alignment proof, a stride TMA refuses) that
//! the producer partition's threads copy into the aref slot themselves,
//! as CUTLASS's sm90 cp.async warp-specialized mainloops do. TMA stays
//! first: a load is a producer copy only when the TMA inference refused
//! it and it is otherwise a warp-specialization candidate, a 2-D tile
//! read only as an operand of `dot`s.
//!
//! What the copy needs, and what it decides here from the axis facts
//! the code proves without the kernel's hints (`analyze_proven`: the
//! run-time check below looks at alignment and masks, so the contiguity
//! under a chunk must be real, not vouched for):
//!
//! - the tile's last dimension is the one its pointers run along
//!   (`contiguity`), in runs of 16 bytes at least: the slot's swizzle
//!   lines hold that dimension, and a thread copies 16-byte chunks of a
//!   line (the unit the swizzle permutes);
//! - no `other` but zero: `cp.async` zero-fills a chunk whose source size
//!   is 0;
//! - the access width: 16-byte `cp.async` when the pointers are proven
//!   16-byte aligned at every chunk (`divisibility`) and the mask constant
//!   over each chunk (`constancy`); otherwise a check at run time, per
//!   thread and put, takes the 16-byte path when every chunk the thread
//!   copies is aligned and masked whole, and the element-wise path (plain
//!   loads and shared-memory stores) when one is not.
//!
//! The backend (`aref_lower.rs`) lowers such a `load` feeding an
//! `aref.put`; the aref simulator runs it as the load it is.

use std::collections::HashSet;

use tawa_ir::axis_info::AxisInfoMap;
use tawa_ir::function::{Op, Value};
use tawa_ir::{ConstValue, Function, Loc, OpKind, Type};

use crate::tma_infer::TmaPlan;

/// A load the producer copies with its threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerCopy {
    pub op: Op,
    pub loc: Loc,
    /// Bytes per access proven at compile time: 16 (every chunk is
    /// 16-byte aligned and masked whole), or the element size when only a
    /// run-time check can take the 16-byte path.
    pub proven_bytes: u32,
    /// Why the 16-byte path is not proven (empty when it is).
    pub unproven: String,
    /// Bytes of one chunk: 16.
    pub chunk_bytes: u32,
    /// Why TMA refused it (the TMA inference's sentence).
    pub not_tma: String,
}

impl ProducerCopy {
    /// The `--explain` words for the access width and why it was taken.
    pub fn width(&self) -> String {
        if self.proven_bytes >= self.chunk_bytes {
            format!(
                "cp.async, {}-byte: the pointers are proven {}-byte aligned",
                self.chunk_bytes, self.chunk_bytes
            )
        } else {
            let masked = if self.unproven.contains("mask") {
                " and each masked whole"
            } else {
                ""
            };
            format!(
                "cp.async, {c}-byte when each thread's chunks are {c}-byte aligned{masked} at run \
                 time, else {e}-byte element copies: {}",
                self.unproven,
                c = self.chunk_bytes,
                e = self.proven_bytes
            )
        }
    }
}

/// Bytes one copy chunk holds: what one `cp.async.cg` moves and what a
/// shared-memory swizzle permutes.
pub const CHUNK_BYTES: u32 = 16;

/// The tile loads of `func` (the kernel after `tma_lower`) that the
/// producer copies: plain loads of 2-D pointer tiles that `tma_refusals`
/// (the TMA inference on the kernel before lowering, by location) refused,
/// read only as `dot` operands, in the shape [`ProducerCopy`] needs.
///
/// The shape is judged on the facts the code proves without the kernel's
/// hints ([`tawa_ir::axis_info::analyze_proven`]), the ones the backend
/// copies by: a 16-byte chunk taken on a run-time alignment check must
/// not straddle a `% N` wrap that a `max_contiguous` hint papers over.
pub fn producer_copies(func: &Function, tma_refusals: &TmaPlan) -> Vec<ProducerCopy> {
    judge(func, tma_refusals)
        .into_iter()
        .filter_map(Result::ok)
        .collect()
}

/// A tile load of a producer copy's shape (TMA refused it, a 2-D `dot`
/// operand, no `other` but zero) whose pointers are not proven to run in
/// whole 16-byte chunks along its last dimension: it stays in the
/// consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotCopied {
    pub op: Op,
    pub loc: Loc,
    /// Why not (one sentence, naming a `max_contiguous` hint that
    /// claims the runs the code does not prove).
    pub why: String,
    /// Why TMA refused it (the TMA inference's sentence).
    pub not_tma: String,
}

/// The loads [`producer_copies`] leaves in the consumer for want of
/// proven contiguity, for `--explain`.
pub fn not_copied(func: &Function, tma_refusals: &TmaPlan) -> Vec<NotCopied> {
    judge(func, tma_refusals)
        .into_iter()
        .filter_map(Result::err)
        .collect()
}

/// Every load TMA refused that has a producer copy's shape: the copy, or
/// why its pointers do not allow one.
fn judge(func: &Function, tma_refusals: &TmaPlan) -> Vec<Result<ProducerCopy, NotCopied>> {
    let proven = tawa_ir::axis_info::analyze_proven(func);
    let hinted = tawa_ir::axis_info::analyze(func);
    let mut out = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let OpKind::Load {
            has_mask,
            has_other,
            ..
        } = data.kind
        else {
            return;
        };
        let refusal = tma_refusals.decisions.iter().find_map(|d| match d {
            Err(n) if n.loc == data.loc => Some(n.reason.clone()),
            _ => None,
        });
        let Some(not_tma) = refusal else {
            return;
        };
        if let Some(judged) = copy_of(func, [&proven, &hinted], op, has_mask, has_other, not_tma) {
            out.push(judged);
        }
    });
    out
}

/// The ops of `copies`, for the partitioner.
pub fn copy_ops(copies: &[ProducerCopy]) -> HashSet<Op> {
    copies.iter().map(|c| c.op).collect()
}

/// The copy of load `op`, by the `proven` facts (`hinted` only names a
/// hint in the refusal); `None` when it has no producer copy's shape.
fn copy_of(
    func: &Function,
    [axis, hinted]: [&AxisInfoMap; 2],
    op: Op,
    has_mask: bool,
    has_other: bool,
    not_tma: String,
) -> Option<Result<ProducerCopy, NotCopied>> {
    let data = &func.ops[op];
    let ptr = data.operands[0];
    let r = *data.results.first()?;
    let ty = func.ty(r);
    let Type::Tensor { shape, .. } = ty else {
        return None;
    };
    if shape.len() != 2 || !matches!(func.ty(ptr), Type::Tensor { .. }) {
        return None;
    }
    let eb = ty.scalar_type()?.byte_size();
    if eb == 0 || CHUNK_BYTES % eb != 0 {
        return None;
    }
    let per_chunk = CHUNK_BYTES / eb;
    // Whole chunks along the slot's lines.
    if shape[1] % per_chunk != 0 {
        return None;
    }
    let info = axis.get(ptr);
    let mask_whole = !has_mask
        || axis
            .get(data.operands[1])
            .constancy
            .get(1)
            .is_some_and(|&c| c % per_chunk == 0);
    if has_other && !is_zero(func, data.operands[2]) {
        return None;
    }
    // Its readers agree on the operand and on reading it through a
    // `trans` or not: the slot lies as loaded, and one layout serves them.
    dot_operand_role(func, r, true)?;
    let runs = |facts: &AxisInfoMap| facts.get(ptr).contiguity.get(1).copied().unwrap_or(1);
    if runs(axis) < per_chunk {
        let hint = if runs(hinted) >= per_chunk {
            " (a `tl.max_contiguous` hint claims them, but a copy whose alignment is \
             checked at run time cannot lean on it: indices wrapped at a bound, `% N` or \
             `tl.where(offs < N, offs, 0)`, break such runs)"
        } else {
            ""
        };
        return Some(Err(NotCopied {
            op,
            loc: data.loc,
            why: format!(
                "its pointers are not proven to run in {per_chunk}-element ({CHUNK_BYTES}-byte) \
                 chunks along its last dimension{hint}"
            ),
            not_tma,
        }));
    }
    let align = info.divisibility.get(1).copied().unwrap_or(1);
    let mut unproven = Vec::new();
    if align % CHUNK_BYTES != 0 {
        unproven.push(format!(
            "no {CHUNK_BYTES}-byte alignment is proven for the pointers"
        ));
    }
    if !mask_whole {
        unproven.push(format!(
            "the mask may change within a {CHUNK_BYTES}-byte chunk"
        ));
    }
    let proven_bytes = if align % CHUNK_BYTES == 0 && mask_whole {
        CHUNK_BYTES
    } else {
        eb
    };
    Some(Ok(ProducerCopy {
        op,
        loc: data.loc,
        proven_bytes,
        unproven: unproven.join(" and "),
        chunk_bytes: CHUNK_BYTES,
        not_tma,
    }))
}

/// Whether `v` is a constant zero (a splat of one included).
fn is_zero(func: &Function, v: Value) -> bool {
    let Some(d) = func.def_op(v) else {
        return false;
    };
    match &func.ops[d].kind {
        OpKind::Constant(c) => match c {
            ConstValue::Int(i) => *i == 0,
            ConstValue::Float(f) => *f == 0.0 && f.is_sign_positive(),
            ConstValue::Bool(b) => !*b,
        },
        OpKind::Splat => is_zero(func, func.ops[d].operands[0]),
        _ => false,
    }
}

/// How the `dot`s read `v`: which operand (0: `a`, 1: `b`) and whether
/// through one 2-D `trans` (only where `through_trans`); `None` when
/// something else reads it, nothing does, or two readers differ in
/// either (one slot layout serves them all).
fn dot_operand_role(func: &Function, v: Value, through_trans: bool) -> Option<(usize, bool)> {
    let mut role = None;
    for (_, data) in func.ops.iter() {
        for (i, &o) in data.operands.iter().enumerate() {
            if o != v {
                continue;
            }
            let read_as = match &data.kind {
                OpKind::Dot { .. } if i < 2 => (i, false),
                OpKind::Trans { .. } if through_trans && func.ty(o).shape().len() == 2 => {
                    (dot_operand_role(func, data.results[0], false)?.0, true)
                }
                _ => return None,
            };
            if role.replace(read_as).is_some_and(|r| r != read_as) {
                return None;
            }
        }
    }
    role
}
