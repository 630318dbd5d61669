//! The CPU simulator: runs warp-specialized IR on the interpreter with the
//! partitions of each `ws` op running concurrently.
//!
//! Design. Programs of the grid run one after another (they share nothing
//! but global memory, and the IR has no inter-program synchronization), on
//! the tile IR interpreter with a [`Host`] of this crate. When a program
//! reaches a `ws` op, each partition gets an OS thread running its region
//! with a copy of the values defined so far. The threads share one
//! [`Mutex`] holding global memory, the rings and the scheduler, and a
//! partition runs only while it holds that lock *and* the scheduler has
//! given it the turn: exactly one partition runs at any time, so a run is
//! a deterministic function of the seed. Threads rather than a steppable
//! interpreter keep the interpreter's recursive evaluation (and its speed)
//! untouched; the cost is a lock handoff per switch.
//!
//! Scheduling points are the ops another partition can observe or affect:
//! global memory accesses, aref ops, `print`, and ops reading a slot view
//! ([`Host::sync_point`]). Everything between two such points touches only
//! the partition's own values, so choosing only at these points loses no
//! outcome. At each point the scheduler picks uniformly at random (seeded
//! splitmix64) among the runnable partitions: the one at the point,
//! partitions ready to go on, and partitions blocked in an aref op whose
//! barrier wait would now succeed. A put or get whose wait fails blocks
//! its partition; when no partition is runnable and some have not
//! finished, the run stops with a [`Deadlock`] naming every partition and
//! the op, location, iteration and barrier state it is blocked at.
//!
//! An error in one partition (an out-of-bounds load, a broken aref
//! contract) aborts the others and is reported as the program's error.
//!
//! A kernel launched in CTA pairs (`cluster = 2`,
//! `tawa_pipeliner::tma_multicast`) runs its programs two at a time:
//! program `2c` (rank 0) stops at its `ws` op until program `2c + 1`
//! (rank 1) reaches its own, then the partitions of both run together
//! under the one scheduler. A multicast put writes half of each shared
//! tile into both CTAs' slots and completes transactions on both `full`
//! barriers ([`crate::ring::put_paired`]), a release arrives on the
//! peer's `empty` barrier too; a copy into a slot a consumer of either
//! CTA still holds is an error. Such a kernel's body does nothing after
//! its `ws` op (the pass's kernels are persistent: the op is the body).
//!
//! A kernel whose pairs may split each tile's K loop (`cluster_split_k`,
//! `tawa_pipeliner::cluster_split_k`) launched with an even number of
//! programs runs the same way, each CTA with rings of its own (where the
//! launch does not split, the pair's programs just run side by side on
//! their own tiles). Its `cluster.sum` of a split launch is a one-value
//! channel per op from rank 1 to rank 0: rank 1 blocks until the channel
//! is empty, leaves its partial there and goes on with it as its result;
//! rank 0 blocks until the channel is full and takes `own + peer's` (in
//! f32, in that order), as the backend's distributed-shared-memory
//! exchange does. A second exchange of the same op by the same partition
//! is an error: a split launch gives each pair one tile, and the
//! backend's exchange reuses ring slots that are idle only after it.
//!
//! A stream-K kernel (`stream_k`, `tawa_pipeliner::stream_k`) has its
//! programs wait for each other's partial sums, always for programs of
//! higher x, so the interpreter runs its programs from the highest x
//! down. `stream_k.put` leaves the program's sums in its workspace slot
//! (a second put of the same program is an error: the backend's slot
//! holds one); `stream_k.take` takes program `from`'s sums and adds them
//! (in f32, own first), and finding the slot empty is an error, not a
//! wait: the program it waits for has run already, or it would wait for
//! a program of lower x, which on the GPU could be waiting for it. A
//! launch that ends with sums nobody took is an error too.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

use tawa_ir::interp::value::{RVal, SlotView};
use tawa_ir::interp::{
    run_grid_with_host, run_region, ArgValue, Host, InterpError, InterpOptions, Memory, WsLaunch,
};
use tawa_ir::{Block, EntityRef, Function, Loc, Op, OpKind, Type};

use crate::ring::{put_paired, Position, Ring, WaitFor};

/// How to simulate.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Seed of the scheduler's choices; equal seeds give equal runs.
    pub seed: u64,
    /// Step limit of the interpreter, applied to the program body and to
    /// each partition separately.
    pub max_steps: Option<u64>,
    /// Report any read of a slot view after its partition released the
    /// slot: a race on hardware even in interleavings where the producer
    /// has not refilled the slot yet. When off, such reads see whatever the
    /// slot holds at that moment, and only some interleavings show wrong
    /// results.
    pub check_released_reads: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 0,
            max_steps: None,
            check_released_reads: true,
        }
    }
}

/// What a successful simulation did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// `ws` ops run (over all programs).
    pub ws_runs: u64,
    /// Scheduling decisions taken.
    pub decisions: u64,
    /// Decisions that handed the turn to another partition.
    pub switches: u64,
    /// A hash of the sequence of chosen partitions: different values mean
    /// different interleavings.
    pub schedule_hash: u64,
}

