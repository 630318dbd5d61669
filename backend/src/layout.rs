//! Distributed layouts: which thread of a program holds which elements of a
//! tile, in which register.
//!
//! A tile value lives spread over the program's threads: thread `t` holds
//! `regs_per_thread` elements in a register array, and each register has
//! compile-time coordinates relative to a per-thread base. The code
//! generator emits one C array per tile and unrolled loops over its
//! registers, so every coordinate expression below is `base(thread) +
//! constant(register)` and folds after unrolling.
//!
//! The layouts, as in Triton:
//!
//! - **Blocked** (`size_per_thread`, `threads_per_warp`, `warps_per_cta`,
//!   `order`): the tile is cut into CTA tiles of `spt * tpw * wpc` elements
//!   per dimension; inside one, thread (lane, warp) owns an `spt` box.
//!   `order[0]` is the fastest-varying dimension, used for lanes, warps and
//!   registers alike, so the `spt[order[0]]` registers of one box are
//!   consecutive in memory for a row-major tile: one 16-byte vector access.
//!   A tile larger than the CTA tile repeats it (more registers); a smaller
//!   one wraps, so several threads hold the same element (replication),
//!   which is how broadcasts stay free.
//! - **Slice** (`dim`, `parent`): a tile of rank `n - 1` laid out like the
//!   parent with dimension `dim` collapsed: what a reduction along `dim`
//!   leaves, and what `expand_dims(.., dim)` turns back into the parent
//!   without moving data. Threads that differ only along `dim` hold the same
//!   values.
//!
//! - **Mma** (`version`, `warps_per_cta`, `instr_n`): the accumulator of
//!   tensor-core `dot`s, shared by `mma.sync` (V2) and `wgmma` (V3); see
//!   [`Mma`]. Dot operands do not live in registers in the plain backend:
//!   they are staged in swizzled shared memory (see `emit_cuda`).
//!
//! Every layout answers the same questions through [`Layout::digits`] (the
//! register index as mixed-radix digits, each moving one dimension by a
//! stride) and [`Layout::thread_terms`] (the per-thread base), so
//! broadcasts, slices and reductions are written once for all layouts.

use std::fmt;

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;

/// Which thread index a [`Term`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadId {
    /// `threadIdx.x % 32`
    Lane,
    /// `threadIdx.x / 32`
    Warp,
}

/// One part of a thread's base coordinate: `(id / div % modulo) * scale`.
/// The emitter prints these as C; tests evaluate them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    pub id: ThreadId,
    pub div: u32,
    pub modulo: u32,
    pub scale: u32,
}

impl Term {
    pub fn eval(&self, lane: u32, warp: u32) -> u32 {
        let id = match self.id {
            ThreadId::Lane => lane,
            ThreadId::Warp => warp,
        };
        (id / self.div % self.modulo) * self.scale
    }

    /// C expression over variables named `lane` and `warp`.
    pub fn to_c(&self) -> String {
        let id = match self.id {
            ThreadId::Lane => "lane",
            ThreadId::Warp => "warp",
        };
        let mut e = id.to_string();
        if self.div != 1 {
            e = format!("{e} / {}", self.div);
        }
        e = format!("({e} % {})", self.modulo);
        if self.scale != 1 {
            e = format!("{e} * {}", self.scale);
        }
        e
    }
}

/// A blocked layout; all vectors have the tile's rank.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Blocked {
    pub size_per_thread: Vec<u32>,
    pub threads_per_warp: Vec<u32>,
    pub warps_per_cta: Vec<u32>,
    /// Dimensions from fastest to slowest varying.
    pub order: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    Blocked(Blocked),
    Mma(Mma),
    /// `parent` has rank `rank + 1`; dimension `dim` of it is collapsed.
    Slice {
        dim: u32,
        parent: Box<Layout>,
    },
    /// Spelled out for one shape: what a register rename of another
    /// layout leaves (see [`Linear`]).
    Linear(Linear),
}

impl Blocked {
    /// Triton's default blocked layout for a row-major tile: vectors of up
    /// to 16 bytes along the last dimension, lanes filling the fastest
    /// dimensions first, warps likewise, leftovers replicating along the
    /// slowest dimension.
    pub fn default_for(shape: &[u32], num_warps: u32, elem_bytes: u32) -> Blocked {
        let order: Vec<u32> = (0..shape.len() as u32).rev().collect();
        Blocked::with_order(shape, num_warps, elem_bytes, order)
    }

    /// [`Blocked::default_for`] with an explicit fastest-to-slowest order
    /// (loads whose contiguous dimension is not the last).
    pub fn with_order(shape: &[u32], num_warps: u32, elem_bytes: u32, order: Vec<u32>) -> Blocked {
        let rank = shape.len();
        let mut spt = vec![1; rank];
        let mut tpw = vec![1; rank];
        let mut wpc = vec![1; rank];
        if rank == 0 {
            return Blocked {
                size_per_thread: spt,
                threads_per_warp: tpw,
                warps_per_cta: wpc,
                order,
            };
        }
        let fast = order[0] as usize;
        let threads = WARP_SIZE * num_warps;
        let numel: u32 = shape.iter().product();
        // As wide as 16 bytes allow, but keep every thread busy when the
        // tile is small.
        let max_vec = (16 / elem_bytes.max(1)).max(1);
        let per_thread = (numel / threads).max(1);
        spt[fast] = max_vec.min(per_thread).min(shape[fast]).max(1);
        let mut lanes_left = WARP_SIZE;
        for &d in &order {
            let d = d as usize;
            let want = (shape[d] / spt[d]).max(1);
            let t = want.min(lanes_left);
            tpw[d] = t;
            lanes_left /= t;
        }
        tpw[order[rank - 1] as usize] *= lanes_left;
        let mut warps_left = num_warps;
        for &d in &order {
            let d = d as usize;
            let want = (shape[d] / (spt[d] * tpw[d])).max(1);
            let w = want.min(warps_left);
            wpc[d] = w;
            warps_left /= w;
        }
        wpc[order[rank - 1] as usize] *= warps_left;
        Blocked {
            size_per_thread: spt,
            threads_per_warp: tpw,
            warps_per_cta: wpc,
            order,
        }
    }

    fn rank(&self) -> usize {
        self.order.len()
    }

    /// Elements per dimension covered by one CTA tile.
    pub fn cta_tile(&self) -> Vec<u32> {
        (0..self.rank())
            .map(|d| self.size_per_thread[d] * self.threads_per_warp[d] * self.warps_per_cta[d])
            .collect()
    }

    /// Repetitions of the CTA tile per dimension.
    fn reps(&self, shape: &[u32]) -> Vec<u32> {
        let tile = self.cta_tile();
        shape
            .iter()
            .zip(&tile)
            .map(|(&s, &t)| s.div_ceil(t).max(1))
            .collect()
    }

