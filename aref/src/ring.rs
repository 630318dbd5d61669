//! The state of one aref at run time, with the semantics of the crate
//! documentation: slots with a `full`/`empty` mbarrier pair each, the
//! buffers last written to every slot, and what each partition has put,
//! got and released. Nothing here blocks: callers ask whether a put or get
//! may proceed (`*_ready`) and wait themselves.

use std::collections::{BTreeSet, VecDeque};

use tawa_ir::interp::value::{is_float_elem, Data, Num, RVal, SlotView, Tile};
use tawa_ir::{Elem, ScalarType, Type};

use crate::mbarrier::Mbarrier;

/// Slot, round and phase parity of iteration `i` of a ring of `depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub slot: u32,
    /// `i / depth`: how many times the slot was used before.
    pub round: i64,
    /// `round & 1`: the parity of the phase that iteration `i` completes on
    /// the slot's `full` barrier (and that consumers wait for).
    pub parity: u32,
}

impl Position {
    pub fn of(index: i64, depth: u32) -> Position {
        let round = index / depth as i64;
        Position {
            slot: (index % depth as i64) as u32,
            round,
            parity: (round & 1) as u32,
        }
    }
}

/// Which side of a slot an op waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitFor {
    /// `aref.put`: the slot's `empty` barrier, parity `round & 1 ^ 1`.
    Empty,
    /// `aref.get`: the slot's `full` barrier, parity `round & 1`.
    Full,
}

#[derive(Clone, Debug)]
struct Slot {
    full: Mbarrier,
    empty: Mbarrier,
    /// The iteration last written and its buffers.
    contents: Option<(i64, Vec<RVal>)>,
}

/// One consuming partition's progress: it holds the iterations of
/// `held` (got, not released yet, oldest first).
#[derive(Clone, Debug)]
struct Consumer {
    partition: usize,
    /// One past the last iteration it got (0 before any).
    next_get: i64,
    held: VecDeque<i64>,
}

/// One aref at run time.
#[derive(Clone, Debug)]
pub struct Ring {
    depth: u32,
    buffers: Vec<Type>,
    slots: Vec<Slot>,
    /// The partition that puts, once the `ws` op using the ring started.
    producer: Option<usize>,
    next_put: i64,
    consumers: Vec<Consumer>,
    /// Whether the ring is dealt between its consumers (partitions that
    /// take turns, a tile ping-pong): each iteration goes to exactly one
    /// of them, and `empty` expects that one's arrival.
    dealt: bool,
    /// Of a dealt ring: the iterations got so far, at or above every
    /// consumer's `next_get` (lower ones can be got by no one again).
    dealt_out: BTreeSet<i64>,
    /// Gets so far, over all consumers.
    gets: i64,
}

impl Ring {
    /// A ring as `aref.create` makes it; [`Ring::attach`] names its
    /// partitions when its `ws` op starts.
    pub fn new(depth: u32, buffers: Vec<Type>) -> Ring {
        Ring {
            depth: depth.max(1),
            buffers,
            slots: Vec::new(),
            producer: None,
            next_put: 0,
            consumers: Vec::new(),
            dealt: false,
            dealt_out: BTreeSet::new(),
            gets: 0,
        }
    }

    /// Initializes the barriers for the `ws` op in which partition
    /// `producer` puts and `consumers` (distinct partitions) get and
    /// release: `full` expects the producer's one arrival, `empty` one per
    /// consuming partition, or one when the ring is `dealt` between them
    /// (each iteration got and released by one of them, in increasing
    /// order within each). (Without a producer or consumers the ring still
    /// exists, and whoever waits on it waits forever, as on hardware.)
    /// When the `ws` op runs again (inside a loop), the barriers and the
    /// iteration counts go on where they stopped, as on hardware, where
    /// the barriers are initialized once per kernel.
    pub fn attach(
        &mut self,
        producer: Option<usize>,
        consumers: &[usize],
        dealt: bool,
    ) -> Result<(), String> {
        self.attach_in_cluster(producer, consumers, dealt, 1)
    }

