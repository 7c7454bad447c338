//! Reading an XXL-JOB database (MySQL/MariaDB), for `jobwheel import-xxl`.
//!
//! XXL-JOB's tables went through renames: the group's display name is `title` up to 3.4 and
//! `name` from 3.5; the job's description likewise `job_desc`, then `name`; versions before 2.3
//! had a single `job_cron` column instead of `schedule_type`/`schedule_conf`/`misfire_strategy`;
//! 3.5 added the per-group `access_token`. The columns present are read from
//! `information_schema`, so one reader covers every variant. Values come back as stored (enum
//! names as text, `DATETIME`s as epoch milliseconds in the server's time zone); judging them is
//! the importer's work.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::Row;

use super::{Backend, StoreError, StoreResult};

/// How long connecting to the XXL-JOB database may take before it counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Which of XXL-JOB's column variants a database has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XxlLayout {
    /// The database (schema) name.
    pub database: String,
    /// Column of the group's display name: `title` (up to 3.4) or `name` (3.5).
    pub group_name_column: &'static str,
    /// Column of the job's description: `job_desc` (up to 3.4) or `name` (3.5).
    pub job_desc_column: &'static str,
    /// `schedule_type`/`schedule_conf`/`misfire_strategy` (2.3 on) rather than `job_cron`.
    pub has_schedule_type: bool,
    /// Groups carry their own access token (3.5).
    pub has_group_token: bool,
    /// `xxl_job_logglue` exists.
    pub has_glue_history: bool,
    /// `xxl_job_user` exists.
    pub has_users: bool,
    /// `xxl_job_log` exists.
    pub has_logs: bool,
}

impl XxlLayout {
    /// A short description of the variant, for the import's report.
    pub fn describe(&self) -> String {
        let era = if self.group_name_column == "name" {
            "3.5-style columns (name, access_token)"
        } else if self.has_schedule_type {
            "2.3 to 3.4-style columns (title, job_desc)"
        } else {
            "pre-2.3 columns (job_cron)"
        };
        format!("XXL-JOB database '{}', {era}", self.database)
    }
}

/// An `xxl_job_group` row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XxlGroup {
    /// Primary key.
    pub id: i64,
    /// The executors' app name.
    pub app_name: String,
    /// Display name (`title` or `name`).
    pub title: String,
    /// 0 automatic, 1 manual.
    pub address_type: i64,
    /// Comma-separated addresses.
    pub address_list: Option<String>,
    /// The group's own token (3.5), if the column exists.
    pub access_token: Option<String>,
    /// Last change, epoch ms.
    pub update_time: i64,
}

/// An `xxl_job_info` row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XxlJob {
    /// Primary key.
    pub id: i64,
    /// Its group.
    pub job_group: i64,
    /// Description (`job_desc` or `name`).
    pub job_desc: String,
    /// Creation time, epoch ms.
    pub add_time: i64,
    /// Last change, epoch ms.
    pub update_time: i64,
    /// Owner.
    pub author: String,
    /// Comma-separated e-mail addresses.
    pub alarm_email: String,
    /// `schedule_type`; `None` in a pre-2.3 database (`job_cron` only).
    pub schedule_type: Option<String>,
    /// `schedule_conf`, or `job_cron` in a pre-2.3 database.
    pub schedule_conf: String,
    /// `misfire_strategy`; `None` in a pre-2.3 database.
    pub misfire_strategy: Option<String>,
    /// Route strategy name.
    pub executor_route_strategy: String,
    /// BEAN handler.
    pub executor_handler: String,
    /// Handler parameter.
    pub executor_param: String,
    /// Block strategy name.
    pub executor_block_strategy: String,
    /// Seconds.
    pub executor_timeout: i64,
    /// Retries after a failure.
    pub executor_fail_retry_count: i64,
    /// Glue type name.
    pub glue_type: String,
    /// Script source.
    pub glue_source: String,
    /// Script note.
    pub glue_remark: String,
    /// Script version, epoch ms.
    pub glue_updatetime: i64,
    /// Comma-separated child job ids.
    pub child_jobid: String,
    /// 0 stopped, 1 running.
    pub trigger_status: i64,
    /// Epoch ms.
    pub trigger_last_time: i64,
    /// Epoch ms.
    pub trigger_next_time: i64,
}

