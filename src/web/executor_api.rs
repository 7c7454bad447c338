//! The executor-facing API: `/api/registry`, `/api/registryRemove`, `/api/callback`, served at
//! the root and under `/xxl-job-admin` (the context path of 2.4–3.4.0 executors' configuration).
//!
//! As in XXL-JOB every answer is HTTP 200 with the `{code, msg}` envelope; errors are code 500.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::AppState;
use crate::actors::callback::ReportResults;
use crate::actors::registry::{Register, Unregister};
use crate::protocol::{
    decode_callbacks, AnyReturn, ReturnT, ACCESS_TOKEN_HEADER, APP_NAME_HEADER,
    MSG_ACCESS_TOKEN_WRONG, MSG_METHOD_NOT_SUPPORTED,
};

/// The registry body (2.4 `RegistryParam`, 3.5 `RegistryRequest`).
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RegistryBody {
    registry_group: Option<String>,
    registry_key: Option<String>,
    registry_value: Option<String>,
}

/// Mounts the three endpoints under `prefix` ("" or "/xxl-job-admin").
pub fn mount(cfg: &mut web::ServiceConfig, prefix: &str) {
    cfg.service(
        web::scope(&format!("{prefix}/api"))
            .route("/registry", web::route().to(registry))
            .route("/registryRemove", web::route().to(registry_remove))
            .route("/callback", web::route().to(callback)),
    );
}

fn answer(r: AnyReturn) -> HttpResponse {
    HttpResponse::Ok().json(r)
}

fn header(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Checks the method, body and token; `Err` carries the envelope to answer with.
async fn admit(state: &AppState, req: &HttpRequest, body: &[u8]) -> Result<(), AnyReturn> {
    if req.method() != Method::POST {
        return Err(ReturnT::fail(MSG_METHOD_NOT_SUPPORTED));
    }
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ReturnT::fail("invalid request, requestBody empty."));
    }
    let given = header(req, ACCESS_TOKEN_HEADER);
    let app = header(req, APP_NAME_HEADER);
    // a group's own token (XXL-JOB 3.5) is accepted beside the global one
    let group_token = match &app {
        Some(app) => state
            .store
            .get_group_by_app_name(app)
            .await
            .map_err(|e| ReturnT::fail(format!("database unavailable: {e}")))?
            .and_then(|g| g.access_token)
            .filter(|t| !t.is_empty()),
        None => None,
    };
    let global = state.access_token.as_deref();
    if global.is_none() && group_token.is_none() {
        return Ok(()); // no token configured: no check, as XXL-JOB up to 3.4
    }
    let ok = given.as_deref().is_some_and(|g| {
        global.is_some_and(|t| constant_time_eq(g, t))
            || group_token
                .as_deref()
                .is_some_and(|t| constant_time_eq(g, t))
    });
    if ok {
        Ok(())
    } else {
        log::warn!(
            "executor API call to {} refused: wrong access token (app {})",
            req.path(),
            app.as_deref().unwrap_or("-")
        );
        Err(ReturnT::fail(MSG_ACCESS_TOKEN_WRONG))
    }
}

/// Compares secrets without leaking where they differ through timing.
fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Parses and checks a registry body: every field must be non-blank.
fn registry_body(body: &[u8]) -> Result<(String, String, String), AnyReturn> {
    let parsed: RegistryBody = serde_json::from_slice(body).map_err(|e| {
        ReturnT::fail(format!(
            "invalid request, body is not a registry param: {e}"
        ))
    })?;
    let field = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    match (
        field(parsed.registry_group),
        field(parsed.registry_key),
        field(parsed.registry_value),
    ) {
        (Some(g), Some(k), Some(v)) => Ok((g, k, v)),
        _ => Err(ReturnT::fail("Illegal Argument.")),
    }
}

async fn registry(state: web::Data<AppState>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    if let Err(r) = admit(&state, &req, &body).await {
        return answer(r);
    }
    let (group, app_name, address) = match registry_body(&body) {
        Ok(v) => v,
        Err(r) => return answer(r),
    };
    let protocol = if header(&req, APP_NAME_HEADER).is_some() {
        "v3.5"
    } else {
        "v2"
    };
    let msg = Register {
        group,
        app_name,
        address,
        protocol: protocol.to_string(),
    };
    match state.registry.send(msg).await {
        Ok(Ok(())) => answer(ReturnT::success()),
        Ok(Err(e)) => answer(ReturnT::fail(e)),
        Err(e) => answer(ReturnT::fail(format!("registry unavailable: {e}"))),
    }
}

async fn registry_remove(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    if let Err(r) = admit(&state, &req, &body).await {
        return answer(r);
    }
    let (group, app_name, address) = match registry_body(&body) {
        Ok(v) => v,
        Err(r) => return answer(r),
    };
    match state
        .registry
        .send(Unregister {
            group,
            app_name,
            address,
        })
        .await
    {
        Ok(Ok(())) => answer(ReturnT::success()),
        Ok(Err(e)) => answer(ReturnT::fail(e)),
        Err(e) => answer(ReturnT::fail(format!("registry unavailable: {e}"))),
    }
}

async fn callback(state: web::Data<AppState>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    if let Err(r) = admit(&state, &req, &body).await {
        return answer(r);
    }
    let items = match decode_callbacks(&body) {
        Ok(items) => items,
        Err(e) => {
            return answer(ReturnT::fail(format!(
                "invalid request, bad callback body: {e}"
            )))
        }
    };
    // answered after the results are stored, so an executor keeps (and retries) what failed
    match state.callbacks.send(ReportResults(items)).await {
        Ok(Ok(_)) => answer(ReturnT::success()),
        Ok(Err(e)) => {
            log::error!("callback not stored (the executor will retry): {e}");
            answer(ReturnT::fail(e))
        }
        Err(e) => answer(ReturnT::fail(format!("callback handler unavailable: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "abcd"));
    }

    #[test]
    fn registry_bodies_need_every_field() {
        let ok =
            br#"{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://h:1/"}"#;
        assert_eq!(
            registry_body(ok).unwrap(),
            ("EXECUTOR".into(), "app".into(), "http://h:1/".into())
        );
        let blank =
            br#"{"registryGroup":"EXECUTOR","registryKey":" ","registryValue":"http://h:1/"}"#;
        assert_eq!(
            registry_body(blank).unwrap_err().msg.as_deref(),
            Some("Illegal Argument.")
        );
        assert!(registry_body(b"not json").is_err());
    }
}
