//! Many-row writes of `job_log` for the trigger and callback paths: one statement per chunk
//! instead of one per fire, which is what lets a second's fires leave on time.
//!
//! A statement whose SQL varies with the row count stays in sqlx's per-connection statement
//! cache for small counts only ([`kept`](super::kept)): each connection would otherwise keep a
//! prepared statement for every row count it meets, and their memory outweighs the preparing
//! saved.

use std::collections::HashSet;

use super::dialect::{mysql_id_step, stepped_ids};
use super::logs::{ids_from_rows, LogResultRow};
use super::{kept, on_pool, placeholders, pow2_padded, retry_on_deadlock, Db, Store, StoreResult};
use crate::model::{
    alarm_status, needs_storable, storable_text, NewRunRow, TriggerOutcome, MESSAGE_MAX_CHARS,
};

/// Rows per statement: far below every backend's bound-parameter limit (SQLite's 32,766 is the
/// lowest) at 9 parameters a row.
const CHUNK: usize = 1_000;

/// How long a result write waits, each time, before it comes back for rows an outcome write
/// held; an outcome write holds its rows for one statement.
const SKIPPED_ROW_PAUSES: [std::time::Duration; 6] = {
    use std::time::Duration;
    [
        Duration::from_millis(5),
        Duration::from_millis(10),
        Duration::from_millis(20),
        Duration::from_millis(50),
        Duration::from_millis(100),
        Duration::from_millis(200),
    ]
};

const INSERT_HEAD: &str = "INSERT INTO job_log (job_group, job_id, trigger_type, schedule_time, \
    trigger_time, executor_handler, executor_param, executor_sharding_param, executor_fail_retry_count, \
    trigger_msg, trigger_code, handle_code, handle_time, alarm_status) VALUES ";
const INSERT_ROW: &str = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0)";

/// `(?, ?, ...), (?, ?, ...)`: `rows` copies of `row`.
fn repeated(row: &str, rows: usize) -> String {
    let mut s = String::with_capacity((row.len() + 2) * rows);
    for i in 0..rows {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(row);
    }
    s
}

macro_rules! bind_new_logs {
    ($query:expr, $logs:expr) => {{
        let mut q = $query;
        for l in $logs {
            q = q
                .bind(l.job_group)
                .bind(l.job_id)
                .bind(l.trigger_type.as_str())
                .bind(l.schedule_time)
                .bind(l.trigger_time)
                .bind(&l.executor_handler)
                .bind(&l.executor_param)
                .bind(&l.executor_sharding_param)
                .bind(l.executor_fail_retry_count)
                .bind(&l.trigger_msg);
        }
        q
    }};
}

macro_rules! bind_outcomes {
    ($query:expr, $rows:expr) => {{
        let mut q = $query;
        for &&(id, ref o) in $rows {
            q = q
                .bind(id)
                .bind(o.trigger_code)
                .bind(&o.trigger_msg)
                .bind(&o.executor_address);
        }
        q
    }};
}

/// Code and message of a result: results sharing both are stored by one statement.
type ResultKey<'a> = (i32, Option<&'a str>);

