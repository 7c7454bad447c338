//! Alarms of workflow runs that ended FAILED or TIMED_OUT, through the job alarm channels to the
//! workflow's own addresses. Each run is claimed with a compare-and-set on its `alarm_status`
//! (0 → -1), so one admin of a cluster sends it, once.

use crate::alarm::{AlarmEvent, Alarmer};
use crate::model::{alarm_status, NodeState};
use crate::store::{ActorStore, StoreResult};

/// Runs alarmed per pass.
const ALARM_BATCH: i64 = 20;

/// What one pass did: alarms delivered (or with nothing to send) and alarms a channel failed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct AlarmPass {
    pub(super) sent: usize,
    pub(super) failed: usize,
}

/// Claims and alarms the runs waiting for their alarm; the database through `store`'s tasks,
/// the channels on the caller's thread (they are not `Send`).
pub(super) async fn alarm_pass(store: &ActorStore, alarmer: &Alarmer) -> StoreResult<AlarmPass> {
    let mut pass = AlarmPass::default();
    let runs = store
        .run(|s| async move { s.runs_to_alarm(ALARM_BATCH).await })
        .await?;
    for run in runs {
        let id = run.id;
        let claimed = store
            .run(move |s| async move {
                if !s
                    .set_run_alarm_status(id, alarm_status::DEFAULT, alarm_status::LOCKED)
                    .await?
                {
                    return Ok(None); // another admin has it
                }
                let Some(w) = s.get_workflow(run.workflow_id).await? else {
                    return Ok(Some((run, None)));
                };
                let group = s.get_group(run.job_group).await?;
                let failed: Vec<String> = s
                    .run_nodes(id)
                    .await?
                    .into_iter()
                    .filter(|n| n.state == NodeState::Failed)
                    .map(|n| n.node_key)
                    .collect();
                let event = AlarmEvent::of_workflow_run(&w, &run, group, failed);
                Ok(Some((run, Some(event))))
            })
            .await?;
        let Some((_, event)) = claimed else {
            continue;
        };
        let status = match event {
            None => alarm_status::NOT_NEEDED,
            Some(event) => alarmer.raise(&event).await.status(),
        };
        match status {
            alarm_status::SENT => pass.sent += 1,
            alarm_status::FAILED => pass.failed += 1,
            _ => {}
        }
        store
            .run(move |s| async move {
                s.set_run_alarm_status(id, alarm_status::LOCKED, status)
                    .await
            })
            .await?;
    }
    Ok(pass)
}
