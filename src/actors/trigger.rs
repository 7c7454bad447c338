//! Triggers, start to end (XXL-JOB `XxlJobTrigger.trigger` / `processTrigger`), in two steps.
//!
//! [`prepare_batch`] loads the jobs, groups and live executors of a whole batch and inserts its
//! log rows in multi-row statements; the ring does this a second ahead, so at the fire time only
//! [`fire_prepared`] is left: choose the executor, call `run`, and hand the outcome to a batched
//! writer. XXL-JOB does these statements one by one per fire, at the fire time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use actix::Message;
use chrono_tz::Tz;
use tokio::sync::oneshot;

use super::db_retry::until_written;
use super::lease::Lease;
use super::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::executor_calls::{failure, Credentials, ExecutorCalls};
use crate::metrics::AdminMetrics;
use crate::model::{
    address_key, executor_token, AddressType, JobGroup, JobInfo, JobSchedule, NewRunRow,
    Registration, RouteStrategy, ScheduleType, TriggerOutcome, TriggerType, TRIGGER_STATUS_RUNNING,
};
use crate::protocol::{AdminProtocol, TriggerParam, FAIL_CODE, SUCCESS_CODE};
use crate::routing::{
    probe_in_order, shard_address, ProbeKind, RouteDecision, Router, ADDRESS_EMPTY_MSG,
    ROUTE_FAIL_MSG, UNREACHABLE_FOR_MS,
};
use crate::store::{ActorStore, ClaimKey, Store};

/// Trigger a job once (XXL-JOB `JobTriggerPoolHelper.trigger`).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Trigger {
    /// The job.
    pub job_id: i32,
    /// Why; recorded on the log row.
    pub trigger_type: TriggerType,
    /// The fire time it stands for, epoch ms (0 for manual/API/parent triggers).
    pub schedule_time: i64,
    /// Retries left after this run; `None` takes the job's setting.
    pub fail_retry_count: Option<i32>,
    /// Overrides the job's parameter (manual triggers, retries).
    pub executor_param: Option<String>,
    /// `"i/n"`: trigger only this shard (retry of a broadcast shard).
    pub sharding_param: Option<String>,
    /// Use these addresses instead of the group's (manual trigger with a custom list).
    pub address_list: Option<Vec<String>>,
    /// Where to send the outcome, for callers that wait for the log ids.
    pub reply: Option<oneshot::Sender<TriggerReport>>,
}

impl Trigger {
    /// A trigger with the job's own settings.
    pub fn new(job_id: i32, trigger_type: TriggerType, schedule_time: i64) -> Self {
        Trigger {
            job_id,
            trigger_type,
            schedule_time,
            fail_retry_count: None,
            executor_param: None,
            sharding_param: None,
            address_list: None,
            reply: None,
        }
    }
}

/// What every trigger needs from the admin.
#[derive(Clone)]
pub struct TriggerEnv {
    /// The database, reached through tasks of their own.
    pub store: ActorStore,
    /// Global executor token (groups with their own token use that instead).
    pub access_token: String,
    /// Zone of jobs without their own (for FIX_DELAY/cron follow-ups).
    pub default_tz: Tz,
    /// This admin's address, shown in trigger messages.
    pub admin_address: String,
    /// Where fires, results and lost runs are counted.
    pub metrics: Arc<AdminMetrics>,
    /// Whether this admin's claimed fire times are still surely its own.
    pub lease: Arc<Lease>,
}

/// The outcome of one trigger: a log row per shard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TriggerReport {
    /// Log ids created, in shard order.
    pub log_ids: Vec<i64>,
    /// Trigger codes, aligned with `log_ids`.
    pub codes: Vec<i32>,
    /// Why nothing was triggered (job gone), if so.
    pub error: Option<String>,
}

/// The executors a trigger may use and how to talk to each.
struct Targets {
    addresses: Vec<String>,
    protocols: Vec<AdminProtocol>,
    registry_type: &'static str,
    /// Addresses asked for that the group does not have, left out (see [`chosen_targets`]).
    refused: Vec<String>,
}

