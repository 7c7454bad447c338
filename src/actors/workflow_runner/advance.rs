//! Runs moved on in batches, one transaction holding the batch's run row locks: node results
//! read from their run rows, retries, skips, DECISION nodes evaluated, JOB nodes claimed (their
//! run rows inserted, all in one statement) and the runs' ends. What must happen outside the
//! database (calls to executors) is returned for the caller to do once the transaction has
//! committed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::{Engine, KillOrder, Moved};
use crate::actors::fire::Resend;
use crate::actors::timing_rules::NODE_DEAD_AFTER_MS;
use crate::actors::trigger::{NodeFire, Trigger};
use crate::model::{
    Definition, JobInfo, NewRunRow, NodeDef, NodeKind, NodeRun, NodeState, RunState, TriggerType,
    WorkflowRun, EXECUTOR_PARAM_MAX,
};
use crate::store::{NodeLog, NodeLogRow, Store, StoreResult};
use crate::workflow::context::{
    cut_by_executor, merged, output_of, substitute, EXECUTOR_MESSAGE_CUT,
};
use crate::workflow::decision;
use crate::workflow::semantics::{end_state, next_steps, NodeStand};

/// A run row's trigger or handle code that means success.
const OK: i32 = 200;

/// The state and decision of every node, as the rules read them.
pub(super) fn stands(nodes: &[NodeRun]) -> BTreeMap<String, NodeStand> {
    nodes
        .iter()
        .map(|n| {
            (
                n.node_key.clone(),
                NodeStand {
                    state: n.state,
                    decision: n.decision,
                },
            )
        })
        .collect()
}

/// A trigger message made readable: tags gone, breaks as separators.
pub(crate) fn plain(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_tag = false;
    let spaced = message.replace("<br>", " · ");
    for c in spaced.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = out.split_whitespace().collect();
    words.join(" ")
}

/// The last part of a trigger message: what the executor (or the route) said.
fn trigger_failure(log: &NodeLog) -> String {
    let text = plain(log.trigger_msg.as_deref().unwrap_or_default());
    let tail = text.rsplit(" · ").take(3).collect::<Vec<_>>();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    format!(
        "its trigger failed (code {}): {}",
        log.trigger_code,
        tail.join(" · ")
    )
}

/// A JOB node attempt claimed by a batch, fired once its run row's id is known.
struct Claim {
    /// The run's place in the batch.
    run: usize,
    node_key: String,
    job_id: i32,
    param: String,
    timeout_secs: Option<i32>,
}

/// One run of a batch with its nodes, before and after.
struct Moving {
    run: WorkflowRun,
    run_before: WorkflowRun,
    nodes: BTreeMap<String, NodeRun>,
    before: BTreeMap<String, NodeRun>,
}

