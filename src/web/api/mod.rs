//! REST API v1: JSON under `/api/v1`, session-cookie or bearer-token auth.
//!
//! Times are epoch milliseconds; field names follow XXL-JOB (camelCase). Errors answer
//! `{"error": "...", "field": "..."}` with 400 (bad input; `field` names it), 401 (no valid
//! session or token), 403 (not permitted), 404 (no such group/job/log), 409 (conflict),
//! 413 (body too large), 502 (executor unreachable) or 500 (logged, details not shown).
//!
//! | endpoint | what |
//! |---|---|
//! | `POST /auth/login {username,password}` | `{id,username,role,permission}` + HttpOnly cookie `jobwheel_session` (7 days) |
//! | `POST /auth/logout`, `GET /auth/me` | end the session; who am I |
//! | `POST /auth/password {currentPassword, newPassword}` | change one's own password; ends one's other sessions |
//! | `GET /reports/daily?from&to` | runs per day (`YYYY-MM-DD`, admin's zone; default the last 7 days) |
//! | `GET/POST /groups`, `GET/PUT/DELETE /groups/{id}` | executor groups (writes: admins only) |
//! | `GET/POST /jobs`, `GET/PUT/DELETE /jobs/{id}` | jobs; list filters `jobGroup, triggerStatus, jobDesc, executorHandler, author, offset, limit` |
//! | `POST /jobs/{id}/start`, `/stop`, `/trigger {executorParam?, addressList?}` | schedule on/off; one manual run → `{logIds, triggerCodes}` |
//! | `GET /jobs/{id}/next-fire-times?count=5` | `{fireTimes}` (1–100) |
//! | `GET/PUT /jobs/{id}/glue`, `GET /jobs/{id}/glue/{versionId}`, `POST …/{versionId}/restore` | a script job's source `{current, versions}` (newest 30); save `{glueSource, glueRemark}` |
//! | `POST /schedule/preview {scheduleType, scheduleConf, timezone?, count?, from?}` | `{fireTimes}` |
//! | `GET /logs` (`jobGroup, jobId, status, from, to, offset, limit`), `GET /logs/{id}` | run records |
//! | `GET /logs/{id}/content?fromLine=1` | the executor's log lines (proxied `/log`) |
//! | `POST /logs/{id}/kill` | stop a running run (executor `/kill`), recorded as failed |
//! | `DELETE /logs?jobGroup&jobId&olderThanDays\|keepLast` | `{deleted}` |
//! | `GET /registry` | executors online: `[{appName, address, protocol, updateTime, load, labels, cordonedSince}]` |
//! | `GET/POST /registry/cordons`, `DELETE /registry/cordons?address=` | drains: cordoned executors get no new runs (admins only) |
//! | `GET /system/access-token` | the executors' access token (admins only) |
//! | `GET/POST /users`, `GET/PUT/DELETE /users/{id}`, `POST /users/{id}/password` | console users (admins only) |
//! | `GET/POST /tokens`, `DELETE /tokens/{id}` | API tokens; the secret is in the create answer only |
//! | `GET /audit?username&targetType&targetId&action&from&to` | who changed what, with before/after (admins only) |
//! | `GET/POST /workflows`, `GET/PUT/DELETE /workflows/{id}`, `POST /workflows/validate` | workflows (DAGs of a group's jobs); validate answers `{valid, layers, errors}` |
//! | `POST /workflows/{id}/start`, `/stop`, `/trigger {params?}`, `GET /workflows/{id}/graph.svg` | schedule on/off; one run now → `{runId, state, message}`; the graph |
//! | `GET /workflow-runs?workflowId`, `GET /workflow-runs/{id}` (`/graph.svg`) | runs; one with its context and nodes |
//! | `POST /workflow-runs/{id}/cancel`, `/retry`, `/pause`, `/resume`, `/nodes/{key}/mark-success` | what users do to a run |
//! | `GET /openapi.json` | this API as an OpenAPI 3.1 document, generated from the handlers ([`openapi`]) |
//!
//! Normal users (role USER) see and change only jobs, logs and executors of the groups in their
//! `permission` list; admins everything.

use std::time::Duration;

use actix_web::error::JsonPayloadError;
use actix_web::middleware::from_fn;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;

use crate::actors::trigger::TriggerEnv;
use crate::executor_calls::ExecutorCalls;
use crate::model::{JobGroup, JobInfo};
use crate::store::ActorStore;
use crate::web::AppState;

pub(crate) mod audit;
pub mod auth;
mod checks;
mod cordons;
pub mod error;
mod error_language;
mod glue;
mod groups;
pub mod input;
mod jobs;
pub(crate) mod logs;
pub mod openapi;
mod registry;
pub(crate) mod reports;
mod schedule;
mod system;
mod tokens;
pub(crate) mod users;
pub(crate) mod workflows;
pub(crate) mod xxl_jobs;

use self::auth::Principal;
use self::error::{ApiError, ApiResult};

/// Most items one list call returns.
pub const MAX_LIMIT: i64 = 1000;
/// Items a list call returns when `limit` is not given.
pub const DEFAULT_LIMIT: i64 = 20;
/// Largest JSON body the API reads; a larger one answers 413.
pub const JSON_LIMIT: usize = 2 * 1024 * 1024;

/// The admin→executor client of this worker thread (awc clients are not `Send`).
pub struct ApiExecutorCalls(pub ExecutorCalls);