impl Store {
    /// Inserts log rows, one statement per chunk, and returns their ids in the order given.
    ///
    /// A single INSERT numbers its rows in the order of its VALUES list on every backend, so the
    /// sorted returned ids line up with the input. MySQL returns only the first id; its rows
    /// follow it evenly spaced unless `innodb_autoinc_lock_mode` is 2 (interleaved), in which
    /// case each row is inserted on its own inside one transaction (see `mysql_id_step`).
    pub async fn insert_logs(&self, logs: &[NewRunRow]) -> StoreResult<Vec<i64>> {
        let mut ids = Vec::with_capacity(logs.len());
        for chunk in logs.chunks(CHUNK) {
            let values = repeated(INSERT_ROW, chunk.len());
            // `sql` is a no-op on SQLite, `?` → `$n` on PostgreSQL
            let returning = self.sql(format!(
                "{INSERT_HEAD}{values} RETURNING CAST(id AS BIGINT) AS id"
            ));
            let mut chunk_ids = match &self.db {
                Db::Sqlite(pool) => ids_from_rows(
                    &bind_new_logs!(sqlx::query(&returning).persistent(kept(chunk.len())), chunk)
                        .fetch_all(pool)
                        .await?,
                )?,
                Db::Postgres(pool) => ids_from_rows(
                    &bind_new_logs!(sqlx::query(&returning).persistent(kept(chunk.len())), chunk)
                        .fetch_all(pool)
                        .await?,
                )?,
                Db::MySql(pool) => {
                    let mut tx = pool.begin().await?;
                    let ids = if let Some(step) = mysql_id_step(&mut tx).await? {
                        let sql = format!("{INSERT_HEAD}{values}");
                        let done =
                            bind_new_logs!(sqlx::query(&sql).persistent(kept(chunk.len())), chunk)
                                .execute(&mut *tx)
                                .await?;
                        stepped_ids(done.last_insert_id() as i64, chunk.len(), step)
                    } else {
                        let sql = format!("{INSERT_HEAD}{INSERT_ROW}");
                        let mut ids = Vec::with_capacity(chunk.len());
                        for log in chunk {
                            let done = bind_new_logs!(sqlx::query(&sql), std::iter::once(log))
                                .execute(&mut *tx)
                                .await?;
                            ids.push(done.last_insert_id() as i64);
                        }
                        ids
                    };
                    tx.commit().await?;
                    ids
                }
            };
            chunk_ids.sort_unstable();
            ids.extend(chunk_ids);
        }
        Ok(ids)
    }

    /// Records many trigger outcomes (see [`Store::set_trigger_outcome`]), one statement per chunk.
    /// Rows are written in id order, and a chunk that lost a deadlock to a concurrent result
    /// update is retried.
    /// A message the database cannot hold as sent (a NUL, or longer than [`MESSAGE_MAX_CHARS`])
    /// is stored made storable ([`storable_text`]).
    pub async fn set_trigger_outcomes(&self, rows: &[(i64, TriggerOutcome)]) -> StoreResult<()> {
        let cleaned: Vec<(i64, TriggerOutcome)>;
        let rows = if rows
            .iter()
            .any(|(_, o)| needs_storable(&o.trigger_msg, MESSAGE_MAX_CHARS))
        {
            cleaned = rows
                .iter()
                .map(|(id, o)| {
                    let trigger_msg = storable_text(&o.trigger_msg, MESSAGE_MAX_CHARS).into_owned();
                    (
                        *id,
                        TriggerOutcome {
                            trigger_msg,
                            ..o.clone()
                        },
                    )
                })
                .collect();
            &cleaned[..]
        } else {
            rows
        };
        let mut sorted: Vec<&(i64, TriggerOutcome)> = rows.iter().collect();
        sorted.sort_by_key(|(id, _)| *id);
        for chunk in sorted.chunks(CHUNK) {
            retry_on_deadlock(|| self.set_outcome_chunk(chunk)).await?;
        }
        Ok(())
    }

    /// Records what the executor answered to a trigger; false when the log is gone, or holds an
    /// accepted outcome already and this one is a refusal (see `NO_DOWNGRADE`).
    pub async fn set_trigger_outcome(&self, log_id: i64, o: &TriggerOutcome) -> StoreResult<bool> {
        let trigger_msg = storable_text(&o.trigger_msg, MESSAGE_MAX_CHARS).into_owned();
        let row = (
            log_id,
            TriggerOutcome {
                trigger_msg,
                ..o.clone()
            },
        );
        Ok(self.set_outcome_chunk(&[&row]).await? > 0)
    }

