//! The command line (clap). Three forms:
//!
//! - `tawa-rs KERNEL.py [options]`: compile one kernel and write what
//!   `--emit` asks for (tile IR, CUDA, PTX, cubin); see [`CompileCommand`].
//! - `tawa-rs run EXAMPLE.py [--case NAME]`: run an example's launch cases
//!   on the GPU and check every output; see [`RunCommand`].
//! - `tawa-rs bench EXAMPLE.py [--case NAME]`: time them against a baseline;
//!   see [`BenchCommand`].
//!
//! The subcommands are recognised only as the first argument
//! (`args_conflicts_with_subcommands`), so a kernel file is still the first
//! positional of the plain form; a kernel file literally named `run` or
//! `bench` is reached as `./run`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tawa_pipeliner::PipelineOptions;

/// Compile Triton-style Python GPU kernels (`@triton.jit`) into
/// warp-specialized CUDA for NVIDIA Hopper (sm_90a).
///
/// Example:
///   tawa-rs triton-examples/kernels/vector_add.py --arch sm90 \
///       --signature "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"
///   tawa-rs triton-examples/kernels/matmul.py --case ragged_100 --emit cuda
///   tawa-rs run triton-examples/kernels/matmul.py --case ragged_100
///   tawa-rs bench triton-examples/kernels/matmul.py --case square_4096
#[derive(Parser, Debug)]
#[command(
    name = "tawa-rs",
    version,
    about,
    long_about,
    verbatim_doc_comment,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub compile: CompileCommand,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run an example's launch cases on the GPU and check every output.
    ///
    /// Every output element is compared with the CPU interpreter for
    /// ordinary cases, with an independent GPU reference (cuBLAS for GEMMs)
    /// for cases tagged `large`; inputs must be left untouched and nothing
    /// outside an output's view written. Inputs are seeded random data,
    /// outputs are poisoned (NaN) first. Exit code 1 when any case fails.
    Run(RunCommand),
    /// Time an example's launch cases on the GPU against a baseline.
    ///
    /// Each case is checked first, then timed with CUDA events (warm-up,
    /// median of --iters runs, rotating input sets larger than twice the
    /// L2) interleaved with a baseline measured in the same run: cuBLAS for
    /// GEMMs, a device-to-device copy of the same byte count for
    /// memory-bound kernels. Without --case or --tag, the cases tagged
    /// `large` are timed.
    Bench(BenchCommand),
}

/// `tawa-rs KERNEL.py [options]`: compile one kernel.
#[derive(Args, Debug, Clone)]
pub struct CompileCommand {
    /// The Python file holding the `@triton.jit` kernel(s).
    #[arg(required = true)]
    pub kernel_file: Option<PathBuf>,

    /// Target GPU architecture. Only Hopper is supported: `sm90` (also
    /// spelled `sm_90`, `sm_90a`, `sm90a`); code is generated for sm_90a.
    #[arg(long, default_value = "sm90", value_parser = parse_arch)]
    pub arch: Arch,

    /// Which `@triton.jit` function to compile when the file has several
    /// entry points, e.g. `--kernel matmul_kernel`.
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,

    /// Argument types and constexpr values, in Triton's ahead-of-time
    /// format, one entry per kernel parameter in order. `*fp16:16` is a
    /// pointer to fp16 aligned to 16 bytes, `i32:16` an i32 divisible by 16,
    /// a bare value (`64`, `'leaky_relu'`, `True`) binds a `tl.constexpr`
    /// parameter. Example: `--signature "*fp16:16, *fp16:16, i32, 64"`.
    #[arg(long, value_name = "SIG")]
    pub signature: Option<String>,

    /// Bind a `tl.constexpr` parameter by name, e.g. `-D BLOCK_SIZE=1024`
    /// or `-D ACTIVATION="'leaky_relu'"`. Repeatable; wins over the
    /// signature and the parameter's default.
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
    pub define: Vec<(String, String)>,

    /// Take the kernel name, signature, constexprs, warps and stages from
    /// launch case NAME of the `.toml` file beside the kernel file (the
    /// examples in `triton-examples/kernels` have them), e.g.
    /// `--case ragged_100`. Explicit options win over the case's.
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,

    /// Warps per program (Triton's `num_warps`), e.g. `--num-warps 8`:
    /// a power of two from 1 to 32. Default 4.
    #[arg(long, value_name = "N", value_parser = parse_num_warps)]
    pub num_warps: Option<u32>,

