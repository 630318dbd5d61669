//! The pipeliner: the stage between the partitioner and the backend
//! (`kernel → partition → pipeline → lower`). It takes warp-specialized IR
//! (a `ws` op whose partitions are joined by arefs) and decides how deep
//! the pipelines run:
//!
//! - [`aref_depth`]: how many slots each aref ring gets — Triton's
//!   `num_stages` (how many tiles are in flight), capped by what fits in
//!   shared memory, or `--aref-depth` when the user says so.
//! - [`mma_pipeline`]: MMA pipelining. A consumer loop whose `dot`s read
//!   the slot it got keeps `P` tensor-core groups in flight: the `dot`s
//!   become async, the iteration waits with `dot_wait {pending = P}` and
//!   releases the slot of iteration `i - P`, not its own; the loop drains
//!   (waits for every group, releases the last slots) after its last
//!   iteration.
//!
//! Each pass rewrites the IR; the verifier accepts every result (rule 12
//! of `tawa_ir::verifier` is the in-flight discipline), and the aref
//! simulator checks the schedules on the CPU: bytes equal to the
//! interpreter's on the plain kernel, no deadlock, and no slot released
//! while a group reading it is in flight.
//!
//! - [`slot_merge`]: a GEMM ring's slots hold several K steps (1/N of
//!   the slots, the same bytes), so that the producer and the consumers
//!   hand a slot over N times less often (`--slot-merge N`; by default 2
//!   for a ring read by two consumer warpgroups).
//!
//! - [`slot_split`]: a GEMM ring's slots hold parts of a K step (N times
//!   the slots, the same bytes), so that a group kept in flight holds a
//!   part of a step (`--slot-split N`, off by default: measured no
//!   faster on the H100).
//!
//! - [`coarse_pipeline`]: FlashAttention-3's intra-warpgroup overlap. A
//!   consumer loop whose first `dot` feeds, through a chain of
//!   elementwise ops and reductions, a second `dot` accumulating across
//!   iterations issues the first `dot` of iteration `j + 1` and the second
//!   of iteration `j` as async groups and computes the chain of `j + 1`
//!   while the second runs (`--no-coarse-pipeline` turns it off).
//!
//! - [`pingpong`]: FlashAttention-3's warpgroup scheduling. In a consumer
//!   partition of two warpgroups, a loop that computes on tiles beside
//!   its async `dot`s has the warpgroups take turns issuing them
//!   (`turn.take`/`turn.pass`, named barriers on the GPU), so that one's
//!   chain overlaps the other's tensor-core groups (`--no-pingpong` turns
//!   it off).
//!
//! - [`tile_pingpong`]: CUTLASS's ping-pong consumers for a persistent
//!   GEMM: two consumer warpgroups on alternate tiles, one ring dealt
//!   between them, taking turns over the mainloop so that one's epilogue
//!   overlaps the other's (`--tile-pingpong`; the driver runs it on the
//!   partitioner's split, before shared memory is measured, since each
//!   consumer then has its own scratch).
//!
//! - [`occupancy`]: how many blocks of the kernel an SM holds: two where
//!   the consumer is one warpgroup and a second block fits beside the
//!   first in shared memory and registers (`--occupancy N` asks).
//!
//! - [`cluster_split_k`]: CTA pairs that split each tile's K loop where
//!   the grid fills at most half the GPU, rank 1's partial sums reaching
//!   rank 0 through distributed shared memory (`--cluster-split-k`, off
//!   by default; the launcher decides per launch).
//!
//! - [`stream_k`]: the tiles past a persistent kernel's last whole wave
//!   cut into equal runs of K steps, one a program, their partial sums
//!   meeting through a workspace in global memory (`--stream-k`).
//!
//! - [`tma_multicast`]: a persistent kernel's CTAs in clusters of 2,
//!   each copying half of a box both tiles read and multicasting it into
//!   both CTAs' shared memory (`--tma-multicast`, off by default).
//!
//! - [`epilogue_overlap`]: a persistent GEMM's tile stored after the
//!   next tile's first WGMMA group has issued (the K loop's first
//!   iteration peeled), so that the tensor core runs through the
//!   epilogue (`--epilogue-overlap`, off by default).
//!
//! - [`mixed_copies`]: one tile of a GEMM ring's slot copied by the
//!   producer's threads (`cp.async`) beside TMA's copies of the others,
//!   both of the SM's copy paths feeding the ring: by default in the
//!   shape measured faster (`mixed_copies::by_default`), everywhere with
//!   `--mixed-copies`, nowhere with `--no-mixed-copies`.
//!
//! - [`software_pipeline`]: `num_stages` without warp specialization
//!   (`--no-ws`): the producer's copies fused back into the consumer's
//!   loop, running ahead of it, in one partition.
//!
//! [`pipeline`] runs the passes in order and returns a [`Schedule`]: what
//! was decided and why, one line each, for `--explain`;
//! [`pipeline_without_ws`] does the same for a kernel that is not to be
//! warp-specialized.

