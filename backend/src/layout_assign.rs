//! `layout_assign`: gives every tile value a *home* layout, the
//! distributed layout its op computes it in.
//!
//! Rules, applied in program order (regions included):
//!
//! - **Anchors.** Global loads and stores of pointer tiles get the default
//!   blocked layout of their shape ([`Blocked::default_for`] with the
//!   pointee's size): each thread moves up to 16 contiguous bytes, a warp
//!   covers whole rows, so accesses coalesce. `dot` results get the MMA
//!   accumulator layout ([`choose_mma`]): `wgmma` when the shapes allow,
//!   `mma.sync` otherwise.
//! - **Backward preferences.** Before the forward walk, the layout each
//!   load wants for its pointer, mask and `other` tiles flows backward
//!   through elementwise ops, `broadcast`, `expand_dims` (as the slice of
//!   the wanted layout) and loop-carried values (to the initial and the
//!   yielded value). Light values and loop-carried values are then *built*
//!   in the layout their load wants: the matmul tutorial's `a_ptrs` tile
//!   lives in the load's coalesced layout from the start instead of in the
//!   row-replicated layout of `offs_am[:, None]`, and is never converted
//!   inside the loop (Triton reaches the same place by rematerializing
//!   backward from its anchors after the fact).
//! - **Forward propagation.** Elementwise ops take the layout of their
//!   heaviest operand (one computed by a load, dot, reduction or loop; an
//!   MMA accumulator first, then a slice of one, then values computed in
//!   the loop body before loop-carried ones), so expensive values never
//!   move; `broadcast` keeps its operand's layout;
//!   `reduce` along `d` gives `Slice(d, operand)`; `expand_dims(d)` of a
//!   `Slice(d, P)` gives back `P`; `trans` permutes its operand's layout
//!   ([`Layout::permuted`]), so a transpose moves no data (a transposed
//!   MMA accumulator, which has no permuted form, takes the default
//!   layout and is converted); `reshape`, `split` and `join` take the
//!   layout that keeps every element in the register that held it when
//!   there is one ([`Regroup`]), the default layout otherwise (through
//!   shared memory).
//! - **Loops.** Loop-carried values take the layout of their initial value,
//!   then, if the body yields a heavy value in another layout, the carried
//!   value switches to that layout and the body is assigned again (the
//!   accumulator of a GEMM starts as a blocked `zeros` and becomes an MMA
//!   tile), until nothing changes.
//! - **Rematerialization over conversion.** A *light* value (built only
//!   from constants, ranges, splats, parameters and elementwise ops on
//!   those) is recomputed in whatever layout a user asks for; a heavy value
//!   asked for in another layout is converted through shared memory. Both
//!   happen in `emit_cuda`, which records which; this pass only decides the
//!   homes and which values are light.

use std::collections::HashMap;

use tawa_ir::{
    Block, Elem, Function, InputPrecision, OpKind, ScalarType, SecondaryMap, Type, Value, ValueDef,
};

use crate::axis_info::AxisInfoMap;
use crate::codegen::CodegenError;
use crate::layout::{Blocked, Layout, Mma, MmaVersion};

/// What [`Regroup::Rename`] is, in `--explain` and the generated CUDA.
pub const RENAME: &str = "a register rename, every element stays in its thread and register";

/// How a `reshape`, `split` or `join` (or the `trans` of an accumulator) moves
/// its tile's elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Regroup {
    /// Not at all: its results' homes keep every element in the thread and
    /// register that held it ([`Layout::reshape_rename`],
    /// [`Layout::split_rename`], [`Layout::join_rename`], and for a `trans`
    /// of a layout with no permuted form, [`Layout::trans_rename`]). `below`: for
    /// `split` and `join`, the registers under the digit of the halves
    /// ([`crate::layout::halves_register`]).
    Rename { below: u32 },
    /// Through shared memory, for this reason.
    Shared(String),
}

/// The result of the pass.
pub struct LayoutMap {
    home: SecondaryMap<Value, Option<Layout>>,
    heavy: SecondaryMap<Value, bool>,
    num_warps: u32,
    regroups: HashMap<tawa_ir::Op, Regroup>,
}

