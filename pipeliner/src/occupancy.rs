//! `occupancy`: how many blocks of a warp-specialized kernel one SM holds.
//!
//! A warp-specialized block whose consumer is one warpgroup (`num_warps =
//! 4`) leaves the SM's tensor cores idle whenever that warpgroup is busy
//! with anything else: a softmax between its two dots, its epilogue, a
//! wait for a slot. Triton runs such kernels several blocks to an SM, so
//! that one block's warpgroups fill the others' gaps; tutorial 06's own
//! autotuning space has only 4-warp configurations for a head dimension
//! of 64 on Hopper (it drops 8 warps below 128 x 128 tiles). Here a second
//! block is taken when it fits beside the first:
//!
//! - shared memory: `blocks * (bytes + 1 KiB)` within the SM's 228 KiB
//!   (the driver reserves 1 KiB a block), the rings at the depth
//!   `aref_depth` chose;
//! - registers: each block gets `65536 / blocks` of the register file,
//!   which `setmaxnreg` splits between the partitions: the producer keeps
//!   its budget, the consumer gets the rest, which must cover its peak of
//!   live tiles ([`consumer_peak_registers`]) plus [`HEADROOM`] registers
//!   of addresses, descriptors and loop state;
//! - the launch share: each thread starts with the block's even share,
//!   which must hold the widest `wgmma`'s accumulator plus
//!   [`LAUNCH_HEADROOM`] (a 64x256 fp32 accumulator needs more than two
//!   blocks of 256 threads leave).
//!
//! A kernel with two or more consumer warpgroups keeps one block: its
//! warpgroups already overlap one another (cooperative halves, ping-pong)
//! and each needs most of its SM's registers. `--occupancy N` asks for N
//! blocks; it is an error when their shared memory or their partitions'
//! smallest budgets do not fit. The kernel records the choice in its
//! `occupancy` attribute: the backend compiles it for that many blocks
//! (`__launch_bounds__`) and a persistent kernel's launcher starts that
//! many programs an SM.

use std::collections::HashMap;

use tawa_ir::function::Op;
use tawa_ir::{Block, Function, Loc, OpKind, Type, Value};

use crate::{PipelineError, Schedule};

/// Shared memory of one sm_90 SM, bytes: what its blocks share.
pub const SM_SHARED_BYTES: u32 = 228 * 1024;

/// Shared memory the driver reserves for each resident block, bytes.
pub const RESERVED_PER_BLOCK: u32 = 1024;

/// Registers a consumer thread needs besides its live tiles: addresses,
/// wgmma descriptors, barrier phases, loop counters. The head-dim-64
/// attention consumer (128 rows, one warpgroup) peaks at about 170
/// registers of tiles and compiles without spills at 216.
pub const HEADROOM: u32 = 40;

/// The register file of one SM.
const SM_REGISTERS: u32 = 65536;

/// Registers ptxas wants at launch beside the accumulator of the widest
/// `wgmma` (descriptors, addresses): a 64x128 fp32 accumulator (64
/// registers a thread) needed 90, a 64x256 one (128) 154. The kernel's
/// register count is the block's even share (`__launch_bounds__`), and
/// ptxas refuses a kernel whose widest instruction does not fit in it,
/// whatever a partition's `setmaxnreg` raises it to later.
pub const LAUNCH_HEADROOM: u32 = 32;

/// Registers a thread of a `threads`-thread block gets when `blocks` of
/// them share the SM: the even split ptxas compiles for, in the steps of
/// 8 that `setmaxnreg` takes.
fn block_share(threads: u32, blocks: u32) -> u32 {
    ((SM_REGISTERS / (threads * blocks).max(1)).min(255) / 8) * 8
}

