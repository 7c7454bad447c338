//! The executor's HTTP endpoints. Every answer is HTTP 200 with the JSON envelope, checks in Java's order:
//! method, token, app name, path, body.

use std::sync::Arc;

use actix::Addr;
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use serde::Serialize;

use super::run_log::RunLogs;
use crate::actors::job_table::{IdleBeat, JobTable, Kill, RunTrigger, WasAccepted};
use crate::metrics::{ExecutorMetrics, RefusalReason};
use crate::protocol::{
    check_trigger, constant_time_eq, decode, request_error, uri_not_found, AnyReturn,
    DropLogsParam, IdleBeatParam, Keyed, KillParam, LogParam, LogResult, PayloadKey, ReturnT,
    TriggerParam, ACCESS_TOKEN_HEADER, APP_NAME_HEADER, BODY_TIMEOUT, DROP_LOGS_MAX_RUNS,
    MSG_ACCESS_TOKEN_WRONG, MSG_JOB_ALREADY_KILLED, MSG_JOB_BUSY, MSG_LOG_FILE_NOT_EXISTS,
    MSG_METHOD_NOT_SUPPORTED, MSG_RUN_ACCEPTED_NO_LOG, SUCCESS_CODE,
};

/// Largest request body, as the Java executor's aggregator allows.
pub const MAX_BODY: usize = 5 * 1024 * 1024;
/// Answer when `XXL-JOB-APPNAME` names another executor (XXL-JOB 3.5's wording).
pub const MSG_APP_NAME_INVALID: &str = "invalid request, accessToken or appname invalid.";

/// What the endpoints need; cloned into every route closure.
#[derive(Clone)]
pub(crate) struct ServiceState {
    pub(crate) app_name: Arc<str>,
    /// `None` only for an executor built insecure.
    pub(crate) access_token: Option<Arc<str>>,
    pub(crate) logs: Arc<RunLogs>,
    pub(crate) jobs: Addr<JobTable>,
    /// Counted here: triggers refused before they reach the job table.
    pub(crate) metrics: ExecutorMetrics,
    /// Where result batches no admin accepted wait (`{log-path}/callbacklogs`).
    pub(crate) callback_dir: Arc<std::path::Path>,
}

/// The endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Beat,
    IdleBeat,
    Run,
    Kill,
    Log,
    /// jobwheel's extension: drop the logs of runs the admin's retention removed.
    DropLogs,
}

const ROUTES: &[(&str, Endpoint)] = &[
    ("/beat", Endpoint::Beat),
    ("/idleBeat", Endpoint::IdleBeat),
    ("/run", Endpoint::Run),
    ("/trigger", Endpoint::Run),
    ("/kill", Endpoint::Kill),
    ("/log", Endpoint::Log),
    ("/dropLogs", Endpoint::DropLogs),
];

fn answer<T: Serialize>(ret: &ReturnT<T>) -> HttpResponse {
    answer_keyed(ret, PayloadKey::Both)
}

