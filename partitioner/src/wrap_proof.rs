//! The proof that lets a load through a wrapped index become a TMA copy.
//!
//! The matmul tutorial reads rows `(start + i) % M` so that every address
//! is valid; a TMA copy of the `M`-row tensor reads rows `start + i`
//! instead, with zeros at and past `M`. The two agree on rows below `M`
//! (for non-negative `start + i`, which [`crate::tma_infer`] assumes of
//! every tile origin); the other rows differ, which is harmless exactly
//! when nothing computed from them is ever stored.
//!
//! The proof follows the *tainted axes* of values: the loaded tile is
//! tainted along the wrapped dimension; an elementwise op's result carries
//! its operands' taints; `expand_dims`, `trans`, `broadcast` move or keep
//! axes; `dot` maps rows of `a` to rows of the result and columns of `b`
//! to its columns (a tainted reduction dimension taints every element and
//! fails); a reduction or scan along a tainted axis fails, along another
//! axis it drops that axis; loops carry taints to a fixpoint, but not
//! across iterations in which the wrap's `start` changes (the next
//! iteration's stores check other rows). A store of a
//! tainted value must mask the tainted rows: its mask has the bound
//! `i_axis < modulus - start` (`rows[:, None] < M` with the same rows
//! offset), or its block pointer or descriptor has that extent along the
//! axis. A tainted value reaching anything else (an address, a mask, a
//! condition, an op the proof does not model) fails with the op named.

use tawa_ir::printer::op_name;
use tawa_ir::{Block, Function, Loc, Op, OpKind, SecondaryMap, Type, Value};

use crate::affine::{AffineForms, Form, Poly, Wrap};

/// Proves that the rows `load` reads through `wrap` along tile dimension
/// `dim` only reach stores that mask them. Returns those stores, or the
/// reason the proof fails (one sentence; `render` names polynomials).
pub fn prove(
    func: &Function,
    forms: &AffineForms,
    load: Op,
    dim: usize,
    wrap: &Wrap,
    render: &dyn Fn(&Poly) -> String,
) -> Result<Vec<Loc>, String> {
    let Some(rows_left) = wrap.modulus.checked_sub(&wrap.start) else {
        return Err("the wrapped index's bound is too large to follow".into());
    };
    let mut t = Tracker {
        func,
        forms,
        load,
        dim: dim as u32,
        wrap,
        rows_left,
        render,
        tainted: SecondaryMap::with_default(Vec::new()),
        stores: Vec::new(),
    };
    t.block(func.body)?;
    let mut stores = t.stores;
    stores.sort();
    stores.dedup();
    Ok(stores)
}

struct Tracker<'a> {
    func: &'a Function,
    forms: &'a AffineForms,
    load: Op,
    dim: u32,
    wrap: &'a Wrap,
    /// `modulus - start`: the bound a store's mask must put on the axis.
    rows_left: Poly,
    render: &'a dyn Fn(&Poly) -> String,
    /// Sorted tainted axes of each value.
    tainted: SecondaryMap<Value, Vec<u32>>,
    stores: Vec<Loc>,
}

/// Loop fixpoints only add axes, so they end; this bounds a malformed IR.
const MAX_ROUNDS: usize = 32;

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut u: Vec<u32> = a.iter().chain(b).copied().collect();
    u.sort_unstable();
    u.dedup();
    u
}

impl<'a> Tracker<'a> {
    fn wrapped(&self) -> String {
        format!(
            "the indices {} {} (at {}:{})",
            self.wrap.how(),
            (self.render)(&self.wrap.modulus),
            self.wrap.at.line,
            self.wrap.at.col
        )
    }

    fn fail(&self, op: Op, what: &str) -> String {
        let at = self.func.ops[op].loc;
        format!(
            "{} reach `{}` at {}:{}, {what}",
            self.wrapped(),
            op_name(&self.func.ops[op].kind),
            at.line,
            at.col
        )
    }

    fn taint(&self, v: Value) -> &[u32] {
        &self.tainted[v]
    }

    fn add_taint(&mut self, v: Value, axes: &[u32]) -> bool {
        let u = union(&self.tainted[v], axes);
        let changed = u != self.tainted[v];
        self.tainted[v] = u;
        changed
    }

    fn block(&mut self, block: Block) -> Result<(), String> {
        for &op in &self.func.blocks[block].ops {
            self.op(op)?;
        }
        Ok(())
    }

    fn terminator(&self, block: Block) -> Option<Op> {
        self.func.blocks[block].ops.last().copied()
    }

