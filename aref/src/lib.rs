//! Asynchronous references (arefs): their semantics, and a CPU simulator of
//! warp-specialized tile IR.
//!
//! This documentation is the reference that the aref lowering (shared
//! memory rings and mbarrier PTX: `tawa_backend`'s `aref_lower.rs`, inside
//! `emit_cuda`) implements and that the simulator ([`sim`]) checks
//! programs against.
//!
//! # In the IR
//!
//! ```text
//! %ring = aref.create : aref<2 x (tensor<64x32xf16>, tensor<32x64xf16>)>
//! ws {
//!   partition producer (num_warps = 4, regs = 40) {
//!     ... aref.put %ring, %i, %a, %b ...
//!     yield
//!   }
//!   partition consumer (num_warps = 8, regs = 232) {
//!     ... %a_1, %b_1 = aref.get %ring, %i : tensor<64x32xf16>, tensor<32x64xf16>
//!     ... %acc_2 = dot %a_1, %b_1, %acc_1 : tensor<64x64xf32>
//!     ... aref.consumed %ring, %i ...
//!     yield
//!   }
//! }
//! ```
//!
//! A `ws` op runs its partitions concurrently (each a set of warpgroups
//! with its own register budget) and ends when all have ended. An aref
//! `aref<D x (T1, ..., Tn)>` is a ring of `D` slots in shared memory; every
//! slot holds one buffer of each `Ti`, so tiles that are consumed together
//! (the A and B tiles of one K step) travel together. The verifier's rules
//! 9–11 (`tawa_ir::verifier`) say where arefs and their ops may appear:
//! created before the `ws` op, one producing partition, one or more
//! consuming partitions, all uses in one `ws` op.
//!
//! A `ws` op with a single partition is a software-pipelined loop
//! (`num_stages` without warp specialization): that partition both puts
//! and gets, its puts running a fixed number of iterations ahead of its
//! gets, fewer than the ring's depth. Everything below holds unchanged;
//! a put that had to wait for its own partition's release would wait
//! forever, and the simulator reports it as a deadlock.
//!
//! # Barriers
//!
//! Each slot `s` has two mbarriers, `full[s]` and `empty[s]`, initialized
//! before the partitions start. An mbarrier ([`mbarrier::Mbarrier`]) counts
//! arrivals; the last expected arrival of a phase completes it and starts
//! the next. A wait names only the *parity* of the phase it waits for
//! (`mbarrier.try_wait.parity`) and succeeds once the barrier's current
//! phase has the other parity; on a fresh barrier (phase 0 in progress) a
//! wait for parity 1 succeeds at once.
//!
//! Arrival counts:
//! - `full[s]`: 1. The producer elects one thread that arrives after the
//!   slot is written. With TMA, that thread's arrive is
//!   `mbarrier.arrive.expect_tx` with the slot's byte count and the copy
//!   engine's `complete_tx` finishes the phase.
//! - `empty[s]`: one arrival per consuming *warp* (its lane 0, after that
//!   warp's reads are done), i.e. the sum of `num_warps` over the consuming
//!   partitions (of a dealt ring, below: one partition's warps). A warp's `wgmma.wait_group` retires that warp's share of
//!   its warpgroup's WGMMAs, so a warp may release on its own, without a
//!   barrier across the warpgroup first; the slot is free once every warp
//!   has. The simulator treats a partition as one unit and expects one
//!   arrival per consuming partition; the two agree because every warp of
//!   a partition executes the partition's `aref.consumed`.
//!
//! # Iterations, slots and phases
//!
//! Every aref op names an iteration index `i >= 0`. Iteration `i` uses
//! slot `s = i % D` in round `r = i / D` (the slot's uses before it), and
//! its phase parity is `k = r & 1`.
//!
//! Contract: the producer's puts carry `i = 0, 1, 2, ...` in its program
//! order; every consuming partition gets every iteration, in the same
//! order, and releases (`aref.consumed`) exactly the iterations it got, in
//! the order it got them. Hence when the put of iteration `i` may go on,
//! `empty[s]` has completed exactly `r` phases, and when its gets may go
//! on, `full[s]` has completed exactly `r + 1`: a waiter is never two
//! phases away, which is what lets a parity stand for the phase. A
//! persistent kernel whose `ws` loops over tiles keeps counting
//! across tiles; it does not restart at 0.
//!
//! **Dealt rings.** One-warpgroup partitions that take turns with each
//! other (`Function::turn_partitions`: a GEMM's tile ping-pong, two
//! consumer warpgroups on alternate tiles) deal the rings they read: every
//! iteration is got and released by exactly one of them, each getting
//! increasing iterations (it skips the other's) and releasing them in the
//! order it got them. `empty[s]` then expects one partition's arrivals (its
//! warps'), not the sum. The parity argument above needs one more
//! condition, which the turns give: a consumer gets iteration `i` only
//! after every iteration below `i - D` was put (the other consumer got them
//! all before passing the turn), so `full[s]` is never two phases behind.
//! The simulator checks it: a get whose wait passes while the slot holds
//! another iteration is an error.
//!
//! - `aref.put %r, %i, %v...`: wait `empty[s]` for parity `k ^ 1`; write
//!   the buffers of slot `s`; arrive on `full[s]`. The producer waits on
//!   the *opposite* parity so that its first `D` waits (round 0, parity 1)
//!   pass on fresh barriers, and from round 1 on it waits for the phase
//!   that the consumers' releases of round `r - 1` completed — CUTLASS's
//!   `PipelineState` convention.
//! - `aref.get %r, %i -> %v...`: wait `full[s]` for parity `k`. The slot is
//!   now borrowed: the results are *views* of its buffers (WGMMA reads the
//!   operands straight from shared memory), read wherever they are used.
//! - `aref.consumed %r, %i`: arrive on `empty[s]`. Only after every read
//!   of the slot by the partition has finished — including asynchronous
//!   ones: a WGMMA reads shared memory after it issues, so the release
//!   must follow a `wgmma.wait_group N` that retires every group reading
//!   the slot. With `P` MMA groups kept in flight, iteration `i` releases
//!   the slot of iteration `i - P` after `wait_group(P)`, never its own,
//!   and `D` must exceed `P`. Releasing earlier lets the producer overwrite
//!   operands still being read: the slot race the simulator exposes.
//!
//! One aref carrying several buffers has one barrier pair per slot, not
//! one per buffer: a TMA put issues one copy per buffer against the same
//! `full[s]`, whose `expect_tx` is the summed byte count of all buffers
//! (tile elements × element size, each buffer counted whole even where
//! TMA zero-fills out-of-bounds rows, because the copy engine counts the
//! full box).
//!
//! # Fences the lowering needs
//!
//! - After `mbarrier.init` of all slots: `fence.mbarrier_init.release.cluster`
//!   (or a CTA barrier) before any partition or the copy engine uses them;
//!   this happens once, before the partitions branch.
//! - `mbarrier.arrive` releases and `mbarrier.try_wait` acquires (their
//!   default `.release`/`.acquire` semantics at CTA scope), so generic
//!   writes before an arrive are visible to generic reads after the
//!   matching wait; no extra fence for generic-to-generic hand-offs.
//! - A put written with ordinary stores (`st.shared`, `stmatrix`) that the
//!   consumer reads through the async proxy (WGMMA descriptors, TMA store):
//!   every writing thread executes `fence.proxy.async.shared::cta` after
//!   its stores, the writers synchronize (a named barrier), and then the
//!   elected thread arrives on `full[s]`.
//! - A TMA put needs no data fence: the copy engine's `complete_tx` on
//!   `full[s]` makes its writes visible to threads that wait on it.
//! - A consumer that reads a slot with ordinary loads (`ld.shared`,
//!   `ldmatrix`) which TMA will refill: `fence.proxy.async.shared::cta`
//!   after the reads and before the arrive on `empty[s]`.
//! - A consumer reading through WGMMA: `wgmma.fence` before the first WGMMA
//!   that reads registers written since, `wgmma.commit_group` after each
//!   group, and `wgmma.wait_group` before `aref.consumed` as above.
//!
//! # Simulation
//!
//! [`simulate_grid`] runs a kernel over its grid like the interpreter,
//! running the partitions of every `ws` op concurrently under a seeded
//! random scheduler, with aref ops blocking as the mbarriers above would
//! ([`ring::Ring`]). It reports a state in which no partition can move as a
//! [`sim::Deadlock`] with every partition's position, and a broken contract
//! (an index out of order, a release of a slot not held, a read after
//! release) as an error at the op. Comparing its outputs with the
//! interpreter's on the unpartitioned kernel checks, without a GPU, that
//! partitioning and pipelining preserve results. See [`sim`] for the
//! design.

pub mod mbarrier;
pub mod ring;
pub mod sim;

pub use sim::{simulate_grid, Deadlock, PartitionState, SimError, SimOptions, SimStats};