/// Decides `func.attrs.occupancy` (module docs). `smem_bytes` is the
/// kernel's shared memory at the ring depths chosen (`None`: unknown, and
/// one block is kept unless asked); `asked` is `--occupancy`.
pub fn choose_occupancy(
    func: &mut Function,
    smem_bytes: Option<u32>,
    asked: Option<u32>,
    schedule: &mut Schedule,
) -> Result<(), PipelineError> {
    let Some(&ws) = crate::ws_ops(func).first() else {
        if let Some(n) = asked.filter(|&n| n != 1) {
            return Err(PipelineError {
                loc: Loc::UNKNOWN,
                message: format!(
                    "--occupancy {n}: only a warp-specialized kernel takes an occupancy (the \
                     plain kernel's launch bounds stay one block)"
                ),
            });
        }
        return Ok(());
    };
    let loc = func.ops[ws].loc;
    let OpKind::WarpSpecialize { partitions } = &func.ops[ws].kind else {
        unreachable!("ws_op returns a ws op")
    };
    let partitions = partitions.clone();
    let threads: u32 = partitions.iter().map(|p| p.num_warps * 32).sum();
    let consumer = partitions.iter().position(|p| p.role == "consumer");
    // What the consumer can have when `blocks` share the SM: the block's
    // share less every other partition's budget.
    let consumer_budget = |blocks: u32| -> Option<u32> {
        let c = consumer?;
        let pool = block_share(threads, blocks) * threads;
        let others: u32 = partitions
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != c)
            .map(|(_, p)| p.regs.unwrap_or(block_share(threads, blocks)) * p.num_warps * 32)
            .sum();
        let budget = pool.checked_sub(others)? / (partitions[c].num_warps * 32) / 8 * 8;
        (budget >= 24).then_some(budget.min(256))
    };
    let smem_fits = |blocks: u32| {
        smem_bytes.is_some_and(|b| {
            (u64::from(b) + u64::from(RESERVED_PER_BLOCK)) * u64::from(blocks)
                <= u64::from(SM_SHARED_BYTES)
        })
    };
    let kib = |b: u32| format!("{:.0} KiB", f64::from(b) / 1024.0);
    // What the widest wgmma needs at launch (see `LAUNCH_HEADROOM`).
    let launch_need = widest_mma_registers(func) + LAUNCH_HEADROOM;
    let launch_fits = |blocks: u32| block_share(threads, blocks) >= launch_need;
    let (blocks, why) = match asked {
        Some(0) => {
            return Err(PipelineError {
                loc: Loc::UNKNOWN,
                message: "--occupancy must be at least 1".into(),
            })
        }
        Some(n) if n > 1 => {
            if !smem_fits(n) {
                let need = smem_bytes.map_or("an unknown amount of".into(), kib);
                return Err(PipelineError {
                    loc,
                    message: format!(
                        "--occupancy {n}: {n} blocks of {need} shared memory (and 1 KiB each \
                         the driver reserves) do not fit an SM's {}",
                        kib(SM_SHARED_BYTES)
                    ),
                });
            }
            if !launch_fits(n) {
                return Err(PipelineError {
                    loc,
                    message: format!(
                        "--occupancy {n}: {n} blocks of {threads} threads start with {} \
                         registers a thread, fewer than the about {launch_need} ptxas needs \
                         for the widest wgmma's accumulator and its addresses",
                        block_share(threads, n)
                    ),
                });
            }
            if consumer_budget(n).is_none() {
                return Err(PipelineError {
                    loc,
                    message: format!(
                        "--occupancy {n}: {n} blocks of {threads} threads leave the consumer \
                         fewer than the 24 registers `setmaxnreg` allows"
                    ),
                });
            }
            (n, format!("--occupancy {n}"))
        }
        Some(_) => (1, "--occupancy 1".to_string()),
        None => {
            let one_warpgroup = consumer.is_some_and(|c| partitions[c].num_warps == 4);
            let need = consumer
                .map(|c| consumer_peak_registers(func, func.ops[ws].regions[c], 128) + HEADROOM);
            match (one_warpgroup, need, consumer_budget(2)) {
                (false, ..) => (
                    1,
                    "one block an SM: its consumer warpgroups overlap one another".to_string(),
                ),
                (true, ..) if !launch_fits(2) => (
                    1,
                    format!(
                        "one block an SM: beside a second block each thread would start with \
                         {} registers, fewer than the about {launch_need} ptxas needs for the \
                         widest wgmma's accumulator and its addresses",
                        block_share(threads, 2)
                    ),
                ),
                (true, Some(need), Some(budget)) if smem_fits(2) && need <= budget => (
                    2,
                    format!(
                        "two blocks an SM, whose consumer warpgroups fill each other's gaps: \
                         {} of shared memory each, and the consumer's {budget} registers cover \
                         its peak of about {need} (live tiles and {HEADROOM} of addresses)",
                        smem_bytes.map_or("?".into(), kib)
                    ),
                ),
                (true, Some(need), budget) if smem_fits(2) => (
                    1,
                    format!(
                        "one block an SM: beside a second block the consumer would get {} \
                         registers, under the about {need} it needs (live tiles and \
                         {HEADROOM} of addresses)",
                        budget.unwrap_or(0)
                    ),
                ),
                _ => (
                    1,
                    match smem_bytes {
                        Some(b) => format!(
                            "one block an SM: two need {} of shared memory, more than an SM's {}",
                            kib((b + RESERVED_PER_BLOCK) * 2),
                            kib(SM_SHARED_BYTES)
                        ),
                        None => "one block an SM: its shared memory is not known".to_string(),
                    },
                ),
            }
        }
    };
    func.attrs.occupancy = blocks;
    if blocks > 1 {
        let budget = consumer_budget(blocks).expect("checked above");
        if let OpKind::WarpSpecialize { partitions } = &mut func.ops[ws].kind {
            for p in partitions.iter_mut() {
                if p.role == "consumer" {
                    p.regs = Some(p.regs.map_or(budget, |r| r.min(budget)));
                }
            }
        }
    }
    schedule.note(loc, format!("occupancy: {why}"));
    Ok(())
}

