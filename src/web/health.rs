//! `GET /healthz`: ready when the database answers.

use std::time::Duration;

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::AppState;

/// A database slower than this counts as down: a load balancer should not wait on it.
const PING_TIMEOUT: Duration = Duration::from_secs(2);

/// 200 when the database answers, 503 with the reason otherwise.
pub async fn healthz(state: web::Data<AppState>) -> HttpResponse {
    let started = std::time::Instant::now();
    match tokio::time::timeout(PING_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => HttpResponse::Ok().json(json!({"status": "UP", "database": "UP"})),
        Ok(Err(e)) => {
            // the outage itself is logged once, when the store first sees it
            log::debug!("health check: database unavailable: {e}");
            HttpResponse::ServiceUnavailable()
                .json(json!({"status": "DOWN", "database": "DOWN", "error": e.to_string()}))
        }
        Err(_) => {
            let why = format!(
                "database did not answer within {} s",
                PING_TIMEOUT.as_secs()
            );
            state.store.availability().timed_out(&why, started);
            HttpResponse::ServiceUnavailable().json(json!({
                "status": "DOWN",
                "database": "DOWN",
                "error": why,
            }))
        }
    }
}
