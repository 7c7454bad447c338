//! Dispatch: turns a [`Trigger`] into log rows and `run` calls on executors.
//!
//! Triggers travel in batches ([`TriggerBatch`]; a single [`Trigger`] is a batch of one): the
//! ring hands over each second's fires a second early, a worker prepares its share of a batch
//! with a few batched statements (see `trigger::prepare_batch`), then calls each executor at the
//! fire's own time and leaves the outcomes to its [`OutcomeWriter`].
//!
//! The [`Dispatcher`] (one per admin) sends each trigger to a [`TriggerWorker`] of the fast or the
//! slow pool. Each pool is a set of arbiters, one worker on each, with an in-flight limit shared by
//! the pool; a job whose dispatches were slow (more than 10 over 500 ms in the current minute, as
//! XXL-JOB counts) moves to the slow pool so it cannot hold up the others. Triggers of one job
//! always go to the same worker of a pool, so that worker alone owns the job's routing state
//! (ROUND counters, LFU/LRU maps): one [`Router`] per worker, shared by that worker's fire tasks
//! on its own thread through `Rc<RefCell<…>>` and borrowed only for one synchronous route call.
//! The executors routing leaves out after a call got no answer are one [`Suspects`](crate::routing::Suspects) set
//! for all workers, kept in step with the other admins by the [`suspect_watch`](super::suspect_watch).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use tokio::sync::{oneshot, Semaphore};

use super::call_gauge::CallGauge;
use super::outcome_writer::OutcomeWriter;
use super::supervision::{answers_probes, ActorLife};
use super::trigger::{
    after_fire, expected_calls, fire_prepared, prepare_batch, Prepared, TriggerEnv, TriggerReport,
};
use crate::clock::{now_ms, sleep_until_epoch_ms};
use crate::executor_calls::ExecutorCalls;
use crate::metrics::AdminMetrics;
use crate::model::TriggerType;
use crate::protocol::SUCCESS_CODE;
use crate::routing::Router;

/// The request to fire a job once; defined beside the trigger path that prepares it.
pub use super::trigger::Trigger;

/// A dispatch slower than this counts against the job (XXL-JOB's 500 ms).
pub const SLOW_DISPATCH_MS: u128 = 500;
/// More slow dispatches than this in one minute move a job to the slow pool.
pub const SLOW_DISPATCHES_PER_MINUTE: u32 = 10;

/// Many triggers at once, prepared together (one job read, one log insert).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct TriggerBatch {
    /// The triggers.
    pub triggers: Vec<Trigger>,
    /// Pre-read fires handed over ahead of time: each calls its executor at its own
    /// `schedule_time` (at once if that has passed). Otherwise all fire as soon as prepared.
    pub ahead: bool,
}

/// A worker reports how long one dispatch took, for slow-pool accounting.
#[derive(Message, Debug)]
#[rtype(result = "()")]
struct DispatchTimed {
    job_id: i32,
    elapsed_ms: u128,
}

/// Counts and limits of the pools, for health and metrics.
#[derive(Message, Debug)]
#[rtype(result = "DispatchStats")]
pub struct GetDispatchStats;

/// What [`GetDispatchStats`] answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Triggers sent to the fast pool since start.
    pub fast_dispatched: u64,
    /// Triggers sent to the slow pool since start.
    pub slow_dispatched: u64,
    /// Jobs currently routed to the slow pool.
    pub slow_jobs: Vec<i32>,
    /// Triggers being dispatched right now (both pools).
    pub in_flight: usize,
    /// The same, on the fast and on the slow pool.
    pub in_flight_by_pool: [usize; 2],
}

/// Sizes of the pools.
#[derive(Debug, Clone)]
pub struct DispatchSettings {
    /// Arbiters (threads) in the fast pool.
    pub fast_arbiters: usize,
    /// Arbiters in the slow pool.
    pub slow_arbiters: usize,
    /// Most triggers in flight on the fast pool.
    pub fast_max: usize,
    /// Most triggers in flight on the slow pool.
    pub slow_max: usize,
}

