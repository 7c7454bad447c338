//! `/api/v1/logs`: trigger/run records, the executor's run log, kill, and clearing old rows.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::audit::{self, Change};
use super::auth::Principal;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::{load_job, paging, trigger_env, ApiExecutorCalls, Page};
use crate::actors::result_intake::{complete_one, CallbackOutcome};
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::executor_calls::Credentials;
use crate::model::{executor_token, Admission, RunRow};
use crate::protocol::{AdminProtocol, HandleCallbackParam, FAIL_CODE, SUCCESS_CODE};
use crate::store::{LogFilter, LogStatus};
use crate::web::AppState;

/// Rows deleted per statement when clearing logs (XXL-JOB's batch).
pub const CLEAR_BATCH: i64 = 1000;
const DAY_MS: i64 = 24 * 3600 * 1000;
/// Largest `olderThanDays` accepted (100 years).
const MAX_DAYS: i64 = 36_500;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/logs", web::get().to(list))
        .route("/logs", web::delete().to(clear))
        .route("/logs/{id}", web::get().to(get))
        .route("/logs/{id}/content", web::get().to(content))
        .route("/logs/{id}/kill", web::post().to(kill));
}

/// A log row as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct LogView {
    id: i64,
    job_group: i32,
    job_id: i32,
    trigger_type: &'static str,
    schedule_time: i64,
    trigger_time: i64,
    trigger_code: i32,
    trigger_msg: Option<String>,
    executor_address: Option<String>,
    executor_handler: Option<String>,
    executor_param: Option<String>,
    executor_sharding_param: Option<String>,
    executor_fail_retry_count: i32,
    handle_time: i64,
    handle_code: i32,
    handle_msg: Option<String>,
    alarm_status: i32,
    /// Why the run stands as it does: `RAN` (admitted and sent), `QUEUED` (waiting for a slot
    /// of its job's or group's instance cap), `SKIPPED`, `REFUSED` (the cap's queue was full)
    /// or `NO_EXECUTOR` (none online, matching or undrained to send it to).
    admission: &'static str,
}

impl From<RunRow> for LogView {
    fn from(l: RunRow) -> Self {
        LogView {
            id: l.id,
            job_group: l.job_group,
            job_id: l.job_id,
            trigger_type: l.trigger_type.as_str(),
            schedule_time: l.schedule_time,
            trigger_time: l.trigger_time,
            trigger_code: l.trigger_code,
            trigger_msg: l.trigger_msg,
            executor_address: l.executor_address,
            executor_handler: l.executor_handler,
            executor_param: l.executor_param,
            executor_sharding_param: l.executor_sharding_param,
            executor_fail_retry_count: l.executor_fail_retry_count,
            handle_time: l.handle_time,
            handle_code: l.handle_code,
            handle_msg: l.handle_msg,
            alarm_status: l.alarm_status,
            admission: l.admission.as_str(),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    job_group: Option<i32>,
    job_id: Option<i32>,
    status: Option<String>,
    /// Only runs with this admission: RAN, QUEUED, SKIPPED, REFUSED or NO_EXECUTOR.
    admission: Option<String>,
    from: Option<i64>,
    to: Option<i64>,
    offset: Option<i64>,
    limit: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/logs",
    tag = "logs",
    summary = "Run records, filtered and paged, newest first",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of runs", body = super::Page<LogView>),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn list(
    state: web::Data<AppState>,
    principal: Principal,
    query: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let q = query.into_inner();
    let (offset, limit) = paging(q.offset, q.limit)?;
    let job_group = q.job_group.filter(|g| *g > 0);
    if let Some(g) = job_group {
        principal.require_group(g)?;
    }
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(
            s.parse::<LogStatus>()
                .map_err(|e| ApiError::field("status", e))?,
        ),
    };
    if let (Some(from), Some(to)) = (q.from, q.to) {
        if from > to {
            return Err(ApiError::field("from", "from must not be after to"));
        }
    }
    let admission = match q
        .admission
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(a) => Some(
            a.parse::<Admission>()
                .map_err(|e| ApiError::field("admission", e.to_string()))?,
        ),
    };
    let filter = LogFilter {
        job_group,
        job_id: q.job_id.filter(|j| *j > 0),
        status,
        admission,
        from: q.from,
        to: q.to,
        offset,
        limit,
        count_up_to: None,
    };
    let (total, logs) = state
        .store
        .list_logs_scoped(&filter, principal.group_scope())
        .await?;
    Ok(HttpResponse::Ok().json(Page {
        total,
        items: logs.into_iter().map(LogView::from).collect(),
    }))
}

