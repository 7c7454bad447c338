//! `JobTable`: owns the jobId → `JobActor` map and applies XXL-JOB's `/run` rules to each trigger
//! (handler lookup, GLUE versioning, block strategy, de-dup by logId), kill and idle beat
//! (`docs/protocol.md`, executor endpoints).

use std::collections::hash_map::Entry as Slot;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use crate::actors::accepted_log_ids::{AcceptedLogIds, FLUSH_EVERY};
use crate::actors::job_thread::{JobActor, JobShared, Run, Stop};
use crate::executor::glue::ScriptSpec;
use crate::executor::handler::HandlerRegistry;
use crate::executor::run::{RunEnv, Work};
use crate::metrics::{JobQueue, RefusalReason};
use crate::protocol::{
    glue_type_not_valid, handler_not_found, queue_full, repeat_trigger, BlockStrategy,
    ExecutorLoad, GlueType, JobLoad, TriggerParam, MSG_CHANGE_GLUE_SOURCE, MSG_CHANGE_HANDLER,
    MSG_COVER_EARLY, MSG_DISCARD_LATER, MSG_IDLE_TIMEOUT,
};

/// Rejection while the executor shuts down, so the admin routes the trigger elsewhere.
pub const MSG_SHUTTING_DOWN: &str = "executor is shutting down, trigger refused.";

/// `/run` and `/trigger`: queue a trigger or say why not.
#[derive(Message)]
#[rtype(result = "Result<(), String>")]
pub struct RunTrigger(pub TriggerParam);

/// `/kill`: stop the job's worker; answers whether one existed.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Kill {
    /// The job.
    pub job_id: i32,
}

/// `/idleBeat`: answers true when the job is running or has queued triggers.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct IdleBeat {
    /// The job.
    pub job_id: i32,
}

/// `/log` of a run with no log file yet: whether the run was accepted lately (it is queued, or
/// ran without writing a line), so a resending admin learns this executor has it.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct WasAccepted {
    /// The run's log id.
    pub log_id: i64,
}

/// Shutdown step 1: refuse every further trigger.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopAccepting;

/// Shutdown step 2: stop every worker with a reason; answers how many there were.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct StopAll {
    /// Stop reason reported in the callbacks of running and queued triggers.
    pub reason: String,
}

/// The jobs with triggers not started (queued, or waiting for a run slot).
#[derive(Message)]
#[rtype(result = "Vec<JobQueue>")]
pub struct GetJobQueues;

/// What the executor runs and holds queued, for its registry beat.
#[derive(Message)]
#[rtype(result = "ExecutorLoad")]
pub struct GetLoad;

/// How many jobs are running or queued, and how many workers are alive.
#[derive(Message)]
#[rtype(result = "Census")]
pub struct GetCensus;

/// Answer of [`GetCensus`].
#[derive(Debug, Clone, Copy, MessageResponse)]
pub struct Census {
    /// Jobs running or with a queue.
    pub busy: usize,
    /// Worker actors alive, including stopped ones still reporting.
    pub live: usize,
    /// Triggers accepted and not started: behind their job's running one, or waiting for a
    /// run slot.
    pub queued: usize,
    /// Runs waiting for a run slot.
    pub waiting_for_slot: usize,
    /// Runs holding a run slot (0 without a limit).
    pub in_slots: usize,
    /// The limit of runs at once; 0 for none.
    pub max_concurrent_runs: usize,
}

struct Entry {
    work: Work,
    addr: Addr<JobActor>,
    shared: Arc<JobShared>,
}

/// The executor's job table.
pub struct JobTable {
    handlers: Arc<HandlerRegistry>,
    env: Arc<RunEnv>,
    glue_enabled: bool,
    trim_memory: bool,
    accepting: bool,
    jobs: HashMap<i32, Entry>,
    next_serial: u64,
    trim_pending: bool,
    /// Log ids accepted lately: a repeat is refused even after its run started or ended.
    accepted: AcceptedLogIds,
}

/// After reaping, glibc keeps the freed actors' memory in its arenas; this long after the last
/// reap of a burst it is handed back to the kernel, so an executor's RSS falls back toward idle.
const TRIM_AFTER_REAP: Duration = Duration::from_secs(2);