impl Targets {
    fn protocol_of(&self, address: &str) -> AdminProtocol {
        self.addresses
            .iter()
            .position(|a| a == address)
            .and_then(|i| self.protocols.get(i).copied())
            .unwrap_or(AdminProtocol::V2)
    }
}

/// A trigger whose job, executors and log rows are ready: only routing and `run` remain.
pub struct PreparedTrigger {
    trigger: Trigger,
    job: Arc<JobInfo>,
    group: Option<Arc<JobGroup>>,
    targets: Arc<Targets>,
    param: String,
    trigger_time: i64,
    /// One per log row.
    shards: Vec<Shard>,
}

/// One log row of a prepared trigger: a broadcast has one per executor, any other trigger one.
struct Shard {
    index: i32,
    total: i32,
    log_id: i64,
    /// The trigger message up to the call's answer, stored with the row when it is inserted.
    message_head: String,
}

impl PreparedTrigger {
    /// The job this trigger runs.
    pub fn job_id(&self) -> i32 {
        self.job.id
    }

    /// The fire time it stands for, epoch ms (0 for manual/API/parent triggers).
    pub fn schedule_time(&self) -> i64 {
        self.trigger.schedule_time
    }

    /// Why it fires.
    pub fn trigger_type(&self) -> TriggerType {
        self.trigger.trigger_type
    }

    /// The claim a pre-read fire holds until its outcome is written.
    pub fn claim(&self) -> Option<ClaimKey> {
        self.trigger.claim()
    }
}

impl Trigger {
    /// The claim of a pre-read fire (CRON or MISFIRE); other triggers hold none.
    pub fn claim(&self) -> Option<ClaimKey> {
        matches!(self.trigger_type, TriggerType::Cron | TriggerType::Misfire).then_some(ClaimKey {
            job_id: self.job_id,
            fire_time: self.schedule_time,
        })
    }
}

/// How many calls each executor address can expect from `fires`: a broadcast's shards one
/// each, any other fire an equal share of its group's addresses (its route is only decided when
/// it fires). What the connections opened ahead of a second are sized by.
pub fn expected_calls<'a>(
    fires: impl IntoIterator<Item = &'a PreparedTrigger>,
) -> Vec<(String, usize)> {
    let mut share: HashMap<&str, f64> = HashMap::new();
    for p in fires {
        let addresses = &p.targets.addresses;
        if addresses.is_empty() {
            continue;
        }
        if p.job.executor_route_strategy == RouteStrategy::ShardingBroadcast {
            for shard in &p.shards {
                if let Some(a) = shard_address(addresses, shard.index) {
                    *share.entry(a).or_default() += 1.0;
                }
            }
        } else {
            let each = p.shards.len() as f64 / addresses.len() as f64;
            for a in addresses {
                *share.entry(a).or_default() += each;
            }
        }
    }
    let mut wants: Vec<(String, usize)> = share
        .into_iter()
        .map(|(a, n)| (a.to_string(), n.ceil() as usize))
        .collect();
    wants.sort();
    wants
}

/// What preparing one trigger gave: ready to fire, or a report of why not.
pub enum Prepared {
    /// Log rows inserted; fire with [`fire_prepared`].
    Ready(Box<PreparedTrigger>),
    /// Nothing to fire (job gone or stopped, database error); the report says why.
    Skipped(TriggerReport),
}

fn skipped(error: String) -> Prepared {
    Prepared::Skipped(TriggerReport {
        error: Some(error),
        ..Default::default()
    })
}

/// Prepares a batch of triggers with a few statements rather than a few per trigger: reads of the
/// jobs by chunks of ids, one of each group and of each group's live executors, and multi-row
/// log inserts by chunks of rows.
/// The log rows' trigger time is now, or for fires prepared `ahead` of their time that time.
/// Results are in the order of `triggers`; replies are left to the caller.
pub async fn prepare_batch(env: &TriggerEnv, triggers: Vec<Trigger>, ahead: bool) -> Vec<Prepared> {
    let count = triggers.len();
    let claims: Vec<ClaimKey> = triggers.iter().filter_map(Trigger::claim).collect();
    let admin_address = env.admin_address.clone();
    let result =
        env.store
            .run(move |store| async move {
                prepare_in_db(&store, triggers, ahead, &admin_address).await
            })
            .await;
    match result {
        Ok(prepared) => prepared,
        Err(e) => {
            let level = env.store.failure_level(log::Level::Error);
            log::log!(level, "{count} trigger(s) failed: cannot prepare them: {e}");
            // their fire times stay claimed by this live admin, which no one takes over:
            // handed back, they follow the misfire rules at the next pass of any admin
            if !claims.is_empty() {
                let what = format!("{} claimed fire time(s) handed back", claims.len());
                until_written(&env.store, what, move |s| {
                    let claims = claims.clone();
                    async move { s.hand_back_claims(&claims).await }
                });
            }
            (0..count).map(|_| skipped(e.to_string())).collect()
        }
    }
}

