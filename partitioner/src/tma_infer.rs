//! TMA inference: which tile loads can become TMA tile copies
//! (`cp.async.bulk.tensor`), and for each the *recipe* the runtime builds
//! its `CUtensorMap` from and the kernel issues the copy with. An analysis
//! only: the IR is not changed.
//!
//! # Which loads
//!
//! - **Pointer tiles** (`tl.load(a_ptrs, mask, other)`): the address must
//!   be `base + offset + Σ_d coef_d * i_d` ([`crate::affine`]) with `base` a
//!   pointer parameter, or a pointer loaded from memory (a grouped GEMM's
//!   pointer array: the tensor map is then built on the device, from
//!   strides and bounds the kernel computes, so they need not be kernel
//!   arguments, but the base and strides must still be known 16-byte
//!   aligned: `tl.multiple_of`). Each tile dimension `d` of size > 1 becomes a TMA
//!   dimension with stride `coef_d` (in elements); the scalar offset is
//!   split into per-dimension tile origins (the copy's coordinates): a
//!   monomial divisible by a dimension's non-unit stride goes to that
//!   dimension (`128*%pid_m*%stride_am` is row `128*%pid_m`), one with a
//!   kernel-argument factor that divides no stride becomes an extra
//!   dimension of box size 1 with that factor as its stride (attention's
//!   `off_z * stride_qz`), and what remains goes to the unit-stride
//!   dimension.
//! - **Masks** must be conjunctions of bounds `i_d < limit_d` on single
//!   tile indices (`offs < bound`, `offs[None, :] < K - k * BLOCK_K`). With
//!   the tile origin `c_d`, the element is in bounds when `c_d + i_d <
//!   limit_d + c_d`, so the dimension's global extent is `limit_d + c_d`;
//!   it must be the same for every program and iteration (a polynomial in
//!   kernel arguments: `%K`, not `%K - 64*%kt`). TMA reads zeros out of
//!   bounds, which is `other=0` (or no `other`). Unmasked dimensions have
//!   no extent to honour: where the origin is a constant the tile itself
//!   is the extent, otherwise the extent is [`Extent::Unbounded`] and the
//!   copy reads exactly the addresses the load did.
//! - **Wrapped indices** (`(pid_m * BM + arange) % M`, the matmul
//!   tutorial's rows): the copy reads rows `start + i` of an `M`-row tensor
//!   instead, which is the same row while `start + i < M`; the rows at or
//!   past `M` read zeros instead of wrapped data. That is only sound when
//!   nothing computed from those rows is ever stored: [`crate::wrap_proof`]
//!   follows the loaded tile through elementwise ops, `dot` (rows of `a`
//!   become rows of the result, columns of `b` its columns), loops and
//!   reductions along other dimensions to every store, and requires each
//!   store's mask to exclude the same rows (`rows[:, None] < M` with the
//!   same `pid_m * BM`). Otherwise the load is not TMA, with the reason.
//! - **Block pointers** (`tl.make_block_ptr`, `tl.advance`, loop-carried
//!   or not): strides and shape come from the block pointer; dimensions in
//!   `boundary_check` have the shape as extent, others are unbounded;
//!   padding `zero` (or unspecified) is TMA's zero fill, `nan` its NaN fill
//!   (16- and 32-bit floats).
//! - **Tensor descriptors** (`tl.make_tensor_descriptor`, host
//!   `TensorDescriptor` parameters; `desc.load`): TMA's own semantics; the
//!   legality checks below still apply, except for a descriptor the
//!   kernel makes from values it loads (a grouped GEMM's pointer array
//!   and per-group sizes): its tensor map is built on the device
//!   ([`TmaRecipe::device_built`]), so the base alignment, strides and
//!   extents it takes are checked there, when the kernel builds it. A host descriptor's innermost
//!   stride is 1 by its constructor's contract (Triton's `TensorDescriptor`
//!   checks it); the IR only has it as a parameter, so the runtime that
//!   encodes the map from the host descriptor must check it at launch.
//!
//! TMA-able is not "should be TMA": a 1-D vector load qualifies too. Which
//! copies are worth issuing (those feeding `dot` in a loop) is the
//! partitioner's decision.
//!
//! # Legality (what `cuTensorMapEncodeTiled` accepts)
//!
//! The base pointer 16-byte aligned (its `*fp16:16` hint); exactly one
//! dimension of unit stride (it becomes TMA's innermost; when it is not the
//! tile's last dimension the tile is a transposed view of the box);
//! every other stride a kernel-argument polynomial whose byte size is a
//! multiple of 16 by the divisibility facts of [`tawa_ir::axis_info`]
//! (`i32:16`); at most 5 dimensions; an innermost tile row of at least 16
//! bytes; positive strides; no constant origin below zero. Boxes are at
//! most 256 elements per dimension and, with the
//! 128-byte swizzle, 128 bytes wide: larger tiles are moved as several
//! boxes ([`TmaDim::copies`]); the swizzle follows the innermost box width
//! (128, 64, 32 bytes; none for 16).
//!
//! # What the analysis assumes
//!
//! Tile origins are non-negative: a program's tile starts at or after its
//! tensor's base along every dimension (program ids and loop counters are
//! non-negative; a negative origin would address memory before the
//! tensor's base, which the tensor arguments do not own); constant
//! origins are checked, others assumed. Index arithmetic does not overflow
//! ([`crate::affine`]), as Triton's AxisInfo assumes too.
//!
//! # How the recipes are tested
//!
//! Besides the `--explain` file tests, the recipes are checked by meaning:
//! `partitioner/tests/support/descriptor_rewrite.rs` replaces each TMA
//! load by a tensor-descriptor load built from its recipe (the interpreter
//! gives descriptors TMA's zero fill), and the kernels and every small
//! example case must compute the same results (`tests/tma_semantics.rs`,
//! and `tests/tma_recipes.rs` in the root package).
//!
//! # Coordinates
//!
//! [`TmaDim::coord`] is a polynomial over SSA scalars in scope at the load
//! (parameters, program ids, induction variables, scalar results the forms
//! do not look into) and, where no induction variable expresses it, a
//! loop's iteration number ([`Atom::Iter`]): the partition that issues the
//! copy recomputes it from those. The loop-carried `a_ptrs += BLOCK_K`
//! becomes the coordinate `64*%kt` (iteration number times step).

use std::collections::HashMap;
use std::fmt::Write;

use tawa_ir::axis_info::{AxisInfoMap, MAX_DIVISIBILITY};
use tawa_ir::printer::value_names;
use tawa_ir::{ConstValue, Function, Loc, Op, OpKind, Padding, ScalarType, Type, Value, ValueDef};

