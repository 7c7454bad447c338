//! WorkflowRunner: starts workflow runs (the schedule's fires, manual and API triggers, runs
//! leaving the queue), moves them on as their nodes end, and does what users ask of them.
//!
//! A run moves on in one transaction holding its row lock (`advance.rs`): JOB node attempts are
//! claimed by inserting their run rows (unique by run, node and attempt), and fired through the
//! dispatcher like any trigger once the transaction has committed. Results reach the runner
//! from the result intake (and failed triggers from the trigger path) through the
//! [`WorkflowLink`](super::workflow_link::WorkflowLink); nothing a run needs is held only in
//! memory, so any admin can move any run on. Every second the runner fires its workflows' due
//! schedules (each fire time claimed with a compare-and-set, as jobs' are) and looks at the runs
//! that need it: past their deadline, with a retry due, or unchanged for a while (an admin died
//! between a claim and its call, or before it moved a run on after a result).

mod actions;
mod advance;
mod alarms;
mod start;

use std::collections::{BTreeSet, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono_tz::Tz;

use super::dispatch::{Dispatcher, TriggerBatch};
use super::fault_exit::FaultExit;
use super::supervision::{answers_probes, ActorLife};
use super::timing_rules::NODE_DEAD_AFTER_MS;
use super::trigger::Trigger;
use super::workflow_link::AdvanceRuns;
use crate::alarm::Alarmer;
use crate::clock::now_ms;
use crate::executor_calls::{Credentials, ExecutorCalls};
use crate::metrics::AdminMetrics;
use crate::model::{executor_token, NodeState, RunState};
use crate::protocol::{AdminProtocol, SUCCESS_CODE};
use crate::store::{ActorStore, Backend, LogResultRow, Store, StoreResult};
use crate::workflow::context::ContextLimits;

pub use start::FireRequest;

/// A claimed node attempt whose call has not gone out this long after its claim, by an admin
/// that is gone, is sent again.
const RESEND_AFTER_MS: i64 = 10_000;
/// The same, when this admin claimed it and lost the call (its dispatcher restarted).
const RESEND_OWN_AFTER_MS: i64 = 60_000;
/// A running run unchanged for this long is looked at again.
const STALE_AFTER_MS: i64 = 30_000;
/// Runs moved on in one transaction: a burst of results is moved in several, and the fires of
/// each go out while the next is written.
const MOVE_BATCH: usize = 50;
/// Moves under way at once on PostgreSQL and MariaDB, whose row locks let them run side by side:
/// a burst of results (every run of a schedule ending a node in the same second) is moved by
/// several connections instead of queueing behind one. SQLite has one writer: one move at a time.
const MOVES_AT_ONCE_ON_A_SERVER: usize = 4;
/// A move beside one under way starts only for this many runs waiting: a burst is spread over
/// connections, a trickle stays in one transaction (each costs its statements whatever it holds).
const BACKLOG_FOR_ANOTHER_MOVE: usize = 10;
/// How long the admins seen beating are trusted before they are read again (a dead admin's
/// claims are resent after seconds, not milliseconds).
const LIVE_OWNERS_FOR: Duration = Duration::from_secs(1);
/// Runs looked at per pass.
const LOOK_BATCH: i64 = 200;
/// Runs looked at by the first pass after a start (the rest when they go stale).
const FIRST_LOOK_BATCH: i64 = 10_000;
/// How long a kill waits for the outcome of a call in flight (where the run went).
const KILL_WAITS_FOR_CALL: Duration = Duration::from_secs(15);
/// How often ended runs are looked at for their alarms.
const ALARM_EVERY: Duration = Duration::from_secs(5);

/// What the runner needs to know about this admin.
#[derive(Debug, Clone)]
pub struct Engine {
    /// This admin's id in `admin_node`: the owner of the node attempts it claims.
    pub node_id: Arc<str>,
    /// Limits on outputs and contexts.
    pub limits: ContextLimits,
    /// Zone of schedules without their own.
    pub default_tz: Tz,
    /// Where the crash tests make this admin die.
    pub faults: FaultExit,
}

/// A running node attempt to stop on its executor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillOrder {
    /// Its run row.
    pub log_id: i64,
}