fn answer_keyed<T: Serialize>(ret: &ReturnT<T>, key: PayloadKey) -> HttpResponse {
    let body = serde_json::to_string(&Keyed { ret, key })
        .unwrap_or_else(|e| format!(r#"{{"code":500,"msg":"cannot encode answer: {e}"}}"#));
    HttpResponse::Ok()
        .content_type("application/json;charset=UTF-8")
        .body(body)
}

fn fail(msg: impl Into<String>) -> HttpResponse {
    answer(&AnyReturn::fail(msg))
}

/// Whether a scrape of `/metrics` may read them: the executor's token, sent as
/// `XXL-JOB-ACCESS-TOKEN` or as `Authorization: Bearer` (what Prometheus sends), unless the
/// executor runs without one.
pub(crate) fn may_scrape(req: &HttpRequest, state: &ServiceState) -> bool {
    let Some(token) = &state.access_token else {
        return true;
    };
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let bearer = header(actix_web::http::header::AUTHORIZATION.as_str()).and_then(|v| {
        let (scheme, sent) = v.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| sent.trim())
    });
    [header(ACCESS_TOKEN_HEADER), bearer]
        .into_iter()
        .flatten()
        .any(|sent| constant_time_eq(sent, token))
}

/// Method, token and app-name checks shared by every path, known or not.
fn check(req: &HttpRequest, state: &ServiceState) -> Result<(), &'static str> {
    if req.method() != Method::POST {
        return Err(MSG_METHOD_NOT_SUPPORTED);
    }
    if let Some(token) = &state.access_token {
        let sent = req
            .headers()
            .get(ACCESS_TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !constant_time_eq(sent, token) {
            return Err(MSG_ACCESS_TOKEN_WRONG);
        }
    }
    if let Some(app) = req.headers().get(APP_NAME_HEADER) {
        if app.to_str().ok() != Some(state.app_name.as_ref()) {
            return Err(MSG_APP_NAME_INVALID);
        }
    }
    Ok(())
}

/// Past this much, an oversized body is no longer drained and the connection is dropped instead.
const MAX_DRAIN: usize = 8 * MAX_BODY;

async fn read_body(payload: web::Payload) -> Result<web::BytesMut, String> {
    match tokio::time::timeout(BODY_TIMEOUT, read_body_whole(payload)).await {
        Ok(read) => read,
        Err(_) => Err(format!(
            "request body not received within {} s",
            BODY_TIMEOUT.as_secs()
        )),
    }
}

async fn read_body_whole(mut payload: web::Payload) -> Result<web::BytesMut, String> {
    let mut body = web::BytesMut::new();
    let mut seen = 0usize;
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        seen += chunk.len();
        if seen > MAX_BODY {
            // keep reading (without storing) so the client gets the envelope rather than a reset
            if seen > MAX_DRAIN {
                break;
            }
            continue;
        }
        body.extend_from_slice(&chunk);
    }
    if seen > MAX_BODY {
        return Err(format!("request body larger than {MAX_BODY} bytes"));
    }
    Ok(body)
}

async fn handle(
    endpoint: Endpoint,
    req: HttpRequest,
    payload: web::Payload,
    state: ServiceState,
) -> HttpResponse {
    if let Err(msg) = check(&req, &state) {
        return fail(msg);
    }
    let body = match read_body(payload).await {
        Ok(b) => b,
        Err(e) => return fail(request_error(&e)),
    };
    match endpoint {
        // the body is ignored: 2.4 admins send `""`, 3.x none
        Endpoint::Beat => answer(&AnyReturn::success()),
        Endpoint::IdleBeat => {
            let p: IdleBeatParam = match decode(&body) {
                Ok(p) => p,
                Err(e) => return fail(request_error(&e.to_string())),
            };
            match state.jobs.send(IdleBeat { job_id: p.job_id }).await {
                Ok(true) => fail(MSG_JOB_BUSY),
                Ok(false) => answer(&AnyReturn::success()),
                Err(e) => fail(request_error(&format!("executor unavailable: {e}"))),
            }
        }
        Endpoint::Run => {
            let p: TriggerParam = match decode(&body) {
                Ok(p) => p,
                Err(e) => return fail(request_error(&e.to_string())),
            };
            if let Err(why) = check_trigger(&p) {
                log::info!("job {} log {}: trigger refused: {why}", p.job_id, p.log_id);
                state.metrics.trigger_refused(RefusalReason::InvalidTrigger);
                return fail(why);
            }
            match state.jobs.send(RunTrigger(p)).await {
                Ok(Ok(())) => answer(&AnyReturn::success()),
                Ok(Err(why)) => fail(why),
                Err(e) => fail(request_error(&format!("executor unavailable: {e}"))),
            }
        }
        Endpoint::Kill => {
            let p: KillParam = match decode(&body) {
                Ok(p) => p,
                Err(e) => return fail(request_error(&e.to_string())),
            };
            match state.jobs.send(Kill { job_id: p.job_id }).await {
                Ok(true) => answer(&AnyReturn::success()),
                Ok(false) => answer(&ReturnT::success_with(MSG_JOB_ALREADY_KILLED.to_string())),
                Err(e) => fail(request_error(&format!("executor unavailable: {e}"))),
            }
        }
        Endpoint::Log => {
            let p: LogParam = match decode(&body) {
                Ok(p) => p,
                Err(e) => return fail(request_error(&e.to_string())),
            };
            let logs = state.logs.clone();
            let (log_date_time, log_id, from) = (p.log_date_time, p.log_id, p.from_line_num);
            let read = web::block(move || logs.read(log_date_time, log_id, from)).await;
            // a page is written once only for a reader that says it reads `data` (the
            // `logDateTime` spelling: XXL-JOB 3.5 and jobwheel); any other gets it under both
            // keys, as its version cannot be told from the request (a 3.4 admin reads `data`,
            // a 2.x one `content`, and a proxy or a mixed-version cluster hides which)
            let key = if p.reads_data {
                PayloadKey::Data
            } else {
                PayloadKey::Both
            };
            match read {
                Ok(result) if result.log_content == MSG_LOG_FILE_NOT_EXISTS => {
                    // no file is no proof the run is unknown here: it may be queued, or (with a
                    // resend in mind) accepted and not started
                    let accepted = state.jobs.send(WasAccepted { log_id }).await;
                    let result = match accepted {
                        Ok(true) => LogResult {
                            from_line_num: from,
                            to_line_num: 0,
                            log_content: MSG_RUN_ACCEPTED_NO_LOG.to_string(),
                            is_end: false,
                        },
                        _ => result,
                    };
                    answer_keyed(&ReturnT::success_with(result), key)
                }
                Ok(result) => answer_keyed(&ReturnT::success_with(result), key),
                Err(e) => fail(request_error(&e.to_string())),
            }
        }
        Endpoint::DropLogs => drop_logs(&body, &state).await,
    }
}

