//! Warp specialization: splits a kernel whose `for` loop loads tiles that
//! feed `dot`s into a producer partition (the tile loads and the address
//! arithmetic only they need) and a consumer partition (everything else),
//! joined by one aref that carries all the loop's producer-loaded tiles of
//! one iteration together.
//!
//! Tawa's rule, for the loop shape the examples need first: a loop at the
//! top level of the kernel body or nested only in other `for` loops (a
//! persistent kernel's tile loop), `while` loops (in their body, not their
//! condition) and `if`s (a grouped GEMM's loop over the tiles of a group,
//! under a test of the group), that both partitions then run. Several
//! such loops whose tiles have the same types (causal attention's two KV
//! loops) share the aref:
//!
//! - *Producer loads*: the loads in the loop body that the [`TmaPlan`] makes
//!   TMA copies and whose address, mask and `other` operands (and the loop
//!   iteration arguments these are carried in) can be recomputed from pure
//!   ops of the loop and the code before it. At least one must reach a
//!   `dot` operand, else there is nothing to specialize (`Ok(None)`).
//! - *Producer*: recomputes (clones) the pure scalars and tiles it needs
//!   from the code before the loop — program ids, bounds, offsets — then
//!   runs the loop with only the producer loads, their address arithmetic
//!   and its carried values, putting the tiles with `aref.put`.
//! - *Consumer*: the whole kernel but the producer loads: the code before
//!   the loop, the loop with `aref.get` where the first producer load was
//!   and `aref.consumed` after the last use of the got tiles, and the code
//!   after the loop (epilogue, stores). Carried values only the producer
//!   needed (pointer increments) are dropped.
//!
//! Under a `while` or an `if`, the producer runs the same control flow
//! as the consumer: it carries the values of the enclosing regions (the
//! tile index) and re-loads the scalars they come from (a group's sizes,
//! pointers and strides), which, like the tiles it copies, the kernel is
//! assumed not to write.
//!
//! The aref ops name the loop's trip counter: the induction variable when
//! the loop counts 0, 1, 2, ...; `(iv - lb) / step` otherwise, computed in
//! each partition. Inside enclosing loops, or with several split loops, it
//! is an `i32` counter carried through all of them (from 0), so that it
//! keeps counting across tiles and loops as the aref contract asks.
//!
//! A tile loaded once per tile before the split loops and read only by
//! their dots (attention's `q`) goes to the producer as well, through a
//! one-slot aref of its own that counts tiles ([`per_tile_copies`]).
//!
//! The loads are moved as they are. In the driver's pipeline they are
//! already `desc_load`s of host-built descriptors (`tma_lower`), which the
//! backend issues as TMA copies; the plan passed in is limited to those.

use std::collections::{HashMap, HashSet};

use tawa_ir::function::{Block, Op, Value};
use tawa_ir::{BinaryOp, ConstValue, Function, Loc, OpKind, Partition, Type};

use crate::tma_infer::TmaPlan;

mod per_tile_copies;

/// Shape of the warp-specialized kernel.
#[derive(Clone, Debug)]
pub struct WsOptions {
    /// Slots of the aref ring (`aref<D x ...>`): how many iterations the
    /// producer may run ahead of the consumer.
    pub depth: u32,
    /// Warps of the producer partition (one warpgroup).
    pub producer_warps: u32,
    /// `setmaxnreg` budgets of the partitions; the consumer's is lowered
    /// when the partitions would not fit the register file.
    pub producer_regs: u32,
    pub consumer_regs: u32,
    /// Whether the producer also copies the tiles loaded once per tile
    /// before the split loops and read only by their dots (attention's
    /// `q`), through a one-slot aref of their own (`per_tile_copies`); off, the
    /// consumer loads them.
    pub per_tile_copies: bool,
}

impl Default for WsOptions {
    fn default() -> Self {
        WsOptions {
            depth: 2,
            producer_warps: 4,
            producer_regs: 40,
            consumer_regs: 248,
            per_tile_copies: true,
        }
    }
}

/// Why a kernel could not be warp-specialized as asked.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionError {
    pub loc: Loc,
    pub message: String,
}

impl std::fmt::Display for PartitionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.loc.is_known() {
            write!(f, "{}:{}: {}", self.loc.line, self.loc.col, self.message)
        } else {
            write!(f, "{}", self.message)
        }
    }
}

impl std::error::Error for PartitionError {}

/// Warp-specializes `func` (see the module docs). `Ok(None)`: nothing to
/// specialize, the kernel stays plain.
pub fn warp_specialize(
    func: &Function,
    plan: &TmaPlan,
    opts: &WsOptions,
) -> Result<Option<Function>, PartitionError> {
    warp_specialize_with_copies(func, plan, &HashSet::new(), opts)
}

/// [`warp_specialize`], with `copies`: plain tile loads the producer
/// copies with its threads (`producer_copy`), moved like the TMA loads.
pub fn warp_specialize_with_copies(
    func: &Function,
    plan: &TmaPlan,
    copies: &HashSet<Op>,
    opts: &WsOptions,
) -> Result<Option<Function>, PartitionError> {
    if opts.depth == 0 {
        return Err(PartitionError {
            loc: Loc::UNKNOWN,
            message: "aref depth must be at least 1".into(),
        });
    }
    // Partitions are whole warpgroups. (`%`, not `is_multiple_of`: the
    // workspace's rust-version is 1.85.)
    #[allow(clippy::manual_is_multiple_of)]
    if func.attrs.num_warps % 4 != 0 {
        return Ok(None);
    }
    let mut loops = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::For(_)) {
            loops.push(op);
        }
    });
    // Every loop that splits and moves tiles of the first one's types
    // shares its aref (causal attention's two KV loops), outer loops first
    // so that a loop nested in a chosen one stays inside it.
    let mut split = WsSplit {
        loops: Vec::new(),
        enclosing: Vec::new(),
        full_control: false,
        per_tile: None,
        tile_ring: Default::default(),
    };
    let mut buffers: Option<Vec<Type>> = None;
    for op in loops {
        let Some(enclosing) = enclosing_regions(func, op) else {
            continue;
        };
        if enclosing
            .iter()
            .any(|e| split.loops.iter().any(|l| l.the_loop == *e))
        {
            continue;
        }
        let Some(candidate) = LoopSplit::find(func, plan, copies, op) else {
            continue;
        };
        let types = candidate.buffer_types(func);
        if buffers.as_ref().is_some_and(|b| *b != types) {
            continue;
        }
        buffers = Some(types);
        split.loops.push(candidate);
        for e in enclosing {
            if !split.enclosing.contains(&e) {
                split.enclosing.push(e);
            }
        }
    }
    if split.loops.is_empty() {
        return Ok(None);
    }
    split.full_control = split
        .enclosing
        .iter()
        .any(|&e| matches!(func.ops[e].kind, OpKind::While | OpKind::If));
    let loc = func.ops[split
        .enclosing
        .first()
        .copied()
        .unwrap_or(split.loops[0].the_loop)]
    .loc;
    let budgets = register_budgets(func.attrs.num_warps, opts)
        .map_err(|message| PartitionError { loc, message })?;
    if opts.per_tile_copies && !split.full_control {
        split.per_tile = per_tile_copies::find(func, plan, &split.loops, &split.enclosing);
    }
    let mut ws = split.build(func, opts, budgets);
    // A per-tile copy whose address the producer cannot recompute stays
    // in the consumer.
    if ws.is_none() && split.per_tile.take().is_some() {
        ws = split.build(func, opts, budgets);
    }
    Ok(ws.map(|ws| compact(&ws)))
}

