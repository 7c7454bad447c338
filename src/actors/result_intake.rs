//! ResultIntake: run results from executors into `job_log`, then child jobs and FIX_DELAY
//! follow-ups (XXL-JOB `JobCompleteHelper` + `XxlJobCompleter`).
//!
//! A result is stored once: the update only applies to a log without a result, so a duplicate
//! or late callback changes nothing, and an unknown log id is answered and ignored.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::oneshot;

use super::call_gauge::CallGauge;
use super::dispatch::{Dispatcher, Trigger};
use super::supervision::{answers_probes, ActorLife};
use super::trigger::{resume_fix_delay, TriggerEnv};
use crate::clock::now_ms;
use std::collections::{HashMap, HashSet};

use crate::metrics::CallbackCounts;
use crate::model::{
    storable_text, JobFollowUps, ResultLog, ScheduleType, TriggerType, MESSAGE_MAX_CHARS,
};
use crate::protocol::{CallbackItem, HandleCallbackParam, FAIL_CODE, SUCCESS_CODE};
use crate::store::LogResultRow;

/// The longest a batch of results waits for the admin's executor calls in flight to end before
/// it is stored anyway: results are bookkeeping, the calls are a second's fires (see
/// [`CallGauge`]).
pub const YIELD_TO_CALLS_MAX: Duration = Duration::from_millis(200);

/// Results reported by an executor (one `/api/callback` body), with what its token allows.
#[derive(Message, Debug)]
#[rtype(result = "Result<CallbackOutcome, String>")]
pub struct ReportResults {
    /// The results, and the items that are not results.
    pub items: Vec<CallbackItem>,
    /// The runs the caller may report on.
    pub scope: ResultScope,
}

/// Whose runs a caller may report results for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ResultScope {
    /// The admin itself: kills and lost-result marks.
    #[default]
    Admin,
    /// An executor, by the token it sent.
    Executor {
        /// It sent the admin's global token: runs of groups without a token of their own.
        global: bool,
        /// The groups that have their own token (only that token reports their runs).
        own_token: HashSet<i32>,
        /// The groups whose own token it sent.
        granted: HashSet<i32>,
    },
}

impl ResultScope {
    /// Whether a result for a run of `group` may be stored.
    pub fn allows(&self, group: i32) -> bool {
        match self {
            ResultScope::Admin => true,
            ResultScope::Executor {
                global,
                own_token,
                granted,
            } => {
                if own_token.contains(&group) {
                    granted.contains(&group)
                } else {
                    *global
                }
            }
        }
    }
}

/// What a [`ReportResults`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackOutcome {
    /// Results stored.
    pub stored: usize,
    /// Duplicates or late results, ignored.
    pub ignored: usize,
    /// Log ids nobody knows, ignored.
    pub unknown: usize,
    /// Results not stored as sent, each with why: runs of a group the caller's token does not
    /// cover (left untouched), and messages the database cannot hold (the run is closed as
    /// failed with the reason, so a re-sent batch is a duplicate and is not re-sent forever).
    pub refused: Vec<String>,
}

/// Completes logs; supervised.
///
/// One write of results at a time: the batches that arrive while it runs are stored together by
/// the next one. Executors post their batches concurrently, and on a server database many small
/// concurrent result transactions cost far more than a few large ones; they also hold rows that
/// the admins' outcome writes need.
pub struct ResultIntake {
    env: TriggerEnv,
    dispatcher: Addr<Dispatcher>,
    calls: Arc<CallGauge>,
    yield_max: Duration,
    life: ActorLife,
    /// Batches received while a write was in flight, for the next write.
    queued: Vec<QueuedBatch>,
    /// Whether a write is in flight.
    writing: bool,
}

/// One [`ReportResults`] waiting for its write, with where its answer goes.
struct QueuedBatch {
    batch: ReportResults,
    reply: oneshot::Sender<Result<CallbackOutcome, String>>,
}

impl ResultIntake {
    /// A result intake writing through `env.store` and triggering children on `dispatcher`;
    /// it stores results once the calls counted by `calls` are done, or after `yield_max`.
    pub fn new(
        env: TriggerEnv,
        dispatcher: Addr<Dispatcher>,
        calls: Arc<CallGauge>,
        yield_max: Duration,
    ) -> Self {
        ResultIntake {
            env,
            dispatcher,
            calls,
            yield_max,
            life: ActorLife::detached("result-intake"),
            queued: Vec::new(),
            writing: false,
        }
    }

