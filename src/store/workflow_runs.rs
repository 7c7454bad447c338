//! Workflow runs (`workflow_run`) and their nodes (`workflow_node`) as they are read: one run,
//! a page of runs, the runs that need a look or an alarm. The run rows of JOB node attempts are
//! `job_log` rows with `wf_run_id`, `wf_node` and `wf_attempt`.
//!
//! Everything that changes a run happens in a [`RunTx`](super::RunTx) holding the run's row lock
//! (and, to start or end runs, first the workflow's): two admins advancing the same run take
//! turns, so each node's state moves once. The run row of a node attempt is unique by (run,
//! node, attempt), so even a writer that skipped the lock could not fire an attempt twice.

use std::sync::Arc;

use super::definitions::Definitions;
use super::rows::{bind_params, Param, RowExt};
use super::{on_pool, placeholders, Store, StoreError, StoreResult};

use crate::model::{Definition, NodeRun, WorkflowRun};

pub(super) const RUN_COLUMNS: &str =
    "id, workflow_id, job_group, version, definition, state, paused, \
    trigger_type, params, context, message, schedule_time, create_time, start_time, end_time, \
    deadline, alarm_status";

pub(super) const NODE_COLUMNS: &str =
    "id, run_id, node_key, state, attempt, base_attempt, log_id, log_ids, owner, output, \
    decision, message, ready_time, start_time, end_time, retry_at";

pub(super) fn run_from_row(row: &impl RowExt) -> StoreResult<WorkflowRun> {
    run_from_row_with(row, None)
}

/// A run from its row, its definition taken from `definitions` when given (see
/// [`Definitions`]).
pub(super) fn run_from_row_with(
    row: &impl RowExt,
    definitions: Option<&Definitions>,
) -> StoreResult<WorkflowRun> {
    let id = row.long("id")?;
    let corrupt = |detail: String| StoreError::Corrupt {
        table: "workflow_run",
        id,
        detail,
    };
    let workflow_id = row.int("workflow_id")?;
    let version = row.int("version")?;
    let json = row.text("definition")?;
    let definition = match definitions {
        Some(kept) => kept.parse(workflow_id, version, json),
        None => Definition::from_json(&json).map(Arc::new),
    };
    Ok(WorkflowRun {
        id,
        workflow_id,
        job_group: row.int("job_group")?,
        version,
        definition: definition.map_err(corrupt)?,
        state: row
            .text("state")?
            .parse()
            .map_err(|e| corrupt(format!("{e}")))?,
        paused: row.int("paused")? != 0,
        trigger_type: row
            .text("trigger_type")?
            .parse()
            .map_err(|e| corrupt(format!("{e}")))?,
        params: row.text("params")?,
        context: row.text("context")?,
        message: row.text("message")?,
        schedule_time: row.long("schedule_time")?,
        create_time: row.long("create_time")?,
        start_time: row.long("start_time")?,
        end_time: row.long("end_time")?,
        deadline: row.long("deadline")?,
        alarm_status: row.int("alarm_status")?,
    })
}

pub(super) fn node_from_row(row: &impl RowExt) -> StoreResult<NodeRun> {
    let id = row.long("id")?;
    let corrupt = |detail: String| StoreError::Corrupt {
        table: "workflow_node",
        id,
        detail,
    };
    Ok(NodeRun {
        id,
        run_id: row.long("run_id")?,
        node_key: row.text("node_key")?,
        state: row
            .text("state")?
            .parse()
            .map_err(|e| corrupt(format!("{e}")))?,
        attempt: row.int("attempt")?,
        base_attempt: row.int("base_attempt")?,
        log_id: row.long("log_id")?,
        log_ids: parse_log_ids(&row.text("log_ids")?).map_err(corrupt)?,
        owner: row.text("owner")?,
        output: row.opt_text("output")?,
        decision: row.opt_int("decision")?.map(|d| d != 0),
        message: row.text("message")?,
        ready_time: row.long("ready_time")?,
        start_time: row.long("start_time")?,
        end_time: row.long("end_time")?,
        retry_at: row.long("retry_at")?,
    })
}

/// A node's run row ids as stored (`1,2,3`): 64-bit, as `job_log` ids are.
fn parse_log_ids(s: &str) -> Result<Vec<i64>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_err(|_| format!("'{p}' is not a run row id")))
        .collect()
}