/// What changes to runs leave to do once their transaction has committed.
#[derive(Debug, Default)]
pub struct Moved {
    /// Node attempts to fire.
    pub fires: Vec<Trigger>,
    /// Node attempts to kill.
    pub kills: Vec<KillOrder>,
    /// Runs that ended: their workflow, id and end state (a queued run may start).
    pub ended: Vec<(i32, i64, RunState)>,
    /// Nodes that ended, with how long they ran (ms), for the metrics.
    pub node_ends: Vec<(NodeState, i64)>,
    /// Runs to look at again now (an action reopened them).
    pub look_again: Vec<i64>,
    /// Runs to look at again at an instant (a claimed call may need sending again then).
    pub look_at: Vec<(i64, i64)>,
}

/// What a fire did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartOutcome {
    /// The run (started, queued or skipped).
    pub run_id: i64,
    /// Where it stands.
    pub state: RunState,
    /// Why, in words.
    pub message: String,
}

/// What a user may do to a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunAction {
    /// No node starts until resumed.
    Pause,
    /// Nodes start again.
    Resume,
    /// Stops it: its running nodes are killed on their executors.
    Cancel,
    /// A FAILED, CANCELLED or TIMED_OUT run runs its failed and cancelled nodes and what
    /// follows them again, keeping what succeeded.
    Retry,
    /// A FAILED node counts as succeeded; what follows it runs.
    MarkSuccess(String),
}

/// Why an action was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// No such run.
    #[error("no such workflow run")]
    NotFound,
    /// The run has no node with that key.
    #[error("the run has no node '{0}'")]
    NoNode(String),
    /// The run (or node) is not in a state the action applies to.
    #[error("{0}")]
    Conflict(String),
    /// The database failed.
    #[error("{0}")]
    Store(String),
}

/// Start a run now.
#[derive(Message, Debug)]
#[rtype(result = "Result<Option<StartOutcome>, String>")]
pub struct StartRun(pub FireRequest);

/// Do `action` to run `run_id`, on behalf of `by` (a user name).
#[derive(Message, Debug)]
#[rtype(result = "Result<(), ActionError>")]
pub struct ActOnRun {
    /// The run.
    pub run_id: i64,
    /// What to do.
    pub action: RunAction,
    /// Who asks (for the run's message).
    pub by: String,
}

/// The workflow runner; supervised.
pub struct WorkflowRunner {
    store: ActorStore,
    dispatcher: Addr<Dispatcher>,
    engine: Engine,
    metrics: Arc<AdminMetrics>,
    access_token: String,
    calls: Rc<ExecutorCalls>,
    /// Runs to move on, gathered while batches are being moved.
    pending: BTreeSet<i64>,
    /// Runs being moved now: a result for one of them waits in `pending` for its move to end
    /// (two moves of a run would only queue on its row lock).
    in_flight: HashSet<i64>,
    /// Moves under way, and how many may be.
    moves: usize,
    moves_at_once: usize,
    /// The admins seen beating, and when they were read.
    live_owners: Option<(Instant, Arc<HashSet<String>>)>,
    /// Whether a look pass is under way (one at a time).
    looking: bool,
    /// Whether the first pass (every running run looked at: this admin may have died with
    /// some of them half moved on) is still to come.
    first_pass: bool,
    /// The job alarm channels, for FAILED and TIMED_OUT runs.
    alarmer: Rc<Alarmer>,
    /// Whether an alarm pass is under way.
    alarming: bool,
    life: ActorLife,
}

