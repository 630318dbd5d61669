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
//! copy engine's bytes have landed; the simulator's puts land at once, so
//! they are not modelled.

/// One mbarrier: expected arrivals per phase, arrivals still pending in
/// the current phase, and the number of completed phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mbarrier {
    expected: u32,
    pending: u32,
    completed: u64,
}

impl Mbarrier {
    /// `mbarrier.init` with an arrival count of `expected` (at least 1).
    pub fn new(expected: u32) -> Mbarrier {
        let expected = expected.max(1);
        Mbarrier {
            expected,
            pending: expected,
            completed: 0,
        }
    }

    /// `mbarrier.arrive`: one arrival; completes the phase when it is the
    /// last one expected.
    pub fn arrive(&mut self) {
        self.pending -= 1;
        if self.pending == 0 {
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
}
