//! The TMA-store part of `emit_cuda`: a `desc_store` of a descriptor the
//! host builds (`tma_store` rewrote the tile stores it could, a kernel's
//! own `desc.store` is one already) is written back by the copy engine.
//!
//! - **Staging.** The stored tile goes from registers to a dedicated
//!   shared-memory buffer (after the aref rings, before the scratch area,
//!   1024-byte aligned) laid out as the tensor map's boxes: boxes of `w`
//!   bytes of a row (`w` = 128, or the whole row when narrower) side by
//!   side, each box's rows `w` bytes apart with the `w`-byte swizzle
//!   (`tw_swz`, the layout TMA loads write). No padding: the swizzle is
//!   what keeps the accumulator layout's writes off each other's banks.
//!   A tile of two boxes or more goes in bands of columns, whole boxes
//!   each, so that every warp of an accumulator layout (whose warps
//!   split the rows) writes in every band, through two band buffers in
//!   turn within the staged store's budget (`STAGING_BYTES`, the rest of
//!   shared memory goes to the rings): the copy engine reads one band
//!   while the warps write the next, even where the whole tile would fit
//!   one buffer. A tile whose one box (or band) only fits alone goes
//!   through one buffer.
//! - **Order.** Per band: the issuing thread (thread 0 of the partition,
//!   or of the CTA in a plain kernel) waits until its earlier stores have
//!   read the band's buffer (`cp.async.bulk.wait_group.read`: 1 pending,
//!   the other buffer's, after a store's first band; at the first, 0,
//!   unless every TMA store of the kernel has the shape of this one with
//!   an even number of bands, so that the last store's last band used the
//!   other buffer: a subtiled epilogue's second half then waits only for
//!   the first half's first band), a
//!   barrier, every thread writes its registers of the band and makes the
//!   writes visible to the async proxy (`fence.proxy.async.shared::cta`),
//!   a barrier, then the issuing thread issues the band's boxes
//!   (`cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`) and commits
//!   them as one bulk group. Nothing waits for the last band's writes to
//!   global memory: in a persistent kernel they drain while the next
//!   tile's mainloop runs; only the next store waits, and only for the
//!   reads of the buffer. The partition (or kernel) ends with
//!   `cp.async.bulk.wait_group.read 0` so that no store outlives its
//!   CTA's shared memory; the writes to global memory need no wait (they
//!   complete with the grid, as CUTLASS's epilogues rely on), and a CTA
//!   that waited for them would add a store's whole latency to the end
//!   of its last tile (a decode GEMM's one tile a CTA, 48 us in all).
//! - **Bounds.** The tensor map's extents are the descriptor's shape: TMA
//!   drops the elements of a box outside them, which is what the masked
//!   store (or the descriptor's `store`) dropped.
//!
//! A `desc_store` the backend cannot write this way (another partition
//! than the last, a descriptor of another rank, a shape [`store_shape`]
//! refuses, `--no-tma-store`) stays the element-wise store of
//! `Emitter::desc_store`.

use tawa_ir::axis_info::AxisInfoMap;
use tawa_ir::{Function, Op, OpKind, ScalarType, Value};

use super::{unsupported, Emitter, Res, STAGING_BYTES};

/// Most rows of a TMA box.
const MAX_BOX_ROWS: u32 = 256;

/// How a 2-D tile is written back by TMA stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaStoreShape {
    /// The tile's rows: every box's.
    pub rows: u32,
    /// Elements of a row per box, `box_bytes` bytes.
    pub box_cols: u32,
    /// Bytes of a box row, the span of its swizzle (16: none).
    pub box_bytes: u32,
    /// Boxes side by side in a band of columns.
    pub boxes_per_band: u32,
    /// Bands of columns the tile is staged and stored in, one after the
    /// other.
    pub bands: u32,
    /// Band buffers used in turn (1 or 2).
    pub buffers: u32,
    /// Shared memory the buffers take.
    pub staging_bytes: u32,
}

