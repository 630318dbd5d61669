//! Functions, blocks, ops and values: the arena-with-typed-handles core.
//!
//! A [`Function`] owns three arenas ([`PrimaryMap`]s) — values, ops and
//! blocks — addressed by the copyable handles [`Value`], [`Op`] and
//! [`Block`]. Passes keep their facts in side tables
//! ([`cranelift_entity::SecondaryMap`]) keyed by these handles instead of
//! adding fields here. Kernel parameters are the arguments of the body block.
//! Regions are blocks owned by an op (`for`, `if`, `while`); blocks of the
//! structured IR have no branches, only terminators (`yield`, `condition`,
//! `return`).

use cranelift_entity::{entity_impl, PrimaryMap};

use crate::ops::{Loc, OpKind};
use crate::types::Type;

/// An SSA value: an op result or a block argument.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Op(u32);
entity_impl!(Op, "op");

/// A block: arguments and a list of ops.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// Where a value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ValueDef {
    /// Result `index` of `op`.
    Result(Op, u32),
    /// Argument `index` of `block` (kernel parameters are the body's).
    Arg(Block, u32),
}

#[derive(Clone, PartialEq, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    /// Source-level name (a Python variable), used by the printer.
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, Debug)]
pub struct OpData {
    pub kind: OpKind,
    pub operands: Vec<Value>,
    pub results: Vec<Value>,
    pub regions: Vec<Block>,
    pub loc: Loc,
}

#[derive(Clone, PartialEq, Debug, Default)]
pub struct BlockData {
    pub args: Vec<Value>,
    pub ops: Vec<Op>,
    /// The op whose region this block is; `None` for the function body.
    pub parent: Option<Op>,
}

/// Facts about a kernel parameter from the signature: Triton's `*fp16:16`
/// (pointer aligned to 16 bytes) and `i32:16` (integer divisible by 16).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ParamHints {
    /// For pointers: byte alignment. For integers: divisibility.
    pub divisibility: Option<u32>,
}

/// A kernel parameter: a body block argument with a name and hints.
#[derive(Clone, PartialEq, Debug)]
pub struct Param {
    pub name: String,
    pub value: Value,
    pub hints: ParamHints,
}

/// What the persistent pass leaves in a kernel it made persistent: its
/// tile loop and, per axis of the source's grid, the value that stands
/// for that axis's program id inside it (the tile's coordinate; `None`
/// for an axis the kernel never reads). Passes that reason about which
/// program reads what (`read_once`) take the program ids from here.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TileIds {
    pub tile_loop: Op,
    pub ids: [Option<Value>; 3],
}

