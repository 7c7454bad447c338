//! ScheduleActor: the pre-read loop (XXL-JOB `JobScheduleHelper` schedule thread).
//!
//! Once a second it reads the scheduled jobs due within the next 5 s
//! (a bounded batch; it loops at once when the batch was full), handles misfires, computes next
//! fire times and claims them with a compare-and-set on `trigger_next_time`. Only after the
//! transaction commits does it fire what is due and put the rest into the ring, so a fire time
//! is dispatched exactly once whatever the number of admins. Unlike XXL-JOB it fills the whole
//! 5 s window per job in one pass, so a late scan never leaves a gap.
//!
//! Each claimed fire time is also written as this admin's claim in the same transaction, and a
//! pass first takes over the claims of admins that stopped beating ([`super::takeover`]), so a
//! claimed fire is dispatched even when its admin dies before its time.
//!
//! A lone admin, and a pass that takes over, hold the cluster lock; admins that split the jobs
//! between them read their shares side by side, each locking only the rows it reads and
//! skipping rows another pass holds, so N admins never queue behind one lock.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono_tz::Tz;

use super::dispatch::{Dispatcher, Trigger, TriggerBatch};
use super::fire::{first_jobs, Fire};
use super::lease::Lease;
use super::node_beat::{GetPassDuty, NodeBeat, PassDuty};
use super::ring::{FireTime, RingActor, ScheduleAll};
use super::supervision::{answers_probes, ActorLife};
use super::takeover::take_over;
use super::timing_rules::{
    FENCE_AFTER_MS, MISFIRE_AFTER_MS, NODE_DEAD_AFTER_MS, PRE_READ_MS, STRAY_AFTER_MS,
    TAKEOVER_BATCH,
};
use crate::clock::now_ms;
use crate::metrics::AdminMetrics;
use crate::model::{DueJob, MisfireStrategy, ScheduleType, TriggerType, AWAITING_COMPLETION};
use crate::store::{ActorStore, ClaimKey, ScheduleUpdate, Share, Store, StoreError};
use crate::timing::{self, Schedule};

/// Most fire times one job contributes to one pass (a 1 s schedule needs 6).
const MAX_FIRES_PER_JOB: usize = 64;
/// Where in each second a pass starts: after the second's executor calls have gone out (they
/// start at the boundary) and before the ring hands over the next second's fires (halfway),
/// so its writes compete with neither. Any point works for correctness, as a pass reads
/// [`PRE_READ_MS`] ahead.
const PASS_AT_MS: i64 = 250;
/// Longest wait between retries after database errors: short, so that scheduling resumes
/// within seconds of the database's return (a failed pass costs one query).
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// Stop pre-reading (graceful shutdown); what is in the ring still fires.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopScheduling;

/// What one pass decided and claimed.
#[derive(Debug, Default)]
pub struct PassResult {
    /// Claimed fire times, due now or within the window.
    pub fires: Vec<Fire>,
    /// Jobs read; equal to the batch size means "more may be due".
    pub read: usize,
    /// Fire times taken over from stopped admins; a full batch means "more may be left".
    pub taken_over: usize,
}

/// This admin in the cluster, as a pass needs it.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    /// Its id: the owner of the fire times it claims.
    pub id: &'a str,
    /// Whether this pass takes over the fire times of admins that stopped beating.
    pub take_over: bool,
    /// The jobs it reads (besides any that are [`STRAY_AFTER_MS`] late).
    pub share: Share,
}

/// The pre-read loop; supervised.
pub struct ScheduleActor {
    store: ActorStore,
    ring: Addr<RingActor>,
    dispatcher: Addr<Dispatcher>,
    node: Arc<str>,
    beat: Addr<NodeBeat>,
    default_tz: Tz,
    batch: i64,
    failures: u32,
    stopped: bool,
    /// Claims of passes whose commit failed yet may have been written (see [`pre_read`]),
    /// shared with the pass in flight, which hands them back.
    unanswered: Arc<Mutex<Vec<ClaimKey>>>,
    /// This admin's lease (none for a lone admin, whose claims no one takes over).
    lease: Option<Arc<Lease>>,
    /// Whether passes wait for a heartbeat to land (see [`Lease::stale`]).
    waiting_for_beat: bool,
    life: ActorLife,
    metrics: Arc<AdminMetrics>,
}

