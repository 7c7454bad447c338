//! Workflow runs (`workflow_run`) and their nodes (`workflow_node`), and the run rows of JOB
//! node attempts (`job_log` rows with `wf_run_id`, `wf_node`, `wf_attempt`).
//!
//! Everything that changes a run happens in a [`RunTx`] holding the run's row lock (and, to
//! start or end runs, first the workflow's): two admins advancing the same run take turns, so
//! each node's state moves once. The run row of a node attempt is unique by (run, node,
//! attempt), so even a writer that skipped the lock could not fire an attempt twice.

use std::collections::HashMap;

use super::rows::{bind_params, Param, RowExt};
use super::schedule::{on_tx, Tx};
use super::workflows::{workflow_from_row, WORKFLOW_COLUMNS};
use super::{on_pool, placeholders, Db, Store, StoreError, StoreResult};

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
use crate::model::{
    parse_id_list, storable_text, Definition, NewRunRow, NodeRun, RunState, Workflow, WorkflowRun,
    MESSAGE_MAX_CHARS, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};

const RUN_COLUMNS: &str = "id, workflow_id, job_group, version, definition, state, paused, \
    trigger_type, params, context, message, schedule_time, create_time, start_time, end_time, \
    deadline, alarm_status";

const NODE_COLUMNS: &str =
    "id, run_id, node_key, state, attempt, base_attempt, log_id, log_ids, owner, output, \
    decision, message, ready_time, start_time, end_time, retry_at";

fn run_from_row(row: &impl RowExt) -> StoreResult<WorkflowRun> {
    let id = row.long("id")?;
    let corrupt = |detail: String| StoreError::Corrupt {
        table: "workflow_run",
        id,
        detail,
    };
    Ok(WorkflowRun {
        id,
        workflow_id: row.int("workflow_id")?,
        job_group: row.int("job_group")?,
        version: row.int("version")?,
        definition: Definition::from_json(&row.text("definition")?).map_err(corrupt)?,
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

fn node_from_row(row: &impl RowExt) -> StoreResult<NodeRun> {
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
        log_ids: parse_id_list(&row.text("log_ids")?)
            .map_err(corrupt)?
            .into_iter()
            .map(i64::from)
            .collect(),
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

fn join_log_ids(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

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
    tx: Tx,
}

impl Store {
    /// Opens a [`RunTx`] (on SQLite it takes the write lock at once, so two writers never
    /// deadlock on an upgrade).
    pub async fn begin_run_tx(&self) -> StoreResult<RunTx> {
        let tx = match &self.db {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
            Db::MySql(pool) => Tx::MySql(pool.begin().await?),
        };
        Ok(RunTx { tx })
    }

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
    /// or with a node retry due at `now`; oldest first.
    pub async fn runs_to_look_at(
        &self,
        now: i64,
        stale_before: i64,
        limit: i64,
    ) -> StoreResult<Vec<i64>> {
        let sql = self.sql(
            "SELECT id FROM workflow_run r WHERE state = 'RUNNING' AND (update_time < ? \
             OR (deadline > 0 AND deadline <= ?) \
             OR EXISTS (SELECT 1 FROM workflow_node n WHERE n.run_id = r.id AND n.state = 'WAITING' \
                        AND n.retry_at > 0 AND n.retry_at <= ?)) \
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
        let sql = "INSERT INTO workflow_run (workflow_id, job_group, version, definition, state, \
                   paused, trigger_type, params, context, message, schedule_time, create_time, \
                   start_time, end_time, deadline, alarm_status, update_time) \
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        macro_rules! bind_run {
            ($q:expr) => {
                $q.bind(run.workflow_id)
                    .bind(run.job_group)
                    .bind(run.version)
                    .bind(run.definition.to_json())
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
                    .bind(now)
            };
        }
        let id = insert_in_tx!(&mut self.tx, sql, |q| bind_run!(q))?;
        if run.state != RunState::Skipped {
            let keys: Vec<&str> = run
                .definition
                .nodes
                .iter()
                .map(|n| n.key.as_str())
                .collect();
            for chunk in keys.chunks(200) {
                let row = "(?, ?, 'WAITING', 0, 0, '', '', '')";
                let sql = format!(
                    "INSERT INTO workflow_node (run_id, node_key, state, attempt, log_id, log_ids, \
                     owner, message) VALUES {}",
                    vec![row; chunk.len()].join(", ")
                );
                on_tx!(self, &sql, |tx, stmt| {
                    let mut q = sqlx::query(stmt);
                    for key in chunk {
                        q = q.bind(id).bind(*key);
                    }
                    q.execute(&mut **tx).await?;
                });
            }
        }
        Ok(id)
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
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT l.id AS id, l.trigger_code AS trigger_code, l.handle_code AS handle_code, \
                 COALESCE(o.body, l.handle_msg) AS handle_msg, l.trigger_msg AS trigger_msg, \
                 l.trigger_time AS trigger_time, l.handle_time AS handle_time \
                 FROM job_log l LEFT JOIN workflow_output o ON o.log_id = l.id WHERE l.id IN ({})",
                placeholders(chunk.len())
            );
            let params: Vec<Param> = chunk.iter().map(|i| Param::Long(*i)).collect();
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
        on_tx!(self, &sql, |tx, stmt| bind_params!(
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