/// Warps of one CTA, the hardware's limit.
const MAX_CTA_WARPS: u32 = 32;

/// Registers per thread of an even split of the 64K register file over
/// `threads`, in the multiples of 8 `setmaxnreg` takes: what each warp
/// holds at entry under `__launch_bounds__(threads, 1)` (the backend's
/// `kernel_regs`), hence what the partitions' budgets share.
fn even_register_share(threads: u32) -> u32 {
    ((65536 / threads.max(1)).min(255) / 8) * 8
}

/// The `setmaxnreg` budgets (producer, consumer) for `consumer_warps`:
/// the options' budgets, the consumer's lowered (in steps of 8) until the
/// partitions fit the registers the CTA holds at entry — 248 at 4 + 4
/// warps (the registers each thread holds at entry anyway: one consumer
/// warpgroup keeping a 128-row attention tile spilled at 232), 232 at
/// 4 + 8, 104 at 4 + 16. An error when the warps do not fit a CTA.
pub fn register_budgets(consumer_warps: u32, opts: &WsOptions) -> Result<(u32, u32), String> {
    let warps = opts
        .producer_warps
        .checked_add(consumer_warps)
        .unwrap_or(u32::MAX);
    if warps > MAX_CTA_WARPS {
        return Err(format!(
            "num_warps = {consumer_warps} leaves no room for the producer warpgroup: a \
             warp-specialized CTA runs num_warps consumer warps plus {} producer warps, at most \
             {MAX_CTA_WARPS} in all (use num_warps 4, 8 or 16, or compile the plain kernel \
             with --no-ws)",
            opts.producer_warps
        ));
    }
    let pool = even_register_share(warps * 32) * warps * 32;
    let producer = opts.producer_regs * opts.producer_warps * 32;
    let fitted = pool.saturating_sub(producer) / (consumer_warps * 32) / 8 * 8;
    let consumer = opts.consumer_regs.min(fitted);
    if consumer < 24 {
        return Err(format!(
            "num_warps = {consumer_warps} leaves the consumer warps {consumer} registers each, \
             fewer than the 24 `setmaxnreg` allows"
        ));
    }
    Ok((opts.producer_regs, consumer))
}

/// The `for`, `while` and `if` ops enclosing `op`, outermost first;
/// `None` when another kind of region encloses it, or a `while`'s
/// condition region (which both partitions would have to run as it is).
fn enclosing_regions(func: &Function, op: Op) -> Option<Vec<Op>> {
    let mut chain = Vec::new();
    let mut cur = op;
    loop {
        let b = func.block_of(cur)?;
        if b == func.body {
            chain.reverse();
            return Some(chain);
        }
        let parent = func.blocks[b].parent?;
        match func.ops[parent].kind {
            OpKind::For(_) | OpKind::If => {}
            OpKind::While if func.ops[parent].regions.get(1) == Some(&b) => {}
            _ => return None,
        }
        chain.push(parent);
        cur = parent;
    }
}

/// Which side of the split is being emitted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Producer,
    Consumer,
}

/// The loops a kernel's split divides, sharing one aref.
struct WsSplit {
    /// In program order.
    loops: Vec<LoopSplit>,
    /// The `for` loops around them (a persistent kernel's tile loop), and
    /// the `while` loops and `if`s (a grouped GEMM's loop over groups,
    /// the tiles of a group), outermost first. Both partitions run them;
    /// the aref iteration index is then an `i32` counter carried through
    /// them, so that it keeps counting across their iterations (and from
    /// one split loop to the next).
    enclosing: Vec<Op>,
    /// Whether a `while` or an `if` encloses a split loop. The producer
    /// then runs the same control flow as the consumer: it carries the
    /// enclosing regions' values (a grouped GEMM's tile index) and loads
    /// the scalars they are computed from (a group's sizes and pointers),
    /// assuming, as for the tiles it copies, that the kernel does not
    /// write them.
    full_control: bool,
    /// The tiles copied once per tile into a one-slot aref of their own.
    per_tile: Option<per_tile_copies::PerTile>,
    /// While a partition is emitted: that aref and its index in the
    /// current tile.
    tile_ring: std::cell::Cell<(Option<Value>, Option<Value>)>,
}

/// The producer/consumer division of one loop.
struct LoopSplit {
    the_loop: Op,
    /// Producer loads in body order.
    loads: Vec<Op>,
    /// Body ops the producer runs (the loads and their address arithmetic).
    producer_ops: HashSet<Op>,
    /// Iteration-argument indices (0-based, after the induction variable)
    /// the producer carries.
    producer_carried: Vec<usize>,
}

/// Whether an op of this kind writes global memory.
fn writes_memory(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Store { .. }
            | OpKind::DescStore
            | OpKind::AtomicRmw { .. }
            | OpKind::AtomicCas { .. }
    )
}

/// Every value `op` and the ops of its regions read.
fn deep_operands(func: &Function, op: Op) -> Vec<Value> {
    let mut out = func.ops[op].operands.clone();
    for &r in &func.ops[op].regions {
        func.walk_block(r, &mut |inner| {
            out.extend(func.ops[inner].operands.iter().copied())
        });
    }
    out
}