impl ScheduleActor {
    /// A scheduler for admin `node` (whose heartbeat is `beat`) reading at most `batch` jobs
    /// per pass, timing its passes in `metrics`.
    pub fn new(
        store: ActorStore,
        ring: Addr<RingActor>,
        dispatcher: Addr<Dispatcher>,
        (node, beat): (Arc<str>, Addr<NodeBeat>),
        (default_tz, batch): (Tz, i64),
        metrics: Arc<AdminMetrics>,
    ) -> Self {
        ScheduleActor {
            metrics,
            store,
            ring,
            dispatcher,
            node,
            beat,
            default_tz,
            batch: batch.max(1),
            failures: 0,
            stopped: false,
            unanswered: Arc::default(),
            lease: None,
            waiting_for_beat: false,
            life: ActorLife::detached("schedule"),
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        ScheduleActor { life, ..self }
    }

    /// Skips passes while `lease` says this admin's beats stalled.
    pub fn with_lease(self, lease: Arc<Lease>) -> Self {
        ScheduleActor {
            lease: Some(lease),
            ..self
        }
    }

    fn schedule_next(&mut self, ctx: &mut Context<Self>, delay: Duration) {
        if !self.stopped {
            ctx.run_later(delay, |act, ctx| act.pass(ctx));
        }
    }

    fn pass(&mut self, ctx: &mut Context<Self>) {
        if self.stopped {
            return;
        }
        let stale = self.lease.as_ref().is_some_and(|l| l.stale(now_ms()));
        if stale != self.waiting_for_beat {
            self.waiting_for_beat = stale;
            match stale {
                true => log::warn!(
                    "admin node {}: its heartbeat has not landed for more than {FENCE_AFTER_MS} ms: no fire times claimed until one does (other admins may take over what it claims)",
                    self.node
                ),
                false => log::info!("admin node {}: heartbeat landed, claiming again", self.node),
            }
        }
        if stale {
            self.schedule_next(ctx, Duration::from_millis(wait_for_pass(now_ms())));
            return;
        }
        let store = self.store.clone();
        let tz = self.default_tz;
        let batch = self.batch;
        let (node, beat) = (self.node.clone(), self.beat.clone());
        let unanswered = self.unanswered.clone();
        let life = self.life.clone();
        life.working();
        // one pass at a time: the actor handles nothing else until it ends
        ctx.wait(
            async move {
                let started = Instant::now();
                if let Err(fault) = life.fault_point(&store).await {
                    return (Err(fault), started.elapsed());
                }
                let role = beat.send(GetPassDuty).await.unwrap_or(PassDuty {
                    take_over: false,
                    share: Share::ALL,
                });
                let started = Instant::now();
                let pass = store
                    .run(move |store| async move {
                        let node = Node {
                            id: &node,
                            take_over: role.take_over,
                            share: role.share,
                        };
                        let mut keys = std::mem::take(&mut *lock(&unanswered));
                        let pass = pre_read(&store, tz, batch, now_ms(), node, &mut keys).await;
                        lock(&unanswered).extend(keys);
                        pass
                    })
                    .await;
                (pass, started.elapsed())
            }
            .into_actor(self)
            .map(|(result, took), act, ctx| match result {
                Ok(pass) => {
                    act.failures = 0;
                    act.metrics.preread(pass.read, took.as_secs_f64());
                    let full =
                        pass.read as i64 >= act.batch || pass.taken_over as i64 >= TAKEOVER_BATCH;
                    act.deliver(pass.fires, ctx);
                    let wait = if full {
                        Duration::ZERO
                    } else {
                        Duration::from_millis(wait_for_pass(now_ms()))
                    };
                    act.schedule_next(ctx, wait);
                }
                Err(e) if act.life.stop_on_panic(&e, ctx) => {}
                Err(e) => {
                    act.failures += 1;
                    let backoff = Duration::from_secs(1u64 << act.failures.min(5)).min(MAX_BACKOFF);
                    log::log!(
                        act.store.failure_level(log::Level::Error),
                        "schedule pass failed ({} in a row), retrying in {:?}: {e}",
                        act.failures,
                        backoff
                    );
                    act.schedule_next(ctx, backoff);
                }
            }),
        );
    }

    fn deliver(&self, fires: Vec<Fire>, ctx: &mut Context<Self>) {
        let now = now_ms();
        let (due, later): (Vec<Fire>, Vec<Fire>) =
            fires.into_iter().partition(|f| f.fire_time <= now);
        // a taken-over fire that is sent again (its run row exists) keeps its row: the ring
        // holds bare fire times, so these wait here for their time instead
        let (resends, later): (Vec<Fire>, Vec<Fire>) =
            later.into_iter().partition(|f| f.resend.is_some());
        for f in resends {
            let wait = Duration::from_millis((f.fire_time - now).max(0) as u64);
            ctx.run_later(wait, move |act, _| {
                act.dispatcher.do_send(TriggerBatch {
                    triggers: vec![Trigger {
                        resend: f.resend,
                        ..Trigger::new(f.job_id, f.trigger_type, f.fire_time)
                    }],
                    ahead: false,
                });
            });
        }
        if !due.is_empty() {
            self.dispatcher.do_send(TriggerBatch {
                triggers: due
                    .into_iter()
                    .map(|f| Trigger {
                        resend: f.resend,
                        ..Trigger::new(f.job_id, f.trigger_type, f.fire_time)
                    })
                    .collect(),
                ahead: false,
            });
        }
        if !later.is_empty() {
            self.ring.do_send(ScheduleAll(
                later
                    .into_iter()
                    .map(|f| FireTime {
                        job_id: f.job_id,
                        fire_time: f.fire_time,
                    })
                    .collect(),
            ));
        }
    }
}

impl Actor for ScheduleActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        log::info!(
            "schedule actor started (pre-read {PRE_READ_MS} ms, batch {})",
            self.batch
        );
        let wait = self.life.started();
        self.schedule_next(ctx, wait);
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

impl Supervised for ScheduleActor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // fresh state: the next pass reads everything from the database again
        self.failures = 0;
    }
}

