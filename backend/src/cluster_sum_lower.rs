//! The `cluster.sum` part of `emit_cuda`: in a kernel whose CTA pairs
//! may split each tile's K loop (`cluster_split_k`), the rank-1 CTA of a
//! launch in clusters of 2 hands its partial sums to the rank-0 CTA
//! through distributed shared memory. Where the launch did not split
//! (the op's `split` operand is 1, the kernel runs without clusters) the
//! op is a copy.
//!
//! - **Buffers.** A launch that splits K gives each pair one tile
//!   (`num_programs = 2 * tiles`), so when a CTA's consumers leave the K
//!   loop, every slot of its rings was filled, read and released for the
//!   last time: the exchange reuses the largest ring's slots. Each
//!   `cluster.sum` op has its part of them, its partition's registers of
//!   the tile (`R` a thread, `P` threads, f32; register `r` of partition
//!   thread `t` at word `r * P + t`, a warp's stores consecutive words),
//!   and two mbarriers of its own, `full` (rank 0 waits on its own) and
//!   `go` (rank 1 waits on its own), at the same offsets in both CTAs,
//!   after the TMA stores' staging buffer.
//! - **Rank 0.** Every thread arrives on rank 1's `go` with
//!   `.release.cluster` (its K loop is done, its drained WGMMAs read no
//!   slot any more), waits on its `full` with `.acquire.cluster`, and adds
//!   the buffer's words to its registers (own + peer's, the order the
//!   simulator uses).
//! - **Rank 1.** Every thread waits on its `go` with `.acquire.cluster`,
//!   stores its registers into rank 0's slots (`mapa` +
//!   `st.shared::cluster`) and arrives on rank 0's `full` with
//!   `.release.cluster`, which orders its stores before the arrival. Its
//!   result is its own partial (unused: the pass puts the epilogue under
//!   `if rank == 0`). Each barrier completes one phase in the kernel's
//!   life (parity 0).
//! - **Start and end.** Thread 0 initializes the barriers (`P` arrivals
//!   each) before the `ws` op's partitions start, and in a launch of
//!   clusters (`%cluster_nctarank` > 1) a cluster barrier follows, so
//!   that no arrival reaches a barrier the peer has not initialized; such
//!   a launch also ends with the pair's cluster barrier, so that no CTA
//!   exits while its peer may still write its buffer or arrive on its
//!   barriers.

use std::fmt::Write as _;

use tawa_ir::{Op, OpKind};

use super::{unsupported, Emitter, Res};
use crate::layout::WARP_SIZE;

/// One `cluster.sum` op's place in shared memory.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exchange {
    /// Which exchange of the kernel.
    pub index: usize,
    /// Byte offsets from `tw_smem_raw` of the buffer (in a ring's slots)
    /// and of the `full` barrier (`go` follows it).
    pub buffer: u32,
    pub barriers: u32,
    /// Registers a thread and threads of the partition.
    pub regs: u32,
    pub threads: u32,
}

/// PTX helpers of the exchange.
pub(super) const CLUSTER_SUM_PRELUDE: &str = r#"
static __device__ __forceinline__ unsigned tw_cluster_ctas() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
static __device__ __forceinline__ unsigned tw_peer_smem(unsigned local, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
static __device__ __forceinline__ void tw_st_cluster_f32(unsigned remote, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(remote), "f"(v) : "memory");
}
static __device__ __forceinline__ void tw_mbar_arrive_cluster(unsigned remote) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(remote) : "memory");
}
static __device__ __forceinline__ void tw_mbar_wait_cluster(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}
"#;

