//! Operations of the tile IR. They mirror Triton's TTIR (and the `arith`,
//! `math` and `scf` ops it uses) closely enough that a reader of Triton's
//! dumps recognises them.
//!
//! An op is an [`OpKind`] (what it does, with its static attributes) plus
//! operands, results and regions stored in [`crate::OpData`]. The operand
//! conventions of each kind are documented on the variant; the verifier
//! checks them.

/// Grid axis of `program_id` / `num_programs`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
    pub fn from_index(i: i64) -> Option<Axis> {
        match i {
            0 => Some(Axis::X),
            1 => Some(Axis::Y),
            2 => Some(Axis::Z),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        ["x", "y", "z"][self.index()]
    }
}

/// A compile-time constant. Floats keep their exact bits so that the text
/// format round-trips (printed with Rust's shortest round-trip formatting).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum ConstValue {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Eq for ConstValue {}
impl std::hash::Hash for ConstValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            ConstValue::Int(i) => (0u8, *i).hash(state),
            ConstValue::Float(f) => (1u8, f.to_bits()).hash(state),
            ConstValue::Bool(b) => (2u8, *b).hash(state),
        }
    }
}

/// Two-operand elementwise arithmetic. Operands and result have one type
/// (scalar or tile); signedness comes from the element type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Float division (`/` on floats, `tl.fdiv`): Triton's, not correctly
    /// rounded on NVIDIA GPUs (`div.full.f32`, 2 ulp) for f32.
    Div,
    /// Correctly rounded float division (`tl.div_rn`, `tl.fdiv(...,
    /// ieee_rounding=True)`).
    DivRn,
    /// Integer division, truncating toward zero (C semantics, as Triton's `//`
    /// on tensors lowers to `arith.divsi`/`divui`).
    IDiv,
    /// Remainder: integer with the dividend's sign (C `%`), float `fmod`.
    Rem,
    And,
    Or,
    Xor,
    Shl,
    /// Arithmetic shift for signed, logical for unsigned element types.
    Shr,
    /// `tl.maximum` / `tl.minimum`; for floats NaN is not propagated
    /// (`propagate_nan=NONE`, i.e. `maxnum`), as Triton's default.
    Max,
    Min,
    /// `libdevice.pow` (floats).
    Pow,
    /// `libdevice.atan2` (floats).
    Atan2,
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 16] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::DivRn,
        BinaryOp::IDiv,
        BinaryOp::Rem,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Xor,
        BinaryOp::Shl,
        BinaryOp::Shr,
        BinaryOp::Max,
        BinaryOp::Min,
        BinaryOp::Pow,
        BinaryOp::Atan2,
    ];
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::DivRn => "div_rn",
            BinaryOp::IDiv => "idiv",
            BinaryOp::Rem => "rem",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
            BinaryOp::Shl => "shl",
            BinaryOp::Shr => "shr",
            BinaryOp::Max => "max",
            BinaryOp::Min => "min",
            BinaryOp::Pow => "pow",
            BinaryOp::Atan2 => "atan2",
        }
    }
}

/// One-operand elementwise functions. Operand and result have one type, except
/// `IsNan`/`IsInf`, whose result element type is `i1`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    Neg,
    /// Bitwise not (`~x`); on `i1` this is logical not.
    Not,
    Abs,
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tan,
    Tanh,
    Erf,
    Floor,
    Ceil,
    /// Round half to even (`libdevice.rint`).
    Rint,
    Trunc,
    Log1p,
    Expm1,
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
    Cbrt,
    IsNan,
    IsInf,
}

