//! `emit_cuda`: tile IR with layouts in, CUDA C++ with inline PTX out.
//!
//! How values become C:
//!
//! - A scalar is a C variable; a tile is a per-thread register array
//!   (`float acc[64]`) in its home layout ([`crate::layout_assign`]); block
//!   pointers and tensor descriptors are bundles of scalars
//!   (`a_base, a_shape0, .., a_stride0, .., a_off0, ..`).
//! - Ops over tiles are `#pragma unroll` loops over registers. Element
//!   coordinates are `(thread base + register offset) & (size - 1)`, the
//!   register offset written as a closed form of the loop counter, so after
//!   unrolling every index is a constant and the arrays live in registers.
//! - f16, bf16 and fp8 are stored as their bits (`unsigned short`,
//!   `unsigned char`) and computed in f32 through `cvt` helpers: no CUDA
//!   headers are needed, and f32 holds every f16 sum/product exactly before
//!   the single rounding back.
//! - A user that needs a value in a layout other than its home gets a copy:
//!   light values are recomputed in that layout, heavy ones go through
//!   shared memory (store by coordinates, barrier, load by coordinates).
//!   Copies are cached per region scope.
//! - `dot`: operands are staged into shared memory, K-major with the
//!   128/64/32-byte swizzle that `wgmma` descriptors describe; then either
//!   `wgmma.mma_async` per warpgroup (accumulator in registers, waited at
//!   once) or `mma.sync.m16n8k16` per warp reading fragments with
//!   `ld.shared`. An A operand that is a 16-bit tile in a wgmma
//!   accumulator layout (attention's `p`, a dot's result converted
//!   elementwise) stays in registers: wgmma's register-A form reads the
//!   accumulator's registers as its A fragments, no staging and no
//!   barrier. Operand buffers written outside every loop (attention's
//!   `q`) are fenced for the async proxy once, where they are written.
//!   Issue/wait overlap is the pipeliner's job, not this pass's: it keeps
//!   one synchronous phase per dot.
//! - Shared memory is one dynamic buffer: the dot operand buffers, then the
//!   aref rings and their mbarriers, then the scratch area. Every use of the
//!   scratch (conversion, cross-warp reduction, dot staging) is a phase
//!   that starts with a barrier, so phases reuse the same bytes; its size
//!   is the largest phase.
//! - Warp-specialized IR (`ws` partitions, arefs, TMA puts) is lowered by
//!   the child module `aref_lower` (`aref_lower.rs`), through the same emitter: inside a
//!   partition, layouts see its own warps and barriers name its threads.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use tawa_ir::{
    BinaryOp, Block, CmpPred, ConstValue, Elem, Function, InputPrecision, Loc, Op, OpKind,
    ReduceKind, Rounding, ScalarType, Type, UnaryOp, Value,
};

#[path = "aref_lower.rs"]
mod aref_lower;
#[path = "cluster_sum_lower.rs"]
mod cluster_sum_lower;
#[path = "stream_k_lower.rs"]
pub mod stream_k_lower;
#[path = "tma_store_lower.rs"]
pub mod tma_store_lower;

use crate::axis_info::{vector_width, AxisInfoMap};
use crate::codegen::CodegenError;
use crate::layout::{Layout, Mma, MmaVersion, ThreadId, WARP_SIZE};
use crate::layout_assign::{access_bytes, LayoutMap, Regroup, RENAME};

/// The generated kernel text and its dynamic shared memory.
pub struct Emitted {
    pub cuda: String,
    pub smem_bytes: u32,
    /// The host-encoded TMA tensor maps, passed after the parameters.
    pub tensor_maps: Vec<crate::codegen::TensorMapParam>,
    /// `KernelSource::device_map_workspace`.
    pub device_map_workspace: u32,
    /// `KernelSource::stream_k_workspace`.
    pub stream_k_workspace: u32,
    pub num_threads: u32,
}

type Res<T> = Result<T, CodegenError>;

/// How [`emit`]'s refusal of a barrier inside a ping-pong turn begins
/// (the driver then compiles the kernel without the turns).
pub const BARRIER_IN_TURN: &str =
    "a barrier over the partition's warpgroups inside a ping-pong turn";

fn unsupported(loc: Loc, message: impl Into<String>) -> CodegenError {
    CodegenError {
        loc,
        message: message.into(),
        notes: Vec::new(),
    }
}

/// C storage type of an element.
fn cty(s: ScalarType) -> &'static str {
    match s {
        ScalarType::I1 => "bool",
        ScalarType::I8 => "signed char",
        ScalarType::I16 => "short",
        ScalarType::I32 => "int",
        ScalarType::I64 => "long long",
        ScalarType::U8 => "unsigned char",
        ScalarType::U16 => "unsigned short",
        ScalarType::U32 => "unsigned",
        ScalarType::U64 => "unsigned long long",
        ScalarType::F8E4M3 => "tw_e4m3",
        ScalarType::F8E5M2 => "tw_e5m2",
        ScalarType::F16 => "tw_f16",
        ScalarType::BF16 => "tw_bf16",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

fn elem_cty(e: Elem) -> String {
    match e {
        Elem::Scalar(s) => cty(s).to_string(),
        Elem::Ptr(s) => format!("{}*", cty(s)),
    }
}

/// Whether a type is computed in f32 and stored narrower.
fn narrow_float(s: ScalarType) -> bool {
    matches!(
        s,
        ScalarType::F16 | ScalarType::BF16 | ScalarType::F8E4M3 | ScalarType::F8E5M2
    )
}

/// C type arithmetic on `s` happens in.
fn compute_cty(s: ScalarType) -> &'static str {
    if narrow_float(s) {
        "float"
    } else {
        cty(s)
    }
}

/// Storage bits → compute value.
fn load_c(s: ScalarType, e: &str) -> String {
    match s {
        ScalarType::F16 => format!("tw_h2f({e})"),
        ScalarType::BF16 => format!("tw_b2f({e})"),
        ScalarType::F8E4M3 => format!("tw_e4m3_2f({e})"),
        ScalarType::F8E5M2 => format!("tw_e5m2_2f({e})"),
        _ => e.to_string(),
    }
}

/// Compute value → storage bits (round to nearest even).
fn store_c(s: ScalarType, e: &str) -> String {
    match s {
        ScalarType::F16 => format!("tw_f2h({e})"),
        ScalarType::BF16 => format!("tw_f2b({e})"),
        ScalarType::F8E4M3 => format!("tw_f2e4m3({e})"),
        ScalarType::F8E5M2 => format!("tw_f2e5m2({e})"),
        _ => e.to_string(),
    }
}

/// Unsigned type of a signed integer's width (wrapping arithmetic).
fn unsigned_of(s: ScalarType) -> Option<&'static str> {
    match s {
        ScalarType::I8 => Some("unsigned char"),
        ScalarType::I16 => Some("unsigned short"),
        ScalarType::I32 => Some("unsigned"),
        ScalarType::I64 => Some("unsigned long long"),
        _ => None,
    }
}

fn float_fn(name: &str, s: ScalarType) -> String {
    if s == ScalarType::F64 {
        name.to_string()
    } else {
        format!("{name}f")
    }
}

/// The C expression of a scalar elementwise op on compute values; `tys`
/// are the operand element types, `rt` the result's.
fn scalar_expr(
    kind: &OpKind,
    tys: &[ScalarType],
    rt: ScalarType,
    a: &[String],
    loc: Loc,
) -> Res<String> {
    let t = tys.first().copied().unwrap_or(rt);
    let isf = t.is_float();
    Ok(match kind {
        OpKind::Binary(op) => {
            let (x, y) = (&a[0], &a[1]);
            let wrap = |sym: &str| match unsigned_of(t) {
                Some(u) => format!("({})(({u}){x} {sym} ({u}){y})", cty(t)),
                None => format!("({x} {sym} {y})"),
            };
            match op {
                BinaryOp::Add => wrap("+"),
                BinaryOp::Sub => wrap("-"),
                BinaryOp::Mul => wrap("*"),
                // Triton's `/` on f32 is `div.full.f32` (2 ulp, one MUFU.RCP
                // and a multiply, no slow path); `div_rn` is IEEE's.
                BinaryOp::Div if t == ScalarType::F64 || !isf => format!("({x} / {y})"),
                BinaryOp::Div => format!("tw_div_full({x}, {y})"),
                BinaryOp::DivRn => format!("({x} / {y})"),
                BinaryOp::IDiv => format!("({x} / {y})"),
                BinaryOp::Rem if isf => format!("{}({x}, {y})", float_fn("fmod", t)),
                BinaryOp::Rem => format!("({x} % {y})"),
                BinaryOp::And => format!("({x} & {y})"),
                BinaryOp::Or => format!("({x} | {y})"),
                BinaryOp::Xor => format!("({x} ^ {y})"),
                BinaryOp::Shl => wrap("<<"),
                BinaryOp::Shr => format!("({x} >> {y})"),
                BinaryOp::Max if isf => format!("{}({x}, {y})", float_fn("fmax", t)),
                BinaryOp::Min if isf => format!("{}({x}, {y})", float_fn("fmin", t)),
                BinaryOp::Max => format!("({x} > {y} ? {x} : {y})"),
                BinaryOp::Min => format!("({x} < {y} ? {x} : {y})"),
                BinaryOp::Pow => format!("{}({x}, {y})", float_fn("pow", t)),
                BinaryOp::Atan2 => format!("{}({x}, {y})", float_fn("atan2", t)),
            }
        }
        OpKind::Unary(op) => {
            let x = &a[0];
            match op {
                UnaryOp::Neg => match unsigned_of(t) {
                    Some(u) => format!("({})(0 - ({u}){x})", cty(t)),
                    None => format!("(-{x})"),
                },
                UnaryOp::Not if t == ScalarType::I1 => format!("(!{x})"),
                UnaryOp::Not => format!("({})(~{x})", cty(t)),
                UnaryOp::Abs if isf => format!("{}({x})", float_fn("fabs", t)),
                UnaryOp::Abs => format!("({x} < 0 ? ({})(0 - {x}) : {x})", cty(t)),
                UnaryOp::IsNan => format!("isnan({x})"),
                UnaryOp::IsInf => format!("isinf({x})"),
                UnaryOp::Rsqrt => format!("{}({x})", float_fn("rsqrt", t)),
                // Triton's lowerings on NVIDIA GPUs: `exp2` is libdevice's
                // `exp2f` under flush-to-zero (one `ex2.approx.ftz.f32`,
                // one MUFU.EX2), `exp` is `ex2.approx.f32` of `x * log2(e)`.
                // CUDA's `exp2f` keeps subnormal results at three extra
                // instructions an element, a fifth of attention's softmax.
                UnaryOp::Exp2 if t != ScalarType::F64 => format!("tw_ex2({x})"),
                UnaryOp::Exp if t != ScalarType::F64 => format!("tw_exp({x})"),
                other => format!("{}({x})", float_fn(other.name(), t)),
            }
        }
        OpKind::Fma => format!("{}({}, {}, {})", float_fn("fma", t), a[0], a[1], a[2]),
        OpKind::Cmp(p) => {
            let sym = match p {
                CmpPred::Eq => "==",
                CmpPred::Ne => "!=",
                CmpPred::Lt => "<",
                CmpPred::Le => "<=",
                CmpPred::Gt => ">",
                CmpPred::Ge => ">=",
            };
            format!("({} {sym} {})", a[0], a[1])
        }
        OpKind::Select => format!("({} ? {} : {})", a[0], a[1], a[2]),
        _ => {
            return Err(unsupported(
                loc,
                format!("internal: {kind:?} is not elementwise"),
            ))
        }
    })
}

/// One value as C: a scalar variable, a register array, or a bundle of
/// scalars (block pointers, tensor descriptors).
#[derive(Clone, Debug)]
enum CVal {
    Scalar(String),
    Tile(String),
    Bundle(Vec<String>),
}

struct Emitter<'f> {
    func: &'f Function,
    layouts: &'f LayoutMap,
    axis: &'f AxisInfoMap,
    /// The facts without the kernel's hints
    /// ([`tawa_ir::axis_info::analyze_proven`]): what a vector or copy
    /// chunk taken on a run-time alignment check rests on.
    proven_axis: AxisInfoMap,
    source: Option<Vec<String>>,
    out: String,
    indent: usize,
    vals: HashMap<Value, CVal>,
    /// Copies of values in other layouts, one map per open region.
    copies: Vec<HashMap<(Value, Layout), String>>,
    next_tmp: u32,
    smem_bytes: u32,
    num_warps: u32,
    last_line: u32,
    /// Loads whose tile goes straight into its own shared-memory operand
    /// buffer (see [`plan_operand_buffers`]).
    operand_buffers: HashMap<Value, OperandBuffer>,
    /// Operand buffers already fenced for the async proxy (`fence.proxy.async` and a barrier after the write).
    fenced_buffers: HashSet<Value>,
    /// The `turn.take` whose turn the code being emitted holds (ping-pong).
    turn_held: Option<Loc>,
    /// A partition barrier emitted while a turn was held: the take's
    /// location. The other warpgroup waits for the turn, not at the
    /// barrier, so the kernel would hang; `emit` refuses it.
    barrier_in_turn: Option<Loc>,
    /// Bytes of shared memory the operand buffers take, below the scratch.
    operand_buffer_bytes: u32,
    /// `CodegenOptions::mn_major_operands`.
    mn_major_operands: bool,
    /// The `ws` partition being emitted, if any ([`aref_lower`]).
    partition: Option<aref_lower::PartitionCtx>,
    /// The aref rings, by `aref.create` result.
    rings: HashMap<Value, aref_lower::Ring>,
    /// The `cluster.sum` ops' buffers and barriers ([`cluster_sum_lower`]).
    exchanges: HashMap<Op, cluster_sum_lower::Exchange>,
    /// The stream-K workspace slot's bytes, once an op set them
    /// ([`stream_k_lower`]).
    stream_k_slot_bytes: Option<u32>,
    /// Tiles got from aref slots: the C expression of their byte offset
    /// from `tw_smem_raw`, and their layout.
    views: HashMap<Value, (String, OperandSmem)>,
    /// Host-encoded TMA tensor maps, by `make_tensor_desc`, box width, box
    /// rows (where not the descriptor's) and what their copies do.
    tensor_maps: Vec<crate::codegen::TensorMapParam>,
    tensor_map_names: HashMap<(Op, u32, Option<u32>, aref_lower::MapUse), String>,
    /// The L2 promotion of the maps TMA loads read, in bytes
    /// (`CodegenOptions::wide_l2_promotion`).
    load_l2_promotion: u32,
    /// Ranks of the TMA copies of a `desc_load` the launch reads once,
    /// issued with an L2 policy where it does ([`aref_lower`]).
    l2_policy_ranks: std::collections::BTreeSet<usize>,
    /// Whether the partition being emitted is its version for launches
    /// that read its marked copies once ([`aref_lower`]).
    read_once_hints: bool,
    /// Registers per thread of an even split of the register file over
    /// the CTA (what `setmaxnreg` moves partitions away from).
    kernel_regs: u32,
    /// A partition without the scratch area asked for shared memory.
    scratch_misuse: bool,
    /// Whether async wgmma groups may be in flight at the point being
    /// emitted (set by an async `dot`, cleared by a full wait).
    mma_in_flight: bool,
    /// `dot_wait {pending = 0}` ops whose wait the loop before them
    /// already emitted, inside its trip guard ([`Emitter::for_loop`]).
    waited_by_loop: std::collections::HashSet<Op>,
    /// `desc_store`s written back with TMA stores, with their shapes
    /// ([`tma_store_lower`]); empty with `--no-tma-store`.
    tma_store_ops: Vec<(Op, tma_store_lower::TmaStoreShape)>,
    /// Byte offset from `tw_smem_raw` of their staging buffer.
    tma_store_staging: Option<u32>,
    /// Bytes from one copy of the staging buffer to the next (partitions
    /// that take turns with each other each have one, as of the scratch
    /// area: `aref_lower::scratch_owners`).
    tma_store_staging_stride: u32,
    /// A TMA store was issued in the partition (or kernel) being emitted
    /// and is not waited for yet.
    tma_stores_issued: bool,
    /// Values some op of the kernel reads: an atomic whose result is not
    /// among them needs no old values back (`red`, not `atom`).
    used_values: HashSet<Value>,
}

/// A dedicated shared-memory buffer for a loaded `dot` operand.
#[derive(Clone, Copy, Debug)]
struct OperandBuffer {
    /// Byte offset from the start of dynamic shared memory.
    offset: u32,
    smem: OperandSmem,
    /// The value the dots read: the load's result, or the `trans` of it
    /// (attention's `k = desc_k.load(..).T`), which the load writes into
    /// the buffer transposed.
    operand: Value,
}

/// How a `dot` operand tile lies in shared memory: in swizzle atoms of 8
/// lines of `w` bytes (w = 32, 64, 128; 16-byte chunks XOR-permuted by the
/// line), lines running along K (*K-major*: a line holds `w` bytes of one
/// row's K elements) or along M/N (*MN-major*: a line holds `w` bytes of
/// one K index's row or column elements). wgmma reads both (MN-major with
/// its transpose bit, 16-bit types only); the tile is stored in the one
/// its registers run along, so the writes are 16-byte vectors: the
/// matmul tutorial's `b` (K x N, N contiguous) is MN-major. TMA writes the
/// same layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OperandSmem {
    /// The operand's K dimension (1 for `a`, 0 for `b`).
    k_dim: usize,
    mn_major: bool,
    /// Swizzle width in bytes.
    w: u32,
}

impl OperandSmem {
    /// The tile dimension a line of the layout is one index of, and the one
    /// that walks along the line in bytes: a row or column and K (K-major),
    /// or a K index and M/N (MN-major).
    fn line_and_along(self) -> (usize, usize) {
        let mn_dim = 1 - self.k_dim;
        if self.mn_major {
            (self.k_dim, mn_dim)
        } else {
            (mn_dim, self.k_dim)
        }
    }
}

/// Swizzle width for lines of `line_bytes` bytes, or `None` when no
/// swizzle mode holds them.
fn operand_swizzle(line_bytes: u32) -> Option<u32> {
    let w = line_bytes.min(128);
    (matches!(w, 32 | 64 | 128) && line_bytes.is_multiple_of(w)).then_some(w)
}

/// The shared-memory layout for operand tile `shape` (K along `k_dim`) in
/// register `layout`, read by a dot with accumulator layout `mma`.
fn operand_smem(
    layout: &Layout,
    shape: &[u32],
    k_dim: usize,
    eb: u32,
    mma: &Mma,
    allow_mn_major: bool,
) -> Option<OperandSmem> {
    let mn_dim = 1 - k_dim;
    let runs_along_mn = matches!(
        (layout, layout.digits(shape).first()),
        (Layout::Blocked(b), Some(d))
            if d.dim as usize == mn_dim && d.stride == 1 && d.size > 1
                && b.size_per_thread[mn_dim] == d.size
    );
    // Bytes of M or N one wgmma reads: a warpgroup's 64 rows of `a`, the
    // instruction's N columns of `b`. Each must be whole lines.
    let per_instr = if k_dim == 1 { 64 } else { mma.instr_n } * eb;
    if allow_mn_major && runs_along_mn && mma.version == MmaVersion::V3 && eb == 2 {
        if let Some(w) = operand_swizzle(shape[mn_dim] * eb) {
            if per_instr.is_multiple_of(w) {
                return Some(OperandSmem {
                    k_dim,
                    mn_major: true,
                    w,
                });
            }
        }
    }
    operand_swizzle(shape[k_dim] * eb).map(|w| OperandSmem {
        k_dim,
        mn_major: false,
        w,
    })
}

/// The most shared memory operand buffers may take; what does not fit is
/// staged from registers at the dot, through the scratch area.
const OPERAND_BUFFER_BUDGET: u32 = 160 * 1024;