    /// Box elements along `order` first, then repetitions.
    fn digits(&self, shape: &[u32]) -> Vec<Digit> {
        let reps = self.reps(shape);
        let tile = self.cta_tile();
        let mut out = Vec::new();
        for &d in &self.order {
            out.push(Digit {
                size: self.size_per_thread[d as usize],
                dim: d,
                stride: 1,
            });
        }
        for &d in &self.order {
            out.push(Digit {
                size: reps[d as usize],
                dim: d,
                stride: tile[d as usize],
            });
        }
        out
    }

    /// Per dimension, the terms of a thread's base coordinate.
    fn thread_terms(&self) -> Vec<Vec<Term>> {
        let rank = self.rank();
        let mut out = vec![Vec::new(); rank];
        for (id, per_dim) in [
            (ThreadId::Lane, &self.threads_per_warp),
            (ThreadId::Warp, &self.warps_per_cta),
        ] {
            let mut div = 1;
            for &d in &self.order {
                let d = d as usize;
                if per_dim[d] > 1 {
                    let scale = match id {
                        ThreadId::Lane => self.size_per_thread[d],
                        ThreadId::Warp => self.size_per_thread[d] * self.threads_per_warp[d],
                    };
                    out[d].push(Term {
                        id,
                        div,
                        modulo: per_dim[d],
                        scale,
                    });
                }
                div *= per_dim[d];
            }
        }
        out
    }
}

/// Which tensor-core instruction family an [`Mma`] layout feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaVersion {
    /// `mma.sync.m16n8k*`: one warp per 16x8 instruction tile.
    V2,
    /// `wgmma.mma_async.m64nNk*`: one warpgroup (4 warps) per 64xN tile.
    V3,
}

/// The accumulator layout of tensor-core `dot`s (rank 2).
///
/// Both instruction families give a warp the same 16-row fragment: lane
/// `l` holds rows `l/4` and `l/4 + 8`, columns `2*(l%4)` and `+1`, for
/// each 8-column chunk. Warps are numbered M-fastest over
/// `warps_per_cta = [wm, wn]`, so the four warps of a warpgroup stack into
/// the 64 rows of one `wgmma` (`wm` is a multiple of 4 for V3). A warp's
/// instruction tile is 16 x `instr_n`; it repeats over the tile with
/// strides `16*wm` and `instr_n*wn`. Registers are numbered `j` (column
/// pair), `i` (row half), chunk, then N repetitions, then M repetitions: the
/// order `wgmma` wants its accumulator operands in, so the registers of one
/// instruction are consecutive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mma {
    pub version: MmaVersion,
    pub warps_per_cta: [u32; 2],
    pub instr_n: u32,
}

impl Mma {
    /// Rows and columns of the tile that one pass of all warps covers.
    pub fn cta_tile(&self) -> [u32; 2] {
        [
            16 * self.warps_per_cta[0],
            self.instr_n * self.warps_per_cta[1],
        ]
    }

    pub fn reps(&self, shape: &[u32]) -> [u32; 2] {
        let t = self.cta_tile();
        [
            shape[0].div_ceil(t[0]).max(1),
            shape[1].div_ceil(t[1]).max(1),
        ]
    }

    fn digits(&self, shape: &[u32]) -> Vec<Digit> {
        let reps = self.reps(shape);
        let t = self.cta_tile();
        vec![
            Digit {
                size: 2,
                dim: 1,
                stride: 1,
            },
            Digit {
                size: 2,
                dim: 0,
                stride: 8,
            },
            Digit {
                size: self.instr_n / 8,
                dim: 1,
                stride: 8,
            },
            Digit {
                size: reps[1],
                dim: 1,
                stride: t[1],
            },
            Digit {
                size: reps[0],
                dim: 0,
                stride: t[0],
            },
        ]
    }

    fn thread_terms(&self) -> Vec<Vec<Term>> {
        let [wm, wn] = self.warps_per_cta;
        let mut rows = vec![Term {
            id: ThreadId::Lane,
            div: 4,
            modulo: 8,
            scale: 1,
        }];
        let mut cols = vec![Term {
            id: ThreadId::Lane,
            div: 1,
            modulo: 4,
            scale: 2,
        }];
        if wm > 1 {
            rows.push(Term {
                id: ThreadId::Warp,
                div: 1,
                modulo: wm,
                scale: 16,
            });
        }
        if wn > 1 {
            cols.push(Term {
                id: ThreadId::Warp,
                div: wm,
                modulo: wn,
                scale: self.instr_n,
            });
        }
        vec![rows, cols]
    }
}

/// One mixed-radix digit of a register index: `size` values, each step
/// moving the coordinate along `dim` by `stride` elements. A layout's
/// register index is its digits, least significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digit {
    pub size: u32,
    pub dim: u32,
    pub stride: u32,
}

impl Layout {
    pub fn blocked(b: Blocked) -> Layout {
        Layout::Blocked(b)
    }

    pub fn slice(dim: u32, parent: Layout) -> Layout {
        Layout::Slice {
            dim,
            parent: Box::new(parent),
        }
    }

    pub fn rank(&self) -> usize {
        match self {
            Layout::Blocked(b) => b.rank(),
            Layout::Mma(_) => 2,
            Layout::Slice { parent, .. } => parent.rank() - 1,
            Layout::Linear(l) => l.shape.len(),
        }
    }

    /// The parent's shape for a slice of shape `shape`: a 1 inserted at
    /// `dim`.
    pub fn parent_shape(shape: &[u32], dim: u32) -> Vec<u32> {
        let mut s = shape.to_vec();
        s.insert(dim as usize, 1);
        s
    }

    /// The register digits for a tile of `shape`, least significant first.
    /// A slice keeps its parent's digits except those along the collapsed
    /// dimension (their registers hold the same element).
    pub fn digits(&self, shape: &[u32]) -> Vec<Digit> {
        match self {
            Layout::Blocked(b) => b.digits(shape),
            Layout::Mma(m) => m.digits(shape),
            Layout::Linear(l) => l.digits.clone(),
            Layout::Slice { dim, parent } => parent
                .digits(&Self::parent_shape(shape, *dim))
                .into_iter()
                .filter(|g| g.dim != *dim)
                .map(|g| Digit {
                    dim: if g.dim > *dim { g.dim - 1 } else { g.dim },
                    ..g
                })
                .collect(),
        }
    }

    /// Registers each thread holds for a tile of `shape`.
    pub fn regs_per_thread(&self, shape: &[u32]) -> u32 {
        self.digits(shape).iter().map(|g| g.size).product()
    }