pub mod aref_depth;
pub mod cluster_split_k;
pub mod coarse_pipeline;
pub mod dep_graph;
pub mod epilogue_overlap;
pub mod mixed_copies;
pub mod mma_pipeline;
pub mod occupancy;
pub mod own_walk;
pub mod persistent;
pub mod pingpong;
pub mod slot_merge;
pub mod slot_split;
pub mod software_pipeline;
pub mod stream_k;
pub mod tile_pingpong;
pub mod tma_multicast;

use tawa_ir::{Function, OpKind};

pub use aref_depth::SmemModel;

/// What the user asked of the pipeliner (CLI flags and per-kernel config).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineOptions {
    /// Split loops into producer and consumer partitions (the default);
    /// `false` (`--no-ws`) software-pipelines them in one partition with
    /// the same ring depth and MMA depth options.
    pub warp_specialize: bool,
    /// Slots of every aref ring (`--aref-depth`); `None` derives the depth
    /// from the kernel's `num_stages` and the shared-memory budget.
    pub aref_depth: Option<u32>,
    /// WGMMA groups a consumer loop keeps in flight (`--mma-depth`); 0
    /// waits for each iteration's group before releasing its slot. `None`
    /// (the default) decides per loop ([`mma_pipeline::default_depth`]):
    /// 1 where the loop's partition is one warpgroup, 0 where two split
    /// each tile. On the H100, a 4-warp 128x128x64 GEMM at 8192^3 ran 17%
    /// faster with 1 group in flight (nothing else feeds the tensor core
    /// while a lone warpgroup waits for its group); with two cooperative
    /// warpgroups one's group covers the other's wait, and 1 in flight
    /// measured level or slower in five sessions (`bench/RESULTS.md`).
    pub mma_depth: Option<u32>,
    /// Make one-program-per-tile kernels persistent ([`persistent`]) where
    /// the kernel allows it. On by default (`--no-persistent` turns it
    /// off): on the H100 the 128x256x64 GEMM at M = N = 8192, K = 1024 runs
    /// 4-5% faster (the producer loads the next tile's operands during the
    /// epilogue, one prologue per SM), and level at K = 8192
    /// (`bench/RESULTS.md`).
    pub persistent: bool,
    /// Overlap the chain between two dependent `dot`s of a consumer loop
    /// with the tensor core ([`coarse_pipeline`]). On by default;
    /// `--no-coarse-pipeline` turns it off (the ablation baseline).
    pub coarse_pipeline: bool,
    /// Let the warpgroups of a consumer partition take turns issuing
    /// their tensor-core groups where the loop computes beside them
    /// ([`pingpong`]). On by default; `--no-pingpong` turns it off.
    pub pingpong: bool,
    /// Give a persistent GEMM two consumer warpgroups on alternate tiles
    /// that take turns over the mainloop ([`tile_pingpong`]) where the
    /// tile fits one warpgroup: `Some(true)` (`--tile-pingpong`) wherever
    /// it applies, `Some(false)` (`--no-tile-pingpong`) nowhere, `None`
    /// (the default) where the consumer is two warpgroups and the K loop
    /// is short at the launch compiled for (`launch_values`;
    /// [`tile_pingpong::auto_choice`]).
    pub tile_pingpong: Option<bool>,
    /// The integer arguments of the launch the kernel is compiled for, by
    /// parameter name (`--launch-value`, a launch case's values, the
    /// Python package's call): read only to choose between schedules
    /// that are all correct, the choice recorded with its
    /// [`Schedule::launch_guard`].
    pub launch_values: Vec<(String, i64)>,
    /// Write tile stores that a TMA store can express back with TMA
    /// (`tawa_partitioner::tma_store` rewrites them into `desc_store`s,
    /// the backend stages them in shared memory and issues
    /// `cp.async.bulk.tensor` stores). On by default; `--no-tma-store`
    /// keeps every store element-wise (`st.global`), for ablations.
    pub tma_store: bool,
    /// Tiles of at most this many bytes stay pointer stores even where a
    /// TMA store could write them (`--small-store-bytes`; default
    /// `tawa_ir::SMALL_STORE_BYTES`, 0 makes every such store a TMA store).
    pub small_store_bytes: u64,
    /// Let the producer copy a tile's operand that the consumer's loops
    /// read but the kernel loads once per tile (attention's `q`), through
    /// a one-slot aref of its own (`tawa_partitioner`'s per-tile copies).
    /// On by default; `--no-per-tile-copies` leaves the load in the
    /// consumer (the ablation baseline).
    pub per_tile_copies: bool,
    /// Copy pointer-tile loads that TMA can express with TMA (the
    /// default). `--no-tma-loads` leaves them to the producer's threads
    /// (`cp.async`, `tawa_partitioner::producer_copy`) where those can
    /// copy them, the path loads TMA refuses take: an ablation of the copy
    /// engine against the load/store units. Descriptor loads stay TMA.
    pub tma_loads: bool,
    /// Mark the TMA copies in a loop whose elements the launch reads once
    /// (`tawa_partitioner::read_once`), which then ask L2 to evict their
    /// lines first (the default). `--no-read-once` leaves every copy at
    /// L2's normal policy: the ablation baseline.
    pub read_once: bool,
    /// Run a persistent warp-specialized kernel in clusters of 2 CTAs
    /// that copy each shared box in halves, multicast into both
    /// ([`tma_multicast`]). Off by default (`--tma-multicast` turns it
    /// on) until the H100 measures it.
    pub tma_multicast: bool,
    /// Blocks of a warp-specialized kernel an SM is to hold
    /// (`--occupancy`); `None` lets [`occupancy`] decide.
    pub occupancy: Option<u32>,
    /// Parts each slot of a GEMM's ring holds of a K step
    /// (`--slot-split`); `None` (the default) keeps slots whole.
    pub slot_split: Option<u32>,
    /// K steps each slot of a GEMM's ring holds (`--slot-merge`); `None`
    /// lets [`slot_merge`] decide.
    pub slot_merge: Option<u32>,
    /// Let CTA pairs split each tile's K loop where the grid underfills
    /// the GPU ([`cluster_split_k`], `--cluster-split-k`). Off by default.
    pub cluster_split_k: bool,
    /// Share the K loops of the tiles past the last whole wave between
    /// the programs ([`stream_k`], `--stream-k`).
    pub stream_k: bool,
    /// Store each tile of a persistent GEMM after the next tile's first
    /// WGMMA group has issued ([`epilogue_overlap`], `--epilogue-overlap`).
    /// Off by default: on the H100 it measured level at 8192^3 and 2%
    /// slower at K = 1024; on the H200, correct on all 25 cases it changes
    /// but within a round's noise both ways, and below it on the dual
    /// GEMMs and the linear layer (`bench/RESULTS.md`).
    pub epilogue_overlap: bool,
    /// Copy the smallest tile of a GEMM ring's slot with the producer's
    /// threads (`cp.async`) beside TMA's copies of the others, where its
    /// box lies inside the tensor ([`mixed_copies`]); the ring keeps one K
    /// step a slot. `Some(true)` (`--mixed-copies`) wherever a put
    /// qualifies, `Some(false)` (`--no-mixed-copies`) nowhere; `None`, the
    /// default, where [`mixed_copies::by_default`] finds the measured
    /// shape and no flag below asks for a schedule not measured with it.
    /// Not with clusters, merged or split slots or `--no-tma-loads`.
    pub mixed_copies: Option<bool>,
    /// Split a producer loop where its copies' masks stop being whole, so
    /// that the steps before copy without a mask
    /// (`tawa_partitioner::copy_split`; run by the driver after the
    /// pipeliner). On by default; `--no-copy-split` keeps one masked loop.
    pub copy_split: bool,
    /// Launch the kernel as a programmatic dependent of the one before it
    /// on the stream (the backend's `CodegenOptions::programmatic_launch`):
    /// no pass here reads it, but the pipeline flags are where a launch's
    /// options are given. `Some(true)` (`--pdl`) for every kernel,
    /// `Some(false)` (`--no-pdl`) for none; `None`, the default, leaves it
    /// to the driver, which launches so the kernels whose programs walk
    /// the tiles (persistent, or walking their own), which run in one wave.
    pub programmatic_launch: Option<bool>,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            warp_specialize: true,
            aref_depth: None,
            mma_depth: None,
            persistent: true,
            coarse_pipeline: true,
            pingpong: true,
            tile_pingpong: None,
            launch_values: Vec::new(),
            tma_store: true,
            small_store_bytes: tawa_ir::SMALL_STORE_BYTES,
            per_tile_copies: true,
            tma_loads: true,
            read_once: true,
            tma_multicast: false,
            occupancy: None,
            slot_split: None,
            slot_merge: None,
            cluster_split_k: false,
            stream_k: false,
            epilogue_overlap: false,
            mixed_copies: None,
            copy_split: true,
            programmatic_launch: None,
        }
    }
}

