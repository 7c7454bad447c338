//! Trigger/run records (`job_log`).

use std::str::FromStr;

use super::dialect::log_counts;
use super::jobs::{child_job_ids_of, parse_column};
use super::rows::{bind_params, Filter, Param, RowExt};
use super::{kept, on_pool, padded_id_list, placeholders, Store, StoreError, StoreResult};
use crate::model::{
    Admission, JobFollowUps, JobSchedule, LogCounts, NewRunRow, ResultLog, RunRow, TriggerType,
};

pub(crate) const COLUMNS: &str = "id, job_group, job_id, trigger_type, schedule_time, executor_address, executor_handler, \
    executor_param, executor_sharding_param, executor_fail_retry_count, trigger_time, trigger_code, trigger_msg, \
    handle_time, handle_code, handle_msg, alarm_status, wf_run_id, wf_node, admission";

/// Most log ids per statement of [`Store::get_result_logs`], far below every backend's
/// bound-parameter limit.
const RESULT_LOGS_CHUNK: usize = 1_024;

/// How long the fail monitor waits for a trigger's outcome (trigger code and message) when the
/// run's result was stored first.
pub const TRIGGER_OUTCOME_GRACE_MS: i64 = 60_000;

/// Where a run's log lines are: what an executor needs to drop them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLogPlace {
    /// The run's log row.
    pub log_id: i64,
    /// Its group, whose token the executor expects.
    pub job_group: i32,
    /// The executor it was sent to; `None` when the trigger reached none.
    pub executor_address: Option<String>,
    /// Its trigger time, epoch ms (the `/log` request's `logDateTime`).
    pub trigger_time: i64,
}

/// One result for [`Store::complete_logs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogResultRow {
    /// The log.
    pub log_id: i64,
    /// 200 success, else failure.
    pub handle_code: i32,
    /// Result message.
    pub handle_msg: Option<String>,
}

/// A run's state as the log list filters it (XXL-JOB's `logStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogStatus {
    /// Result 200.
    Success,
    /// The trigger or the run failed.
    Fail,
    /// Accepted by the executor, no result yet.
    Running,
}

impl FromStr for LogStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "success" => Ok(LogStatus::Success),
            "fail" => Ok(LogStatus::Fail),
            "running" => Ok(LogStatus::Running),
            other => Err(format!(
                "unknown status '{other}'; allowed: success, fail, running"
            )),
        }
    }
}

impl LogStatus {
    fn condition(self) -> &'static str {
        match self {
            LogStatus::Success => "handle_code = 200",
            LogStatus::Fail => "(trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))",
            LogStatus::Running => "(trigger_code = 200 AND handle_code = 0)",
        }
    }
}

/// Filters and paging of the log list.
#[derive(Debug, Clone, Default)]
pub struct LogFilter {
    /// Only this group.
    pub job_group: Option<i32>,
    /// Only this job.
    pub job_id: Option<i32>,
    /// Only runs in this state.
    pub status: Option<LogStatus>,
    /// Only runs with this admission (QUEUED ones waiting for a slot, say).
    pub admission: Option<Admission>,
    /// Triggered at or after this time, epoch ms.
    pub from: Option<i64>,
    /// Triggered before this time, epoch ms.
    pub to: Option<i64>,
    /// Rows to skip.
    pub offset: i64,
    /// Most rows to return.
    pub limit: i64,
    /// Stop counting matches past this many (the total then reads `count_up_to + 1`); `None`
    /// counts them all. An exact total of an unfiltered list is a scan of the whole table on
    /// PostgreSQL, too slow for a page an operator opens first.
    pub count_up_to: Option<i64>,
}