    /// The digit values of register `reg`.
    pub fn decode(digits: &[Digit], mut reg: u32) -> Vec<u32> {
        digits
            .iter()
            .map(|g| {
                let v = reg % g.size;
                reg /= g.size;
                v
            })
            .collect()
    }

    /// The register with digit values `values`.
    pub fn encode(digits: &[Digit], values: &[u32]) -> u32 {
        let mut out = 0;
        let mut scale = 1;
        for (g, v) in digits.iter().zip(values) {
            out += v * scale;
            scale *= g.size;
        }
        out
    }

    /// The parent register that slice register `reg` reads (the collapsed
    /// digits at 0); `shape` is the slice's.
    pub fn slice_parent_reg(&self, shape: &[u32], reg: u32) -> u32 {
        let Layout::Slice { dim, parent } = self else {
            return reg;
        };
        let pdigits = parent.digits(&Self::parent_shape(shape, *dim));
        let sdigits = self.digits(shape);
        let mut vals = Self::decode(&sdigits, reg).into_iter();
        let pvals: Vec<u32> = pdigits
            .iter()
            .map(|g| {
                if g.dim == *dim {
                    0
                } else {
                    vals.next().unwrap_or(0)
                }
            })
            .collect();
        Self::encode(&pdigits, &pvals)
    }

    /// Whether `self` and `other` put every element of a `shape` tile in the
    /// same register of the same thread (then converting is a rename). The
    /// row slices of two MMA layouts that differ only in N are the case that
    /// matters: attention rescales its `acc` (N = head dim) by a row vector
    /// reduced out of `qk` (N = BLOCK_N).
    pub fn same_placement(&self, other: &Layout, shape: &[u32]) -> bool {
        if self == other {
            return true;
        }
        let regs = self.regs_per_thread(shape);
        if regs != other.regs_per_thread(shape) || self.num_warps() != other.num_warps() {
            return false;
        }
        (0..self.num_warps()).all(|warp| {
            (0..WARP_SIZE).all(|lane| {
                (0..regs).all(|r| {
                    self.coords(shape, lane, warp, r) == other.coords(shape, lane, warp, r)
                })
            })
        })
    }

    /// Coordinates of register `reg` of thread (`lane`, `warp`) in a tile
    /// of `shape`.
    pub fn coords(&self, shape: &[u32], lane: u32, warp: u32, reg: u32) -> Vec<u32> {
        self.unwrapped_coords(shape, lane, warp, reg)
            .iter()
            .zip(shape)
            .map(|(c, s)| c % s)
            .collect()
    }

    /// Coordinates before wrapping into the tile: at least the shape for
    /// the copies a thread holds of elements owned by another (replication
    /// where the layout covers more than the tile).
    pub fn unwrapped_coords(&self, shape: &[u32], lane: u32, warp: u32, reg: u32) -> Vec<u32> {
        let off = self.reg_offset(shape, reg);
        self.thread_terms()
            .iter()
            .zip(off)
            .map(|(terms, o)| terms.iter().map(|t| t.eval(lane, warp)).sum::<u32>() + o)
            .collect()
    }

    /// Per dimension, the terms whose sum is a thread's base coordinate.
    /// Coordinates are `(base + reg_offset(reg)) % shape` per dimension
    /// (see [`Layout::coords`]), so the emitter computes the base once per
    /// thread and folds the register offsets into constants. All terms and
    /// register digits of a dimension are disjoint bit fields, so the
    /// wrap drops whole fields: a field is either inside the tile or a copy.
    pub fn thread_terms(&self) -> Vec<Vec<Term>> {
        match self {
            Layout::Blocked(b) => b.thread_terms(),
            Layout::Mma(m) => m.thread_terms(),
            Layout::Linear(l) => l.terms.clone(),
            Layout::Slice { dim, parent } => {
                let mut t = parent.thread_terms();
                t.remove(*dim as usize);
                t
            }
        }
    }

    /// Terms of the collapsed dimensions of (nested) slices: threads that
    /// differ only in these hold the same elements.
    pub fn collapsed_terms(&self) -> Vec<Term> {
        match self {
            Layout::Blocked(_) | Layout::Mma(_) | Layout::Linear(_) => Vec::new(),
            Layout::Slice { dim, parent } => {
                let mut t = parent.collapsed_terms();
                t.extend(parent.thread_terms()[*dim as usize].iter().copied());
                t
            }
        }
    }

    /// The compile-time part of register `reg`'s coordinates.
    pub fn reg_offset(&self, shape: &[u32], reg: u32) -> Vec<u32> {
        let digits = self.digits(shape);
        let vals = Self::decode(&digits, reg);
        let mut off = vec![0; shape.len()];
        for (g, v) in digits.iter().zip(vals) {
            off[g.dim as usize] += v * g.stride;
        }
        off
    }

    /// Threads of the program this layout spreads over.
    pub fn num_warps(&self) -> u32 {
        match self {
            Layout::Blocked(b) => b.warps_per_cta.iter().product(),
            Layout::Mma(m) => m.warps_per_cta[0] * m.warps_per_cta[1],
            Layout::Slice { parent, .. } => parent.num_warps(),
            Layout::Linear(l) => l.num_warps,
        }
    }

    /// The layout of `trans(x, perm)` (result dimension `i` is dimension
    /// `perm[i]` of `x`) that puts every element in the register and thread
    /// holding it in `self`, `x`'s layout: the transpose is then a rename,
    /// as Triton's `tt.trans` infers its result encoding. Blocked layouts
    /// and slices of them permute their per-dimension vectors; an MMA
    /// accumulator has no transposed form (`None`), so a transposed
    /// accumulator is converted first.
    pub fn permuted(&self, perm: &[u32]) -> Option<Layout> {
        let rank = self.rank();
        let mut seen = vec![false; rank];
        if perm.len() != rank
            || perm
                .iter()
                .any(|&p| (p as usize) >= rank || std::mem::replace(&mut seen[p as usize], true))
        {
            return None;
        }
        match self {
            Layout::Blocked(b) => {
                let pick = |v: &[u32]| perm.iter().map(|&p| v[p as usize]).collect::<Vec<_>>();
                // `order` lists source dimensions; name them as result ones.
                let mut result_dim = vec![0; rank];
                for (i, &p) in perm.iter().enumerate() {
                    result_dim[p as usize] = i as u32;
                }
                Some(Layout::Blocked(Blocked {
                    size_per_thread: pick(&b.size_per_thread),
                    threads_per_warp: pick(&b.threads_per_warp),
                    warps_per_cta: pick(&b.warps_per_cta),
                    order: b.order.iter().map(|&d| result_dim[d as usize]).collect(),
                }))
            }
            Layout::Mma(_) => None,
            Layout::Linear(l) => Some(Layout::Linear(l.permuted(perm))),
            Layout::Slice { dim, parent } => {
                // The collapsed dimension stays where it is in the parent;
                // the others move as the slice's do.
                let to_parent = |d: u32| if d < *dim { d } else { d + 1 };
                let mut parent_perm = vec![*dim; rank + 1];
                for (i, &p) in perm.iter().enumerate() {
                    parent_perm[to_parent(i as u32) as usize] = to_parent(p);
                }
                Some(Layout::slice(*dim, parent.permuted(&parent_perm)?))
            }
        }
    }

