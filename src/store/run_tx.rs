//! The transaction that changes workflow runs: a run's row lock (and, to start or end runs,
//! first the workflow's) held while its nodes move, node attempts claimed by inserting their
//! run rows (unique by run, node and attempt), everything written in bulk for a batch of runs.

use std::collections::HashMap;

use super::definitions::Definitions;
use super::jobs::{job_from_row, JOB_COLUMNS};
use super::rows::{bind_params, Param, RowExt};
use super::schedule::{on_tx, Tx};
use super::workflow_runs::{
    join_log_ids, node_from_row, run_from_row, run_from_row_with, NODE_COLUMNS, RUN_COLUMNS,
};
use super::workflows::{workflow_from_row, WORKFLOW_COLUMNS};
use super::{padded_id_list, placeholders, pow2_chunks, Db, Store, StoreResult};
use crate::model::{
    storable_text, JobInfo, NewRunRow, NodeRun, Workflow, WorkflowRun, MESSAGE_MAX_CHARS,
    TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};

/// Runs an INSERT in the open transaction `$tx` and answers the new row's id (RETURNING on
/// SQLite and PostgreSQL, the last insert id on MySQL); `$bind` binds the values onto `$q`.
macro_rules! insert_in_tx {
    ($tx:expr, $sql:expr, |$q:ident| $bind:expr) => {{
        let base: &str = $sql;
        let id: StoreResult<i64> = match $tx {
            Tx::Sqlite(tx) => {
                let sql = format!("{base} RETURNING CAST(id AS BIGINT) AS id");
                let $q = sqlx::query(&sql);
                Ok($bind.fetch_one(&mut **tx).await?.long("id")?)
            }
            Tx::Postgres(tx) => {
                let sql = format!(
                    "{} RETURNING CAST(id AS BIGINT) AS id",
                    super::numbered_placeholders(base)
                );
                let $q = sqlx::query(&sql);
                Ok($bind.fetch_one(&mut **tx).await?.long("id")?)
            }
            Tx::MySql(tx) => {
                let $q = sqlx::query(base);
                Ok($bind.execute(&mut **tx).await?.last_insert_id() as i64)
            }
        };
        id
    }};
}
pub(super) use insert_in_tx;

/// Inserts `$rows` with a multi-row INSERT per power-of-two chunk (`$head` then `$row` per row,
/// bound by the macro `$bind!(query, chunk)`) in the open transaction of `$self`, and answers
/// the new rows' ids in the order of `$rows` (an error returns from the enclosing function): RETURNING on SQLite and PostgreSQL; on MySQL
/// the first id and the auto-increment step, or one INSERT per row where the lock mode may
/// interleave ids.
macro_rules! insert_rows_returning_ids {
    ($self:expr, $head:expr, $row:expr, $rows:expr, $bind:ident) => {{
        let mut ids: Vec<i64> = Vec::with_capacity($rows.len());
        for chunk in super::pow2_chunks($rows, ROWS_PER_WRITE) {
            let values = vec![$row; chunk.len()].join(", ");
            let returning = format!("{}{values} RETURNING CAST(id AS BIGINT) AS id", $head);
            let mut chunk_ids: Vec<i64> = match &mut $self.tx {
                Tx::Sqlite(tx) => $bind!(sqlx::query(&returning), chunk)
                    .fetch_all(&mut **tx)
                    .await?
                    .iter()
                    .map(|r| r.long("id"))
                    .collect::<Result<_, _>>()?,
                Tx::Postgres(tx) => {
                    let sql = super::numbered_placeholders(&returning);
                    $bind!(sqlx::query(&sql), chunk)
                        .fetch_all(&mut **tx)
                        .await?
                        .iter()
                        .map(|r| r.long("id"))
                        .collect::<Result<_, _>>()?
                }
                Tx::MySql(tx) => {
                    // one INSERT numbers its rows evenly spaced unless the auto-increment lock
                    // mode interleaves them: then each row on its own
                    let step = match chunk.len() {
                        1 => Some(1),
                        _ => super::dialect::mysql_id_step(tx).await?,
                    };
                    if let Some(step) = step {
                        let sql = format!("{}{values}", $head);
                        let done = $bind!(sqlx::query(&sql), chunk).execute(&mut **tx).await?;
                        super::dialect::stepped_ids(done.last_insert_id() as i64, chunk.len(), step)
                    } else {
                        let sql = format!("{}{}", $head, $row);
                        let mut ids = Vec::with_capacity(chunk.len());
                        for one in chunk {
                            let done = $bind!(sqlx::query(&sql), std::iter::once(one))
                                .execute(&mut **tx)
                                .await?;
                            ids.push(done.last_insert_id() as i64);
                        }
                        ids
                    }
                }
            };
            // a single INSERT numbers its rows in the order of its VALUES list
            chunk_ids.sort_unstable();
            ids.extend(chunk_ids);
        }
        ids
    }};
}
pub(super) use insert_rows_returning_ids;