/// Loads whose only uses are as the same operand of `dot`s get their own
/// shared-memory buffer: the load writes its tile there right away and the
/// dots read it from there. The tile is then dead in registers as soon as
/// it is written (a 128x256 GEMM tile cannot hold its accumulator and both
/// operands in registers), a loop-invariant operand (attention's `q`) is
/// written once instead of at every dot, and the pipeliner will later turn
/// these buffers into multi-stage rings. A load read only through one
/// 2-D `trans` whose uses are all the same operand of `dot`s gets a buffer
/// for the transpose: the transposed layout is the load's, permuted
/// (`layout_assign`), so the load's registers are written at their
/// transposed coordinates, and a row-major `[N, K]` tile read as `b` lies
/// K-major, as wgmma reads `b` without its transpose bit.
fn plan_operand_buffers(
    func: &Function,
    layouts: &LayoutMap,
    mn_major_operands: bool,
) -> (HashMap<Value, OperandBuffer>, u32) {
    let mut uses: HashMap<Value, Vec<(Op, usize)>> = HashMap::new();
    let mut loads = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        for (i, &v) in data.operands.iter().enumerate() {
            uses.entry(v).or_default().push((op, i));
        }
        if matches!(data.kind, OpKind::Load { .. } | OpKind::DescLoad { .. }) {
            loads.push(op);
        }
    });
    let mut plan = HashMap::new();
    let mut total = 0u32;
    for op in loads {
        let r = func.ops[op].results[0];
        let ty = func.ty(r);
        if !ty.is_tensor() || ty.shape().len() != 2 || layouts.home(r).is_none() {
            continue;
        }
        let Some(mut users) = uses.get(&r) else {
            continue;
        };
        let all_dots = |users: &[(tawa_ir::Op, usize)]| {
            let role = users[0].1;
            users.iter().all(|&(u, i)| {
                i == role
                    && i < 2
                    && matches!(func.ops[u].kind, OpKind::Dot { .. })
                    && matches!(layouts.home(func.ops[u].results[0]), Some(Layout::Mma(_)))
            })
        };
        let mut operand = r;
        if let [(t, 0)] = users.as_slice() {
            if let OpKind::Trans { perm } = &func.ops[*t].kind {
                let t_res = func.ops[*t].results[0];
                let renamed = perm.as_slice() == [1, 0]
                    && layouts.home(r).and_then(|l| l.permuted(perm)).as_ref()
                        == layouts.home(t_res);
                match uses.get(&t_res) {
                    Some(t_users) if renamed => {
                        operand = t_res;
                        users = t_users;
                    }
                    _ => continue,
                }
            }
        }
        if !all_dots(users) {
            continue;
        }
        let role = users[0].1;
        let k_dim = 1 - role;
        let ty = func.ty(operand);
        let shape = ty.shape();
        let eb = ty.scalar_type().map_or(4, |s| s.byte_size());
        let home = layouts.home(operand).expect("checked above");
        // One layout must serve every dot reading the buffer.
        let mut layouts_wanted =
            users
                .iter()
                .map(|&(u, _)| match layouts.home(func.ops[u].results[0]) {
                    Some(Layout::Mma(mma)) => {
                        operand_smem(home, shape, k_dim, eb, mma, mn_major_operands)
                    }
                    _ => None,
                });
        let Some(Some(smem)) = layouts_wanted.next() else {
            continue;
        };
        if layouts_wanted.any(|other| other != Some(smem)) {
            continue;
        }
        let bytes = (shape[0] * shape[1] * eb).div_ceil(1024) * 1024;
        if total + bytes > OPERAND_BUFFER_BUDGET {
            continue;
        }
        let buf = OperandBuffer {
            offset: total,
            smem,
            operand,
        };
        plan.insert(r, buf);
        plan.insert(operand, buf);
        total += bytes;
    }
    (plan, total)
}

/// Emits the kernel.
pub fn emit(
    func: &Function,
    layouts: &LayoutMap,
    axis: &AxisInfoMap,
    source: Option<&str>,
    mn_major_operands: bool,
    tma_store: bool,
    load_l2_promotion: u32,
    programmatic_launch: bool,
) -> Res<Emitted> {
    let mut e = Emitter {
        func,
        layouts,
        axis,
        proven_axis: tawa_ir::axis_info::analyze_proven(func),
        source: source.map(|s| s.lines().map(str::to_string).collect()),
        out: String::new(),
        indent: 1,
        vals: HashMap::new(),
        copies: vec![HashMap::new()],
        next_tmp: 0,
        smem_bytes: 0,
        num_warps: func.attrs.num_warps,
        last_line: 0,
        operand_buffers: HashMap::new(),
        fenced_buffers: HashSet::new(),
        turn_held: None,
        barrier_in_turn: None,
        operand_buffer_bytes: 0,
        mn_major_operands,
        partition: None,
        rings: HashMap::new(),
        exchanges: HashMap::new(),
        stream_k_slot_bytes: None,
        views: HashMap::new(),
        tensor_maps: Vec::new(),
        tensor_map_names: HashMap::new(),
        load_l2_promotion,
        l2_policy_ranks: Default::default(),
        read_once_hints: false,
        kernel_regs: 0,
        scratch_misuse: false,
        mma_in_flight: false,
        waited_by_loop: Default::default(),
        tma_store_ops: Vec::new(),
        tma_store_staging: None,
        tma_store_staging_stride: 0,
        tma_stores_issued: false,
        used_values: used_values(func),
    };
    (e.operand_buffers, e.operand_buffer_bytes) =
        plan_operand_buffers(func, layouts, mn_major_operands);
    // Aref rings follow the operand buffers; the scratch area follows both.
    if has_arefs(func) {
        (e.rings, e.operand_buffer_bytes) =
            aref_lower::plan_rings(func, layouts, e.operand_buffer_bytes)?;
    }
    // The TMA stores' staging buffer follows, 1024-byte aligned for the
    // 128-byte swizzle, and the scratch area it (the scratch stays free
    // for other phases while a store still reads the buffer).
    // Partitions that take turns with each other each have their own
    // scratch area and staging buffer.
    let mut scratch_copies = 1;
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { .. } = func.ops[op].kind {
            scratch_copies = aref_lower::scratch_owners(func, op).len().max(1) as u32;
        }
    });
    if tma_store {
        e.tma_store_ops = tma_store_lower::tma_stores(func, axis);
        if let Some(bytes) = e.tma_store_ops.iter().map(|(_, s)| s.staging_bytes).max() {
            let at = e.operand_buffer_bytes.div_ceil(1024) * 1024;
            e.tma_store_staging = Some(at);
            e.tma_store_staging_stride = bytes.div_ceil(1024) * 1024;
            e.operand_buffer_bytes = at + e.tma_store_staging_stride * scratch_copies;
        }
    }
    // The CTA pairs' exchange barriers (`cluster.sum`) follow; their
    // buffers reuse a ring's slots, idle once a split pair's one tile
    // has left the K loop.
    // The scratch after them keeps the alignment it has without them.
    if func.attrs.cluster_split_k {
        e.operand_buffer_bytes = e.plan_exchanges(e.operand_buffer_bytes)?.div_ceil(1024) * 1024;
    }
    let num_threads = kernel_threads(func);
    // The register file (64K) split evenly over the threads of the
    // `occupancy` blocks an SM holds, in the multiples of 8 that
    // `setmaxnreg` takes.
    let occupancy = func.attrs.occupancy.max(1);
    e.kernel_regs = ((65536 / (num_threads * occupancy)).min(255) / 8) * 8;
    let mut params = Vec::new();
    for p in &func.params {
        let ty = func.ty(p.value);
        let c = match ty {
            Type::Scalar(Elem::Scalar(s)) => cty(*s).to_string(),
            Type::Scalar(Elem::Ptr(s)) => format!("{}* __restrict__", cty(*s)),
            other => {
                return Err(unsupported(
                    Loc::UNKNOWN,
                    format!(
                        "parameter `{}` of type {other} cannot be passed to a kernel",
                        p.name
                    ),
                ))
            }
        };
        let name = format!("{}_", sanitize(&p.name));
        params.push(format!("{c} {name}"));
        e.vals.insert(p.value, CVal::Scalar(name));
    }
    e.line("const int tid = threadIdx.x;");
    e.line("const int lane = threadIdx.x & 31;");
    e.line("const int warp = __shfl_sync(0xffffffff, (int)(threadIdx.x >> 5), 0);");
    e.line("(void)tid; (void)lane; (void)warp;");
    e.line("const unsigned tw_smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);");
    e.line("(void)tw_smem_u32;");
    // Dot operand buffers sit at the start of shared memory, the scratch
    // (conversions, reductions, operands staged at the dot) after them.
    e.line(format!(
        "unsigned char* const tw_smem = tw_smem_raw + {};",
        e.operand_buffer_bytes
    ));
    e.block(func.body)?;
    e.drain_tma_stores();
    if func.attrs.cluster == 2 {
        // No CTA of a pair exits while its peer may still multicast into
        // its shared memory or arrive on its barriers.
        e.line("tw_cluster_sync();");
    } else if func.attrs.cluster_split_k {
        // Nor while its peer may still write its exchange buffer or arrive
        // on its barriers (launched in pairs only where the grid splits).
        e.line("if (tw_cluster_ctas() > 1u) tw_cluster_sync();");
    }
    if e.scratch_misuse {
        return Err(unsupported(
            Loc::UNKNOWN,
            "internal: a producer partition needs shared-memory scratch (only the last partition has it)",
        ));
    }
    for t in &e.tensor_maps {
        params.push(format!("const __grid_constant__ tw_tmap {}", t.name));
    }
    let device_map_workspace = aref_lower::device_map_workspace(&e.tensor_maps);
    if device_map_workspace > 0 {
        params.push("unsigned char* __restrict__ tw_tmap_ws".to_string());
    }
    // The stream-K workspace: after every other parameter.
    let stream_k_workspace = match e.stream_k_slot_bytes {
        Some(bytes) if stream_k_lower::has_stream_k_ops(func) => {
            params.push("unsigned char* __restrict__ tw_sk_ws".to_string());
            bytes
        }
        _ => 0,
    };
    let mut cuda = String::new();
    writeln!(
        cuda,
        "// Generated by tawa-rs (plain backend) from `{}`.",
        func.name
    )
    .unwrap();
    writeln!(
        cuda,
        "// num_warps = {}; constexprs: {}",
        func.attrs.num_warps,
        func.attrs
            .constexprs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .unwrap();
    cuda.push_str(PRELUDE);
    // The scratch area's copies (`aref_lower::scratch_owners`), 128-byte
    // aligned.
    let scratch_stride = e.smem_bytes.div_ceil(128) * 128;
    if scratch_copies > 1 {
        writeln!(
            cuda,
            "static constexpr unsigned tw_scratch_stride = {scratch_stride}u;"
        )
        .unwrap();
    }
    let bounds = if e.rings.is_empty() {
        if e.tma_store_staging.is_some() {
            cuda.push_str(aref_lower::TMAP_TYPE);
        }
        num_threads.to_string()
    } else {
        // `occupancy` CTAs an SM (one unless the `occupancy` pass found
        // room for more): `setmaxnreg` redistributes each one's share of
        // the register file between its partitions.
        cuda.push_str(aref_lower::WS_PRELUDE);
        if e.rings.values().any(|r| r.copied()) {
            cuda.push_str(aref_lower::COPY_PRELUDE);
        }
        if func.attrs.cluster == 2 || func.attrs.cluster_split_k {
            cuda.push_str(aref_lower::CLUSTER_PRELUDE);
        }
        if func.attrs.cluster_split_k {
            cuda.push_str(cluster_sum_lower::CLUSTER_SUM_PRELUDE);
        }
        if stream_k_workspace > 0 {
            cuda.push_str(&stream_k_lower::stream_k_prelude());
        }
        let mut ranks: Vec<usize> = e.tensor_maps.iter().map(|t| t.extents.len()).collect();
        ranks.sort_unstable();
        ranks.dedup();
        for rank in ranks.into_iter().filter(|&r| r > 2) {
            cuda.push_str(&aref_lower::tma_nd_helper(rank));
            if func.attrs.cluster == 2 {
                cuda.push_str(&aref_lower::tma_nd_multicast_helper(rank));
            }
        }
        if device_map_workspace > 0 {
            cuda.push_str(&aref_lower::device_map_prelude(device_map_workspace));
        }
        for &rank in &e.l2_policy_ranks {
            cuda.push_str(&aref_lower::tma_read_once_helper(rank));
        }
        format!("{num_threads}, {occupancy}")
    };
    if e.tma_store_staging.is_some() {
        cuda.push_str(tma_store_lower::TMA_STORE_PRELUDE);
    }
    writeln!(
        cuda,
        "\nextern \"C\" __global__ void __launch_bounds__({bounds}) {}({}) {{",
        crate::codegen::cuda_symbol(&func.name),
        params.join(", ")
    )
    .unwrap();
    if let Some(loc) = e.barrier_in_turn {
        return Err(CodegenError {
            loc,
            message: format!(
                "{BARRIER_IN_TURN} (between turn.take and turn.pass), where the other \
                 warpgroup waits for the turn: the kernel would hang"
            ),
            notes: vec!["compile with --no-pingpong".into()],
        });
    }
    // A copy's first use of its tensor map would fetch the map from the
    // parameter space on the copy's critical path; ask for every map the
    // host encoded at entry instead, as CUTLASS's producers do (a kernel
    // of one short tile a CTA, a decode GEMM, pays that latency once per
    // CTA).
    let host_maps: Vec<&str> = e
        .tensor_maps
        .iter()
        .filter(|t| !t.device_built)
        .map(|t| t.name.as_str())
        .collect();
    if !host_maps.is_empty() {
        cuda.push_str("  if (threadIdx.x == 0) {\n");
        for m in host_maps {
            writeln!(
                cuda,
                "    asm volatile(\"prefetch.tensormap [%0];\" :: \"l\"((unsigned long long)&{m}) : \"memory\");"
            )
            .unwrap();
        }
        cuda.push_str("  }\n");
    }
    if programmatic_launch {
        // Launched as a programmatic dependent (by default where the
        // programs walk the tiles; `--pdl`): this grid may start while
        // the kernel before it on the stream still runs, so
        // nothing below may touch global memory before that one has
        // finished and its writes are visible. The tensor maps above are
        // parameters, not global memory. Then let the next kernel be
        // scheduled as soon as every block of this one has started: it
        // waits the same way.
        cuda.push_str("  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n");
        cuda.push_str("  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n");
    }
    cuda.push_str(&e.out);
    cuda.push_str("}\n");
    Ok(Emitted {
        cuda,
        smem_bytes: e.operand_buffer_bytes
            + if scratch_copies > 1 {
                scratch_stride * scratch_copies
            } else {
                e.smem_bytes
            },
        tensor_maps: e.tensor_maps,
        device_map_workspace,
        stream_k_workspace,
        num_threads,
    })
}

fn has_arefs(func: &Function) -> bool {
    let mut found = false;
    func.walk(&mut |op| found |= matches!(func.ops[op].kind, OpKind::ArefCreate));
    found
}

