//! `GET /api/v1/registry`: the executors online now (a beat within the last 90 s).

use std::collections::HashSet;

use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Principal;
use super::error::ApiResult;
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::protocol::REGISTRY_GROUP_EXECUTOR;
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/registry", web::get().to(list));
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Online {
    app_name: String,
    address: String,
    protocol: String,
    update_time: i64,
}

/// Admins see every executor; a normal user those of the groups they may use.
#[utoipa::path(
    get,
    path = "/registry",
    tag = "registry",
    summary = "Executors online (those of the permitted groups for a normal user)",
    responses(
        (status = 200, description = "The executors", body = Vec<Online>)
    )
)]
async fn list(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    let live = state
        .store
        .find_live_registry(now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    let visible_apps: Option<HashSet<String>> = match principal.group_scope() {
        None => None,
        Some(_) => Some(
            state
                .store
                .list_groups()
                .await?
                .into_iter()
                .filter(|g| principal.can_access(g.id))
                .map(|g| g.app_name)
                .collect(),
        ),
    };
    let online: Vec<Online> = live
        .into_iter()
        .filter(|r| r.registry_group == REGISTRY_GROUP_EXECUTOR)
        .filter(|r| {
            visible_apps
                .as_ref()
                .is_none_or(|apps| apps.contains(&r.registry_key))
        })
        .map(|r| Online {
            app_name: r.registry_key,
            address: r.registry_value,
            protocol: r.protocol,
            update_time: r.update_time,
        })
        .collect();
    Ok(HttpResponse::Ok().json(online))
}