    /// Stores every queued batch in one write, then the batches queued meanwhile, and so on.
    fn write_queued(&mut self, ctx: &mut Context<Self>) {
        if self.writing || self.queued.is_empty() {
            return;
        }
        self.writing = true;
        let queued = std::mem::take(&mut self.queued);
        let (env, dispatcher) = (self.env.clone(), self.dispatcher.clone());
        let (calls, yield_max) = (self.calls.clone(), self.yield_max);
        let write = async move {
            let (batches, replies): (Vec<_>, Vec<_>) =
                queued.into_iter().map(|q| (q.batch, q.reply)).unzip();
            let received: Vec<usize> = batches.iter().map(|b| b.items.len()).collect();
            let yield_to = YieldTo {
                calls,
                max: yield_max,
            };
            let done = complete_batches(&env, &dispatcher, batches, Some(yield_to)).await;
            env.metrics.callback_write();
            for (i, reply) in replies.into_iter().enumerate() {
                let answer = match &done {
                    Ok(outcomes) => Ok(outcomes[i].clone()),
                    // a batch the database did not take is re-sent by its executor
                    Err(e) => Err(e.clone()),
                };
                if let Ok(outcome) = &answer {
                    env.metrics.callbacks(CallbackCounts {
                        received: received[i],
                        duplicate: outcome.ignored,
                        unknown: outcome.unknown,
                        refused: outcome.refused.len(),
                    });
                }
                let _ = reply.send(answer);
            }
        };
        ctx.spawn(write.into_actor(self).map(|(), act, ctx| {
            act.writing = false;
            act.write_queued(ctx);
        }));
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        ResultIntake { life, ..self }
    }
}

impl Actor for ResultIntake {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(16_384);
        log::info!("result intake started");
        self.life.started();
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

answers_probes!(ResultIntake);

impl Supervised for ResultIntake {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("result intake restarting");
        // the write in flight went with the old context; its batches' posters were answered
        // with an error (their senders dropped) and re-send them, as do the queued ones'
        self.writing = false;
        self.queued.clear();
    }
}

impl Handler<ReportResults> for ResultIntake {
    type Result = ResponseFuture<Result<CallbackOutcome, String>>;

    fn handle(&mut self, batch: ReportResults, ctx: &mut Self::Context) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        self.queued.push(QueuedBatch { batch, reply });
        self.write_queued(ctx);
        Box::pin(async move {
            answer
                .await
                .unwrap_or_else(|_| Err("the result intake stopped before storing".into()))
        })
    }
}

/// Records one result: the same path serves callbacks, kills and lost-result marking.
pub async fn complete_one(
    env: &TriggerEnv,
    dispatcher: &Addr<Dispatcher>,
    item: HandleCallbackParam,
    outcome: &mut CallbackOutcome,
) -> Result<(), String> {
    let one = complete_batch(env, dispatcher, vec![item], &ResultScope::Admin).await?;
    outcome.stored += one.stored;
    outcome.ignored += one.ignored;
    outcome.unknown += one.unknown;
    outcome.refused.extend(one.refused);
    Ok(())
}

/// Records a batch of results, then triggers children and FIX_DELAY follow-ups of what was stored.
pub async fn complete_batch(
    env: &TriggerEnv,
    dispatcher: &Addr<Dispatcher>,
    items: Vec<HandleCallbackParam>,
    scope: &ResultScope,
) -> Result<CallbackOutcome, String> {
    let items = items.into_iter().map(CallbackItem::Result).collect();
    let scope = scope.clone();
    let mut outcomes =
        complete_batches(env, dispatcher, vec![ReportResults { items, scope }], None).await?;
    Ok(outcomes.pop().unwrap_or_default())
}

/// The executor calls in flight a write of plain results waits for, at most `max`.
struct YieldTo {
    calls: Arc<CallGauge>,
    max: Duration,
}

/// A result about to be written, with what follows it.
struct Pending {
    /// The batch it came in.
    batch: usize,
    log: ResultLog,
    code: i32,
    /// The executor's message, before the note of the children.
    msg: Option<String>,
    /// The children its success triggers.
    children: Vec<i32>,
    /// Not the executor's result: the admin closes the run as failed (counted as refused).
    refused: bool,
}

