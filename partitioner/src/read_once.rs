//! `read_once`: the TMA copies in a loop whose elements the launch reads
//! once, marked on their `desc_load` (`read_once = [axes]`) for the
//! backend, which asks the L2 cache to evict those lines first.
//!
//! A stream read once gains nothing from staying in L2, and while it
//! passes through it evicts what is there: lines a later kernel reads, or
//! dirty lines whose write-back then shares the DRAM with the stream
//! itself. The memory-bound decode product (16 rows against an 8192x8192
//! weight, each of its 64 programs a column block of the weight) is the
//! case: the grid reads its weight once.
//!
//! # The proof
//!
//! Each coordinate of a `desc_load` is followed through integer
//! constants, casts, `+`, `-` and multiplication by a constant down to a
//! sum of `coefficient * leaf`. A leaf is a parameter (the same in every
//! program and iteration), or a *variable*: the program id along an axis
//! (in a kernel made persistent, the value standing for it in the tile
//! loop, [`TileIds`]), or the induction variable of a loop around the
//! copy. The copy is read once when:
//!
//! - its descriptor is one the host builds (every operand a parameter),
//!   and no other `desc_load` reads a descriptor of the same base;
//! - every leaf is a parameter or a variable, each coordinate has at most
//!   one variable and each variable is in at most one coordinate;
//! - two values of a variable move the box by at least its extent along
//!   that coordinate: a program id's coefficient is at least the extent,
//!   a loop's coefficient times its step (1 where the step is not a
//!   constant: the steps are positive) too;
//! - every loop around the copy but a persistent kernel's tile loop has
//!   its induction variable in a coordinate (an iteration that does not
//!   move the box would read it again), and only `for` loops and `if`s
//!   are around it.
//!
//! Two executions of the copy then differ in some variable — two
//! programs (two tiles of a persistent kernel) in the program id along an
//! axis where the grid has more than one, two iterations in the
//! induction variable of the first loop they differ in — whose coordinate
//! puts their boxes apart. The program ids the coordinates do not mention
//! are the listed axes: the launch reads each element once when the grid
//! has one program along each of them (the decode's y, its grid being
//! `cdiv(M, 16)` rows of programs), which only the launch knows, so the
//! backend tests it in the kernel.
//!
//! Only copies inside a loop are marked: a stream of boxes is what is
//! worth keeping out of L2. The mark is a hint, never a change of what
//! the kernel computes: a wrong one costs L2 hits, not correctness.

use std::collections::HashMap;

use tawa_ir::host_expr::host_descriptor;
use tawa_ir::{
    Axis, BinaryOp, ConstValue, Function, Loc, Op, OpKind, TileIds, Type, UnaryOp, Value, ValueDef,
};

/// Marks the `desc_load`s of `func` the launch reads once (see the module
/// docs); `tiles` is what the persistent pass left, for a kernel it made
/// persistent. Returns, per marked load, its source position and a note
/// for `--explain`.
pub fn mark_read_once(func: &mut Function, tiles: Option<&TileIds>) -> Vec<(Loc, String)> {
    let mut loads = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::DescLoad { .. }) {
            loads.push(op);
        }
    });
    // Loads of one base (or of one descriptor) may read the same elements.
    let mut per_base: HashMap<Value, usize> = HashMap::new();
    for &op in &loads {
        if let Some(base) = descriptor_base(func, func.ops[op].operands[0]) {
            *per_base.entry(base).or_default() += 1;
        }
    }
    let mut notes = Vec::new();
    for op in loads {
        let desc = func.ops[op].operands[0];
        let Some(base) = descriptor_base(func, desc) else {
            continue;
        };
        if per_base[&base] != 1 || !host_descriptor(func, desc) {
            continue;
        }
        let Some(mut axes) = read_once_axes(func, tiles, op) else {
            continue;
        };
        // A persistent kernel walks one tile coordinate along an axis it
        // has no grid size parameter for.
        if func.attrs.grid_param.is_some() {
            let attrs = &func.attrs;
            axes.retain(|a| match a {
                Axis::X => true,
                Axis::Y => attrs.grid_param_y.is_some(),
                Axis::Z => attrs.grid_param_z.is_some(),
            });
        }
        notes.push((func.ops[op].loc, note(&axes)));
        func.ops[op].kind = OpKind::DescLoad {
            read_once: Some(axes),
        };
    }
    notes
}

/// The `--explain` line of a load read once given `axes`.
fn note(axes: &[Axis]) -> String {
    let when = if axes.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = axes.iter().map(|a| a.name()).collect();
        let ids = if axes.len() == 1 { "id" } else { "ids" };
        format!(
            " where its grid has one program along {} (the program {ids} its coordinates do \
             not depend on)",
            names.join(" and ")
        )
    };
    format!("read once by the launch{when}: its TMA copies ask L2 to evict the lines first")
}

/// The pointer parameter descriptor `desc` is made from.
fn descriptor_base(func: &Function, desc: Value) -> Option<Value> {
    let make = func.def_op(desc)?;
    let data = &func.ops[make];
    matches!(data.kind, OpKind::MakeTensorDesc)
        .then(|| data.operands[0])
        .filter(|&b| is_param(func, b))
}

fn is_param(func: &Function, v: Value) -> bool {
    func.params.iter().any(|p| p.value == v)
}

/// What moves a copy's box from one execution to another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variable {
    Program(Axis),
    Loop(Op),
}

