//! Fire-time rules: when a job fires next, per schedule type, in the job's time zone.
//!
//! Times are epoch milliseconds, as stored in `trigger_next_time`.
//!
//! - `NONE`: never fires by itself (manual, API and parent triggers only); next time is `None`.
//! - `CRON`: a Quartz cron expression ([`quartz`]), matched as wall-clock time in the job's
//!   zone; the next fire time is strictly after `from`. XXL-JOB uses the admin JVM's zone for
//!   every job; jobwheel lets each job name an IANA zone, defaulting to the admin's.
//! - `FIX_RATE`: `from + N s`, rounded **up** to a whole second when `from` has milliseconds
//!   (XXL-JOB ≥ 3.4.0). `from` is the previous scheduled fire time.
//! - `FIX_DELAY` (listed but never implemented by XXL-JOB): `from + N s`, rounded up the same
//!   way, where the caller passes as `from` the **end of the previous run** (or "now" when there
//!   is no previous run, e.g. when the job is started), so runs never overlap and the gap between
//!   one run's end and the next run's start is N seconds.
//!
//! Interval schedules use absolute durations and are not affected by daylight saving.

pub mod quartz;

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;

pub use self::quartz::{CronError, CronExpr};
use crate::model::ScheduleType;

/// The largest `FIX_RATE` / `FIX_DELAY` interval, in seconds (XXL-JOB stores it as a Java int).
pub const MAX_INTERVAL_SECS: i64 = i32::MAX as i64;

/// The most fire times [`preview`] computes at once.
pub const MAX_PREVIEW_COUNT: usize = 1000;

/// A schedule that cannot be used; the message is meant for the user (an HTTP 400 body).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScheduleError(pub String);

impl From<CronError> for ScheduleError {
    fn from(e: CronError) -> Self {
        ScheduleError(e.to_string())
    }
}

/// A validated schedule, parsed once and reusable for many fire-time computations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// Fires only when triggered by hand, by the API or by a parent job.
    None,
    /// Quartz cron expression.
    Cron(CronExpr),
    /// Every N seconds from the previous fire time.
    FixRate(i64),
    /// N seconds after the previous run ended.
    FixDelay(i64),
}

impl Schedule {
    /// Parses `conf` for `schedule_type`; `NONE` ignores `conf`.
    pub fn parse(schedule_type: ScheduleType, conf: &str) -> Result<Schedule, ScheduleError> {
        Ok(match schedule_type {
            ScheduleType::None => Schedule::None,
            ScheduleType::Cron => Schedule::Cron(CronExpr::parse(conf)?),
            ScheduleType::FixRate => Schedule::FixRate(parse_interval(schedule_type, conf)?),
            ScheduleType::FixDelay => Schedule::FixDelay(parse_interval(schedule_type, conf)?),
        })
    }

    /// The next fire time after `from_ms` (see the module docs for what `from` means per type).
    pub fn next_after(&self, tz: Tz, from_ms: i64) -> Result<Option<i64>, ScheduleError> {
        match self {
            Schedule::None => Ok(None),
            Schedule::Cron(cron) => {
                let from = Utc
                    .timestamp_millis_opt(from_ms)
                    .single()
                    .ok_or_else(|| out_of_range(from_ms))?;
                Ok(cron
                    .next_after(&from.with_timezone(&tz))
                    .map(|t| t.timestamp_millis()))
            }
            Schedule::FixRate(secs) | Schedule::FixDelay(secs) => secs
                .checked_mul(1000)
                .and_then(|ms| from_ms.checked_add(ms))
                .and_then(round_up_to_second)
                .map(Some)
                .ok_or_else(|| out_of_range(from_ms)),
        }
    }
}

/// Checks that `conf` is usable for `schedule_type`.
pub fn validate(schedule_type: ScheduleType, conf: &str) -> Result<(), ScheduleError> {
    Schedule::parse(schedule_type, conf).map(|_| ())
}

