//! ResultIntake: run results from executors into `job_log`, then child jobs and FIX_DELAY
//! follow-ups (XXL-JOB `JobCompleteHelper` + `XxlJobCompleter`).
//!
//! A result is stored once: the update only applies to a log without a result, so a duplicate
//! or late callback changes nothing, and an unknown log id is answered and ignored.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::call_gauge::CallGauge;
use super::dispatch::{Dispatcher, Trigger};
use super::supervision::{answers_probes, ActorLife};
use super::trigger::{resume_fix_delay, TriggerEnv};
use crate::clock::now_ms;
use std::collections::{HashMap, HashSet};

use crate::metrics::CallbackCounts;
use crate::model::{unstorable, ResultLog, ScheduleType, TriggerType};
use crate::protocol::{HandleCallbackParam, FAIL_CODE, SUCCESS_CODE};
use crate::store::LogResultRow;

/// XXL-JOB truncates `handle_msg` to this many characters.
pub const HANDLE_MSG_MAX: usize = 15_000;
/// The longest a batch of results waits for the admin's executor calls in flight to end before
/// it is stored anyway: results are bookkeeping, the calls are a second's fires (see
/// [`CallGauge`]).
pub const YIELD_TO_CALLS_MAX: Duration = Duration::from_millis(200);

/// Results reported by an executor (one `/api/callback` body), with what its token allows.
#[derive(Message, Debug)]
#[rtype(result = "Result<CallbackOutcome, String>")]
pub struct ReportResults {
    /// The results.
    pub items: Vec<HandleCallbackParam>,
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
pub struct ResultIntake {
    env: TriggerEnv,
    dispatcher: Addr<Dispatcher>,
    calls: Arc<CallGauge>,
    yield_max: Duration,
    life: ActorLife,
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
        }
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
    }
}

impl Handler<ReportResults> for ResultIntake {
    type Result = ResponseFuture<Result<CallbackOutcome, String>>;