/// The `ws` ops of `func`, in program order.
pub(crate) fn ws_ops(func: &Function) -> Vec<tawa_ir::function::Op> {
    let mut found = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::WarpSpecialize { .. }) {
            found.push(op);
        }
    });
    found
}

/// The integer `v` is when a constant defines it.
pub(crate) fn const_int(func: &Function, v: tawa_ir::Value) -> Option<i64> {
    match func.ops[func.def_op(v)?].kind {
        OpKind::Constant(tawa_ir::ConstValue::Int(c)) => Some(c),
        _ => None,
    }
}

/// The ops of `func` using `v`, each with the operand position.
pub(crate) fn value_uses(
    func: &Function,
    v: tawa_ir::Value,
) -> Vec<(tawa_ir::function::Op, usize)> {
    let mut found = Vec::new();
    func.walk(&mut |op| {
        for (i, &o) in func.ops[op].operands.iter().enumerate() {
            if o == v {
                found.push((op, i));
            }
        }
    });
    found
}

/// 32-bit registers each of `threads` threads holds of a tile of type
/// `ty` spread evenly over them (sub-word elements packed); 0 for a
/// scalar. What the pipeliner's register estimates add up.
pub(crate) fn tile_registers(ty: &tawa_ir::Type, threads: u32) -> u32 {
    let tawa_ir::Type::Tensor { shape, elem } = ty else {
        return 0;
    };
    let bytes = elem.scalar().map_or(4, |s| s.byte_size().max(1));
    let n: u32 = shape.iter().product();
    (n * bytes).div_ceil(4 * threads.max(1))
}

