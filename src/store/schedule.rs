//! The scheduler's pre-read transaction: cluster lock, due jobs, compare-and-set of fire times.

use sqlx::{MySql, Postgres, Sqlite, Transaction};

use super::dialect::LOCK_SCHEDULE;
use super::jobs::{job_from_row, JOB_COLUMNS};
use super::{numbered_placeholders, Db, Store, StoreError, StoreResult};
use crate::model::{JobInfo, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED};

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

enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
    MySql(Transaction<'static, MySql>),
}

/// An open pre-read transaction holding the schedule lock; commit it quickly.
pub struct ScheduleTx {
    tx: Tx,
}

const DUE_JOBS: &str = "WHERE trigger_status = ? AND trigger_next_time <= ? ORDER BY id LIMIT ?";
const CLAIM: &str =
    "UPDATE job_info SET trigger_last_time = ?, trigger_next_time = ?, trigger_status = ? \
    WHERE id = ? AND trigger_status = ? AND trigger_next_time = ?";

/// Runs the same body on whichever transaction is open; `$sql` is rewritten for PostgreSQL.
macro_rules! on_tx {
    ($self:expr, $sql:expr, |$tx:ident, $stmt:ident| $body:expr) => {
        match &mut $self.tx {
            Tx::Sqlite($tx) => {
                let $stmt: &str = $sql;
                $body
            }
            Tx::Postgres($tx) => {
                let pg = numbered_placeholders($sql);
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
        Ok(ScheduleTx { tx })
    }
}

/// Without its row, `FOR UPDATE` locks nothing and admins would double-schedule
/// (XXL-JOB issues #2806, #1886): refuse to schedule instead.
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
    /// Scheduled jobs whose next fire time is at or before `before`, by id, at most `limit`.
    pub async fn due_jobs(&mut self, before: i64, limit: i64) -> StoreResult<Vec<JobInfo>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM job_info {DUE_JOBS}");
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(TRIGGER_STATUS_RUNNING)
            .bind(before)
            .bind(limit)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(job_from_row)
            .collect())
    }

    /// Claims one fire time: true if the job still had `expected_next` and now has the new times.
    pub async fn claim(&mut self, u: &ScheduleUpdate) -> StoreResult<bool> {
        let (status, next) = if u.stop {
            (TRIGGER_STATUS_STOPPED, 0)
        } else {
            (TRIGGER_STATUS_RUNNING, u.next)
        };
        let last = if u.stop { 0 } else { u.last };
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

    /// Claims many fire times; the result says, per update, whether it was claimed.
    pub async fn claim_all(&mut self, updates: &[ScheduleUpdate]) -> StoreResult<Vec<bool>> {
        let mut claimed = Vec::with_capacity(updates.len());
        for u in updates {
            claimed.push(self.claim(u).await?);
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
        Ok(())
    }
}
