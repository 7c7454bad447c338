//! Writing imported rows with the ids they had in XXL-JOB (`jobwheel import-xxl`), and the
//! reads the importer compares them with.
//!
//! Groups, jobs, script versions and run logs keep their ids, because other rows and the
//! executors refer to them (child job lists, user permissions, `logId`s of runs still going).
//! Inserting an explicit id moves SQLite's and MySQL's auto-increment counters on by itself;
//! PostgreSQL's sequences do not move, so [`advance_sequences`] sets them past the largest id,
//! or the next job created would collide with an imported one.

use super::glue::glue_version;
use super::groups::join_addresses;
use super::jobs::{bind_job_fields, updatable_columns};
use super::logs::COLUMNS as LOG_COLUMNS;
use super::rows::{bind_params, Param, RowExt};
use super::{on_pool, placeholders, Backend, Store, StoreResult};
use crate::model::{join_ids, GlueVersion, JobGroup, JobInfo, RunRow, User};

/// Rows per multi-row INSERT of run logs (17 parameters each: far below every backend's limit).
const LOG_ROWS_PER_STATEMENT: usize = 500;
/// Ids per `IN (...)` list of the comparison reads.
const IDS_PER_READ: usize = 500;

/// The definitions one import writes in one transaction.
#[derive(Debug, Clone, Default)]
pub struct ImportBatch {
    /// Groups, with their ids.
    pub groups: Vec<JobGroup>,
    /// Jobs, with their ids.
    pub jobs: Vec<JobInfo>,
    /// Saved script versions, with their ids.
    pub glue_versions: Vec<GlueVersion>,
    /// Users (their ids are not kept: nothing else refers to them).
    pub users: Vec<User>,
}

/// Moves PostgreSQL's id sequences of `tables` past their largest id.
async fn advance_sequences(tables: &[&str], pool: &sqlx::PgPool) -> StoreResult<()> {
    for table in tables {
        // `false`: the next nextval() returns exactly MAX(id) + 1
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
             (SELECT COALESCE(MAX(id), 0) + 1 FROM {table}), false)"
        );
        sqlx::query(&sql).execute(pool).await?;
    }
    Ok(())
}

impl Store {
    /// Whether this database has jobwheel's tables (a dry run does not migrate a new one).
    pub async fn has_jobwheel_tables(&self) -> StoreResult<bool> {
        let sql = match self.backend() {
            Backend::Sqlite => {
                "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'job_info'"
            }
            Backend::Postgres => {
                "SELECT COUNT(*) AS n FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = 'job_info'"
            }
            Backend::MySql => {
                "SELECT COUNT(*) AS n FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = 'job_info'"
            }
        };
        let n = on_pool!(self, pool => sqlx::query(sql).fetch_one(pool).await?.long("n")?);
        Ok(n > 0)
    }

