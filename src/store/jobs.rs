//! Job definitions (`job_info`) and their glue updates.

use super::dialect::insert_returning_id;
use super::rows::{bind_params, Param, RowExt};
use super::{kept, on_pool, placeholders, Store, StoreError, StoreResult};
use crate::model::{
    join_ids, parse_id_list, JobInfo, AWAITING_COMPLETION, TRIGGER_STATUS_RUNNING,
    TRIGGER_STATUS_STOPPED,
};

pub(crate) const JOB_COLUMNS: &str = "id, add_time, job_group, job_desc, update_time, author, alarm_email, \
    alarm_webhook, schedule_type, schedule_conf, timezone, misfire_strategy, executor_route_strategy, \
    executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, \
    retry_interval_secs, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, \
    trigger_last_time, trigger_next_time, owner_id, max_queued, executor_selector, log_retention_days, log_retention_runs, \
    max_concurrent_instances, instance_overflow, instance_queue_max, instance_queue_ttl_secs";

/// Rows per statement of [`Store::insert_jobs_bulk`] (35 parameters each, well under every
/// backend's parameter limit).
const BULK_INSERT_ROWS: usize = 500;
/// Ids per statement of [`Store::get_jobs`]: bounds the raw rows held at once (see there).
const GET_JOBS_CHUNK: usize = 500;

/// Filters and paging of the job list.
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    /// Only this group.
    pub job_group: Option<i32>,
    /// Only this status (0 stopped, 1 running).
    pub trigger_status: Option<i32>,
    /// Description contains this.
    pub job_desc: Option<String>,
    /// Handler name contains this.
    pub executor_handler: Option<String>,
    /// Author contains this.
    pub author: Option<String>,
    /// Rows to skip.
    pub offset: i64,
    /// Most rows to return.
    pub limit: i64,
}

/// Parses a text column into its enum; a value the code does not know marks the row corrupt.
pub(crate) fn parse_column<T>(row: &impl RowExt, id: i32, col: &str) -> StoreResult<T>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    row.text(col)?.parse().map_err(|e| StoreError::Corrupt {
        table: "job_info",
        id: id.into(),
        detail: format!("{e}"),
    })
}

/// The `child_jobid` list of job `id`; a malformed list marks the row corrupt.
pub(crate) fn child_job_ids_of(row: &impl RowExt, id: i32) -> StoreResult<Vec<i32>> {
    parse_id_list(&row.text("child_jobid")?).map_err(|detail| StoreError::Corrupt {
        table: "job_info",
        id: id.into(),
        detail,
    })
}

pub(crate) fn job_from_row(row: &impl RowExt) -> StoreResult<JobInfo> {
    let id = row.int("id")?;
    Ok(JobInfo {
        id,
        job_group: row.int("job_group")?,
        job_desc: row.text("job_desc")?,
        add_time: row.long("add_time")?,
        update_time: row.long("update_time")?,
        author: row.text("author")?,
        alarm_email: row.text("alarm_email")?,
        alarm_webhook: row.text("alarm_webhook")?,
        schedule_type: parse_column(row, id, "schedule_type")?,
        schedule_conf: row.text("schedule_conf")?,
        timezone: row.text("timezone")?,
        misfire_strategy: parse_column(row, id, "misfire_strategy")?,
        executor_route_strategy: parse_column(row, id, "executor_route_strategy")?,
        executor_handler: row.text("executor_handler")?,
        executor_param: row.text("executor_param")?,
        executor_block_strategy: parse_column(row, id, "executor_block_strategy")?,
        executor_timeout: row.int("executor_timeout")?,
        executor_fail_retry_count: row.int("executor_fail_retry_count")?,
        retry_interval_secs: row.int("retry_interval_secs")?,
        glue_type: parse_column(row, id, "glue_type")?,
        glue_source: row.text("glue_source")?,
        glue_remark: row.text("glue_remark")?,
        glue_updatetime: row.long("glue_updatetime")?,
        child_job_ids: child_job_ids_of(row, id)?,
        trigger_status: row.int("trigger_status")?,
        trigger_last_time: row.long("trigger_last_time")?,
        trigger_next_time: row.long("trigger_next_time")?,
        owner_id: row.int("owner_id")?,
        max_queued: row.int("max_queued")?,
        executor_selector: row.text("executor_selector")?,
        log_retention_days: row.int("log_retention_days")?,
        log_retention_runs: row.int("log_retention_runs")?,
        max_concurrent_instances: row.int("max_concurrent_instances")?,
        instance_overflow: parse_column(row, id, "instance_overflow")?,
        instance_queue_max: row.int("instance_queue_max")?,
        instance_queue_ttl_secs: row.int("instance_queue_ttl_secs")?,
    })
}

/// The columns an update rewrites: all but `id` and `add_time`, in [`JOB_COLUMNS`] order.
pub(crate) fn updatable_columns() -> impl Iterator<Item = &'static str> {
    JOB_COLUMNS.split(',').map(str::trim).skip(2)
}