    /// Triton's `num_stages`, e.g. `--num-stages 4` (default 3, or the
    /// launch case's): how many tiles are in flight. In a warp-specialized
    /// kernel it sets the depth of the aref rings: how many tiles the
    /// producer loads ahead of the consumers, plus one slot for the tile
    /// the consumers are reading when that slot fits (and one more for a
    /// GEMM's cooperative consumer warpgroups), capped by what fits in
    /// shared memory
    /// (`--explain` shows the depth taken); `--aref-depth` overrides it. With `--no-ws` it is the software pipeline's ring: the copies
    /// run `num_stages - 1` iterations ahead of the loop that uses them (1:
    /// no pipelining, loads through registers).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub num_stages: Option<u32>,

    /// What to write: `tile-ir` (the specialized tile IR after the
    /// frontend, in the textual form the IR parser reads back), `ws-ir`
    /// (the tile IR after warp specialization), `cuda` (the
    /// generated CUDA C++), `ptx` (NVRTC's PTX for sm_90a) or `cubin`
    /// (ptxas's sm_90a binary; needs `-o`). PTX and cubin need the CUDA
    /// tools (see README), not a GPU.
    #[arg(long, value_enum, default_value_t = Emit::TileIr)]
    pub emit: Emit,

    /// Write the output to FILE instead of standard output, e.g.
    /// `-o add.tir`.
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// An integer argument of the launch to compile for, by parameter
    /// name, e.g. `--launch-value K=128`: read only to choose between
    /// schedules that are all correct (ping-pong consumers for a short K
    /// loop; `--explain` says which choice depended on it and for which
    /// launches it holds). Repeatable; wins over the values of `--case`.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_launch_value)]
    pub launch_value: Vec<(String, i64)>,

    /// Print, on standard error, one line per load of the kernel saying
    /// whether it becomes a TMA tile copy (box, swizzle, base, extents,
    /// strides, coordinates) or why not. Standard output keeps what
    /// `--emit` asks for, so `--explain` combines with any of them.
    #[arg(long)]
    pub explain: bool,

    /// Turn warp specialization off, the baseline of ablations: no
    /// producer partition and no register split. Loops of TMA-able tile
    /// loads are still software-pipelined by `--num-stages` (one thread
    /// issues the copies ahead into an mbarrier ring that every warp
    /// computes from); at `--num-stages 1` the plain kernel. With `--emit
    /// ws-ir`, that one-partition IR or the plain tile IR.
    #[arg(long)]
    pub no_ws: bool,

    #[command(flatten)]
    pub pipeline: PipelineFlags,
}

impl CompileCommand {
    /// How to warp-specialize (or, with `--no-ws`, software-pipeline).
    pub fn pipeline_options(&self) -> Option<PipelineOptions> {
        Some(self.pipeline.options(self.no_ws))
    }
}