/// Why a simulation failed.
#[derive(Clone, Debug)]
pub enum SimError {
    /// No partition of a `ws` op could move.
    Deadlock(Box<Deadlock>),
    /// A program failed: an interpreter error, or an aref op that broke the
    /// contract of the crate documentation (message, op and location).
    Program(InterpError),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Deadlock(d) => d.fmt(f),
            SimError::Program(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {}

/// A state of a `ws` op in which no partition can move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    pub pid: [u32; 3],
    /// Location of the `ws` op.
    pub ws_loc: Loc,
    /// Every partition, in the op's order.
    pub partitions: Vec<PartitionReport>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionReport {
    pub index: usize,
    /// The partition's role; `role (warpgroup w)` for one warpgroup of a
    /// partition that takes turns (run as one thread per warpgroup).
    pub role: String,
    pub state: PartitionState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionState {
    Finished,
    Blocked(BlockedAt),
    /// At a `turn.take` (location), while it is warpgroup `turn_of`'s
    /// turn (or `held`: that warpgroup took it and has not passed it).
    WaitsForTurn {
        loc: Loc,
        turn_of: u32,
        held: bool,
    },
    /// At a `cluster.sum` (location) of the CTA of `rank`: rank 1 waits
    /// for rank 0 to take its last partial, rank 0 for rank 1's partial.
    WaitsForPeer {
        loc: Loc,
        rank: usize,
    },
}

/// Where a partition waits, and the barrier it waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedAt {
    /// `aref.put` or `aref.get`.
    pub op: String,
    pub loc: Loc,
    /// The aref's name in the printed IR (`%ring`).
    pub aref: String,
    pub iteration: i64,
    pub position: Position,
    /// `Empty` for a put, `Full` for a get.
    pub waits_for: WaitFor,
    /// The parity waited for.
    pub parity: u32,
    pub completed_phases: u64,
    pub pending_arrivals: u32,
    pub expected_arrivals: u32,
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.pid;
        write!(
            f,
            "deadlock in program ({x}, {y}, {z}): no partition of the ws op at {}:{} can move",
            self.ws_loc.line, self.ws_loc.col
        )?;
        for p in &self.partitions {
            write!(f, "\n  partition {} '{}': ", p.index, p.role)?;
            match &p.state {
                PartitionState::Finished => f.write_str("finished")?,
                PartitionState::WaitsForTurn { loc, turn_of, held } => write!(
                    f,
                    "waits at turn.take (loc {}:{}) while warpgroup {turn_of} {} the turn",
                    loc.line,
                    loc.col,
                    if *held { "holds" } else { "has" }
                )?,
                PartitionState::WaitsForPeer { loc, rank } => write!(
                    f,
                    "waits at cluster.sum (loc {}:{}) for {}",
                    loc.line,
                    loc.col,
                    if *rank == 0 {
                        "the rank-1 CTA's partial"
                    } else {
                        "the rank-0 CTA to take the last partial"
                    }
                )?,
                PartitionState::Blocked(b) => {
                    let barrier = match b.waits_for {
                        WaitFor::Empty => "empty",
                        WaitFor::Full => "full",
                    };
                    write!(
                        f,
                        "blocked at {} {} (loc {}:{}), iteration {} (slot {}, round {}): \
                         waits for parity {} of the slot's '{barrier}' barrier, which has \
                         completed {} phase(s) and misses {} of {} arrival(s)",
                        b.op,
                        b.aref,
                        b.loc.line,
                        b.loc.col,
                        b.iteration,
                        b.position.slot,
                        b.position.round,
                        b.parity,
                        b.completed_phases,
                        b.pending_arrivals,
                        b.expected_arrivals
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// Runs `func` over `grid` like [`tawa_ir::interp::run_grid`], running the
/// partitions of every `ws` op concurrently under a seeded random
/// scheduler (see the module documentation).
pub fn simulate_grid(
    func: &Function,
    args: &[ArgValue],
    grid: [u32; 3],
    mem: &mut Memory,
    opts: &SimOptions,
) -> Result<SimStats, SimError> {
    let mut host = ProgramHost {
        mem,
        rings: Vec::new(),
        sched: Scheduler {
            rng: SplitMix64(opts.seed),
            stats: SimStats::default(),
        },
        check_released_reads: opts.check_released_reads,
        deadlock: None,
        creates: Vec::new(),
        waiting: None,
        partials: Partials::new(),
    };
    let interp_opts = InterpOptions {
        max_steps: opts.max_steps,
    };
    match run_grid_with_host(func, args, grid, &mut host, &interp_opts) {
        Ok(()) if host.waiting.is_some() => Err(SimError::Program(InterpError {
            message: "a kernel of CTA pairs launched with an odd number of programs along x".into(),
            op: "ws".into(),
            loc: Loc::UNKNOWN,
            pid: host.waiting.map_or([0; 3], |c| c.pid),
        })),
        Ok(()) if !host.partials.is_empty() => {
            let mut left: Vec<[u32; 3]> = host.partials.keys().copied().collect();
            left.sort_unstable();
            Err(SimError::Program(InterpError {
                message: format!("stream-K partial sums put and never taken (programs {left:?})"),
                op: "stream_k.put".into(),
                loc: Loc::UNKNOWN,
                pid: left[0],
            }))
        }
        Ok(()) => Ok(host.sched.stats),
        Err(e) => Err(match host.deadlock.take() {
            Some(d) => SimError::Deadlock(d),
            None => SimError::Program(e),
        }),
    }
}

/// splitmix64: a small, well-mixed generator; good enough to pick
/// partitions, and it keeps the crate free of dependencies.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), up to a negligible modulo bias.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The seeded choices and their statistics, kept across `ws` runs.
#[derive(Clone, Debug)]
struct Scheduler {
    rng: SplitMix64,
    stats: SimStats,
}

/// The host of a program's body: global memory, `aref.create`, and the
/// `ws` ops it reaches.
struct ProgramHost<'m> {
    mem: &'m mut Memory,
    /// Rings by aref number.
    rings: Vec<Ring>,
    sched: Scheduler,
    check_released_reads: bool,
    /// The deadlock behind the error a `ws` op returned.
    deadlock: Option<Box<Deadlock>>,
    /// Per ring (aref number): the `aref.create` that made it, which
    /// pairs a CTA's ring with its peer's.
    creates: Vec<Op>,
    /// In a kernel of CTA pairs: the rank-0 program stopped at its `ws`
    /// op, waiting for its peer.
    waiting: Option<Cta>,
    /// Stream-K partial sums put and not yet taken, by program.
    partials: Partials,
}

/// Stream-K partial sums by the program that put them.
type Partials = std::collections::HashMap<[u32; 3], Vec<RVal>>;

/// One program at its `ws` op.
struct Cta {
    pid: [u32; 3],
    env: Vec<Option<RVal>>,
}

impl Host for ProgramHost<'_> {
    fn memory(&mut self) -> &mut Memory {
        self.mem
    }

    fn aref_create(&mut self, op: Op, ty: &Type) -> Result<RVal, String> {
        let Type::Aref { depth, buffers } = ty else {
            return Err(format!("aref.create of type {ty}"));
        };
        let id = u32::try_from(self.rings.len()).map_err(|_| "too many arefs".to_string())?;
        self.rings.push(Ring::new(*depth, buffers.clone()));
        self.creates.push(op);
        Ok(RVal::Aref(id))
    }

    fn aref_put(&mut self, _: Op, _: u32, _: i64, _: Vec<RVal>) -> Result<(), String> {
        Err(OUTSIDE_WS.into())
    }

    fn aref_get(&mut self, _: Op, _: u32, _: i64) -> Result<Vec<RVal>, String> {
        Err(OUTSIDE_WS.into())
    }

    fn aref_consumed(&mut self, _: Op, _: u32, _: i64) -> Result<(), String> {
        Err(OUTSIDE_WS.into())
    }

    fn read_view(&self, _: &SlotView) -> Result<RVal, String> {
        Err(OUTSIDE_WS.into())
    }

    fn warp_specialize(&mut self, ws: WsLaunch<'_>) -> Result<(), InterpError> {
        let func = ws.func;
        let cta = Cta {
            pid: ws.pid,
            env: ws.env,
        };
        // CTA pairs: those that share copies, and those that split K
        // (whose programs, in a launch of an even count, run a pair at a
        // time: harmless where they do not split, each then on its own
        // tiles).
        let paired = func.attrs.cluster == 2 || func.attrs.cluster_split_k && ws.grid[0] % 2 == 0;
        if !paired {
            return self.run_ws(func, ws.op, vec![cta], ws.grid, ws.max_steps);
        }
        let data = &func.ops[ws.op];
        let fail = |message: &str| InterpError {
            message: message.into(),
            op: "ws".into(),
            loc: data.loc,
            pid: ws.pid,
        };
        // Rank 0 returns from its ws op before it ran: nothing after the
        // op may depend on it.
        let last = func.block_of(ws.op).and_then(|b| {
            let ops = &func.blocks[b].ops;
            let at = ops.iter().position(|&o| o == ws.op)?;
            Some(
                ops[at + 1..]
                    .iter()
                    .all(|&o| matches!(func.ops[o].kind, OpKind::Return)),
            )
        });
        if last != Some(true) {
            return Err(fail(
                "a kernel of CTA pairs does work after its ws op (the simulator runs the pair's \
                 partitions together from there)",
            ));
        }
        if ws.pid[0] % 2 == 0 {
            if self.waiting.is_some() {
                return Err(fail("internal: two rank-0 programs wait for their peers"));
            }
            self.waiting = Some(cta);
            return Ok(());
        }
        let [x, y, z] = ws.pid;
        let first = match self.waiting.take() {
            Some(first) if first.pid == [x - 1, y, z] => first,
            _ => {
                return Err(fail(
                    "a rank-1 program without its rank-0 peer at its ws op",
                ))
            }
        };
        self.run_ws(func, ws.op, vec![first, cta], ws.grid, ws.max_steps)
    }
}

impl ProgramHost<'_> {
    /// Runs the partitions of `ws` op `op` of every program of `ctas` (one,
    /// or the two CTAs of a pair) together.
    fn run_ws(
        &mut self,
        func: &Function,
        op: Op,
        ctas: Vec<Cta>,
        grid: [u32; 3],
        max_steps: Option<u64>,
    ) -> Result<(), InterpError> {
        let data = &func.ops[op];
        let pid = ctas.last().map_or([0; 3], |c| c.pid);
        let fail = |message: String| InterpError {
            message,
            op: "ws".into(),
            loc: data.loc,
            pid,
        };
        let OpKind::WarpSpecialize { partitions } = &data.kind else {
            return Err(fail("warp_specialize called on another op".into()));
        };
        if partitions.len() != data.regions.len() {
            return Err(fail(format!(
                "{} partitions but {} regions",
                partitions.len(),
                data.regions.len()
            )));
        }
        // One thread per partition, or per warpgroup of a partition that
        // takes turns (each computes the partition's whole tiles: the
        // interpreter has no rows per warpgroup, and equal stores of equal
        // values are harmless), so that `turn.take` can block one
        // warpgroup while the other runs, as the named barriers do.
        let together = func.turn_partitions(op);
        let per_cta = agents_of(func, partitions, &data.regions, &together);
        let agents: Vec<Agent> = (0..ctas.len())
            .flat_map(|k| per_cta.iter().map(move |a| Agent { cta: k, ..*a }))
            .collect();
        let agents_in = |region: usize, cta: usize| -> Vec<usize> {
            (0..agents.len())
                .filter(|&a| agents[a].region == region && agents[a].cta == cta)
                .collect()
        };
        let mut roles_of = Vec::new();
        for (k, cta) in ctas.iter().enumerate() {
            let roles = ring_roles(func, &data.regions, &cta.env).map_err(fail)?;
            for (&aref, role) in &roles {
                let ring = self
                    .rings
                    .get_mut(aref as usize)
                    .ok_or_else(|| fail(format!("aref {aref} was never created")))?;
                let producer = match role.producer.map(|r| agents_in(r, k)).as_deref() {
                    None => None,
                    Some([one]) => Some(*one),
                    Some(_) => {
                        return Err(fail(
                            "a partition that puts into an aref takes turns between warpgroups"
                                .into(),
                        ))
                    }
                };
                let consumers: Vec<usize> = role
                    .consumers
                    .iter()
                    .flat_map(|&c| agents_in(c, k))
                    .collect();
                // Partitions that take turns with each other deal the rings
                // they read (`Function::turn_partitions`).
                let dealt = role.consumers.len() >= 2
                    && role.consumers.iter().all(|c| together.contains(c));
                // CTA pairs that split K keep their rings apart.
                let sharing = if func.attrs.cluster_split_k {
                    1
                } else {
                    ctas.len() as u32
                };
                ring.attach_in_cluster(producer, &consumers, dealt, sharing)
                    .map_err(fail)?;
            }
            roles_of.push(roles);
        }
        // A CTA's ring and its peer's: made by the same aref.create.
        let mut peer = std::collections::HashMap::new();
        if let ([r0, r1], false) = (roles_of.as_slice(), func.attrs.cluster_split_k) {
            for &a in r0.keys() {
                let b = r1
                    .keys()
                    .copied()
                    .find(|&b| self.creates.get(b as usize) == self.creates.get(a as usize))
                    .ok_or_else(|| fail(format!("aref {a} has no ring in the peer CTA")))?;
                peer.insert(a, b);
                peer.insert(b, a);
            }
        }
        let shared = Shared {
            func,
            mem: &mut *self.mem,
            rings: std::mem::take(&mut self.rings),
            parts: agents
                .iter()
                .map(|a| {
                    let role = match a.warpgroups {
                        _ if a.domain != a.region => partitions[a.region].role.clone(),
                        1 => partitions[a.region].role.clone(),
                        _ => format!("{} (warpgroup {})", partitions[a.region].role, a.warpgroup),
                    };
                    Part {
                        role: if ctas.len() > 1 {
                            format!("{role} of CTA {}", a.cta)
                        } else {
                            role
                        },
                        status: Status::Ready,
                    }
                })
                .collect(),
            // Per CTA: one per partition, and one for the partitions that
            // take turns with each other.
            turns: vec![vec![TurnState::default(); partitions.len() + 1]; ctas.len()],
            peer,
            agents: agents.clone(),
            exchanges: Default::default(),
            exchanged: Default::default(),
            partials: std::mem::take(&mut self.partials),
            turn: Turn::Nobody,
            sched: self.sched.clone(),
            pid,
            ws_loc: data.loc,
            failure: None,
            deadlock: None,
        };
        let sync = SyncState {
            state: Mutex::new(shared),
            turn_changed: Condvar::new(),
        };
        let check = self.check_released_reads;
        let mut panic = None;
        thread::scope(|scope| {
            let handles: Vec<_> = agents
                .iter()
                .enumerate()
                .map(|(me, agent)| {
                    let env = ctas[agent.cta].env.clone();
                    let sync = &sync;
                    let run = PartitionRun {
                        func,
                        block: data.regions[agent.region],
                        env,
                        me,
                        agent: *agent,
                        pid: ctas[agent.cta].pid,
                        grid,
                        max_steps,
                        check_released_reads: check,
                    };
                    scope.spawn(move || run.run(sync))
                })
                .collect();
            {
                let mut g = sync.lock();
                let first = g.pick();
                g.turn = first;
                sync.turn_changed.notify_all();
            }
            for h in handles {
                if let Err(p) = h.join() {
                    panic.get_or_insert(p);
                }
            }
        });
        if let Some(p) = panic {
            // A panic is a bug of the simulator or interpreter, not of the
            // IR: let it surface as one, now that no thread is left waiting.
            std::panic::resume_unwind(p);
        }
        let shared = sync
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        self.rings = shared.rings;
        self.partials = shared.partials;
        for &aref in roles_of.iter().flat_map(|r| r.keys()) {
            self.rings[aref as usize].retire();
        }
        self.sched = shared.sched;
        self.sched.stats.ws_runs += 1;
        if let Some(d) = shared.deadlock {
            let message = d.to_string();
            self.deadlock = Some(d);
            return Err(fail(message));
        }
        match shared.failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

const OUTSIDE_WS: &str = "aref op outside every ws partition";

/// `own + peer`, element by element, rounded to f32: rank 0's result of
/// a `cluster.sum`, and a `stream_k.take`'s.
fn add_f32(own: &RVal, peer: &RVal) -> Result<RVal, String> {
    use tawa_ir::interp::value::Data;
    match (own, peer) {
        (RVal::Tile(a), RVal::Tile(b)) if a.shape == b.shape => match (&a.data, &b.data) {
            (Data::F(x), Data::F(y)) if x.len() == y.len() => {
                let mut sum = a.clone();
                sum.data = Data::F(
                    x.iter()
                        .zip(y)
                        .map(|(&p, &q)| f64::from(p as f32 + q as f32))
                        .collect(),
                );
                Ok(RVal::Tile(sum))
            }
            _ => Err("partial sums of tiles that are not f32 alike".into()),
        },
        _ => Err("partial sums of values that are not tiles of one shape".into()),
    }
}

/// Rings `a` and `b` (distinct) of `rings`, both mutable.
fn two_rings(rings: &mut [Ring], a: u32, b: u32) -> Result<(&mut Ring, &mut Ring), String> {
    let (a, b) = (a as usize, b as usize);
    if a == b || a.max(b) >= rings.len() {
        return Err(format!("rings {a} and {b} are not two rings of the run"));
    }
    if a < b {
        let (lo, hi) = rings.split_at_mut(b);
        Ok((&mut lo[a], &mut hi[0]))
    } else {
        let (lo, hi) = rings.split_at_mut(a);
        Ok((&mut hi[0], &mut lo[b]))
    }
}

/// One simulated thread of a `ws` op: a partition, or one warpgroup of a
/// partition that takes turns.
#[derive(Clone, Copy, Debug)]
struct Agent {
    /// The partition (region index).
    region: usize,
    /// Its place among the warpgroups that take turns with it (its
    /// partition's, or the partitions' that take turns with each other).
    warpgroup: u32,
    /// Warpgroups of the partition that run as threads of their own (1
    /// when it takes no turns), or the partitions that take turns with
    /// each other.
    warpgroups: u32,
    /// The [`TurnState`] its turns go by: its partition's, or, for
    /// partitions that take turns with each other, the one after every
    /// partition's.
    domain: usize,
    /// Which program of the run it belongs to: 0, or 1 for the rank-1 CTA
    /// of a pair.
    cta: usize,
}

/// The threads of a `ws` op's run, partitions in order; `together` are
/// the partitions that take turns with each other.
fn agents_of(
    func: &Function,
    partitions: &[tawa_ir::Partition],
    regions: &[Block],
    together: &[usize],
) -> Vec<Agent> {
    let mut agents = Vec::new();
    for (region, (p, &block)) in partitions.iter().zip(regions).enumerate() {
        if let Some(k) = together.iter().position(|&t| t == region) {
            agents.push(Agent {
                region,
                warpgroup: k as u32,
                warpgroups: together.len() as u32,
                domain: partitions.len(),
                cta: 0,
            });
            continue;
        }
        let mut turns = false;
        func.walk_block(block, &mut |o| turns |= func.ops[o].kind.is_turn());
        let warpgroups = if turns { (p.num_warps / 4).max(1) } else { 1 };
        agents.extend((0..warpgroups).map(|warpgroup| Agent {
            region,
            warpgroup,
            warpgroups,
            domain: region,
            cta: 0,
        }));
    }
    agents
}

/// Whose turn it is among the warpgroups of one partition.
#[derive(Clone, Copy, Debug, Default)]
struct TurnState {
    /// The warpgroup whose turn it is (or who holds it).
    of: u32,
    /// Whether that warpgroup took it and has not passed it yet.
    held: bool,
}

/// The partitions that put into and read from one aref in a `ws` op.
#[derive(Debug, Default)]
struct RingRole {
    producer: Option<usize>,
    consumers: Vec<usize>,
}

/// Which partition puts into and which get from each aref the partitions
/// use, keyed by aref number (the verifier's placement rules, checked
/// again here because unverified IR may reach the simulator).
fn ring_roles(
    func: &Function,
    regions: &[Block],
    env: &[Option<RVal>],
) -> Result<std::collections::BTreeMap<u32, RingRole>, String> {
    let mut roles: std::collections::BTreeMap<u32, RingRole> = Default::default();
    for (p, &region) in regions.iter().enumerate() {
        let mut problem = None;
        func.walk_block(region, &mut |op| {
            let data = &func.ops[op];
            let put = match data.kind {
                OpKind::ArefPut => true,
                OpKind::ArefGet | OpKind::ArefConsumed => false,
                _ => return,
            };
            let aref = data
                .operands
                .first()
                .and_then(|v| env.get(v.index()))
                .and_then(|v| match v {
                    Some(RVal::Aref(id)) => Some(*id),
                    _ => None,
                });
            let Some(aref) = aref else {
                problem.get_or_insert("an aref op's aref is not defined before the ws op");
                return;
            };
            let role = roles.entry(aref).or_default();
            if put {
                match role.producer {
                    Some(q) if q != p => {
                        problem.get_or_insert("an aref has puts in two partitions");
                    }
                    _ => role.producer = Some(p),
                }
            } else if !role.consumers.contains(&p) {
                role.consumers.push(p);
            }
        });
        if let Some(problem) = problem {
            return Err(problem.into());
        }
    }
    // One partition alone is a software-pipelined loop, putting ahead of
    // its own gets (the crate documentation).
    for role in roles.values().filter(|_| regions.len() > 1) {
        if let Some(p) = role.producer {
            if role.consumers.contains(&p) {
                return Err("an aref's producer partition also reads it".into());
            }
        }
    }
    Ok(roles)
}

/// Whose turn it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Turn {
    /// Before the first choice.
    Nobody,
    Run(usize),
    /// Every partition finished.
    Done,
    /// A partition failed or the op deadlocked: everyone stops.
    Abort,
}

#[derive(Clone, Debug)]
enum Status {
    Ready,
    Blocked(Wait),
    /// At a `turn.take` (the op), until its warpgroup's turn comes.
    WaitsForTurn(Op),
    /// At a `cluster.sum` (the op) until the pair's channel of the op is
    /// empty (rank 1) or full (rank 0).
    WaitsForPeer(Op),
    Finished,
    Failed,
}

/// An aref op waiting for its barrier.
#[derive(Clone, Debug)]
struct Wait {
    op: Op,
    aref: u32,
    waits_for: WaitFor,
    iteration: i64,
}

struct Part {
    role: String,
    status: Status,
}

/// Everything the partitions of one `ws` run share, behind one lock.
struct Shared<'a> {
    func: &'a Function,
    mem: &'a mut Memory,
    rings: Vec<Ring>,
    parts: Vec<Part>,
    /// Per CTA, per partition: whose ping-pong turn it is.
    turns: Vec<Vec<TurnState>>,
    /// Each ring's peer (the other CTA's ring of the same `aref.create`)
    /// in a run of a CTA pair.
    peer: std::collections::HashMap<u32, u32>,
    /// The agent behind each entry of `parts`.
    agents: Vec<Agent>,
    /// Per `cluster.sum` op: rank 1's partial not yet taken by rank 0.
    exchanges: std::collections::HashMap<Op, RVal>,
    /// The `cluster.sum` ops each agent has exchanged through: once
    /// each, as the backend's exchange reuses a ring's slots, idle only
    /// after a split pair's one tile.
    exchanged: std::collections::HashSet<(Op, usize)>,
    /// Stream-K partial sums put and not yet taken, by program.
    partials: Partials,
    turn: Turn,
    sched: Scheduler,
    pid: [u32; 3],
    ws_loc: Loc,
    /// The first error of a partition, which aborted the others.
    failure: Option<InterpError>,
    deadlock: Option<Box<Deadlock>>,
}

impl Shared<'_> {
    fn runnable(&self, i: usize) -> bool {
        let part = &self.parts[i];
        match &part.status {
            Status::Ready => true,
            Status::WaitsForTurn(_) => {
                let agent = self.agents[i];
                let t = self.turns[agent.cta][agent.domain];
                t.of == agent.warpgroup && !t.held
            }
            Status::Blocked(w) => self
                .rings
                .get(w.aref as usize)
                .is_some_and(|r| r.ready(w.waits_for, w.iteration)),
            Status::WaitsForPeer(op) => {
                self.exchanges.contains_key(op) == (self.agents[i].cta == 0)
            }
            Status::Finished | Status::Failed => false,
        }
    }

    /// The scheduler's decision: a random runnable partition, `Done`, or
    /// `Abort` with the deadlock recorded.
    fn pick(&mut self) -> Turn {
        let candidates: Vec<usize> = (0..self.parts.len())
            .filter(|&i| self.runnable(i))
            .collect();
        if candidates.is_empty() {
            if self
                .parts
                .iter()
                .all(|p| matches!(p.status, Status::Finished))
            {
                return Turn::Done;
            }
            self.deadlock = Some(Box::new(self.deadlock_report()));
            return Turn::Abort;
        }
        let chosen = candidates[self.sched.rng.below(candidates.len())];
        let stats = &mut self.sched.stats;
        stats.decisions += 1;
        if self.turn != Turn::Run(chosen) {
            stats.switches += 1;
        }
        stats.schedule_hash = (stats.schedule_hash ^ (chosen as u64 + 1))
            .wrapping_mul(0x0000_0100_0000_01B3)
            .rotate_left(5);
        Turn::Run(chosen)
    }

    fn deadlock_report(&self) -> Deadlock {
        let names = tawa_ir::printer::value_names(self.func);
        let partitions = self
            .parts
            .iter()
            .enumerate()
            .map(|(index, p)| {
                let state = match &p.status {
                    Status::WaitsForTurn(op) => {
                        let a = self.agents[index];
                        let t = self.turns[a.cta][a.domain];
                        PartitionState::WaitsForTurn {
                            loc: self.func.ops[*op].loc,
                            turn_of: t.of,
                            held: t.held,
                        }
                    }
                    Status::WaitsForPeer(op) => PartitionState::WaitsForPeer {
                        loc: self.func.ops[*op].loc,
                        rank: self.agents[index].cta,
                    },
                    Status::Blocked(w) => {
                        let data = &self.func.ops[w.op];
                        let ring = &self.rings[w.aref as usize];
                        let position = Position::of(w.iteration, ring.depth());
                        let parity = match w.waits_for {
                            WaitFor::Empty => position.parity ^ 1,
                            WaitFor::Full => position.parity,
                        };
                        let barrier = ring.barrier(w.waits_for, w.iteration);
                        let aref = data
                            .operands
                            .first()
                            .and_then(|v| names.get(v))
                            .map_or_else(|| format!("#{}", w.aref), |n| format!("%{n}"));
                        PartitionState::Blocked(BlockedAt {
                            op: tawa_ir::printer::op_name(&data.kind),
                            loc: data.loc,
                            aref,
                            iteration: w.iteration,
                            position,
                            waits_for: w.waits_for,
                            parity,
                            completed_phases: barrier.map_or(0, |b| b.completed_phases()),
                            pending_arrivals: barrier.map_or(0, |b| b.pending_arrivals()),
                            expected_arrivals: barrier.map_or(0, |b| b.expected_arrivals()),
                        })
                    }
                    // With nobody runnable, every partition is blocked or
                    // finished (a failure aborts before the next choice).
                    _ => PartitionState::Finished,
                };
                PartitionReport {
                    index,
                    role: p.role.clone(),
                    state,
                }
            })
            .collect();
        Deadlock {
            pid: self.pid,
            ws_loc: self.ws_loc,
            partitions,
        }
    }
}

struct SyncState<'a> {
    state: Mutex<Shared<'a>>,
    turn_changed: Condvar,
}

type Guard<'s, 'a> = MutexGuard<'s, Shared<'a>>;

impl<'a> SyncState<'a> {
    fn lock(&self) -> Guard<'_, 'a> {
        // A poisoned lock means a partition panicked; the others only need
        // to see the abort it left behind.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until it is `me`'s turn (`Ok`) or the run aborts (`Err`);
    /// either way the lock is held on return.
    fn wait_turn<'s>(
        &'s self,
        guard: Guard<'s, 'a>,
        me: usize,
    ) -> Result<Guard<'s, 'a>, Guard<'s, 'a>> {
        let g = self
            .turn_changed
            .wait_while(guard, |s| s.turn != Turn::Run(me) && s.turn != Turn::Abort)
            .unwrap_or_else(PoisonError::into_inner);
        if g.turn == Turn::Abort {
            Err(g)
        } else {
            Ok(g)
        }
    }
}

/// One partition's thread.
struct PartitionRun<'f> {
    func: &'f Function,
    block: Block,
    env: Vec<Option<RVal>>,
    me: usize,
    agent: Agent,
    pid: [u32; 3],
    grid: [u32; 3],
    max_steps: Option<u64>,
    check_released_reads: bool,
}

impl PartitionRun<'_> {
    fn run(self, sync: &SyncState<'_>) {
        let _abort = AbortOnPanic { sync };
        let me = self.me;
        let guard = match sync.wait_turn(sync.lock(), me) {
            Ok(g) => g,
            Err(mut g) => {
                g.parts[me].status = Status::Failed;
                return;
            }
        };
        let mut host = PartitionHost {
            sync,
            guard: Some(guard),
            me,
            agent: self.agent,
            check_released_reads: self.check_released_reads,
            in_flight: VecDeque::new(),
        };
        let result = run_region(
            self.func,
            self.block,
            self.env,
            self.pid,
            self.grid,
            &mut host,
            self.max_steps,
        );
        let mut g = host.guard.take().unwrap_or_else(|| sync.lock());
        match result {
            Ok(()) => g.parts[me].status = Status::Finished,
            Err(e) => {
                g.parts[me].status = Status::Failed;
                // An aborted partition's error only echoes the abort.
                if g.turn != Turn::Abort {
                    g.failure = Some(e);
                    g.turn = Turn::Abort;
                }
            }
        }
        if g.turn != Turn::Abort {
            let next = g.pick();
            g.turn = next;
        }
        sync.turn_changed.notify_all();
    }
}