impl UnaryOp {
    pub const ALL: [UnaryOp; 28] = [
        UnaryOp::Neg,
        UnaryOp::Not,
        UnaryOp::Abs,
        UnaryOp::Exp,
        UnaryOp::Exp2,
        UnaryOp::Log,
        UnaryOp::Log2,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Tanh,
        UnaryOp::Erf,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Rint,
        UnaryOp::Trunc,
        UnaryOp::Log1p,
        UnaryOp::Expm1,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Asin,
        UnaryOp::Acos,
        UnaryOp::Atan,
        UnaryOp::Cbrt,
        UnaryOp::IsNan,
        UnaryOp::IsInf,
    ];
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Not => "not",
            UnaryOp::Abs => "abs",
            UnaryOp::Exp => "exp",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Log => "log",
            UnaryOp::Log2 => "log2",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Erf => "erf",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Rint => "rint",
            UnaryOp::Trunc => "trunc",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Sinh => "sinh",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Asin => "asin",
            UnaryOp::Acos => "acos",
            UnaryOp::Atan => "atan",
            UnaryOp::Cbrt => "cbrt",
            UnaryOp::IsNan => "isnan",
            UnaryOp::IsInf => "isinf",
        }
    }
    /// Whether the op is only defined on floats.
    pub fn float_only(self) -> bool {
        !matches!(self, UnaryOp::Neg | UnaryOp::Not | UnaryOp::Abs)
    }
}

/// Comparison predicate; signed/unsigned/float comparison follows the operand
/// element type. Float comparisons are ordered (false on NaN) except `Ne`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpPred {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpPred {
    pub const ALL: [CmpPred; 6] = [
        CmpPred::Eq,
        CmpPred::Ne,
        CmpPred::Lt,
        CmpPred::Le,
        CmpPred::Gt,
        CmpPred::Ge,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CmpPred::Eq => "eq",
            CmpPred::Ne => "ne",
            CmpPred::Lt => "lt",
            CmpPred::Le => "le",
            CmpPred::Gt => "gt",
            CmpPred::Ge => "ge",
        }
    }
}

/// Rounding of a float-to-narrower-float cast (`fp_downcast_rounding`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Rounding {
    /// Round to nearest, ties to even (the default).
    #[default]
    Rtne,
    /// Round toward zero.
    Rtz,
}

/// `cache_modifier=` of loads and stores.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CacheModifier {
    #[default]
    None,
    /// `.ca`: cache at all levels.
    Ca,
    /// `.cg`: cache in L2 only.
    Cg,
    /// `.cs`: streaming.
    Cs,
    /// `.wb`: write back (stores).
    Wb,
    /// `.wt`: write through (stores).
    Wt,
    /// `.cv`: volatile, fetch again.
    Cv,
}

/// `eviction_policy=` of loads and stores.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum EvictionPolicy {
    #[default]
    Normal,
    EvictFirst,
    EvictLast,
}

/// `padding_option=` of block-pointer loads: what out-of-bounds elements read.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Padding {
    /// Unspecified: out-of-bounds elements are undefined (the interpreter
    /// reads zero).
    #[default]
    None,
    Zero,
    Nan,
}

/// `input_precision=` of `tl.dot`, which matters for f32 operands.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum InputPrecision {
    /// Operands rounded to tf32 (10-bit mantissa); Triton's default for f32.
    #[default]
    Tf32,
    /// Three tf32 products, about f32 accuracy.
    Tf32x3,
    /// Full IEEE f32.
    Ieee,
}

/// Reductions along one axis (`tl.sum`, `tl.max`, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ReduceKind {
    Sum,
    Prod,
    Max,
    Min,
    /// Index (i32) of the largest element; ties pick the lowest index.
    Argmax,
    /// Index (i32) of the smallest element; ties pick the lowest index.
    Argmin,
    And,
    Or,
    Xor,
}

impl ReduceKind {
    pub const ALL: [ReduceKind; 9] = [
        ReduceKind::Sum,
        ReduceKind::Prod,
        ReduceKind::Max,
        ReduceKind::Min,
        ReduceKind::Argmax,
        ReduceKind::Argmin,
        ReduceKind::And,
        ReduceKind::Or,
        ReduceKind::Xor,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Prod => "prod",
            ReduceKind::Max => "max",
            ReduceKind::Min => "min",
            ReduceKind::Argmax => "argmax",
            ReduceKind::Argmin => "argmin",
            ReduceKind::And => "and",
            ReduceKind::Or => "or",
            ReduceKind::Xor => "xor",
        }
    }
}

