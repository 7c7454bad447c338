//! For administrators: `GET /api/v1/system/access-token`, the token executors need (it is
//! printed only once, on the admin's first start), and `GET /api/v1/system/actors`, the admin
//! actors' lives (state, restarts, last error, mailbox backlog).

use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Principal;
use super::error::answers;
use super::error::ApiResult;
use crate::actors::supervision::ActorReport;
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/system/access-token", web::get().to(access_token))
        .route("/system/actors", web::get().to(actors));
}

#[derive(Debug, Serialize, ToSchema)]
struct Actors {
    /// Every admin actor, by name.
    items: Vec<ActorReport>,
}

#[utoipa::path(
    get,
    path = "/system/actors",
    tag = "system",
    summary = "The admin's actors: state, restarts, last error, mailbox backlog (administrators)",
    responses(
        (status = 200, description = "Every actor of this admin", body = Actors),
        answers::Forbidden
    )
)]
async fn actors(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let items = state.actors.report().await;
    Ok(HttpResponse::Ok().json(Actors { items }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AccessToken<'a> {
    access_token: &'a str,
}

#[utoipa::path(
    get,
    path = "/system/access-token",
    tag = "system",
    summary = "The executors' access token (administrators)",
    responses(
        (status = 200, description = "The token", body = AccessToken),
        answers::Forbidden
    )
)]
async fn access_token(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    log::info!(
        "user '{}' read the executors' access token",
        principal.user.username
    );
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(AccessToken {
            access_token: &state.access_token,
        }))
}