    fn op(&mut self, op: Op) -> Result<(), String> {
        let func = self.func;
        let data = &func.ops[op];
        if op == self.load {
            let r = data.results[0];
            self.add_taint(r, &[self.dim]);
            return Ok(());
        }
        match &data.kind {
            OpKind::For(_) => return self.for_loop(op),
            OpKind::While => return self.while_loop(op),
            OpKind::If => {
                if !self.taint(data.operands[0]).is_empty() {
                    return Err(self.fail(op, "where they decide a branch"));
                }
                for &r in &data.regions {
                    self.block(r)?;
                    if let Some(y) = self.terminator(r) {
                        let ys = func.ops[y].operands.clone();
                        for (&res, &yv) in data.results.iter().zip(&ys) {
                            let t = self.taint(yv).to_vec();
                            self.add_taint(res, &t);
                        }
                    }
                }
                return Ok(());
            }
            k if k.is_terminator() => return Ok(()),
            _ => {}
        }
        let taints: Vec<Vec<u32>> = data
            .operands
            .iter()
            .map(|&v| self.taint(v).to_vec())
            .collect();
        if taints.iter().all(Vec::is_empty) {
            return Ok(());
        }
        let result_axes: Vec<u32> = match &data.kind {
            OpKind::Binary(_)
            | OpKind::Unary(_)
            | OpKind::Fma
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Cast { .. }
            | OpKind::Bitcast
            | OpKind::Hint { .. } => taints.iter().fold(Vec::new(), |acc, t| union(&acc, t)),
            OpKind::Broadcast => {
                let from = func.ty(data.operands[0]).shape();
                let to = func.ty(data.results[0]).shape();
                if taints[0]
                    .iter()
                    .any(|&a| from.get(a as usize) == Some(&1) && to.get(a as usize) != Some(&1))
                {
                    return Err(self.fail(op, "which copies one of them along a whole dimension"));
                }
                taints[0].clone()
            }
            OpKind::ExpandDims { axis } => taints[0]
                .iter()
                .map(|&a| if a >= *axis { a + 1 } else { a })
                .collect(),
            OpKind::Trans { perm } => {
                let mut axes: Vec<u32> = taints[0]
                    .iter()
                    .filter_map(|&a| perm.iter().position(|&p| p == a).map(|i| i as u32))
                    .collect();
                axes.sort_unstable();
                axes
            }
            OpKind::Dot { .. } => {
                // a: [M, K], b: [K, N], acc: [M, N].
                if taints[0].contains(&1) || taints.get(1).is_some_and(|t| t.contains(&0)) {
                    return Err(self.fail(
                        op,
                        "as its reduction dimension, so every result element depends on them",
                    ));
                }
                let mut axes = taints.get(2).cloned().unwrap_or_default();
                if taints[0].contains(&0) {
                    axes = union(&axes, &[0]);
                }
                if taints.get(1).is_some_and(|t| t.contains(&1)) {
                    axes = union(&axes, &[1]);
                }
                axes
            }
            OpKind::Reduce { axis, .. } | OpKind::Scan { axis, .. } => {
                if taints[0].contains(axis) {
                    return Err(self.fail(op, "which combines them with the other rows"));
                }
                if matches!(data.kind, OpKind::Reduce { .. }) {
                    taints[0]
                        .iter()
                        .map(|&a| if a > *axis { a - 1 } else { a })
                        .collect()
                } else {
                    taints[0].clone()
                }
            }
            OpKind::Store { has_mask, .. } | OpKind::AtomicRmw { has_mask, .. } => {
                let is_store = matches!(data.kind, OpKind::Store { .. });
                if !taints[0].is_empty()
                    || (*has_mask && !taints.get(2).is_none_or(|t| t.is_empty()))
                {
                    return Err(self.fail(op, "where they form an address or a mask"));
                }
                for &axis in &taints[1] {
                    if !self.store_masks(op, axis) {
                        return Err(self.fail(
                            op,
                            &format!(
                                "which does not mask them (it needs the bound `i < {}` on dimension {axis}, as `rows[:, None] < M` with the load's row offsets gives)",
                                (self.render)(&self.rows_left)
                            ),
                        ));
                    }
                }
                self.stores.push(data.loc);
                if is_store {
                    return Ok(());
                }
                // The old values an atomic returns come from memory.
                Vec::new()
            }
            OpKind::DescStore => {
                if taints
                    .iter()
                    .enumerate()
                    .any(|(i, t)| i != 1 && !t.is_empty())
                {
                    return Err(self.fail(op, "where they form an offset"));
                }
                for &axis in &taints[1] {
                    if !self.desc_store_masks(op, axis) {
                        return Err(self.fail(op, "whose descriptor extent does not exclude them"));
                    }
                }
                self.stores.push(data.loc);
                return Ok(());
            }
            _ => return Err(self.fail(op, "which the proof does not follow")),
        };
        if let Some(&r) = data.results.first() {
            self.add_taint(r, &result_axes);
        }
        Ok(())
    }