/// Moves the RUNNING runs among `run_ids` on as far as their nodes allow, in one transaction
/// holding their row locks (see the module's doc): reads in bulk, claims every node attempt
/// that may fire with one insert, writes the nodes in bulk. `live_owners` are the admins beating
/// now (a node claimed by one that is not and never called is sent again).
pub(super) async fn advance_batch(
    store: &Store,
    engine: &Engine,
    run_ids: &[i64],
    live_owners: &HashSet<String>,
    now: i64,
) -> StoreResult<Moved> {
    let mut moved = Moved::default();
    let mut tx = store.begin_run_tx().await?;
    let runs = tx.lock_running(run_ids).await?;
    if runs.is_empty() {
        tx.commit().await?;
        return Ok(moved);
    }
    let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    let mut nodes_by_run: HashMap<i64, BTreeMap<String, NodeRun>> = HashMap::new();
    for n in tx.nodes_of(&ids).await? {
        nodes_by_run
            .entry(n.run_id)
            .or_default()
            .insert(n.node_key.clone(), n);
    }
    let running: Vec<i64> = nodes_by_run
        .values()
        .flat_map(|nodes| nodes.values())
        .filter(|n| n.state == NodeState::Running && n.log_id > 0)
        .map(|n| n.log_id)
        .collect();
    let logs = tx.node_logs(&running).await?;
    let mut job_ids: Vec<i32> = runs
        .iter()
        .flat_map(|r| r.definition.nodes.iter().filter_map(|n| n.job_id))
        .collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let jobs: HashMap<i32, Arc<JobInfo>> = tx
        .jobs(&job_ids)
        .await?
        .into_iter()
        .map(|j| (j.id, Arc::new(j)))
        .collect();

    let mut batch: Vec<Moving> = Vec::with_capacity(runs.len());
    let mut claims: Vec<Claim> = Vec::new();
    let mut handled: Vec<i64> = Vec::new();
    for mut run in runs {
        let mut nodes = nodes_by_run.remove(&run.id).unwrap_or_default();
        let before = nodes.clone();
        let run_before = run.clone();
        let def = run.definition.clone();
        let look = Look {
            engine,
            jobs: &jobs,
            logs: &logs,
            live_owners,
            now,
        };
        collect_results(&look, &def, &mut run, &mut nodes, &mut moved, &mut handled);
        if run.deadline > 0 && now >= run.deadline {
            time_out(&mut run, &mut nodes, now, &mut moved);
        } else {
            decide(&look, &def, &mut run, &mut nodes, batch.len(), &mut claims);
        }
        batch.push(Moving {
            run_before,
            run,
            nodes,
            before,
        });
    }

    // a resent call carries the parameter its run row was written with
    let resent: Vec<i64> = (moved.fires.iter())
        .filter_map(|t| Some(t.resend.as_ref()?.log_id))
        .collect();
    if !resent.is_empty() {
        let params = tx.log_params(&resent).await?;
        for t in &mut moved.fires {
            if let Some(resend) = &t.resend {
                let param = params.get(&resend.log_id).cloned().unwrap_or_default();
                t.executor_param = Some(param);
            }
        }
    }

    // every attempt claimed: one insert of their run rows, then their triggers
    let rows: Vec<NodeLogRow> = claims
        .iter()
        .map(|c| {
            let run = &batch[c.run].run;
            let job = &jobs[&c.job_id];
            let attempt = batch[c.run].nodes[&c.node_key].attempt;
            NodeLogRow {
                row: NewRunRow {
                    job_group: job.job_group,
                    job_id: job.id,
                    trigger_type: TriggerType::Workflow,
                    schedule_time: 0,
                    trigger_time: now,
                    executor_handler: Some(job.executor_handler.clone()),
                    executor_param: Some(c.param.clone()),
                    executor_sharding_param: None,
                    executor_fail_retry_count: 0,
                    trigger_msg: Some(format!(
                        "Trigger type：Workflow node trigger<br>Workflow run：{}<br>Node：{} (attempt {attempt})<br>",
                        run.id, c.node_key
                    )),
                },
                run_id: run.id,
                node_key: c.node_key.clone(),
                attempt,
            }
        })
        .collect();
    let log_ids = tx.insert_node_logs(&rows).await?;
    for (claim, log_id) in claims.into_iter().zip(log_ids) {
        let moving = &mut batch[claim.run];
        let Some(node) = moving.nodes.get_mut(&claim.node_key) else {
            continue;
        };
        node.log_id = log_id;
        node.log_ids.push(log_id);
        let mut t = Trigger::new(claim.job_id, TriggerType::Workflow, 0);
        t.executor_param = Some(claim.param);
        t.fail_retry_count = Some(0);
        t.node = Some(NodeFire {
            log_id,
            run_id: moving.run.id,
            timeout_secs: claim.timeout_secs,
            context: Arc::from(moving.run.context.as_str()),
            job: jobs[&claim.job_id].clone(),
        });
        moved.fires.push(t);
    }

    let mut changed: Vec<&NodeRun> = Vec::new();
    // runs whose row must be written: changed, or looked at for nothing (its update time
    // moves on, so the stale look waits again); a run whose nodes alone moved keeps its row
    let mut to_save: Vec<&WorkflowRun> = Vec::new();
    for m in &batch {
        let nodes_before = changed.len();
        for (key, node) in &m.nodes {
            let was = m.before.get(key);
            if was == Some(node) {
                continue;
            }
            changed.push(node);
            if node.state.ended() && !was.is_some_and(|b| b.state.ended()) {
                moved
                    .node_ends
                    .push((node.state, (node.end_time - node.start_time).max(0)));
            }
        }
        if m.run != m.run_before || changed.len() == nodes_before {
            to_save.push(&m.run);
        }
        if m.run.state.ended() {
            moved.ended.push((m.run.workflow_id, m.run.id, m.run.state));
        }
    }
    tx.save_nodes(&changed).await?;
    tx.save_runs(&to_save, now).await?;
    tx.logs_alarm_handled(&handled).await?;
    tx.commit().await?;
    Ok(moved)
}