use crate::affine::{self, AffineForms, Atom, DimTerm, Form, Poly, PtrForm, Wrap};
use crate::wrap_proof;

/// TMA boxes hold at most this many elements along any dimension.
pub const MAX_BOX_DIM: u32 = 256;
/// TMA tensors have at most this many dimensions.
pub const MAX_RANK: usize = 5;
/// The widest swizzle span in bytes; wider innermost boxes are split.
pub const MAX_INNER_BOX_BYTES: u32 = 128;

/// How the kernel addressed the tile.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LoadStyle {
    /// `tl.load` of a tile of pointers.
    PointerTile,
    /// `tl.load` of a block pointer.
    BlockPtr,
    /// `desc.load` of a descriptor made in the kernel.
    TensorDesc,
    /// `desc.load` of a host `TensorDescriptor` parameter.
    HostTensorDesc,
}

impl LoadStyle {
    fn describe(self) -> &'static str {
        match self {
            LoadStyle::PointerTile => "pointer tile",
            LoadStyle::BlockPtr => "block pointer",
            LoadStyle::TensorDesc => "tensor descriptor",
            LoadStyle::HostTensorDesc => "host tensor descriptor",
        }
    }
}

/// Shared-memory swizzle of the box (`CU_TENSOR_MAP_SWIZZLE_*`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// The swizzle whose span is the innermost box width.
    fn for_inner_bytes(bytes: u32) -> Swizzle {
        match bytes {
            128.. => Swizzle::B128,
            64.. => Swizzle::B64,
            32.. => Swizzle::B32,
            _ => Swizzle::None,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Swizzle::None => "no swizzle",
            Swizzle::B32 => "swizzle 32B",
            Swizzle::B64 => "swizzle 64B",
            Swizzle::B128 => "swizzle 128B",
        }
    }
}

/// What out-of-bounds elements read (`CU_TENSOR_MAP_FLOAT_OOB_FILL_*`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OobFill {
    Zero,
    /// NaN (`NAN_REQUEST_ZERO_FMA`): block pointers with `padding_option="nan"`.
    Nan,
}

/// The global size of one TMA dimension.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Extent {
    /// A polynomial in kernel arguments (and constants), evaluated at launch.
    Expr(Poly, ExtentOrigin),
    /// The kernel never checks this dimension: it reads whatever addresses
    /// its coordinates give, and so does the copy as long as the extent is
    /// at least the largest coordinate plus the box
    /// (`tma_lower::unchecked_extent` picks it).
    Unbounded,
}

/// Where an [`Extent::Expr`] comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExtentOrigin {
    /// A bound check in the load's mask, at this comparison.
    Mask(Loc),
    /// The modulus of a wrapped index (`% M`, at this op).
    Wrap(Loc),
    /// The shape of a block pointer or descriptor.
    Shape,
    /// An unchecked dimension whose origin is a constant: the tile is all
    /// the kernel reads of it.
    Tile,
}

/// One dimension of the copy, outermost first.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TmaDim {
    /// The dimension of the loaded tile this is; `None` for a dimension of
    /// box size 1 that holds part of the base offset.
    pub tile_dim: Option<usize>,
    /// Elements per box along this dimension.
    pub box_size: u32,
    /// Boxes side by side along this dimension per load (tile size /
    /// `box_size`).
    pub copies: u32,
    pub extent: Extent,
    /// In elements; the innermost is 1.
    pub stride: Poly,
    /// The tile's origin along this dimension, computed in the kernel.
    pub coord: Poly,
}

/// Why rows of a wrapped index may read zeros instead of wrapped data.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct WrapProof {
    pub tile_dim: usize,
    pub modulus: Poly,
    /// The `%` op (or the clamping `where`).
    pub wrapped_at: Loc,
    /// `wrapped modulo` or `clamped below` ([`crate::affine::Wrap::how`]).
    pub how: &'static str,
    /// Every store that rows of the tile reach; each masks the rows at or
    /// past the modulus.
    pub stores: Vec<Loc>,
}

/// How one load becomes a TMA copy.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TmaRecipe {
    pub op: Op,
    pub loc: Loc,
    pub source: LoadStyle,
    pub elem: ScalarType,
    /// The pointer parameter the tensor map starts at.
    pub base: Value,
    /// Outermost first; the innermost (unit stride) last. `CUtensorMap`
    /// lists them the other way round.
    pub dims: Vec<TmaDim>,
    pub swizzle: Swizzle,
    pub oob_fill: OobFill,
    pub wrap_proofs: Vec<WrapProof>,
    /// A descriptor made in the kernel from values it computes (a base
    /// pointer loaded from a pointer array, sizes and strides loaded per
    /// group, as in grouped GEMM): its tensor map is built on the device
    /// (the backend's `aref_lower`), so the extents, strides and base
    /// alignment are checked when the kernel builds it, not here.
    pub device_built: bool,
}

impl TmaRecipe {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Box sizes, outermost first.
    pub fn box_shape(&self) -> Vec<u32> {
        self.dims.iter().map(|d| d.box_size).collect()
    }

    /// Boxes per load.
    pub fn copies_per_load(&self) -> u32 {
        self.dims.iter().map(|d| d.copies).product()
    }

    /// Bytes one load brings (what `expect_tx` counts).
    pub fn bytes_per_load(&self) -> u64 {
        self.dims
            .iter()
            .map(|d| u64::from(d.box_size) * u64::from(d.copies))
            .product::<u64>()
            * u64::from(self.elem.byte_size())
    }

    /// Whether the box order differs from the tile's (a transposed view).
    pub fn is_transposed(&self) -> bool {
        let order: Vec<usize> = self.dims.iter().filter_map(|d| d.tile_dim).collect();
        order.windows(2).any(|w| w[0] > w[1])
    }
}

/// A load that stays an ordinary load, and why.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct NotTma {
    pub op: Op,
    pub loc: Loc,
    /// One sentence for the user.
    pub reason: String,
}

/// The decision for every tile load of a function (`load` and `desc_load`
/// of a tile; scalar loads are no candidates), in program order.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct TmaPlan {
    pub decisions: Vec<Result<TmaRecipe, NotTma>>,
}

impl TmaPlan {
    pub fn decision(&self, op: Op) -> Option<&Result<TmaRecipe, NotTma>> {
        self.decisions.iter().find(|d| match d {
            Ok(r) => r.op == op,
            Err(n) => n.op == op,
        })
    }

    pub fn recipe(&self, op: Op) -> Option<&TmaRecipe> {
        self.decision(op).and_then(|d| d.as_ref().ok())
    }