answers_probes!(ScheduleActor);

impl Handler<StopScheduling> for ScheduleActor {
    type Result = ();

    fn handle(&mut self, _msg: StopScheduling, _ctx: &mut Self::Context) {
        if !self.stopped {
            log::info!("schedule actor stopped pre-reading");
        }
        self.stopped = true;
    }
}

/// One pass: lock, take over dead admins' fire times, read due jobs, decide and claim fire
/// times (written as `node`'s claims), commit. When the commit fails, the claims it may have
/// written anyway (its answer lost on the way) are added to `unanswered`.
pub async fn pre_read(
    store: &Store,
    default_tz: Tz,
    batch: i64,
    now: i64,
    node: Node<'_>,
    unanswered: &mut Vec<ClaimKey>,
) -> Result<PassResult, StoreError> {
    // an earlier commit failed, perhaps after writing: what it claimed is in no ring, and a
    // live owner's claims are nobody else's to take, so they are handed back to be taken over
    if !unanswered.is_empty() {
        let held = store.hand_back_own_claims(node.id, unanswered).await?;
        log::warn!(
            "admin node {}: a pass's commit went unanswered; {held} of its {} fire time(s) were written after all and are handed back to be taken over",
            node.id,
            unanswered.len()
        );
        unanswered.clear();
    }
    // The lock is needed only to read every job (a lone admin) or to take over what a dead
    // admin left (two admins must not adopt the same fire); a pass over its own share locks
    // just the rows it reads, so the admins' passes run side by side.
    let take_over_now =
        node.take_over && store.has_orphans(node.id, now - NODE_DEAD_AFTER_MS).await?;
    let mut tx = match node.share == Share::ALL || take_over_now {
        true => store.begin_schedule().await?,
        false => store.begin_shared_schedule().await?,
    };
    let (mut fires, taken_over) = match take_over_now {
        true => take_over(&mut tx, node.id, now).await?,
        false => (Vec::new(), 0),
    };
    let share = (node.share != Share::ALL).then_some((node.share, now - STRAY_AFTER_MS));
    let jobs = tx.due_jobs(now + PRE_READ_MS, batch, share).await?;
    let mut updates = Vec::with_capacity(jobs.len());
    let mut planned: Vec<Vec<Fire>> = Vec::with_capacity(jobs.len());
    for job in &jobs {
        let (update, fires) = plan_job(job, default_tz, now);
        updates.push(update);
        planned.push(fires);
    }
    let claimed = tx.claim_all(&updates).await?;
    // a job whose taken-over fires include its one catch-up does not catch up twice
    let caught_up: HashSet<i32> = fires
        .iter()
        .filter(|f| f.trigger_type == TriggerType::Misfire)
        .map(|f| f.job_id)
        .collect();
    let mut new_fires = Vec::new();
    for ((job, ok), job_fires) in jobs.iter().zip(claimed).zip(planned) {
        if ok {
            let again =
                |f: &Fire| f.trigger_type == TriggerType::Misfire && caught_up.contains(&f.job_id);
            new_fires.extend(job_fires.into_iter().filter(|f| !again(f)));
        } else {
            log::debug!(
                "job {}: fire time {} claimed elsewhere",
                job.id,
                job.trigger_next_time
            );
        }
    }
    let claims: Vec<(ClaimKey, TriggerType)> = new_fires
        .iter()
        .map(|f| (f.claim(), f.trigger_type))
        .collect();
    tx.insert_claims(node.id, &claims).await?;
    fires.extend(new_fires);
    if let Err(e) = tx.commit().await {
        unanswered.extend(fires.iter().map(Fire::claim));
        return Err(e);
    }
    log_misfires(&jobs, now);
    Ok(PassResult {
        fires,
        read: jobs.len(),
        taken_over,
    })
}