struct Pool {
    name: &'static str,
    workers: Vec<Addr<TriggerWorker>>,
    outstanding: Arc<AtomicUsize>,
    // kept so the threads live as long as the dispatcher
    _arbiters: Vec<Arbiter>,
    dispatched: u64,
}

impl Pool {
    fn start(
        name: &'static str,
        arbiters: usize,
        max_in_flight: usize,
        env: &TriggerEnv,
        calls: &Arc<CallGauge>,
        dispatcher: &Addr<Dispatcher>,
    ) -> Pool {
        let permits = Arc::new(Semaphore::new(max_in_flight.max(1)));
        let outstanding = Arc::new(AtomicUsize::new(0));
        let mut workers = Vec::new();
        let mut handles = Vec::new();
        for index in 0..arbiters.max(1) {
            let arbiter = Arbiter::new();
            let env = env.clone();
            let permits = permits.clone();
            let outstanding = outstanding.clone();
            let dispatcher = dispatcher.clone();
            let calls = calls.clone();
            let router = Router::new().sharing(env.suspects.clone());
            // resolved once: a fire only observes it
            let dispatch_time = env
                .metrics
                .dispatch_histogram(AdminMetrics::pool_index(name));
            let worker =
                TriggerWorker::start_in_arbiter(&arbiter.handle(), move |_| TriggerWorker {
                    dispatch_time,
                    pool: name,
                    index,
                    outcomes: OutcomeWriter::new(env.store.clone(), calls),
                    env,
                    permits,
                    max_in_flight: max_in_flight.max(1),
                    outstanding,
                    dispatcher,
                    client: Rc::new(ExecutorCalls::default()),
                    router: Rc::new(RefCell::new(router)),
                });
            workers.push(worker);
            handles.push(arbiter);
        }
        Pool {
            name,
            workers,
            outstanding,
            _arbiters: handles,
            dispatched: 0,
        }
    }

    /// Triggers accepted and not yet finished, including prepared ones waiting for their second.
    fn in_flight(&self) -> usize {
        self.outstanding.load(Ordering::Acquire)
    }

    fn worker_of(&self, job_id: i32) -> usize {
        (job_id.unsigned_abs() as usize) % self.workers.len()
    }

    fn send(&mut self, worker: usize, triggers: Vec<Trigger>, ahead: bool) {
        self.dispatched += triggers.len() as u64;
        self.outstanding.fetch_add(triggers.len(), Ordering::AcqRel);
        self.workers[worker].do_send(TriggerBatch { triggers, ahead });
    }
}

/// Front of dispatch: picks the pool, counts slow dispatches.
pub struct Dispatcher {
    settings: DispatchSettings,
    env: TriggerEnv,
    calls: Arc<CallGauge>,
    fast: Option<Pool>,
    slow: Option<Pool>,
    slow_counts: HashMap<i32, u32>,
    minute: i64,
    life: ActorLife,
}

