//! Starting runs: a fire of the schedule, a manual or API trigger, a run leaving the queue. The
//! workflow's row is locked while its open runs are counted, so two admins firing it at once
//! decide one after the other, and `maxConcurrentRuns` holds across the cluster.

use std::collections::{BTreeMap, HashMap};

use super::advance::stop_nodes;
use super::{Moved, StartOutcome};
use crate::model::{
    OverlapPolicy, RunState, TriggerType, Workflow, WorkflowRun, TRIGGER_STATUS_RUNNING,
};
use crate::store::{FireClaim, RunTx, Store, StoreError, StoreResult};

/// What one fire asks for.
#[derive(Debug, Clone)]
pub struct FireRequest {
    /// The workflow.
    pub workflow_id: i32,
    /// CRON, MISFIRE, MANUAL or API.
    pub trigger_type: TriggerType,
    /// `${workflow.params}`.
    pub params: String,
    /// The fire time it stands for (0 for manual and API runs).
    pub schedule_time: i64,
}

/// A new run of `w`, in `state`, saying `message`.
fn new_run(
    w: &Workflow,
    req: &FireRequest,
    state: RunState,
    message: String,
    now: i64,
) -> WorkflowRun {
    let running = state == RunState::Running;
    WorkflowRun {
        id: 0,
        workflow_id: w.id,
        job_group: w.job_group,
        version: w.version,
        definition: std::sync::Arc::new(w.definition.clone()),
        state,
        paused: false,
        trigger_type: req.trigger_type,
        params: req.params.clone(),
        context: "{}".into(),
        message,
        schedule_time: req.schedule_time,
        create_time: now,
        start_time: if running { now } else { 0 },
        end_time: if state.ended() { now } else { 0 },
        deadline: if running { deadline(w, now) } else { 0 },
        alarm_status: if state == RunState::Skipped {
            crate::model::alarm_status::NOT_NEEDED
        } else {
            0
        },
    }
}

/// When a run of `w` started at `now` times out (0: never).
pub(super) fn deadline(w: &Workflow, now: i64) -> i64 {
    if w.run_timeout_secs > 0 {
        now + w.run_timeout_secs as i64 * 1_000
    } else {
        0
    }
}

/// Starts a run of the workflow `w` (locked in `tx` by the caller) as its overlap policy says;
/// a run it cancels to make room is recorded in `moved`.
pub(super) async fn start_in_tx(
    tx: &mut RunTx,
    w: &Workflow,
    req: &FireRequest,
    now: i64,
    moved: &mut Moved,
) -> StoreResult<StartOutcome> {
    let open = tx.open_runs(w.id).await?;
    // runs waiting in the queue go before this one: a fire never overtakes them (a slot may be
    // free for a moment: a run ended, or maxConcurrentRuns was raised)
    let from_queue = start_from_queue(tx, w, &open, now).await?;
    let running: Vec<&WorkflowRun> = open
        .iter()
        .filter(|r| r.state == RunState::Running || from_queue.contains(&r.id))
        .collect();
    let queued = open.iter().filter(|r| r.state == RunState::Queued).count() - from_queue.len();
    moved.look_again.extend(from_queue);
    let (state, message) = match start_state(w, running.len(), queued, req) {
        Start::As(state, message) => (state, message),
        Start::CancelOldest(busy) => {
            let oldest = running[0].id;
            cancel_in_tx(
                tx,
                oldest,
                "cancelled to make room for a newer run (overlap policy CANCEL_OLD)",
                now,
                moved,
            )
            .await?;
            moved.ended.push((w.id, oldest, RunState::Cancelled));
            (
                RunState::Running,
                format!("started after cancelling run {oldest}: {busy}"),
            )
        }
    };
    let run = new_run(w, req, state, message, now);
    let run_id = tx.insert_run(&run, now).await?;
    Ok(started(w, req, run_id, run))
}

/// How a fire starts beside `running` RUNNING and `queued` QUEUED runs (none of them leaving
/// the queue now).
enum Start {
    /// A new run in this state, with this message.
    As(RunState, String),
    /// The oldest running run is cancelled first (CANCEL_OLD); why, in words.
    CancelOldest(String),
}

