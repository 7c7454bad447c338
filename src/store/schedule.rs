//! The scheduler's pre-read transaction: cluster lock, due jobs, compare-and-set of fire times.

use std::collections::HashSet;

use futures_util::TryStreamExt;
use sqlx::{MySql, Postgres, Sqlite, Transaction};

use super::dialect::LOCK_SCHEDULE;
use super::jobs::parse_column;
use super::rows::RowExt;
use super::{numbered_placeholders, on_pool, Backend, Db, Store, StoreError, StoreResult};
use crate::model::{DueJob, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED};

/// An admin's share of the jobs: those whose id modulo `of` is `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// The admin's place among the live admins ordered by id.
    pub index: u32,
    /// How many admins are live.
    pub of: u32,
}

impl Share {
    /// Every job: a lone admin, or one that does not know its peers yet.
    pub const ALL: Share = Share { index: 0, of: 1 };

    /// The share of admin `me` among the live `members` (ordered by id); every job when it is
    /// not among them.
    pub fn among(members: &[String], me: &str) -> Share {
        match members.iter().position(|m| m == me) {
            Some(index) if members.len() > 1 => Share {
                index: index as u32,
                of: members.len() as u32,
            },
            _ => Share::ALL,
        }
    }
}

/// One job's new fire times, applied only if its next fire time is still `expected_next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleUpdate {
    /// The job.
    pub id: i32,
    /// The fire time this admin read; the claim fails if another admin or an edit moved it.
    pub expected_next: i64,
    /// New `trigger_last_time`.
    pub last: i64,
    /// New `trigger_next_time` (ignored when `stop`).
    pub next: i64,
    /// No further fire time exists: stop the job.
    pub stop: bool,
}

pub(super) enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
    MySql(Transaction<'static, MySql>),
}

/// An open pre-read transaction; commit it quickly. An exclusive one holds the schedule lock;
/// a shared one locks only the job rows it reads, skipping rows another admin's pass holds.
pub struct ScheduleTx {
    pub(super) tx: Tx,
    /// Shared: `due_jobs` locks the rows it returns and skips locked ones.
    pub(super) shared: bool,
    /// Commits, then reports an error, as a connection lost before the answer would (tests).
    lose_answer: bool,
}

/// Updates per batched claim statement (5 parameters each).
const CLAIM_BATCH: usize = 500;

/// The row values an update writes: (last, next, status); a stop clears the times.
fn new_state(u: &ScheduleUpdate) -> (i64, i64, i32) {
    if u.stop {
        (0, 0, TRIGGER_STATUS_STOPPED)
    } else {
        (u.last, u.next, TRIGGER_STATUS_RUNNING)
    }
}

/// SQLite/PostgreSQL: one UPDATE ... FROM a VALUES list, returning the ids it changed.
///
/// On SQLite the ids drive the update (`id IN`, a primary-key lookup each) and the unary `+`
/// keeps the status and fire-time checks off the index, so a claim costs per update, not per
/// job defined. Why: SQLite's planner, without statistics, takes `trigger_status = 1` on the due
/// index for a selective lookup and walks that index over every enabled job, probing the VALUES
/// list per entry.
fn claim_returning_sql(n: usize, backend: Backend) -> String {
    let row = "(CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS INTEGER))";
    let values = vec![row; n].join(", ");
    let (by_key, unindexed) = if backend == Backend::Sqlite {
        ("job_info.id IN (SELECT v_id FROM v) AND ", "+")
    } else {
        ("", "")
    };
    format!(
        "WITH v (v_id, v_expected, v_last, v_next, v_status) AS (VALUES {values}) \
         UPDATE job_info SET trigger_last_time = v.v_last, trigger_next_time = v.v_next, trigger_status = v.v_status \
         FROM v WHERE {by_key}job_info.id = v.v_id \
         AND {unindexed}job_info.trigger_status = {TRIGGER_STATUS_RUNNING} \
         AND {unindexed}job_info.trigger_next_time = v.v_expected RETURNING job_info.id AS id"
    )
}

/// MySQL: one multi-table UPDATE joined to a derived table of the new values.
fn claim_mysql_sql(n: usize) -> String {
    let first = "SELECT ? AS v_id, ? AS v_expected, ? AS v_last, ? AS v_next, ? AS v_status";
    let mut rows = vec![first.to_string()];
    rows.extend(std::iter::repeat_n(
        "SELECT ?, ?, ?, ?, ?".to_string(),
        n.saturating_sub(1),
    ));
    // the ids again, as a key range: joined to the derived table alone, InnoDB scans and locks
    // every job row, so a shared pass would wait for the rows another admin's pass holds
    format!(
        "UPDATE job_info j JOIN ({}) v ON j.id = v.v_id \
         SET j.trigger_last_time = v.v_last, j.trigger_next_time = v.v_next, j.trigger_status = v.v_status \
         WHERE j.id IN ({}) AND j.trigger_status = {TRIGGER_STATUS_RUNNING} \
         AND j.trigger_next_time = v.v_expected",
        rows.join(" UNION ALL "),
        super::placeholders(n)
    )
}

