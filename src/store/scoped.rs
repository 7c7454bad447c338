//! Queries of the REST API: lists limited to the groups a user may see, and job edits that
//! leave the scheduler's columns alone.

use super::jobs::{job_from_row, JobFilter, JOB_COLUMNS};
use super::logs::{log_from_row, LogFilter, COLUMNS as LOG_COLUMNS};
use super::rows::{bind_params, Filter, Param, RowExt};
use super::{on_pool, placeholders, Store, StoreResult};
use crate::model::{join_ids, JobInfo, RunRow};

/// Adds `column IN (...)` for a group scope; false when the scope is empty (nothing can match).
fn limit_to_groups(f: &mut Filter, column: &str, groups: Option<&[i32]>) -> bool {
    match groups {
        None => true,
        Some([]) => false,
        Some(ids) => {
            f.and_raw(&format!("{column} IN ({})", placeholders(ids.len())));
            f.params.extend(ids.iter().map(|i| Param::Int(*i)));
            true
        }
    }
}

impl Store {
    /// Like [`Store::list_jobs`], limited to jobs of `groups` when given (a normal user's
    /// permitted groups); an empty list matches nothing.
    pub async fn list_jobs_scoped(
        &self,
        filter: &JobFilter,
        groups: Option<&[i32]>,
    ) -> StoreResult<(i64, Vec<JobInfo>)> {
        let mut f = Filter::default();
        if let Some(g) = filter.job_group {
            f.and("job_group = ?", Param::Int(g));
        }
        if let Some(s) = filter.trigger_status {
            f.and("trigger_status = ?", Param::Int(s));
        }
        if let Some(t) = filter.job_desc.as_deref().filter(|t| !t.is_empty()) {
            f.and_contains("job_desc", t);
        }
        if let Some(t) = filter.executor_handler.as_deref().filter(|t| !t.is_empty()) {
            f.and_contains("executor_handler", t);
        }
        if let Some(t) = filter.author.as_deref().filter(|t| !t.is_empty()) {
            f.and_contains("author", t);
        }
        if !limit_to_groups(&mut f, "job_group", groups) {
            return Ok((0, Vec::new()));
        }
        let where_clause = f.where_clause();
        let count_sql = self.sql(format!("SELECT COUNT(*) AS n FROM job_info{where_clause}"));
        let page_sql = self.sql(format!(
            "SELECT {JOB_COLUMNS} FROM job_info{where_clause} ORDER BY id LIMIT ? OFFSET ?"
        ));
        let mut page_params = f.params.clone();
        page_params.push(Param::Long(filter.limit.max(0)));
        page_params.push(Param::Long(filter.offset.max(0)));
        on_pool!(self, pool => {
            let total = bind_params!(sqlx::query(&count_sql), f.params).fetch_one(pool).await?.long("n")?;
            let jobs = bind_params!(sqlx::query(&page_sql), page_params)
                .fetch_all(pool)
                .await?
                .iter()
                .map(job_from_row)
                .collect::<StoreResult<Vec<_>>>()?;
            Ok((total, jobs))
        })
    }

    /// Like [`Store::list_logs`], limited to logs of `groups` when given; an empty list
    /// matches nothing.
    pub async fn list_logs_scoped(
        &self,
        filter: &LogFilter,
        groups: Option<&[i32]>,
    ) -> StoreResult<(i64, Vec<RunRow>)> {
        let mut f = filter.to_filter();
        if !limit_to_groups(&mut f, "job_group", groups) {
            return Ok((0, Vec::new()));
        }
        let where_clause = f.where_clause();
        let mut count_params = f.params.clone();
        let count_sql = self.sql(match filter.count_up_to {
            Some(most) => {
                count_params.push(Param::Long(most.max(0) + 1));
                format!("SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM job_log{where_clause} LIMIT ?) capped")
            }
            None => format!("SELECT COUNT(*) AS n FROM job_log{where_clause}"),
        });
        let page_sql = self.sql(format!(
            "SELECT {LOG_COLUMNS} FROM job_log{where_clause} ORDER BY id DESC LIMIT ? OFFSET ?"
        ));
        let mut page_params = f.params.clone();
        page_params.push(Param::Long(filter.limit.max(0)));
        page_params.push(Param::Long(filter.offset.max(0)));
        on_pool!(self, pool => {
            let total = bind_params!(sqlx::query(&count_sql), count_params).fetch_one(pool).await?.long("n")?;
            let logs = bind_params!(sqlx::query(&page_sql), page_params)
                .fetch_all(pool)
                .await?
                .iter()
                .map(log_from_row)
                .collect::<StoreResult<Vec<_>>>()?;
            Ok((total, logs))
        })
    }

