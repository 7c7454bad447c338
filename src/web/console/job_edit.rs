//! A job's form: new, copied from another, or edited. Saving is the REST API's
//! (`POST /api/v1/jobs`, `PUT /api/v1/jobs/{id}`); the page shows its `{error, field}` beside
//! the field and previews the next fire times as the schedule is typed.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::errors::{PageError, PageResult};
use super::{nav, render, save_target, visible_groups, Nav};
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::model::{
    join_ids, GlueType, InstanceOverflow, JobGroup, JobInfo, MisfireStrategy, RouteStrategy,
    ScheduleType, TRIGGER_STATUS_STOPPED,
};
use crate::protocol::BlockStrategy;
use crate::store::InstanceCounts;
use crate::web::api::auth::Principal;
use crate::web::api::error::ApiError;
use crate::web::api::load_job;
use crate::web::AppState;

#[derive(Template)]
#[template(path = "job_edit.html")]
struct JobForm {
    nav: Nav,
    job: JobInfo,
    children: String,
    groups: Vec<JobGroup>,
    api_url: String,
    api_method: &'static str,
    default_tz: String,
    schedule_types: &'static [&'static str],
    misfire_strategies: &'static [&'static str],
    route_strategies: &'static [&'static str],
    block_strategies: Vec<&'static str>,
    glue_types: Vec<&'static str>,
    /// The job's triggers queued on its executors, as their latest beats reported them.
    queues: Vec<QueueLine>,
    overflow_policies: &'static [&'static str],
    /// Its runs holding slots of its instance cap and its fires waiting for one (capped jobs).
    instances: Option<InstanceCounts>,
}

/// The job's queue on one executor.
struct QueueLine {
    address: String,
    queued: u32,
    oldest_seconds: u64,
}

/// The job's queues on the live executors of its group (those that report their load).
async fn queues_of(
    state: &AppState,
    job: &JobInfo,
    groups: &[JobGroup],
) -> Result<Vec<QueueLine>, PageError> {
    let Some(group) = groups.iter().find(|g| g.id == job.job_group) else {
        return Ok(Vec::new());
    };
    let live = state
        .store
        .find_live_registry_for(&group.app_name, now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    Ok(live
        .into_iter()
        .filter_map(|r| {
            let queue = r.load?.jobs.into_iter().find(|q| q.job_id == job.id)?;
            Some(QueueLine {
                address: r.registry_value,
                queued: queue.queued,
                oldest_seconds: queue.oldest_queued_ms / 1000,
            })
        })
        .collect())
}

impl JobForm {
    async fn build(
        state: &AppState,
        req: &HttpRequest,
        principal: &Principal,
        job: JobInfo,
    ) -> Result<JobForm, PageError> {
        let groups: Vec<JobGroup> = visible_groups(state, principal).await?;
        let (api_url, api_method) = save_target("jobs", job.id);
        let queues = if job.id > 0 {
            queues_of(state, &job, &groups).await?
        } else {
            Vec::new()
        };
        let instances = match job.id > 0 && job.max_concurrent_instances > 0 {
            true => Some(state.store.instance_counts(job.id).await?),
            false => None,
        };
        Ok(JobForm {
            queues,
            instances,
            overflow_policies: InstanceOverflow::NAMES,
            nav: nav(req, principal, "jobs"),
            children: join_ids(&job.child_job_ids).replace(',', ", "),
            job,
            groups,
            api_url,
            api_method,
            default_tz: state.settings.timezone.name().to_string(),
            schedule_types: ScheduleType::NAMES,
            misfire_strategies: MisfireStrategy::NAMES,
            route_strategies: RouteStrategy::NAMES,
            block_strategies: BlockStrategy::ALL.iter().map(|b| b.as_str()).collect(),
            glue_types: GlueType::ALL.iter().map(|g| g.as_str()).collect(),
        })
    }
}

#[derive(Deserialize)]
pub(super) struct NewQuery {
    copy: Option<i32>,
}

/// `GET /jobs/new[?copy=ID]`: an empty form, or a copy of a job the user may see.
pub(super) async fn new(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    query: web::Query<NewQuery>,
) -> PageResult {
    let job = match query.copy {
        Some(id) => {
            let original = load_job(&state, &principal, id).await?;
            JobInfo {
                id: 0,
                job_desc: format!("{} (copy)", original.job_desc),
                trigger_status: TRIGGER_STATUS_STOPPED,
                trigger_last_time: 0,
                trigger_next_time: 0,
                ..original
            }
        }
        None => {
            let first = visible_groups(&state, &principal).await?.into_iter().next();
            let Some(group) = first else {
                return Err(ApiError::Conflict(
                    "there is no executor group to put a job in yet: create one first".into(),
                )
                .into());
            };
            JobInfo {
                schedule_type: ScheduleType::Cron,
                schedule_conf: "0 0 * * * ?".into(),
                ..JobInfo::new(group.id, "", "")
            }
        }
    };
    Ok(render(
        &JobForm::build(&state, &req, &principal, job).await?,
    ))
}

/// `GET /jobs/{id}`: the job's form.
pub(super) async fn edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i32>,
) -> PageResult {
    let job = load_job(&state, &principal, id.into_inner()).await?;
    Ok(render(
        &JobForm::build(&state, &req, &principal, job).await?,
    ))
}