/// Binds (id, expected, last, next, status) per update, in order.
macro_rules! bind_claims {
    ($query:expr, $chunk:expr) => {{
        let mut q = $query;
        for u in $chunk {
            let (last, next, status) = new_state(u);
            q = q
                .bind(u.id)
                .bind(u.expected_next)
                .bind(last)
                .bind(next)
                .bind(status);
        }
        q
    }};
}

fn ids_of<R: RowExt>(rows: Vec<R>) -> StoreResult<HashSet<i32>> {
    rows.iter().map(|r| Ok(r.int("id")?)).collect()
}

/// The columns [`DueJob`] holds.
const DUE_COLUMNS: &str = "id, schedule_type, schedule_conf, timezone, misfire_strategy, \
    trigger_last_time, trigger_next_time";

fn due_job_from_row(row: &impl RowExt) -> StoreResult<DueJob> {
    let id = row.int("id")?;
    Ok(DueJob {
        id,
        schedule_type: parse_column(row, id, "schedule_type")?,
        schedule_conf: row.text("schedule_conf")?,
        timezone: row.text("timezone")?,
        misfire_strategy: parse_column(row, id, "misfire_strategy")?,
        trigger_last_time: row.long("trigger_last_time")?,
        trigger_next_time: row.long("trigger_next_time")?,
    })
}

/// Oldest fire time first: ordered by id (as XXL-JOB does), a pass slower than a second would
/// keep re-reading the low ids and starve the highest into misfires.
/// The order is also the index's, so the limit ends the scan.
const DUE_JOBS: &str =
    "WHERE trigger_status = ? AND trigger_next_time <= ? ORDER BY trigger_next_time LIMIT ?";
/// [`DUE_JOBS`] for one admin's share of the jobs, plus the strays (see [`ScheduleTx::due_jobs`]).
const DUE_JOBS_OF_SHARE: &str = "WHERE trigger_status = ? AND trigger_next_time <= ? \
    AND (id % ? = ? OR trigger_next_time <= ?) ORDER BY trigger_next_time LIMIT ?";
const CLAIM: &str =
    "UPDATE job_info SET trigger_last_time = ?, trigger_next_time = ?, trigger_status = ? \
    WHERE id = ? AND trigger_status = ? AND trigger_next_time = ?";

/// Ids per statement when MySQL's due rows are locked by key: far below the server's 65,535
/// bound parameters.
const LOCK_BY_ID_CHUNK: usize = 5_000;

/// [`ScheduleTx::due_jobs`] on MySQL: the due ids read without locks, then those rows locked by
/// primary key (`lock`: [`ScheduleTx::row_lock`]).
///
/// InnoDB (MariaDB at least) keeps, even at `READ COMMITTED`, the lock of every row a locking
/// scan of the due index passes, the other shares' rows included: one pass's scan would make
/// the others skip their own rows until it commits, and those fires would go out seconds late
/// as strays. A scan that waits for a row also holds its index entry, which the claim of the
/// pass holding the row must change: a deadlock. Locked by key, a row claimed meanwhile is read
/// as committed and no longer passes the second read's conditions.
async fn mysql_due_jobs(
    tx: &mut Transaction<'static, MySql>,
    (before, limit): (i64, i64),
    share: Option<(Share, i64)>,
    lock: &str,
) -> StoreResult<Vec<DueJob>> {
    let filter = if share.is_some() {
        DUE_JOBS_OF_SHARE
    } else {
        DUE_JOBS
    };
    let sql = format!("SELECT id FROM job_info {filter}");
    let mut q = sqlx::query_scalar(&sql)
        .bind(TRIGGER_STATUS_RUNNING)
        .bind(before);
    if let Some((share, stray)) = share {
        q = q.bind(share.of as i32).bind(share.index as i32).bind(stray);
    }
    let ids: Vec<i32> = q.bind(limit).fetch_all(&mut **tx).await?;
    let mut jobs = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(LOCK_BY_ID_CHUNK) {
        let sql = format!(
            "SELECT {DUE_COLUMNS} FROM job_info FORCE INDEX (PRIMARY) WHERE id IN ({}) \
             AND trigger_status = ? AND trigger_next_time <= ?{lock}",
            super::placeholders(chunk.len())
        );
        let mut q = sqlx::query(&sql).persistent(false);
        for id in chunk {
            q = q.bind(id);
        }
        let q = q.bind(TRIGGER_STATUS_RUNNING).bind(before);
        let mut rows = q.fetch(&mut **tx);
        while let Some(row) = rows.try_next().await? {
            jobs.push(due_job_from_row(&row)?);
        }
    }
    jobs.sort_by_key(|job| job.trigger_next_time);
    Ok(jobs)
}