/// How a tile of `shape` of `elem` is stored by TMA, or why it cannot
/// be: rows of 16, 32, 64 or a multiple of 128 bytes (one swizzle span
/// per box), at most 256 rows (a box's) in whole swizzle atoms of 8, and
/// a band of at least one box within `STAGING_BYTES`.
pub fn store_shape(shape: &[u32], elem: ScalarType) -> Result<TmaStoreShape, String> {
    let &[rows, cols] = shape else {
        return Err(format!(
            "a TMA store writes 2-D tiles; this one has {} dimensions",
            shape.len()
        ));
    };
    let eb = elem.byte_size();
    let row_bytes = cols * eb;
    let box_bytes = match row_bytes {
        16 | 32 | 64 => row_bytes,
        b if b % 128 == 0 => 128,
        b => {
            return Err(format!(
                "a tile row is {b} bytes; TMA stores rows of 16, 32, 64 or a multiple of 128 bytes"
            ))
        }
    };
    if rows % 8 != 0 || rows > MAX_BOX_ROWS {
        return Err(format!(
            "the tile has {rows} rows; TMA stores here take a multiple of 8 rows up to {MAX_BOX_ROWS}"
        ));
    }
    let boxes = row_bytes / box_bytes;
    let box_size = rows * box_bytes;
    // The most boxes a band of `buffers` buffers holds, dividing the
    // tile's boxes into at least `buffers` bands.
    let per_band = |buffers: u32| {
        (1..=boxes / buffers).rev().find(|k| {
            boxes % k == 0 && boxes / k >= buffers && buffers * k * box_size <= STAGING_BYTES
        })
    };
    // Two buffers wherever the tile has two boxes or more, even where the
    // whole tile would fit one: the warps then write a band while the
    // copy engine reads the last, and a store following another (a
    // subtiled epilogue's halves) waits only for the reads of its first
    // band's buffer, not of the whole last tile (on the H100, tutorial
    // 09's subtiled 128x256 epilogue stored its two 128x128 halves in
    // turn through one buffer, 2% behind the unsplit tile).
    let (buffers, k) = if let Some(k) = per_band(2) {
        (2, k)
    } else if let Some(k) = per_band(1) {
        (1, k)
    } else {
        return Err(format!(
            "a box of the tile's {rows} rows takes {box_size} bytes, more than the \
             {STAGING_BYTES} bytes of staging"
        ));
    };
    Ok(TmaStoreShape {
        rows,
        box_cols: box_bytes / eb,
        box_bytes,
        boxes_per_band: k,
        bands: boxes / k,
        buffers,
        staging_bytes: buffers * k * box_size,
    })
}

impl TmaStoreShape {
    /// Bytes of one band's buffer.
    pub fn band_bytes(&self) -> u32 {
        self.boxes_per_band * self.rows * self.box_bytes
    }

    /// Columns of one band.
    pub fn band_cols(&self) -> u32 {
        self.boxes_per_band * self.box_cols
    }

    /// For `--explain`: `boxes [128, 64] x1 per band of 64 columns (4
    /// bands, 2 buffers), swizzle 128B, staged in 32768 bytes ...`.
    pub fn describe(&self) -> String {
        let swizzle = if self.box_bytes >= 32 {
            format!("swizzle {}B", self.box_bytes)
        } else {
            "no swizzle".to_string()
        };
        let per = if self.bands == 1 {
            "for the tile".to_string()
        } else {
            format!(
                "per band of {} columns ({} bands, {} buffer{})",
                self.band_cols(),
                self.bands,
                self.buffers,
                if self.buffers == 1 { "" } else { "s" }
            )
        };
        format!(
            "boxes [{}, {}] x{} {per}, {swizzle}, staged in {} bytes of shared memory",
            self.rows, self.box_cols, self.boxes_per_band, self.staging_bytes
        )
    }
}

/// How `desc_store` `op` of `func` is written back by TMA stores, or why
/// it is not: a 2-D tile ([`store_shape`]) through a rank-2 descriptor
/// the host builds whose tensor map `cuTensorMapEncodeTiled` takes — base
/// 16-byte aligned, innermost stride 1, the other 16-byte multiples, by
/// the divisibility facts of `axis` (a descriptor `tma_store` wrote from
/// a store has them by construction; a kernel's own `desc.store` may
/// not) — and nothing the program runs after it reads the tensor it
/// writes (`Function::read_after`, as in `tma_store`).
pub fn store_decision(
    func: &Function,
    axis: &AxisInfoMap,
    op: Op,
) -> Result<TmaStoreShape, String> {
    let data = &func.ops[op];
    if !matches!(data.kind, OpKind::DescStore) {
        return Err("internal: not a desc_store".into());
    }
    let (desc, val) = (data.operands[0], data.operands[1]);
    let elem = func
        .ty(val)
        .scalar_type()
        .ok_or("internal: a store of no element type")?;
    let make = func
        .def_op(desc)
        .filter(|_| tawa_ir::host_expr::host_descriptor(func, desc))
        .ok_or("its descriptor is made from values the host does not have at launch")?;
    let written = func.pointer_root(desc).unwrap_or(desc);
    if let Some(at) = func.read_after(op, written) {
        return Err(format!(
            "the program reads the tensor after it (at {}:{}), maybe what it writes: a TMA \
             store completes after the program has moved on",
            at.line, at.col
        ));
    }
    let ops = &func.ops[make].operands;
    let rank = (ops.len() - 1) / 2;
    if rank != 2 {
        return Err(format!(
            "its descriptor has {rank} dimensions; TMA stores here write through 2-D ones"
        ));
    }
    let divisibility = |v: Value| u64::from(axis.get(v).divisibility.first().copied().unwrap_or(1));
    if divisibility(ops[0]) < 16 {
        return Err("the base pointer is not known to be 16-byte aligned".into());
    }
    let inner_is_one = constant_int(func, ops[2 * rank]) == Some(1)
        || tawa_ir::host_expr::from_host_descriptor(func, make);
    if !inner_is_one {
        return Err("the innermost stride is not known to be 1".into());
    }
    let eb = u64::from(elem.byte_size());
    if let Some(&s) = ops[1 + rank..2 * rank]
        .iter()
        .find(|&&s| divisibility(s).saturating_mul(eb) % 16 != 0)
    {
        // A stride is often a widening cast of the argument: name that.
        let named = match func.def_op(s).map(|d| &func.ops[d]) {
            Some(d) if matches!(d.kind, OpKind::Cast { .. }) => d.operands[0],
            _ => s,
        };
        let names = tawa_ir::printer::value_names(func);
        let name = names
            .get(&named)
            .cloned()
            .unwrap_or_else(|| named.to_string());
        return Err(format!(
            "the stride `%{name}` is not known to be a multiple of 16 bytes (a `:16` hint in \
             the signature says it is)"
        ));
    }
    store_shape(func.ty(val).shape(), elem)
}