    pub fn recipes(&self) -> impl Iterator<Item = &TmaRecipe> {
        self.decisions.iter().filter_map(|d| d.as_ref().ok())
    }

    /// Turns the TMA copies `which` picks into refusals saying `reason`
    /// (an option that copies them otherwise).
    pub fn refuse(&mut self, which: impl Fn(&TmaRecipe) -> bool, reason: &str) {
        for decision in &mut self.decisions {
            if let Ok(recipe) = decision {
                if which(recipe) {
                    *decision = Err(NotTma {
                        op: recipe.op,
                        loc: recipe.loc,
                        reason: reason.to_string(),
                    });
                }
            }
        }
    }
}

/// Decides every load of `func`. `axis` is `tawa_ir::axis_info::analyze(func)`.
pub fn infer_tma(func: &Function, axis: &AxisInfoMap) -> TmaPlan {
    decide_all(func, axis, &|data| {
        let is_tile = data
            .results
            .first()
            .is_some_and(|&r| func.ty(r).is_tensor());
        is_tile && matches!(data.kind, OpKind::Load { .. } | OpKind::DescLoad { .. })
    })
}

/// The decision for every store of a tile of `func` (pointer tiles and
/// block pointers; a descriptor's `desc_store` already is one), in
/// program order: the same analysis as for loads, the store's pointer
/// and mask in the place of the load's. `tma_store` decides which of the
/// recipes become TMA stores.
pub fn infer_tma_stores(func: &Function, axis: &AxisInfoMap) -> TmaPlan {
    decide_all(func, axis, &|data| {
        let is_tile = data
            .operands
            .get(1)
            .is_some_and(|&v| func.ty(v).is_tensor());
        is_tile && matches!(data.kind, OpKind::Store { .. })
    })
}

/// Decides every op of `func` that `candidate` selects, in program order.
fn decide_all(
    func: &Function,
    axis: &AxisInfoMap,
    candidate: &dyn Fn(&tawa_ir::OpData) -> bool,
) -> TmaPlan {
    let forms = affine::analyze(func);
    let inference = Inference {
        func,
        axis,
        names: value_names(func),
        forms,
    };
    let mut decisions = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if candidate(data) {
            decisions.push(inference.decide(op).map_err(|reason| NotTma {
                op,
                loc: data.loc,
                reason,
            }));
        }
    });
    TmaPlan { decisions }
}

/// One line per load: `path:line:col: %a: TMA 2-D box [128, 64] f16, ...`
/// or `path:line:col: %a: not TMA: <reason>`.
pub fn explain(path: &str, func: &Function, plan: &TmaPlan) -> String {
    let names = value_names(func);
    let name = |atom: Atom| atom_name(func, &names, atom);
    let mut out = String::new();
    for d in &plan.decisions {
        let (op, loc) = match d {
            Ok(r) => (r.op, r.loc),
            Err(n) => (n.op, n.loc),
        };
        let result = func.ops[op]
            .results
            .first()
            .map(|&v| {
                format!(
                    "%{}",
                    names.get(&v).cloned().unwrap_or_else(|| v.to_string())
                )
            })
            .unwrap_or_else(|| "load".into());
        let _ = write!(out, "{path}:{}:{}: {result}: ", loc.line, loc.col);
        match d {
            Err(n) => {
                let _ = writeln!(out, "not TMA: {}", n.reason);
            }
            Ok(r) => {
                let list = |f: &dyn Fn(&TmaDim) -> String| -> String {
                    r.dims.iter().map(f).collect::<Vec<_>>().join(", ")
                };
                let list_j = |f: &dyn Fn(usize, &TmaDim) -> String| -> String {
                    r.dims
                        .iter()
                        .enumerate()
                        .map(|(j, d)| f(j, d))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let _ = write!(
                    out,
                    "TMA {}-D box [{}] {}",
                    r.rank(),
                    list(&|d| d.box_size.to_string()),
                    r.elem
                );
                if r.copies_per_load() > 1 {
                    let _ = write!(out, " x{} copies", r.copies_per_load());
                }
                let _ = write!(out, ", {}", r.swizzle.describe());
                if r.oob_fill == OobFill::Nan {
                    let _ = write!(out, ", NaN fill");
                }
                let base = names
                    .get(&r.base)
                    .cloned()
                    .unwrap_or_else(|| r.base.to_string());
                let _ = write!(out, ", {} base %{base}", r.source.describe());
                if r.device_built {
                    let _ = write!(out, ", tensor map built on the device");
                }
                if r.is_transposed() || r.dims.iter().any(|d| d.tile_dim.is_none()) {
                    let _ = write!(
                        out,
                        ", tile dims [{}]",
                        list(&|d| d.tile_dim.map_or("-".to_string(), |t| t.to_string()))
                    );
                }
                let _ = write!(
                    out,
                    ", extents [{}]",
                    list_j(&|j, d| match &d.extent {
                        Extent::Unbounded if r.device_built =>
                            format!("{} (unchecked)", crate::tma_lower::UNCHECKED_OUTER_EXTENT),
                        Extent::Unbounded => match crate::tma_lower::unchecked_extent(func, r, j) {
                            Some(e) => e.describe(func, &name),
                            None => "unchecked".to_string(),
                        },
                        Extent::Expr(p, origin) => {
                            let p = p.render(&name);
                            match origin {
                                ExtentOrigin::Mask(_) => format!("{p} (mask)"),
                                ExtentOrigin::Wrap(_) => format!("{p} (wrap)"),
                                ExtentOrigin::Shape | ExtentOrigin::Tile => p,
                            }
                        }
                    })
                );
                let _ = write!(out, ", strides [{}]", list(&|d| d.stride.render(&name)));
                let _ = write!(out, ", coords [{}]", list(&|d| d.coord.render(&name)));
                for w in &r.wrap_proofs {
                    let stores: Vec<String> = w
                        .stores
                        .iter()
                        .map(|l| format!("{}:{}", l.line, l.col))
                        .collect();
                    let _ = write!(
                        out,
                        "; indices {} {} at {}:{} only reach stores that mask them ({})",
                        w.how,
                        w.modulus.render(&name),
                        w.wrapped_at.line,
                        w.wrapped_at.col,
                        stores.join(", ")
                    );
                }
                if let Some(why) = crate::tma_lower::why_not_lowered(func, r) {
                    let _ = write!(
                        out,
                        "; the warp-specialized backend keeps it an ordinary load: {why}"
                    );
                }
                let _ = writeln!(out);
            }
        }
    }
    out
}

/// `%name` of an atom; a loop's iteration number is `iter(%iv)`.
fn atom_name(func: &Function, names: &HashMap<Value, String>, atom: Atom) -> String {
    let value_name = |v: Value| {
        format!(
            "%{}",
            names.get(&v).cloned().unwrap_or_else(|| v.to_string())
        )
    };
    match atom {
        Atom::Value(v) => value_name(v),
        Atom::Iter(l) => match func.ops[l].regions.first() {
            Some(&body) if !func.blocks[body].args.is_empty() => {
                format!("iter({})", value_name(func.blocks[body].args[0]))
            }
            _ => format!("iter({l})"),
        },
        Atom::Carried(v, d) => format!("carried({}, {d})", value_name(v)),
    }
}

// ------------------------------------------------------------------ decide

/// How the kernel bounds one tile dimension.
#[derive(Clone, Debug)]
enum Check {
    /// Never checked.
    None,
    /// `i_d < limit` in the mask.
    Mask(Poly, Loc),
    /// A wrapped index; extent `modulus`.
    Wrap(Poly, Loc),
    /// Block pointer `boundary_check` or descriptor: extent `shape`.
    Shape(Poly),
}

/// One tile dimension before it becomes a [`TmaDim`].
#[derive(Clone, Debug)]
struct TileDim {
    size: u32,
    stride: Poly,
    coord: Poly,
    check: Check,
}

/// What every load style reduces to before the common legality checks.
struct Geometry {
    source: LoadStyle,
    elem: ScalarType,
    base: PtrForm,
    dims: Vec<TileDim>,
    /// Whether parts of the base offset may move the tile dimensions'
    /// origins (pointer tiles, whose masks are relative to the origin), or
    /// only go to extra dimensions (block pointers and descriptors, whose
    /// bounds are relative to their own base).
    offset_into_tile_dims: bool,
    oob_fill: OobFill,
    wraps: Vec<(usize, Wrap)>,
    /// See [`TmaRecipe::device_built`].
    device_built: bool,
}

struct Inference<'f> {
    func: &'f Function,
    axis: &'f AxisInfoMap,
    names: HashMap<Value, String>,
    forms: AffineForms,
}

