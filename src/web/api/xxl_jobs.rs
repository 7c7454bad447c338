//! XXL-JOB 3.5's job API (`POST /api/addJob|updateJob|removeJob|startJob|stopJob|triggerJob`,
//! also under `/xxl-job-admin/api/`), for tools written against XXL-JOB.
//!
//! Each call is translated into the REST v1 call that does the same, so validation,
//! permissions and logging are the same code. Unlike XXL-JOB, which lets any executor's token
//! manage every group's jobs, a call here must carry an API token (in `XXL-JOB-ACCESS-TOKEN`,
//! or `Authorization: Bearer`) and may touch only the groups of the token's user. Answers are
//! XXL-JOB's envelope `{code, msg, data}` (and `content`, which older clients read).

use actix_web::body::to_bytes;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::auth::{token_hash, Principal};
use super::error::ApiError;
use super::input::{parse_value, Json};
use super::jobs;
use crate::clock::now_ms;
use crate::web::body_limit::{LimitedBody, WIRE_BODY_LIMIT};
use crate::web::AppState;

/// Mounts the six calls inside the executor API's `/api` scope (which owns that prefix).
pub(crate) fn routes(cfg: &mut web::ServiceConfig) {
    for op in [
        "addJob",
        "updateJob",
        "removeJob",
        "startJob",
        "stopJob",
        "triggerJob",
    ] {
        cfg.route(&format!("/{op}"), web::post().to(call));
    }
}

/// XXL-JOB's answer: `{code, msg, data}`, the payload also under `content`.
fn envelope(code: u16, msg: &str, data: Option<Value>) -> HttpResponse {
    let mut body = Map::new();
    body.insert("code".into(), json!(code));
    body.insert("msg".into(), json!(msg));
    if let Some(data) = data {
        body.insert("content".into(), data.clone());
        body.insert("data".into(), data);
    }
    HttpResponse::Ok().json(Value::Object(body))
}

/// The user of the API token the call carries.
async fn principal(state: &AppState, req: &HttpRequest) -> Result<Principal, ApiError> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let token = header("XXL-JOB-ACCESS-TOKEN").or_else(|| {
        header("Authorization").and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        })
    });
    let Some(token) = token else {
        return Err(ApiError::Unauthorized(
            "an API token is required (XXL-JOB-ACCESS-TOKEN: <token>)".into(),
        ));
    };
    let refused = || ApiError::Unauthorized("the API token is not valid".into());
    let api_token = state
        .store
        .use_api_token(&token_hash(&token), now_ms())
        .await?
        .ok_or_else(refused)?;
    let user = state
        .store
        .get_user(api_token.user_id)
        .await?
        .ok_or_else(refused)?;
    Ok(Principal {
        user,
        session: None,
    })
}

/// The fields of an XXL-JOB job request, renamed where ours differ.
fn job_body(mut v: Map<String, Value>) -> Map<String, Value> {
    if let Some(name) = v.remove("name") {
        v.entry("jobDesc").or_insert(name);
    }
    // XXL-JOB 3.5 sets no child jobs through this API
    v.remove("childJobId");
    v.remove("id");
    v
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Operate {
    id: Option<i32>,
    executor_param: Option<String>,
    /// Comma-separated, as XXL-JOB sends it.
    address_list: Option<String>,
}

fn required_id(op: &Operate) -> Result<i32, ApiError> {
    op.id.ok_or_else(|| ApiError::field("id", "id is required"))
}

/// Runs the REST call behind one operation.
async fn dispatch(
    state: web::Data<AppState>,
    principal: Principal,
    op: &str,
    body: Map<String, Value>,
) -> Result<HttpResponse, ApiError> {
    // through the REST API's reader, so a NUL the database cannot store is refused here too
    let parse = |v: Value| -> Result<Operate, ApiError> { parse_value(v) };
    let as_job = |map: Map<String, Value>| -> Result<Json<jobs::JobBody>, ApiError> {
        parse_value(Value::Object(job_body(map))).map(Json)
    };
    match op {
        "addJob" => jobs::create(state, principal, as_job(body)?).await,
        "updateJob" => {
            let id = required_id(&parse(Value::Object(body.clone()))?)?;
            let mut fields = body;
            fields.remove("jobGroup");
            jobs::update(state, principal, web::Path::from(id), as_job(fields)?).await
        }
        "removeJob" | "startJob" | "stopJob" => {
            let id = web::Path::from(required_id(&parse(Value::Object(body))?)?);
            match op {
                "removeJob" => jobs::delete(state, principal, id).await,
                "startJob" => jobs::start(state, principal, id).await,
                _ => jobs::stop(state, principal, id).await,
            }
        }
        _ => {
            let op = parse(Value::Object(body))?;
            let id = required_id(&op)?;
            let addresses: Option<Vec<String>> = op.address_list.map(|list| {
                list.split(',')
                    .map(|a| a.trim().to_string())
                    .filter(|a| !a.is_empty())
                    .collect()
            });
            let body = jobs::TriggerBody {
                executor_param: op.executor_param,
                address_list: addresses,
            };
            jobs::trigger_job(state, principal, id, body).await
        }
    }
}

/// One XXL-JOB job call: authenticated by an API token, answered in XXL-JOB's envelope.
async fn call(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: LimitedBody<WIRE_BODY_LIMIT>,
) -> HttpResponse {
    let body = body.0;
    let op = req
        .path()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let principal = match principal(&state, &req).await {
        Ok(p) => p,
        Err(e) => return envelope(e.status_code().as_u16(), &e.to_string(), None),
    };
    let body: Map<String, Value> = if body.iter().all(u8::is_ascii_whitespace) {
        return envelope(500, "invalid request, requestBody empty.", None);
    } else {
        match serde_json::from_slice(&body) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return envelope(500, "invalid request, the body is not a JSON object.", None),
            Err(e) => {
                let msg = format!("invalid request, the body is not a JSON object: {e}");
                return envelope(500, &msg, None);
            }
        }
    };
    let user = principal.user.username.clone();
    match dispatch(state, principal, &op, body).await {
        Ok(res) => {
            let status = res.status();
            let bytes = to_bytes(res.into_body()).await.unwrap_or_default();
            let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let data = match op.as_str() {
                // XXL-JOB answers the new id as a string
                "addJob" => answer.get("id").map(|id| json!(id.to_string())),
                "triggerJob" => Some(answer),
                _ => None,
            };
            log::info!("XXL-JOB API {op} by '{user}': HTTP {}", status.as_u16());
            envelope(StatusCode::OK.as_u16(), "Success", data)
        }
        Err(e) => {
            let message = match &e {
                ApiError::BadRequest {
                    message,
                    field: Some(field),
                } => format!("{field}: {message}"),
                ApiError::Internal(detail) => {
                    log::error!("XXL-JOB API {op} failed: {detail}");
                    "internal error; see the admin's log".into()
                }
                other => other.to_string(),
            };
            envelope(500, &message, None)
        }
    }
}
