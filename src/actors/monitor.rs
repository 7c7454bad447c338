//! What the admin's monitor actors share: their settings and their pacing.
//!
//! The monitors ([`super::monitor_fail`], [`super::monitor_lost`], [`super::monitor_report`]) run
//! a pass at start, then [`PASS_OFFSET_MS`] past each wall-clock multiple of their interval
//! (XXL-JOB's aligned `CyclicThread`). Where XXL-JOB lets every admin scan at those instants
//! and the per-row claims decide who works, here the admins of one database take turns
//! ([`PassTurns`]): each interval's pass runs on the first admin to take it, so N admins scan
//! `job_log` once an interval rather than N times. A pass that fails (database down) is logged
//! and tried again after a backoff that grows with each failure in a row.

use std::sync::Arc;
use std::time::Duration;

use chrono_tz::Tz;

use crate::alarm::email::SmtpSettings;
use crate::alarm::webhook::DEFAULT_WEBHOOK_TIMEOUT;
use crate::clock::now_ms;
use crate::config::AdminSettings;
use crate::metrics::AdminMetrics;
use crate::store::{ActorStore, MonitorPass, StoreResult};

/// Settings of the monitor actors; production values come from [`MonitorSettings::from_admin`],
/// tests shorten the intervals.
#[derive(Debug, Clone)]
pub struct MonitorSettings {
    /// Fail monitor (retries and alarms) period; XXL-JOB's 10 s.
    pub fail_interval: Duration,
    /// Lost-result monitor period; XXL-JOB's 60 s.
    pub lost_interval: Duration,
    /// Report and retention period; XXL-JOB's 60 s.
    pub report_interval: Duration,
    /// A run without a result for this long, on an executor that is gone, is marked failed.
    pub lost_result_timeout: Duration,
    /// The lost-result monitor's first pass waits this long after the admin starts: after an
    /// outage of every admin, executors deliver the results they saved meanwhile (jobwheel's
    /// within 30 s, XXL-JOB's every 30 s) before their runs are judged lost.
    pub lost_first_pass_after: Duration,
    /// Days of logs to keep; 0 keeps them forever.
    pub log_retention_days: u32,
    /// Rows deleted per statement by the retention.
    pub retention_batch: i64,
    /// Least time between two retention runs (the first runs at start).
    pub retention_every: Duration,
    /// Days of the daily report begin at midnight in this zone.
    pub timezone: Tz,
    /// How long a webhook may take.
    pub webhook_timeout: Duration,
    /// Whether webhooks may reach loopback, private and link-local addresses.
    pub webhook_allow_private: bool,
    /// Mail server; `None` turns e-mail alarms off.
    pub smtp: Option<SmtpSettings>,
}

impl MonitorSettings {
    /// XXL-JOB's periods with the admin's retention, time zone, timeout and SMTP settings.
    pub fn from_admin(settings: &AdminSettings) -> Self {
        MonitorSettings {
            fail_interval: Duration::from_secs(10),
            lost_interval: Duration::from_secs(60),
            report_interval: Duration::from_secs(60),
            lost_result_timeout: settings.lost_result_timeout,
            lost_first_pass_after: Duration::from_secs(60),
            log_retention_days: settings.log_retention_days,
            retention_batch: 1_000,
            retention_every: Duration::from_secs(24 * 3_600),
            timezone: settings.timezone,
            webhook_timeout: DEFAULT_WEBHOOK_TIMEOUT,
            webhook_allow_private: settings.alarm_webhook_allow_private,
            smtp: settings.smtp.clone(),
        }
    }
}

/// Time until the next wall-clock multiple of `interval` (a whole interval when exactly on one).
pub fn until_aligned(interval: Duration, now_ms: i64) -> Duration {
    let period = (interval.as_millis() as i64).max(1);
    let wait = period - now_ms.rem_euclid(period);
    Duration::from_millis(wait as u64)
}

/// How far past each aligned multiple a monitor pass runs: after the pre-read (250 ms) and the
/// hand-over of the next second's fires (500 ms), so a pass starts away from the calls at the
/// top of the second.
pub const PASS_OFFSET_MS: i64 = 700;

/// Time until the next aligned pass, [`PASS_OFFSET_MS`] into its second, from the current clock.
pub fn next_pass(interval: Duration) -> Duration {
    until_aligned(interval, now_ms() - PASS_OFFSET_MS)
}

/// The number of the interval a pass at `now` belongs to: aligned passes (and retries in the
/// first half of their interval) count from the multiple they follow, so a timer that fires a
/// little early or late does not move a pass into another interval.
pub fn interval_number(interval: Duration, now: i64) -> i64 {
    let period = (interval.as_millis() as i64).max(1);
    (now - PASS_OFFSET_MS + period / 2).div_euclid(period)
}

/// Which admin of a database runs each monitor's pass: the first to take the interval's turn
/// (`monitor_turn`). The per-row claims keep passes that overlap correct; the turns keep N admins
/// from doing the same scan N times. An admin that dies leaves the next interval to the others.
#[derive(Clone)]
pub struct PassTurns {
    node: Arc<str>,
    metrics: Arc<AdminMetrics>,
}