impl Emitter<'_> {
    /// Places every `cluster.sum` op's buffer in the largest ring's slots
    /// and its barriers from byte `at` on; returns the end of the last
    /// barrier.
    pub(super) fn plan_exchanges(&mut self, mut at: u32) -> Res<u32> {
        let f = self.func;
        let mut found = Vec::new();
        f.walk(&mut |op| {
            if let OpKind::WarpSpecialize { partitions } = &f.ops[op].kind {
                for (p, &region) in partitions.iter().zip(&f.ops[op].regions) {
                    f.walk_block(region, &mut |o| {
                        if matches!(f.ops[o].kind, OpKind::ClusterSum) {
                            found.push((o, p.num_warps * WARP_SIZE));
                        }
                    });
                }
            }
        });
        let (mut buffer, room) = self
            .rings
            .values()
            .map(|r| r.slots_range())
            // The largest, the first in memory among equals (the rings sit
            // in a map: its order must not pick).
            .max_by_key(|&(base, bytes)| (bytes, std::cmp::Reverse(base)))
            .unwrap_or((0, 0));
        let end = buffer + room;
        at = at.div_ceil(8) * 8;
        for (index, (op, threads)) in found.into_iter().enumerate() {
            let loc = f.ops[op].loc;
            let v = f.ops[op].operands[0];
            let layout = self.layouts.home(v).cloned().ok_or_else(|| {
                unsupported(loc, "internal: cluster.sum of a tile without a layout")
            })?;
            let regs = self.regs(v, &layout);
            buffer = buffer.div_ceil(16) * 16;
            if buffer + regs * threads * 4 > end {
                return Err(unsupported(
                    loc,
                    format!(
                        "internal: the partial sums of cluster.sum ({} bytes from {buffer}) do \
                         not fit the ring's {room} bytes of slots",
                        regs * threads * 4
                    ),
                ));
            }
            self.exchanges.insert(
                op,
                Exchange {
                    index,
                    buffer,
                    barriers: at,
                    regs,
                    threads,
                },
            );
            buffer += regs * threads * 4;
            at += 16;
        }
        Ok(at)
    }

    /// Before a `ws` op's partitions: the exchanges' barriers, and the
    /// pair's cluster barrier that orders their initialization before any
    /// arrival from the peer.
    pub(super) fn init_exchanges(&mut self) {
        if self.exchanges.is_empty() {
            return;
        }
        let mut list: Vec<Exchange> = self.exchanges.values().copied().collect();
        list.sort_by_key(|x| x.index);
        let mut init = String::from("if (threadIdx.x == 0) {\n");
        for x in &list {
            let _ = writeln!(
                init,
                "  tw_mbar_init(tw_smem_u32 + {}, {});\n  tw_mbar_init(tw_smem_u32 + {}, {});",
                x.barriers,
                x.threads,
                x.barriers + 8,
                x.threads
            );
        }
        init.push_str(
            "  asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n}\n__syncthreads();\nif (tw_cluster_ctas() > 1u) tw_cluster_sync();",
        );
        self.line("// cluster.sum: the pair's exchange barriers");
        self.line(init);
    }

    /// `cluster.sum` (module docs).
    pub(super) fn cluster_sum(&mut self, op: Op) -> Res<()> {
        let f = self.func;
        let data = &f.ops[op];
        let x = *self.exchanges.get(&op).ok_or_else(|| {
            unsupported(data.loc, "internal: cluster.sum without an exchange buffer")
        })?;
        match self.partition {
            Some(p) if p.threads == x.threads => {}
            _ => {
                return Err(unsupported(
                    data.loc,
                    "internal: cluster.sum outside the partition it was planned for",
                ))
            }
        }
        let v = data.operands[0];
        let r = data.results[0];
        let layout = self.layouts.home(r).cloned().ok_or_else(|| {
            unsupported(data.loc, "internal: cluster.sum result without a layout")
        })?;
        let own = self.tile(v, &layout)?;
        let split = self.scalar(data.operands[1])?;
        let name = self.name_for(r);
        let (regs, threads) = (x.regs, x.threads);
        let (buf, full, go) = (x.buffer, x.barriers, x.barriers + 8);
        self.line(format!(
            "float {name}[{regs}];\n\
             if ({split} == 1) {{\n\
             #pragma unroll\n\
             \x20 for (int r = 0; r < {regs}; ++r) {name}[r] = {own}[r];\n\
             }} else if (tw_cta_rank() == 1u) {{\n\
             \x20 tw_mbar_wait_cluster(tw_smem_u32 + {go}, 0u);\n\
             \x20 const unsigned tw_peer_buf = tw_peer_smem(tw_smem_u32 + {buf}, 0u);\n\
             #pragma unroll\n\
             \x20 for (int r = 0; r < {regs}; ++r) {{\n\
             \x20   tw_st_cluster_f32(tw_peer_buf + 4u * (unsigned)(r * {threads} + tid), {own}[r]);\n\
             \x20   {name}[r] = {own}[r];\n\
             \x20 }}\n\
             \x20 tw_mbar_arrive_cluster(tw_peer_smem(tw_smem_u32 + {full}, 0u));\n\
             }} else {{\n\
             \x20 tw_mbar_arrive_cluster(tw_peer_smem(tw_smem_u32 + {go}, 1u));\n\
             \x20 tw_mbar_wait_cluster(tw_smem_u32 + {full}, 0u);\n\
             \x20 const float* tw_buf = reinterpret_cast<const float*>(tw_smem_raw + {buf});\n\
             #pragma unroll\n\
             \x20 for (int r = 0; r < {regs}; ++r) {name}[r] = {own}[r] + tw_buf[r * {threads} + tid];\n\
             }}"
        ));
        self.vals.insert(r, super::CVal::Tile(name));
        Ok(())
    }
}