    /// [`Ring::attach`] for a ring of one CTA of a cluster of `ctas` whose
    /// producers multicast into each other's slots ([`put_paired`]):
    /// `empty` expects the consumers of every CTA, each releasing the
    /// slot in its own CTA and in its peer's ([`Ring::release_remote`]).
    pub fn attach_in_cluster(
        &mut self,
        producer: Option<usize>,
        consumers: &[usize],
        dealt: bool,
        ctas: u32,
    ) -> Result<(), String> {
        if !self.slots.is_empty() {
            let same = self.producer == producer
                && self.dealt == dealt
                && self.consumers.len() == consumers.len()
                && self
                    .consumers
                    .iter()
                    .zip(consumers)
                    .all(|(c, &p)| c.partition == p);
            return if same {
                Ok(())
            } else {
                Err("the aref is used by partitions of another ws op (each aref serves one)".into())
            };
        }
        let n = if dealt { 1 } else { consumers.len() as u32 } * ctas.max(1);
        self.dealt = dealt;
        self.slots = (0..self.depth)
            .map(|_| Slot {
                full: Mbarrier::new(1),
                empty: Mbarrier::new(n),
                contents: None,
            })
            .collect();
        self.producer = producer;
        self.consumers = consumers
            .iter()
            .map(|&partition| Consumer {
                partition,
                next_get: 0,
                held: VecDeque::new(),
            })
            .collect();
        Ok(())
    }

