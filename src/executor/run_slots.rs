//! The executor's concurrency limit: at most `max_concurrent_runs` runs at once, handler and
//! script runs alike. A run beyond it waits for a slot in its job's worker, so that job's later
//! triggers stay queued behind it in the worker's mailbox; slots are handed out first come,
//! first served across jobs (tokio's semaphore is fair), so one busy job cannot starve others.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The slots of one executor; without a limit every run starts at once.
#[derive(Debug)]
pub struct RunSlots {
    limit: Option<usize>,
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// A run's slot, given back when dropped.
#[derive(Debug)]
pub struct Slot {
    /// `None` without a limit.
    _permit: Option<OwnedSemaphorePermit>,
}

/// Counts a run as waiting while it exists, so a cancelled wait is uncounted too.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl RunSlots {
    /// `limit` runs at once; 0 for no limit.
    pub fn new(limit: usize) -> Self {
        let limit = (limit > 0).then_some(limit);
        RunSlots {
            limit,
            slots: Arc::new(Semaphore::new(limit.unwrap_or(0))),
            waiting: AtomicUsize::new(0),
        }
    }

    /// A slot, once one is free; `None` when `cancel` fires first (the run never started).
    pub async fn take(&self, cancel: &CancellationToken) -> Option<Slot> {
        if self.limit.is_none() {
            return Some(Slot { _permit: None });
        }
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Some(Slot {
                _permit: Some(permit),
            });
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(&self.waiting);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            // the semaphore is never closed
            permit = self.slots.clone().acquire_owned() => permit.ok().map(|p| Slot { _permit: Some(p) }),
        }
    }

    /// The limit, `None` when there is none.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Runs holding a slot now (0 without a limit: they are not counted here).
    pub fn in_use(&self) -> usize {
        self.limit
            .map_or(0, |l| l.saturating_sub(self.slots.available_permits()))
    }

    /// Runs waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// True when a new run would have to wait.
    pub fn is_full(&self) -> bool {
        self.limit.is_some() && self.slots.available_permits() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_beyond_the_limit_wait_in_order_and_a_cancelled_wait_is_uncounted() {
        let slots = Arc::new(RunSlots::new(2));
        let never = CancellationToken::new();
        let a = slots.take(&never).await.unwrap();
        let b = slots.take(&never).await.unwrap();
        assert!(slots.is_full());
        assert_eq!(slots.in_use(), 2);
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for i in 0..3 {
            let (mine, order, never) = (slots.clone(), order.clone(), never.clone());
            waiters.push(tokio::spawn(async move {
                let slot = mine.take(&never).await;
                order.lock().unwrap().push(i);
                tokio::task::yield_now().await;
                drop(slot);
            }));
            // each waiter queues before the next one
            while slots.waiting() < i + 1 {
                tokio::task::yield_now().await;
            }
        }
        let cancel = CancellationToken::new();
        let cancelled = {
            let (slots, cancel) = (slots.clone(), cancel.clone());
            tokio::spawn(async move { slots.take(&cancel).await.is_none() })
        };
        while slots.waiting() < 4 {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
        assert!(cancelled.await.unwrap(), "a cancelled wait gets no slot");
        assert_eq!(slots.waiting(), 3);
        drop((a, b));
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(
            *order.lock().unwrap(),
            vec![0, 1, 2],
            "first come, first served"
        );
        assert_eq!((slots.waiting(), slots.in_use()), (0, 0));
    }

    #[tokio::test]
    async fn without_a_limit_nothing_waits() {
        let slots = RunSlots::new(0);
        let never = CancellationToken::new();
        let _held: Vec<_> =
            futures_util::future::join_all((0..100).map(|_| slots.take(&never))).await;
        assert!(!slots.is_full());
        assert_eq!(
            (slots.limit(), slots.in_use(), slots.waiting()),
            (None, 0, 0)
        );
    }
}