/// Whether `job`'s next fire time is too late to fire as scheduled.
fn misfired(job: &DueJob, now: i64) -> bool {
    now > job.trigger_next_time + MISFIRE_AFTER_MS
}

/// One line for the misfires of a pass (after an outage or a pause they come by the thousand):
/// how many per strategy and the first few jobs.
fn log_misfires(jobs: &[DueJob], now: i64) {
    let late: Vec<&DueJob> = jobs.iter().filter(|j| misfired(j, now)).collect();
    if late.is_empty() {
        return;
    }
    let once_now = late
        .iter()
        .filter(|j| j.misfire_strategy == MisfireStrategy::FireOnceNow)
        .count();
    log::warn!(
        "{} job(s) misfired, their fire times more than {MISFIRE_AFTER_MS} ms past: {} skipped (DO_NOTHING), {once_now} fired once now (FIRE_ONCE_NOW); jobs {}",
        late.len(),
        late.len() - once_now,
        first_jobs(late.iter().map(|j| j.id))
    );
}

/// The claims behind `m`, even if a pass panicked while holding them (a plain list stays whole).
fn lock(m: &Mutex<Vec<ClaimKey>>) -> MutexGuard<'_, Vec<ClaimKey>> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Milliseconds from `now` to [`PASS_AT_MS`] into the next second.
fn wait_for_pass(now: i64) -> u64 {
    (1_000 - now.rem_euclid(1_000) + PASS_AT_MS) as u64
}