/// Runs the same body on whichever transaction is open; `$sql` is rewritten for PostgreSQL.
macro_rules! on_tx {
    ($self:expr, $sql:expr, |$tx:ident, $stmt:ident| $body:expr) => {
        match &mut $self.tx {
            Tx::Sqlite($tx) => {
                let $stmt: &str = $sql;
                $body
            }
            Tx::Postgres($tx) => {
                let pg = $crate::store::numbered_placeholders($sql);
                let $stmt: &str = &pg;
                $body
            }
            Tx::MySql($tx) => {
                let $stmt: &str = $sql;
                $body
            }
        }
    };
}
pub(super) use on_tx;

impl Store {
    /// Opens the pre-read transaction and takes the cluster lock: a row lock on PostgreSQL and
    /// MySQL (one admin pre-reads at a time), `BEGIN IMMEDIATE` on SQLite.
    pub async fn begin_schedule(&self) -> StoreResult<ScheduleTx> {
        let tx = match &self.db {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                lock_row_present(sqlx::query(LOCK_SCHEDULE).fetch_optional(&mut *tx).await?)?;
                Tx::Postgres(tx)
            }
            Db::MySql(pool) => {
                let mut tx = pool.begin().await?;
                lock_row_present(sqlx::query(LOCK_SCHEDULE).fetch_optional(&mut *tx).await?)?;
                Tx::MySql(tx)
            }
        };
        let lose_answer = self.take_lost_commit_answer();
        Ok(ScheduleTx {
            tx,
            shared: false,
            lose_answer,
        })
    }

    /// Opens a pre-read transaction without the cluster lock, for an admin reading its own
    /// share of the jobs: admins with disjoint shares then pre-read at the same time instead of
    /// queueing for one lock. The rows it reads are locked, and rows another admin's pass holds
    /// are skipped (read by that admin), so two passes never wait for each other or claim the
    /// same fire time. SQLite has one writer anyway and opens the exclusive transaction.
    pub async fn begin_shared_schedule(&self) -> StoreResult<ScheduleTx> {
        let tx = match &self.db {
            Db::Sqlite(_) => return self.begin_schedule().await,
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
            // its share is locked by key, not by a scan (see `mysql_due_jobs`)
            Db::MySql(pool) => Tx::MySql(pool.begin().await?),
        };
        let lose_answer = self.take_lost_commit_answer();
        Ok(ScheduleTx {
            tx,
            shared: true,
            lose_answer,
        })
    }

    /// Makes the next `n` pre-read passes commit and then fail as if the commit's answer was
    /// lost on the way, which a real database shows only when a connection drops at the wrong
    /// moment (test builds only).
    #[cfg(feature = "fault-hooks")]
    pub fn lose_commit_answers(&self, n: usize) {
        use std::sync::atomic::Ordering;
        self.lost_commit_answers.store(n, Ordering::SeqCst);
    }

    /// Whether the pass opening now is one whose commit answer a test wants lost.
    fn take_lost_commit_answer(&self) -> bool {
        #[cfg(feature = "fault-hooks")]
        {
            use std::sync::atomic::Ordering;
            let left = &self.lost_commit_answers;
            left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        }
        #[cfg(not(feature = "fault-hooks"))]
        false
    }

    /// Whether a pass has anything to take over: an admin that stopped beating before
    /// `dead_before` (other than `me`), or fire times handed back at a graceful stop.
    pub async fn has_orphans(&self, me: &str, dead_before: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "SELECT 1 AS found FROM admin_node WHERE beat_at < ? AND id <> ? \
             UNION ALL SELECT 1 AS found FROM fire_claim WHERE owner = ''",
        );
        let found = on_pool!(self, pool => sqlx::query(&sql)
            .bind(dead_before)
            .bind(me)
            .fetch_optional(pool)
            .await?
            .is_some());
        Ok(found)
    }
}