/// The decisions of one [`pipeline`] run, in the order taken.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// One sentence per decision, prefixed with the source position it is
    /// about (`14:5: ...`) where there is one.
    pub decisions: Vec<String>,
    /// The launches a choice made from the launch's arguments
    /// (`PipelineOptions::launch_values`) holds for; `None` when no
    /// choice depended on them.
    pub launch_guard: Option<tawa_ir::host_expr::LaunchGuard>,
}

impl Schedule {
    /// Records a decision about the op at `loc`.
    pub fn note(&mut self, loc: tawa_ir::Loc, text: String) {
        if loc.is_known() {
            self.decisions
                .push(format!("{}:{}: {text}", loc.line, loc.col));
        } else {
            self.decisions.push(text);
        }
    }

    /// The decisions as `--explain` prints them: one line each, after the
    /// kernel file's name.
    pub fn explain(&self, path: &str) -> String {
        self.decisions
            .iter()
            .map(|d| format!("{path}:{d}\n"))
            .collect()
    }
}

/// Why a schedule cannot be built as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineError {
    pub loc: tawa_ir::Loc,
    pub message: String,
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.loc.is_known() {
            write!(f, "{}:{}: {}", self.loc.line, self.loc.col, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for PipelineError {}

/// Runs the pipeliner's passes over warp-specialized `func` in place:
/// aref depths first (MMA pipelining needs a ring deeper than the groups
/// it keeps in flight), then whether mixed copies apply, then slot
/// merging or splitting (of the depths chosen; the default merges only
/// where no `--slot-split`, `--mma-depth`, `--tile-pingpong` or
/// `--tma-multicast` was asked for and mixed copies do not apply), then
/// MMA pipelining, then coarse pipelining of
/// the loops MMA pipelining left synchronous. `smem` describes what each
/// ring slot costs in shared memory; `None` when unknown (no cap).
pub fn pipeline(
    func: &mut Function,
    opts: &PipelineOptions,
    smem: Option<&SmemModel>,
) -> Result<Schedule, PipelineError> {
    let mut schedule = Schedule::default();
    aref_depth::choose_aref_depths(
        func,
        opts.aref_depth,
        smem,
        aref_depth::Slack::ConsumerSlot,
        &mut schedule,
    )?;
    // Shared memory is measured with whole slots; splitting or merging
    // them keeps the bytes, except where the default merge rounds a depth
    // up (the model's slot of every ring counted for each step added).
    let depth_in_steps = aref_depth::streaming_depth(func);
    let mixed = mixed_copies::decide(func, mixed_copies_mode(opts), &mut schedule);
    let merge = match (
        opts.slot_merge,
        opts.slot_split,
        opts.mma_depth,
        opts.tile_pingpong == Some(true) || opts.tma_multicast || mixed,
    ) {
        (Some(n), _, _, _) => slot_merge::Merge::Asked(n),
        // Asked for split slots, groups in flight, ping-pong tiles, CTA
        // pairs or mixed copies: the default's measurements do not cover
        // those schedules (mixed copies measured 0.95x Triton merged, on
        // the H200, against 1.01x with one K step a slot).
        // CTA pairs measured slower merged (H100, 128x256x64 GEMM against
        // Triton: 0.95 / 0.91x at 8192^3 / K = 16384 merged, 0.97 /
        // 0.95-0.96x unmerged): a paired slot is refilled only when both
        // CTAs released it, and a merged ring has fewer slots to absorb
        // the skew between them.
        (None, Some(_), _, _) | (None, _, Some(_), _) | (None, _, _, true) => {
            slot_merge::Merge::Asked(1)
        }
        // The depth may be rounded up only where it holds the cooperative
        // rule's extra slot, the compiler's own slack: elsewhere rounding
        // up would give `num_stages` N the code of N + 1.
        (None, None, None, false) => slot_merge::Merge::Default {
            smem: smem
                .filter(|_| opts.aref_depth.is_none() && aref_depth::cooperative_gemm(func))
                .copied(),
        },
    };
    let (_, added) = slot_merge::slot_merge(func, merge, &mut schedule);
    let smem_bytes = smem.and_then(|m| u32::try_from(m.bytes(depth_in_steps? + added)?).ok());
    let split = slot_split::slot_split(func, opts.slot_split.unwrap_or(1), &mut schedule);
    // Before MMA pipelining, which keeps the K loop's groups in flight
    // across iterations: the split checks the loop as the partitioner
    // wrote it.
    let barriers = cluster_split_k::cluster_split_k(func, opts.cluster_split_k, &mut schedule);
    let smem_bytes = smem_bytes.map(|b| b + barriers);
    // Also on the loops as the partitioner wrote them; its copies of the
    // tile body are MMA-pipelined like the originals.
    if !func.attrs.cluster_split_k {
        stream_k::stream_k(func, opts.stream_k, &mut schedule);
    }
    let mma_depth = match opts.mma_depth {
        Some(n) => mma_pipeline::MmaDepth::Asked(n),
        None => mma_pipeline::MmaDepth::PerPartition,
    };
    mma_pipeline::pipeline_mmas(func, mma_depth, &split, &mut schedule);
    if opts.coarse_pipeline {
        coarse_pipeline::coarse_pipeline(func, &mut schedule);
    }
    if opts.pingpong {
        pingpong::pingpong(func, &mut schedule);
    }
    occupancy::choose_occupancy(func, smem_bytes, opts.occupancy, &mut schedule)?;
    if opts.tma_multicast {
        tma_multicast::tma_multicast(func, &mut schedule);
    }
    mixed_copies::mixed_copies(func, mixed, &mut schedule);
    // After occupancy, which sets the consumer's registers the deferred
    // store must fit beside the next accumulator.
    epilogue_overlap::epilogue_overlap(func, opts.epilogue_overlap, &mut schedule);
    partition_budgets(func, &mut schedule);
    Ok(schedule)
}

/// What [`pipeline_without_ws`] made of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pipelined {
    /// One partition copies ahead of its own use of the copies.
    Yes(Schedule),
    /// The kernel is better compiled as it was written; the reason.
    No(String),
}

/// `num_stages` for a kernel that is not to be warp-specialized: the
/// partitioner's split of `func` fused into one software-pipelined
/// partition ([`software_pipeline`]) whose ring has `num_stages` slots
/// (capped by shared memory, or `--aref-depth`), the copies running one
/// iteration less ahead (and one less per WGMMA group kept in flight).
/// `Pipelined::No` leaves `func` to be replaced by the plain kernel: at
/// one stage nothing runs ahead.
pub fn pipeline_without_ws(
    func: &mut Function,
    opts: &PipelineOptions,
    smem: Option<&SmemModel>,
) -> Result<Pipelined, PipelineError> {
    let mut schedule = Schedule::default();
    aref_depth::choose_aref_depths(
        func,
        opts.aref_depth,
        smem,
        aref_depth::Slack::None,
        &mut schedule,
    )?;
    let mut depth = u32::MAX;
    func.walk(&mut |op| {
        if let OpKind::ArefCreate = func.ops[op].kind {
            if let tawa_ir::Type::Aref { depth: d, .. } = func.ty(func.ops[op].results[0]) {
                depth = depth.min(*d);
            }
        }
    });
    if depth == u32::MAX {
        return Ok(Pipelined::No("no loop copies tiles".into()));
    }
    if depth < 2 {
        return Ok(Pipelined::No(format!(
            "a ring of {depth} slot: with one stage no copy runs ahead (num_stages >= 2 pipelines)"
        )));
    }
    // Groups in flight hold their slots that many iterations longer. The
    // one partition's warps all compute here; without a measured reason
    // to keep groups in flight, the default keeps none.
    let asked = opts.mma_depth.unwrap_or(0);
    let mma_depth = if depth - 1 > asked { asked } else { 0 };
    let lookahead = depth - 1 - mma_depth;
    let mut loc = tawa_ir::Loc::UNKNOWN;
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { .. } = func.ops[op].kind {
            loc = func.ops[op].loc;
        }
    });
    if let Err(why) = software_pipeline::fuse(func, lookahead) {
        return Ok(Pipelined::No(why));
    }
    schedule.note(
        loc,
        format!(
            "loop: software-pipelined without warp specialization: every warp computes, one \
             thread issues the TMA copies {lookahead} iteration(s) ahead into the {depth}-slot ring"
        ),
    );
    if opts.cluster_split_k {
        schedule.note(
            loc,
            "cluster split-K: not applied: the kernel is not warp-specialized (--no-ws)".into(),
        );
    }
    let how = match opts.mma_depth {
        Some(_) => mma_pipeline::MmaDepth::Asked(mma_depth),
        None => mma_pipeline::MmaDepth::NoWsDefault,
    };
    mma_pipeline::pipeline_mmas(func, how, &[], &mut schedule);
    Ok(Pipelined::Yes(schedule))
}

