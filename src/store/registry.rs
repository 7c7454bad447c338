//! Live executor registrations (`job_registry`).

use super::dialect::upsert_registry;
use super::rows::RowExt;
use super::{on_pool, Store, StoreResult};
use crate::model::BeatReport;
use crate::model::Registration;
use crate::protocol::{ExecutorLoad, Labels};

/// The columns a [`Registration`] is read from.
const REGISTRATION_COLUMNS: &str =
    "id, registry_group, registry_key, registry_value, protocol, update_time, load_report, labels";

fn registration_from_row(row: &impl RowExt) -> Result<Registration, sqlx::Error> {
    // a report this admin cannot read (written by another version) is shown as none
    let load = row
        .opt_text("load_report")?
        .and_then(|text| serde_json::from_str::<ExecutorLoad>(&text).ok());
    let labels = row
        .opt_text("labels")?
        .and_then(|text| serde_json::from_str::<Labels>(&text).ok())
        .unwrap_or_default();
    Ok(Registration {
        load,
        labels,
        id: row.long("id")?,
        registry_group: row.text("registry_group")?,
        registry_key: row.text("registry_key")?,
        registry_value: row.text("registry_value")?,
        protocol: row.text("protocol")?,
        update_time: row.long("update_time")?,
    })
}

impl Store {
    /// Records a heartbeat: inserts the registration or refreshes its time, protocol, load and
    /// labels.
    pub async fn upsert_registry(
        &self,
        group: &str,
        key: &str,
        value: &str,
        protocol: &str,
        now: i64,
        report: &BeatReport,
    ) -> StoreResult<()> {
        let sql = self.sql(upsert_registry(self.backend()));
        let load = report
            .load
            .as_ref()
            .and_then(|l| serde_json::to_string(l).ok());
        let labels = (!report.labels.is_empty())
            .then(|| serde_json::to_string(&report.labels).ok())
            .flatten();
        on_pool!(self, pool => { sqlx::query(&sql)
            .bind(group)
            .bind(key)
            .bind(value)
            .bind(protocol)
            .bind(now)
            .bind(load.as_deref())
            .bind(labels.as_deref())
            .execute(pool)
            .await?; });
        self.routing_written();
        Ok(())
    }

    /// Removes one registration (graceful executor shutdown); false when there was none. The key
    /// must match byte for byte (see [`Self::find_live_registry_for`]).
    pub async fn remove_registry(&self, group: &str, key: &str, value: &str) -> StoreResult<bool> {
        let find = self.sql(
            "SELECT id, registry_key FROM job_registry WHERE registry_group = ? AND registry_key = ? \
             AND registry_value = ?",
        );
        let found: Vec<(i64, String)> = on_pool!(self, pool => sqlx::query(&find)
            .bind(group)
            .bind(key)
            .bind(value)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok((r.long("id")?, r.text("registry_key")?)))
            .collect::<Result<Vec<_>, sqlx::Error>>()?);
        let Some((id, _)) = found.into_iter().find(|(_, k)| k == key) else {
            return Ok(false);
        };
        let sql = self.sql("DELETE FROM job_registry WHERE id = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(id)
            .execute(pool)
            .await?
            .rows_affected());
        self.routing_written();
        Ok(done > 0)
    }

    /// Deletes registrations whose last heartbeat is older than `before`; returns how many.
    pub async fn remove_dead_registry(&self, before: i64) -> StoreResult<u64> {
        let sql = self.sql("DELETE FROM job_registry WHERE update_time < ?");
        let done = on_pool!(self, pool => sqlx::query(&sql).bind(before).execute(pool).await?.rows_affected());
        if done > 0 {
            self.routing_written();
        }
        Ok(done)
    }

    /// Registrations with a heartbeat after `after`, ordered by key then address.
    pub async fn find_live_registry(&self, after: i64) -> StoreResult<Vec<Registration>> {
        let sql = self.sql(format!(
            "SELECT {REGISTRATION_COLUMNS} FROM job_registry \
             WHERE update_time > ? ORDER BY registry_key, registry_value"
        ));
        let rows = on_pool!(self, pool => sqlx::query(&sql)
            .bind(after)
            .fetch_all(pool)
            .await?
            .iter()
            .map(registration_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(rows)
    }

    /// Live registrations of one app name, ordered by address. Keys match byte for byte, as on
    /// PostgreSQL and SQLite: MySQL's default collations ignore case and accents, and an
    /// executor registering as `PAY-EXEC` with the global token would be listed (and called
    /// with the group's own token) as group `pay-exec`.
    pub async fn find_live_registry_for(
        &self,
        app_name: &str,
        after: i64,
    ) -> StoreResult<Vec<Registration>> {
        let sql = self.sql(
            format!("SELECT {REGISTRATION_COLUMNS} FROM job_registry \
             WHERE registry_group = 'EXECUTOR' AND registry_key = ? AND update_time > ? ORDER BY registry_value"),
        );
        let rows = on_pool!(self, pool => sqlx::query(&sql)
            .bind(app_name)
            .bind(after)
            .fetch_all(pool)
            .await?
            .iter()
            .map(registration_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(rows
            .into_iter()
            .filter(|r| r.registry_key == app_name)
            .collect())
    }

    /// The live registration of one address, if any (to know which protocol it speaks).
    pub async fn find_registration(
        &self,
        value: &str,
        after: i64,
    ) -> StoreResult<Option<Registration>> {
        let sql = self.sql(format!(
            "SELECT {REGISTRATION_COLUMNS} FROM job_registry \
             WHERE registry_value = ? AND update_time > ? ORDER BY update_time DESC LIMIT 1"
        ));
        let row = on_pool!(self, pool => match sqlx::query(&sql).bind(value).bind(after).fetch_optional(pool).await? {
            Some(row) => Some(registration_from_row(&row)?),
            None => None,
        });
        Ok(row)
    }
}
