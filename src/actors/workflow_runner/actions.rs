//! What users do to a run: pause and resume it, cancel it, retry it, mark a failed node
//! succeeded. Each keeps the run's id and happens under the run's row lock.

use std::collections::BTreeMap;

use super::start::{cancel_in_tx, deadline};
use super::{ActionError, Moved, RunAction};
use crate::model::{NodeKind, NodeRun, NodeState, OverlapPolicy, RunState};
use crate::store::{Store, StoreResult};
use crate::workflow::semantics::descendants;

/// Applies `action` to run `run_id` on behalf of `by`; what must follow (kills, a look at the
/// run) is in the answer.
pub(super) async fn act(
    store: &Store,
    run_id: i64,
    action: &RunAction,
    by: &str,
    now: i64,
) -> StoreResult<Result<Moved, ActionError>> {
    let mut moved = Moved::default();
    // a run that frees a slot lets a queued one start: the workflow is locked first, as a start
    // locks it, so the two never wait for each other in opposite orders (a run's workflow never
    // changes, so it is read before the transaction)
    let Some(peek) = store.get_run(run_id).await? else {
        return Ok(Err(ActionError::NotFound));
    };
    let mut tx = store.begin_run_tx().await?;
    let workflow = tx.lock_workflow(peek.workflow_id).await?;
    let Some(mut run) = tx.lock_run(run_id).await? else {
        tx.commit().await?;
        return Ok(Err(ActionError::NotFound));
    };
    let conflict = |what: &str, run: &crate::model::WorkflowRun| {
        Err(ActionError::Conflict(format!(
            "run {} is {}: {what}",
            run.id, run.state
        )))
    };
    // reopening an ended run starts it again: it counts against maxConcurrentRuns as a fire does
    let retriable = matches!(
        run.state,
        RunState::Failed | RunState::Cancelled | RunState::TimedOut
    );
    let reopens = match action {
        RunAction::Retry => retriable,
        RunAction::MarkSuccess(_) => run.state == RunState::Failed,
        _ => false,
    };
    let full = match &workflow {
        Some(w) if reopens && w.overlap_policy != OverlapPolicy::Allow => {
            let running = (tx.open_runs(w.id).await?.iter())
                .filter(|r| r.state == RunState::Running && r.id != run_id)
                .count();
            (running >= w.max_concurrent_runs.max(1) as usize).then(|| {
                format!(
                    "workflow {} has {running} run(s) running (maxConcurrentRuns {}): reopen run {run_id} when one ends",
                    w.id, w.max_concurrent_runs
                )
            })
        }
        _ => None,
    };
    let result = match (action, full) {
        (_, Some(why)) => Err(ActionError::Conflict(why)),
        (RunAction::Cancel, None) => {
            if run.state.ended() {
                conflict("only a queued or running run can be cancelled", &run)
            } else {
                cancel_in_tx(&mut tx, run_id, &format!("cancelled by {by}"), now, &mut moved).await?;
                moved.ended.push((run.workflow_id, run.id, RunState::Cancelled));
                Ok(())
            }
        }
        (RunAction::Pause | RunAction::Resume, None) => {
            let pause = matches!(action, RunAction::Pause);
            if run.state != RunState::Running {
                conflict("only a running run can be paused or resumed", &run)
            } else if run.paused == pause {
                Err(ActionError::Conflict(format!(
                    "run {} is {} already",
                    run.id,
                    if pause { "paused" } else { "not paused" }
                )))
            } else {
                run.paused = pause;
                run.message = format!("{} by {by}", if pause { "paused" } else { "resumed" });
                tx.save_run(&run, now).await?;
                if !pause {
                    moved.look_again.push(run_id);
                }
                Ok(())
            }
        }
        (RunAction::Retry, None) => {
            if !retriable {
                conflict("only a FAILED, CANCELLED or TIMED_OUT run can be retried", &run)
            } else {
                let mut nodes = node_map(tx.nodes(run_id).await?);
                let retried: Vec<String> = nodes
                    .values()
                    .filter(|n| matches!(n.state, NodeState::Failed | NodeState::Cancelled))
                    .map(|n| n.node_key.clone())
                    .collect();
                reopen(&run.definition, &mut nodes, &retried, true);
                for node in nodes.values() {
                    tx.save_node(node).await?;
                }
                run.state = RunState::Running;
                // a retry is asked to run: a pause from before it ended is over
                run.paused = false;
                if run.start_time == 0 {
                    // cancelled while queued: it starts now
                    run.start_time = now;
                }
                run.end_time = 0;
                run.alarm_status = 0;
                run.deadline = workflow.as_ref().map_or(0, |w| deadline(w, now));
                run.message = format!("retried by {by}: {}", retried.join(", "));
                tx.save_run(&run, now).await?;
                moved.look_again.push(run_id);
                Ok(())
            }
        }
        (RunAction::MarkSuccess(_), None) if !matches!(run.state, RunState::Running | RunState::Failed) => {
            conflict("a node can be marked succeeded in a RUNNING or FAILED run (retry a cancelled or timed-out one)", &run)
        }
        (RunAction::MarkSuccess(key), None) => {
            let mut nodes = node_map(tx.nodes(run_id).await?);
            match nodes.get_mut(key) {
                None => Err(ActionError::NoNode(key.clone())),
                Some(node) if node.state != NodeState::Failed => Err(ActionError::Conflict(format!(
                    "node {key} of run {run_id} is {}: only a FAILED node can be marked succeeded",
                    node.state
                ))),
                // its edges follow its true or false, which a mark would not give: every branch
                // after it would be skipped
                Some(_) if run.definition.node(key).is_some_and(|n| n.kind == NodeKind::Decision) => {
                    Err(ActionError::Conflict(format!(
                        "node {key} of run {run_id} is a DECISION node: it has no success to mark (retry the run to evaluate it again)"
                    )))
                }
                Some(node) => {
                    node.state = NodeState::Succeeded;
                    node.message = format!("marked succeeded by {by} (it had failed: {})", node.message);
                    node.end_time = now;
                    reopen(&run.definition, &mut nodes, std::slice::from_ref(key), false);
                    for node in nodes.values() {
                        tx.save_node(node).await?;
                    }
                    if run.state.ended() {
                        run.state = RunState::Running;
                        run.end_time = 0;
                        run.alarm_status = 0;
                        run.deadline = workflow.as_ref().map_or(0, |w| deadline(w, now));
                    }
                    run.message = format!("node {key} marked succeeded by {by}");
                    tx.save_run(&run, now).await?;
                    moved.look_again.push(run_id);
                    Ok(())
                }
            }
        }
    };
    tx.commit().await?;
    Ok(result.map(|()| moved))
}

fn node_map(nodes: Vec<NodeRun>) -> BTreeMap<String, NodeRun> {
    nodes.into_iter().map(|n| (n.node_key.clone(), n)).collect()
}

/// Opens `keys` again (when `themselves`) and the nodes below them that were skipped or
/// cancelled, so the rules decide them anew; what succeeded stays.
fn reopen(
    def: &crate::model::Definition,
    nodes: &mut BTreeMap<String, NodeRun>,
    keys: &[String],
    themselves: bool,
) {
    let below = descendants(def, keys);
    for node in nodes.values_mut() {
        let own = themselves && keys.contains(&node.node_key);
        let downstream = below.contains(&node.node_key)
            && matches!(node.state, NodeState::Skipped | NodeState::Cancelled);
        if own || downstream {
            node.state = NodeState::Waiting;
            node.base_attempt = node.attempt;
            node.retry_at = 0;
            node.end_time = 0;
            node.message = String::new();
        }
    }
}