/// `/dropLogs`: removes the named runs' lines; what is left of other runs stays as it was.
async fn drop_logs(body: &[u8], state: &ServiceState) -> HttpResponse {
    let p: DropLogsParam = match decode(body) {
        Ok(p) => p,
        Err(e) => return fail(request_error(&e.to_string())),
    };
    if p.logs.len() > DROP_LOGS_MAX_RUNS {
        return fail(format!(
            "logs: at most {DROP_LOGS_MAX_RUNS} runs per request, got {}",
            p.logs.len()
        ));
    }
    let runs: Vec<(i64, i64)> = p.logs.iter().map(|l| (l.log_date_time, l.log_id)).collect();
    let logs = state.logs.clone();
    match web::block(move || logs.drop_runs(&runs)).await {
        Ok(Ok(dropped)) => {
            log::info!(
                "dropped the logs of {dropped} of {} run(s) the admin's retention removed",
                p.logs.len()
            );
            answer(&AnyReturn {
                code: SUCCESS_CODE,
                msg: Some(format!("dropped {dropped} run log(s)")),
                payload: Some(dropped.into()),
            })
        }
        Ok(Err(e)) => {
            log::warn!("cannot drop run logs: {e}");
            fail(format!("cannot drop run logs: {e}"))
        }
        Err(e) => fail(request_error(&format!("executor unavailable: {e}"))),
    }
}

/// Registers the exact paths (XXL-JOB's six and jobwheel's `/dropLogs`) on `cfg` (at the root, or inside the scope the caller mounts it in).
pub(crate) fn routes(state: ServiceState) -> impl Fn(&mut web::ServiceConfig) + Clone {
    move |cfg: &mut web::ServiceConfig| {
        for (path, endpoint) in ROUTES {
            let state = state.clone();
            let endpoint = *endpoint;
            cfg.service(
                web::resource(*path).to(move |req: HttpRequest, payload: web::Payload| {
                    handle(endpoint, req, payload, state.clone())
                }),
            );
        }
    }
}

/// Answer for any other path: the Java checks (method, token) first, then "uri-mapping not found".
pub(crate) async fn not_found(req: HttpRequest, state: ServiceState) -> HttpResponse {
    if let Err(msg) = check(&req, &state) {
        return fail(msg);
    }
    let uri = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.path().to_string());
    fail(uri_not_found(&uri))
}