type Decision = Result<TmaRecipe, String>;

impl<'f> Inference<'f> {
    fn render(&self, p: &Poly) -> String {
        p.render(&|a| atom_name(self.func, &self.names, a))
    }

    fn value_name(&self, v: Value) -> String {
        format!(
            "%{}",
            self.names.get(&v).cloned().unwrap_or_else(|| v.to_string())
        )
    }

    fn is_param(&self, v: Value) -> bool {
        self.func.params.iter().any(|p| p.value == v)
    }

    fn decide(&self, op: Op) -> Decision {
        let func = self.func;
        let data = &func.ops[op];
        let geometry = match &data.kind {
            OpKind::Load { volatile: true, .. } => {
                return Err("a volatile load must stay an ordinary load".into())
            }
            OpKind::Load {
                has_mask,
                has_other,
                boundary_check,
                padding,
                ..
            } => match func.ty(data.operands[0]) {
                Type::BlockPtr { .. } => {
                    if *has_mask {
                        return Err("a block-pointer load with a mask".into());
                    }
                    let shape = func.ty(data.results[0]).shape().to_vec();
                    self.block_ptr(data.operands[0], &shape, boundary_check, *padding)?
                }
                _ => {
                    let shape = func.ty(data.results[0]).shape().to_vec();
                    let mask = has_mask.then(|| data.operands[1]);
                    let other = (*has_mask && *has_other).then(|| data.operands[2]);
                    self.pointer_tile(data.operands[0], &shape, mask, other)?
                }
            },
            OpKind::Store {
                has_mask,
                boundary_check,
                ..
            } => {
                let (ptr, val) = (data.operands[0], data.operands[1]);
                let shape = func.ty(val).shape().to_vec();
                let g = match func.ty(ptr) {
                    Type::BlockPtr { .. } => {
                        if *has_mask {
                            return Err("a block-pointer store with a mask".into());
                        }
                        self.block_ptr(ptr, &shape, boundary_check, Padding::None)?
                    }
                    _ => {
                        let mask = has_mask.then(|| data.operands[2]);
                        self.pointer_tile(ptr, &shape, mask, None)?
                    }
                };
                // A wrapped row is written at its wrapped place; a TMA
                // store clips it at the bound instead.
                if let Some((d, _)) = g.wraps.first() {
                    return Err(format!(
                        "dimension {d} of the stored tile has a wrapped (`%`) index: its rows \
                         past the bound are written at the start again, which a TMA store, \
                         clipping them, does not do; mask them instead"
                    ));
                }
                g
            }
            OpKind::DescLoad { .. } => {
                let geometry = self.descriptor(op)?;
                let desc_rank = geometry.dims.len();
                let mut r = self.assemble(op, geometry)?;
                if func.ty(data.results[0]).shape().len() < desc_rank {
                    squeeze_tile_dims(&mut r, func.ty(data.operands[0]));
                }
                return Ok(r);
            }
            _ => return Err("not a load".into()),
        };
        self.assemble(op, geometry)
    }

    /// Whether `base` is a pointer made from an integer loaded from memory
    /// (through casts and hints): a pointer array's entry.
    fn loaded_base(&self, base: Value) -> bool {
        let mut v = base;
        while let ValueDef::Result(op, _) = self.func.values[v].def {
            match &self.func.ops[op].kind {
                OpKind::Cast { .. } | OpKind::Bitcast | OpKind::Hint { .. } => {
                    v = self.func.ops[op].operands[0];
                }
                OpKind::Load { .. } => return true,
                _ => return false,
            }
        }
        false
    }

    /// The base of a copy must be a pointer parameter.
    fn check_base(&self, base: Value) -> Result<(), String> {
        if self.is_param(base) {
            return Ok(());
        }
        // A pointer made from an integer that was loaded (through casts).
        let mut v = base;
        while let ValueDef::Result(op, _) = self.func.values[v].def {
            match &self.func.ops[op].kind {
                OpKind::Cast { .. } | OpKind::Bitcast | OpKind::Hint { .. } => {
                    v = self.func.ops[op].operands[0];
                }
                OpKind::Load { .. } => {
                    return Err("the base pointer is loaded from memory (a pointer array, as in grouped GEMM), and tensor maps built on the device are made for tensor descriptors and tiles of pointers, not yet for block pointers; make a descriptor of the group's matrix from the loaded pointer (`tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[lda, 1], block_shape=[BM, BK])`) and load tiles with `.load([row, col])`".into())
                }
                _ => break,
            }
        }
        Err(format!(
            "the base pointer {} is not a kernel argument",
            self.value_name(base)
        ))
    }