impl Store {
    /// The database's plan for the pre-read's due-jobs query (as [`ScheduleTx::due_jobs`] runs
    /// it, for fire times up to `before`), one line per plan step: shows whether the index on
    /// `(trigger_status, trigger_next_time)` is used.
    pub async fn explain_due_jobs(&self, before: i64, limit: i64) -> StoreResult<String> {
        let select = format!("SELECT {DUE_COLUMNS} FROM job_info {DUE_JOBS}");
        self.explain(&select, &[i64::from(TRIGGER_STATUS_RUNNING), before, limit])
            .await
    }

    /// The database's plan for one batched claim of `rows` fire times (as
    /// [`ScheduleTx::claim_all`] runs it): shows that each row is found by its primary key.
    pub async fn explain_claim(&self, rows: usize) -> StoreResult<String> {
        let rows = rows.clamp(1, CLAIM_BATCH);
        let sql = match self.backend() {
            Backend::MySql => claim_mysql_sql(rows),
            backend => claim_returning_sql(rows, backend),
        };
        let mut args: Vec<i64> = (0..rows as i64)
            .flat_map(|i| [i + 1, 1_000, 0, 2_000, i64::from(TRIGGER_STATUS_RUNNING)])
            .collect();
        if self.backend() == Backend::MySql {
            args.extend(1..=rows as i64);
        }
        self.explain(&sql, &args).await
    }

    /// The database's plan for `sql` with `args` bound in order, one line per plan step.
    async fn explain(&self, sql: &str, args: &[i64]) -> StoreResult<String> {
        macro_rules! bound {
            ($sql:expr) => {{
                let mut q = sqlx::query($sql).persistent(false);
                for a in args {
                    q = q.bind(*a);
                }
                q
            }};
        }
        let explained = match self.backend() {
            Backend::Sqlite => format!("EXPLAIN QUERY PLAN {sql}"),
            Backend::Postgres => numbered_placeholders(&format!("EXPLAIN {sql}")),
            Backend::MySql => format!("EXPLAIN {sql}"),
        };
        let lines: Vec<String> = match &self.db {
            Db::Sqlite(pool) => bound!(&explained)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| r.text("detail"))
                .collect::<Result<_, _>>()?,
            Db::Postgres(pool) => bound!(&explained)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| r.text("QUERY PLAN"))
                .collect::<Result<_, _>>()?,
            // a derived table of constant SELECTs (the claim's values) adds one
            // "No tables used" step per row; they say nothing about index use
            Db::MySql(pool) => bound!(&explained)
                .fetch_all(pool)
                .await?
                .iter()
                .filter(|r| {
                    sqlx::Row::try_get::<Option<String>, _>(*r, "table")
                        .ok()
                        .flatten()
                        .is_some()
                })
                .map(|r| {
                    let col = |name: &str| {
                        sqlx::Row::try_get::<Option<String>, _>(r, name)
                            .ok()
                            .flatten()
                            .unwrap_or_else(|| "-".into())
                    };
                    format!(
                        "table={} type={} possible_keys={} key={} extra={}",
                        col("table"),
                        col("type"),
                        col("possible_keys"),
                        col("key"),
                        col("Extra")
                    )
                })
                .collect(),
        };
        Ok(lines.join("\n"))
    }
}

/// Without its row, `FOR UPDATE` locks nothing and admins would double-schedule, as XXL-JOB's
/// do: refuse to schedule instead.
fn lock_row_present<R>(row: Option<R>) -> StoreResult<()> {
    match row {
        Some(_) => Ok(()),
        None => Err(StoreError::Corrupt {
            table: "job_lock",
            id: 0,
            detail: "row 'schedule_lock' is missing; scheduling would not be exclusive".into(),
        }),
    }
}

impl ScheduleTx {
    /// Scheduled jobs whose next fire time is at or before `before`, oldest first, at most `limit`;
    /// with a `share`, only the jobs of that share, and any due at or before its `stray` time.
    pub async fn due_jobs(
        &mut self,
        before: i64,
        limit: i64,
        share: Option<(Share, i64)>,
    ) -> StoreResult<Vec<DueJob>> {
        let lock = self.row_lock();
        if let Tx::MySql(tx) = &mut self.tx {
            return mysql_due_jobs(tx, (before, limit), share, lock).await;
        }
        let sql = match share {
            None => format!("SELECT {DUE_COLUMNS} FROM job_info {DUE_JOBS}{lock}"),
            Some(_) => format!("SELECT {DUE_COLUMNS} FROM job_info {DUE_JOBS_OF_SHARE}{lock}"),
        };
        // rows converted as they arrive, so a large pass never holds all its raw rows at once
        let mut jobs = Vec::new();
        on_tx!(self, &sql, |tx, stmt| {
            let mut q = sqlx::query(stmt).bind(TRIGGER_STATUS_RUNNING).bind(before);
            if let Some((share, stray)) = share {
                q = q.bind(share.of as i32).bind(share.index as i32).bind(stray);
            }
            let mut rows = q.bind(limit).fetch(&mut **tx);
            while let Some(row) = rows.try_next().await? {
                jobs.push(due_job_from_row(&row)?);
            }
        });
        Ok(jobs)
    }