/// Threads per CTA: `num_warps`, or the warps of all partitions of the
/// kernel's `ws` op.
fn kernel_threads(func: &Function) -> u32 {
    let mut warps = func.attrs.num_warps;
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind {
            warps = partitions.iter().map(|p| p.num_warps).sum();
        }
    });
    warps * WARP_SIZE
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl<'f> Emitter<'f> {
    fn line(&mut self, s: impl AsRef<str>) {
        for l in s.as_ref().lines() {
            for _ in 0..self.indent {
                self.out.push_str("  ");
            }
            self.out.push_str(l);
            self.out.push('\n');
        }
    }

    fn tmp(&mut self, hint: &str) -> String {
        self.next_tmp += 1;
        format!("{hint}{}", self.next_tmp)
    }

    fn name_for(&mut self, v: Value) -> String {
        self.next_tmp += 1;
        match &self.func.values[v].name {
            Some(n) => format!("{}_{}", sanitize(n), self.next_tmp),
            None => format!("t{}", self.next_tmp),
        }
    }

    fn ty(&self, v: Value) -> &'f Type {
        self.func.ty(v)
    }

    fn elem(&self, v: Value) -> Elem {
        self.ty(v).elem().expect("value with an element type")
    }

    fn scalar_of(&self, v: Value) -> ScalarType {
        match self.elem(v) {
            Elem::Scalar(s) => s,
            Elem::Ptr(_) => ScalarType::U64,
        }
    }

    fn comment_loc(&mut self, loc: Loc) {
        if !loc.is_known() || loc.line == self.last_line {
            return;
        }
        self.last_line = loc.line;
        let text = self
            .source
            .as_ref()
            .and_then(|s| s.get(loc.line as usize - 1))
            .map(|l| l.trim().to_string())
            .unwrap_or_default();
        let text = text.replace("*/", "* /");
        self.line(format!("// {}:{}  {}", loc.line, loc.col, text));
    }

    /// The innermost `for`/`while` around `op`, if any.
    fn innermost_loop(&self, op: Op) -> Option<Op> {
        let f = self.func;
        let mut block = f.block_of(op)?;
        loop {
            let parent = f.blocks[block].parent?;
            if matches!(f.ops[parent].kind, OpKind::For(_) | OpKind::While) {
                return Some(parent);
            }
            block = f.block_of(parent)?;
        }
    }

    /// Whether an op reading `v` (written by `op`) runs in a loop nested
    /// inside `op`'s innermost loop (inside any loop, when `op` is in
    /// none): then `v` is written once for many reads.
    fn read_in_inner_loops(&self, op: Op, v: Value) -> bool {
        let f = self.func;
        let outer = self.innermost_loop(op);
        let mut found = false;
        f.walk(&mut |r| {
            if !found && f.ops[r].operands.contains(&v) {
                found = self
                    .innermost_loop(r)
                    .is_some_and(|l| Some(l) != outer && self.nested_in(l, outer));
            }
        });
        found
    }

    /// Whether loop `inner` is nested, at any depth, in loop `outer`
    /// (every loop is nested in `None`, the kernel's body).
    fn nested_in(&self, inner: Op, outer: Option<Op>) -> bool {
        let Some(outer) = outer else { return true };
        let mut l = self.innermost_loop(inner);
        while let Some(x) = l {
            if x == outer {
                return true;
            }
            l = self.innermost_loop(x);
        }
        false
    }

    /// A barrier over the threads that run the code being emitted: the CTA
    /// today. Inside a warp-specialized partition it must cover that
    /// partition's threads only (`bar.sync id, n`), or the partitions
    /// deadlock on each other; every barrier the emitter writes goes
    /// through here so that there is one place to make that choice.
    fn barrier(&mut self) {
        if !self.partition_barrier() {
            self.line("__syncthreads();");
        }
    }

    fn smem(&mut self, bytes: u32) {
        if self.partition.is_some_and(|p| !p.owns_scratch) {
            self.scratch_misuse = true;
        }
        self.smem_bytes = self.smem_bytes.max(bytes);
    }

    // ---------------------------------------------------------------- layouts

    /// C expression of the thread base coordinate of `layout` along `dim`.
    fn base_c(layout: &Layout, dim: usize) -> String {
        let terms = &layout.thread_terms()[dim];
        if terms.is_empty() {
            "0".into()
        } else {
            terms
                .iter()
                .map(|t| t.to_c())
                .collect::<Vec<_>>()
                .join(" + ")
        }
    }

    /// C expression (of the register counter `r`) of the register offset
    /// of `layout` along `dim`.
    fn offset_c(layout: &Layout, shape: &[u32], dim: usize, r: &str) -> String {
        let digits = layout.digits(shape);
        let mut scale = 1;
        let mut parts = Vec::new();
        for g in &digits {
            if g.dim as usize == dim && g.size > 1 {
                parts.push(format!("(({r} / {scale}) % {}) * {}", g.size, g.stride));
            }
            scale *= g.size;
        }
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(" + ")
        }
    }

    /// Coordinate of register `r` along `dim`, wrapped into the tile.
    fn coord_c(layout: &Layout, shape: &[u32], dim: usize, r: &str) -> String {
        let s = shape[dim];
        let raw = format!(
            "({} + {})",
            Self::base_c(layout, dim),
            Self::offset_c(layout, shape, dim, r)
        );
        if s.is_power_of_two() {
            format!("({raw} & {})", s - 1)
        } else {
            format!("({raw} % {s})")
        }
    }

    /// Whether this thread's register `r` is the one copy that writes
    /// (replicated layouts hold some elements in several threads).
    fn owner_c(layout: &Layout, shape: &[u32], r: &str) -> Option<String> {
        if layout.is_unique(shape) {
            return None;
        }
        let mut conds = Vec::new();
        for d in 0..shape.len() {
            let cov: u32 = {
                // Largest unwrapped coordinate + 1 along d.
                let terms = &layout.thread_terms()[d];
                let t: u32 = terms.iter().map(|t| (t.modulo - 1) * t.scale).sum();
                let o: u32 = layout
                    .digits(shape)
                    .iter()
                    .filter(|g| g.dim as usize == d)
                    .map(|g| (g.size - 1) * g.stride)
                    .sum();
                t + o + 1
            };
            if cov > shape[d] {
                conds.push(format!(
                    "({} + {}) < {}",
                    Self::base_c(layout, d),
                    Self::offset_c(layout, shape, d, r),
                    shape[d]
                ));
            }
        }
        for t in layout.collapsed_terms() {
            conds.push(format!("{} == 0", t.to_c()));
        }
        // Spread registers of one element (a box along a size-1 dimension).
        let digits = layout.digits(shape);
        let mut scale = 1;
        for g in &digits {
            if g.size > 1 && g.stride >= shape[g.dim as usize] && g.stride < 1 << 30 {
                conds.push(format!("(({r} / {scale}) % {}) == 0", g.size));
            }
            scale *= g.size;
        }
        if conds.is_empty() {
            None
        } else {
            Some(conds.join(" && "))
        }
    }

    // ------------------------------------------------------------- value access

    fn scalar(&self, v: Value) -> Res<String> {
        match self.vals.get(&v) {
            Some(CVal::Scalar(n)) => Ok(n.clone()),
            other => Err(unsupported(
                Loc::UNKNOWN,
                format!("internal: {v} is not a scalar in C ({other:?})"),
            )),
        }
    }

    fn bundle(&self, v: Value) -> Res<Vec<String>> {
        match self.vals.get(&v) {
            Some(CVal::Bundle(n)) => Ok(n.clone()),
            other => Err(unsupported(
                Loc::UNKNOWN,
                format!("internal: {v} is not a bundle in C ({other:?})"),
            )),
        }
    }

    /// Element `r` of a tile-or-scalar operand as seen by a tile op in
    /// `layout`: scalars broadcast.
    fn elem_at(&mut self, v: Value, layout: &Layout, r: &str) -> Res<String> {
        if self.ty(v).is_tensor() {
            Ok(format!("{}[{r}]", self.tile(v, layout)?))
        } else {
            self.scalar(v)
        }
    }

    /// The register array of tile `v` in `layout`: the home array, a cached
    /// copy, a recomputation (light values) or a shared-memory conversion.
    fn tile(&mut self, v: Value, layout: &Layout) -> Res<String> {
        let home = self.layouts.home(v).cloned();
        if home.as_ref() == Some(layout) {
            if let Some(CVal::Tile(n)) = self.vals.get(&v) {
                return Ok(n.clone());
            }
        }
        let key = (v, layout.clone());
        for scope in self.copies.iter().rev() {
            if let Some(n) = scope.get(&key) {
                return Ok(n.clone());
            }
        }
        let def = self.func.def_op(v);
        // Broadcasts and expand_dims only re-index their operand: redo them
        // in the wanted layout from the operand rather than move the bigger
        // result (a row vector may already sit where that layout wants it).
        let reindex = def.is_some_and(|op| {
            matches!(
                self.func.ops[op].kind,
                OpKind::Broadcast | OpKind::ExpandDims { .. }
            )
        });
        let name = match (self.layouts.is_heavy(v) && !reindex, def) {
            (false, Some(op)) => {
                let name = self.name_for(v);
                self.value_op(op, layout, &name)?;
                name
            }
            _ => {
                let Some(home) = home else {
                    return Err(unsupported(
                        Loc::UNKNOWN,
                        format!("internal: tile {v} has no layout"),
                    ));
                };
                let src = match self.vals.get(&v) {
                    Some(CVal::Tile(n)) => n.clone(),
                    _ => {
                        return Err(unsupported(
                            Loc::UNKNOWN,
                            format!("internal: tile {v} not emitted"),
                        ))
                    }
                };
                self.convert(v, &src, &home, layout)?
            }
        };
        self.copies.last_mut().unwrap().insert(key, name.clone());
        Ok(name)
    }

    fn regs(&self, v: Value, layout: &Layout) -> u32 {
        layout.regs_per_thread(self.ty(v).shape())
    }

    fn decl_tile(&mut self, v: Value, layout: &Layout, name: &str) -> u32 {
        let n = self.regs(v, layout);
        let c = elem_cty(self.elem(v));
        self.line(format!("{c} {name}[{n}];"));
        n
    }

    /// Converts through shared memory: every thread stores its registers at
    /// their row-major positions, then reads the ones `to` gives it.
    fn convert(&mut self, v: Value, src: &str, from: &Layout, to: &Layout) -> Res<String> {
        let shape = self.ty(v).shape().to_vec();
        if from.same_placement(to, &shape) {
            return Ok(src.to_string());
        }
        if let Some(name) = self.convert_vectorized(v, src, from, to)? {
            return Ok(name);
        }
        let c = elem_cty(self.elem(v));
        let numel: u32 = shape.iter().product();
        let bytes = numel * std::mem::size_of::<u64>().min(access_bytes_c(self.elem(v))) as u32;
        self.smem(bytes);
        let name = self.name_for(v);
        self.line(format!("// convert {} -> {}", from, to));
        self.barrier();
        let rf = from.regs_per_thread(&shape);
        let lin_from = linear_c(from, &shape, "r");
        self.line(format!(
            "#pragma unroll\nfor (int r = 0; r < {rf}; ++r) (({c}*)tw_smem)[{lin_from}] = {src}[r];"
        ));
        self.barrier();
        let rt = to.regs_per_thread(&shape);
        self.line(format!("{c} {name}[{rt}];"));
        let lin_to = linear_c(to, &shape, "r");
        self.line(format!(
            "#pragma unroll\nfor (int r = 0; r < {rt}; ++r) {name}[r] = (({c}*)tw_smem)[{lin_to}];"
        ));
        Ok(name)
    }

    /// [`Emitter::convert`] with vector accesses when both layouts hold
    /// runs of elements along the last dimension in consecutive registers
    /// (an MMA accumulator's column pairs, a blocked layout's 16-byte
    /// vectors): each run moves as one shared-memory access, and rows are
    /// padded by 16 bytes so that the rows an MMA layout writes at once
    /// fall in different banks. `None` when the tile does not allow it.
    fn convert_vectorized(
        &mut self,
        v: Value,
        src: &str,
        from: &Layout,
        to: &Layout,
    ) -> Res<Option<String>> {
        let Some(pitch) = self.stage_vectorized(v, src, from, to) else {
            return Ok(None);
        };
        let shape = self.ty(v).shape().to_vec();
        let eb = access_bytes_c(self.elem(v)) as u32;
        let vt = vector_run(to, &shape, eb);
        let c = elem_cty(self.elem(v));
        let name = self.name_for(v);
        let at = |l: &Layout, r: &str| padded_linear_c(l, &shape, r, pitch);
        let wt = vec_type(vt * eb);
        let rt = to.regs_per_thread(&shape);
        self.line(format!("{c} {name}[{rt}];"));
        self.line(format!(
            "#pragma unroll\nfor (int r = 0; r < {rt}; r += {vt}) {{\n  union {{ {wt} u; {c} e[{vt}]; }} t;\n  t.u = *({wt}*)(({c}*)tw_smem + {});\n  #pragma unroll\n  for (int e = 0; e < {vt}; ++e) {name}[r + e] = t.e[e];\n}}",
            at(to, "r")
        ));
        Ok(Some(name))
    }

    /// The write half of [`Emitter::convert_vectorized`]: tile `v`
    /// (register array `src` in layout `from`) written to the scratch area
    /// in rows padded by 16 bytes, then a barrier; returns the row pitch in
    /// elements, or `None` (nothing emitted) when neither layout has
    /// vectors along the last dimension or rows are not 16-byte multiples.
    fn stage_vectorized(&mut self, v: Value, src: &str, from: &Layout, to: &Layout) -> Option<u32> {
        let pitch = self.staging_pitch(v, from, to)?;
        let shape = self.ty(v).shape().to_vec();
        let rows: u32 = shape[..shape.len() - 1].iter().product();
        self.smem(rows * pitch * access_bytes_c(self.elem(v)) as u32);
        self.stage_band(v, src, from, to, pitch, None);
        Some(pitch)
    }

    /// Row pitch (elements) of the padded staging layout between `from`
    /// and `to`, `None` when it does not apply (see
    /// [`Emitter::stage_vectorized`]).
    fn staging_pitch(&self, v: Value, from: &Layout, to: &Layout) -> Option<u32> {
        let shape = self.ty(v).shape();
        let &cols = shape.last()?;
        let eb = access_bytes_c(self.elem(v)) as u32;
        let (vf, vt) = (vector_run(from, shape, eb), vector_run(to, shape, eb));
        if (vf == 1 && vt == 1) || shape.len() < 2 || !(cols * eb).is_multiple_of(16) {
            return None;
        }
        Some(cols + 16 / eb)
    }

    /// Writes tile `v` (array `src` in layout `from`) to the staging area,
    /// between two barriers: all of it, or with `band = (lo, rows)` (2-D
    /// tiles) only rows `lo .. lo + rows`, at staging row `row - lo`.
    fn stage_band(
        &mut self,
        v: Value,
        src: &str,
        from: &Layout,
        to: &Layout,
        pitch: u32,
        band: Option<(&str, u32)>,
    ) {
        let shape = self.ty(v).shape().to_vec();
        let eb = access_bytes_c(self.elem(v)) as u32;
        let (vf, vt) = (vector_run(from, &shape, eb), vector_run(to, &shape, eb));
        let c = elem_cty(self.elem(v));
        self.line(format!(
            "// {from} -> {to} through shared memory ({vf}- and {vt}-element vectors, padded rows)"
        ));
        self.barrier();
        let rf = from.regs_per_thread(&shape);
        let wf = vec_type(vf * eb);
        let (at, guard) = staged_at(from, &shape, "r", pitch, band);
        self.line(format!(
            "#pragma unroll\nfor (int r = 0; r < {rf}; r += {vf}) {{\n  union {{ {wf} u; {c} e[{vf}]; }} t;\n  #pragma unroll\n  for (int e = 0; e < {vf}; ++e) t.e[e] = {src}[r + e];\n  {guard}*({wf}*)(({c}*)tw_smem + {at}) = t.u;\n}}"
        ));
        self.barrier();
    }

    // ------------------------------------------------------------------ blocks

    fn block(&mut self, block: Block) -> Res<()> {
        for &op in &self.func.blocks[block].ops {
            self.op(op)?;
        }
        Ok(())
    }

    /// Declares C storage for a value carried across a region boundary
    /// (loop-carried values, `if` results) in its home layout.
    fn declare_carried(&mut self, v: Value) -> Res<CVal> {
        let name = self.name_for(v);
        let ty = self.ty(v).clone();
        Ok(match &ty {
            Type::Scalar(e) => {
                self.line(format!("{} {name};", elem_cty(*e)));
                CVal::Scalar(name)
            }
            Type::Tensor { .. } => {
                let layout = self.layouts.home(v).cloned().ok_or_else(|| {
                    unsupported(
                        Loc::UNKNOWN,
                        format!("internal: carried tile {v} has no layout"),
                    )
                })?;
                self.decl_tile(v, &layout, &name);
                CVal::Tile(name)
            }
            Type::Aref { .. } => {
                return Err(unsupported(
                    Loc::UNKNOWN,
                    format!("internal: {v} of type {ty} carried across a region"),
                ))
            }
            Type::BlockPtr { .. } | Type::TensorDesc { .. } => {
                let comps = bundle_components(&ty);
                let mut names = Vec::new();
                for (suffix, c) in comps {
                    let n = format!("{name}_{suffix}");
                    self.line(format!("{c} {n};"));
                    names.push(n);
                }
                CVal::Bundle(names)
            }
        })
    }

    /// `dst = value of v` for carried storage `dst` (tile in dst's layout).
    fn assign_carried(&mut self, dst: &CVal, dst_v: Value, v: Value) -> Res<()> {
        match dst {
            CVal::Scalar(n) => {
                let s = self.scalar(v)?;
                self.line(format!("{n} = {s};"));
            }
            CVal::Tile(n) => {
                let layout = self.layouts.home(dst_v).cloned().unwrap();
                let src = self.tile(v, &layout)?;
                let regs = self.regs(dst_v, &layout);
                self.line(format!(
                    "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {n}[r] = {src}[r];"
                ));
            }
            CVal::Bundle(ns) => {
                let src = self.bundle(v)?;
                for (d, s) in ns.iter().zip(src) {
                    self.line(format!("{d} = {s};"));
                }
            }
        }
        Ok(())
    }

    /// Assigns several carried values at once (through temporaries when a
    /// yielded value reads another carried value).
    fn assign_all(&mut self, dsts: &[(CVal, Value)], srcs: &[Value]) -> Res<()> {
        // Evaluate every source into fresh storage first: a later
        // destination may be read by an earlier source.
        let mut temps = Vec::new();
        for ((_, dv), &s) in dsts.iter().zip(srcs) {
            let t = self.declare_carried(*dv)?;
            self.assign_carried(&t, *dv, s)?;
            temps.push(t);
        }
        for ((d, _), t) in dsts.iter().zip(&temps) {
            match (d, t) {
                (CVal::Scalar(a), CVal::Scalar(b)) => self.line(format!("{a} = {b};")),
                (CVal::Tile(a), CVal::Tile(b)) => {
                    self.line(format!("#pragma unroll\nfor (int r = 0; r < (int)(sizeof({a}) / sizeof({a}[0])); ++r) {a}[r] = {b}[r];"))
                }
                (CVal::Bundle(a), CVal::Bundle(b)) => {
                    for (x, y) in a.iter().zip(b) {
                        self.line(format!("{x} = {y};"));
                    }
                }
                _ => unreachable!("same type"),
            }
        }
        Ok(())
    }

    // --------------------------------------------------------------------- ops

    fn op(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        self.comment_loc(data.loc);
        match &data.kind {
            OpKind::Yield | OpKind::Condition | OpKind::Return => Ok(()),
            OpKind::For(_) => self.for_loop(op),
            OpKind::If => self.if_op(op),
            OpKind::While => self.while_loop(op),
            OpKind::Store { .. } => self.store(op),
            OpKind::DescStore => self.desc_store(op),
            OpKind::DebugBarrier => {
                self.barrier();
                Ok(())
            }
            OpKind::Assert { .. } | OpKind::Print { .. } => Err(unsupported(
                data.loc,
                "`tl.device_assert`/`tl.device_print` are not supported by the CUDA backend yet",
            )),
            OpKind::AtomicRmw { .. } | OpKind::AtomicCas { .. } => self.atomic(op),
            OpKind::ArefCreate => self.aref_create(op),
            OpKind::ArefPut => self.aref_put(op),
            OpKind::ArefGet => self.aref_get(op),
            OpKind::ArefConsumed => self.aref_consumed(op),
            OpKind::TurnTake => self.turn(op, true),
            OpKind::TurnPass => self.turn(op, false),
            OpKind::ClusterSum => self.cluster_sum(op),
            OpKind::StreamKPut => self.stream_k_put(op),
            OpKind::StreamKTake => self.stream_k_take(op),
            OpKind::WarpSpecialize { .. } => self.warp_specialize(op),
            OpKind::DotWait { pending } => self.dot_wait(op, *pending),
            // Issued as a TMA copy by the `aref.put` it feeds.
            OpKind::DescLoad { .. } if self.is_tma_put_operand(data.results[0]) => Ok(()),
            // Copied by the producer's threads at the `aref.put` it feeds.
            OpKind::Load { .. } if self.is_copy_put_operand(data.results[0]) => Ok(()),
            // A column-major operand's slot, copied in box order: wgmma
            // reads it in place (the slot's layout is planned for the dot
            // that reads the transpose, `aref_lower::buffer_smem`).
            OpKind::Trans { .. } if self.views.contains_key(&data.operands[0]) => {
                let view = self.views[&data.operands[0]].clone();
                self.views.insert(data.results[0], view);
                Ok(())
            }
            // The transposed tile of a load that wrote it, transposed, into
            // its operand buffer: the dots read the buffer, no registers.
            OpKind::Trans { .. } if self.operand_buffers.contains_key(&data.results[0]) => Ok(()),
            OpKind::Reshape | OpKind::Join | OpKind::Split => self.regroup(op),
            OpKind::Scan { .. } => Err(unsupported(
                data.loc,
                format!(
                    "`{}` is not supported by the CUDA backend yet",
                    tawa_ir::printer::op_name(&data.kind)
                ),
            )),
            OpKind::MakeBlockPtr { .. } | OpKind::Advance | OpKind::MakeTensorDesc => {
                self.bundle_op(op)
            }
            _ => {
                let r = data.results[0];
                let name = self.name_for(r);
                match self.ty(r) {
                    Type::Tensor { .. } => {
                        let layout = self.layouts.home(r).cloned().ok_or_else(|| {
                            unsupported(data.loc, "internal: tile result without a layout")
                        })?;
                        self.value_op(op, &layout, &name)?;
                        self.vals.insert(r, CVal::Tile(name));
                    }
                    _ => {
                        self.scalar_op(op, &name)?;
                        self.vals.insert(r, CVal::Scalar(name));
                    }
                }
                Ok(())
            }
        }
    }

    /// Scalar-result ops.
    fn scalar_op(&mut self, op: Op, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let r = data.results[0];
        let rt = self.scalar_of(r);
        let c = elem_cty(self.elem(r));
        let expr = match &data.kind {
            OpKind::Constant(k) => const_c(*k, rt),
            OpKind::ProgramId(a) => format!("(int)blockIdx.{}", a.name()),
            OpKind::NumPrograms(a) => format!("(int)gridDim.{}", a.name()),
            OpKind::Hint { .. } => self.scalar(data.operands[0])?,
            OpKind::Cast { rounding } => {
                let x = self.scalar(data.operands[0])?;
                cast_c(self.elem(data.operands[0]), self.elem(r), &x, *rounding)
            }
            OpKind::Bitcast => {
                let x = self.scalar(data.operands[0])?;
                format!("tw_bitcast<{c}>({x})")
            }
            OpKind::AddPtr => {
                let p = self.scalar(data.operands[0])?;
                let o = self.scalar(data.operands[1])?;
                format!("({p} + {o})")
            }
            OpKind::Load {
                has_mask,
                has_other,
                ..
            } => {
                let p = self.scalar(data.operands[0])?;
                if *has_mask {
                    let m = self.scalar(data.operands[1])?;
                    let other = if *has_other {
                        self.scalar(data.operands[2])?
                    } else {
                        format!("({c})0")
                    };
                    format!("({m} ? *{p} : {other})")
                } else {
                    format!("*{p}")
                }
            }
            OpKind::Reduce { .. } => {
                self.reduce(op, None, name)?;
                return Ok(());
            }
            OpKind::Dot { .. } | OpKind::DescLoad { .. } => {
                return Err(unsupported(
                    data.loc,
                    "internal: tile op with a scalar result",
                ))
            }
            kind => {
                let tys: Vec<ScalarType> =
                    data.operands.iter().map(|&v| self.scalar_of(v)).collect();
                let args: Vec<String> = data
                    .operands
                    .iter()
                    .map(|&v| Ok(load_c(self.scalar_of(v), &self.scalar(v)?)))
                    .collect::<Res<_>>()?;
                let tys = if matches!(kind, OpKind::Select) {
                    tys[1..].to_vec()
                } else {
                    tys
                };
                let e = scalar_expr(kind, &tys, rt, &args, data.loc)?;
                store_c(rt, &e)
            }
        };
        self.line(format!("{c} const {name} = {expr};"));
        Ok(())
    }

    /// Ops with a tile result, computed in `layout` into a new array `name`.
    fn value_op(&mut self, op: Op, layout: &Layout, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let rt = self.scalar_of(r);
        let regs = layout.regs_per_thread(&shape);
        let c = elem_cty(self.elem(r));
        match &data.kind {
            OpKind::Constant(k) => {
                let e = const_c(*k, rt);
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {e};"));
            }
            OpKind::Splat => {
                let s = self.scalar(data.operands[0])?;
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {s};"));
            }
            OpKind::MakeRange { start, .. } => {
                let co = Self::coord_c(layout, &shape, 0, "r");
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {start} + {co};"));
            }
            OpKind::Hint { .. } => {
                let a = self.tile(data.operands[0], layout)?;
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {a}[r];"));
            }
            OpKind::Cast { rounding } => {
                let a = self.tile(data.operands[0], layout)?;
                let from = self.elem(data.operands[0]);
                let pair = match self.elem(r) {
                    Elem::Scalar(ScalarType::F16) => Some("tw_f2h2"),
                    Elem::Scalar(ScalarType::BF16) => Some("tw_f2b2"),
                    _ => None,
                };
                if let (Elem::Scalar(ScalarType::F32), Some(pair), Rounding::Rtne, true) =
                    (from, pair, *rounding, regs.is_multiple_of(2))
                {
                    self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; r += 2) {pair}({a}[r], {a}[r + 1], {name}[r], {name}[r + 1]);"));
                    return Ok(());
                }
                let e = cast_c(
                    self.elem(data.operands[0]),
                    self.elem(r),
                    &format!("{a}[r]"),
                    *rounding,
                );
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {e};"));
            }
            OpKind::Bitcast => {
                let a = self.tile(data.operands[0], layout)?;
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = tw_bitcast<{c}>({a}[r]);"));
            }
            OpKind::AddPtr => {
                let p = self.elem_at(data.operands[0], layout, "r")?;
                let o = self.elem_at(data.operands[1], layout, "r")?;
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {p} + {o};"));
            }
            OpKind::Binary(_)
            | OpKind::Unary(_)
            | OpKind::Fma
            | OpKind::Cmp(_)
            | OpKind::Select => {
                let mut args = Vec::new();
                let mut tys = Vec::new();
                for &v in &data.operands {
                    let s = self.scalar_of(v);
                    let e = self.elem_at(v, layout, "r")?;
                    args.push(load_c(s, &e));
                    tys.push(s);
                }
                let tys = if matches!(data.kind, OpKind::Select) {
                    tys[1..].to_vec()
                } else {
                    tys
                };
                let e = scalar_expr(&data.kind, &tys, rt, &args, data.loc)?;
                let e = store_c(rt, &e);
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {e};"));
            }
            OpKind::Broadcast => {
                let src = data.operands[0];
                let sshape = self.ty(src).shape().to_vec();
                let a = self.tile(src, layout)?;
                let idx = remap_c(
                    layout,
                    &shape,
                    layout,
                    &sshape,
                    |d| sshape[d] == 1 && shape[d] != 1,
                    None,
                );
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {a}[{idx}];"));
            }
            OpKind::ExpandDims { axis } => {
                let src = data.operands[0];
                let sl = Layout::slice(*axis, layout.clone());
                let sshape = self.ty(src).shape().to_vec();
                let a = self.tile(src, &sl)?;
                let idx = remap_c(layout, &shape, &sl, &sshape, |_| false, Some(*axis));
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {a}[{idx}];"));
            }
            OpKind::Load { .. } | OpKind::DescLoad { .. } => {
                if matches!(data.kind, OpKind::Load { .. }) {
                    self.load(op, layout, name)?;
                } else {
                    self.desc_load(op, layout, name)?;
                }
                let r = data.results[0];
                if let Some(buf) = self.operand_buffers.get(&r).copied() {
                    // Earlier dots may still read the buffer's previous tile.
                    self.barrier();
                    // The registers of a transposed operand are the load's
                    // (its layout is the load's, permuted): written as the
                    // elements of the transpose they are.
                    let operand_layout = if buf.operand == r {
                        layout.clone()
                    } else {
                        self.layouts.home(buf.operand).cloned().ok_or_else(|| {
                            unsupported(data.loc, "internal: transposed operand without a layout")
                        })?
                    };
                    self.write_operand(name, &operand_layout, buf.operand, buf.smem, buf.offset);
                    // Written once for a loop that reads it many times
                    // (attention's `q`, once a kernel or once a tile of a
                    // persistent kernel, read by every dot of the KV loop):
                    // made visible to wgmma here, once, instead of at every
                    // dot that reads it. A tile written in the loop
                    // iteration that reads it is fenced at its dot, one
                    // fence for both operands.
                    if self.read_in_inner_loops(op, buf.operand) {
                        self.line(
                            "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");",
                        );
                        self.barrier();
                        self.fenced_buffers.insert(buf.operand);
                    }
                }
            }
            OpKind::Trans { perm } => self.trans(op, perm, layout, name)?,
            OpKind::Reduce { .. } => self.reduce(op, Some(layout), name)?,
            OpKind::Dot { .. } => self.dot(op, layout, name)?,
            other => {
                return Err(unsupported(
                    data.loc,
                    format!(
                        "`{}` on tiles is not supported by the CUDA backend yet",
                        tawa_ir::printer::op_name(other)
                    ),
                ))
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------ memory ops

    /// Elements per vector access for a pointer tile in `layout`.
    fn vec_width(
        &self,
        ptr: Value,
        mask: Option<Value>,
        layout: &Layout,
        shape: &[u32],
        elem_bytes: u32,
    ) -> u32 {
        vec_width_by(self.axis, false, ptr, mask, layout, shape, elem_bytes)
    }

    fn load(&mut self, op: Op, layout: &Layout, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let OpKind::Load {
            has_mask,
            has_other,
            boundary_check,
            padding,
            ..
        } = &data.kind
        else {
            unreachable!()
        };
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let regs = layout.regs_per_thread(&shape);
        let rt = self.scalar_of(r);
        let c = elem_cty(self.elem(r));
        let ptr = data.operands[0];
        if let Type::BlockPtr { .. } = self.ty(ptr) {
            let b = self.bundle(ptr)?;
            let rank = shape.len();
            let fill = match padding {
                tawa_ir::Padding::Nan if rt.is_float() => store_c(rt, "__int_as_float(0x7fc00000)"),
                _ => format!("({c})0"),
            };
            self.line(format!(
                "{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {{"
            ));
            self.indent += 1;
            let (at, cond) = self.tile_access(&b, &b[1 + 2 * rank..], layout, &shape, &|d| {
                boundary_check.contains(&(d as u32))
            });
            self.line(format!("{name}[r] = ({cond}) ? {at} : {fill};"));
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        if !self.ty(ptr).is_tensor() {
            return Err(unsupported(
                data.loc,
                "internal: scalar load with a tile result",
            ));
        }
        let mask = if *has_mask {
            Some(data.operands[1])
        } else {
            None
        };
        let eb = rt.byte_size().max(1);
        let v = self.vec_width(ptr, mask, layout, &shape, eb);
        let p = self.tile(ptr, layout)?;
        let m = match mask {
            Some(m) => Some(self.tile(m, layout)?),
            None => None,
        };
        let other = if *has_other {
            Some(self.elem_at(data.operands[2], layout, "r")?)
        } else {
            None
        };
        // Predicated loads keep an unrolled loop's loads in flight together
        // (memory-bound kernels). Not for dot operands: their tiles go to
        // shared memory at once, and pinning the loads in program order
        // there costs registers in the 128x256 GEMMs (spills).
        let predicated = !self.operand_buffers.contains_key(&r);
        self.line(format!("{c} {name}[{regs}];"));
        // A dot operand whose pointers run in whole vectors not proven
        // aligned: vectors where this thread's are aligned at run time,
        // elements otherwise, each read from its vector's first pointer.
        // Only those first pointers are read, so a pointer tile carried by
        // the loop holds registers for them alone (tutorial 08's 128x64
        // tiles off loaded base pointers spilled when every pointer was).
        let checked = if v == 1 && !predicated {
            self.unproven_vec_width(ptr, mask, layout, &shape, eb)
        } else {
            1
        };
        let other_op = has_other.then(|| data.operands[2]);
        if checked > 1 {
            self.if_vectors_aligned(&p, regs, checked, eb);
            self.vector_loads(
                (name, &c),
                layout,
                regs,
                checked,
                eb,
                &p,
                m.as_deref(),
                other_op,
                predicated,
            )?;
            self.indent -= 1;
            self.line("} else {");
            self.indent += 1;
            let at = format!("({p}[r - r % {checked}] + r % {checked})");
            let e = match (&m, &other) {
                (Some(m), Some(o)) => format!("{m}[r] ? *{at} : {o}"),
                (Some(m), None) => format!("{m}[r] ? *{at} : ({c})0"),
                _ => format!("*{at}"),
            };
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {e};"
            ));
            self.indent -= 1;
            self.line("}");
        } else if v > 1 {
            self.vector_loads(
                (name, &c),
                layout,
                regs,
                v,
                eb,
                &p,
                m.as_deref(),
                other_op,
                predicated,
            )?;
        } else {
            let e = match (&m, &other) {
                (Some(m), Some(o)) => format!("{m}[r] ? *{p}[r] : {o}"),
                (Some(m), None) => format!("{m}[r] ? *{p}[r] : ({c})0"),
                _ => format!("*{p}[r]"),
            };
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {e};"
            ));
        }
        Ok(())
    }

    /// Opens `if (aligned) {` on whether every vector of `v` elements of
    /// `eb` bytes of this thread's `regs` pointers `p` starts aligned to
    /// its size (a run-time check of what the axis facts cannot prove).
    fn if_vectors_aligned(&mut self, p: &str, regs: u32, v: u32, eb: u32) {
        let ok = self.tmp("aligned");
        self.line(format!(
            "bool {ok} = true;\n#pragma unroll\nfor (int g = 0; g < {regs}; g += {v}) {ok} &= (((unsigned long long){p}[g]) & {}ull) == 0;",
            v * eb - 1
        ));
        self.line(format!("if ({ok}) {{"));
        self.indent += 1;
    }

    /// The vector width [`Self::vec_width`] would give `ptr` were its
    /// pointers aligned: how many elements run contiguously in a thread's
    /// registers (and under one mask value), by the proven facts: a
    /// `max_contiguous` hint broken at a `% N` wrap would make a vector
    /// read past the row where the run-time check finds it aligned.
    fn unproven_vec_width(
        &self,
        ptr: Value,
        mask: Option<Value>,
        layout: &Layout,
        shape: &[u32],
        elem_bytes: u32,
    ) -> u32 {
        vec_width_by(
            &self.proven_axis,
            true,
            ptr,
            mask,
            layout,
            shape,
            elem_bytes,
        )
    }

    /// Loads of `regs` registers of tile `name` (elements of C type `c`)
    /// in vectors of `v` elements from pointer tile `p`, masked by `m`,
    /// `other_op` where not.
    #[allow(clippy::too_many_arguments)]
    fn vector_loads(
        &mut self,
        (name, c): (&str, &str),
        layout: &Layout,
        regs: u32,
        v: u32,
        eb: u32,
        p: &str,
        m: Option<&str>,
        other_op: Option<Value>,
        predicated: bool,
    ) -> Res<()> {
        let vt = vec_type(v * eb);
        self.line(format!(
            "#pragma unroll\nfor (int g = 0; g < {}; ++g) {{",
            regs / v
        ));
        self.indent += 1;
        self.line(format!("union {{ {vt} u; {c} e[{v}]; }} t;"));
        let cond = m.map(|m| format!("{m}[g * {v}]"));
        match &cond {
            Some(cnd) if predicated && matches!(v * eb, 4 | 8 | 16) => {
                self.line(format!("t.u = tw_ld{}({p}[g * {v}], {cnd});", v * eb))
            }
            Some(cnd) => self.line(format!(
                "if ({cnd}) t.u = *(const {vt}*)({p}[g * {v}]); else t.u = {{}};"
            )),
            None => self.line(format!("t.u = *(const {vt}*)({p}[g * {v}]);")),
        }
        self.line(format!(
            "#pragma unroll\nfor (int e = 0; e < {v}; ++e) {name}[g * {v} + e] = t.e[e];"
        ));
        if let (Some(cnd), Some(o)) = (&cond, other_op) {
            let o = self.elem_at(o, layout, &format!("g * {v} + e"))?;
            self.line(format!("if (!{cnd}) {{\n#pragma unroll\nfor (int e = 0; e < {v}; ++e) {name}[g * {v} + e] = {o};\n}}"));
        }
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn store(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let OpKind::Store {
            has_mask,
            boundary_check,
            ..
        } = &data.kind
        else {
            unreachable!()
        };
        let (ptr, val) = (data.operands[0], data.operands[1]);
        if let Type::BlockPtr { shape, .. } = self.ty(ptr) {
            let shape = shape.clone();
            let b = self.bundle(ptr)?;
            let layout = self.store_layout(val);
            let rank = shape.len();
            let x = self.tile(val, &layout)?;
            let regs = layout.regs_per_thread(&shape);
            let own = Self::owner_c(&layout, &shape, "r");
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {{"
            ));
            self.indent += 1;
            let (at, bounds) = self.tile_access(&b, &b[1 + 2 * rank..], &layout, &shape, &|d| {
                boundary_check.contains(&(d as u32))
            });
            let cond = match own {
                Some(own) => format!("{own} && {bounds}"),
                None => bounds,
            };
            self.line(format!("if ({cond}) {at} = {x}[r];"));
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        if !self.ty(ptr).is_tensor() {
            let p = self.scalar(ptr)?;
            let x = self.scalar(val)?;
            let guard = "tid == 0".to_string();
            let cond = if *has_mask {
                format!("{guard} && {}", self.scalar(data.operands[2])?)
            } else {
                guard
            };
            self.line(format!("if ({cond}) *{p} = {x};"));
            return Ok(());
        }
        let shape = self.ty(ptr).shape().to_vec();
        let layout = self.pointer_store_layout(ptr, val);
        let regs = layout.regs_per_thread(&shape);
        let eb = access_bytes(self.elem(ptr));
        let mask = if *has_mask {
            Some(data.operands[2])
        } else {
            None
        };
        let v = self.vec_width(ptr, mask, &layout, &shape, eb);
        // A heavy tile stored through another layout streams from shared
        // memory: staged in its own layout (first, so that its registers
        // are free before the pointers and the mask are computed), each
        // vector goes straight from shared to global memory, never the
        // whole tile in registers twice.
        let home = self.store_layout(val);
        let staged = match (v > 1, &home == &layout, self.vals.get(&val)) {
            (true, false, Some(CVal::Tile(src))) if self.layouts.is_heavy(val) => self
                .staging_pitch(val, &home, &layout)
                .map(|pitch| (src.clone(), pitch)),
            _ => None,
        };
        // Staged in bands of rows: the band's buffer, not the tile's, is
        // what the store takes from the shared memory the aref rings
        // compete for. A tile is staged whole when it fits STAGING_BYTES
        // with its padding; otherwise in the tallest power-of-two bands
        // whose data fits it (at most half the tile).
        let band_rows = staged.as_ref().map(|(_, pitch)| {
            let rows = shape[0];
            let whole = shape.iter().product::<u32>() / shape[shape.len() - 1] * pitch * eb;
            let fit = (STAGING_BYTES / (shape[shape.len() - 1] * eb).max(1)).max(1);
            if shape.len() == 2 && whole > STAGING_BYTES && rows > 1 {
                1 << fit.min(rows - 1).ilog2()
            } else {
                rows
            }
        });
        if let (Some((_, pitch)), Some(band)) = (&staged, band_rows) {
            let rows: u32 = shape[..shape.len() - 1].iter().product();
            self.smem(band.min(rows) * pitch * eb);
        }
        let p = self.tile(ptr, &layout)?;
        let m = match mask {
            Some(m) => Some(self.tile(m, &layout)?),
            None => None,
        };
        let own = Self::owner_c(&layout, &shape, "r");
        if v > 1 && self.ty(val).is_tensor() {
            let c = elem_cty(self.elem(val));
            let vt = vec_type(v * eb);
            let banded = staged.is_some() && band_rows.is_some_and(|b| b < shape[0]);
            let band = banded.then(|| ("band", band_rows.unwrap_or(1)));
            let (read, in_band) = match &staged {
                Some((src, pitch)) => {
                    if let Some((lo, rows)) = band {
                        self.line(format!(
                            "#pragma unroll 1\nfor (int band = 0; band < {}; band += {rows}) {{",
                            shape[0]
                        ));
                        self.indent += 1;
                        self.stage_band(val, src, &home, &layout, *pitch, Some((lo, rows)));
                    } else {
                        self.stage_band(val, src, &home, &layout, *pitch, None);
                    }
                    let (at, guard) = staged_at(&layout, &shape, &format!("g * {v}"), *pitch, band);
                    (format!("t.u = *({vt}*)(({c}*)tw_smem + {at});"), guard)
                }
                None => {
                    let xa = self.tile(val, &layout)?;
                    let read = format!(
                        "#pragma unroll\nfor (int e = 0; e < {v}; ++e) t.e[e] = {xa}[g * {v} + e];"
                    );
                    (read, String::new())
                }
            };
            self.line(format!(
                "#pragma unroll\nfor (int g = 0; g < {}; ++g) {{",
                regs / v
            ));
            self.indent += 1;
            let mut conds = Vec::new();
            if !in_band.is_empty() {
                // `if (cond) ` → the condition alone.
                conds.push(
                    in_band
                        .trim_start_matches("if (")
                        .trim_end_matches(") ")
                        .to_string(),
                );
            }
            if let Some(o) = Self::owner_c(&layout, &shape, &format!("g * {v}")) {
                conds.push(o);
            }
            if let Some(m) = &m {
                conds.push(format!("{m}[g * {v}]"));
            }
            self.line(format!("union {{ {vt} u; {c} e[{v}]; }} t;"));
            let st = format!("*({vt}*)({p}[g * {v}]) = t.u;");
            if conds.is_empty() {
                self.line(read);
                self.line(st);
            } else if staged.is_some() {
                // Rows outside the band are not in shared memory: read
                // only what is stored.
                self.line(format!("if ({}) {{ {read} {st} }}", conds.join(" && ")));
            } else {
                self.line(read);
                self.line(format!("if ({}) {st}", conds.join(" && ")));
            }
            self.indent -= 1;
            self.line("}");
            if banded {
                self.indent -= 1;
                self.line("}");
            }
        } else {
            // Pointers that run in whole vectors not proven aligned (a
            // base pointer loaded from memory, tutorial 08's): vectors
            // where this thread's are aligned at run time, as for loads;
            // elements otherwise. Both read only each vector's first
            // pointer, so the others need no registers. Element-wise, each
            // 2-byte store of a warp writes a sliver of 16 sectors: the L2
            // took 7.6x the tile's sectors.
            let checked = if self.ty(val).is_tensor() {
                self.unproven_vec_width(ptr, mask, &layout, &shape, eb)
            } else {
                1
            };
            if checked > 1 {
                let x = self.tile(val, &layout)?;
                self.if_vectors_aligned(&p, regs, checked, eb);
                let c = elem_cty(self.elem(val));
                let vt = vec_type(checked * eb);
                let mut conds: Vec<String> =
                    Self::owner_c(&layout, &shape, &format!("g * {checked}"))
                        .into_iter()
                        .collect();
                if let Some(m) = &m {
                    conds.push(format!("{m}[g * {checked}]"));
                }
                let st = guarded(&conds, format!("*({vt}*)({p}[g * {checked}]) = t.u;"));
                self.line(format!(
                    "#pragma unroll\nfor (int g = 0; g < {}; ++g) {{\nunion {{ {vt} u; {c} e[{checked}]; }} t;\n#pragma unroll\nfor (int e = 0; e < {checked}; ++e) t.e[e] = {x}[g * {checked} + e];\n{st}\n}}",
                    regs / checked
                ));
                self.indent -= 1;
                self.line("} else {");
                self.indent += 1;
                let at = format!("*({p}[r - r % {checked}] + r % {checked})");
                self.element_stores(regs, own, m.as_deref(), &at, &format!("{x}[r]"));
                self.indent -= 1;
                self.line("}");
                return Ok(());
            }
            let x = self.elem_at(val, &layout, "r")?;
            self.element_stores(regs, own, m.as_deref(), &format!("*{p}[r]"), &x);
        }
        Ok(())
    }

    /// `for r: at = x` over a thread's `regs` registers (C expressions in
    /// `r`), where this thread owns the element (`own`) and the mask `m`
    /// is set.
    fn element_stores(
        &mut self,
        regs: u32,
        own: Option<String>,
        m: Option<&str>,
        at: &str,
        x: &str,
    ) {
        let mut conds: Vec<String> = own.into_iter().collect();
        if let Some(m) = m {
            conds.push(format!("{m}[r]"));
        }
        let body = guarded(&conds, format!("{at} = {x};"));
        self.line(format!(
            "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {body}"
        ));
    }

    /// Stores happen in the stored value's layout (data never moves for a
    /// store; the addresses are recomputed instead).
    /// The layout a tile is stored through pointer tile `ptr` in: its own,
    /// except that an MMA accumulator tile (or registers renamed from one,
    /// [`Layout::Linear`]) goes through the coalesced
    /// layout of the pointers (converted in shared memory, rows padded):
    /// the accumulator layout would write a few bytes per thread per row,
    /// half of each 32-byte sector wasted, where a blocked layout writes
    /// whole 16-byte vectors side by side. A tile of at most
    /// `tawa_ir::SMALL_STORE_BYTES` stays in its own layout: the
    /// conversion's round trip and barriers would cost more.
    fn pointer_store_layout(&self, ptr: Value, val: Value) -> Layout {
        let home = self.store_layout(val);
        if !matches!(home, Layout::Mma(_) | Layout::Linear(_)) || !self.ty(val).is_tensor() {
            return home;
        }
        if self
            .ty(val)
            .data_bytes()
            .is_some_and(|b| b <= tawa_ir::SMALL_STORE_BYTES)
        {
            return home;
        }
        let anchor = crate::layout_assign::pointer_anchor(
            self.func,
            ptr,
            self.ty(val),
            self.num_warps,
            Some(self.axis),
        );
        match anchor {
            Some(a @ Layout::Blocked(_)) => a,
            _ => home,
        }
    }

    fn store_layout(&self, val: Value) -> Layout {
        match self.layouts.home(val) {
            Some(l) => l.clone(),
            None => crate::layout_assign::default_layout(self.ty(val), self.num_warps).unwrap(),
        }
    }

    fn bundle_op(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let r = data.results[0];
        let ty = self.ty(r).clone();
        let name = self.name_for(r);
        let comps = bundle_components(&ty);
        let srcs: Vec<String> = match &data.kind {
            OpKind::MakeBlockPtr { .. } | OpKind::MakeTensorDesc => {
                let mut s = Vec::new();
                for &v in &data.operands {
                    s.push(self.scalar(v)?);
                }
                s
            }
            OpKind::Advance => {
                let b = self.bundle(data.operands[0])?;
                let rank = ty.shape().len();
                let mut s = b.clone();
                for d in 0..rank {
                    let o = self.scalar(data.operands[1 + d])?;
                    s[1 + 2 * rank + d] = format!("{} + {o}", b[1 + 2 * rank + d]);
                }
                s
            }
            _ => unreachable!(),
        };
        let mut names = Vec::new();
        for ((suffix, c), src) in comps.iter().zip(srcs) {
            let n = format!("{name}_{suffix}");
            self.line(format!("{c} const {n} = ({c})({src});"));
            names.push(n);
        }
        self.vals.insert(r, CVal::Bundle(names));
        Ok(())
    }

    /// Address and in-bounds condition of a descriptor access at `offs`.
    /// The element of register `r` behind a block pointer or tensor
    /// descriptor bundle `desc` (`[base, shape.., strides..]`) with tile
    /// origin `offs`: emits its per-dimension indices `i{d}` and returns the
    /// element's lvalue and the bounds condition of the dimensions
    /// `checked` says (`true` when none).
    fn tile_access(
        &mut self,
        desc: &[String],
        offs: &[String],
        layout: &Layout,
        shape: &[u32],
        checked: &dyn Fn(usize) -> bool,
    ) -> (String, String) {
        let rank = shape.len();
        let mut addr = Vec::new();
        let mut conds = Vec::new();
        for d in 0..rank {
            let co = Self::coord_c(layout, shape, d, "r");
            self.line(format!(
                "const long long i{d} = (long long){} + {co};",
                offs[d]
            ));
            addr.push(format!("i{d} * {}", desc[1 + rank + d]));
            if checked(d) {
                conds.push(format!("i{d} >= 0 && i{d} < {}", desc[1 + d]));
            }
        }
        let cond = if conds.is_empty() {
            "true".to_string()
        } else {
            conds.join(" && ")
        };
        (format!("{}[{}]", desc[0], addr.join(" + ")), cond)
    }

    fn desc_load(&mut self, op: Op, layout: &Layout, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let regs = layout.regs_per_thread(&shape);
        let c = elem_cty(self.elem(r));
        let desc = self.bundle(data.operands[0])?;
        let offs: Vec<String> = data.operands[1..]
            .iter()
            .map(|&v| self.scalar(v))
            .collect::<Res<_>>()?;
        let (desc, offs, reduced) = self.reduce_desc(data.operands[0], desc, offs, &shape)?;
        self.line(format!(
            "{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {{"
        ));
        self.indent += 1;
        let (addr, mut cond) = self.tile_access(&desc, &offs, layout, &shape, &|_| true);
        if let Some(reduced) = reduced {
            cond = format!("{reduced} && {cond}");
        }
        self.line(format!("{name}[r] = ({cond}) ? {addr} : ({c})0;"));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// For a rank-reduced `desc_load` (its tile is the block without its
    /// dimensions of 1), the descriptor bundle and offsets of the tile's
    /// dimensions, with the dropped dimensions' offsets folded into the
    /// base, and their bounds condition; unchanged otherwise.
    fn reduce_desc(
        &mut self,
        desc_value: Value,
        desc: Vec<String>,
        offs: Vec<String>,
        shape: &[u32],
    ) -> Res<(Vec<String>, Vec<String>, Option<String>)> {
        let rank = offs.len();
        if rank == shape.len() {
            return Ok((desc, offs, None));
        }
        let Type::TensorDesc { block, .. } = self.func.ty(desc_value) else {
            return Err(unsupported(
                Loc::UNKNOWN,
                "internal: desc_load of a non-descriptor",
            ));
        };
        let kept: Vec<usize> = (0..rank).filter(|&d| block[d] != 1).collect();
        let dropped: Vec<usize> = (0..rank).filter(|&d| block[d] == 1).collect();
        let base = self.tmp("dbase");
        let moved: Vec<String> = dropped
            .iter()
            .map(|&d| format!(" + (long long)({}) * {}", offs[d], desc[1 + rank + d]))
            .collect();
        self.line(format!(
            "auto const {base} = {}{};",
            desc[0],
            moved.concat()
        ));
        let cond = dropped
            .iter()
            .map(|&d| format!("({o}) >= 0 && ({o}) < {}", desc[1 + d], o = offs[d]))
            .collect::<Vec<_>>()
            .join(" && ");
        let mut reduced = vec![base];
        reduced.extend(kept.iter().map(|&d| desc[1 + d].clone()));
        reduced.extend(kept.iter().map(|&d| desc[1 + rank + d].clone()));
        let offs = kept.iter().map(|&d| offs[d].clone()).collect();
        Ok((reduced, offs, Some(format!("({cond})"))))
    }

    fn desc_store(&mut self, op: Op) -> Res<()> {
        if let Some(shape) = self.tma_store_here(op) {
            return self.tma_store(op, shape);
        }
        let f = self.func;
        let data = &f.ops[op];
        let val = data.operands[1];
        let shape = self.ty(val).shape().to_vec();
        let home = self.store_layout(val);
        let eb = self.scalar_of(val).byte_size().max(1);
        let v = self.desc_store_width(op, &home, &shape, eb);
        // Nothing proves vectors aligned: the blocked layout, its vectors
        // checked at run time.
        let checked = if v == 1 {
            self.desc_store_checked(op, &shape, eb)
        } else {
            None
        };
        let layout = checked
            .as_ref()
            .map_or(home, |(blocked, _)| blocked.clone());
        let regs = layout.regs_per_thread(&shape);
        let desc = self.bundle(data.operands[0])?;
        let offs: Vec<String> = data.operands[2..]
            .iter()
            .map(|&v| self.scalar(v))
            .collect::<Res<_>>()?;
        let x = self.tile(val, &layout)?;
        if let Some((_, w)) = checked {
            return self.desc_store_runtime_vectors(
                op,
                &desc,
                &offs,
                (&layout, &shape),
                (&x, w, eb),
            );
        }
        if v > 1 {
            // Groups of `v` registers, adjacent along the innermost
            // dimension, as one aligned vector store (attention's f16
            // output pairs: half the stores, no extracting of halves).
            self.line(format!(
                "#pragma unroll\nfor (int g = 0; g < {}; ++g) {{\nconst int r = g * {v};",
                regs / v
            ));
        } else {
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {{"
            ));
        }
        self.desc_store_at(&desc, &offs, (&layout, &shape), &x, v, val);
        Ok(())
    }

    /// The body of a `desc_store` loop over `r` (its header emitted, the
    /// closing brace emitted here): register `r`'s element, or the `v`
    /// from it as one vector, where this thread owns it and it lies inside
    /// the descriptor's shape.
    fn desc_store_at(
        &mut self,
        desc: &[String],
        offs: &[String],
        (layout, shape): (&Layout, &[u32]),
        x: &str,
        v: u32,
        val: Value,
    ) {
        self.indent += 1;
        let (addr, mut cond) = self.tile_access(desc, offs, layout, shape, &|_| true);
        if let Some(o) = Self::owner_c(layout, shape, "r") {
            cond = format!("{o} && {cond}");
        }
        if v > 1 {
            let vt = vec_type(v * self.scalar_of(val).byte_size().max(1));
            let c = elem_cty(self.elem(val));
            self.line(format!(
                "if ({cond}) {{ union {{ {vt} u; {c} e[{v}]; }} t;\n#pragma unroll\nfor (int k = 0; k < {v}; ++k) t.e[k] = {x}[r + k];\n*({vt}*)&{addr} = t.u; }}"
            ));
        } else {
            self.line(format!("if ({cond}) {addr} = {x}[r];"));
        }
        self.indent -= 1;
        self.line("}");
    }

    /// The operands (base, shape, strides) of the `make_tensor_desc` that
    /// `desc_store` `op` of a rank-`rank` tile stores through, where the
    /// kernel makes it with the innermost stride the constant 1 (its rows
    /// contiguous); `None` otherwise.
    fn unit_stride_desc(&self, op: Op, rank: usize) -> Option<&'f [Value]> {
        let f = self.func;
        let data = &f.ops[op];
        let make = f
            .def_op(data.operands[0])
            .filter(|&d| matches!(f.ops[d].kind, OpKind::MakeTensorDesc))?;
        let ops = &f.ops[make].operands;
        let shaped = ops.len() == 1 + 2 * rank && data.operands.len() == 2 + rank;
        (shaped && tma_store_lower::constant_int(f, ops[2 * rank]) == Some(1)).then_some(&ops[..])
    }

    /// For a `desc_store` whose vectors nothing proves aligned (a
    /// descriptor over a base pointer loaded from memory, tutorial 08's
    /// TMA kernel) and whose tile lives in an accumulator layout: the
    /// coalesced blocked layout to store it through (converted in shared
    /// memory) and its vector width, for
    /// [`Self::desc_store_runtime_vectors`]; `None` where the descriptor's
    /// innermost stride is not the constant 1 or the layout holds no run
    /// of adjacent elements.
    fn desc_store_checked(&self, op: Op, shape: &[u32], eb: u32) -> Option<(Layout, u32)> {
        let f = self.func;
        let data = &f.ops[op];
        let val = data.operands[1];
        let home = self.store_layout(val);
        if !matches!(home, Layout::Mma(_) | Layout::Linear(_)) {
            return None;
        }
        let rank = shape.len();
        self.unit_stride_desc(op, rank)?;
        let blocked = crate::layout_assign::default_layout(self.ty(val), self.num_warps)?;
        let (dim, run) = register_run(&blocked, shape)?;
        let w = run.min(16 / eb.max(1));
        (dim + 1 == rank && w > 1 && w.is_power_of_two()).then_some((blocked, w))
    }

    /// The element-wise `desc_store` of [`Self::desc_store_checked`]'s
    /// tiles: vectors of `w` elements where the descriptor's base and
    /// outer strides, its innermost extent and the store's innermost
    /// offset (all uniform) allow them at run time — a group is then
    /// wholly inside or outside the tensor, so its first element's bounds
    /// check is every element's — elements otherwise. Element-wise from
    /// the accumulator layout, each 2-byte store of a warp wrote slivers
    /// of 8 rows' sectors.
    fn desc_store_runtime_vectors(
        &mut self,
        op: Op,
        desc: &[String],
        offs: &[String],
        (layout, shape): (&Layout, &[u32]),
        (x, w, eb): (&str, u32, u32),
    ) -> Res<()> {
        let val = self.func.ops[op].operands[1];
        let rank = shape.len();
        let regs = layout.regs_per_thread(shape);
        let (base, extents, strides) = (&desc[0], &desc[1..1 + rank], &desc[1 + rank..]);
        let bytes = w * eb;
        let mut conds = vec![format!(
            "(((unsigned long long)({base})) & {}ull) == 0",
            bytes - 1
        )];
        for s in &strides[..rank - 1] {
            conds.push(format!(
                "((unsigned long long)({s}) * {eb}ull) % {bytes}ull == 0"
            ));
        }
        conds.push(format!("({}) % {w} == 0", extents[rank - 1]));
        conds.push(format!("({}) % {w} == 0", offs[rank - 1]));
        let ok = self.tmp("aligned");
        self.line(format!("const bool {ok} = {};", conds.join(" && ")));
        // Each loop's body computes its own indices (`tile_access` emits
        // them in terms of `r`).
        for vectors in [true, false] {
            if vectors {
                self.line(format!(
                    "if ({ok}) {{\n#pragma unroll\nfor (int g = 0; g < {}; ++g) {{\nconst int r = g * {w};",
                    regs / w
                ));
            } else {
                self.line(format!(
                    "}} else {{\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {{"
                ));
            }
            self.desc_store_at(
                desc,
                offs,
                (layout, shape),
                x,
                if vectors { w } else { 1 },
                val,
            );
        }
        self.line("}");
        Ok(())
    }

    /// Elements a `desc_store` writes per vector store in `layout`: the
    /// thread's registers adjacent along the innermost dimension, when the
    /// descriptor (made in the kernel, innermost stride 1) proves every
    /// group's address aligned (base, outer strides, the innermost offset)
    /// and the group inside or outside the tensor as a whole (its innermost
    /// extent a multiple of the width, so that the bounds check of the
    /// group's first element is every element's); 1 otherwise.
    fn desc_store_width(&self, op: Op, layout: &Layout, shape: &[u32], eb: u32) -> u32 {
        let f = self.func;
        let data = &f.ops[op];
        let rank = shape.len();
        let Some((dim, run)) = register_run(layout, shape) else {
            return 1;
        };
        if dim + 1 != rank {
            return 1;
        }
        let Some(ops) = self.unit_stride_desc(op, rank) else {
            return 1;
        };
        let div = |v: Value| u64::from(self.axis.get(v).divisibility.first().copied().unwrap_or(1));
        let mut v = run.min(16 / eb).max(1);
        while v > 1 {
            let bytes = u64::from(v * eb);
            let aligned = div(ops[0]) % bytes == 0
                && ops[1 + rank..2 * rank]
                    .iter()
                    .all(|&s| div(s).saturating_mul(u64::from(eb)) % bytes == 0)
                && div(ops[rank]) % u64::from(v) == 0
                && div(data.operands[1 + rank]) % u64::from(v) == 0;
            if aligned && v.is_power_of_two() {
                break;
            }
            v /= 2;
        }
        v
    }

    /// `tl.atomic_*` and `tl.atomic_cas`: one atomic per element (per
    /// vector of 2 or 4 for f32 adds, [`Emitter::vector_atomic_add`]), issued
    /// by the element's owner only (a replicated copy must not add twice).
    /// The memory order (`sem=`, Triton's default `acq_rel`) is a fence at
    /// the atomic's scope around CUDA's relaxed atomic: before it for
    /// release, after it for acquire, as `atom.acq_rel` orders. Scalar
    /// atomics run on thread 0, and their old value reaches every thread
    /// through shared memory: tutorial 05's `while tl.atomic_cas(Lock, 0,
    /// 1) == 1` is a spin lock the whole program waits on, not thread 0
    /// alone.
    fn atomic(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let (sem, scope, has_mask, val, call) = match &data.kind {
            OpKind::AtomicRmw {
                op: aop,
                sem,
                scope,
                has_mask,
            } => {
                let val = data.operands[1];
                let func = rmw_function(*aop, self.scalar_of(val)).ok_or_else(|| {
                    unsupported(
                        data.loc,
                        format!(
                            "atomic `{}` on {} is not supported by the CUDA backend yet",
                            aop.name(),
                            self.scalar_of(val)
                        ),
                    )
                })?;
                (*sem, *scope, *has_mask, val, func)
            }
            OpKind::AtomicCas { sem, scope } => {
                let val = data.operands[2];
                let st = self.scalar_of(val);
                if !matches!(
                    st,
                    ScalarType::I32 | ScalarType::U32 | ScalarType::I64 | ScalarType::U64
                ) {
                    return Err(unsupported(
                        data.loc,
                        format!("`atomic_cas` on {st} is not supported by the CUDA backend yet"),
                    ));
                }
                (*sem, *scope, false, val, "atomicCAS")
            }
            _ => unreachable!(),
        };
        let ptr = data.operands[0];
        // atomicCAS's compare operand sits between the pointer and the value.
        let cas_cmp = matches!(data.kind, OpKind::AtomicCas { .. }).then(|| data.operands[1]);
        let fence = match scope {
            tawa_ir::MemScope::Cta => "__threadfence_block();",
            tawa_ir::MemScope::Gpu => "__threadfence();",
            tawa_ir::MemScope::Sys => "__threadfence_system();",
        };
        let (before, after) = match sem {
            tawa_ir::MemSem::Relaxed => (false, false),
            tawa_ir::MemSem::Acquire => (false, true),
            tawa_ir::MemSem::Release => (true, false),
            tawa_ir::MemSem::AcqRel => (true, true),
        };
        let st = self.scalar_of(val);
        // CUDA has atomicCAS on 64-bit integers as `unsigned long long` only.
        let c = match st {
            ScalarType::I64 | ScalarType::U64 if call == "atomicCAS" => "unsigned long long",
            _ => cty(st),
        };
        let r = data.results[0];
        let name = self.name_for(r);
        if !self.ty(ptr).is_tensor() {
            let p = self.scalar(ptr)?;
            let x = self.scalar(val)?;
            let cmp = match cas_cmp {
                Some(v) => format!("({c}){}, ", self.scalar(v)?),
                None => String::new(),
            };
            let m = if has_mask {
                format!("if ({}) ", self.scalar(data.operands[2])?)
            } else {
                String::new()
            };
            let (pre, post) = (
                if before { fence } else { "" },
                if after { fence } else { "" },
            );
            // The old value goes through shared memory: one barrier so no
            // thread still reads what the scratch held, one so every thread
            // sees thread 0's write.
            self.smem(8);
            self.barrier();
            self.line(format!(
                "if (tid == 0) {{\n  {c} old = 0;\n  {m}{{ {pre} old = {call}(({c}*){p}, {cmp}({c}){x}); {post} }}\n  *({c}*)tw_smem = old;\n}}"
            ));
            self.barrier();
            let rc = cty(self.scalar_of(r));
            self.line(format!("{rc} {name} = ({rc})*({c}*)tw_smem;"));
            self.vals.insert(r, CVal::Scalar(name));
            return Ok(());
        }
        let shape = self.ty(ptr).shape().to_vec();
        let layout = self.store_layout(val);
        let regs = layout.regs_per_thread(&shape);
        let mask = has_mask.then(|| data.operands[2]);
        let vector_add = matches!(
            data.kind,
            OpKind::AtomicRmw {
                op: tawa_ir::AtomicOp::Add,
                ..
            }
        ) && st == ScalarType::F32;
        // The rule vector stores use: registers adjacent along the
        // contiguous dimension, pointers proven aligned and contiguous, the
        // mask constant over the vector.
        let v = if vector_add {
            self.vec_width(ptr, mask, &layout, &shape, 4).min(4)
        } else {
            1
        };
        let p = self.tile(ptr, &layout)?;
        if v > 1 {
            let (lines, result) = self.vector_atomic_add(op, mask, &layout, &shape, &p, v, name)?;
            if before {
                self.line(fence);
            }
            for l in lines {
                self.line(l);
            }
            if after {
                self.line(fence);
            }
            if let Some(name) = result {
                // layout_assign gives the result the stored value's layout.
                self.vals.insert(r, CVal::Tile(name));
            }
            return Ok(());
        }
        let x = self.elem_at(val, &layout, "r")?;
        let cmp = match cas_cmp {
            Some(v) => format!("({c}){}, ", self.elem_at(v, &layout, "r")?),
            None => String::new(),
        };
        let cond = self.element_guard(mask, &layout, &shape, "r")?;
        let rc = cty(self.scalar_of(r));
        if before {
            self.line(fence);
        }
        self.line(format!(
            "{rc} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = ({cond}) ? ({rc}){call}(({c}*){p}[r], {cmp}({c}){x}) : ({rc})0;"
        ));
        if after {
            self.line(fence);
        }
        // layout_assign gives the result the stored value's layout.
        self.vals.insert(r, CVal::Tile(name));
        Ok(())
    }

    /// Whether this thread does the access of register `r` of a tile in
    /// `layout`: it owns the element and the mask is on (`true` when
    /// neither applies).
    fn element_guard(
        &mut self,
        mask: Option<Value>,
        layout: &Layout,
        shape: &[u32],
        r: &str,
    ) -> Res<String> {
        let mut conds: Vec<String> = Self::owner_c(layout, shape, r).into_iter().collect();
        if let Some(m) = mask {
            let m = self.tile(m, layout)?;
            conds.push(format!("{m}[{r}]"));
        }
        Ok(if conds.is_empty() {
            "true".to_string()
        } else {
            conds.join(" && ")
        })
    }

    /// A tile `atomic_add` on f32 in vectors of `v` (2 or 4) adjacent
    /// elements of this thread's registers: one `red`/`atom.global.add.v{v}.f32`
    /// each (the prelude's `tw_red_add_*`/`tw_atom_add_*`), a v-th of the
    /// requests of one atomic per element. The vector's first register
    /// decides for all of it, as for vector stores: [`Emitter::vec_width`]
    /// proved the pointers contiguous and aligned over it and the mask
    /// constant, and one thread owns it. `red` where the old values have no
    /// use, which leaves no result registers to fill. Returns the lines
    /// (which the op's fences go around) and the result's array, `name`, if
    /// it has one.
    fn vector_atomic_add(
        &mut self,
        op: Op,
        mask: Option<Value>,
        layout: &Layout,
        shape: &[u32],
        p: &str,
        v: u32,
        name: String,
    ) -> Res<(Vec<String>, Option<String>)> {
        let data = &self.func.ops[op];
        let (val, r) = (data.operands[1], data.results[0]);
        let regs = layout.regs_per_thread(shape);
        let first = format!("g * {v}");
        let cond = self.element_guard(mask, layout, shape, &first)?;
        let mut xs = Vec::new();
        for e in 0..v {
            xs.push(self.elem_at(val, layout, &format!("g * {v} + {e}"))?);
        }
        let xs = xs.join(", ");
        let mut lines = Vec::new();
        let result = self.used_values.contains(&r).then_some(name);
        let call = match &result {
            Some(name) => {
                lines.push(format!("float {name}[{regs}];"));
                let olds: Vec<String> = (0..v).map(|e| format!("{name}[g * {v} + {e}]")).collect();
                format!(
                    "tw_atom_add_v{v}f32((float*){p}[{first}], {xs}, {cond}, {});",
                    olds.join(", ")
                )
            }
            None => format!("tw_red_add_v{v}f32((float*){p}[{first}], {xs}, {cond});"),
        };
        lines.push(format!(
            "#pragma unroll\nfor (int g = 0; g < {}; ++g) {call}",
            regs / v
        ));
        Ok((lines, result))
    }

    // -------------------------------------------------------------- reductions

    /// `reduce` along `axis`: in-thread over the registers along the axis,
    /// then butterfly shuffles over the lanes along it, then through shared
    /// memory over the warps along it. Copies of an element (fields that
    /// wrap past the tile) are left out at every level. `layout` is `None`
    /// for a scalar result.
    fn reduce(&mut self, op: Op, _want: Option<&Layout>, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let OpKind::Reduce { kind, axis } = &data.kind else {
            unreachable!()
        };
        let axis = *axis as usize;
        let src = data.operands[0];
        let r = data.results[0];
        let st = self.scalar_of(src);
        let rt = self.scalar_of(r);
        let ct = compute_cty(st);
        if matches!(kind, ReduceKind::Argmax | ReduceKind::Argmin) {
            return Err(unsupported(
                data.loc,
                "`argmax`/`argmin` are not supported by the CUDA backend yet",
            ));
        }
        let pl = self
            .layouts
            .home(src)
            .cloned()
            .ok_or_else(|| unsupported(data.loc, "internal: reduce operand without layout"))?;
        let sshape = self.ty(src).shape().to_vec();
        let a = self.tile(src, &pl)?;
        let out_layout = Layout::slice(axis as u32, pl.clone());
        let rshape: Vec<u32> = sshape
            .iter()
            .enumerate()
            .filter(|(d, _)| *d != axis)
            .map(|(_, &s)| s)
            .collect();
        let rregs = if rshape.is_empty() {
            1
        } else {
            out_layout.regs_per_thread(&rshape)
        };
        let size = sshape[axis];
        let combine = |x: &str, y: &str| -> String {
            match kind {
                ReduceKind::Sum => format!("({x} + {y})"),
                ReduceKind::Prod => format!("({x} * {y})"),
                ReduceKind::Max if st.is_float() => format!("{}({x}, {y})", float_fn("fmax", st)),
                ReduceKind::Min if st.is_float() => format!("{}({x}, {y})", float_fn("fmin", st)),
                ReduceKind::Max => format!("({x} > {y} ? {x} : {y})"),
                ReduceKind::Min => format!("({x} < {y} ? {x} : {y})"),
                ReduceKind::And => format!("({x} & {y})"),
                ReduceKind::Or => format!("({x} | {y})"),
                ReduceKind::Xor => format!("({x} ^ {y})"),
                ReduceKind::Argmax | ReduceKind::Argmin => unreachable!(),
            }
        };
        // In-thread: parent registers of each result register.
        let pdigits = pl.digits(&sshape);
        let mut scale = 1;
        let mut keep = Vec::new(); // (scale, size, is_axis, eff)
        for g in &pdigits {
            let eff = if g.dim as usize == axis {
                if g.stride >= size {
                    1
                } else {
                    g.size.min(size / g.stride).max(1)
                }
            } else {
                g.size
            };
            keep.push((scale, g.size, g.dim as usize == axis, eff));
            scale *= g.size;
        }
        let inner: u32 = keep.iter().filter(|k| k.2).map(|k| k.3).product();
        // Parent register of (result reg q, axis index t): non-axis digits
        // from q (in order), axis digits from t.
        let preg = |q: &str, t: &str| -> String {
            let mut parts = Vec::new();
            let (mut qs, mut ts) = (1u32, 1u32);
            for &(pscale, psize, is_axis, eff) in &keep {
                if is_axis {
                    if eff > 1 {
                        parts.push(format!("(({t} / {ts}) % {eff}) * {pscale}"));
                    }
                    ts *= eff;
                } else {
                    if psize > 1 {
                        parts.push(format!("(({q} / {qs}) % {psize}) * {pscale}"));
                    }
                    qs *= psize;
                }
            }
            if parts.is_empty() {
                "0".into()
            } else {
                parts.join(" + ")
            }
        };
        let acc = self.tmp("red");
        self.line(format!("{ct} {acc}[{rregs}];"));
        let p0 = preg("q", "0");
        let pt = preg("q", "t");
        let x0 = load_c(st, &format!("{a}[{p0}]"));
        let xt = load_c(st, &format!("{a}[{pt}]"));
        let comb = combine(&format!("{acc}[q]"), &xt);
        self.line(format!(
            "#pragma unroll\nfor (int q = 0; q < {rregs}; ++q) {{\n  {acc}[q] = {x0};\n#pragma unroll\n  for (int t = 1; t < {inner}; ++t) {acc}[q] = {comb};\n}}"
        ));
        // Across lanes.
        let terms = pl.thread_terms()[axis].clone();
        for t in terms.iter().filter(|t| t.id == ThreadId::Lane) {
            let mut j = 1;
            while j < t.modulo && j * t.scale < size {
                let mask = t.div * j;
                let shfl = format!("tw_shfl_xor({acc}[q], {mask})");
                let comb = combine(&format!("{acc}[q]"), &shfl);
                self.line(format!(
                    "#pragma unroll\nfor (int q = 0; q < {rregs}; ++q) {acc}[q] = {comb};"
                ));
                j *= 2;
            }
        }
        // Across warps.
        let wterms: Vec<_> = terms
            .iter()
            .filter(|t| t.id == ThreadId::Warp)
            .copied()
            .collect();
        if let Some(t) = wterms.first() {
            let eff = if t.scale >= size {
                1
            } else {
                t.modulo.min(size / t.scale)
            };
            if eff > 1 {
                let numel: u32 = rshape.iter().product::<u32>().max(1);
                self.smem(numel * eff * 8);
                let lin = if rshape.is_empty() {
                    "0".to_string()
                } else {
                    linear_c(&out_layout, &rshape, "q")
                };
                self.barrier();
                self.line(format!(
                    "#pragma unroll\nfor (int q = 0; q < {rregs}; ++q) (({ct}*)tw_smem)[({lin}) * {eff} + (warp / {}) % {eff}] = {acc}[q];",
                    t.div
                ));
                self.barrier();
                let comb = combine(
                    &format!("{acc}[q]"),
                    &format!("(({ct}*)tw_smem)[({lin}) * {eff} + w]"),
                );
                self.line(format!(
                    "#pragma unroll\nfor (int q = 0; q < {rregs}; ++q) {{\n  {acc}[q] = (({ct}*)tw_smem)[({lin}) * {eff}];\n#pragma unroll\n  for (int w = 1; w < {eff}; ++w) {acc}[q] = {comb};\n}}"
                ));
            }
        }
        let c = cty(rt);
        if rshape.is_empty() {
            let e = store_c(rt, &format!("{acc}[0]"));
            self.line(format!("const {c} {name} = {e};"));
        } else {
            let e = store_c(rt, &format!("{acc}[r]"));
            self.line(format!("{c} {name}[{rregs}];\n#pragma unroll\nfor (int r = 0; r < {rregs}; ++r) {name}[r] = {e};"));
        }
        Ok(())
    }

    // ------------------------------------------------------------------- trans

    /// `trans`: in a layout that is the operand's permuted
    /// ([`Layout::permuted`]) the result's registers are the operand's, so
    /// the operand is fetched in the inverse permutation of `layout` (a
    /// rename when that is its home, as `layout_assign` arranges) and
    /// copied register for register. An MMA layout has no permuted form:
    /// the transpose is then taken in the default blocked layout and
    /// converted.
    /// `reshape`, `join` and `split` that are not register renames
    /// ([`Regroup`], [`Emitter::regroup_rename`]), through shared memory. A reshape
    /// keeps every element's row-major position, and `join` / `split` are
    /// a reshape that adds / removes an innermost dimension of 2 (element
    /// `k` of it at position `2 * i + k`): the operands are written at
    /// their positions in their own layouts, and the results read at
    /// theirs in the layouts `layout_assign` gave them.
    fn regroup(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let why_shared = match self.layouts.regroup(op) {
            Some(Regroup::Rename { below }) => return self.regroup_rename(op, *below),
            Some(Regroup::Shared(why)) => format!(": not a register rename: {why}"),
            None => String::new(),
        };
        // (value, positions per element, offset): element i of the value
        // sits at `i * per + offset`.
        let (writes, reads): (Vec<(Value, u32, u32)>, Vec<(Value, u32, u32)>) = match data.kind {
            OpKind::Reshape => (
                vec![(data.operands[0], 1, 0)],
                vec![(data.results[0], 1, 0)],
            ),
            OpKind::Join => (
                vec![(data.operands[0], 2, 0), (data.operands[1], 2, 1)],
                vec![(data.results[0], 1, 0)],
            ),
            OpKind::Split => (
                vec![(data.operands[0], 1, 0)],
                vec![(data.results[0], 2, 0), (data.results[1], 2, 1)],
            ),
            _ => unreachable!(),
        };
        let home = |v: Value| {
            self.layouts
                .home(v)
                .cloned()
                .ok_or_else(|| unsupported(data.loc, "internal: regrouped tile without a layout"))
        };
        let c = elem_cty(self.elem(data.results[0]));
        let numel: u32 =
            self.ty(data.results[0]).shape().iter().product::<u32>() * reads.len() as u32;
        self.smem(numel * access_bytes_c(self.elem(data.results[0])) as u32);
        self.line(format!(
            "// {} through shared memory{why_shared}",
            tawa_ir::printer::op_name(&data.kind)
        ));
        self.barrier();
        for (v, per, off) in writes {
            let layout = home(v)?;
            let shape = self.ty(v).shape().to_vec();
            let src = self.tile(v, &layout)?;
            let regs = layout.regs_per_thread(&shape);
            let lin = linear_c(&layout, &shape, "r");
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) (({c}*)tw_smem)[({lin}) * {per} + {off}] = {src}[r];"
            ));
        }
        self.barrier();
        for (r, per, off) in reads {
            let layout = home(r)?;
            let shape = self.ty(r).shape().to_vec();
            let name = self.name_for(r);
            let regs = layout.regs_per_thread(&shape);
            let lin = linear_c(&layout, &shape, "r");
            self.line(format!(
                "{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = (({c}*)tw_smem)[({lin}) * {per} + {off}];"
            ));
            self.vals.insert(r, CVal::Tile(name));
        }
        Ok(())
    }

    /// `reshape`, `join` and `split` as register renames
    /// ([`Regroup::Rename`]): each result register is an operand register
    /// (the same one for `reshape`; for `split` and `join`, the one
    /// [`crate::layout::halves_register`] names), copied by register
    /// index, which the CUDA compiler turns into no instruction at all.
    fn regroup_rename(&mut self, op: Op, below: u32) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let c = elem_cty(self.elem(data.results[0]));
        let what = tawa_ir::printer::op_name(&data.kind);
        let layout = |e: &Self, v: Value| {
            e.layouts
                .home(v)
                .cloned()
                .ok_or_else(|| unsupported(data.loc, "internal: renamed tile without a layout"))
        };
        self.line(format!("// {what}: {RENAME}"));
        let halves = |h: u32| {
            format!(
                "(r % {below}) + {h} * {below} + (r / {below}) * {}",
                2 * below
            )
        };
        match data.kind {
            OpKind::Reshape => {
                let (v, r) = (data.operands[0], data.results[0]);
                let src = self.tile(v, &layout(self, v)?)?;
                let name = self.name_for(r);
                let regs = self.regs(r, &layout(self, r)?);
                self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {src}[r];"));
                self.vals.insert(r, CVal::Tile(name));
            }
            OpKind::Split => {
                let v = data.operands[0];
                let src = self.tile(v, &layout(self, v)?)?;
                for (h, &r) in data.results.iter().enumerate() {
                    let name = self.name_for(r);
                    let regs = self.regs(r, &layout(self, r)?);
                    let at = halves(h as u32);
                    self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {src}[{at}];"));
                    self.vals.insert(r, CVal::Tile(name));
                }
            }
            OpKind::Join => {
                // Both operands in the first one's home, the layout the
                // rename was decided for.
                let home = layout(self, data.operands[0])?;
                let r = data.results[0];
                let name = self.name_for(r);
                let regs = self.regs(r, &layout(self, r)?);
                self.line(format!("{c} {name}[{regs}];"));
                for (h, &v) in data.operands.iter().enumerate() {
                    let src = self.tile(v, &home)?;
                    let at = halves(h as u32);
                    self.line(format!(
                        "#pragma unroll\nfor (int r = 0; r < {}; ++r) {name}[{at}] = {src}[r];",
                        regs / 2
                    ));
                }
                self.vals.insert(r, CVal::Tile(name));
            }
            _ => unreachable!("only reshape, split and join regroup"),
        }
        Ok(())
    }

    fn trans(&mut self, op: Op, perm: &[u32], layout: &Layout, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let (src, r) = (data.operands[0], data.results[0]);
        let mut inverse = vec![0u32; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p as usize] = i as u32;
        }
        let c = elem_cty(self.elem(r));
        let regs = self.regs(r, layout);
        // A rename of the operand's registers (an accumulator's spelled-out
        // layout, permuted; `layout_assign` decided it): register r keeps
        // its element.
        let renamed = match self.layouts.regroup(op) {
            Some(Regroup::Rename { .. }) => self.layouts.home(src).cloned(),
            _ => None,
        };
        let a = match (renamed, layout.permuted(&inverse)) {
            (Some(home), _) => self.tile(src, &home)?,
            (None, Some(src_layout)) => self.tile(src, &src_layout)?,
            (None, None) => {
                let mid = crate::layout_assign::default_layout(self.ty(r), self.num_warps)
                    .ok_or_else(|| unsupported(data.loc, "internal: `trans` of a non-tile"))?;
                let src_layout = mid
                    .permuted(&inverse)
                    .ok_or_else(|| unsupported(data.loc, "internal: no permuted default layout"))?;
                let a = self.tile(src, &src_layout)?;
                self.convert(r, &a, &mid, layout)?
            }
        };
        self.line(format!("{c} {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {a}[r];"));
        Ok(())
    }

    // --------------------------------------------------------------------- dot

    /// Writes operand tile `v` (register array `array` in `layout`) into
    /// shared memory at byte `base` of `tw_smem_raw`, laid out as `smem`
    /// says ([`OperandSmem`]).
    fn write_operand(
        &mut self,
        array: &str,
        layout: &Layout,
        v: Value,
        smem: OperandSmem,
        base: u32,
    ) {
        let shape = self.ty(v).shape().to_vec();
        let s = self.scalar_of(v);
        let eb = s.byte_size();
        let c = cty(s);
        let w = smem.w;
        let (line_dim, along_dim) = smem.line_and_along();
        let lines = shape[line_dim];
        let regs = layout.regs_per_thread(&shape);
        let line = Self::coord_c(layout, &shape, line_dim, "r");
        let along = Self::coord_c(layout, &shape, along_dim, "r");
        // A blocked layout whose registers run along the line holds whole
        // 16-byte chunks of it (its thread offsets there are multiples of
        // the per-thread run), and a swizzle moves 16-byte chunks only:
        // write those with one vector store each.
        let run = match (layout, layout.digits(&shape).first()) {
            (Layout::Blocked(b), Some(d))
                if d.dim as usize == along_dim
                    && d.stride == 1
                    && b.size_per_thread[along_dim] == d.size =>
            {
                d.size
            }
            _ => 1,
        };
        let v = run.min(16 / eb.max(1));
        let at = format!("tw_smem_raw + {base} + tw_swz({line}, ({along}) * {eb}, {lines}, {w})");
        if v > 1 && (v * eb).is_power_of_two() && run.is_multiple_of(v) && regs.is_multiple_of(v) {
            let vt = vec_type(v * eb);
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; r += {v}) {{\n  union {{ {vt} u; {c} e[{v}]; }} t;\n#pragma unroll\n  for (int e = 0; e < {v}; ++e) t.e[e] = {array}[r + e];\n  *({vt}*)({at}) = t.u;\n}}"
            ));
        } else {
            self.line(format!(
                "#pragma unroll\nfor (int r = 0; r < {regs}; ++r) *({c}*)({at}) = {array}[r];"
            ));
        }
    }

    /// Where a dot operand is in shared memory: an aref slot it was got
    /// from, its operand buffer, or `scratch_offset` in the scratch area
    /// after writing it there from registers. Returns the byte offset from
    /// `tw_smem_raw` (a C expression) and the layout.
    fn operand_in_smem(
        &mut self,
        v: Value,
        k_dim: usize,
        mma: &Mma,
        scratch_offset: u32,
        loc: Loc,
    ) -> Res<(String, OperandSmem)> {
        if let Some((base, smem)) = self.views.get(&v) {
            return Ok((base.clone(), *smem));
        }
        if let Some(buf) = self.operand_buffers.get(&v) {
            return Ok((buf.offset.to_string(), buf.smem));
        }
        let layout = self
            .layouts
            .home(v)
            .cloned()
            .ok_or_else(|| unsupported(Loc::UNKNOWN, "internal: dot operand without layout"))?;
        let shape = self.ty(v).shape().to_vec();
        let eb = self.scalar_of(v).byte_size();
        let smem = operand_smem(&layout, &shape, k_dim, eb, mma, self.mn_major_operands).ok_or_else(|| {
            unsupported(
                loc,
                format!(
                    "`tl.dot` operand of shape {shape:?}: its K or M/N extent must make 32, 64 or a multiple of 128 bytes"
                ),
            )
        })?;
        let a = self.tile(v, &layout)?;
        let base = self.operand_buffer_bytes + scratch_offset;
        self.write_operand(&a, &layout, v, smem, base);
        Ok((base.to_string(), smem))
    }

    /// Whether `a`, the A operand of a wgmma dot in `mma`, can be read from
    /// registers (wgmma's register-A form) instead of shared memory: a
    /// 16-bit tile in a wgmma accumulator layout with the dot's warps, one
    /// warp per 16 rows and all of K in each warp (`warps = [W, 1]`), the
    /// layout of a dot's result converted elementwise (attention's `p`).
    /// That layout's registers of a row block's n8 columns `8j..8j+8` are
    /// `4j..4j+4` (row `gid`: `4j`, `4j+1`; row `gid+8`: `4j+2`, `4j+3`),
    /// and the A fragment of K columns `16s..16s+16` is exactly the n8
    /// blocks `2s` and `2s+1` packed in pairs: the accumulator of one
    /// wgmma is the A operand of the next, with no data movement.
    fn a_fragments_in_registers(&self, a: Value, mma: &Mma) -> bool {
        let Some(Layout::Mma(pa)) = self.layouts.home(a) else {
            return false;
        };
        let shape = self.ty(a).shape();
        mma.version == MmaVersion::V3
            && pa.version == MmaVersion::V3
            && pa.warps_per_cta == mma.warps_per_cta
            && mma.warps_per_cta[1] == 1
            && matches!(self.scalar_of(a), ScalarType::F16 | ScalarType::BF16)
            && shape.len() == 2
            && pa.instr_n % 16 == 0
            && shape[1] % pa.instr_n == 0
            && matches!(self.vals.get(&a), Some(CVal::Tile(_)))
    }

    fn dot(&mut self, op: Op, layout: &Layout, name: &str) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let OpKind::Dot {
            input_precision,
            is_async,
            ..
        } = &data.kind
        else {
            unreachable!()
        };
        let Layout::Mma(mma) = layout else {
            return Err(unsupported(
                data.loc,
                "internal: dot result not in an MMA layout",
            ));
        };
        let (a, b, acc) = (data.operands[0], data.operands[1], data.operands[2]);
        let r = data.results[0];
        let shape = self.ty(r).shape().to_vec();
        let (m, n) = (shape[0], shape[1]);
        let k = self.ty(a).shape()[1];
        let at = self.scalar_of(a);
        let bt = self.scalar_of(b);
        if at != bt {
            return Err(unsupported(
                data.loc,
                format!("`tl.dot` of {at} and {bt} operands: cast them to one type first"),
            ));
        }
        if self.scalar_of(r) != ScalarType::F32 {
            return Err(unsupported(
                data.loc,
                "the CUDA backend accumulates `tl.dot` in f32 only (use out_dtype=tl.float32)",
            ));
        }
        let eb = at.byte_size();
        let kbytes = k * eb;
        self.line(format!("// dot {m}x{n}x{k} ({layout})"));
        let in_smem =
            |e: &Self, v: &Value| e.operand_buffers.contains_key(v) || e.views.contains_key(v);
        // An async dot reads its register A fragments after it issues, as
        // it reads shared memory: the generated code never writes the
        // packed fragment registers again, and ptxas keeps them until the
        // group's `wgmma.wait_group` (coarse pipelining's `p @ v`).
        let a_regs = !in_smem(self, &a) && self.a_fragments_in_registers(a, mma);
        let staged_here = (!a_regs && !in_smem(self, &a)) || !in_smem(self, &b);
        let scratch_b = if a_regs || in_smem(self, &a) {
            0
        } else {
            (m * kbytes).div_ceil(1024) * 1024
        };
        if staged_here {
            // Earlier dots may still read the scratch area.
            self.smem(scratch_b + n * kbytes);
            self.barrier();
        }
        let (a_base, a_smem) = if a_regs {
            // `a` stays in registers: `a_base` names its array.
            let home = self
                .layouts
                .home(a)
                .cloned()
                .ok_or_else(|| unsupported(data.loc, "internal: dot operand without layout"))?;
            let regs = self.tile(a, &home)?;
            (
                regs,
                OperandSmem {
                    k_dim: 1,
                    mn_major: false,
                    w: 0,
                },
            )
        } else {
            self.operand_in_smem(a, 1, mma, 0, data.loc)?
        };
        let (b_base, b_smem) = self.operand_in_smem(b, 0, mma, scratch_b, data.loc)?;
        if mma.version == MmaVersion::V2 && (a_smem.mn_major || b_smem.mn_major) {
            return Err(unsupported(
                data.loc,
                "internal: MN-major operand for mma.sync",
            ));
        }
        let (wa, wb) = (a_smem.w, b_smem.w);
        // Generic-proxy writes (ours) before async-proxy reads (wgmma).
        // Aref slots are written by TMA, whose completion the mbarrier wait
        // already made visible; registers and buffers fenced where they
        // were written need nothing.
        let fenced = |e: &Self, v: &Value, regs: bool| {
            regs || e.views.contains_key(v) || e.fenced_buffers.contains(v)
        };
        if !fenced(self, &a, a_regs) || !fenced(self, &b, false) {
            self.line("asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");");
            self.barrier();
        }
        let regs = layout.regs_per_thread(&shape);
        let accv = self.tile(acc, layout)?;
        self.line(format!("float {name}[{regs}];\n#pragma unroll\nfor (int r = 0; r < {regs}; ++r) {name}[r] = {accv}[r];"));
        let reps = mma.reps(&shape);
        let [wm, wn] = mma.warps_per_cta;
        match mma.version {
            MmaVersion::V3 => self.wgmma(
                mma,
                name,
                regs,
                reps,
                at,
                *input_precision,
                k,
                m,
                n,
                [(a_base, a_smem), (b_base, b_smem)],
                a_regs.then_some(a),
                *is_async,
            )?,
            // `mma.sync` completes when issued: an async dot is simply done
            // early, and its `dot_wait` has nothing left to wait for.
            MmaVersion::V2 => {
                if !matches!(at, ScalarType::F16 | ScalarType::BF16) {
                    return Err(unsupported(data.loc, "`mma.sync` fallback takes f16/bf16 operands only; use 4 warps and BLOCK_M >= 64 for wgmma"));
                }
                let ty = if at == ScalarType::F16 { "f16" } else { "bf16" };
                self.line("{");
                self.indent += 1;
                self.line(format!(
                    "const int wm_ = warp % {wm}, wn_ = (warp / {wm}) % {wn};"
                ));
                self.line("const int gid = lane >> 2, tig = lane & 3;");
                for rm in 0..reps[0] {
                    for rn in 0..reps[1] {
                        let d0 = (rm * reps[1] + rn) * 4;
                        self.line(format!(
                            "#pragma unroll\nfor (int ks = 0; ks < {}; ++ks) {{",
                            k / 16
                        ));
                        self.indent += 1;
                        self.line(format!(
                            "const unsigned row = ({} + wm_ * 16 + gid) % {m};",
                            rm * 16 * wm
                        ));
                        self.line(format!(
                            "const unsigned row8 = ({} + wm_ * 16 + gid + 8) % {m};",
                            rm * 16 * wm
                        ));
                        self.line(format!(
                            "const unsigned col = ({} + wn_ * 8 + gid) % {n};",
                            rn * 8 * wn
                        ));
                        self.line("const unsigned kb = (ks * 16 + tig * 2) * 2;");
                        let lda = |row: &str, kb: &str| {
                            format!("*(const unsigned*)(tw_smem_raw + {a_base} + tw_swz({row}, {kb}, {m}, {wa}))")
                        };
                        let ldb = |kb: &str| {
                            format!("*(const unsigned*)(tw_smem_raw + {b_base} + tw_swz(col, {kb}, {n}, {wb}))")
                        };
                        self.line(format!(
                            "const unsigned a0 = {}, a1 = {}, a2 = {}, a3 = {};",
                            lda("row", "kb"),
                            lda("row8", "kb"),
                            lda("row", "kb + 16"),
                            lda("row8", "kb + 16")
                        ));
                        self.line(format!(
                            "const unsigned b0 = {}, b1 = {};",
                            ldb("kb"),
                            ldb("kb + 16")
                        ));
                        self.line(format!(
                            "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\"\n  : \"+f\"({name}[{}]), \"+f\"({name}[{}]), \"+f\"({name}[{}]), \"+f\"({name}[{}])\n  : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));",
                            d0, d0 + 1, d0 + 2, d0 + 3
                        ));
                        self.indent -= 1;
                        self.line("}");
                    }
                }
                self.indent -= 1;
                self.line("}");
            }
        }
        Ok(())
    }

    /// `dot_wait`: `wgmma.wait_group`, then the results are the operands'
    /// registers, fenced so that the C++ compiler does not move their reads
    /// above the wait.
    fn dot_wait(&mut self, op: Op, pending: u32) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        if !self.waited_by_loop.contains(&op) {
            self.line(format!(
                "asm volatile(\"wgmma.wait_group.sync.aligned {pending};\" ::: \"memory\");"
            ));
        }
        if pending == 0 {
            self.mma_in_flight = false;
        }
        for (&v, &r) in data.operands.iter().zip(&data.results) {
            let value = self.vals.get(&v).cloned().ok_or_else(|| {
                unsupported(data.loc, "internal: dot_wait of a value not yet emitted")
            })?;
            if let CVal::Tile(name) = &value {
                let regs = match self.layouts.home(v) {
                    Some(l) => l.regs_per_thread(self.ty(v).shape()),
                    None => {
                        return Err(unsupported(
                            data.loc,
                            "internal: dot_wait of a tile without a layout",
                        ))
                    }
                };
                self.line(format!("#pragma unroll\nfor (int r = 0; r < {regs}; ++r) asm volatile(\"\" : \"+f\"({name}[r]) :: \"memory\");"));
            }
            self.vals.insert(r, value);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn wgmma(
        &mut self,
        mma: &Mma,
        name: &str,
        regs: u32,
        reps: [u32; 2],
        at: ScalarType,
        precision: InputPrecision,
        k: u32,
        m: u32,
        n: u32,
        [(a_base, a_smem), (b_base, b_smem)]: [(String, OperandSmem); 2],
        a_in_registers: Option<Value>,
        is_async: bool,
    ) -> Res<()> {
        let [wm, wn] = mma.warps_per_cta;
        let (kstep, types, can_transpose) = match at {
            ScalarType::F16 => (16, "f32.f16.f16", true),
            ScalarType::BF16 => (16, "f32.bf16.bf16", true),
            ScalarType::F32 if precision != InputPrecision::Ieee => (8, "f32.tf32.tf32", false),
            ScalarType::F8E4M3 => (32, "f32.e4m3.e4m3", false),
            ScalarType::F8E5M2 => (32, "f32.e5m2.e5m2", false),
            other => {
                return Err(unsupported(
                    Loc::UNKNOWN,
                    format!("no wgmma for {other} operands"),
                ))
            }
        };
        let eb = at.byte_size();
        let nn = mma.instr_n;
        let per = nn / 2;
        self.line("{");
        self.indent += 1;
        self.line("const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);");
        self.line(format!(
            "const int gm_ = (warp / 4) % {}, gn_ = warp / {wm};",
            wm / 4
        ));
        self.line(format!("#pragma unroll\nfor (int r = 0; r < {regs}; ++r) asm volatile(\"\" : \"+f\"({name}[r]) :: \"memory\");"));
        let ksteps = k / kstep;
        // The A fragment of rows block `rm`, K columns [kstep*ks, +kstep):
        // registers `pa_`, `+2`, `+4`, `+6` (each with the next) of the
        // accumulator layout `a` is in (module docs:
        // a_fragments_in_registers).
        let fragment_start = |e: &Self, a: Value, rm: &str| {
            let Some(Layout::Mma(pa)) = e.layouts.home(a) else {
                unreachable!("checked by a_fragments_in_registers")
            };
            let pa_reps = pa.reps(e.ty(a).shape());
            let pn = pa.instr_n;
            format!(
                "const int pa_ = ({rm} * {} + (ks * {kstep}) / {pn}) * {} + ((ks * {kstep}) % {pn}) / 8 * 4;",
                pa_reps[1],
                pn / 2
            )
        };
        let pack = |i: u32| {
            format!(
                "tw_pack2({a_base}[pa_ + {}], {a_base}[pa_ + {}])",
                2 * i,
                2 * i + 1
            )
        };
        let prepacked = is_async && a_in_registers.is_some();
        if let (true, Some(a)) = (prepacked, a_in_registers) {
            // An async dot's fragments are all packed before the
            // `wgmma.fence` (and pinned there), as CUTLASS fences its
            // register operands: a register written between the fence and
            // its wgmma makes ptxas inject a warpgroup arrive of its own,
            // on which it serializes the wgmmas of a loop that keeps groups
            // in flight (its C7520). Synchronous dots pack each fragment
            // where it is read, which holds fewer registers at once.
            let frags = reps[0] * ksteps * 4;
            self.line(format!("unsigned afr_[{frags}];"));
            self.line(format!(
                "#pragma unroll\nfor (int rm_ = 0; rm_ < {}; ++rm_) {{\n#pragma unroll\nfor (int ks = 0; ks < {ksteps}; ++ks) {{",
                reps[0]
            ));
            self.indent += 1;
            self.line(fragment_start(self, a, "rm_"));
            for i in 0..4 {
                self.line(format!(
                    "afr_[(rm_ * {ksteps} + ks) * 4 + {i}] = {};",
                    pack(i)
                ));
            }
            self.indent -= 1;
            self.line("}\n}");
            self.line(format!("#pragma unroll\nfor (int r = 0; r < {frags}; ++r) asm volatile(\"\" : \"+r\"(afr_[r]) :: \"memory\");"));
        }
        self.line("asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");");
        let dlist: Vec<String> = (0..per).map(|i| format!("%{i}")).collect();
        if !can_transpose && (a_smem.mn_major || b_smem.mn_major) {
            return Err(unsupported(
                Loc::UNKNOWN,
                format!("internal: MN-major {at} operand (wgmma transposes 16-bit types only)"),
            ));
        }
        let imm = if can_transpose {
            format!(
                "p, 1, 1, {}, {}",
                a_smem.mn_major as u32, b_smem.mn_major as u32
            )
        } else {
            "p, 1, 1".to_string()
        };
        for rm in 0..reps[0] {
            for rn in 0..reps[1] {
                let d0 = (rm * reps[1] + rn) * per;
                self.line(format!(
                    "#pragma unroll\nfor (int ks = 0; ks < {ksteps}; ++ks) {{"
                ));
                self.indent += 1;
                self.line(format!("const unsigned kb = ks * {};", kstep * eb));
                if a_smem.mn_major || b_smem.mn_major {
                    self.line(format!("const unsigned k0 = ks * {kstep};"));
                }
                // First row of `a` / column of `b` this instruction reads.
                let m0 = format!("{} + gm_ * 64", rm * 16 * wm);
                let n0 = format!("{} + gn_ * {nn}", rn * nn * wn);
                let db = format!(
                    "const unsigned long long db = {};",
                    operand_desc(&b_base, b_smem, &n0, n, k, eb)
                );
                let outs: Vec<String> = (0..per)
                    .map(|i| format!("\"+f\"({name}[{}])", d0 + i))
                    .collect();
                if let Some(a) = a_in_registers {
                    let f = |i: u32| {
                        if prepacked {
                            format!("afr_[({rm} * {ksteps} + ks) * 4 + {i}]")
                        } else {
                            pack(i)
                        }
                    };
                    if !prepacked {
                        self.line(fragment_start(self, a, &rm.to_string()));
                    }
                    self.line(format!(
                        "const unsigned a0_ = {}, a1_ = {}, a2_ = {}, a3_ = {};",
                        f(0),
                        f(1),
                        f(2),
                        f(3)
                    ));
                    self.line(db);
                    let imm_b = format!("p, 1, 1, {}", b_smem.mn_major as u32);
                    self.line(format!(
                        "asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n{nn}k{kstep}.{types} {{{}}}, {{%{}, %{}, %{}, %{}}}, %{}, {imm_b};\\n}}\"\n  : {}\n  : \"r\"(a0_), \"r\"(a1_), \"r\"(a2_), \"r\"(a3_), \"l\"(db));",
                        dlist.join(", "),
                        per,
                        per + 1,
                        per + 2,
                        per + 3,
                        per + 4,
                        outs.join(", ")
                    ));
                    self.indent -= 1;
                    self.line("}");
                    continue;
                }
                self.line(format!(
                    "const unsigned long long da = {};",
                    operand_desc(&a_base, a_smem, &m0, m, k, eb)
                ));
                self.line(db);
                self.line(format!(
                    "asm volatile(\"{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n{nn}k{kstep}.{types} {{{}}}, %{}, %{}, {imm};\\n}}\"\n  : {}\n  : \"l\"(da), \"l\"(db));",
                    dlist.join(", "),
                    per,
                    per + 1,
                    outs.join(", ")
                ));
                self.indent -= 1;
                self.line("}");
            }
        }
        self.line("asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");");
        // An async dot leaves its group in flight: the `dot_wait` that
        // retires it waits and fences the accumulators.
        self.mma_in_flight = is_async;
        if !is_async {
            self.line("asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");");
            self.line(format!("#pragma unroll\nfor (int r = 0; r < {regs}; ++r) asm volatile(\"\" : \"+f\"({name}[r]) :: \"memory\");"));
        }
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    // ------------------------------------------------------------ control flow

    fn for_loop(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let body = data.regions[0];
        let args = f.blocks[body].args.clone();
        let (lb, ub, step) = (
            self.scalar(data.operands[0])?,
            self.scalar(data.operands[1])?,
            self.scalar(data.operands[2])?,
        );
        let mut carried = Vec::new();
        for (i, &arg) in args[1..].iter().enumerate() {
            let c = self.declare_carried(arg)?;
            self.assign_carried(&c, arg, data.operands[3 + i])?;
            carried.push((c, arg));
        }
        let iv = self.name_for(args[0]);
        let ivt = elem_cty(self.elem(args[0]));
        // A loop that leaves wgmma groups in flight, drained right after:
        // the drain goes inside a guard on the trip count, so that the
        // accumulators of the zero-trip path and of the loop meet only
        // after the wait. Otherwise ptxas sees registers of a group in
        // flight merge with plain ones and serializes every wgmma of the
        // loop (its C7514 warning).
        let drain = self.drain_after(op);
        let in_flight_at_entry = self.mma_in_flight;
        if drain.is_some() {
            self.line(format!("if ({lb} < {ub}) {{"));
            self.indent += 1;
        }
        self.line(format!(
            "for ({ivt} {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{"
        ));
        self.indent += 1;
        self.copies.push(HashMap::new());
        self.vals.insert(args[0], CVal::Scalar(iv));
        for (c, arg) in &carried {
            self.vals.insert(*arg, c.clone());
        }
        self.block(body)?;
        let yielded = self.terminator(body);
        self.assign_all(&carried, &yielded)?;
        self.copies.pop();
        self.indent -= 1;
        self.line("}");
        if let Some(wait) = drain {
            let full_wait = "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");";
            self.line(full_wait);
            self.indent -= 1;
            if in_flight_at_entry {
                // Groups issued before the loop still need their wait.
                self.line(format!("}} else {{\n  {full_wait}\n}}"));
            } else {
                self.line("}");
            }
            self.waited_by_loop.insert(wait);
            self.mma_in_flight = false;
        }
        for (i, &r) in data.results.iter().enumerate() {
            self.vals.insert(r, carried[i].0.clone());
        }
        Ok(())
    }

    /// The `dot_wait {pending = 0}` right after `for` op `the_loop` that
    /// waits for the groups the loop leaves in flight, if there is one.
    fn drain_after(&self, the_loop: Op) -> Option<Op> {
        let f = self.func;
        let block = f.block_of(the_loop)?;
        let ops = &f.blocks[block].ops;
        let next = *ops.get(ops.iter().position(|&o| o == the_loop)? + 1)?;
        let data = &f.ops[next];
        let results = &f.ops[the_loop].results;
        let drains = matches!(data.kind, OpKind::DotWait { pending: 0 })
            && !data.operands.is_empty()
            && data.operands.iter().all(|v| results.contains(v));
        drains.then_some(next)
    }

    fn terminator(&self, block: Block) -> Vec<Value> {
        let last = *self.func.blocks[block].ops.last().unwrap();
        self.func.ops[last].operands.clone()
    }

    fn if_op(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let cond = self.scalar(data.operands[0])?;
        let mut outs = Vec::new();
        for &r in &data.results {
            let c = self.declare_carried(r)?;
            outs.push((c, r));
        }
        self.line(format!("if ({cond}) {{"));
        for (i, &region) in data.regions.iter().enumerate() {
            if i == 1 {
                self.line("} else {");
            }
            self.indent += 1;
            self.copies.push(HashMap::new());
            self.block(region)?;
            let y = self.terminator(region);
            for ((c, rv), v) in outs.iter().zip(&y) {
                self.assign_carried(c, *rv, *v)?;
            }
            self.copies.pop();
            self.indent -= 1;
        }
        self.line("}");
        for (c, r) in outs {
            self.vals.insert(r, c);
        }
        Ok(())
    }

    fn while_loop(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let (before, after) = (data.regions[0], data.regions[1]);
        let bargs = f.blocks[before].args.clone();
        let aargs = f.blocks[after].args.clone();
        let mut carried = Vec::new();
        for (i, &arg) in bargs.iter().enumerate() {
            let c = self.declare_carried(arg)?;
            self.assign_carried(&c, arg, data.operands[i])?;
            carried.push((c, arg));
        }
        let mut fwd = Vec::new();
        for &a in &aargs {
            let c = self.declare_carried(a)?;
            fwd.push((c, a));
        }
        self.line("while (true) {");
        self.indent += 1;
        self.copies.push(HashMap::new());
        for (c, arg) in &carried {
            self.vals.insert(*arg, c.clone());
        }
        self.block(before)?;
        let cond_ops = self.terminator(before);
        let cond = self.scalar(cond_ops[0])?;
        for ((c, a), &v) in fwd.iter().zip(&cond_ops[1..]) {
            self.assign_carried(c, *a, v)?;
        }
        self.line(format!("if (!{cond}) break;"));
        self.copies.pop();
        self.copies.push(HashMap::new());
        for (c, a) in &fwd {
            self.vals.insert(*a, c.clone());
        }
        self.block(after)?;
        let next = self.terminator(after);
        self.assign_all(&carried, &next)?;
        self.copies.pop();
        self.indent -= 1;
        self.line("}");
        for (i, &r) in data.results.iter().enumerate() {
            self.vals.insert(r, fwd[i].0.clone());
        }
        Ok(())
    }
}