/// Binds every column of [`updatable_columns`], in order.
macro_rules! bind_job_fields {
    ($q:expr, $job:expr) => {
        $q.bind($job.job_group)
            .bind(&$job.job_desc)
            .bind($job.update_time)
            .bind(&$job.author)
            .bind(&$job.alarm_email)
            .bind(&$job.alarm_webhook)
            .bind($job.schedule_type.as_str())
            .bind(&$job.schedule_conf)
            .bind(&$job.timezone)
            .bind($job.misfire_strategy.as_str())
            .bind($job.executor_route_strategy.as_str())
            .bind(&$job.executor_handler)
            .bind(&$job.executor_param)
            .bind($job.executor_block_strategy.as_str())
            .bind($job.executor_timeout)
            .bind($job.executor_fail_retry_count)
            .bind($job.retry_interval_secs)
            .bind($job.glue_type.as_str())
            .bind(&$job.glue_source)
            .bind(&$job.glue_remark)
            .bind($job.glue_updatetime)
            .bind(join_ids(&$job.child_job_ids))
            .bind($job.trigger_status)
            .bind($job.trigger_last_time)
            .bind($job.trigger_next_time)
            .bind($job.owner_id)
            .bind($job.max_queued)
            .bind(&$job.executor_selector)
            .bind($job.log_retention_days)
            .bind($job.log_retention_runs)
            .bind($job.max_concurrent_instances)
            .bind($job.instance_overflow.as_str())
            .bind($job.instance_queue_max)
            .bind($job.instance_queue_ttl_secs)
    };
}
pub(crate) use bind_job_fields;

impl Store {
    /// Inserts a job (its `id` is ignored) and returns the new id.
    pub async fn insert_job(&self, job: &JobInfo) -> StoreResult<i32> {
        let columns: Vec<&str> = updatable_columns().collect();
        let sql = format!(
            "INSERT INTO job_info (add_time, {}) VALUES (?, {})",
            columns.join(", "),
            placeholders(columns.len())
        );
        let id = insert_returning_id!(self, &sql, |q| bind_job_fields!(q.bind(job.add_time), job))?;
        Ok(id as i32)
    }