impl LogFilter {
    pub(crate) fn to_filter(&self) -> Filter {
        let mut f = Filter::default();
        if let Some(g) = self.job_group {
            f.and("job_group = ?", Param::Int(g));
        }
        if let Some(j) = self.job_id {
            f.and("job_id = ?", Param::Int(j));
        }
        if let Some(s) = self.status {
            f.and_raw(s.condition());
        }
        if let Some(a) = self.admission {
            f.and("admission = ?", Param::Text(a.as_str().to_string()));
        }
        if let Some(t) = self.from {
            f.and("trigger_time >= ?", Param::Long(t));
        }
        if let Some(t) = self.to {
            f.and("trigger_time < ?", Param::Long(t));
        }
        f
    }
}

/// The `trigger_type` column of log `id`; a value the code does not know marks the row corrupt.
fn trigger_type_of(row: &impl RowExt, id: i64) -> StoreResult<TriggerType> {
    row.text("trigger_type")?
        .parse()
        .map_err(|e| StoreError::Corrupt {
            table: "job_log",
            id,
            detail: format!("{e}"),
        })
}

pub(crate) fn log_from_row(row: &impl RowExt) -> StoreResult<RunRow> {
    let id = row.long("id")?;
    Ok(RunRow {
        id,
        job_group: row.int("job_group")?,
        job_id: row.int("job_id")?,
        trigger_type: trigger_type_of(row, id)?,
        schedule_time: row.long("schedule_time")?,
        executor_address: row.opt_text("executor_address")?,
        executor_handler: row.opt_text("executor_handler")?,
        executor_param: row.opt_text("executor_param")?,
        executor_sharding_param: row.opt_text("executor_sharding_param")?,
        executor_fail_retry_count: row.int("executor_fail_retry_count")?,
        trigger_time: row.long("trigger_time")?,
        trigger_code: row.int("trigger_code")?,
        trigger_msg: row.opt_text("trigger_msg")?,
        handle_time: row.long("handle_time")?,
        handle_code: row.int("handle_code")?,
        handle_msg: row.opt_text("handle_msg")?,
        alarm_status: row.int("alarm_status")?,
        wf_run_id: row.opt_long("wf_run_id")?,
        wf_node: row.opt_text("wf_node")?,
        // written by admission only; a name it does not know reads as the default
        admission: row.text("admission")?.parse().unwrap_or(Admission::Ran),
    })
}

fn result_log_from_row(row: &impl RowExt) -> StoreResult<ResultLog> {
    let log_id = row.long("id")?;
    // the job columns are NULL when the job was deleted after the trigger
    let job = match row.opt_int("j_id")? {
        None => None,
        Some(id) => Some(JobFollowUps {
            schedule: JobSchedule {
                id,
                schedule_type: parse_column(row, id, "schedule_type")?,
                schedule_conf: row.text("schedule_conf")?,
                timezone: row.text("timezone")?,
            },
            child_job_ids: child_job_ids_of(row, id)?,
            job_group: row.int("j_group")?,
            owner_id: row.int("owner_id")?,
        }),
    };
    Ok(ResultLog {
        log_id,
        job_id: row.int("job_id")?,
        job_group: row.int("job_group")?,
        handle_code: row.int("handle_code")?,
        trigger_type: trigger_type_of(row, log_id)?,
        wf_run_id: row.opt_long("wf_run_id")?.unwrap_or(0),
        job,
    })
}

pub(super) fn ids_from_rows(rows: &[impl RowExt]) -> StoreResult<Vec<i64>> {
    rows.iter().map(|r| Ok(r.long("id")?)).collect()
}

/// The lost-result monitor's candidates (see [`Store::find_lost_log_ids`]).
/// Runs an executor accepted (code 200) and runs whose trigger's outcome was never recorded
/// (code 0: the admin could not write it), both without a result.
pub(super) const LOST_CANDIDATES: &str =
    "SELECT id FROM job_log WHERE alarm_status = 0 AND handle_code = 0 \
     AND trigger_code IN (0, 200) AND trigger_time <= ? AND id > ? ORDER BY id LIMIT ?";

