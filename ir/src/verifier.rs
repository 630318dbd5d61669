//! The verifier: the invariants every pass must preserve.
//!
//! It checks, for each function:
//!
//! 1. Parameters are exactly the body block's arguments, in order, and the
//!    body has no parent op; a `grid_param` (and `grid_param_y`, only
//!    with it) attribute names an `i32`
//!    parameter.
//! 2. Every block reachable from the body is the region of exactly one op,
//!    and its `parent` is that op; ops without regions are not `for`/`if`/
//!    `while`, and those have their number of regions (1, 2, 2).
//! 3. Every handle (value, op, block) is in its arena, and each value's
//!    `def` names the op result or block argument that holds it.
//! 4. SSA dominance by region nesting: an operand is defined earlier in the
//!    same block or in an enclosing block (block arguments included);
//!    values defined inside a region are not visible after it.
//! 5. Each block ends with exactly one terminator of the right kind:
//!    `return` in the body, `yield` in `for`/`if` regions and in a `while`'s
//!    after region, `condition` in a `while`'s before region.
//! 6. Operand and result counts per op kind, with optional operands
//!    announced by flags (`has_mask`, `has_other`) and rank-dependent counts
//!    for block pointers and tensor descriptors.
//! 7. Types per op kind: elementwise ops have equal operand/result types;
//!    `cmp` gives `i1` of the operand shape; `splat` scalar -> tile of the
//!    same element; `broadcast` grows size-1 dims; `expand_dims`, `trans`,
//!    `reshape` shapes; `join` appends a dimension of 2 and `split` takes
//!    it off; `dot` is `MxK @ KxN + MxN`; `reduce` drops its axis
//!    (argmax/argmin give `i32`); loads and stores match the pointee and
//!    shape of their pointer; `addptr` is pointer + integer of one shape;
//!    `make_range` has `end - start` elements, a power of two; a
//!    `desc_load` gives its descriptor's block, or the block without its
//!    dimensions of 1 when it has some (a rank-reduced copy); constants
//!    match their result's element kind.
//! 8. Structured control flow: `for` bounds are integer scalars of one
//!    type, block args are `(iv, iter_args)` typed like `(lb, inits)`, and
//!    results and yields match the inits; `if` takes an `i1` scalar and both
//!    yields match its results; `while`'s before args match the inits, its
//!    `condition` forwards the result types, the after args take them, and
//!    the after yield matches the inits.
//! 9. Aref types and ops: `aref.create` has no operands and one
//!    `aref<D x (T...)>` result with `D >= 1` and at least one buffer, every
//!    buffer a tile of numbers (no pointers); `aref.put %r, %i, values...`
//!    writes exactly the buffer types in order, `aref.get %r, %i` returns
//!    them, `aref.consumed %r, %i` has no results; `%i` is an integer
//!    scalar. Aref values are defined only by `aref.create` (no parameter,
//!    block argument or other result has an aref type) and used only as the
//!    first operand of `aref.put`/`aref.get`/`aref.consumed`.
//! 10. Warp specialization: `ws` has no operands or results and one region
//!     per partition, each without arguments and ending in `yield` with no
//!     operands; roles are unique; `num_warps` is a positive multiple of 4
//!     (whole warpgroups) and the partitions together have at most 32 warps
//!     (1024 threads); `regs`, when given, is in 24..=256 and a multiple of 8
//!     (`setmaxnreg`), and the budgets given fit the register file share
//!     of one block (sum of regs x 32 x num_warps x occupancy <= 65536;
//!     `occupancy`, the blocks an SM holds, is 1 to 32). `ws` does not nest, and
//!     `debug_barrier` (a CTA-wide barrier the other partitions never reach)
//!     does not occur inside a partition.
//! 11. Aref placement: `aref.create` is outside every `ws`; put, get and
//!     consumed are inside a partition; every use of one aref is inside one
//!     `ws` op; its puts are all in one partition (the producer), which
//!     neither gets nor releases it unless it is the op's only partition
//!     (a software-pipelined loop); an aref that is used has at least one
//!     put and one get, and a partition that gets from an aref also releases
//!     it (`consumed`) and vice versa. Whether every get is released exactly
//!     once, in order, is a run-time property the aref simulator checks.
//! 12. Tensor-core groups in flight: `dot_wait` returns its operands'
//!     types. A value is *in flight* when it is the result of an async
//!     `dot`, a result of a `dot_wait` with `pending > 0`, or carried from
//!     such a value through a `for` (the iteration argument and the loop
//!     result of a yielded in-flight value). An in-flight value is used
//!     only as the accumulator of an async `dot`, as a `dot_wait` operand
//!     or by a `yield` of a `for` body: its registers are still being
//!     written by the tensor core, so anything else must wait for it
//!     (`dot_wait {pending = 0}`). Groups retire in commit order, so a
//!     `dot_wait {pending = N}` also retires an async `dot` of its own
//!     block followed, before the wait, by at least `N` other async `dot`s
//!     of that block: its result for that operand is not in flight. Whether a slot read by a group in flight
//!     is released too early is a run-time property the aref simulator
//!     checks.
//! 13. Released slots: after `aref.consumed %r, %i`, nothing later in the
//!     same block (nested regions included) uses a tile that
//!     `aref.get %r, %i` of that block returned, nor a `trans` of one: the
//!     backend reads a slot's tiles, and their transposes, in place, so the
//!     producer may already be refilling it.
//! 14. Ping-pong turns: `turn.take` and `turn.pass` have no operands or
//!     results and sit inside a partition of at least two warpgroups
//!     (8 warps), whose warpgroups take turns, or inside one of two or more
//!     one-warpgroup partitions of a `ws` op that have turn ops, which take
//!     turns with each other (`Function::turn_partitions`: tile ping-pong,
//!     where the partitions run different tiles and the one with more
//!     tiles takes its last turns alone). In every block they alternate, take first, and a block
//!     ends with its last turn passed; no region nested between a take and
//!     its pass has turn ops. Every warpgroup then takes and passes the
//!     same number of turns in the same order wherever control flow is
//!     uniform across the partition (scalar conditions and bounds are), so
//!     the hardware's turn barriers pair up.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::function::{Block, Function, Module, Op, OpData, Value, ValueDef};
use crate::ops::*;
use crate::printer::op_name;
use crate::types::{Elem, ScalarType, Type};