/// The op of `block` that is or contains `op`.
pub(crate) fn ancestor_in(func: &Function, block: Block, op: Op) -> Option<Op> {
    let mut cur = op;
    loop {
        let b = func.block_of(cur)?;
        if b == block {
            return Some(cur);
        }
        cur = func.blocks[b].parent?;
    }
}

impl LoopSplit {
    fn find(
        func: &Function,
        plan: &TmaPlan,
        copies: &HashSet<Op>,
        the_loop: Op,
    ) -> Option<LoopSplit> {
        let loop_body = func.ops[the_loop].regions[0];
        let block = &func.blocks[loop_body];
        let in_body: HashSet<Op> = block.ops.iter().copied().collect();
        let carried_arg = |v: Value| block.args.iter().skip(1).position(|&a| a == v);
        let yield_op = *block.ops.last()?;
        // The producer runs up to `depth` iterations ahead: a write to
        // memory in the loop could be read by a later iteration's load
        // that the producer already issued. Without alias analysis, such
        // loops stay plain. (Writes after the loop, in an enclosing tile
        // loop, are assumed not to alias the tiles loaded, as in Tawa.)
        let mut writes = false;
        func.walk_block(loop_body, &mut |op| {
            writes |= writes_memory(&func.ops[op].kind)
        });
        if writes {
            return None;
        }
        let mut loads = Vec::new();
        let mut producer_ops = HashSet::new();
        let mut carried = HashSet::new();
        for &op in &block.ops {
            let is_load = matches!(
                func.ops[op].kind,
                OpKind::Load { .. } | OpKind::DescLoad { .. }
            );
            if !is_load || (plan.recipe(op).is_none() && !copies.contains(&op)) {
                continue;
            }
            // A tile carried into the next iteration would outlive its
            // slot; such a load stays in the consumer.
            let result = func.ops[op].results[0];
            if func.ops[yield_op].operands.contains(&result) {
                continue;
            }
            // The load's backward slice within the loop (body ops and the
            // iteration arguments, through what they are yielded), if it
            // is pure.
            let mut slice: HashSet<Op> = HashSet::from([op]);
            let mut slice_carried: HashSet<usize> = HashSet::new();
            let mut work: Vec<Value> = func.ops[op].operands.clone();
            let mut ok = true;
            while let Some(v) = work.pop() {
                if let Some(d) = func.def_op(v) {
                    if !in_body.contains(&d) {
                        continue;
                    }
                    let data = &func.ops[d];
                    if !data.kind.is_pure() || !data.regions.is_empty() {
                        ok = false;
                    } else if slice.insert(d) {
                        work.extend(data.operands.iter().copied());
                    }
                } else if let Some(j) = carried_arg(v) {
                    if slice_carried.insert(j) {
                        work.push(func.ops[yield_op].operands[j]);
                    }
                }
            }
            if !ok {
                continue;
            }
            loads.push(op);
            producer_ops.extend(slice);
            carried.extend(slice_carried);
        }
        let feeds_dot = loads
            .iter()
            .any(|&l| reaches_dot(func, loop_body, func.ops[l].results[0]));
        if loads.is_empty() || !feeds_dot {
            return None;
        }
        let mut producer_carried: Vec<usize> = carried.into_iter().collect();
        producer_carried.sort();
        Some(LoopSplit {
            the_loop,
            loads,
            producer_ops,
            producer_carried,
        })
    }

    /// The types of the tiles one iteration puts.
    fn buffer_types(&self, func: &Function) -> Vec<Type> {
        self.loads
            .iter()
            .map(|&l| func.ty(func.ops[l].results[0]).clone())
            .collect()
    }
}

impl WsSplit {
    /// `None` when the producer needs a value it cannot recompute (one
    /// defined by an op with effects, or carried by an enclosing loop).
    fn build(
        &self,
        func: &Function,
        opts: &WsOptions,
        (producer_regs, consumer_regs): (u32, u32),
    ) -> Option<Function> {
        let mut out = Function::new(func.name.clone());
        out.attrs = func.attrs.clone();
        let mut params = HashMap::new();
        for p in &func.params {
            let v = out.add_param(p.name.clone(), func.ty(p.value).clone(), p.hints.clone());
            params.insert(p.value, v);
        }
        let first = &self.loops[0];
        let outermost = self.enclosing.first().copied().unwrap_or(first.the_loop);
        let loc = func.ops[outermost].loc;
        let buffers = first.buffer_types(func);
        let ring = out.append_value(
            out.body,
            OpKind::ArefCreate,
            vec![],
            Type::Aref {
                depth: opts.depth,
                buffers,
            },
            loc,
        );
        out.set_name(ring, "ring");
        if let Some(per_tile) = &self.per_tile {
            let buffers = per_tile
                .loads
                .iter()
                .map(|&l| func.ty(func.ops[l].results[0]).clone())
                .collect();
            let tile_ring = out.append_value(
                out.body,
                OpKind::ArefCreate,
                vec![],
                Type::Aref { depth: 1, buffers },
                func.ops[per_tile.loads[0]].loc,
            );
            let tile = func.ops[per_tile.loads[0]].results[0];
            let name = func.values[tile].name.as_deref().unwrap_or("tile");
            out.set_name(tile_ring, format!("ring_{name}"));
            self.tile_ring.set((Some(tile_ring), None));
        }
        let body_ops = &func.blocks[func.body].ops;

        let mut blocks = Vec::new();
        for role in [Role::Producer, Role::Consumer] {
            let block = out.new_block(vec![]);
            let mut map = params.clone();
            // One loop at the top level names its trip counter; otherwise
            // a counter from 0 runs through all the loops.
            let counter = (self.loops.len() > 1 || !self.enclosing.is_empty()).then(|| {
                let zero = out.append_value(
                    block,
                    OpKind::Constant(ConstValue::Int(0)),
                    vec![],
                    Type::scalar(tawa_ir::ScalarType::I32),
                    loc,
                );
                out.set_name(zero, "aref_iter0");
                zero
            });
            self.emit_block(
                func, func.body, &mut out, block, &mut map, ring, role, counter,
            )?;
            out.append_op(block, OpKind::Yield, vec![], vec![], vec![], Loc::UNKNOWN);
            dead_code(&mut out, block);
            blocks.push(block);
        }
        let (producer, consumer) = (blocks[0], blocks[1]);

        let partitions = vec![
            Partition {
                role: "producer".into(),
                num_warps: opts.producer_warps,
                regs: Some(producer_regs),
            },
            Partition {
                role: "consumer".into(),
                num_warps: func.attrs.num_warps,
                regs: Some(consumer_regs),
            },
        ];
        out.append_op(
            out.body,
            OpKind::WarpSpecialize { partitions },
            vec![],
            vec![],
            vec![producer, consumer],
            loc,
        );
        // The kernel's `return` (and nothing else follows the loop's
        // epilogue at the top level).
        let ret = *body_ops.last().expect("a body ends in return");
        let ret_operands: Vec<Value> = func.ops[ret].operands.iter().map(|v| params[v]).collect();
        out.append_op(
            out.body,
            OpKind::Return,
            ret_operands,
            vec![],
            vec![],
            func.ops[ret].loc,
        );
        Some(out)
    }

