//! `/api/v1/workflows/{id}/trigger` and `/api/v1/workflow-runs`: starting runs, reading them
//! (state, context, every node with its run rows and output) and what users do to them: cancel,
//! retry, pause, resume, mark a failed node succeeded. Each keeps the run's id and is audited.

use std::collections::BTreeMap;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::body::{edge_body, node_body, EdgeBody, NodeBody};
use super::{captions, load_workflow, node_jobs, svg_answer};
use crate::actors::workflow_runner::{ActOnRun, ActionError, FireRequest, RunAction, StartRun};
use crate::model::{NodeRun, NodeState, TriggerType, WorkflowRun, EXECUTOR_PARAM_MAX};
use crate::web::api::audit;
use crate::web::api::auth::Principal;
use crate::web::api::error::answers;
use crate::web::api::error::{ApiError, ApiResult};
use crate::web::api::input::optional_json;
use crate::web::api::{paging, Page, JSON_LIMIT};
use crate::web::body_limit::LimitedBody;
use crate::web::lang::Lang;
use crate::web::AppState;
use crate::workflow::svg::{self, Drawing};

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/workflows/{id}/trigger", web::post().to(trigger))
        .route("/workflow-runs", web::get().to(list))
        .route("/workflow-runs/{id}", web::get().to(get))
        .route("/workflow-runs/{id}/graph.svg", web::get().to(graph_svg))
        .route("/workflow-runs/{id}/cancel", web::post().to(cancel))
        .route("/workflow-runs/{id}/retry", web::post().to(retry))
        .route("/workflow-runs/{id}/pause", web::post().to(pause))
        .route("/workflow-runs/{id}/resume", web::post().to(resume))
        .route(
            "/workflow-runs/{id}/nodes/{key}/mark-success",
            web::post().to(mark_success),
        );
}

/// `POST /workflows/{id}/trigger` body.
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkflowTriggerBody {
    /// What `${workflow.params}` stands for in this run.
    #[serde(default)]
    params: String,
}

/// What a trigger did.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TriggerAnswer {
    /// The run, started, queued or skipped (as the overlap policy decided).
    run_id: i64,
    /// RUNNING, QUEUED or SKIPPED.
    state: String,
    /// Why, in words.
    message: String,
}

/// A run in a list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunSummary {
    id: i64,
    workflow_id: i32,
    job_group: i32,
    /// The definition's version it started with.
    version: i32,
    /// QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED, TIMED_OUT or SKIPPED.
    state: String,
    /// No node starts while set.
    paused: bool,
    trigger_type: String,
    params: String,
    message: String,
    schedule_time: i64,
    create_time: i64,
    started_at: Option<i64>,
    finished_at: Option<i64>,
}

/// One node of a run.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeView {
    key: String,
    /// JOB or DECISION.
    kind: String,
    /// The job a JOB node runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<i32>,
    /// WAITING, RUNNING, SUCCEEDED, FAILED, SKIPPED or CANCELLED.
    state: String,
    /// The run rows of its attempts, oldest first (`GET /logs/{id}`, `/logs/{id}/content`).
    log_ids: Vec<i64>,
    /// Its output (its result when that was a JSON object), or null.
    output: Value,
    /// A DECISION node's outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<bool>,
    /// Attempts made.
    attempt: i32,
    /// Why it stands as it does.
    message: String,
    /// When its parents let it run (or its retry was due).
    ready_at: Option<i64>,
    started_at: Option<i64>,
    finished_at: Option<i64>,
}

/// A run with its nodes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunView {
    #[serde(flatten)]
    summary: RunSummary,
    /// The outputs of its nodes merged in the order they ended.
    context: Value,
    /// When it times out (null: no limit).
    deadline: Option<i64>,
    /// The nodes, in the order of the definition it started with.
    nodes: Vec<NodeView>,
    /// That definition's edges.
    edges: Vec<EdgeBody>,
}

fn time(t: i64) -> Option<i64> {
    (t > 0).then_some(t)
}

fn summary(r: &WorkflowRun) -> RunSummary {
    RunSummary {
        id: r.id,
        workflow_id: r.workflow_id,
        job_group: r.job_group,
        version: r.version,
        state: r.state.as_str().to_string(),
        paused: r.paused,
        trigger_type: r.trigger_type.as_str().to_string(),
        params: r.params.clone(),
        message: r.message.clone(),
        schedule_time: r.schedule_time,
        create_time: r.create_time,
        started_at: time(r.start_time),
        finished_at: time(r.end_time),
    }
}

fn json_or_null(text: Option<&str>) -> Value {
    text.and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null)
}