/// How often the table looks for idle workers: a quarter of the idle timeout, between 50 ms and
/// 1 s, so a worker is reaped at most that long after its timeout.
fn reap_period(idle_timeout: Duration) -> Duration {
    (idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(1))
}

impl JobTable {
    /// The jobs with triggers not started, with how many and how long the oldest has waited.
    fn job_queues(&self) -> Vec<JobQueue> {
        let now = Instant::now();
        self.jobs
            .iter()
            .filter_map(|(job_id, e)| {
                let (waiting, oldest) = e.shared.waiting();
                (waiting > 0).then(|| JobQueue {
                    job_id: *job_id,
                    waiting,
                    oldest_wait: oldest
                        .map_or(Duration::ZERO, |t| now.saturating_duration_since(t)),
                })
            })
            .collect()
    }

    /// A table over the registered handlers; `trim_memory` hands freed memory back to the
    /// kernel after a burst of workers is reaped (glibc's `malloc_trim`, the whole process's).
    pub(crate) fn new(
        handlers: Arc<HandlerRegistry>,
        env: Arc<RunEnv>,
        glue_enabled: bool,
        trim_memory: bool,
    ) -> Self {
        JobTable {
            handlers,
            glue_enabled,
            trim_memory,
            accepting: true,
            jobs: HashMap::new(),
            next_serial: 0,
            trim_pending: false,
            accepted: AcceptedLogIds::open(&env.log_base),
            env,
        }
    }

    fn remove(&mut self, job_id: i32, reason: &str) -> bool {
        match self.jobs.remove(&job_id) {
            Some(entry) => {
                entry.shared.stop(reason);
                entry.addr.do_send(Stop);
                true
            }
            None => false,
        }
    }

    /// Stops every worker idle for the idle timeout. The table decides, on its own thread, so
    /// no trigger can be queued to a worker between the check and the stop.
    fn reap_idle(&mut self, ctx: &mut Context<Self>) {
        let (timeout, now) = (self.env.idle_timeout, Instant::now());
        let idle: Vec<i32> = self
            .jobs
            .iter()
            .filter(|(_, e)| e.shared.idle_longer_than(timeout, now))
            .map(|(id, _)| *id)
            .collect();
        if idle.is_empty() {
            return;
        }
        for job_id in idle {
            self.remove(job_id, MSG_IDLE_TIMEOUT);
            log::info!(
                "job {job_id}: idle worker reaped after {} s",
                timeout.as_secs()
            );
        }
        if !self.trim_pending {
            self.trim_pending = true;
            ctx.run_later(TRIM_AFTER_REAP, |act, _| {
                act.trim_pending = false;
                // a map grown for a burst keeps its buckets after the burst's workers are reaped
                if act.jobs.capacity() > 4 * act.jobs.len().max(64) {
                    act.jobs.shrink_to_fit();
                }
                if act.trim_memory {
                    crate::allocator::release_free_memory();
                }
            });
        }
    }

    /// XXL-JOB's `/run` steps: which work this trigger needs, and the reason to replace the current
    /// worker (`docs/protocol.md`).
    fn resolve_work(
        &self,
        p: &TriggerParam,
    ) -> Result<(Work, Option<&'static str>), (RefusalReason, String)> {
        let Some(glue) = p.glue_type_enum() else {
            return Err((
                RefusalReason::UnsupportedGlue,
                glue_type_not_valid(&p.glue_type),
            ));
        };
        if glue != GlueType::Bean && !self.glue_enabled {
            return Err((
                RefusalReason::GlueDisabled,
                format!("fail, current glue type [{}] not supported.", glue.desc()),
            ));
        }
        let current = self.jobs.get(&p.job_id).map(|e| &e.work);
        let work = match glue {
            GlueType::Bean => {
                let handler = self
                    .handlers
                    .get(&p.executor_handler)
                    .ok_or_else(|| {
                        (
                            RefusalReason::HandlerNotFound,
                            handler_not_found(&p.executor_handler),
                        )
                    })?;
                Work::Handler {
                    name: p.executor_handler.clone(),
                    handler,
                }
            }
            GlueType::GlueGroovy => {
                return Err((RefusalReason::UnsupportedGlue, format!(
                    "glueType[{}] is not supported: {} needs the Java executor; use a BEAN handler or a script glue type.",
                    glue.as_str(),
                    glue.desc()
                )))
            }
            script => Work::Script(Arc::new(ScriptSpec {
                job_id: p.job_id,
                glue_type: script,
                updatetime: p.glue_updatetime,
                source: p.glue_source.clone(),
            })),
        };
        let reason = match current {
            Some(cur) if !cur.same_as(&work) => Some(match glue {
                GlueType::Bean => MSG_CHANGE_HANDLER,
                _ => MSG_CHANGE_GLUE_SOURCE,
            }),
            _ => None,
        };
        Ok((work, reason))
    }
}