/// Turns a panicking partition into an abort, so that the others stop
/// waiting for a turn that would never come.
struct AbortOnPanic<'s, 'a> {
    sync: &'s SyncState<'a>,
}

impl Drop for AbortOnPanic<'_, '_> {
    fn drop(&mut self) {
        if thread::panicking() {
            let mut g = self.sync.lock();
            g.turn = Turn::Abort;
            self.sync.turn_changed.notify_all();
        }
    }
}

/// The host of one partition: holds the shared lock while the partition
/// runs and gives it up at scheduling points and blocking aref ops.
struct PartitionHost<'s, 'a> {
    sync: &'s SyncState<'a>,
    /// Always `Some` while the partition runs; `None` only inside
    /// [`PartitionHost::hand_over`].
    guard: Option<Guard<'s, 'a>>,
    me: usize,
    agent: Agent,
    check_released_reads: bool,
    /// This partition's async `dot` groups not yet retired by a
    /// `dot_wait`, oldest first, with the slot views each reads.
    in_flight: VecDeque<(Loc, Vec<SlotView>)>,
}

const ABORTED: &str = "stopped: another partition failed or the ws op deadlocked";

impl<'s, 'a> PartitionHost<'s, 'a> {
    fn state(&self) -> &Shared<'a> {
        self.guard
            .as_ref()
            .expect("a running partition holds the lock")
    }

    fn state_mut(&mut self) -> &mut Shared<'a> {
        self.guard
            .as_mut()
            .expect("a running partition holds the lock")
    }

    fn ring(&self, aref: u32) -> Result<&Ring, String> {
        self.state()
            .rings
            .get(aref as usize)
            .ok_or_else(|| format!("aref {aref} was never created"))
    }

    /// Gives the turn to `turn` and waits for it to come back.
    fn hand_over(&mut self, turn: Turn) -> Result<(), String> {
        let mut g = self
            .guard
            .take()
            .expect("a running partition holds the lock");
        g.turn = turn;
        if turn == Turn::Run(self.me) {
            self.guard = Some(g);
            return Ok(());
        }
        self.sync.turn_changed.notify_all();
        match self.sync.wait_turn(g, self.me) {
            Ok(g) => {
                self.guard = Some(g);
                Ok(())
            }
            Err(g) => {
                self.guard = Some(g);
                Err(ABORTED.into())
            }
        }
    }

    /// Blocks until the wait of an aref op succeeds.
    fn wait(
        &mut self,
        op: Op,
        aref: u32,
        waits_for: WaitFor,
        iteration: i64,
    ) -> Result<(), String> {
        let me = self.me;
        loop {
            if self.ring(aref)?.ready(waits_for, iteration) {
                self.state_mut().parts[me].status = Status::Ready;
                return Ok(());
            }
            let s = self.state_mut();
            s.parts[me].status = Status::Blocked(Wait {
                op,
                aref,
                waits_for,
                iteration,
            });
            let next = s.pick();
            self.hand_over(next)?;
        }
    }
}

