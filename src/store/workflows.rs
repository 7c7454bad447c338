//! Workflow definitions (`workflow`): their fields, their schedules' claims, and the lists the
//! REST API and the console show.

use super::dialect::insert_returning_id;
use super::jobs::parse_column;
use super::rows::{bind_params, Filter, Param, RowExt};
use super::{on_pool, placeholders, Store, StoreError, StoreResult};
use crate::model::{Definition, Workflow, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED};

pub(crate) const WORKFLOW_COLUMNS: &str = "id, job_group, name, description, schedule_type, \
    schedule_conf, timezone, misfire_strategy, max_concurrent_runs, overlap_policy, queue_max, \
    run_timeout_secs, alarm_email, alarm_webhook, definition, version, trigger_status, \
    trigger_last_time, trigger_next_time, owner_id, add_time, update_time";

/// A page of workflows: which group, which name.
#[derive(Debug, Clone, Default)]
pub struct WorkflowFilter {
    /// Only this group.
    pub job_group: Option<i32>,
    /// Name contains this.
    pub name: Option<String>,
    /// Rows to skip.
    pub offset: i64,
    /// Most rows to return.
    pub limit: i64,
}

pub(crate) fn workflow_from_row(row: &impl RowExt) -> StoreResult<Workflow> {
    let id = row.int("id")?;
    let corrupt = |detail: String| StoreError::Corrupt {
        table: "workflow",
        id: id.into(),
        detail,
    };
    let enum_of = |col: &str| -> StoreResult<String> { Ok(row.text(col)?) };
    Ok(Workflow {
        id,
        job_group: row.int("job_group")?,
        name: row.text("name")?,
        description: row.text("description")?,
        schedule_type: parse_column(row, id, "schedule_type")?,
        schedule_conf: row.text("schedule_conf")?,
        timezone: row.text("timezone")?,
        misfire_strategy: parse_column(row, id, "misfire_strategy")?,
        max_concurrent_runs: row.int("max_concurrent_runs")?,
        overlap_policy: enum_of("overlap_policy")?
            .parse()
            .map_err(|e| corrupt(format!("{e}")))?,
        queue_max: row.int("queue_max")?,
        run_timeout_secs: row.int("run_timeout_secs")?,
        alarm_email: row.text("alarm_email")?,
        alarm_webhook: row.text("alarm_webhook")?,
        definition: Definition::from_json(&row.text("definition")?).map_err(corrupt)?,
        version: row.int("version")?,
        trigger_status: row.int("trigger_status")?,
        trigger_last_time: row.long("trigger_last_time")?,
        trigger_next_time: row.long("trigger_next_time")?,
        owner_id: row.int("owner_id")?,
        add_time: row.long("add_time")?,
        update_time: row.long("update_time")?,
    })
}

/// The columns an insert writes and an update rewrites: all but `id`.
fn writable_columns() -> impl Iterator<Item = &'static str> {
    WORKFLOW_COLUMNS.split(',').map(str::trim).skip(1)
}

/// Binds every column of [`writable_columns`], in order.
macro_rules! bind_workflow {
    ($q:expr, $w:expr) => {
        $q.bind($w.job_group)
            .bind(&$w.name)
            .bind(&$w.description)
            .bind($w.schedule_type.as_str())
            .bind(&$w.schedule_conf)
            .bind(&$w.timezone)
            .bind($w.misfire_strategy.as_str())
            .bind($w.max_concurrent_runs)
            .bind($w.overlap_policy.as_str())
            .bind($w.queue_max)
            .bind($w.run_timeout_secs)
            .bind(&$w.alarm_email)
            .bind(&$w.alarm_webhook)
            .bind($w.definition.to_json())
            .bind($w.version)
            .bind($w.trigger_status)
            .bind($w.trigger_last_time)
            .bind($w.trigger_next_time)
            .bind($w.owner_id)
            .bind($w.add_time)
            .bind($w.update_time)
    };
}

impl Store {
    /// Inserts a workflow (its `id` is ignored) and returns the new id.
    pub async fn insert_workflow(&self, w: &Workflow) -> StoreResult<i32> {
        let columns: Vec<&str> = writable_columns().collect();
        let sql = format!(
            "INSERT INTO workflow ({}) VALUES ({})",
            columns.join(", "),
            placeholders(columns.len())
        );
        let id = insert_returning_id!(self, &sql, |q| bind_workflow!(q, w))?;
        Ok(id as i32)
    }