    /// Inserts many jobs (their `id`s are ignored) in one transaction of multi-row statements;
    /// returns how many rows were inserted. For loading large job sets (benchmarks, imports).
    pub async fn insert_jobs_bulk(&self, jobs: &[JobInfo]) -> StoreResult<u64> {
        if jobs.is_empty() {
            return Ok(0);
        }
        let columns: Vec<&str> = updatable_columns().collect();
        let row = format!("(?, {})", placeholders(columns.len()));
        let mut inserted = 0;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            for chunk in jobs.chunks(BULK_INSERT_ROWS) {
                let sql = self.sql(format!(
                    "INSERT INTO job_info (add_time, {}) VALUES {}",
                    columns.join(", "),
                    vec![row.as_str(); chunk.len()].join(", ")
                ));
                let mut q = sqlx::query(&sql).persistent(false);
                for job in chunk {
                    q = bind_job_fields!(q.bind(job.add_time), job);
                }
                inserted += q.execute(&mut *tx).await?.rows_affected();
            }
            tx.commit().await?;
        });
        Ok(inserted)
    }

    /// Replaces every field of a job but its id and add time; false when no such job.
    pub async fn update_job(&self, job: &JobInfo) -> StoreResult<bool> {
        let sets = updatable_columns()
            .map(|c| format!("{c} = ?"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = self.sql(format!("UPDATE job_info SET {sets} WHERE id = ?"));
        let done = on_pool!(self, pool => bind_job_fields!(sqlx::query(&sql), job)
            .bind(job.id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Deletes a job with its logs and glue history; false when no such job.
    pub async fn delete_job(&self, id: i32) -> StoreResult<bool> {
        let del_logs = self.sql("DELETE FROM job_log WHERE job_id = ?");
        let del_glue = self.sql("DELETE FROM job_logglue WHERE job_id = ?");
        let del_outputs = self.sql(
            "DELETE FROM workflow_output WHERE log_id IN (SELECT id FROM job_log WHERE job_id = ?)",
        );
        let del_job = self.sql("DELETE FROM job_info WHERE id = ?");
        let done = on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let n = sqlx::query(&del_job).bind(id).execute(&mut *tx).await?.rows_affected();
            sqlx::query(&del_glue).bind(id).execute(&mut *tx).await?;
            sqlx::query(&del_outputs).bind(id).execute(&mut *tx).await?;
            sqlx::query(&del_logs).bind(id).execute(&mut *tx).await?;
            tx.commit().await?;
            n
        });
        Ok(done > 0)
    }

    /// One job by id.
    pub async fn get_job(&self, id: i32) -> StoreResult<Option<JobInfo>> {
        let sql = self.sql(format!("SELECT {JOB_COLUMNS} FROM job_info WHERE id = ?"));
        on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Ok(Some(job_from_row(&row)?)),
            None => Ok(None),
        })
    }

    /// The jobs with these ids that exist, ordered by id within each chunk of ids.
    ///
    /// Ids go in chunks, which keeps every statement far below the backends' bound-parameter
    /// limits (SQLite's 32,766 is the lowest) and bounds the raw rows held at once, rather than a
    /// whole second's jobs. Each chunk's rows are fetched whole rather than streamed: on SQLite a
    /// streamed row is handed from the connection's thread to the caller one at a time, which
    /// costs more CPU per job read.
    pub async fn get_jobs(&self, ids: &[i32]) -> StoreResult<Vec<JobInfo>> {
        let mut jobs = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(GET_JOBS_CHUNK) {
            let sql = self.sql(format!(
                "SELECT {JOB_COLUMNS} FROM job_info WHERE id IN ({}) ORDER BY id",
                placeholders(chunk.len())
            ));
            let params: Vec<Param> = chunk.iter().map(|i| Param::Int(*i)).collect();
            on_pool!(self, pool => {
                let rows = bind_params!(sqlx::query(&sql).persistent(kept(chunk.len())), params)
                    .fetch_all(pool)
                    .await?;
                for row in rows {
                    jobs.push(job_from_row(&row)?);
                }
            });
        }
        Ok(jobs)
    }

    /// A page of jobs matching the filter, ordered by id, and the total count.
    pub async fn list_jobs(&self, filter: &JobFilter) -> StoreResult<(i64, Vec<JobInfo>)> {
        self.list_jobs_scoped(filter, None).await
    }

    /// How many jobs are defined.
    pub async fn count_jobs(&self) -> StoreResult<i64> {
        on_pool!(self, pool => Ok(sqlx::query("SELECT COUNT(*) AS n FROM job_info").fetch_one(pool).await?.long("n")?))
    }

    /// Schedules a job from `next_time` on; false when no such job.
    pub async fn start_job(&self, id: i32, next_time: i64, now: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE job_info SET trigger_status = ?, trigger_last_time = 0, trigger_next_time = ?, \
             update_time = ? WHERE id = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(TRIGGER_STATUS_RUNNING)
            .bind(next_time)
            .bind(now)
            .bind(id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Stops a job's schedule; false when no such job.
    pub async fn stop_job(&self, id: i32, now: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE job_info SET trigger_status = ?, trigger_last_time = 0, trigger_next_time = 0, \
             update_time = ? WHERE id = ?",
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

    /// Sets the next fire time of a scheduled job (FIX_DELAY after a run ends);
    /// false when the job is gone or stopped.
    pub async fn set_next_fire_time(&self, id: i32, next_time: i64) -> StoreResult<bool> {
        let sql = self
            .sql("UPDATE job_info SET trigger_next_time = ? WHERE id = ? AND trigger_status = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(next_time)
            .bind(id)
            .bind(TRIGGER_STATUS_RUNNING)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Moves a scheduled job's next fire time to `next` where its fire times are still
    /// `(last, next)` as read (a pass claiming one meanwhile moved them); false otherwise.
    pub async fn reschedule_job(
        &self,
        id: i32,
        (last, expected_next): (i64, i64),
        next: i64,
    ) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE job_info SET trigger_next_time = ? WHERE id = ? AND trigger_status = ? \
             AND trigger_last_time = ? AND trigger_next_time = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(next)
            .bind(id)
            .bind(TRIGGER_STATUS_RUNNING)
            .bind(last)
            .bind(expected_next)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Ends a FIX_DELAY job's wait for its run: sets the next fire time if the job is still
    /// scheduled and still waiting; false otherwise (stopped, edited, or already resumed).
    pub async fn resume_after_run(&self, id: i32, next_time: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE job_info SET trigger_next_time = ? WHERE id = ? AND trigger_status = ? AND trigger_next_time = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(next_time)
            .bind(id)
            .bind(TRIGGER_STATUS_RUNNING)
            .bind(AWAITING_COMPLETION)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Saves a new script version on the job and in its history, keeping the newest `keep`
    /// versions.
    pub async fn save_glue(
        &self,
        job_id: i32,
        glue_source: &str,
        glue_remark: &str,
        now: i64,
        keep: i64,
    ) -> StoreResult<bool> {
        let update = self.sql(
            "UPDATE job_info SET glue_source = ?, glue_remark = ?, glue_updatetime = ?, update_time = ? WHERE id = ?",
        );
        let insert = self.sql(
            "INSERT INTO job_logglue (job_id, glue_type, glue_source, glue_remark, add_time, update_time) \
             SELECT id, glue_type, glue_source, glue_remark, ?, ? FROM job_info WHERE id = ?",
        );
        let done = on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let n = sqlx::query(&update)
                .bind(glue_source)
                .bind(glue_remark)
                .bind(now)
                .bind(now)
                .bind(job_id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n > 0 {
                sqlx::query(&insert).bind(now).bind(now).bind(job_id).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            n
        });
        if done > 0 {
            self.prune_glue_versions(job_id, keep).await?;
        }
        Ok(done > 0)
    }
}
