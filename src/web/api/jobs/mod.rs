//! `/api/v1/jobs`: job definitions, start/stop, manual triggers, fire-time previews.

use std::collections::{HashMap, HashSet};

use actix_web::{web, HttpRequest, HttpResponse};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::audit;
use super::auth::Principal;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::{optional_json, Json};
use super::{check_executor_address, load_group, load_job, paging, Page, JSON_LIMIT};
use crate::actors::dispatch::{trigger_and_wait, Trigger};
use crate::actors::timing_rules::{EXECUTOR_DEAD_AFTER_MS, PRE_READ_MS};
use crate::clock::now_ms;
use crate::model::{
    address_key, GlueType, JobGroup, JobInfo, RouteStrategy, ScheduleType, TriggerType,
    AWAITING_COMPLETION, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use crate::store::{JobFilter, Store};
use crate::timing::{self, parse_timezone};
use crate::web::body_limit::LimitedBody;
use crate::web::AppState;

pub(crate) mod fire_times;
pub(crate) mod run_now;
mod validation;

pub(crate) use fire_times::{fire_time_count, FireTimes};
pub(crate) use run_now::{trigger_job, TriggerBody};
use validation::{apply_and_validate, check_executor_param, first_fire_time, validate_refs};

/// Script versions kept per job (XXL-JOB keeps 30).
pub const GLUE_VERSIONS_KEPT: i64 = 30;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/jobs", web::get().to(list))
        .route("/jobs", web::post().to(create))
        .route("/jobs/{id}", web::get().to(get))
        .route("/jobs/{id}", web::put().to(update))
        .route("/jobs/{id}", web::delete().to(delete))
        .route("/jobs/{id}/start", web::post().to(start))
        .route("/jobs/{id}/stop", web::post().to(stop))
        .route("/jobs/{id}/trigger", web::post().to(run_now::trigger))
        .route(
            "/jobs/{id}/next-fire-times",
            web::get().to(fire_times::next_fire_times),
        );
}

/// A job as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct JobView {
    id: i32,
    job_group: i32,
    job_desc: String,
    add_time: i64,
    update_time: i64,
    author: String,
    alarm_email: String,
    alarm_webhook: String,
    schedule_type: &'static str,
    schedule_conf: String,
    timezone: String,
    misfire_strategy: &'static str,
    executor_route_strategy: &'static str,
    executor_handler: String,
    executor_param: String,
    executor_block_strategy: &'static str,
    executor_timeout: i32,
    executor_fail_retry_count: i32,
    retry_interval_secs: i32,
    glue_type: &'static str,
    glue_source: String,
    glue_remark: String,
    glue_updatetime: i64,
    child_job_ids: Vec<i32>,
    trigger_status: i32,
    trigger_last_time: i64,
    /// `null` while a FIX_DELAY job waits for its run to end.
    trigger_next_time: Option<i64>,
    /// Under SERIAL_EXECUTION, the most triggers waiting behind the running one on an
    /// executor (jobwheel executors; Java ones ignore it); 0 = unbounded.
    max_queued: i32,
    /// The executors it runs on, by label, in canonical form (`gpu=true, region in (eu,us)`);
    /// empty for any executor of the group.
    executor_selector: String,
    /// Days its runs are kept, overriding the admin's setting; 0 for that setting.
    log_retention_days: i32,
    /// The newest runs kept, older ones deleted whatever their age; 0 for no count bound.
    log_retention_runs: i32,
    /// The most of its runs open at once across every admin; 0 for no cap.
    max_concurrent_instances: i32,
    /// What a fire beyond that cap does: SKIP, QUEUE, REPLACE or ALLOW.
    instance_overflow: &'static str,
    /// Under QUEUE, the most fires waiting for a slot.
    instance_queue_max: i32,
    /// Under QUEUE, how long a fire may wait for a slot, seconds.
    instance_queue_ttl_secs: i32,
}

