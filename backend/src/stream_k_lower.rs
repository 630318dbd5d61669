//! The stream-K part of `emit_cuda`: `stream_k.put` and `stream_k.take`
//! of a kernel whose programs share the K loops of its last tiles
//! (`tawa_pipeliner::stream_k`), through a workspace in global memory
//! the launcher passes after every other parameter (`tw_sk_ws`:
//! [`STREAM_K_FLAG_BYTES`], then
//! [`crate::codegen::KernelSource::stream_k_workspace`] bytes a program,
//! zeroed once when allocated).
//!
//! - **Slots.** Program `p` (its linear index in the launch) owns the
//!   u32 flag `p` at the start of the workspace, at the same place
//!   whatever the launch's program count (so every flag is zero at a
//!   launch's start: each launch leaves the flags it raised lowered), and
//!   bytes `F + p * S .. F + (p + 1) * S` (`F` the flags' bytes, `S` the
//!   slot's). A put's sums lie one after the other, each as
//!   its partition's registers (`R` a thread, `P` threads, f32): register
//!   `r` of partition thread `t` at word `(r / 4 * P + t) * 4 + r % 4`,
//!   so that a warp's 16-byte stores are consecutive. A take reads the
//!   same place: both are in the consumer partition, with the layouts of
//!   the same sums.
//! - **Put.** Every thread stores its registers (`st.global.cg`: to L2,
//!   where the taker reads), the partition meets at its named barrier,
//!   and thread 0 raises the flag with a release fence at GPU scope, which
//!   orders the partition's stores (before the barrier) before the flag.
//! - **Take.** Thread 0 polls the flag with acquire loads at GPU scope
//!   until it is raised, lowers it again for the next launch (the slot is
//!   not written again in this one: a program puts once), and the
//!   partition meets at its barrier; then every thread adds the slot's
//!   words to its registers (`ld.global.cg`), own first.
//!
//! A program waits only for programs of higher x, whose puts wait for
//! nothing, and a persistent launch holds all its programs at once: no
//! wait can be for a program that is not running.

use super::{unsupported, Emitter, Res};
use crate::layout::WARP_SIZE;
use tawa_ir::{Op, OpKind, Value};

/// Bytes of the workspace's flags, before the slots: one u32 for each of
/// at most [`STREAM_K_MAX_PROGRAMS`] programs, at fixed places, so that
/// a launch of any program count finds every flag zero (a flag region
/// placed after the slots would move with the count onto a previous
/// launch's partial sums).
pub const STREAM_K_FLAG_BYTES: u32 = 4 * STREAM_K_MAX_PROGRAMS;

/// The most programs a stream-K launch may start (a persistent launch
/// starts at most the programs the GPU holds at once: 264 on an H100).
pub const STREAM_K_MAX_PROGRAMS: u32 = 16384;

/// The helpers of the workspace's flags and slots.
pub(super) fn stream_k_prelude() -> String {
    format!("\n#define TW_SK_FLAG_BYTES {STREAM_K_FLAG_BYTES}ull{STREAM_K_HELPERS}")
}

const STREAM_K_HELPERS: &str = r#"
static __device__ __forceinline__ unsigned tw_sk_program(unsigned x) {
  return x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
static __device__ __forceinline__ unsigned* tw_sk_flag(unsigned char* ws, unsigned program) {
  return reinterpret_cast<unsigned*>(ws) + program;
}
static __device__ __forceinline__ unsigned char* tw_sk_slot(unsigned char* ws, unsigned slot_bytes, unsigned program) {
  return ws + TW_SK_FLAG_BYTES + (unsigned long long)program * slot_bytes;
}
static __device__ __forceinline__ void tw_sk_raise(unsigned* flag) {
  asm volatile("fence.acq_rel.gpu;\n\tst.relaxed.gpu.global.u32 [%0], %1;" :: "l"(flag), "r"(1u) : "memory");
}
static __device__ __forceinline__ void tw_sk_wait_and_lower(unsigned* flag) {
  unsigned raised = 0;
  while (!raised) {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(raised) : "l"(flag) : "memory");
  }
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(flag), "r"(0u) : "memory");
}
"#;

/// One sum of a put or take in the slot.
struct SlotPart {
    /// The sum's C array.
    name: String,
    /// Its registers a thread.
    regs: u32,
    /// Its byte offset in the slot.
    at: u32,
}