impl LayoutMap {
    /// The layout a tile value is computed in (`None` for scalars and
    /// pointers-to-blocks).
    pub fn home(&self, v: Value) -> Option<&Layout> {
        self.home[v].as_ref()
    }

    /// Whether a value must be converted (not recomputed) to change layout.
    pub fn is_heavy(&self, v: Value) -> bool {
        self.heavy[v]
    }

    pub fn num_warps(&self) -> u32 {
        self.num_warps
    }

    /// How `reshape`, `split` or `join` op `op` moves its elements.
    pub fn regroup(&self, op: tawa_ir::Op) -> Option<&Regroup> {
        self.regroups.get(&op)
    }
}

/// Bytes of one element as stored (pointers count their pointee, which is
/// what a load of them moves).
pub fn access_bytes(elem: Elem) -> u32 {
    match elem {
        Elem::Scalar(s) | Elem::Ptr(s) => s.byte_size().max(1),
    }
}

/// The default blocked layout for a tile type.
pub fn default_layout(ty: &Type, num_warps: u32) -> Option<Layout> {
    match ty {
        Type::Tensor { shape, elem } => Some(Layout::Blocked(Blocked::default_for(
            shape,
            num_warps,
            access_bytes(*elem),
        ))),
        _ => None,
    }
}

/// K elements per tensor-core instruction for an operand type, or `None`
/// when no instruction takes it.
pub fn mma_k_step(elem: ScalarType, precision: InputPrecision) -> Option<u32> {
    match elem {
        ScalarType::F16 | ScalarType::BF16 => Some(16),
        ScalarType::F32 if precision != InputPrecision::Ieee => Some(8),
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => Some(32),
        _ => None,
    }
}

/// The accumulator layout of an `m x n x k` dot with `a_elem` operands:
/// `wgmma` (warpgroups split M in 64-row slices first, then N) when the
/// warps form whole warpgroups and the tile has 64-row slices for them;
/// `mma.sync` (warps split M in 16-row slices first) otherwise.
pub fn choose_mma(
    m: u32,
    n: u32,
    k: u32,
    a_elem: ScalarType,
    num_warps: u32,
    precision: InputPrecision,
) -> Option<Mma> {
    let kstep = mma_k_step(a_elem, precision)?;
    if !k.is_multiple_of(kstep) || !n.is_multiple_of(8) {
        return None;
    }
    if num_warps.is_multiple_of(4) && m.is_multiple_of(64) {
        let groups = num_warps / 4;
        let wg_m = groups.min(m / 64);
        let wg_n = groups / wg_m;
        if wg_m * wg_n == groups && (n / wg_n).is_multiple_of(8) && n / wg_n >= 8 {
            let per_group = n / wg_n;
            return Some(Mma {
                version: MmaVersion::V3,
                warps_per_cta: [4 * wg_m, wg_n],
                instr_n: per_group.min(256),
            });
        }
    }
    // mma.sync: f16/bf16 (m16n8k16) and tf32 (m16n8k8).
    if !matches!(a_elem, ScalarType::F16 | ScalarType::BF16 | ScalarType::F32) {
        return None;
    }
    let wm = num_warps.min((m / 16).max(1));
    Some(Mma {
        version: MmaVersion::V2,
        warps_per_cta: [wm, num_warps / wm],
        instr_n: 8,
    })
}

struct Assigner<'f> {
    func: &'f Function,
    map: LayoutMap,
    /// Backward preferences (see the module docs).
    want: SecondaryMap<Value, Option<Layout>>,
    coalesce_by: Option<&'f AxisInfoMap>,
    error: Option<CodegenError>,
}

/// The layout a global load is anchored to: the default blocked layout of
/// its shape, or, with `axis` facts (the coalescing option), one whose
/// fastest dimension is the one the pointers are contiguous along (Triton's
/// coalesce pass), so that the matmul tutorial's `b` with strides `[1, K]`
/// or attention's `k` tile (contiguous along the head dimension, dim 0) are
/// read 16 bytes per thread instead of one element per thread.
pub fn load_anchor(
    func: &Function,
    load: tawa_ir::Op,
    num_warps: u32,
    axis: Option<&AxisInfoMap>,
) -> Option<Layout> {
    let data = &func.ops[load];
    let r = *data.results.first()?;
    pointer_anchor(func, *data.operands.first()?, func.ty(r), num_warps, axis)
}

