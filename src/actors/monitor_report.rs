//! LogReportActor: daily run counts and log retention (XXL-JOB `JobLogReportHelper`, every 60 s).
//!
//! Each pass counts the runs triggered today, yesterday and the day before (days begin at
//! midnight in the admin's `--timezone`) into `job_log_report`, and drops expired sessions.
//! A past day is counted again at each pass only while it is not settled: a count made after
//! the day was over that found every run with a result can change only when runs are deleted,
//! so such a day is counted again every [`SETTLED_DAY_RECOUNT_MS`] instead of every minute
//! (each count reads the day's every run). With
//! `--log-retention-days N > 0`, the first pass and then at most one pass a day delete the logs
//! triggered before today's midnight minus N days, in batches, until none are left.
//!
//! Runs removed by their job's own bounds (`logRetentionDays`, `logRetentionRuns`) would keep
//! their lines on the executors for the executors' own days, so after such a pass the executors
//! still listed in the runs' groups are asked to drop them (`/dropLogs`, jobwheel's extension;
//! XXL-JOB executors answer it not found and keep their files to their own retention).

use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

use actix::prelude::*;
use chrono::{Days, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use super::monitor::{MonitorSettings, Pace, PassTurns};
use super::supervision::{answers_probes, ActorLife};
use crate::clock::now_ms;
use crate::executor_calls::{Credentials, ExecutorCalls};
use crate::model::{address_key, executor_token, LogReport};
use crate::protocol::{AdminProtocol, DroppedLog, DROP_LOGS_MAX_RUNS, SUCCESS_CODE};
use crate::store::{ActorStore, MonitorPass, RunLogPlace, Store, StoreError};

/// Most batches one retention run deletes; the rest goes at the next run.
const MAX_RETENTION_BATCHES: u32 = 100_000;

/// How often a settled past day is counted again (its runs may have been deleted since).
pub const SETTLED_DAY_RECOUNT_MS: i64 = 10 * 60 * 1_000;

/// How long after a day's end runs with that day's trigger time may still be written (a fire
/// dispatched late by a take-over); a count made earlier does not settle the day.
const DAY_END_MARGIN_MS: i64 = 60_000;

/// Most runs one pass asks executors to drop; the lines of any beyond go by the executors' own
/// retention.
pub const MAX_DROPS_PER_PASS: usize = 100_000;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportPassReport {
    /// The reports written, today first (a settled past day is not written again every pass).
    pub reports: Vec<LogReport>,
    /// Whether the retention ran.
    pub retention_ran: bool,
    /// Logs deleted by the retention.
    pub logs_deleted: u64,
    /// Delete statements issued.
    pub batches: u32,
    /// Expired sessions removed.
    pub sessions_deleted: u64,
    /// Runs removed by their job's own bounds whose executors are to drop their lines (at most
    /// [`MAX_DROPS_PER_PASS`]).
    pub dropped: Vec<RunLogPlace>,
}

/// Epoch ms of the first instant of `date` in `tz` (midnight, or the first hour that exists
/// when a DST change skips midnight).
pub fn day_start(tz: Tz, date: NaiveDate) -> i64 {
    for hour in 0..24 {
        if let Some(local) = date.and_hms_opt(hour, 0, 0) {
            if let Some(t) = tz.from_local_datetime(&local).earliest() {
                return t.timestamp_millis();
            }
        }
    }
    Utc.from_utc_datetime(&date.and_time(chrono::NaiveTime::MIN))
        .timestamp_millis()
}

/// The date `now` falls on in `tz`.
pub fn local_date(tz: Tz, now: i64) -> NaiveDate {
    match Utc.timestamp_millis_opt(now).single() {
        Some(t) => t.with_timezone(&tz).date_naive(),
        None => NaiveDate::MIN,
    }
}

/// Logs triggered before this instant are expired: today's midnight minus `days` days in `tz`.
pub fn retention_cutoff(tz: Tz, now: i64, days: u32) -> i64 {
    let today = local_date(tz, now);
    let day = today
        .checked_sub_days(Days::new(u64::from(days)))
        .unwrap_or(NaiveDate::MIN);
    day_start(tz, day)
}

/// One pass: the three daily reports, expired sessions, and the retention when `retention_due`.
pub async fn report_pass(
    store: &Store,
    settings: &MonitorSettings,
    now: i64,
    retention_due: bool,
) -> Result<ReportPassReport, StoreError> {
    let tz = settings.timezone;
    let today = local_date(tz, now);
    let mut report = ReportPassReport::default();
    let first = today.checked_sub_days(Days::new(2)).unwrap_or(today);
    let stored = store.list_log_reports(day_start(tz, first), now).await?;
    for back in 0..3u64 {
        let Some(day) = today.checked_sub_days(Days::new(back)) else {
            continue;
        };
        let start = day_start(tz, day);
        let end = day
            .checked_add_days(Days::new(1))
            .map(|next| day_start(tz, next))
            .unwrap_or(i64::MAX);
        let last = stored.iter().find(|r| r.trigger_day == start);
        if last.is_some_and(|last| is_settled(last, end, now)) {
            continue;
        }
        let counts = store.count_logs(start, end).await?;
        let row = LogReport {
            trigger_day: start,
            running_count: counts.running,
            suc_count: counts.success,
            fail_count: counts.failed(),
            update_time: now,
        };
        store.upsert_log_report(&row).await?;
        report.reports.push(row);
    }
    report.sessions_deleted = store.delete_expired_sessions(now).await?;
    if report.sessions_deleted > 0 {
        log::debug!("removed {} expired session(s)", report.sessions_deleted);
    }
    if retention_due {
        retention(store, settings, now, &mut report).await?;
    }
    Ok(report)
}

/// The retention: rows older than the admin's days, except those of jobs with days of their own;
/// then each such job's rows by its own days and newest-runs bound.
async fn retention(
    store: &Store,
    settings: &MonitorSettings,
    now: i64,
    report: &mut ReportPassReport,
) -> Result<(), StoreError> {
    let tz = settings.timezone;
    let batch = settings.retention_batch.max(1);
    if settings.log_retention_days > 0 {
        let before = retention_cutoff(tz, now, settings.log_retention_days);
        report.retention_ran = true;
        let deleted = clear_in_batches(store, report, false, || {
            store.find_log_ids_expired(before, batch)
        })
        .await?;
        if deleted > 0 {
            log::info!(
                "log retention: deleted {deleted} log(s) triggered before {} ({} days)",
                Utc.timestamp_millis_opt(before)
                    .single()
                    .map(|t| t.with_timezone(&tz).to_rfc3339())
                    .unwrap_or_else(|| before.to_string()),
                settings.log_retention_days
            );
        }
    }
    for (job_id, days, runs) in store.jobs_with_own_retention().await? {
        report.retention_ran = true;
        let mut deleted = 0;
        if let Ok(days @ 1..) = u32::try_from(days) {
            let before = retention_cutoff(tz, now, days);
            deleted += clear_in_batches(store, report, true, || {
                store.find_log_ids_to_clear(None, Some(job_id), Some(before), None, batch)
            })
            .await?;
        }
        if runs > 0 {
            let keep = Some(i64::from(runs));
            deleted += clear_in_batches(store, report, true, || {
                store.find_log_ids_to_clear(None, Some(job_id), None, keep, batch)
            })
            .await?;
        }
        if deleted > 0 {
            log::info!(
                "log retention: deleted {deleted} log(s) of job {job_id} (its own: {days} days, newest {runs} runs)"
            );
        }
    }
    Ok(())
}

/// Deletes what `find` names, batch after batch, until it names nothing; how many went. With
/// `drop_lines`, where the runs' lines are is kept in the report first.
async fn clear_in_batches<F, Fut>(
    store: &Store,
    report: &mut ReportPassReport,
    drop_lines: bool,
    find: F,
) -> Result<u64, StoreError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Vec<i64>, StoreError>>,
{
    let mut total = 0;
    while report.batches < MAX_RETENTION_BATCHES {
        let ids = find().await?;
        if ids.is_empty() {
            break;
        }
        if drop_lines && report.dropped.len() < MAX_DROPS_PER_PASS {
            let mut places = store.run_log_places(&ids).await?;
            places.truncate(MAX_DROPS_PER_PASS - report.dropped.len());
            report.dropped.extend(places);
        }
        let deleted = store.delete_logs(&ids).await?;
        report.batches += 1;
        report.logs_deleted += deleted;
        total += deleted;
        if deleted == 0 {
            break; // another admin deleted them first; the next query sees what is left
        }
    }
    Ok(total)
}

/// Asks the executors still listed in the runs' groups to drop the runs' lines, with each
/// group's token. An address no longer in its group is not sent the token: the lines there go
/// by that executor's own retention.
async fn drop_on_executors(
    store: ActorStore,
    global_token: String,
    calls: Rc<ExecutorCalls>,
    dropped: Vec<RunLogPlace>,
) {
    let groups = match store.run(|s| async move { s.list_groups().await }).await {
        Ok(groups) => groups,
        Err(e) => {
            log::warn!("log retention: cannot read the groups to have run logs dropped: {e}");
            return;
        }
    };
    let mut by_target: HashMap<(i32, String), Vec<DroppedLog>> = HashMap::new();
    for place in dropped {
        let Some(address) = place.executor_address else {
            continue;
        };
        by_target
            .entry((place.job_group, address))
            .or_default()
            .push(DroppedLog {
                log_id: place.log_id,
                log_date_time: place.trigger_time,
            });
    }
    for ((group_id, address), logs) in by_target {
        let key = address_key(&address);
        let listed = groups
            .iter()
            .find(|g| g.id == group_id && g.address_list.iter().any(|a| address_key(a) == key));
        let Some(group) = listed else {
            log::info!(
                "log retention: {address} is no longer in group {group_id}; its {} removed run log(s) go by its own retention",
                logs.len()
            );
            continue;
        };
        let creds = Credentials {
            access_token: Some(executor_token(Some(group), &global_token)),
            app_name: Some(group.app_name.clone()),
            protocol: AdminProtocol::V2,
        };
        for chunk in logs.chunks(DROP_LOGS_MAX_RUNS) {
            let answer = calls.drop_logs(&address, &creds, chunk.to_vec()).await;
            if answer.code != SUCCESS_CODE {
                // an XXL-JOB executor has no such path; one that is down keeps its files
                log::info!(
                    "log retention: {address} (group {group_id}) did not drop {} run log(s): {}",
                    logs.len(),
                    answer.msg.as_deref().unwrap_or("no message")
                );
                break;
            }
        }
    }
}

/// True when `last`, the stored count of the day ending at `end`, need not be made again at
/// `now`: made after the day was over, it found no run without a result, and is recent.
fn is_settled(last: &LogReport, end: i64, now: i64) -> bool {
    last.running_count == 0
        && last.update_time >= end.saturating_add(DAY_END_MARGIN_MS)
        && now - last.update_time < SETTLED_DAY_RECOUNT_MS
}

/// The report and retention actor; supervised.
pub struct LogReportActor {
    store: ActorStore,
    settings: MonitorSettings,
    last_retention: Option<Instant>,
    turns: PassTurns,
    pace: Pace,
    life: ActorLife,
    /// The admin's token, sent to executors whose group has none of its own.
    executor_token: String,
    calls: Rc<ExecutorCalls>,
}

impl LogReportActor {
    /// A report actor with the settings' interval, zone and retention, passing when its turn.
    pub fn new(store: ActorStore, settings: MonitorSettings, turns: PassTurns) -> Self {
        LogReportActor {
            store,
            settings,
            last_retention: None,
            turns,
            pace: Pace::default(),
            life: ActorLife::detached("log-report"),
            executor_token: String::new(),
            calls: Rc::new(ExecutorCalls::default()),
        }
    }

    /// Asks executors to drop removed runs' lines with `token` (a group's own token first).
    pub fn with_executor_token(self, token: String) -> Self {
        LogReportActor {
            executor_token: token,
            ..self
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        LogReportActor { life, ..self }
    }

    /// Whether the retention's cadence has come round: with the admin's setting at 0, jobs may
    /// still keep less of their own.
    fn retention_due(&self) -> bool {
        match self.last_retention {
            None => true,
            Some(at) => at.elapsed() >= self.settings.retention_every,
        }
    }

    fn pass(&mut self, ctx: &mut Context<Self>) {
        let store = self.store.clone();
        let settings = self.settings.clone();
        let due = self.retention_due();
        let life = self.life.clone();
        let turns = self.turns.clone();
        life.working();
        ctx.wait(
            async move {
                life.fault_point(&store).await?;
                let (now, interval) = (now_ms(), settings.report_interval);
                if !turns
                    .take(&store, MonitorPass::Report, interval, now)
                    .await?
                {
                    return Ok(ReportPassReport::default());
                }
                store
                    .run(move |s| async move { report_pass(&s, &settings, now, due).await })
                    .await
            }
            .into_actor(self)
            .map(|result, act, ctx| {
                let delay = match result {
                    Ok(report) => {
                        if report.retention_ran {
                            act.last_retention = Some(Instant::now());
                        }
                        if !report.dropped.is_empty() {
                            ctx.spawn(
                                drop_on_executors(
                                    act.store.clone(),
                                    act.executor_token.clone(),
                                    act.calls.clone(),
                                    report.dropped,
                                )
                                .into_actor(act),
                            );
                        }
                        act.pace.worked(act.settings.report_interval)
                    }
                    Err(e) if act.life.stop_on_panic(&e, ctx) => return,
                    Err(e) => {
                        let level = act.store.failure_level(log::Level::Error);
                        act.pace
                            .failed(act.settings.report_interval, "log report", level, &e)
                    }
                };
                ctx.run_later(delay, |act, ctx| act.pass(ctx));
            }),
        );
    }
}

impl Actor for LogReportActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let retention = match self.settings.log_retention_days {
            0 => "logs kept forever".to_string(),
            n => format!("logs kept {n} days"),
        };
        log::info!(
            "log report actor started (every {:?}, days in {}, {retention})",
            self.settings.report_interval,
            self.settings.timezone
        );
        let wait = self.life.started();
        ctx.run_later(wait, |act, ctx| act.pass(ctx));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

impl Supervised for LogReportActor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // the counts are re-read from the database; retention runs again at the first pass
        self.pace = Pace::default();
        self.last_retention = None;
    }
}