/// Records batches of results together (one read of the logs with their jobs, then one update
/// per result code and message), then triggers children and FIX_DELAY follow-ups of what was
/// stored; answers what each batch changed, in order. Of two results for one log, the first
/// given is stored.
async fn complete_batches(
    env: &TriggerEnv,
    dispatcher: &Addr<Dispatcher>,
    batches: Vec<ReportResults>,
    yield_to: Option<YieldTo>,
) -> Result<Vec<CallbackOutcome>, String> {
    let mut outcomes = vec![CallbackOutcome::default(); batches.len()];
    let ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| b.items.iter().filter_map(CallbackItem::log_id))
        .collect();
    let logs: HashMap<i64, ResultLog> = env
        .store
        .run(move |s| async move { s.get_result_logs(&ids).await })
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|l| (l.log_id, l))
        .collect();
    // a workflow node's result is what its run waits for to fire the next node: it does not wait
    if let Some(y) = yield_to {
        if !logs.values().any(|l| l.wf_run_id > 0) {
            y.calls.quiet(y.max).await;
        }
    }

    let mut pending = Vec::new();
    let items = batches.into_iter().enumerate().flat_map(|(i, b)| {
        let scope = Arc::new(b.scope);
        b.items
            .into_iter()
            .map(move |item| (i, scope.clone(), item))
    });
    for (batch, scope, item) in items {
        let outcome = &mut outcomes[batch];
        let (log_id, result) = match item {
            CallbackItem::Result(r) => (r.log_id, Ok(r)),
            CallbackItem::Malformed { log_id: None, why } => {
                log::warn!("callback item refused: {why}");
                outcome.refused.push(why);
                continue;
            }
            CallbackItem::Malformed {
                log_id: Some(id),
                why,
            } => (id, Err(why)),
        };
        let Some(log) = logs.get(&log_id) else {
            log::warn!("callback for unknown log {log_id} ignored");
            outcome.unknown += 1;
            continue;
        };
        if !scope.allows(log.job_group) {
            log::warn!(
                "callback for log {log_id} refused: its run belongs to group {}, whose token the caller did not send",
                log.job_group
            );
            outcome.refused.push(format!(
                "logId {log_id}: the run belongs to another executor group; send that group's token"
            ));
            continue;
        }
        if log.handle_code > 0 {
            log::debug!("repeated callback for log {log_id} ignored");
            outcome.ignored += 1;
            continue;
        }
        let result = match result {
            Ok(r) => r,
            Err(why) => {
                log::warn!("callback for log {log_id} refused: {why}; the run is closed as failed");
                outcome.refused.push(format!("logId {log_id}: {why}"));
                pending.push(Pending {
                    batch,
                    log: log.clone(),
                    code: FAIL_CODE,
                    msg: Some(format!("result refused by the admin: {why}")),
                    children: Vec::new(),
                    refused: true,
                });
                continue;
            }
        };
        // a workflow node's followers are its workflow's edges, not the job's children
        let children: Vec<i32> = match (&log.job, result.handle_code == SUCCESS_CODE) {
            (Some(job), true) if log.wf_run_id == 0 => job
                .child_job_ids
                .iter()
                .copied()
                .filter(|c| *c > 0 && *c != log.job_id)
                .collect(),
            _ => Vec::new(),
        };
        pending.push(Pending {
            batch,
            log: log.clone(),
            code: result.handle_code,
            msg: result.handle_msg,
            children,
            refused: false,
        });
    }

    let refusals = child_refusals(env, &pending).await?;
    let rows: Vec<LogResultRow> = pending
        .iter_mut()
        .map(|p| {
            let skipped: Vec<(i32, String)> = p
                .children
                .iter()
                .filter_map(|c| {
                    refusals
                        .get(&(p.log.job_id, *c))
                        .map(|why| (*c, why.clone()))
                })
                .collect();
            p.children
                .retain(|c| !refusals.contains_key(&(p.log.job_id, *c)));
            for (child, why) in &skipped {
                log::warn!(
                    "job {} succeeded (log {}): child job {child} not triggered: {why}",
                    p.log.job_id,
                    p.log.log_id
                );
            }
            let msg = handle_message(p.msg.as_deref(), &p.children, &skipped);
            LogResultRow {
                log_id: p.log.log_id,
                handle_code: p.code,
                handle_msg: (!msg.is_empty()).then_some(msg),
            }
        })
        .collect();

    // a node's output longer than job_log keeps goes first to its own table, so the run reads it
    // whole once the result is stored
    let outputs: Vec<(i64, String)> = pending
        .iter()
        .filter(|p| p.log.wf_run_id > 0 && p.code == SUCCESS_CODE)
        .filter_map(|p| p.msg.as_ref().map(|m| (p.log.log_id, m)))
        .filter(|(_, m)| m.chars().count() > MESSAGE_MAX_CHARS)
        .map(|(id, m)| (id, storable_text(m, usize::MAX).into_owned()))
        .collect();
    if !outputs.is_empty() {
        env.store
            .run(move |s| async move { s.save_outputs(&outputs).await })
            .await
            .map_err(|e| e.to_string())?;
    }
    let now = now_ms();
    let stored = write_results(env, rows, now).await?;
    let runs: Vec<i64> = pending
        .iter()
        .zip(&stored)
        .filter(|(p, stored)| **stored && p.log.wf_run_id > 0)
        .map(|(p, _)| p.log.wf_run_id)
        .collect();
    if !runs.is_empty() {
        env.faults.reached("result-stored");
    }
    env.workflows.advance(runs);
    for (p, stored) in pending.into_iter().zip(stored) {
        let outcome = &mut outcomes[p.batch];
        if !stored {
            // a duplicate in the same batch, or another admin stored it meanwhile
            outcome.ignored += 1;
            continue;
        }
        // a refused result closed its run; it is counted among the refused, not the stored
        if !p.refused {
            outcome.stored += 1;
        }
        let (log, code) = (&p.log, p.code);
        if code == SUCCESS_CODE {
            log::debug!("job {} log {} succeeded", log.job_id, log.log_id);
        } else {
            log::info!(
                "job {} log {} failed with code {code}",
                log.job_id,
                log.log_id
            );
        }
        for child in p.children {
            log::info!("job {} succeeded: triggering child job {child}", log.job_id);
            dispatcher.do_send(Trigger::new(child, TriggerType::Parent, 0));
        }
        if let Some(job) = &log.job {
            let scheduled = matches!(log.trigger_type, TriggerType::Cron | TriggerType::Misfire);
            if scheduled && job.schedule.schedule_type == ScheduleType::FixDelay {
                resume_fix_delay(env, &job.schedule, now).await;
            }
        }
    }
    Ok(outcomes)
}

