//! Script version history (`job_logglue`).

use super::rows::RowExt;
use super::{on_pool, Store, StoreError, StoreResult};
use crate::model::GlueVersion;

/// A `job_logglue` row (`id, job_id, glue_type, glue_source, glue_remark, add_time`).
pub(super) fn glue_version(r: &impl RowExt) -> StoreResult<GlueVersion> {
    let id = r.int("id")?;
    Ok(GlueVersion {
        id,
        job_id: r.int("job_id")?,
        glue_type: r
            .text("glue_type")?
            .parse()
            .map_err(|e| StoreError::Corrupt {
                table: "job_logglue",
                id: id.into(),
                detail: format!("{e}"),
            })?,
        glue_source: r.text("glue_source")?,
        glue_remark: r.text("glue_remark")?,
        add_time: r.long("add_time")?,
    })
}

impl Store {
    /// A job's saved script versions, newest first.
    pub async fn list_glue_versions(&self, job_id: i32) -> StoreResult<Vec<GlueVersion>> {
        let sql = self.sql(
            "SELECT id, job_id, glue_type, glue_source, glue_remark, add_time FROM job_logglue \
             WHERE job_id = ? ORDER BY id DESC",
        );
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(job_id)
            .fetch_all(pool)
            .await?
            .iter()
            .map(glue_version)
            .collect())
    }

    /// Deletes all but the newest `keep` versions of a job's script; returns how many went.
    pub async fn prune_glue_versions(&self, job_id: i32, keep: i64) -> StoreResult<u64> {
        let boundary_sql = self
            .sql("SELECT id FROM job_logglue WHERE job_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?");
        let delete_sql = self.sql("DELETE FROM job_logglue WHERE job_id = ? AND id <= ?");
        let done = on_pool!(self, pool => {
            match sqlx::query(&boundary_sql).bind(job_id).bind(keep.max(0)).fetch_optional(pool).await? {
                Some(row) => sqlx::query(&delete_sql)
                    .bind(job_id)
                    .bind(row.int("id")?)
                    .execute(pool)
                    .await?
                    .rows_affected(),
                None => 0,
            }
        });
        Ok(done)
    }
}