impl WorkflowRunner {
    /// A runner writing through `store`, firing on `dispatcher`, alarming through `alarmer`;
    /// create it on the arbiter it runs on (the channels are not `Send`).
    pub fn new(
        store: ActorStore,
        dispatcher: Addr<Dispatcher>,
        engine: Engine,
        metrics: Arc<AdminMetrics>,
        (access_token, alarmer): (String, Alarmer),
    ) -> Self {
        let moves_at_once = match store.backend() {
            Backend::Sqlite => 1,
            Backend::Postgres | Backend::MySql => MOVES_AT_ONCE_ON_A_SERVER,
        };
        WorkflowRunner {
            store,
            dispatcher,
            engine,
            metrics,
            access_token,
            calls: Rc::new(ExecutorCalls::default()),
            moves_at_once,
            pending: BTreeSet::new(),
            in_flight: HashSet::new(),
            moves: 0,
            live_owners: None,
            looking: false,
            first_pass: true,
            alarmer: Rc::new(alarmer),
            alarming: false,
            life: ActorLife::detached("workflow-runner"),
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        WorkflowRunner { life, ..self }
    }

    /// Moves up to [`MOVE_BATCH`] pending runs on in one transaction, then the next ones; on a
    /// server database several such moves at once while runs are waiting (see
    /// [`MOVES_AT_ONCE_ON_A_SERVER`]).
    fn move_pending(&mut self, ctx: &mut Context<Self>) {
        while let Some(runs) = next_move(
            &self.pending,
            &self.in_flight,
            self.moves,
            self.moves_at_once,
        ) {
            for id in &runs {
                self.pending.remove(id);
                self.in_flight.insert(*id);
            }
            self.moves += 1;
            self.move_runs(runs, ctx);
        }
    }

    /// Moves `runs` on (taken out of `pending` and marked in flight by the caller).
    fn move_runs(&mut self, runs: Vec<i64>, ctx: &mut Context<Self>) {
        let live = self
            .live_owners
            .as_ref()
            .filter(|(at, _)| at.elapsed() < LIVE_OWNERS_FOR)
            .map(|(_, live)| live.clone());
        let (store, engine) = (self.store.clone(), self.engine.clone());
        let moved_runs = runs.clone();
        let work = async move {
            store
                .run(move |s| async move { Ok(advance_runs(&s, &engine, &runs, live).await) })
                .await
        };
        ctx.spawn(work.into_actor(self).map(move |done, act, ctx| {
            act.moves = act.moves.saturating_sub(1);
            for id in &moved_runs {
                act.in_flight.remove(id);
            }
            match done {
                Ok((results, live)) => {
                    if let Some(live) = live {
                        act.live_owners = Some((Instant::now(), live));
                    }
                    for (run_ids, result) in results {
                        match result {
                            Ok(moved) => act.follow(moved, ctx),
                            Err(e) => {
                                let level = act.store.failure_level(log::Level::Error);
                                log::log!(
                                    level,
                                    "workflow runs {run_ids:?}: cannot move them on: {e}"
                                );
                            }
                        }
                    }
                }
                Err(e) => log::error!("workflow runs not moved on: {e}"),
            }
            act.move_pending(ctx);
        }));
    }

    /// Does what a committed change left to do: fire, kill, start queued runs, count.
    fn follow(&mut self, moved: Moved, ctx: &mut Context<Self>) {
        if !moved.fires.is_empty() {
            self.engine.faults.reached("workflow-claimed");
        }
        if !moved.fires.is_empty() {
            for _ in &moved.fires {
                self.metrics.workflow().node_fired();
            }
            // one batch: its jobs, groups and executors are read once for all of them
            self.dispatcher.do_send(TriggerBatch {
                triggers: moved.fires,
                ahead: false,
            });
        }
        for (state, ms) in &moved.node_ends {
            self.metrics.workflow().node_ended(state.as_str(), *ms);
        }
        if !moved.kills.is_empty() {
            self.kill(moved.kills, ctx);
        }
        self.pending.extend(moved.look_again);
        for (run_id, at) in moved.look_at {
            let wait = Duration::from_millis((at - now_ms()).clamp(0, STALE_AFTER_MS) as u64);
            ctx.run_later(wait, move |act, ctx| {
                act.pending.insert(run_id);
                act.move_pending(ctx);
            });
        }
        let mut freed: BTreeSet<i32> = BTreeSet::new();
        for (workflow_id, run_id, state) in moved.ended {
            self.metrics.workflow().run_reached(state.as_str());
            let level = match state {
                RunState::Succeeded => log::Level::Debug,
                RunState::Failed | RunState::TimedOut => log::Level::Warn,
                _ => log::Level::Info,
            };
            log::log!(level, "workflow {workflow_id}: run {run_id} ended {state}");
            freed.insert(workflow_id);
        }
        if !freed.is_empty() {
            self.start_queued(Some(freed), ctx);
        }
    }

    /// Starts what the queues of `among` (of every workflow when `None`) let start now; one
    /// read finds the workflows that have a queue, so a run ending with none costs no lock.
    fn start_queued(&mut self, among: Option<BTreeSet<i32>>, ctx: &mut Context<Self>) {
        let store = self.store.clone();
        let work = async move {
            store
                .run(move |s| async move {
                    let mut started = Vec::new();
                    for workflow_id in s.workflows_with_queued_runs().await? {
                        if among.as_ref().is_some_and(|a| !a.contains(&workflow_id)) {
                            continue;
                        }
                        match start::start_queued(&s, workflow_id, now_ms()).await {
                            Ok(runs) => started.extend(runs),
                            Err(e) if e.is_outage() => return Err(e),
                            Err(e) => log::error!(
                                "workflow {workflow_id}: cannot start its queued runs: {e}"
                            ),
                        }
                    }
                    Ok(started)
                })
                .await
        };
        ctx.spawn(
            work.into_actor(self)
                .map(|started, act, ctx| match started {
                    Ok(runs) => {
                        act.pending.extend(runs);
                        act.move_pending(ctx);
                    }
                    Err(e) => {
                        let level = act.store.failure_level(log::Level::Error);
                        log::log!(level, "workflow runner: cannot start queued runs: {e}");
                    }
                }),
        );
    }

    /// Kills node attempts on their executors and closes their run rows as failed.
    fn kill(&mut self, kills: Vec<KillOrder>, ctx: &mut Context<Self>) {
        let (store, calls, token) = (
            self.store.clone(),
            self.calls.clone(),
            self.access_token.clone(),
        );
        let work = async move {
            for k in kills {
                let id = k.log_id;
                // a call still in flight has no address yet: wait (bounded) for its outcome
                let waiting_until = Instant::now() + KILL_WAITS_FOR_CALL;
                let found = loop {
                    let found = store
                        .run(move |s| async move {
                            let Some(log) = s.get_log(id).await? else {
                                return Ok(None);
                            };
                            let group = s.get_group(log.job_group).await?;
                            Ok(Some((log, group)))
                        })
                        .await;
                    match found {
                        Ok(Some((log, _)))
                            if log.trigger_code == 0 && Instant::now() < waiting_until =>
                        {
                            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
                        }
                        Ok(found) => break found,
                        Err(e) => {
                            log::warn!("log {id}: cannot read it to stop it: {e}");
                            break None;
                        }
                    }
                };
                let Some((log, group)) = found else {
                    continue;
                };
                let mut note = "cancelled with its workflow run".to_string();
                if let Some(address) = log
                    .executor_address
                    .as_deref()
                    .filter(|_| log.handle_code == 0)
                {
                    let creds = Credentials {
                        access_token: Some(executor_token(group.as_ref(), &token)),
                        app_name: group.as_ref().map(|g| g.app_name.clone()),
                        protocol: AdminProtocol::V2,
                    };
                    // a kill names the job, not the run: a newer run of the job there (a
                    // CANCEL_OLD's new run, a retry) would be killed with it
                    let (of, at) = (log.clone(), address.to_string());
                    let since = now_ms() - KILL_WAITS_FOR_CALL.as_millis() as i64;
                    let newer = store
                        .run(move |s| async move { s.newer_open_run(&of, &at, since).await })
                        .await;
                    if newer.unwrap_or(false) {
                        log::info!(
                            "log {id}: not killed on {address}: a newer run of job {} is there or on its way, and a kill would stop it too",
                            log.job_id
                        );
                        note.push_str(&format!(
                            "; not killed on its executor: a newer run of job {} is there, and a kill stops every run of a job",
                            log.job_id
                        ));
                    } else {
                        let answer = calls.kill(address, &creds, log.job_id).await;
                        if answer.code != SUCCESS_CODE {
                            note.push_str(&format!(
                                "; the executor did not kill it: {}",
                                answer.msg.unwrap_or_default()
                            ));
                        }
                    }
                }
                let row = LogResultRow {
                    log_id: id,
                    handle_code: crate::protocol::FAIL_CODE,
                    handle_msg: Some(note),
                };
                let closed = store
                    .run(move |s| async move { s.complete_logs(&[row], now_ms()).await })
                    .await;
                if let Err(e) = closed {
                    log::warn!("log {id}: cannot close it after its workflow run stopped: {e}");
                }
            }
        };
        ctx.spawn(work.into_actor(self));
    }

    /// Every few seconds: the alarms of runs that ended FAILED or TIMED_OUT.
    fn alarm(&mut self, ctx: &mut Context<Self>) {
        if self.alarming {
            return;
        }
        self.alarming = true;
        let (store, alarmer) = (self.store.clone(), self.alarmer.clone());
        let work = async move { alarms::alarm_pass(&store, &alarmer).await };
        ctx.spawn(work.into_actor(self).map(|done, act, _| {
            act.alarming = false;
            match done {
                Ok(pass) => {
                    for _ in 0..pass.sent {
                        act.metrics.alarm(true);
                    }
                    for _ in 0..pass.failed {
                        act.metrics.alarm(false);
                    }
                }
                Err(e) => {
                    let level = act.store.failure_level(log::Level::Warn);
                    log::log!(level, "workflow alarm pass failed: {e}");
                }
            }
        }));
    }

    /// Every second: the due schedules, then the runs that need a look.
    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.looking {
            return;
        }
        self.looking = true;
        let (store, tz) = (self.store.clone(), self.engine.default_tz);
        let first = std::mem::take(&mut self.first_pass);
        let work = async move {
            store
                .run(move |s| async move {
                    let now = now_ms();
                    let fired = start::fire_due(&s, tz, now).await?;
                    let look = match first {
                        true => s.runs_to_look_at(now, now + 1, FIRST_LOOK_BATCH).await?,
                        false => {
                            s.runs_to_look_at(now, now - STALE_AFTER_MS, LOOK_BATCH)
                                .await?
                        }
                    };
                    Ok((fired, look))
                })
                .await
        };
        ctx.spawn(work.into_actor(self).map(|done, act, ctx| {
            act.looking = false;
            match done {
                Ok((fired, look)) => {
                    for (outcome, moved) in fired {
                        act.metrics.workflow().run_reached(outcome.state.as_str());
                        if outcome.state == RunState::Running {
                            act.pending.insert(outcome.run_id);
                        }
                        act.follow(moved, ctx);
                    }
                    act.pending.extend(look);
                    act.move_pending(ctx);
                }
                Err(e) => {
                    let level = act.store.failure_level(log::Level::Warn);
                    log::log!(level, "workflow runner pass failed: {e}");
                }
            }
        }));
    }
}