/// A kill of a fire still waiting in its instance queue: it leaves the queue unrun.
async fn cancel_queued(
    state: &AppState,
    principal: &Principal,
    log: RunRow,
) -> ApiResult<HttpResponse> {
    let why = format!(
        "cancelled by {} while it waited in its instance queue; not run",
        principal.user.username
    );
    if !state.store.cancel_queued(log.id, &why).await? {
        return Err(ApiError::Conflict(format!(
            "log {} no longer waits in its queue (it was sent, or its wait ran out): try again",
            log.id
        )));
    }
    log::info!(
        "user '{}' cancelled queued log {} of job {}",
        principal.user.username,
        log.id,
        log.job_id
    );
    audit::record(
        state,
        principal,
        audit::Change {
            action: "run.kill",
            target_type: "run",
            target_id: log.id,
            summary: why.clone(),
            before: None,
            after: None,
        },
    )
    .await;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "code": SUCCESS_CODE, "msg": why })))
}

/// The log row if the caller may see it: 404 when missing, 403 when not permitted.
pub(crate) async fn load_log(
    state: &AppState,
    principal: &Principal,
    id: i64,
) -> ApiResult<RunRow> {
    let log = state
        .store
        .get_log(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("log {id} does not exist")))?;
    principal.require_group(log.job_group)?;
    Ok(log)
}

