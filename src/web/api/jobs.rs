//! `/api/v1/jobs`: job definitions, start/stop, manual triggers, fire-time previews.

use std::collections::{HashMap, HashSet};

use actix_web::{web, HttpMessage, HttpRequest, HttpResponse};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::audit;
use super::auth::Principal;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::{parse_value, Json};
use super::{
    check_address, check_executor_address, load_group, load_job, paging, Page, JSON_LIMIT,
};
use crate::actors::dispatch::{trigger_and_wait, Trigger};
use crate::actors::timing_rules::{EXECUTOR_DEAD_AFTER_MS, PRE_READ_MS};
use crate::alarm::webhook::ALLOW_PRIVATE_FLAG;
use crate::clock::now_ms;
use crate::executor::outbound;
use crate::model::{
    address_key, GlueType, JobGroup, JobInfo, ScheduleType, TriggerType, AWAITING_COMPLETION,
    TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use crate::store::{JobFilter, Store};
use crate::timing::{self, parse_timezone};
use crate::web::body_limit::LimitedBody;
use crate::web::AppState;

/// Script versions kept per job (XXL-JOB keeps 30).
pub const GLUE_VERSIONS_KEPT: i64 = 30;
/// Most fire times one preview returns.
pub const MAX_FIRE_TIMES: usize = 100;
/// Fire times a preview returns when `count` is not given.
pub const DEFAULT_FIRE_TIMES: usize = 5;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/jobs", web::get().to(list))
        .route("/jobs", web::post().to(create))
        .route("/jobs/{id}", web::get().to(get))
        .route("/jobs/{id}", web::put().to(update))
        .route("/jobs/{id}", web::delete().to(delete))
        .route("/jobs/{id}/start", web::post().to(start))
        .route("/jobs/{id}/stop", web::post().to(stop))
        .route("/jobs/{id}/trigger", web::post().to(trigger))
        .route("/jobs/{id}/next-fire-times", web::get().to(next_fire_times));
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
    glue_source: Option<String>,
    glue_remark: Option<String>,
    child_job_ids: Option<Vec<i32>>,
}

fn parse_enum<T: std::str::FromStr>(field: &'static str, value: &str) -> ApiResult<T>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse()
        .map_err(|e| ApiError::field(field, format!("{e}")))
}

fn max_chars(field: &'static str, value: &str, max: usize) -> ApiResult<()> {
    if value.chars().count() > max {
        Err(ApiError::field(
            field,
            format!("{field} must be at most {max} characters"),
        ))
    } else {
        Ok(())
    }
}

/// Copies the given fields onto `job`, parsing enum names.
fn apply(job: &mut JobInfo, body: JobBody) -> ApiResult<()> {
    if let Some(g) = body.job_group {
        job.job_group = g;
    }
    if let Some(v) = body.job_desc {
        job.job_desc = v.trim().to_string();
    }
    if let Some(v) = body.author {
        job.author = v.trim().to_string();
    }
    if let Some(v) = body.alarm_email {
        job.alarm_email = v.trim().to_string();
    }
    if let Some(v) = body.alarm_webhook {
        job.alarm_webhook = v.trim().to_string();
    }
    if let Some(v) = body.schedule_type {
        job.schedule_type = parse_enum("scheduleType", &v)?;
    }
    if let Some(v) = body.schedule_conf {
        job.schedule_conf = v.trim().to_string();
    }
    if let Some(v) = body.timezone {
        job.timezone = v.trim().to_string();
    }
    if let Some(v) = body.misfire_strategy {
        job.misfire_strategy = parse_enum("misfireStrategy", &v)?;
    }
    if let Some(v) = body.executor_route_strategy {
        job.executor_route_strategy = parse_enum("executorRouteStrategy", &v)?;
    }
    if let Some(v) = body.executor_handler {
        job.executor_handler = v.trim().to_string();
    }
    if let Some(v) = body.executor_param {
        job.executor_param = v;
    }
    if let Some(v) = body.executor_block_strategy {
        job.executor_block_strategy = parse_enum("executorBlockStrategy", &v)?;
    }
    if let Some(v) = body.executor_timeout {
        job.executor_timeout = v;
    }
    if let Some(v) = body.executor_fail_retry_count {
        job.executor_fail_retry_count = v;
    }
    if let Some(v) = body.retry_interval_secs {
        job.retry_interval_secs = v;
    }
    if let Some(v) = body.glue_type {
        job.glue_type = parse_enum("glueType", &v)?;
    }
    if let Some(v) = body.glue_source {
        job.glue_source = v;
    }
    if let Some(v) = body.glue_remark {
        job.glue_remark = v.trim().to_string();
    }
    if let Some(v) = body.child_job_ids {
        let mut seen = HashSet::new();
        job.child_job_ids = v.into_iter().filter(|id| seen.insert(*id)).collect();
    }
    Ok(())
}