/// Starts a job's worker; `serial` counts the workers started.
fn start_worker(job_id: i32, serial: &mut u64, work: Work, env: &Arc<RunEnv>) -> Entry {
    *serial += 1;
    let shared = Arc::new(JobShared::default());
    env.live_workers.fetch_add(1, Ordering::SeqCst);
    let actor = JobActor::new(job_id, *serial, work.clone(), shared.clone(), env.clone());
    // workers live on the table's arbiter: they only await, user code runs elsewhere
    let addr = actor.start();
    Entry { work, addr, shared }
}

impl Actor for JobTable {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // HTTP workers send here with `send`; a burst of triggers must queue, not fail
        ctx.set_mailbox_capacity(crate::actors::UNBOUNDED_MAILBOX);
        // a restart drops the context's timers, a pending trim among them
        self.trim_pending = false;
        ctx.run_interval(reap_period(self.env.idle_timeout), |act, ctx| {
            act.reap_idle(ctx)
        });
        ctx.run_interval(FLUSH_EVERY, |act, _| act.accepted.flush());
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.accepted.flush();
    }
}

/// Restarted by its supervisor if it ever stops; the job table survives in the actor's fields.
impl Supervised for JobTable {
    fn restarting(&mut self, _: &mut Self::Context) {
        log::warn!(
            "job table restarting with {} job worker(s)",
            self.jobs.len()
        );
    }
}

impl Handler<RunTrigger> for JobTable {
    type Result = Result<(), String>;