/// What `w`'s overlap policy makes of a fire (see [`Start`]).
fn start_state(w: &Workflow, running: usize, queued: usize, req: &FireRequest) -> Start {
    let max = w.max_concurrent_runs.max(1) as usize;
    if running < max {
        return Start::As(
            RunState::Running,
            format!("started ({})", req.trigger_type.title()),
        );
    }
    let busy = format!(
        "{running} run(s) already running (maxConcurrentRuns {})",
        w.max_concurrent_runs
    );
    match w.overlap_policy {
        OverlapPolicy::Skip => Start::As(
            RunState::Skipped,
            format!("skipped: {busy}; overlap policy SKIP"),
        ),
        OverlapPolicy::Queue if queued >= w.queue_max.max(0) as usize => Start::As(
            RunState::Skipped,
            format!(
                "skipped: {busy} and the queue is full ({queued} waiting, queueMax {})",
                w.queue_max
            ),
        ),
        OverlapPolicy::Queue => Start::As(
            RunState::Queued,
            format!("queued: {busy}; {queued} waiting before it"),
        ),
        OverlapPolicy::CancelOld => Start::CancelOldest(busy),
        OverlapPolicy::Allow => Start::As(
            RunState::Running,
            format!("started beside {busy}; overlap policy ALLOW"),
        ),
    }
}

/// The outcome of `run`, inserted as `run_id`, logged.
fn started(w: &Workflow, req: &FireRequest, run_id: i64, run: WorkflowRun) -> StartOutcome {
    // a skip is news to an operator; a start of a frequent schedule is not
    let level = match run.state {
        RunState::Running | RunState::Queued => log::Level::Debug,
        _ => log::Level::Info,
    };
    log::log!(
        level,
        "workflow {} ({}): run {run_id} {} by {}: {}",
        w.id,
        w.name,
        run.state,
        req.trigger_type,
        run.message
    );
    StartOutcome {
        run_id,
        state: run.state,
        message: run.message,
    }
}

/// Ends run `run_id` as CANCELLED in `tx` (its open nodes cancelled, the running ones to kill).
pub(super) async fn cancel_in_tx(
    tx: &mut RunTx,
    run_id: i64,
    why: &str,
    now: i64,
    moved: &mut Moved,
) -> StoreResult<Option<WorkflowRun>> {
    let Some(mut run) = tx.lock_run(run_id).await? else {
        return Ok(None);
    };
    if run.state.ended() {
        return Ok(Some(run));
    }
    let mut nodes: BTreeMap<String, _> = tx
        .nodes(run_id)
        .await?
        .into_iter()
        .map(|n| (n.node_key.clone(), n))
        .collect();
    let before = nodes.clone();
    stop_nodes(&mut nodes, now, why, moved);
    for (key, node) in &nodes {
        if before.get(key) != Some(node) {
            tx.save_node(node).await?;
        }
    }
    run.state = RunState::Cancelled;
    run.end_time = now;
    run.message = why.to_string();
    run.alarm_status = crate::model::alarm_status::NOT_NEEDED;
    tx.save_run(&run, now).await?;
    Ok(Some(run))
}

/// Starts a run of workflow `req.workflow_id` now, as its overlap policy says; `None` when the
/// workflow does not exist.
pub(super) async fn start_run(
    store: &Store,
    req: &FireRequest,
    now: i64,
) -> StoreResult<Option<(StartOutcome, Moved)>> {
    let mut moved = Moved::default();
    let mut tx = store.begin_run_tx().await?;
    let Some(w) = tx.lock_workflow(req.workflow_id).await? else {
        tx.commit().await?;
        return Ok(None);
    };
    let outcome = start_in_tx(&mut tx, &w, req, now, &mut moved).await?;
    tx.commit().await?;
    Ok(Some((outcome, moved)))
}

/// Starts the oldest QUEUED runs of `workflow_id` while its running ones are fewer than its
/// `maxConcurrentRuns`; the runs started.
pub(super) async fn start_queued(
    store: &Store,
    workflow_id: i32,
    now: i64,
) -> StoreResult<Vec<i64>> {
    let mut tx = store.begin_run_tx().await?;
    let Some(w) = tx.lock_workflow(workflow_id).await? else {
        tx.commit().await?;
        return Ok(Vec::new());
    };
    let open = tx.open_runs(workflow_id).await?;
    let started = start_from_queue(&mut tx, &w, &open, now).await?;
    tx.commit().await?;
    Ok(started)
}