    /// A tile of pointers `ptr` of `shape`, with its mask and, for a
    /// load, what masked-off elements read.
    fn pointer_tile(
        &self,
        ptr: Value,
        shape: &[u32],
        mask: Option<Value>,
        other: Option<Value>,
    ) -> Result<Geometry, String> {
        let func = self.func;
        let ptr = match self.forms.form(ptr) {
            Form::Ptr(p) => p.clone(),
            Form::Opaque(why) => {
                return Err(format!(
                    "the address is not an affine function of the tile indices: {} (at {}:{})",
                    why.reason, why.at.line, why.at.col
                ))
            }
            _ => return Err("the address is not a tile of pointers".into()),
        };
        // A base loaded from a pointer array (grouped GEMM) gets a tensor
        // map built on the device, from the strides and bounds the kernel
        // computes.
        let device_built = self.loaded_base(ptr.base);
        if !device_built {
            self.check_base(ptr.base)?;
        }
        let mut dims = Vec::new();
        let mut wraps = Vec::new();
        for (d, &size) in shape.iter().enumerate() {
            let term = ptr.index.dims.get(d).cloned().flatten();
            let dim = match term {
                _ if size == 1 => match term {
                    Some(DimTerm::Wrapped(_)) => {
                        return Err(format!(
                            "a wrapped (`%`) index along dimension {d}, which has size 1"
                        ))
                    }
                    // Index 0 only: whatever the term, it adds nothing.
                    _ => TileDim {
                        size,
                        stride: Poly::zero(),
                        coord: Poly::zero(),
                        check: Check::None,
                    },
                },
                None => {
                    return Err(format!(
                        "the address does not move along dimension {d} (the tile repeats one row); TMA needs a stride along every dimension of the tile"
                    ))
                }
                Some(DimTerm::Linear(stride)) => TileDim {
                    size,
                    stride,
                    coord: Poly::zero(),
                    check: Check::None,
                },
                Some(DimTerm::Wrapped(w)) => {
                    wraps.push((d, w.clone()));
                    TileDim {
                        size,
                        stride: w.coef.clone(),
                        coord: w.start.clone(),
                        check: Check::Wrap(w.modulus.clone(), w.at),
                    }
                }
            };
            dims.push(dim);
        }
        if let Some(mask) = mask {
            let mask = match self.forms.form(mask) {
                Form::Mask(m) => m.clone(),
                Form::Opaque(why) => {
                    return Err(format!(
                        "the mask is not a bound check: {} (at {}:{})",
                        why.reason, why.at.line, why.at.col
                    ))
                }
                _ => return Err("the mask is not a bound check".into()),
            };
            for b in mask.bounds {
                let Some(dim) = dims.get_mut(b.dim) else {
                    return Err("the mask does not match the tile".into());
                };
                match dim.check {
                    _ if dim.size == 1 => {
                        return Err(format!(
                            "the mask checks dimension {}, which has size 1: that is one condition for the whole tile, not a bound",
                            b.dim
                        ))
                    }
                    Check::None => dim.check = Check::Mask(b.limit, b.at),
                    Check::Mask(..) => {
                        return Err(format!(
                            "the mask checks dimension {} twice; TMA has one extent per dimension",
                            b.dim
                        ))
                    }
                    Check::Wrap(..) => {
                        return Err(format!(
                            "the mask checks dimension {}, whose index is also wrapped by `%`",
                            b.dim
                        ))
                    }
                    Check::Shape(_) => {
                        return Err("internal: a pointer tile with a shape check".into())
                    }
                }
            }
            if let Some(other) = other {
                if !is_positive_zero(func, other) {
                    let shown = constant_of(func, other)
                        .map(tawa_ir::printer::format_const)
                        .unwrap_or_else(|| self.value_name(other));
                    return Err(format!(
                        "masked-off elements read `other` = {shown}, but TMA fills zeros"
                    ));
                }
            }
        }
        Ok(Geometry {
            source: LoadStyle::PointerTile,
            elem: ptr.elem,
            base: PtrForm {
                index: affine::IndexForm::scalar(ptr.index.offset.clone()),
                ..ptr
            },
            dims,
            offset_into_tile_dims: true,
            oob_fill: OobFill::Zero,
            wraps,
            device_built,
        })
    }

    /// Block pointer `ptr` addressing a tile of `shape`.
    fn block_ptr(
        &self,
        ptr: Value,
        shape: &[u32],
        boundary_check: &[u32],
        padding: Padding,
    ) -> Result<Geometry, String> {
        let bp = match self.forms.form(ptr) {
            Form::BlockPtr(b) => b.clone(),
            Form::Opaque(why) => {
                return Err(format!(
                    "the block pointer is not followed: {} (at {}:{})",
                    why.reason, why.at.line, why.at.col
                ))
            }
            _ => return Err("the block pointer is not followed".into()),
        };
        self.check_base(bp.base.base)?;
        if bp.offsets.len() != shape.len() {
            return Err("the block pointer does not match the tile".into());
        }
        let oob_fill = match padding {
            Padding::None | Padding::Zero => OobFill::Zero,
            Padding::Nan => match bp.base.elem {
                ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 => OobFill::Nan,
                e => {
                    return Err(format!(
                    "`padding_option=\"nan\"` on {e}: TMA fills NaN only for 16- and 32-bit floats"
                ))
                }
            },
        };
        let dims = (0..shape.len())
            .map(|d| TileDim {
                size: shape[d],
                stride: bp.strides[d].clone(),
                coord: bp.offsets[d].clone(),
                check: if boundary_check.contains(&(d as u32)) {
                    Check::Shape(bp.shape[d].clone())
                } else {
                    Check::None
                },
            })
            .collect();
        Ok(Geometry {
            source: LoadStyle::BlockPtr,
            elem: bp.base.elem,
            base: bp.base,
            dims,
            offset_into_tile_dims: false,
            oob_fill,
            wraps: Vec::new(),
            device_built: false,
        })
    }

