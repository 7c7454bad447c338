//! CallbackActor: run results from executors into `job_log`, then child jobs and FIX_DELAY
//! follow-ups (XXL-JOB `JobCompleteHelper` + `XxlJobCompleter`).
//!
//! A result is stored once: the update only applies to a log without a result, so a duplicate
//! or late callback changes nothing, and an unknown log id is answered and ignored.

use actix::prelude::*;

use super::dispatch::{Dispatcher, Trigger};
use super::trigger::{resume_fix_delay, TriggerEnv};
use crate::clock::now_ms;
use crate::model::{ScheduleType, TriggerType};
use crate::protocol::{HandleCallbackParam, SUCCESS_CODE};
use crate::store::detach;

/// XXL-JOB truncates `handle_msg` to this many characters.
pub const HANDLE_MSG_MAX: usize = 15_000;

/// Results reported by an executor (one `/api/callback` body).
#[derive(Message, Debug)]
#[rtype(result = "Result<CallbackOutcome, String>")]
pub struct ReportResults(pub Vec<HandleCallbackParam>);

/// What a [`ReportResults`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackOutcome {
    /// Results stored.
    pub stored: usize,
    /// Duplicates or late results, ignored.
    pub ignored: usize,
    /// Log ids nobody knows, ignored.
    pub unknown: usize,
}

/// Completes logs; supervised.
pub struct CallbackActor {
    env: TriggerEnv,
    dispatcher: Addr<Dispatcher>,
}

impl CallbackActor {
    /// A callback actor writing through `env.store` and triggering children on `dispatcher`.
    pub fn new(env: TriggerEnv, dispatcher: Addr<Dispatcher>) -> Self {
        CallbackActor { env, dispatcher }
    }
}

impl Actor for CallbackActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(16_384);
        log::info!("callback actor started");
    }
}

impl Supervised for CallbackActor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("callback actor restarting");
    }
}

impl Handler<ReportResults> for CallbackActor {
    type Result = ResponseFuture<Result<CallbackOutcome, String>>;

    fn handle(&mut self, msg: ReportResults, _ctx: &mut Self::Context) -> Self::Result {
        let env = self.env.clone();
        let dispatcher = self.dispatcher.clone();
        // a tokio task, not the arbiter's local set: see `Store::detached`
        Box::pin(async move {
            detach(async move {
                let mut outcome = CallbackOutcome::default();
                for item in msg.0 {
                    complete_one(&env, &dispatcher, item, &mut outcome).await?;
                }
                Ok(outcome)
            })
            .await
            .and_then(|r| r)
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
    let store = &env.store;
    let Some(log) = store
        .get_log(item.log_id)
        .await
        .map_err(|e| e.to_string())?
    else {
        log::warn!("callback for unknown log {} ignored", item.log_id);
        outcome.unknown += 1;
        return Ok(());
    };
    if log.handle_code > 0 {
        log::debug!("repeated callback for log {} ignored", item.log_id);
        outcome.ignored += 1;
        return Ok(());
    }
    let job = store.get_job(log.job_id).await.map_err(|e| e.to_string())?;
    let success = item.handle_code == SUCCESS_CODE;
    let children: Vec<i32> = match (&job, success) {
        (Some(job), true) => job
            .child_job_ids
            .iter()
            .copied()
            .filter(|c| *c > 0 && *c != job.id)
            .collect(),
        _ => Vec::new(),
    };
    let mut msg = item.handle_msg.clone().unwrap_or_default();
    if !children.is_empty() {
        msg.push_str("<br><br><span style=\"color:#00c0ef;\" > >>>>>>>>>>>Trigger child job<<<<<<<<<<< </span><br>");
        for (i, child) in children.iter().enumerate() {
            msg.push_str(&format!(
                "{}/{} [Job ID={child}], Trigger success<br>",
                i + 1,
                children.len()
            ));
        }
    }
    let msg = truncate(&msg, HANDLE_MSG_MAX);
    let handle_msg = (!msg.is_empty()).then_some(msg.as_str());
    let now = now_ms();
    let stored = store
        .complete_log(item.log_id, item.handle_code, handle_msg, now)
        .await
        .map_err(|e| e.to_string())?;
    if !stored {
        outcome.ignored += 1;
        return Ok(());
    }
    outcome.stored += 1;
    if success {
        log::debug!("job {} log {} succeeded", log.job_id, log.id);
    } else {
        log::info!(
            "job {} log {} failed with code {}",
            log.job_id,
            log.id,
            item.handle_code
        );
    }
    for child in children {
        log::info!("job {} succeeded: triggering child job {child}", log.job_id);
        dispatcher.do_send(Trigger::new(child, TriggerType::Parent, 0));
    }
    if let Some(job) = job {
        let scheduled = matches!(log.trigger_type, TriggerType::Cron | TriggerType::Misfire);
        if scheduled && job.schedule_type == ScheduleType::FixDelay {
            resume_fix_delay(env, &job, now).await;
        }
    }
    Ok(())
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

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("é中x", 2), "é中");
        assert_eq!(truncate("abc", 5), "abc");
    }
}