/// Starts the queued runs among `open` (the workflow's open runs, oldest first) while `w` has
/// room for them, oldest first; their ids.
async fn start_from_queue(
    tx: &mut RunTx,
    w: &Workflow,
    open: &[WorkflowRun],
    now: i64,
) -> StoreResult<Vec<i64>> {
    let mut running = open.iter().filter(|r| r.state == RunState::Running).count();
    let mut started = Vec::new();
    for queued in open.iter().filter(|r| r.state == RunState::Queued) {
        if running >= w.max_concurrent_runs.max(1) as usize {
            break;
        }
        let Some(mut run) = tx.lock_run(queued.id).await? else {
            continue;
        };
        run.state = RunState::Running;
        run.start_time = now;
        run.deadline = deadline(w, now);
        run.message = format!("{}; started from the queue", run.message);
        tx.save_run(&run, now).await?;
        running += 1;
        started.push(run.id);
    }
    Ok(started)
}

/// The schedule's due fires: each workflow's fire time claimed (moved on) and, unless missed
/// past the misfire window under DO_NOTHING, a run started; up to [`FIRES_PER_TX`] workflows
/// in one transaction.
pub(super) async fn fire_due(
    store: &Store,
    default_tz: chrono_tz::Tz,
    now: i64,
) -> StoreResult<Vec<(StartOutcome, Moved)>> {
    let mut started = Vec::new();
    // page on until no more are due: a fired workflow's next fire time leaves the window
    for _ in 0..DUE_PAGES {
        let fired = async {
            let page = store.due_workflows(now, DUE_PAGE).await?;
            let last = page.len() < DUE_PAGE as usize;
            for chunk in page.chunks(FIRES_PER_TX) {
                // a fire that may lock another run (CANCEL_OLD's cancel, a queued run's start)
                // goes alone: in a batch, that lock, taken out of run-id order, could close a
                // cycle with a move's locks
                let (alone, together): (Vec<&Workflow>, Vec<&Workflow>) =
                    chunk.iter().partition(|w| {
                        matches!(
                            w.overlap_policy,
                            OverlapPolicy::CancelOld | OverlapPolicy::Queue
                        )
                    });
                started.extend(fire_chunk(store, default_tz, now, &together).await?);
                for w in alone {
                    started.extend(fire_chunk(store, default_tz, now, &[w]).await?);
                }
            }
            Ok::<bool, StoreError>(last)
        };
        match fired.await {
            Ok(true) => break,
            Ok(false) => {}
            // what committed is followed up (its runs moved on, its kills sent); the rest of
            // the due fires wait for the next pass
            Err(e) if !started.is_empty() => {
                log::warn!(
                    "workflow fires stopped after {} ({e}); the rest next pass",
                    started.len()
                );
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(started)
}

/// Workflows read per page of due ones.
const DUE_PAGE: i64 = 200;
/// Pages of due workflows fired per pass; the rest wait for the next second.
const DUE_PAGES: usize = 20;
/// Due workflows fired in one transaction: the fires of a busy second share their commits (a
/// transaction per fire was a tenth of the admin's CPU with 200 workflows a second), while
/// SQLite's one writer is held a few milliseconds at a time, between the runs' moves.
const FIRES_PER_TX: usize = 50;

/// Fires `dues` in one transaction; when the database refuses that, each on its own, so one
/// workflow's failure does not hold back the others' fires. A second failure among them ends
/// the chunk: a database that is busy (a lock wait that timed out) would make each single wait
/// as long again.
async fn fire_chunk(
    store: &Store,
    default_tz: chrono_tz::Tz,
    now: i64,
    dues: &[&Workflow],
) -> StoreResult<Vec<(StartOutcome, Moved)>> {
    if dues.is_empty() {
        return Ok(Vec::new());
    }
    let e = match fire_in_one_tx(store, default_tz, now, dues).await {
        Ok(started) => return Ok(started),
        Err(e) if dues.len() == 1 || e.is_outage() => return Err(e),
        Err(e) => e,
    };
    log::warn!(
        "{} due workflows not fired together ({e}): one by one",
        dues.len()
    );
    let mut started = Vec::new();
    let mut failed = false;
    for due in dues {
        match fire_in_one_tx(store, default_tz, now, &[*due]).await {
            Ok(one) => started.extend(one),
            Err(e) if e.is_outage() || failed => {
                // nothing fired: the caller hears why; else what fired is followed up
                if started.is_empty() {
                    return Err(e);
                }
                log::warn!(
                    "workflow {}: its due fire failed: {e}; the rest of its chunk next pass",
                    due.id
                );
                return Ok(started);
            }
            Err(e) => {
                log::error!("workflow {}: its due fire failed: {e}", due.id);
                failed = true;
            }
        }
    }
    Ok(started)
}

/// Fires `dues` in one transaction, in id order (the order every writer locks workflows in).
async fn fire_in_one_tx(
    store: &Store,
    default_tz: chrono_tz::Tz,
    now: i64,
    dues: &[&Workflow],
) -> StoreResult<Vec<(StartOutcome, Moved)>> {
    let mut order: Vec<&Workflow> = dues.to_vec();
    order.sort_by_key(|w| w.id);
    let mut tx = store.begin_run_tx().await?;
    let fired = match order[..] {
        [due] => vec![fire_one(&mut tx, default_tz, now, due).await?],
        _ => fire_together(&mut tx, default_tz, now, &order).await?,
    };
    tx.commit().await?;
    let mut started = Vec::with_capacity(fired.len());
    for fire in fired {
        match fire {
            Fire::Started(outcome, moved) => started.push((outcome, moved)),
            Fire::Missed { id, name, late_ms } => log::warn!(
                "workflow {id} ({name}): fire time missed by {} s; DO_NOTHING skips it",
                late_ms / 1_000
            ),
            Fire::Taken => {}
        }
    }
    Ok(started)
}

/// What a due fire came to.
enum Fire {
    /// A run started, queued or skipped.
    Started(StartOutcome, Moved),
    /// Missed past the misfire window under DO_NOTHING: its fire time moved on, no run.
    Missed { id: i32, name: String, late_ms: i64 },
    /// Another admin fired it, or it was edited, stopped or deleted meanwhile.
    Taken,
}

/// A due workflow's fire time, whether it is missed (past the misfire window), and the next
/// fire time after it (after now for a misfire; none stops the schedule).
fn due_times(w: &Workflow, default_tz: chrono_tz::Tz, now: i64) -> (i64, bool, Option<i64>) {
    use crate::actors::timing_rules::MISFIRE_AFTER_MS;
    use crate::timing::{next_fire_time, parse_timezone};
    let tz = parse_timezone(&w.timezone, default_tz).unwrap_or(default_tz);
    let fire_time = w.trigger_next_time;
    let late = now - fire_time > MISFIRE_AFTER_MS;
    let from = if late { now } else { fire_time };
    let next = match next_fire_time(w.schedule_type, &w.schedule_conf, tz, from) {
        Ok(next) => next,
        Err(e) => {
            log::warn!(
                "workflow {}: its schedule cannot be read ({e}); stopping it",
                w.id
            );
            None
        }
    };
    (fire_time, late, next)
}

/// The run a claimed fire time of `w` asks for, or a [`Fire::Missed`] under DO_NOTHING.
fn fire_request(
    w: &Workflow,
    fire_time: i64,
    late: bool,
    now: i64,
) -> Result<FireRequest, Box<Fire>> {
    use crate::model::MisfireStrategy;
    let trigger_type = match (late, w.misfire_strategy) {
        (false, _) => TriggerType::Cron,
        (true, MisfireStrategy::FireOnceNow) => TriggerType::Misfire,
        (true, MisfireStrategy::DoNothing) => {
            return Err(Box::new(Fire::Missed {
                id: w.id,
                name: w.name.clone(),
                late_ms: now - fire_time,
            }))
        }
    };
    Ok(FireRequest {
        workflow_id: w.id,
        trigger_type,
        params: String::new(),
        schedule_time: fire_time,
    })
}

/// Fires one due workflow in `tx`: its fire time claimed, then a run started, queued or
/// skipped (none for a misfire under DO_NOTHING).
async fn fire_one(
    tx: &mut RunTx,
    default_tz: chrono_tz::Tz,
    now: i64,
    due: &Workflow,
) -> StoreResult<Fire> {
    let Some(w) = tx.lock_workflow(due.id).await? else {
        return Ok(Fire::Taken);
    };
    // the next fire time from the schedule as it is now, not as the due read saw it
    let (fire_time, late, next) = due_times(&w, default_tz, now);
    if fire_time != due.trigger_next_time
        || !tx
            .claim_workflow_fire(w.id, fire_time, fire_time, next)
            .await?
    {
        return Ok(Fire::Taken);
    }
    let req = match fire_request(&w, fire_time, late, now) {
        Ok(req) => req,
        Err(missed) => return Ok(*missed),
    };
    let mut moved = Moved::default();
    let outcome = start_in_tx(tx, &w, &req, now, &mut moved).await?;
    Ok(Fire::Started(outcome, moved))
}

/// Fires the due workflows `dues` (in id order) in `tx` with a few statements in all: every
/// workflow locked, fire times claimed, open runs read and runs inserted together. A fire that
/// changes another run (a queued run leaving the queue, CANCEL_OLD's cancel) is made as
/// [`fire_one`] makes it.
async fn fire_together(
    tx: &mut RunTx,
    default_tz: chrono_tz::Tz,
    now: i64,
    dues: &[&Workflow],
) -> StoreResult<Vec<Fire>> {
    let ids: Vec<i32> = dues.iter().map(|w| w.id).collect();
    let mut locked: HashMap<i32, Workflow> = (tx.lock_workflows(&ids).await?)
        .into_iter()
        .map(|w| (w.id, w))
        .collect();
    let mut fires = Vec::with_capacity(dues.len());
    let mut claims = Vec::with_capacity(dues.len());
    let mut starting: Vec<(Workflow, FireRequest)> = Vec::with_capacity(dues.len());
    for due in dues {
        // the claim's rule: still enabled and still at this fire time (another admin or an
        // edit moved it otherwise)
        let Some(w) = locked.remove(&due.id).filter(|w| {
            w.trigger_status == TRIGGER_STATUS_RUNNING
                && w.trigger_next_time == due.trigger_next_time
        }) else {
            fires.push(Fire::Taken);
            continue;
        };
        // the next fire time from the schedule as it is now, not as the due read saw it
        let (fire_time, late, next) = due_times(&w, default_tz, now);
        claims.push(FireClaim {
            id: w.id,
            last: fire_time,
            next,
        });
        match fire_request(&w, fire_time, late, now) {
            Ok(req) => starting.push((w, req)),
            Err(missed) => fires.push(*missed),
        }
    }
    tx.claim_workflow_fires(&claims).await?;
    let starting_ids: Vec<i32> = starting.iter().map(|(w, _)| w.id).collect();
    let mut open = tx.open_runs_of(&starting_ids).await?;
    let mut plain: Vec<(Workflow, FireRequest, WorkflowRun)> = Vec::with_capacity(starting.len());
    for (w, req) in starting {
        let open = open.remove(&w.id).unwrap_or_default();
        let running = open.iter().filter(|r| r.state == RunState::Running).count();
        let queued = open.len() - running;
        match start_state(&w, running, queued, &req) {
            Start::As(state, message) if queued == 0 => {
                let run = new_run(&w, &req, state, message, now);
                plain.push((w, req, run));
            }
            _ => {
                let mut moved = Moved::default();
                let outcome = start_in_tx(tx, &w, &req, now, &mut moved).await?;
                fires.push(Fire::Started(outcome, moved));
            }
        }
    }
    let runs: Vec<WorkflowRun> = plain.iter().map(|(_, _, run)| run.clone()).collect();
    let run_ids = tx.insert_runs(&runs, now).await?;
    for ((w, req, run), run_id) in plain.into_iter().zip(run_ids) {
        fires.push(Fire::Started(
            started(&w, &req, run_id, run),
            Moved::default(),
        ));
    }
    Ok(fires)
}