/// The pipeliner's options (each one a knob of the ablation scripts).
#[derive(Args, Debug, Clone)]
pub struct PipelineFlags {
    /// Slots of every aref ring (how many iterations the producer may run
    /// ahead), e.g. `--aref-depth 3`; with `--no-ws`, of the software
    /// pipeline's ring. Default: from the kernel's `num_stages` (see
    /// `--num-stages`), or as many as fit in shared memory when fewer do.
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..))]
    pub aref_depth: Option<u32>,

    /// WGMMA groups a consumer loop keeps in flight (MMA pipelining): the
    /// slot of iteration i is released at iteration i + N, after
    /// `wgmma.wait_group N`; 0 waits for every iteration's group. Capped
    /// at the aref depth minus one. Default: 1 in a consumer partition of
    /// one warpgroup, 0 in one of two (where the warpgroups' groups
    /// interleave); the fastest on the H100 so far (`bench/ablation.py`
    /// measures the others).
    #[arg(long, value_name = "N")]
    pub mma_depth: Option<u32>,

    /// Make a warp-specialized kernel with a grid over x, x and y, or x, y and z, persistent: one
    /// program per SM walks the tiles, so that the producer loads the next
    /// tile during the epilogue of the last. The default; the flag only
    /// says so (ablation scripts name both settings).
    #[arg(long, conflicts_with = "no_persistent")]
    pub persistent: bool,

    /// Keep one program per tile as the source launches it (the ablation
    /// baseline of `--persistent`).
    #[arg(long)]
    pub no_persistent: bool,

    /// Keep each consumer loop's dots in program order, each waited before
    /// the next op, instead of overlapping the chain between two dependent
    /// dots (attention's softmax) with the tensor core: the ablation
    /// baseline of coarse pipelining (FlashAttention-3's intra-warpgroup
    /// overlap, on by default).
    #[arg(long)]
    pub no_coarse_pipeline: bool,

    /// Let the two warpgroups of a consumer partition issue their
    /// tensor-core groups at the same time instead of taking turns
    /// (named barriers) where the loop computes beside them: the ablation
    /// baseline of ping-pong scheduling (FlashAttention-3's warpgroup
    /// scheduling, on by default for such loops; `--explain` says where).
    #[arg(long)]
    pub no_pingpong: bool,

    /// Give a persistent GEMM ping-pong consumers (CUTLASS's sm90
    /// ping-pong kernel): two consumer warpgroups on alternate tiles, one
    /// ring dealt between them, taking turns over the mainloop (named
    /// barriers) so that one's epilogue overlaps the other's mainloop.
    /// Where the tile's accumulator fits one warpgroup (128x128 fp32 at
    /// most): a 4-warp kernel gains a second consumer warpgroup, an 8-warp
    /// one stops splitting each tile's rows. By default only an 8-warp
    /// kernel whose K loop runs at most 4 iterations at the launch
    /// compiled for (`--launch-value`, or `--case`) gets them; the flag
    /// asks for them wherever they apply. `--explain` says where they
    /// apply and why not elsewhere.
    #[arg(long, conflicts_with = "no_tile_pingpong")]
    pub tile_pingpong: bool,

    /// Keep the cooperative consumers everywhere, short K loops too (the
    /// ablation baseline of the default's ping-pong consumers).
    #[arg(long)]
    pub no_tile_pingpong: bool,

    /// Write every tile store element by element (`st.global` from
    /// registers) instead of staging the tile in shared memory and
    /// storing it with TMA (`cp.async.bulk.tensor`), which is the default
    /// for stores of a 2-D tile bounded by the tensor's extents in a
    /// warp-specialized or software-pipelined kernel, and for
    /// `desc.store` of a descriptor built from the kernel's arguments.
    /// The ablation baseline of the TMA-store epilogue; `--explain` says
    /// which stores are TMA stores, or why not.
    #[arg(long)]
    pub no_tma_store: bool,

    /// Write tiles of at most N bytes element-wise (`st.global`) instead of
    /// with a TMA store: for so small a tile a TMA store's staging, fence
    /// and barriers cost more than the stores they make efficient, at the
    /// end of the program where nothing hides them. `--small-store-bytes
    /// 0` makes every store a TMA store can write one (the ablation
    /// baseline); `--explain` gives each store's reason. (An element-wise
    /// store of a tile of at most 4 KiB always goes from the registers'
    /// own layout, without a conversion to a coalesced one first.)
    #[arg(long, value_name = "N", default_value_t = tawa_ir::SMALL_STORE_BYTES)]
    pub small_store_bytes: u64,

    /// Let the consumer load a tile its loops' dots read but the kernel
    /// loads once per tile (attention's `q`) itself, instead of the
    /// producer copying it with TMA through a one-slot aref of its own
    /// (the default, which copies the next tile's during the consumer's
    /// epilogue): the ablation baseline of per-tile copies.
    #[arg(long)]
    pub no_per_tile_copies: bool,

    /// Let the producer's threads copy the pointer-tile loads that TMA
    /// could copy (`cp.async`, 16 bytes a thread, as for the loads TMA
    /// refuses), instead of TMA copies. Descriptor loads (`desc.load`,
    /// `tl.make_tensor_descriptor`) stay TMA. The ablation of the copy
    /// engine: `--explain` says which loads each copies.
    #[arg(long)]
    pub no_tma_loads: bool,

    /// Leave every TMA copy at the L2 cache's normal eviction policy. By
    /// default a copy in a loop whose elements the launch reads once (its
    /// coordinates move with every iteration and with each program id
    /// along which the grid has more than one program: the decode's
    /// weight, read by one row of programs) asks L2 to evict its lines
    /// first, so that the stream does not push out what is there.
    /// `--explain` names the copies it marks; this is the ablation
    /// baseline.
    #[arg(long)]
    pub no_read_once: bool,

    /// Run a persistent warp-specialized kernel in thread-block clusters
    /// of 2 CTAs whose tiles share an operand (a GEMM's consecutive tiles
    /// share B's columns): each CTA copies half of the shared box and
    /// multicasts it into both CTAs' shared memory, halving that
    /// operand's L2-to-SM traffic. Off by default; `--explain` says
    /// whether it applied and why not.
    #[arg(long, conflicts_with = "cluster_split_k")]
    pub tma_multicast: bool,

    /// Let a persistent warp-specialized kernel run in thread-block
    /// clusters of 2 CTAs that split each tile's K loop, where the grid's
    /// tiles fill at most half the programs the GPU holds (the launcher
    /// decides per launch; larger grids run as without the flag): rank r
    /// of a pair runs the K steps r, r + 2, ..., rank 1 hands its partial
    /// sums to rank 0 through distributed shared memory, and rank 0 runs
    /// the epilogue. Twice the SMs work on a grid of few tiles and a long
    /// K (on the H100, M = N = 1024, K = 65536: 1.8x with 128x256 tiles,
    /// 1.3x with 128x128). Off by default (level where it does not split
    /// for the 128x256 GEMM, 1.7% slower for a one-warpgroup 128x128
    /// one); only where the partial sums fit the ring's slots, which the
    /// exchange reuses. `--explain` says whether it applied and why not.
    #[arg(long)]
    pub cluster_split_k: bool,

    /// Share the K loops of the tiles past a persistent warp-specialized
    /// kernel's last whole wave between all its programs (stream-K): the
    /// tiles of the whole waves run as without the flag, the rest is cut
    /// into equal runs of K steps, one a program, and each tile's partial
    /// sums meet at the program that runs its first K step, through a
    /// workspace in global memory the launcher passes. No SM then idles
    /// through a last wave others finish (2048 tiles on 132 SMs leave
    /// 68 for a sixteenth wave). Off by default: on the H100 it measured
    /// 1.00-1.01x the defaults at 8192^3 but 0.90x at 4096^3, where runs
    /// at different K steps miss in L2. `--explain` says whether it
    /// applied and why not.
    #[arg(long, conflicts_with_all = ["cluster_split_k", "tma_multicast"])]
    pub stream_k: bool,

    /// Store each tile of a persistent warp-specialized GEMM after the
    /// next tile's first WGMMA group has issued (the K loop's first
    /// iteration peeled), so that the tensor core runs through the
    /// epilogue, where the next accumulator and the stored tile fit the
    /// consumer's registers together. Off by default: on the H100 it
    /// measured level with the defaults at 8192^3 and 2% slower at
    /// K = 1024 (128x256x64 tiles). `--explain` says where it applies, or
    /// why not.
    #[arg(long)]
    pub epilogue_overlap: bool,

    /// Compile a warp-specialized kernel for N blocks an SM (CUDA's
    /// `__launch_bounds__` minimum; each block's partitions share
    /// 65536 / N registers a thread, and a persistent kernel starts N
    /// programs an SM). By default a kernel whose consumer is one
    /// warpgroup takes 2 where their shared memory and registers fit, any
    /// other 1; `--explain` says which and why. `--occupancy 1` is the
    /// ablation baseline.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub occupancy: Option<u32>,

    /// Split each slot of a GEMM's aref ring in N parts along K: N times
    /// the slots, each a part of a K step (the same shared memory), the
    /// loops copying and multiplying a part an iteration, and 1 WGMMA
    /// group in flight (unless `--mma-depth` says otherwise) holding a
    /// part of a step, not a whole one. Off by default (slots whole): on
    /// the H100 it measured no faster on the 128x256x64 GEMM and slower on
    /// others. `--explain` says which rings split, or why not.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=8))]
    pub slot_split: Option<u32>,

    /// Merge N consecutive K steps into each slot of a GEMM's aref ring:
    /// 1/N of the slots, each N steps (the same shared memory), the loops
    /// copying N steps' tiles as one box and multiplying them in one dot
    /// an iteration, so the producer and consumers hand over a slot N
    /// times less often. A loop whose trip count is not a multiple of N
    /// starts early, its spare steps before K's start, where the copies
    /// read zeros. Default: 2 where two
    /// or more consumer warpgroups read the ring and its merged slots keep
    /// 8 Mi flops of tensor-core work ahead of the one being read (the
    /// 128x256x64 GEMMs' 4 slots; the 128x128x64 GEMMs' 5, rounded up to
    /// 6 where it fits); 1 keeps one step a slot, and is the default
    /// under --mma-depth, --slot-split, --tile-pingpong, --tma-multicast
    /// and where mixed copies apply. `--explain` says which rings merged,
    /// or why not.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4), conflicts_with = "slot_split")]
    pub slot_merge: Option<u32>,

    /// Copy the smallest tile of a GEMM ring's slot (A of a 128x256 GEMM)
    /// with the producer's threads (`cp.async`, 16 bytes a thread) where
    /// its box lies inside the tensor, and with TMA at the edges, while TMA
    /// copies the other tiles: the SM's load units and its TMA unit share
    /// the slot's bytes (the ring keeps one K step a slot), wherever a slot
    /// allows. By default only in the shape measured faster on the H200
    /// (a 128-byte-row tile, a third of the slot, of a descriptor made
    /// before any loop: matmul.py's 128x256x64 kernel 1.02-1.03x Triton
    /// against 0.98-1.01x with TMA alone); in most other kernels it
    /// measured slower, by up to 14%. `--explain` says which tile the
    /// threads copy, or why none.
    #[arg(long, conflicts_with_all = ["tma_multicast", "cluster_split_k", "slot_merge", "slot_split", "no_tma_loads", "no_mixed_copies"])]
    pub mixed_copies: bool,

    /// No mixed copies: TMA copies every tile of every slot (the
    /// ablation baseline of the default's mixed copies).
    #[arg(long)]
    pub no_mixed_copies: bool,

    /// Keep each producer loop whose copies are masked as one loop. By
    /// default such a loop is split where its copies' masks stop being
    /// whole (the ragged last K step, computed at launch): the steps
    /// before copy without a mask. The ablation baseline; `--explain`
    /// says which loops were split.
    #[arg(long)]
    pub no_copy_split: bool,

    /// Programmatic dependent launch for every kernel. The kernel waits at
    /// entry (`griddepcontrol.wait`) for the kernel before it on the
    /// stream to finish, lets the one after it start once its own blocks
    /// have all started, and is launched with CUDA's programmatic stream
    /// serialization, so that called back to back a kernel's launch and
    /// its blocks' start overlap the previous call's last blocks, which a
    /// short kernel called in a loop feels. By default only kernels whose
    /// programs walk the tiles (persistent ones: one wave of blocks) and
    /// those that call `tl.extra.cuda.gdc_wait` are launched so; one of
    /// many waves would wait in every block.
    #[arg(long, conflicts_with = "no_pdl")]
    pub pdl: bool,

    /// No programmatic dependent launch: every kernel is an ordinary
    /// launch, without `griddepcontrol`.
    #[arg(long)]
    pub no_pdl: bool,
}