/// The run as the API shows it, nodes in the order of its definition.
pub(crate) fn run_view(run: &WorkflowRun, nodes: Vec<NodeRun>) -> RunView {
    let mut by_key: BTreeMap<String, NodeRun> =
        nodes.into_iter().map(|n| (n.node_key.clone(), n)).collect();
    let nodes = run
        .definition
        .nodes
        .iter()
        .map(|def| {
            let body: NodeBody = node_body(def);
            let n = by_key.remove(&def.key);
            NodeView {
                key: def.key.clone(),
                kind: body.kind,
                job_id: def.job_id,
                state: n
                    .as_ref()
                    .map_or(NodeState::Waiting, |n| n.state)
                    .as_str()
                    .to_string(),
                log_ids: n.as_ref().map(|n| n.log_ids.clone()).unwrap_or_default(),
                output: json_or_null(n.as_ref().and_then(|n| n.output.as_deref())),
                decision: n.as_ref().and_then(|n| n.decision),
                attempt: n.as_ref().map_or(0, |n| n.attempt),
                message: n.as_ref().map(|n| n.message.clone()).unwrap_or_default(),
                ready_at: n.as_ref().and_then(|n| time(n.ready_time)),
                started_at: n.as_ref().and_then(|n| time(n.start_time)),
                finished_at: n.as_ref().and_then(|n| time(n.end_time)),
            }
        })
        .collect();
    RunView {
        summary: summary(run),
        context: json_or_null(Some(&run.context)),
        deadline: time(run.deadline),
        nodes,
        edges: run.definition.edges.iter().map(edge_body).collect(),
    }
}

/// The run with this id if the caller may see it: 404 when missing, 403 when not permitted.
pub(crate) async fn load_run(
    state: &AppState,
    principal: &Principal,
    id: i64,
) -> ApiResult<WorkflowRun> {
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("workflow run {id} does not exist")))?;
    principal.require_group(run.job_group)?;
    Ok(run)
}