pub(super) fn join_log_ids(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl Store {
    /// One run.
    pub async fn get_run(&self, id: i64) -> StoreResult<Option<WorkflowRun>> {
        let sql = self.sql(format!(
            "SELECT {RUN_COLUMNS} FROM workflow_run WHERE id = ?"
        ));
        on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Ok(Some(run_from_row(&row)?)),
            None => Ok(None),
        })
    }

    /// A run's nodes, by key.
    pub async fn run_nodes(&self, run_id: i64) -> StoreResult<Vec<NodeRun>> {
        let sql = self.sql(format!(
            "SELECT {NODE_COLUMNS} FROM workflow_node WHERE run_id = ? ORDER BY node_key"
        ));
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(run_id)
            .fetch_all(pool)
            .await?
            .iter()
            .map(node_from_row)
            .collect())
    }

    /// A page of runs, newest first: of one workflow when given, limited to `groups` when given.
    pub async fn list_runs(
        &self,
        workflow_id: Option<i32>,
        groups: Option<&[i32]>,
        offset: i64,
        limit: i64,
    ) -> StoreResult<(i64, Vec<WorkflowRun>)> {
        let mut f = super::rows::Filter::default();
        if let Some(w) = workflow_id {
            f.and("workflow_id = ?", Param::Int(w));
        }
        match groups {
            Some([]) => return Ok((0, Vec::new())),
            Some(ids) => {
                f.and_raw(&format!("job_group IN ({})", placeholders(ids.len())));
                f.params.extend(ids.iter().map(|i| Param::Int(*i)));
            }
            None => {}
        }
        let w = f.where_clause();
        let count = self.sql(format!("SELECT COUNT(*) AS n FROM workflow_run{w}"));
        let page = self.sql(format!(
            "SELECT {RUN_COLUMNS} FROM workflow_run{w} ORDER BY id DESC LIMIT ? OFFSET ?"
        ));
        let mut page_params = f.params.clone();
        page_params.push(Param::Long(limit.max(0)));
        page_params.push(Param::Long(offset.max(0)));
        on_pool!(self, pool => {
            let total = bind_params!(sqlx::query(&count), f.params).fetch_one(pool).await?.long("n")?;
            let runs = bind_params!(sqlx::query(&page), page_params)
                .fetch_all(pool)
                .await?
                .iter()
                .map(run_from_row)
                .collect::<StoreResult<Vec<_>>>()?;
            Ok((total, runs))
        })
    }

    /// Runs still RUNNING that need a look: unchanged since `stale_before`, past their deadline,
    /// or with a node retry due at `now` (not while paused: it would be due again at every look);
    /// oldest first.
    pub async fn runs_to_look_at(
        &self,
        now: i64,
        stale_before: i64,
        limit: i64,
    ) -> StoreResult<Vec<i64>> {
        let sql = self.sql(
            "SELECT id FROM workflow_run r WHERE state = 'RUNNING' AND (update_time < ? \
             OR (deadline > 0 AND deadline <= ?) \
             OR (r.paused = 0 AND EXISTS (SELECT 1 FROM workflow_node n WHERE n.run_id = r.id \
                        AND n.state = 'WAITING' AND n.retry_at > 0 AND n.retry_at <= ?))) \
             ORDER BY id LIMIT ?",
        );
        on_pool!(self, pool => Ok(sqlx::query(&sql)
            .bind(stale_before)
            .bind(now)
            .bind(now)
            .bind(limit)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.long("id"))
            .collect::<Result<Vec<_>, _>>()?))
    }

    /// Workflows with runs waiting in their queue.
    pub async fn workflows_with_queued_runs(&self) -> StoreResult<Vec<i32>> {
        let sql = "SELECT DISTINCT workflow_id FROM workflow_run WHERE state = 'QUEUED'";
        on_pool!(self, pool => Ok(sqlx::query(sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.int("workflow_id"))
            .collect::<Result<Vec<_>, _>>()?))
    }

    /// Admins whose beat is at or after `since`, leaving or not (a leaving admin still fires
    /// what it claimed).
    pub async fn beating_nodes(&self, since: i64) -> StoreResult<Vec<String>> {
        let sql = self.sql("SELECT id FROM admin_node WHERE beat_at >= ?");
        on_pool!(self, pool => Ok(sqlx::query(&sql)
            .bind(since)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.text("id"))
            .collect::<Result<Vec<_>, _>>()?))
    }

    /// The ended runs whose alarm has not gone out, FAILED or TIMED_OUT, oldest first.
    pub async fn runs_to_alarm(&self, limit: i64) -> StoreResult<Vec<WorkflowRun>> {
        let sql = self.sql(format!(
            "SELECT {RUN_COLUMNS} FROM workflow_run WHERE alarm_status = 0 \
             AND state IN ('FAILED', 'TIMED_OUT') ORDER BY id LIMIT ?"
        ));
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(limit)
            .fetch_all(pool)
            .await?
            .iter()
            .map(run_from_row)
            .collect())
    }

    /// Sets a run's alarm status from `from` to `to`; false when another admin changed it.
    pub async fn set_run_alarm_status(&self, id: i64, from: i32, to: i32) -> StoreResult<bool> {
        let sql =
            self.sql("UPDATE workflow_run SET alarm_status = ? WHERE id = ? AND alarm_status = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(to)
            .bind(id)
            .bind(from)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Keeps the full result messages of node runs that are longer than `job_log` keeps (the
    /// first one stored for a log stays): a node's output is never cut.
    pub async fn save_outputs(&self, outputs: &[(i64, String)]) -> StoreResult<()> {
        let sql = self.sql(super::dialect::insert_output(self.backend()));
        for (log_id, body) in outputs {
            on_pool!(self, pool => {
                sqlx::query(&sql).bind(*log_id).bind(body).execute(pool).await?;
            });
        }
        Ok(())
    }

    /// How many runs of `workflow_id` are queued or running.
    pub async fn count_open_runs_of(&self, workflow_id: i32) -> StoreResult<i64> {
        let sql = self.sql(
            "SELECT COUNT(*) AS n FROM workflow_run WHERE workflow_id = ? AND state IN ('QUEUED', 'RUNNING')",
        );
        on_pool!(self, pool => Ok(sqlx::query(&sql).bind(workflow_id).fetch_one(pool).await?.long("n")?))
    }

    /// How many runs are queued and running (for the metrics).
    pub async fn count_open_runs(&self) -> StoreResult<Vec<(String, i64)>> {
        let sql = "SELECT state, COUNT(*) AS n FROM workflow_run \
            WHERE state IN ('QUEUED', 'RUNNING') GROUP BY state";
        on_pool!(self, pool => sqlx::query(sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok((r.text("state")?, r.long("n")?)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_row_ids_past_32_bits_are_read_back() {
        let ids = vec![7, i64::from(i32::MAX) + 1, 9_000_000_000];
        assert_eq!(parse_log_ids(&join_log_ids(&ids)), Ok(ids));
        assert_eq!(parse_log_ids(""), Ok(vec![]));
        assert!(parse_log_ids("1,x").unwrap_err().contains("'x'"));
    }
}