impl Emitter<'_> {
    /// The sums of a put or take (`sums`) in the slot; the slot's bytes
    /// (128-byte rounded), which must be the same for every op of the
    /// kernel; the partition's threads.
    fn stream_k_slot(&mut self, op: Op, sums: &[Value]) -> Res<(Vec<SlotPart>, u32, u32)> {
        let loc = self.func.ops[op].loc;
        let threads = self.partition.map(|p| p.threads).ok_or_else(|| {
            unsupported(
                loc,
                "internal: a stream-K op outside a warp-specialized partition",
            )
        })?;
        if !threads.is_multiple_of(WARP_SIZE) {
            return Err(unsupported(loc, "internal: a partition of part of a warp"));
        }
        let mut parts = Vec::new();
        let mut at = 0u32;
        for &v in sums {
            let layout = self
                .layouts
                .home(v)
                .cloned()
                .ok_or_else(|| unsupported(loc, "internal: stream-K sums without a layout"))?;
            let regs = self.regs(v, &layout);
            let name = self.tile(v, &layout)?;
            parts.push(SlotPart { name, regs, at });
            at += (regs * threads * 4).div_ceil(16) * 16;
        }
        let bytes = at.div_ceil(128) * 128;
        match self.stream_k_slot_bytes {
            Some(b) if b != bytes => Err(unsupported(
                loc,
                format!("internal: stream-K ops of slots of {b} and {bytes} bytes"),
            )),
            _ => {
                self.stream_k_slot_bytes = Some(bytes);
                Ok((parts, bytes, threads))
            }
        }
    }

    /// `stream_k.put` (module docs).
    pub(super) fn stream_k_put(&mut self, op: Op) -> Res<()> {
        let sums = self.func.ops[op].operands.clone();
        let (parts, slot, threads) = self.stream_k_slot(op, &sums)?;
        self.line("{");
        self.line(format!(
            "  unsigned char* const tw_sk_mine = tw_sk_slot(tw_sk_ws, {slot}u, tw_sk_program(blockIdx.x));"
        ));
        for p in &parts {
            self.line(store_words(
                &p.name,
                p.regs,
                threads,
                &format!("tw_sk_mine + {}u", p.at),
            ));
        }
        self.partition_barrier();
        self.line(format!(
            "  if (tid == 0) tw_sk_raise(tw_sk_flag(tw_sk_ws, tw_sk_program(blockIdx.x)));"
        ));
        self.line("}");
        Ok(())
    }

    /// `stream_k.take` (module docs).
    pub(super) fn stream_k_take(&mut self, op: Op) -> Res<()> {
        let data = &self.func.ops[op];
        let sums = data.operands[1..].to_vec();
        let results = data.results.clone();
        let from = self.scalar(data.operands[0])?;
        let (parts, slot, threads) = self.stream_k_slot(op, &sums)?;
        let mut names = Vec::new();
        for (&r, p) in results.iter().zip(&parts) {
            let name = self.name_for(r);
            self.line(format!("float {name}[{}];", p.regs));
            names.push(name);
        }
        self.line("{");
        self.line(format!(
            "  const unsigned tw_sk_from = tw_sk_program((unsigned)({from}));\n\
             \x20 if (tid == 0) tw_sk_wait_and_lower(tw_sk_flag(tw_sk_ws, tw_sk_from));"
        ));
        self.partition_barrier();
        self.line(format!(
            "  const unsigned char* const tw_sk_theirs = tw_sk_slot(tw_sk_ws, {slot}u, tw_sk_from);"
        ));
        for (name, p) in names.iter().zip(&parts) {
            self.line(add_words(
                name,
                &p.name,
                p.regs,
                threads,
                &format!("tw_sk_theirs + {}u", p.at),
            ));
        }
        self.line("}");
        for (&r, name) in results.iter().zip(names) {
            self.vals.insert(r, super::CVal::Tile(name));
        }
        Ok(())
    }
}

/// Stores `regs` f32 registers of array `name` of each of `threads`
/// threads at `base` (module docs' order), 16 bytes at a time where they
/// come in fours.
fn store_words(name: &str, regs: u32, threads: u32, base: &str) -> String {
    if regs.is_multiple_of(4) {
        format!(
            "  #pragma unroll\n  for (int r = 0; r < {q}; ++r) {{\n    \
             __stcg(reinterpret_cast<float4*>({base}) + (r * {threads} + tid), \
             make_float4({name}[4 * r], {name}[4 * r + 1], {name}[4 * r + 2], {name}[4 * r + 3]));\n  }}",
            q = regs / 4
        )
    } else {
        format!(
            "  #pragma unroll\n  for (int r = 0; r < {regs}; ++r) \
             __stcg(reinterpret_cast<float*>({base}) + (r * {threads} + tid), {name}[r]);"
        )
    }
}

/// `name[r] = own[r] + word r at base`, for the words [`store_words`]
/// stored.
fn add_words(name: &str, own: &str, regs: u32, threads: u32, base: &str) -> String {
    if regs.is_multiple_of(4) {
        format!(
            "  #pragma unroll\n  for (int r = 0; r < {q}; ++r) {{\n    \
             const float4 w = __ldcg(reinterpret_cast<const float4*>({base}) + (r * {threads} + tid));\n    \
             {name}[4 * r] = {own}[4 * r] + w.x;\n    {name}[4 * r + 1] = {own}[4 * r + 1] + w.y;\n    \
             {name}[4 * r + 2] = {own}[4 * r + 2] + w.z;\n    {name}[4 * r + 3] = {own}[4 * r + 3] + w.w;\n  }}",
            q = regs / 4
        )
    } else {
        format!(
            "  #pragma unroll\n  for (int r = 0; r < {regs}; ++r) \
             {name}[r] = {own}[r] + __ldcg(reinterpret_cast<const float*>({base}) + (r * {threads} + tid));"
        )
    }
}

/// Whether `func` has stream-K ops (its kernel then takes `tw_sk_ws`).
pub(super) fn has_stream_k_ops(func: &tawa_ir::Function) -> bool {
    let mut found = false;
    func.walk(&mut |o| {
        found |= matches!(func.ops[o].kind, OpKind::StreamKPut | OpKind::StreamKTake);
    });
    found
}