impl PipelineFlags {
    pub fn options(&self, no_ws: bool) -> PipelineOptions {
        PipelineOptions {
            warp_specialize: !no_ws,
            aref_depth: self.aref_depth,
            mma_depth: self.mma_depth,
            persistent: !self.no_persistent,
            coarse_pipeline: !self.no_coarse_pipeline,
            pingpong: !self.no_pingpong,
            tile_pingpong: match (self.tile_pingpong, self.no_tile_pingpong) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            launch_values: Vec::new(),
            tma_store: !self.no_tma_store,
            small_store_bytes: self.small_store_bytes,
            per_tile_copies: !self.no_per_tile_copies,
            tma_loads: !self.no_tma_loads,
            read_once: !self.no_read_once,
            tma_multicast: self.tma_multicast,
            occupancy: self.occupancy,
            slot_split: self.slot_split,
            slot_merge: self.slot_merge,
            cluster_split_k: self.cluster_split_k,
            stream_k: self.stream_k,
            epilogue_overlap: self.epilogue_overlap,
            mixed_copies: match (self.mixed_copies, self.no_mixed_copies) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            copy_split: !self.no_copy_split,
            programmatic_launch: match (self.pdl, self.no_pdl) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
        }
    }
}

/// The pipeline flags given as one string, as the Python package takes
/// them (`TAWA_FLAGS`): the same [`PipelineFlags`] and `--no-ws` as the
/// command line, so that a flag means the same in both places.
#[derive(Parser, Debug)]
#[command(
    name = "pipeline flags",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