/// The blocked layout for accessing a tile of type `ty` through pointer
/// (tile) `ptr`: vectors along the dimension the pointers are most
/// contiguous in (the default layout when that is the last one or not
/// known).
pub fn pointer_anchor(
    func: &Function,
    ptr: Value,
    ty: &Type,
    num_warps: u32,
    axis: Option<&AxisInfoMap>,
) -> Option<Layout> {
    let default = default_layout(ty, num_warps)?;
    let Some(axis) = axis else {
        return Some(default);
    };
    if !func.ty(ptr).is_tensor() {
        return Some(default);
    }
    let shape = ty.shape();
    let contiguity = &axis.get(ptr).contiguity;
    if contiguity.len() != shape.len() {
        return Some(default);
    }
    // Most contiguous first; ties keep the default order (last dim first).
    let mut order: Vec<u32> = (0..shape.len() as u32).rev().collect();
    order.sort_by_key(|&d| std::cmp::Reverse(contiguity[d as usize].min(shape[d as usize])));
    let Layout::Blocked(b) = &default else {
        return Some(default);
    };
    if order == b.order {
        return Some(default);
    }
    Some(Layout::Blocked(Blocked::with_order(
        shape,
        num_warps,
        access_bytes(ty.elem()?),
        order,
    )))
}

