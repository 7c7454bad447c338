//! Statements whose SQL differs between backends, one arm per backend.

/// Runs an INSERT and returns the new row's id: `RETURNING` on SQLite/PostgreSQL,
/// `LAST_INSERT_ID()` on MySQL. `$q` names the prepared query inside `$bind`.
macro_rules! insert_returning_id {
    ($store:expr, $sql:expr, |$q:ident| $bind:expr) => {{
        use $crate::store::rows::RowExt as _;
        let base: &str = $sql;
        let result: Result<i64, sqlx::Error> = match &$store.db {
            $crate::store::Db::Sqlite(pool) => {
                let sql = format!("{base} RETURNING CAST(id AS BIGINT) AS id");
                let $q = sqlx::query(&sql);
                match $bind.fetch_one(pool).await {
                    Ok(row) => row.long("id"),
                    Err(e) => Err(e),
                }
            }
            $crate::store::Db::Postgres(pool) => {
                let sql = format!("{} RETURNING CAST(id AS BIGINT) AS id", $store.sql(base));
                let $q = sqlx::query(&sql);
                match $bind.fetch_one(pool).await {
                    Ok(row) => row.long("id"),
                    Err(e) => Err(e),
                }
            }
            $crate::store::Db::MySql(pool) => {
                let $q = sqlx::query(base);
                $bind.execute(pool).await.map(|r| r.last_insert_id() as i64)
            }
        };
        result
    }};
}
pub(crate) use insert_returning_id;

use super::Backend;

/// How MySQL numbers the rows of one multi-row INSERT: `Some(step)` when consecutively
/// (`innodb_autoinc_lock_mode` 0 or 1), each id `step` (`auto_increment_increment`, above 1 on
/// Galera clusters) after the one before; `None` when interleaved with other inserts (mode 2),
/// when each row is inserted on its own to learn its id.
pub(crate) async fn mysql_id_step(
    conn: &mut sqlx::MySqlConnection,
) -> Result<Option<i64>, sqlx::Error> {
    let (mode, step): (i64, i64) = sqlx::query_as(
        "SELECT CAST(@@innodb_autoinc_lock_mode AS SIGNED), \
         CAST(@@auto_increment_increment AS SIGNED)",
    )
    .fetch_one(conn)
    .await?;
    Ok((mode <= 1).then_some(step.max(1)))
}

/// The ids of `count` rows one INSERT numbered from `first`, `step` apart.
pub(crate) fn stepped_ids(first: i64, count: usize, step: i64) -> Vec<i64> {
    (0..count as i64).map(|i| first + i * step).collect()
}

/// Insert-or-refresh of an admin's heartbeat (the key is the admin's id).
pub(crate) fn upsert_node(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite | Backend::Postgres => {
            "INSERT INTO admin_node (id, address, started_at, beat_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (id) DO UPDATE SET beat_at = excluded.beat_at, address = excluded.address"
        }
        Backend::MySql => {
            "INSERT INTO admin_node (id, address, started_at, beat_at) VALUES (?, ?, ?, ?) \
             ON DUPLICATE KEY UPDATE beat_at = VALUES(beat_at), address = VALUES(address)"
        }
    }
}

/// Insert of a node's full output, keeping the first one stored for the log.
pub(crate) fn insert_output(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite | Backend::Postgres => {
            "INSERT INTO workflow_output (log_id, body) VALUES (?, ?) ON CONFLICT (log_id) DO NOTHING"
        }
        Backend::MySql => "INSERT IGNORE INTO workflow_output (log_id, body) VALUES (?, ?)",
    }
}

/// Insert-or-refresh of a registration (the unique key is group/key/value).
pub(crate) fn upsert_registry(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "INSERT INTO job_registry (registry_group, registry_key, registry_value, protocol, update_time, load_report, labels) \
             VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (registry_group, registry_key, registry_value) \
             DO UPDATE SET update_time = excluded.update_time, protocol = excluded.protocol, \
             load_report = excluded.load_report, labels = excluded.labels"
        }
        Backend::Postgres => {
            "INSERT INTO job_registry (registry_group, registry_key, registry_value, protocol, update_time, load_report, labels) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (registry_group, registry_key, registry_value) \
             DO UPDATE SET update_time = EXCLUDED.update_time, protocol = EXCLUDED.protocol, \
             load_report = EXCLUDED.load_report, labels = EXCLUDED.labels"
        }
        Backend::MySql => {
            "INSERT INTO job_registry (registry_group, registry_key, registry_value, protocol, update_time, load_report, labels) \
             VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON DUPLICATE KEY UPDATE update_time = VALUES(update_time), protocol = VALUES(protocol), \
             load_report = VALUES(load_report), labels = VALUES(labels)"
        }
    }
}

/// Insert-or-replace of one day's report row (the unique key is the day).
pub(crate) fn upsert_log_report(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "INSERT INTO job_log_report (trigger_day, running_count, suc_count, fail_count, update_time) \
             VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (trigger_day) DO UPDATE SET running_count = excluded.running_count, \
             suc_count = excluded.suc_count, fail_count = excluded.fail_count, update_time = excluded.update_time"
        }
        Backend::Postgres => {
            "INSERT INTO job_log_report (trigger_day, running_count, suc_count, fail_count, update_time) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (trigger_day) DO UPDATE SET running_count = EXCLUDED.running_count, \
             suc_count = EXCLUDED.suc_count, fail_count = EXCLUDED.fail_count, update_time = EXCLUDED.update_time"
        }
        Backend::MySql => {
            "INSERT INTO job_log_report (trigger_day, running_count, suc_count, fail_count, update_time) \
             VALUES (?, ?, ?, ?, ?) \
             ON DUPLICATE KEY UPDATE running_count = VALUES(running_count), suc_count = VALUES(suc_count), \
             fail_count = VALUES(fail_count), update_time = VALUES(update_time)"
        }
    }
}

/// Counts of log rows triggered in `[?, ?)`: total, running (no result yet), success.
/// MySQL's SUM yields DECIMAL, so it is cast back to an integer there.
pub(crate) fn log_counts(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite | Backend::Postgres => {
            "SELECT COUNT(*) AS total, \
             COALESCE(SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0) AS running, \
             COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0) AS success \
             FROM job_log WHERE trigger_time >= ? AND trigger_time < ?"
        }
        Backend::MySql => {
            "SELECT COUNT(*) AS total, \
             CAST(COALESCE(SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0) AS SIGNED) AS running, \
             CAST(COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0) AS SIGNED) AS success \
             FROM job_log WHERE trigger_time >= ? AND trigger_time < ?"
        }
    }
}

/// Takes the cluster-wide schedule lock inside the open transaction.
/// SQLite needs none: its transaction is `BEGIN IMMEDIATE`, which already excludes other writers.
pub(crate) const LOCK_SCHEDULE: &str =
    "SELECT lock_name FROM job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE";