impl Host for PartitionHost<'_, '_> {
    fn memory(&mut self) -> &mut Memory {
        self.state_mut().mem
    }

    fn wants_sync_points(&self) -> bool {
        true
    }

    fn sync_point(&mut self, _op: Op) -> Result<(), String> {
        let next = self.state_mut().pick();
        self.hand_over(next)
    }

    fn aref_create(&mut self, _: Op, _: &Type) -> Result<RVal, String> {
        Err("aref.create inside a ws partition".into())
    }

    fn aref_put(&mut self, op: Op, aref: u32, index: i64, values: Vec<RVal>) -> Result<(), String> {
        let me = self.me;
        self.ring(aref)?.check_put(me, index)?;
        self.wait(op, aref, WaitFor::Empty, index)?;
        self.state_mut().rings[aref as usize].put(me, index, values)
    }

    fn aref_get(&mut self, op: Op, aref: u32, index: i64) -> Result<Vec<RVal>, String> {
        let me = self.me;
        self.ring(aref)?.check_get(me, index)?;
        self.wait(op, aref, WaitFor::Full, index)?;
        self.state_mut().rings[aref as usize].get(aref, me, index)
    }

    fn aref_consumed(&mut self, _op: Op, aref: u32, index: i64) -> Result<(), String> {
        let me = self.me;
        self.ring(aref)?;
        // The release rule of the crate docs: a group that reads the slot
        // must have retired. On hardware the producer's next copy would
        // race with the tensor core still reading the slot.
        let reader = self
            .in_flight
            .iter()
            .find(|(_, reads)| reads.iter().any(|v| v.aref == aref && v.iteration == index));
        if let Some((loc, _)) = reader {
            return Err(format!(
                "aref.consumed releases iteration {index} while the async dot at {}:{} \
                 reading it is still in flight (retire it with a dot_wait first)",
                loc.line, loc.col
            ));
        }
        self.state_mut().rings[aref as usize].consumed(me, index)
    }