impl From<JobInfo> for JobView {
    fn from(j: JobInfo) -> Self {
        JobView {
            id: j.id,
            job_group: j.job_group,
            job_desc: j.job_desc,
            add_time: j.add_time,
            update_time: j.update_time,
            author: j.author,
            alarm_email: j.alarm_email,
            alarm_webhook: j.alarm_webhook,
            schedule_type: j.schedule_type.as_str(),
            schedule_conf: j.schedule_conf,
            timezone: j.timezone,
            misfire_strategy: j.misfire_strategy.as_str(),
            executor_route_strategy: j.executor_route_strategy.as_str(),
            executor_handler: j.executor_handler,
            executor_param: j.executor_param,
            executor_block_strategy: j.executor_block_strategy.as_str(),
            executor_timeout: j.executor_timeout,
            executor_fail_retry_count: j.executor_fail_retry_count,
            retry_interval_secs: j.retry_interval_secs,
            glue_type: j.glue_type.as_str(),
            glue_source: j.glue_source,
            glue_remark: j.glue_remark,
            glue_updatetime: j.glue_updatetime,
            child_job_ids: j.child_job_ids,
            trigger_status: j.trigger_status,
            trigger_last_time: j.trigger_last_time,
            trigger_next_time: (j.trigger_next_time != AWAITING_COMPLETION)
                .then_some(j.trigger_next_time),
            max_queued: j.max_queued,
            executor_selector: j.executor_selector,
            log_retention_days: j.log_retention_days,
            log_retention_runs: j.log_retention_runs,
            max_concurrent_instances: j.max_concurrent_instances,
            instance_overflow: j.instance_overflow.as_str(),
            instance_queue_max: j.instance_queue_max,
            instance_queue_ttl_secs: j.instance_queue_ttl_secs,
        }
    }
}

/// Create/update body. Enum fields are read as text so that a bad value answers with the
/// field's name and the allowed values. On update, omitted fields keep their value; `id` and
/// the `trigger*` fields are ignored (start/stop change them).
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct JobBody {
    job_group: Option<i32>,
    job_desc: Option<String>,
    author: Option<String>,
    alarm_email: Option<String>,
    alarm_webhook: Option<String>,
    schedule_type: Option<String>,
    schedule_conf: Option<String>,
    timezone: Option<String>,
    misfire_strategy: Option<String>,
    executor_route_strategy: Option<String>,
    executor_handler: Option<String>,
    executor_param: Option<String>,
    executor_block_strategy: Option<String>,
    executor_timeout: Option<i32>,
    executor_fail_retry_count: Option<i32>,
    retry_interval_secs: Option<i32>,
    glue_type: Option<String>,
    /// A script job's source; never empty for a script type. A new script job without one (or
    /// a BEAN job switched to a script type) starts from its type's template.
    glue_source: Option<String>,
    glue_remark: Option<String>,
    child_job_ids: Option<Vec<i32>>,
    /// Under SERIAL_EXECUTION, the most triggers that may wait behind the running one on an
    /// executor, 0 to 100000; a trigger beyond is refused with "queue full: N waiting".
    /// 0 (the default) = unbounded.
    max_queued: Option<i32>,
    /// The executors it may run on, by their labels: every routing strategy chooses among the
    /// matching ones only, and with none online the run fails at once. A string of
    /// comma-separated terms (`gpu=true`, `zone!=a`, `region in (eu,us)`, `ssd exists`), or an
    /// object of required values (`{"gpu": "true"}`); "" for any executor. Executors
    /// without labels (Java's) match no required label.
    #[schema(value_type = Option<String>)]
    executor_selector: Option<serde_json::Value>,
    /// Days its runs are kept (0 to 36500), overriding the admin's `--log-retention-days`, longer
    /// or shorter; 0 (the default) for that setting.
    log_retention_days: Option<i32>,
    /// Keep only the newest this many runs (0 to 10000000), older ones deleted at the daily
    /// retention whatever their age; 0 (the default) for no count bound. With days too, both
    /// bounds hold.
    log_retention_runs: Option<i32>,
    /// The most of its runs open at once across every admin of the cluster (0 to 100000):
    /// a run counts from its fire until its result (or its refusal), and the slot is claimed in
    /// the transaction that inserts its run row, so the cap holds under any race. 0 (the
    /// default) for no cap. Its group's cap, if set, holds too.
    max_concurrent_instances: Option<i32>,
    /// What a fire beyond `maxConcurrentInstances` does: `SKIP` (the default: its run row is
    /// recorded as SKIPPED), `QUEUE` (it waits for a slot, see `instanceQueueMax`),
    /// `REPLACE` (the oldest open run is closed and killed on its executor) or `ALLOW` (it
    /// runs anyway).
    instance_overflow: Option<String>,
    /// Under QUEUE, the most fires waiting for a slot (1 to 10000, default 100); one more is
    /// REFUSED.
    instance_queue_max: Option<i32>,
    /// Under QUEUE, how long a fire may wait for a slot, seconds (1 to 604800, default 600);
    /// then it is SKIPPED.
    instance_queue_ttl_secs: Option<i32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    job_group: Option<i32>,
    trigger_status: Option<i32>,
    job_desc: Option<String>,
    executor_handler: Option<String>,
    author: Option<String>,
    offset: Option<i64>,
    limit: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/jobs",
    tag = "jobs",
    summary = "Jobs, filtered and paged",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of jobs", body = super::Page<JobView>),
        answers::BadInput,
        answers::Forbidden
    )
)]
async fn list(
    state: web::Data<AppState>,
    principal: Principal,
    query: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let q = query.into_inner();
    let (offset, limit) = paging(q.offset, q.limit)?;
    // XXL-JOB's "all" values: jobGroup 0, triggerStatus -1
    let job_group = q.job_group.filter(|g| *g > 0);
    if let Some(g) = job_group {
        principal.require_group(g)?;
    }
    let trigger_status = match q.trigger_status {
        None | Some(-1) => None,
        Some(s @ (TRIGGER_STATUS_STOPPED | TRIGGER_STATUS_RUNNING)) => Some(s),
        Some(other) => {
            return Err(ApiError::field(
                "triggerStatus",
                format!("triggerStatus must be 0 (stopped) or 1 (running), got {other}"),
            ))
        }
    };
    let filter = JobFilter {
        job_group,
        trigger_status,
        job_desc: q.job_desc,
        executor_handler: q.executor_handler,
        author: q.author,
        offset,
        limit,
    };
    let (total, jobs) = state
        .store
        .list_jobs_scoped(&filter, principal.group_scope())
        .await?;
    Ok(HttpResponse::Ok().json(Page {
        total,
        items: jobs.into_iter().map(JobView::from).collect(),
    }))
}