    /// Writes one chunk of outcomes; returns how many log rows it updated.
    async fn set_outcome_chunk(&self, chunk: &[&(i64, TriggerOutcome)]) -> StoreResult<u64> {
        const ROW: &str = "(?, ?, ?, ?)";
        // padded to a power of two with the last row again (it matches the same row with the
        // same values): every length of the statement stays prepared
        let chunk = &pow2_padded(chunk)[..];
        let done = match &self.db {
            Db::Sqlite(pool) => {
                let sql = outcome_update_from_values(&repeated(ROW, chunk.len()));
                bind_outcomes!(sqlx::query(&sql), chunk)
                    .execute(pool)
                    .await?
                    .rows_affected()
            }
            Db::Postgres(pool) => {
                let sql = self.sql(outcome_update_from_values(&repeated(ROW, chunk.len())));
                bind_outcomes!(sqlx::query(&sql), chunk)
                    .execute(pool)
                    .await?
                    .rows_affected()
            }
            Db::MySql(pool) => {
                // MySQL has no UPDATE ... FROM; a join on a derived table does the same
                let first = "SELECT ? AS id, ? AS c, ? AS m, ? AS a";
                let rest = " UNION ALL SELECT ?, ?, ?, ?";
                let mut derived = String::from(first);
                for _ in 1..chunk.len() {
                    derived.push_str(rest);
                }
                let sql = format!(
                    "UPDATE job_log l JOIN ({derived}) v ON l.id = v.id SET l.trigger_code = v.c, \
                     l.trigger_msg = v.m, l.executor_address = v.a, {NO_EXECUTOR_MYSQL} \
                     WHERE (l.trigger_code <> 200 OR v.c = 200)"
                );
                // rows matched, not only changed: sqlx connects with CLIENT_FOUND_ROWS
                bind_outcomes!(sqlx::query(&sql), chunk)
                    .execute(pool)
                    .await?
                    .rows_affected()
            }
        };
        Ok(done)
    }