    /// Whether every element has exactly one (thread, register) holder.
    pub fn is_unique(&self, shape: &[u32]) -> bool {
        let regs = self.regs_per_thread(shape);
        let numel: u32 = shape.iter().product();
        regs * self.num_warps() * WARP_SIZE == numel && self.collapsed_terms().is_empty()
    }
}

/// A layout spelled out for one tile shape: its register digits and its
/// threads' terms, the two things every layout answers
/// ([`Layout::digits`], [`Layout::thread_terms`]). It is what a reshape,
/// permute, split or join leaves when every element stays in the thread
/// and register that held it: the 128x256 accumulator reshaped to
/// `[128, 2, 128]` (tutorial 09's epilogue subtiling) is no MMA layout,
/// but it is the same registers named by other coordinates.
///
/// Built only from a layout whose fields (digits and terms) are powers of
/// two that stay inside the tile, with one holder per element, so that
/// the fields of a dimension are disjoint bit fields and a coordinate is
/// their plain sum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Linear {
    pub shape: Vec<u32>,
    /// Register digits, least significant first, none of size 1.
    pub digits: Vec<Digit>,
    /// Per dimension, the terms of a thread's base coordinate.
    pub terms: Vec<Vec<Term>>,
    pub num_warps: u32,
}

/// One bit field of a coordinate, before it is a digit or a term: `size`
/// values along `dim`, `stride` apart.
#[derive(Clone, Copy)]
struct Field {
    dim: u32,
    stride: u32,
    size: u32,
}

/// Row-major element strides of `shape`.
fn row_major_strides(shape: &[u32]) -> Vec<u64> {
    let mut out = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        out[d] = out[d + 1] * shape[d + 1] as u64;
    }
    out
}

impl Linear {
    /// `layout` at `shape` spelled out, or why a rename cannot start from
    /// it.
    pub fn of(layout: &Layout, shape: &[u32]) -> Result<Linear, String> {
        if !shape.iter().all(|s| s.is_power_of_two()) {
            return Err("a dimension of the tile is not a power of two".into());
        }
        if !layout.is_unique(shape) {
            return Err(format!(
                "its layout {layout} holds some elements in several threads or registers"
            ));
        }
        let digits: Vec<Digit> = layout
            .digits(shape)
            .into_iter()
            .filter(|g| g.size > 1)
            .collect();
        let terms: Vec<Vec<Term>> = layout
            .thread_terms()
            .into_iter()
            .map(|ts| ts.into_iter().filter(|t| t.modulo > 1).collect())
            .collect();
        // Inside the tile: no field wraps onto another's elements.
        for (d, &extent) in shape.iter().enumerate() {
            let reach: u64 = digits
                .iter()
                .filter(|g| g.dim as usize == d)
                .map(|g| (g.size as u64 - 1) * g.stride as u64)
                .chain(
                    terms[d]
                        .iter()
                        .map(|t| (t.modulo as u64 - 1) * t.scale as u64),
                )
                .sum();
            if reach >= extent as u64 {
                return Err(format!("its layout {layout} wraps around the tile"));
            }
        }
        let powers = digits
            .iter()
            .all(|g| g.size.is_power_of_two() && g.stride.is_power_of_two())
            && terms.iter().flatten().all(|t| {
                t.modulo.is_power_of_two() && t.scale.is_power_of_two() && t.div.is_power_of_two()
            });
        if !powers {
            return Err(format!(
                "its layout {layout} has fields that are not powers of two"
            ));
        }
        Ok(Linear {
            shape: shape.to_vec(),
            digits,
            terms,
            num_warps: layout.num_warps(),
        })
    }

    /// The fields of the tile `to` that field `f` of `self`'s tile covers
    /// once both are read in row-major order, low part first; `None` when
    /// it does not cut into whole fields.
    fn reshape_field(&self, f: Field, to: &[u32]) -> Option<Vec<Field>> {
        let from_strides = row_major_strides(&self.shape);
        let to_strides = row_major_strides(to);
        let mut at = f.stride as u64 * from_strides[f.dim as usize];
        let mut left = f.size as u64;
        let mut out = Vec::new();
        while left > 1 {
            let e = (0..to.len())
                .find(|&e| at.is_multiple_of(to_strides[e]) && at / to_strides[e] < to[e] as u64)?;
            let stride = at / to_strides[e];
            let room = to[e] as u64 / stride;
            let take = room.min(left);
            if !left.is_multiple_of(take) {
                return None;
            }
            out.push(Field {
                dim: e as u32,
                stride: stride as u32,
                size: take as u32,
            });
            left /= take;
            at *= take;
        }
        Some(out)
    }

    /// The same registers read as a tile of shape `to` (same number of
    /// elements, row-major order kept): `reshape`.
    pub fn reshaped(&self, to: &[u32]) -> Option<Linear> {
        let mut digits = Vec::new();
        for g in &self.digits {
            let f = Field {
                dim: g.dim,
                stride: g.stride,
                size: g.size,
            };
            // Splitting a digit in two keeps the register numbering: its
            // value is the low part plus the high part times the low size.
            digits.extend(self.reshape_field(f, to)?.into_iter().map(|p| Digit {
                size: p.size,
                dim: p.dim,
                stride: p.stride,
            }));
        }
        let mut terms = vec![Vec::new(); to.len()];
        for (d, ts) in self.terms.iter().enumerate() {
            for t in ts {
                let f = Field {
                    dim: d as u32,
                    stride: t.scale,
                    size: t.modulo,
                };
                let mut div = t.div;
                for p in self.reshape_field(f, to)? {
                    terms[p.dim as usize].push(Term {
                        id: t.id,
                        div,
                        modulo: p.size,
                        scale: p.stride,
                    });
                    div *= p.size;
                }
            }
        }
        Some(Linear {
            shape: to.to_vec(),
            digits,
            terms,
            num_warps: self.num_warps,
        })
    }