/// Longest `executorParam` in bytes, on create, update and trigger alike (MySQL's TEXT, which
/// the run record copies it into).
pub const EXECUTOR_PARAM_MAX: usize = 65_535;

fn check_executor_param(param: &str) -> ApiResult<()> {
    if param.len() > EXECUTOR_PARAM_MAX {
        return Err(ApiError::field(
            "executorParam",
            format!("executorParam must be at most {EXECUTOR_PARAM_MAX} bytes"),
        ));
    }
    Ok(())
}

/// Checks the fields that need no database; returns the job's time zone.
fn validate_fields(job: &JobInfo, default_tz: Tz) -> ApiResult<Tz> {
    if job.job_desc.is_empty() {
        return Err(ApiError::field("jobDesc", "jobDesc is required"));
    }
    max_chars("jobDesc", &job.job_desc, 255)?;
    max_chars("author", &job.author, 64)?;
    max_chars("alarmEmail", &job.alarm_email, 255)?;
    for email in job
        .alarm_email
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let valid = email
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && host.contains('.'));
        if !valid {
            return Err(ApiError::field(
                "alarmEmail",
                format!("'{email}' is not an e-mail address"),
            ));
        }
    }
    max_chars("alarmWebhook", &job.alarm_webhook, 1024)?;
    if !job.alarm_webhook.is_empty() {
        check_address("alarmWebhook", &job.alarm_webhook)?;
    }
    max_chars("scheduleConf", &job.schedule_conf, 128)?;
    if job.schedule_type == ScheduleType::Cron && job.schedule_conf.is_empty() {
        return Err(ApiError::field(
            "scheduleConf",
            "a CRON job needs a cron expression in scheduleConf",
        ));
    }
    timing::validate(job.schedule_type, &job.schedule_conf)
        .map_err(|e| ApiError::schedule("scheduleConf", e))?;
    max_chars("timezone", &job.timezone, 64)?;
    let tz =
        parse_timezone(&job.timezone, default_tz).map_err(|e| ApiError::schedule("timezone", e))?;
    max_chars("executorHandler", &job.executor_handler, 255)?;
    if job.glue_type == GlueType::Bean && job.executor_handler.is_empty() {
        return Err(ApiError::field(
            "executorHandler",
            "executorHandler is required for BEAN jobs",
        ));
    }
    check_executor_param(&job.executor_param)?;
    if job.executor_timeout < 0 {
        return Err(ApiError::field(
            "executorTimeout",
            "executorTimeout must be 0 (none) or more seconds",
        ));
    }
    if job.executor_fail_retry_count < 0 {
        return Err(ApiError::field(
            "executorFailRetryCount",
            "executorFailRetryCount must be 0 or more",
        ));
    }
    if job.retry_interval_secs < 0 {
        return Err(ApiError::field(
            "retryIntervalSecs",
            "retryIntervalSecs must be 0 or more seconds",
        ));
    }
    max_chars("glueRemark", &job.glue_remark, 128)?;
    if crate::model::join_ids(&job.child_job_ids).len() > 255 {
        return Err(ApiError::field("childJobIds", "too many child jobs"));
    }
    Ok(tz)
}