/// An `xxl_job_logglue` row (one saved script version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XxlGlue {
    /// Primary key.
    pub id: i64,
    /// Its job.
    pub job_id: i64,
    /// Glue type name.
    pub glue_type: String,
    /// Script source.
    pub glue_source: String,
    /// Note.
    pub glue_remark: String,
    /// Saved at, epoch ms.
    pub add_time: i64,
    /// Last change, epoch ms.
    pub update_time: i64,
}

/// An `xxl_job_user` row; the password hash is not read, since it cannot be reused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XxlUser {
    /// Primary key.
    pub id: i64,
    /// Login name.
    pub username: String,
    /// 0 normal user, 1 administrator.
    pub role: i64,
    /// Comma-separated group ids a normal user may access.
    pub permission: Option<String>,
}

/// An `xxl_job_log` row (one trigger of a job on one executor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XxlLog {
    /// Primary key, the `logId` executors know.
    pub id: i64,
    /// Group of the job.
    pub job_group: i64,
    /// The job.
    pub job_id: i64,
    /// Address called.
    pub executor_address: Option<String>,
    /// Handler sent.
    pub executor_handler: Option<String>,
    /// Parameter sent.
    pub executor_param: Option<String>,
    /// `i/n` of a broadcast.
    pub executor_sharding_param: Option<String>,
    /// Retries left.
    pub executor_fail_retry_count: i64,
    /// Trigger time, epoch ms.
    pub trigger_time: i64,
    /// 0, 200 or 500.
    pub trigger_code: i64,
    /// Trigger details (HTML).
    pub trigger_msg: Option<String>,
    /// Result time, epoch ms (0 without a result).
    pub handle_time: i64,
    /// 0 without a result, else the result code.
    pub handle_code: i64,
    /// Result message.
    pub handle_msg: Option<String>,
    /// Alarm state.
    pub alarm_status: i64,
}

/// An XXL-JOB database opened for reading.
pub struct XxlSource {
    pool: MySqlPool,
    layout: XxlLayout,
}

/// `DATETIME` as epoch ms in the session's time zone (the server's, as XXL-JOB wrote it); NULL
/// and zero dates read 0.
fn epoch_ms(column: &str) -> String {
    format!("CAST(COALESCE(UNIX_TIMESTAMP({column}), 0) * 1000 AS SIGNED)")
}

/// A nullable text column read as text, NULL as empty.
fn text(column: &str) -> String {
    format!("COALESCE({column}, '')")
}

/// An integer column of any width read as BIGINT.
fn int(column: &str) -> String {
    format!("CAST(COALESCE({column}, 0) AS SIGNED)")
}