    /// Result dimension `i` is dimension `perm[i]` of `self`: `trans`.
    pub fn permuted(&self, perm: &[u32]) -> Linear {
        let mut result_dim = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            result_dim[p as usize] = i as u32;
        }
        Linear {
            shape: perm.iter().map(|&p| self.shape[p as usize]).collect(),
            digits: self
                .digits
                .iter()
                .map(|g| Digit {
                    dim: result_dim[g.dim as usize],
                    ..*g
                })
                .collect(),
            terms: perm
                .iter()
                .map(|&p| self.terms[p as usize].clone())
                .collect(),
            num_warps: self.num_warps,
        }
    }

    /// The halves of a last dimension of 2 held by one register digit of
    /// every thread: `split`. Returns the layout of each half and the
    /// number of registers below that digit ([`halves_register`]).
    pub fn split(&self) -> Result<(Linear, u32), String> {
        let last = self
            .shape
            .len()
            .checked_sub(1)
            .ok_or("a scalar has no halves")?;
        if self.shape[last] != 2 {
            return Err("the last dimension is not 2".into());
        }
        if !self.terms[last].is_empty() {
            return Err("the two halves of an element pair are in different threads".into());
        }
        let pos = self
            .digits
            .iter()
            .position(|g| g.dim as usize == last)
            .ok_or("no register holds the halves")?;
        let below: u32 = self.digits[..pos].iter().map(|g| g.size).product();
        let mut digits = self.digits.clone();
        digits.remove(pos);
        let mut terms = self.terms.clone();
        terms.pop();
        Ok((
            Linear {
                shape: self.shape[..last].to_vec(),
                digits,
                terms,
                num_warps: self.num_warps,
            },
            below,
        ))
    }

    /// Two tiles in this layout side by side along a new last dimension of
    /// 2, the second's registers after the first's: `join`. The number of
    /// registers below the new digit is the operands' register count.
    pub fn joined(&self) -> (Linear, u32) {
        let below: u32 = self.digits.iter().map(|g| g.size).product();
        let mut shape = self.shape.clone();
        shape.push(2);
        let mut digits = self.digits.clone();
        digits.push(Digit {
            size: 2,
            dim: self.shape.len() as u32,
            stride: 1,
        });
        let mut terms = self.terms.clone();
        terms.push(Vec::new());
        (
            Linear {
                shape,
                digits,
                terms,
                num_warps: self.num_warps,
            },
            below,
        )
    }

    /// The named layout with the same placement, when there is one (an MMA
    /// accumulator of another N: the halves of a split accumulator), so
    /// that the code written for it applies (the coalesced store of an
    /// accumulator, its use as a dot's accumulator); else `self`.
    pub fn canonical(self) -> Layout {
        let shape = self.shape.clone();
        let linear = Layout::Linear(self);
        if shape.len() != 2 {
            return linear;
        }
        // Largest first, as `choose_mma` picks them: with one warp along
        // N, every instruction width places the elements alike, and the
        // widest is what a dot of this shape would use.
        let warps = linear.num_warps();
        if !warps.is_power_of_two() {
            return linear;
        }
        for wm in (0..=warps.ilog2()).rev().map(|b| 1 << b) {
            let wn = warps / wm;
            for instr_n in (3..=8).rev().map(|b| 1u32 << b) {
                if instr_n > shape[1] {
                    continue;
                }
                let mma = Layout::Mma(Mma {
                    version: if wm % 4 == 0 {
                        MmaVersion::V3
                    } else {
                        MmaVersion::V2
                    },
                    warps_per_cta: [wm, wn],
                    instr_n,
                });
                if mma.is_unique(&shape) && mma.same_placement(&linear, &shape) {
                    return mma;
                }
            }
        }
        linear
    }
}

/// The register of the tile a `split` halves (or a `join` makes) that holds
/// register `reg` of half `half`, when `below` registers lie under the
/// halves' digit ([`Linear::split`], [`Linear::joined`]).
pub fn halves_register(below: u32, half: u32, reg: u32) -> u32 {
    reg % below + half * below + (reg / below) * 2 * below
}

/// Whether `kept(lane, warp, reg)` holds for every register of every
/// thread: the brute-force check that a rename moves no element.
fn every_register(num_warps: u32, regs: u32, kept: impl Fn(u32, u32, u32) -> bool) -> bool {
    (0..num_warps).all(|warp| (0..WARP_SIZE).all(|lane| (0..regs).all(|r| kept(lane, warp, r))))
}

impl Layout {
    /// The layout of `reshape(x)` from `from` to `to` when `x` lives in
    /// `self` and the reshape can be a register rename: register `r` of
    /// every thread keeps its element, now at its coordinates in the new
    /// shape (row-major position kept). Checked element by element
    /// against [`Layout::coords`]; `Err` says why the reshape goes through
    /// shared memory instead.
    pub fn reshape_rename(&self, from: &[u32], to: &[u32]) -> Result<Layout, String> {
        let lin = Linear::of(self, from)?;
        let out = lin
            .reshaped(to)
            .ok_or("its registers do not cut into the new shape's dimensions")?
            .canonical();
        let (fs, ts) = (row_major_strides(from), row_major_strides(to));
        let at = |c: Vec<u32>, s: &[u64]| c.iter().zip(s).map(|(&x, &k)| x as u64 * k).sum::<u64>();
        let regs = self.regs_per_thread(from);
        let kept = out.regs_per_thread(to) == regs
            && every_register(self.num_warps(), regs, |lane, warp, r| {
                at(self.coords(from, lane, warp, r), &fs) == at(out.coords(to, lane, warp, r), &ts)
            });
        if !kept {
            return Err(format!(
                "internal: {out} does not keep the elements of {self}"
            ));
        }
        Ok(out)
    }

    /// The layout of `trans(x, perm)` (`x` of `shape` in `self`) as a
    /// register rename: [`Layout::permuted`] where the layout has a
    /// permuted form of its own, else (an MMA accumulator) the layout
    /// spelled out ([`Linear`]) with its dimensions renamed. Register `r`
    /// of every thread keeps its element, checked element by element;
    /// `Err` says why the transpose goes through shared memory instead.
    pub fn trans_rename(&self, shape: &[u32], perm: &[u32]) -> Result<Layout, String> {
        if let Some(l) = self.permuted(perm) {
            return Ok(l);
        }
        if perm.len() != shape.len() {
            return Err("internal: the permutation is not of the tile's rank".into());
        }
        let out = Linear::of(self, shape)?.permuted(perm).canonical();
        let to: Vec<u32> = perm.iter().map(|&p| shape[p as usize]).collect();
        let regs = self.regs_per_thread(shape);
        let kept = out.regs_per_thread(&to) == regs
            && every_register(self.num_warps(), regs, |lane, warp, r| {
                let c = self.coords(shape, lane, warp, r);
                let want: Vec<u32> = perm.iter().map(|&p| c[p as usize]).collect();
                out.coords(&to, lane, warp, r) == want
            });
        if !kept {
            return Err(format!(
                "internal: {out} does not keep the elements of {self}"
            ));
        }
        Ok(out)
    }