    /// Rewrites a workflow's every field but its id; false when there is no such workflow.
    pub async fn update_workflow(&self, w: &Workflow) -> StoreResult<bool> {
        let sets = writable_columns()
            .map(|c| format!("{c} = ?"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = self.sql(format!("UPDATE workflow SET {sets} WHERE id = ?"));
        let done = on_pool!(self, pool => bind_workflow!(sqlx::query(&sql), w)
            .bind(w.id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// One workflow.
    pub async fn get_workflow(&self, id: i32) -> StoreResult<Option<Workflow>> {
        let sql = self.sql(format!(
            "SELECT {WORKFLOW_COLUMNS} FROM workflow WHERE id = ?"
        ));
        on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Ok(Some(workflow_from_row(&row)?)),
            None => Ok(None),
        })
    }

    /// The workflows of executor group `job_group` (a JOB node runs a job of its workflow's
    /// group: these are the ones that may use the group's jobs).
    pub async fn workflows_of_group(&self, job_group: i32) -> StoreResult<Vec<Workflow>> {
        let sql = self.sql(format!(
            "SELECT {WORKFLOW_COLUMNS} FROM workflow WHERE job_group = ? ORDER BY id"
        ));
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(job_group)
            .fetch_all(pool)
            .await?
            .iter()
            .map(workflow_from_row)
            .collect())
    }

    /// A page of workflows matching `filter`, limited to `groups` when given, and the total.
    pub async fn list_workflows(
        &self,
        filter: &WorkflowFilter,
        groups: Option<&[i32]>,
    ) -> StoreResult<(i64, Vec<Workflow>)> {
        let mut f = Filter::default();
        if let Some(g) = filter.job_group {
            f.and("job_group = ?", Param::Int(g));
        }
        if let Some(n) = filter.name.as_deref().filter(|n| !n.is_empty()) {
            f.and_contains("name", n);
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
        let count = self.sql(format!("SELECT COUNT(*) AS n FROM workflow{w}"));
        let page = self.sql(format!(
            "SELECT {WORKFLOW_COLUMNS} FROM workflow{w} ORDER BY id LIMIT ? OFFSET ?"
        ));
        let mut page_params = f.params.clone();
        page_params.push(Param::Long(filter.limit.max(0)));
        page_params.push(Param::Long(filter.offset.max(0)));
        on_pool!(self, pool => {
            let total = bind_params!(sqlx::query(&count), f.params).fetch_one(pool).await?.long("n")?;
            let items = bind_params!(sqlx::query(&page), page_params)
                .fetch_all(pool)
                .await?
                .iter()
                .map(workflow_from_row)
                .collect::<StoreResult<Vec<_>>>()?;
            Ok((total, items))
        })
    }

    /// Deletes a workflow with its runs and their nodes; false when there is no such workflow.
    pub async fn delete_workflow(&self, id: i32) -> StoreResult<bool> {
        let nodes = self.sql(
            "DELETE FROM workflow_node WHERE run_id IN (SELECT id FROM workflow_run WHERE workflow_id = ?)",
        );
        let runs = self.sql("DELETE FROM workflow_run WHERE workflow_id = ?");
        let wf = self.sql("DELETE FROM workflow WHERE id = ?");
        let done = on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(&nodes).bind(id).execute(&mut *tx).await?;
            sqlx::query(&runs).bind(id).execute(&mut *tx).await?;
            let n = sqlx::query(&wf).bind(id).execute(&mut *tx).await?.rows_affected();
            tx.commit().await?;
            n
        });
        Ok(done > 0)
    }

    /// Schedules a workflow from `next`; false when there is no such workflow.
    pub async fn start_workflow(&self, id: i32, next: i64, now: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE workflow SET trigger_status = ?, trigger_next_time = ?, update_time = ? WHERE id = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(TRIGGER_STATUS_RUNNING)
            .bind(next)
            .bind(now)
            .bind(id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Stops a workflow's schedule; false when there is no such workflow.
    pub async fn stop_workflow(&self, id: i32, now: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE workflow SET trigger_status = ?, trigger_next_time = 0, update_time = ? WHERE id = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(TRIGGER_STATUS_STOPPED)
            .bind(now)
            .bind(id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Scheduled workflows whose next fire time is at or before `until`, oldest first.
    pub async fn due_workflows(&self, until: i64, limit: i64) -> StoreResult<Vec<Workflow>> {
        let sql = self.sql(format!(
            "SELECT {WORKFLOW_COLUMNS} FROM workflow WHERE trigger_status = {TRIGGER_STATUS_RUNNING} \
             AND trigger_next_time <= ? ORDER BY trigger_next_time LIMIT ?"
        ));
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(until)
            .bind(limit)
            .fetch_all(pool)
            .await?
            .iter()
            .map(workflow_from_row)
            .collect())
    }
}