answers_probes!(LogReportActor);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_begin_at_local_midnight() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        let date = NaiveDate::from_ymd_opt(2024, 7, 1).unwrap();
        // 2024-06-30T22:00:00Z
        assert_eq!(day_start(berlin, date), 1_719_784_800_000);
        assert_eq!(day_start(Tz::UTC, date), 1_719_792_000_000);
        // 2024-06-30T23:30Z is already July 1st in Berlin
        assert_eq!(local_date(berlin, 1_719_790_200_000), date);
        assert_eq!(
            local_date(Tz::UTC, 1_719_790_200_000),
            NaiveDate::from_ymd_opt(2024, 6, 30).unwrap()
        );
        // Santiago skipped midnight on 2022-09-11 (00:00 -> 01:00)
        let santiago: Tz = "America/Santiago".parse().unwrap();
        let skipped = NaiveDate::from_ymd_opt(2022, 9, 11).unwrap();
        // 01:00 -03:00 = 04:00Z
        assert_eq!(day_start(santiago, skipped), 1_662_868_800_000);
    }

    #[test]
    fn a_past_day_is_settled_by_a_late_enough_count_without_running_runs() {
        let end = 1_720_569_600_000; // a midnight
        let count = |running_count, update_time| LogReport {
            trigger_day: end - 86_400_000,
            running_count,
            suc_count: 5,
            fail_count: 1,
            update_time,
        };
        let later = end + DAY_END_MARGIN_MS;
        assert!(is_settled(&count(0, later), end, later + 1));
        assert!(
            !is_settled(&count(1, later), end, later + 1),
            "a run without result"
        );
        assert!(
            !is_settled(&count(0, later - 1), end, later + 1),
            "counted too early"
        );
        let stale = later + SETTLED_DAY_RECOUNT_MS;
        assert!(
            !is_settled(&count(0, later), end, stale),
            "counted again now and then"
        );
    }

    #[test]
    fn cutoff_is_midnight_n_days_ago() {
        // 2024-07-10T12:00Z, 30 days: 2024-06-10T00:00Z
        assert_eq!(
            retention_cutoff(Tz::UTC, 1_720_612_800_000, 30),
            1_717_977_600_000
        );
    }
}