    /// How the due rows are locked. A shared pass locks what it reads and skips what another
    /// holds. An exclusive pass holds the cluster lock, but shared passes do not take it: on
    /// MySQL it waits for their rows and reads them as they commit, since MySQL's claim learns
    /// what it changed by reading the rows back, and a shared pass that made the same change
    /// meanwhile would read as this pass's claim. PostgreSQL's claim returns the rows it changed.
    fn row_lock(&self) -> &'static str {
        match (&self.tx, self.shared) {
            (Tx::Sqlite(_), _) => "",
            (_, true) => " FOR UPDATE SKIP LOCKED",
            (Tx::MySql(_), false) => " FOR UPDATE",
            (Tx::Postgres(_), false) => "",
        }
    }

    /// Claims one fire time: true if the job still had `expected_next` and now has the new times.
    pub async fn claim(&mut self, u: &ScheduleUpdate) -> StoreResult<bool> {
        let (last, next, status) = new_state(u);
        let done = on_tx!(self, CLAIM, |tx, stmt| sqlx::query(stmt)
            .bind(last)
            .bind(next)
            .bind(status)
            .bind(u.id)
            .bind(TRIGGER_STATUS_RUNNING)
            .bind(u.expected_next)
            .execute(&mut **tx)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Claims many fire times in batched statements; the result says, per update, whether it
    /// was claimed (the job still had `expected_next`).
    pub async fn claim_all(&mut self, updates: &[ScheduleUpdate]) -> StoreResult<Vec<bool>> {
        let mut claimed = Vec::with_capacity(updates.len());
        for chunk in updates.chunks(CLAIM_BATCH) {
            let ids = match &mut self.tx {
                Tx::Sqlite(tx) => {
                    let sql = claim_returning_sql(chunk.len(), Backend::Sqlite);
                    let q = bind_claims!(sqlx::query(&sql).persistent(false), chunk);
                    ids_of(q.fetch_all(&mut **tx).await?)?
                }
                Tx::Postgres(tx) => {
                    let sql =
                        numbered_placeholders(&claim_returning_sql(chunk.len(), Backend::Postgres));
                    let q = bind_claims!(sqlx::query(&sql).persistent(false), chunk);
                    ids_of(q.fetch_all(&mut **tx).await?)?
                }
                Tx::MySql(tx) => {
                    // no RETURNING: update through a derived table, then read back which rows
                    // now hold exactly the new times (the schedule lock, or the
                    // shared pass's row locks, keep other schedulers off them meanwhile)
                    let sql = claim_mysql_sql(chunk.len());
                    let mut q = bind_claims!(sqlx::query(&sql).persistent(false), chunk);
                    for u in chunk {
                        q = q.bind(u.id);
                    }
                    q.execute(&mut **tx).await?;
                    let check = format!(
                        "SELECT id, trigger_last_time, trigger_next_time, trigger_status FROM job_info WHERE id IN ({})",
                        super::placeholders(chunk.len())
                    );
                    let mut q = sqlx::query(&check).persistent(false);
                    for u in chunk {
                        q = q.bind(u.id);
                    }
                    let mut ids = HashSet::new();
                    for row in q.fetch_all(&mut **tx).await? {
                        let id = row.int("id")?;
                        let state = (
                            row.long("trigger_last_time")?,
                            row.long("trigger_next_time")?,
                            row.int("trigger_status")?,
                        );
                        if chunk.iter().any(|u| u.id == id && new_state(u) == state) {
                            ids.insert(id);
                        }
                    }
                    ids
                }
            };
            claimed.extend(chunk.iter().map(|u| ids.contains(&u.id)));
        }
        Ok(claimed)
    }

    /// Commits the new fire times and releases the lock.
    pub async fn commit(self) -> StoreResult<()> {
        match self.tx {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
            Tx::MySql(tx) => tx.commit().await?,
        }
        if self.lose_answer {
            let lost = std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "the commit's answer was lost (fault injected by a test)",
            );
            return Err(StoreError::Database(sqlx::Error::Io(lost)));
        }
        Ok(())
    }
}
