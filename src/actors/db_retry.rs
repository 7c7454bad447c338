//! Writes that must reach the database even when it is down as they are made (a call's
//! outcome, a claim handed back): retried in a task of their own, with backoff, until the
//! database answers again, so an outage delays them rather than losing them.

use std::future::Future;
use std::time::Duration;

use crate::store::{ActorStore, Store, StoreResult};

/// The first wait before a retry.
const FIRST_WAIT: Duration = Duration::from_millis(500);
/// The longest wait between retries: the write lands within this of the database's return.
const MAX_WAIT: Duration = Duration::from_secs(4);

/// Retries `write` until it succeeds or fails for a reason other than an outage; `what` names
/// it in the log. The first try happens after `FIRST_WAIT`: callers come here after a failure.
pub fn until_written<F, Fut>(store: &ActorStore, what: String, write: F)
where
    F: Fn(Store) -> Fut + Send + 'static,
    Fut: Future<Output = StoreResult<()>> + Send + 'static,
{
    store.spawn(move |store| async move {
        let mut wait = FIRST_WAIT;
        loop {
            tokio::time::sleep(wait).await;
            let started = std::time::Instant::now();
            let result = write(store.clone()).await;
            store.availability().observe(&result, started);
            match result {
                Ok(()) => {
                    log::debug!("{what}: written once the database answered again");
                    return;
                }
                Err(e) if e.is_outage() => log::debug!("{what}: still not written: {e}"),
                Err(e) => {
                    log::error!("{what}: cannot be written: {e}");
                    return;
                }
            }
            wait = (wait * 2).min(MAX_WAIT);
        }
    });
}