/// C statement `st` under the conjunction of `conds` (none: always).
fn guarded(conds: &[String], st: String) -> String {
    if conds.is_empty() {
        st
    } else {
        format!("if ({}) {st}", conds.join(" && "))
    }
}

/// Every value an op of `func` reads (terminators included).
fn used_values(func: &Function) -> HashSet<Value> {
    let mut used = HashSet::new();
    func.walk(&mut |op| used.extend(func.ops[op].operands.iter().copied()));
    used
}

/// Elements per vector access for pointer tile `ptr` in `layout` by the
/// axis facts `facts`: the thread's run of adjacent registers, at most 16
/// bytes, as far as the pointers are contiguous (and aligned, unless
/// `assume_aligned`: a run-time check decides that) and the mask constant.
fn vec_width_by(
    facts: &AxisInfoMap,
    assume_aligned: bool,
    ptr: Value,
    mask: Option<Value>,
    layout: &Layout,
    shape: &[u32],
    elem_bytes: u32,
) -> u32 {
    let Some((dim, run)) = register_run(layout, shape) else {
        return 1;
    };
    let mut info = facts.get(ptr).clone();
    if info.contiguity.len() <= dim || info.divisibility.len() <= dim {
        return 1;
    }
    if assume_aligned {
        info.divisibility[dim] = crate::axis_info::MAX_DIVISIBILITY;
    }
    let minfo = mask.map(|m| facts.get(m));
    let max = run.min(16 / elem_bytes.max(1)).max(1);
    vector_width(
        &info,
        minfo.filter(|m| m.constancy.len() > dim),
        dim,
        elem_bytes,
        max,
    )
}