/// The grid axes along which the grid must have one program for the
/// launch to read every element of `desc_load` op `load` once, or `None`
/// when its coordinates do not show that it does.
fn read_once_axes(func: &Function, tiles: Option<&TileIds>, load: Op) -> Option<Vec<Axis>> {
    let data = &func.ops[load];
    let Type::TensorDesc { block, .. } = func.ty(data.operands[0]) else {
        return None;
    };
    let coords = &data.operands[1..];
    if block.len() != coords.len() {
        return None;
    }
    // The loops around the load, which its coordinates must move with.
    let mut loops = Vec::new();
    let mut at = func.block_of(load);
    while let Some(b) = at {
        let Some(parent) = func.blocks[b].parent else {
            break;
        };
        match func.ops[parent].kind {
            OpKind::For(_) => loops.push(parent),
            OpKind::If => {}
            _ => return None,
        }
        at = func.block_of(parent);
    }
    if loops.is_empty() {
        return None;
    }
    let mut seen: Vec<Variable> = Vec::new();
    for (&c, &extent) in coords.iter().zip(block) {
        let mut terms = Vec::new();
        linear(func, c, 1, &mut terms)?;
        let mut in_coord = None;
        for (leaf, coef) in merge(terms)? {
            if is_param(func, leaf) {
                continue;
            }
            let (var, spacing) = variable(func, tiles, &loops, leaf, coef)?;
            if in_coord.is_some() || seen.contains(&var) || spacing < u64::from(extent) {
                return None;
            }
            in_coord = Some(var);
            seen.push(var);
        }
    }
    let tile_loop = tiles.map(|t| t.tile_loop);
    if loops
        .iter()
        .any(|&l| Some(l) != tile_loop && !seen.contains(&Variable::Loop(l)))
    {
        return None;
    }
    Some(
        [Axis::X, Axis::Y, Axis::Z]
            .into_iter()
            .filter(|&a| !seen.contains(&Variable::Program(a)))
            .collect(),
    )
}

/// Which variable `leaf` (with coefficient `coef`) is, and by how much
/// two of its values at least move the coordinate; `None` for a leaf that
/// is not one.
fn variable(
    func: &Function,
    tiles: Option<&TileIds>,
    loops: &[Op],
    leaf: Value,
    coef: i64,
) -> Option<(Variable, u64)> {
    let coef = coef.unsigned_abs();
    if let Some(t) = tiles {
        if let Some(axis) = t.ids.iter().position(|&id| id == Some(leaf)) {
            let axis = Axis::from_index(axis as i64)?;
            return Some((Variable::Program(axis), coef));
        }
    }
    match func.values[leaf].def {
        // A persistent kernel's own program id numbers its CTAs, not the
        // source's programs.
        ValueDef::Result(op, 0) if tiles.is_none() => match func.ops[op].kind {
            OpKind::ProgramId(axis) => Some((Variable::Program(axis), coef)),
            _ => None,
        },
        ValueDef::Arg(b, 0) => {
            let l = func.blocks[b].parent?;
            if !loops.contains(&l) || Some(l) == tiles.map(|t| t.tile_loop) {
                return None;
            }
            let step = constant(func, func.ops[l].operands[2]).map_or(1, i64::unsigned_abs);
            Some((Variable::Loop(l), coef.checked_mul(step)?))
        }
        _ => None,
    }
}

/// The integer constant `v` is, if it is one.
fn constant(func: &Function, v: Value) -> Option<i64> {
    let op = func.def_op(v)?;
    match func.ops[op].kind {
        OpKind::Constant(ConstValue::Int(c)) => Some(c),
        _ => None,
    }
}

/// Appends `scale * v` to `terms` as `(leaf, coefficient)` pairs, through
/// constants (dropped: they shift every box alike), integer casts, `+`,
/// `-`, negation and multiplication by a constant; any other value is a
/// leaf. `None` where a coefficient overflows.
fn linear(func: &Function, v: Value, scale: i64, terms: &mut Vec<(Value, i64)>) -> Option<()> {
    let Some(op) = func.def_op(v) else {
        terms.push((v, scale));
        return Some(());
    };
    let data = &func.ops[op];
    match &data.kind {
        OpKind::Constant(ConstValue::Int(_)) => Some(()),
        OpKind::Cast { .. } if is_int(func, data.operands[0]) && is_int(func, v) => {
            linear(func, data.operands[0], scale, terms)
        }
        OpKind::Unary(UnaryOp::Neg) => linear(func, data.operands[0], scale.checked_neg()?, terms),
        OpKind::Binary(BinaryOp::Add) => {
            linear(func, data.operands[0], scale, terms)?;
            linear(func, data.operands[1], scale, terms)
        }
        OpKind::Binary(BinaryOp::Sub) => {
            linear(func, data.operands[0], scale, terms)?;
            linear(func, data.operands[1], scale.checked_neg()?, terms)
        }
        OpKind::Binary(BinaryOp::Mul) => {
            let (a, b) = (data.operands[0], data.operands[1]);
            match (constant(func, a), constant(func, b)) {
                (Some(k), _) => linear(func, b, scale.checked_mul(k)?, terms),
                (_, Some(k)) => linear(func, a, scale.checked_mul(k)?, terms),
                _ => {
                    terms.push((v, scale));
                    Some(())
                }
            }
        }
        _ => {
            terms.push((v, scale));
            Some(())
        }
    }
}

fn is_int(func: &Function, v: Value) -> bool {
    matches!(func.ty(v), Type::Scalar(tawa_ir::Elem::Scalar(s)) if s.is_int())
}

/// `terms` with the coefficients of each leaf summed, zero sums dropped;
/// `None` where a sum overflows.
fn merge(terms: Vec<(Value, i64)>) -> Option<Vec<(Value, i64)>> {
    let mut out: Vec<(Value, i64)> = Vec::new();
    for (v, c) in terms {
        match out.iter_mut().find(|(w, _)| *w == v) {
            Some((_, sum)) => *sum = sum.checked_add(c)?,
            None => out.push((v, c)),
        }
    }
    out.retain(|&(_, c)| c != 0);
    Some(out)
}
