//! `monitor_turn`: which admin runs each monitor's pass of each interval.

use super::{on_pool, Store, StoreResult};

/// A monitor whose passes the admins of one database take turns at (its row in `monitor_turn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MonitorPass {
    /// Retries and alarms of failed runs.
    Fail,
    /// Runs whose result never came.
    Lost,
    /// Daily counts, expired sessions and log retention.
    Report,
}

impl MonitorPass {
    /// Its row's name, and its label in the metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            MonitorPass::Fail => "fail",
            MonitorPass::Lost => "lost",
            MonitorPass::Report => "report",
        }
    }
}

impl Store {
    /// Takes `pass`'s turn for interval number `slot` for admin `node` at `now`: true when the
    /// turn is this admin's (nobody took a later interval, and nobody else took this one), so
    /// that a pass retried within its interval by the admin that took it runs again.
    pub async fn take_monitor_turn(
        &self,
        pass: MonitorPass,
        node: &str,
        slot: i64,
        now: i64,
    ) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE monitor_turn SET slot = ?, node = ?, taken_at = ? \
             WHERE name = ? AND (slot < ? OR (slot = ? AND node = ?))",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(slot)
            .bind(node)
            .bind(now)
            .bind(pass.as_str())
            .bind(slot)
            .bind(slot)
            .bind(node)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done == 1)
    }
}