/// The run of a thread's registers that are adjacent elements along one
/// dimension (the layout's first digit): that dimension and the run's
/// length; `None` when consecutive registers are not adjacent elements.
fn register_run(layout: &Layout, shape: &[u32]) -> Option<(usize, u32)> {
    let first = layout.digits(shape).into_iter().next()?;
    (first.stride == 1 && first.size > 1).then_some((first.dim as usize, first.size))
}

/// Row-major linear index of register `r`'s element.
/// C expression of the wgmma descriptor of an operand at byte `base` of
/// shared memory, for the instruction whose first M/N index is `mn0`
/// (of `mn` in the tile) at the K step whose first K index is `k0`/byte
/// `kb` (variables of the emitted loop). The address splits into what
/// stays the same over the K steps (the tile, the instruction's rows:
/// `tw_lin` is linear in its line argument) and the K step's offset, a
/// constant once the K loop is unrolled.
fn operand_desc(base: &str, smem: OperandSmem, mn0: &str, mn: u32, k: u32, eb: u32) -> String {
    let w = smem.w;
    if smem.mn_major {
        // Lines are K indices: start at line k0, byte mn0 * eb along it.
        format!("tw_desc_mn(smem_u32 + {base} + tw_lin(0, ({mn0}) * {eb}, {k}, {w}), k0 * {w}, {w}, {k})")
    } else {
        format!("tw_desc(smem_u32 + {base} + ({mn0}) * {w}, tw_lin(0, kb, {mn}, {w}), {w})")
    }
}

