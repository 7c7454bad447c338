//! The step at the fire time: route, call the executor, record the outcome; and what follows a
//! fire (FIX_DELAY's next time).

use super::*;

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
    if !p.replaced.is_empty() {
        kill_replaced(env, client, p).await;
    }
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
        // their outcome.
        let (code, outcome) = Box::pin(process(env, client, router, log_id, one)).await;
        report.log_ids.push(log_id);
        report.codes.push(code);
        outcomes.push((log_id, outcome));
    }
    (report, outcomes)
}

/// Asks the executors of the runs a REPLACE closed to kill them, before the new run is sent
/// (a kill stops the job's thread on that executor, and with it anything queued behind it).
/// Their rows are closed already; a failed kill is logged, the run it missed ends on its own.
async fn kill_replaced(env: &TriggerEnv, client: &ExecutorCalls, p: &PreparedTrigger) {
    for victim in &p.replaced {
        let Some(address) = victim.executor_address.as_deref() else {
            continue; // never reached an executor
        };
        let creds = Credentials {
            access_token: Some(executor_token(p.group.as_deref(), &env.access_token)),
            app_name: p.group.as_ref().map(|g| g.app_name.clone()),
            protocol: p.targets.protocol_of(address),
        };
        let answer = client.kill(address, &creds, victim.job_id).await;
        if answer.code == SUCCESS_CODE {
            log::info!(
                "job {} log {}: killed on {address}, replaced by a newer run",
                victim.job_id,
                victim.log_id
            );
        } else {
            log::warn!(
                "job {} log {}: executor {address} did not kill the replaced run: {}",
                victim.job_id,
                victim.log_id,
                answer
                    .msg
                    .unwrap_or_else(|| format!("code {}", answer.code))
            );
        }
    }
}

/// After a prepared trigger's outcomes are recorded: a FIX_DELAY job whose run never started
/// resumes its schedule, since nothing will call back; a workflow node whose trigger failed
/// has its run looked at again, since no result will come either.
pub async fn after_fire(env: &TriggerEnv, p: &PreparedTrigger, report: &TriggerReport) {
    if let Some(node) = &p.trigger.node {
        if report.codes.iter().any(|c| *c != SUCCESS_CODE) {
            env.workflows.advance(vec![node.run_id]);
        }
    }
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

pub(super) struct ProcessTrigger<'a> {
    pub(super) job: &'a JobInfo,
    pub(super) group: Option<&'a JobGroup>,
    pub(super) targets: &'a Targets,
    pub(super) trigger: &'a Trigger,
    pub(super) param: &'a str,
    pub(super) index: i32,
    pub(super) total: i32,
    pub(super) trigger_time: i64,
    pub(super) message_head: &'a str,
}

/// One shard: address, `run`, and the outcome to record on its log row.
pub(super) async fn process(
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
        executor_timeout: p
            .trigger
            .node
            .as_ref()
            .and_then(|n| n.timeout_secs)
            .unwrap_or(job.executor_timeout),
        log_id,
        log_date_time: p.trigger_time,
        glue_type: job.glue_type.as_str().to_string(),
        glue_source: job.glue_source.clone(),
        glue_updatetime: job.glue_updatetime,
        broadcast_index: p.index,
        broadcast_total: p.total,
        workflow_context: p.trigger.node.as_ref().map(|n| n.context.to_string()),
        max_queued: u32::try_from(job.max_queued).ok().filter(|n| *n > 0),
    };
    let token = Some(executor_token(p.group, &env.access_token));
    let app_name = p.group.map(|g| g.app_name.clone());

    // a resend asks first whether one of the executors has the run already: the dead admin's
    // route (ROUND, RANDOM, LRU…) may have picked another executor than this one would
    if let Some(resend) = p.trigger.resend.filter(|_| !broadcast) {
        let creds_for = |a: &str| Credentials {
            access_token: token.clone(),
            app_name: app_name.clone(),
            protocol: p.targets.protocol_of(a),
        };
        // those a selector or a cordon leaves out too: one of them may have it
        let asked = p.targets.all_addresses();
        if let Some(holder) = holder_of(client, &asked, creds_for, resend).await {
            log::info!(
                "job {} log {log_id}: executor {holder} has this run already; not sent again",
                job.id
            );
            let run_msg = format!(
                "Trigger Job：<br>address：{holder}<br>code：{SUCCESS_CODE}<br>msg：sent by an admin that stopped before recording the answer; the executor has this run already (it answers for its log), so it was not sent again"
            );
            let outcome = TriggerOutcome {
                trigger_code: SUCCESS_CODE,
                trigger_msg: trigger_message(p.message_head, "", &run_msg),
                executor_address: Some(holder),
            };
            return (SUCCESS_CODE, outcome);
        }
    }

    // choose the address; a probe message (FAILOVER/BUSYOVER) precedes the run result
    let mut route_msg = String::new();
    let address: Result<String, String> = if addresses.is_empty() && !p.targets.refused.is_empty() {
        Err(format!(
            "{ADDRESS_EMPTY_MSG}: {} is not an executor of this job's group (registered or listed)",
            p.targets.refused.join(", ")
        ))
    } else if addresses.is_empty() && !p.targets.cordoned.is_empty() {
        Err(format!(
            "{ADDRESS_EMPTY_MSG}: {} cordoned (draining){}",
            p.targets.cordoned.join(", "),
            p.targets
                .selector
                .as_ref()
                .map(|s| format!(", and no other executor with {s} online"))
                .unwrap_or_default()
        ))
    } else if let (true, Some(selector)) = (addresses.is_empty(), &p.targets.selector) {
        Err(format!(
            "{ADDRESS_EMPTY_MSG}: no executor with {selector} online"
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
                            ProbeKind::Beat => client.try_beat(&a, &creds).await,
                            ProbeKind::IdleBeat => client.try_idle_beat(&a, &creds, job.id).await,
                        };
                        note_answer(env, router, &a, job.id, &answer);
                        let answer = answer.unwrap_or_else(failure);
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
            if p.trigger.node.is_none() {
                env.faults.reached("call-sent");
            }
            note_answer(env, router, &address, job.id, &answer);
            let mut answer = answer.unwrap_or_else(failure);
            // a repeat means the executor has this very run (a resend after its admin died
            // between the call and its record): accepted once, so not run twice
            if answer.code != SUCCESS_CODE && is_repeat(answer.msg.as_deref(), log_id) {
                answer.code = SUCCESS_CODE;
                answer.msg = Some(format!(
                    "{} (the executor had this run already; it was not started again)",
                    answer.msg.unwrap_or_default()
                ));
            }
            if answer.code == SUCCESS_CODE && p.trigger.node.is_some() {
                env.faults.reached("call-answered");
            }
            let msg = format!(
                "Trigger Job：<br>address：{address}<br>code：{}<br>msg：{}",
                answer.code,
                answer.msg.clone().unwrap_or_default()
            );
            (answer.code, msg, Some(address))
        }
        Err(why) => (FAIL_CODE, why, None),
    };
    let admission = match used {
        Some(_) => Admission::Ran,
        None => Admission::NoExecutor,
    };
    env.metrics.admitted(admission, 1);
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