impl Dispatcher {
    /// A dispatcher whose pools start with it; their executor calls are counted by `calls`.
    pub fn new(settings: DispatchSettings, env: TriggerEnv, calls: Arc<CallGauge>) -> Self {
        Dispatcher {
            settings,
            env,
            calls,
            fast: None,
            slow: None,
            slow_counts: HashMap::new(),
            minute: now_ms() / 60_000,
            life: ActorLife::detached("dispatcher"),
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        Dispatcher { life, ..self }
    }

    fn roll_minute(&mut self) {
        let minute = now_ms() / 60_000;
        if minute != self.minute {
            self.minute = minute;
            self.slow_counts.clear();
        }
    }

    fn is_slow(&self, job_id: i32) -> bool {
        self.slow_counts.get(&job_id).copied().unwrap_or(0) > SLOW_DISPATCHES_PER_MINUTE
    }
}

impl Actor for Dispatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // triggers arrive in bursts each second; never make the ring wait on a full mailbox
        ctx.set_mailbox_capacity(super::UNBOUNDED_MAILBOX);
        self.life.started();
        let me = ctx.address();
        let (settings, env, calls) = (&self.settings, &self.env, &self.calls);
        let (fast, fast_max) = (settings.fast_arbiters, settings.fast_max);
        let (slow, slow_max) = (settings.slow_arbiters, settings.slow_max);
        let start = |name, arbiters, max| Pool::start(name, arbiters, max, env, calls, &me);
        self.fast = Some(start("fast", fast, fast_max));
        self.slow = Some(start("slow", slow, slow_max));
        log::info!(
            "dispatcher started: fast pool {} threads / {} in flight, slow pool {} threads / {} in flight",
            self.settings.fast_arbiters,
            self.settings.fast_max,
            self.settings.slow_arbiters,
            self.settings.slow_max
        );
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
        for pool in [self.fast.take(), self.slow.take()].into_iter().flatten() {
            for arbiter in &pool._arbiters {
                arbiter.stop();
            }
            log::info!(
                "{} dispatch pool stopped after {} triggers",
                pool.name,
                pool.dispatched
            );
        }
    }
}

answers_probes!(Dispatcher);

impl Supervised for Dispatcher {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("dispatcher restarting");
    }
}

impl Handler<Trigger> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: Trigger, ctx: &mut Self::Context) {
        self.handle(
            TriggerBatch {
                triggers: vec![msg],
                ahead: false,
            },
            ctx,
        );
    }
}

impl Handler<TriggerBatch> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: TriggerBatch, _ctx: &mut Self::Context) {
        self.roll_minute();
        let (Some(fast), Some(slow)) = (self.fast.as_ref(), self.slow.as_ref()) else {
            log::error!(
                "{} trigger(s) dropped: dispatch pools are stopped",
                msg.triggers.len()
            );
            return;
        };
        // one sub-batch per worker: a job's triggers always meet the same routing state
        let mut fast_parts: Vec<Vec<Trigger>> =
            (0..fast.workers.len()).map(|_| Vec::new()).collect();
        let mut slow_parts: Vec<Vec<Trigger>> =
            (0..slow.workers.len()).map(|_| Vec::new()).collect();
        for trigger in msg.triggers {
            if self.is_slow(trigger.job_id) {
                slow_parts[slow.worker_of(trigger.job_id)].push(trigger);
            } else {
                fast_parts[fast.worker_of(trigger.job_id)].push(trigger);
            }
        }
        for (pool, parts) in [(&mut self.fast, fast_parts), (&mut self.slow, slow_parts)] {
            let Some(pool) = pool.as_mut() else { continue };
            for (worker, part) in parts.into_iter().enumerate() {
                if !part.is_empty() {
                    pool.send(worker, part, msg.ahead);
                }
            }
        }
    }
}

impl Handler<DispatchTimed> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: DispatchTimed, _ctx: &mut Self::Context) {
        self.roll_minute();
        if msg.elapsed_ms > SLOW_DISPATCH_MS {
            let count = self.slow_counts.entry(msg.job_id).or_insert(0);
            *count += 1;
            if *count == SLOW_DISPATCHES_PER_MINUTE + 1 {
                log::warn!(
                    "job {} moved to the slow dispatch pool: {} dispatches over {} ms this minute",
                    msg.job_id,
                    *count,
                    SLOW_DISPATCH_MS
                );
            }
        }
    }
}

impl Handler<GetDispatchStats> for Dispatcher {
    type Result = MessageResult<GetDispatchStats>;