    /// Whether the store `op` (pointer tile with mask, or block pointer
    /// with boundary check) writes nothing at or past the wrapped bound
    /// along `axis`.
    fn store_masks(&self, op: Op, axis: u32) -> bool {
        let func = self.func;
        let data = &func.ops[op];
        let axis_usize = axis as usize;
        match (&data.kind, func.ty(data.operands[0])) {
            (OpKind::Store { boundary_check, .. }, Type::BlockPtr { .. }) => {
                let Form::BlockPtr(bp) = self.forms.form(data.operands[0]) else {
                    return false;
                };
                boundary_check.contains(&axis)
                    && bp
                        .shape
                        .get(axis_usize)
                        .zip(bp.offsets.get(axis_usize))
                        .is_some_and(|(s, o)| s.checked_sub(o).as_ref() == Some(&self.rows_left))
            }
            (
                OpKind::Store { has_mask: true, .. } | OpKind::AtomicRmw { has_mask: true, .. },
                _,
            ) => {
                let Some(&mask) = data.operands.get(2) else {
                    return false;
                };
                match self.forms.form(mask) {
                    Form::Mask(m) => m
                        .bounds
                        .iter()
                        .any(|b| b.dim == axis_usize && b.limit == self.rows_left),
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn desc_store_masks(&self, op: Op, axis: u32) -> bool {
        let data = &self.func.ops[op];
        let Form::Desc(desc) = self.forms.form(data.operands[0]) else {
            return false;
        };
        let axis = axis as usize;
        let offset = match data.operands.get(2 + axis).map(|&v| self.forms.form(v)) {
            Some(Form::Index(i)) if i.dims.is_empty() => i.offset.clone(),
            _ => return false,
        };
        desc.shape
            .get(axis)
            .and_then(|s| s.checked_sub(&offset))
            .is_some_and(|left| left == self.rows_left)
    }

    /// Tainted rows carried into the next iteration of `loop_op` are the
    /// same rows only if the wrap does not change between iterations: a
    /// store there compares with that iteration's `start`.
    fn carried_across(&self, loop_op: Op) -> Result<(), String> {
        let scopes = self.forms.scopes();
        let varies = self
            .wrap
            .start
            .atoms()
            .chain(self.wrap.modulus.atoms())
            .any(|a| scopes.varies_in(self.func, loop_op, a));
        if varies {
            Err(self.fail(
                loop_op,
                "which carries them into its next iteration, whose stores mask other indices",
            ))
        } else {
            Ok(())
        }
    }

    fn for_loop(&mut self, op: Op) -> Result<(), String> {
        let func = self.func;
        let data = &func.ops[op];
        if data.operands[..3.min(data.operands.len())]
            .iter()
            .any(|&v| !self.taint(v).is_empty())
        {
            return Err(self.fail(op, "where they bound the loop"));
        }
        let Some(&body) = data.regions.first() else {
            return Ok(());
        };
        let args = func.blocks[body].args.clone();
        let carried = &args[1.min(args.len())..];
        for (&arg, &init) in carried.iter().zip(data.operands.iter().skip(3)) {
            let t = self.taint(init).to_vec();
            self.add_taint(arg, &t);
        }
        for _ in 0..MAX_ROUNDS {
            self.block(body)?;
            let yields = self
                .terminator(body)
                .map(|y| func.ops[y].operands.clone())
                .unwrap_or_default();
            let mut changed = false;
            for (&arg, &y) in carried.iter().zip(&yields) {
                let t = self.taint(y).to_vec();
                if !t.is_empty() {
                    self.carried_across(op)?;
                }
                changed |= self.add_taint(arg, &t);
            }
            if !changed {
                for (&res, &arg) in data.results.iter().zip(carried) {
                    let t = self.taint(arg).to_vec();
                    self.add_taint(res, &t);
                }
                return Ok(());
            }
        }
        Err(self.fail(op, "where the proof does not settle"))
    }

    fn while_loop(&mut self, op: Op) -> Result<(), String> {
        let func = self.func;
        let data = &func.ops[op];
        let (Some(&before), Some(&after)) = (data.regions.first(), data.regions.get(1)) else {
            return Ok(());
        };
        let before_args = func.blocks[before].args.clone();
        let after_args = func.blocks[after].args.clone();
        for (&arg, &init) in before_args.iter().zip(&data.operands) {
            let t = self.taint(init).to_vec();
            self.add_taint(arg, &t);
        }
        for _ in 0..MAX_ROUNDS {
            self.block(before)?;
            let cond = self
                .terminator(before)
                .map(|c| func.ops[c].operands.clone());
            let cond = cond.unwrap_or_default();
            if cond.first().is_some_and(|&c| !self.taint(c).is_empty()) {
                return Err(self.fail(op, "where they decide whether the loop goes on"));
            }
            for (i, &v) in cond.iter().skip(1).enumerate() {
                let t = self.taint(v).to_vec();
                if let Some(&a) = after_args.get(i) {
                    self.add_taint(a, &t);
                }
                if let Some(&r) = data.results.get(i) {
                    self.add_taint(r, &t);
                }
            }
            self.block(after)?;
            let yields = self
                .terminator(after)
                .map(|y| func.ops[y].operands.clone())
                .unwrap_or_default();
            let mut changed = false;
            for (&arg, &y) in before_args.iter().zip(&yields) {
                let t = self.taint(y).to_vec();
                if !t.is_empty() {
                    self.carried_across(op)?;
                }
                changed |= self.add_taint(arg, &t);
            }
            if !changed {
                return Ok(());
            }
        }
        Err(self.fail(op, "where the proof does not settle"))
    }
}