/// Accumulator registers a thread holds in the widest single `wgmma` of
/// `func`: an m64nNk16 instruction keeps a 64 x N accumulator over a
/// warpgroup's 128 threads, N at most 256.
fn widest_mma_registers(func: &Function) -> u32 {
    let mut widest = 0;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if !matches!(data.kind, OpKind::Dot { .. }) {
            return;
        }
        if let Some(&r) = data.results.first() {
            if let Type::Tensor { shape, elem } = func.ty(r) {
                let n = shape.last().copied().unwrap_or(0).min(256);
                let instr = Type::Tensor {
                    shape: vec![64, n],
                    elem: *elem,
                };
                widest = widest.max(crate::tile_registers(&instr, 128));
            }
        }
    });
    widest
}

/// 32-bit registers a consumer thread holds at the peak of its live
/// tiles: every tensor value from its definition to its last use (a use
/// inside a loop the value was defined outside of lasts the whole loop;
/// a loop's results begin where it ends), each spread over the
/// partition's `threads`. A `dot` accumulating in place is counted
/// with its accumulator and result apart, a little high. Tiles read in place from aref slots (and
/// transposed views of them) live in shared memory and do not count.
pub fn consumer_peak_registers(func: &Function, region: Block, threads: u32) -> u32 {
    struct Walk<'a> {
        func: &'a Function,
        pos: u32,
        def: HashMap<Value, u32>,
        end: HashMap<Value, u32>,
        uncounted: std::collections::HashSet<Value>,
        /// Enclosing loops of the op being visited: (start, op).
        loops: Vec<(u32, Op)>,
        loop_end: HashMap<Op, u32>,
        /// Uses to extend to the end of a loop, resolved after the walk.
        pending: Vec<(Value, Op)>,
    }
    impl Walk<'_> {
        fn block(&mut self, b: Block) {
            let start = self.pos;
            // A loop's carried value lives from the body's start to its
            // last use there; the value yielded for the next iteration,
            // from its definition to the yield.
            for &a in &self.func.blocks[b].args {
                self.def.entry(a).or_insert(start);
            }
            for &op in &self.func.blocks[b].ops.clone() {
                self.op(op);
            }
        }
        fn op(&mut self, op: Op) {
            self.pos += 1;
            let here = self.pos;
            let data = &self.func.ops[op];
            for &v in &data.operands {
                let e = self.end.entry(v).or_insert(here);
                *e = (*e).max(here);
                let def = self.def.get(&v).copied().unwrap_or(0);
                // The outermost enclosing loop the value comes from outside of.
                if let Some(&(_, l)) = self.loops.iter().find(|&&(start, _)| def < start) {
                    self.pending.push((v, l));
                }
            }
            for &r in &data.results {
                self.def.insert(r, here);
                let uncounted = match &data.kind {
                    OpKind::ArefGet => true,
                    // Made where they are used, element by element.
                    OpKind::Splat
                    | OpKind::Broadcast
                    | OpKind::ExpandDims { .. }
                    | OpKind::Constant(_)
                    | OpKind::MakeRange { .. } => true,
                    // Index arithmetic and masks on those, made again
                    // where they are used.
                    k if k.is_elementwise() => data
                        .operands
                        .iter()
                        .all(|o| !self.func.ty(*o).is_tensor() || self.uncounted.contains(o)),
                    OpKind::Trans { .. } => {
                        data.operands.iter().all(|o| self.uncounted.contains(o))
                    }
                    _ => false,
                };
                if uncounted {
                    self.uncounted.insert(r);
                }
            }
            let is_loop = matches!(data.kind, OpKind::For(_) | OpKind::While);
            if is_loop {
                self.loops.push((here, op));
            }
            for &r in &data.regions.clone() {
                self.block(r);
            }
            if is_loop {
                self.loops.pop();
                self.loop_end.insert(op, self.pos);
            }
            // A loop's or an `if`'s results exist once it is done.
            if !self.func.ops[op].regions.is_empty() {
                for &r in &self.func.ops[op].results {
                    self.def.insert(r, self.pos);
                }
            }
        }
    }
    let mut w = Walk {
        func,
        pos: 0,
        def: HashMap::new(),
        end: HashMap::new(),
        uncounted: Default::default(),
        loops: Vec::new(),
        loop_end: HashMap::new(),
        pending: Vec::new(),
    };
    w.block(region);
    for (v, l) in std::mem::take(&mut w.pending) {
        let until = w.loop_end[&l];
        let e = w.end.entry(v).or_insert(until);
        *e = (*e).max(until);
    }
    let regs = |v: Value| crate::tile_registers(func.ty(v), threads);
    // A sweep over the live intervals.
    let mut events: Vec<(u32, i64)> = Vec::new();
    for (&v, &d) in &w.def {
        if w.uncounted.contains(&v) {
            continue;
        }
        let r = regs(v);
        if r == 0 {
            continue;
        }
        // Freed at its last use, before that op's results are made (a
        // result may take the registers of an operand it outlives); an
        // unused value, just after it is made.
        let e = w.end.get(&v).copied().unwrap_or(d).max(d + 1);
        events.push((d, i64::from(r)));
        events.push((e, -i64::from(r)));
    }
    events.sort();
    let (mut live, mut peak) = (0i64, 0i64);
    for (_, delta) in events {
        live += delta;
        peak = peak.max(live);
    }
    peak.max(0) as u32
}