/// What the rules of one batch read.
struct Look<'a> {
    engine: &'a Engine,
    jobs: &'a HashMap<i32, Arc<JobInfo>>,
    logs: &'a HashMap<i64, NodeLog>,
    live_owners: &'a HashSet<String>,
    now: i64,
}

/// Reads the run rows of RUNNING JOB nodes: an attempt that ended makes its node SUCCEEDED (its
/// output merged into the context), FAILED, or WAITING for a retry; an attempt whose admin died
/// between its claim and its call is sent again (the same run row). Run rows whose trigger
/// failed go into `handled` (they need no alarm of their own).
fn collect_results(
    look: &Look<'_>,
    def: &Definition,
    run: &mut WorkflowRun,
    nodes: &mut BTreeMap<String, NodeRun>,
    moved: &mut Moved,
    handled: &mut Vec<i64>,
) {
    let (engine, logs, now) = (look.engine, look.logs, look.now);
    // outputs are merged in the order their nodes ended
    let mut ended: Vec<(String, NodeLog)> = nodes
        .iter()
        .filter(|(_, node)| node.state == NodeState::Running)
        .filter_map(|(key, node)| {
            let log = logs.get(&node.log_id)?;
            let trigger_failed = log.trigger_code != 0 && log.trigger_code != OK;
            (log.handle_code > 0 || trigger_failed).then(|| (key.clone(), log.clone()))
        })
        .collect();
    ended.sort_by_key(|(key, log)| (log.handle_time.max(log.trigger_time), key.clone()));
    for (key, log) in ended {
        let Some(node_def) = def.node(&key) else {
            continue;
        };
        let node = nodes.get_mut(&key).expect("a node of the run");
        let success = log.handle_code == OK;
        node.end_time = if log.handle_time > 0 {
            log.handle_time
        } else {
            now
        };
        if success {
            let message = log.handle_msg.clone().unwrap_or_default();
            match output_of(&message) {
                Some(output) => match merged(&run.context, &output, engine.limits) {
                    Ok(context) => {
                        run.context = context;
                        node.output = Some(serde_json::Value::Object(output).to_string());
                        node.state = NodeState::Succeeded;
                        node.message = String::new();
                    }
                    Err(why) => {
                        node.state = NodeState::Failed;
                        node.message = why;
                    }
                },
                None if cut_by_executor(&message) => {
                    node.state = NodeState::Failed;
                    node.message = format!(
                        "its output was cut by its executor at {EXECUTOR_MESSAGE_CUT} characters (executors cut longer messages): make the output smaller"
                    );
                }
                None => {
                    node.state = NodeState::Succeeded;
                    node.message = plain(&message);
                }
            }
            continue;
        }
        let why = if log.handle_code > 0 {
            format!(
                "its run failed (code {}): {}",
                log.handle_code,
                plain(log.handle_msg.as_deref().unwrap_or_default())
            )
        } else {
            handled.push(log.id);
            trigger_failure(&log)
        };
        let job = node_def.job_id.and_then(|id| look.jobs.get(&id));
        let retries = node_def
            .retries
            .or(job.map(|j| j.executor_fail_retry_count))
            .unwrap_or(0);
        if node.attempt - node.base_attempt <= retries {
            let interval = job.map_or(0, |j| j.retry_interval_secs.max(0)) as i64;
            node.state = NodeState::Waiting;
            node.retry_at = now + interval * 1_000;
            node.message = format!(
                "attempt {} failed: {why}; retry {} of {retries}",
                node.attempt,
                node.attempt - node.base_attempt
            );
        } else {
            node.state = NodeState::Failed;
            node.message = why;
        }
    }

    // a claimed attempt whose call never went out: its admin died after the claim
    let timed_out = run.deadline > 0 && now >= run.deadline;
    for node in nodes.values_mut() {
        if node.state != NodeState::Running || node.log_id == 0 {
            continue;
        }
        let Some(log) = logs.get(&node.log_id) else {
            // no result can come to a row that is gone: left RUNNING, it would hold the run
            log::warn!(
                "workflow run {} node {}: its run row {} was deleted while it ran",
                run.id,
                node.node_key,
                node.log_id
            );
            node.state = NodeState::Failed;
            node.end_time = now;
            node.message =
                "its run row was deleted while it ran (a log clean-up or its job's deletion)"
                    .into();
            continue;
        };
        // a run past its deadline is ended below: nothing of it is sent again
        if log.trigger_code != 0 || timed_out {
            continue;
        }
        let waiting = now - node.start_time;
        let owner_gone = !look.live_owners.contains(&node.owner);
        let lost_here = node.owner == *engine.node_id && waiting > super::RESEND_OWN_AFTER_MS;
        if !(waiting > super::RESEND_AFTER_MS && (owner_gone || lost_here)) {
            // no outcome yet: most likely the call is in flight; if not, it is sent again later
            let at = (node.start_time + super::RESEND_AFTER_MS + 1).max(now + NODE_DEAD_AFTER_MS);
            moved.look_at.push((run.id, at));
            continue;
        }
        let mut fire = match resend_fire(run, def, node, look.jobs) {
            Ok(fire) => fire,
            Err(why) => {
                // left RUNNING, it would wait for a call that never goes out
                log::warn!(
                    "workflow run {} node {}: attempt {} (log {}) cannot be sent again: {why}",
                    run.id,
                    node.node_key,
                    node.attempt,
                    node.log_id
                );
                node.state = NodeState::Failed;
                node.end_time = now;
                node.message = format!("its attempt could not be sent again: {why}");
                continue;
            }
        };
        // its executor may have it (the admin died after the call): asked first, as a
        // taken-over job fire is
        fire.resend = Some(Resend {
            log_id: node.log_id,
            trigger_time: log.trigger_time,
        });
        log::warn!(
            "workflow run {} node {}: attempt {} (log {}) was claimed by admin {} whose call's answer is not recorded: sending it again under its log id",
            run.id,
            node.node_key,
            node.attempt,
            node.log_id,
            node.owner
        );
        node.owner = engine.node_id.to_string();
        node.start_time = now;
        moved.fires.push(fire);
    }
}