async fn prepare_in_db(
    store: &Store,
    triggers: Vec<Trigger>,
    ahead: bool,
    admin_address: &str,
) -> Result<Vec<Prepared>, crate::store::StoreError> {
    let mut job_ids: Vec<i32> = triggers.iter().map(|t| t.job_id).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let jobs: HashMap<i32, Arc<JobInfo>> = store
        .get_jobs(&job_ids)
        .await?
        .into_iter()
        .map(|j| (j.id, Arc::new(j)))
        .collect();
    let mut groups: HashMap<i32, Option<Arc<JobGroup>>> = HashMap::new();
    let mut live: HashMap<String, Arc<Vec<Registration>>> = HashMap::new();
    let now = now_ms();
    let since = now - EXECUTOR_DEAD_AFTER_MS;
    for job in jobs.values() {
        if groups.contains_key(&job.job_group) {
            continue;
        }
        let group = store.get_group(job.job_group).await?.map(Arc::new);
        if let Some(g) = &group {
            if g.address_type == AddressType::Auto && !live.contains_key(&g.app_name) {
                let found = store.find_live_registry_for(&g.app_name, since).await?;
                live.insert(g.app_name.clone(), Arc::new(found));
            }
        }
        groups.insert(job.job_group, group);
    }
    let mut group_targets: HashMap<i32, Arc<Targets>> = HashMap::new();

    let mut out: Vec<Prepared> = Vec::with_capacity(triggers.len());
    let mut new_logs: Vec<NewRunRow> = Vec::new();
    // claims of pre-read fires that will not fire: released with the log rows' insert
    let mut dropped: Vec<ClaimKey> = Vec::new();
    for msg in triggers {
        let Some(job) = jobs.get(&msg.job_id).cloned() else {
            log::warn!(
                "trigger of job {} skipped: the job does not exist",
                msg.job_id
            );
            dropped.extend(msg.claim());
            out.push(skipped(format!("job {} not found", msg.job_id)));
            continue;
        };
        // a fire time pre-read before the job was stopped must not run after the stop
        let scheduled = matches!(msg.trigger_type, TriggerType::Cron | TriggerType::Misfire);
        if scheduled && job.trigger_status != TRIGGER_STATUS_RUNNING {
            log::debug!(
                "job {} stopped: its pre-read fire time {} is dropped",
                job.id,
                msg.schedule_time
            );
            dropped.extend(msg.claim());
            out.push(skipped(format!("job {} is stopped", job.id)));
            continue;
        }
        let group = groups.get(&job.job_group).cloned().flatten();
        let own = group_targets
            .entry(job.job_group)
            .or_insert_with(|| Arc::new(targets_of(group.as_deref(), &live)))
            .clone();
        let targets = match msg.address_list.as_deref().filter(|l| !l.is_empty()) {
            Some(list) => {
                let chosen = chosen_targets(list, group.as_deref(), &own);
                if !chosen.refused.is_empty() {
                    log::warn!(
                        "job {} trigger: address(es) {} left out: not an executor of its group",
                        job.id,
                        chosen.refused.join(", ")
                    );
                }
                Arc::new(chosen)
            }
            None => own,
        };
        let fail_retry_count = msg
            .fail_retry_count
            .filter(|c| *c >= 0)
            .unwrap_or(job.executor_fail_retry_count);
        let param = msg
            .executor_param
            .clone()
            .unwrap_or_else(|| job.executor_param.clone());
        let trigger_time = if ahead {
            msg.schedule_time.max(now)
        } else {
            now
        };
        let shard = msg.sharding_param.as_deref().and_then(parse_shard);
        let indexes: Vec<(i32, i32)> = if job.executor_route_strategy
            == RouteStrategy::ShardingBroadcast
            && !targets.addresses.is_empty()
            && shard.is_none()
        {
            let total = targets.addresses.len() as i32;
            (0..total).map(|i| (i, total)).collect()
        } else {
            vec![shard.unwrap_or((0, 1))]
        };
        let broadcast = job.executor_route_strategy == RouteStrategy::ShardingBroadcast;
        let mut shards = Vec::with_capacity(indexes.len());
        for (index, total) in indexes {
            let head = MessageHead {
                job: &job,
                trigger_type: msg.trigger_type,
                admin_address,
                targets: &targets,
                index,
                total,
                fail_retry_count,
            };
            new_logs.push(NewRunRow {
                job_group: job.job_group,
                job_id: job.id,
                trigger_type: msg.trigger_type,
                schedule_time: msg.schedule_time,
                trigger_time,
                executor_handler: Some(job.executor_handler.clone()),
                executor_param: Some(param.clone()),
                executor_sharding_param: broadcast.then(|| format!("{index}/{total}")),
                executor_fail_retry_count: fail_retry_count,
                trigger_msg: Some(head.to_string()),
            });
            shards.push(Shard {
                index,
                total,
                log_id: 0,
                message_head: String::new(),
            });
        }
        out.push(Prepared::Ready(Box::new(PreparedTrigger {
            trigger: msg,
            job,
            group,
            targets,
            param,
            trigger_time,
            shards,
        })));
    }

    store.release_claims(&dropped).await?;
    let mut ids = store.insert_logs(&new_logs).await?.into_iter();
    // the rows were pushed in shard order: each shard takes its id and its message head back
    let mut heads = new_logs
        .into_iter()
        .map(|l| l.trigger_msg.unwrap_or_default());
    for p in &mut out {
        if let Prepared::Ready(p) = p {
            for shard in &mut p.shards {
                shard.log_id = ids.next().unwrap_or_default();
                shard.message_head = heads.next().unwrap_or_default();
            }
        }
    }
    Ok(out)
}

