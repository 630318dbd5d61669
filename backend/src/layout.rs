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
    /// `parent` has rank `rank + 1`; dimension `dim` of it is collapsed.
    Mma(Mma),
    Slice {
        dim: u32,
        parent: Box<Layout>,
    },
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
            Layout::Blocked(_) | Layout::Mma(_) => Vec::new(),
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
}
