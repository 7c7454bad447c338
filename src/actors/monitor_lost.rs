//! LostResultMonitor: a run accepted by an executor that has since gone (no registration), with
//! no result after `--lost-result-timeout-secs` (XXL-JOB's 10 minutes), is marked failed
//! (XXL-JOB `JobCompleteHelper`, every 60 s; reference §3.12).
//!
//! The mark goes through the callback path ([`complete_one`]), so it is stored only if no real
//! result arrived meanwhile, a FIX_DELAY job is scheduled again, and children are not
//! triggered. The fail monitor then retries and alarms it like any failure.

use std::time::Duration;

use actix::prelude::*;

use super::callback::{complete_one, CallbackOutcome};
use super::dispatch::Dispatcher;
use super::monitor::{backoff, next_pass, MonitorSettings};
use super::trigger::TriggerEnv;
use crate::clock::now_ms;
use crate::protocol::{HandleCallbackParam, FAIL_CODE};

/// XXL-JOB's `joblog_lost_fail` message.
pub const LOST_MSG: &str = "Job result lost, marked as failure";
/// Logs read per query.
pub const LOST_BATCH: i64 = 1_000;
/// Most queries per pass; the rest waits for the next pass.
const MAX_ROUNDS: usize = 10;

/// Marks lost results of runs triggered before `now - timeout`; returns how many were marked.
pub async fn lost_pass(
    env: &TriggerEnv,
    dispatcher: &Addr<Dispatcher>,
    timeout: Duration,
    now: i64,
    batch: i64,
) -> Result<usize, String> {
    let before = now - timeout.as_millis() as i64;
    let mut marked = 0;
    for _ in 0..MAX_ROUNDS {
        let ids = env
            .store
            .find_lost_log_ids(before, batch)
            .await
            .map_err(|e| e.to_string())?;
        let full = ids.len() as i64 >= batch;
        for id in ids {
            let mut outcome = CallbackOutcome::default();
            let result = HandleCallbackParam {
                log_id: id,
                log_date_time: 0,
                handle_code: FAIL_CODE,
                handle_msg: Some(LOST_MSG.to_string()),
            };
            complete_one(env, dispatcher, result, &mut outcome).await?;
            if outcome.stored > 0 {
                marked += 1;
                log::warn!(
                    "log {id}: no result for {}s and its executor is gone: marked as failed (result lost)",
                    timeout.as_secs()
                );
            }
        }
        if !full {
            break;
        }
    }
    Ok(marked)
}

/// The lost-result monitor actor; supervised.
pub struct LostResultMonitor {
    env: TriggerEnv,
    dispatcher: Addr<Dispatcher>,
    interval: Duration,
    timeout: Duration,
    failures: u32,
}

impl LostResultMonitor {
    /// A monitor with the settings' interval and timeout.
    pub fn new(env: TriggerEnv, dispatcher: Addr<Dispatcher>, settings: &MonitorSettings) -> Self {
        LostResultMonitor {
            env,
            dispatcher,
            interval: settings.lost_interval,
            timeout: settings.lost_result_timeout,
            failures: 0,
        }
    }

    fn pass(&mut self, ctx: &mut Context<Self>) {
        let env = self.env.clone();
        let dispatcher = self.dispatcher.clone();
        let timeout = self.timeout;
        ctx.wait(
            async move { lost_pass(&env, &dispatcher, timeout, now_ms(), LOST_BATCH).await }
                .into_actor(self)
                .map(|result, act, ctx| {
                    let delay = match result {
                        Ok(_) => {
                            act.failures = 0;
                            next_pass(act.interval)
                        }
                        Err(e) => {
                            act.failures += 1;
                            let delay = backoff(act.interval, act.failures);
                            log::error!(
                                "lost-result pass failed ({} in a row), retrying in {delay:?}: {e}",
                                act.failures
                            );
                            delay
                        }
                    };
                    ctx.run_later(delay, |act, ctx| act.pass(ctx));
                }),
        );
    }
}

impl Actor for LostResultMonitor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        log::info!(
            "lost-result monitor started (every {:?}, results lost after {:?})",
            self.interval,
            self.timeout
        );
        self.pass(ctx);
    }
}

impl Supervised for LostResultMonitor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("lost-result monitor restarting");
    }
}
