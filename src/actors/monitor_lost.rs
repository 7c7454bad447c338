//! LostResultMonitor: a run accepted by an executor that has since gone, with no result after
//! `--lost-result-timeout-secs` (XXL-JOB's 10 minutes), is marked failed (XXL-JOB
//! `JobCompleteHelper`, every 60 s).
//!
//! "Gone" is checked, not assumed from the registry as XXL-JOB does. A missing registration is
//! no proof: a run longer than 10 minutes on a manually listed executor (never registered) would
//! be marked lost while it still runs. Nor is a registration proof of life: a SIGKILLed executor
//! stays registered until its beat is 90 s old, and one restarted at once registers again
//! without the runs it lost, which would then stay "running" forever (known XXL-JOB problems).
//! So every run past the timeout is a candidate and its executor is asked: if it answers `beat`
//! and its `idleBeat` says the job is running or queued, the run is left alone; if it does not
//! answer, or says the job is idle there, the result is lost.
//!
//! Runs whose trigger's outcome was never recorded (trigger code 0 past the timeout: the admin
//! that fired them could not write it) are marked the same way, so no run stays open forever.
//!
//! The mark goes through the callback path ([`complete_one`]), so it is stored only if no real
//! result arrived meanwhile, a FIX_DELAY job is scheduled again, and children are not
//! triggered. The fail monitor then retries and alarms it like any failure.

use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use super::dispatch::Dispatcher;
use super::monitor::{MonitorSettings, Pace, PassTurns};
use super::result_intake::{complete_one, CallbackOutcome};
use super::supervision::{answers_probes, ActorLife};
use super::trigger::TriggerEnv;
use crate::clock::now_ms;
use crate::executor_calls::{Credentials, ExecutorCalls};
use crate::model::{executor_token, RunRow};
use crate::protocol::{AdminProtocol, HandleCallbackParam, FAIL_CODE, SUCCESS_CODE};
use crate::store::MonitorPass;

/// XXL-JOB's `joblog_lost_fail` message.
pub const LOST_MSG: &str = "Job result lost, marked as failure";
/// The mark of a run whose trigger's outcome was never recorded, so nothing says whether an
/// executor took it.
pub const OUTCOME_LOST_MSG: &str =
    "Job result lost, marked as failure: the trigger's outcome was never recorded";
/// Logs read per query.
pub const LOST_BATCH: i64 = 1_000;
/// Most queries per pass; the rest waits for the next pass.
const MAX_ROUNDS: usize = 10;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LostPassReport {
    /// Runs marked failed.
    pub marked: usize,
    /// Candidates whose executor says the job is still running there.
    pub still_running: usize,
}

/// What the executors answered during one pass, so that each is asked once per address (beat)
/// and once per job (idleBeat) however many runs it holds.
#[derive(Default)]
struct Answers {
    alive: HashMap<String, bool>,
    busy: HashMap<(String, i32), bool>,
}

/// Whether the run's executor answers and says the job is running or queued there.
async fn still_running(
    env: &TriggerEnv,
    client: &ExecutorCalls,
    answers: &mut Answers,
    log: &RunRow,
) -> Result<bool, String> {
    let Some(address) = log
        .executor_address
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
    else {
        return Ok(false);
    };
    let group_id = log.job_group;
    let group = env
        .store
        .run(move |s| async move { s.get_group(group_id).await })
        .await
        .map_err(|e| e.to_string())?;
    let creds = Credentials {
        access_token: Some(executor_token(group.as_ref(), &env.access_token)),
        app_name: group.as_ref().map(|g| g.app_name.clone()),
        // an unregistered executor's generation is unknown; beat and idleBeat are the same in both
        protocol: AdminProtocol::V2,
    };
    let alive = match answers.alive.get(address) {
        Some(alive) => *alive,
        None => {
            let alive = client.beat(address, &creds).await.code == SUCCESS_CODE;
            answers.alive.insert(address.to_string(), alive);
            alive
        }
    };
    if !alive {
        return Ok(false);
    }
    let key = (address.to_string(), log.job_id);
    if let Some(busy) = answers.busy.get(&key) {
        return Ok(*busy);
    }
    // 200 means idle: the executor is up but not running this job, so its result is lost
    let busy = client.idle_beat(address, &creds, log.job_id).await.code != SUCCESS_CODE;
    answers.busy.insert(key, busy);
    Ok(busy)
}