    fn handle(&mut self, RunTrigger(p): RunTrigger, _: &mut Self::Context) -> Self::Result {
        let env = self.env.clone();
        let metrics = &env.metrics;
        let refused = |reason: RefusalReason, why: String| {
            log::info!("job {} log {}: trigger refused: {why}", p.job_id, p.log_id);
            metrics.trigger_refused(reason);
            Err(why)
        };
        if !self.accepting {
            return refused(RefusalReason::ShuttingDown, MSG_SHUTTING_DOWN.to_string());
        }
        // an admin sends a log id again only when it cannot know whether the first call arrived:
        // the first one runs (or ran); this one must not
        if self.accepted.contains(p.log_id) {
            return refused(RefusalReason::Duplicate, repeat_trigger(p.log_id));
        }
        let (work, mut replace) = match self.resolve_work(&p) {
            Ok(w) => w,
            Err((reason, why)) => return refused(reason, why),
        };
        if replace.is_none() {
            if let Some(entry) = self.jobs.get(&p.job_id) {
                match p.block_strategy_enum() {
                    BlockStrategy::DiscardLater if entry.shared.is_busy() => {
                        return refused(RefusalReason::DiscardLater, MSG_DISCARD_LATER.to_string())
                    }
                    BlockStrategy::CoverEarly if entry.shared.is_busy() => {
                        replace = Some(MSG_COVER_EARLY)
                    }
                    BlockStrategy::SerialExecution => {
                        let behind = entry.shared.queued_behind();
                        if p.max_queued.is_some_and(|bound| behind >= bound as usize) {
                            return refused(RefusalReason::QueueFull, queue_full(behind));
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(reason) = replace {
            log::info!("job {}: replacing its worker: {reason}", p.job_id);
            self.remove(p.job_id, reason);
        }
        let entry = match self.jobs.entry(p.job_id) {
            Slot::Occupied(found) => found.into_mut(),
            Slot::Vacant(slot) => {
                slot.insert(start_worker(p.job_id, &mut self.next_serial, work, &env))
            }
        };
        if !entry.shared.enqueue(p.log_id) {
            return refused(RefusalReason::Duplicate, repeat_trigger(p.log_id));
        }
        self.accepted.record(p.log_id, Instant::now());
        metrics.trigger_accepted();
        log::info!(
            "job {} log {}: trigger accepted ({})",
            p.job_id,
            p.log_id,
            entry.work.describe()
        );
        entry.addr.do_send(Run(p));
        Ok(())
    }
}

impl Handler<Kill> for JobTable {
    type Result = bool;

    fn handle(&mut self, msg: Kill, _: &mut Self::Context) -> bool {
        let found = self.remove(msg.job_id, crate::protocol::MSG_KILLED_BY_ADMIN);
        if found {
            log::info!("job {}: killed by the scheduling center", msg.job_id);
        }
        found
    }
}

impl Handler<IdleBeat> for JobTable {
    type Result = bool;

    fn handle(&mut self, msg: IdleBeat, _: &mut Self::Context) -> bool {
        // a full executor is busy for every job: BUSYOVER routing moves the trigger elsewhere
        self.env.slots.is_full()
            || self
                .jobs
                .get(&msg.job_id)
                .is_some_and(|e| e.shared.is_busy())
    }
}

impl Handler<WasAccepted> for JobTable {
    type Result = bool;

    fn handle(&mut self, msg: WasAccepted, _: &mut Self::Context) -> bool {
        self.accepted.contains(msg.log_id)
    }
}

impl Handler<StopAccepting> for JobTable {
    type Result = ();

    fn handle(&mut self, _: StopAccepting, _: &mut Self::Context) {
        self.accepting = false;
    }
}

impl Handler<StopAll> for JobTable {
    type Result = usize;

    fn handle(&mut self, msg: StopAll, _: &mut Self::Context) -> usize {
        self.accepted.flush();
        let ids: Vec<i32> = self.jobs.keys().copied().collect();
        for id in &ids {
            self.remove(*id, &msg.reason);
        }
        ids.len()
    }
}

impl Handler<GetJobQueues> for JobTable {
    type Result = Vec<JobQueue>;

    fn handle(&mut self, _: GetJobQueues, _: &mut Self::Context) -> Vec<JobQueue> {
        self.job_queues()
    }
}

impl Handler<GetLoad> for JobTable {
    type Result = MessageResult<GetLoad>;

    fn handle(&mut self, _: GetLoad, _: &mut Self::Context) -> Self::Result {
        let queues = self.job_queues();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        MessageResult(
            ExecutorLoad {
                running: count(self.jobs.values().filter(|e| e.shared.is_running()).count()),
                queued: count(queues.iter().map(|q| q.waiting).sum()),
                limit: count(self.env.slots.limit().unwrap_or(0)),
                jobs: queues
                    .into_iter()
                    .map(|q| JobLoad {
                        job_id: q.job_id,
                        queued: count(q.waiting),
                        oldest_queued_ms: u64::try_from(q.oldest_wait.as_millis())
                            .unwrap_or(u64::MAX),
                    })
                    .collect(),
            }
            .bounded(),
        )
    }
}

impl Handler<GetCensus> for JobTable {
    type Result = Census;

    fn handle(&mut self, _: GetCensus, _: &mut Self::Context) -> Census {
        Census {
            busy: self.jobs.values().filter(|e| e.shared.is_busy()).count(),
            live: self.env.live_workers.load(Ordering::SeqCst),
            queued: self.jobs.values().map(|e| e.shared.queued()).sum::<usize>()
                + self.env.slots.waiting(),
            waiting_for_slot: self.env.slots.waiting(),
            in_slots: self.env.slots.in_use(),
            max_concurrent_runs: self.env.slots.limit().unwrap_or(0),
        }
    }
}
