//! FailMonitor: retries and alarms for failed runs (XXL-JOB `JobFailMonitorHelper`, every 10 s).
//!
//! Each pass (on the admin whose turn it is: [`PassTurns`]) reads failed logs whose
//! `alarm_status` is 0 and claims each with a compare-and-set to -1, so one admin of a cluster
//! handles it even when passes overlap. For a claimed log:
//! - **retry**: when it has retries left and the job still exists, a RETRY trigger with one
//!   retry fewer (same parameter, same shard) is dispatched and XXL-JOB's note is appended to
//!   the trigger message;
//! - **alarm**: when the job still exists, its e-mail and webhook alarms are sent; the log's
//!   `alarm_status` becomes 2 (delivered, or nothing configured) or 3 (a channel failed). A log
//!   whose job is gone gets 1.
//!
//! **Retry interval** (jobwheel's addition; XXL-JOB retries within 10 s): a log of a job with
//! `retry_interval_secs > 0` that still has retries is not even read until that many seconds
//! have passed since its result (or its trigger, if the trigger failed) — the store query
//! filters on it. Nothing is held in memory, so a pending retry survives a restart, and the
//! usual claim makes it fire once. Its alarm goes out with the retry, at the same pass.

use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use futures_util::stream::{self, StreamExt};

use super::dispatch::{trigger_and_wait, Dispatcher, Trigger};
use super::monitor::{MonitorSettings, Pace, PassTurns};
use super::supervision::{answers_probes, ActorLife};
use crate::alarm::{Alarm, AlarmEvent, Alarmer, EmailAlarm, WebhookAlarm};
use crate::clock::now_ms;
use crate::metrics::AdminMetrics;
use crate::model::{alarm_status, TriggerType};
use crate::store::{ActorStore, MonitorPass, StoreError};

/// XXL-JOB's note appended to the trigger message of a log that was retried.
pub const RETRY_NOTE: &str =
    "<br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>Fail retry trigger<<<<<<<<<<< </span><br>";
/// Most logs read per pass (XXL-JOB's 1000).
pub const FAIL_BATCH: i64 = 1_000;
/// Logs handled at once within a pass (alarms and retries wait on the network).
const CONCURRENCY: usize = 8;
/// How long a pass waits to learn a retry's log ids; the retry goes on regardless.
const RETRY_REPORT_WAIT: Duration = Duration::from_secs(60);

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailPassReport {
    /// Logs claimed and handled by this admin.
    pub handled: usize,
    /// Logs another admin claimed first.
    pub skipped: usize,
    /// Retries dispatched.
    pub retried: usize,
    /// Logs whose alarms were delivered (or had none to send).
    pub alarms_sent: usize,
    /// Logs where an alarm channel failed.
    pub alarms_failed: usize,
    /// Logs that could not be handled (database errors); released for the next pass when possible.
    pub errors: usize,
}

enum LogOutcome {
    Skipped,
    Handled { retried: bool, status: i32 },
}

/// Builds the admin's alarm channels: webhook always, e-mail when an SMTP server is set.
pub fn build_alarmer(settings: &MonitorSettings) -> Alarmer {
    let mut channels: Vec<Box<dyn Alarm>> = Vec::new();
    match &settings.smtp {
        Some(smtp) => match EmailAlarm::new(smtp) {
            Ok(email) => {
                log::info!(
                    "e-mail alarms via {}:{} ({:?}) from {}",
                    smtp.host,
                    smtp.port,
                    smtp.tls,
                    smtp.from
                );
                channels.push(Box::new(email));
            }
            Err(e) => log::error!("e-mail alarms are off: {e}"),
        },
        None => log::info!("e-mail alarms are off (no --smtp-host)"),
    }
    channels.push(Box::new(WebhookAlarm::new(
        settings.webhook_timeout,
        settings.webhook_allow_private,
    )));
    Alarmer::new(channels)
}

