//! `/api/v1/workflows`: workflow definitions, their schedules, their graphs, validation and
//! manual triggers; `/api/v1/workflow-runs` ([`runs`]): their runs and what users do to them.
//!
//! A workflow belongs to one executor group, and every JOB node runs a job of that group: the
//! caller needs that group's permission for anything about the workflow or its runs, as for
//! jobs. Every change is in the audit log.

use std::collections::{HashMap, HashSet};

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::audit;
use super::auth::Principal;
use super::checks::check_webhook_target;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use super::{load_group, paging, Page};
use crate::actors::timing_rules::PRE_READ_MS;
use crate::clock::now_ms;
use crate::model::{
    Definition, JobInfo, MisfireStrategy, OverlapPolicy, ScheduleType, Workflow,
    TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use crate::store::WorkflowFilter;
use crate::timing::{self, parse_timezone};
use crate::web::AppState;
use crate::workflow::graph::{layers, Problem};
use crate::workflow::svg::{self, Drawing};

pub(crate) mod body;
pub(crate) mod runs;

use body::{
    apply, edge_body, graph_problems, node_body, refused, validate_fields, EdgeBody, NodeBody,
    WorkflowBody,
};

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/workflows", web::get().to(list))
        .route("/workflows", web::post().to(create))
        .route("/workflows/validate", web::post().to(validate))
        .route("/workflows/{id}", web::get().to(get))
        .route("/workflows/{id}", web::put().to(update))
        .route("/workflows/{id}", web::delete().to(delete))
        .route("/workflows/{id}/start", web::post().to(start))
        .route("/workflows/{id}/stop", web::post().to(stop))
        .route("/workflows/{id}/graph.svg", web::get().to(graph_svg))
        .configure(runs::routes);
}

/// A workflow as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkflowView {
    id: i32,
    name: String,
    job_group: i32,
    description: String,
    schedule_type: &'static str,
    schedule_conf: String,
    timezone: String,
    misfire_strategy: &'static str,
    max_concurrent_runs: i32,
    overlap_policy: &'static str,
    queue_max: i32,
    run_timeout_secs: i32,
    alarm_email: String,
    alarm_webhook: String,
    nodes: Vec<NodeBody>,
    edges: Vec<EdgeBody>,
    /// Counts every change of nodes or edges; a run shows the one it started with.
    version: i32,
    trigger_status: i32,
    trigger_last_time: i64,
    trigger_next_time: i64,
    add_time: i64,
    update_time: i64,
}

impl From<&Workflow> for WorkflowView {
    fn from(w: &Workflow) -> Self {
        WorkflowView {
            id: w.id,
            name: w.name.clone(),
            job_group: w.job_group,
            description: w.description.clone(),
            schedule_type: w.schedule_type.as_str(),
            schedule_conf: w.schedule_conf.clone(),
            timezone: w.timezone.clone(),
            misfire_strategy: w.misfire_strategy.as_str(),
            max_concurrent_runs: w.max_concurrent_runs,
            overlap_policy: w.overlap_policy.as_str(),
            queue_max: w.queue_max,
            run_timeout_secs: w.run_timeout_secs,
            alarm_email: w.alarm_email.clone(),
            alarm_webhook: w.alarm_webhook.clone(),
            nodes: w.definition.nodes.iter().map(node_body).collect(),
            edges: w.definition.edges.iter().map(edge_body).collect(),
            version: w.version,
            trigger_status: w.trigger_status,
            trigger_last_time: w.trigger_last_time,
            trigger_next_time: w.trigger_next_time,
            add_time: w.add_time,
            update_time: w.update_time,
        }
    }
}

/// A new workflow of group `job_group` with the defaults.
fn new_workflow(job_group: i32) -> Workflow {
    Workflow {
        id: 0,
        job_group,
        name: String::new(),
        description: String::new(),
        schedule_type: ScheduleType::None,
        schedule_conf: String::new(),
        timezone: String::new(),
        misfire_strategy: MisfireStrategy::DoNothing,
        max_concurrent_runs: 1,
        overlap_policy: OverlapPolicy::Skip,
        queue_max: 10,
        run_timeout_secs: 0,
        alarm_email: String::new(),
        alarm_webhook: String::new(),
        definition: Definition::default(),
        version: 1,
        trigger_status: TRIGGER_STATUS_STOPPED,
        trigger_last_time: 0,
        trigger_next_time: 0,
        owner_id: 0,
        add_time: 0,
        update_time: 0,
    }
}

/// The workflow with this id if the caller may see it: 404 when missing, 403 when not permitted.
pub(crate) async fn load_workflow(
    state: &AppState,
    principal: &Principal,
    id: i32,
) -> ApiResult<Workflow> {
    let w = state
        .store
        .get_workflow(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("workflow {id} does not exist")))?;
    principal.require_group(w.job_group)?;
    Ok(w)
}