/// Function-level attributes: launch configuration and the constexpr
/// bindings the function was specialized on (kept for readers and caches).
#[derive(Clone, PartialEq, Debug)]
pub struct FuncAttrs {
    pub num_warps: u32,
    pub num_stages: u32,
    /// `tl.constexpr` parameters and their values as Python would write
    /// them (`64`, `'leaky_relu'`, `tl.float16`), in source order. Only for
    /// readers and compile caches: the IR already has them folded in.
    pub constexprs: Vec<(String, String)>,
    /// A persistent kernel's launch contract: the parameter (an `i32`)
    /// that receives the x size of the grid the kernel was launched for.
    /// The kernel strides over that many tiles itself, so the launcher may
    /// start fewer programs along x (one per SM), never zero.
    pub grid_param: Option<String>,
    /// With `grid_param`, for a kernel written for a grid over x and y:
    /// the parameter that receives the y size. The kernel walks the x * y
    /// tiles itself (x fastest), so the launcher starts a one-axis grid of
    /// at most one program per SM.
    pub grid_param_y: Option<String>,
    /// With `grid_param_y`, for a kernel written for a grid over x, y and
    /// z (batched and split-K GEMMs): the parameter that receives the z
    /// size; the kernel walks the x * y * z tiles (x fastest, z slowest).
    pub grid_param_z: Option<String>,
    /// CTAs per thread-block cluster along x: 1 (no clusters), or 2 for a
    /// persistent kernel whose pairs of programs share TMA copies
    /// (`tawa_pipeliner::tma_multicast`): the launcher starts an even
    /// number of programs in clusters of 2, and program `2c + r` is the
    /// cluster's CTA of rank `r`.
    pub cluster: u32,
    /// A persistent kernel whose programs may run in CTA pairs that split
    /// each tile's K loop (`tawa_pipeliner::cluster_split_k`): where the
    /// tiles fill at most half the programs the device holds, the
    /// launcher starts two programs a tile in clusters of 2 (else the
    /// usual persistent grid, without clusters). The kernel tells the
    /// two apart by its program count (`num_programs x >= 2 * tiles`):
    /// pair `p` of program `2p + r` walks the tiles, rank `r` runs the K
    /// steps `r, r + 2, ...`, and `cluster.sum` brings rank 1's partial
    /// sums to rank 0, which alone runs the epilogue. Rings are each
    /// CTA's own.
    pub cluster_split_k: bool,
    /// A persistent kernel whose programs share the last tiles' K loops
    /// (`tawa_pipeliner::stream_k`): the tiles past the last whole wave
    /// are cut into equal runs of K steps, one run a program, and a
    /// tile's partial sums meet at the program that runs its first K
    /// step (`stream_k.put` / `stream_k.take`, through a workspace the
    /// launcher passes). A program waits only for programs of higher x,
    /// which the interpreter therefore runs first.
    pub stream_k: bool,
    /// Blocks of this kernel one SM is to hold at once (CUDA's
    /// `__launch_bounds__` minimum): 1 unless the pipeliner's `occupancy`
    /// pass found that a second warp-specialized block fits beside the
    /// first in shared memory and registers. A persistent kernel's
    /// launcher starts this many programs per SM.
    pub occupancy: u32,
    /// A kernel that walks its tiles itself (`for t in range(pid, T, C)`)
    /// with the step made a parameter (`tawa_pipeliner::own_walk`): the
    /// parameter (an `i32`) that receives the step, and `C`, the step the
    /// source wrote. The launcher passes `C` and starts the grid asked
    /// for, or, for a grid of exactly `C` programs, starts fewer programs
    /// and passes their count: each tile is still walked once.
    pub walk_step: Option<(String, u32)>,
    /// The source calls `tl.extra.cuda.gdc_wait` or
    /// `gdc_launch_dependents`: it was written to be launched as a
    /// programmatic dependent of the kernel before it. The calls leave no
    /// op: a kernel launched so waits at its entry, before any global
    /// memory access, which covers the source's own wait wherever it is.
    pub programmatic_launch_asked: bool,
    /// Mixed copies (`tawa_pipeliner::mixed_copies`): in an `aref.put`
    /// of two or more TMA tiles, the smallest tile is copied by the
    /// producer's threads (`cp.async`) wherever its box lies inside the
    /// tensor, and by TMA (which zero-fills) where it does not, so that
    /// the SM's load units and its TMA unit share the slot's bytes
    /// ([`Function::thread_copied`] says which tile).
    pub mixed_copies: bool,
}

impl Default for FuncAttrs {
    fn default() -> Self {
        FuncAttrs {
            num_warps: 4,
            num_stages: 3,
            constexprs: Vec::new(),
            grid_param: None,
            grid_param_y: None,
            grid_param_z: None,
            cluster: 1,
            cluster_split_k: false,
            stream_k: false,
            occupancy: 1,
            walk_step: None,
            programmatic_launch_asked: false,
            mixed_copies: false,
        }
    }
}

/// Threads of the producer partition that copy a mixed copy's tile
/// ([`Function::thread_copied`]): one warpgroup.
pub const MIXED_COPY_THREADS: u32 = 128;

/// One specialized kernel.
#[derive(Clone, PartialEq, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub attrs: FuncAttrs,
    pub values: PrimaryMap<Value, ValueData>,
    pub ops: PrimaryMap<Op, OpData>,
    pub blocks: PrimaryMap<Block, BlockData>,
    /// The body; its arguments are the parameters' values.
    pub body: Block,
}