/// One pass: reads up to `batch` due failed logs and retries/alarms each.
/// `Err` only when the failed logs cannot be read at all.
pub async fn fail_pass(
    store: &ActorStore,
    dispatcher: &Addr<Dispatcher>,
    alarmer: &Alarmer,
    metrics: &AdminMetrics,
    (now, batch): (i64, i64),
) -> Result<FailPassReport, StoreError> {
    let ids = store
        .run(move |s| async move { s.find_failed_log_ids_due(now, batch).await })
        .await?;
    let outcomes: Vec<Result<LogOutcome, StoreError>> = stream::iter(ids)
        .map(|id| handle_failed_log(store, dispatcher, alarmer, id))
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut report = FailPassReport::default();
    for outcome in outcomes {
        match outcome {
            Ok(LogOutcome::Skipped) => report.skipped += 1,
            Ok(LogOutcome::Handled { retried, status }) => {
                report.handled += 1;
                report.retried += usize::from(retried);
                if retried {
                    metrics.retried();
                }
                if status == alarm_status::SENT {
                    report.alarms_sent += 1;
                    metrics.alarm(true);
                } else if status == alarm_status::FAILED {
                    report.alarms_failed += 1;
                    metrics.alarm(false);
                }
            }
            Err(_) => report.errors += 1,
        }
    }
    Ok(report)
}

async fn handle_failed_log(
    store: &ActorStore,
    dispatcher: &Addr<Dispatcher>,
    alarmer: &Alarmer,
    id: i64,
) -> Result<LogOutcome, StoreError> {
    let claimed = store
        .run(move |s| async move {
            s.update_alarm_status(id, alarm_status::DEFAULT, alarm_status::LOCKED)
                .await
        })
        .await
        .inspect_err(|e| log::error!("fail monitor: cannot claim log {id}: {e}"))?;
    if !claimed {
        return Ok(LogOutcome::Skipped);
    }
    let loaded = store
        .run(move |s| async move {
            let Some(log) = s.get_log(id).await? else {
                return Ok(None);
            };
            let job = s.get_job(log.job_id).await?;
            let group = match &job {
                Some(job) => s.get_group(job.job_group).await?,
                None => None,
            };
            Ok(Some((log, job, group)))
        })
        .await;
    let (log, job, group) = match loaded {
        Ok(Some(found)) => found,
        Ok(None) => return Ok(LogOutcome::Skipped), // deleted meanwhile
        Err(e) => {
            log::error!("fail monitor: cannot read log {id} (released for the next pass): {e}");
            // nothing happened yet: give the log back so the next pass tries again
            release(store, id).await;
            return Err(e);
        }
    };

    let mut retried = false;
    match &job {
        Some(job) if log.executor_fail_retry_count > 0 => {
            let left = log.executor_fail_retry_count - 1;
            let trigger = Trigger {
                fail_retry_count: Some(left),
                executor_param: log.executor_param.clone(),
                sharding_param: log.executor_sharding_param.clone(),
                ..Trigger::new(job.id, TriggerType::Retry, 0)
            };
            match actix_rt::time::timeout(RETRY_REPORT_WAIT, trigger_and_wait(dispatcher, trigger))
                .await
            {
                Ok(Some(report)) if !report.log_ids.is_empty() => log::info!(
                    "job {} log {} failed: retry triggered ({left} left after it), new log(s) {:?}",
                    job.id,
                    log.id,
                    report.log_ids
                ),
                // no log row was written (database error, job deleted meanwhile) or the dispatcher
                // is stopping: nothing ran, so the next pass tries again
                Ok(report) => {
                    let why = report
                        .and_then(|r| r.error)
                        .unwrap_or_else(|| "the dispatcher is stopping".to_string());
                    log::warn!(
                        "job {} log {}: retry not triggered ({why}); released for the next pass",
                        job.id,
                        log.id
                    );
                    release(store, id).await;
                    return Ok(LogOutcome::Skipped);
                }
                // still dispatching (e.g. slow FAILOVER probes): it will run, and record itself
                Err(_) => log::info!(
                    "job {} log {} failed: retry triggered ({left} left after it)",
                    job.id,
                    log.id
                ),
            }
            retried = true;
            let log_id = log.id;
            let noted = store
                .run(move |s| async move { s.append_trigger_msg(log_id, RETRY_NOTE).await })
                .await;
            if let Err(e) = noted {
                log::warn!(
                    "log {}: cannot note the retry in its trigger message: {e}",
                    log.id
                );
            }
        }
        None if log.executor_fail_retry_count > 0 => log::info!(
            "log {} failed but job {} is gone: no retry, no alarm",
            log.id,
            log.job_id
        ),
        _ => {}
    }

    let status = match job {
        Some(job) => {
            let event = AlarmEvent {
                job,
                group,
                log,
                workflow: None,
            };
            alarmer.raise(&event).await.status()
        }
        None => alarm_status::NOT_NEEDED,
    };
    set_final_status(store, id, status).await?;
    Ok(LogOutcome::Handled { retried, status })
}