/// Resolves a job's time zone: empty means `default`, otherwise an IANA name such as `Asia/Shanghai`.
pub fn parse_timezone(name: &str, default: Tz) -> Result<Tz, ScheduleError> {
    let name = name.trim();
    if name.is_empty() {
        return Ok(default);
    }
    name.parse::<Tz>().map_err(|_| {
        ScheduleError(format!(
            "unknown time zone '{name}'; use an IANA name such as 'Asia/Shanghai', \
             'America/New_York' or 'UTC'"
        ))
    })
}

/// The next fire time after `from_ms`, or `None` when the schedule never fires again.
///
/// For `FIX_DELAY`, `from_ms` must be the end of the previous run.
pub fn next_fire_time(
    schedule_type: ScheduleType,
    conf: &str,
    tz: Tz,
    from_ms: i64,
) -> Result<Option<i64>, ScheduleError> {
    Schedule::parse(schedule_type, conf)?.next_after(tz, from_ms)
}

/// Up to `count` successive fire times after `from_ms` (fewer if the schedule ends).
///
/// `FIX_DELAY` previews assume runs that take no time, i.e. `from + N`, `from + 2N`, …
pub fn preview(
    schedule_type: ScheduleType,
    conf: &str,
    tz: Tz,
    from_ms: i64,
    count: usize,
) -> Result<Vec<i64>, ScheduleError> {
    if count > MAX_PREVIEW_COUNT {
        return Err(ScheduleError(format!(
            "preview count {count} is too large (at most {MAX_PREVIEW_COUNT})"
        )));
    }
    let schedule = Schedule::parse(schedule_type, conf)?;
    let mut times = Vec::with_capacity(count);
    let mut from = from_ms;
    while times.len() < count {
        match schedule.next_after(tz, from)? {
            Some(next) => {
                times.push(next);
                from = next;
            }
            None => break,
        }
    }
    Ok(times)
}

fn parse_interval(schedule_type: ScheduleType, conf: &str) -> Result<i64, ScheduleError> {
    let text = conf.trim();
    let secs = text.parse::<i64>().map_err(|_| {
        ScheduleError(format!(
            "{schedule_type} needs a whole number of seconds of at least 1 as its schedule \
             configuration, got '{conf}'"
        ))
    })?;
    if secs < 1 {
        return Err(ScheduleError(format!(
            "{schedule_type} interval must be at least 1 second, got {secs}"
        )));
    }
    if secs > MAX_INTERVAL_SECS {
        return Err(ScheduleError(format!(
            "{schedule_type} interval {secs} seconds is too large (at most {MAX_INTERVAL_SECS})"
        )));
    }
    Ok(secs)
}

/// XXL-JOB 3.4's rule: a time with milliseconds moves to the next whole second.
fn round_up_to_second(ms: i64) -> Option<i64> {
    match ms.rem_euclid(1000) {
        0 => Some(ms),
        rest => (ms - rest).checked_add(1000),
    }
}

