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
//! Later layouts (the WGMMA accumulator, dot operands, swizzled shared
//! memory) join this enum with the same two questions answered: how many
//! registers per thread, and the coordinates of each.

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
        let rank = shape.len();
        let order: Vec<u32> = (0..rank as u32).rev().collect();
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

    fn regs(&self, shape: &[u32]) -> u32 {
        let reps: u32 = self.reps(shape).iter().product();
        reps * self.size_per_thread.iter().product::<u32>()
    }

    /// Splits a register index into per-dimension (element in box, rep).
    fn split_reg(&self, shape: &[u32], reg: u32) -> (Vec<u32>, Vec<u32>) {
        self.decode_reg(shape, reg, None)
    }

    /// Decodes a register index: box elements along `order` first, then
    /// repetitions. With `skip`, that dimension has no box digit (it reads
    /// 0): the numbering of a slice along it.
    fn decode_reg(&self, shape: &[u32], mut reg: u32, skip: Option<u32>) -> (Vec<u32>, Vec<u32>) {
        let rank = self.rank();
        let reps = self.reps(shape);
        let mut e = vec![0; rank];
        let mut r = vec![0; rank];
        for &d in self.order.iter().filter(|&&d| Some(d) != skip) {
            let d = d as usize;
            e[d] = reg % self.size_per_thread[d];
            reg /= self.size_per_thread[d];
        }
        for &d in &self.order {
            let d = d as usize;
            r[d] = reg % reps[d];
            reg /= reps[d];
        }
        (e, r)
    }

    /// The inverse of [`Blocked::split_reg`].
    fn encode_reg(&self, shape: &[u32], e: &[u32], r: &[u32]) -> u32 {
        let reps = self.reps(shape);
        let mut out = 0;
        let mut scale = 1;
        for &d in &self.order {
            let d = d as usize;
            out += e[d] * scale;
            scale *= self.size_per_thread[d];
        }
        for &d in &self.order {
            let d = d as usize;
            out += r[d] * scale;
            scale *= reps[d];
        }
        out
    }

    /// Splits a lane or warp id into per-dimension indices along `order`.
    fn split_id(&self, mut id: u32, per_dim: &[u32]) -> Vec<u32> {
        let mut out = vec![0; self.rank()];
        for &d in &self.order {
            let d = d as usize;
            out[d] = id % per_dim[d];
            id /= per_dim[d];
        }
        out
    }

    fn coords(&self, shape: &[u32], lane: u32, warp: u32, reg: u32) -> Vec<u32> {
        let (e, r) = self.split_reg(shape, reg);
        let l = self.split_id(lane, &self.threads_per_warp);
        let w = self.split_id(warp, &self.warps_per_cta);
        let tile = self.cta_tile();
        (0..self.rank())
            .map(|d| {
                let spt = self.size_per_thread[d];
                let c = r[d] * tile[d] + w[d] * spt * self.threads_per_warp[d] + l[d] * spt + e[d];
                c % shape[d]
            })
            .collect()
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

    fn reg_offset(&self, shape: &[u32], reg: u32) -> Vec<u32> {
        let (e, r) = self.split_reg(shape, reg);
        let tile = self.cta_tile();
        (0..self.rank()).map(|d| r[d] * tile[d] + e[d]).collect()
    }
}

impl Layout {
    pub fn blocked(b: Blocked) -> Layout {
        Layout::Blocked(b)
    }

    pub fn rank(&self) -> usize {
        match self {
            Layout::Blocked(b) => b.rank(),
            Layout::Slice { parent, .. } => parent.rank() - 1,
        }
    }

    /// The parent's shape for a slice of shape `shape`: a 1 inserted at
    /// `dim`.
    fn parent_shape(shape: &[u32], dim: u32) -> Vec<u32> {
        let mut s = shape.to_vec();
        s.insert(dim as usize, 1);
        s
    }

    /// Registers each thread holds for a tile of `shape`.
    pub fn regs_per_thread(&self, shape: &[u32]) -> u32 {
        match self {
            Layout::Blocked(b) => b.regs(shape),
            Layout::Slice { dim, parent } => {
                let ps = Self::parent_shape(shape, *dim);
                parent.regs_per_thread(&ps) / parent.collapsed_factor(*dim, &ps)
            }
        }
    }

    /// How many registers of the parent map to one register of the slice
    /// along `dim` (its size-1 extent repeated by `size_per_thread`).
    fn collapsed_factor(&self, dim: u32, shape: &[u32]) -> u32 {
        match self {
            Layout::Blocked(b) => {
                debug_assert_eq!(shape[dim as usize], 1);
                b.size_per_thread[dim as usize]
            }
            Layout::Slice { .. } => {
                // Registers of a nested slice are already unique.
                let _ = shape;
                1
            }
        }
    }

    /// The parent register of slice register `reg`: the first along `dim`.
    fn slice_parent_reg(parent: &Layout, dim: u32, parent_shape: &[u32], reg: u32) -> u32 {
        match parent {
            Layout::Blocked(b) => {
                // The slice numbers registers without a box digit for
                // `dim`; the parent's register has 0 there.
                let (e, r) = b.decode_reg(parent_shape, reg, Some(dim));
                b.encode_reg(parent_shape, &e, &r)
            }
            Layout::Slice { .. } => reg,
        }
    }

    /// Coordinates of register `reg` of thread (`lane`, `warp`) in a tile
    /// of `shape`.
    pub fn coords(&self, shape: &[u32], lane: u32, warp: u32, reg: u32) -> Vec<u32> {
        match self {
            Layout::Blocked(b) => b.coords(shape, lane, warp, reg),
            Layout::Slice { dim, parent } => {
                let ps = Self::parent_shape(shape, *dim);
                let preg = Self::slice_parent_reg(parent, *dim, &ps, reg);
                let mut c = parent.coords(&ps, lane, warp, preg);
                c.remove(*dim as usize);
                c
            }
        }
    }

    /// Per dimension, the terms whose sum is a thread's base coordinate.
    /// Coordinates are `(base + reg_offset(reg)) % shape` per dimension
    /// (see [`Layout::coords`]), so the emitter computes the base once per
    /// thread and folds the register offsets into constants.
    pub fn thread_terms(&self) -> Vec<Vec<Term>> {
        match self {
            Layout::Blocked(b) => b.thread_terms(),
            Layout::Slice { dim, parent } => {
                let mut t = parent.thread_terms();
                t.remove(*dim as usize);
                t
            }
        }
    }

    /// The compile-time part of register `reg`'s coordinates.
    pub fn reg_offset(&self, shape: &[u32], reg: u32) -> Vec<u32> {
        match self {
            Layout::Blocked(b) => b.reg_offset(shape, reg),
            Layout::Slice { dim, parent } => {
                let ps = Self::parent_shape(shape, *dim);
                let preg = Self::slice_parent_reg(parent, *dim, &ps, reg);
                let mut o = parent.reg_offset(&ps, preg);
                o.remove(*dim as usize);
                o
            }
        }
    }

    /// Threads of the program this layout spreads over.
    pub fn num_warps(&self) -> u32 {
        match self {
            Layout::Blocked(b) => b.warps_per_cta.iter().product(),
            Layout::Slice { parent, .. } => parent.num_warps(),
        }
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
}
