//! Executors cordoned for a drain (`executor_cordon`), shared by the admins of one database.

use std::collections::HashMap;

use super::rows::RowExt;
use super::{on_pool, Store, StoreResult};
use crate::model::{address_key, ExecutorCordon};

fn cordon_from_row(row: &impl RowExt) -> Result<ExecutorCordon, sqlx::Error> {
    Ok(ExecutorCordon {
        address: row.text("address")?,
        since: row.long("since")?,
        reason: row.text("reason")?,
        by_user: row.text("by_user")?,
    })
}

impl Store {
    /// Cordons `cordon.address`; false when it already was (the first cordon stands).
    pub async fn cordon_executor(&self, cordon: &ExecutorCordon) -> StoreResult<bool> {
        let sql = self.sql(match self.backend() {
            super::Backend::MySql => {
                "INSERT IGNORE INTO executor_cordon (address, since, reason, by_user) VALUES (?, ?, ?, ?)"
            }
            _ => {
                "INSERT INTO executor_cordon (address, since, reason, by_user) VALUES (?, ?, ?, ?) \
                 ON CONFLICT (address) DO NOTHING"
            }
        });
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(&cordon.address)
            .bind(cordon.since)
            .bind(&cordon.reason)
            .bind(&cordon.by_user)
            .execute(pool)
            .await?
            .rows_affected());
        self.routing_written();
        Ok(done == 1)
    }

    /// Lifts the cordon of `address` (as stored); false when there was none.
    pub async fn uncordon_executor(&self, address: &str) -> StoreResult<bool> {
        let sql = self.sql("DELETE FROM executor_cordon WHERE address = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(address)
            .execute(pool)
            .await?
            .rows_affected());
        self.routing_written();
        Ok(done > 0)
    }

    /// Every cordon, oldest first.
    pub async fn list_cordons(&self) -> StoreResult<Vec<ExecutorCordon>> {
        let sql = self.sql(
            "SELECT address, since, reason, by_user FROM executor_cordon ORDER BY since, address",
        );
        let rows = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(cordon_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(rows)
    }

    /// Every cordon by its address's [`address_key`], so that any spelling of an address
    /// finds its cordon.
    pub async fn cordons_by_address_key(&self) -> StoreResult<HashMap<String, ExecutorCordon>> {
        Ok(self
            .list_cordons()
            .await?
            .into_iter()
            .map(|c| (address_key(&c.address), c))
            .collect())
    }
}