/// Inclusive scans along one axis (`tl.cumsum`, `tl.cumprod`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ScanKind {
    Sum,
    Prod,
}

/// Read-modify-write atomics (`tl.atomic_add`, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomicOp {
    Add,
    Max,
    Min,
    And,
    Or,
    Xor,
    Xchg,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 7] = [
        AtomicOp::Add,
        AtomicOp::Max,
        AtomicOp::Min,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Xchg,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Max => "max",
            AtomicOp::Min => "min",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
            AtomicOp::Xchg => "xchg",
        }
    }
}

/// Memory ordering of atomics (`sem=`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum MemSem {
    Relaxed,
    Acquire,
    Release,
    #[default]
    AcqRel,
}

/// Scope of atomics (`scope=`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum MemScope {
    #[default]
    Gpu,
    Cta,
    Sys,
}

/// Attributes of a `for` loop: `tl.range(..., num_stages=, loop_unroll_factor=,
/// disallow_acc_multi_buffer=, flatten=, warp_specialize=)`. Kept verbatim for
/// the pipeliner; `None`/`false` when not given.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct LoopAttrs {
    pub num_stages: Option<u32>,
    pub loop_unroll_factor: Option<u32>,
    pub disallow_acc_multi_buffer: bool,
    pub flatten: bool,
    pub warp_specialize: bool,
}

/// One partition of a `ws` op: a group of warpgroups running one role of a
/// warp-specialized kernel (`partition producer (num_warps = 4, regs = 40)`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Partition {
    /// What the partition does (`producer`, `consumer`); unique in its op.
    pub role: String,
    /// Warps running the region: whole warpgroups, a multiple of 4.
    pub num_warps: u32,
    /// Per-thread register budget set with `setmaxnreg` on entry (24..=256,
    /// a multiple of 8); `None` keeps the kernel's.
    pub regs: Option<u32>,
}

/// What an op does. Operand order is fixed per kind (documented on each
/// variant); optional operands are announced by a flag in the variant so that
/// operand positions never need guessing.
#[derive(Clone, PartialEq, Debug)]
pub enum OpKind {
    /// `() -> T`: a scalar constant, or a tile with every element equal.
    Constant(ConstValue),
    /// `() -> i32`: `tl.program_id(axis)`.
    ProgramId(Axis),
    /// `() -> i32`: `tl.num_programs(axis)`.
    NumPrograms(Axis),
    /// `() -> tensor<(end-start)xi32>`: `tl.arange(start, end)`.
    MakeRange { start: i32, end: i32 },

    /// `(scalar) -> tensor`: every element equal to the scalar.
    Splat,
    /// `(tensor) -> tensor` of the same rank; dimensions of size 1 grow.
    Broadcast,
    /// `(tensor) -> tensor` with a new dimension of size 1 at `axis`.
    ExpandDims { axis: u32 },
    /// `(tensor) -> tensor` with the same element count, row-major order.
    Reshape,
    /// `(tensor) -> tensor`, result dim `i` is operand dim `perm[i]`.
    Trans { perm: Vec<u32> },
    /// `(a: T, b: T) -> tensor` of `T`'s shape with a new last dimension of
    /// size 2 holding `a` then `b` (`tl.join`; scalars give `tensor<2x..>`).
    Join,
    /// `(tensor<...x2>) -> (T, T)`: the two halves of the last dimension
    /// (`tl.split`), the inverse of `Join`.
    Split,

    /// `(T, T) -> T`.
    Binary(BinaryOp),
    /// `(T) -> T` (`IsNan`/`IsInf`: element type `i1`).
    Unary(UnaryOp),
    /// `(a, b, c) -> T`: `a * b + c` with one rounding (`tl.fma`).
    Fma,
    /// `(T, T) -> T with i1 elements`.
    Cmp(CmpPred),
    /// `(cond: i1, a: T, b: T) -> T`: `tl.where`. `cond` may be a scalar.
    Select,
    /// `(T) -> U`: numeric conversion between any element types of the same
    /// shape (int↔float, widening, narrowing with `rounding`), pointer ↔ i64.
    Cast { rounding: Rounding },
    /// `(T) -> U`: reinterpret bits; element types of equal width.
    Bitcast,