impl XxlSource {
    /// Connects to the XXL-JOB database `url` names and checks that it has XXL-JOB's tables.
    ///
    /// A URL that is not MySQL/MariaDB or cannot be parsed is [`StoreError::BadUrl`]; a
    /// database without `xxl_job_group` and `xxl_job_info` is [`StoreError::NotXxlJob`].
    pub async fn connect(url: &str) -> StoreResult<XxlSource> {
        if Backend::from_url(url)? != Backend::MySql {
            return Err(StoreError::BadUrl(format!(
                "the XXL-JOB database URL must start with mysql:// or mariadb://, not '{}'",
                url.split_once(':').map_or(url, |(scheme, _)| scheme)
            )));
        }
        let url = super::mysql_url(url);
        let options = MySqlConnectOptions::from_str(&url)
            .map_err(|e| StoreError::BadUrl(format!("invalid MySQL URL: {e}")))?;
        let database = options.get_database().map(str::to_string).ok_or_else(|| {
            StoreError::BadUrl(
                "the XXL-JOB database URL names no database (mysql://user@host/DATABASE)".into(),
            )
        })?;
        let pool = MySqlPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options)
            .await?;
        let layout = match read_layout(&pool, database).await {
            Ok(layout) => layout,
            Err(e) => {
                pool.close().await;
                return Err(e);
            }
        };
        Ok(XxlSource { pool, layout })
    }

    /// The column variant found.
    pub fn layout(&self) -> &XxlLayout {
        &self.layout
    }

    /// Closes the connections.
    pub async fn close(&self) {
        self.pool.close().await
    }

    /// Every group, by id.
    pub async fn groups(&self) -> StoreResult<Vec<XxlGroup>> {
        let l = &self.layout;
        let token = if l.has_group_token {
            "access_token"
        } else {
            "NULL"
        };
        let sql = format!(
            "SELECT {} AS id, app_name, {} AS title, {} AS address_type, address_list, \
             {token} AS access_token, {} AS update_time FROM xxl_job_group ORDER BY id",
            int("id"),
            text(l.group_name_column),
            int("address_type"),
            epoch_ms("update_time"),
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                Ok(XxlGroup {
                    id: r.try_get("id")?,
                    app_name: r.try_get("app_name")?,
                    title: r.try_get("title")?,
                    address_type: r.try_get("address_type")?,
                    address_list: r.try_get("address_list")?,
                    access_token: r.try_get("access_token")?,
                    update_time: r.try_get("update_time")?,
                })
            })
            .collect()
    }

    /// Every job, by id.
    pub async fn jobs(&self) -> StoreResult<Vec<XxlJob>> {
        let l = &self.layout;
        let (schedule_type, schedule_conf, misfire) = if l.has_schedule_type {
            ("schedule_type", text("schedule_conf"), "misfire_strategy")
        } else {
            ("NULL", text("job_cron"), "NULL")
        };
        let sql = format!(
            "SELECT {id} AS id, {group} AS job_group, {desc} AS job_desc, {add} AS add_time, \
             {upd} AS update_time, {author} AS author, {email} AS alarm_email, \
             {schedule_type} AS schedule_type, {schedule_conf} AS schedule_conf, \
             {misfire} AS misfire_strategy, {route} AS executor_route_strategy, \
             {handler} AS executor_handler, {param} AS executor_param, \
             {block} AS executor_block_strategy, {timeout} AS executor_timeout, \
             {retry} AS executor_fail_retry_count, {glue} AS glue_type, \
             {source} AS glue_source, {remark} AS glue_remark, {glue_time} AS glue_updatetime, \
             {child} AS child_jobid, {status} AS trigger_status, {last} AS trigger_last_time, \
             {next} AS trigger_next_time FROM xxl_job_info ORDER BY id",
            id = int("id"),
            group = int("job_group"),
            desc = text(l.job_desc_column),
            add = epoch_ms("add_time"),
            upd = epoch_ms("update_time"),
            author = text("author"),
            email = text("alarm_email"),
            route = text("executor_route_strategy"),
            handler = text("executor_handler"),
            param = text("executor_param"),
            block = text("executor_block_strategy"),
            timeout = int("executor_timeout"),
            retry = int("executor_fail_retry_count"),
            glue = text("glue_type"),
            source = text("glue_source"),
            remark = text("glue_remark"),
            glue_time = epoch_ms("glue_updatetime"),
            child = text("child_jobid"),
            status = int("trigger_status"),
            last = int("trigger_last_time"),
            next = int("trigger_next_time"),
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                Ok(XxlJob {
                    id: r.try_get("id")?,
                    job_group: r.try_get("job_group")?,
                    job_desc: r.try_get("job_desc")?,
                    add_time: r.try_get("add_time")?,
                    update_time: r.try_get("update_time")?,
                    author: r.try_get("author")?,
                    alarm_email: r.try_get("alarm_email")?,
                    schedule_type: r.try_get("schedule_type")?,
                    schedule_conf: r.try_get("schedule_conf")?,
                    misfire_strategy: r.try_get("misfire_strategy")?,
                    executor_route_strategy: r.try_get("executor_route_strategy")?,
                    executor_handler: r.try_get("executor_handler")?,
                    executor_param: r.try_get("executor_param")?,
                    executor_block_strategy: r.try_get("executor_block_strategy")?,
                    executor_timeout: r.try_get("executor_timeout")?,
                    executor_fail_retry_count: r.try_get("executor_fail_retry_count")?,
                    glue_type: r.try_get("glue_type")?,
                    glue_source: r.try_get("glue_source")?,
                    glue_remark: r.try_get("glue_remark")?,
                    glue_updatetime: r.try_get("glue_updatetime")?,
                    child_jobid: r.try_get("child_jobid")?,
                    trigger_status: r.try_get("trigger_status")?,
                    trigger_last_time: r.try_get("trigger_last_time")?,
                    trigger_next_time: r.try_get("trigger_next_time")?,
                })
            })
            .collect()
    }

    /// Every saved script version, by id (none when the table is missing).
    pub async fn glue_versions(&self) -> StoreResult<Vec<XxlGlue>> {
        if !self.layout.has_glue_history {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} AS id, {} AS job_id, {} AS glue_type, {} AS glue_source, {} AS glue_remark, \
             {} AS add_time, {} AS update_time FROM xxl_job_logglue ORDER BY id",
            int("id"),
            int("job_id"),
            text("glue_type"),
            text("glue_source"),
            text("glue_remark"),
            epoch_ms("add_time"),
            epoch_ms("update_time"),
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                Ok(XxlGlue {
                    id: r.try_get("id")?,
                    job_id: r.try_get("job_id")?,
                    glue_type: r.try_get("glue_type")?,
                    glue_source: r.try_get("glue_source")?,
                    glue_remark: r.try_get("glue_remark")?,
                    add_time: r.try_get("add_time")?,
                    update_time: r.try_get("update_time")?,
                })
            })
            .collect()
    }

    /// Every user, by id (none when the table is missing).
    pub async fn users(&self) -> StoreResult<Vec<XxlUser>> {
        if !self.layout.has_users {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} AS id, username, {} AS role, permission FROM xxl_job_user ORDER BY id",
            int("id"),
            int("role"),
        );
        let rows = sqlx::query(&sql).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                Ok(XxlUser {
                    id: r.try_get("id")?,
                    username: r.try_get("username")?,
                    role: r.try_get("role")?,
                    permission: r.try_get("permission")?,
                })
            })
            .collect()
    }

    /// Up to `limit` run logs with ids above `after_id`, by id (none when the table is missing).
    pub async fn logs_after(&self, after_id: i64, limit: i64) -> StoreResult<Vec<XxlLog>> {
        if !self.layout.has_logs {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {} AS id, {} AS job_group, {} AS job_id, executor_address, executor_handler, \
             executor_param, executor_sharding_param, {} AS executor_fail_retry_count, \
             {} AS trigger_time, {} AS trigger_code, trigger_msg, {} AS handle_time, \
             {} AS handle_code, handle_msg, {} AS alarm_status \
             FROM xxl_job_log WHERE id > ? ORDER BY id LIMIT ?",
            int("id"),
            int("job_group"),
            int("job_id"),
            int("executor_fail_retry_count"),
            epoch_ms("trigger_time"),
            int("trigger_code"),
            epoch_ms("handle_time"),
            int("handle_code"),
            int("alarm_status"),
        );
        let rows = sqlx::query(&sql)
            .bind(after_id)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(XxlLog {
                    id: r.try_get("id")?,
                    job_group: r.try_get("job_group")?,
                    job_id: r.try_get("job_id")?,
                    executor_address: r.try_get("executor_address")?,
                    executor_handler: r.try_get("executor_handler")?,
                    executor_param: r.try_get("executor_param")?,
                    executor_sharding_param: r.try_get("executor_sharding_param")?,
                    executor_fail_retry_count: r.try_get("executor_fail_retry_count")?,
                    trigger_time: r.try_get("trigger_time")?,
                    trigger_code: r.try_get("trigger_code")?,
                    trigger_msg: r.try_get("trigger_msg")?,
                    handle_time: r.try_get("handle_time")?,
                    handle_code: r.try_get("handle_code")?,
                    handle_msg: r.try_get("handle_msg")?,
                    alarm_status: r.try_get("alarm_status")?,
                })
            })
            .collect()
    }

    /// How many run logs there are (0 when the table is missing).
    pub async fn count_logs(&self) -> StoreResult<i64> {
        if !self.layout.has_logs {
            return Ok(0);
        }
        let row = sqlx::query("SELECT CAST(COUNT(*) AS SIGNED) AS n FROM xxl_job_log")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("n")?)
    }
}