/// One batch of `find_log_ids_to_clear`: with a time bound (`by_time`), oldest by trigger time,
/// which the time indexes serve with the bound, stopping at the limit. `ORDER BY id` would
/// either walk the whole primary key past rows that are all too new (PostgreSQL's plan without
/// fresh statistics: seconds a batch at a few hundred thousand rows) or sort every expired row
/// for each batch.
pub(super) fn clear_batch(where_clause: &str, by_time: bool) -> String {
    let order = if by_time { "trigger_time, id" } else { "id" };
    format!("SELECT id FROM job_log{where_clause} ORDER BY {order} LIMIT ?")
}

impl Store {
    /// Inserts a log row before the executor is called and returns its id (the `logId`).
    pub async fn insert_log(&self, log: &NewRunRow) -> StoreResult<i64> {
        let ids = self.insert_logs(std::slice::from_ref(log)).await?;
        ids.first()
            .copied()
            .ok_or(StoreError::Database(sqlx::Error::RowNotFound))
    }

    /// Stores a run's result once: true if this call recorded it, false when the log is unknown
    /// or already has a result (a duplicate or late callback changes nothing).
    /// A success needs no alarm, which keeps the failed-log scan's index small.
    pub async fn complete_log(
        &self,
        log_id: i64,
        handle_code: i32,
        handle_msg: Option<&str>,
        now: i64,
    ) -> StoreResult<bool> {
        let row = LogResultRow {
            log_id,
            handle_code,
            handle_msg: handle_msg.map(str::to_string),
        };
        let stored = self.complete_logs(std::slice::from_ref(&row), now).await?;
        Ok(stored.first().copied().unwrap_or(false))
    }

