//! One trigger, start to end (XXL-JOB `XxlJobTrigger.trigger` / `processTrigger`): load the job
//! and its group, choose the executor(s), insert the log row, call `run`, record the answer.

use std::cell::RefCell;

use chrono_tz::Tz;

use super::dispatch::Trigger;
use crate::clock::now_ms;
use crate::executor_client::{Credentials, ExecutorClient};
use crate::model::{
    AddressType, JobGroup, JobInfo, NewLog, RouteStrategy, ScheduleType, TriggerOutcome,
    TriggerType, TRIGGER_STATUS_RUNNING,
};
use crate::protocol::{AdminProtocol, TriggerParam, FAIL_CODE, SUCCESS_CODE};
use crate::routing::{
    probe_in_order, shard_address, ProbeKind, RouteDecision, Router, ADDRESS_EMPTY_MSG,
    ROUTE_FAIL_MSG,
};
use crate::store::Store;

/// A registration older than this is dead (XXL-JOB's 90 s).
pub const DEAD_AFTER_MS: i64 = 90_000;

/// What every trigger needs from the admin.
#[derive(Clone)]
pub struct TriggerEnv {
    /// The database.
    pub store: Store,
    /// Global executor token.
    pub access_token: Option<String>,
    /// Zone of jobs without their own (for FIX_DELAY/cron follow-ups).
    pub default_tz: Tz,
    /// This admin's address, shown in trigger messages.
    pub admin_address: String,
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

/// Runs one [`Trigger`]; never panics on bad data, records every failure on a log row.
pub async fn run_trigger(
    env: &TriggerEnv,
    client: &ExecutorClient,
    router: &RefCell<Router>,
    msg: Trigger,
) -> TriggerReport {
    let job = match env.store.get_job(msg.job_id).await {
        Ok(Some(job)) => job,
        Ok(None) => {
            log::warn!(
                "trigger of job {} skipped: the job does not exist",
                msg.job_id
            );
            return TriggerReport {
                error: Some(format!("job {} not found", msg.job_id)),
                ..Default::default()
            };
        }
        Err(e) => {
            log::error!(
                "trigger of job {} failed: cannot load the job: {e}",
                msg.job_id
            );
            return TriggerReport {
                error: Some(e.to_string()),
                ..Default::default()
            };
        }
    };
    // a fire time pre-read before the job was stopped must not run after the stop
    let scheduled = matches!(msg.trigger_type, TriggerType::Cron | TriggerType::Misfire);
    if scheduled && job.trigger_status != TRIGGER_STATUS_RUNNING {
        log::debug!(
            "job {} stopped: its pre-read fire time {} is dropped",
            job.id,
            msg.schedule_time
        );
        return TriggerReport {
            error: Some(format!("job {} is stopped", job.id)),
            ..Default::default()
        };
    }
    let group = match env.store.get_group(job.job_group).await {
        Ok(group) => group,
        Err(e) => {
            log::error!(
                "trigger of job {} failed: cannot load group {}: {e}",
                job.id,
                job.job_group
            );
            return TriggerReport {
                error: Some(e.to_string()),
                ..Default::default()
            };
        }
    };
    let fail_retry_count = msg
        .fail_retry_count
        .filter(|c| *c >= 0)
        .unwrap_or(job.executor_fail_retry_count);
    let param = msg
        .executor_param
        .clone()
        .unwrap_or_else(|| job.executor_param.clone());
    let targets = match targets(env, group.as_ref(), msg.address_list.as_deref()).await {
        Ok(t) => t,
        Err(e) => {
            log::error!(
                "trigger of job {} failed: cannot read the registry: {e}",
                job.id
            );
            Targets {
                addresses: Vec::new(),
                protocols: Vec::new(),
                registry_type: "Automatic registration",
            }
        }
    };
    let shard = msg.sharding_param.as_deref().and_then(parse_shard);
    let trigger_time = now_ms();

    let shards: Vec<(i32, i32)> = if job.executor_route_strategy == RouteStrategy::ShardingBroadcast
        && !targets.addresses.is_empty()
        && shard.is_none()
    {
        let total = targets.addresses.len() as i32;
        (0..total).map(|i| (i, total)).collect()
    } else {
        vec![shard.unwrap_or((0, 1))]
    };

    let mut report = TriggerReport::default();
    for (index, total) in shards {
        let one = ProcessTrigger {
            job: &job,
            group: group.as_ref(),
            targets: &targets,
            trigger: &msg,
            param: &param,
            fail_retry_count,
            index,
            total,
            trigger_time,
        };
        match process(env, client, router, one).await {
            Ok((log_id, code)) => {
                report.log_ids.push(log_id);
                report.codes.push(code);
            }
            Err(e) => {
                log::error!("trigger of job {} failed: {e}", job.id);
                report.error = Some(e);
            }
        }
    }

    // a FIX_DELAY job waits for its run to end; if the run never started, nothing will call back
    if scheduled
        && job.schedule_type == ScheduleType::FixDelay
        && !report.codes.contains(&SUCCESS_CODE)
    {
        resume_fix_delay(env, &job, now_ms()).await;
    }
    report
}

/// Sets a FIX_DELAY job's next fire time to `ended + delay` if it is still waiting for its run.
pub async fn resume_fix_delay(env: &TriggerEnv, job: &JobInfo, ended: i64) {
    let tz = crate::timing::parse_timezone(&job.timezone, env.default_tz).unwrap_or(env.default_tz);
    match crate::timing::next_fire_time(job.schedule_type, &job.schedule_conf, tz, ended) {
        Ok(Some(next)) => match env.store.resume_after_run(job.id, next).await {
            Ok(true) => log::debug!("job {} (FIX_DELAY) next fire at {next}", job.id),
            Ok(false) => {}
            Err(e) => log::error!("job {}: cannot set the FIX_DELAY fire time: {e}", job.id),
        },
        Ok(None) => {}
        Err(e) => log::error!("job {}: bad FIX_DELAY configuration: {e}", job.id),
    }
}

async fn targets(
    env: &TriggerEnv,
    group: Option<&JobGroup>,
    custom: Option<&[String]>,
) -> Result<Targets, crate::store::StoreError> {
    if let Some(list) = custom.filter(|l| !l.is_empty()) {
        return Ok(Targets {
            addresses: list.to_vec(),
            protocols: vec![AdminProtocol::V2; list.len()],
            registry_type: "Manual entry",
        });
    }
    let Some(group) = group else {
        return Ok(Targets {
            addresses: Vec::new(),
            protocols: Vec::new(),
            registry_type: "Automatic registration",
        });
    };
    let live = env
        .store
        .find_live_registry_for(&group.app_name, now_ms() - DEAD_AFTER_MS)
        .await?;
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
    Ok(Targets {
        addresses,
        protocols,
        registry_type: match group.address_type {
            AddressType::Auto => "Automatic registration",
            AddressType::Manual => "Manual entry",
        },
    })
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
    fail_retry_count: i32,
    index: i32,
    total: i32,
    trigger_time: i64,
}

/// One shard: log row, address, `run`, outcome. Returns the log id and trigger code.
async fn process(
    env: &TriggerEnv,
    client: &ExecutorClient,
    router: &RefCell<Router>,
    p: ProcessTrigger<'_>,
) -> Result<(i64, i32), String> {
    let job = p.job;
    let log_id = env
        .store
        .insert_log(&NewLog {
            job_group: job.job_group,
            job_id: job.id,
            trigger_type: p.trigger.trigger_type,
            schedule_time: p.trigger.schedule_time,
            trigger_time: p.trigger_time,
        })
        .await
        .map_err(|e| format!("cannot insert the log row: {e}"))?;

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
    let token = p
        .group
        .and_then(|g| g.access_token.clone())
        .or_else(|| env.access_token.clone());
    let app_name = p.group.map(|g| g.app_name.clone());

    // choose the address; a probe message (FAILOVER/BUSYOVER) precedes the run result
    let mut route_msg = String::new();
    let address: Result<String, String> = if addresses.is_empty() {
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
            let answer = client.run(&address, &creds, &param).await;
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
        trigger_msg: trigger_message(&p, env, &route_msg, &run_msg),
        executor_address: used.clone(),
        executor_handler: job.executor_handler.clone(),
        executor_param: p.param.to_string(),
        executor_sharding_param: broadcast.then(|| format!("{}/{}", p.index, p.total)),
        executor_fail_retry_count: p.fail_retry_count,
    };
    if let Err(e) = env.store.set_trigger_outcome(log_id, &outcome).await {
        log::error!(
            "job {} log {log_id}: cannot record the trigger outcome: {e}",
            job.id
        );
    }
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
    Ok((log_id, code))
}

/// The HTML summary XXL-JOB stores in `trigger_msg`, in English.
fn trigger_message(
    p: &ProcessTrigger<'_>,
    env: &TriggerEnv,
    route_msg: &str,
    run_msg: &str,
) -> String {
    let job = p.job;
    let mut route = job.executor_route_strategy.as_str().to_string();
    if job.executor_route_strategy == RouteStrategy::ShardingBroadcast {
        route.push_str(&format!("({}/{})", p.index, p.total));
    }
    let mut msg = format!(
        "Trigger type：{}<br>Admin address：{}<br>Executor registry type：{}<br>Executor addresses：{}<br>\
         Route strategy：{}<br>Block strategy：{}<br>Timeout：{}<br>Fail retry count：{}<br><br>\
         <span style=\"color:#00c0ef;\" > >>>>>>>>>>>Trigger Job<<<<<<<<<<< </span><br>",
        p.trigger.trigger_type.title(),
        env.admin_address,
        p.targets.registry_type,
        if p.targets.addresses.is_empty() { "[]".to_string() } else { format!("[{}]", p.targets.addresses.join(", ")) },
        route,
        job.executor_block_strategy.as_str(),
        job.executor_timeout,
        p.fail_retry_count,
    );
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
    fn shard_params_parse_only_when_valid() {
        assert_eq!(parse_shard("1/3"), Some((1, 3)));
        assert_eq!(parse_shard(" 0 / 1 "), Some((0, 1)));
        assert_eq!(parse_shard("3/3"), None);
        assert_eq!(parse_shard("x/3"), None);
        assert_eq!(parse_shard("1"), None);
        assert_eq!(parse_shard("0/0"), None);
    }
}