/// One violated invariant.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifyError {
    pub function: String,
    /// The printed kind name of the offending op (`add`, `cmp.lt`), if any.
    pub op: Option<String>,
    pub loc: Loc,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}: ", self.function)?;
        if let Some(op) = &self.op {
            write!(f, "'{op}'")?;
            if self.loc.is_known() {
                write!(f, " at {}:{}", self.loc.line, self.loc.col)?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for VerifyError {}

pub fn verify_module(m: &Module) -> Result<(), Vec<VerifyError>> {
    let errors: Vec<VerifyError> = m
        .functions
        .iter()
        .filter_map(|f| verify_function(f).err())
        .flatten()
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

pub fn verify_function(f: &Function) -> Result<(), Vec<VerifyError>> {
    let mut v = Verifier {
        f,
        errors: Vec::new(),
        visible: HashSet::new(),
        seen_blocks: HashSet::new(),
        seen_ops: HashSet::new(),
        partition: None,
        arefs: Vec::new(),
        aref_uses: HashMap::new(),
    };
    v.function();
    v.aref_placement();
    v.in_flight_uses();
    v.released_slot_uses();
    v.turn_pairs();
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

/// Which terminator a block must end with.
#[derive(Clone, Copy, PartialEq)]
enum BlockRole {
    Body,
    YieldRegion,
    WhileBefore,
}

struct Verifier<'a> {
    f: &'a Function,
    errors: Vec<VerifyError>,
    /// Values visible at the current point (dominance by region nesting).
    visible: HashSet<Value>,
    seen_blocks: HashSet<Block>,
    seen_ops: HashSet<Op>,
    /// The `ws` op and partition index whose region is being checked.
    partition: Option<(Op, usize)>,
    /// `aref.create` results in program order.
    arefs: Vec<(Value, Op)>,
    /// Aref ops using each aref, with the partition they sit in.
    aref_uses: HashMap<Value, Vec<ArefUse>>,
}

/// One `aref.put`/`get`/`consumed` of an aref.
struct ArefUse {
    op: Op,
    kind: ArefUseKind,
    partition: Option<(Op, usize)>,
}

#[derive(Clone, Copy, PartialEq)]
enum ArefUseKind {
    Put,
    Get,
    Consumed,
}

impl Verifier<'_> {
    fn error(&mut self, op: Option<Op>, message: impl Into<String>) {
        let (name, loc) = match op.and_then(|o| self.f.ops.get(o)) {
            Some(d) => (Some(op_name(&d.kind)), d.loc),
            None => (None, Loc::UNKNOWN),
        };
        self.errors.push(VerifyError {
            function: self.f.name.clone(),
            op: name,
            loc,
            message: message.into(),
        });
    }

    fn function(&mut self) {
        let f = self.f;
        let Some(body) = f.blocks.get(f.body) else {
            self.error(None, "the body block is not in the block arena");
            return;
        };
        if body.parent.is_some() {
            self.error(None, "the body block has a parent op");
        }
        if !(1..=32).contains(&f.attrs.occupancy) {
            self.error(
                None,
                format!(
                    "occupancy = {}: a kernel asks for 1 to 32 blocks an SM",
                    f.attrs.occupancy
                ),
            );
        }
        let walk_step = f.attrs.walk_step.as_ref().map(|(name, _)| name.clone());
        for (attr, name) in [
            ("grid_param", &f.attrs.grid_param),
            ("grid_param_y", &f.attrs.grid_param_y),
            ("grid_param_z", &f.attrs.grid_param_z),
            ("walk_step", &walk_step),
        ] {
            let Some(name) = name else { continue };
            let i32_param = f.params.iter().any(|p| {
                p.name == *name
                    && f.values[p.value].ty == Type::Scalar(Elem::Scalar(ScalarType::I32))
            });
            if !i32_param {
                self.error(None, format!("{attr} `{name}` is not an i32 parameter"));
            }
        }
        if f.attrs.grid_param_y.is_some() && f.attrs.grid_param.is_none() {
            self.error(None, "grid_param_y without grid_param");
        }
        if f.attrs.grid_param_z.is_some() && f.attrs.grid_param_y.is_none() {
            self.error(None, "grid_param_z without grid_param_y");
        }
        if !matches!(f.attrs.cluster, 1 | 2) {
            self.error(
                None,
                format!(
                    "cluster = {}: clusters of 1 or 2 CTAs only",
                    f.attrs.cluster
                ),
            );
        }
        if f.attrs.cluster != 1 && f.attrs.grid_param.is_none() {
            self.error(
                None,
                "cluster without grid_param: only a persistent kernel walks its tiles in CTA pairs",
            );
        }
        if f.attrs.cluster_split_k && (f.attrs.cluster != 1 || f.attrs.grid_param.is_none()) {
            self.error(
                None,
                "cluster_split_k needs a persistent kernel (grid_param) without static clusters",
            );
        }
        if f.attrs.stream_k && (f.attrs.cluster != 1 || f.attrs.grid_param.is_none()) {
            self.error(
                None,
                "stream_k needs a persistent kernel (grid_param) without clusters",
            );
        }
        if f.attrs.stream_k && f.attrs.cluster_split_k {
            self.error(None, "stream_k and cluster_split_k exclude each other");
        }
        if let Some((_, asked)) = &f.attrs.walk_step {
            if *asked == 0 {
                self.error(None, "walk_asked = 0: a walk steps by at least 1");
            }
            if f.attrs.grid_param.is_some() {
                self.error(
                    None,
                    "walk_step with grid_param: a kernel walks its own tiles or the grid's",
                );
            }
        }
        let params: Vec<Value> = f.params.iter().map(|p| p.value).collect();
        if params != body.args {
            self.error(
                None,
                format!(
                    "parameters ({} values) are not the body's arguments ({} values)",
                    params.len(),
                    body.args.len()
                ),
            );
        }
        self.block(f.body, None, BlockRole::Body);
    }

    /// Checks `block` (region of `parent`) and its ops, then hides what it
    /// defined.
    fn block(&mut self, block: Block, parent: Option<Op>, role: BlockRole) {
        let f = self.f;
        if !self.seen_blocks.insert(block) {
            self.error(parent, format!("{block} is used as a region twice"));
            return;
        }
        let Some(data) = f.blocks.get(block) else {
            self.error(parent, format!("{block} is not in the block arena"));
            return;
        };
        if data.parent != parent {
            let msg = match parent {
                Some(_) => format!("region {block} does not name this op as its parent"),
                None => "the body block has a parent op".into(),
            };
            self.error(parent, msg);
        }
        let mut defined = Vec::new();
        for (i, &a) in data.args.iter().enumerate() {
            match f.values.get(a) {
                None => self.error(parent, format!("block argument {a} is not in the arena")),
                Some(d) if d.def != ValueDef::Arg(block, i as u32) => self.error(
                    parent,
                    format!("value {a} is argument {i} of {block} but its def says otherwise"),
                ),
                Some(d) if d.ty.is_aref() => self.error(
                    parent,
                    format!(
                        "argument {i} of {block} has type {}: arefs are made only by aref.create",
                        d.ty
                    ),
                ),
                Some(_) => {}
            }
            if self.visible.insert(a) {
                defined.push(a);
            }
        }
        let terminator_ok = |k: &OpKind| match role {
            BlockRole::Body => matches!(k, OpKind::Return),
            BlockRole::YieldRegion => matches!(k, OpKind::Yield),
            BlockRole::WhileBefore => matches!(k, OpKind::Condition),
        };
        let wanted = match role {
            BlockRole::Body => "return",
            BlockRole::YieldRegion => "yield",
            BlockRole::WhileBefore => "condition",
        };
        let n = data.ops.len();
        for (i, &op) in data.ops.iter().enumerate() {
            let Some(d) = f.ops.get(op) else {
                self.error(parent, format!("{op} is not in the op arena"));
                continue;
            };
            if !self.seen_ops.insert(op) {
                self.error(Some(op), "op appears twice in the function");
                continue;
            }
            let last = i + 1 == n;
            if d.kind.is_terminator() && !last {
                self.error(Some(op), "terminator in the middle of a block");
            } else if last && !terminator_ok(&d.kind) {
                self.error(
                    Some(op),
                    format!("block must end with '{wanted}', not with this op"),
                );
            }
            self.op(op, d);
            for (r, &v) in d.results.iter().enumerate() {
                match f.values.get(v) {
                    None => self.error(Some(op), format!("result {v} is not in the arena")),
                    Some(vd) if vd.def != ValueDef::Result(op, r as u32) => self.error(
                        Some(op),
                        format!("value {v} is result {r} but its def says otherwise"),
                    ),
                    Some(_) => {}
                }
                if self.visible.insert(v) {
                    defined.push(v);
                } else {
                    self.error(Some(op), format!("value {v} is defined twice"));
                }
            }
        }
        if n == 0 {
            self.error(
                parent,
                format!("{block} is empty: it must end with '{wanted}'"),
            );
        }
        for v in defined {
            self.visible.remove(&v);
        }
    }

    fn op(&mut self, op: Op, d: &OpData) {
        let mut operands_ok = true;
        for (i, &v) in d.operands.iter().enumerate() {
            if self.f.values.get(v).is_none() {
                self.error(Some(op), format!("operand {i} ({v}) is not in the arena"));
                operands_ok = false;
            } else if !self.visible.contains(&v) {
                self.error(
                    Some(op),
                    format!("operand {i} is not defined before this op in an enclosing block"),
                );
            }
        }
        let results_ok = d.results.iter().all(|&v| self.f.values.get(v).is_some());
        if operands_ok && results_ok {
            self.aref_values(op, d);
        }
        self.placement(op, d);
        let wanted_regions = match &d.kind {
            OpKind::For(_) => 1,
            OpKind::If | OpKind::While => 2,
            OpKind::WarpSpecialize { partitions } => partitions.len(),
            _ => 0,
        };
        if d.regions.len() != wanted_regions {
            self.error(
                Some(op),
                format!(
                    "expected {wanted_regions} region(s), found {}",
                    d.regions.len()
                ),
            );
            return;
        }
        let roles: &[BlockRole] = match d.kind {
            OpKind::While => &[BlockRole::WhileBefore, BlockRole::YieldRegion],
            _ => &[BlockRole::YieldRegion, BlockRole::YieldRegion],
        };
        let mut regions_ok = true;
        if let OpKind::WarpSpecialize { .. } = d.kind {
            let enclosing = self.partition;
            for (i, &r) in d.regions.iter().enumerate() {
                regions_ok &= self.f.blocks.get(r).is_some();
                self.partition = Some((op, i));
                self.block(r, Some(op), BlockRole::YieldRegion);
            }
            self.partition = enclosing;
        } else {
            for (&r, &role) in d.regions.iter().zip(roles) {
                regions_ok &= self.f.blocks.get(r).is_some();
                self.block(r, Some(op), role);
            }
        }
        if operands_ok && results_ok && regions_ok {
            if let Err(msg) = (Types { f: self.f, d }).check() {
                self.error(Some(op), msg);
            }
        }
    }
}

impl Verifier<'_> {
    /// Rule 9's restriction of aref values to `aref.create` results used
    /// as the first operand of the aref ops.
    fn aref_values(&mut self, op: Op, d: &OpData) {
        let f = self.f;
        let is_aref_op = matches!(
            d.kind,
            OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed
        );
        for (i, &v) in d.operands.iter().enumerate() {
            if f.values[v].ty.is_aref() && !(is_aref_op && i == 0) {
                self.error(
                    Some(op),
                    format!(
                        "operand {i} is an aref: arefs are used only as the first operand of \
                         aref.put, aref.get and aref.consumed"
                    ),
                );
            }
        }
        if !matches!(d.kind, OpKind::ArefCreate) {
            for (i, &v) in d.results.iter().enumerate() {
                if f.values[v].ty.is_aref() {
                    self.error(
                        Some(op),
                        format!("result {i} is an aref: arefs are made only by aref.create"),
                    );
                }
            }
        }
    }

    /// Rules 10 and 11 that depend on where an op sits: nesting of `ws`,
    /// barriers and aref ops relative to partitions. Records aref uses for
    /// [`Verifier::aref_placement`].
    fn placement(&mut self, op: Op, d: &OpData) {
        let inside = self.partition;
        match d.kind {
            OpKind::WarpSpecialize { .. } if inside.is_some() => {
                self.error(Some(op), "ws inside a partition of another ws");
            }
            OpKind::TurnTake | OpKind::TurnPass => {
                let warps = inside.and_then(|(ws, i)| match &self.f.ops[ws].kind {
                    OpKind::WarpSpecialize { partitions } => partitions.get(i).map(|p| {
                        let with_others = self.f.turn_partitions(ws).contains(&i);
                        (p.num_warps, with_others)
                    }),
                    _ => None,
                });
                match warps {
                    None => self.error(Some(op), "turn op outside every ws partition"),
                    Some((_, true)) => {}
                    Some((w, false)) if w < 8 => self.error(
                        Some(op),
                        format!(
                            "turn op in a partition of {w} warps: turns alternate between \
                             warpgroups, and it has one (and no other one-warpgroup partition \
                             of its ws op takes turns)"
                        ),
                    ),
                    Some(_) => {}
                }
            }
            OpKind::DebugBarrier if inside.is_some() => self.error(
                Some(op),
                "debug_barrier inside a ws partition: the other partitions never reach it",
            ),
            OpKind::ArefCreate => {
                if inside.is_some() {
                    self.error(
                        Some(op),
                        "aref.create inside a ws partition: arefs are created before the ws op",
                    );
                }
                if let Some(&r) = d.results.first() {
                    self.arefs.push((r, op));
                }
            }
            OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed => {
                if inside.is_none() {
                    self.error(Some(op), "aref op outside every ws partition");
                }
                let kind = match d.kind {
                    OpKind::ArefPut => ArefUseKind::Put,
                    OpKind::ArefGet => ArefUseKind::Get,
                    _ => ArefUseKind::Consumed,
                };
                if let Some(&r) = d.operands.first() {
                    self.aref_uses.entry(r).or_default().push(ArefUse {
                        op,
                        kind,
                        partition: inside,
                    });
                }
            }
            _ => {}
        }
    }

    /// Rule 12: where values still written by tensor-core groups in flight
    /// may be used.
    fn in_flight_uses(&mut self) {
        let f = self.f;
        let mut in_flight: HashSet<Value> = HashSet::new();
        f.walk(&mut |op| {
            let d = &f.ops[op];
            match d.kind {
                OpKind::Dot { is_async: true, .. } => in_flight.extend(d.results.iter().copied()),
                OpKind::DotWait { pending } if pending > 0 => {
                    for (&v, &r) in d.operands.iter().zip(&d.results) {
                        if !retired_by_wait(f, v, op, pending) {
                            in_flight.insert(r);
                        }
                    }
                }
                _ => {}
            }
        });
        // Carried through loops: a yielded in-flight value makes the
        // iteration argument and the loop result in flight too (to a fixed
        // point: the argument may itself be yielded by an inner loop).
        loop {
            let mut grew = false;
            f.walk(&mut |op| {
                let d = &f.ops[op];
                if !matches!(d.kind, OpKind::For(_)) {
                    return;
                }
                let Some(&body) = d.regions.first() else {
                    return;
                };
                let Some(&yield_op) = f.blocks[body].ops.last() else {
                    return;
                };
                let yielded = &f.ops[yield_op].operands;
                let args = &f.blocks[body].args;
                for (i, v) in yielded.iter().enumerate() {
                    if !in_flight.contains(v) {
                        continue;
                    }
                    for carried in [args.get(i + 1), d.results.get(i)].into_iter().flatten() {
                        grew |= in_flight.insert(*carried);
                    }
                }
            });
            if !grew {
                break;
            }
        }
        let mut bad = Vec::new();
        f.walk(&mut |op| {
            let d = &f.ops[op];
            for (i, v) in d.operands.iter().enumerate() {
                if !in_flight.contains(v) {
                    continue;
                }
                let allowed = match d.kind {
                    OpKind::Dot { is_async, .. } => is_async && i == 2,
                    OpKind::DotWait { .. } => true,
                    OpKind::Yield => f
                        .blocks
                        .iter()
                        .find(|(_, b)| b.ops.last() == Some(&op))
                        .and_then(|(_, b)| b.parent)
                        .is_some_and(|p| matches!(f.ops[p].kind, OpKind::For(_))),
                    _ => false,
                };
                if !allowed {
                    bad.push((op, i));
                }
            }
        });
        for (op, i) in bad {
            self.error(
                Some(op),
                format!(
                    "operand {i} is still being written by an async dot in flight: use it \
                     only as the accumulator of an async dot, in a dot_wait or a for's \
                     yield, or wait for it first (dot_wait {{pending = 0}})"
                ),
            );
        }
    }

    /// Rule 13, block by block.
    /// Rule 14's pairing of `turn.take` and `turn.pass` in each block.
    fn turn_pairs(&mut self) {
        let f = self.f;
        let is_turn = |o: Op| f.ops[o].kind.is_turn();
        let has_turn_inside = |o: Op| {
            let mut found = false;
            for &r in &f.ops[o].regions {
                f.walk_block(r, &mut |x| found |= is_turn(x));
            }
            found
        };
        let mut problems = Vec::new();
        for (block, data) in f.blocks.iter() {
            if !self.seen_blocks.contains(&block) {
                continue;
            }
            let mut open: Option<Op> = None;
            for &o in &data.ops {
                match f.ops[o].kind {
                    OpKind::TurnTake if open.is_some() => {
                        problems.push((o, "turn.take while this warpgroup holds the turn (a take without a pass before it)"));
                    }
                    OpKind::TurnTake => open = Some(o),
                    OpKind::TurnPass if open.is_none() => {
                        problems.push((o, "turn.pass without a turn.take before it in its block"));
                    }
                    OpKind::TurnPass => open = None,
                    _ if open.is_some() && has_turn_inside(o) => {
                        problems.push((o, "a region between turn.take and turn.pass has turn ops"));
                    }
                    _ => {}
                }
            }
            if let Some(o) = open {
                problems.push((o, "turn.take without a turn.pass after it in its block"));
            }
        }
        for (o, message) in problems {
            self.error(Some(o), message);
        }
    }

    fn released_slot_uses(&mut self) {
        let f = self.f;
        let mut bad = Vec::new();
        for (_, block) in f.blocks.iter() {
            // (ring, index) -> the slot's tiles and their views, while held.
            let mut held: HashMap<(Value, Value), Vec<Value>> = HashMap::new();
            let mut released: HashMap<Value, Op> = HashMap::new();
            for &op in &block.ops {
                let d = &f.ops[op];
                let mut uses = d.operands.clone();
                for &r in &d.regions {
                    f.walk_block(r, &mut |inner| {
                        uses.extend(f.ops[inner].operands.iter().copied())
                    });
                }
                for v in uses {
                    if let Some(&at) = released.get(&v) {
                        bad.push((op, v, at));
                    }
                }
                match d.kind {
                    OpKind::ArefGet if d.operands.len() == 2 => {
                        held.entry((d.operands[0], d.operands[1]))
                            .or_default()
                            .extend(d.results.iter().copied());
                    }
                    OpKind::Trans { .. } => {
                        let view_of = held
                            .values_mut()
                            .find(|tiles| tiles.contains(&d.operands[0]));
                        if let Some(tiles) = view_of {
                            tiles.extend(d.results.iter().copied());
                        }
                    }
                    OpKind::ArefConsumed if d.operands.len() >= 2 => {
                        for v in held
                            .remove(&(d.operands[0], d.operands[1]))
                            .unwrap_or_default()
                        {
                            released.insert(v, op);
                        }
                    }
                    _ => {}
                }
            }
        }
        for (op, _, at) in bad {
            let at = self.f.ops[at].loc;
            self.error(
                Some(op),
                format!(
                    "reads a tile of an aref slot (or a `trans` of one) after the slot was \
                     released by aref.consumed at {}:{}; release it after its last reader",
                    at.line, at.col
                ),
            );
        }
    }

    /// Rule 11 over all uses of each aref, after the walk.
    fn aref_placement(&mut self) {
        let arefs = std::mem::take(&mut self.arefs);
        let mut uses = std::mem::take(&mut self.aref_uses);
        for (aref, create) in arefs {
            let Some(uses) = uses.remove(&aref) else {
                continue;
            };
            // Uses outside partitions were reported by `placement`.
            let inside: Vec<&ArefUse> = uses.iter().filter(|u| u.partition.is_some()).collect();
            let Some(first) = inside.first().and_then(|u| u.partition) else {
                continue;
            };
            let ws = first.0;
            if let Some(u) = inside
                .iter()
                .find(|u| u.partition.is_some_and(|p| p.0 != ws))
            {
                self.error(
                    Some(u.op),
                    "this aref is already used by another ws op: each aref serves one ws",
                );
                continue;
            }
            let in_partition = |kind: ArefUseKind, p: usize| {
                inside
                    .iter()
                    .any(|u| u.kind == kind && u.partition == Some((ws, p)))
            };
            let puts: Vec<&&ArefUse> = inside
                .iter()
                .filter(|u| u.kind == ArefUseKind::Put)
                .collect();
            let Some(producer) = puts.first().and_then(|u| u.partition).map(|p| p.1) else {
                self.error(
                    Some(create),
                    "this aref is used but never written: no partition has an aref.put",
                );
                continue;
            };
            if let Some(u) = puts.iter().find(|u| u.partition != Some((ws, producer))) {
                self.error(
                    Some(u.op),
                    "aref.put in a second partition: an aref has one producer partition",
                );
            }
            if !inside.iter().any(|u| u.kind == ArefUseKind::Get) {
                self.error(
                    Some(create),
                    "this aref is written but never read: no partition has an aref.get",
                );
            }
            // A `ws` op of one partition is a software-pipelined loop: its
            // partition puts ahead of its own gets.
            let alone = self.f.ops[ws].regions.len() == 1;
            let mut reported = HashSet::new();
            for u in &inside {
                let Some((_, p)) = u.partition else { continue };
                let message = match u.kind {
                    ArefUseKind::Put => continue,
                    _ if p == producer && !alone => {
                        "the producer partition of an aref cannot also read or release it"
                    }
                    ArefUseKind::Get if !in_partition(ArefUseKind::Consumed, p) => {
                        "this partition gets from the aref but never releases it (aref.consumed)"
                    }
                    ArefUseKind::Consumed if !in_partition(ArefUseKind::Get, p) => {
                        "this partition releases the aref but never gets from it"
                    }
                    _ => continue,
                };
                // One report per partition and problem.
                if reported.insert((p, message)) {
                    self.error(Some(u.op), message);
                }
            }
        }
    }
}

/// Per-kind count and type rules for one op whose handles are all valid.
struct Types<'a> {
    f: &'a Function,
    d: &'a OpData,
}

