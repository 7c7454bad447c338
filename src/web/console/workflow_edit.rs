//! A workflow's editor: its fields, its nodes (each a job of the workflow's group, or a DECISION
//! with an expression) and edges, and its graph drawn as it changes. The page's script asks
//! `POST /api/v1/workflows/validate` as the user edits and shows each problem beside its field;
//! saving is the REST API's (`POST /api/v1/workflows`, `PUT /api/v1/workflows/{id}`).

use actix_web::{web, HttpRequest};
use askama::Template;

use super::errors::{PageError, PageResult};
use super::workflows::js_texts;
use super::{nav, render, save_target, visible_groups, Nav};
use crate::model::{
    Definition, JobGroup, MisfireStrategy, OverlapPolicy, ScheduleType, Workflow,
    TRIGGER_STATUS_STOPPED,
};
use crate::web::api::auth::Principal;
use crate::web::api::error::ApiError;
use crate::web::api::workflows::{load_workflow, WorkflowView};
use crate::web::AppState;

/// A workflow's schedule types (FIX_DELAY has no meaning for a DAG).
const SCHEDULE_TYPES: &[&str] = &["NONE", "CRON", "FIX_RATE"];
/// The conditions an edge may have.
const EDGE_WHENS: &[&str] = &["SUCCESS", "FAILURE", "ALWAYS", "TRUE", "FALSE"];

/// What the editor's script says (it builds the node and edge rows itself).
const EDITOR_TEXTS: &[&str] = &[
    "add_edge",
    "choose_job",
    "edge_from",
    "edge_to",
    "edge_when",
    "expression",
    "graph_empty",
    "graph_valid",
    "job",
    "join",
    "kind_DECISION",
    "kind_JOB",
    "node_key",
    "node_params",
    "no_group_jobs",
    "not_in_group",
    "not_saved",
    "optional",
    "problems",
    "remove",
    "retries_short",
    "timeout_short",
];

#[derive(Template)]
#[template(path = "workflow_edit.html")]
struct WorkflowForm {
    nav: Nav,
    workflow: Workflow,
    groups: Vec<JobGroup>,
    api_url: String,
    api_method: &'static str,
    default_tz: String,
    /// The nodes and edges as the API shows them, for the script.
    graph_json: String,
    texts: String,
    schedule_types: &'static [&'static str],
    misfire_strategies: &'static [&'static str],
    overlap_policies: &'static [&'static str],
    edge_whens: &'static [&'static str],
}

impl WorkflowForm {
    fn build(
        state: &AppState,
        req: &HttpRequest,
        principal: &Principal,
        groups: Vec<JobGroup>,
        workflow: Workflow,
    ) -> Result<WorkflowForm, PageError> {
        let (api_url, api_method) = save_target("workflows", workflow.id);
        let view = serde_json::to_value(WorkflowView::from(&workflow))
            .map_err(|e| ApiError::Internal(format!("workflow {}: {e}", workflow.id)))?;
        let graph_json = serde_json::json!({ "nodes": view["nodes"], "edges": view["edges"] });
        let nav = nav(req, principal, "workflows");
        Ok(WorkflowForm {
            texts: js_texts(nav.lang, EDITOR_TEXTS),
            nav,
            workflow,
            groups,
            api_url,
            api_method,
            default_tz: state.settings.timezone.name().to_string(),
            graph_json: graph_json.to_string(),
            schedule_types: SCHEDULE_TYPES,
            misfire_strategies: MisfireStrategy::NAMES,
            overlap_policies: OverlapPolicy::NAMES,
            edge_whens: EDGE_WHENS,
        })
    }
}

/// An empty workflow of `job_group` with the API's defaults (a POST without these fields would
/// get the same).
fn blank(job_group: i32) -> Workflow {
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
        version: 0,
        trigger_status: TRIGGER_STATUS_STOPPED,
        trigger_last_time: 0,
        trigger_next_time: 0,
        owner_id: 0,
        add_time: 0,
        update_time: 0,
    }
}

/// `GET /workflows/new`: an empty editor in the user's first group.
pub(super) async fn new(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
) -> PageResult {
    let groups = visible_groups(&state, &principal).await?;
    let Some(group) = groups.first() else {
        return Err(ApiError::Conflict(
            "there is no executor group to put a workflow in yet: create one first".into(),
        )
        .into());
    };
    let workflow = blank(group.id);
    let form = WorkflowForm::build(&state, &req, &principal, groups, workflow)?;
    Ok(render(&form))
}

/// `GET /workflows/{id}`: the workflow's editor.
pub(super) async fn edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i32>,
) -> PageResult {
    let workflow = load_workflow(&state, &principal, id.into_inner()).await?;
    let groups = visible_groups(&state, &principal).await?;
    let form = WorkflowForm::build(&state, &req, &principal, groups, workflow)?;
    Ok(render(&form))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::console::Lang;

    #[test]
    fn every_script_text_is_translated() {
        for key in EDITOR_TEXTS {
            for lang in [Lang::En, Lang::Zh] {
                assert_ne!(lang.t(key), "?", "no text for {key:?}");
            }
        }
    }

    #[test]
    fn a_blank_workflow_has_the_apis_defaults() {
        let w = blank(4);
        assert_eq!(
            (w.job_group, w.max_concurrent_runs, w.queue_max),
            (4, 1, 10)
        );
        assert_eq!(w.overlap_policy, OverlapPolicy::Skip);
    }
}