/// The first of `addresses` whose `/log` answers for the run `resend`: an XXL-JOB executor
/// keeps a run's log file from its start, a jobwheel executor answers for every run it
/// accepted. The executors are asked together; one that does not answer counts as not having it.
async fn holder_of(
    client: &ExecutorCalls,
    addresses: &[String],
    creds_for: impl Fn(&str) -> Credentials,
    resend: Resend,
) -> Option<String> {
    let asks = addresses.iter().map(|a| {
        let creds = creds_for(a);
        async move {
            let answer = client
                .log(a, &creds, resend.log_id, resend.trigger_time, 1)
                .await;
            let has_it = answer.code == SUCCESS_CODE
                && answer
                    .payload
                    .is_some_and(|page| !page.log_content.starts_with(LOG_READ_FAILED));
            has_it.then(|| a.clone())
        }
    });
    futures_util::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .next()
}

/// How an executor's `/log` answer starts when it has no such run (`readLog fail, logFile not
/// exists` and its kin).
const LOG_READ_FAILED: &str = "readLog fail";

/// Whether an executor's refusal says it already has run `log_id` (XXL-JOB's words, with
/// the old spelling "repeate" of Java executors before 2.4 too).
fn is_repeat(msg: Option<&str>, log_id: i64) -> bool {
    msg.is_some_and(|m| {
        (m.starts_with("repeat trigger job") || m.starts_with("repeate trigger job"))
            && m.ends_with(&format!("logId:{log_id}"))
    })
}

/// Tells the router whether `address` answered `job_id`'s call, so that routing leaves an
/// executor that did not answer out (one line when it starts), and writes the change to the
/// database for the other admins.
pub(super) fn note_answer<T>(
    env: &TriggerEnv,
    router: &RefCell<Router>,
    address: &str,
    job_id: i32,
    answer: &Result<T, String>,
) {
    let now = now_ms();
    match answer {
        Ok(_) => {
            if router.borrow_mut().answered(address, now) {
                log::info!(
                    "executor {address} answered job {job_id}'s call: routing uses it again"
                );
                let address = address.to_string();
                env.store.spawn(move |s| async move {
                    if let Err(e) = s.clear_suspect(&address, None).await {
                        log::warn!("executor {address}: cannot clear its suspect mark: {e}");
                    }
                });
            }
        }
        Err(why) => {
            if router.borrow_mut().no_answer(address, now) {
                log::warn!(
                    "executor {address} did not answer job {job_id}'s call ({why}); routing leaves it out until it beats again"
                );
                let (address, why, node) = (address.to_string(), why.clone(), env.node_id.clone());
                env.store.spawn(move |s| async move {
                    if let Err(e) = s.mark_suspect(&address, now, &why, &node).await {
                        log::warn!("executor {address}: cannot share its suspect mark: {e}");
                    }
                });
            }
        }
    }
}
