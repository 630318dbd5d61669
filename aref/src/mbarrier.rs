//! The part of a PTX mbarrier that arefs use, as the hardware behaves.
//!
//! An mbarrier counts arrivals in its current phase; the arrival that
//! brings the pending count to zero completes the phase, resets the count
//! to the expected one and starts the next phase. Waiters do not name a
//! phase, only its parity (`mbarrier.try_wait.parity`), so a wait for
//! parity `p` succeeds whenever the current phase has the other parity:
//! on a fresh barrier (phase 0 in progress) a wait for parity 1 succeeds at
//! once, as if a phase "-1" had completed. Transaction counts
//! (`expect_tx`/`complete_tx`) only delay a phase's completion until the
//! copy engine's bytes have landed; a put's own copies land at once, so
//! only the copies a peer CTA multicasts into a slot use them
//! ([`Mbarrier::arrive_expect_tx`], [`Mbarrier::complete_tx`]): a phase
//! completes when no arrival is pending and the transaction count is
//! zero, and the count may go negative when a peer's bytes land before
//! the local producer's `expect_tx`.

/// One mbarrier: expected arrivals per phase, arrivals still pending in
/// the current phase, and the number of completed phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mbarrier {
    expected: u32,
    pending: u32,
    completed: u64,
    /// Transaction count (elements here): expected minus landed.
    tx: i64,
}

impl Mbarrier {
    /// `mbarrier.init` with an arrival count of `expected` (at least 1).
    pub fn new(expected: u32) -> Mbarrier {
        let expected = expected.max(1);
        Mbarrier {
            expected,
            pending: expected,
            completed: 0,
            tx: 0,
        }
    }

    /// `mbarrier.arrive`: one arrival; completes the phase when it is the
    /// last one expected.
    pub fn arrive(&mut self) {
        self.pending -= 1;
        self.complete_if_done();
    }

    /// `mbarrier.arrive.expect_tx`: expects `tx` more transaction units
    /// in the current phase, then arrives.
    pub fn arrive_expect_tx(&mut self, tx: u64) {
        self.tx += tx as i64;
        self.arrive();
    }

    /// `complete_tx` of a copy that landed: `tx` units of the phase.
    pub fn complete_tx(&mut self, tx: u64) {
        self.tx -= tx as i64;
        self.complete_if_done();
    }

    /// Transaction units expected and not landed yet (negative when
    /// copies landed before their `expect_tx`).
    pub fn pending_tx(&self) -> i64 {
        self.tx
    }

    fn complete_if_done(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.completed += 1;
            self.pending = self.expected;
        }
    }

    /// `mbarrier.try_wait.parity`: whether a wait for `parity` (0 or 1)
    /// succeeds now, i.e. whether the current phase has the other parity.
    pub fn try_wait_parity(&self, parity: u32) -> bool {
        (self.completed & 1) as u32 != parity & 1
    }

    /// Phases completed since `init`.
    pub fn completed_phases(&self) -> u64 {
        self.completed
    }

    /// Arrivals still missing before the current phase completes.
    pub fn pending_arrivals(&self) -> u32 {
        self.pending
    }

    pub fn expected_arrivals(&self) -> u32 {
        self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_barrier_passes_the_opposite_parity_only() {
        let b = Mbarrier::new(1);
        assert!(
            b.try_wait_parity(1),
            "the phase before phase 0 counts as done"
        );
        assert!(!b.try_wait_parity(0), "phase 0 has not completed");
    }

    #[test]
    fn phases_complete_after_the_expected_arrivals() {
        let mut b = Mbarrier::new(2);
        b.arrive();
        assert_eq!(b.completed_phases(), 0);
        assert!(!b.try_wait_parity(0));
        b.arrive();
        assert_eq!(b.completed_phases(), 1);
        assert!(b.try_wait_parity(0));
        assert!(!b.try_wait_parity(1));
        assert_eq!(b.pending_arrivals(), 2);
        b.arrive();
        b.arrive();
        assert_eq!(b.completed_phases(), 2);
        // Parity waits cannot tell phase 0 from phase 2: both succeed.
        assert!(b.try_wait_parity(1));
    }

    #[test]
    fn a_phase_waits_for_its_transactions_landed_before_or_after_expect_tx() {
        let mut b = Mbarrier::new(1);
        // A peer's half lands first: the count goes negative, the phase
        // waits for the local arrival.
        b.complete_tx(8);
        assert_eq!(b.pending_tx(), -8);
        assert_eq!(b.completed_phases(), 0);
        b.arrive_expect_tx(16);
        assert_eq!(b.completed_phases(), 0, "8 units still in flight");
        b.complete_tx(8);
        assert_eq!(b.completed_phases(), 1);
        assert_eq!(b.pending_tx(), 0);
        // Local arrival first, then both halves.
        b.arrive_expect_tx(16);
        b.complete_tx(8);
        assert_eq!(b.completed_phases(), 1);
        b.complete_tx(8);
        assert_eq!(b.completed_phases(), 2);
    }
}