/// The shortest chain of child lists that leads from `job_id` back to itself, when its new
/// `children` would close one: `[3, 5, 3]` for 3 → 5 → 3.
async fn find_cycle(store: &Store, job_id: i32, children: &[i32]) -> ApiResult<Option<Vec<i32>>> {
    // breadth first, so the reported cycle is a shortest one; `parent` also marks visited jobs
    let mut parent: HashMap<i32, i32> = HashMap::new();
    let mut frontier = Vec::new();
    for &c in children {
        if c == job_id {
            return Ok(Some(vec![job_id, job_id]));
        }
        if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(c) {
            e.insert(job_id);
            frontier.push(c);
        }
    }
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for job in store.get_jobs(&frontier).await? {
            for &c in &job.child_job_ids {
                if c == job_id {
                    let mut back = vec![job.id];
                    let mut cur = job.id;
                    while let Some(&p) = parent.get(&cur) {
                        if p == job_id {
                            break;
                        }
                        back.push(p);
                        cur = p;
                    }
                    back.reverse();
                    let mut path = vec![job_id];
                    path.extend(back);
                    path.push(job_id);
                    return Ok(Some(path));
                }
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(c) {
                    e.insert(job.id);
                    next.push(c);
                }
            }
        }
        frontier = next;
    }
    Ok(None)
}

/// Checks what needs the database: the group (exists, permitted), the child jobs (exist, in
/// groups the caller may use, not the job itself, no cycle) and, when it changed from `old`,
/// where the alarm webhook points.
async fn validate_refs(
    state: &AppState,
    principal: &Principal,
    job: &JobInfo,
    old: Option<&JobInfo>,
) -> ApiResult<()> {
    load_group(state, job.job_group, Some("jobGroup")).await?;
    principal.require_group(job.job_group)?;
    if old.is_none_or(|o| o.alarm_webhook != job.alarm_webhook) {
        check_webhook_target(state, &job.alarm_webhook).await?;
    }
    if job.child_job_ids.is_empty() {
        return Ok(());
    }
    if job.id > 0 && job.child_job_ids.contains(&job.id) {
        return Err(ApiError::field(
            "childJobIds",
            format!("job {} cannot be its own child job", job.id),
        ));
    }
    let usable: HashSet<i32> = state
        .store
        .get_jobs(&job.child_job_ids)
        .await?
        .iter()
        .filter(|j| principal.can_access(j.job_group))
        .map(|j| j.id)
        .collect();
    // one answer for a job that does not exist and one of a group the caller may not use, so
    // that the error tells nobody which ids exist elsewhere
    if let Some(refused) = job.child_job_ids.iter().find(|c| !usable.contains(c)) {
        return Err(ApiError::field(
            "childJobIds",
            format!("child job {refused} does not exist or is in a group you may not use"),
        ));
    }
    // a new job has no id yet, so no other job can name it as a child: no cycle through it
    if job.id > 0 {
        if let Some(cycle) = find_cycle(&state.store, job.id, &job.child_job_ids).await? {
            let visible: HashSet<i32> = state
                .store
                .get_jobs(&cycle)
                .await?
                .iter()
                .filter(|j| principal.can_access(j.job_group))
                .map(|j| j.id)
                .collect();
            let chain = cycle
                .iter()
                .map(|i| match visible.contains(i) {
                    true => i.to_string(),
                    false => "(a job of another group)".to_string(),
                })
                .collect::<Vec<_>>()
                .join(" → ");
            return Err(ApiError::field(
                "childJobIds",
                format!("child jobs form a cycle: {chain}"),
            ));
        }
    }
    Ok(())
}

/// How long the check of a webhook's host may wait for its name to resolve.
const WEBHOOK_RESOLVE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Refuses an alarm webhook whose host is (or resolves to) a loopback, private or link-local
/// address unless `--alarm-webhook-allow-private`; the admin posts there. A name that does not
/// resolve now is accepted: it is resolved and checked again at each alarm.
async fn check_webhook_target(state: &AppState, webhook: &str) -> ApiResult<()> {
    if webhook.is_empty() || state.settings.alarm_webhook_allow_private {
        return Ok(());
    }
    let Ok(url) = url::Url::parse(webhook) else {
        return Ok(()); // validate_fields named the bad URL already
    };
    let resolved = tokio::time::timeout(WEBHOOK_RESOLVE_WAIT, outbound::resolve(&url)).await;
    if let Ok(Ok(addrs)) = resolved {
        outbound::refuse_private(&url, &addrs, ALLOW_PRIVATE_FLAG)
            .map_err(|why| ApiError::field("alarmWebhook", why))?;
    }
    Ok(())
}