/// The trigger that sends `node`'s current attempt again (its run row exists), or why it cannot
/// be had. Its parameter is the one its run row was written with, filled in by the batch: made
/// anew, it could differ (the context moved on) or fail where the stored one is fine.
fn resend_fire(
    run: &WorkflowRun,
    def: &Definition,
    node: &NodeRun,
    jobs: &HashMap<i32, Arc<JobInfo>>,
) -> Result<Trigger, String> {
    let node_def = def
        .node(&node.node_key)
        .ok_or("the run's definition has no such node")?;
    let job = job_of_run(run, node_def, jobs)?;
    let mut t = Trigger::new(job.id, TriggerType::Workflow, 0);
    t.fail_retry_count = Some(0);
    t.node = Some(NodeFire {
        log_id: node.log_id,
        run_id: run.id,
        timeout_secs: node_def.timeout_secs,
        context: Arc::from(run.context.as_str()),
        job: job.clone(),
    });
    Ok(t)
}

/// The job a JOB node runs, when it still exists in the run's executor group: a job moved to
/// another group since the run started is not run with the run's parameters on that group's
/// executors.
fn job_of_run<'a>(
    run: &WorkflowRun,
    node_def: &NodeDef,
    jobs: &'a HashMap<i32, Arc<JobInfo>>,
) -> Result<&'a Arc<JobInfo>, String> {
    let id = node_def.job_id.unwrap_or(0);
    match jobs.get(&id) {
        None => Err(format!("job {id} does not exist any more")),
        Some(job) if job.job_group != run.job_group => Err(format!(
            "job {id} is not in the run's executor group ({}) any more",
            run.job_group
        )),
        Some(job) => Ok(job),
    }
}

/// Skips what will never run, evaluates DECISION nodes and claims the JOB nodes that may run
/// now (none while the run is paused), into `claims` for run `at` of the batch; ends the run
/// when nothing more can run.
fn decide(
    look: &Look<'_>,
    def: &Definition,
    run: &mut WorkflowRun,
    nodes: &mut BTreeMap<String, NodeRun>,
    at: usize,
    claims: &mut Vec<Claim>,
) {
    let now = look.now;
    loop {
        let list: Vec<NodeRun> = nodes.values().cloned().collect();
        let steps = next_steps(def, &stands(&list));
        for key in &steps.skip {
            if let Some(node) = nodes.get_mut(key) {
                node.state = NodeState::Skipped;
                node.end_time = now;
                node.message = "its in-edges do not let it run".into();
            }
        }
        let mut evaluated = false;
        for key in &steps.run {
            let (Some(node_def), Some(node)) = (def.node(key), nodes.get_mut(key)) else {
                continue;
            };
            if node.ready_time == 0 {
                node.ready_time = now;
            }
            if run.paused || (node.retry_at > 0 && node.retry_at > now) {
                continue;
            }
            match node_def.kind {
                NodeKind::Decision => {
                    evaluate(node_def, node, run, now);
                    evaluated = true;
                }
                NodeKind::Job => {
                    if let Some(claim) = claim_job(look, node_def, node, run, at) {
                        claims.push(claim);
                    }
                    evaluated |= node.state.ended();
                }
            }
        }
        if !evaluated && steps.skip.is_empty() {
            break;
        }
    }
    let list: Vec<NodeRun> = nodes.values().cloned().collect();
    if let Some(state) = end_state(def, &stands(&list)) {
        run.state = state;
        run.end_time = now;
        let failed: Vec<&str> = list
            .iter()
            .filter(|n| n.state == NodeState::Failed)
            .map(|n| n.node_key.as_str())
            .collect();
        run.message = match (state, failed.is_empty()) {
            (RunState::Succeeded, true) => "every node that ran succeeded".into(),
            (RunState::Succeeded, false) => {
                format!("succeeded; handled failures of {}", failed.join(", "))
            }
            _ => format!(
                "failed: {} failed with no FAILURE or ALWAYS edge",
                failed.join(", ")
            ),
        };
        if state == RunState::Succeeded {
            run.alarm_status = crate::model::alarm_status::NOT_NEEDED;
        }
    }
}