    /// `(ptr, offset: int) -> ptr`: `ptr + offset * sizeof(pointee)`.
    AddPtr,
    /// `(ptr, [mask: i1], [other]) -> value`. With a block pointer operand,
    /// `boundary_check` lists the dimensions checked against the tensor's
    /// shape and `padding` says what out-of-bounds elements read.
    Load {
        has_mask: bool,
        has_other: bool,
        boundary_check: Vec<u32>,
        padding: Padding,
        cache: CacheModifier,
        evict: EvictionPolicy,
        volatile: bool,
    },
    /// `(ptr, value, [mask: i1]) -> ()`; block pointers as for `Load`.
    Store {
        has_mask: bool,
        boundary_check: Vec<u32>,
        cache: CacheModifier,
        evict: EvictionPolicy,
    },
    /// `(a: MxK, b: KxN, acc: MxN) -> MxN`: `a @ b + acc`, products summed in
    /// the accumulator's type (f32 for f16/bf16/f8 operands).
    ///
    /// `is_async` (printed `{async}`; the pipeliner sets it): the product is
    /// issued as one asynchronous tensor-core group (WGMMA) and is *in
    /// flight* until a [`OpKind::DotWait`] retires it. While in flight, its
    /// operands (shared-memory slot views) may still be read and its result
    /// may only be the accumulator of a later async `dot`, a `dot_wait`
    /// operand or a `yield` (verifier rule 12). A plain `dot` waits for
    /// every group of its partition, its own included.
    Dot {
        input_precision: InputPrecision,
        max_num_imprecise_acc: Option<u32>,
        is_async: bool,
    },
    /// `(values...) -> (values...)`, results equal to the operands:
    /// `wgmma.wait_group pending`. Waits until at most `pending` async
    /// `dot` groups that this partition issued are still in flight (the
    /// newest ones); older groups have retired, so their results are
    /// complete and their operands are no longer read. The operands are the
    /// in-flight accumulators the wait makes usable (with `pending = 0`
    /// every one; with more, they stay in flight — rule 12).
    DotWait { pending: u32 },
    /// `(tensor) -> tensor` with `axis` removed (a scalar when the operand is
    /// 1-D). `Argmax`/`Argmin` give i32 indices.
    Reduce { kind: ReduceKind, axis: u32 },
    /// `(tensor) -> tensor` of the same type: inclusive scan along `axis`.
    Scan {
        kind: ScanKind,
        axis: u32,
        reverse: bool,
    },

    /// `(base: ptr, shape x rank: i64, strides x rank: i64, offsets x rank:
    /// i32) -> block_ptr`: `tl.make_block_ptr`. `order` is kept for layouts.
    MakeBlockPtr { order: Vec<u32> },
    /// `(block_ptr, offsets x rank: i32) -> block_ptr`: `tl.advance`.
    Advance,
    /// `(base: ptr, shape x rank: i32/i64, strides x rank: i64) ->
    /// tensordesc`: `tl.make_tensor_descriptor`; the block shape is in the
    /// result type. Also what a host-side `TensorDescriptor` parameter becomes.
    MakeTensorDesc,
    /// `(desc, offsets x rank: i32) -> tensor`: `desc.load([...])`;
    /// out-of-bounds elements read zero. `read_once` is a fact the
    /// `read_once` pass proves, for the backend's L2 policy (`None`: not
    /// known): no element this op reads is read again by it, in another
    /// iteration or another program of the launch, provided the grid has
    /// one program along each listed axis (the axes its coordinates do
    /// not tell apart; none listed: always).
    DescLoad { read_once: Option<Vec<Axis>> },
    /// `(desc, value, offsets x rank: i32) -> ()`: `desc.store([...], v)`;
    /// out-of-bounds elements are not written.
    DescStore,