#[utoipa::path(
    get,
    path = "/logs/{id}",
    tag = "logs",
    summary = "One run record",
    params(("id" = i64, Path, description = "The run's (log's) id")),
    responses(
        (status = 200, description = "The run", body = LogView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let log = load_log(&state, &principal, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(LogView::from(log)))
}

/// How to reach the executor that ran `log`: its address and the credentials of its group.
async fn executor_of(state: &AppState, log: &RunRow) -> ApiResult<(String, Credentials)> {
    let Some(address) = log
        .executor_address
        .clone()
        .filter(|a| !a.trim().is_empty())
    else {
        return Err(ApiError::Conflict(format!(
            "log {} was never sent to an executor (trigger code {})",
            log.id, log.trigger_code
        )));
    };
    let group = state.store.get_group(log.job_group).await?;
    let access_token = Some(executor_token(group.as_ref(), &state.access_token));
    let protocol = state
        .store
        .find_registration(&address, now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?
        .and_then(|r| AdminProtocol::parse(&r.protocol))
        .unwrap_or_default();
    Ok((
        address,
        Credentials {
            access_token,
            app_name: group.map(|g| g.app_name),
            protocol,
        },
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ContentQuery {
    from_line: Option<i32>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct LogContent {
    from_line_num: i32,
    to_line_num: i32,
    log_content: String,
    is_end: bool,
}

/// `GET /logs/{id}/content?fromLine=1`: the run's log lines from the executor's `/log`.
#[utoipa::path(
    get,
    path = "/logs/{id}/content",
    tag = "logs",
    summary = "The run's log lines, read from its executor",
    params(("id" = i64, Path, description = "The run's (log's) id"), ContentQuery),
    responses(
        (status = 200, description = "The lines", body = LogContent),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict,
        (status = 502, description = "The executor could not be reached or refused", body = crate::web::api::error::ApiErrorBody)
    )
)]
async fn content(
    state: web::Data<AppState>,
    client: web::Data<ApiExecutorCalls>,
    principal: Principal,
    path: web::Path<i64>,
    query: web::Query<ContentQuery>,
) -> ApiResult<HttpResponse> {
    let from_line = query.from_line.unwrap_or(1);
    if from_line < 1 {
        return Err(ApiError::field("fromLine", "fromLine starts at 1"));
    }
    let log = load_log(&state, &principal, path.into_inner()).await?;
    let (address, creds) = executor_of(&state, &log).await?;
    let answer = client
        .0
        .log(&address, &creds, log.id, log.trigger_time, from_line)
        .await;
    if answer.code != SUCCESS_CODE {
        return Err(ApiError::BadGateway(format!(
            "executor {address} did not return the log: {}",
            answer
                .msg
                .unwrap_or_else(|| format!("code {}", answer.code))
        )));
    }
    let Some(result) = answer.payload else {
        return Err(ApiError::BadGateway(format!(
            "executor {address} answered without log data"
        )));
    };
    // an XXL-JOB executor sends everything from `fromLine` on: pass on one page of it
    let result = result.bounded();
    // XXL-JOB: past the last line of a finished run, the log is complete
    let is_end =
        result.is_end || (result.from_line_num > result.to_line_num && log.handle_code > 0);
    Ok(HttpResponse::Ok().json(LogContent {
        from_line_num: result.from_line_num,
        to_line_num: result.to_line_num,
        log_content: result.log_content,
        is_end,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
struct KillAnswer {
    msg: String,
}

/// `POST /logs/{id}/kill`: asks the executor to stop the job's run; on success the run is
/// recorded as failed ("Manual operation, kill job: ...") through the callback path.
#[utoipa::path(
    post,
    path = "/logs/{id}/kill",
    tag = "logs",
    summary = "Stop a running run; it is recorded as failed",
    params(("id" = i64, Path, description = "The run's (log's) id")),
    responses(
        (status = 200, description = "The executor's answer", body = KillAnswer),
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict,
        (status = 502, description = "The executor could not be reached or refused", body = crate::web::api::error::ApiErrorBody)
    )
)]
async fn kill(
    state: web::Data<AppState>,
    client: web::Data<ApiExecutorCalls>,
    principal: Principal,
    path: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let log = load_log(&state, &principal, path.into_inner()).await?;
    if log.admission == Admission::Queued {
        return cancel_queued(&state, &principal, log).await;
    }
    if log.trigger_code != SUCCESS_CODE {
        return Err(ApiError::Conflict(format!(
            "log {} did not start on an executor (trigger code {}); nothing to kill",
            log.id, log.trigger_code
        )));
    }
    if log.handle_code > 0 {
        return Err(ApiError::Conflict(format!(
            "log {} already has a result (code {}); nothing to kill",
            log.id, log.handle_code
        )));
    }
    let (address, creds) = executor_of(&state, &log).await?;
    let answer = client.0.kill(&address, &creds, log.job_id).await;
    let msg = answer.msg.clone().unwrap_or_default();
    if answer.code != SUCCESS_CODE {
        return Err(ApiError::BadGateway(format!(
            "executor {address} did not kill job {}: {}",
            log.job_id,
            if msg.is_empty() {
                format!("code {}", answer.code)
            } else {
                msg
            }
        )));
    }
    let handle_msg = format!("Manual operation, kill job: {msg}");
    let mut outcome = CallbackOutcome::default();
    complete_one(
        &trigger_env(&state),
        &state.dispatcher,
        HandleCallbackParam {
            log_id: log.id,
            log_date_time: log.trigger_time,
            handle_code: FAIL_CODE,
            handle_msg: Some(handle_msg.clone()),
        },
        &mut outcome,
    )
    .await
    .map_err(ApiError::Internal)?;
    audit::record(
        &state,
        &principal,
        Change {
            action: "run.kill",
            target_type: "run",
            target_id: log.id,
            summary: format!("job {}", log.job_id),
            before: None,
            after: Some(serde_json::json!({"handleMsg": handle_msg})),
        },
    )
    .await;
    log::info!(
        "user '{}' killed job {} (log {})",
        principal.user.username,
        log.job_id,
        log.id
    );
    Ok(HttpResponse::Ok().json(KillAnswer { msg: handle_msg }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ClearQuery {
    job_group: Option<i32>,
    job_id: Option<i32>,
    older_than_days: Option<i64>,
    keep_last: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
struct Cleared {
    deleted: u64,
}

/// `DELETE /logs?jobGroup&jobId&olderThanDays|keepLast`: deletes log rows in batches of 1000.
#[utoipa::path(
    delete,
    path = "/logs",
    tag = "logs",
    summary = "Delete run records older than some days, or all but the newest",
    params(ClearQuery),
    responses(
        (status = 200, description = "How many were deleted", body = Cleared),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn clear(
    state: web::Data<AppState>,
    principal: Principal,
    query: web::Query<ClearQuery>,
) -> ApiResult<HttpResponse> {
    let q = query.into_inner();
    let job_group = q.job_group.filter(|g| *g > 0);
    let job_id = q.job_id.filter(|j| *j > 0);
    let (before, keep_last) = match (q.older_than_days, q.keep_last) {
        (Some(days), None) => {
            if !(0..=MAX_DAYS).contains(&days) {
                return Err(ApiError::field(
                    "olderThanDays",
                    format!("olderThanDays must be between 0 and {MAX_DAYS}"),
                ));
            }
            (Some(now_ms() - days * DAY_MS), None)
        }
        (None, Some(keep)) => {
            if keep < 0 {
                return Err(ApiError::field("keepLast", "keepLast must be 0 or more"));
            }
            (None, Some(keep))
        }
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of olderThanDays and keepLast",
            ))
        }
    };
    // a normal user clears only inside a group they may use
    if let Some(g) = job_group {
        principal.require_group(g)?;
    }
    if let Some(j) = job_id {
        let job = load_job(&state, &principal, j).await?;
        if job_group.is_some_and(|g| g != job.job_group) {
            return Err(ApiError::field(
                "jobId",
                format!("job {j} is not in group {}", job_group.unwrap_or_default()),
            ));
        }
    }
    if job_group.is_none() && job_id.is_none() {
        principal.require_admin()?;
    }
    let mut deleted = 0;
    loop {
        let ids = state
            .store
            .find_log_ids_to_clear(job_group, job_id, before, keep_last, CLEAR_BATCH)
            .await?;
        if ids.is_empty() {
            break;
        }
        let n = state.store.delete_logs(&ids).await?;
        deleted += n;
        if n == 0 {
            break; // another admin deleted them meanwhile; the next pass would find the same ids
        }
    }
    log::info!(
        "user '{}' cleared {deleted} log row(s) (group {job_group:?}, job {job_id:?})",
        principal.user.username
    );
    let rule = serde_json::json!({
        "jobGroup": job_group, "jobId": job_id, "olderThan": before, "keepLast": keep_last,
        "deleted": deleted,
    });
    let change = Change {
        action: "run.clear",
        target_type: "run",
        target_id: 0,
        summary: format!("{deleted} run(s) cleared"),
        before: None,
        after: Some(rule),
    };
    audit::record(&state, &principal, change).await;
    Ok(HttpResponse::Ok().json(Cleared { deleted }))
}