type Check = Result<(), String>;

fn shape_str(s: &[u32]) -> String {
    let dims: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

fn is_int_scalar(t: &Type) -> bool {
    matches!(t, Type::Scalar(Elem::Scalar(s)) if s.is_int())
}

fn elem_bits(e: Elem) -> u32 {
    match e {
        Elem::Scalar(s) => s.bits(),
        Elem::Ptr(_) => 64,
    }
}

/// Scalar or tile (not a block pointer or descriptor).
fn is_value_like(t: &Type) -> bool {
    matches!(t, Type::Scalar(_) | Type::Tensor { .. })
}

impl Types<'_> {
    fn operand(&self, i: usize) -> &Type {
        &self.f.values[self.d.operands[i]].ty
    }
    fn result(&self, i: usize) -> &Type {
        &self.f.values[self.d.results[i]].ty
    }
    fn operands(&self, n: usize) -> Check {
        let m = self.d.operands.len();
        if m == n {
            Ok(())
        } else {
            Err(format!("expected {n} operand(s), found {m}"))
        }
    }
    fn results(&self, n: usize) -> Check {
        let m = self.d.results.len();
        if m == n {
            Ok(())
        } else {
            Err(format!("expected {n} result(s), found {m}"))
        }
    }
    fn counts(&self, operands: usize, results: usize) -> Check {
        self.operands(operands)?;
        self.results(results)
    }
    fn same(&self, what: &str, a: &Type, b: &Type) -> Check {
        if a == b {
            Ok(())
        } else {
            Err(format!("{what}: {a} vs {b}"))
        }
    }
    fn region_block(&self, i: usize) -> &crate::function::BlockData {
        &self.f.blocks[self.d.regions[i]]
    }
    fn types(&self, vs: &[Value]) -> Vec<Type> {
        vs.iter().map(|&v| self.f.values[v].ty.clone()).collect()
    }
    /// Operand types of the terminator of region `i`, if it has `kind`.
    fn terminator_types(&self, i: usize, kind: &OpKind) -> Option<Vec<Type>> {
        let b = self.region_block(i);
        let d = self.f.ops.get(*b.ops.last()?)?;
        if d.kind != *kind || d.operands.iter().any(|&v| self.f.values.get(v).is_none()) {
            return None;
        }
        Some(self.types(&d.operands))
    }
    fn list_types(tys: &[Type]) -> String {
        let s: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
        format!("({})", s.join(", "))
    }
    fn same_list(&self, what: &str, a: &[Type], b: &[Type]) -> Check {
        if a == b {
            Ok(())
        } else {
            Err(format!(
                "{what}: {} vs {}",
                Self::list_types(a),
                Self::list_types(b)
            ))
        }
    }
    /// `mask` (operand `i`) is `i1` of the shape of `like`.
    fn mask(&self, i: usize, like: &Type) -> Check {
        let m = self.operand(i);
        let want = like.with_elem(Elem::Scalar(ScalarType::I1));
        if is_value_like(like) && *m == want {
            Ok(())
        } else {
            Err(format!("mask must be {want}, found {m}"))
        }
    }
    /// Operands `from..from+n` are integer scalars.
    fn int_scalars(&self, from: usize, n: usize, what: &str) -> Check {
        for i in from..from + n {
            let t = self.operand(i);
            if !is_int_scalar(t) {
                return Err(format!(
                    "{what} (operand {i}) must be an integer scalar, found {t}"
                ));
            }
        }
        Ok(())
    }
    /// What a load through `ptr` reads (and a store writes).
    fn pointee_value(&self, ptr: &Type) -> Result<Type, String> {
        match ptr {
            Type::Scalar(Elem::Ptr(p))
            | Type::Tensor {
                elem: Elem::Ptr(p), ..
            } => Ok(ptr.with_elem(Elem::Scalar(*p))),
            Type::BlockPtr { pointee, shape } => {
                Ok(Type::tensor(shape.clone(), Elem::Scalar(*pointee)))
            }
            t => Err(format!("expected a pointer or block pointer, found {t}")),
        }
    }
    fn boundary_check(&self, ptr: &Type, dims: &[u32]) -> Check {
        if dims.is_empty() {
            return Ok(());
        }
        match ptr {
            Type::BlockPtr { shape, .. } => match dims.iter().find(|&&d| d as usize >= shape.len())
            {
                Some(d) => Err(format!("boundary_check dimension {d} out of range")),
                None => Ok(()),
            },
            _ => Err("boundary_check needs a block pointer".into()),
        }
    }

    fn check(&self) -> Check {
        let d = self.d;
        match &d.kind {
            OpKind::Constant(c) => {
                self.counts(0, 1)?;
                let t = self.result(0);
                let Some(s) = t.scalar_type().filter(|_| is_value_like(t)) else {
                    return Err(format!("constant of type {t}"));
                };
                let ok = match c {
                    ConstValue::Int(_) => s.is_int(),
                    ConstValue::Float(_) => s.is_float(),
                    ConstValue::Bool(_) => s == ScalarType::I1,
                };
                if !ok {
                    return Err(format!("constant {c:?} cannot have type {t}"));
                }
            }
            OpKind::ProgramId(_) | OpKind::NumPrograms(_) => {
                self.counts(0, 1)?;
                self.same("result must be i32", self.result(0), &Type::I32)?;
            }
            OpKind::MakeRange { start, end } => {
                self.counts(0, 1)?;
                let n = *end as i64 - *start as i64;
                if n <= 0 || (n & (n - 1)) != 0 {
                    return Err(format!(
                        "range size end - start = {n} must be a positive power of two"
                    ));
                }
                let want = Type::tensor(vec![n as u32], Elem::Scalar(ScalarType::I32));
                self.same(
                    "result must have end - start i32 elements",
                    self.result(0),
                    &want,
                )?;
            }
            OpKind::Splat => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                match (a, r) {
                    (Type::Scalar(e), Type::Tensor { elem, .. }) if e == elem => {}
                    _ => {
                        return Err(format!(
                            "splat must take a scalar to a tile of its type: {a} -> {r}"
                        ))
                    }
                }
            }
            OpKind::Broadcast => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                let ok = match (a, r) {
                    (Type::Tensor { shape: s, elem: e }, Type::Tensor { shape: t, elem: f }) => {
                        e == f
                            && s.len() == t.len()
                            && s.iter().zip(t).all(|(x, y)| x == y || *x == 1)
                    }
                    _ => false,
                };
                if !ok {
                    return Err(format!("cannot broadcast {a} to {r}"));
                }
            }
            OpKind::ExpandDims { axis } => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                let (Type::Tensor { shape, elem }, true) = (a, r.is_tensor()) else {
                    return Err(format!("expand_dims of {a} to {r}"));
                };
                if *axis as usize > shape.len() {
                    return Err(format!("axis {axis} out of range for {a}"));
                }
                let mut s = shape.clone();
                s.insert(*axis as usize, 1);
                self.same("result", r, &Type::tensor(s, *elem))?;
            }
            OpKind::Reshape => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                if !(a.is_tensor()
                    && r.is_tensor()
                    && a.elem() == r.elem()
                    && a.numel() == r.numel())
                {
                    return Err(format!("cannot reshape {a} to {r}"));
                }
            }
            OpKind::Trans { perm } => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                let Type::Tensor { shape, elem } = a else {
                    return Err(format!("trans of {a}"));
                };
                let mut sorted = perm.clone();
                sorted.sort_unstable();
                if sorted != (0..shape.len() as u32).collect::<Vec<_>>() {
                    return Err(format!(
                        "perm {} is not a permutation of the {} dims",
                        shape_str(perm),
                        shape.len()
                    ));
                }
                let s = perm.iter().map(|&p| shape[p as usize]).collect();
                self.same("result", r, &Type::tensor(s, *elem))?;
            }
            OpKind::Join => {
                self.counts(2, 1)?;
                let (a, b) = (self.operand(0), self.operand(1));
                self.same("operand types differ", a, b)?;
                let Some(elem) = a.elem().filter(|_| is_value_like(a)) else {
                    return Err(format!("join of {a}"));
                };
                let mut s = a.shape().to_vec();
                s.push(2);
                self.same("result", self.result(0), &Type::tensor(s, elem))?;
            }
            OpKind::Split => {
                self.counts(1, 2)?;
                let a = self.operand(0);
                let Type::Tensor { shape, elem } = a else {
                    return Err(format!("split of {a}"));
                };
                if shape.last() != Some(&2) {
                    return Err(format!("split needs a last dimension of 2, found {a}"));
                }
                let s = shape[..shape.len() - 1].to_vec();
                let want = if s.is_empty() {
                    Type::Scalar(*elem)
                } else {
                    Type::tensor(s, *elem)
                };
                self.same("first result", self.result(0), &want)?;
                self.same("second result", self.result(1), &want)?;
            }
            OpKind::Binary(b) => {
                self.counts(2, 1)?;
                self.same("operand types differ", self.operand(0), self.operand(1))?;
                self.same(
                    "result type differs from operands",
                    self.result(0),
                    self.operand(0),
                )?;
                let t = self.operand(0);
                let s = t.scalar_type().filter(|_| is_value_like(t));
                let ok = match (b, s) {
                    (_, None) => false,
                    (
                        BinaryOp::And
                        | BinaryOp::Or
                        | BinaryOp::Xor
                        | BinaryOp::Shl
                        | BinaryOp::Shr
                        | BinaryOp::IDiv,
                        Some(s),
                    ) => s.is_int(),
                    (
                        BinaryOp::Div | BinaryOp::DivRn | BinaryOp::Pow | BinaryOp::Atan2,
                        Some(s),
                    ) => s.is_float(),
                    _ => true,
                };
                if !ok {
                    return Err(format!("not defined on {t}"));
                }
            }
            OpKind::Unary(u) => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                let Some(s) = a.scalar_type().filter(|_| is_value_like(a)) else {
                    return Err(format!("not defined on {a}"));
                };
                if u.float_only() && !s.is_float() {
                    return Err(format!("not defined on {a}"));
                }
                let want = if matches!(u, UnaryOp::IsNan | UnaryOp::IsInf) {
                    a.with_elem(Elem::Scalar(ScalarType::I1))
                } else {
                    a.clone()
                };
                self.same("result", r, &want)?;
            }
            OpKind::Fma => {
                self.counts(3, 1)?;
                for i in 1..3 {
                    self.same("operand types differ", self.operand(0), self.operand(i))?;
                }
                self.same(
                    "result type differs from operands",
                    self.result(0),
                    self.operand(0),
                )?;
                if !self.operand(0).scalar_type().is_some_and(|s| s.is_float()) {
                    return Err(format!("fma on {}", self.operand(0)));
                }
            }
            OpKind::Cmp(_) => {
                self.counts(2, 1)?;
                let a = self.operand(0);
                self.same("operand types differ", a, self.operand(1))?;
                if !is_value_like(a) {
                    return Err(format!("cannot compare {a}"));
                }
                self.same(
                    "result must be i1 of the operand shape",
                    self.result(0),
                    &a.with_elem(Elem::Scalar(ScalarType::I1)),
                )?;
            }
            OpKind::Select => {
                self.counts(3, 1)?;
                let (c, a, b, r) = (
                    self.operand(0),
                    self.operand(1),
                    self.operand(2),
                    self.result(0),
                );
                self.same("operand types differ", a, b)?;
                self.same("result type differs from operands", r, a)?;
                let i1 = Elem::Scalar(ScalarType::I1);
                if !(*c == Type::Scalar(i1) || (is_value_like(a) && *c == a.with_elem(i1))) {
                    return Err(format!(
                        "condition must be i1 (scalar or of shape {}), found {c}",
                        shape_str(a.shape())
                    ));
                }
            }
            OpKind::Cast { .. } | OpKind::Bitcast => {
                self.counts(1, 1)?;
                let (a, r) = (self.operand(0), self.result(0));
                let ok = is_value_like(a)
                    && is_value_like(r)
                    && a.shape() == r.shape()
                    && a.is_tensor() == r.is_tensor();
                if !ok {
                    return Err(format!("cannot convert {a} to {r}"));
                }
                if matches!(d.kind, OpKind::Bitcast) {
                    let (ea, er) = (a.elem().map(elem_bits), r.elem().map(elem_bits));
                    if ea != er {
                        return Err(format!("bitcast between widths: {a} to {r}"));
                    }
                }
            }
            OpKind::AddPtr => {
                self.counts(2, 1)?;
                let (p, o) = (self.operand(0), self.operand(1));
                let ok = is_value_like(p)
                    && p.elem().is_some_and(Elem::is_ptr)
                    && o.scalar_type().is_some_and(|s| s.is_int())
                    && p.shape() == o.shape()
                    && p.is_tensor() == o.is_tensor();
                if !ok {
                    return Err(format!(
                        "addptr needs a pointer and an integer offset of one shape: {p}, {o}"
                    ));
                }
                self.same("result type differs from the pointer", self.result(0), p)?;
            }
            OpKind::Load {
                has_mask,
                has_other,
                boundary_check,
                ..
            } => {
                self.counts(1 + *has_mask as usize + *has_other as usize, 1)?;
                let p = self.operand(0);
                let want = self.pointee_value(p)?;
                self.same("result must be the pointee", self.result(0), &want)?;
                if *has_mask {
                    self.mask(1, &want)?;
                }
                if *has_other {
                    let other = self.operand(1 + *has_mask as usize);
                    self.same("'other' must have the result type", other, &want)?;
                }
                self.boundary_check(p, boundary_check)?;
            }
            OpKind::Store {
                has_mask,
                boundary_check,
                ..
            } => {
                self.counts(2 + *has_mask as usize, 0)?;
                let p = self.operand(0);
                let want = self.pointee_value(p)?;
                self.same("stored value must be the pointee", self.operand(1), &want)?;
                if *has_mask {
                    self.mask(2, &want)?;
                }
                self.boundary_check(p, boundary_check)?;
            }
            OpKind::Dot { .. } => {
                self.counts(3, 1)?;
                let (a, b, c) = (self.operand(0), self.operand(1), self.operand(2));
                let (sa, sb, sc) = (a.shape(), b.shape(), c.shape());
                let ok = a.is_tensor()
                    && b.is_tensor()
                    && c.is_tensor()
                    && sa.len() == 2
                    && sb.len() == 2
                    && sc.len() == 2
                    && sa[1] == sb[0]
                    && sa[0] == sc[0]
                    && sb[1] == sc[1];
                if !ok {
                    return Err(format!("dot shapes must be MxK, KxN, MxN: {a}, {b}, {c}"));
                }
                if a.elem() != b.elem() {
                    return Err(format!("dot operands of different element types: {a}, {b}"));
                }
                self.same("result must have the accumulator's type", self.result(0), c)?;
            }
            OpKind::Reduce { kind, axis } => {
                self.counts(1, 1)?;
                let a = self.operand(0);
                let Type::Tensor { shape, elem } = a else {
                    return Err(format!("reduce of {a}"));
                };
                if *axis as usize >= shape.len() {
                    return Err(format!("axis {axis} out of range for {a}"));
                }
                let elem = if matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin) {
                    Elem::Scalar(ScalarType::I32)
                } else {
                    *elem
                };
                let mut s = shape.clone();
                s.remove(*axis as usize);
                let want = if s.is_empty() {
                    Type::Scalar(elem)
                } else {
                    Type::tensor(s, elem)
                };
                self.same("result", self.result(0), &want)?;
            }
            OpKind::Scan { axis, .. } => {
                self.counts(1, 1)?;
                let a = self.operand(0);
                if !a.is_tensor() || *axis as usize >= a.shape().len() {
                    return Err(format!("scan axis {axis} on {a}"));
                }
                self.same("result", self.result(0), a)?;
            }
            OpKind::MakeBlockPtr { order } => {
                self.results(1)?;
                let r = self.result(0);
                let Type::BlockPtr { pointee, shape } = r else {
                    return Err(format!("result must be a block pointer, found {r}"));
                };
                let rank = shape.len();
                self.operands(1 + 3 * rank)?;
                self.same(
                    "base must point to the block's element",
                    self.operand(0),
                    &Type::ptr(*pointee),
                )?;
                self.int_scalars(1, 3 * rank, "shape, stride or offset")?;
                let mut sorted = order.clone();
                sorted.sort_unstable();
                if !order.is_empty() && sorted != (0..rank as u32).collect::<Vec<_>>() {
                    return Err(format!(
                        "order {} is not a permutation of {rank} dims",
                        shape_str(order)
                    ));
                }
            }
            OpKind::Advance => {
                self.results(1)?;
                let Some(p) = d.operands.first().map(|&v| &self.f.values[v].ty) else {
                    return self.operands(1);
                };
                let Type::BlockPtr { shape, .. } = p else {
                    return Err(format!("advance of {p}"));
                };
                self.operands(1 + shape.len())?;
                self.int_scalars(1, shape.len(), "offset")?;
                self.same("result", self.result(0), p)?;
            }
            OpKind::MakeTensorDesc => {
                self.results(1)?;
                let r = self.result(0);
                let Type::TensorDesc { elem, block } = r else {
                    return Err(format!("result must be a tensor descriptor, found {r}"));
                };
                self.operands(1 + 2 * block.len())?;
                self.same(
                    "base must point to the descriptor's element",
                    self.operand(0),
                    &Type::ptr(*elem),
                )?;
                self.int_scalars(1, 2 * block.len(), "shape or stride")?;
            }
            OpKind::DescLoad { .. } | OpKind::DescStore => {
                let store = matches!(d.kind, OpKind::DescStore);
                self.results(if store { 0 } else { 1 })?;
                let Some(p) = d.operands.first().map(|&v| &self.f.values[v].ty) else {
                    return self.operands(1);
                };
                let Type::TensorDesc { elem, block } = p else {
                    return Err(format!("expected a tensor descriptor, found {p}"));
                };
                let rank = block.len();
                let first_offset = 1 + store as usize;
                self.operands(first_offset + rank)?;
                self.int_scalars(first_offset, rank, "offset")?;
                let tile = Type::tensor(block.clone(), Elem::Scalar(*elem));
                if store {
                    self.same("stored value must be the block", self.operand(1), &tile)?;
                } else if !squeezed_block(block)
                    .is_some_and(|s| *self.result(0) == Type::tensor(s, Elem::Scalar(*elem)))
                {
                    // A TMA copy with boxes of 1 (a batch or head offset)
                    // writes the block without them: `tma_lower` loads it so.
                    self.same(
                        "result must be the block (or it without its dimensions of 1)",
                        self.result(0),
                        &tile,
                    )?;
                }
            }
            OpKind::AtomicRmw { has_mask, .. } => {
                self.counts(2 + *has_mask as usize, 1)?;
                let p = self.operand(0);
                if matches!(p, Type::BlockPtr { .. }) {
                    return Err("atomics need plain pointers".into());
                }
                let want = self.pointee_value(p)?;
                self.same("value must be the pointee", self.operand(1), &want)?;
                self.same("result must be the pointee", self.result(0), &want)?;
                if *has_mask {
                    self.mask(2, &want)?;
                }
            }
            OpKind::AtomicCas { .. } => {
                self.counts(3, 1)?;
                let p = self.operand(0);
                if matches!(p, Type::BlockPtr { .. }) {
                    return Err("atomics need plain pointers".into());
                }
                let want = self.pointee_value(p)?;
                self.same("compared value must be the pointee", self.operand(1), &want)?;
                self.same("value must be the pointee", self.operand(2), &want)?;
                self.same("result must be the pointee", self.result(0), &want)?;
            }
            OpKind::Hint {
                multiple_of,
                max_contiguous,
                max_constancy,
            } => {
                self.counts(1, 1)?;
                let a = self.operand(0);
                self.same("result", self.result(0), a)?;
                let rank = a.shape().len().max(1);
                for (name, l) in [
                    ("multiple_of", multiple_of),
                    ("max_contiguous", max_contiguous),
                    ("max_constancy", max_constancy),
                ] {
                    if !l.is_empty() && l.len() != rank {
                        return Err(format!("{name} has {} entries for {rank} dim(s)", l.len()));
                    }
                }
            }
            OpKind::For(_) => {
                if d.operands.len() < 3 {
                    return Err(format!(
                        "expected at least 3 operands (lb, ub, step), found {}",
                        d.operands.len()
                    ));
                }
                let lb = self.operand(0);
                if !is_int_scalar(lb) {
                    return Err(format!("loop bounds must be integer scalars, found {lb}"));
                }
                self.same("bounds and step must have one type", self.operand(1), lb)?;
                self.same("bounds and step must have one type", self.operand(2), lb)?;
                let inits = self.types(&d.operands[3..]);
                let args = self.types(&self.region_block(0).args);
                let mut want_args = vec![lb.clone()];
                want_args.extend(inits.iter().cloned());
                self.same_list(
                    "block arguments must be (iv, iter_args) typed like (lb, inits)",
                    &args,
                    &want_args,
                )?;
                self.same_list(
                    "results must match the inits",
                    &self.types(&d.results),
                    &inits,
                )?;
                if let Some(y) = self.terminator_types(0, &OpKind::Yield) {
                    self.same_list("yielded values must match the inits", &y, &inits)?;
                }
            }
            OpKind::If => {
                self.operands(1)?;
                self.same("condition must be i1", self.operand(0), &Type::I1)?;
                let results = self.types(&d.results);
                for (i, which) in [(0, "then"), (1, "else")] {
                    if !self.region_block(i).args.is_empty() {
                        return Err(format!("the {which} region must have no arguments"));
                    }
                    if let Some(y) = self.terminator_types(i, &OpKind::Yield) {
                        self.same_list(
                            &format!("{which} yield must match the results"),
                            &y,
                            &results,
                        )?;
                    }
                }
            }
            OpKind::While => {
                let inits = self.types(&d.operands);
                let results = self.types(&d.results);
                self.same_list(
                    "before-region arguments must match the inits",
                    &self.types(&self.region_block(0).args),
                    &inits,
                )?;
                if let Some(c) = self.terminator_types(0, &OpKind::Condition) {
                    if c.first() != Some(&Type::I1) {
                        return Err("condition's first operand must be an i1 scalar".into());
                    }
                    self.same_list("forwarded values must match the results", &c[1..], &results)?;
                }
                self.same_list(
                    "after-region arguments must match the results",
                    &self.types(&self.region_block(1).args),
                    &results,
                )?;
                if let Some(y) = self.terminator_types(1, &OpKind::Yield) {
                    self.same_list("after yield must match the inits", &y, &inits)?;
                }
            }
            OpKind::ArefCreate => {
                self.counts(0, 1)?;
                let r = self.result(0);
                let Type::Aref { depth, buffers } = r else {
                    return Err(format!("result must be an aref, found {r}"));
                };
                if *depth == 0 {
                    return Err("an aref needs a depth of at least 1".into());
                }
                if buffers.is_empty() {
                    return Err("an aref needs at least one buffer".into());
                }
                if let Some(b) = buffers.iter().find(|b| {
                    !matches!(
                        b,
                        Type::Tensor {
                            elem: Elem::Scalar(_),
                            ..
                        }
                    )
                }) {
                    return Err(format!("aref buffers are tiles of numbers, found {b}"));
                }
            }
            OpKind::ArefPut | OpKind::ArefGet | OpKind::ArefConsumed => {
                if d.operands.len() < 2 {
                    return Err(format!(
                        "expected the aref and an iteration index, found {} operand(s)",
                        d.operands.len()
                    ));
                }
                let r = self.operand(0);
                let Type::Aref { buffers, .. } = r else {
                    return Err(format!("operand 0 must be an aref, found {r}"));
                };
                let i = self.operand(1);
                if !is_int_scalar(i) {
                    return Err(format!(
                        "the iteration index must be an integer scalar, found {i}"
                    ));
                }
                let clustered = self.f.attrs.cluster == 2;
                let is_i1 = |t: &Type| *t == Type::Scalar(Elem::Scalar(ScalarType::I1));
                match d.kind {
                    OpKind::ArefPut => {
                        self.results(0)?;
                        // The tiles, then (in a kernel launched in CTA
                        // pairs) one multicast predicate per tile.
                        let n = buffers.len();
                        let multicast = d.operands.len() == 2 + 2 * n
                            && d.operands[2 + n..].iter().all(|&p| is_i1(self.f.ty(p)));
                        if multicast && !clustered {
                            return Err(
                                "multicast predicates on a put of a kernel not launched in clusters of 2"
                                    .into(),
                            );
                        }
                        let values = if multicast {
                            &d.operands[2..2 + n]
                        } else {
                            &d.operands[2..]
                        };
                        self.same_list(
                            "put values must have the aref's buffer types",
                            &self.types(values),
                            buffers,
                        )?;
                    }
                    OpKind::ArefGet => {
                        self.operands(2)?;
                        self.same_list(
                            "results must have the aref's buffer types",
                            &self.types(&d.results),
                            buffers,
                        )?;
                    }
                    _ if d.operands.len() == 3 => {
                        self.results(0)?;
                        if !clustered {
                            return Err(
                                "a peer operand on aref.consumed of a kernel not launched in clusters of 2"
                                    .into(),
                            );
                        }
                        if !is_i1(self.operand(2)) {
                            return Err(format!(
                                "the peer operand of aref.consumed must be i1, found {}",
                                self.operand(2)
                            ));
                        }
                    }
                    _ => self.counts(2, 0)?,
                }
            }
            OpKind::WarpSpecialize { partitions } => {
                self.counts(0, 0)?;
                if partitions.is_empty() {
                    return Err("ws needs at least one partition".into());
                }
                let mut roles = HashSet::new();
                let (mut warps, mut registers) = (0u64, 0u64);
                for (i, p) in partitions.iter().enumerate() {
                    if !roles.insert(p.role.as_str()) {
                        return Err(format!("two partitions have the role '{}'", p.role));
                    }
                    if p.num_warps == 0 || p.num_warps % 4 != 0 {
                        return Err(format!(
                            "partition '{}' has num_warps = {}: partitions are whole \
                             warpgroups (a positive multiple of 4)",
                            p.role, p.num_warps
                        ));
                    }
                    warps += p.num_warps as u64;
                    if let Some(r) = p.regs {
                        if !(24..=256).contains(&r) || r % 8 != 0 {
                            return Err(format!(
                                "partition '{}' has regs = {r}: setmaxnreg takes 24..=256 \
                                 in steps of 8",
                                p.role
                            ));
                        }
                        registers += r as u64 * 32 * p.num_warps as u64;
                    }
                    if !self.region_block(i).args.is_empty() {
                        return Err(format!("partition '{}' must have no arguments", p.role));
                    }
                    if let Some(y) = self.terminator_types(i, &OpKind::Yield) {
                        if !y.is_empty() {
                            return Err(format!(
                                "partition '{}' must end in a yield without operands",
                                p.role
                            ));
                        }
                    }
                }
                if warps > 32 {
                    return Err(format!(
                        "the partitions have {warps} warps; a CTA has at most 32"
                    ));
                }
                let blocks = u64::from(self.f.attrs.occupancy.max(1));
                if registers * blocks > 65536 {
                    let of_blocks = if blocks > 1 {
                        format!(" a block, {blocks} blocks an SM (occupancy = {blocks})")
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "the partitions' register budgets need {registers} registers\
                         {of_blocks}; an SM has 65536"
                    ));
                }
            }
            OpKind::Yield | OpKind::Print { .. } => self.results(0)?,
            OpKind::DotWait { .. } => {
                self.results(self.d.operands.len())?;
                let ins = self.types(&self.d.operands);
                let outs = self.types(&self.d.results);
                self.same_list("dot_wait results must be its operands' types", &ins, &outs)?;
            }
            OpKind::Condition => {
                self.results(0)?;
                if d.operands.is_empty() {
                    return Err("condition needs an i1 operand".into());
                }
            }
            OpKind::Return | OpKind::DebugBarrier | OpKind::TurnTake | OpKind::TurnPass => {
                self.counts(0, 0)?
            }
            OpKind::ClusterSum => {
                self.counts(2, 1)?;
                let s = self.operand(1);
                if s.is_tensor() || !s.scalar_type().is_some_and(|s| s.is_int()) {
                    return Err(format!("cluster.sum's split must be an integer, not {s}"));
                }
                let t = self.operand(0);
                if !t.is_tensor() || t.scalar_type() != Some(ScalarType::F32) {
                    return Err(format!("cluster.sum of {t}: an f32 tile only"));
                }
                if self.result(0) != t {
                    return Err("cluster.sum's result must be its operand's type".into());
                }
                if !self.f.attrs.cluster_split_k {
                    return Err(
                        "cluster.sum in a kernel whose CTA pairs do not split K (cluster_split_k)"
                            .into(),
                    );
                }
            }
            OpKind::StreamKPut | OpKind::StreamKTake => {
                let take = matches!(d.kind, OpKind::StreamKTake);
                let name = if take {
                    "stream_k.take"
                } else {
                    "stream_k.put"
                };
                let first = usize::from(take);
                if d.operands.len() <= first {
                    return Err(format!("{name} needs partial sums"));
                }
                if take {
                    let from = self.operand(0);
                    if from.is_tensor() || !from.scalar_type().is_some_and(|s| s.is_int()) {
                        return Err(format!(
                            "stream_k.take's program must be an integer, not {from}"
                        ));
                    }
                }
                let sums = self.types(&d.operands[first..]);
                if let Some(t) = sums
                    .iter()
                    .find(|t| !t.is_tensor() || t.scalar_type() != Some(ScalarType::F32))
                {
                    return Err(format!("{name} of {t}: f32 tiles only"));
                }
                let results = self.types(&d.results);
                if take && results != sums || !take && !results.is_empty() {
                    return Err(format!(
                        "{name}'s results must be {}",
                        if take { "its sums' types" } else { "none" }
                    ));
                }
                if !self.f.attrs.stream_k {
                    return Err(format!(
                        "{name} in a kernel that is not stream-K (stream_k)"
                    ));
                }
            }
            OpKind::Assert { .. } => {
                self.counts(1, 0)?;
                let c = self.operand(0);
                if c.scalar_type() != Some(ScalarType::I1) || !is_value_like(c) {
                    return Err(format!("assert condition must be i1, found {c}"));
                }
            }
        }
        Ok(())
    }
}