    fn handle(&mut self, _msg: GetDispatchStats, _ctx: &mut Self::Context) -> Self::Result {
        self.roll_minute();
        let mut slow_jobs: Vec<i32> = self
            .slow_counts
            .iter()
            .filter(|(_, c)| **c > SLOW_DISPATCHES_PER_MINUTE)
            .map(|(j, _)| *j)
            .collect();
        slow_jobs.sort_unstable();
        let in_flight_by_pool =
            [&self.fast, &self.slow].map(|p| p.as_ref().map(Pool::in_flight).unwrap_or(0));
        MessageResult(DispatchStats {
            fast_dispatched: self.fast.as_ref().map(|p| p.dispatched).unwrap_or(0),
            slow_dispatched: self.slow.as_ref().map(|p| p.dispatched).unwrap_or(0),
            slow_jobs,
            in_flight: in_flight_by_pool.iter().sum(),
            in_flight_by_pool,
        })
    }
}

/// Runs triggers on one arbiter of a pool; owns the routing state of the jobs sent to it.
pub struct TriggerWorker {
    pool: &'static str,
    index: usize,
    env: TriggerEnv,
    permits: Arc<Semaphore>,
    /// The pool's limit of calls in flight (what `permits` started with).
    max_in_flight: usize,
    outstanding: Arc<AtomicUsize>,
    dispatcher: Addr<Dispatcher>,
    client: Rc<ExecutorCalls>,
    router: Rc<RefCell<Router>>,
    outcomes: Rc<OutcomeWriter>,
    /// This pool's series of `jobwheel_dispatch_duration_seconds`.
    dispatch_time: prometheus::Histogram,
}

/// Counts a trigger as finished when dropped, however its task ends.
struct Outstanding(Arc<AtomicUsize>);

impl Drop for Outstanding {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Actor for TriggerWorker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(super::UNBOUNDED_MAILBOX);
        log::debug!("trigger worker {}#{} started", self.pool, self.index);
    }
}

impl Handler<TriggerBatch> for TriggerWorker {
    type Result = ();