/// How a node attempt's run row stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLog {
    /// The run row.
    pub id: i64,
    /// 0 while the call's outcome is not written, 200 accepted, else refused.
    pub trigger_code: i32,
    /// 0 while no result, 200 success, else failure.
    pub handle_code: i32,
    /// The result's message, in full (a long one from `workflow_output`).
    pub handle_msg: Option<String>,
    /// The trigger's message (why it was refused).
    pub trigger_msg: Option<String>,
    /// When the call was prepared, epoch ms.
    pub trigger_time: i64,
    /// When the result arrived, epoch ms.
    pub handle_time: i64,
}

/// A run row of a node attempt, to insert.
#[derive(Debug, Clone)]
pub struct NodeLogRow {
    /// What every run row holds.
    pub row: NewRunRow,
    /// The workflow run.
    pub run_id: i64,
    /// The node's key.
    pub node_key: String,
    /// The attempt (1 for the first).
    pub attempt: i32,
}

/// An open transaction over workflow runs; commit it quickly.
pub struct RunTx {
    pub(super) tx: Tx,
    pub(super) definitions: Definitions,
}

/// Rows per statement of the bulk reads (bound parameters stay far below every backend's limit).
const BULK_CHUNK: usize = 800;
/// Rows per statement of a move's writes (16 or 17 parameters each), split in powers of two so
/// every statement is one of six, kept prepared.
pub(super) const ROWS_PER_WRITE: usize = 32;

/// Runs written by one statement of [`RunTx::save_runs`] (17 parameters each), in powers of two
/// as [`ROWS_PER_WRITE`].
const RUNS_SAVED_AT_ONCE: usize = 32;

impl Store {
    /// Opens a [`RunTx`] (on SQLite it takes the write lock at once, so two writers never
    /// deadlock on an upgrade).
    pub async fn begin_run_tx(&self) -> StoreResult<RunTx> {
        let tx = match &self.db {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
            Db::MySql(pool) => Tx::MySql(pool.begin().await?),
        };
        Ok(RunTx {
            tx,
            definitions: self.definitions.clone(),
        })
    }
}