    /// Emits the `role` partition's copy of `old` (the kernel body or an
    /// enclosing loop's body) into `block`, except its terminator. Returns
    /// the aref counter after the block (`counter` is the one before;
    /// `None` until an enclosing loop starts one).
    #[allow(clippy::too_many_arguments)]
    fn emit_block(
        &self,
        func: &Function,
        old: Block,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        ring: Value,
        role: Role,
        mut counter: Option<Value>,
    ) -> Option<Option<Value>> {
        for &op in &func.blocks[old].ops {
            let data = &func.ops[op];
            if matches!(
                data.kind,
                OpKind::Return | OpKind::Yield | OpKind::Condition
            ) {
                continue;
            }
            let per_tile = self.per_tile.as_ref().filter(|p| p.block == old);
            if per_tile.is_some_and(|p| p.loads.contains(&op)) {
                self.per_tile_copy(func, op, out, block, map, role)?;
                continue;
            }
            if let Some(split) = self.loops.iter().find(|l| l.the_loop == op) {
                counter = match role {
                    Role::Producer => split.producer_loop(func, out, block, map, ring, counter)?,
                    Role::Consumer => split.consumer_loop(func, out, block, map, ring, counter)?,
                };
            } else if self.enclosing.contains(&op) {
                counter = Some(match data.kind {
                    OpKind::While => {
                        self.enclosing_while(func, op, out, block, map, ring, role, counter)?
                    }
                    OpKind::If => {
                        self.enclosing_if(func, op, out, block, map, ring, role, counter)?
                    }
                    _ => self.enclosing_loop(func, op, out, block, map, ring, role, counter)?,
                });
            } else if role == Role::Consumer
                || (data.kind.is_pure() && data.regions.is_empty())
                || (self.full_control && is_scalar_load(func, op))
            {
                clone_if_available(func, op, out, block, map);
            }
            if role == Role::Consumer && per_tile.is_some_and(|p| p.last_reader == op) {
                let (Some(ring), Some(index)) = self.tile_ring.get() else {
                    return None;
                };
                let loc = func.ops[op].loc;
                out.append_op(
                    block,
                    OpKind::ArefConsumed,
                    vec![ring, index],
                    vec![],
                    vec![],
                    loc,
                );
            }
        }
        Some(counter)
    }

    /// A per-tile load (`per_tile_copies`) in the `role` partition: the producer
    /// copies it and, at the last one, puts them all; the consumer gets
    /// them there.
    fn per_tile_copy(
        &self,
        func: &Function,
        op: Op,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        role: Role,
    ) -> Option<()> {
        let per_tile = self.per_tile.as_ref()?;
        let (Some(ring), _) = self.tile_ring.get() else {
            return None;
        };
        if role == Role::Producer {
            if func.ops[op].operands.iter().any(|v| !map.contains_key(v)) {
                return None;
            }
            clone_op(func, op, out, block, map);
        }
        if Some(&op) != per_tile.loads.last() {
            return Some(());
        }
        let index = per_tile_copies::tile_index(func, per_tile, out, block, map)?;
        self.tile_ring.set((Some(ring), Some(index)));
        let loc = func.ops[op].loc;
        let tiles: Vec<Value> = per_tile
            .loads
            .iter()
            .map(|&l| func.ops[l].results[0])
            .collect();
        match role {
            Role::Producer => {
                let mut operands = vec![ring, index];
                operands.extend(tiles.iter().map(|t| map[t]));
                out.append_op(block, OpKind::ArefPut, operands, vec![], vec![], loc);
            }
            Role::Consumer => {
                let types = tiles.iter().map(|&t| func.ty(t).clone()).collect();
                let get = out.append_op(
                    block,
                    OpKind::ArefGet,
                    vec![ring, index],
                    types,
                    vec![],
                    loc,
                );
                for (k, &t) in tiles.iter().enumerate() {
                    let new = out.ops[get].results[k];
                    copy_name(func, t, out, new);
                    map.insert(t, new);
                }
            }
        }
        Some(())
    }

    /// A fresh aref counter (0) in `block` when none runs yet.
    fn counter_or_zero(
        out: &mut Function,
        block: Block,
        counter: Option<Value>,
        loc: Loc,
    ) -> Value {
        counter.unwrap_or_else(|| {
            let zero = out.append_value(
                block,
                OpKind::Constant(ConstValue::Int(0)),
                vec![],
                Type::scalar(tawa_ir::ScalarType::I32),
                loc,
            );
            out.set_name(zero, "aref_iter0");
            zero
        })
    }

