//! `GET /metrics`: the admin's metrics in the Prometheus text format, for administrators.
//!
//! Like the REST API it needs a login: an administrator's API token (`Authorization: Bearer`,
//! what Prometheus's `authorization` setting sends) or session. The series carry no job ids;
//! the registered executors are labelled with their app names, which only administrators see
//! in full elsewhere too.

use actix_web::{web, HttpRequest, HttpResponse};

use super::api::auth::authenticate;
use super::api::error::{ApiError, ApiResult};
use super::AppState;
use crate::actors::dispatch::GetDispatchStats;
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::metrics::{AdminSample, CONTENT_TYPE};

/// The metrics, with the gauges read now.
pub async fn metrics(state: web::Data<AppState>, req: HttpRequest) -> ApiResult<HttpResponse> {
    match authenticate(&state, &req).await? {
        Some(principal) => principal.require_admin()?,
        None => {
            return Err(ApiError::Unauthorized(
                "metrics need an administrator's API token: Authorization: Bearer <token>".into(),
            ))
        }
    }
    state.metrics.set_sample(&sample(&state).await?);
    let open = state.store.count_open_runs().await?;
    state.metrics.workflow().set_open_runs(&open);
    Ok(HttpResponse::Ok()
        .content_type(CONTENT_TYPE)
        .body(state.metrics.render()))
}

/// Reads the dispatch pools, the database pool and the live registrations.
async fn sample(state: &AppState) -> ApiResult<AdminSample> {
    let mut sample = AdminSample::default();
    if let Ok(stats) = state.dispatcher.send(GetDispatchStats).await {
        sample.in_flight = stats.in_flight_by_pool;
    }
    let (in_use, idle) = state.store.pool_usage();
    (sample.db_in_use, sample.db_idle) = (in_use, idle);
    for r in state
        .store
        .find_live_registry(now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?
    {
        if r.registry_group == "EXECUTOR" {
            *sample.executors.entry(r.registry_key).or_default() += 1;
        }
    }
    Ok(sample)
}