    /// `(ptr, value, [mask]) -> old value`.
    AtomicRmw {
        op: AtomicOp,
        sem: MemSem,
        scope: MemScope,
        has_mask: bool,
    },
    /// `(ptr, cmp, value) -> old value`.
    AtomicCas { sem: MemSem, scope: MemScope },

    /// `(T) -> T`, identity: `tl.multiple_of` / `tl.max_contiguous` /
    /// `tl.max_constancy` facts about the value, per dimension (one entry for
    /// a scalar).
    Hint {
        multiple_of: Vec<u32>,
        max_contiguous: Vec<u32>,
        max_constancy: Vec<u32>,
    },

    /// `(lb, ub, step, inits...) -> (results...)`; one region whose block
    /// takes `(iv, iter_args...)` and ends in `Yield(next iter_args...)`.
    /// Bounds and step are integers of one type; the loop runs while
    /// `iv < ub` (Triton ranges with positive steps).
    For(LoopAttrs),
    /// `(cond: i1) -> (results...)`; two regions (then, else) with no block
    /// arguments, each ending in `Yield(results...)`.
    If,
    /// `(inits...) -> (results...)`; region 0 ("before") takes the carried
    /// values and ends in `Condition(cond, forwarded...)`; region 1 ("after")
    /// takes the forwarded values and ends in `Yield(next carried...)`.
    /// Results are the forwarded values when `cond` is false.
    While,
    /// Terminator of `For`/`If`/`While` regions.
    Yield,
    /// `(cond: i1, forwarded...)`: terminator of a `While`'s before region.
    Condition,
    /// Terminator of the function body.
    Return,

    /// `() -> aref<D x (T...)>`: a ring of `D` slots, each carrying one
    /// value of every buffer type `T` (depth and buffer types are in the
    /// result type). Created outside the `ws` op whose partitions use it.
    ArefCreate,
    /// `(aref, i: int, values...) -> ()`: iteration `i` writes slot `i % D`
    /// once the slot is empty (phase `(i / D) & 1`), then marks it full.
    /// The values have the aref's buffer types, in order. A TMA flavour
    /// (the copy engine writes the slot and completes `full` itself) will be
    /// a flag on this op; it changes the lowering, not these semantics.
    ArefPut,
    /// `(aref, i: int) -> (values...)`: waits until slot `i % D` is full for
    /// iteration `i`, then borrows it; the results are views of the slot's
    /// buffers, read where they are used.
    ArefGet,
    /// `(aref, i: int) -> ()`: the partition is done with slot `i % D` (every
    /// read finished); once every consuming partition has said so, the
    /// producer may refill it.
    ArefConsumed,
    /// `() -> ()`: warp specialization. One region per partition, run
    /// concurrently; each takes no arguments and ends in `yield` with no
    /// operands. Values defined before the op are visible inside; the op
    /// ends when every partition has ended.
    WarpSpecialize { partitions: Vec<Partition> },
    /// `() -> ()`: ping-pong between the warpgroups of a partition. The
    /// warpgroups take turns, in order 0, 1, ..., W-1, 0, ...; the first
    /// turn is warpgroup 0's. `turn.take` waits until it is this
    /// warpgroup's turn (the warpgroup before it has passed), `turn.pass`
    /// gives the turn to the next one. What runs between the two (the
    /// issue of tensor-core groups) runs in one warpgroup at a time, so
    /// that each warpgroup's other work overlaps the other's groups
    /// (FlashAttention-3's warpgroup scheduling). The interpreter runs
    /// every warpgroup of a partition as one, so it ignores both; the aref
    /// simulator runs a partition that has them as one thread per
    /// warpgroup and makes `turn.take` block.
    TurnTake,
    /// `() -> ()`: ends this warpgroup's turn (see [`OpKind::TurnTake`]).
    TurnPass,
    /// `(partial: tensor<f32>, split: i32) -> (sum)`: in a kernel whose
    /// CTA pairs may split each tile's K loop (`cluster_split_k`), the
    /// pair's two partial sums meet when `split` is 2 (the launch started
    /// the programs in pairs). The rank-1 CTA hands its operand to the
    /// rank-0 CTA (waiting until rank 0 took the previous one) and gets
    /// its own operand back; the rank-0 CTA waits for it and gets `own +
    /// peer's`, added in that order (so the sum does not depend on
    /// timing). Only rank 0 may use the result for anything but to ignore
    /// it: the pass that creates the op puts what follows under `if rank
    /// == 0`. When `split` is 1 the result is the operand.
    ClusterSum,
    /// `(sums: tensor<f32>...) -> ()`: in a stream-K kernel
    /// (`stream_k`), this program's partial sums of a tile whose first K
    /// step another program runs: they go to the program's slot of the
    /// launch's workspace, and its flag is raised (release). A program
    /// puts at most once a launch.
    StreamKPut,
    /// `(from: i32, sums: tensor<f32>...) -> (sums...)`: in a stream-K
    /// kernel, waits for program `from` (same y and z; always a higher x)
    /// to have put its partial sums, takes them and returns `own + its`,
    /// added in that order, element by element; lowers the flag again
    /// for the next launch.
    StreamKTake,