    /// Stores many results, each only if its log has none yet (as [`Store::complete_log`]); the
    /// answer says per result whether it was stored. Results sharing a code and message (the
    /// usual case: every success says the same) are stored with one statement per chunk.
    ///
    /// A message the database cannot hold as sent is stored made storable ([`storable_text`]).
    pub async fn complete_logs(
        &self,
        results: &[LogResultRow],
        now: i64,
    ) -> StoreResult<Vec<bool>> {
        let cleaned: Vec<LogResultRow>;
        let results = if results.iter().any(|r| {
            r.handle_msg
                .as_deref()
                .is_some_and(|m| needs_storable(m, MESSAGE_MAX_CHARS))
        }) {
            cleaned = results
                .iter()
                .map(|r| LogResultRow {
                    handle_msg: r
                        .handle_msg
                        .as_deref()
                        .map(|m| storable_text(m, MESSAGE_MAX_CHARS).into_owned()),
                    ..r.clone()
                })
                .collect();
            &cleaned[..]
        } else {
            results
        };
        // groups in order of first appearance, so the first of two results for one log wins
        let mut groups: Vec<(ResultKey<'_>, Vec<i64>)> = Vec::new();
        for r in results {
            let key = (r.handle_code, r.handle_msg.as_deref());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, ids)) => ids.push(r.log_id),
                None => groups.push((key, vec![r.log_id])),
            }
        }
        let mut updated: HashSet<i64> = HashSet::with_capacity(results.len());
        for ((code, msg), ids) in &mut groups {
            // rows locked in id order, as the outcome writes lock them
            ids.sort_unstable();
            for chunk in ids.chunks(CHUNK) {
                let stored =
                    retry_on_deadlock(|| self.complete_same(*code, *msg, chunk, now)).await?;
                updated.extend(stored);
            }
        }
        // a log id given twice counts as stored once
        Ok(results.iter().map(|r| updated.remove(&r.log_id)).collect())
    }

    /// Sets one result on each of `ids` that has none; returns the ids it was set on.
    ///
    /// On PostgreSQL and MySQL each admin writes the outcomes of the runs it fired, while
    /// results for the same rows reach whichever admin the executor posts to: two writers of one
    /// row in two processes. A result write therefore does not wait for a row lock at first: it
    /// stores the rows nobody holds and comes back for the held ones, so no lock cycle or convoy
    /// forms between the admins' writes (on MySQL a waiting write holds the rows it has locked
    /// already, and the other admins' outcome writes queue behind it).
    async fn complete_same(
        &self,
        code: i32,
        msg: Option<&str>,
        ids: &[i64],
        now: i64,
    ) -> StoreResult<Vec<i64>> {
        let result = StoredResult { code, msg, now };
        if let Db::Sqlite(_) = &self.db {
            return self.complete_open(&result, ids, Locked::Wait).await;
        }
        let mut stored = Vec::with_capacity(ids.len());
        let mut left = ids.to_vec();
        for pause in SKIPPED_ROW_PAUSES {
            let done = self.complete_open(&result, &left, Locked::Skip).await?;
            let done_now: HashSet<i64> = done.iter().copied().collect();
            stored.extend(done);
            left.retain(|id| !done_now.contains(id));
            if left.is_empty() {
                return Ok(stored);
            }
            // rows not stored are either closed already or held by an outcome write
            let padded = pow2_padded(&left);
            let open = self.sql(format!(
                "SELECT id FROM job_log WHERE handle_code = 0 AND id IN ({})",
                placeholders(padded.len())
            ));
            left = on_pool!(self, pool => ids_from_rows(
                &ids_with(sqlx::query(&open), &padded)
                    .fetch_all(pool)
                    .await?,
            )?);
            if left.is_empty() {
                return Ok(stored);
            }
            tokio::time::sleep(pause).await;
        }
        // still held after every pause: wait for the lock like any other statement
        stored.extend(self.complete_open(&result, &left, Locked::Wait).await?);
        Ok(stored)
    }

    /// Sets `result` on the open logs among `ids`, waiting for or skipping the rows another
    /// transaction holds; returns the ids it was set on.
    async fn complete_open(
        &self,
        result: &StoredResult<'_>,
        ids: &[i64],
        locked: Locked,
    ) -> StoreResult<Vec<i64>> {
        const SET: &str = "UPDATE job_log SET handle_code = ?, handle_msg = ?, handle_time = ?, \
                           alarm_status = CASE WHEN ? = 200 THEN ? ELSE alarm_status END";
        // the ids padded to a few list lengths: every form of the statement stays prepared
        let ids = &pow2_padded(ids)[..];
        macro_rules! set {
            ($sql:expr) => {
                sqlx::query($sql)
                    .bind(result.code)
                    .bind(result.msg)
                    .bind(result.now)
                    .bind(result.code)
                    .bind(alarm_status::NOT_NEEDED)
            };
        }
        let list = placeholders(ids.len());
        match (&self.db, locked) {
            (Db::Sqlite(pool), _) => {
                let sql = complete_returning_sql(SET, ids.len());
                ids_from_rows(&ids_with(set!(&sql), ids).fetch_all(pool).await?)
            }
            (Db::Postgres(pool), Locked::Wait) => {
                let sql = self.sql(complete_returning_sql(SET, ids.len()));
                ids_from_rows(&ids_with(set!(&sql), ids).fetch_all(pool).await?)
            }
            (Db::Postgres(pool), Locked::Skip) => {
                // the ids are locked first in a sub-select so that the update finds them by key
                let sql = self.sql(format!(
                    "{SET} WHERE id = ANY(ARRAY(SELECT id FROM job_log WHERE handle_code = 0 \
                     AND id IN ({list}) FOR UPDATE SKIP LOCKED)) RETURNING id"
                ));
                ids_from_rows(&ids_with(set!(&sql), ids).fetch_all(pool).await?)
            }
            (Db::MySql(pool), locked) => {
                // no UPDATE ... RETURNING: lock the open rows, then update exactly those
                let lock = match locked {
                    Locked::Wait => "FOR UPDATE",
                    Locked::Skip => "FOR UPDATE SKIP LOCKED",
                };
                let select = format!(
                    "SELECT id FROM job_log WHERE handle_code = 0 AND id IN ({list}) {lock}"
                );
                let mut tx = pool.begin().await?;
                let select = ids_with(sqlx::query(&select), ids);
                let open = ids_from_rows(&select.fetch_all(&mut *tx).await?)?;
                if !open.is_empty() {
                    let locked = pow2_padded(&open);
                    let sql = format!("{SET} WHERE id IN ({})", placeholders(locked.len()));
                    ids_with(set!(&sql), &locked).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(open)
            }
        }
    }
}

/// One result, as [`Store::complete_same`] writes it on many logs.
struct StoredResult<'a> {
    code: i32,
    msg: Option<&'a str>,
    now: i64,
}

/// What a result write does about a row another transaction holds.
#[derive(Clone, Copy)]
enum Locked {
    /// Waits for it.
    Wait,
    /// Leaves it out.
    Skip,
}

/// `query` with each of `ids` bound after what it has bound so far.
fn ids_with<'q, DB>(
    mut query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
    ids: &[i64],
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for id in ids {
        query = query.bind(*id);
    }
    query
}