/// A compilation unit: the kernels compiled from one source file.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Module {
    /// Source file the kernels came from (for diagnostics and comments).
    pub source_file: Option<String>,
    pub functions: Vec<Function>,
}

impl Function {
    /// A function with an empty body and no parameters.
    pub fn new(name: impl Into<String>) -> Function {
        let mut blocks = PrimaryMap::new();
        let body = blocks.push(BlockData::default());
        Function {
            name: name.into(),
            params: Vec::new(),
            attrs: FuncAttrs::default(),
            values: PrimaryMap::new(),
            ops: PrimaryMap::new(),
            blocks,
            body,
        }
    }

    /// Appends a parameter (a new body argument).
    pub fn add_param(&mut self, name: impl Into<String>, ty: Type, hints: ParamHints) -> Value {
        let name = name.into();
        let value = self.add_block_arg(self.body, ty, Some(name.clone()));
        self.params.push(Param { name, value, hints });
        value
    }

    /// A new detached block (a region for an op yet to be created) with
    /// arguments of the given types.
    pub fn new_block(&mut self, arg_types: Vec<Type>) -> Block {
        let block = self.blocks.push(BlockData::default());
        for ty in arg_types {
            self.add_block_arg(block, ty, None);
        }
        block
    }

    /// Appends an argument to `block`.
    pub fn add_block_arg(&mut self, block: Block, ty: Type, name: Option<String>) -> Value {
        let index = self.blocks[block].args.len() as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Arg(block, index),
            name,
        });
        self.blocks[block].args.push(v);
        v
    }

    /// Creates an op with results of `result_types` and owning `regions`
    /// (whose `parent` is set), without placing it in a block.
    pub fn create_op(
        &mut self,
        kind: OpKind,
        operands: Vec<Value>,
        result_types: Vec<Type>,
        regions: Vec<Block>,
        loc: Loc,
    ) -> Op {
        let op = self.ops.push(OpData {
            kind,
            operands,
            results: Vec::new(),
            regions: regions.clone(),
            loc,
        });
        for (i, ty) in result_types.into_iter().enumerate() {
            let v = self.values.push(ValueData {
                ty,
                def: ValueDef::Result(op, i as u32),
                name: None,
            });
            self.ops[op].results.push(v);
        }
        for r in regions {
            self.blocks[r].parent = Some(op);
        }
        op
    }

    /// Creates an op and appends it to `block`.
    pub fn append_op(
        &mut self,
        block: Block,
        kind: OpKind,
        operands: Vec<Value>,
        result_types: Vec<Type>,
        regions: Vec<Block>,
        loc: Loc,
    ) -> Op {
        let op = self.create_op(kind, operands, result_types, regions, loc);
        self.blocks[block].ops.push(op);
        op
    }

    /// Creates an op and inserts it into `block` at position `index` (an
    /// index equal to the block's length appends).
    #[allow(clippy::too_many_arguments)]
    pub fn insert_op(
        &mut self,
        block: Block,
        index: usize,
        kind: OpKind,
        operands: Vec<Value>,
        result_types: Vec<Type>,
        regions: Vec<Block>,
        loc: Loc,
    ) -> Op {
        let op = self.create_op(kind, operands, result_types, regions, loc);
        self.blocks[block].ops.insert(index, op);
        op
    }

    /// Appends a result of type `ty` to `op` (for passes that widen a
    /// loop's carried values).
    pub fn add_result(&mut self, op: Op, ty: Type) -> Value {
        let index = self.ops[op].results.len() as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Result(op, index),
            name: None,
        });
        self.ops[op].results.push(v);
        v
    }

    /// Replaces every use of `old` by `new`, except in the ops of `keep`.
    pub fn replace_uses(&mut self, old: Value, new: Value, keep: &[Op]) {
        for (op, data) in self.ops.iter_mut() {
            if keep.contains(&op) {
                continue;
            }
            for o in &mut data.operands {
                if *o == old {
                    *o = new;
                }
            }
        }
    }

    /// Appends a one-result op to `block` and returns its result.
    /// [`Function::insert_op`] of a one-result op without regions: the
    /// result, as [`Function::append_value`] gives it at a block's end.
    pub fn insert_value(
        &mut self,
        block: Block,
        index: usize,
        kind: OpKind,
        operands: Vec<Value>,
        result_type: Type,
        loc: Loc,
    ) -> Value {
        let op = self.insert_op(block, index, kind, operands, vec![result_type], vec![], loc);
        self.ops[op].results[0]
    }

    pub fn append_value(
        &mut self,
        block: Block,
        kind: OpKind,
        operands: Vec<Value>,
        result_type: Type,
        loc: Loc,
    ) -> Value {
        let op = self.append_op(block, kind, operands, vec![result_type], vec![], loc);
        self.ops[op].results[0]
    }

    pub fn ty(&self, v: Value) -> &Type {
        &self.values[v].ty
    }

    /// Result `i` of `op`.
    pub fn result(&self, op: Op, i: usize) -> Value {
        self.ops[op].results[i]
    }

    /// The op defining `v`, if it is an op result.
    pub fn def_op(&self, v: Value) -> Option<Op> {
        match self.values[v].def {
            ValueDef::Result(op, _) => Some(op),
            ValueDef::Arg(..) => None,
        }
    }

    /// The block an op sits in (searching the parent chain of regions).
    /// Linear in the number of blocks; analyses that need it often should
    /// build a side table.
    pub fn block_of(&self, op: Op) -> Option<Block> {
        self.blocks
            .iter()
            .find(|(_, b)| b.ops.contains(&op))
            .map(|(b, _)| b)
    }

    /// Calls `f` on every op reachable from the body, in program order,
    /// entering regions right after their op (pre-order).
    pub fn walk(&self, f: &mut impl FnMut(Op)) {
        self.walk_block(self.body, f)
    }

    /// Pre-order walk of the ops of `block` and their regions.
    pub fn walk_block(&self, block: Block, f: &mut impl FnMut(Op)) {
        for &op in &self.blocks[block].ops {
            f(op);
            for &r in &self.ops[op].regions {
                self.walk_block(r, f);
            }
        }
    }

    /// The pointer parameter that pointer value `v` (a pointer, a tile of
    /// pointers, a block pointer or a descriptor) addresses from: the
    /// first operand through pointer arithmetic, shape changes and hints,
    /// down to a parameter; `None` when it comes from anything else (a
    /// loaded pointer, a loop-carried one).
    pub fn pointer_root(&self, v: Value) -> Option<Value> {
        if self.params.iter().any(|p| p.value == v) {
            return Some(v);
        }
        let data = &self.ops[self.def_op(v)?];
        match data.kind {
            OpKind::AddPtr
            | OpKind::Splat
            | OpKind::Broadcast
            | OpKind::ExpandDims { .. }
            | OpKind::Reshape
            | OpKind::Trans { .. }
            | OpKind::Hint { .. }
            | OpKind::MakeBlockPtr { .. }
            | OpKind::Advance
            | OpKind::MakeTensorDesc => self.pointer_root(*data.operands.first()?),
            _ => None,
        }
    }

    /// The first op that may read what `op` wrote through pointer
    /// parameter `written` and runs after it in program order: a load or
    /// an atomic later in `op`'s block or in an enclosing one (regions
    /// included; not a later iteration of an enclosing loop) whose
    /// pointer does not come from another parameter (kernel arguments
    /// are distinct tensors). Its location, or `None`.
    pub fn read_after(&self, op: Op, written: Value) -> Option<Loc> {
        let may_read = |o: Op| {
            let data = &self.ops[o];
            let reads = matches!(
                data.kind,
                OpKind::Load { .. }
                    | OpKind::DescLoad { .. }
                    | OpKind::AtomicRmw { .. }
                    | OpKind::AtomicCas { .. }
            );
            reads
                && data
                    .operands
                    .first()
                    .and_then(|&p| self.pointer_root(p))
                    .is_none_or(|root| root == written)
        };
        let mut at = op;
        while let Some(block) = self.block_of(at) {
            let ops = &self.blocks[block].ops;
            let after = ops
                .iter()
                .position(|&o| o == at)
                .map_or(ops.len(), |i| i + 1);
            let mut found = None;
            for &later in &ops[after..] {
                let mut visit = |o: Op| {
                    if found.is_none() && may_read(o) {
                        found = Some(self.ops[o].loc);
                    }
                };
                visit(later);
                for &region in &self.ops[later].regions {
                    self.walk_block(region, &mut visit);
                }
            }
            if found.is_some() {
                return found;
            }
            at = self.blocks[block].parent?;
        }
        None
    }

    /// Clones `op`, with its regions, to the end of `block`. Operands are
    /// read through `map` (a value missing from it is used as it is: it is
    /// defined outside what is being cloned); the clone's results and its
    /// regions' arguments are recorded in `map` under the originals, and
    /// keep their source names.
    pub fn clone_op(
        &mut self,
        op: Op,
        block: Block,
        map: &mut std::collections::HashMap<Value, Value>,
    ) -> Op {
        let data = self.ops[op].clone();
        let operands = data
            .operands
            .iter()
            .map(|v| map.get(v).copied().unwrap_or(*v))
            .collect();
        let mut regions = Vec::new();
        for &r in &data.regions {
            let args = self.blocks[r].args.clone();
            let types = args.iter().map(|&a| self.ty(a).clone()).collect();
            let nr = self.new_block(types);
            for (k, &a) in args.iter().enumerate() {
                let na = self.blocks[nr].args[k];
                self.values[na].name = self.values[a].name.clone();
                map.insert(a, na);
            }
            for inner in self.blocks[r].ops.clone() {
                self.clone_op(inner, nr, map);
            }
            regions.push(nr);
        }
        let types = data.results.iter().map(|&v| self.ty(v).clone()).collect();
        let new = self.append_op(block, data.kind, operands, types, regions, data.loc);
        for (k, &old) in data.results.iter().enumerate() {
            let nv = self.ops[new].results[k];
            self.values[nv].name = self.values[old].name.clone();
            map.insert(old, nv);
        }
        new
    }

    /// The partitions of `ws` op `ws` that take turns with each other as
    /// whole partitions (tile ping-pong: one consumer warpgroup per tile,
    /// two on alternate tiles): its partitions of one warpgroup (4 warps)
    /// that have turn ops, in order, when there are two or more; empty
    /// otherwise. They take turns in that order, the first one first, and
    /// an aref they get from is *dealt* between them: each iteration is got
    /// and released by exactly one of them (`tawa-aref` docs). A partition
    /// of several warpgroups takes turns among its own warpgroups instead.
    pub fn turn_partitions(&self, ws: Op) -> Vec<usize> {
        let OpKind::WarpSpecialize { partitions } = &self.ops[ws].kind else {
            return Vec::new();
        };
        let takers: Vec<usize> = partitions
            .iter()
            .zip(&self.ops[ws].regions)
            .enumerate()
            .filter(|(_, (p, &region))| {
                let mut turns = false;
                self.walk_block(region, &mut |o| turns |= self.ops[o].kind.is_turn());
                p.num_warps == 4 && turns
            })
            .map(|(i, _)| i)
            .collect();
        if takers.len() >= 2 {
            takers
        } else {
            Vec::new()
        }
    }

    /// The tiles an `aref.put` writes: its operands after the aref and
    /// the iteration, up to the aref's buffer count (the multicast
    /// predicates of a clustered put, [`Function::put_multicast`], follow).
    pub fn put_values(&self, put: Op) -> &[Value] {
        let ops = &self.ops[put].operands;
        let n = self.aref_buffers(put).min(ops.len().saturating_sub(2));
        &ops[2.min(ops.len())..2 + n]
    }

    /// The multicast predicates of an `aref.put` in a kernel launched in
    /// clusters of 2: one `i1` per tile, true where both CTAs of the
    /// cluster copy that tile from the same coordinates this iteration,
    /// so that each issues half of it into both CTAs' slots. `None` for a
    /// put without them.
    pub fn put_multicast(&self, put: Op) -> Option<&[Value]> {
        let ops = &self.ops[put].operands;
        let n = self.aref_buffers(put);
        (n > 0 && ops.len() == 2 + 2 * n).then(|| &ops[2 + n..])
    }

    /// The tile of `aref.put` op `put` (an index into
    /// [`Function::put_values`]) that the producer's threads copy under
    /// [`FuncAttrs::mixed_copies`] ([`Function::mixed_copy_tile`]); `None`
    /// without mixed copies.
    pub fn thread_copied(&self, put: Op) -> Option<usize> {
        self.attrs
            .mixed_copies
            .then(|| self.mixed_copy_tile(put))
            .flatten()
    }

    /// The tile of `put` that mixed copies would give the producer's
    /// threads: of a put of two or more tiles, each a 2-D `desc_load` (no
    /// multicast), the one of fewest bytes (the first of a tie), where its
    /// descriptor is a 2-D `make_tensor_desc` and its 16-byte chunks deal
    /// out evenly to [`MIXED_COPY_THREADS`] threads in whole rows (the
    /// backend's copy). `None` for any other put.
    pub fn mixed_copy_tile(&self, put: Op) -> Option<usize> {
        if self.put_multicast(put).is_some() {
            return None;
        }
        let values = self.put_values(put);
        if values.len() < 2 {
            return None;
        }
        let mut best: Option<(usize, u64)> = None;
        for (j, &v) in values.iter().enumerate() {
            let load = self.def_op(v)?;
            let data = &self.ops[load];
            if !matches!(data.kind, OpKind::DescLoad { .. }) || data.operands.len() != 3 {
                return None;
            }
            let bytes = self.ty(v).data_bytes().unwrap_or(0);
            if best.is_none_or(|(_, b)| bytes < b) {
                best = Some((j, bytes));
            }
        }
        let (j, _) = best?;
        let data = &self.ops[self.def_op(values[j])?];
        let desc = self.def_op(data.operands[0]).map(|d| &self.ops[d])?;
        let ty = self.ty(values[j]);
        let eb = ty.scalar_type().map_or(0, |s| s.byte_size());
        let (&[rows, cols], true) = (ty.shape(), eb > 0 && 16u32.is_multiple_of(eb)) else {
            return None;
        };
        let row_chunks = cols * eb / 16;
        let whole = (cols * eb).is_multiple_of(16)
            && row_chunks > 0
            && (rows * row_chunks).is_multiple_of(MIXED_COPY_THREADS)
            && MIXED_COPY_THREADS.is_multiple_of(row_chunks);
        (matches!(desc.kind, OpKind::MakeTensorDesc) && desc.operands.len() == 5 && whole)
            .then_some(j)
    }

    /// The `i1` of an `aref.consumed` in a kernel launched in clusters of
    /// 2: whether the peer CTA has a tile this round (its producer then
    /// waits for this release too). `None` for a release without it.
    pub fn consumed_peer(&self, consumed: Op) -> Option<Value> {
        let ops = &self.ops[consumed].operands;
        (ops.len() == 3).then(|| ops[2])
    }

    /// Buffers of the aref an aref op names (0 when operand 0 is not an
    /// aref).
    fn aref_buffers(&self, op: Op) -> usize {
        match self.ops[op].operands.first().map(|&r| self.ty(r)) {
            Some(Type::Aref { buffers, .. }) => buffers.len(),
            _ => 0,
        }
    }

    /// Sets the source name of a value (for printing).
    pub fn set_name(&mut self, v: Value, name: impl Into<String>) {
        self.values[v].name = Some(name.into());
    }
}