struct PipelineFlagString {
    /// Turn warp specialization off (see the compile form's `--no-ws`).
    #[arg(long)]
    no_ws: bool,

    #[command(flatten)]
    pipeline: PipelineFlags,
}

/// Parses `flags`, pipeline flags separated by whitespace (no quoting),
/// e.g. `"--mma-depth 1 --aref-depth 3"` or `"--no-ws"`, into the
/// pipeliner's options; an empty string gives the defaults. An unknown
/// flag or a bad value is clap's error, rendered as text, which names it.
pub fn parse_pipeline_flags(flags: &str) -> Result<PipelineOptions, String> {
    use clap::{CommandFactory, FromArgMatches};
    let command = PipelineFlagString::command();
    // The error's usage line lists every flag the string may hold (clap's
    // own would show only the flags given).
    let accepted: Vec<String> = command
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            Some(match a.get_value_names() {
                Some([value, ..]) if a.get_action().takes_values() => {
                    format!("[--{long} <{value}>]")
                }
                _ => format!("[--{long}]"),
            })
        })
        .collect();
    let mut command = command.override_usage(accepted.join(" "));
    let parsed = command
        .try_get_matches_from_mut(flags.split_whitespace())
        .and_then(|m| PipelineFlagString::from_arg_matches(&m))
        .map_err(|e| e.render().to_string().trim_end().to_string())?;
    Ok(parsed.pipeline.options(parsed.no_ws))
}