/// The SQLite/PostgreSQL statement that sets a result on the open logs among `n` ids.
fn complete_returning_sql(set: &str, n: usize) -> String {
    format!(
        "{set} WHERE handle_code = 0 AND id IN ({}) RETURNING CAST(id AS BIGINT) AS id",
        placeholders(n)
    )
}

/// An outcome never replaces an accepted one with a failure: a run row sent again after its admin
/// stopped may get two outcomes (the admin that took it over, and the first admin if it was only
/// frozen and wakes to finish its call), and a late refusal must not turn a run that was
/// accepted into a failed one, which would be retried.
/// (The MySQL statement says the same of its alias.)
const NO_DOWNGRADE: &str = "(job_log.trigger_code <> 200 OR v.c = 200)";

/// A refused outcome with no executor address is a call that had no executor to go to: its
/// row's admission says so (NO_EXECUTOR), in the outcome's own write.
const NO_EXECUTOR: &str =
    "admission = CASE WHEN v.a IS NULL AND v.c <> 200 THEN 'NO_EXECUTOR' ELSE job_log.admission END";
/// [`NO_EXECUTOR`] in the MySQL statement, whose row alias is `l`.
const NO_EXECUTOR_MYSQL: &str =
    "l.admission = CASE WHEN v.a IS NULL AND v.c <> 200 THEN 'NO_EXECUTOR' ELSE l.admission END";

/// The SQLite/PostgreSQL many-row outcome update: `UPDATE ... FROM` a VALUES list.
fn outcome_update_from_values(values: &str) -> String {
    format!(
        "WITH v (id, c, m, a) AS (VALUES {values}) \
         UPDATE job_log SET trigger_code = v.c, trigger_msg = v.m, executor_address = v.a, \
         {NO_EXECUTOR} FROM v WHERE job_log.id = v.id AND {NO_DOWNGRADE}"
    )
}

#[cfg(test)]
mod tests {
    use super::super::rows::RowExt;
    use super::*;

    /// SQLite's plan for `sql` (with `params` placeholders) on a migrated in-memory database.
    async fn sqlite_plan(sql: &str, params: usize) -> String {
        let store = Store::connect("sqlite::memory:", &Default::default())
            .await
            .expect("in-memory SQLite");
        store.migrate().await.expect("migrations");
        let Db::Sqlite(pool) = &store.db else {
            unreachable!("an sqlite: URL opens SQLite")
        };
        let explain = format!("EXPLAIN QUERY PLAN {sql}");
        let mut q = sqlx::query(&explain);
        for i in 0..params {
            q = q.bind(i as i64);
        }
        let rows = q.fetch_all(pool).await.expect("plan");
        rows.iter()
            .map(|r| r.text("detail").expect("detail column"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[tokio::test]
    async fn sqlite_stores_results_by_key_not_by_walking_open_logs() {
        let set = "UPDATE job_log SET handle_code = ?, handle_msg = ?";
        let plan = sqlite_plan(&complete_returning_sql(set, 500), 502).await;
        assert!(
            plan.contains("SEARCH job_log USING INTEGER PRIMARY KEY"),
            "{plan}"
        );
        assert!(!plan.contains("ix_job_log_alarm"), "{plan}");
    }

    #[tokio::test]
    async fn sqlite_finds_lost_result_candidates_through_the_alarm_index() {
        let plan = sqlite_plan(super::super::logs::LOST_CANDIDATES, 3).await;
        assert!(plan.contains("ix_job_log_alarm"), "{plan}");
        assert!(!plan.contains("SCAN job_log"), "{plan}");
    }

    #[tokio::test]
    async fn sqlite_reads_expired_runs_through_the_time_index_in_its_order() {
        let plan = sqlite_plan(
            &super::super::logs::clear_batch(" WHERE trigger_time < ?", true),
            2,
        )
        .await;
        assert!(plan.contains("ix_job_log_time"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }

    #[tokio::test]
    async fn sqlite_stores_outcomes_by_key() {
        let sql = outcome_update_from_values(&repeated("(?, ?, ?, ?)", 500));
        let plan = sqlite_plan(&sql, 2_000).await;
        assert!(
            plan.contains("SEARCH job_log USING INTEGER PRIMARY KEY"),
            "{plan}"
        );
        assert!(!plan.contains("SCAN job_log"), "{plan}");
    }
}