    fn descriptor(&self, op: Op) -> Result<Geometry, String> {
        let func = self.func;
        let data = &func.ops[op];
        let shape = func.ty(data.results[0]).shape().to_vec();
        let desc = match self.forms.form(data.operands[0]) {
            Form::Desc(d) => d.clone(),
            Form::Opaque(why) => {
                return Err(format!(
                    "the descriptor is not followed: {} (at {}:{})",
                    why.reason, why.at.line, why.at.col
                ))
            }
            _ => return Err("the descriptor is not followed".into()),
        };
        // A descriptor the kernel makes from values it loads (grouped
        // GEMM's per-group pointers and sizes) gets a tensor map built on
        // the device; one made from kernel arguments, one the host builds.
        let device_built = !desc.host
            && (self.loaded_base(desc.base.base)
                || !desc
                    .shape
                    .iter()
                    .chain(&desc.strides)
                    .all(|p| self.launch_constant(p)));
        if !device_built {
            self.check_base(desc.base.base)?;
        }
        let rank = desc.shape.len();
        // A rank-reduced load (`tma_lower`'s copies with boxes of 1) gives
        // the block without its dimensions of 1: they are dimensions of
        // the copy but not of the tile.
        let block = match func.ty(data.operands[0]) {
            Type::TensorDesc { block, .. } => block.clone(),
            _ => return Err("the descriptor does not match the tile".into()),
        };
        let full = if shape.len() == rank {
            shape.clone()
        } else if tawa_ir::verifier::squeezed_block(&block).as_deref() == Some(&shape[..]) {
            block
        } else {
            return Err("the descriptor does not match the tile".into());
        };
        if data.operands.len() != 1 + rank {
            return Err("the descriptor does not match the tile".into());
        }
        let mut dims = Vec::with_capacity(rank);
        for (d, &size) in full.iter().enumerate() {
            let coord = match self.forms.form(data.operands[1 + d]) {
                Form::Index(i) if i.dims.is_empty() => i.offset.clone(),
                _ => return Err(format!("offset {d} of the load is not an integer scalar")),
            };
            let mut stride = desc.strides[d].clone();
            // The host TensorDescriptor's constructor requires a unit
            // innermost stride.
            if desc.host && d + 1 == rank {
                stride = Poly::constant(1);
            }
            dims.push(TileDim {
                size,
                stride,
                coord,
                check: Check::Shape(desc.shape[d].clone()),
            });
        }
        // Descriptors name their innermost dimension: the last.
        if let Some(last) = dims.last() {
            if last.stride.as_constant() != Some(1) {
                return Err(format!(
                    "the descriptor's innermost stride `{}` is not known to be 1",
                    self.render(&last.stride)
                ));
            }
        }
        Ok(Geometry {
            source: if desc.host {
                LoadStyle::HostTensorDesc
            } else {
                LoadStyle::TensorDesc
            },
            elem: desc.base.elem,
            base: desc.base,
            dims,
            offset_into_tile_dims: false,
            oob_fill: OobFill::Zero,
            wraps: Vec::new(),
            device_built,
        })
    }

    // -------------------------------------------------------------- legality

    /// Largest power of two known to divide every value of `p`.
    /// What divides scalar `v`: its own fact, or a `tl.multiple_of` of it
    /// (the forms look through hints, so a hinted value's form names the
    /// value before the hint: the promise is about that value).
    fn scalar_divisibility(&self, v: Value) -> u32 {
        let own = |v: Value| self.axis.get(v).divisibility.first().copied().unwrap_or(1);
        let mut d = own(v);
        for (op, data) in self.func.ops.iter() {
            if matches!(data.kind, OpKind::Hint { .. })
                && data.operands.first() == Some(&v)
                && self.func.block_of(op).is_some()
            {
                d = d.max(own(data.results[0]));
            }
        }
        d
    }

    fn divisibility(&self, p: &Poly) -> u64 {
        let max = u64::from(MAX_DIVISIBILITY);
        p.terms()
            .map(|(atoms, c)| {
                let mut d = 1u64 << c.unsigned_abs().trailing_zeros().min(31);
                for &a in atoms {
                    let ad = match a {
                        Atom::Value(v) => u64::from(self.scalar_divisibility(v)),
                        _ => 1,
                    };
                    d = d.saturating_mul(ad).min(max);
                }
                d
            })
            .min()
            .unwrap_or(max)
    }

    /// Whether `p` is the same for every program and iteration: constants
    /// and kernel arguments only.
    fn over_params(&self, p: &Poly) -> bool {
        p.atoms()
            .all(|a| matches!(a, Atom::Value(v) if self.is_param(v)))
    }

    /// Whether `p` is the same for every program and iteration because it
    /// is computed from kernel arguments alone (`tawa_ir::host_expr`): an
    /// extent `tma_lower` wrote as a quotient of strides.
    fn launch_constant(&self, p: &Poly) -> bool {
        p.atoms().all(|a| {
            matches!(a, Atom::Value(v) if self.is_param(v)
                || tawa_ir::host_expr::host_expr(self.func, v).is_some())
        })
    }

    fn stride_aligned(&self, stride: &Poly, elem: ScalarType) -> bool {
        self.divisibility(stride)
            .saturating_mul(u64::from(elem.byte_size()))
            % 16
            == 0
    }

    /// Why the stride of dimension `d` keeps TMA away: not known to be a
    /// multiple of 16 bytes, with the hint that says it is.
    fn stride_alignment_reason(&self, d: usize, stride: &Poly, elem_bytes: u32) -> String {
        if self.over_params(stride) {
            format!(
                "the stride of dimension {d} (`{}`) is not known to be a multiple of 16 bytes (a `:16` divisibility hint in the signature says it is)",
                self.render(stride)
            )
        } else {
            format!(
                "the stride of dimension {d} (`{}`) is computed in the kernel and not known to be a multiple of 16 bytes (if it is, say so with `tl.multiple_of(stride, {})` where it is loaded)",
                self.render(stride),
                16 / elem_bytes.clamp(1, 16)
            )
        }
    }