/// The first fire time after now + 5 s (XXL-JOB's start rule), or a 400 naming why there is none.
fn first_fire_time(job: &JobInfo, tz: Tz, now: i64) -> ApiResult<i64> {
    match timing::next_fire_time(job.schedule_type, &job.schedule_conf, tz, now + PRE_READ_MS) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Err(ApiError::field(
            "scheduleConf",
            "the schedule has no future fire time",
        )),
        Err(e) => Err(ApiError::schedule("scheduleConf", e)),
    }
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
    apply(&mut job, body)?;
    validate_fields(&job, state.settings.timezone)?;
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
    At(i64),
    Stop,
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
    apply(&mut job, body.into_inner())?;
    let tz = validate_fields(&job, state.settings.timezone)?;
    validate_refs(&state, &principal, &job, Some(&old)).await?;
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
            _ => Reschedule::At(first_fire_time(&job, tz, now)?),
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
        Reschedule::At(next) => {
            state.store.set_next_fire_time(id, next).await?;
        }
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
    summary = "Delete a job with its runs and script versions",
    params(("id" = i32, Path, description = "The job's id")),
    responses(
        (status = 204, description = "Deleted"),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
pub(super) async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_job(&state, &principal, id).await?;
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

/// Every address executors of `group` have (by [`address_key`]): those registered now and those
/// in its address list.
async fn group_addresses(state: &AppState, group: &JobGroup) -> ApiResult<HashSet<String>> {
    let since = now_ms() - EXECUTOR_DEAD_AFTER_MS;
    let live = state
        .store
        .find_live_registry_for(&group.app_name, since)
        .await?;
    Ok(live
        .iter()
        .map(|r| address_key(&r.registry_value))
        .chain(group.address_list.iter().map(|a| address_key(a)))
        .collect())
}

#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct TriggerBody {
    pub(super) executor_param: Option<String>,
    pub(super) address_list: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct TriggerAnswer {
    log_ids: Vec<i64>,
    trigger_codes: Vec<i32>,
}

/// `POST /jobs/{id}/trigger {executorParam?, addressList?}`: one manual run now; waits until
/// the log rows exist and the executors answered.
#[utoipa::path(
    post,
    path = "/jobs/{id}/trigger",
    tag = "jobs",
    summary = "Run a job once now (an empty body is allowed)",
    params(("id" = i32, Path, description = "The job's id")),
    request_body = Option<TriggerBody>,
    responses(
        (status = 200, description = "The runs made and the executors' answers", body = TriggerAnswer),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        (status = 503, description = "Shutting down", body = crate::web::api::error::ApiErrorBody)
    )
)]
pub(super) async fn trigger(
    state: web::Data<AppState>,
    principal: Principal,
    req: HttpRequest,
    path: web::Path<i32>,
    body: LimitedBody<JSON_LIMIT>,
) -> ApiResult<HttpResponse> {
    let body = body.0;
    // the body is optional: empty means "as configured"; given, it is JSON like every other
    let body: TriggerBody = if body.iter().all(u8::is_ascii_whitespace) {
        TriggerBody::default()
    } else {
        if !is_json(&req) {
            return Err(ApiError::bad_request(
                "invalid JSON body: Content type error (send Content-Type: application/json)",
            ));
        }
        let value = serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))?;
        parse_value(value)?
    };
    trigger_job(state, principal, path.into_inner(), body).await
}

/// Whether the request says its body is JSON (`application/json`, or a `+json` type).
fn is_json(req: &HttpRequest) -> bool {
    req.mime_type().ok().flatten().is_some_and(|m| {
        m.type_() == actix_web::mime::APPLICATION
            && (m.subtype() == actix_web::mime::JSON || m.suffix() == Some(actix_web::mime::JSON))
    })
}