/// The integer constant `v` is, through casts.
pub(super) fn constant_int(func: &Function, v: Value) -> Option<i64> {
    let data = &func.ops[func.def_op(v)?];
    match data.kind {
        OpKind::Constant(tawa_ir::ConstValue::Int(c)) => Some(c),
        OpKind::Cast { .. } => constant_int(func, data.operands[0]),
        _ => None,
    }
}

/// The `desc_store` ops of `func` the backend writes back with TMA when
/// TMA stores are on, with their shapes ([`store_decision`]).
pub(super) fn tma_stores(func: &Function, axis: &AxisInfoMap) -> Vec<(Op, TmaStoreShape)> {
    let mut out = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::DescStore) {
            if let Ok(shape) = store_decision(func, axis, op) {
                out.push((op, shape));
            }
        }
    });
    out
}

impl Emitter<'_> {
    /// Whether `desc_store` `op` is written back with TMA here: it has a
    /// staging buffer and the code being emitted is a plain kernel or the
    /// partition that owns shared memory beyond its rings.
    pub(super) fn tma_store_here(&self, op: Op) -> Option<TmaStoreShape> {
        let (_, shape) = self.tma_store_ops.iter().find(|(o, _)| *o == op)?;
        self.tma_store_staging?;
        self.partition
            .is_none_or(|p| p.owns_scratch)
            .then_some(*shape)
    }

    /// `desc_store` `op` as TMA stores (module docs).
    pub(super) fn tma_store(&mut self, op: Op, shape: TmaStoreShape) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let (desc, val) = (data.operands[0], data.operands[1]);
        let staging = self.tma_store_staging.ok_or_else(|| {
            unsupported(data.loc, "internal: a TMA store without a staging buffer")
        })? + self.partition.map_or(0, |p| p.scratch_slot)
            * self.tma_store_staging_stride;
        let tile = self.ty(val).shape().to_vec();
        let rows = shape.rows;
        let eb = self.scalar_of(val).byte_size();
        let tmap = self.tensor_map(
            desc,
            shape.box_bytes,
            Some(rows),
            super::aref_lower::MapUse::Store,
            data.loc,
        )?;
        let row0 = self.scalar(data.operands[2])?;
        let col0 = self.scalar(data.operands[3])?;
        let layout = self.store_layout(val);
        let src = self.tile(val, &layout)?;
        let regs = layout.regs_per_thread(&tile);
        let vf = super::vector_run(&layout, &tile, eb);
        let c = super::elem_cty(self.elem(val));
        let wt = match vf * eb {
            1 => "unsigned char",
            b => super::vec_type(b),
        };
        let row = Self::coord_c(&layout, &tile, 0, "r");
        let col = Self::coord_c(&layout, &tile, 1, "r");
        let (w, bc, bb) = (shape.box_bytes, shape.band_cols(), shape.band_bytes());
        self.line(format!(
            "// TMA store: {} (staging at byte {staging})",
            shape.describe()
        ));
        let banded = shape.bands > 1;
        if banded {
            // Unrolled: with the band a constant, which registers fall in
            // it is known at compile time (a thread's columns differ from
            // the layout's constants by less than a band).
            self.line(format!(
                "#pragma unroll\nfor (int band = 0; band < {}; band += {bc}) {{",
                tile[1]
            ));
        } else {
            self.line("{");
        }
        self.indent += 1;
        if !banded {
            self.line("const int band = 0;");
        }
        let buf = if shape.buffers == 2 {
            format!("({staging}u + ((unsigned)(band / {bc}) & 1u) * {bb}u)")
        } else {
            format!("{staging}u")
        };
        self.line(format!("const unsigned buf = {buf};"));
        // The buffer is free once the issuing thread's earlier stores
        // have read it: all but the last (the other buffer's) after a
        // store's first band; at the first, all of them, unless every
        // TMA store of the kernel is of this shape with an even number
        // of bands, so that each store's last band used the other buffer.
        let wait = |n: u32| {
            format!("asm volatile(\"cp.async.bulk.wait_group.read {n};\" ::: \"memory\");")
        };
        let paired = shape.buffers == 2
            && shape.bands % 2 == 0
            && self.tma_store_ops.iter().all(|(_, s)| *s == shape);
        if paired {
            self.line(format!("if (tid == 0) {}", wait(1)));
        } else if shape.buffers == 2 {
            self.line(format!(
                "if (tid == 0) {{\n  if (band == 0) {}\n  else {}\n}}",
                wait(0),
                wait(1)
            ));
        } else {
            self.line(format!("if (tid == 0) {}", wait(0)));
        }
        self.barrier();
        let in_band = if banded {
            format!("if ((unsigned)(({col}) - band) < {bc}u) ")
        } else {
            String::new()
        };
        self.line(format!(
            "#pragma unroll\nfor (int r = 0; r < {regs}; r += {vf}) {{\n  union {{ {wt} u; {c} e[{vf}]; }} t;\n  #pragma unroll\n  for (int e = 0; e < {vf}; ++e) t.e[e] = {src}[r + e];\n  {in_band}*({wt}*)(tw_smem_raw + buf + tw_swz({row}, (({col}) - band) * {eb}, {rows}, {w})) = t.u;\n}}"
        ));
        self.line("asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");");
        self.barrier();
        self.line("if (tid == 0) {");
        self.indent += 1;
        for b in 0..shape.boxes_per_band {
            self.line(format!(
                "tw_tma_store_2d(&{tmap}, tw_smem_u32 + buf + {}, (int)({col0}) + band + {}, (int)({row0}));",
                b * rows * w,
                b * shape.box_cols
            ));
        }
        self.line("asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");");
        self.indent -= 1;
        self.line("}");
        // Thread 0 branched off; `.aligned` instructions may follow.
        self.line("__syncwarp();");
        self.indent -= 1;
        self.line("}");
        self.tma_stores_issued = true;
        Ok(())
    }

    /// At the end of a partition or kernel that issued TMA stores: the
    /// issuing thread waits until they have read their shared memory.
    pub(super) fn drain_tma_stores(&mut self) {
        if std::mem::take(&mut self.tma_stores_issued) {
            self.line(
                "if (tid == 0) asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");",
            );
        }
    }
}