    /// The log rows with these ids that exist (any order).
    pub async fn get_logs(&self, ids: &[i64]) -> StoreResult<Vec<RunRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = self.sql(format!(
            "SELECT {COLUMNS} FROM job_log WHERE id IN ({})",
            placeholders(ids.len())
        ));
        let params: Vec<Param> = ids.iter().map(|i| Param::Long(*i)).collect();
        on_pool!(self, pool => bind_params!(sqlx::query(&sql).persistent(kept(ids.len())), params)
            .fetch_all(pool)
            .await?
            .iter()
            .map(log_from_row)
            .collect())
    }

    /// What storing a result needs of these logs and their jobs, for the ids that exist (any
    /// order): one narrow join instead of whole log rows and whole job rows.
    pub async fn get_result_logs(&self, ids: &[i64]) -> StoreResult<Vec<ResultLog>> {
        let mut logs = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(RESULT_LOGS_CHUNK) {
            let (list, params) = padded_id_list(chunk);
            let sql = self.sql(format!(
                "SELECT l.id AS id, l.job_id AS job_id, l.job_group AS job_group, l.handle_code AS handle_code, \
                 l.trigger_type AS trigger_type, l.wf_run_id AS wf_run_id, j.id AS j_id, j.schedule_type AS schedule_type, \
                 j.schedule_conf AS schedule_conf, j.timezone AS timezone, j.child_jobid AS child_jobid, \
                 j.job_group AS j_group, j.owner_id AS owner_id \
                 FROM job_log l LEFT JOIN job_info j ON j.id = l.job_id WHERE l.id IN ({list})"
            ));
            on_pool!(self, pool => {
                for row in bind_params!(sqlx::query(&sql), params)
                    .fetch_all(pool)
                    .await?
                {
                    logs.push(result_log_from_row(&row)?);
                }
            });
        }
        Ok(logs)
    }

    /// Whether a run of row `of`'s job newer than it is open on the executor at `address`, or
    /// on its way to an executor (its call's outcome not written, triggered since `since`): a
    /// kill, which stops every run of a job on an executor, would stop that one too.
    pub async fn newer_open_run(
        &self,
        of: &RunRow,
        address: &str,
        since: i64,
    ) -> StoreResult<bool> {
        let sql = self.sql(
            "SELECT id FROM job_log WHERE job_id = ? AND trigger_time >= ? AND id > ? \
             AND handle_code = 0 AND ((trigger_code = 200 AND executor_address = ?) \
             OR (trigger_code = 0 AND trigger_time >= ?)) LIMIT 1",
        );
        on_pool!(self, pool => Ok(sqlx::query(&sql)
            .bind(of.job_id)
            .bind(of.trigger_time)
            .bind(of.id)
            .bind(address)
            .bind(since)
            .fetch_optional(pool)
            .await?
            .is_some()))
    }

    /// One log row by id.
    pub async fn get_log(&self, id: i64) -> StoreResult<Option<RunRow>> {
        let sql = self.sql(format!("SELECT {COLUMNS} FROM job_log WHERE id = ?"));
        on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Ok(Some(log_from_row(&row)?)),
            None => Ok(None),
        })
    }

    /// A page of log rows, newest first, and the total count.
    pub async fn list_logs(&self, filter: &LogFilter) -> StoreResult<(i64, Vec<RunRow>)> {
        self.list_logs_scoped(filter, None).await
    }

    /// Ids of failed runs not yet looked at by a fail monitor, oldest first. Workflow nodes are
    /// left out: their runs retry them and alarm once for the whole run.
    pub async fn find_failed_log_ids(&self, limit: i64) -> StoreResult<Vec<i64>> {
        let sql = self.sql(
            "SELECT id FROM job_log WHERE alarm_status = 0 AND trigger_type <> 'WORKFLOW' \
             AND NOT ((trigger_code IN (0, 200) AND handle_code = 0) OR handle_code = 200) \
             ORDER BY id LIMIT ?",
        );
        on_pool!(self, pool => ids_from_rows(&sqlx::query(&sql).bind(limit).fetch_all(pool).await?))
    }

    /// Like [`Store::find_failed_log_ids`], but leaves out failed runs whose retry is still
    /// waiting for the job's `retry_interval_secs` to pass since the result (or, without a
    /// result, since the trigger). Such a log keeps `alarm_status` 0 until then, so a pending
    /// retry survives a restart and is claimed (and fired) once, by one admin.
    ///
    /// A result that arrived before the trigger's own outcome was written (a run that failed
    /// within milliseconds) waits for that outcome, which rewrites the trigger message a retry
    /// note is appended to, for at most [`TRIGGER_OUTCOME_GRACE_MS`].
    pub async fn find_failed_log_ids_due(&self, now: i64, limit: i64) -> StoreResult<Vec<i64>> {
        // `? * retry_interval_secs` with a 64-bit parameter keeps PostgreSQL from int4 overflow
        let sql = self.sql(
            "SELECT l.id AS id FROM job_log l LEFT JOIN job_info j ON j.id = l.job_id \
             WHERE l.alarm_status = 0 AND l.trigger_type <> 'WORKFLOW' \
             AND NOT ((l.trigger_code IN (0, 200) AND l.handle_code = 0) OR l.handle_code = 200) \
             AND (l.trigger_code <> 0 OR l.trigger_time <= ?) \
             AND (l.executor_fail_retry_count <= 0 OR j.id IS NULL OR j.retry_interval_secs <= 0 \
                  OR (CASE WHEN l.handle_time > 0 THEN l.handle_time ELSE l.trigger_time END) \
                     + ? * j.retry_interval_secs <= ?) \
             ORDER BY l.id LIMIT ?",
        );
        on_pool!(self, pool => ids_from_rows(&sqlx::query(&sql)
            .bind(now - TRIGGER_OUTCOME_GRACE_MS)
            .bind(1_000i64)
            .bind(now)
            .bind(limit)
            .fetch_all(pool)
            .await?))
    }

    /// Moves a log's alarm status from `from` to `to`; false if another admin moved it first.
    pub async fn update_alarm_status(&self, log_id: i64, from: i32, to: i32) -> StoreResult<bool> {
        let sql = self.sql("UPDATE job_log SET alarm_status = ? WHERE id = ? AND alarm_status = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(to)
            .bind(log_id)
            .bind(from)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Appends text to a log's trigger message (e.g. the retry note).
    pub async fn append_trigger_msg(&self, log_id: i64, text: &str) -> StoreResult<bool> {
        let current = self.get_log(log_id).await?;
        let Some(log) = current else { return Ok(false) };
        let msg = format!("{}{}", log.trigger_msg.unwrap_or_default(), text);
        let sql = self.sql("UPDATE job_log SET trigger_msg = ? WHERE id = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql).bind(msg).bind(log_id).execute(pool).await?.rows_affected());
        Ok(done > 0)
    }

    /// Ids above `after_id` of accepted runs with no result, triggered at or before `before`,
    /// in id order: the candidates of the lost-result monitor, which asks their executors.
    /// An open run's `alarm_status` is 0, so the scan walks the alarm index, which holds few
    /// rows at 0, rather than an index of its own that every trigger outcome would update.
    ///
    /// Unlike XXL-JOB's query, a registration does not exclude a run: a killed executor stays
    /// registered until its beat is 90 s old, and one restarted at once registers again
    /// without the runs it lost.
    pub async fn find_lost_log_ids(
        &self,
        before: i64,
        after_id: i64,
        limit: i64,
    ) -> StoreResult<Vec<i64>> {
        let sql = self.sql(LOST_CANDIDATES);
        on_pool!(self, pool => ids_from_rows(&sqlx::query(&sql).bind(before).bind(after_id).bind(limit).fetch_all(pool).await?))
    }

    /// Ids of rows matching the filter (group/job/before-time), oldest first, for batched deletes.
    /// With `keep_last`, the newest that many rows of the filter are never returned.
    pub async fn find_log_ids_to_clear(
        &self,
        job_group: Option<i32>,
        job_id: Option<i32>,
        before: Option<i64>,
        keep_last: Option<i64>,
        limit: i64,
    ) -> StoreResult<Vec<i64>> {
        let mut f = Filter::default();
        if let Some(g) = job_group {
            f.and("job_group = ?", Param::Int(g));
        }
        if let Some(j) = job_id {
            f.and("job_id = ?", Param::Int(j));
        }
        if let Some(t) = before {
            f.and("trigger_time < ?", Param::Long(t));
        }
        if let Some(keep) = keep_last {
            // the id of the oldest row to keep bounds what may go
            let mut params = f.params.clone();
            params.push(Param::Long(keep.max(0)));
            let sql = self.sql(format!(
                "SELECT id FROM job_log{} ORDER BY id DESC LIMIT 1 OFFSET ?",
                f.where_clause()
            ));
            let boundary: Option<i64> = on_pool!(self, pool => match bind_params!(sqlx::query(&sql), params)
                .fetch_optional(pool)
                .await? {
                Some(row) => Some(row.long("id")?),
                None => None,
            });
            match boundary {
                Some(id) => f.and("id <= ?", Param::Long(id)),
                None => return Ok(Vec::new()),
            }
        }
        let mut params = f.params.clone();
        params.push(Param::Long(limit));
        let sql = self.sql(clear_batch(&f.where_clause(), before.is_some()));
        on_pool!(self, pool => ids_from_rows(&bind_params!(sqlx::query(&sql), params).fetch_all(pool).await?))
    }

    /// Ids of rows triggered before `before` whose job keeps no days of its own (those a job's
    /// `log_retention_days` bounds are its own pass's), oldest first.
    pub async fn find_log_ids_expired(&self, before: i64, limit: i64) -> StoreResult<Vec<i64>> {
        let sql = self.sql(clear_batch(
            " WHERE trigger_time < ? AND job_id NOT IN \
             (SELECT id FROM job_info WHERE log_retention_days > 0)",
            true,
        ));
        on_pool!(self, pool => ids_from_rows(&sqlx::query(&sql).bind(before).bind(limit).fetch_all(pool).await?))
    }

    /// Jobs with a retention of their own: (job id, days, runs).
    pub async fn jobs_with_own_retention(&self) -> StoreResult<Vec<(i32, i32, i32)>> {
        let sql = self.sql(
            "SELECT id, log_retention_days, log_retention_runs FROM job_info \
             WHERE log_retention_days > 0 OR log_retention_runs > 0 ORDER BY id",
        );
        let rows = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok((r.int("id")?, r.int("log_retention_days")?, r.int("log_retention_runs")?)))
            .collect::<Result<Vec<_>, sqlx::Error>>()?);
        Ok(rows)
    }

    /// Where the lines of the runs `ids` are, for the runs that were sent to an executor.
    pub async fn run_log_places(&self, ids: &[i64]) -> StoreResult<Vec<RunLogPlace>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = self.sql(format!(
            "SELECT id, job_group, executor_address, trigger_time FROM job_log \
             WHERE id IN ({}) AND executor_address IS NOT NULL ORDER BY id",
            placeholders(ids.len())
        ));
        let params: Vec<Param> = ids.iter().map(|i| Param::Long(*i)).collect();
        let places = on_pool!(self, pool => bind_params!(sqlx::query(&sql).persistent(false), params)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok(RunLogPlace {
                log_id: r.long("id")?,
                job_group: r.int("job_group")?,
                executor_address: r.opt_text("executor_address")?.filter(|a| !a.is_empty()),
                trigger_time: r.long("trigger_time")?,
            }))
            .collect::<Result<Vec<_>, sqlx::Error>>()?);
        Ok(places)
    }

    /// Deletes log rows by id (with the full outputs of workflow nodes); returns how many went.
    pub async fn delete_logs(&self, ids: &[i64]) -> StoreResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let sql = self.sql(format!(
            "DELETE FROM job_log WHERE id IN ({})",
            placeholders(ids.len())
        ));
        let outputs = self.sql(format!(
            "DELETE FROM workflow_output WHERE log_id IN ({})",
            placeholders(ids.len())
        ));
        let params: Vec<Param> = ids.iter().map(|i| Param::Long(*i)).collect();
        let done = on_pool!(self, pool => {
            let outputs_params = params.clone();
            bind_params!(sqlx::query(&outputs).persistent(false), outputs_params).execute(pool).await?;
            bind_params!(sqlx::query(&sql).persistent(false), params).execute(pool).await?.rows_affected()
        });
        Ok(done)
    }

    /// Counts of runs triggered in `[from, to)`.
    pub async fn count_logs(&self, from: i64, to: i64) -> StoreResult<LogCounts> {
        let sql = self.sql(log_counts(self.backend()));
        on_pool!(self, pool => {
            let row = sqlx::query(&sql).bind(from).bind(to).fetch_one(pool).await?;
            Ok(LogCounts { total: row.long("total")?, running: row.long("running")?, success: row.long("success")? })
        })
    }

    /// Like [`Store::count_logs`], counting only runs of `groups` (an empty list counts none).
    pub async fn count_logs_in_groups(
        &self,
        from: i64,
        to: i64,
        groups: &[i32],
    ) -> StoreResult<LogCounts> {
        if groups.is_empty() {
            return Ok(LogCounts::default());
        }
        let sql = self.sql(format!(
            "{} AND job_group IN ({})",
            log_counts(self.backend()),
            super::placeholders(groups.len())
        ));
        on_pool!(self, pool => {
            let mut q = sqlx::query(&sql).bind(from).bind(to);
            for g in groups {
                q = q.bind(*g);
            }
            let row = q.fetch_one(pool).await?;
            Ok(LogCounts { total: row.long("total")?, running: row.long("running")?, success: row.long("success")? })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_and_name_bad_values() {
        assert_eq!("running".parse::<LogStatus>().unwrap(), LogStatus::Running);
        assert_eq!(
            "done".parse::<LogStatus>().unwrap_err(),
            "unknown status 'done'; allowed: success, fail, running"
        );
    }
}