/// How `opts` ask for mixed copies: by default, unless a flag asks for a
/// schedule they were not measured with.
fn mixed_copies_mode(opts: &PipelineOptions) -> mixed_copies::MixedCopies {
    use mixed_copies::MixedCopies;
    match opts.mixed_copies {
        Some(true) => MixedCopies::Asked,
        Some(false) => MixedCopies::Off,
        None => MixedCopies::Default {
            excluded_by: [
                (opts.mma_depth.is_some(), "--mma-depth"),
                (opts.slot_merge.is_some(), "--slot-merge"),
                (opts.slot_split.is_some(), "--slot-split"),
                (opts.tile_pingpong == Some(true), "--tile-pingpong"),
                (opts.tma_multicast, "--tma-multicast"),
                (opts.cluster_split_k, "--cluster-split-k"),
                (opts.stream_k, "--stream-k"),
                (opts.epilogue_overlap, "--epilogue-overlap"),
            ]
            .into_iter()
            .find_map(|(asked, flag)| asked.then_some(flag)),
        },
    }
}

/// Says what each partition runs with (warps, `setmaxnreg` budget).
fn partition_budgets(func: &Function, schedule: &mut Schedule) {
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if let OpKind::WarpSpecialize { partitions } = &data.kind {
            let parts: Vec<String> = partitions
                .iter()
                .map(|p| {
                    let regs = p.regs.map_or("the kernel's registers".to_string(), |r| {
                        format!("{r} registers")
                    });
                    format!("{} ({} warps, {regs})", p.role, p.num_warps)
                })
                .collect();
            schedule.note(data.loc, format!("partitions: {}", parts.join(", ")));
        }
    });
}