/// Why each (parent job, child) of `pending` may not fire, keyed by both ids: a child in another
/// group than its parent fires only while the parent's owner may use that group (an owner that
/// was deleted may use none). Parents without a recorded owner fire their children as before.
/// One read of the children and one of the owners for the whole batch, and none when no
/// parent has both an owner and children.
async fn child_refusals(
    env: &TriggerEnv,
    pending: &[Pending],
) -> Result<HashMap<(i32, i32), String>, String> {
    let owned: Vec<(&JobFollowUps, i32, &[i32])> = pending
        .iter()
        .filter_map(|p| {
            let job = p.log.job.as_ref()?;
            (job.owner_id > 0 && !p.children.is_empty()).then_some((
                job,
                p.log.job_id,
                p.children.as_slice(),
            ))
        })
        .collect();
    let mut refusals = HashMap::new();
    if owned.is_empty() {
        return Ok(refusals);
    }
    let child_ids: Vec<i32> = owned
        .iter()
        .flat_map(|(_, _, c)| c.iter().copied())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let owner_ids: Vec<i32> = owned
        .iter()
        .map(|(j, _, _)| j.owner_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let (child_groups, owners) = env
        .store
        .run(move |s| async move {
            let children = s.get_jobs(&child_ids).await?;
            let mut owners = HashMap::new();
            for id in owner_ids {
                if let Some(user) = s.get_user(id).await? {
                    owners.insert(id, user);
                }
            }
            let groups: HashMap<i32, i32> = children.iter().map(|j| (j.id, j.job_group)).collect();
            Ok((groups, owners))
        })
        .await
        .map_err(|e| e.to_string())?;
    for (job, parent, children) in owned {
        let owner = owners.get(&job.owner_id);
        for &child in children {
            // a child that no longer exists is skipped by the dispatcher, as before
            let Some(&group) = child_groups.get(&child) else {
                continue;
            };
            if group == job.job_group {
                continue;
            }
            let why = match owner {
                None => format!(
                    "the job's owner (user {}) no longer exists, so it may not trigger jobs of other groups",
                    job.owner_id
                ),
                Some(u) if !u.may_use_group(group) => format!(
                    "the job's owner '{}' may not use the child's executor group",
                    u.username
                ),
                Some(_) => continue,
            };
            refusals.insert((parent, child), why);
        }
    }
    Ok(refusals)
}

/// Stores `rows`; a write the database refuses (not an outage) is done again one row at a time,
/// and a row it still refuses is closed as failed with the reason, so a result is never lost
/// with the others of its batch, nor re-sent forever.
async fn write_results(
    env: &TriggerEnv,
    rows: Vec<LogResultRow>,
    now: i64,
) -> Result<Vec<bool>, String> {
    env.store
        .run(move |s| async move {
            let err = match s.complete_logs(&rows, now).await {
                Ok(stored) => return Ok(stored),
                Err(e) if e.is_outage() => return Err(e),
                Err(e) => e,
            };
            log::warn!(
                "cannot store {} result(s) together ({err}): storing them one by one",
                rows.len()
            );
            let mut stored = Vec::with_capacity(rows.len());
            for row in &rows {
                let done = match s.complete_logs(std::slice::from_ref(row), now).await {
                    Ok(done) => done,
                    Err(e) if e.is_outage() => return Err(e),
                    Err(e) => {
                        log::error!(
                            "log {}: the result (code {}) cannot be stored ({e}): the run is closed as failed",
                            row.log_id,
                            row.handle_code
                        );
                        let closed = LogResultRow {
                            log_id: row.log_id,
                            handle_code: FAIL_CODE,
                            handle_msg: Some(format!(
                                "the executor's result (code {}) could not be stored: {e}",
                                row.handle_code
                            )),
                        };
                        s.complete_logs(std::slice::from_ref(&closed), now).await?
                    }
                };
                stored.push(done.first().copied().unwrap_or(false));
            }
            Ok(stored)
        })
        .await
        .map_err(|e| e.to_string())
}

/// The stored result message: the executor's, plus XXL-JOB's note of the children triggered
/// and of those not triggered, with why.
fn handle_message(msg: Option<&str>, children: &[i32], skipped: &[(i32, String)]) -> String {
    let mut out = msg.unwrap_or_default().to_string();
    let total = children.len() + skipped.len();
    if total > 0 {
        out.push_str("<br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>Trigger child job<<<<<<<<<<< </span><br>");
        for (i, child) in children.iter().enumerate() {
            out.push_str(&format!(
                "{}/{total} [Job ID={child}], Trigger success<br>",
                i + 1
            ));
        }
        for (i, (child, why)) in skipped.iter().enumerate() {
            out.push_str(&format!(
                "{}/{total} [Job ID={child}], Trigger skipped: {why}<br>",
                children.len() + i + 1
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::Store;

    /// An in-memory store with `logs` run rows, and a result intake on it whose writes wait
    /// for the calls counted by the returned gauge (with no limit a test run reaches).
    async fn intake(
        logs: usize,
    ) -> (
        Store,
        Vec<i64>,
        Addr<ResultIntake>,
        Arc<CallGauge>,
        TriggerEnv,
    ) {
        use crate::actors::dispatch::dispatch_settings;
        use crate::model::NewRunRow;

        let store = Store::connect("sqlite::memory:", &Default::default())
            .await
            .expect("in-memory SQLite");
        store.migrate().await.expect("migrations");
        let mut ids = Vec::new();
        for _ in 0..logs {
            ids.push(
                store
                    .insert_log(&NewRunRow::sample())
                    .await
                    .expect("log row"),
            );
        }
        let env = TriggerEnv {
            metrics: Default::default(),
            store: crate::store::ActorStore::new(store.clone()),
            access_token: "test-token".into(),
            default_tz: chrono_tz::UTC,
            admin_address: String::new(),
            lease: Default::default(),
            workflows: Default::default(),
            faults: Default::default(),
            suspects: Default::default(),
            node_id: Default::default(),
            routing: Default::default(),
        };
        let calls = CallGauge::new();
        let dispatcher =
            Dispatcher::new(dispatch_settings(1, 1), env.clone(), calls.clone()).start();
        let actor = ResultIntake::new(
            env.clone(),
            dispatcher,
            calls.clone(),
            Duration::from_secs(3600),
        )
        .start();
        (store, ids, actor, calls, env)
    }

    async fn handle_code(store: &Store, log_id: i64) -> i32 {
        let log = store.get_log(log_id).await.expect("read").expect("row");
        log.handle_code
    }

    /// A result batch of `ids`, each with `code`.
    fn results(ids: &[i64], code: i32) -> ReportResults {
        ReportResults {
            items: ids
                .iter()
                .map(|id| CallbackItem::Result(HandleCallbackParam::new(*id, 1, code, None)))
                .collect(),
            scope: ResultScope::Admin,
        }
    }

    #[actix_rt::test]
    async fn results_wait_for_the_calls_in_flight() {
        let (store, ids, actor, calls, _) = intake(1).await;
        let call = calls.call();
        let reply = actix_rt::spawn(actor.send(results(&ids, SUCCESS_CODE)));
        actix_rt::time::sleep(Duration::from_millis(100)).await;
        assert!(!reply.is_finished(), "stored while a call was in flight");
        assert_eq!(handle_code(&store, ids[0]).await, 0);

        drop(call);
        let outcome = reply
            .await
            .expect("task")
            .expect("mailbox")
            .expect("stored");
        assert_eq!(outcome.stored, 1);
        assert_eq!(handle_code(&store, ids[0]).await, SUCCESS_CODE);
    }

    #[actix_rt::test]
    async fn batches_received_during_a_write_are_stored_together_and_answered_each() {
        let (store, ids, actor, calls, env) = intake(4).await;
        let writes = || {
            let metrics = env.metrics.render();
            let line = metrics
                .lines()
                .find(|l| l.starts_with("jobwheel_callback_writes_total "))
                .map(str::to_string);
            line.expect("the writes counter")
                .split(' ')
                .nth(1)
                .map(str::to_string)
        };
        // the first batch's write waits for the call; the next three queue behind it
        let call = calls.call();
        let first = actix_rt::spawn(actor.send(results(&ids[..1], SUCCESS_CODE)));
        actix_rt::time::sleep(Duration::from_millis(50)).await;
        let second = actix_rt::spawn(actor.send(results(&ids[1..3], SUCCESS_CODE)));
        // a result for a run the second batch closes, one nobody knows, and a failure
        let mut third = results(&[ids[1], 999_999], SUCCESS_CODE);
        third
            .items
            .push(CallbackItem::Result(HandleCallbackParam::new(
                ids[3],
                1,
                FAIL_CODE,
                Some("boom".into()),
            )));
        let third = actix_rt::spawn(actor.send(third));
        actix_rt::time::sleep(Duration::from_millis(50)).await;
        assert!(!first.is_finished() && !second.is_finished() && !third.is_finished());

        drop(call);
        let answer = |reply: actix_rt::task::JoinHandle<_>| async move {
            let answer: Result<Result<CallbackOutcome, String>, MailboxError> =
                reply.await.expect("task");
            answer.expect("mailbox").expect("stored")
        };
        let first = answer(first).await;
        let (second, third) = (answer(second).await, answer(third).await);
        assert_eq!((first.stored, first.ignored, first.unknown), (1, 0, 0));
        assert_eq!((second.stored, second.ignored, second.unknown), (2, 0, 0));
        assert_eq!((third.stored, third.ignored, third.unknown), (1, 1, 1));
        assert_eq!(
            writes().as_deref(),
            Some("2"),
            "the queued batches in one write"
        );
        for id in &ids[..3] {
            assert_eq!(handle_code(&store, *id).await, SUCCESS_CODE);
        }
        assert_eq!(handle_code(&store, ids[3]).await, FAIL_CODE);
    }

    #[test]
    fn child_triggers_are_noted_in_the_message() {
        assert_eq!(handle_message(Some("done"), &[], &[]), "done");
        let msg = handle_message(None, &[4, 9], &[(12, "not allowed".into())]);
        assert!(msg.contains("Trigger child job"));
        assert!(msg.contains("1/3 [Job ID=4], Trigger success"));
        assert!(msg.contains("2/3 [Job ID=9], Trigger success"));
        assert!(msg.contains("3/3 [Job ID=12], Trigger skipped: not allowed"));
    }
}