/// Decides one job's fire times in `[.., now + PRE_READ_MS]` and its new schedule row.
pub fn plan_job(job: &DueJob, default_tz: Tz, now: i64) -> (ScheduleUpdate, Vec<Fire>) {
    let stop = |fires| {
        (
            ScheduleUpdate {
                id: job.id,
                expected_next: job.trigger_next_time,
                last: 0,
                next: 0,
                stop: true,
            },
            fires,
        )
    };
    let tz = match timing::parse_timezone(&job.timezone, default_tz) {
        Ok(tz) => tz,
        Err(e) => {
            log::error!("job {} stopped: {e}", job.id);
            return stop(Vec::new());
        }
    };
    let plan = match Schedule::parse(job.schedule_type, &job.schedule_conf) {
        Ok(plan) => plan,
        Err(e) => {
            log::error!("job {} stopped: {e}", job.id);
            return stop(Vec::new());
        }
    };
    let next_after = |from: i64| match plan.next_after(tz, from) {
        Ok(next) => next,
        Err(e) => {
            log::error!("job {}: cannot compute the next fire time: {e}", job.id);
            None
        }
    };
    let fix_delay = job.schedule_type == ScheduleType::FixDelay;
    let mut fires = Vec::new();
    let mut last = job.trigger_last_time;
    let mut next = Some(job.trigger_next_time);

    if misfired(job, now) {
        log::debug!(
            "job {} misfired: fire time {} is {} ms past ({})",
            job.id,
            job.trigger_next_time,
            now - job.trigger_next_time,
            job.misfire_strategy
        );
        if job.misfire_strategy == MisfireStrategy::FireOnceNow {
            fires.push(Fire {
                job_id: job.id,
                fire_time: now,
                trigger_type: TriggerType::Misfire,
                resend: None,
            });
            last = now;
        }
        next = if fix_delay && !fires.is_empty() {
            Some(AWAITING_COMPLETION)
        } else {
            next_after(now)
        };
    }
    while let Some(at) = next {
        if at == AWAITING_COMPLETION || at > now + PRE_READ_MS || fires.len() >= MAX_FIRES_PER_JOB {
            break;
        }
        fires.push(Fire {
            job_id: job.id,
            fire_time: at,
            trigger_type: TriggerType::Cron,
            resend: None,
        });
        last = at;
        // FIX_DELAY waits for the run to end before it knows its next time
        next = if fix_delay {
            Some(AWAITING_COMPLETION)
        } else {
            next_after(at)
        };
    }
    match next {
        Some(next) => (
            ScheduleUpdate {
                id: job.id,
                expected_next: job.trigger_next_time,
                last,
                next,
                stop: false,
            },
            fires,
        ),
        None => {
            log::info!(
                "job {} stopped: its schedule has no further fire time",
                job.id
            );
            stop(fires)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_pass_starts_at_its_point_of_the_next_second() {
        let base = 1_700_000_000_000_i64;
        assert_eq!(wait_for_pass(base), 1_000 + PASS_AT_MS as u64);
        assert_eq!(wait_for_pass(base + PASS_AT_MS + 40), 960);
        assert_eq!(wait_for_pass(base + 999), 1 + PASS_AT_MS as u64);
    }

    fn job(schedule_type: ScheduleType, conf: &str, next: i64) -> DueJob {
        let mut j = crate::model::JobInfo::new(1, "t", "h");
        j.id = 7;
        j.schedule_type = schedule_type;
        j.schedule_conf = conf.to_string();
        j.trigger_status = 1;
        j.trigger_next_time = next;
        DueJob::from(&j)
    }

    const T: i64 = 1_800_000_000_000; // a whole second (UTC)

    #[test]
    fn every_second_cron_fills_the_window() {
        let (update, fires) = plan_job(
            &job(ScheduleType::Cron, "* * * * * ?", T + 1_000),
            Tz::UTC,
            T + 200,
        );
        let times: Vec<i64> = fires.iter().map(|f| f.fire_time - T).collect();
        assert_eq!(times, vec![1_000, 2_000, 3_000, 4_000, 5_000]);
        assert!(fires.iter().all(|f| f.trigger_type == TriggerType::Cron));
        assert_eq!(
            (update.last, update.next, update.stop),
            (T + 5_000, T + 6_000, false)
        );
        assert_eq!(update.expected_next, T + 1_000);
    }

    #[test]
    fn a_due_fire_time_fires_now() {
        let (update, fires) = plan_job(&job(ScheduleType::FixRate, "60", T), Tz::UTC, T + 300);
        assert_eq!(fires.len(), 1);
        assert_eq!(fires[0].fire_time, T);
        assert_eq!(update.next, T + 60_000);
    }

    #[test]
    fn misfire_do_nothing_skips_to_the_future() {
        let mut j = job(ScheduleType::FixRate, "60", T);
        j.misfire_strategy = MisfireStrategy::DoNothing;
        let (update, fires) = plan_job(&j, Tz::UTC, T + 20_000);
        assert!(fires.is_empty());
        assert_eq!(update.next, T + 80_000);
    }

    #[test]
    fn misfire_fire_once_now_catches_up_once() {
        let mut j = job(ScheduleType::Cron, "0 * * * * ?", T - 120_000);
        j.misfire_strategy = MisfireStrategy::FireOnceNow;
        let now = T + 20_500;
        let (update, fires) = plan_job(&j, Tz::UTC, now);
        assert_eq!(fires.len(), 1);
        assert_eq!(fires[0].trigger_type, TriggerType::Misfire);
        assert_eq!(fires[0].fire_time, now);
        assert!(update.next > now);
    }

    #[test]
    fn fix_delay_fires_once_then_waits_for_the_run() {
        let (update, fires) = plan_job(&job(ScheduleType::FixDelay, "10", T + 1_000), Tz::UTC, T);
        assert_eq!(fires.len(), 1);
        assert_eq!(update.next, AWAITING_COMPLETION);
    }

    #[test]
    fn a_broken_schedule_stops_the_job() {
        let (update, fires) = plan_job(&job(ScheduleType::Cron, "not cron", T), Tz::UTC, T);
        assert!(update.stop && fires.is_empty());
        let (update, _) = plan_job(&job(ScheduleType::None, "", T), Tz::UTC, T);
        assert!(
            update.stop,
            "a NONE job has no fire time and is stopped after its run"
        );
        let mut j = job(ScheduleType::Cron, "* * * * * ?", T);
        j.timezone = "Nowhere/Special".into();
        assert!(plan_job(&j, Tz::UTC, T).0.stop);
    }

    #[test]
    fn expired_cron_stops_after_its_last_fire() {
        // fires once in 2020 only; the last fire time is in the window
        let at = 1_577_836_800_000; // 2020-01-01T00:00:00Z
        let (update, fires) = plan_job(
            &job(ScheduleType::Cron, "0 0 0 1 1 ? 2020", at),
            Tz::UTC,
            at - 1_000,
        );
        assert_eq!(fires.len(), 1);
        assert!(update.stop);
    }
}