/// `block` without its dimensions of 1, when it has some and others: the
/// shape of a rank-reduced `desc_load` (see rule 7).
pub fn squeezed_block(block: &[u32]) -> Option<Vec<u32>> {
    let kept: Vec<u32> = block.iter().copied().filter(|&b| b != 1).collect();
    (kept.len() < block.len() && !kept.is_empty()).then_some(kept)
}

/// Whether `dot_wait {pending}` op `wait` retires the group that computes
/// `v`: `v` is an async `dot` of the wait's own block and at least
/// `pending` async `dot`s of that block follow it before the wait.
/// Groups retire in commit order, so only the newest `pending` stay in
/// flight. Dots inside regions between them are not counted: they may not
/// run, and if they do they only push `v`'s group further back.
fn retired_by_wait(f: &Function, v: Value, wait: Op, pending: u32) -> bool {
    let Some(dot) = f.def_op(v) else {
        return false;
    };
    if !matches!(f.ops[dot].kind, OpKind::Dot { is_async: true, .. }) {
        return false;
    }
    let Some(block) = f.block_of(wait) else {
        return false;
    };
    let ops = &f.blocks[block].ops;
    let (Some(from), Some(to)) = (
        ops.iter().position(|&o| o == dot),
        ops.iter().position(|&o| o == wait),
    ) else {
        return false;
    };
    let newer = ops[from + 1..to.max(from + 1)]
        .iter()
        .filter(|&&o| matches!(f.ops[o].kind, OpKind::Dot { is_async: true, .. }))
        .count();
    from < to && newer >= pending as usize
}
