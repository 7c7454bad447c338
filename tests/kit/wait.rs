//! The one way tests wait: poll a condition until it holds or a deadline passes, never a fixed
//! sleep standing in for "long enough".

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` every 20 ms until it gives `Some` or `limit` passes.
pub async fn wait_for<T, F, Fut>(limit: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// [`wait_for`], failing the test with `what` when the deadline passes.
pub async fn expect_within<T, F, Fut>(what: &str, limit: Duration, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    wait_for(limit, check)
        .await
        .unwrap_or_else(|| panic!("timed out after {limit:?} waiting for {what}"))
}

/// [`wait_for`] for a check that needs no waiting of its own (state a fake recorded, a file, a
/// child process): `check` is a plain closure.
pub async fn poll_for<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    wait_for(limit, || std::future::ready(check())).await
}