    fn aref_put_multicast(
        &mut self,
        op: Op,
        aref: u32,
        index: i64,
        values: Vec<RVal>,
        multicast: Vec<bool>,
    ) -> Result<(), String> {
        let me = self.me;
        self.ring(aref)?.check_put(me, index)?;
        self.wait(op, aref, WaitFor::Empty, index)?;
        let rank = self.agent.cta as u32;
        let s = self.state_mut();
        let peer = *s
            .peer
            .get(&aref)
            .ok_or("a multicast put outside a run of a CTA pair")?;
        let (local, other) = two_rings(&mut s.rings, aref, peer)?;
        put_paired(local, other, me, index, values, &multicast, rank)
    }

    fn aref_consumed_paired(
        &mut self,
        op: Op,
        aref: u32,
        index: i64,
        peer_has_tile: bool,
    ) -> Result<(), String> {
        self.aref_consumed(op, aref, index)?;
        let s = self.state_mut();
        // The peer's producer waits for this release before it
        // multicasts into this CTA's slot; without a peer tile this round
        // the count of both CTAs is made up here.
        let target = if peer_has_tile {
            *s.peer
                .get(&aref)
                .ok_or("a release of a CTA pair's ring outside a run of the pair")?
        } else {
            aref
        };
        s.rings[target as usize].release_remote(index)
    }