/// Routes and runs a prepared trigger on its executors; returns its report and the outcome to
/// record per log row. Never panics on bad data: every failure ends up in an outcome.
pub async fn fire_prepared(
    env: &TriggerEnv,
    client: &ExecutorCalls,
    router: &RefCell<Router>,
    p: &PreparedTrigger,
) -> (TriggerReport, Vec<(i64, TriggerOutcome)>) {
    let mut report = TriggerReport::default();
    let mut outcomes = Vec::with_capacity(p.shards.len());
    for shard in &p.shards {
        let log_id = shard.log_id;
        let one = ProcessTrigger {
            job: &p.job,
            group: p.group.as_deref(),
            targets: &p.targets,
            trigger: &p.trigger,
            param: &p.param,
            index: shard.index,
            total: shard.total,
            trigger_time: p.trigger_time,
            message_head: &shard.message_head,
        };
        // Boxed: a fire's task lives on after its call, until its outcome is written, and a
        // task keeps the size of its largest state; inline, the call's state (HTTP client,
        // connect, answer parsing) would stay in each of the thousands of tasks waiting for
        // their outcome (measured: BENCHMARKS.md).
        let (code, outcome) = Box::pin(process(env, client, router, log_id, one)).await;
        report.log_ids.push(log_id);
        report.codes.push(code);
        outcomes.push((log_id, outcome));
    }
    (report, outcomes)
}

/// After a prepared trigger's outcomes are recorded: a FIX_DELAY job whose run never started
/// resumes its schedule, since nothing will call back.
pub async fn after_fire(env: &TriggerEnv, p: &PreparedTrigger, report: &TriggerReport) {
    let scheduled = matches!(
        p.trigger.trigger_type,
        TriggerType::Cron | TriggerType::Misfire
    );
    if scheduled
        && p.job.schedule_type == ScheduleType::FixDelay
        && !report.codes.contains(&SUCCESS_CODE)
    {
        resume_fix_delay(env, &p.job.schedule(), now_ms()).await;
    }
}