    fn assemble(&self, op: Op, g: Geometry) -> Decision {
        let func = self.func;
        let elem_bytes = g.elem.byte_size();
        let base_align = self.scalar_divisibility(g.base.base);
        // A descriptor's base and strides are 16-byte aligned by
        // `make_tensor_descriptor`'s contract (the map the kernel builds
        // traps otherwise); a pointer tile promises nothing of the kind,
        // and a tensor map cannot copy it when they are not, so they must
        // be known aligned, from the signature or hints.
        let promised_aligned = g.device_built && g.source == LoadStyle::TensorDesc;
        if base_align < 16 && !promised_aligned {
            let base = self.value_name(g.base.base);
            let base_reason = if self.loaded_base(g.base.base) {
                format!(
                    "the base pointer {base} is loaded from memory and not known to be 16-byte aligned (if it is, say so where it is loaded: `ptr = tl.multiple_of(tl.load(...).to(...), 16)`)"
                )
            } else {
                format!(
                    "the base pointer {base} is not known to be 16-byte aligned (declare it `*{}:16` if it is)",
                    g.elem.triton_name()
                )
            };
            // The strides TMA would refuse next for the same reason: the
            // whole source change at once.
            let strides: Vec<String> = g
                .dims
                .iter()
                .enumerate()
                .filter(|(_, dim)| {
                    dim.size > 1
                        && !dim.stride.is_zero()
                        && dim.stride.as_constant() != Some(1)
                        && !self.stride_aligned(&dim.stride, g.elem)
                })
                .map(|(d, dim)| self.stride_alignment_reason(d, &dim.stride, elem_bytes))
                .collect();
            return Err(std::iter::once(base_reason)
                .chain(strides)
                .collect::<Vec<_>>()
                .join("; and "));
        }

        // The dimensions of the copy: those the tile extends along, and
        // those of size 1 that still carry an address and a bound (a block
        // pointer's or descriptor's `[1, 64]` row). A pointer tile's size-1
        // dimensions add nothing to its addresses and are dropped.
        let kept: Vec<usize> = (0..g.dims.len())
            .filter(|&d| g.dims[d].size > 1 || !g.dims[d].stride.is_zero())
            .collect();
        let Some(&last) = kept.last() else {
            return Err("the tile has one element".into());
        };
        let unit: Vec<usize> = kept
            .iter()
            .copied()
            .filter(|&d| g.dims[d].stride.as_constant() == Some(1))
            .collect();
        let inner = match unit.as_slice() {
            [d] => *d,
            [] => {
                let s = &g.dims[last].stride;
                return Err(match s.as_constant() {
                    Some(c) => format!(
                        "no dimension of the tile has unit stride (the last one has stride {c}); TMA needs one contiguous dimension"
                    ),
                    None => format!(
                        "the innermost stride `{}` is not known to be 1 (write `i32:1` for it in the signature, as Triton does when the argument is 1)",
                        self.render(s)
                    ),
                });
            }
            _ => return Err("two dimensions of the tile have unit stride".into()),
        };

        // Split the base offset into origins and extra dimensions.
        let mut dims = g.dims.clone();
        let mut extra: Vec<(Poly, Poly)> = Vec::new(); // (stride, coord)
                                                       // A monomial that would have been an extra dimension but for its
                                                       // stride's alignment, and went to the unit-stride dimension: named
                                                       // if that dimension's extent then fails.
        let mut unaligned: Option<(Poly, Poly)> = None; // (monomial, stride)
        for (atoms, c) in g.base.index.offset.terms() {
            let monomial = Poly::monomial(atoms.to_vec(), c);
            if g.offset_into_tile_dims {
                if let Some((d, q)) = self.divide_by_tile_stride(&dims, &monomial, inner) {
                    dims[d].coord = add(&dims[d].coord, &q)?;
                    continue;
                }
            }
            // The kernel-argument factors of the monomial, as a stride.
            let params: Vec<Atom> = atoms
                .iter()
                .copied()
                .filter(|a| matches!(a, Atom::Value(v) if self.is_param(*v)))
                .collect();
            if !params.is_empty() {
                let stride = Poly::monomial(params.clone(), 1);
                if self.stride_aligned(&stride, g.elem) {
                    let coord = monomial
                        .div_exact(&params, 1)
                        .ok_or("internal: a monomial does not divide by its own factors")?;
                    match extra.iter_mut().find(|(s, _)| *s == stride) {
                        Some((_, c)) => *c = add(c, &coord)?,
                        None => extra.push((stride, coord)),
                    }
                    continue;
                }
            }
            if g.offset_into_tile_dims && !matches!(dims[inner].check, Check::Wrap(..)) {
                if !params.is_empty() && unaligned.is_none() {
                    unaligned = Some((monomial.clone(), Poly::monomial(params, 1)));
                }
                dims[inner].coord = add(&dims[inner].coord, &monomial)?;
                continue;
            }
            return Err(format!(
                "the base offset `{}` is not a multiple of a 16-byte-aligned kernel-argument stride",
                self.render(&monomial)
            ));
        }

        // Extents.
        let mut tma: Vec<TmaDim> = Vec::new();
        for (stride, coord) in extra {
            tma.push(TmaDim {
                tile_dim: None,
                box_size: 1,
                copies: 1,
                extent: Extent::Unbounded,
                stride,
                coord: self.with_induction_variables(&coord),
            });
        }
        let mut order: Vec<usize> = kept.iter().copied().filter(|&d| d != inner).collect();
        order.push(inner);
        for &d in &order {
            let dim = &dims[d];
            let extent = match &dim.check {
                Check::None => match dim.coord.as_constant() {
                    Some(c) => Extent::Expr(
                        Poly::constant(c.saturating_add(i64::from(dim.size))),
                        ExtentOrigin::Tile,
                    ),
                    None => Extent::Unbounded,
                },
                Check::Mask(limit, at) => {
                    Extent::Expr(add(limit, &dim.coord)?, ExtentOrigin::Mask(*at))
                }
                Check::Wrap(modulus, at) => Extent::Expr(modulus.clone(), ExtentOrigin::Wrap(*at)),
                Check::Shape(shape) => Extent::Expr(shape.clone(), ExtentOrigin::Shape),
            };
            if let Extent::Expr(e, _) = &extent {
                if !self.launch_constant(e) && !g.device_built {
                    if let (true, Some((monomial, stride))) = (d == inner, &unaligned) {
                        return Err(format!(
                            "the offset `{}` needs a dimension of stride `{}`, which is not known to be a multiple of 16 bytes (a `:16` divisibility hint in the signature says it is)",
                            self.render(monomial),
                            self.render(stride)
                        ));
                    }
                    return Err(format!(
                        "the bound along dimension {d} makes the tensor's extent `{}`, which changes with the program or the loop; one descriptor cannot hold it",
                        self.render(e)
                    ));
                }
            }
            if dim.stride.terms().any(|(_, c)| c < 0) {
                return Err(format!(
                    "the tile runs backwards along dimension {d} (stride `{}`); TMA strides are positive",
                    self.render(&dim.stride)
                ));
            }
            if dim.coord.as_constant().is_some_and(|c| c < 0) {
                return Err(format!(
                    "the tile starts before the tensor's base along dimension {d} (origin {}); TMA would read zeros there",
                    self.render(&dim.coord)
                ));
            }
            if !self.over_params(&dim.stride) && !g.device_built {
                return Err(format!(
                    "the stride of dimension {d} (`{}`) is not a kernel argument or a constant",
                    self.render(&dim.stride)
                ));
            }
            if d != inner && !self.stride_aligned(&dim.stride, g.elem) && !promised_aligned {
                return Err(self.stride_alignment_reason(d, &dim.stride, elem_bytes));
            }
            tma.push(TmaDim {
                tile_dim: Some(d),
                box_size: dim.size,
                copies: 1,
                extent,
                stride: dim.stride.clone(),
                coord: self.with_induction_variables(&dim.coord),
            });
        }
        if tma.len() > MAX_RANK {
            return Err(format!(
                "the copy needs {} dimensions; TMA has at most {MAX_RANK}",
                tma.len()
            ));
        }

        // Boxes.
        let inner_bytes = dims[inner].size * elem_bytes;
        if inner_bytes < 16 {
            return Err(format!(
                "the innermost tile dimension is {inner_bytes} bytes wide; TMA moves rows of at least 16"
            ));
        }
        let n = tma.len();
        for (i, d) in tma.iter_mut().enumerate() {
            let limit = if i + 1 == n {
                MAX_INNER_BOX_BYTES / elem_bytes
            } else {
                MAX_BOX_DIM
            };
            if d.box_size > limit {
                d.copies = d.box_size / limit;
                d.box_size = limit;
            }
        }
        let swizzle = Swizzle::for_inner_bytes(tma[n - 1].box_size * elem_bytes);

        // Wrapped rows.
        let mut wrap_proofs = Vec::new();
        for (d, w) in &g.wraps {
            let stores = wrap_proof::prove(func, &self.forms, op, *d, w, &|p| self.render(p))?;
            wrap_proofs.push(WrapProof {
                tile_dim: *d,
                modulus: w.modulus.clone(),
                wrapped_at: w.at,
                how: w.how(),
                stores,
            });
        }

        Ok(TmaRecipe {
            op,
            loc: func.ops[op].loc,
            source: g.source,
            elem: g.elem,
            base: g.base.base,
            dims: tma,
            swizzle,
            oob_fill: g.oob_fill,
            wrap_proofs,
            device_built: g.device_built,
        })
    }

