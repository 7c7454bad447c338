//! `/api/v1/jobs/{id}/glue`: a script job's source, its saved versions, saving and restoring.
//!
//! Saves go through the same store call as a job update that changes the source
//! ([`Store::save_glue`](crate::store::Store::save_glue)), so the job, its history and the
//! pruning to the newest [`GLUE_VERSIONS_KEPT`] versions stay as one.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::audit;
use super::auth::Principal;
use super::checks::check_script_source;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use super::jobs::GLUE_VERSIONS_KEPT;
use super::load_job;
use crate::clock::now_ms;
use crate::model::{GlueType, GlueVersion, JobInfo};
use crate::web::AppState;

/// Longest remark in characters (`job_logglue.glue_remark` is `VARCHAR(128)` on MySQL).
pub const GLUE_REMARK_MAX: usize = 128;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/jobs/{id}/glue", web::get().to(get))
        .route("/jobs/{id}/glue", web::put().to(save))
        .route("/jobs/{id}/glue/{version}", web::get().to(version))
        .route("/jobs/{id}/glue/{version}/restore", web::post().to(restore));
}

/// The job's current script.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct CurrentView {
    glue_type: &'static str,
    glue_source: String,
    glue_remark: String,
    glue_updatetime: i64,
}

/// A saved version in the list: no source.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct VersionItem {
    id: i32,
    glue_type: &'static str,
    glue_remark: String,
    add_time: i64,
}

/// A saved version with its source.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct VersionView {
    id: i32,
    glue_type: &'static str,
    glue_source: String,
    glue_remark: String,
    add_time: i64,
}

#[derive(Debug, Serialize, ToSchema)]
struct GlueView {
    current: CurrentView,
    versions: Vec<VersionItem>,
}

/// `PUT` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SaveBody {
    /// The new source; required, and not empty or blank (an empty script would succeed
    /// without doing anything).
    glue_source: Option<String>,
    glue_remark: Option<String>,
}

/// The job with its versions, newest first, as `GET /jobs/{id}/glue` shows them.
async fn glue_view(state: &AppState, job: JobInfo) -> ApiResult<GlueView> {
    let versions = state.store.list_glue_versions(job.id).await?;
    Ok(GlueView {
        current: CurrentView {
            glue_type: job.glue_type.as_str(),
            glue_source: job.glue_source,
            glue_remark: job.glue_remark,
            glue_updatetime: job.glue_updatetime,
        },
        versions: versions
            .into_iter()
            .map(|v| VersionItem {
                id: v.id,
                glue_type: v.glue_type.as_str(),
                glue_remark: v.glue_remark,
                add_time: v.add_time,
            })
            .collect(),
    })
}

/// A job the caller may change whose run mode has a script: BEAN jobs answer 400 `glueType`.
async fn load_script_job(state: &AppState, principal: &Principal, id: i32) -> ApiResult<JobInfo> {
    let job = load_job(state, principal, id).await?;
    if job.glue_type == GlueType::Bean {
        return Err(ApiError::field(
            "glueType",
            format!("job {id} runs a BEAN handler and has no script"),
        ));
    }
    Ok(job)
}

/// Version `version_id` of job `job_id`: 404 when it is not one of that job's kept versions.
async fn load_version(state: &AppState, job_id: i32, version_id: i32) -> ApiResult<GlueVersion> {
    state
        .store
        .list_glue_versions(job_id)
        .await?
        .into_iter()
        .find(|v| v.id == version_id)
        .ok_or_else(|| {
            ApiError::not_found(format!("job {job_id} has no script version {version_id}"))
        })
}

/// Stores `source` as the job's new current version, then answers with the job's glue.
async fn store_version(
    state: &AppState,
    principal: &Principal,
    id: i32,
    source: &str,
    remark: &str,
    action: &'static str,
) -> ApiResult<HttpResponse> {
    let before = load_job(state, principal, id).await?;
    let saved = state
        .store
        .save_glue(id, source, remark, now_ms(), GLUE_VERSIONS_KEPT)
        .await?;
    if !saved {
        return Err(ApiError::not_found(format!("job {id} does not exist")));
    }
    log::info!(
        "user '{}' saved a script version of job {id} ({remark})",
        principal.user.username
    );
    let job = load_job(state, principal, id).await?;
    let fields = |j: &crate::model::JobInfo| serde_json::json!({"glueSource": j.glue_source, "glueRemark": j.glue_remark});
    let change = audit::Change {
        action,
        target_type: "job",
        target_id: id.into(),
        summary: job.job_desc.clone(),
        before: Some(fields(&before)),
        after: Some(fields(&job)),
    };
    audit::record(state, principal, change).await;
    Ok(HttpResponse::Ok().json(glue_view(state, job).await?))
}