/// The TMA store helper (a kernel with TMA stores gets it, and the
/// tensor-map type when no aref ring brought it).
pub(super) const TMA_STORE_PRELUDE: &str = r#"
static __device__ __forceinline__ void tw_tma_store_2d(const tw_tmap* map, unsigned src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"((unsigned long long)map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn bands(rows: u32, cols: u32, elem: ScalarType) -> (u32, u32, u32, u32) {
        let s = store_shape(&[rows, cols], elem).unwrap();
        (s.boxes_per_band, s.bands, s.buffers, s.staging_bytes)
    }

    /// Two buffers wherever a tile has two boxes or more, whole or not;
    /// one where a single box (or band) is all there is.
    #[test]
    fn band_buffers() {
        // 128x256 f16: four 16 KiB boxes, a box a band.
        assert_eq!(bands(128, 256, ScalarType::F16), (1, 4, 2, 32768));
        // 128x128 f16 fits the budget whole: still two bands in turn.
        assert_eq!(bands(128, 128, ScalarType::F16), (1, 2, 2, 32768));
        // 64x128 f16: two 8 KiB boxes.
        assert_eq!(bands(64, 128, ScalarType::F16), (1, 2, 2, 16384));
        // 64x256 f16: four 8 KiB boxes, two a band.
        assert_eq!(bands(64, 256, ScalarType::F16), (2, 2, 2, 32768));
        // Three boxes: three bands, two buffers (less than the whole tile).
        assert_eq!(bands(128, 192, ScalarType::F16), (1, 3, 2, 32768));
        // One box: one buffer.
        assert_eq!(bands(128, 64, ScalarType::F16), (1, 1, 1, 16384));
        assert_eq!(bands(64, 32, ScalarType::F32), (1, 1, 1, 8192));
    }
}