#[utoipa::path(
    post,
    path = "/workflows/{id}/trigger",
    tag = "workflows",
    summary = "Run a workflow once now (an empty body is allowed); the overlap policy decides when maxConcurrentRuns are running",
    params(("id" = i32, Path, description = "The workflow's id")),
    request_body = Option<WorkflowTriggerBody>,
    responses(
        (status = 200, description = "The run made", body = TriggerAnswer),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        (status = 503, description = "Shutting down", body = crate::web::api::error::ApiErrorBody)
    )
)]
async fn trigger(
    state: web::Data<AppState>,
    principal: Principal,
    req: HttpRequest,
    path: web::Path<i32>,
    body: LimitedBody<JSON_LIMIT>,
) -> ApiResult<HttpResponse> {
    let body: WorkflowTriggerBody = optional_json(&req, &body.0)?;
    if body.params.len() > EXECUTOR_PARAM_MAX {
        return Err(ApiError::field(
            "params",
            format!("params may be at most {EXECUTOR_PARAM_MAX} bytes"),
        ));
    }
    let w = load_workflow(&state, &principal, path.into_inner()).await?;
    let request = FireRequest {
        workflow_id: w.id,
        trigger_type: TriggerType::Api,
        params: body.params,
        schedule_time: 0,
    };
    let outcome = state
        .workflows
        .send(StartRun(request))
        .await
        .map_err(|e| ApiError::Unavailable(format!("the workflow runner is not available: {e}")))?
        .map_err(ApiError::Internal)?
        .ok_or_else(|| ApiError::not_found(format!("workflow {} does not exist", w.id)))?;
    log::info!(
        "user '{}' triggered workflow {} ({}): run {} {}",
        principal.user.username,
        w.id,
        w.name,
        outcome.run_id,
        outcome.state
    );
    audit::record(
        &state,
        &principal,
        audit::Change {
            action: "workflow.trigger",
            target_type: "workflow",
            target_id: w.id.into(),
            summary: format!("{}: run {} {}", w.name, outcome.run_id, outcome.state),
            before: None,
            after: Some(
                serde_json::json!({"runId": outcome.run_id, "state": outcome.state.as_str()}),
            ),
        },
    )
    .await;
    Ok(HttpResponse::Ok().json(TriggerAnswer {
        run_id: outcome.run_id,
        state: outcome.state.as_str().to_string(),
        message: outcome.message,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only this workflow's runs.
    workflow_id: Option<i32>,
    offset: Option<i64>,
    limit: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/workflow-runs",
    tag = "workflow-runs",
    summary = "Workflow runs, newest first",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of runs", body = crate::web::api::Page<RunSummary>),
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
    if let Some(id) = q.workflow_id {
        load_workflow(&state, &principal, id).await?;
    }
    let (total, runs) = state
        .store
        .list_runs(q.workflow_id, principal.group_scope(), offset, limit)
        .await?;
    Ok(HttpResponse::Ok().json(Page {
        total,
        items: runs.iter().map(summary).collect(),
    }))
}

#[utoipa::path(
    get,
    path = "/workflow-runs/{id}",
    tag = "workflow-runs",
    summary = "One run: its state, context and every node (state, run rows, output, times)",
    params(("id" = i64, Path, description = "The run's id")),
    responses(
        (status = 200, description = "The run", body = RunView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    path: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let run = load_run(&state, &principal, path.into_inner()).await?;
    let nodes = state.store.run_nodes(run.id).await?;
    let mut view = run_view(&run, nodes);
    // the messages are for people: in the reader's language, as error texts are (the run page
    // draws them from this answer); states and codes stay as they are
    let lang = Lang::of(&req);
    if lang != Lang::En {
        view.summary.message = lang.message(&view.summary.message).into_owned();
        for node in &mut view.nodes {
            node.message = lang.message(&node.message).into_owned();
        }
    }
    Ok(HttpResponse::Ok().json(view))
}

#[utoipa::path(
    get,
    path = "/workflow-runs/{id}/graph.svg",
    tag = "workflow-runs",
    summary = "The run's graph as SVG, each node coloured by its state",
    params(("id" = i64, Path, description = "The run's id")),
    responses(
        (status = 200, description = "An SVG image", content_type = "image/svg+xml", body = String),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn graph_svg(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let run = load_run(&state, &principal, path.into_inner()).await?;
    let states: BTreeMap<String, NodeState> = state
        .store
        .run_nodes(run.id)
        .await?
        .into_iter()
        .map(|n| (n.node_key, n.state))
        .collect();
    let jobs = node_jobs(&state, &run.definition, run.job_group).await?;
    let drawing = Drawing {
        states: Some(&states),
        captions: captions(&run.definition, &jobs),
    };
    Ok(svg_answer(svg::render(&run.definition, &drawing)))
}

/// Does `action` to run `id` through the runner; answers the run as it stands after.
async fn act(
    state: &AppState,
    principal: &Principal,
    id: i64,
    action: RunAction,
    name: &'static str,
) -> ApiResult<HttpResponse> {
    let before = load_run(state, principal, id).await?;
    let by = principal.user.username.clone();
    let done = state
        .workflows
        .send(ActOnRun {
            run_id: id,
            action,
            by: by.clone(),
        })
        .await
        .map_err(|e| ApiError::Unavailable(format!("the workflow runner is not available: {e}")))?;
    match done {
        Ok(()) => {}
        Err(ActionError::NotFound) => {
            return Err(ApiError::not_found(format!(
                "workflow run {id} does not exist"
            )))
        }
        Err(ActionError::NoNode(key)) => {
            return Err(ApiError::not_found(format!(
                "workflow run {id} has no node '{key}'"
            )))
        }
        Err(ActionError::Conflict(why)) => return Err(ApiError::Conflict(why)),
        Err(ActionError::Store(why)) => return Err(ApiError::Internal(why)),
    }
    let after = load_run(state, principal, id).await?;
    log::info!(
        "user '{by}' did {name} on workflow run {id}: now {}",
        after.state
    );
    audit::record(
        state,
        principal,
        audit::Change {
            action: name,
            target_type: "workflow_run",
            target_id: id,
            summary: format!("workflow {} run {id}: {}", after.workflow_id, after.message),
            before: audit::snapshot(&summary(&before)),
            after: audit::snapshot(&summary(&after)),
        },
    )
    .await;
    let nodes = state.store.run_nodes(id).await?;
    Ok(HttpResponse::Ok().json(run_view(&after, nodes)))
}

macro_rules! run_action {
    ($fn:ident, $path:literal, $summary:literal, $action:expr, $name:literal) => {
        #[utoipa::path(
                    post,
                    path = $path,
                    tag = "workflow-runs",
                    summary = $summary,
                    params(("id" = i64, Path, description = "The run's id")),
                    responses(
                        (status = 200, description = "The run after the action", body = RunView),
                        answers::Forbidden,
                        answers::NotFound,
                        answers::Conflict
                    )
                )]
        async fn $fn(
            state: web::Data<AppState>,
            principal: Principal,
            path: web::Path<i64>,
        ) -> ApiResult<HttpResponse> {
            act(&state, &principal, path.into_inner(), $action, $name).await
        }
    };
}

run_action!(
    cancel,
    "/workflow-runs/{id}/cancel",
    "Cancel a queued or running run: waiting nodes are cancelled, running ones killed on their executors",
    RunAction::Cancel,
    "workflow_run.cancel"
);
run_action!(
    retry,
    "/workflow-runs/{id}/retry",
    "Retry a FAILED, CANCELLED or TIMED_OUT run: its failed and cancelled nodes and what follows them run again, the succeeded ones stay (409 while maxConcurrentRuns runs are running)",
    RunAction::Retry,
    "workflow_run.retry"
);
run_action!(
    pause,
    "/workflow-runs/{id}/pause",
    "Pause a running run: no node starts until it is resumed (running nodes finish)",
    RunAction::Pause,
    "workflow_run.pause"
);
run_action!(
    resume,
    "/workflow-runs/{id}/resume",
    "Resume a paused run",
    RunAction::Resume,
    "workflow_run.resume"
);

#[utoipa::path(
    post,
    path = "/workflow-runs/{id}/nodes/{key}/mark-success",
    tag = "workflow-runs",
    summary = "Count a FAILED node as succeeded: what follows it runs",
    params(
        ("id" = i64, Path, description = "The run's id"),
        ("key" = String, Path, description = "The node's key")
    ),
    responses(
        (status = 200, description = "The run after the action", body = RunView),
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn mark_success(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(i64, String)>,
) -> ApiResult<HttpResponse> {
    let (id, key) = path.into_inner();
    act(
        &state,
        &principal,
        id,
        RunAction::MarkSuccess(key),
        "workflow_run.mark_success",
    )
    .await
}