/// What `run` and `bench` both take: which example and cases, which GPU.
#[derive(Args, Debug, Clone)]
pub struct CaseSelection {
    /// The example's kernel file; its launch cases are read from the
    /// `.toml` file beside it, e.g. `triton-examples/kernels/matmul.py`.
    pub example: PathBuf,

    /// Only this launch case (repeatable), e.g. `--case ragged_100`.
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,

    /// Only cases with this tag (repeatable), e.g. `--tag small`.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,

    /// Seed of the random inputs (never zeros), e.g. `--seed 7`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,

    /// Run without warp specialization (the ablation baseline): software
    /// pipelined by `--num-stages` where the loads allow TMA, the plain
    /// kernel at one stage (see the compile form's `--no-ws`).
    #[arg(long)]
    pub no_ws: bool,

    /// Triton's `num_stages` for every selected case instead of the
    /// case's own (see the compile form's `--num-stages`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub num_stages: Option<u32>,

    #[command(flatten)]
    pub pipeline: PipelineFlags,
}

impl CaseSelection {
    /// How to warp-specialize (or, with `--no-ws`, software-pipeline).
    pub fn pipeline_options(&self) -> Option<PipelineOptions> {
        Some(self.pipeline.options(self.no_ws))
    }
}

/// `tawa-rs run EXAMPLE.py [--case NAME] [--seed N]`.
#[derive(Args, Debug, Clone)]
pub struct RunCommand {
    #[command(flatten)]
    pub select: CaseSelection,
}

/// `tawa-rs bench EXAMPLE.py [--case NAME] [--iters N] [--warmup N] [--json]`.
#[derive(Args, Debug, Clone)]
pub struct BenchCommand {
    #[command(flatten)]
    pub select: CaseSelection,

    /// Timed runs of the kernel (and as many of the baseline, interleaved).
    /// The reported time is their median.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,

    /// Untimed runs of each before timing.
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,

    /// Print one JSON object per case instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Skip the baseline (cuBLAS or device copy).
    #[arg(long)]
    pub no_baseline: bool,
}

/// Target architectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Hopper (H100/H200), compiled for `sm_90a`.
    Sm90,
}

/// Output kinds of `--emit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The tile IR produced by the frontend (text format).
    TileIr,
    /// The tile IR after warp specialization: the kernel split into a
    /// producer and a consumer partition joined by arefs (with `--no-ws`,
    /// one software-pipelined partition; the plain tile IR when there is
    /// nothing to split).
    WsIr,
    /// The generated CUDA C++ source.
    Cuda,
    /// PTX from NVRTC for sm_90a.
    Ptx,
    /// An sm_90a cubin from ptxas (binary: needs `-o`).
    Cubin,
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    match s.to_ascii_lowercase().as_str() {
        "sm90" | "sm_90" | "sm90a" | "sm_90a" => Ok(Arch::Sm90),
        other => Err(format!(
            "unsupported architecture `{other}`: tawa-rs generates code for NVIDIA Hopper only; use `--arch sm90`"
        )),
    }
}

