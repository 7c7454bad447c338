//! `JobActor`: the worker of one jobId. Its mailbox is the job's unbounded trigger queue; it runs one
//! trigger at a time (`ctx.wait`), so kill and cover reach it through [`JobShared`] instead of the mailbox.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio_util::sync::CancellationToken;

use crate::actors::executor_callback::PushCallback;
use crate::executor::context::JobContext;
use crate::executor::router::RunEnv;
use crate::executor::run::{self, Outcome, Work};
use crate::protocol::{
    HandleCallbackParam, TriggerParam, FAIL_CODE, MSG_JOB_TIMEOUT, MSG_SUFFIX_QUEUED_KILLED,
    MSG_SUFFIX_RUNNING_KILLED, TIMEOUT_CODE,
};

/// State of one worker that the router (HTTP side) must see while the actor is busy running.
#[derive(Debug)]
pub struct JobShared {
    queued: AtomicUsize,
    running: AtomicBool,
    state: Mutex<SharedState>,
}

#[derive(Debug)]
struct SharedState {
    queued_logs: HashSet<i64>,
    stop_reason: Option<String>,
    current: Option<CancellationToken>,
    /// When the worker last became idle (started, or finished a run); the router reaps by it.
    idle_since: Instant,
}

impl Default for JobShared {
    fn default() -> Self {
        JobShared {
            queued: AtomicUsize::new(0),
            running: AtomicBool::new(false),
            state: Mutex::new(SharedState {
                queued_logs: HashSet::new(),
                stop_reason: None,
                current: None,
                idle_since: Instant::now(),
            }),
        }
    }
}

impl JobShared {
    fn lock(&self) -> MutexGuard<'_, SharedState> {
        // the state stays consistent even if a holder panicked: every critical section is a few assignments
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// "Running or has trigger queue", what `/idleBeat`, DISCARD_LATER and COVER_EARLY look at.
    pub fn is_busy(&self) -> bool {
        self.running.load(Ordering::SeqCst) || self.queued.load(Ordering::SeqCst) > 0
    }

    /// Reserves a queue slot for `log_id`; false when that logId is already queued (de-dup).
    pub fn enqueue(&self, log_id: i64) -> bool {
        let mut st = self.lock();
        if !st.queued_logs.insert(log_id) {
            return false;
        }
        self.queued.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// Marks the worker stopped: the running trigger is cancelled, queued ones will be reported unrun.
    pub fn stop(&self, reason: &str) {
        let mut st = self.lock();
        if st.stop_reason.is_none() {
            st.stop_reason = Some(reason.to_string());
        }
        if let Some(token) = st.current.take() {
            token.cancel();
        }
    }

    fn stop_reason(&self) -> Option<String> {
        self.lock().stop_reason.clone()
    }

    /// True when the worker has neither run nor had anything queued for `timeout` by `now`.
    pub fn idle_longer_than(&self, timeout: Duration, now: Instant) -> bool {
        !self.is_busy() && now.saturating_duration_since(self.lock().idle_since) >= timeout
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

/// The worker of one job. It holds no idle timer of its own: the router reaps idle workers in
/// one periodic pass (a timer per worker cost ~150 bytes each, with 10,000 workers alive).
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

    fn callback(&self, param: &TriggerParam, code: i32, msg: Option<String>) {
        self.env
            .callback
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
        let token = CancellationToken::new();
        let stopped = {
            let mut st = self.shared.lock();
            st.queued_logs.remove(&param.log_id);
            if st.queued_logs.is_empty() {
                // an idle worker keeps no table: 10,000 idle workers would hold 10,000 of them
                st.queued_logs = HashSet::new();
            }
            self.shared.queued.fetch_sub(1, Ordering::SeqCst);
            match &st.stop_reason {
                Some(reason) => Some(reason.clone()),
                None => {
                    st.current = Some(token.clone());
                    self.shared.running.store(true, Ordering::SeqCst);
                    None
                }
            }
        };
        if let Some(reason) = stopped {
            log::info!(
                "job {} log {}: not executed, worker stopped: {reason}",
                self.job_id,
                param.log_id
            );
            self.callback(
                &param,
                FAIL_CODE,
                Some(format!("{reason}{MSG_SUFFIX_QUEUED_KILLED}")),
            );
            return;
        }
        let job_ctx = JobContext::new(&param, &self.env.log_base, token);
        let timeout = u64::try_from(param.executor_timeout)
            .ok()
            .filter(|t| *t > 0)
            .map(Duration::from_secs);
        let work = self.work.clone();
        let env = self.env.clone();
        let shared = self.shared.clone();
        let started = Instant::now();
        let fut = async move {
            let log = job_ctx.job_log().clone();
            log.line(&format!(
                "<br>----------- xxl-job job execute start -----------<br>----------- Param:{}",
                job_ctx.param()
            ));
            let outcome =
                run::execute(&work, job_ctx, timeout, &env.runtime, env.log_base.clone()).await;
            let (code, msg) = match outcome {
                Outcome::Finished(result) => {
                    log.line(&format!(
                        "<br>----------- xxl-job job execute end(finish) -----------<br>----------- Result: {result}"
                    ));
                    result.into_parts()
                }
                Outcome::Panicked(panic) => {
                    log.line(&format!(
                        "<br>----------- JobThread Exception:{panic}<br>----------- xxl-job job execute end(error) -----------"
                    ));
                    (FAIL_CODE, Some(panic))
                }
                Outcome::TimedOut => {
                    log.line("<br>----------- xxl-job job execute timeout");
                    (TIMEOUT_CODE, Some(MSG_JOB_TIMEOUT.to_string()))
                }
                Outcome::Cancelled => {
                    let reason = shared
                        .stop_reason()
                        .unwrap_or_else(|| "job cancelled".to_string());
                    log.line(&format!(
                        "<br>----------- JobThread toStop, stopReason:{reason}"
                    ));
                    (
                        FAIL_CODE,
                        Some(format!("{reason}{MSG_SUFFIX_RUNNING_KILLED}")),
                    )
                }
            };
            (code, msg)
        };
        ctx.wait(fut.into_actor(self).map(move |(code, msg), act, _| {
            {
                let mut st = act.shared.lock();
                st.current = None;
                st.idle_since = Instant::now();
            }
            act.shared.running.store(false, Ordering::SeqCst);
            log::info!(
                "job {} log {}: run finished with code {code} in {} ms",
                act.job_id,
                param.log_id,
                started.elapsed().as_millis()
            );
            act.callback(&param, code, msg);
        }));
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
        shared.running.store(true, Ordering::SeqCst);
        shared.lock().queued_logs.clear();
        shared.queued.store(0, Ordering::SeqCst);
        assert!(
            !shared.idle_longer_than(timeout, now + 2 * timeout),
            "a run keeps it"
        );
    }
}