    /// A `while` loop around the split loop (in its body region), in the
    /// `role` partition: both carry its values and the aref counter, which
    /// the condition forwards to the body and the body yields back.
    #[allow(clippy::too_many_arguments)]
    fn enclosing_while(
        &self,
        func: &Function,
        op: Op,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        ring: Value,
        role: Role,
        counter: Option<Value>,
    ) -> Option<Value> {
        let data = &func.ops[op];
        let counter_ty = Type::scalar(tawa_ir::ScalarType::I32);
        let counter = Self::counter_or_zero(out, block, counter, data.loc);
        let mut operands = Vec::new();
        for v in &data.operands {
            operands.push(*map.get(v)?);
        }
        operands.push(counter);
        // The condition region: the carried values and the counter.
        let (old_before, old_after) = (data.regions[0], data.regions[1]);
        let mut before_types: Vec<Type> = func.blocks[old_before]
            .args
            .iter()
            .map(|&a| func.ty(a).clone())
            .collect();
        before_types.push(counter_ty.clone());
        let before = out.new_block(before_types);
        let before_args = out.blocks[before].args.clone();
        for (k, &a) in func.blocks[old_before].args.iter().enumerate() {
            map.insert(a, before_args[k]);
            copy_name(func, a, out, before_args[k]);
        }
        let before_counter = *before_args.last().unwrap();
        out.set_name(before_counter, "aref_iter");
        self.emit_block(
            func,
            old_before,
            out,
            before,
            map,
            ring,
            role,
            Some(before_counter),
        )?;
        let cond = *func.blocks[old_before].ops.last()?;
        if !matches!(func.ops[cond].kind, OpKind::Condition) {
            return None;
        }
        let mut forwarded = Vec::new();
        for v in &func.ops[cond].operands {
            forwarded.push(*map.get(v)?);
        }
        forwarded.push(before_counter);
        out.append_op(
            before,
            OpKind::Condition,
            forwarded,
            vec![],
            vec![],
            func.ops[cond].loc,
        );
        // The body: the forwarded values and the counter.
        let mut after_types: Vec<Type> = func.blocks[old_after]
            .args
            .iter()
            .map(|&a| func.ty(a).clone())
            .collect();
        after_types.push(counter_ty);
        let after = out.new_block(after_types.clone());
        let after_args = out.blocks[after].args.clone();
        for (k, &a) in func.blocks[old_after].args.iter().enumerate() {
            map.insert(a, after_args[k]);
            copy_name(func, a, out, after_args[k]);
        }
        let after_counter = *after_args.last().unwrap();
        out.set_name(after_counter, "aref_iter");
        let next = self
            .emit_block(
                func,
                old_after,
                out,
                after,
                map,
                ring,
                role,
                Some(after_counter),
            )?
            .expect("the counter is threaded");
        yield_mapped(func, old_after, out, after, map, next)?;
        let new_while = out.append_op(
            block,
            OpKind::While,
            operands,
            after_types,
            vec![before, after],
            data.loc,
        );
        map_results(func, op, out, new_while, map)
    }

    /// An `if` around the split loop, in the `role` partition: both
    /// branches yield its results and the aref counter (the branch
    /// without the loop, the one it got).
    #[allow(clippy::too_many_arguments)]
    fn enclosing_if(
        &self,
        func: &Function,
        op: Op,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        ring: Value,
        role: Role,
        counter: Option<Value>,
    ) -> Option<Value> {
        let data = &func.ops[op];
        let counter = Self::counter_or_zero(out, block, counter, data.loc);
        let cond = *map.get(data.operands.first()?)?;
        let mut branches = Vec::new();
        for &old in &data.regions {
            let new = out.new_block(vec![]);
            let after = self
                .emit_block(func, old, out, new, map, ring, role, Some(counter))?
                .expect("the counter is threaded");
            yield_mapped(func, old, out, new, map, after)?;
            branches.push(new);
        }
        if branches.len() != 2 {
            return None;
        }
        let mut types: Vec<Type> = data.results.iter().map(|&r| func.ty(r).clone()).collect();
        types.push(Type::scalar(tawa_ir::ScalarType::I32));
        let new_if = out.append_op(block, OpKind::If, vec![cond], types, branches, data.loc);
        map_results(func, op, out, new_if, map)
    }

    /// A loop around the split loop, in the `role` partition: the
    /// producer's carries only the aref counter, the consumer's its
    /// iteration arguments too.
    #[allow(clippy::too_many_arguments)]
    fn enclosing_loop(
        &self,
        func: &Function,
        op: Op,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        ring: Value,
        role: Role,
        counter: Option<Value>,
    ) -> Option<Value> {
        let data = &func.ops[op];
        let old_body = data.regions[0];
        let old_args = &func.blocks[old_body].args;
        let counter_ty = Type::scalar(tawa_ir::ScalarType::I32);
        let counter = match counter {
            Some(c) => c,
            None => {
                let zero = out.append_value(
                    block,
                    OpKind::Constant(ConstValue::Int(0)),
                    vec![],
                    counter_ty.clone(),
                    data.loc,
                );
                out.set_name(zero, "aref_iter0");
                zero
            }
        };
        let carried = role == Role::Consumer || self.full_control;
        let mut operands = Vec::new();
        for v in &data.operands[..3] {
            operands.push(*map.get(v)?);
        }
        let mut arg_types = vec![func.ty(old_args[0]).clone()];
        if carried {
            for v in &data.operands[3..] {
                operands.push(*map.get(v)?);
            }
            arg_types.extend(old_args[1..].iter().map(|&a| func.ty(a).clone()));
        }
        operands.push(counter);
        arg_types.push(counter_ty);
        let body = out.new_block(arg_types.clone());
        let new_args = out.blocks[body].args.clone();
        let kept = if carried { old_args.len() } else { 1 };
        for k in 0..kept {
            map.insert(old_args[k], new_args[k]);
            copy_name(func, old_args[k], out, new_args[k]);
        }
        let inner_counter = *new_args.last().unwrap();
        out.set_name(inner_counter, "aref_iter");
        let after = self
            .emit_block(
                func,
                old_body,
                out,
                body,
                map,
                ring,
                role,
                Some(inner_counter),
            )?
            .expect("the counter is threaded");
        let old_yield = *func.blocks[old_body].ops.last()?;
        let mut ys = Vec::new();
        if carried {
            for v in &func.ops[old_yield].operands {
                ys.push(*map.get(v)?);
            }
        }
        ys.push(after);
        out.append_op(
            body,
            OpKind::Yield,
            ys,
            vec![],
            vec![],
            func.ops[old_yield].loc,
        );
        let new_loop = out.append_op(
            block,
            data.kind.clone(),
            operands,
            arg_types[1..].to_vec(),
            vec![body],
            data.loc,
        );
        let results = out.ops[new_loop].results.clone();
        if carried {
            for (k, &old) in data.results.iter().enumerate() {
                copy_name(func, old, out, results[k]);
                map.insert(old, results[k]);
            }
        }
        results.last().copied()
    }
}