/// Sets a FIX_DELAY job's next fire time to `ended + delay` if it is still waiting for its run.
pub async fn resume_fix_delay(env: &TriggerEnv, job: &JobSchedule, ended: i64) {
    let tz = crate::timing::parse_timezone(&job.timezone, env.default_tz).unwrap_or(env.default_tz);
    match crate::timing::next_fire_time(job.schedule_type, &job.schedule_conf, tz, ended) {
        Ok(Some(next)) => match env
            .store
            .run({
                let id = job.id;
                move |s| async move { s.resume_after_run(id, next).await }
            })
            .await
        {
            Ok(true) => log::debug!("job {} (FIX_DELAY) next fire at {next}", job.id),
            Ok(false) => {}
            Err(e) => log::error!("job {}: cannot set the FIX_DELAY fire time: {e}", job.id),
        },
        Ok(None) => {}
        Err(e) => log::error!("job {}: bad FIX_DELAY configuration: {e}", job.id),
    }
}

/// The executors of a group: its live registrations (automatic) or its fixed list (manual).
fn targets_of(group: Option<&JobGroup>, live: &HashMap<String, Arc<Vec<Registration>>>) -> Targets {
    let Some(group) = group else {
        return Targets {
            addresses: Vec::new(),
            protocols: Vec::new(),
            registry_type: "Automatic registration",
            refused: Vec::new(),
        };
    };
    let empty = Vec::new();
    let live: &[Registration] = live
        .get(&group.app_name)
        .map(|l| l.as_slice())
        .unwrap_or(&empty);
    let protocol = |value: &str| {
        live.iter()
            .find(|r| r.registry_value == value)
            .and_then(|r| AdminProtocol::parse(&r.protocol))
            .unwrap_or(AdminProtocol::V2)
    };
    let addresses: Vec<String> = match group.address_type {
        // live registrations, not the list the monitor last wrote: a new executor is used at once
        AddressType::Auto => live.iter().map(|r| r.registry_value.clone()).collect(),
        AddressType::Manual => group.address_list.clone(),
    };
    let protocols = addresses.iter().map(|a| protocol(a)).collect();
    Targets {
        addresses,
        protocols,
        registry_type: match group.address_type {
            AddressType::Auto => "Automatic registration",
            AddressType::Manual => "Manual entry",
        },
        refused: Vec::new(),
    }
}

/// The executors of a trigger that names its own: only those the group has (registered now, or
/// in its address list), so that the group's token never goes to an address of the caller's
/// choosing; the others are left out and named.
fn chosen_targets(list: &[String], group: Option<&JobGroup>, own: &Targets) -> Targets {
    let known: HashMap<String, (&str, AdminProtocol)> = own
        .addresses
        .iter()
        .zip(&own.protocols)
        .map(|(a, p)| (address_key(a), (a.as_str(), *p)))
        .chain(
            group
                .map(|g| g.address_list.as_slice())
                .unwrap_or_default()
                .iter()
                .map(|a| (address_key(a), (a.as_str(), AdminProtocol::V2))),
        )
        .rev() // a live registration's protocol wins over the listed copy of its address
        .collect();
    let mut chosen = Targets {
        addresses: Vec::new(),
        protocols: Vec::new(),
        registry_type: "Manual entry",
        refused: Vec::new(),
    };
    for asked in list {
        match known.get(&address_key(asked)) {
            Some((address, protocol)) if !chosen.addresses.iter().any(|a| a == address) => {
                chosen.addresses.push(address.to_string());
                chosen.protocols.push(*protocol);
            }
            Some(_) => {}
            None => chosen.refused.push(asked.clone()),
        }
    }
    chosen
}

/// `"i/n"` → (i, n), when well-formed.
fn parse_shard(s: &str) -> Option<(i32, i32)> {
    let (i, n) = s.split_once('/')?;
    let (i, n) = (i.trim().parse::<i32>().ok()?, n.trim().parse::<i32>().ok()?);
    (n > 0 && i >= 0 && i < n).then_some((i, n))
}

