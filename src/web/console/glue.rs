//! A script job's GLUE editor (CodeMirror, whose styles need this answer's nonce): the source,
//! a remark, and the last saved versions to view, compare or restore. Saving and restoring are the REST API's
//! (`PUT /api/v1/jobs/{id}/glue`, `POST /api/v1/jobs/{id}/glue/{versionId}/restore`).

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest};
use askama::Template;

use super::errors::PageResult;
use super::{nav, policy_with_style_nonce, render, utc_text, Nav};
use crate::model::{GlueType, JobInfo};
use crate::web::api::auth::Principal;
use crate::web::api::load_job;
use crate::web::AppState;

/// One saved version in the list.
struct VersionRow {
    id: i32,
    glue_type: &'static str,
    remark: String,
    added: i64,
    added_utc: String,
}

#[derive(Template)]
#[template(path = "glue.html")]
struct GluePage {
    nav: Nav,
    job: JobInfo,
    script: bool,
    updated_utc: String,
    versions: Vec<VersionRow>,
    /// This answer's nonce for the editor's `<style>` (CodeMirror writes its styles there).
    style_nonce: String,
}

/// `GET /jobs/{id}/glue`.
pub(super) async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i32>,
) -> PageResult {
    let job = load_job(&state, &principal, id.into_inner()).await?;
    let script = job.glue_type != GlueType::Bean;
    let versions = if script {
        state
            .store
            .list_glue_versions(job.id)
            .await?
            .into_iter()
            .map(|v| VersionRow {
                id: v.id,
                glue_type: v.glue_type.as_str(),
                remark: v.glue_remark,
                added: v.add_time,
                added_utc: utc_text(v.add_time),
            })
            .collect()
    } else {
        Vec::new()
    };
    let style_nonce = uuid::Uuid::new_v4().simple().to_string();
    let mut page = render(&GluePage {
        nav: nav(&req, &principal, "jobs"),
        updated_utc: utc_text(job.glue_updatetime),
        script,
        job,
        versions,
        style_nonce: style_nonce.clone(),
    });
    if let Ok(policy) = HeaderValue::from_str(&policy_with_style_nonce(&style_nonce)) {
        page.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    Ok(page)
}