/// The jobs of executor group `group` that the JOB nodes of `def` name (a job of another group
/// is as if missing: its name is not shown, and a node naming it is refused); none for a
/// definition over the size limits, which is refused for that alone.
pub(crate) async fn node_jobs(
    state: &AppState,
    def: &Definition,
    group: i32,
) -> ApiResult<HashMap<i32, JobInfo>> {
    if !crate::workflow::graph::size_problems(def).is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<i32> = def
        .nodes
        .iter()
        .filter_map(|n| n.job_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    Ok(state
        .store
        .get_jobs(&ids)
        .await?
        .into_iter()
        .filter(|j| j.job_group == group)
        .map(|j| (j.id, j))
        .collect())
}

/// Checks everything about `w` before it is stored: fields, group, graph, jobs, expressions, and
/// the webhook's target when it changed from `old`.
async fn check(
    state: &AppState,
    principal: &Principal,
    w: &Workflow,
    old: Option<&Workflow>,
) -> ApiResult<()> {
    validate_fields(w, state.settings.timezone)?;
    load_group(state, w.job_group, Some("jobGroup")).await?;
    principal.require_group(w.job_group)?;
    let found = graph_problems(
        &w.definition,
        w.job_group,
        &node_jobs(state, &w.definition, w.job_group).await?,
    );
    if !found.is_empty() {
        return Err(refused(&found));
    }
    if old.is_none_or(|o| o.alarm_webhook != w.alarm_webhook) {
        check_webhook_target(state, &w.alarm_webhook).await?;
    }
    Ok(())
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only this group's.
    job_group: Option<i32>,
    /// Name contains this.
    name: Option<String>,
    offset: Option<i64>,
    limit: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/workflows",
    tag = "workflows",
    summary = "Workflows, filtered and paged",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of workflows", body = super::Page<WorkflowView>),
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
    let job_group = q.job_group.filter(|g| *g > 0);
    if let Some(g) = job_group {
        principal.require_group(g)?;
    }
    let filter = WorkflowFilter {
        job_group,
        name: q.name,
        offset,
        limit,
    };
    let (total, items) = state
        .store
        .list_workflows(&filter, principal.group_scope())
        .await?;
    Ok(HttpResponse::Ok().json(Page {
        total,
        items: items.iter().map(WorkflowView::from).collect(),
    }))
}

#[utoipa::path(
    get,
    path = "/workflows/{id}",
    tag = "workflows",
    summary = "One workflow",
    params(("id" = i32, Path, description = "The workflow's id")),
    responses(
        (status = 200, description = "The workflow", body = WorkflowView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let w = load_workflow(&state, &principal, path.into_inner()).await?;
    Ok(HttpResponse::Ok().json(WorkflowView::from(&w)))
}

/// The stored workflow, or 404 if it vanished meanwhile.
async fn reload(state: &AppState, id: i32) -> ApiResult<Workflow> {
    state
        .store
        .get_workflow(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("workflow {id} does not exist")))
}

#[utoipa::path(
    post,
    path = "/workflows",
    tag = "workflows",
    summary = "Create a workflow (stopped); refused whole, with every problem named, when anything is wrong",
    request_body = WorkflowBody,
    responses(
        (status = 201, description = "Created", body = WorkflowView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<WorkflowBody>,
) -> ApiResult<HttpResponse> {
    let body = body.into_inner();
    let Some(group) = body.job_group else {
        return Err(ApiError::field("jobGroup", "jobGroup is required"));
    };
    if body.nodes.is_none() {
        return Err(ApiError::field(
            "nodes",
            "nodes are required: a workflow needs at least one node",
        ));
    }
    let mut w = new_workflow(group);
    if let Err(found) = apply(&mut w, &body)? {
        return Err(refused(&found));
    }
    check(&state, &principal, &w, None).await?;
    let now = now_ms();
    (w.owner_id, w.add_time, w.update_time) = (principal.user.id, now, now);
    let id = state.store.insert_workflow(&w).await?;
    log::info!(
        "user '{}' created workflow {id} ({})",
        principal.user.username,
        w.name
    );
    let view = WorkflowView::from(&reload(&state, id).await?);
    record(&state, &principal, "workflow.create", id, None, Some(&view)).await;
    Ok(HttpResponse::Created().json(view))
}

#[utoipa::path(
    put,
    path = "/workflows/{id}",
    tag = "workflows",
    summary = "Change a workflow; omitted fields keep their value. Runs in flight keep the definition they started with",
    params(("id" = i32, Path, description = "The workflow's id")),
    request_body = WorkflowBody,
    responses(
        (status = 200, description = "Changed", body = WorkflowView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    body: Json<WorkflowBody>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_workflow(&state, &principal, id).await?;
    let mut w = old.clone();
    if let Err(found) = apply(&mut w, &body.into_inner())? {
        return Err(refused(&found));
    }
    check(&state, &principal, &w, Some(&old)).await?;
    let now = now_ms();
    if w.definition != old.definition {
        w.version = old.version + 1;
    }
    (w.owner_id, w.update_time) = (principal.user.id, now);
    let schedule_changed = (w.schedule_type, &w.schedule_conf, &w.timezone)
        != (old.schedule_type, &old.schedule_conf, &old.timezone);
    if old.trigger_status == TRIGGER_STATUS_RUNNING && schedule_changed {
        match w.schedule_type {
            ScheduleType::None => {
                w.trigger_status = TRIGGER_STATUS_STOPPED;
                w.trigger_next_time = 0;
            }
            _ => w.trigger_next_time = first_fire_time(&state, &w, now)?,
        }
    }
    if !state.store.update_workflow(&w).await? {
        return Err(ApiError::not_found(format!("workflow {id} does not exist")));
    }
    let view = WorkflowView::from(&reload(&state, id).await?);
    let before = WorkflowView::from(&old);
    record(
        &state,
        &principal,
        "workflow.update",
        id,
        Some(&before),
        Some(&view),
    )
    .await;
    Ok(HttpResponse::Ok().json(view))
}

/// The first fire time of `w` after now + 5 s, or a 400 naming why there is none.
fn first_fire_time(state: &AppState, w: &Workflow, now: i64) -> ApiResult<i64> {
    let tz = parse_timezone(&w.timezone, state.settings.timezone)
        .map_err(|e| ApiError::schedule("timezone", e))?;
    match timing::next_fire_time(w.schedule_type, &w.schedule_conf, tz, now + PRE_READ_MS) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Err(ApiError::field(
            "scheduleConf",
            "the schedule has no future fire time",
        )),
        Err(e) => Err(ApiError::schedule("scheduleConf", e)),
    }
}

#[utoipa::path(
    delete,
    path = "/workflows/{id}",
    tag = "workflows",
    summary = "Delete a workflow with its runs; refused (409) while a run is queued or running",
    params(("id" = i32, Path, description = "The workflow's id")),
    responses(
        (status = 204, description = "Deleted"),
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_workflow(&state, &principal, id).await?;
    let open = state.store.count_open_runs_of(id).await?;
    if open > 0 {
        return Err(ApiError::Conflict(format!(
            "workflow {id} has {open} queued or running run(s): cancel them first"
        )));
    }
    if !state.store.delete_workflow(id).await? {
        return Err(ApiError::not_found(format!("workflow {id} does not exist")));
    }
    log::info!("user '{}' deleted workflow {id}", principal.user.username);
    let before = WorkflowView::from(&old);
    record(
        &state,
        &principal,
        "workflow.delete",
        id,
        Some(&before),
        None,
    )
    .await;
    Ok(HttpResponse::NoContent().finish())
}

#[utoipa::path(
    post,
    path = "/workflows/{id}/start",
    tag = "workflows",
    summary = "Start a workflow's schedule",
    params(("id" = i32, Path, description = "The workflow's id")),
    responses(
        (status = 200, description = "Started", body = WorkflowView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn start(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_workflow(&state, &principal, id).await?;
    if old.schedule_type == ScheduleType::None {
        return Err(ApiError::field(
            "scheduleType",
            "a workflow with schedule type NONE cannot be started; trigger it instead",
        ));
    }
    let now = now_ms();
    let next = first_fire_time(&state, &old, now)?;
    if !state.store.start_workflow(id, next, now).await? {
        return Err(ApiError::not_found(format!("workflow {id} does not exist")));
    }
    let view = WorkflowView::from(&reload(&state, id).await?);
    let before = WorkflowView::from(&old);
    record(
        &state,
        &principal,
        "workflow.start",
        id,
        Some(&before),
        Some(&view),
    )
    .await;
    Ok(HttpResponse::Ok().json(view))
}

#[utoipa::path(
    post,
    path = "/workflows/{id}/stop",
    tag = "workflows",
    summary = "Stop a workflow's schedule (runs in flight go on)",
    params(("id" = i32, Path, description = "The workflow's id")),
    responses(
        (status = 200, description = "Stopped", body = WorkflowView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn stop(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = path.into_inner();
    let old = load_workflow(&state, &principal, id).await?;
    if !state.store.stop_workflow(id, now_ms()).await? {
        return Err(ApiError::not_found(format!("workflow {id} does not exist")));
    }
    let view = WorkflowView::from(&reload(&state, id).await?);
    let before = WorkflowView::from(&old);
    record(
        &state,
        &principal,
        "workflow.stop",
        id,
        Some(&before),
        Some(&view),
    )
    .await;
    Ok(HttpResponse::Ok().json(view))
}

/// What `POST /workflows/validate` answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Validation {
    /// Whether the body could be saved as it is.
    valid: bool,
    /// The nodes' keys in topological layers (each layer's parents in earlier ones), when valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    layers: Option<Vec<Vec<String>>>,
    /// Every problem, each with its field (`nodes[2].jobId`, `edges[0].when`, `name`).
    errors: Vec<ProblemView>,
}

/// One problem of a body.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ProblemView {
    field: String,
    error: String,
}

impl From<Problem> for ProblemView {
    fn from(p: Problem) -> Self {
        ProblemView {
            field: p.field,
            error: p.error,
        }
    }
}

#[utoipa::path(
    post,
    path = "/workflows/validate",
    tag = "workflows",
    summary = "Check a workflow body without saving it: its topological layers, or every problem",
    request_body = WorkflowBody,
    responses(
        (status = 200, description = "The verdict", body = Validation),
        answers::BadInput,
        answers::Forbidden
    )
)]
async fn validate(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<WorkflowBody>,
) -> ApiResult<HttpResponse> {
    let body = body.into_inner();
    let group = body.job_group.unwrap_or(0);
    let mut errors: Vec<ProblemView> = Vec::new();
    let mut w = new_workflow(group);
    match apply(&mut w, &body) {
        Err(ApiError::BadRequest { message, field }) => errors.push(ProblemView {
            field: field.map(|f| f.into_owned()).unwrap_or_default(),
            error: message,
        }),
        Err(other) => return Err(other),
        Ok(Err(found)) => errors.extend(found.into_iter().map(ProblemView::from)),
        Ok(Ok(())) => {}
    }
    if body.nodes.is_none() {
        errors.push(ProblemView {
            field: "nodes".into(),
            error: "nodes are required: a workflow needs at least one node".into(),
        });
    }
    if errors.is_empty() {
        if let Err(ApiError::BadRequest { message, field }) =
            validate_fields(&w, state.settings.timezone)
        {
            errors.push(ProblemView {
                field: field.map(|f| f.into_owned()).unwrap_or_default(),
                error: message,
            });
        }
        if group <= 0 {
            errors.push(ProblemView {
                field: "jobGroup".into(),
                error: "jobGroup is required".into(),
            });
        } else {
            principal.require_group(group)?;
            if state.store.get_group(group).await?.is_none() {
                errors.push(ProblemView {
                    field: "jobGroup".into(),
                    error: format!("executor group {group} does not exist"),
                });
            }
        }
        let jobs = node_jobs(&state, &w.definition, group).await?;
        errors.extend(
            graph_problems(&w.definition, group, &jobs)
                .into_iter()
                .map(ProblemView::from),
        );
    }
    let answer = match errors.is_empty() {
        true => Validation {
            valid: true,
            layers: layers(&w.definition).ok(),
            errors,
        },
        false => Validation {
            valid: false,
            layers: None,
            errors,
        },
    };
    Ok(HttpResponse::Ok().json(answer))
}

/// Each JOB node's caption in a drawing: its job's name.
pub(crate) fn captions(
    def: &Definition,
    jobs: &HashMap<i32, JobInfo>,
) -> std::collections::BTreeMap<String, String> {
    def.nodes
        .iter()
        .filter_map(|n| {
            let job = jobs.get(&n.job_id?)?;
            Some((n.key.clone(), format!("{} · {}", job.id, job.job_desc)))
        })
        .collect()
}

/// An SVG answer that runs nothing: no script, no outside resource.
pub(crate) fn svg_answer(body: String) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("image/svg+xml; charset=utf-8")
        .insert_header((
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'",
        ))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(body)
}

#[utoipa::path(
    get,
    path = "/workflows/{id}/graph.svg",
    tag = "workflows",
    summary = "The workflow's graph as SVG, in topological layers",
    params(("id" = i32, Path, description = "The workflow's id")),
    responses(
        (status = 200, description = "An SVG image", content_type = "image/svg+xml", body = String),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn graph_svg(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let w = load_workflow(&state, &principal, path.into_inner()).await?;
    let jobs = node_jobs(&state, &w.definition, w.job_group).await?;
    let drawing = Drawing {
        states: None,
        captions: captions(&w.definition, &jobs),
    };
    Ok(svg_answer(svg::render(&w.definition, &drawing)))
}

/// Records a change of workflow `id` in the audit log.
async fn record(
    state: &AppState,
    principal: &Principal,
    action: &'static str,
    id: i32,
    before: Option<&WorkflowView>,
    after: Option<&WorkflowView>,
) {
    let summary = after.or(before).map(|v| v.name.clone()).unwrap_or_default();
    audit::record(
        state,
        principal,
        audit::Change {
            action,
            target_type: "workflow",
            target_id: id.into(),
            summary,
            before: before.and_then(audit::snapshot),
            after: after.and_then(audit::snapshot),
        },
    )
    .await;
}