/// Marks lost results of runs triggered before `now - timeout` whose executor does not confirm
/// that it still runs them.
pub async fn lost_pass(
    env: &TriggerEnv,
    dispatcher: &Addr<Dispatcher>,
    client: &ExecutorCalls,
    timeout: Duration,
    now: i64,
    batch: i64,
) -> Result<LostPassReport, String> {
    let before = now - timeout.as_millis() as i64;
    let mut report = LostPassReport::default();
    let mut answers = Answers::default();
    // paged by id: runs their executors still hold stay candidates and must not hide the rest
    let mut after_id = 0;
    for _ in 0..MAX_ROUNDS {
        let ids = env
            .store
            .run(move |s| async move { s.find_lost_log_ids(before, after_id, batch).await })
            .await
            .map_err(|e| e.to_string())?;
        let full = ids.len() as i64 >= batch;
        after_id = ids.last().copied().unwrap_or(after_id);
        for id in ids {
            let found = env.store.run(move |s| async move { s.get_log(id).await });
            let Some(log) = found.await.map_err(|e| e.to_string())? else {
                continue;
            };
            if still_running(env, client, &mut answers, &log).await? {
                report.still_running += 1;
                log::debug!(
                    "log {id}: no result yet, but executor {} still runs job {}",
                    log.executor_address.as_deref().unwrap_or("-"),
                    log.job_id
                );
                continue;
            }
            let mut outcome = CallbackOutcome::default();
            let message = match log.trigger_code {
                0 => OUTCOME_LOST_MSG,
                _ => LOST_MSG,
            };
            let result = HandleCallbackParam {
                log_id: id,
                log_date_time: log.trigger_time,
                handle_code: FAIL_CODE,
                handle_msg: Some(message.to_string()),
            };
            complete_one(env, dispatcher, result, &mut outcome).await?;
            if outcome.stored > 0 {
                report.marked += 1;
                env.metrics.lost_result();
                log::warn!(
                    "job {} log {id}: no result for {}s and executor {} is gone or idle: marked as failed (result lost)",
                    log.job_id,
                    timeout.as_secs(),
                    log.executor_address.as_deref().unwrap_or("-")
                );
            }
        }
        if !full {
            break;
        }
    }
    Ok(report)
}

/// The lost-result monitor actor; supervised.
pub struct LostResultMonitor {
    env: TriggerEnv,
    dispatcher: Addr<Dispatcher>,
    client: Rc<ExecutorCalls>,
    interval: Duration,
    turns: PassTurns,
    timeout: Duration,
    /// No pass before this: results executors saved while no admin answered come first.
    first_pass_at: Instant,
    pace: Pace,
    life: ActorLife,
}

impl LostResultMonitor {
    /// A monitor with the settings' interval and timeout, passing when its turn; create it on
    /// the arbiter it runs on.
    pub fn new(
        env: TriggerEnv,
        dispatcher: Addr<Dispatcher>,
        settings: &MonitorSettings,
        turns: PassTurns,
    ) -> Self {
        LostResultMonitor {
            env,
            dispatcher,
            client: Rc::new(ExecutorCalls::default()),
            interval: settings.lost_interval,
            turns,
            timeout: settings.lost_result_timeout,
            first_pass_at: Instant::now() + settings.lost_first_pass_after,
            pace: Pace::default(),
            life: ActorLife::detached("lost-monitor"),
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        LostResultMonitor { life, ..self }
    }

    fn pass(&mut self, ctx: &mut Context<Self>) {
        let env = self.env.clone();
        let dispatcher = self.dispatcher.clone();
        let client = self.client.clone();
        let timeout = self.timeout;
        let life = self.life.clone();
        let (turns, interval) = (self.turns.clone(), self.interval);
        life.working();
        ctx.wait(
            async move {
                // its own failures are text (they mix executor and database errors); only a
                // panic of its work stops it
                life.fault_point(&env.store).await?;
                let now = now_ms();
                match turns
                    .take(&env.store, MonitorPass::Lost, interval, now)
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => return Ok(Ok(LostPassReport::default())),
                    Err(e) => return Ok(Err(e.to_string())),
                }
                Ok(lost_pass(&env, &dispatcher, &client, timeout, now, LOST_BATCH).await)
            }
            .into_actor(self)
            .map(|result, act, ctx| {
                let error = match result {
                    Ok(Ok(_)) => None,
                    Err(e) if act.life.stop_on_panic(&e, ctx) => return,
                    Err(e) => Some(e.to_string()),
                    Ok(Err(e)) => Some(e),
                };
                let delay = match error {
                    None => act.pace.worked(act.interval),
                    Some(e) => {
                        let level = act.env.store.failure_level(log::Level::Error);
                        act.pace.failed(act.interval, "lost-result", level, &e)
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
        let first = self.first_pass_at.saturating_duration_since(Instant::now());
        log::info!(
            "lost-result monitor started (every {:?}, results lost after {:?}, first pass in {:?})",
            self.interval,
            self.timeout,
            first
        );
        let wait = self.life.started().max(first);
        ctx.run_later(wait, |act, ctx| act.pass(ctx));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

impl Supervised for LostResultMonitor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // the runs it watches are in the database; the next pass reads them again
        self.pace = Pace::default();
        self.client = Rc::new(ExecutorCalls::default());
    }
}

answers_probes!(LostResultMonitor);