/// One manual run of job `id` with what `body` asks (the REST call and XXL-JOB's `triggerJob`).
pub(super) async fn trigger_job(
    state: web::Data<AppState>,
    principal: Principal,
    id: i32,
    body: TriggerBody,
) -> ApiResult<HttpResponse> {
    if let Some(param) = &body.executor_param {
        check_executor_param(param)?;
    }
    let job = load_job(&state, &principal, id).await?;
    let addresses: Option<Vec<String>> = body.address_list.map(|list| {
        list.into_iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect()
    });
    if let Some(list) = addresses.as_ref().filter(|l| !l.is_empty()) {
        for a in list {
            check_executor_address("addressList", a)?;
        }
        let group = load_group(&state, job.job_group, None).await?;
        let known = group_addresses(&state, &group).await?;
        if let Some(stranger) = list.iter().find(|a| !known.contains(&address_key(a))) {
            return Err(ApiError::field(
                "addressList",
                format!(
                    "'{stranger}' is not an executor of group '{}': a manual trigger may name only \
                     addresses registered or listed for the job's group",
                    group.app_name
                ),
            ));
        }
    }
    let mut t = Trigger::new(id, TriggerType::Manual, 0);
    t.executor_param = body.executor_param;
    t.address_list = addresses.filter(|l| !l.is_empty());
    let (t_param, t_addresses) = (t.executor_param.clone(), t.address_list.clone());
    let Some(report) = trigger_and_wait(&state.dispatcher, t).await else {
        return Err(ApiError::Unavailable(
            "the dispatcher is not running (admin shutting down?)".into(),
        ));
    };
    if report.log_ids.is_empty() {
        if state.store.get_job(id).await?.is_none() {
            return Err(ApiError::not_found(format!("job {id} does not exist")));
        }
        return Err(ApiError::Internal(format!(
            "trigger of job {id} produced no log: {}",
            report.error.unwrap_or_default()
        )));
    }
    log::info!(
        "user '{}' triggered job {id}: logs {:?}",
        principal.user.username,
        report.log_ids
    );
    audit::record(
        &state,
        &principal,
        audit::Change {
            action: "job.trigger",
            target_type: "job",
            target_id: id.into(),
            summary: job.job_desc,
            before: None,
            after: Some(serde_json::json!({
                "executorParam": t_param,
                "addressList": t_addresses,
                "logIds": report.log_ids,
            })),
        },
    )
    .await;
    Ok(HttpResponse::Ok().json(TriggerAnswer {
        log_ids: report.log_ids,
        trigger_codes: report.codes,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct CountQuery {
    count: Option<usize>,
}

/// Validates a preview count: 1–100, default 5.
pub(super) fn fire_time_count(count: Option<usize>) -> ApiResult<usize> {
    let count = count.unwrap_or(DEFAULT_FIRE_TIMES);
    if (1..=MAX_FIRE_TIMES).contains(&count) {
        Ok(count)
    } else {
        Err(ApiError::field(
            "count",
            format!("count must be between 1 and {MAX_FIRE_TIMES}"),
        ))
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct FireTimes {
    pub(super) fire_times: Vec<i64>,
}

/// `GET /jobs/{id}/next-fire-times?count=5`: a scheduled job's coming fire times, starting from
/// its stored next fire time; for a stopped job, the times after now.
#[utoipa::path(
    get,
    path = "/jobs/{id}/next-fire-times",
    tag = "jobs",
    summary = "A job's coming fire times",
    params(("id" = i32, Path, description = "The job's id"), CountQuery),
    responses(
        (status = 200, description = "The fire times, epoch ms", body = FireTimes),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn next_fire_times(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    query: web::Query<CountQuery>,
) -> ApiResult<HttpResponse> {
    let count = fire_time_count(query.count)?;
    let job = load_job(&state, &principal, path.into_inner()).await?;
    let tz = parse_timezone(&job.timezone, state.settings.timezone)
        .map_err(|e| ApiError::schedule("timezone", e))?;
    let scheduled = job.trigger_status == TRIGGER_STATUS_RUNNING
        && job.trigger_next_time > 0
        && job.trigger_next_time != AWAITING_COMPLETION;
    let fire_times = if scheduled {
        let mut times = vec![job.trigger_next_time];
        times.extend(
            timing::preview(
                job.schedule_type,
                &job.schedule_conf,
                tz,
                job.trigger_next_time,
                count - 1,
            )
            .map_err(|e| ApiError::schedule("scheduleConf", e))?,
        );
        times
    } else {
        timing::preview(job.schedule_type, &job.schedule_conf, tz, now_ms(), count)
            .map_err(|e| ApiError::schedule("scheduleConf", e))?
    };
    Ok(HttpResponse::Ok().json(FireTimes { fire_times }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> JobInfo {
        let mut j = JobInfo::new(1, "desc", "demoJobHandler");
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "0 0 9 * * ?".into();
        j
    }

    fn field_of(r: ApiResult<Tz>) -> Option<String> {
        match r {
            Err(ApiError::BadRequest { field, .. }) => field.map(|f| f.into_owned()),
            _ => None,
        }
    }

    #[test]
    fn fields_are_validated() {
        assert!(validate_fields(&valid(), Tz::UTC).is_ok());
        let mut j = valid();
        j.schedule_conf = "0 0 25 * * ?".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("scheduleConf")
        );
        let mut j = valid();
        j.schedule_type = ScheduleType::FixRate;
        j.schedule_conf = "0".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("scheduleConf")
        );
        let mut j = valid();
        j.timezone = "Mars/Olympus".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("timezone")
        );
        let mut j = valid();
        j.executor_handler.clear();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("executorHandler")
        );
        let mut j = valid();
        j.executor_timeout = -1;
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("executorTimeout")
        );
        let mut j = valid();
        j.alarm_email = "ops@example.com, nope".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("alarmEmail")
        );
    }

    #[test]
    fn unknown_enum_names_list_allowed_values() {
        let mut j = valid();
        let body = JobBody {
            executor_route_strategy: Some("SOMEWHERE".into()),
            ..Default::default()
        };
        match apply(&mut j, body) {
            Err(ApiError::BadRequest { message, field }) => {
                assert_eq!(field.as_deref(), Some("executorRouteStrategy"));
                assert!(message.contains("allowed: FIRST, LAST"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn preview_counts_are_bounded() {
        assert_eq!(fire_time_count(None).unwrap(), 5);
        assert!(fire_time_count(Some(0)).is_err());
        assert!(fire_time_count(Some(101)).is_err());
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::model::{MisfireStrategy, RouteStrategy};
    use crate::protocol::BlockStrategy;
    use crate::web::api::input::strategies::{int, object, text};

    const SCHEDULE_TYPES: &[&str] = &["NONE", "CRON", "FIX_RATE", "FIX_DELAY", "cron", "EVERY"];

    /// Create/update bodies: every field, usually plausible, sometimes anything.
    fn job_json() -> BoxedStrategy<Value> {
        object(vec![
            ("jobGroup", int(1, 3)),
            ("jobDesc", text(&["nightly report", "", "  padded  "])),
            ("author", text(&["ops", ""])),
            (
                "alarmEmail",
                text(&["", "ops@example.com", "a@b.c, d@e.f", "nope", "@x."]),
            ),
            (
                "alarmWebhook",
                text(&["", "https://hooks.example.com/x", "ftp://x", "http://"]),
            ),
            ("scheduleType", text(SCHEDULE_TYPES)),
            (
                "scheduleConf",
                text(&[
                    "0 0 12 * * ?",
                    "*/5 * * * * ?",
                    "60",
                    "0",
                    "-5",
                    "0 0 25 * * ?",
                    "",
                ]),
            ),
            (
                "timezone",
                text(&["", "UTC", "Asia/Shanghai", "Mars/Olympus"]),
            ),
            (
                "misfireStrategy",
                text(&["DO_NOTHING", "FIRE_ONCE_NOW", "LATER"]),
            ),
            (
                "executorRouteStrategy",
                text(&["FIRST", "ROUND", "SHARDING_BROADCAST", "SOMEWHERE"]),
            ),
            ("executorHandler", text(&["demoJobHandler", ""])),
            ("executorParam", text(&["", "a=1"])),
            (
                "executorBlockStrategy",
                text(&["SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY", "QUEUE"]),
            ),
            ("executorTimeout", int(-1, 100)),
            ("executorFailRetryCount", int(-1, 5)),
            ("retryIntervalSecs", int(-1, 60)),
            (
                "glueType",
                text(&["BEAN", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_JAVA"]),
            ),
            ("glueSource", text(&["echo hi", ""])),
            ("glueRemark", text(&["first version", ""])),
            (
                "childJobIds",
                prop::collection::vec(any::<i32>(), 0..60)
                    .prop_map(|v| json!(v))
                    .boxed(),
            ),
        ])
    }

    fn valid() -> JobInfo {
        let mut j = JobInfo::new(1, "desc", "demoJobHandler");
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "0 0 9 * * ?".into();
        j
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A job body is read, applied and validated, or refused with 400 naming a field; a
        /// job that passes keeps every rule the database and the scheduler rely on.
        #[test]
        fn job_bodies_are_accepted_whole_or_refused_with_a_field(body in job_json()) {
            let outcome = parse_value::<JobBody>(body).and_then(|body| {
                let mut job = valid();
                apply(&mut job, body)?;
                let tz = validate_fields(&job, Tz::UTC)?;
                Ok((job, tz))
            });
            match outcome {
                Ok((job, tz)) => {
                    prop_assert!(!job.job_desc.is_empty() && job.job_desc.chars().count() <= 255);
                    prop_assert!(job.author.chars().count() <= 64);
                    prop_assert!(timing::validate(job.schedule_type, &job.schedule_conf).is_ok());
                    prop_assert!(job.executor_param.len() <= EXECUTOR_PARAM_MAX);
                    prop_assert!(job.executor_timeout >= 0);
                    prop_assert!(job.executor_fail_retry_count >= 0);
                    prop_assert!(job.retry_interval_secs >= 0);
                    prop_assert!(crate::model::join_ids(&job.child_job_ids).len() <= 255);
                    prop_assert!(job.glue_type != GlueType::Bean || !job.executor_handler.is_empty());
                    // enums hold only known names, so the row reads back
                    prop_assert!(ScheduleType::ALL.contains(&job.schedule_type));
                    prop_assert!(MisfireStrategy::ALL.contains(&job.misfire_strategy));
                    prop_assert!(RouteStrategy::ALL.contains(&job.executor_route_strategy));
                    prop_assert!(BlockStrategy::ALL.contains(&job.executor_block_strategy));
                    // starting it answers a fire time or a 400, never a panic
                    if let Err(e) = first_fire_time(&job, tz, 1_764_633_600_000) {
                        prop_assert!(matches!(e, ApiError::BadRequest { field: Some(_), .. }), "{e:?}");
                    }
                }
                Err(ApiError::BadRequest { message, .. }) => prop_assert!(!message.is_empty()),
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }

        /// Manual trigger bodies: read, or refused with 400.
        #[test]
        fn trigger_bodies_are_read_or_refused(body in object(vec![
            ("executorParam", text(&["", "x"])),
            ("addressList", prop::collection::vec(
                prop::sample::select(vec!["http://10.0.0.1:9999/", "", "10.0.0.1", "https://h"]),
                0..3,
            ).prop_map(|v| json!(v)).boxed()),
        ])) {
            match parse_value::<TriggerBody>(body) {
                Ok(body) => {
                    if let Some(param) = &body.executor_param {
                        let _ = check_executor_param(param);
                    }
                    for a in body.address_list.iter().flatten() {
                        if let Err(e) = check_executor_address("addressList", a.trim()) {
                            prop_assert!(matches!(e, ApiError::BadRequest { .. }), "{e:?}");
                        }
                    }
                }
                Err(e) => prop_assert!(matches!(e, ApiError::BadRequest { .. }), "{e:?}"),
            }
        }

        /// Preview counts from a query: 1 to 100, else 400.
        #[test]
        fn preview_counts_are_in_range_or_refused(count in prop::option::of(any::<usize>())) {
            match fire_time_count(count) {
                Ok(n) => prop_assert!((1..=MAX_FIRE_TIMES).contains(&n)),
                Err(e) => prop_assert!(matches!(e, ApiError::BadRequest { field: Some(_), .. }), "{e:?}"),
            }
        }
    }
}