    /// The saved script versions with these ids that exist.
    pub async fn get_glue_versions(&self, ids: &[i32]) -> StoreResult<Vec<GlueVersion>> {
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_READ) {
            let sql = self.sql(format!(
                "SELECT id, job_id, glue_type, glue_source, glue_remark, add_time FROM job_logglue \
                 WHERE id IN ({}) ORDER BY id",
                placeholders(chunk.len())
            ));
            let params: Vec<Param> = chunk.iter().map(|i| Param::Int(*i)).collect();
            on_pool!(self, pool => {
                let rows = bind_params!(sqlx::query(&sql).persistent(false), params)
                    .fetch_all(pool)
                    .await?;
                for r in &rows {
                    found.push(glue_version(r)?);
                }
            });
        }
        Ok(found)
    }

    /// `(log id, job id)` of the run logs with these ids that exist.
    pub async fn get_log_jobs(&self, ids: &[i64]) -> StoreResult<Vec<(i64, i32)>> {
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_READ) {
            let sql = self.sql(format!(
                "SELECT id, job_id FROM job_log WHERE id IN ({})",
                placeholders(chunk.len())
            ));
            let params: Vec<Param> = chunk.iter().map(|i| Param::Long(*i)).collect();
            on_pool!(self, pool => {
                let rows = bind_params!(sqlx::query(&sql).persistent(false), params)
                    .fetch_all(pool)
                    .await?;
                for r in rows {
                    found.push((r.long("id")?, r.int("job_id")?));
                }
            });
        }
        Ok(found)
    }

    /// Writes imported groups, jobs, script versions and users in one transaction, keeping the
    /// ids of all but the users; a username or app name already taken is
    /// [`StoreError::Duplicate`](super::StoreError::Duplicate) and nothing is written.
    pub async fn import_definitions(&self, batch: &ImportBatch) -> StoreResult<()> {
        let group_sql = self.sql(
            "INSERT INTO job_group (id, app_name, title, address_type, address_list, access_token, \
             update_time) VALUES (?, ?, ?, ?, ?, ?, ?)",
        );
        let columns: Vec<&str> = updatable_columns().collect();
        let job_sql = self.sql(format!(
            "INSERT INTO job_info (id, add_time, {}) VALUES (?, ?, {})",
            columns.join(", "),
            placeholders(columns.len())
        ));
        let glue_sql = self.sql(
            "INSERT INTO job_logglue (id, job_id, glue_type, glue_source, glue_remark, add_time, \
             update_time) VALUES (?, ?, ?, ?, ?, ?, ?)",
        );
        let user_sql = self
            .sql("INSERT INTO job_user (username, password, role, permission) VALUES (?, ?, ?, ?)");
        let result: Result<(), sqlx::Error> = on_pool!(self, pool => async {
            let mut tx = pool.begin().await?;
            for g in &batch.groups {
                sqlx::query(&group_sql)
                    .bind(g.id)
                    .bind(&g.app_name)
                    .bind(&g.title)
                    .bind(g.address_type.code())
                    .bind(join_addresses(&g.address_list))
                    .bind(&g.access_token)
                    .bind(g.update_time)
                    .execute(&mut *tx)
                    .await?;
            }
            for job in &batch.jobs {
                bind_job_fields!(sqlx::query(&job_sql).bind(job.id).bind(job.add_time), job)
                    .execute(&mut *tx)
                    .await?;
            }
            for v in &batch.glue_versions {
                sqlx::query(&glue_sql)
                    .bind(v.id)
                    .bind(v.job_id)
                    .bind(v.glue_type.as_str())
                    .bind(&v.glue_source)
                    .bind(&v.glue_remark)
                    .bind(v.add_time)
                    .bind(v.add_time)
                    .execute(&mut *tx)
                    .await?;
            }
            for u in &batch.users {
                sqlx::query(&user_sql)
                    .bind(&u.username)
                    .bind(&u.password_hash)
                    .bind(u.role.code())
                    .bind(join_ids(&u.permission))
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }.await);
        result.map_err(|e| super::duplicate_as(e, || "an imported group or user".to_string()))?;
        self.routing_written();
        if let super::Db::Postgres(pool) = &self.db {
            advance_sequences(&["job_group", "job_info", "job_logglue", "job_user"], pool).await?;
        }
        Ok(())
    }

    /// Writes imported run logs with their ids in one transaction.
    pub async fn import_logs(&self, logs: &[RunRow]) -> StoreResult<u64> {
        if logs.is_empty() {
            return Ok(0);
        }
        let row = format!("({})", placeholders(LOG_COLUMNS.split(',').count()));
        let mut inserted = 0;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            for chunk in logs.chunks(LOG_ROWS_PER_STATEMENT) {
                let sql = self.sql(format!(
                    "INSERT INTO job_log ({LOG_COLUMNS}) VALUES {}",
                    vec![row.as_str(); chunk.len()].join(", ")
                ));
                let mut q = sqlx::query(&sql).persistent(false);
                for l in chunk {
                    q = q
                        .bind(l.id)
                        .bind(l.job_group)
                        .bind(l.job_id)
                        .bind(l.trigger_type.as_str())
                        .bind(l.schedule_time)
                        .bind(&l.executor_address)
                        .bind(&l.executor_handler)
                        .bind(&l.executor_param)
                        .bind(&l.executor_sharding_param)
                        .bind(l.executor_fail_retry_count)
                        .bind(l.trigger_time)
                        .bind(l.trigger_code)
                        .bind(&l.trigger_msg)
                        .bind(l.handle_time)
                        .bind(l.handle_code)
                        .bind(&l.handle_msg)
                        .bind(l.alarm_status)
                        .bind(l.wf_run_id)
                        .bind(&l.wf_node)
                        .bind(l.admission.as_str());
                }
                inserted += q.execute(&mut *tx).await?.rows_affected();
            }
            tx.commit().await?;
        });
        if let super::Db::Postgres(pool) = &self.db {
            advance_sequences(&["job_log"], pool).await?;
        }
        Ok(inserted)
    }
}