fn linear_c(layout: &Layout, shape: &[u32], r: &str) -> String {
    let mut parts = Vec::new();
    let mut stride = 1u32;
    for d in (0..shape.len()).rev() {
        let co = Emitter::coord_c(layout, shape, d, r);
        parts.push(if stride == 1 {
            co
        } else {
            format!("{co} * {stride}")
        });
        stride *= shape[d];
    }
    parts.join(" + ")
}

/// Elements of a tile of `shape` that `layout` keeps in consecutive
/// registers along the last dimension, capped at a 16-byte vector.
fn vector_run(layout: &Layout, shape: &[u32], eb: u32) -> u32 {
    let last = shape.len() as u32 - 1;
    match layout.digits(shape).first() {
        Some(g) if g.dim == last && g.stride == 1 => g.size.min(16 / eb).max(1),
        _ => 1,
    }
}

/// Tile data a staged store's band of rows may hold (the rest of shared
/// memory goes to the aref rings); the band's padding comes on top. Fewer,
/// taller bands mean fewer passes over the registers, each with more warps
/// writing: on the H100 the 128x256 GEMM epilogue in bands of 64 rows
/// (32 KiB of data, 33 KiB with padding) made the 8192x8192x1024 GEMM 7%
/// faster than bands of 32 (`bench/RESULTS.md`). TMA stores stage in the
/// same budget (`tma_store_lower`), so that turning them off
/// (`--no-tma-store`) leaves the rings as deep.
const STAGING_BYTES: u32 = 32 * 1024;