struct ProcessTrigger<'a> {
    job: &'a JobInfo,
    group: Option<&'a JobGroup>,
    targets: &'a Targets,
    trigger: &'a Trigger,
    param: &'a str,
    index: i32,
    total: i32,
    trigger_time: i64,
    message_head: &'a str,
}

/// One shard: address, `run`, and the outcome to record on its log row.
async fn process(
    env: &TriggerEnv,
    client: &ExecutorCalls,
    router: &RefCell<Router>,
    log_id: i64,
    p: ProcessTrigger<'_>,
) -> (i32, TriggerOutcome) {
    let job = p.job;
    let broadcast = job.executor_route_strategy == RouteStrategy::ShardingBroadcast;
    let addresses = &p.targets.addresses;
    let param = TriggerParam {
        job_id: job.id,
        executor_handler: job.executor_handler.clone(),
        executor_params: p.param.to_string(),
        executor_block_strategy: job.executor_block_strategy.as_str().to_string(),
        executor_timeout: job.executor_timeout,
        log_id,
        log_date_time: p.trigger_time,
        glue_type: job.glue_type.as_str().to_string(),
        glue_source: job.glue_source.clone(),
        glue_updatetime: job.glue_updatetime,
        broadcast_index: p.index,
        broadcast_total: p.total,
    };
    let token = Some(executor_token(p.group, &env.access_token));
    let app_name = p.group.map(|g| g.app_name.clone());

    // choose the address; a probe message (FAILOVER/BUSYOVER) precedes the run result
    let mut route_msg = String::new();
    let address: Result<String, String> = if addresses.is_empty() && !p.targets.refused.is_empty() {
        Err(format!(
            "{ADDRESS_EMPTY_MSG}: {} is not an executor of this job's group (registered or listed)",
            p.targets.refused.join(", ")
        ))
    } else if addresses.is_empty() {
        Err(ADDRESS_EMPTY_MSG.to_string())
    } else if broadcast {
        shard_address(addresses, p.index)
            .cloned()
            .ok_or_else(|| ROUTE_FAIL_MSG.to_string())
    } else {
        let decision =
            router
                .borrow_mut()
                .route(job.executor_route_strategy, job.id, addresses, now_ms());
        match decision {
            RouteDecision::Address(a) => Ok(a),
            RouteDecision::NoAddress => Err(ADDRESS_EMPTY_MSG.to_string()),
            RouteDecision::Broadcast => shard_address(addresses, p.index)
                .cloned()
                .ok_or_else(|| ROUTE_FAIL_MSG.to_string()),
            RouteDecision::Probe(kind, list) => {
                let creds_for = |a: &str| Credentials {
                    access_token: token.clone(),
                    app_name: app_name.clone(),
                    protocol: p.targets.protocol_of(a),
                };
                let probed = probe_in_order(kind, &list, |a: String| {
                    let creds = creds_for(&a);
                    async move {
                        let answer = match kind {
                            ProbeKind::Beat => client.beat(&a, &creds).await,
                            ProbeKind::IdleBeat => client.idle_beat(&a, &creds, job.id).await,
                        };
                        Ok((answer.code, answer.msg.unwrap_or_default()))
                    }
                })
                .await;
                match probed {
                    Ok((a, msg)) => {
                        route_msg = msg;
                        Ok(a)
                    }
                    Err(msg) => Err(msg),
                }
            }
        }
    };

    let (code, run_msg, used) = match address {
        Ok(address) => {
            let creds = Credentials {
                access_token: token.clone(),
                app_name: app_name.clone(),
                protocol: p.targets.protocol_of(&address),
            };
            let answer = client.try_run(&address, &creds, &param).await;
            note_answer(router, &address, job.id, &answer);
            let answer = answer.unwrap_or_else(failure);
            let msg = format!(
                "Trigger Job：<br>address：{address}<br>code：{}<br>msg：{}",
                answer.code,
                answer.msg.clone().unwrap_or_default()
            );
            (answer.code, msg, Some(address))
        }
        Err(why) => (FAIL_CODE, why, None),
    };
    let code = if code == SUCCESS_CODE {
        SUCCESS_CODE
    } else {
        FAIL_CODE
    };

    let outcome = TriggerOutcome {
        trigger_code: code,
        trigger_msg: trigger_message(p.message_head, &route_msg, &run_msg),
        executor_address: used.clone(),
    };
    if code == SUCCESS_CODE {
        log::debug!(
            "job {} triggered ({}), log {log_id}, executor {}",
            job.id,
            p.trigger.trigger_type,
            used.as_deref().unwrap_or("-")
        );
    } else {
        log::warn!(
            "job {} trigger failed ({}), log {log_id}: {}",
            job.id,
            p.trigger.trigger_type,
            run_msg.replace("<br>", " ")
        );
    }
    (code, outcome)
}

