//! Executor groups (`job_group`).

use super::dialect::insert_returning_id;
use super::rows::RowExt;
use super::{duplicate_as, on_pool, Store, StoreResult};
use crate::model::{AddressType, InstanceOverflow, JobGroup};

const COLUMNS: &str =
    "id, app_name, title, address_type, address_list, access_token, update_time, \
    max_concurrent_instances, instance_overflow";

fn group_from_row(row: &impl RowExt) -> Result<JobGroup, sqlx::Error> {
    Ok(JobGroup {
        id: row.int("id")?,
        app_name: row.text("app_name")?,
        title: row.text("title")?,
        address_type: AddressType::from_code(row.int("address_type")?),
        address_list: split_addresses(row.opt_text("address_list")?.as_deref()),
        access_token: row.opt_text("access_token")?,
        update_time: row.long("update_time")?,
        max_concurrent_instances: row.int("max_concurrent_instances")?,
        // written only through validation; an unknown name (a newer admin's) counts as the default
        instance_overflow: row
            .text("instance_overflow")?
            .parse()
            .unwrap_or(InstanceOverflow::Skip),
    })
}

/// Splits a stored comma list; blank entries are dropped.
pub(crate) fn split_addresses(list: Option<&str>) -> Vec<String> {
    list.unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The stored form of an address list: comma-joined, NULL when empty (as XXL-JOB).
pub(crate) fn join_addresses(list: &[String]) -> Option<String> {
    if list.is_empty() {
        None
    } else {
        Some(list.join(","))
    }
}

/// A group's own access token, which only its executors may present.
#[derive(Clone, PartialEq, Eq)]
pub struct GroupToken {
    /// The group.
    pub group_id: i32,
    /// Its app name (the executors' `registryKey` and `XXL-JOB-APPNAME`).
    pub app_name: String,
    /// The token.
    pub token: String,
}

impl std::fmt::Debug for GroupToken {
    // the token never reaches a log line
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupToken")
            .field("group_id", &self.group_id)
            .field("app_name", &self.app_name)
            .finish()
    }
}

impl Store {
    /// Inserts a group and returns its id; an app name already in use is [`crate::store::StoreError::Duplicate`].
    pub async fn insert_group(&self, group: &JobGroup) -> StoreResult<i32> {
        let id = insert_returning_id!(
            self,
            "INSERT INTO job_group (app_name, title, address_type, address_list, access_token, update_time, \
             max_concurrent_instances, instance_overflow) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            |q| q
                .bind(&group.app_name)
                .bind(&group.title)
                .bind(group.address_type.code())
                .bind(join_addresses(&group.address_list))
                .bind(&group.access_token)
                .bind(group.update_time)
                .bind(group.max_concurrent_instances)
                .bind(group.instance_overflow.as_str())
        )
        .map_err(|e| duplicate_as(e, || format!("group with app name '{}'", group.app_name)))?;
        self.routing_written();
        Ok(id as i32)
    }

    /// Replaces a group's fields; false when no such group.
    pub async fn update_group(&self, group: &JobGroup) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE job_group SET app_name = ?, title = ?, address_type = ?, address_list = ?, \
             access_token = ?, update_time = ?, max_concurrent_instances = ?, instance_overflow = ? \
             WHERE id = ?",
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(&group.app_name)
            .bind(&group.title)
            .bind(group.address_type.code())
            .bind(join_addresses(&group.address_list))
            .bind(&group.access_token)
            .bind(group.update_time)
            .bind(group.max_concurrent_instances)
            .bind(group.instance_overflow.as_str())
            .bind(group.id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))
        .map_err(|e| duplicate_as(e, || format!("group with app name '{}'", group.app_name)))?;
        self.routing_written();
        Ok(done > 0)
    }

    /// Deletes a group; false when no such group. Callers check [`Store::count_jobs_in_group`] first.
    pub async fn delete_group(&self, id: i32) -> StoreResult<bool> {
        let sql = self.sql("DELETE FROM job_group WHERE id = ?");
        let done =
            on_pool!(self, pool => sqlx::query(&sql).bind(id).execute(pool).await?.rows_affected());
        self.routing_written();
        Ok(done > 0)
    }

    /// One group by id.
    pub async fn get_group(&self, id: i32) -> StoreResult<Option<JobGroup>> {
        let sql = self.sql(format!("SELECT {COLUMNS} FROM job_group WHERE id = ?"));
        let group = on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Some(group_from_row(&row)?),
            None => None,
        });
        Ok(group)
    }

    /// One group by app name, matched byte for byte (MySQL's default collations would also
    /// match `PAY-EXEC` for `pay-exec`; see [`Self::find_live_registry_for`]).
    pub async fn get_group_by_app_name(&self, app_name: &str) -> StoreResult<Option<JobGroup>> {
        let sql = self.sql(format!(
            "SELECT {COLUMNS} FROM job_group WHERE app_name = ?"
        ));
        let group = on_pool!(self, pool => match sqlx::query(&sql).bind(app_name).fetch_optional(pool).await? {
            Some(row) => Some(group_from_row(&row)?),
            None => None,
        });
        // at most one row: its unique index there compares the same way
        Ok(group.filter(|g| g.app_name == app_name))
    }

    /// The groups that have their own access token: `(id, app name, token)`.
    pub async fn group_tokens(&self) -> StoreResult<Vec<GroupToken>> {
        let sql = "SELECT id, app_name, access_token FROM job_group \
                   WHERE access_token IS NOT NULL AND access_token <> ''";
        let tokens = on_pool!(self, pool => sqlx::query(sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|row| -> Result<GroupToken, sqlx::Error> {
                Ok(GroupToken {
                    group_id: row.int("id")?,
                    app_name: row.text("app_name")?,
                    token: row.text("access_token")?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?);
        Ok(tokens)
    }

    /// Every group, ordered by app name.
    pub async fn list_groups(&self) -> StoreResult<Vec<JobGroup>> {
        let sql = format!("SELECT {COLUMNS} FROM job_group ORDER BY app_name, id");
        let groups = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(group_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(groups)
    }

    /// Writes a group's address list (the registry monitor's refresh); false when no such group.
    pub async fn set_group_addresses(
        &self,
        id: i32,
        addresses: &[String],
        now: i64,
    ) -> StoreResult<bool> {
        let sql = self.sql("UPDATE job_group SET address_list = ?, update_time = ? WHERE id = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(join_addresses(addresses))
            .bind(now)
            .bind(id)
            .execute(pool)
            .await?
            .rows_affected());
        self.routing_written();
        Ok(done > 0)
    }

    /// How many jobs use a group (a used group cannot be deleted).
    pub async fn count_jobs_in_group(&self, id: i32) -> StoreResult<i64> {
        let sql = self.sql("SELECT COUNT(*) AS n FROM job_info WHERE job_group = ?");
        let n =
            on_pool!(self, pool => sqlx::query(&sql).bind(id).fetch_one(pool).await?.long("n")?);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_lists_split_and_join() {
        assert_eq!(split_addresses(Some("a, b,,c")), vec!["a", "b", "c"]);
        assert!(split_addresses(None).is_empty());
        assert_eq!(join_addresses(&[]), None);
        assert_eq!(
            join_addresses(&["a".into(), "b".into()]).as_deref(),
            Some("a,b")
        );
    }
}
