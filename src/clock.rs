//! Wall-clock time as epoch milliseconds, the unit of every stored time.

use std::time::{SystemTime, UNIX_EPOCH};

/// How long before its instant a fire stops sleeping and starts yielding: tokio's timer rounds
/// a deadline up to whole milliseconds and the driver's `epoll_wait` timeout rounds up again,
/// so a plain sleep wakes late; this slack covers both.
#[cfg(feature = "admin")]
const TIMER_SLACK: std::time::Duration = std::time::Duration::from_millis(3);

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    now_us() / 1_000
}

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Sleeps until the wall clock reaches `at_ms` (epoch ms), waking just after it rather than when
/// a rounded-up timer fires; returns at once if it has passed.
///
/// The last `TIMER_SLACK` is spent yielding to the runtime, so other tasks on the thread run
/// meanwhile; it costs at most that much CPU per call.
#[cfg(feature = "admin")]
pub async fn sleep_until_epoch_ms(at_ms: i64) {
    let at_us = at_ms.saturating_mul(1_000);
    loop {
        let wait = at_us - now_us();
        if wait <= 0 {
            return;
        }
        let wait = std::time::Duration::from_micros(wait as u64);
        if wait > TIMER_SLACK {
            tokio::time::sleep(wait - TIMER_SLACK).await;
        } else {
            tokio::task::yield_now().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_and_microseconds_agree() {
        let ms = now_ms();
        let us = now_us();
        assert!(us / 1_000 >= ms && us / 1_000 - ms < 1_000);
    }

    #[tokio::test]
    async fn never_wakes_before_the_instant_asked_for() {
        for ahead in [0, 1, 4, 15] {
            let at = now_ms() + ahead;
            sleep_until_epoch_ms(at).await;
            assert!(now_us() >= at * 1_000, "woke before {at}");
        }
    }

    #[tokio::test]
    async fn a_past_instant_returns_at_once() {
        let before = std::time::Instant::now();
        sleep_until_epoch_ms(now_ms() - 10_000).await;
        assert!(before.elapsed() < std::time::Duration::from_secs(1));
    }
}
