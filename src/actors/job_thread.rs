//! `job_thread.rs` holds `JobActor` (XXL-JOB's `JobThread`): the worker of one jobId. Its
//! mailbox is the job's unbounded trigger queue; it runs one trigger at a time (`ctx.wait`), so
//! kill and cover reach it through [`JobShared`] instead of the mailbox.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio_util::sync::CancellationToken;

use crate::actors::result_sender::PushCallback;
use crate::executor::context::JobContext;
use crate::executor::run::{self, Outcome, RunEnv, Work};
use crate::metrics::RunResult;
use crate::protocol::{
    HandleCallbackParam, TriggerParam, FAIL_CODE, MSG_JOB_TIMEOUT, MSG_SUFFIX_QUEUED_KILLED,
    MSG_SUFFIX_RUNNING_KILLED, SUCCESS_CODE, TIMEOUT_CODE,
};

/// State of one worker that the job table (HTTP side) must see while the actor is busy running:
/// one lock around one state, so "busy", "queued" and "stopped" are always read together.
#[derive(Debug)]
pub struct JobShared {
    state: Mutex<WorkerState>,
}

#[derive(Debug)]
struct WorkerState {
    phase: Phase,
    /// LogIds queued (de-dup; its length is the queue's), each with when it was queued.
    queued: HashMap<i64, Instant>,
    /// The run that took its turn and waits for one of the executor's run slots: since when.
    slot_wait_since: Option<Instant>,
    /// Set once by kill, cover, idle reaping or shutdown; queued triggers are then reported unrun.
    stop_reason: Option<String>,
}

#[derive(Debug)]
enum Phase {
    /// Not running; since when (started, or the last run ended): the table reaps by it.
    Idle { since: Instant },
    /// Running one trigger, cancelled through this token.
    Running { cancel: CancellationToken },
}

/// What a queued trigger finds when its turn comes.
enum Turn {
    /// Run it, cancelled through this token.
    Run(CancellationToken),
    /// The worker was stopped: report it unrun, with the reason.
    Stopped(String),
}

impl Default for JobShared {
    fn default() -> Self {
        JobShared {
            state: Mutex::new(WorkerState {
                phase: Phase::Idle {
                    since: Instant::now(),
                },
                queued: HashMap::new(),
                slot_wait_since: None,
                stop_reason: None,
            }),
        }
    }
}

impl JobShared {
    fn lock(&self) -> MutexGuard<'_, WorkerState> {
        // the state stays consistent even if a holder panicked: every critical section is a
        // few assignments
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// "Running or has trigger queue", what `/idleBeat`, DISCARD_LATER and COVER_EARLY look at.
    pub fn is_busy(&self) -> bool {
        let st = self.lock();
        matches!(st.phase, Phase::Running { .. }) || !st.queued.is_empty()
    }

    /// Whether a run of this job executes now (it took its turn and holds a run slot if any).
    pub fn is_running(&self) -> bool {
        let st = self.lock();
        matches!(st.phase, Phase::Running { .. }) && st.slot_wait_since.is_none()
    }

    /// Triggers queued behind the one the job runs (or waits for a run slot with), or is about
    /// to start: what a bounded SERIAL queue (`maxQueued`) counts.
    pub fn queued_behind(&self) -> usize {
        let st = self.lock();
        match st.phase {
            Phase::Running { .. } => st.queued.len(),
            Phase::Idle { .. } => st.queued.len().saturating_sub(1),
        }
    }

    /// Triggers queued behind the running one.
    pub fn queued(&self) -> usize {
        self.lock().queued.len()
    }