impl LoopSplit {
    /// The trip counter of the loop whose induction variable is `iv`
    /// (mapped bounds `lb`, `step`), emitted into `block`.
    fn trip_counter(
        func: &Function,
        out: &mut Function,
        block: Block,
        iv: Value,
        lb_step: (Value, Value),
        orig: (Value, Value),
        loc: Loc,
    ) -> Value {
        let constant = |v: Value| match func.def_op(v).map(|o| &func.ops[o].kind) {
            Some(OpKind::Constant(ConstValue::Int(i))) => Some(*i),
            _ => None,
        };
        let ty = out.ty(iv).clone();
        let mut i = iv;
        if constant(orig.0) != Some(0) {
            i = out.append_value(
                block,
                OpKind::Binary(BinaryOp::Sub),
                vec![i, lb_step.0],
                ty.clone(),
                loc,
            );
        }
        if constant(orig.1) != Some(1) {
            i = out.append_value(
                block,
                OpKind::Binary(BinaryOp::IDiv),
                vec![i, lb_step.1],
                ty,
                loc,
            );
        }
        i
    }

    fn producer_loop(
        &self,
        func: &Function,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        ring: Value,
        counter: Option<Value>,
    ) -> Option<Option<Value>> {
        let loop_data = &func.ops[self.the_loop];
        // Every value the producer's loop reads from outside it must have
        // been recomputed.
        let mut needed: Vec<Value> = loop_data.operands[..3].to_vec();
        needed.extend(
            self.producer_carried
                .iter()
                .map(|&j| loop_data.operands[3 + j]),
        );
        let loop_args = &func.blocks[loop_data.regions[0]].args;
        for &op in &self.producer_ops {
            for &v in &func.ops[op].operands {
                let defined_in_loop = func
                    .def_op(v)
                    .is_some_and(|d| ancestor_in(func, loop_data.regions[0], d).is_some());
                if !defined_in_loop && !loop_args.contains(&v) {
                    needed.push(v);
                }
            }
        }
        if needed.iter().any(|v| !map.contains_key(v)) {
            return None;
        }
        let lb_ub_step: Vec<Value> = loop_data.operands[..3].iter().map(|v| map[v]).collect();
        let mut inits: Vec<Value> = self
            .producer_carried
            .iter()
            .map(|&j| map[&loop_data.operands[3 + j]])
            .collect();
        let old_body = loop_data.regions[0];
        let (new_body, new_args) = loop_body_with(
            func,
            out,
            old_body,
            &self.producer_carried,
            counter,
            &mut inits,
            map,
        );
        let last_load = *self.loads.last().unwrap();
        for &op in &func.blocks[old_body].ops {
            if matches!(func.ops[op].kind, OpKind::Yield) {
                let mut ys: Vec<Value> = self
                    .producer_carried
                    .iter()
                    .map(|&j| map[&func.ops[op].operands[j]])
                    .collect();
                if counter.is_some() {
                    let cnt = *new_args.last().unwrap();
                    ys.push(increment(out, new_body, cnt));
                }
                out.append_op(new_body, OpKind::Yield, ys, vec![], vec![], Loc::UNKNOWN);
                continue;
            }
            if !self.producer_ops.contains(&op) {
                continue;
            }
            clone_op(func, op, out, new_body, map);
            if op == last_load {
                let loc = func.ops[op].loc;
                let i = match counter {
                    Some(_) => *new_args.last().unwrap(),
                    None => Self::trip_counter(
                        func,
                        out,
                        new_body,
                        new_args[0],
                        (lb_ub_step[0], lb_ub_step[2]),
                        (loop_data.operands[0], loop_data.operands[2]),
                        loc,
                    ),
                };
                let mut operands = vec![ring, i];
                operands.extend(self.loads.iter().map(|&l| map[&func.ops[l].results[0]]));
                out.append_op(new_body, OpKind::ArefPut, operands, vec![], vec![], loc);
            }
        }
        let mut operands = lb_ub_step;
        operands.extend(inits);
        let result_types: Vec<_> = new_args[1..].iter().map(|&v| out.ty(v).clone()).collect();
        let new_loop = out.append_op(
            block,
            loop_data.kind.clone(),
            operands,
            result_types,
            vec![new_body],
            loop_data.loc,
        );
        Some(counter.map(|_| *out.ops[new_loop].results.last().unwrap()))
    }