impl PassTurns {
    /// Turns taken as admin `node`, counted in `metrics`.
    pub fn new(node: Arc<str>, metrics: Arc<AdminMetrics>) -> Self {
        PassTurns { node, metrics }
    }

    /// Whether this admin runs `pass` now, in its interval of length `interval`.
    pub async fn take(
        &self,
        store: &ActorStore,
        pass: MonitorPass,
        interval: Duration,
        now: i64,
    ) -> StoreResult<bool> {
        let slot = interval_number(interval, now);
        let node = self.node.clone();
        let mine = store
            .run(move |s| async move { s.take_monitor_turn(pass, &node, slot, now).await })
            .await?;
        self.metrics.monitor_pass(pass.as_str(), mine);
        if !mine {
            log::debug!(
                "{} monitor pass of interval {slot} left to the admin that took its turn",
                pass.as_str()
            );
        }
        Ok(mine)
    }
}

/// A monitor's failed passes in a row, which set the wait before its next pass.
#[derive(Debug, Default)]
pub struct Pace {
    failures: u32,
}

impl Pace {
    /// After a pass that worked: the failures are forgotten; the next pass is aligned.
    pub fn worked(&mut self, interval: Duration) -> Duration {
        self.failures = 0;
        next_pass(interval)
    }

    /// After a failed `pass`: one line at `level` (debug while the database is known to be
    /// down, the outage itself being logged once) and the [`backoff`] to wait.
    pub fn failed(
        &mut self,
        interval: Duration,
        pass: &str,
        level: log::Level,
        error: &dyn std::fmt::Display,
    ) -> Duration {
        self.failures += 1;
        let delay = backoff(interval, self.failures);
        log::log!(
            level,
            "{pass} pass failed ({} in a row), retrying in {delay:?}: {error}",
            self.failures
        );
        delay
    }
}

/// Wait after `failures` failed passes in a row: the interval (at most 2 s) doubled per
/// failure, never more than the larger of the interval and a minute.
pub fn backoff(interval: Duration, failures: u32) -> Duration {
    let first = interval
        .min(Duration::from_secs(2))
        .max(Duration::from_millis(10));
    let cap = interval.max(Duration::from_secs(60));
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    first.saturating_mul(factor).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_align_to_the_interval() {
        let ten = Duration::from_secs(10);
        assert_eq!(
            until_aligned(ten, 1_000_003_000),
            Duration::from_millis(7_000)
        );
        assert_eq!(until_aligned(ten, 1_000_000_000), ten);
        assert_eq!(
            until_aligned(Duration::from_millis(200), 1_050),
            Duration::from_millis(150)
        );
    }

    #[test]
    fn passes_fall_past_the_top_of_the_second() {
        let at = now_ms() + next_pass(Duration::from_secs(10)).as_millis() as i64;
        // the clock moves between the two readings; a few ms of slack
        let into_period = (at - PASS_OFFSET_MS).rem_euclid(10_000);
        assert!(!(50..=9_950).contains(&into_period), "{into_period}");
    }

    #[test]
    fn a_pass_and_its_early_retries_share_an_interval() {
        let ten = Duration::from_secs(10);
        let aligned = 1_000_000_000 + PASS_OFFSET_MS;
        let slot = interval_number(ten, aligned);
        assert_eq!(slot, 100_000);
        // a timer a millisecond early or late, and a retry 2 s later, stay in it
        for at in [aligned - 1, aligned + 1, aligned + 2_000, aligned + 4_999] {
            assert_eq!(interval_number(ten, at), slot, "{at}");
        }
        assert_eq!(interval_number(ten, aligned + 5_000), slot + 1);
        assert_eq!(interval_number(ten, aligned + 10_000), slot + 1);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let ten = Duration::from_secs(10);
        assert_eq!(backoff(ten, 1), Duration::from_secs(2));
        assert_eq!(backoff(ten, 2), Duration::from_secs(4));
        assert_eq!(backoff(ten, 5), Duration::from_secs(32));
        assert_eq!(backoff(ten, 6), Duration::from_secs(60));
        assert_eq!(backoff(ten, 100), Duration::from_secs(60));
        let hour = Duration::from_secs(3_600);
        assert_eq!(backoff(hour, 30), hour);
        assert_eq!(
            backoff(Duration::from_millis(100), 1),
            Duration::from_millis(100)
        );
    }

    #[test]
    fn a_pace_backs_off_while_passes_fail_and_forgets_once_one_works() {
        let ten = Duration::from_secs(10);
        let mut pace = Pace::default();
        let error = "database unreachable";
        assert_eq!(
            pace.failed(ten, "test", log::Level::Debug, &error),
            backoff(ten, 1)
        );
        assert_eq!(
            pace.failed(ten, "test", log::Level::Debug, &error),
            backoff(ten, 2)
        );
        assert!(pace.worked(ten) <= ten);
        assert_eq!(
            pace.failed(ten, "test", log::Level::Debug, &error),
            backoff(ten, 1)
        );
    }
}