    /// Saves a job's definition as edited by a user: every column except the scheduler's
    /// (`trigger_status`, `trigger_last_time`, `trigger_next_time`, which the scheduler moves with
    /// compare-and-set updates and an edit must not roll back) and the script
    /// (`glue_source`, `glue_updatetime`: [`Store::save_glue`] keeps their history).
    /// False when no such job.
    pub async fn update_job_definition(&self, job: &JobInfo) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE job_info SET job_group = ?, job_desc = ?, update_time = ?, author = ?, \
             alarm_email = ?, alarm_webhook = ?, schedule_type = ?, schedule_conf = ?, timezone = ?, \
             misfire_strategy = ?, executor_route_strategy = ?, executor_handler = ?, executor_param = ?, \
             executor_block_strategy = ?, executor_timeout = ?, executor_fail_retry_count = ?, \
             retry_interval_secs = ?, glue_type = ?, glue_remark = ?, child_jobid = ?, owner_id = ?, max_queued = ?, \
             executor_selector = ?, log_retention_days = ?, log_retention_runs = ?, \
             max_concurrent_instances = ?, instance_overflow = ?, instance_queue_max = ?, \
             instance_queue_ttl_secs = ? WHERE id = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(job.job_group)
            .bind(&job.job_desc)
            .bind(job.update_time)
            .bind(&job.author)
            .bind(&job.alarm_email)
            .bind(&job.alarm_webhook)
            .bind(job.schedule_type.as_str())
            .bind(&job.schedule_conf)
            .bind(&job.timezone)
            .bind(job.misfire_strategy.as_str())
            .bind(job.executor_route_strategy.as_str())
            .bind(&job.executor_handler)
            .bind(&job.executor_param)
            .bind(job.executor_block_strategy.as_str())
            .bind(job.executor_timeout)
            .bind(job.executor_fail_retry_count)
            .bind(job.retry_interval_secs)
            .bind(job.glue_type.as_str())
            .bind(&job.glue_remark)
            .bind(join_ids(&job.child_job_ids))
            .bind(job.owner_id)
            .bind(job.max_queued)
            .bind(&job.executor_selector)
            .bind(job.log_retention_days)
            .bind(job.log_retention_runs)
            .bind(job.max_concurrent_instances)
            .bind(job.instance_overflow.as_str())
            .bind(job.instance_queue_max)
            .bind(job.instance_queue_ttl_secs)
            .bind(job.id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// `(scheduled, stopped)` jobs of `groups` (all groups when `None`).
    pub async fn count_jobs_by_status(&self, groups: Option<&[i32]>) -> StoreResult<(i64, i64)> {
        let mut f = Filter::default();
        if !limit_to_groups(&mut f, "job_group", groups) {
            return Ok((0, 0));
        }
        let sql = self.sql(format!(
            "SELECT trigger_status, COUNT(*) AS n FROM job_info{} GROUP BY trigger_status",
            f.where_clause()
        ));
        on_pool!(self, pool => {
            let (mut scheduled, mut stopped) = (0, 0);
            for row in bind_params!(sqlx::query(&sql), f.params).fetch_all(pool).await? {
                match row.int("trigger_status")? {
                    0 => stopped += row.long("n")?,
                    _ => scheduled += row.long("n")?,
                }
            }
            Ok((scheduled, stopped))
        })
    }
}