    fn consumer_loop(
        &self,
        func: &Function,
        out: &mut Function,
        block: Block,
        map: &mut HashMap<Value, Value>,
        ring: Value,
        counter: Option<Value>,
    ) -> Option<Option<Value>> {
        let loop_data = &func.ops[self.the_loop];
        let old_body = loop_data.regions[0];
        let old_block = &func.blocks[old_body];
        let in_body: HashSet<Op> = old_block.ops.iter().copied().collect();
        let carried_arg = |v: Value| old_block.args.iter().skip(1).position(|&a| a == v);
        let yield_op = *old_block.ops.last().unwrap();
        let loads: HashSet<Op> = self.loads.iter().copied().collect();

        // Liveness: what the consumer needs of the loop.
        let mut live_carried: HashSet<usize> = HashSet::new();
        func.walk(&mut |op| {
            for v in &func.ops[op].operands {
                if let Some(j) = loop_data.results.iter().position(|r| r == v) {
                    live_carried.insert(j);
                }
            }
        });
        let mut live: HashSet<Op> = HashSet::new();
        let mut work: Vec<Op> = Vec::new();
        for &op in &old_block.ops {
            let d = &func.ops[op];
            if op != yield_op
                && !loads.contains(&op)
                && (!d.kind.is_pure() || !d.regions.is_empty())
            {
                live.insert(op);
                work.push(op);
            }
        }
        let mut carried_work: Vec<usize> = live_carried.iter().copied().collect();
        loop {
            if let Some(j) = carried_work.pop() {
                let y = func.ops[yield_op].operands[j];
                if let Some(d) = func.def_op(y).filter(|d| in_body.contains(d)) {
                    if live.insert(d) {
                        work.push(d);
                    }
                } else if let Some(k) = carried_arg(y) {
                    if live_carried.insert(k) {
                        carried_work.push(k);
                    }
                }
                continue;
            }
            let Some(op) = work.pop() else { break };
            if loads.contains(&op) {
                continue;
            }
            for v in deep_operands(func, op) {
                if let Some(d) = func.def_op(v) {
                    if let Some(d) = ancestor_in(func, old_body, d) {
                        if d != op && live.insert(d) {
                            work.push(d);
                        }
                    }
                } else if let Some(j) = carried_arg(v) {
                    if live_carried.insert(j) {
                        carried_work.push(j);
                    }
                }
            }
        }
        let mut carried: Vec<usize> = live_carried.into_iter().collect();
        carried.sort();

        let mut lb_ub_step = Vec::new();
        for v in &loop_data.operands[..3] {
            lb_ub_step.push(*map.get(v)?);
        }
        let mut inits = Vec::new();
        for &j in &carried {
            inits.push(*map.get(&loop_data.operands[3 + j])?);
        }
        let (new_body, new_args) =
            loop_body_with(func, out, old_body, &carried, counter, &mut inits, map);

        // The last op of the consumer's iteration reading a got tile. A
        // `trans` of a got tile is a view of the same slot (the backend
        // reads it in place: wgmma's transpose bit, a permuted layout), so
        // what reads the view reads the slot, and the slot is released
        // after it.
        let mut got: HashSet<Value> = self.loads.iter().map(|&l| func.ops[l].results[0]).collect();
        for &op in &old_block.ops {
            let data = &func.ops[op];
            if matches!(data.kind, OpKind::Trans { .. }) && got.contains(&data.operands[0]) {
                got.insert(data.results[0]);
            }
        }
        let last_reader = old_block
            .ops
            .iter()
            .rev()
            .filter(|&&op| live.contains(&op) && !loads.contains(&op))
            .find(|&&op| deep_operands(func, op).iter().any(|v| got.contains(v)))
            .copied();
        let mut index = None;
        for &op in &old_block.ops {
            if op == yield_op {
                let mut ys: Vec<Value> = carried
                    .iter()
                    .map(|&j| map[&func.ops[op].operands[j]])
                    .collect();
                if counter.is_some() {
                    let cnt = *new_args.last().unwrap();
                    ys.push(increment(out, new_body, cnt));
                }
                if last_reader.is_none() {
                    if let Some(i) = index {
                        out.append_op(
                            new_body,
                            OpKind::ArefConsumed,
                            vec![ring, i],
                            vec![],
                            vec![],
                            loop_data.loc,
                        );
                    }
                }
                out.append_op(new_body, OpKind::Yield, ys, vec![], vec![], Loc::UNKNOWN);
                continue;
            }
            if loads.contains(&op) {
                if index.is_none() {
                    let loc = func.ops[op].loc;
                    let i = match counter {
                        Some(_) => *new_args.last().unwrap(),
                        None => Self::trip_counter(
                            func,
                            out,
                            new_body,
                            new_args[0],
                            (lb_ub_step[0], lb_ub_step[2]),
                            (loop_data.operands[0], loop_data.operands[2]),
                            loc,
                        ),
                    };
                    let types: Vec<Type> = self
                        .loads
                        .iter()
                        .map(|&l| func.ty(func.ops[l].results[0]).clone())
                        .collect();
                    let get =
                        out.append_op(new_body, OpKind::ArefGet, vec![ring, i], types, vec![], loc);
                    for (k, &l) in self.loads.iter().enumerate() {
                        let old = func.ops[l].results[0];
                        let new = out.ops[get].results[k];
                        copy_name(func, old, out, new);
                        map.insert(old, new);
                    }
                    index = Some(i);
                }
                continue;
            }
            if !live.contains(&op) {
                continue;
            }
            clone_op(func, op, out, new_body, map);
            if Some(op) == last_reader {
                let i = index.expect("tiles are got before they are read");
                out.append_op(
                    new_body,
                    OpKind::ArefConsumed,
                    vec![ring, i],
                    vec![],
                    vec![],
                    func.ops[op].loc,
                );
            }
        }
        let mut operands = lb_ub_step;
        operands.extend(inits);
        let result_types: Vec<_> = new_args[1..].iter().map(|&v| out.ty(v).clone()).collect();
        let new_loop = out.append_op(
            block,
            loop_data.kind.clone(),
            operands,
            result_types,
            vec![new_body],
            loop_data.loc,
        );
        for (k, &j) in carried.iter().enumerate() {
            let old = loop_data.results[j];
            let new = out.ops[new_loop].results[k];
            copy_name(func, old, out, new);
            map.insert(old, new);
        }
        Some(counter.map(|_| *out.ops[new_loop].results.last().unwrap()))
    }
}

/// Ends `new` (a partition's copy of region block `old`) with the yield of
/// `old`'s yielded values, mapped, and the aref counter `counter`.
fn yield_mapped(
    func: &Function,
    old: Block,
    out: &mut Function,
    new: Block,
    map: &HashMap<Value, Value>,
    counter: Value,
) -> Option<()> {
    let old_yield = *func.blocks[old].ops.last()?;
    let mut ys = Vec::new();
    for v in &func.ops[old_yield].operands {
        ys.push(*map.get(v)?);
    }
    ys.push(counter);
    let loc = func.ops[old_yield].loc;
    out.append_op(new, OpKind::Yield, ys, vec![], vec![], loc);
    Some(())
}

/// Maps the results of `old` to those of its copy `new`, which has one
/// more: the aref counter after it, returned.
fn map_results(
    func: &Function,
    old: Op,
    out: &mut Function,
    new: Op,
    map: &mut HashMap<Value, Value>,
) -> Option<Value> {
    let results = out.ops[new].results.clone();
    for (k, &r) in func.ops[old].results.iter().enumerate() {
        copy_name(func, r, out, results[k]);
        map.insert(r, results[k]);
    }
    results.last().copied()
}

/// Whether `op` loads one scalar (not volatile): what a producer that
/// runs the kernel's control flow recomputes, as pure ops.
fn is_scalar_load(func: &Function, op: Op) -> bool {
    let d = &func.ops[op];
    matches!(
        d.kind,
        OpKind::Load {
            volatile: false,
            ..
        }
    ) && d.regions.is_empty()
        && d.results.len() == 1
        && !func.ty(d.results[0]).is_tensor()
        && !matches!(func.ty(d.operands[0]), Type::BlockPtr { .. })
}

/// `cnt + 1`, appended to `block`.
fn increment(out: &mut Function, block: Block, cnt: Value) -> Value {
    let ty = out.ty(cnt).clone();
    let one = out.append_value(
        block,
        OpKind::Constant(ConstValue::Int(1)),
        vec![],
        ty.clone(),
        Loc::UNKNOWN,
    );
    out.append_value(
        block,
        OpKind::Binary(BinaryOp::Add),
        vec![cnt, one],
        ty,
        Loc::UNKNOWN,
    )
}

