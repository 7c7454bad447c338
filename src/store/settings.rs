//! Settings the admin keeps in its database (`admin_setting`), shared by every admin of a cluster.

use super::rows::RowExt;
use super::{duplicate_as, on_pool, Store, StoreError, StoreResult};

/// Name of the setting that holds the executors' access token.
pub const ACCESS_TOKEN_SETTING: &str = "access_token";

impl Store {
    /// The value of a setting, if it was ever stored.
    pub async fn get_setting(&self, name: &str) -> StoreResult<Option<String>> {
        let sql = self.sql("SELECT value FROM admin_setting WHERE name = ?");
        let value = on_pool!(self, pool => match sqlx::query(&sql).bind(name).fetch_optional(pool).await? {
            Some(row) => Some(row.text("value")?),
            None => None,
        });
        Ok(value)
    }

    /// Stores a setting unless it exists; the value now stored (the other one when another admin
    /// of the cluster stored it first).
    pub async fn init_setting(&self, name: &str, value: &str, now: i64) -> StoreResult<String> {
        let sql = self.sql("INSERT INTO admin_setting (name, value, update_time) VALUES (?, ?, ?)");
        let inserted = on_pool!(self, pool => sqlx::query(&sql)
            .bind(name)
            .bind(value)
            .bind(now)
            .execute(pool)
            .await
            .map(|_| ())
            .map_err(|e| duplicate_as(e, || format!("setting '{name}'"))));
        match inserted {
            Ok(()) => Ok(value.to_string()),
            Err(StoreError::Duplicate(_)) => {
                self.get_setting(name)
                    .await?
                    .ok_or_else(|| StoreError::Corrupt {
                        table: "admin_setting",
                        id: 0,
                        detail: format!("setting '{name}' exists and yet cannot be read"),
                    })
            }
            Err(e) => Err(e),
        }
    }
}