impl RunTx {
    /// The workflow, its row locked until commit.
    pub async fn lock_workflow(&mut self, id: i32) -> StoreResult<Option<Workflow>> {
        let lock = match self.tx {
            Tx::Sqlite(_) => "",
            _ => " FOR UPDATE",
        };
        let sql = format!("SELECT {WORKFLOW_COLUMNS} FROM workflow WHERE id = ?{lock}");
        let row = on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(id)
            .fetch_optional(&mut **tx)
            .await?
            .map(|r| workflow_from_row(&r))
            .transpose());
        row
    }

    /// Moves a workflow's fire time on where it is still `expected_next` (the claim of that fire
    /// time); a stop clears it. False when another admin or an edit moved it first.
    pub async fn claim_workflow_fire(
        &mut self,
        id: i32,
        expected_next: i64,
        last: i64,
        next: Option<i64>,
    ) -> StoreResult<bool> {
        let (status, next) = match next {
            Some(n) => (TRIGGER_STATUS_RUNNING, n),
            None => (TRIGGER_STATUS_STOPPED, 0),
        };
        let sql =
            "UPDATE workflow SET trigger_last_time = ?, trigger_next_time = ?, trigger_status = ? \
                   WHERE id = ? AND trigger_status = 1 AND trigger_next_time = ?";
        let n = on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(last)
            .bind(next)
            .bind(status)
            .bind(id)
            .bind(expected_next)
            .execute(&mut **tx)
            .await?
            .rows_affected());
        Ok(n > 0)
    }

    /// The workflow's runs not ended (QUEUED and RUNNING), oldest first.
    pub async fn open_runs(&mut self, workflow_id: i32) -> StoreResult<Vec<WorkflowRun>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM workflow_run WHERE workflow_id = ? \
             AND state IN ('QUEUED', 'RUNNING') ORDER BY id"
        );
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(workflow_id)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(run_from_row)
            .collect())
    }

    /// Inserts a run (its `id` is ignored) with a WAITING row for each of its definition's
    /// nodes; the new run's id.
    pub async fn insert_run(&mut self, run: &WorkflowRun, now: i64) -> StoreResult<i64> {
        let ids = self.insert_runs(std::slice::from_ref(run), now).await?;
        ids.first()
            .copied()
            .ok_or_else(|| sqlx::Error::RowNotFound.into())
    }

    /// The run, its row locked until commit.
    pub async fn lock_run(&mut self, id: i64) -> StoreResult<Option<WorkflowRun>> {
        let lock = match self.tx {
            Tx::Sqlite(_) => "",
            _ => " FOR UPDATE",
        };
        let sql = format!("SELECT {RUN_COLUMNS} FROM workflow_run WHERE id = ?{lock}");
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(id)
            .fetch_optional(&mut **tx)
            .await?
            .map(|r| run_from_row(&r))
            .transpose())
    }

    /// The run's nodes.
    pub async fn nodes(&mut self, run_id: i64) -> StoreResult<Vec<NodeRun>> {
        let sql =
            format!("SELECT {NODE_COLUMNS} FROM workflow_node WHERE run_id = ? ORDER BY node_key");
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(run_id)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(node_from_row)
            .collect())
    }

    /// How the run rows `ids` stand.
    pub async fn node_logs(&mut self, ids: &[i64]) -> StoreResult<HashMap<i64, NodeLog>> {
        let mut found = HashMap::new();
        for chunk in ids.chunks(512) {
            let (list, params) = padded_id_list(chunk);
            let sql = format!(
                "SELECT l.id AS id, l.trigger_code AS trigger_code, l.handle_code AS handle_code, \
                 COALESCE(o.body, l.handle_msg) AS handle_msg, l.trigger_msg AS trigger_msg, \
                 l.trigger_time AS trigger_time, l.handle_time AS handle_time \
                 FROM job_log l LEFT JOIN workflow_output o ON o.log_id = l.id WHERE l.id IN ({list})"
            );
            let rows = on_tx!(self, &sql, |tx, stmt| bind_params!(
                sqlx::query(stmt),
                params
            )
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| {
                Ok(NodeLog {
                    id: r.long("id")?,
                    trigger_code: r.int("trigger_code")?,
                    handle_code: r.int("handle_code")?,
                    handle_msg: r.opt_text("handle_msg")?,
                    trigger_msg: r.opt_text("trigger_msg")?,
                    trigger_time: r.long("trigger_time")?,
                    handle_time: r.long("handle_time")?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?);
            found.extend(rows.into_iter().map(|l| (l.id, l)));
        }
        Ok(found)
    }

    /// The parameters the run rows `ids` were written with (what a resent call carries again);
    /// one statement per row: resends are rare.
    pub async fn log_params(&mut self, ids: &[i64]) -> StoreResult<HashMap<i64, String>> {
        let mut found = HashMap::with_capacity(ids.len());
        for &id in ids {
            let sql = "SELECT executor_param FROM job_log WHERE id = ?";
            let param = on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
                .bind(id)
                .fetch_optional(&mut **tx)
                .await?
                .map(|r| r.opt_text("executor_param"))
                .transpose()?
                .flatten());
            found.insert(id, param.unwrap_or_default());
        }
        Ok(found)
    }

    /// Writes a node's every field (the run's lock makes it this admin's to write).
    pub async fn save_node(&mut self, n: &NodeRun) -> StoreResult<()> {
        let sql = "UPDATE workflow_node SET state = ?, attempt = ?, base_attempt = ?, log_id = ?, log_ids = ?, owner = ?, \
                   output = ?, decision = ?, message = ?, ready_time = ?, start_time = ?, end_time = ?, \
                   retry_at = ? WHERE id = ?";
        on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(n.state.as_str())
            .bind(n.attempt)
            .bind(n.base_attempt)
            .bind(n.log_id)
            .bind(join_log_ids(&n.log_ids))
            .bind(&n.owner)
            .bind(&n.output)
            .bind(n.decision.map(i32::from))
            .bind(storable_text(&n.message, MESSAGE_MAX_CHARS).as_ref())
            .bind(n.ready_time)
            .bind(n.start_time)
            .bind(n.end_time)
            .bind(n.retry_at)
            .bind(n.id)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        Ok(())
    }

    /// Writes a run's changing fields (state, pause, context, message, times) and its
    /// `update_time`.
    pub async fn save_run(&mut self, r: &WorkflowRun, now: i64) -> StoreResult<()> {
        let sql = "UPDATE workflow_run SET state = ?, paused = ?, context = ?, message = ?, start_time = ?, \
                   end_time = ?, deadline = ?, alarm_status = ?, update_time = ? WHERE id = ?";
        on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(r.state.as_str())
            .bind(r.paused as i32)
            .bind(&r.context)
            .bind(storable_text(&r.message, MESSAGE_MAX_CHARS).as_ref())
            .bind(r.start_time)
            .bind(r.end_time)
            .bind(r.deadline)
            .bind(r.alarm_status)
            .bind(now)
            .bind(r.id)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        Ok(())
    }

    /// Writes the changing fields of `runs` as [`Self::save_run`] does, one statement per chunk
    /// (a `CASE` on the id per column) rather than one per run: a move holds several runs.
    pub async fn save_runs(&mut self, runs: &[&WorkflowRun], now: i64) -> StoreResult<()> {
        if let [run] = runs {
            return self.save_run(run, now).await;
        }
        type Field = fn(&WorkflowRun) -> Param;
        let fields: [(&str, Field); 8] = [
            ("state", |r| Param::Text(r.state.as_str().to_string())),
            ("paused", |r| Param::Int(r.paused as i32)),
            ("context", |r| Param::Text(r.context.clone())),
            ("message", |r| {
                Param::Text(storable_text(&r.message, MESSAGE_MAX_CHARS).into_owned())
            }),
            ("start_time", |r| Param::Long(r.start_time)),
            ("end_time", |r| Param::Long(r.end_time)),
            ("deadline", |r| Param::Long(r.deadline)),
            ("alarm_status", |r| Param::Int(r.alarm_status)),
        ];
        for chunk in pow2_chunks(runs, RUNS_SAVED_AT_ONCE) {
            let mut params: Vec<Param> = Vec::with_capacity(chunk.len() * 17 + 1);
            let mut sets: Vec<String> = Vec::with_capacity(fields.len() + 1);
            for (column, value) in fields {
                sets.push(format!(
                    "{column} = CASE id{} END",
                    " WHEN ? THEN ?".repeat(chunk.len())
                ));
                for r in chunk {
                    params.push(Param::Long(r.id));
                    params.push(value(r));
                }
            }
            sets.push("update_time = ?".into());
            params.push(Param::Long(now));
            params.extend(chunk.iter().map(|r| Param::Long(r.id)));
            let sql = format!(
                "UPDATE workflow_run SET {} WHERE id IN ({})",
                sets.join(", "),
                placeholders(chunk.len())
            );
            self.execute(&sql, &params).await?;
        }
        Ok(())
    }

    /// Inserts the run row of a node attempt; its id. A row for the same (run, node, attempt)
    /// already there is an error: that attempt was fired already.
    pub async fn insert_node_log(&mut self, l: &NodeLogRow) -> StoreResult<i64> {
        let sql = "INSERT INTO job_log (job_group, job_id, trigger_type, schedule_time, trigger_time, \
                   executor_handler, executor_param, executor_sharding_param, executor_fail_retry_count, \
                   trigger_msg, trigger_code, handle_code, handle_time, alarm_status, wf_run_id, wf_node, \
                   wf_attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?, ?)";
        let r = &l.row;
        insert_in_tx!(&mut self.tx, sql, |q| q
            .bind(r.job_group)
            .bind(r.job_id)
            .bind(r.trigger_type.as_str())
            .bind(r.schedule_time)
            .bind(r.trigger_time)
            .bind(&r.executor_handler)
            .bind(&r.executor_param)
            .bind(&r.executor_sharding_param)
            .bind(r.executor_fail_retry_count)
            .bind(&r.trigger_msg)
            .bind(l.run_id)
            .bind(&l.node_key)
            .bind(l.attempt))
    }

    /// Marks the run rows `ids` as needing no alarm: the workflow handles their failures (its
    /// own retries and the run's alarm), so the fail monitor leaves them.
    pub async fn logs_alarm_handled(&mut self, ids: &[i64]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "UPDATE job_log SET alarm_status = {} WHERE alarm_status = 0 AND id IN ({})",
            crate::model::alarm_status::NOT_NEEDED,
            placeholders(ids.len())
        );
        let params: Vec<Param> = ids.iter().map(|i| Param::Long(*i)).collect();
        self.execute(&sql, &params).await?;
        Ok(())
    }

    /// The runs among `ids` that are RUNNING, their rows locked until commit, in id order (every
    /// writer locks runs in this order, so two batches never wait for each other in a circle).
    pub async fn lock_running(&mut self, ids: &[i64]) -> StoreResult<Vec<WorkflowRun>> {
        let lock = match self.tx {
            Tx::Sqlite(_) => "",
            _ => " FOR UPDATE",
        };
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut runs = Vec::with_capacity(ids.len());
        // every move reads its runs' definitions again: parsed once per workflow version
        let definitions = self.definitions.clone();
        for chunk in ids.chunks(BULK_CHUNK) {
            let (list, params) = padded_id_list(chunk);
            let sql = format!(
                "SELECT {RUN_COLUMNS} FROM workflow_run WHERE state = 'RUNNING' AND id IN ({list}) \
                 ORDER BY id{lock}"
            );
            let found = on_tx!(self, &sql, |tx, stmt| bind_params!(
                sqlx::query(stmt),
                params
            )
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| run_from_row_with(r, Some(&definitions)))
            .collect::<StoreResult<Vec<_>>>()?);
            runs.extend(found);
        }
        Ok(runs)
    }

    /// The jobs `ids`, read in the transaction: a second connection asked for while this one
    /// holds SQLite's write lock could wait on a pool that the lock's waiters have emptied.
    pub async fn jobs(&mut self, ids: &[i32]) -> StoreResult<Vec<JobInfo>> {
        let mut jobs = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BULK_CHUNK) {
            let (list, params) = padded_id_list(chunk);
            let sql = format!("SELECT {JOB_COLUMNS} FROM job_info WHERE id IN ({list})");
            let found = on_tx!(self, &sql, |tx, stmt| bind_params!(
                sqlx::query(stmt),
                params
            )
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(job_from_row)
            .collect::<StoreResult<Vec<_>>>()?);
            jobs.extend(found);
        }
        Ok(jobs)
    }

    /// The nodes of the runs `run_ids`.
    pub async fn nodes_of(&mut self, run_ids: &[i64]) -> StoreResult<Vec<NodeRun>> {
        let mut nodes = Vec::new();
        for chunk in run_ids.chunks(BULK_CHUNK) {
            let (list, params) = padded_id_list(chunk);
            let sql = format!("SELECT {NODE_COLUMNS} FROM workflow_node WHERE run_id IN ({list})");
            let found = on_tx!(self, &sql, |tx, stmt| bind_params!(
                sqlx::query(stmt),
                params
            )
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(node_from_row)
            .collect::<StoreResult<Vec<_>>>()?);
            nodes.extend(found);
        }
        Ok(nodes)
    }

    /// Writes every field of `nodes` (each an existing row: the run's lock makes it this
    /// admin's to write), a statement per chunk.
    pub async fn save_nodes(&mut self, nodes: &[&NodeRun]) -> StoreResult<()> {
        const COLUMNS: &str = "id, run_id, node_key, state, attempt, base_attempt, log_id, \
            log_ids, owner, output, decision, message, ready_time, start_time, end_time, retry_at";
        const ROW: &str = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        const SET: [&str; 13] = [
            "state",
            "attempt",
            "base_attempt",
            "log_id",
            "log_ids",
            "owner",
            "output",
            "decision",
            "message",
            "ready_time",
            "start_time",
            "end_time",
            "retry_at",
        ];
        let upsert = match self.tx {
            Tx::MySql(_) => format!(
                "ON DUPLICATE KEY UPDATE {}",
                SET.map(|c| format!("{c} = VALUES({c})")).join(", ")
            ),
            _ => format!(
                "ON CONFLICT (id) DO UPDATE SET {}",
                SET.map(|c| format!("{c} = excluded.{c}")).join(", ")
            ),
        };
        for chunk in pow2_chunks(nodes, ROWS_PER_WRITE) {
            let sql = format!(
                "INSERT INTO workflow_node ({COLUMNS}) VALUES {} {upsert}",
                vec![ROW; chunk.len()].join(", ")
            );
            on_tx!(self, &sql, |tx, stmt| {
                let mut q = sqlx::query(stmt);
                for n in chunk {
                    q = q
                        .bind(n.id)
                        .bind(n.run_id)
                        .bind(&n.node_key)
                        .bind(n.state.as_str())
                        .bind(n.attempt)
                        .bind(n.base_attempt)
                        .bind(n.log_id)
                        .bind(join_log_ids(&n.log_ids))
                        .bind(&n.owner)
                        .bind(&n.output)
                        .bind(n.decision.map(i32::from))
                        .bind(storable_text(&n.message, MESSAGE_MAX_CHARS).into_owned())
                        .bind(n.ready_time)
                        .bind(n.start_time)
                        .bind(n.end_time)
                        .bind(n.retry_at);
                }
                q.execute(&mut **tx).await?;
            });
        }
        Ok(())
    }

    /// Inserts the run rows of node attempts, a statement per chunk; their ids, in order. A row
    /// for a (run, node, attempt) already there fails the whole transaction: that attempt was
    /// claimed already.
    pub async fn insert_node_logs(&mut self, rows: &[NodeLogRow]) -> StoreResult<Vec<i64>> {
        const HEAD: &str = "INSERT INTO job_log (job_group, job_id, trigger_type, schedule_time, \
            trigger_time, executor_handler, executor_param, executor_sharding_param, \
            executor_fail_retry_count, trigger_msg, trigger_code, handle_code, handle_time, \
            alarm_status, wf_run_id, wf_node, wf_attempt) VALUES ";
        const ROW: &str = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?, ?)";
        macro_rules! bind_rows {
            ($q:expr, $rows:expr) => {{
                let mut q = $q;
                for l in $rows {
                    let r = &l.row;
                    q = q
                        .bind(r.job_group)
                        .bind(r.job_id)
                        .bind(r.trigger_type.as_str())
                        .bind(r.schedule_time)
                        .bind(r.trigger_time)
                        .bind(&r.executor_handler)
                        .bind(&r.executor_param)
                        .bind(&r.executor_sharding_param)
                        .bind(r.executor_fail_retry_count)
                        .bind(&r.trigger_msg)
                        .bind(l.run_id)
                        .bind(&l.node_key)
                        .bind(l.attempt);
                }
                q
            }};
        }
        Ok(insert_rows_returning_ids!(self, HEAD, ROW, rows, bind_rows))
    }

    /// Runs the statement `sql` with `params` in the transaction.
    pub(super) async fn execute(&mut self, sql: &str, params: &[Param]) -> StoreResult<()> {
        on_tx!(self, sql, |tx, stmt| bind_params!(
            sqlx::query(stmt),
            params
        )
        .execute(&mut **tx)
        .await
        .map(drop))?;
        Ok(())
    }

    /// Commits.
    pub async fn commit(self) -> StoreResult<()> {
        match self.tx {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
            Tx::MySql(tx) => tx.commit().await?,
        }
        Ok(())
    }
}