/// Whether `v` reaches a `dot`'s A or B operand through ops of `block`.
fn reaches_dot(func: &Function, block: Block, v: Value) -> bool {
    let mut seen = HashSet::new();
    let mut work = vec![v];
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        for &op in &func.blocks[block].ops {
            let d = &func.ops[op];
            if !d.operands.contains(&v) {
                continue;
            }
            if matches!(d.kind, OpKind::Dot { .. }) {
                if d.operands[..2].contains(&v) {
                    return true;
                }
            } else if d.kind.is_pure() && d.regions.is_empty() {
                work.extend(d.results.iter().copied());
            }
        }
    }
    false
}

/// The body block of a partition's copy of a `for` loop: the induction
/// variable, the carried values `carried` (indices into the old loop's
/// iteration arguments) and, with `counter`, the aref iteration counter
/// as a last carried value (its initial value appended to `inits`). Maps
/// the old block arguments to the new ones.
fn loop_body_with(
    func: &Function,
    out: &mut Function,
    old_body: Block,
    carried: &[usize],
    counter: Option<Value>,
    inits: &mut Vec<Value>,
    map: &mut HashMap<Value, Value>,
) -> (Block, Vec<Value>) {
    let old_args = &func.blocks[old_body].args;
    let mut arg_types = vec![func.ty(old_args[0]).clone()];
    arg_types.extend(carried.iter().map(|&j| func.ty(old_args[1 + j]).clone()));
    if let Some(c) = counter {
        inits.push(c);
        arg_types.push(out.ty(c).clone());
    }
    let new_body = out.new_block(arg_types);
    let new_args = out.blocks[new_body].args.clone();
    if counter.is_some() {
        out.set_name(*new_args.last().unwrap(), "aref_i");
    }
    map.insert(old_args[0], new_args[0]);
    copy_name(func, old_args[0], out, new_args[0]);
    for (k, &j) in carried.iter().enumerate() {
        map.insert(old_args[1 + j], new_args[1 + k]);
        copy_name(func, old_args[1 + j], out, new_args[1 + k]);
    }
    (new_body, new_args)
}

fn copy_name(func: &Function, old: Value, out: &mut Function, new: Value) {
    if let Some(n) = &func.values[old].name {
        out.set_name(new, n.clone());
    }
}

/// Clones `op` into `block` if every value it reads is mapped; an op that
/// cannot be cloned leaves its results unmapped, so ops reading them are
/// skipped too.
fn clone_if_available(
    func: &Function,
    op: Op,
    out: &mut Function,
    block: Block,
    map: &mut HashMap<Value, Value>,
) {
    let defined_inside = |v: &Value| match func.def_op(*v) {
        Some(d) => func.ops[op]
            .regions
            .iter()
            .any(|&r| ancestor_in(func, r, d).is_some()),
        None => match func.values[*v].def {
            tawa_ir::function::ValueDef::Arg(b, _) => {
                let mut cur = Some(b);
                while let Some(c) = cur {
                    if func.blocks[c].parent == Some(op) {
                        return true;
                    }
                    cur = func.blocks[c].parent.and_then(|p| func.block_of(p));
                }
                false
            }
            _ => false,
        },
    };
    if deep_operands(func, op)
        .iter()
        .all(|v| map.contains_key(v) || defined_inside(v))
    {
        clone_op(func, op, out, block, map);
    }
}

/// Clones `op` (and its regions) into `block`, mapping operands through
/// `map` and recording its results there.
fn clone_op(
    func: &Function,
    op: Op,
    out: &mut Function,
    block: Block,
    map: &mut HashMap<Value, Value>,
) -> Op {
    let data = &func.ops[op];
    let operands: Vec<Value> = data.operands.iter().map(|v| map[v]).collect();
    let mut regions = Vec::new();
    for &r in &data.regions {
        let types: Vec<Type> = func.blocks[r]
            .args
            .iter()
            .map(|&a| func.ty(a).clone())
            .collect();
        let nr = out.new_block(types);
        for (k, &a) in func.blocks[r].args.iter().enumerate() {
            let na = out.blocks[nr].args[k];
            copy_name(func, a, out, na);
            map.insert(a, na);
        }
        for &inner in &func.blocks[r].ops {
            clone_op(func, inner, out, nr, map);
        }
        regions.push(nr);
    }
    let types: Vec<Type> = data.results.iter().map(|&v| func.ty(v).clone()).collect();
    let new = out.append_op(block, data.kind.clone(), operands, types, regions, data.loc);
    for (k, &old) in data.results.iter().enumerate() {
        let nv = out.ops[new].results[k];
        copy_name(func, old, out, nv);
        map.insert(old, nv);
    }
    new
}

/// Removes the pure, region-free ops of `block` and the blocks nested in
/// it whose results nothing reads (the clones one partition does not
/// need).
fn dead_code(out: &mut Function, block: Block) {
    loop {
        let mut used: HashSet<Value> = HashSet::new();
        let mut blocks = vec![block];
        out.walk_block(block, &mut |op| {
            used.extend(out.ops[op].operands.iter().copied());
            blocks.extend(out.ops[op].regions.iter().copied());
        });
        let mut removed = false;
        for b in blocks {
            let ops = out.blocks[b].ops.clone();
            let kept: Vec<Op> = ops
                .iter()
                .copied()
                .filter(|&op| {
                    let d = &out.ops[op];
                    !((d.kind.is_pure() || is_scalar_load(out, op))
                        && d.regions.is_empty()
                        && !d.results.is_empty()
                        && d.results.iter().all(|r| !used.contains(r)))
                })
                .collect();
            removed |= kept.len() != ops.len();
            out.blocks[b].ops = kept;
        }
        if !removed {
            break;
        }
    }
}

/// `func` with only the ops reachable from its body (the builder leaves
/// the ops dead-code removal dropped in the arenas).
fn compact(func: &Function) -> Function {
    let mut out = Function::new(func.name.clone());
    out.attrs = func.attrs.clone();
    let mut map = HashMap::new();
    for p in &func.params {
        let v = out.add_param(p.name.clone(), func.ty(p.value).clone(), p.hints.clone());
        map.insert(p.value, v);
    }
    let body = out.body;
    for &op in &func.blocks[func.body].ops {
        clone_op(func, op, &mut out, body, &mut map);
    }
    out
}