    /// Reserves a queue slot for `log_id`; false when that logId is already queued (de-dup).
    pub fn enqueue(&self, log_id: i64) -> bool {
        match self.lock().queued.entry(log_id) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Instant::now());
                true
            }
        }
    }

    /// Triggers of this job not started (queued, or waiting for a run slot) and since when the
    /// oldest of them waits.
    pub fn waiting(&self) -> (usize, Option<Instant>) {
        let st = self.lock();
        let oldest = st.queued.values().copied().chain(st.slot_wait_since).min();
        (
            st.queued.len() + usize::from(st.slot_wait_since.is_some()),
            oldest,
        )
    }

    fn set_waiting_for_slot(&self, waiting: bool) {
        self.lock().slot_wait_since = waiting.then(Instant::now);
    }

    /// Marks the worker stopped: the running trigger is cancelled, queued ones will be reported
    /// unrun.
    pub fn stop(&self, reason: &str) {
        let mut st = self.lock();
        if st.stop_reason.is_none() {
            st.stop_reason = Some(reason.to_string());
        }
        if let Phase::Running { cancel } = &st.phase {
            cancel.cancel();
        }
    }

    fn stop_reason(&self) -> Option<String> {
        self.lock().stop_reason.clone()
    }

    /// Takes `log_id` off the queue and starts running it, unless the worker was stopped.
    fn start(&self, log_id: i64) -> Turn {
        let mut st = self.lock();
        st.queued.remove(&log_id);
        if st.queued.is_empty() {
            // an idle worker keeps no table: with thousands of idle workers they would add up
            st.queued = HashMap::new();
        }
        match &st.stop_reason {
            Some(reason) => Turn::Stopped(reason.clone()),
            None => {
                let cancel = CancellationToken::new();
                st.phase = Phase::Running {
                    cancel: cancel.clone(),
                };
                Turn::Run(cancel)
            }
        }
    }

    /// The run ended: idle from now.
    fn finish(&self) {
        self.lock().phase = Phase::Idle {
            since: Instant::now(),
        };
    }

    /// True when the worker has neither run nor had anything queued for `timeout` by `now`.
    pub fn idle_longer_than(&self, timeout: Duration, now: Instant) -> bool {
        let st = self.lock();
        match st.phase {
            Phase::Idle { since } => {
                st.queued.is_empty() && now.saturating_duration_since(since) >= timeout
            }
            Phase::Running { .. } => false,
        }
    }
}

/// Runs one trigger (sent with `do_send`, so the unbounded mailbox is the queue).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Run(pub TriggerParam);

/// Ends the worker once the triggers ahead of this message have been reported.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stop;

/// The worker of one job. It holds no idle timer of its own: the job table reaps idle workers in
/// one periodic pass, since a timer per worker costs memory for every worker alive.
pub struct JobActor {
    job_id: i32,
    serial: u64,
    work: Work,
    shared: Arc<JobShared>,
    env: Arc<RunEnv>,
}

impl JobActor {
    /// A worker for `job_id` running `work`; `serial` tells this worker apart from later ones.
    pub(crate) fn new(
        job_id: i32,
        serial: u64,
        work: Work,
        shared: Arc<JobShared>,
        env: Arc<RunEnv>,
    ) -> Self {
        JobActor {
            job_id,
            serial,
            work,
            shared,
            env,
        }
    }

    fn report(&self, param: &TriggerParam, code: i32, msg: Option<String>) {
        self.env
            .results
            .do_send(PushCallback(HandleCallbackParam::new(
                param.log_id,
                param.log_date_time,
                code,
                msg,
            )));
    }
}

impl Actor for JobActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // the mailbox is the job's queue: no trigger may ever be refused for capacity
        ctx.set_mailbox_capacity(crate::actors::UNBOUNDED_MAILBOX);
        log::debug!(
            "job {}: worker #{} started ({})",
            self.job_id,
            self.serial,
            self.work.describe()
        );
        if let Work::Handler { handler, .. } = &self.work {
            if let Some(hook) = handler.init.clone() {
                let rt = self.env.runtime.clone();
                let job_id = self.job_id;
                // the first trigger waits for init, as the Java JobThread does
                ctx.wait(
                    async move { run::run_hook(hook, &rt, "init", job_id).await }.into_actor(self),
                );
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.env.live_workers.fetch_sub(1, Ordering::SeqCst);
        log::debug!("job {}: worker #{} stopped", self.job_id, self.serial);
        if let Work::Handler { handler, .. } = &self.work {
            if let Some(hook) = handler.destroy.clone() {
                let rt = self.env.runtime.clone();
                let job_id = self.job_id;
                self.env
                    .runtime
                    .spawn(async move { run::run_hook(hook, &rt, "destroy", job_id).await });
            }
        }
    }
}

impl Handler<Run> for JobActor {
    type Result = ();

