//! A second's due workflow fires in one transaction with a few statements in all, not a few per
//! fire: the workflows locked and their fire times claimed together, their open runs read
//! together, their new runs and the runs' nodes inserted together.

use std::collections::HashMap;

use super::rows::{bind_params, Param, RowExt};
use super::run_tx::{insert_rows_returning_ids, RunTx, ROWS_PER_WRITE};
use super::schedule::{on_tx, Tx};
use super::workflow_runs::{run_from_row_with, RUN_COLUMNS};
use super::workflows::{workflow_from_row, WORKFLOW_COLUMNS};
use super::{padded_id_list, placeholders, pow2_chunks, StoreResult};
use crate::model::{
    RunState, Workflow, WorkflowRun, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};

/// A workflow's fire time, claimed: its last fire time and its next one (none stops it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireClaim {
    /// The workflow.
    pub id: i32,
    /// The fire time claimed.
    pub last: i64,
    /// The next fire time, or `None` when its schedule has none.
    pub next: Option<i64>,
}

/// Bytes of text (definitions, parameters, contexts) one INSERT of runs carries at most, far
/// below MySQL's and MariaDB's packet limit (`max_allowed_packet`, 16 MiB by default in
/// MariaDB, 64 MiB in MySQL): a run's definition may be large.
const RUN_BYTES_PER_INSERT: usize = 4 * 1024 * 1024;