/// `--num-warps` is checked here, so that a bad value is a usage error
/// (exit code 2) rather than a diagnostic pointing into the kernel file.
fn parse_num_warps(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(w) if (1..=32).contains(&w) && w.is_power_of_two() => Ok(w),
        _ => Err(format!(
            "`{s}` is not a warp count: --num-warps takes a power of two from 1 to 32 (1, 2, 4, 8, 16 or 32)"
        )),
    }
}

fn parse_launch_value(s: &str) -> Result<(String, i64), String> {
    let (name, value) = parse_define(s)?;
    let value = value
        .parse::<i64>()
        .map_err(|_| format!("expected an integer after `{name}=`, found `{value}`"))?;
    Ok((name, value))
}

fn parse_define(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("expected NAME=VALUE, found `{s}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tawa-rs").chain(args.iter().copied()))
    }

    #[test]
    fn plain_form_keeps_the_kernel_file_first() {
        let cli = parse(&["k.py", "--arch", "sm90", "--emit", "cuda", "-o", "k.cu"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.compile.kernel_file, Some(PathBuf::from("k.py")));
        assert_eq!(cli.compile.emit, Emit::Cuda);
        assert_eq!(cli.compile.output, Some(PathBuf::from("k.cu")));
    }

    #[test]
    fn plain_form_requires_a_kernel_file() {
        assert!(parse(&["--emit", "ptx"]).is_err());
    }

    #[test]
    fn run_subcommand_takes_cases_and_seed() {
        let cli = parse(&["run", "m.py", "--case", "a", "--case", "b", "--seed", "7"]).unwrap();
        let Some(Command::Run(run)) = cli.command else {
            panic!("not run: {cli:?}")
        };
        assert_eq!(run.select.example, PathBuf::from("m.py"));
        assert_eq!(run.select.cases, ["a", "b"]);
        assert_eq!(run.select.seed, 7);
    }

    #[test]
    fn bench_subcommand_defaults() {
        let cli = parse(&["bench", "m.py", "--json"]).unwrap();
        let Some(Command::Bench(b)) = cli.command else {
            panic!("not bench: {cli:?}")
        };
        assert!(b.json);
        assert_eq!((b.iters, b.warmup), (50, 10));
        assert!(parse(&["bench", "m.py", "--iters", "0"]).is_err());
    }

    #[test]
    fn compile_options_do_not_mix_with_subcommands() {
        // `--emit` belongs to the plain form only.
        assert!(parse(&["run", "m.py", "--emit", "cuda"]).is_err());
        // A subcommand name after the kernel file is not a subcommand.
        assert!(parse(&["k.py", "run"]).is_err());
    }

    #[test]
    fn num_warps_must_be_a_power_of_two_up_to_32() {
        for bad in ["0", "3", "64", "-1", "four"] {
            assert!(parse(&["k.py", "--num-warps", bad]).is_err(), "{bad}");
        }
        let cli = parse(&["k.py", "--num-warps", "8"]).unwrap();
        assert_eq!(cli.compile.num_warps, Some(8));
    }

    #[test]
    fn an_empty_flag_string_gives_the_default_options() {
        for empty in ["", "  ", "\t\n"] {
            assert_eq!(
                parse_pipeline_flags(empty).unwrap(),
                PipelineOptions::default()
            );
        }
    }

    #[test]
    fn a_flag_string_sets_the_options_the_command_line_would() {
        let opts = parse_pipeline_flags(" --mma-depth 1\t--aref-depth 3 --no-persistent ").unwrap();
        assert_eq!(
            opts,
            PipelineOptions {
                mma_depth: Some(1),
                aref_depth: Some(3),
                persistent: false,
                ..PipelineOptions::default()
            }
        );
        let opts = parse_pipeline_flags(
            "--no-ws --no-coarse-pipeline --no-pingpong --tile-pingpong --no-tma-store \
             --no-per-tile-copies --no-tma-loads --tma-multicast --occupancy=1 --slot-split 1 \
             --small-store-bytes 0 --no-pdl --no-read-once",
        )
        .unwrap();
        assert_eq!(
            opts,
            PipelineOptions {
                warp_specialize: false,
                aref_depth: None,
                mma_depth: None,
                persistent: true,
                coarse_pipeline: false,
                pingpong: false,
                tile_pingpong: Some(true),
                launch_values: Vec::new(),
                tma_store: false,
                small_store_bytes: 0,
                per_tile_copies: false,
                tma_loads: false,
                read_once: false,
                tma_multicast: true,
                occupancy: Some(1),
                slot_split: Some(1),
                slot_merge: None,
                cluster_split_k: false,
                stream_k: false,
                epilogue_overlap: false,
                mixed_copies: None,
                copy_split: true,
                programmatic_launch: Some(false),
            }
        );
        assert_eq!(
            parse_pipeline_flags("--pdl").unwrap().programmatic_launch,
            Some(true)
        );
        assert!(parse_pipeline_flags("--pdl --no-pdl").is_err());
        // The same flags on the command line give the same options.
        let cli = parse(&[
            "k.py",
            "--mma-depth",
            "1",
            "--aref-depth",
            "3",
            "--no-persistent",
        ])
        .unwrap();
        assert_eq!(
            cli.compile.pipeline_options().unwrap(),
            parse_pipeline_flags("--mma-depth 1 --aref-depth 3 --no-persistent").unwrap()
        );
    }

    #[test]
    fn cluster_split_k_is_asked_and_excludes_multicast() {
        let opts = parse_pipeline_flags("--cluster-split-k").unwrap();
        assert_eq!(
            opts,
            PipelineOptions {
                cluster_split_k: true,
                ..PipelineOptions::default()
            }
        );
        let err = parse_pipeline_flags("--cluster-split-k --tma-multicast").unwrap_err();
        assert!(err.contains("--tma-multicast"), "{err}");
    }

    #[test]
    fn stream_k_is_asked_and_excludes_the_cluster_schedules() {
        let opts = parse_pipeline_flags("--stream-k").unwrap();
        assert_eq!(
            opts,
            PipelineOptions {
                stream_k: true,
                ..PipelineOptions::default()
            }
        );
        for other in ["--cluster-split-k", "--tma-multicast"] {
            let err = parse_pipeline_flags(&format!("--stream-k {other}")).unwrap_err();
            assert!(err.contains(other), "{err}");
        }
    }

    #[test]
    fn mixed_copies_are_asked_and_exclude_what_copies_otherwise() {
        let opts = parse_pipeline_flags("--mixed-copies").unwrap();
        assert_eq!(opts.mixed_copies, Some(true));
        let opts = parse_pipeline_flags("--no-mixed-copies").unwrap();
        assert_eq!(opts.mixed_copies, Some(false));
        // By default the pipeliner decides.
        assert_eq!(PipelineOptions::default().mixed_copies, None);
        for other in [
            "--no-mixed-copies",
            "--tma-multicast",
            "--cluster-split-k",
            "--slot-merge 2",
            "--slot-split 2",
            "--no-tma-loads",
        ] {
            let err = parse_pipeline_flags(&format!("--mixed-copies {other}")).unwrap_err();
            assert!(err.contains(other.split(' ').next().unwrap()), "{err}");
        }
    }

    #[test]
    fn a_bad_flag_string_is_an_error_naming_the_flag() {
        let err = parse_pipeline_flags("--mma-depth 1 --no-such-flag").unwrap_err();
        assert!(err.contains("'--no-such-flag'"), "{err}");
        // With the flags a string may hold.
        assert!(err.contains("[--no-ws] [--aref-depth <D>]"), "{err}");
        assert!(
            err.contains(
                "[--tma-multicast] [--cluster-split-k] [--stream-k] [--epilogue-overlap] \
                 [--occupancy <N>]"
            ),
            "{err}"
        );
        // Options of the launch, not of the pipeliner.
        let err = parse_pipeline_flags("--num-stages 4").unwrap_err();
        assert!(err.contains("--num-stages"), "{err}");
        let err = parse_pipeline_flags("--aref-depth 0").unwrap_err();
        assert!(err.contains("--aref-depth"), "{err}");
        let err = parse_pipeline_flags("--mma-depth").unwrap_err();
        assert!(err.contains("--mma-depth"), "{err}");
        let err = parse_pipeline_flags("--tile-pingpong --no-tile-pingpong").unwrap_err();
        assert!(err.contains("--no-tile-pingpong"), "{err}");
        // A positional is not a flag.
        let err = parse_pipeline_flags("kernel.py").unwrap_err();
        assert!(err.contains("kernel.py"), "{err}");
        // Nor is help: the flags are documented by `tawa-rs --help`.
        assert!(parse_pipeline_flags("--help").is_err());
        assert!(!err.contains('\x1b'), "no terminal colors: {err:?}");
    }

    #[test]
    fn clap_configuration_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        PipelineFlagString::command().debug_assert();
    }
}