    fn handle(&mut self, msg: TriggerBatch, _ctx: &mut Self::Context) {
        let env = self.env.clone();
        let permits = self.permits.clone();
        let client = self.client.clone();
        let router = self.router.clone();
        let outcomes = self.outcomes.clone();
        let dispatcher = self.dispatcher.clone();
        let dispatch_time = self.dispatch_time.clone();
        let max_in_flight = self.max_in_flight;
        let mut guards: Vec<Outstanding> = (0..msg.triggers.len())
            .map(|_| Outstanding(self.outstanding.clone()))
            .collect();
        // Tasks of their own, not `ctx.spawn`: an actor's context polls every future it holds on
        // each wake-up, so a burst of N triggers would cost O(N²) polls.
        actix::spawn(async move {
            let mut triggers = msg.triggers;
            // fires claimed before this admin's beats stalled may be another admin's by now:
            // neither prepared nor dispatched here (see `lease`)
            let now = now_ms();
            let mut fenced = Vec::new();
            triggers.retain_mut(|t| match t.claim() {
                Some(key) if env.lease.fenced(now, key.fire_time) => {
                    fenced.push(key);
                    drop(guards.pop());
                    if let Some(reply) = t.reply.take() {
                        let _ = reply.send(not_dispatched());
                    }
                    false
                }
                _ => true,
            });
            if triggers.is_empty() {
                // nothing to prepare: an empty pass would read as the database answering
                env.lease.hand_back(&env.store, fenced);
                return;
            }
            let replies: Vec<_> = triggers.iter_mut().map(|t| t.reply.take()).collect();
            let prepared = prepare_batch(&env, triggers, msg.ahead).await;
            let mut ready = Vec::with_capacity(prepared.len());
            for (prepared, reply) in prepared.into_iter().zip(replies) {
                match prepared {
                    Prepared::Ready(p) => ready.push((p, reply)),
                    Prepared::Skipped(report) => {
                        drop(guards.pop());
                        if let Some(reply) = reply {
                            let _ = reply.send(report);
                        }
                    }
                }
            }
            ready.sort_by_key(|(p, _)| p.schedule_time());
            if msg.ahead {
                // Connections opened now, while the second before is quiet: opening them at the
                // fire time makes a burst late whenever none are open yet, in the first second
                // or once idle ones expired. No more than the pool
                // lets run at once: unused ones would expire and reopen.
                let wants = expected_calls(ready.iter().map(|(p, _)| &**p));
                let client = client.clone();
                actix::spawn(async move {
                    for (address, want) in wants {
                        client.warm(&address, want.min(max_in_flight)).await;
                    }
                });
            }
            // A fire's task is spawned only once it is due and holds a permit: a task's future
            // is allocated whole at spawn, so thousands spawned early would each hold a whole
            // fire's state while they wait.
            for (p, reply) in ready {
                let guard = guards.pop();
                if msg.ahead {
                    sleep_until_epoch_ms(p.schedule_time()).await;
                }
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    return;
                };
                // the check again, at the last moment: the stall may come while a fire waits
                if let Some(key) = p
                    .claim()
                    .filter(|k| env.lease.fenced(now_ms(), k.fire_time))
                {
                    fenced.push(key);
                    if let Some(reply) = reply {
                        let _ = reply.send(not_dispatched());
                    }
                    continue;
                }
                let (env, client, router, outcomes, dispatcher, dispatch_time) = (
                    env.clone(),
                    client.clone(),
                    router.clone(),
                    outcomes.clone(),
                    dispatcher.clone(),
                    dispatch_time.clone(),
                );
                // counted before the task runs, so a burst's outcomes wait for all its calls
                let calling = outcomes.calling();
                // each trigger runs concurrently with the others, up to the pool's limit
                actix::spawn(async move {
                    let _guard = guard;
                    let started = Instant::now();
                    let trigger_type = p.trigger_type();
                    if matches!(trigger_type, TriggerType::Cron | TriggerType::Misfire) {
                        env.metrics.fire_lateness(now_ms() - p.schedule_time());
                    }
                    let (report, rows) = fire_prepared(&env, &client, &router, &p).await;
                    drop(permit);
                    let elapsed = started.elapsed();
                    dispatch_time.observe(elapsed.as_secs_f64());
                    // one per run row, as its outcome will be written
                    for (_, outcome) in &rows {
                        env.metrics
                            .fired(trigger_type, outcome.trigger_code == SUCCESS_CODE);
                    }
                    let elapsed_ms = elapsed.as_millis();
                    // only slow dispatches count; a message per fire would wake the dispatcher's
                    // thread thousands of times a second for nothing
                    if elapsed_ms > SLOW_DISPATCH_MS {
                        dispatcher.do_send(DispatchTimed {
                            job_id: p.job_id(),
                            elapsed_ms,
                        });
                    }
                    outcomes.record(calling, rows, p.claim()).await;
                    after_fire(&env, &p, &report).await;
                    if let Some(reply) = reply {
                        let _ = reply.send(report);
                    }
                });
            }
            env.lease.hand_back(&env.store, fenced);
        });
    }
}

/// The report of a claimed fire this admin did not dispatch, its claim being in doubt.
fn not_dispatched() -> TriggerReport {
    TriggerReport {
        error: Some(
            "not dispatched: this admin's heartbeat stalled; its claim is handed back".into(),
        ),
        ..Default::default()
    }
}

/// Builds the dispatcher's settings from the admin's flags: on a small machine two fast threads
/// and one slow thread carry thousands of concurrent calls, since every call is async.
pub fn dispatch_settings(fast_max: usize, slow_max: usize) -> DispatchSettings {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    DispatchSettings {
        fast_arbiters: cores.clamp(1, 8),
        slow_arbiters: (cores / 2).clamp(1, 4),
        fast_max,
        slow_max,
    }
}

/// Convenience for the web layer and monitors: send a trigger and wait for its log ids.
pub async fn trigger_and_wait(
    dispatcher: &Addr<Dispatcher>,
    mut trigger: Trigger,
) -> Option<TriggerReport> {
    let (tx, rx) = oneshot::channel();
    trigger.reply = Some(tx);
    dispatcher.do_send(trigger);
    rx.await.ok()
}