    /// The layout of each half of `split(x)` (`x` of `shape` in `self`,
    /// last dimension 2) when the split is a register rename, and the
    /// registers below the halves' digit ([`halves_register`]); checked
    /// element by element. `Err` says why it goes through shared memory.
    pub fn split_rename(&self, shape: &[u32]) -> Result<(Layout, u32), String> {
        let (half, below) = Linear::of(self, shape)?.split()?;
        let half = half.canonical();
        let hshape = &shape[..shape.len() - 1];
        let regs = half.regs_per_thread(hshape);
        let kept = regs * 2 == self.regs_per_thread(shape)
            && (0..2).all(|h| {
                every_register(self.num_warps(), regs, |lane, warp, r| {
                    let mut c = half.coords(hshape, lane, warp, r);
                    c.push(h);
                    c == self.coords(shape, lane, warp, halves_register(below, h, r))
                })
            });
        if !kept {
            return Err(format!(
                "internal: {half} does not keep the elements of {self}"
            ));
        }
        Ok((half, below))
    }

    /// The layout of `join(a, b)` when `a` and `b` (of `shape`) both live in
    /// `self`: `b`'s registers after `a`'s, along a new last dimension of
    /// 2, and the registers below that digit (each operand's count);
    /// checked element by element.
    pub fn join_rename(&self, shape: &[u32]) -> Result<(Layout, u32), String> {
        let (joined, below) = Linear::of(self, shape)?.joined();
        let joined = joined.canonical();
        let mut jshape = shape.to_vec();
        jshape.push(2);
        let regs = self.regs_per_thread(shape);
        let kept = joined.regs_per_thread(&jshape) == 2 * regs
            && (0..2).all(|h| {
                every_register(self.num_warps(), regs, |lane, warp, r| {
                    let mut c = self.coords(shape, lane, warp, r);
                    c.push(h);
                    c == joined.coords(&jshape, lane, warp, halves_register(below, h, r))
                })
            });
        if !kept {
            return Err(format!(
                "internal: {joined} does not keep the elements of {self}"
            ));
        }
        Ok((joined, below))
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(v: &[u32]) -> String {
            format!(
                "[{}]",
                v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            )
        }
        match self {
            Layout::Blocked(b) => write!(
                f,
                "#blocked<spt = {}, tpw = {}, wpc = {}, order = {}>",
                list(&b.size_per_thread),
                list(&b.threads_per_warp),
                list(&b.warps_per_cta),
                list(&b.order)
            ),
            Layout::Mma(m) => write!(
                f,
                "#mma<{}, warps = {}, instr = 16x{}>",
                match m.version {
                    MmaVersion::V2 => "v2",
                    MmaVersion::V3 => "v3",
                },
                list(&m.warps_per_cta),
                m.instr_n
            ),
            Layout::Slice { dim, parent } => write!(f, "#slice<dim = {dim}, parent = {parent}>"),
            Layout::Linear(l) => {
                let regs: Vec<String> = l
                    .digits
                    .iter()
                    .map(|g| format!("d{}:{}x{}", g.dim, g.size, g.stride))
                    .collect();
                let threads: Vec<String> = l
                    .terms
                    .iter()
                    .enumerate()
                    .flat_map(|(d, ts)| {
                        ts.iter().map(move |t| {
                            let id = match t.id {
                                ThreadId::Lane => "lane",
                                ThreadId::Warp => "warp",
                            };
                            format!("d{d}:{id}/{}%{}x{}", t.div, t.modulo, t.scale)
                        })
                    })
                    .collect();
                write!(
                    f,
                    "#linear<shape = {}, regs = [{}], threads = [{}]>",
                    list(&l.shape),
                    regs.join(", "),
                    threads.join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Every element of the tile is held by the same number of threads
    /// (the replication factor), and no thread holds an element twice.
    fn check_cover(layout: &Layout, shape: &[u32], num_warps: u32) -> u32 {
        let regs = layout.regs_per_thread(shape);
        let mut count: HashMap<Vec<u32>, u32> = HashMap::new();
        for warp in 0..num_warps {
            for lane in 0..WARP_SIZE {
                let mut mine = std::collections::HashSet::new();
                for r in 0..regs {
                    let c = layout.coords(shape, lane, warp, r);
                    assert_eq!(c.len(), shape.len());
                    assert!(
                        c.iter().zip(shape).all(|(&x, &s)| x < s),
                        "{c:?} outside {shape:?}"
                    );
                    assert!(
                        mine.insert(c.clone()),
                        "{layout} {shape:?}: thread ({lane},{warp}) holds {c:?} twice"
                    );
                    *count.entry(c).or_default() += 1;
                }
            }
        }
        let numel: u32 = shape.iter().product();
        assert_eq!(
            count.len() as u32,
            numel,
            "{layout} {shape:?}: not every element is held"
        );
        let rep = *count.values().next().unwrap();
        assert!(
            count.values().all(|&c| c == rep),
            "{layout} {shape:?}: uneven replication"
        );
        rep
    }

    #[test]
    fn default_blocked_covers_tiles_of_every_size() {
        for shape in [
            vec![1024],
            vec![128],
            vec![16],
            vec![64, 64],
            vec![128, 32],
            vec![16, 256],
            vec![2, 4],
            vec![4, 8, 16],
        ] {
            for warps in [1, 4, 8] {
                for bytes in [2, 4] {
                    let b = Blocked::default_for(&shape, warps, bytes);
                    let l = Layout::Blocked(b.clone());
                    let rep = check_cover(&l, &shape, warps);
                    let numel: u32 = shape.iter().product();
                    if numel >= WARP_SIZE * warps {
                        assert_eq!(
                            rep, 1,
                            "{l} {shape:?} replicates although the tile is large"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn default_blocked_vectorizes_the_last_dimension() {
        let b = Blocked::default_for(&[64, 64], 4, 2);
        assert_eq!(b.size_per_thread, vec![1, 8], "16-byte fp16 vectors");
        let l = Layout::Blocked(b);
        // Registers 0..8 of a thread are consecutive along dim 1.
        let first = l.coords(&[64, 64], 5, 2, 0);
        for r in 1..8 {
            let c = l.coords(&[64, 64], 5, 2, r);
            assert_eq!(c, vec![first[0], first[1] + r]);
        }
        let b = Blocked::default_for(&[1024], 4, 4);
        assert_eq!(b.size_per_thread, vec![4]);
        assert_eq!(b.threads_per_warp, vec![32]);
        assert_eq!(b.warps_per_cta, vec![4]);
    }

    #[test]
    fn slices_cover_the_reduced_tile() {
        for (shape, warps) in [
            (vec![64, 64], 4),
            (vec![128, 32], 8),
            (vec![16, 256], 4),
            (vec![4, 8, 16], 2),
        ] {
            let parent = Layout::Blocked(Blocked::default_for(&shape, warps, 4));
            for dim in 0..shape.len() as u32 {
                let mut s = shape.clone();
                s.remove(dim as usize);
                let slice = Layout::Slice {
                    dim,
                    parent: Box::new(parent.clone()),
                };
                check_cover(&slice, &s, warps);
            }
        }
    }

    /// `coords == (sum of thread terms + reg_offset) % shape`: what the
    /// emitter relies on.
    #[test]
    fn coordinates_split_into_thread_terms_and_register_constants() {
        for (shape, warps) in [
            (vec![64, 64], 4),
            (vec![128, 32], 8),
            (vec![16], 4),
            (vec![2, 4], 1),
            (vec![4, 8, 16], 2),
        ] {
            let parent = Layout::Blocked(Blocked::default_for(&shape, warps, 2));
            let mut layouts = vec![(parent.clone(), shape.clone())];
            if shape.len() > 1 {
                let mut s = shape.clone();
                s.remove(0);
                layouts.push((
                    Layout::Slice {
                        dim: 0,
                        parent: Box::new(parent),
                    },
                    s,
                ));
            }
            for (l, s) in layouts {
                let terms = l.thread_terms();
                for warp in 0..warps {
                    for lane in 0..WARP_SIZE {
                        for r in 0..l.regs_per_thread(&s) {
                            let off = l.reg_offset(&s, r);
                            let got: Vec<u32> = (0..s.len())
                                .map(|d| {
                                    (terms[d].iter().map(|t| t.eval(lane, warp)).sum::<u32>()
                                        + off[d])
                                        % s[d]
                                })
                                .collect();
                            assert_eq!(
                                got,
                                l.coords(&s, lane, warp, r),
                                "{l} {s:?} lane {lane} warp {warp} reg {r}"
                            );
                        }
                    }
                }
            }
        }
        let t = Term {
            id: ThreadId::Lane,
            div: 4,
            modulo: 8,
            scale: 2,
        };
        assert_eq!(t.to_c(), "(lane / 4 % 8) * 2");
    }

    #[test]
    fn slice_registers_match_the_parent_along_the_other_dims() {
        // expand_dims(slice) needs no data movement: slice register r of a
        // thread has the parent's coordinates with `dim` removed.
        let shape = [32, 64];
        let parent = Layout::Blocked(Blocked::default_for(&shape, 4, 2));
        let slice = Layout::Slice {
            dim: 1,
            parent: Box::new(parent.clone()),
        };
        for lane in [0, 7, 31] {
            for warp in 0..4 {
                for r in 0..slice.regs_per_thread(&[32]) {
                    let c = slice.coords(&[32], lane, warp, r);
                    let held = (0..parent.regs_per_thread(&[32, 1]))
                        .map(|pr| parent.coords(&[32, 1], lane, warp, pr))
                        .any(|pc| pc[0] == c[0]);
                    assert!(held, "slice element {c:?} is not in the parent's registers");
                }
            }
        }
    }

    /// `trans` is a rename: register `r` of every thread holds, in the
    /// permuted layout, the element whose coordinates are the source's
    /// permuted.
    #[test]
    fn permuted_layouts_hold_the_transposed_elements_in_place() {
        let cases: Vec<(Vec<u32>, u32, u32, Vec<u32>, Vec<u32>)> = vec![
            (vec![32, 64], 4, 2, vec![1, 0], vec![1, 0]),
            (vec![64, 128], 8, 2, vec![0, 1], vec![1, 0]),
            (vec![16, 8], 4, 4, vec![1, 0], vec![1, 0]),
            (vec![4, 8, 16], 2, 2, vec![2, 1, 0], vec![2, 0, 1]),
            (vec![4, 8, 16], 4, 4, vec![0, 2, 1], vec![1, 2, 0]),
        ];
        for (shape, warps, bytes, order, perm) in cases {
            let src = Layout::Blocked(Blocked::with_order(&shape, warps, bytes, order));
            let tshape: Vec<u32> = perm.iter().map(|&p| shape[p as usize]).collect();
            let t = src.permuted(&perm).expect("blocked layouts permute");
            check_cover(&t, &tshape, warps);
            assert_eq!(t.regs_per_thread(&tshape), src.regs_per_thread(&shape));
            let mut slices = vec![(src.clone(), t.clone(), shape.clone(), tshape.clone())];
            // A slice along the first dimension, transposed with the rest.
            if shape.len() == 3 && perm[0] == 0 {
                let sp: Vec<u32> = perm[1..].iter().map(|&p| p - 1).collect();
                let s = Layout::slice(0, src.clone());
                slices.push((
                    s.clone(),
                    s.permuted(&sp).expect("slices of blocked layouts permute"),
                    shape[1..].to_vec(),
                    tshape[1..].to_vec(),
                ));
            }
            for (from, to, fshape, tshape) in slices {
                let p: Vec<u32> = if fshape.len() == perm.len() {
                    perm.clone()
                } else {
                    perm[1..].iter().map(|&p| p - 1).collect()
                };
                for warp in 0..warps {
                    for lane in 0..WARP_SIZE {
                        for r in 0..from.regs_per_thread(&fshape) {
                            let c = from.coords(&fshape, lane, warp, r);
                            let want: Vec<u32> = p.iter().map(|&d| c[d as usize]).collect();
                            assert_eq!(
                                to.coords(&tshape, lane, warp, r),
                                want,
                                "{from} -> {to}, lane {lane} warp {warp} reg {r}"
                            );
                        }
                    }
                }
            }
        }
        let mma = Layout::Mma(Mma {
            version: MmaVersion::V3,
            warps_per_cta: [4, 1],
            instr_n: 64,
        });
        assert_eq!(mma.permuted(&[1, 0]), None);
        let b = Layout::Blocked(Blocked::default_for(&[8, 8], 1, 2));
        assert_eq!(b.permuted(&[0, 0]), None, "not a permutation");
        assert_eq!(b.permuted(&[0]), None, "wrong rank");
    }

    #[test]
    fn mma_fragments_follow_the_ptx_accumulator_layout() {
        let v3 = Layout::Mma(Mma {
            version: MmaVersion::V3,
            warps_per_cta: [4, 1],
            instr_n: 64,
        });
        let shape = [64, 64];
        // d[chunk*4 + i*2 + j] is row l/4 + 8i (+16 per warp), column
        // 8*chunk + 2*(l%4) + j: PTX ISA, "Register fragments" of wgmma.
        assert_eq!(v3.coords(&shape, 0, 0, 0), vec![0, 0]);
        assert_eq!(v3.coords(&shape, 0, 0, 1), vec![0, 1]);
        assert_eq!(v3.coords(&shape, 0, 0, 2), vec![8, 0]);
        assert_eq!(v3.coords(&shape, 0, 0, 4), vec![0, 8]);
        assert_eq!(v3.coords(&shape, 5, 0, 0), vec![1, 2]);
        assert_eq!(v3.coords(&shape, 5, 3, 7), vec![57, 11]);
        assert_eq!(v3.regs_per_thread(&shape), 32);
        assert_eq!(check_cover(&v3, &shape, 4), 1);
        assert!(v3.is_unique(&shape));
        for (version, warps, instr_n, shape, nw) in [
            (MmaVersion::V3, [8, 1], 256, [128, 256], 8),
            (MmaVersion::V3, [4, 2], 64, [64, 128], 8),
            (MmaVersion::V3, [4, 1], 128, [128, 128], 4),
            (MmaVersion::V2, [2, 2], 8, [32, 32], 4),
            (MmaVersion::V2, [4, 1], 8, [32, 16], 4),
        ] {
            let l = Layout::Mma(Mma {
                version,
                warps_per_cta: warps,
                instr_n,
            });
            check_cover(&l, &shape, nw);
            for dim in 0..2 {
                let sliced = Layout::slice(dim, l.clone());
                let mut s = shape.to_vec();
                s.remove(dim as usize);
                check_cover(&sliced, &s, nw);
                assert!(!sliced.is_unique(&s));
            }
        }
    }

    fn accumulator(warps: [u32; 2], instr_n: u32) -> Layout {
        Layout::Mma(Mma {
            version: MmaVersion::V3,
            warps_per_cta: warps,
            instr_n,
        })
    }

    /// Tutorial 09's EPILOGUE_SUBTILE: the 128x256 accumulator of two
    /// warpgroups, `reshape` to [128, 2, 128], `permute` (0, 2, 1),
    /// `split`. Every step is a rename, and each half is the accumulator
    /// of a 128x128 dot holding, in each register, the element of its
    /// column half that the whole accumulator held there.
    #[test]
    fn the_subtiled_epilogue_splits_the_accumulator_in_registers() {
        let acc = accumulator([8, 1], 256);
        let shape = [128, 256];
        let r3 = acc
            .reshape_rename(&shape, &[128, 2, 128])
            .expect("reshape renames");
        let p = r3
            .permuted(&[0, 2, 1])
            .expect("a spelled-out layout permutes");
        check_cover(&p, &[128, 128, 2], 8);
        let (half, below) = p.split_rename(&[128, 128, 2]).expect("split renames");
        assert_eq!(
            half,
            accumulator([8, 1], 128),
            "each half is a 128x128 accumulator"
        );
        assert_eq!(below, 64);
        for warp in 0..8 {
            for lane in 0..WARP_SIZE {
                for r in 0..64 {
                    for h in 0..2 {
                        let [m, n] = half.coords(&[128, 128], lane, warp, r)[..] else {
                            unreachable!()
                        };
                        // acc0 = acc[:, :128], acc1 = acc[:, 128:].
                        assert_eq!(
                            acc.coords(&shape, lane, warp, halves_register(below, h, r)),
                            vec![m, n + 128 * h],
                            "lane {lane} warp {warp} reg {r} half {h}"
                        );
                    }
                }
            }
        }
        // And back (tutorial 06's subtiled rescale): join, permute, reshape.
        let (joined, jbelow) = half.join_rename(&[128, 128]).expect("join renames");
        assert_eq!(jbelow, 64);
        let back = joined.permuted(&[0, 2, 1]).unwrap();
        assert_eq!(back.reshape_rename(&[128, 2, 128], &shape), Ok(acc.clone()));
        // One warpgroup, 4 warps: the same.
        let small = accumulator([4, 1], 64);
        let r3 = small.reshape_rename(&[64, 64], &[64, 2, 32]).unwrap();
        let (half, _) = r3
            .permuted(&[0, 2, 1])
            .unwrap()
            .split_rename(&[64, 32, 2])
            .unwrap();
        assert_eq!(half, accumulator([4, 1], 32));
    }

    /// Where an element would change threads, the rename is refused (and
    /// the backend goes through shared memory).
    #[test]
    fn renames_that_would_move_elements_across_threads_are_refused() {
        let acc = accumulator([8, 1], 256);
        // The two warpgroups' row halves moved last: each half of the split
        // is in the other warpgroup's registers.
        let rows = acc.reshape_rename(&[128, 256], &[2, 64, 256]).unwrap();
        let last = rows.permuted(&[1, 2, 0]).unwrap();
        let why = last.split_rename(&[64, 256, 2]).unwrap_err();
        assert!(why.contains("different threads"), "{why}");
        // A pair spread over two lanes.
        let lanes = Layout::Blocked(Blocked::default_for(&[64, 2], 4, 4));
        assert!(lanes.split_rename(&[64, 2]).is_err());
        // Replicated elements (a row vector of the accumulator).
        let rowvec = Layout::slice(1, acc.clone());
        let why = rowvec.reshape_rename(&[128], &[2, 64]).unwrap_err();
        assert!(why.contains("several threads"), "{why}");
        // The accumulator has no permuted MMA layout of its own ...
        assert_eq!(acc.permuted(&[1, 0]), None);
    }

    /// ... but its transpose is a rename of its registers, spelled out:
    /// the swap-AB decode's `tl.trans(acc)` of a 128x16 accumulator.
    #[test]
    fn a_transposed_accumulator_is_renamed() {
        let acc = accumulator([4, 1], 16);
        let t = acc.trans_rename(&[128, 16], &[1, 0]).expect("a rename");
        assert!(matches!(t, Layout::Linear(_)), "{t}");
        assert_eq!(t.regs_per_thread(&[16, 128]), 16);
        for (lane, warp, r) in [(0, 0, 0), (5, 1, 3), (31, 3, 15)] {
            let mut c = acc.coords(&[128, 16], lane, warp, r);
            c.reverse();
            assert_eq!(t.coords(&[16, 128], lane, warp, r), c);
        }
        check_cover(&t, &[16, 128], 4);
        // A blocked layout keeps its own permuted form.
        let b = Layout::Blocked(Blocked::default_for(&[64, 32], 4, 4));
        assert_eq!(b.trans_rename(&[64, 32], &[1, 0]).ok(), b.permuted(&[1, 0]));
    }
}