    /// The tile dimension (not the unit-stride one, not wrapped) whose
    /// stride divides `monomial`, preferring the stride with the most
    /// factors, then the largest coefficient; with the quotient.
    fn divide_by_tile_stride(
        &self,
        dims: &[TileDim],
        monomial: &Poly,
        inner: usize,
    ) -> Option<(usize, Poly)> {
        let mut best: Option<(usize, Poly, (usize, u64))> = None;
        for (d, dim) in dims.iter().enumerate() {
            if d == inner || dim.size == 1 || matches!(dim.check, Check::Wrap(..)) {
                continue;
            }
            let Some((atoms, c)) = dim.stride.single_term() else {
                continue;
            };
            let Some(q) = monomial.div_exact(atoms, c) else {
                continue;
            };
            let rank = (atoms.len(), c.unsigned_abs());
            if best.as_ref().is_none_or(|(_, _, r)| rank > *r) {
                best = Some((d, q, rank));
            }
        }
        best.map(|(d, q, _)| (d, q))
    }

    /// Rewrites `c * iter(L)` as `(c / step) * (iv - lb)` where the loop's
    /// step is a constant dividing `c`, so that coordinates use the
    /// induction variables the kernel has.
    fn with_induction_variables(&self, p: &Poly) -> Poly {
        let func = self.func;
        let mut out = Poly::zero();
        for (atoms, c) in p.terms() {
            let term = Poly::monomial(atoms.to_vec(), c);
            let iters: Vec<Op> = atoms
                .iter()
                .filter_map(|a| match a {
                    Atom::Iter(l) => Some(*l),
                    _ => None,
                })
                .collect();
            let rewritten = match iters.as_slice() {
                [l] => {
                    let data = &func.ops[*l];
                    let body = data.regions.first().copied();
                    let scalar = |v: Value| match self.forms.form(v) {
                        Form::Index(i) if i.dims.is_empty() => Some(i.offset.clone()),
                        _ => None,
                    };
                    match (
                        body.and_then(|b| func.blocks[b].args.first().copied()),
                        data.operands.first().and_then(|&v| scalar(v)),
                        data.operands.get(2).and_then(|&v| scalar(v)),
                    ) {
                        (Some(iv), Some(lb), Some(step)) => step
                            .as_constant()
                            .filter(|&s| s != 0 && c % s == 0)
                            .and_then(|s| {
                                let rest = term.div_exact(&[Atom::Iter(*l)], s)?;
                                let iv_minus_lb = Poly::atom(Atom::Value(iv)).checked_sub(&lb)?;
                                rest.checked_mul(&iv_minus_lb)
                            }),
                        _ => None,
                    }
                }
                _ => None,
            };
            match out.checked_add(&rewritten.unwrap_or(term)) {
                Some(sum) => out = sum,
                None => return p.clone(),
            }
        }
        out
    }
}

fn add(a: &Poly, b: &Poly) -> Result<Poly, String> {
    a.checked_add(b)
        .ok_or_else(|| "index arithmetic with constants too large to follow".to_string())
}

/// The constant every element of `v` is (through splats, broadcasts and
/// casts, which keep zero zero).
fn constant_of(func: &Function, v: Value) -> Option<ConstValue> {
    let ValueDef::Result(op, _) = func.values[v].def else {
        return None;
    };
    let data = &func.ops[op];
    match &data.kind {
        OpKind::Constant(c) => Some(*c),
        OpKind::Splat | OpKind::Broadcast => constant_of(func, *data.operands.first()?),
        OpKind::Cast { .. } => match constant_of(func, *data.operands.first()?)? {
            // A cast of zero is zero; other values may round.
            c @ (ConstValue::Int(0) | ConstValue::Bool(false)) => Some(c),
            ConstValue::Float(f) if f == 0.0 => Some(ConstValue::Float(f)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether every element of `v` is `0`, `+0.0` or `false`: what TMA's zero
/// fill gives.
fn is_positive_zero(func: &Function, v: Value) -> bool {
    match constant_of(func, v) {
        Some(ConstValue::Int(0) | ConstValue::Bool(false)) => true,
        Some(ConstValue::Float(f)) => f == 0.0 && f.is_sign_positive(),
        _ => false,
    }
}

/// Renames the tile dimensions of recipe `r` of a rank-reduced
/// `desc_load` of a descriptor of type `desc` (its recipe was assembled
/// over the descriptor's dimensions): the block's dimensions of 1 are no
/// dimension of the tile, and the others are the tile's, in order.
fn squeeze_tile_dims(r: &mut TmaRecipe, desc: &Type) {
    let Type::TensorDesc { block, .. } = desc else {
        return;
    };
    let tile_dim: Vec<Option<usize>> = block
        .iter()
        .scan(0, |next, &b| {
            Some((b != 1).then(|| {
                *next += 1;
                *next - 1
            }))
        })
        .collect();
    for d in &mut r.dims {
        d.tile_dim = d.tile_dim.and_then(|t| tile_dim.get(t).copied().flatten());
    }
}