/// Mounts `/api/v1`. Called once per worker thread, which gets its own executor client.
pub fn mount(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            .wrap(from_fn(input::check_query))
            .wrap(from_fn(crate::web::origin::same_origin_writes))
            .wrap(from_fn(crate::web::body_deadline::body_deadline))
            .wrap(from_fn(error_language::errors_in_reader_language))
            .app_data(
                web::JsonConfig::default()
                    .limit(JSON_LIMIT)
                    .error_handler(|e, _| json_error(e).into()),
            )
            .app_data(
                web::QueryConfig::default().error_handler(|e, _| {
                    ApiError::bad_request(format!("invalid query: {e}")).into()
                }),
            )
            .app_data(
                web::PathConfig::default().error_handler(|e, _| {
                    ApiError::bad_request(format!("invalid path: {e}")).into()
                }),
            )
            .app_data(web::Data::new(ApiExecutorCalls(ExecutorCalls::new(
                Duration::from_secs(10),
            ))))
            .route("/auth/login", web::post().to(auth::login))
            .route("/auth/logout", web::post().to(auth::logout))
            .service(
                web::scope("")
                    .wrap(from_fn(auth::require_login))
                    .route("/auth/me", web::get().to(auth::me))
                    .route("/auth/password", web::post().to(auth::change_password))
                    .route("/openapi.json", web::get().to(openapi::document))
                    .configure(glue::routes)
                    .configure(audit::routes)
                    .configure(groups::routes)
                    .configure(jobs::routes)
                    .configure(logs::routes)
                    .configure(registry::routes)
                    .configure(cordons::routes)
                    .configure(reports::routes)
                    .configure(schedule::routes)
                    .configure(system::routes)
                    .configure(tokens::routes)
                    .configure(users::routes)
                    .configure(workflows::routes)
                    .default_service(web::to(not_found)),
            ),
    );
}

/// A body that is too large answers 413; any other unreadable body 400 with serde's message.
fn json_error(e: JsonPayloadError) -> ApiError {
    match e {
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            ApiError::PayloadTooLarge(format!("{e}"))
        }
        other => ApiError::bad_request(format!("invalid JSON body: {other}")),
    }
}

async fn not_found(req: HttpRequest) -> ApiResult<HttpResponse> {
    Err(ApiError::not_found(format!(
        "no such endpoint: {} {}",
        req.method(),
        req.path()
    )))
}

/// `(offset, limit)` of a list call, validated: offset ≥ 0 (default 0), 1 ≤ limit ≤ 1000
/// (default 20).
fn paging(offset: Option<i64>, limit: Option<i64>) -> ApiResult<(i64, i64)> {
    let offset = offset.unwrap_or(0);
    if offset < 0 {
        return Err(ApiError::field("offset", "offset must be 0 or more"));
    }
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::field(
            "limit",
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    Ok((offset, limit))
}

/// One page of a list.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct Page<T> {
    total: i64,
    items: Vec<T>,
}

/// The group with this id, or 404 (`field` names the input that referred to it).
async fn load_group(state: &AppState, id: i32, field: Option<&'static str>) -> ApiResult<JobGroup> {
    match state.store.get_group(id).await? {
        Some(g) => Ok(g),
        None => Err(ApiError::NotFound {
            message: format!("executor group {id} does not exist"),
            field,
        }),
    }
}

/// The job with this id if the caller may see it: 404 when missing, 403 when not permitted.
pub(crate) async fn load_job(
    state: &AppState,
    principal: &Principal,
    id: i32,
) -> ApiResult<JobInfo> {
    let job = state
        .store
        .get_job(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("job {id} does not exist")))?;
    principal.require_group(job.job_group)?;
    Ok(job)
}

/// What result completion needs (kill uses the callback path).
fn trigger_env(state: &AppState) -> TriggerEnv {
    TriggerEnv {
        store: ActorStore::new(state.store.clone()),
        access_token: state.access_token.clone(),
        default_tz: state.settings.timezone,
        admin_address: String::new(),
        metrics: state.metrics.clone(),
        lease: Default::default(),
        workflows: state.workflow_link.clone(),
        faults: Default::default(),
        suspects: Default::default(),
        node_id: Default::default(),
        routing: Default::default(),
    }
}

/// Checks an executor address typed by a user: an http(s) URL a run record can hold.
fn check_executor_address(field: &'static str, address: &str) -> ApiResult<()> {
    match crate::model::executor_address_problem(address) {
        Some(why) => Err(ApiError::field(field, why)),
        None => Ok(()),
    }
}

/// Checks a URL typed by a user: an absolute http(s) URL with a host.
fn check_address(field: &'static str, address: &str) -> ApiResult<()> {
    let lower = address.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(ApiError::field(
            field,
            format!("address '{address}' must start with http:// or https://"),
        ));
    }
    match url::Url::parse(address) {
        Ok(u) if u.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        _ => Err(ApiError::field(
            field,
            format!("address '{address}' is not a valid URL"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_defaults_and_bounds() {
        assert_eq!(paging(None, None).unwrap(), (0, 20));
        assert_eq!(paging(Some(5), Some(1000)).unwrap(), (5, 1000));
        assert!(paging(Some(-1), None).is_err());
        assert!(paging(None, Some(0)).is_err());
        assert!(paging(None, Some(1001)).is_err());
    }

    #[test]
    fn oversized_bodies_are_413() {
        use actix_web::ResponseError;
        let e = json_error(JsonPayloadError::OverflowKnownLength {
            length: 3_000_000,
            limit: JSON_LIMIT,
        });
        assert_eq!(e.status_code().as_u16(), 413);
        let e = json_error(JsonPayloadError::ContentType);
        assert_eq!(e.status_code().as_u16(), 400);
    }

    #[test]
    fn addresses_need_http_urls() {
        assert!(check_address("addressList", "http://10.0.0.1:9999/").is_ok());
        assert!(check_address("addressList", "https://h").is_ok());
        assert!(check_address("addressList", "10.0.0.1:9999").is_err());
        assert!(check_address("addressList", "http://").is_err());
    }
}