/// `GET /jobs/{id}/glue`.
#[utoipa::path(
    get,
    path = "/jobs/{id}/glue",
    tag = "glue",
    summary = "A script job's current source and its saved versions (newest 30)",
    params(("id" = i32, Path, description = "The job's id")),
    responses(
        (status = 200, description = "The source and versions", body = GlueView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let job = load_job(&state, &principal, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(glue_view(&state, job).await?))
}

/// `GET /jobs/{id}/glue/{versionId}`.
#[utoipa::path(
    get,
    path = "/jobs/{id}/glue/{version}",
    tag = "glue",
    summary = "One saved version with its source",
    params(("id" = i32, Path, description = "The job's id"), ("version" = i32, Path, description = "The saved version's id")),
    responses(
        (status = 200, description = "The version", body = VersionView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn version(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(i32, i32)>,
) -> ApiResult<HttpResponse> {
    let (id, version_id) = path.into_inner();
    load_job(&state, &principal, id).await?;
    let v = load_version(&state, id, version_id).await?;
    Ok(HttpResponse::Ok().json(VersionView {
        id: v.id,
        glue_type: v.glue_type.as_str(),
        glue_source: v.glue_source,
        glue_remark: v.glue_remark,
        add_time: v.add_time,
    }))
}

/// Checks a remark typed by a user: 1 to 128 characters once trimmed.
fn check_remark(remark: Option<String>) -> ApiResult<String> {
    let remark = remark.unwrap_or_default().trim().to_string();
    if remark.is_empty() {
        return Err(ApiError::field(
            "glueRemark",
            "glueRemark is required: say what changed",
        ));
    }
    if remark.chars().count() > GLUE_REMARK_MAX {
        return Err(ApiError::field(
            "glueRemark",
            format!("glueRemark must be at most {GLUE_REMARK_MAX} characters"),
        ));
    }
    Ok(remark)
}

/// `PUT /jobs/{id}/glue {glueSource, glueRemark}`.
#[utoipa::path(
    put,
    path = "/jobs/{id}/glue",
    tag = "glue",
    summary = "Save a script job's source as a new version",
    params(("id" = i32, Path, description = "The job's id")),
    request_body = SaveBody,
    responses(
        (status = 200, description = "The source and versions", body = GlueView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn save(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    body: Json<SaveBody>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let body = body.into_inner();
    let job = load_script_job(&state, &principal, id).await?;
    let Some(source) = body.glue_source else {
        return Err(ApiError::field("glueSource", "glueSource is required"));
    };
    check_script_source(job.glue_type, &source)?;
    let remark = check_remark(body.glue_remark)?;
    store_version(&state, &principal, id, &source, &remark, "glue.save").await
}

/// The remark of a restore: `restored from version 7 (<its remark>)`, the old remark shortened
/// so that the whole fits [`GLUE_REMARK_MAX`].
fn restore_remark(version_id: i32, original: &str) -> String {
    let head = format!("restored from version {version_id} (");
    let room = GLUE_REMARK_MAX.saturating_sub(head.chars().count() + 1);
    let original = if original.chars().count() > room {
        let mut cut: String = original.chars().take(room.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        original.to_string()
    };
    format!("{head}{original})")
}

/// `POST /jobs/{id}/glue/{versionId}/restore`: that version's source as a new save.
#[utoipa::path(
    post,
    path = "/jobs/{id}/glue/{version}/restore",
    tag = "glue",
    summary = "Save an old version's source as the current one",
    params(("id" = i32, Path, description = "The job's id"), ("version" = i32, Path, description = "The saved version's id")),
    responses(
        (status = 200, description = "The source and versions", body = GlueView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn restore(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(i32, i32)>,
) -> ApiResult<HttpResponse> {
    let (id, version_id) = path.into_inner();
    load_script_job(&state, &principal, id).await?;
    let v = load_version(&state, id, version_id).await?;
    let remark = restore_remark(version_id, &v.glue_remark);
    store_version(
        &state,
        &principal,
        id,
        &v.glue_source,
        &remark,
        "glue.restore",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_remarks_fit_the_column() {
        assert_eq!(
            restore_remark(7, "first"),
            "restored from version 7 (first)"
        );
        let long = restore_remark(123_456, &"é".repeat(GLUE_REMARK_MAX));
        assert_eq!(long.chars().count(), GLUE_REMARK_MAX);
        assert!(long.ends_with("é…)"), "{long}");
    }

    #[test]
    fn remarks_are_required_and_bounded() {
        assert_eq!(check_remark(Some("  fix  ".into())).unwrap(), "fix");
        assert!(check_remark(None).is_err());
        assert!(check_remark(Some("   ".into())).is_err());
        assert!(check_remark(Some("x".repeat(GLUE_REMARK_MAX))).is_ok());
        assert!(check_remark(Some("x".repeat(GLUE_REMARK_MAX + 1))).is_err());
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A typed remark is stored trimmed within the column, or refused naming the field;
        /// the remark of a restore fits the column whatever the old one was.
        #[test]
        fn remarks_fit_the_column_or_are_refused(
            remark in prop::option::of("[ ]{0,2}.{0,140}[ ]{0,2}"),
            version in any::<i32>(),
            original in ".{0,200}",
        ) {
            match check_remark(remark.clone()) {
                Ok(kept) => {
                    prop_assert_eq!(kept.as_str(), remark.as_deref().unwrap_or_default().trim());
                    prop_assert!(!kept.is_empty() && kept.chars().count() <= GLUE_REMARK_MAX);
                }
                Err(ApiError::BadRequest { field, .. }) => {
                    prop_assert_eq!(field.as_deref(), Some("glueRemark"));
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
            let restored = restore_remark(version, &original);
            prop_assert!(restored.chars().count() <= GLUE_REMARK_MAX, "{restored}");
            let head = format!("restored from version {version} (");
            prop_assert!(restored.starts_with(&head));
        }
    }
}