/// The layouts loads want for the tiles that feed them, propagated backward
/// to a fixpoint. First preference wins where two consumers disagree (the
/// other one rematerializes or converts, as without preferences).
fn backward_preferences(
    func: &Function,
    num_warps: u32,
    axis: Option<&AxisInfoMap>,
) -> SecondaryMap<Value, Option<Layout>> {
    let mut want: SecondaryMap<Value, Option<Layout>> = SecondaryMap::new();
    let mut ops = Vec::new();
    func.walk(&mut |op| ops.push(op));
    // A load in a warp-specialized partition is anchored over that
    // partition's warps (as the forward walk assigns it), not the
    // kernel's: a producer's copy built from pointers laid out for the
    // consumer's warps would convert them through shared memory.
    let mut warps_of: HashMap<tawa_ir::Op, u32> = HashMap::new();
    for &op in &ops {
        if let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind {
            for (p, &region) in partitions.iter().zip(&func.ops[op].regions) {
                func.walk_block(region, &mut |inner| {
                    warps_of.insert(inner, p.num_warps);
                });
            }
        }
    }
    let prefer = |want: &mut SecondaryMap<Value, Option<Layout>>, v: Value, l: &Layout| -> bool {
        if !func.ty(v).is_tensor() || want[v].is_some() {
            return false;
        }
        want[v] = Some(l.clone());
        true
    };
    // Loop nests are shallow; each round carries preferences one loop
    // boundary further.
    for _ in 0..8 {
        let mut changed = false;
        for &op in ops.iter().rev() {
            let data = &func.ops[op];
            let res = data.results.first().copied();
            match &data.kind {
                OpKind::Load { .. } => {
                    let warps = warps_of.get(&op).copied().unwrap_or(num_warps);
                    if let Some(l) = load_anchor(func, op, warps, axis) {
                        for &v in &data.operands {
                            changed |= prefer(&mut want, v, &l);
                        }
                    }
                }
                kind if kind.is_elementwise() || matches!(kind, OpKind::Broadcast) => {
                    let r = res.unwrap();
                    if let Some(l) = want[r].clone() {
                        for &v in &data.operands {
                            if func.ty(v).shape().len() == func.ty(r).shape().len() {
                                changed |= prefer(&mut want, v, &l);
                            }
                        }
                    }
                }
                OpKind::ExpandDims { axis } => {
                    let r = res.unwrap();
                    if let Some(l) = want[r].clone() {
                        changed |= prefer(&mut want, data.operands[0], &Layout::slice(*axis, l));
                    }
                }
                OpKind::For(_) => {
                    let body = data.regions[0];
                    let args = &func.blocks[body].args;
                    let last = *func.blocks[body].ops.last().expect("verified: terminator");
                    let yielded = &func.ops[last].operands;
                    let inits = &data.operands[3..];
                    for (i, &r) in data.results.iter().enumerate() {
                        if let Some(l) = want[r].clone() {
                            changed |= prefer(&mut want, args[i + 1], &l);
                        }
                        if let Some(l) = want[args[i + 1]].clone() {
                            changed |= prefer(&mut want, inits[i], &l);
                            changed |= prefer(&mut want, yielded[i], &l);
                        }
                    }
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    want
}

/// Runs the pass.
pub fn assign_layouts(func: &Function) -> Result<LayoutMap, CodegenError> {
    assign_layouts_with(func, None)
}

/// Runs the pass; with `coalesce_by`, loads are anchored along the
/// dimension their pointers are contiguous in ([`load_anchor`]).
pub fn assign_layouts_with(
    func: &Function,
    coalesce_by: Option<&AxisInfoMap>,
) -> Result<LayoutMap, CodegenError> {
    let mut a = Assigner {
        func,
        map: LayoutMap {
            home: SecondaryMap::new(),
            heavy: SecondaryMap::new(),
            num_warps: func.attrs.num_warps,
            regroups: HashMap::new(),
        },
        want: backward_preferences(func, func.attrs.num_warps, coalesce_by),
        coalesce_by,
        error: None,
    };
    a.block(func.body);
    match a.error {
        Some(e) => Err(e),
        None => Ok(a.map),
    }
}

impl Assigner<'_> {
    fn default_for(&self, v: Value) -> Option<Layout> {
        default_layout(self.func.ty(v), self.map.num_warps)
    }

    /// The layout a load downstream wants for `v`, else the default.
    fn wanted_or_default(&self, v: Value) -> Option<Layout> {
        self.want[v].clone().or_else(|| self.default_for(v))
    }

    fn set(&mut self, v: Value, layout: Option<Layout>, heavy: bool) {
        self.map.home[v] = layout;
        self.map.heavy[v] = heavy;
    }

    /// The operand whose layout an elementwise op adopts.
    fn dominant(&self, operands: &[Value]) -> Option<Value> {
        let tiles = operands
            .iter()
            .copied()
            .filter(|&v| self.map.home[v].is_some());
        // An MMA tile is the most expensive to move (it is the whole
        // accumulator), then rows or columns reduced out of one (attention's
        // running max and sum), then other heavy values. So
        // `acc += tl.dot(a, b)` adds in the MMA layout and
        // `tl.maximum(m_i, tl.max(qk, 1))` stays a slice of it; the carried
        // `acc` and `m_i` then follow through the loop fixpoint.
        // A loop-carried value ranks below other heavy values: the loop
        // fixpoint moves it to whatever layout its update settles in
        // (layer norm's `partial_sum += x` accumulates in the layout of the
        // loaded `x`, not the default one of `tl.zeros`).
        let carried = |v: Value| matches!(self.func.values[v].def, ValueDef::Arg(b, _) if self.func.blocks[b].parent.is_some());
        let rank = |v: Value| -> u32 {
            match (&self.map.home[v], self.map.heavy[v]) {
                (_, false) => 0,
                (Some(Layout::Mma(_)), true) => 4,
                (Some(Layout::Slice { parent, .. }), true)
                    if matches!(**parent, Layout::Mma(_)) =>
                {
                    3
                }
                _ if carried(v) => 1,
                _ => 2,
            }
        };
        let mut best: Option<(u32, Value)> = None;
        for v in tiles {
            let r = rank(v);
            if best.is_none_or(|(b, _)| r > b) {
                best = Some((r, v));
            }
        }
        best.map(|(_, v)| v)
    }

    fn block(&mut self, block: Block) {
        for &op in &self.func.blocks[block].ops {
            self.op(op);
        }
    }

    fn op(&mut self, op: tawa_ir::Op) {
        let f = self.func;
        let data = &f.ops[op];
        let ops = &data.operands;
        let res = data.results.first().copied();
        let heavy_in = ops.iter().any(|&v| self.map.heavy[v]);
        match &data.kind {
            OpKind::Constant(_) | OpKind::Splat | OpKind::MakeRange { .. } => {
                let r = res.unwrap();
                self.set(r, self.wanted_or_default(r), false);
            }
            OpKind::ProgramId(_) | OpKind::NumPrograms(_) => {}
            // Listed, not `is_elementwise`: this match is exhaustive, so a
            // new op kind must say where its layout comes from.
            OpKind::Binary(_)
            | OpKind::Unary(_)
            | OpKind::Fma
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Cast { .. }
            | OpKind::Bitcast
            | OpKind::AddPtr
            | OpKind::Hint { .. } => {
                let r = res.unwrap();
                let layout = if !f.ty(r).is_tensor() {
                    None
                } else if let (false, Some(l)) = (heavy_in, &self.want[r]) {
                    Some(l.clone())
                } else {
                    match self.dominant(ops) {
                        Some(d) if f.ty(d).shape() == f.ty(r).shape() => self.map.home[d].clone(),
                        _ => self.default_for(r),
                    }
                };
                self.set(r, layout, heavy_in);
            }
            OpKind::Broadcast => {
                let r = res.unwrap();
                let layout = match (heavy_in, &self.want[r]) {
                    (false, Some(l)) => Some(l.clone()),
                    _ => self.map.home[ops[0]]
                        .clone()
                        .or_else(|| self.default_for(r)),
                };
                self.set(r, layout, heavy_in);
            }
            OpKind::ExpandDims { axis } => {
                let r = res.unwrap();
                let layout = match (&self.map.home[ops[0]], &self.want[r]) {
                    (_, Some(l)) if !heavy_in => Some(l.clone()),
                    (Some(Layout::Slice { dim, parent }), _) if dim == axis => {
                        Some((**parent).clone())
                    }
                    _ => self.default_for(r),
                };
                self.set(r, layout, heavy_in);
            }
            OpKind::Reduce { axis, .. } => {
                let r = res.unwrap();
                let layout = if f.ty(r).is_tensor() {
                    self.map.home[ops[0]]
                        .clone()
                        .map(|p| Layout::slice(*axis, p))
                } else {
                    None
                };
                self.set(r, layout, true);
            }
            OpKind::Scan { .. } => {
                let r = res.unwrap();
                self.set(r, self.map.home[ops[0]].clone(), true);
            }
            OpKind::AtomicRmw { .. } => {
                // Atomics run in the layout of the value they apply, as stores do.
                let r = res.unwrap();
                let layout = self.map.home[ops[1]]
                    .clone()
                    .or_else(|| self.default_for(r));
                self.set(r, layout, true);
            }
            OpKind::Load { .. } => {
                let r = res.unwrap();
                let anchor = load_anchor(f, op, self.map.num_warps, self.coalesce_by);
                self.set(r, anchor, true);
            }
            // The results are the operands (accumulators in flight).
            OpKind::DotWait { .. } => {
                for (&o, &r) in ops.iter().zip(&data.results) {
                    self.set(r, self.map.home[o].clone(), true);
                }
            }
            OpKind::DescLoad { .. } | OpKind::AtomicCas { .. } => {
                let r = res.unwrap();
                self.set(r, self.default_for(r), true);
            }
            // The pair's partial sums meet in the operand's registers, and
            // the op waits for the peer CTA: never recomputed.
            OpKind::ClusterSum => {
                let r = res.unwrap();
                let layout = self.map.home[ops[0]]
                    .clone()
                    .or_else(|| self.default_for(r));
                self.set(r, layout, true);
            }
            // Likewise the stream-K sums, in the registers of the sums
            // they add to (the workspace holds them in that order).
            OpKind::StreamKTake => {
                for (&r, &o) in data.results.iter().zip(&ops[1..]) {
                    let layout = self.map.home[o].clone().or_else(|| self.default_for(r));
                    self.set(r, layout, true);
                }
            }
            OpKind::StreamKPut => {}
            OpKind::Dot {
                input_precision, ..
            } => {
                let r = res.unwrap();
                let shape = f.ty(r).shape().to_vec();
                let k = f.ty(ops[0]).shape()[1];
                let a_elem = f.ty(ops[0]).scalar_type().unwrap_or(ScalarType::F32);
                match choose_mma(
                    shape[0],
                    shape[1],
                    k,
                    a_elem,
                    self.map.num_warps,
                    *input_precision,
                ) {
                    Some(mma) => self.set(r, Some(Layout::Mma(mma)), true),
                    None => {
                        self.error.get_or_insert(CodegenError {
                            loc: data.loc,
                            message: format!(
                                "`tl.dot` of {}x{}x{} with {} operands has no tensor-core instruction",
                                shape[0], shape[1], k, a_elem
                            ),
                            notes: vec![
                                "tensor cores take f16, bf16, f32 (as tf32) and fp8 operands, N a multiple of 8 and K a multiple of the instruction's K (16 for f16)".into(),
                            ],
                        });
                        self.set(r, self.default_for(r), true);
                    }
                }
            }
            // The operand's layout, permuted: a rename, no data moves. A
            // transposed accumulator (no permuted MMA layout) is spelled
            // out and renamed ([`Layout::trans_rename`]); where even that
            // fails, it is converted to the default layout of the
            // operand's shape first.
            OpKind::Trans { perm } => {
                let r = res.unwrap();
                let shape = f.ty(ops[0]).shape();
                let operand = self.map.home[ops[0]].clone();
                let layout = match operand.map(|l| (l.permuted(perm), l)) {
                    Some((Some(permuted), _)) => Some(permuted),
                    Some((None, l)) => match l.trans_rename(shape, perm) {
                        Ok(renamed) => {
                            self.map.regroups.insert(op, Regroup::Rename { below: 0 });
                            Some(renamed)
                        }
                        Err(_) => self.default_for(r),
                    },
                    None => self.default_for(r),
                };
                self.set(r, layout, heavy_in);
            }
            // A register rename where the operand's layout allows one
            // (tutorial 09's subtiled epilogue: the accumulator reshaped,
            // permuted and split into halves that are accumulators of half
            // the width), else the default layout, through shared memory.
            OpKind::Reshape | OpKind::Join | OpKind::Split => {
                let operand = ops[0];
                let shape = f.ty(operand).shape();
                let renamed = match (&self.map.home[operand], &data.kind) {
                    (None, _) => Err("the operand has no layout".to_string()),
                    (Some(l), OpKind::Reshape) => l
                        .reshape_rename(shape, f.ty(data.results[0]).shape())
                        .map(|l| (l, 0)),
                    (Some(l), OpKind::Split) => l.split_rename(shape),
                    (Some(l), _) => l.join_rename(shape),
                };
                let decision = match renamed {
                    Ok((layout, below)) => {
                        for &r in &data.results {
                            self.set(r, Some(layout.clone()), true);
                        }
                        Regroup::Rename { below }
                    }
                    Err(why) => {
                        for &r in &data.results {
                            self.set(r, self.default_for(r), true);
                        }
                        Regroup::Shared(why)
                    }
                };
                self.map.regroups.insert(op, decision);
            }
            OpKind::MakeBlockPtr { .. } | OpKind::Advance | OpKind::MakeTensorDesc => {}
            OpKind::For(_) => self.for_loop(op),
            OpKind::If => {
                for &region in &data.regions {
                    self.block(region);
                }
                let then_yield = self.terminator_operands(data.regions[0]);
                for (i, &r) in data.results.iter().enumerate() {
                    let y = then_yield[i];
                    self.set(r, self.map.home[y].clone(), true);
                }
            }
            OpKind::While => self.while_loop(op),
            OpKind::Store { .. }
            | OpKind::DescStore
            | OpKind::Yield
            | OpKind::Condition
            | OpKind::Return
            | OpKind::DebugBarrier
            | OpKind::TurnTake
            | OpKind::TurnPass
            | OpKind::Print { .. }
            | OpKind::Assert { .. } => {}
            OpKind::ArefCreate | OpKind::ArefPut | OpKind::ArefConsumed => {}
            // Views of aref slots, read by `dot`s in shared memory; the
            // layout is for a (refused) use in registers.
            OpKind::ArefGet => {
                for &r in &data.results {
                    self.set(r, self.default_for(r), true);
                }
            }
            // Each partition's tiles are spread over its own warps.
            OpKind::WarpSpecialize { partitions } => {
                let whole = self.map.num_warps;
                for (p, &region) in partitions.iter().zip(&data.regions) {
                    self.map.num_warps = p.num_warps;
                    self.block(region);
                }
                self.map.num_warps = whole;
            }
        }
    }

    fn terminator_operands(&self, block: Block) -> Vec<Value> {
        let last = *self.func.blocks[block]
            .ops
            .last()
            .expect("verified: blocks end in a terminator");
        self.func.ops[last].operands.clone()
    }

    /// Assigns a loop body until the carried layouts are stable.
    fn for_loop(&mut self, op: tawa_ir::Op) {
        let f = self.func;
        let data = &f.ops[op];
        let body = data.regions[0];
        let args = f.blocks[body].args.clone();
        let inits = &data.operands[3..];
        self.set(args[0], None, false);
        for (i, &init) in inits.iter().enumerate() {
            let layout = self.want[args[i + 1]]
                .clone()
                .or_else(|| self.map.home[init].clone())
                .or_else(|| self.default_for(args[i + 1]));
            self.set(args[i + 1], layout, true);
        }
        self.carried_fixpoint(body, &args[1..], |a| a.terminator_operands(body));
        for (i, &r) in data.results.iter().enumerate() {
            self.set(r, self.map.home[args[i + 1]].clone(), true);
        }
    }

    fn while_loop(&mut self, op: tawa_ir::Op) {
        let f = self.func;
        let data = &f.ops[op];
        let (before, after) = (data.regions[0], data.regions[1]);
        let bargs = f.blocks[before].args.clone();
        for (i, &init) in data.operands.iter().enumerate() {
            let layout = self.map.home[init]
                .clone()
                .or_else(|| self.default_for(bargs[i]));
            self.set(bargs[i], layout, true);
        }
        let aargs = f.blocks[after].args.clone();
        for _ in 0..4 {
            self.block(before);
            let fwd = self.terminator_operands(before);
            for (i, &a) in aargs.iter().enumerate() {
                let layout = self.map.home[fwd[i + 1]].clone();
                self.set(a, layout, true);
            }
            self.block(after);
            let next = self.terminator_operands(after);
            if !self.adopt_yielded(&bargs, &next) {
                break;
            }
        }
        for (i, &r) in data.results.iter().enumerate() {
            self.set(r, self.map.home[aargs[i]].clone(), true);
        }
    }

    fn carried_fixpoint(
        &mut self,
        body: Block,
        carried: &[Value],
        yielded: impl Fn(&Self) -> Vec<Value>,
    ) {
        for _ in 0..4 {
            self.block(body);
            let next = yielded(self);
            if !self.adopt_yielded(carried, &next) {
                break;
            }
        }
    }

    /// Carried values take the layout of heavy yielded values; true when
    /// anything changed (the body must be assigned again).
    fn adopt_yielded(&mut self, carried: &[Value], yielded: &[Value]) -> bool {
        let mut changed = false;
        for (&c, &y) in carried.iter().zip(yielded) {
            if self.map.heavy[y]
                && self.map.home[y].is_some()
                && self.map.home[y] != self.map.home[c]
            {
                self.map.home[c] = self.map.home[y].clone();
                changed = true;
            }
        }
        changed
    }
}

/// One line per tile value: `%name: layout`, for file tests and `--emit layouts`.
pub fn print_layouts(func: &Function, map: &LayoutMap) -> String {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut line = |v: Value, out: &mut String| {
        if !seen.insert(v) {
            return;
        }
        if let Some(l) = map.home(v) {
            let name = func.values[v]
                .name
                .clone()
                .unwrap_or_else(|| format!("{v}"));
            let kind = if map.is_heavy(v) { "" } else { " (light)" };
            out.push_str(&format!("%{name}: {l}{kind}\n"));
        }
    };
    func.walk(&mut |op| {
        for &region in &func.ops[op].regions {
            for &a in &func.blocks[region].args {
                line(a, &mut out);
            }
        }
        for &r in &func.ops[op].results {
            line(r, &mut out);
        }
    });
    out
}
