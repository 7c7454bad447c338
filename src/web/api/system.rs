//! `GET /api/v1/system/access-token`: the token executors need, for administrators (it is
//! printed only once, on the admin's first start).

use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Principal;
use super::error::answers;
use super::error::ApiResult;
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/system/access-token", web::get().to(access_token));
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