/// `items` in runs of consecutive items whose `size` adds up to at most `max` (an item larger
/// than `max` alone).
fn by_bytes<T>(items: &[T], size: impl Fn(&T) -> usize, max: usize) -> Vec<&[T]> {
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, item) in items.iter().enumerate() {
        let n = size(item);
        if i > start && bytes + n > max {
            groups.push(&items[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += n;
    }
    if start < items.len() {
        groups.push(&items[start..]);
    }
    groups
}

impl RunTx {
    /// The workflows `ids`, their rows locked until commit, in id order (the order every writer
    /// locks workflows in).
    pub async fn lock_workflows(&mut self, ids: &[i32]) -> StoreResult<Vec<Workflow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let lock = match self.tx {
            Tx::Sqlite(_) => "",
            _ => " FOR UPDATE",
        };
        let (list, params) = padded_id_list(&ids);
        let sql = format!(
            "SELECT {WORKFLOW_COLUMNS} FROM workflow WHERE id IN ({list}) ORDER BY id{lock}"
        );
        on_tx!(self, &sql, |tx, stmt| bind_params!(
            sqlx::query(stmt),
            params
        )
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(workflow_from_row)
        .collect())
    }

    /// Moves the fire times of workflows this transaction has locked and found due, one
    /// statement per chunk.
    pub async fn claim_workflow_fires(&mut self, claims: &[FireClaim]) -> StoreResult<()> {
        for chunk in pow2_chunks(claims, ROWS_PER_WRITE) {
            let cases = " WHEN ? THEN ?".repeat(chunk.len());
            let sql = format!(
                "UPDATE workflow SET trigger_last_time = CASE id{cases} END, \
                 trigger_next_time = CASE id{cases} END, trigger_status = CASE id{cases} END \
                 WHERE id IN ({})",
                placeholders(chunk.len())
            );
            let mut params: Vec<Param> = Vec::with_capacity(chunk.len() * 7);
            type Value = fn(&FireClaim) -> Param;
            let columns: [Value; 3] = [
                |c| Param::Long(c.last),
                |c| Param::Long(c.next.unwrap_or(0)),
                |c| {
                    Param::Int(match c.next {
                        Some(_) => TRIGGER_STATUS_RUNNING,
                        None => TRIGGER_STATUS_STOPPED,
                    })
                },
            ];
            for value in columns {
                for c in chunk {
                    params.push(Param::Int(c.id));
                    params.push(value(c));
                }
            }
            params.extend(chunk.iter().map(|c| Param::Int(c.id)));
            self.execute(&sql, &params).await?;
        }
        Ok(())
    }

    /// The open runs (QUEUED and RUNNING) of the workflows `ids`, by workflow, oldest first.
    pub async fn open_runs_of(
        &mut self,
        ids: &[i32],
    ) -> StoreResult<HashMap<i32, Vec<WorkflowRun>>> {
        let mut by_workflow: HashMap<i32, Vec<WorkflowRun>> = HashMap::new();
        if ids.is_empty() {
            return Ok(by_workflow);
        }
        let (list, params) = padded_id_list(ids);
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM workflow_run WHERE workflow_id IN ({list}) \
             AND state IN ('QUEUED', 'RUNNING') ORDER BY id"
        );
        let definitions = self.definitions.clone();
        let runs: Vec<WorkflowRun> = on_tx!(self, &sql, |tx, stmt| bind_params!(
            sqlx::query(stmt),
            params
        )
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| run_from_row_with(r, Some(&definitions)))
        .collect::<StoreResult<_>>()?);
        for run in runs {
            by_workflow.entry(run.workflow_id).or_default().push(run);
        }
        Ok(by_workflow)
    }

    /// Inserts `runs` (their `id`s are ignored) with a WAITING row for each node of the ones
    /// not SKIPPED, a statement per chunk of each; the new runs' ids, in order.
    pub async fn insert_runs(&mut self, runs: &[WorkflowRun], now: i64) -> StoreResult<Vec<i64>> {
        const HEAD: &str =
            "INSERT INTO workflow_run (workflow_id, job_group, version, definition, \
            state, paused, trigger_type, params, context, message, schedule_time, create_time, \
            start_time, end_time, deadline, alarm_status, update_time) VALUES ";
        const ROW: &str = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        macro_rules! bind_runs {
            ($q:expr, $runs:expr) => {{
                let mut q = $q;
                for (run, definition) in $runs {
                    q = q
                        .bind(run.workflow_id)
                        .bind(run.job_group)
                        .bind(run.version)
                        .bind(definition)
                        .bind(run.state.as_str())
                        .bind(run.paused as i32)
                        .bind(run.trigger_type.as_str())
                        .bind(&run.params)
                        .bind(&run.context)
                        .bind(&run.message)
                        .bind(run.schedule_time)
                        .bind(run.create_time)
                        .bind(run.start_time)
                        .bind(run.end_time)
                        .bind(run.deadline)
                        .bind(run.alarm_status)
                        .bind(now);
                }
                q
            }};
        }
        let rows: Vec<(&WorkflowRun, String)> =
            runs.iter().map(|r| (r, r.definition.to_json())).collect();
        let size = |(r, definition): &(&WorkflowRun, String)| {
            definition.len() + r.params.len() + r.context.len() + r.message.len()
        };
        let mut ids: Vec<i64> = Vec::with_capacity(runs.len());
        for group in by_bytes(&rows, size, RUN_BYTES_PER_INSERT) {
            ids.extend(insert_rows_returning_ids!(
                self, HEAD, ROW, group, bind_runs
            ));
        }
        let nodes: Vec<(i64, &str)> = (runs.iter().zip(&ids))
            .filter(|(run, _)| run.state != RunState::Skipped)
            .flat_map(|(run, id)| (run.definition.nodes.iter()).map(move |n| (*id, n.key.as_str())))
            .collect();
        for chunk in pow2_chunks(&nodes, ROWS_PER_WRITE * 2) {
            let row = "(?, ?, 'WAITING', 0, 0, '', '', '')";
            let sql = format!(
                "INSERT INTO workflow_node (run_id, node_key, state, attempt, log_id, log_ids, \
                 owner, message) VALUES {}",
                vec![row; chunk.len()].join(", ")
            );
            on_tx!(self, &sql, |tx, stmt| {
                let mut q = sqlx::query(stmt);
                for (run_id, key) in chunk {
                    q = q.bind(*run_id).bind(*key);
                }
                q.execute(&mut **tx).await?;
            });
        }
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::by_bytes;

    #[test]
    fn groups_stay_under_their_bytes_and_a_large_item_goes_alone() {
        let items = [3, 3, 3, 10, 1, 1];
        let groups = by_bytes(&items, |n| *n, 6);
        assert_eq!(groups, [&[3, 3][..], &[3], &[10], &[1, 1]]);
        assert!(by_bytes(&[] as &[usize], |n| *n, 6).is_empty());
    }
}