    fn handle(&mut self, Run(param): Run, ctx: &mut Self::Context) {
        let token = match self.shared.start(param.log_id) {
            Turn::Run(token) => token,
            Turn::Stopped(reason) => {
                log::info!(
                    "job {} log {}: not executed, worker stopped: {reason}",
                    self.job_id,
                    param.log_id
                );
                self.env.metrics.run_ended(RunResult::NotRun, None);
                self.report(
                    &param,
                    FAIL_CODE,
                    Some(format!("{reason}{MSG_SUFFIX_QUEUED_KILLED}")),
                );
                return;
            }
        };
        let job_ctx = JobContext::new(&param, &self.env.logs, token);
        let timeout = u64::try_from(param.executor_timeout)
            .ok()
            .filter(|t| *t > 0)
            .map(Duration::from_secs);
        let work = self.work.clone();
        let env = self.env.clone();
        let shared = self.shared.clone();
        let started = Instant::now();
        let fut = async move {
            // beyond the executor's limit the run waits here, its job's later triggers behind
            // it in this worker's mailbox; a kill or shutdown meanwhile ends it unstarted
            let limited = env.slots.limit().is_some();
            if limited {
                shared.set_waiting_for_slot(true);
            }
            let slot = env.slots.take(job_ctx.cancellation()).await;
            if limited {
                shared.set_waiting_for_slot(false);
            }
            let Some(_slot) = slot else {
                let reason = shared
                    .stop_reason()
                    .unwrap_or_else(|| "job cancelled".to_string());
                return (
                    RunResult::NotRun,
                    FAIL_CODE,
                    Some(format!("{reason}{MSG_SUFFIX_QUEUED_KILLED}")),
                );
            };
            let log = job_ctx.job_log().clone();
            log.line(&format!(
                "<br>----------- xxl-job job execute start -----------<br>----------- Param:{}",
                job_ctx.param()
            ));
            let outcome =
                run::execute(&work, job_ctx, timeout, &env.runtime, env.log_base.clone()).await;
            let (result, (code, msg)) = match outcome {
                Outcome::Finished(result) => {
                    log.line(&format!(
                        "<br>----------- xxl-job job execute end(finish) -----------<br>----------- Result: {result}"
                    ));
                    let (code, msg) = result.into_parts();
                    let result = match code == SUCCESS_CODE {
                        true => RunResult::Success,
                        false => RunResult::Failure,
                    };
                    (result, (code, msg))
                }
                Outcome::Panicked(panic) => {
                    log.line(&format!(
                        "<br>----------- JobThread Exception:{panic}<br>----------- xxl-job job execute end(error) -----------"
                    ));
                    (RunResult::Panic, (FAIL_CODE, Some(panic)))
                }
                Outcome::TimedOut => {
                    log.line("<br>----------- xxl-job job execute timeout");
                    (
                        RunResult::Timeout,
                        (TIMEOUT_CODE, Some(MSG_JOB_TIMEOUT.to_string())),
                    )
                }
                Outcome::Cancelled => {
                    let reason = shared
                        .stop_reason()
                        .unwrap_or_else(|| "job cancelled".to_string());
                    log.line(&format!(
                        "<br>----------- JobThread toStop, stopReason:{reason}"
                    ));
                    (
                        RunResult::Cancelled,
                        (
                            FAIL_CODE,
                            Some(format!("{reason}{MSG_SUFFIX_RUNNING_KILLED}")),
                        ),
                    )
                }
            };
            (result, code, msg)
        };
        ctx.wait(
            fut.into_actor(self)
                .map(move |(result, code, msg), act, _| {
                    act.shared.finish();
                    // a run killed while it waited for a slot never started: it is not timed
                    let took = (!matches!(result, RunResult::NotRun))
                        .then(|| started.elapsed().as_secs_f64());
                    act.env.metrics.run_ended(result, took);
                    log::info!(
                        "job {} log {}: run finished with code {code} in {} ms",
                        act.job_id,
                        param.log_id,
                        started.elapsed().as_millis()
                    );
                    act.report(&param, code, msg);
                }),
        );
    }
}

impl Handler<Stop> for JobActor {
    type Result = ();

    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

#[cfg(test)]
mod idle_tests {
    use super::*;

    #[test]
    fn a_worker_is_idle_only_once_nothing_is_queued_for_the_timeout() {
        let shared = JobShared::default();
        let timeout = Duration::from_secs(90);
        let now = Instant::now();
        assert!(!shared.idle_longer_than(timeout, now));
        assert!(shared.idle_longer_than(timeout, now + timeout));
        assert!(shared.enqueue(7));
        assert!(
            !shared.idle_longer_than(timeout, now + 2 * timeout),
            "a queued trigger keeps it"
        );
        assert!(matches!(shared.start(7), Turn::Run(_)));
        assert!(shared.is_busy());
        assert!(
            !shared.idle_longer_than(timeout, now + 2 * timeout),
            "a run keeps it"
        );
        shared.finish();
        assert!(!shared.is_busy());
        assert!(shared.idle_longer_than(timeout, Instant::now() + timeout));
        assert!(shared.enqueue(8));
        shared.stop("killed");
        assert!(matches!(shared.start(8), Turn::Stopped(r) if r == "killed"));
    }
}
