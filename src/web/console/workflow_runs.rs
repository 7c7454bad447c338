//! A workflow's runs: the paged list, and one run with its graph coloured by node state, a
//! timeline bar per node, each node's logs, output and message, and the run's actions. The run
//! page's script polls `GET /api/v1/workflow-runs/{id}` while the run is open and redraws.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::errors::PageResult;
use super::pager::{page_number, page_size, Pager, Position};
use super::workflows::{js_texts, pill, TRIGGER_TEXTS};
use super::{nav, render, utc_text, Lang, Nav};
use crate::model::{NodeKind, Workflow, WorkflowRun};
use crate::web::api::auth::Principal;
use crate::web::api::error::ApiError;
use crate::web::api::workflows::runs::{load_run, run_view};
use crate::web::api::workflows::{captions, load_workflow, node_jobs};
use crate::web::AppState;

/// Runs on one page.
const PAGE_SIZE: i64 = 20;

/// What the run page's script says.
const RUN_TEXTS: &[&str] = &[
    "confirm_mark_success",
    "decision",
    "gantt_ran",
    "gantt_waited",
    "graph_empty",
    "kind_DECISION",
    "kind_JOB",
    "log",
    "mark_success",
    "never",
    "retry_run",
    "state_CANCELLED",
    "state_FAILED",
    "state_QUEUED",
    "state_RUNNING",
    "state_SKIPPED",
    "state_SUCCEEDED",
    "state_TIMED_OUT",
    "state_WAITING",
];

/// A message cut to `max` characters for a table cell.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The run list's page and size as the pager sends them (what cannot be read is the default).
#[derive(Debug, Default, Deserialize)]
pub(super) struct RunsQuery {
    #[serde(default)]
    page: String,
    #[serde(default)]
    size: String,
}

/// One row of the list.
struct RunRow {
    id: i64,
    state: &'static str,
    pill: &'static str,
    paused: bool,
    version: i32,
    trigger_type: &'static str,
    params: String,
    message: String,
    created: i64,
    created_utc: String,
    started: i64,
    started_utc: String,
    finished: i64,
    finished_utc: String,
}

#[derive(Template)]
#[template(path = "workflow_runs.html")]
struct RunsPage {
    nav: Nav,
    workflow: Workflow,
    runs: Vec<RunRow>,
    pager: Pager,
    texts: String,
}

impl RunsPage {
    /// The state's words in the page's language.
    fn state_text(&self, state: &str) -> &'static str {
        self.nav.t(&format!("state_{state}"))
    }
}

/// `GET /workflows/{id}/runs?page&size`: the workflow's runs, newest first.
pub(super) async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i32>,
    query: web::Query<RunsQuery>,
) -> PageResult {
    let workflow = load_workflow(&state, &principal, id.into_inner()).await?;
    let (page, size) = (page_number(&query.page), page_size(&query.size, PAGE_SIZE));
    let lang = Lang::of(&req);
    let (total, items) = state
        .store
        .list_runs(
            Some(workflow.id),
            principal.group_scope(),
            (page - 1) * size,
            size,
        )
        .await?;
    let runs = items
        .into_iter()
        .map(|r| RunRow {
            id: r.id,
            state: r.state.as_str(),
            pill: pill(r.state.as_str()),
            paused: r.paused && !r.state.ended(),
            version: r.version,
            trigger_type: r.trigger_type.as_str(),
            params: cut(&r.params, 60),
            message: cut(&lang.message(&r.message), 120),
            created: r.create_time,
            created_utc: utc_text(r.create_time),
            started: r.start_time,
            started_utc: utc_text(r.start_time),
            finished: r.end_time,
            finished_utc: utc_text(r.end_time),
        })
        .collect();
    let id = workflow.id;
    let href = |p: i64, s: i64| match s == PAGE_SIZE {
        true => format!("/workflows/{id}/runs?page={p}"),
        false => format!("/workflows/{id}/runs?page={p}&size={s}"),
    };
    let at = Position {
        page,
        size,
        total: Some(total),
        more: false,
    };
    let nav = nav(&req, &principal, "workflows");
    Ok(render(&RunsPage {
        texts: js_texts(nav.lang, TRIGGER_TEXTS),
        nav,
        pager: Pager::new(at, total.to_string(), href),
        workflow,
        runs,
    }))
}

#[derive(Template)]
#[template(path = "workflow_run.html")]
struct RunPage {
    nav: Nav,
    run: WorkflowRun,
    workflow_name: String,
    state_text: &'static str,
    pill: &'static str,
    /// The run as `GET /api/v1/workflow-runs/{id}` answers it, for the script's first drawing.
    run_json: String,
    /// Each JOB node's caption (`id · job name`), as a JSON object by key.
    captions_json: String,
    texts: String,
}

/// `GET /workflow-runs/{id}`: the run, drawn and followed by the page's script.
pub(super) async fn detail(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i64>,
) -> PageResult {
    let run = load_run(&state, &principal, id.into_inner()).await?;
    let nodes = state.store.run_nodes(run.id).await?;
    let view = serde_json::to_string(&run_view(&run, nodes))
        .map_err(|e| ApiError::Internal(format!("workflow run {}: {e}", run.id)))?;
    let jobs = node_jobs(&state, &run.definition, run.job_group).await?;
    let mut captions = captions(&run.definition, &jobs);
    // a DECISION node is known by its expression (the run's JSON does not carry it)
    for n in &run.definition.nodes {
        if let Some(expression) = n
            .expression
            .as_ref()
            .filter(|_| n.kind == NodeKind::Decision)
        {
            captions.insert(n.key.clone(), expression.clone());
        }
    }
    let captions = serde_json::to_string(&captions)
        .map_err(|e| ApiError::Internal(format!("workflow run {}: {e}", run.id)))?;
    let workflow_name = state
        .store
        .get_workflow(run.workflow_id)
        .await?
        .map(|w| w.name)
        .unwrap_or_default();
    let nav = nav(&req, &principal, "workflows");
    let state_name = run.state.as_str();
    Ok(render(&RunPage {
        texts: js_texts(nav.lang, RUN_TEXTS),
        state_text: nav.t(&format!("state_{state_name}")),
        pill: pill(state_name),
        nav,
        workflow_name,
        run_json: view,
        captions_json: captions,
        run,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunState;

    #[test]
    fn every_state_has_words_and_a_pill() {
        for key in RUN_TEXTS {
            for lang in [Lang::En, Lang::Zh] {
                assert_ne!(lang.t(key), "?", "no text for {key:?}");
            }
        }
        for state in RunState::NAMES {
            assert_ne!(Lang::Zh.t(&format!("state_{state}")), "?", "{state}");
        }
        assert_eq!(pill("TIMED_OUT"), "fail");
        assert_eq!(pill("CANCELLED"), "");
    }
}
