//! Daily run counts (`job_log_report`).

use super::dialect::upsert_log_report;
use super::rows::RowExt;
use super::{on_pool, Store, StoreResult};
use crate::model::LogReport;

impl Store {
    /// Writes one day's counts, replacing any earlier figures for that day.
    pub async fn upsert_log_report(&self, report: &LogReport) -> StoreResult<()> {
        let sql = self.sql(upsert_log_report(self.backend()));
        on_pool!(self, pool => { sqlx::query(&sql)
            .bind(report.trigger_day)
            .bind(report.running_count)
            .bind(report.suc_count)
            .bind(report.fail_count)
            .bind(report.update_time)
            .execute(pool)
            .await?; });
        Ok(())
    }

    /// Reports for days in `[from, to)`, oldest first.
    pub async fn list_log_reports(&self, from: i64, to: i64) -> StoreResult<Vec<LogReport>> {
        let sql = self.sql(
            "SELECT trigger_day, running_count, suc_count, fail_count, update_time FROM job_log_report \
             WHERE trigger_day >= ? AND trigger_day < ? ORDER BY trigger_day",
        );
        let rows = on_pool!(self, pool => sqlx::query(&sql)
            .bind(from)
            .bind(to)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| -> Result<LogReport, sqlx::Error> {
                Ok(LogReport {
                    trigger_day: r.long("trigger_day")?,
                    running_count: r.long("running_count")?,
                    suc_count: r.long("suc_count")?,
                    fail_count: r.long("fail_count")?,
                    update_time: r.long("update_time")?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?);
        Ok(rows)
    }
}
