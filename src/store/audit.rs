//! The audit log (`audit_log`): who changed what, when.

use super::rows::{bind_params, Filter, Param, RowExt};
use super::{on_pool, Store, StoreResult};
use crate::model::AuditEntry;

/// Which audit entries to list.
#[derive(Debug, Default, Clone)]
pub struct AuditFilter {
    /// Only this user's.
    pub username: Option<String>,
    /// Only actions on this kind of thing (`job`, `group`, `user`, `token`, `run`).
    pub target_type: Option<String>,
    /// Only on this one.
    pub target_id: Option<i64>,
    /// Only this action (`job.update`, …).
    pub action: Option<String>,
    /// At or after, epoch ms.
    pub from: Option<i64>,
    /// Before, epoch ms.
    pub to: Option<i64>,
    /// Rows to skip.
    pub offset: i64,
    /// Most rows to return.
    pub limit: i64,
}

const COLUMNS: &str =
    "id, time, user_id, username, action, target_type, target_id, summary, changes";

impl Store {
    /// Records one change.
    pub async fn insert_audit(&self, e: &AuditEntry) -> StoreResult<()> {
        let sql = self.sql(
            "INSERT INTO audit_log (time, user_id, username, action, target_type, target_id, \
             summary, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        );
        on_pool!(self, pool => { sqlx::query(&sql)
            .bind(e.time)
            .bind(e.user_id)
            .bind(&e.username)
            .bind(&e.action)
            .bind(&e.target_type)
            .bind(e.target_id)
            .bind(&e.summary)
            .bind(&e.changes)
            .execute(pool)
            .await?; });
        Ok(())
    }

    /// A page of entries, newest first, and how many match.
    pub async fn list_audit(&self, filter: &AuditFilter) -> StoreResult<(i64, Vec<AuditEntry>)> {
        let mut f = Filter::default();
        if let Some(u) = filter.username.as_deref().filter(|u| !u.is_empty()) {
            f.and("username = ?", Param::Text(u.to_string()));
        }
        if let Some(t) = filter.target_type.as_deref().filter(|t| !t.is_empty()) {
            f.and("target_type = ?", Param::Text(t.to_string()));
        }
        if let Some(id) = filter.target_id {
            f.and("target_id = ?", Param::Long(id));
        }
        if let Some(a) = filter.action.as_deref().filter(|a| !a.is_empty()) {
            f.and("action = ?", Param::Text(a.to_string()));
        }
        if let Some(from) = filter.from {
            f.and("time >= ?", Param::Long(from));
        }
        if let Some(to) = filter.to {
            f.and("time < ?", Param::Long(to));
        }
        let where_clause = f.where_clause();
        let count_sql = self.sql(format!("SELECT COUNT(*) AS n FROM audit_log{where_clause}"));
        let page_sql = self.sql(format!(
            "SELECT {COLUMNS} FROM audit_log{where_clause} ORDER BY id DESC LIMIT ? OFFSET ?"
        ));
        let mut page_params = f.params.clone();
        page_params.push(Param::Long(filter.limit.max(0)));
        page_params.push(Param::Long(filter.offset.max(0)));
        on_pool!(self, pool => {
            let total = bind_params!(sqlx::query(&count_sql), f.params).fetch_one(pool).await?.long("n")?;
            let rows = bind_params!(sqlx::query(&page_sql), page_params)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|r| -> Result<AuditEntry, sqlx::Error> {
                    Ok(AuditEntry {
                        id: r.long("id")?,
                        time: r.long("time")?,
                        user_id: r.int("user_id")?,
                        username: r.text("username")?,
                        action: r.text("action")?,
                        target_type: r.text("target_type")?,
                        target_id: r.long("target_id")?,
                        summary: r.text("summary")?,
                        changes: r.text("changes")?,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((total, rows))
        })
    }
}