    fn turn_take(&mut self, op: Op) -> Result<(), String> {
        let (domain, wg, cta) = (self.agent.domain, self.agent.warpgroup, self.agent.cta);
        let me = self.me;
        loop {
            let s = self.state_mut();
            let t = &mut s.turns[cta][domain];
            if t.of == wg && !t.held {
                t.held = true;
                s.parts[me].status = Status::Ready;
                return Ok(());
            }
            s.parts[me].status = Status::WaitsForTurn(op);
            let next = s.pick();
            self.hand_over(next)?;
        }
    }

    fn turn_pass(&mut self, _op: Op) -> Result<(), String> {
        let (domain, wg) = (self.agent.domain, self.agent.warpgroup);
        let groups = self.agent.warpgroups;
        let cta = self.agent.cta;
        let t = &mut self.state_mut().turns[cta][domain];
        if t.of != wg || !t.held {
            return Err(format!(
                "turn.pass by warpgroup {wg}, which does not hold the turn (warpgroup {} {})",
                t.of,
                if t.held { "holds it" } else { "is to take it" }
            ));
        }
        *t = TurnState {
            of: (wg + 1) % groups,
            held: false,
        };
        Ok(())
    }

    fn cluster_sum(&mut self, op: Op, partial: RVal, split: i64) -> Result<RVal, String> {
        let me = self.me;
        let rank = self.agent.cta;
        if split == 1 {
            return Ok(partial);
        }
        let paired = self.state().agents.iter().any(|a| a.cta == 1);
        if split != 2 || !paired || !self.state().func.attrs.cluster_split_k {
            return Err(format!(
                "cluster.sum of {split} CTAs a tile outside a run of a CTA pair that splits K"
            ));
        }
        if !self.state_mut().exchanged.insert((op, me)) {
            return Err(
                "a second cluster.sum of a split pair: a launch that splits K gives \
                        each pair one tile (the exchange reuses the ring's slots)"
                    .into(),
            );
        }
        loop {
            let s = self.state_mut();
            if s.exchanges.contains_key(&op) == (rank == 0) {
                s.parts[me].status = Status::Ready;
                if rank == 1 {
                    s.exchanges.insert(op, partial.clone());
                    return Ok(partial);
                }
                let peer = s.exchanges.remove(&op).expect("checked: full");
                return add_f32(&partial, &peer);
            }
            s.parts[me].status = Status::WaitsForPeer(op);
            let next = s.pick();
            self.hand_over(next)?;
        }
    }