/// The runs the next move takes, when one may start beside the `moves` under way: up to
/// [`MOVE_BATCH`] pending runs not in flight; a move beside others only for a backlog (see
/// [`BACKLOG_FOR_ANOTHER_MOVE`]).
fn next_move(
    pending: &BTreeSet<i64>,
    in_flight: &HashSet<i64>,
    moves: usize,
    moves_at_once: usize,
) -> Option<Vec<i64>> {
    if moves >= moves_at_once {
        return None;
    }
    let runs: Vec<i64> = pending
        .iter()
        .filter(|id| !in_flight.contains(id))
        .take(MOVE_BATCH)
        .copied()
        .collect();
    let enough = match moves {
        0 => !runs.is_empty(),
        _ => runs.len() >= BACKLOG_FOR_ANOTHER_MOVE,
    };
    enough.then_some(runs)
}

/// Moves `runs` on in batches of [`MOVE_BATCH`], one transaction each; a batch that fails is
/// moved again run by run, so one run that cannot move does not hold the others back. Each
/// result names the runs it is about.
async fn advance_runs(
    store: &Store,
    engine: &Engine,
    runs: &[i64],
    live: Option<Arc<HashSet<String>>>,
) -> (
    Vec<(Vec<i64>, StoreResult<Moved>)>,
    Option<Arc<HashSet<String>>>,
) {
    let (live, read) = match live {
        Some(live) => (live, false),
        None => match store.beating_nodes(now_ms() - NODE_DEAD_AFTER_MS).await {
            Ok(nodes) => (Arc::new(nodes.into_iter().collect()), true),
            Err(e) => return (vec![(runs.to_vec(), Err(e))], None),
        },
    };
    let mut out = Vec::new();
    for batch in runs.chunks(MOVE_BATCH) {
        match advance::advance_batch(store, engine, batch, &live, now_ms()).await {
            Ok(moved) => out.push((batch.to_vec(), Ok(moved))),
            Err(e) if batch.len() == 1 || e.is_outage() => out.push((batch.to_vec(), Err(e))),
            Err(e) => {
                log::warn!(
                    "{} workflow runs not moved on together ({e}): one by one",
                    batch.len()
                );
                for &id in batch {
                    let one = advance::advance_batch(store, engine, &[id], &live, now_ms()).await;
                    out.push((vec![id], one));
                }
            }
        }
    }
    (out, read.then_some(live))
}