/// The staging index of register `r` of `layout` and the guard before an
/// access to it: the padded linear index, or with `band = (lo, rows)`
/// (2-D) the index within the band and `if (row is in the band) `.
fn staged_at(
    layout: &Layout,
    shape: &[u32],
    r: &str,
    pitch: u32,
    band: Option<(&str, u32)>,
) -> (String, String) {
    match band {
        None => (padded_linear_c(layout, shape, r, pitch), String::new()),
        Some((lo, rows)) => {
            let row = Emitter::coord_c(layout, shape, 0, r);
            let col = Emitter::coord_c(layout, shape, 1, r);
            (
                format!("({col}) + (({row}) - {lo}) * {pitch}"),
                format!("if ((unsigned)(({row}) - {lo}) < {rows}u) "),
            )
        }
    }
}

/// Like [`linear_c`], with rows (the last dimension) `pitch` elements
/// apart instead of `shape[last]`.
fn padded_linear_c(layout: &Layout, shape: &[u32], r: &str, pitch: u32) -> String {
    let mut parts = Vec::new();
    let mut stride = 1u32;
    for d in (0..shape.len()).rev() {
        let co = Emitter::coord_c(layout, shape, d, r);
        parts.push(if stride == 1 {
            co
        } else {
            format!("({co}) * {stride}")
        });
        stride *= if d + 1 == shape.len() {
            pitch
        } else {
            shape[d]
        };
    }
    parts.join(" + ")
}

