//! Lease: whether this admin's claimed fire times are still surely its own when it dispatches.
//!
//! Other admins take over the fire times of an admin whose last beat is
//! [`NODE_DEAD_AFTER_MS`](super::timing_rules::NODE_DEAD_AFTER_MS) old. An admin whose beats stalled (its process paused, its host
//! swapping, its database connection slow) goes on afterwards with fire times it claimed
//! before, which another admin may have fired meanwhile: dispatching them would fire them
//! twice. So a fire claimed before such a gap, or due while the last beat is old, is not
//! dispatched; its claim is handed back once the beats are on time again (if it is still this
//! admin's), and whichever admin takes it over fires it late but once, under the misfire rules.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::db_retry::until_written;
use super::fire::first_jobs;
use super::timing_rules::{FENCE_AFTER_MS, PRE_READ_MS};
use crate::clock::now_ms;
use crate::store::{ActorStore, ClaimKey};

/// A pass that ran shortly after the last beat before a gap claimed fire times up to this far
/// past that beat.
const CLAIMED_BEFORE_GAP_MS: i64 = PRE_READ_MS + 2_000;
/// How often a fenced fire's hand-back looks whether the beats are on time again.
const FRESH_AGAIN_POLL: Duration = Duration::from_millis(200);

/// This admin's lease on its claims, renewed by each heartbeat that lands.
#[derive(Debug, Default)]
pub struct Lease {
    /// This admin's id in `admin_node`; `None`: a lone admin, whose claims no one takes over.
    node: Option<Arc<str>>,
    /// The beat time of the last beat that landed (0: none yet).
    beat: AtomicI64,
    /// Fires due at or before this were claimed before a gap in the beats.
    doubt_through: AtomicI64,
}

impl Lease {
    /// The lease of admin `node`, whose claims other admins may take over.
    pub fn of(node: Arc<str>) -> Arc<Self> {
        Arc::new(Lease {
            node: Some(node),
            ..Default::default()
        })
    }

    /// A heartbeat written with beat time `at` has landed.
    pub fn beaten(&self, at: i64) {
        let before = self.beat.fetch_max(at, Ordering::SeqCst);
        if before > 0 && at - before > FENCE_AFTER_MS {
            self.doubt_through
                .fetch_max(before + CLAIMED_BEFORE_GAP_MS, Ordering::SeqCst);
        }
    }

    /// Whether this admin's last beat that landed is too old for it to claim fire times at
    /// `now`: the others may take over whatever it claims. The fence above assumes claims are
    /// made within `CLAIMED_BEFORE_GAP_MS` of a beat that landed; a pass that went on while
    /// only the beats stalled (their own connection slow) would break that.
    pub fn stale(&self, now: i64) -> bool {
        let beat = self.beat.load(Ordering::SeqCst);
        self.node.is_some() && beat > 0 && now - beat > FENCE_AFTER_MS
    }

    /// Whether a claimed fire due at `fire_time` must not be dispatched at `now`.
    pub fn fenced(&self, now: i64, fire_time: i64) -> bool {
        let beat = self.beat.load(Ordering::SeqCst);
        self.node.is_some()
            && beat > 0
            && (now - beat > FENCE_AFTER_MS
                || fire_time <= self.doubt_through.load(Ordering::SeqCst))
    }

    /// Hands `keys` back once the beats are on time again, those still this admin's: any
    /// admin's next pass then takes them over. Logs one line for them.
    pub fn hand_back(self: &Arc<Self>, store: &ActorStore, keys: Vec<ClaimKey>) {
        let Some(node) = self.node.clone() else {
            return;
        };
        if keys.is_empty() {
            return;
        }
        log::warn!(
            "admin node {node}: its heartbeat was late by more than {FENCE_AFTER_MS} ms, so \
             other admins may have taken over its fire times: {} claimed fire(s) not dispatched \
             (jobs {}), handed back to be fired once by whichever admin takes them over",
            keys.len(),
            first_jobs(keys.iter().map(|k| k.job_id))
        );
        let (lease, store) = (self.clone(), store.clone());
        actix::spawn(async move {
            while now_ms() - lease.beat.load(Ordering::SeqCst) > FENCE_AFTER_MS {
                tokio::time::sleep(FRESH_AGAIN_POLL).await;
            }
            let what = format!("{} fenced fire time(s) handed back", keys.len());
            until_written(&store, what, move |s| {
                let (node, keys) = (node.clone(), keys.clone());
                async move { s.hand_back_own_claims(&node, &keys).await.map(drop) }
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease() -> Arc<Lease> {
        Lease::of("node".into())
    }

    #[test]
    fn beats_on_time_fence_nothing() {
        let l = lease();
        for at in (10_000..20_000).step_by(1_000) {
            l.beaten(at);
            assert!(!l.fenced(at + 900, at + 5_000));
        }
    }

    #[test]
    fn an_old_last_beat_fences_every_fire() {
        let l = lease();
        l.beaten(10_000);
        assert!(!l.fenced(10_000 + FENCE_AFTER_MS, 12_000));
        assert!(l.fenced(10_001 + FENCE_AFTER_MS, 30_000));
    }

    #[test]
    fn fires_claimed_before_a_gap_stay_fenced_after_it() {
        let l = lease();
        l.beaten(10_000);
        // the process was paused for 8 s; its next beat lands, then the ring goes on
        l.beaten(18_000);
        assert!(l.fenced(18_100, 15_000), "claimed before the gap");
        assert!(l.fenced(18_100, 10_000 + CLAIMED_BEFORE_GAP_MS));
        assert!(
            !l.fenced(18_100, 10_001 + CLAIMED_BEFORE_GAP_MS),
            "claimed after it"
        );
        // beats arriving out of order do not open a gap
        l.beaten(17_000);
        assert!(!l.fenced(19_000, 30_000));
    }

    #[test]
    fn no_claims_while_the_last_beat_that_landed_is_old() {
        let l = lease();
        assert!(!l.stale(50_000), "not beating yet");
        l.beaten(10_000);
        assert!(!l.stale(10_000 + FENCE_AFTER_MS));
        assert!(l.stale(10_001 + FENCE_AFTER_MS), "the beats stalled");
        l.beaten(14_000);
        assert!(!l.stale(14_500));
        let lone = Lease::default();
        lone.beaten(10_000);
        assert!(!lone.stale(60_000));
    }

    #[test]
    fn a_lone_admin_and_an_admin_not_beating_yet_are_never_fenced() {
        let lone = Lease::default();
        lone.beaten(10_000);
        assert!(!lone.fenced(60_000, 60_000));
        assert!(!lease().fenced(60_000, 60_000));
    }
}
