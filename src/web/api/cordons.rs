//! `/api/v1/registry/cordons`: executors drained by an administrator. A cordoned executor gets no
//! new runs from any admin of the database (every routing strategy, failover and retry leaves it
//! out); the runs it has finish. Admins only: one address may serve several groups.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::audit::{self, Change};
use super::auth::Principal;
use super::check_executor_address;
use super::error::{answers, ApiError, ApiResult};
use super::input::Json;
use crate::clock::now_ms;
use crate::model::{address_key, ExecutorCordon, SUSPECT_REASON_MAX};
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/registry/cordons", web::get().to(cordons))
        .route("/registry/cordons", web::post().to(cordon))
        .route("/registry/cordons", web::delete().to(uncordon));
}

/// An executor address that gets no new runs.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Cordon {
    address: String,
    /// Since when, epoch ms.
    since: i64,
    /// Why, as given.
    reason: String,
    /// The administrator who cordoned it.
    by_user: String,
}

impl From<ExecutorCordon> for Cordon {
    fn from(c: ExecutorCordon) -> Self {
        Cordon {
            address: c.address,
            since: c.since,
            reason: c.reason,
            by_user: c.by_user,
        }
    }
}

/// What to cordon.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CordonBody {
    /// The executor's address (`http://10.0.0.5:9999/`), as registered or listed.
    address: String,
    /// Why, for the other operators (up to 512 characters).
    #[serde(default)]
    reason: String,
}

/// Which cordon to lift.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct AddressQuery {
    /// The cordoned address (its case and trailing slash do not matter).
    address: String,
}

#[utoipa::path(
    get,
    path = "/registry/cordons",
    tag = "registry",
    summary = "Executors cordoned for a drain (admins only)",
    responses((status = 200, description = "The cordons, oldest first", body = Vec<Cordon>), answers::Forbidden)
)]
async fn cordons(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let cordons: Vec<Cordon> = state
        .store
        .list_cordons()
        .await?
        .into_iter()
        .map(Cordon::from)
        .collect();
    Ok(HttpResponse::Ok().json(cordons))
}

#[utoipa::path(
    post,
    path = "/registry/cordons",
    tag = "registry",
    summary = "Cordon an executor: no new runs go to it, its running ones finish (admins only)",
    request_body = CordonBody,
    responses(
        (status = 201, description = "Cordoned", body = Cordon),
        (status = 200, description = "It already was: the first cordon stands", body = Cordon),
        answers::BadInput, answers::Forbidden
    )
)]
async fn cordon(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<CordonBody>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let body = body.into_inner();
    let address = body.address.trim().to_string();
    check_executor_address("address", &address)?;
    if body.reason.chars().count() > SUSPECT_REASON_MAX {
        return Err(ApiError::field(
            "reason",
            format!("reason must be at most {SUSPECT_REASON_MAX} characters"),
        ));
    }
    // one cordon per executor however its address is spelled
    let existing = find(&state, &address).await?;
    if let Some(found) = existing {
        return Ok(HttpResponse::Ok().json(Cordon::from(found)));
    }
    let cordon = ExecutorCordon {
        address,
        since: now_ms(),
        reason: body.reason.trim().to_string(),
        by_user: principal.user.username.clone(),
    };
    if !state.store.cordon_executor(&cordon).await? {
        // another admin cordoned it meanwhile: theirs stands
        let found = find(&state, &cordon.address).await?.unwrap_or(cordon);
        return Ok(HttpResponse::Ok().json(Cordon::from(found)));
    }
    log::info!(
        "executor {} cordoned by {}: {}",
        cordon.address,
        cordon.by_user,
        cordon.reason
    );
    record(&state, &principal, "executor.cordon", &cordon).await;
    Ok(HttpResponse::Created().json(Cordon::from(cordon)))
}

#[utoipa::path(
    delete,
    path = "/registry/cordons",
    tag = "registry",
    summary = "Lift an executor's cordon: it gets runs again (admins only)",
    params(AddressQuery),
    responses((status = 204, description = "Lifted"), answers::NotFound, answers::Forbidden)
)]
async fn uncordon(
    state: web::Data<AppState>,
    principal: Principal,
    query: web::Query<AddressQuery>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let Some(found) = find(&state, query.address.trim()).await? else {
        return Err(ApiError::not_found_field(
            "address",
            format!("{} is not cordoned", query.address.trim()),
        ));
    };
    if state.store.uncordon_executor(&found.address).await? {
        log::info!(
            "executor {} uncordoned by {}",
            found.address,
            principal.user.username
        );
        record(&state, &principal, "executor.uncordon", &found).await;
    }
    Ok(HttpResponse::NoContent().finish())
}

/// The cordon of `address`, however it was spelled when cordoned.
async fn find(state: &AppState, address: &str) -> ApiResult<Option<ExecutorCordon>> {
    Ok(state
        .store
        .cordons_by_address_key()
        .await?
        .remove(&address_key(address)))
}

async fn record(state: &AppState, principal: &Principal, action: &'static str, c: &ExecutorCordon) {
    let change = Change {
        action,
        target_type: "executor",
        target_id: 0,
        summary: format!("{} {}", c.address, c.reason).trim().to_string(),
        before: None,
        after: None,
    };
    audit::record(state, principal, change).await;
}