fn out_of_range(from_ms: i64) -> ScheduleError {
    ScheduleError(format!(
        "time {from_ms} ms is outside the range fire times can be computed for"
    ))
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, NaiveDateTime};

    fn ms(s: &str) -> i64 {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
            .unwrap()
            .and_utc()
            .timestamp_millis()
    }

    fn iso(ms: i64, tz: Tz) -> String {
        DateTime::from_timestamp_millis(ms)
            .unwrap()
            .with_timezone(&tz)
            .to_rfc3339()
    }

    fn tz(name: &str) -> Tz {
        name.parse().unwrap()
    }

    #[test]
    fn validate_cron() {
        assert_eq!(validate(ScheduleType::Cron, "0 0 0 * * ? *"), Ok(()));
        assert_eq!(
            validate(ScheduleType::Cron, "0 0 25 * * ?")
                .unwrap_err()
                .to_string(),
            "invalid cron expression '0 0 25 * * ?': hour 25 out of range 0-23"
        );
        assert!(validate(ScheduleType::Cron, "").is_err());
    }

    #[test]
    fn validate_intervals() {
        for t in [ScheduleType::FixRate, ScheduleType::FixDelay] {
            assert_eq!(validate(t, "5"), Ok(()));
            assert_eq!(validate(t, " 30 "), Ok(()));
            assert_eq!(validate(t, "2147483647"), Ok(()));
            let e = validate(t, "abc").unwrap_err().0;
            assert!(e.contains(t.as_str()) && e.contains("'abc'"), "{e}");
            assert!(validate(t, "1.5").unwrap_err().0.contains("'1.5'"));
            assert!(validate(t, "").unwrap_err().0.contains("''"));
            assert!(validate(t, "0")
                .unwrap_err()
                .0
                .ends_with("at least 1 second, got 0"));
            assert!(validate(t, "-3").unwrap_err().0.ends_with("got -3"));
            assert!(validate(t, "2147483648")
                .unwrap_err()
                .0
                .contains("too large"));
        }
        assert_eq!(
            validate(ScheduleType::FixRate, "x")
                .unwrap_err()
                .to_string(),
            "FIX_RATE needs a whole number of seconds of at least 1 as its schedule \
             configuration, got 'x'"
        );
    }

    #[test]
    fn validate_none_ignores_conf() {
        assert_eq!(validate(ScheduleType::None, ""), Ok(()));
        assert_eq!(validate(ScheduleType::None, "garbage"), Ok(()));
    }

    #[test]
    fn time_zones() {
        let utc = tz("UTC");
        assert_eq!(parse_timezone("", utc), Ok(utc));
        assert_eq!(parse_timezone("  ", utc), Ok(utc));
        assert_eq!(
            parse_timezone("Asia/Shanghai", utc),
            Ok(tz("Asia/Shanghai"))
        );
        let e = parse_timezone("Mars/Olympus_Mons", utc).unwrap_err().0;
        assert!(
            e.starts_with("unknown time zone 'Mars/Olympus_Mons'"),
            "{e}"
        );
    }

    #[test]
    fn none_never_fires() {
        assert_eq!(
            next_fire_time(ScheduleType::None, "", tz("UTC"), 0),
            Ok(None)
        );
        assert_eq!(preview(ScheduleType::None, "", tz("UTC"), 0, 5), Ok(vec![]));
    }

    #[test]
    fn fix_rate_rounds_up_to_a_whole_second() {
        let utc = tz("UTC");
        assert_eq!(
            next_fire_time(ScheduleType::FixRate, "5", utc, 1_000_500),
            Ok(Some(1_006_000))
        );
        assert_eq!(
            next_fire_time(ScheduleType::FixRate, "5", utc, 1_000_000),
            Ok(Some(1_005_000))
        );
        assert_eq!(
            next_fire_time(ScheduleType::FixRate, "5", utc, 1_000_001),
            Ok(Some(1_006_000))
        );
        assert!(next_fire_time(ScheduleType::FixRate, "5", utc, i64::MAX - 10).is_err());
    }

    #[test]
    fn fix_delay_counts_from_the_end_of_the_previous_run() {
        let utc = tz("UTC");
        // The run ended at 1_234_567 ms; 10 s later, rounded up.
        assert_eq!(
            next_fire_time(ScheduleType::FixDelay, "10", utc, 1_234_567),
            Ok(Some(1_245_000))
        );
        assert_eq!(
            next_fire_time(ScheduleType::FixDelay, "10", utc, 1_230_000),
            Ok(Some(1_240_000))
        );
        // Time zones do not matter for intervals.
        assert_eq!(
            next_fire_time(ScheduleType::FixDelay, "10", tz("Asia/Kolkata"), 1_230_000),
            Ok(Some(1_240_000))
        );
    }

    #[test]
    fn cron_in_different_zones() {
        let from = ms("2026-06-01 00:00:00");
        let sh = next_fire_time(ScheduleType::Cron, "0 0 9 * * ?", tz("Asia/Shanghai"), from)
            .unwrap()
            .unwrap();
        let ny = next_fire_time(
            ScheduleType::Cron,
            "0 0 9 * * ?",
            tz("America/New_York"),
            from,
        )
        .unwrap()
        .unwrap();
        assert_eq!(sh, ms("2026-06-01 01:00:00"));
        assert_eq!(ny, ms("2026-06-01 13:00:00"));
        assert_eq!(iso(sh, tz("Asia/Shanghai")), "2026-06-01T09:00:00+08:00");
        assert_eq!(iso(ny, tz("America/New_York")), "2026-06-01T09:00:00-04:00");
    }

    #[test]
    fn cron_is_strictly_after_and_handles_milliseconds() {
        let utc = tz("UTC");
        let at = ms("2026-04-10 10:00:00");
        assert_eq!(
            next_fire_time(ScheduleType::Cron, "* * * * * ?", utc, at),
            Ok(Some(at + 1000))
        );
        assert_eq!(
            next_fire_time(ScheduleType::Cron, "* * * * * ?", utc, at + 999),
            Ok(Some(at + 1000))
        );
        assert_eq!(
            next_fire_time(ScheduleType::Cron, "0 0 0 1 1 ? 2000", utc, at),
            Ok(None)
        );
        assert!(next_fire_time(ScheduleType::Cron, "0 0 0 * * *", utc, at).is_err());
    }

    #[test]
    fn cron_dst_through_the_millisecond_api() {
        let ny = tz("America/New_York");
        let next = next_fire_time(
            ScheduleType::Cron,
            "0 30 2 * * ?",
            ny,
            ms("2026-03-07 12:00:00"),
        )
        .unwrap()
        .unwrap();
        assert_eq!(iso(next, ny), "2026-03-09T02:30:00-04:00");
    }

    #[test]
    fn previews() {
        let utc = tz("UTC");
        let from = ms("2026-04-10 10:00:00");
        assert_eq!(
            preview(ScheduleType::Cron, "0 0/10 * * * ?", utc, from, 5).unwrap(),
            [
                ms("2026-04-10 10:10:00"),
                ms("2026-04-10 10:20:00"),
                ms("2026-04-10 10:30:00"),
                ms("2026-04-10 10:40:00"),
                ms("2026-04-10 10:50:00")
            ]
        );
        assert_eq!(
            preview(ScheduleType::FixRate, "30", utc, from + 250, 5).unwrap(),
            [
                from + 31_000,
                from + 61_000,
                from + 91_000,
                from + 121_000,
                from + 151_000
            ]
        );
        assert_eq!(
            preview(ScheduleType::FixDelay, "7", utc, from, 5).unwrap(),
            [
                from + 7_000,
                from + 14_000,
                from + 21_000,
                from + 28_000,
                from + 35_000
            ]
        );
        // Non-UTC zone: 08:00 in Tokyo is 23:00 UTC the day before.
        assert_eq!(
            preview(
                ScheduleType::Cron,
                "0 0 8 ? * MON-FRI",
                tz("Asia/Tokyo"),
                from,
                3
            )
            .unwrap(),
            [
                ms("2026-04-12 23:00:00"),
                ms("2026-04-13 23:00:00"),
                ms("2026-04-14 23:00:00")
            ]
        );
        // A schedule that ends yields fewer times.
        assert_eq!(
            preview(ScheduleType::Cron, "0 0 0 1 1 ? 2027-2028", utc, from, 5).unwrap(),
            [ms("2027-01-01 00:00:00"), ms("2028-01-01 00:00:00")]
        );
        assert_eq!(
            preview(ScheduleType::FixRate, "5", utc, from, 0),
            Ok(vec![])
        );
        assert!(
            preview(ScheduleType::FixRate, "5", utc, from, MAX_PREVIEW_COUNT + 1)
                .unwrap_err()
                .0
                .contains("too large")
        );
        assert!(preview(ScheduleType::FixRate, "0", utc, from, 5).is_err());
    }

    #[test]
    fn schedule_parses_once() {
        let s = Schedule::parse(ScheduleType::Cron, "0 0 12 * * ?").unwrap();
        assert!(matches!(s, Schedule::Cron(_)));
        assert_eq!(
            s.next_after(tz("UTC"), ms("2026-04-10 10:00:00")),
            Ok(Some(ms("2026-04-10 12:00:00")))
        );
        assert_eq!(
            Schedule::parse(ScheduleType::FixDelay, "9"),
            Ok(Schedule::FixDelay(9))
        );
    }
}