/// Gives a claimed log back (alarm status -1 to 0) for the next pass.
async fn release(store: &ActorStore, id: i64) {
    let released = store
        .run(move |s| async move {
            s.update_alarm_status(id, alarm_status::LOCKED, alarm_status::DEFAULT)
                .await
        })
        .await;
    if let Err(e) = released {
        log::error!("log {id}: cannot release the fail monitor's claim, it stays claimed: {e}");
    }
}

/// Records the alarm outcome, trying a few times: a log left at -1 would never be looked at again.
async fn set_final_status(store: &ActorStore, id: i64, status: i32) -> Result<(), StoreError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let recorded = store
            .run(move |s| async move {
                s.update_alarm_status(id, alarm_status::LOCKED, status)
                    .await
            })
            .await;
        match recorded {
            Ok(_) => return Ok(()),
            Err(e) if attempt < 3 => {
                log::warn!(
                    "log {id}: cannot record alarm status {status} (attempt {attempt}): {e}"
                );
                actix_rt::time::sleep(Duration::from_millis(500 * attempt)).await;
            }
            Err(e) => {
                log::error!(
                    "log {id}: alarm status {status} not recorded, the log stays claimed: {e}"
                );
                return Err(e);
            }
        }
    }
}

/// The fail monitor actor; supervised.
pub struct FailMonitor {
    store: ActorStore,
    dispatcher: Addr<Dispatcher>,
    alarmer: Rc<Alarmer>,
    interval: Duration,
    turns: PassTurns,
    pace: Pace,
    life: ActorLife,
    metrics: Arc<AdminMetrics>,
}

impl FailMonitor {
    /// A monitor with the channels of [`build_alarmer`]; create it on the arbiter it runs on.
    pub fn new(
        store: ActorStore,
        dispatcher: Addr<Dispatcher>,
        settings: &MonitorSettings,
        turns: PassTurns,
        metrics: Arc<AdminMetrics>,
    ) -> Self {
        Self::with_alarmer(
            store,
            dispatcher,
            build_alarmer(settings),
            settings.fail_interval,
            turns,
            metrics,
        )
    }

    /// A monitor with the given alarm channels, passing every `interval` when its turn, and
    /// counting retries and alarms in `metrics`.
    pub fn with_alarmer(
        store: ActorStore,
        dispatcher: Addr<Dispatcher>,
        alarmer: Alarmer,
        interval: Duration,
        turns: PassTurns,
        metrics: Arc<AdminMetrics>,
    ) -> Self {
        FailMonitor {
            metrics,
            store,
            dispatcher,
            alarmer: Rc::new(alarmer),
            interval,
            turns,
            pace: Pace::default(),
            life: ActorLife::detached("fail-monitor"),
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        FailMonitor { life, ..self }
    }

    fn pass(&mut self, ctx: &mut Context<Self>) {
        let store = self.store.clone();
        let dispatcher = self.dispatcher.clone();
        let alarmer = self.alarmer.clone();
        let life = self.life.clone();
        life.working();
        let metrics = self.metrics.clone();
        let (turns, interval) = (self.turns.clone(), self.interval);
        ctx.wait(
            async move {
                life.fault_point(&store).await?;
                let now = now_ms();
                if !turns.take(&store, MonitorPass::Fail, interval, now).await? {
                    return Ok(FailPassReport::default());
                }
                fail_pass(&store, &dispatcher, &alarmer, &metrics, (now, FAIL_BATCH)).await
            }
            .into_actor(self)
            .map(|result, act, ctx| {
                let delay = match result {
                    Ok(report) => {
                        if report.handled > 0 || report.errors > 0 {
                            log::debug!("fail monitor pass: {report:?}");
                        }
                        act.pace.worked(act.interval)
                    }
                    Err(e) if act.life.stop_on_panic(&e, ctx) => return,
                    Err(e) => {
                        let level = act.store.failure_level(log::Level::Error);
                        act.pace.failed(act.interval, "fail monitor", level, &e)
                    }
                };
                ctx.run_later(delay, |act, ctx| act.pass(ctx));
            }),
        );
    }
}

impl Actor for FailMonitor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        log::info!("fail monitor started (every {:?})", self.interval);
        let wait = self.life.started();
        ctx.run_later(wait, |act, ctx| act.pass(ctx));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

impl Supervised for FailMonitor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // pending retries and alarms live in the database; the next pass reads them again
        self.pace = Pace::default();
    }
}

answers_probes!(FailMonitor);