/// Reads which XXL-JOB tables and column variants the database has.
async fn read_layout(pool: &MySqlPool, database: String) -> StoreResult<XxlLayout> {
    let rows = sqlx::query(
        "SELECT CAST(table_name AS CHAR) AS t, CAST(column_name AS CHAR) AS c \
         FROM information_schema.columns \
         WHERE table_schema = DATABASE() AND table_name LIKE 'xxl!_job!_%' ESCAPE '!'",
    )
    .fetch_all(pool)
    .await?;
    let mut tables: HashMap<String, HashSet<String>> = HashMap::new();
    for row in &rows {
        let table: String = row.try_get("t")?;
        let column: String = row.try_get("c")?;
        tables
            .entry(table.to_ascii_lowercase())
            .or_default()
            .insert(column.to_ascii_lowercase());
    }
    layout_of(&tables, database)
}

/// The layout of a database with these tables and columns, or why it is not XXL-JOB's.
fn layout_of(
    tables: &HashMap<String, HashSet<String>>,
    database: String,
) -> StoreResult<XxlLayout> {
    let not_xxl = |why: String| {
        StoreError::NotXxlJob(format!(
            "database '{database}' is not an XXL-JOB database: {why}"
        ))
    };
    let columns_of = |table: &str| {
        tables
            .get(table)
            .ok_or_else(|| not_xxl(format!("it has no table {table}")))
    };
    let one_of = |table: &str, columns: &HashSet<String>, names: [&'static str; 2]| {
        names
            .into_iter()
            .find(|n| columns.contains(*n))
            .ok_or_else(|| {
                not_xxl(format!(
                    "table {table} has neither a {} nor a {} column",
                    names[0], names[1]
                ))
            })
    };
    let group = columns_of("xxl_job_group")?;
    let job = columns_of("xxl_job_info")?;
    for (table, columns, needed) in [
        (
            "xxl_job_group",
            group,
            &["id", "app_name", "address_type"][..],
        ),
        (
            "xxl_job_info",
            job,
            &["id", "job_group", "executor_handler", "glue_type"][..],
        ),
    ] {
        if let Some(missing) = needed.iter().find(|c| !columns.contains(**c)) {
            return Err(not_xxl(format!("table {table} has no {missing} column")));
        }
    }
    let has_schedule_type = job.contains("schedule_type");
    if !has_schedule_type && !job.contains("job_cron") {
        return Err(not_xxl(
            "table xxl_job_info has neither a schedule_type nor a job_cron column".into(),
        ));
    }
    Ok(XxlLayout {
        group_name_column: one_of("xxl_job_group", group, ["title", "name"])?,
        job_desc_column: one_of("xxl_job_info", job, ["job_desc", "name"])?,
        has_schedule_type,
        has_group_token: group.contains("access_token"),
        has_glue_history: tables.contains_key("xxl_job_logglue"),
        has_users: tables.contains_key("xxl_job_user"),
        has_logs: tables.contains_key("xxl_job_log"),
        database,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(spec: &[(&str, &[&str])]) -> HashMap<String, HashSet<String>> {
        spec.iter()
            .map(|(t, cols)| (t.to_string(), cols.iter().map(|c| c.to_string()).collect()))
            .collect()
    }

    const GROUP_24: &[&str] = &["id", "app_name", "title", "address_type", "address_list"];
    const JOB_24: &[&str] = &[
        "id",
        "job_group",
        "job_desc",
        "schedule_type",
        "executor_handler",
        "glue_type",
    ];

    #[test]
    fn both_column_variants_are_recognised() {
        let old = layout_of(
            &tables(&[("xxl_job_group", GROUP_24), ("xxl_job_info", JOB_24)]),
            "x".into(),
        )
        .unwrap();
        assert_eq!(
            (old.group_name_column, old.job_desc_column),
            ("title", "job_desc")
        );
        assert!(old.has_schedule_type && !old.has_group_token && !old.has_logs);

        let group_35: &[&str] = &["id", "app_name", "name", "address_type", "access_token"];
        let job_35: &[&str] = &[
            "id",
            "job_group",
            "name",
            "schedule_type",
            "executor_handler",
            "glue_type",
        ];
        let new = layout_of(
            &tables(&[
                ("xxl_job_group", group_35),
                ("xxl_job_info", job_35),
                ("xxl_job_log", &["id"]),
            ]),
            "x".into(),
        )
        .unwrap();
        assert_eq!(
            (new.group_name_column, new.job_desc_column),
            ("name", "name")
        );
        assert!(new.has_group_token && new.has_logs);
    }

    #[test]
    fn other_databases_are_refused_with_the_reason() {
        let err = layout_of(&tables(&[("xxl_job_group", GROUP_24)]), "shop".into())
            .unwrap_err()
            .to_string();
        assert!(err.contains("'shop' is not an XXL-JOB database"), "{err}");
        assert!(err.contains("no table xxl_job_info"), "{err}");

        let job: &[&str] = &[
            "id",
            "job_group",
            "job_desc",
            "executor_handler",
            "glue_type",
        ];
        let err = layout_of(
            &tables(&[("xxl_job_group", GROUP_24), ("xxl_job_info", job)]),
            "x".into(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("neither a schedule_type nor a job_cron"),
            "{err}"
        );
    }
}