impl Actor for WorkflowRunner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(16_384);
        log::info!("workflow runner started");
        let wait = self.life.started();
        ctx.run_later(wait, |act, ctx| {
            act.tick(ctx);
            ctx.run_interval(Duration::from_secs(1), |act, ctx| act.tick(ctx));
            ctx.run_interval(ALARM_EVERY, |act, ctx| {
                act.alarm(ctx);
                // a run queued while the last running one ended (each saw the other still open)
                act.start_queued(None, ctx);
            });
        });
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

impl Supervised for WorkflowRunner {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // runs live in the database: the next pass finds the ones that were pending
        self.pending.clear();
        self.in_flight.clear();
        self.moves = 0;
        self.looking = false;
        self.alarming = false;
        self.first_pass = true;
    }
}

answers_probes!(WorkflowRunner);

impl Handler<AdvanceRuns> for WorkflowRunner {
    type Result = ();

    fn handle(&mut self, msg: AdvanceRuns, ctx: &mut Self::Context) {
        self.pending.extend(msg.run_ids);
        self.move_pending(ctx);
    }
}

impl Handler<StartRun> for WorkflowRunner {
    type Result = ResponseActFuture<Self, Result<Option<StartOutcome>, String>>;

    fn handle(&mut self, msg: StartRun, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        let req = msg.0;
        let work = async move {
            store
                .run(move |s| async move { start::start_run(&s, &req, now_ms()).await })
                .await
        };
        Box::pin(work.into_actor(self).map(|done, act, ctx| match done {
            Ok(Some((outcome, moved))) => {
                act.metrics.workflow().run_reached(outcome.state.as_str());
                if outcome.state == RunState::Running {
                    act.pending.insert(outcome.run_id);
                }
                act.follow(moved, ctx);
                act.move_pending(ctx);
                Ok(Some(outcome))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        }))
    }
}

impl Handler<ActOnRun> for WorkflowRunner {
    type Result = ResponseActFuture<Self, Result<(), ActionError>>;