/// A DECISION node: its expression over the context; SUCCEEDED with the result, or FAILED.
fn evaluate(node_def: &NodeDef, node: &mut NodeRun, run: &WorkflowRun, now: i64) {
    node.attempt += 1;
    node.start_time = now;
    node.end_time = now;
    let expression = node_def.expression.as_deref().unwrap_or_default();
    match decision::evaluate(expression, &run.context, &run.params) {
        Ok(result) => {
            node.state = NodeState::Succeeded;
            node.decision = Some(result);
            node.message = format!("{expression} → {result}");
        }
        Err(why) => {
            node.state = NodeState::Failed;
            node.decision = None;
            node.message = why;
        }
    }
}

/// A JOB node that may run: RUNNING in its next attempt, whose run row the batch inserts (the
/// claim); or FAILED when its job or parameter cannot be had.
fn claim_job(
    look: &Look<'_>,
    node_def: &NodeDef,
    node: &mut NodeRun,
    run: &WorkflowRun,
    at: usize,
) -> Option<Claim> {
    let now = look.now;
    let fail = |node: &mut NodeRun, why: String| {
        node.state = NodeState::Failed;
        node.start_time = now;
        node.end_time = now;
        node.message = why;
    };
    let job = match job_of_run(run, node_def, look.jobs) {
        Ok(job) => job,
        Err(why) => {
            fail(node, why);
            return None;
        }
    };
    let param = match node_def.params.as_deref() {
        Some(p) => match substitute(p, &run.context, &run.params, EXECUTOR_PARAM_MAX) {
            Ok(p) => p,
            Err(why) => {
                fail(node, format!("params: {why}"));
                return None;
            }
        },
        None => job.executor_param.clone(),
    };
    node.attempt += 1;
    node.state = NodeState::Running;
    node.log_id = 0;
    node.owner = look.engine.node_id.to_string();
    node.start_time = now;
    node.end_time = 0;
    node.retry_at = 0;
    node.output = None;
    Some(Claim {
        run: at,
        node_key: node.node_key.clone(),
        job_id: job.id,
        param,
        timeout_secs: node_def.timeout_secs,
    })
}

/// The run's timeout passed: it ends TIMED_OUT, its waiting nodes are cancelled and its running
/// ones killed on their executors.
fn time_out(
    run: &mut WorkflowRun,
    nodes: &mut BTreeMap<String, NodeRun>,
    now: i64,
    moved: &mut Moved,
) {
    stop_nodes(nodes, now, "the run timed out", moved);
    run.state = RunState::TimedOut;
    run.end_time = now;
    run.message = format!(
        "timed out: still running {} s after it started",
        (now - run.start_time) / 1_000
    );
}

/// Cancels a run's open nodes: WAITING ones at once, RUNNING ones after a kill on their
/// executor (queued in `moved`).
pub(super) fn stop_nodes(
    nodes: &mut BTreeMap<String, NodeRun>,
    now: i64,
    why: &str,
    moved: &mut Moved,
) {
    for node in nodes.values_mut() {
        match node.state {
            NodeState::Waiting => {}
            NodeState::Running => moved.kills.push(KillOrder {
                log_id: node.log_id,
            }),
            _ => continue,
        }
        node.state = NodeState::Cancelled;
        node.end_time = now;
        node.retry_at = 0;
        node.message = why.to_string();
    }
}
