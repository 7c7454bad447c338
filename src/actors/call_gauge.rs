//! The admin's executor calls in flight, across every trigger worker, so work that can wait
//! (writing trigger outcomes, storing results) yields to a second's burst of calls.
//!
//! Why: a burst of `run` calls keeps the cores busy, and a database write landing inside it
//! delays the calls still going out. Fires are time-critical, outcomes and results are
//! bookkeeping: the latter wait, boundedly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// Counts calls in flight; see the module doc.
#[derive(Debug, Default)]
pub struct CallGauge {
    in_flight: AtomicUsize,
    quiet: Notify,
}

/// One call in flight; ends when dropped.
#[derive(Debug)]
pub struct InFlight(Arc<CallGauge>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.quiet.notify_waiters();
        }
    }
}

impl CallGauge {
    /// A gauge with nothing in flight.
    pub fn new() -> Arc<Self> {
        Arc::new(CallGauge::default())
    }

    /// Counts a call as in flight until the returned guard is dropped.
    pub fn call(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Calls in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Waits until no call is in flight, or `limit` has passed; true if it became quiet.
    pub async fn quiet(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.quiet.notified();
            tokio::pin!(notified);
            // registered before the check, so a drop to zero in between still wakes us
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return true;
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(deadline) => return self.in_flight() == 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn quiet_at_once_when_nothing_is_in_flight() {
        let gauge = CallGauge::new();
        let call = gauge.call();
        drop(call);
        assert_eq!(gauge.in_flight(), 0);
        assert!(gauge.quiet(Duration::from_secs(3600)).await);
    }

    #[tokio::test]
    async fn quiet_when_the_last_call_ends() {
        let gauge = CallGauge::new();
        let (first, second) = (gauge.call(), gauge.call());
        assert_eq!(gauge.in_flight(), 2);
        let waiter = {
            let gauge = gauge.clone();
            tokio::spawn(async move { gauge.quiet(Duration::from_secs(3600)).await })
        };
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "one call is still in flight");
        drop(second);
        assert!(waiter.await.expect("waiter"));
    }

    #[tokio::test]
    async fn gives_up_after_the_limit() {
        let gauge = CallGauge::new();
        let stuck = gauge.call();
        assert!(!gauge.quiet(Duration::from_millis(20)).await);
        assert_eq!(gauge.in_flight(), 1);
        drop(stuck);
    }
}