    /// Drops the slots' buffers after the ring's `ws` op ended if nothing
    /// put is still unreleased, so that a long grid does not keep every
    /// program's tiles; any later get waits for a new put.
    pub fn retire(&mut self) {
        let quiescent = self
            .consumers
            .iter()
            .all(|c| c.held.is_empty() && (self.dealt || c.next_get == self.next_put))
            && (!self.dealt || self.gets == self.next_put);
        if quiescent {
            for s in &mut self.slots {
                s.contents = None;
            }
        }
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn buffers(&self) -> &[Type] {
        &self.buffers
    }

    fn position(&self, index: i64) -> Position {
        Position::of(index, self.depth)
    }

    fn consumer(&self, partition: usize) -> Result<usize, String> {
        self.consumers
            .iter()
            .position(|c| c.partition == partition)
            .ok_or_else(|| "this partition does not consume the aref".to_string())
    }

    fn slot(&self, slot: u32) -> Result<&Slot, String> {
        self.slots
            .get(slot as usize)
            .ok_or_else(|| "the aref is used outside its ws op".to_string())
    }

    /// Whether the wait of a put (`Empty`) or get (`Full`) of `index`
    /// succeeds now.
    pub fn ready(&self, wait: WaitFor, index: i64) -> bool {
        let p = self.position(index);
        match (wait, self.slots.get(p.slot as usize)) {
            (WaitFor::Empty, Some(s)) => s.empty.try_wait_parity(p.parity ^ 1),
            (WaitFor::Full, Some(s)) => s.full.try_wait_parity(p.parity),
            (_, None) => false,
        }
    }

    /// The barrier an op of `index` waits on, for reports.
    pub fn barrier(&self, wait: WaitFor, index: i64) -> Option<&Mbarrier> {
        let s = self.slots.get(self.position(index).slot as usize)?;
        Some(match wait {
            WaitFor::Empty => &s.empty,
            WaitFor::Full => &s.full,
        })
    }

    /// Checks, before it waits, that a put of `index` by `partition`
    /// follows the contract: the producer puts 0, 1, 2, ...
    pub fn check_put(&self, partition: usize, index: i64) -> Result<(), String> {
        if self.producer != Some(partition) {
            return Err("this partition is not the aref's producer".into());
        }
        if index != self.next_put {
            return Err(format!(
                "put of iteration {index}, but the producer's next iteration is {}: \
                 indices count the puts 0, 1, 2, ... (slot and phase come from them)",
                self.next_put
            ));
        }
        Ok(())
    }

    /// The put of `index` once its wait succeeded: writes the buffers and
    /// arrives on `full`.
    pub fn put(&mut self, partition: usize, index: i64, values: Vec<RVal>) -> Result<(), String> {
        self.check_put(partition, index)?;
        if !self.ready(WaitFor::Empty, index) {
            return Err("internal: put before its slot is empty".into());
        }
        if values.len() != self.buffers.len() {
            return Err(format!(
                "put of {} values into an aref of {} buffers",
                values.len(),
                self.buffers.len()
            ));
        }
        let p = self.position(index);
        let slot = &mut self.slots[p.slot as usize];
        slot.contents = Some((index, values));
        slot.full.arrive();
        self.next_put += 1;
        Ok(())
    }

    /// Checks, before it waits, that a get of `index` by `partition`
    /// follows the contract: each consumer gets 0, 1, 2, ..., or, of a
    /// dealt ring, increasing iterations no other consumer got.
    pub fn check_get(&self, partition: usize, index: i64) -> Result<(), String> {
        let c = &self.consumers[self.consumer(partition)?];
        if self.dealt {
            if index < c.next_get {
                return Err(format!(
                    "get of iteration {index}, but this partition got iteration {} already: \
                     each consumer of a dealt ring gets increasing iterations",
                    c.next_get - 1
                ));
            }
            if self.dealt_out.contains(&index) {
                return Err(format!(
                    "get of iteration {index}, which another partition of the dealt ring got: \
                     each iteration goes to exactly one"
                ));
            }
            return Ok(());
        }
        if index != c.next_get {
            return Err(format!(
                "get of iteration {index}, but this partition's next iteration is {}: \
                 each consumer gets 0, 1, 2, ...",
                c.next_get
            ));
        }
        Ok(())
    }

    /// The get of `index` once its wait succeeded: borrows the slot and
    /// returns one view per buffer.
    pub fn get(&mut self, aref: u32, partition: usize, index: i64) -> Result<Vec<RVal>, String> {
        self.check_get(partition, index)?;
        if !self.ready(WaitFor::Full, index) {
            return Err("internal: get before its slot is full".into());
        }
        let p = self.position(index);
        let holds = self.slots[p.slot as usize].contents.as_ref().map(|c| c.0);
        if holds != Some(index) {
            // The parity matched a phase of another round: on hardware the
            // wait would pass and read the wrong tiles.
            return Err(format!(
                "get of iteration {index} passed its wait while slot {} holds {}: its barrier's \
                 parity names a phase two rounds away",
                p.slot,
                holds.map_or("nothing".to_string(), |i| format!("iteration {i}"))
            ));
        }
        let c = self.consumer(partition)?;
        self.consumers[c].next_get = index + 1;
        self.consumers[c].held.push_back(index);
        self.gets += 1;
        if self.dealt {
            self.dealt_out.insert(index);
            let low = self.consumers.iter().map(|c| c.next_get).min().unwrap_or(0);
            self.dealt_out = self.dealt_out.split_off(&low);
        }
        Ok((0..self.buffers.len() as u32)
            .map(|buffer| {
                RVal::View(SlotView {
                    aref,
                    buffer,
                    iteration: index,
                })
            })
            .collect())
    }

    /// `aref.consumed` of `index` by `partition`: it must release what it
    /// got, in order; arrives on `empty`.
    pub fn consumed(&mut self, partition: usize, index: i64) -> Result<(), String> {
        let c = self.consumer(partition)?;
        let cons = &self.consumers[c];
        if cons.held.front() != Some(&index) {
            let holding = match (cons.held.front(), cons.held.back()) {
                (Some(a), Some(b)) if a == b => format!("it holds iteration {a}"),
                (Some(a), Some(b)) => {
                    format!("it holds {} iterations, {a} to {b}", cons.held.len())
                }
                _ => "it holds none".to_string(),
            };
            return Err(format!(
                "consumed of iteration {index}, but this partition releases in the order it \
                 got and {holding}"
            ));
        }
        let p = self.position(index);
        self.consumers[c].held.pop_front();
        self.slots[p.slot as usize].empty.arrive();
        Ok(())
    }

    /// An arrival on the `empty` barrier of `index`'s slot by a consumer
    /// of the peer CTA (a remote `mbarrier.arrive`), or the second local
    /// one of a consumer whose peer has no tile this round.
    pub fn release_remote(&mut self, index: i64) -> Result<(), String> {
        let p = self.position(index);
        let slot = self
            .slots
            .get_mut(p.slot as usize)
            .ok_or("a release of a ring outside its ws op")?;
        slot.empty.arrive();
        Ok(())
    }

    /// The iteration some consumer still holds in `slot`, if any.
    fn held_in(&self, slot: u32) -> Option<i64> {
        self.consumers
            .iter()
            .flat_map(|c| c.held.iter())
            .copied()
            .find(|&i| self.position(i).slot == slot)
    }

    /// The buffers of `slot` for iteration `index`: its contents when it
    /// holds them already (a half landed), else fresh buffers of poison
    /// (NaN, or an integer pattern), so that rows no copy wrote read as
    /// wrong values.
    fn contents_for(&mut self, slot: u32, index: i64) -> &mut Vec<RVal> {
        let buffers = self.buffers.clone();
        let s = &mut self.slots[slot as usize];
        if s.contents.as_ref().map(|c| c.0) != Some(index) {
            let poison = buffers
                .iter()
                .map(|ty| {
                    // Aref buffers are tiles of numbers (the verifier).
                    let elem = ty.elem().unwrap_or(Elem::Scalar(ScalarType::F32));
                    let n: u32 = ty.shape().iter().product();
                    let num = if is_float_elem(elem) {
                        Num::F(f64::NAN)
                    } else {
                        Num::I(0x5a5a)
                    };
                    RVal::Tile(Tile::from_nums(
                        ty.shape().to_vec(),
                        elem,
                        std::iter::repeat_n(num, n as usize),
                    ))
                })
                .collect();
            s.contents = Some((index, poison));
        }
        &mut s.contents.as_mut().expect("just set").1
    }

    /// What a read of `view` by `partition` sees: the slot's buffer as it
    /// is now. With `check_released`, reading an iteration the partition
    /// has already released is an error (on hardware it races with the
    /// producer's refill whether or not the refill came first here).
    pub fn read(
        &self,
        view: &SlotView,
        partition: usize,
        check_released: bool,
    ) -> Result<RVal, String> {
        let c = &self.consumers[self.consumer(partition)?];
        if check_released && !c.held.contains(&view.iteration) {
            return Err(format!(
                "read of iteration {}'s buffer {} after this partition released it \
                 (aref.consumed must come after the last read)",
                view.iteration, view.buffer
            ));
        }
        let p = self.position(view.iteration);
        let slot = self.slot(p.slot)?;
        let Some((_, values)) = &slot.contents else {
            return Err("read of a slot that was never written".into());
        };
        values
            .get(view.buffer as usize)
            .cloned()
            .ok_or_else(|| format!("the aref has no buffer {}", view.buffer))
    }

    /// The iteration whose buffers slot `slot` holds now, if any.
    pub fn slot_iteration(&self, slot: u32) -> Option<i64> {
        self.slots
            .get(slot as usize)?
            .contents
            .as_ref()
            .map(|c| c.0)
    }
}

/// The put of `index` by `partition` into `local`, the ring of CTA
/// `rank` (0 or 1) of a pair whose peer's ring of the same `aref.create`
/// is `peer`, once its wait on `empty` succeeded (which the consumers of
/// both CTAs release): arrives on `full` expecting the whole slot; writes
/// each tile whose `multicast` is false whole into its own slot, and of
/// each other tile its half of the rows (`[rank * R/2, (rank + 1) * R/2)`)
/// into the slot of both CTAs, each half completing its transactions on
/// the `full` barrier of the CTA it lands in. A slot some consumer still
/// holds an iteration of is an error: the copy would overwrite a tile
/// being read.
#[allow(clippy::too_many_arguments)]
pub fn put_paired(
    local: &mut Ring,
    peer: &mut Ring,
    partition: usize,
    index: i64,
    values: Vec<RVal>,
    multicast: &[bool],
    rank: u32,
) -> Result<(), String> {
    local.check_put(partition, index)?;
    if !local.ready(WaitFor::Empty, index) {
        return Err("internal: put before its slot is empty".into());
    }
    if values.len() != local.buffers.len() || multicast.len() != values.len() {
        return Err(format!(
            "put of {} values and {} multicast predicates into an aref of {} buffers",
            values.len(),
            multicast.len(),
            local.buffers.len()
        ));
    }
    if rank > 1 {
        return Err(format!("CTA rank {rank} in a cluster of 2"));
    }
    let p = local.position(index);
    if let Some(i) = local.held_in(p.slot) {
        return Err(format!(
            "put of iteration {index} into slot {} while a consumer still holds iteration {i}",
            p.slot
        ));
    }
    if multicast.iter().any(|&m| m) {
        if let Some(i) = peer.held_in(p.slot) {
            return Err(format!(
                "multicast of iteration {index} into the peer CTA's slot {} while a consumer \
                 there still holds iteration {i}: the peer's consumers' release is not awaited",
                p.slot
            ));
        }
        if peer.slots.len() != local.slots.len() {
            return Err("the peer CTA's ring has another depth".into());
        }
    }
    let mut total = 0u64;
    for v in &values {
        total += tile_of(v)?.numel() as u64;
    }
    local.slots[p.slot as usize].full.arrive_expect_tx(total);
    for (j, (v, &mc)) in values.into_iter().zip(multicast).enumerate() {
        let t = tile_of(&v)?.clone();
        let n = t.numel() as u64;
        if !mc {
            local.contents_for(p.slot, index)[j] = v;
            local.slots[p.slot as usize].full.complete_tx(n);
            continue;
        }
        let [rows, cols] = t.shape[..] else {
            return Err(format!(
                "multicast of a tile of shape {:?}: 2-D only",
                t.shape
            ));
        };
        if rows % 2 != 0 {
            return Err(format!(
                "multicast of a tile of {rows} rows: halves need an even number"
            ));
        }
        let half = (rows / 2 * cols) as usize;
        let from = rank as usize * half;
        for ring in [&mut *local, &mut *peer] {
            let dst = &mut ring.contents_for(p.slot, index)[j];
            write_elements(dst, &t, from..from + half)?;
            ring.slots[p.slot as usize].full.complete_tx(half as u64);
        }
    }
    local.next_put += 1;
    Ok(())
}

fn tile_of(v: &RVal) -> Result<&Tile, String> {
    match v {
        RVal::Tile(t) => Ok(t),
        _ => Err("a put of a value that is not a tile".into()),
    }
}

/// Copies elements `range` (row-major) of `src` into tile `dst`.
fn write_elements(dst: &mut RVal, src: &Tile, range: std::ops::Range<usize>) -> Result<(), String> {
    let RVal::Tile(d) = dst else {
        return Err("a slot buffer that is not a tile".into());
    };
    match (&mut d.data, &src.data) {
        (Data::F(d), Data::F(s)) if d.len() == s.len() => {
            d[range.clone()].copy_from_slice(&s[range])
        }
        (Data::I(d), Data::I(s)) if d.len() == s.len() => {
            d[range.clone()].copy_from_slice(&s[range])
        }
        _ => return Err("a multicast half of another type or size than its slot's buffer".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tawa_ir::interp::value::{Data, Tile};
    use tawa_ir::{Elem, ScalarType};

    fn tile(x: f64) -> RVal {
        RVal::Tile(Tile {
            shape: vec![1],
            elem: Elem::Scalar(ScalarType::F32),
            data: Data::F(vec![x]),
        })
    }

    fn value(v: &RVal) -> f64 {
        match v {
            RVal::Tile(t) => t.float(0),
            other => panic!("not a tile: {other:?}"),
        }
    }

    fn ring(depth: u32, consumers: &[usize]) -> Ring {
        let ty = Type::tensor(vec![1], Elem::Scalar(ScalarType::F32));
        let mut r = Ring::new(depth, vec![ty]);
        r.attach(Some(0), consumers, false).unwrap();
        r
    }

    #[test]
    fn producer_fills_depth_slots_before_waiting() {
        let mut r = ring(2, &[1]);
        for i in 0..2 {
            assert!(
                r.ready(WaitFor::Empty, i),
                "put {i} passes on fresh barriers"
            );
            r.put(0, i, vec![tile(i as f64)]).unwrap();
        }
        assert!(
            !r.ready(WaitFor::Empty, 2),
            "slot 0 still holds iteration 0"
        );
        assert!(r.ready(WaitFor::Full, 0));
        let views = r.get(7, 1, 0).unwrap();
        let RVal::View(v) = views[0] else { panic!() };
        assert_eq!(value(&r.read(&v, 1, true).unwrap()), 0.0);
        assert!(!r.ready(WaitFor::Empty, 2));
        r.consumed(1, 0).unwrap();
        assert!(r.ready(WaitFor::Empty, 2));
        assert!(r
            .read(&v, 1, true)
            .unwrap_err()
            .contains("after this partition released"));
        r.put(0, 2, vec![tile(2.0)]).unwrap();
        // Unchecked, the stale view sees the refill: the race the
        // simulator's interleavings expose.
        assert_eq!(value(&r.read(&v, 1, false).unwrap()), 2.0);
    }

    #[test]
    fn get_waits_for_the_phase_of_its_round() {
        let mut r = ring(1, &[1]);
        assert!(!r.ready(WaitFor::Full, 0));
        r.put(0, 0, vec![tile(0.0)]).unwrap();
        assert!(r.ready(WaitFor::Full, 0));
        r.get(0, 1, 0).unwrap();
        assert!(!r.ready(WaitFor::Full, 1), "round 1 waits for parity 1");
        r.consumed(1, 0).unwrap();
        r.put(0, 1, vec![tile(1.0)]).unwrap();
        assert!(r.ready(WaitFor::Full, 1));
    }

    #[test]
    fn empty_waits_for_every_consumer() {
        let mut r = ring(1, &[1, 2]);
        r.put(0, 0, vec![tile(0.0)]).unwrap();
        r.get(0, 1, 0).unwrap();
        r.get(0, 2, 0).unwrap();
        r.consumed(1, 0).unwrap();
        assert!(!r.ready(WaitFor::Empty, 1), "partition 2 still reads");
        r.consumed(2, 0).unwrap();
        assert!(r.ready(WaitFor::Empty, 1));
    }

    #[test]
    fn contract_violations_are_errors() {
        let mut r = ring(2, &[1]);
        assert!(r
            .check_put(1, 0)
            .unwrap_err()
            .contains("not the aref's producer"));
        assert!(r
            .check_put(0, 1)
            .unwrap_err()
            .contains("next iteration is 0"));
        r.put(0, 0, vec![tile(0.0)]).unwrap();
        assert!(r
            .check_get(1, 1)
            .unwrap_err()
            .contains("next iteration is 0"));
        assert!(r.consumed(1, 0).unwrap_err().contains("it holds none"));
        r.get(0, 1, 0).unwrap();
        assert!(r
            .consumed(1, 1)
            .unwrap_err()
            .contains("it holds iteration 0"));
        assert!(r.check_get(2, 1).unwrap_err().contains("does not consume"));
    }

    /// A ring dealt between two consumers (tile ping-pong): each iteration
    /// goes to one, whose release alone frees the slot.
    #[test]
    fn a_dealt_ring_gives_each_iteration_to_one_consumer() {
        let mut r = Ring::new(2, vec![Type::Scalar(Elem::Scalar(ScalarType::F32))]);
        r.attach(Some(0), &[1, 2], true).unwrap();
        r.put(0, 0, vec![tile(0.0)]).unwrap();
        r.put(0, 1, vec![tile(1.0)]).unwrap();
        // Consumer 2 takes iteration 1 (the second tile's), 1 takes 0.
        r.get(0, 2, 1).unwrap();
        assert!(r
            .check_get(1, 1)
            .unwrap_err()
            .contains("another partition of the dealt ring got"));
        r.get(0, 1, 0).unwrap();
        assert!(!r.ready(WaitFor::Empty, 2));
        r.consumed(1, 0).unwrap();
        assert!(r.ready(WaitFor::Empty, 2), "one release frees the slot");
        assert!(r.check_get(1, 0).unwrap_err().contains("increasing"));
        r.consumed(2, 1).unwrap();
        // A get of iteration 4 (slot 0, round 2) before iteration 2 was
        // put: the slot's `full` barrier completed one phase, and round 2
        // waits for the parity of round 0's.
        assert!(
            r.ready(WaitFor::Full, 4),
            "parity aliasing: the wait passes"
        );
        assert!(r.get(0, 2, 4).unwrap_err().contains("two rounds away"));
    }
}
