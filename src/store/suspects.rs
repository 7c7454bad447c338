//! Executors routing leaves out after a call got no answer (`executor_suspect`), shared by the
//! admins of one database.

use super::rows::RowExt;
use super::{on_pool, Store, StoreResult};
use crate::model::{ExecutorSuspect, EXECUTOR_ADDRESS_MAX, SUSPECT_REASON_MAX};

fn suspect_from_row(row: &impl RowExt) -> Result<ExecutorSuspect, sqlx::Error> {
    Ok(ExecutorSuspect {
        address: row.text("address")?,
        since: row.long("since")?,
        reason: row.text("reason")?,
        noted_by: row.text("noted_by")?,
        last_beat: row.opt_long("last_beat")?,
    })
}

impl Store {
    /// Marks `address` suspect since `since`, unless it is already (the first mark stands);
    /// true when this call marked it.
    pub async fn mark_suspect(
        &self,
        address: &str,
        since: i64,
        reason: &str,
        noted_by: &str,
    ) -> StoreResult<bool> {
        // a registered or listed address is never longer; nothing to route around otherwise
        if address.chars().count() > EXECUTOR_ADDRESS_MAX {
            return Ok(false);
        }
        let reason: String = reason.chars().take(SUSPECT_REASON_MAX).collect();
        let noted_by: String = noted_by.chars().take(64).collect();
        let sql = self.sql(match self.backend() {
            super::Backend::MySql => {
                "INSERT IGNORE INTO executor_suspect (address, since, reason, noted_by) VALUES (?, ?, ?, ?)"
            }
            _ => {
                "INSERT INTO executor_suspect (address, since, reason, noted_by) VALUES (?, ?, ?, ?) \
                 ON CONFLICT (address) DO NOTHING"
            }
        });
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(address)
            .bind(since)
            .bind(&reason)
            .bind(&noted_by)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done == 1)
    }

    /// Clears `address`'s mark; with `since`, only the mark made then (a later mark, by a call
    /// that failed after what cleared it, stands). True when a mark was cleared.
    pub async fn clear_suspect(&self, address: &str, since: Option<i64>) -> StoreResult<bool> {
        let done = match since {
            Some(since) => {
                let sql = self.sql("DELETE FROM executor_suspect WHERE address = ? AND since = ?");
                on_pool!(self, pool => sqlx::query(&sql)
                    .bind(address)
                    .bind(since)
                    .execute(pool)
                    .await?
                    .rows_affected())
            }
            None => {
                let sql = self.sql("DELETE FROM executor_suspect WHERE address = ?");
                on_pool!(self, pool => sqlx::query(&sql)
                    .bind(address)
                    .execute(pool)
                    .await?
                    .rows_affected())
            }
        };
        Ok(done > 0)
    }

    /// Every suspect executor, keyed by its address.
    pub async fn suspects_by_address(
        &self,
    ) -> StoreResult<std::collections::HashMap<String, ExecutorSuspect>> {
        Ok(self
            .list_suspects()
            .await?
            .into_iter()
            .map(|m| (m.address.clone(), m))
            .collect())
    }

    /// Every suspect executor with its latest registration beat, by address.
    pub async fn list_suspects(&self) -> StoreResult<Vec<ExecutorSuspect>> {
        let sql = self.sql(
            "SELECT s.address, s.since, s.reason, s.noted_by, \
             (SELECT MAX(r.update_time) FROM job_registry r WHERE r.registry_value = s.address) AS last_beat \
             FROM executor_suspect s ORDER BY s.address",
        );
        let rows = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(suspect_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(rows)
    }
}