    fn handle(&mut self, msg: ReportResults, _ctx: &mut Self::Context) -> Self::Result {
        let env = self.env.clone();
        let dispatcher = self.dispatcher.clone();
        let (calls, yield_max) = (self.calls.clone(), self.yield_max);
        Box::pin(async move {
            calls.quiet(yield_max).await;
            let received = msg.items.len();
            let done = complete_batch(&env, &dispatcher, msg.items, &msg.scope).await;
            // a batch the database did not take is re-sent by its executor: received again then
            if let Ok(outcome) = &done {
                env.metrics.callbacks(CallbackCounts {
                    received,
                    duplicate: outcome.ignored,
                    unknown: outcome.unknown,
                    refused: outcome.refused.len(),
                });
            }
            done
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

/// Records a batch of results (one read of the logs with their jobs, then one update per result
/// code and message), then triggers children and FIX_DELAY follow-ups of what was stored.
pub async fn complete_batch(
    env: &TriggerEnv,
    dispatcher: &Addr<Dispatcher>,
    items: Vec<HandleCallbackParam>,
    scope: &ResultScope,
) -> Result<CallbackOutcome, String> {
    let mut outcome = CallbackOutcome::default();
    let ids: Vec<i64> = items.iter().map(|i| i.log_id).collect();
    let logs: HashMap<i64, ResultLog> = env
        .store
        .run(move |s| async move { s.get_result_logs(&ids).await })
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|l| (l.log_id, l))
        .collect();

    let mut rows = Vec::with_capacity(items.len());
    let mut pending = Vec::with_capacity(items.len());
    for item in items {
        let Some(log) = logs.get(&item.log_id) else {
            log::warn!("callback for unknown log {} ignored", item.log_id);
            outcome.unknown += 1;
            continue;
        };
        if !scope.allows(log.job_group) {
            log::warn!(
                "callback for log {} refused: its run belongs to group {}, whose token the caller did not send",
                item.log_id,
                log.job_group
            );
            outcome.refused.push(format!(
                "logId {}: the run belongs to another executor group; send that group's token",
                item.log_id
            ));
            continue;
        }
        if log.handle_code > 0 {
            log::debug!("repeated callback for log {} ignored", item.log_id);
            outcome.ignored += 1;
            continue;
        }
        if let Some(why) = item.handle_msg.as_deref().and_then(unstorable) {
            log::warn!(
                "callback for log {} refused: handleMsg {why}; the run is closed as failed",
                item.log_id
            );
            outcome
                .refused
                .push(format!("logId {}: handleMsg {why}", item.log_id));
            rows.push(LogResultRow {
                log_id: item.log_id,
                handle_code: FAIL_CODE,
                handle_msg: Some(format!(
                    "result refused by the admin: the executor's handleMsg {why} (it reported code {})",
                    item.handle_code
                )),
            });
            pending.push((log, FAIL_CODE, Vec::new(), true));
            continue;
        }
        let success = item.handle_code == SUCCESS_CODE;
        let children: Vec<i32> = match (&log.job, success) {
            (Some(job), true) => job
                .child_job_ids
                .iter()
                .copied()
                .filter(|c| *c > 0 && *c != log.job_id)
                .collect(),
            _ => Vec::new(),
        };
        let msg = truncate(
            &handle_message(item.handle_msg.as_deref(), &children),
            HANDLE_MSG_MAX,
        );
        rows.push(LogResultRow {
            log_id: item.log_id,
            handle_code: item.handle_code,
            handle_msg: (!msg.is_empty()).then_some(msg),
        });
        pending.push((log, item.handle_code, children, false));
    }

    let now = now_ms();
    let stored = env
        .store
        .run(move |s| async move { s.complete_logs(&rows, now).await })
        .await
        .map_err(|e| e.to_string())?;
    for ((log, code, children, refused), stored) in pending.into_iter().zip(stored) {
        if !stored {
            // a duplicate in the same batch, or another admin stored it meanwhile
            outcome.ignored += 1;
            continue;
        }
        // a refused result closed its run; it is counted among the refused, not the stored
        if !refused {
            outcome.stored += 1;
        }
        if code == SUCCESS_CODE {
            log::debug!("job {} log {} succeeded", log.job_id, log.log_id);
        } else {
            log::info!(
                "job {} log {} failed with code {code}",
                log.job_id,
                log.log_id
            );
        }
        for child in children {
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
    Ok(outcome)
}

/// The stored result message: the executor's, plus XXL-JOB's note of the children triggered.
fn handle_message(msg: Option<&str>, children: &[i32]) -> String {
    let mut out = msg.unwrap_or_default().to_string();
    if !children.is_empty() {
        out.push_str("<br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>Trigger child job<<<<<<<<<<< </span><br>");
        for (i, child) in children.iter().enumerate() {
            out.push_str(&format!(
                "{}/{} [Job ID={child}], Trigger success<br>",
                i + 1,
                children.len()
            ));
        }
    }
    out
}

/// The first `max` characters (not bytes) of `s`.
fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn results_wait_for_the_calls_in_flight() {
        use crate::actors::dispatch::dispatch_settings;
        use crate::model::NewLog;
        use crate::store::Store;

        let store = Store::connect("sqlite::memory:", &Default::default())
            .await
            .expect("in-memory SQLite");
        store.migrate().await.expect("migrations");
        let log_id = store.insert_log(&NewLog::sample()).await.expect("log row");
        let env = TriggerEnv {
            metrics: Default::default(),
            store: crate::store::ActorStore::new(store.clone()),
            access_token: "test-token".into(),
            default_tz: chrono_tz::UTC,
            admin_address: String::new(),
            lease: Default::default(),
        };
        let calls = CallGauge::new();
        let dispatcher =
            Dispatcher::new(dispatch_settings(1, 1), env.clone(), calls.clone()).start();
        // a limit no test run reaches: only the end of the call lets the result through
        let actor =
            ResultIntake::new(env, dispatcher, calls.clone(), Duration::from_secs(3600)).start();
        let handle_code = |store: Store| async move {
            store
                .get_log(log_id)
                .await
                .expect("read")
                .expect("row")
                .handle_code
        };

        let call = calls.call();
        let result = HandleCallbackParam::new(log_id, 1, SUCCESS_CODE, None);
        let reply = actix_rt::spawn(actor.send(ReportResults {
            items: vec![result],
            scope: ResultScope::Admin,
        }));
        actix_rt::time::sleep(Duration::from_millis(100)).await;
        assert!(!reply.is_finished(), "stored while a call was in flight");
        assert_eq!(handle_code(store.clone()).await, 0);

        drop(call);
        let outcome = reply
            .await
            .expect("task")
            .expect("mailbox")
            .expect("stored");
        assert_eq!(outcome.stored, 1);
        assert_eq!(handle_code(store).await, SUCCESS_CODE);
    }

    #[test]
    fn child_triggers_are_noted_in_the_message() {
        assert_eq!(handle_message(Some("done"), &[]), "done");
        let msg = handle_message(None, &[4, 9]);
        assert!(msg.contains("Trigger child job"));
        assert!(msg.contains("1/2 [Job ID=4]") && msg.contains("2/2 [Job ID=9]"));
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("é中x", 2), "é中");
        assert_eq!(truncate("abc", 5), "abc");
    }
}