/// Register of `to` (at `to_shape`) that holds the element register `r` of
/// `from` (at `from_shape`) reads, for layouts with the same digit
/// structure: digits along `zeroed` dimensions read 0; with `drop_dim`,
/// `to` is the slice of `from` along it (its digits are skipped).
fn remap_c(
    from: &Layout,
    from_shape: &[u32],
    to: &Layout,
    to_shape: &[u32],
    zeroed: impl Fn(usize) -> bool,
    drop_dim: Option<u32>,
) -> String {
    let fd = from.digits(from_shape);
    let td = to.digits(to_shape);
    let mut parts = Vec::new();
    let mut fscale = 1;
    let mut tscale = 1;
    let mut ti = 0;
    for g in &fd {
        if Some(g.dim) == drop_dim {
            fscale *= g.size;
            continue;
        }
        let t = td[ti];
        ti += 1;
        if !zeroed(g.dim as usize) && t.size > 1 {
            parts.push(format!("((r / {fscale}) % {}) * {tscale}", t.size));
        }
        fscale *= g.size;
        tscale *= t.size;
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" + ")
    }
}

fn access_bytes_c(e: Elem) -> usize {
    match e {
        Elem::Scalar(s) => s.byte_size().max(1) as usize,
        Elem::Ptr(_) => 8,
    }
}

fn vec_type(bytes: u32) -> &'static str {
    match bytes {
        2 => "unsigned short",
        4 => "unsigned",
        8 => "uint2",
        _ => "uint4",
    }
}

fn const_c(k: ConstValue, t: ScalarType) -> String {
    match k {
        ConstValue::Int(i) => {
            if t.is_float() {
                store_c(t, &format!("{i}.0f"))
            } else if t == ScalarType::I1 {
                (if i != 0 { "true" } else { "false" }).into()
            } else {
                format!("({})({i}LL)", cty(t))
            }
        }
        ConstValue::Bool(b) => {
            if t.is_float() {
                store_c(t, if b { "1.0f" } else { "0.0f" })
            } else {
                format!("({})({})", cty(t), b as i32)
            }
        }
        ConstValue::Float(x) => {
            let lit = if x.is_nan() {
                "__int_as_float(0x7fc00000)".to_string()
            } else if x.is_infinite() {
                if x > 0.0 {
                    "__int_as_float(0x7f800000)".into()
                } else {
                    "__int_as_float(0xff800000)".into()
                }
            } else if t == ScalarType::F64 {
                format!("{x:?}")
            } else {
                format!("{:?}f", x as f32)
            };
            if t.is_float() {
                store_c(t, &lit)
            } else {
                format!("({})({lit})", cty(t))
            }
        }
    }
}

/// Conversion between element types (storage to storage).
fn cast_c(from: Elem, to: Elem, x: &str, rounding: Rounding) -> String {
    match (from, to) {
        (Elem::Ptr(_), Elem::Scalar(t)) => format!("({})(unsigned long long)({x})", cty(t)),
        (Elem::Scalar(_), Elem::Ptr(t)) => format!("({}*)(unsigned long long)({x})", cty(t)),
        (Elem::Ptr(_), Elem::Ptr(t)) => format!("({}*)({x})", cty(t)),
        (Elem::Scalar(f), Elem::Scalar(t)) => {
            let v = load_c(f, x);
            if t == ScalarType::I1 {
                return format!("({v} != 0)");
            }
            if narrow_float(t) {
                if rounding == Rounding::Rtz && t == ScalarType::F16 {
                    return format!("tw_f2h_rz((float)({v}))");
                }
                return store_c(t, &format!("(float)({v})"));
            }
            format!("({})({v})", cty(t))
        }
    }
}

/// Components of a block pointer / tensor descriptor bundle.
fn bundle_components(ty: &Type) -> Vec<(String, String)> {
    match ty {
        Type::BlockPtr { pointee, shape } => {
            let rank = shape.len();
            let mut v = vec![("base".to_string(), format!("{}*", cty(*pointee)))];
            v.extend((0..rank).map(|d| (format!("shape{d}"), "long long".into())));
            v.extend((0..rank).map(|d| (format!("stride{d}"), "long long".into())));
            v.extend((0..rank).map(|d| (format!("off{d}"), "int".into())));
            v
        }
        Type::TensorDesc { elem, block } => {
            let rank = block.len();
            let mut v = vec![("base".to_string(), format!("{}*", cty(*elem)))];
            v.extend((0..rank).map(|d| (format!("shape{d}"), "long long".into())));
            v.extend((0..rank).map(|d| (format!("stride{d}"), "long long".into())));
            v
        }
        _ => Vec::new(),
    }
}

const PRELUDE: &str = r#"
typedef unsigned short tw_f16;
typedef unsigned short tw_bf16;
typedef unsigned char tw_e4m3;
typedef unsigned char tw_e5m2;

extern __shared__ __align__(1024) unsigned char tw_smem_raw[];

// Masked vector loads as predicated PTX loads (`@p ld`), zero when the
// predicate is off. An `if (mask) v = *p;` compiles to a branch around
// each load, which stops the loads of an unrolled loop from being in
// flight together; a predicated load does not. `volatile` + "memory"
// keep them in program order with the kernel's other memory accesses.
static __device__ __forceinline__ uint4 tw_ld16(const void* p, bool pred) {
  uint4 v;
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %5, 0;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\nmov.b32 %2, 0;\nmov.b32 %3, 0;\n@q ld.global.v4.b32 {%0, %1, %2, %3}, [%4];\n}"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "r"((int)pred) : "memory");
  return v;
}
static __device__ __forceinline__ uint2 tw_ld8(const void* p, bool pred) {
  uint2 v;
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %3, 0;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\n@q ld.global.v2.b32 {%0, %1}, [%2];\n}"
               : "=r"(v.x), "=r"(v.y) : "l"(p), "r"((int)pred) : "memory");
  return v;
}
static __device__ __forceinline__ unsigned tw_ld4(const void* p, bool pred) {
  unsigned v;
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %2, 0;\nmov.b32 %0, 0;\n@q ld.global.b32 %0, [%1];\n}"
               : "=r"(v) : "l"(p), "r"((int)pred) : "memory");
  return v;
}

// Vector f32 atomic adds (sm_90): v adjacent floats in one request to
// L2 instead of v, as Triton emits for a split-K epilogue. `red` where
// the old values are not used, `atom` (old values out, 0 where the
// predicate is off, as the scalar atomics give) where they are. Relaxed at
// gpu scope: the op's memory order is fences around the group, as for
// scalar atomics. Predicated rather than branched over, as the loads above.
static __device__ __forceinline__ void tw_red_add_v2f32(float* p, float a, float b, bool pred) {
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %3, 0;\n@q red.global.add.v2.f32 [%0], {%1, %2};\n}"
               :: "l"(__cvta_generic_to_global(p)), "f"(a), "f"(b), "r"((int)pred) : "memory");
}
static __device__ __forceinline__ void tw_red_add_v4f32(float* p, float a, float b, float c, float d, bool pred) {
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %5, 0;\n@q red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n}"
               :: "l"(__cvta_generic_to_global(p)), "f"(a), "f"(b), "f"(c), "f"(d), "r"((int)pred) : "memory");
}
static __device__ __forceinline__ void tw_atom_add_v2f32(float* p, float a, float b, bool pred, float& oa, float& ob) {
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %5, 0;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\n@q atom.global.add.v2.f32 {%0, %1}, [%2], {%3, %4};\n}"
               : "=f"(oa), "=f"(ob) : "l"(__cvta_generic_to_global(p)), "f"(a), "f"(b), "r"((int)pred) : "memory");
}
static __device__ __forceinline__ void tw_atom_add_v4f32(float* p, float a, float b, float c, float d, bool pred, float& oa, float& ob, float& oc, float& od) {
  asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %9, 0;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\nmov.b32 %2, 0;\nmov.b32 %3, 0;\n@q atom.global.add.v4.f32 {%0, %1, %2, %3}, [%4], {%5, %6, %7, %8};\n}"
               : "=f"(oa), "=f"(ob), "=f"(oc), "=f"(od) : "l"(__cvta_generic_to_global(p)), "f"(a), "f"(b), "f"(c), "f"(d), "r"((int)pred) : "memory");
}

static __device__ __forceinline__ float tw_h2f(tw_f16 h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
static __device__ __forceinline__ tw_f16 tw_f2h(float f) {
  tw_f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
// Two conversions in one instruction (`lo` to the low half): what a cast
// of a register tile to f16/bf16 uses pairwise, also leaving the halves
// packed as WGMMA's register operand and 32-bit stores read them.
static __device__ __forceinline__ void tw_f2h2(float lo, float hi, tw_f16& a, tw_f16& b) {
  asm("{\n.reg .b32 r;\ncvt.rn.f16x2.f32 r, %3, %2;\nmov.b32 {%0, %1}, r;\n}" : "=h"(a), "=h"(b) : "f"(lo), "f"(hi));
}
// Two 16-bit values as one 32-bit register (`lo` in the low half).
static __device__ __forceinline__ unsigned tw_pack2(unsigned short lo, unsigned short hi) {
  unsigned r; asm("mov.b32 %0, {%1, %2};" : "=r"(r) : "h"(lo), "h"(hi)); return r;
}
static __device__ __forceinline__ float tw_div_full(float x, float y) {
  float r; asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); return r;
}
static __device__ __forceinline__ float tw_ex2(float x) {
  float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y;
}
static __device__ __forceinline__ float tw_exp(float x) {
  float y; asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f)); return y;
}
static __device__ __forceinline__ tw_f16 tw_f2h_rz(float f) {
  tw_f16 h; asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
static __device__ __forceinline__ float tw_b2f(tw_bf16 h) {
  return __uint_as_float(((unsigned)h) << 16);
}
static __device__ __forceinline__ tw_bf16 tw_f2b(float f) {
  tw_bf16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
static __device__ __forceinline__ void tw_f2b2(float lo, float hi, tw_bf16& a, tw_bf16& b) {
  asm("{\n.reg .b32 r;\ncvt.rn.bf16x2.f32 r, %3, %2;\nmov.b32 {%0, %1}, r;\n}" : "=h"(a), "=h"(b) : "f"(lo), "f"(hi));
}
static __device__ __forceinline__ float tw_e4m3_2f(tw_e4m3 x) {
  unsigned r; asm("{ .reg .b16 t; mov.b16 t, %1; cvt.rn.f16x2.e4m3x2 %0, t; }" : "=r"(r) : "h"((unsigned short)x));
  return tw_h2f((tw_f16)(r & 0xffff));
}
static __device__ __forceinline__ float tw_e5m2_2f(tw_e5m2 x) {
  unsigned r; asm("{ .reg .b16 t; mov.b16 t, %1; cvt.rn.f16x2.e5m2x2 %0, t; }" : "=r"(r) : "h"((unsigned short)x));
  return tw_h2f((tw_f16)(r & 0xffff));
}
static __device__ __forceinline__ tw_e4m3 tw_f2e4m3(float f) {
  unsigned short r; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(f)); return (tw_e4m3)(r & 0xff);
}
static __device__ __forceinline__ tw_e5m2 tw_f2e5m2(float f) {
  unsigned short r; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(f)); return (tw_e5m2)(r & 0xff);
}
template <class T, class F> static __device__ __forceinline__ T tw_bitcast(F f) {
  union { F f; T t; } u; u.f = f; return u.t;
}
static __device__ __forceinline__ float tw_shfl_xor(float x, int m) { return __shfl_xor_sync(0xffffffff, x, m); }
static __device__ __forceinline__ double tw_shfl_xor(double x, int m) { return __shfl_xor_sync(0xffffffff, x, m); }
static __device__ __forceinline__ int tw_shfl_xor(int x, int m) { return __shfl_xor_sync(0xffffffff, x, m); }
static __device__ __forceinline__ unsigned tw_shfl_xor(unsigned x, int m) { return __shfl_xor_sync(0xffffffff, x, m); }
static __device__ __forceinline__ long long tw_shfl_xor(long long x, int m) { return __shfl_xor_sync(0xffffffff, x, m); }
static __device__ __forceinline__ unsigned long long tw_shfl_xor(unsigned long long x, int m) { return __shfl_xor_sync(0xffffffff, x, m); }
static __device__ __forceinline__ bool tw_shfl_xor(bool x, int m) { return __shfl_xor_sync(0xffffffff, (int)x, m) != 0; }
static __device__ __forceinline__ short tw_shfl_xor(short x, int m) { return (short)__shfl_xor_sync(0xffffffff, (int)x, m); }
static __device__ __forceinline__ signed char tw_shfl_xor(signed char x, int m) { return (signed char)__shfl_xor_sync(0xffffffff, (int)x, m); }
static __device__ __forceinline__ unsigned short tw_shfl_xor(unsigned short x, int m) { return (unsigned short)__shfl_xor_sync(0xffffffff, (unsigned)x, m); }
static __device__ __forceinline__ unsigned char tw_shfl_xor(unsigned char x, int m) { return (unsigned char)__shfl_xor_sync(0xffffffff, (unsigned)x, m); }

// Byte offset of (row, byte kb of the row) in a K-major operand tile of
// `rows` rows stored in `w`-byte swizzle atoms (w = 32, 64, 128): atoms of
// 8 rows x w bytes, 16-byte chunks XOR-permuted by the row, as the
// wgmma/TMA swizzle modes lay them out. tw_lin is the unswizzled offset
// (what a wgmma descriptor's start address takes).
static __device__ __forceinline__ unsigned tw_lin(unsigned row, unsigned kb, unsigned rows, unsigned w) {
  return (kb / w) * (rows * w) + row * w + (kb % w);
}
static __device__ __forceinline__ unsigned tw_swz(unsigned row, unsigned kb, unsigned rows, unsigned w) {
  const unsigned lin = tw_lin(row, kb, rows, w);
  return lin ^ (((lin >> 7) & (w / 16 - 1)) << 4);
}
// wgmma shared-memory matrix descriptor of a swizzled tile at byte `off`
// of a tile at shared address `base`, with leading byte offset `lbo`; the
// stride byte offset steps 8 lines (one swizzle atom). Both addresses are
// 16-byte aligned and their offsets in the CTA's window sum below 2^18,
// so the 14-bit start address field is ((base & 0x3FFFF) >> 4) + (off >> 4)
// with no carry: per instruction of an unrolled K loop, `off` is a
// constant and the descriptor one 32-bit add of the tile's, not a
// mask-shift-or chain. The mask is not optional: in a kernel launched in
// thread-block clusters a shared address carries the CTA's rank in the
// cluster above bit 24, which would otherwise land in the leading byte
// offset's field (wrong MN-major reads in every CTA but the first).
static __device__ __forceinline__ unsigned long long tw_desc_lbo(unsigned base, unsigned off, unsigned w, unsigned lbo) {
  const unsigned lo = ((base & 0x3FFFF) >> 4) + (off >> 4) + (((lbo & 0x3FFFF) >> 4) << 16);
  const unsigned hi = ((8 * w) >> 4) | ((w == 128 ? 1u : (w == 64 ? 2u : 3u)) << 30);
  return ((unsigned long long)hi << 32) | lo;
}
// A K-major tile: the leading byte offset is unused (one 16-byte unit).
static __device__ __forceinline__ unsigned long long tw_desc(unsigned base, unsigned off, unsigned w) {
  return tw_desc_lbo(base, off, w, 16);
}
// An MN-major tile of `klines` K lines per w-byte block (read with the
// transpose bit): the leading byte offset steps from one block of M/N to
// the next (klines * w bytes), the stride byte offset steps 8 K lines (PTX
// ISA, wgmma shared-memory layouts: MN-major
// ((T,w/16,m),(8,k)) : ((1,T,LBO),(w/16*T,SBO))).
static __device__ __forceinline__ unsigned long long tw_desc_mn(unsigned base, unsigned off, unsigned w, unsigned klines) {
  return tw_desc_lbo(base, off, w, klines * w);
}
"#;

/// The CUDA atomic that does `op` on `st`, if there is one.
fn rmw_function(op: tawa_ir::AtomicOp, st: ScalarType) -> Option<&'static str> {
    use tawa_ir::AtomicOp as A;
    use ScalarType as S;
    Some(match (op, st) {
        (A::Add, S::F32 | S::F64 | S::I32 | S::U32 | S::U64) => "atomicAdd",
        (A::Max, S::I32 | S::U32 | S::I64 | S::U64) => "atomicMax",
        (A::Min, S::I32 | S::U32 | S::I64 | S::U64) => "atomicMin",
        (A::And, S::I32 | S::U32 | S::U64) => "atomicAnd",
        (A::Or, S::I32 | S::U32 | S::U64) => "atomicOr",
        (A::Xor, S::I32 | S::U32 | S::U64) => "atomicXor",
        (A::Xchg, S::I32 | S::U32 | S::U64 | S::F32) => "atomicExch",
        _ => return None,
    })
}