    fn stream_k_put(&mut self, _op: Op, pid: [u32; 3], sums: Vec<RVal>) -> Result<(), String> {
        if !self.state().func.attrs.stream_k {
            return Err("stream_k.put in a kernel that is not stream-K".into());
        }
        if self.state_mut().partials.insert(pid, sums).is_some() {
            return Err(format!(
                "program {pid:?} puts stream-K partial sums twice (its workspace slot holds one)"
            ));
        }
        Ok(())
    }

    fn stream_k_take(
        &mut self,
        _op: Op,
        pid: [u32; 3],
        from: i64,
        sums: Vec<RVal>,
    ) -> Result<Vec<RVal>, String> {
        let x = u32::try_from(from)
            .ok()
            .filter(|&x| x > pid[0])
            .ok_or_else(|| {
                format!(
                    "program {pid:?} takes the stream-K sums of program x = {from}: only \
                     programs of higher x may be waited for"
                )
            })?;
        let key = [x, pid[1], pid[2]];
        let theirs = self.state_mut().partials.remove(&key).ok_or_else(|| {
            format!(
                "program {pid:?} takes the stream-K sums of program {key:?}, which put none \
                 (it ran already: it never will)"
            )
        })?;
        if theirs.len() != sums.len() {
            return Err(format!(
                "stream_k.take of {} sums from a put of {}",
                sums.len(),
                theirs.len()
            ));
        }
        sums.iter()
            .zip(&theirs)
            .map(|(own, peer)| add_f32(own, peer))
            .collect()
    }

    fn mma_issued(&mut self, loc: Loc, reads: Vec<SlotView>) -> Result<(), String> {
        self.in_flight.push_back((loc, reads));
        Ok(())
    }

    fn mma_wait(&mut self, pending: u32) -> Result<(), String> {
        while self.in_flight.len() > pending as usize {
            self.in_flight.pop_front();
        }
        Ok(())
    }

    fn read_view(&self, view: &SlotView) -> Result<RVal, String> {
        self.ring(view.aref)?
            .read(view, self.me, self.check_released_reads)
    }

    fn warp_specialize(&mut self, ws: WsLaunch<'_>) -> Result<(), InterpError> {
        Err(InterpError {
            message: "ws inside a partition of another ws".into(),
            op: "ws".into(),
            loc: ws.func.ops[ws.op].loc,
            pid: ws.pid,
        })
    }
}
