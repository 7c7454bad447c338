//! Fault hooks for tests, compiled only with the `fault-hooks` feature (the test suite turns it
//! on; release builds never have it): `POST /test-hooks/actors/{name}/fault` makes the next
//! unit of work of that admin actor panic, as a bug would, so tests can watch it restart.

use actix_web::middleware::from_fn;
use actix_web::{web, HttpResponse};

use super::api::auth::{require_login, Principal};
use super::api::error::{ApiError, ApiResult};
use super::AppState;

/// Mounts the hooks.
pub fn mount(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/test-hooks")
            .wrap(from_fn(require_login))
            .route("/actors/{name}/fault", web::post().to(inject_fault)),
    );
}

async fn inject_fault(
    state: web::Data<AppState>,
    principal: Principal,
    name: web::Path<String>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    match state.actors.arm_fault(&name) {
        true => {
            log::warn!("test hook: a fault is armed in actor {name}");
            Ok(HttpResponse::NoContent().finish())
        }
        false => Err(ApiError::not_found(format!("no actor named '{name}'"))),
    }
}
