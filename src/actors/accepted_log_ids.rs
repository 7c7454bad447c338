//! The log ids an executor accepted lately, so a trigger sent again with the same log id (an
//! admin that died between its call and its record of the answer, whose run another admin sends
//! again) is refused as a repeat instead of running a second time.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

/// How long an accepted log id is remembered: far past the admins' resend window.
pub const REMEMBER_FOR: Duration = Duration::from_secs(15 * 60);
/// Most log ids remembered; the oldest go first (16 bytes each, plus the set's).
pub const REMEMBER_MAX: usize = 65_536;

/// Accepted log ids, oldest first, for [`REMEMBER_FOR`] and at most [`REMEMBER_MAX`].
#[derive(Debug, Default)]
pub struct AcceptedLogIds {
    order: VecDeque<(Instant, i64)>,
    ids: HashSet<i64>,
}

impl AcceptedLogIds {
    /// Whether `log_id` was accepted lately.
    pub fn contains(&self, log_id: i64) -> bool {
        self.ids.contains(&log_id)
    }

    /// Records `log_id` as accepted at `now` (once; a repeat keeps its first time).
    pub fn record(&mut self, log_id: i64, now: Instant) {
        self.forget_old(now);
        if self.ids.insert(log_id) {
            self.order.push_back((now, log_id));
        }
    }

    /// Forgets ids accepted before the window, and the oldest beyond the bound.
    fn forget_old(&mut self, now: Instant) {
        while let Some(&(at, id)) = self.order.front() {
            let expired = now.saturating_duration_since(at) > REMEMBER_FOR;
            if !expired && self.order.len() < REMEMBER_MAX {
                break;
            }
            self.order.pop_front();
            self.ids.remove(&id);
        }
        if self.order.is_empty() && self.ids.capacity() > 1_024 {
            // a burst's tables are handed back once it is forgotten
            self.order = VecDeque::new();
            self.ids = HashSet::new();
        }
    }

    /// How many ids are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_known_until_it_is_forgotten() {
        let mut ids = AcceptedLogIds::default();
        let t0 = Instant::now();
        assert!(!ids.contains(7));
        ids.record(7, t0);
        ids.record(8, t0 + Duration::from_secs(60));
        assert!(ids.contains(7) && ids.contains(8));
        ids.record(9, t0 + REMEMBER_FOR + Duration::from_secs(1));
        assert!(!ids.contains(7), "forgotten after the window");
        assert!(ids.contains(8) && ids.contains(9));
        assert_eq!(ids.len(), 2);
    }

    #[test]
    fn the_oldest_go_first_beyond_the_bound() {
        let mut ids = AcceptedLogIds::default();
        let t0 = Instant::now();
        for id in 0..(REMEMBER_MAX as i64 + 10) {
            ids.record(id, t0);
        }
        assert_eq!(ids.len(), REMEMBER_MAX);
        assert!(!ids.contains(0), "the oldest was forgotten");
        assert!(ids.contains(REMEMBER_MAX as i64), "a recent one is kept");
    }
}