#[utoipa::path(
    get,
    path = "/jobs/{id}",
    tag = "jobs",
    summary = "One job",
    params(("id" = i32, Path, description = "The job's id")),
    responses(
        (status = 200, description = "The job", body = JobView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let job = load_job(&state, &principal, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(JobView::from(job)))
}

/// The stored job, or 404 if it vanished meanwhile.
async fn reload(state: &AppState, id: i32) -> ApiResult<JobInfo> {
    state
        .store
        .get_job(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("job {id} does not exist")))
}

#[utoipa::path(
    post,
    path = "/jobs",
    tag = "jobs",
    summary = "Create a job",
    request_body = JobBody,
    responses(
        (status = 201, description = "Created", body = JobView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
pub(super) async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<JobBody>,
) -> ApiResult<HttpResponse> {
    let body = body.into_inner();
    let Some(group) = body.job_group else {
        return Err(ApiError::field("jobGroup", "jobGroup is required"));
    };
    let now = now_ms();
    let mut job = JobInfo::new(group, "", "");
    apply_and_validate(&mut job, body, state.settings.timezone)?;
    validate_refs(&state, &principal, &job, None).await?;
    job.owner_id = principal.user.id;
    job.add_time = now;
    job.update_time = now;
    job.glue_updatetime = now;
    job.trigger_status = TRIGGER_STATUS_STOPPED;
    job.trigger_last_time = 0;
    job.trigger_next_time = 0;
    let id = state.store.insert_job(&job).await?;
    log::info!(
        "user '{}' created job {id} ({})",
        principal.user.username,
        job.job_desc
    );
    let job = reload(&state, id).await?;
    let view = JobView::from(job);
    record_job(&state, &principal, "job.create", id, None, Some(&view)).await;
    Ok(HttpResponse::Created().json(view))
}

/// What an update does to a running job's next fire time.
enum Reschedule {
    Keep,
    Move,
    Stop,
}

/// Moves a running job's next fire time to its new schedule: the first time after the
/// pre-read window and after the last fire time a pass claimed, written only where the fire
/// times are still those read. A pass that claims one meanwhile moves them: read again, so a
/// fire time claimed already is never made the next one again.
async fn move_next_fire_time(store: &Store, job: &JobInfo, tz: Tz, now: i64) -> ApiResult<()> {
    const TRIES: usize = 5;
    for _ in 0..TRIES {
        let Some(current) = store.get_job(job.id).await? else {
            return Ok(());
        };
        if current.trigger_status != TRIGGER_STATUS_RUNNING {
            return Ok(());
        }
        let from = now.max(current.trigger_last_time - PRE_READ_MS);
        let next = first_fire_time(job, tz, from)?;
        let times = (current.trigger_last_time, current.trigger_next_time);
        if store.reschedule_job(job.id, times, next).await? {
            return Ok(());
        }
    }
    Err(ApiError::Conflict(format!(
        "job {}: its fire times kept moving while its new schedule was set; try again",
        job.id
    )))
}

#[utoipa::path(
    put,
    path = "/jobs/{id}",
    tag = "jobs",
    summary = "Change a job; omitted fields keep their value",
    params(("id" = i32, Path, description = "The job's id")),
    request_body = JobBody,
    responses(
        (status = 200, description = "Changed", body = JobView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
pub(super) async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    body: Json<JobBody>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_job(&state, &principal, id).await?;
    let mut job = old.clone();
    let tz = apply_and_validate(&mut job, body.into_inner(), state.settings.timezone)?;
    validate_refs(&state, &principal, &job, Some(&old)).await?;
    let group_changed = job.job_group != old.job_group;
    let broadcast = job.executor_route_strategy == RouteStrategy::ShardingBroadcast;
    if group_changed || broadcast {
        if let Some(w) = workflow_using(&state, &old).await? {
            let (field, why) = match group_changed {
                true => ("jobGroup", "whose nodes run jobs of its own group only"),
                false => (
                    "executorRouteStrategy",
                    "and a node is one run: SHARDING_BROADCAST cannot be its route",
                ),
            };
            return Err(ApiError::field(
                field,
                format!(
                    "job {id} is a node of workflow {} ({}), {why}",
                    w.id, w.name
                ),
            ));
        }
    }
    job.owner_id = principal.user.id;
    let now = now_ms();
    job.update_time = now;

    let schedule_changed = job.schedule_type != old.schedule_type
        || job.schedule_conf != old.schedule_conf
        || job.timezone != old.timezone;
    // XXL-JOB: a running job whose schedule changed fires next at the first time after now + 5 s
    let reschedule = if old.trigger_status == TRIGGER_STATUS_RUNNING && schedule_changed {
        match job.schedule_type {
            // a running job switched to NONE cannot stay scheduled
            ScheduleType::None => Reschedule::Stop,
            _ => {
                // refused here when the new schedule never fires; the time itself is set below
                first_fire_time(&job, tz, now)?;
                Reschedule::Move
            }
        }
    } else {
        Reschedule::Keep
    };

    if !state.store.update_job_definition(&job).await? {
        return Err(ApiError::not_found(format!("job {id} does not exist")));
    }
    let glue_changed = job.glue_source != old.glue_source
        || (job.glue_type != old.glue_type && job.glue_type != GlueType::Bean);
    if glue_changed {
        state
            .store
            .save_glue(
                id,
                &job.glue_source,
                &job.glue_remark,
                now,
                GLUE_VERSIONS_KEPT,
            )
            .await?;
    }
    match reschedule {
        Reschedule::Keep => {}
        Reschedule::Move => move_next_fire_time(&state.store, &job, tz, now).await?,
        Reschedule::Stop => {
            state.store.stop_job(id, now).await?;
        }
    }
    let job = reload(&state, id).await?;
    let view = JobView::from(job);
    let before = JobView::from(old);
    record_job(
        &state,
        &principal,
        "job.update",
        id,
        Some(&before),
        Some(&view),
    )
    .await;
    Ok(HttpResponse::Ok().json(view))
}

/// A workflow with a JOB node running `job` (workflows run jobs of their own group).
async fn workflow_using(
    state: &AppState,
    job: &JobInfo,
) -> ApiResult<Option<crate::model::Workflow>> {
    let workflows = state.store.workflows_of_group(job.job_group).await?;
    Ok(workflows
        .into_iter()
        .find(|w| w.definition.nodes.iter().any(|n| n.job_id == Some(job.id))))
}

/// Records a change of job `id` in the audit log.
async fn record_job(
    state: &AppState,
    principal: &Principal,
    action: &'static str,
    id: i32,
    before: Option<&JobView>,
    after: Option<&JobView>,
) {
    let summary = after
        .or(before)
        .map(|v| v.job_desc.clone())
        .unwrap_or_default();
    audit::record(
        state,
        principal,
        audit::Change {
            action,
            target_type: "job",
            target_id: id.into(),
            summary,
            before: before.and_then(audit::snapshot),
            after: after.and_then(audit::snapshot),
        },
    )
    .await;
}

#[utoipa::path(
    delete,
    path = "/jobs/{id}",
    tag = "jobs",
    summary = "Delete a job with its runs and script versions; refused (409) while a workflow's node runs it",
    params(("id" = i32, Path, description = "The job's id")),
    responses(
        (status = 204, description = "Deleted"),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
pub(super) async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_job(&state, &principal, id).await?;
    if let Some(w) = workflow_using(&state, &old).await? {
        return Err(ApiError::Conflict(format!(
            "job {id} is a node of workflow {} ({}): remove it from the workflow first",
            w.id, w.name
        )));
    }
    if !state.store.delete_job(id).await? {
        return Err(ApiError::not_found(format!("job {id} does not exist")));
    }
    log::info!("user '{}' deleted job {id}", principal.user.username);
    let before = JobView::from(old);
    record_job(&state, &principal, "job.delete", id, Some(&before), None).await;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    post,
    path = "/jobs/{id}/start",
    tag = "jobs",
    summary = "Start a job's schedule",
    params(("id" = i32, Path, description = "The job's id")),
    responses(
        (status = 200, description = "Started", body = JobView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
pub(super) async fn start(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let job = load_job(&state, &principal, id).await?;
    if job.schedule_type == ScheduleType::None {
        return Err(ApiError::field(
            "scheduleType",
            "a job with schedule type NONE cannot be started; trigger it instead",
        ));
    }
    let tz = parse_timezone(&job.timezone, state.settings.timezone)
        .map_err(|e| ApiError::schedule("timezone", e))?;
    let now = now_ms();
    let next = first_fire_time(&job, tz, now)?;
    if !state.store.start_job(id, next, now).await? {
        return Err(ApiError::not_found(format!("job {id} does not exist")));
    }
    let view = JobView::from(reload(&state, id).await?);
    let before = JobView::from(job);
    record_job(
        &state,
        &principal,
        "job.start",
        id,
        Some(&before),
        Some(&view),
    )
    .await;
    Ok(HttpResponse::Ok().json(view))
}

#[utoipa::path(
    post,
    path = "/jobs/{id}/stop",
    tag = "jobs",
    summary = "Stop a job's schedule",
    params(("id" = i32, Path, description = "The job's id")),
    responses(
        (status = 200, description = "Stopped", body = JobView),
        answers::Forbidden,
        answers::NotFound
    )
)]
pub(super) async fn stop(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_job(&state, &principal, id).await?;
    if !state.store.stop_job(id, now_ms()).await? {
        return Err(ApiError::not_found(format!("job {id} does not exist")));
    }
    let view = JobView::from(reload(&state, id).await?);
    let before = JobView::from(old);
    record_job(
        &state,
        &principal,
        "job.stop",
        id,
        Some(&before),
        Some(&view),
    )
    .await;
    Ok(HttpResponse::Ok().json(view))
}