    fn handle(&mut self, msg: ActOnRun, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        let work = async move {
            let (run_id, action, by) = (msg.run_id, msg.action, msg.by);
            store
                .run(move |s| async move { actions::act(&s, run_id, &action, &by, now_ms()).await })
                .await
                .map(|r| (run_id, r))
        };
        Box::pin(work.into_actor(self).map(|done, act, ctx| match done {
            Ok((_, Ok(moved))) => {
                act.follow(moved, ctx);
                act.move_pending(ctx);
                Ok(())
            }
            Ok((_, Err(e))) => Err(e),
            Err(e) => Err(ActionError::Store(e.to_string())),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_move_at_a_time_on_sqlite_and_a_burst_spread_on_a_server() {
        let pending: BTreeSet<i64> = (1..=120).collect();
        let none = HashSet::new();
        // SQLite: never a second move
        assert_eq!(next_move(&pending, &none, 1, 1), None);
        let first = next_move(&pending, &none, 0, 1).expect("a first move");
        assert_eq!(first.len(), MOVE_BATCH);
        // a server: more moves while the backlog lasts, up to the bound
        assert!(next_move(&pending, &none, 1, MOVES_AT_ONCE_ON_A_SERVER).is_some());
        assert_eq!(
            next_move(
                &pending,
                &none,
                MOVES_AT_ONCE_ON_A_SERVER,
                MOVES_AT_ONCE_ON_A_SERVER
            ),
            None
        );
    }

    #[test]
    fn a_trickle_stays_in_one_move_and_runs_in_flight_wait() {
        let few: BTreeSet<i64> = (1..BACKLOG_FOR_ANOTHER_MOVE as i64).collect();
        let none = HashSet::new();
        assert_eq!(
            next_move(&few, &none, 1, 4),
            None,
            "no second move for a trickle"
        );
        assert_eq!(
            next_move(&few, &none, 0, 4).map(|r| r.len()),
            Some(few.len())
        );
        // a run being moved is not taken by another move (it would queue on its row lock)
        let in_flight: HashSet<i64> = [1, 2].into();
        let next = next_move(&few, &in_flight, 0, 4).expect("the others");
        assert!(!next.contains(&1) && !next.contains(&2), "{next:?}");
        let only_in_flight: BTreeSet<i64> = [1, 2].into();
        assert_eq!(next_move(&only_in_flight, &in_flight, 0, 4), None);
    }
}