    /// `tl.debug_barrier()`: all threads of the program wait here.
    DebugBarrier,
    /// `(values...) -> ()`: `tl.device_print(prefix, values...)`.
    Print { prefix: String, hex: bool },
    /// `(cond) -> ()`: `tl.device_assert(cond, message)`.
    Assert { message: String },
}

impl OpKind {
    /// Ops computing each result element from the same element of their
    /// operands (one layout serves all of them).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            OpKind::Binary(_)
                | OpKind::Unary(_)
                | OpKind::Fma
                | OpKind::Cmp(_)
                | OpKind::Select
                | OpKind::Cast { .. }
                | OpKind::Bitcast
                | OpKind::AddPtr
                | OpKind::Hint { .. }
        )
    }

    /// Terminators end a block: nothing may follow them.
    pub fn is_terminator(&self) -> bool {
        matches!(self, OpKind::Yield | OpKind::Condition | OpKind::Return)
    }

    /// `turn.take` or `turn.pass` (ping-pong between warpgroups).
    pub fn is_turn(&self) -> bool {
        matches!(self, OpKind::TurnTake | OpKind::TurnPass)
    }

    /// Ops without side effects whose results may be recomputed, moved or
    /// dropped when unused.
    pub fn is_pure(&self) -> bool {
        !matches!(
            self,
            OpKind::Store { .. }
                | OpKind::DescStore
                | OpKind::AtomicRmw { .. }
                | OpKind::AtomicCas { .. }
                | OpKind::DebugBarrier
                | OpKind::Print { .. }
                | OpKind::Assert { .. }
                | OpKind::For(_)
                | OpKind::If
                | OpKind::While
                | OpKind::Yield
                | OpKind::Condition
                | OpKind::Return
                // A load may fault, and volatile loads must stay.
                | OpKind::Load { .. }
                | OpKind::DescLoad { .. }
                // Each create is a distinct ring; the others synchronize.
                | OpKind::ArefCreate
                | OpKind::ArefPut
                | OpKind::ArefGet
                | OpKind::ArefConsumed
                | OpKind::WarpSpecialize { .. }
                | OpKind::TurnTake
                | OpKind::TurnPass
                // Waits for, and hands a value to, the other CTA.
                | OpKind::ClusterSum
                // Write to, and wait on, another program's workspace.
                | OpKind::StreamKPut
                | OpKind::StreamKTake
                // Orders the partition against its tensor-core groups.
                | OpKind::DotWait { .. }
        )
    }
}

/// A 1-based source position (`line:col` in the kernel's Python file).
/// `Loc::UNKNOWN` (0:0) for ops with no source.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

impl Loc {
    pub const UNKNOWN: Loc = Loc { line: 0, col: 0 };
    pub fn new(line: u32, col: u32) -> Loc {
        Loc { line, col }
    }
    pub fn is_known(self) -> bool {
        self.line != 0
    }
}