/// Tells the router whether `address` answered `job_id`'s trigger, so that the strategies that
/// do not probe leave an executor that did not answer out for a while (one line when it starts).
fn note_answer<T>(
    router: &RefCell<Router>,
    address: &str,
    job_id: i32,
    answer: &Result<T, String>,
) {
    let mut router = router.borrow_mut();
    match answer {
        Ok(_) => router.answered(address),
        Err(why) => {
            if router.no_answer(address, now_ms()) {
                log::warn!(
                    "executor {address} did not answer job {job_id}'s trigger ({why}); routing leaves it out for {} s",
                    UNREACHABLE_FOR_MS / 1_000
                );
            }
        }
    }
}

/// The start of the HTML summary XXL-JOB stores in `trigger_msg` (in English): what is known of
/// a trigger before its executor is called.
struct MessageHead<'a> {
    job: &'a JobInfo,
    trigger_type: TriggerType,
    admin_address: &'a str,
    targets: &'a Targets,
    index: i32,
    total: i32,
    fail_retry_count: i32,
}

impl std::fmt::Display for MessageHead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let job = self.job;
        let mut route = job.executor_route_strategy.as_str().to_string();
        if job.executor_route_strategy == RouteStrategy::ShardingBroadcast {
            route.push_str(&format!("({}/{})", self.index, self.total));
        }
        write!(
            f,
            "Trigger type：{}<br>Admin address：{}<br>Executor registry type：{}<br>Executor addresses：[{}]<br>\
             Route strategy：{}<br>Block strategy：{}<br>Timeout：{}<br>Fail retry count：{}<br><br>\
             <span style=\"color:#00c0ef;\" > >>>>>>>>>>>Trigger Job<<<<<<<<<<< </span><br>",
            self.trigger_type.title(),
            self.admin_address,
            self.targets.registry_type,
            AddressSummary(&self.targets.addresses),
            route,
            job.executor_block_strategy.as_str(),
            job.executor_timeout,
            self.fail_retry_count,
        )
    }
}

/// Addresses shown in a run's trigger message: a group of hundreds of executors would make every
/// run row of it hundreds of kilobytes.
const ADDRESSES_SHOWN: usize = 20;

/// The first [`ADDRESSES_SHOWN`] addresses, then how many there are in all.
struct AddressSummary<'a>(&'a [String]);

impl std::fmt::Display for AddressSummary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = &self.0[..self.0.len().min(ADDRESSES_SHOWN)];
        f.write_str(&shown.join(", "))?;
        if self.0.len() > shown.len() {
            write!(f, ", … ({} in all)", self.0.len())?;
        }
        Ok(())
    }
}

/// The whole summary: its head, then the route's probes (if any), then the call's answer.
fn trigger_message(head: &str, route_msg: &str, run_msg: &str) -> String {
    let mut msg = String::with_capacity(head.len() + route_msg.len() + run_msg.len() + 8);
    msg.push_str(head);
    if !route_msg.is_empty() {
        msg.push_str(route_msg);
        msg.push_str("<br><br>");
    }
    msg.push_str(run_msg);
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_may_name_only_the_groups_executors() {
        let own = Targets {
            addresses: vec!["http://10.0.0.1:9999/".into()],
            protocols: vec![AdminProtocol::V35],
            registry_type: "Automatic registration",
            refused: Vec::new(),
        };
        let mut group = JobGroup {
            id: 1,
            app_name: "app".into(),
            title: "app".into(),
            address_type: AddressType::Auto,
            address_list: vec!["http://10.0.0.2:9999/".into()],
            access_token: None,
            update_time: 0,
        };
        let asked: Vec<String> = [
            "http://10.0.0.1:9999",    // registered, without its slash
            "http://127.0.0.1:4444/",  // the caller's own listener
            "HTTP://10.0.0.2:9999/",   // listed, in capitals
            "http://10.0.0.1:9999/",   // the first again
            "http://169.254.169.254/", // an internal host
        ]
        .map(String::from)
        .to_vec();
        let chosen = chosen_targets(&asked, Some(&group), &own);
        assert_eq!(
            chosen.addresses,
            ["http://10.0.0.1:9999/", "http://10.0.0.2:9999/"]
        );
        assert_eq!(chosen.protocols, [AdminProtocol::V35, AdminProtocol::V2]);
        assert_eq!(
            chosen.refused,
            ["http://127.0.0.1:4444/", "http://169.254.169.254/"]
        );
        // a group with no executor at all takes none of the caller's
        group.address_list.clear();
        let none = Targets {
            addresses: Vec::new(),
            ..own
        };
        let chosen = chosen_targets(&asked[1..2], Some(&group), &none);
        assert!(chosen.addresses.is_empty());
        assert_eq!(chosen.refused, ["http://127.0.0.1:4444/"]);
        assert!(chosen_targets(&asked, None, &none).addresses.is_empty());
    }

    #[test]
    fn long_address_lists_are_summed_up_in_messages() {
        let many: Vec<String> = (0..25).map(|i| format!("http://h{i}/")).collect();
        let shown = AddressSummary(&many).to_string();
        assert!(shown.starts_with("http://h0/, http://h1/"));
        assert!(shown.contains("http://h19/") && !shown.contains("http://h20/"));
        assert!(shown.ends_with(", … (25 in all)"));
        assert_eq!(
            AddressSummary(&many[..2]).to_string(),
            "http://h0/, http://h1/"
        );
    }

    #[test]
    fn shard_params_parse_only_when_valid() {
        assert_eq!(parse_shard("1/3"), Some((1, 3)));
        assert_eq!(parse_shard(" 0 / 1 "), Some((0, 1)));
        assert_eq!(parse_shard("3/3"), None);
        assert_eq!(parse_shard("x/3"), None);
        assert_eq!(parse_shard("1"), None);
        assert_eq!(parse_shard("0/0"), None);
    }

    fn fire(route: RouteStrategy, addresses: &[&str], shards: usize) -> PreparedTrigger {
        let mut job = JobInfo::new(1, "j", "h");
        job.executor_route_strategy = route;
        PreparedTrigger {
            trigger: Trigger::new(1, TriggerType::Cron, 0),
            job: Arc::new(job),
            group: None,
            targets: Arc::new(Targets {
                addresses: addresses.iter().map(|a| a.to_string()).collect(),
                protocols: Vec::new(),
                registry_type: "Automatic registration",
                refused: Vec::new(),
            }),
            param: String::new(),
            trigger_time: 0,
            shards: (0..shards)
                .map(|i| Shard {
                    index: i as i32,
                    total: shards as i32,
                    log_id: i as i64,
                    message_head: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn expected_calls_share_fires_among_their_executors() {
        let fires = [
            fire(RouteStrategy::First, &["http://a/"], 1),
            fire(RouteStrategy::First, &["http://a/"], 1),
            fire(
                RouteStrategy::Round,
                &["http://a/", "http://b/", "http://c/"],
                1,
            ),
            fire(RouteStrategy::Round, &["http://b/", "http://c/"], 1),
            fire(
                RouteStrategy::ShardingBroadcast,
                &["http://a/", "http://b/"],
                2,
            ),
            fire(RouteStrategy::Round, &[], 1),
        ];
        assert_eq!(
            expected_calls(fires.iter()),
            vec![
                ("http://a/".to_string(), 4), // 2 + 1/3 + 1 shard, rounded up
                ("http://b/".to_string(), 2), // 1/3 + 1/2 + 1 shard, rounded up
                ("http://c/".to_string(), 1),
            ]
        );
    }
}
