//! A workflow as the API reads and shows it, and every rule a body must satisfy before it is
//! stored: each field's, the graph's (keys, kinds, edges, no cycle), the jobs' (in the
//! workflow's group, not broadcast), the expressions' (they compile).

use std::collections::HashMap;

use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::model::{
    Definition, EdgeDef, JobInfo, MisfireStrategy, NodeDef, NodeKind, OverlapPolicy, RouteStrategy,
    ScheduleType, Workflow, EXECUTOR_PARAM_MAX,
};
use crate::timing::{self, parse_timezone};
use crate::web::api::checks::{check_alarm_fields, max_chars, parse_enum};
use crate::web::api::error::{ApiError, ApiResult, Problems};
use crate::workflow::decision;
use crate::workflow::graph::{problems, size_problems, Problem};

/// Most runs of one workflow that may be active at once.
pub const MAX_CONCURRENT_RUNS_MAX: i32 = 100;
/// Most runs that may wait in a workflow's queue.
pub const QUEUE_MAX_MAX: i32 = 1_000;
/// Longest run timeout: 30 days.
pub const RUN_TIMEOUT_MAX_SECS: i32 = 30 * 86_400;

/// One node as the API reads and shows it.
#[derive(Debug, Clone, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NodeBody {
    /// Unique in the workflow: letters, digits, `_` and `-`, at most 64.
    pub key: String,
    /// `JOB` or `DECISION`.
    #[serde(default)]
    pub kind: String,
    /// The job a JOB node runs (of the workflow's executor group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<i32>,
    /// Replaces the job's executorParam; may hold `${context.KEY}` and `${workflow.params}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
    /// A DECISION node's CEL expression over `context` and `workflow.params`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// `ALL` (the default) or `ANY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<String>,
    /// Retries of a failed JOB node (0–10), instead of the job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<i32>,
    /// Seconds a JOB node's run may take, instead of the job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<i32>,
}

/// One edge as the API reads and shows it.
#[derive(Debug, Clone, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EdgeBody {
    /// The source node's key.
    pub from: String,
    /// The target node's key.
    pub to: String,
    /// `SUCCESS` (the default), `FAILURE`, `ALWAYS`, or `TRUE`/`FALSE` out of a DECISION node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

/// Create/update body. On update, omitted fields keep their value (nodes and edges each as a
/// whole); enum fields are read as text so that a bad value names its field.
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkflowBody {
    pub(super) name: Option<String>,
    pub(super) job_group: Option<i32>,
    pub(super) description: Option<String>,
    /// `NONE`, `CRON` or `FIX_RATE`.
    pub(super) schedule_type: Option<String>,
    pub(super) schedule_conf: Option<String>,
    pub(super) timezone: Option<String>,
    /// `DO_NOTHING` or `FIRE_ONCE_NOW`.
    pub(super) misfire_strategy: Option<String>,
    /// 1 (the default) to 100.
    pub(super) max_concurrent_runs: Option<i32>,
    /// `SKIP` (the default), `QUEUE`, `CANCEL_OLD` or `ALLOW`.
    pub(super) overlap_policy: Option<String>,
    /// Most runs waiting under QUEUE (default 10).
    pub(super) queue_max: Option<i32>,
    /// Seconds a run may take; 0 none.
    pub(super) run_timeout_secs: Option<i32>,
    pub(super) alarm_email: Option<String>,
    pub(super) alarm_webhook: Option<String>,
    pub(super) nodes: Option<Vec<NodeBody>>,
    pub(super) edges: Option<Vec<EdgeBody>>,
}

/// A node of a stored definition as the API shows it.
pub(crate) fn node_body(n: &NodeDef) -> NodeBody {
    NodeBody {
        key: n.key.clone(),
        kind: n.kind.as_str().to_string(),
        job_id: n.job_id,
        params: n.params.clone(),
        expression: n.expression.clone(),
        join: Some(n.join.as_str().to_string()),
        retries: n.retries,
        timeout_secs: n.timeout_secs,
    }
}

/// An edge of a stored definition as the API shows it.
pub(crate) fn edge_body(e: &EdgeDef) -> EdgeBody {
    EdgeBody {
        from: e.from.clone(),
        to: e.to.clone(),
        when: Some(e.when.as_str().to_string()),
    }
}

/// The nodes and edges read, or every problem with their names (kinds, joins, conditions).
pub(crate) fn definition_of(
    nodes: &[NodeBody],
    edges: &[EdgeBody],
) -> Result<Definition, Vec<Problem>> {
    let mut found = Vec::new();
    let mut def = Definition::default();
    for (i, n) in nodes.iter().enumerate() {
        let kind = match n.kind.trim() {
            "" => {
                found.push(problem(
                    format!("nodes[{i}].kind"),
                    "kind is required: JOB or DECISION",
                ));
                NodeKind::Job
            }
            k => k.parse().unwrap_or_else(|e| {
                found.push(problem(format!("nodes[{i}].kind"), format!("{e}")));
                NodeKind::Job
            }),
        };
        let join = match n.join.as_deref().map(str::trim).filter(|j| !j.is_empty()) {
            None => crate::model::Join::All,
            Some(j) => j.parse().unwrap_or_else(|e| {
                found.push(problem(format!("nodes[{i}].join"), format!("{e}")));
                crate::model::Join::All
            }),
        };
        def.nodes.push(NodeDef {
            key: n.key.trim().to_string(),
            kind,
            job_id: n.job_id,
            params: n.params.clone(),
            expression: n.expression.clone().filter(|e| !e.trim().is_empty()),
            join,
            retries: n.retries,
            timeout_secs: n.timeout_secs,
        });
    }
    for (i, e) in edges.iter().enumerate() {
        let when = match e.when.as_deref().map(str::trim).filter(|w| !w.is_empty()) {
            None => crate::model::EdgeWhen::Success,
            Some(w) => w.parse().unwrap_or_else(|err| {
                found.push(problem(format!("edges[{i}].when"), format!("{err}")));
                crate::model::EdgeWhen::Success
            }),
        };
        def.edges.push(EdgeDef {
            from: e.from.trim().to_string(),
            to: e.to.trim().to_string(),
            when,
        });
    }
    match found.is_empty() {
        true => Ok(def),
        false => Err(found),
    }
}

fn problem(field: String, error: impl Into<String>) -> Problem {
    Problem {
        field,
        error: error.into(),
    }
}

/// Copies the given fields onto `w`; the definition is replaced when nodes or edges are given.
pub(super) fn apply(w: &mut Workflow, body: &WorkflowBody) -> ApiResult<Result<(), Vec<Problem>>> {
    if let Some(v) = &body.name {
        w.name = v.trim().to_string();
    }
    if let Some(v) = body.job_group {
        w.job_group = v;
    }
    if let Some(v) = &body.description {
        w.description = v.clone();
    }
    if let Some(v) = &body.schedule_type {
        w.schedule_type = parse_enum("scheduleType", v)?;
    }
    if let Some(v) = &body.schedule_conf {
        w.schedule_conf = v.trim().to_string();
    }
    if let Some(v) = &body.timezone {
        w.timezone = v.trim().to_string();
    }
    if let Some(v) = &body.misfire_strategy {
        w.misfire_strategy = parse_enum::<MisfireStrategy>("misfireStrategy", v)?;
    }
    if let Some(v) = body.max_concurrent_runs {
        w.max_concurrent_runs = v;
    }
    if let Some(v) = &body.overlap_policy {
        w.overlap_policy = parse_enum::<OverlapPolicy>("overlapPolicy", v)?;
    }
    if let Some(v) = body.queue_max {
        w.queue_max = v;
    }
    if let Some(v) = body.run_timeout_secs {
        w.run_timeout_secs = v;
    }
    if let Some(v) = &body.alarm_email {
        w.alarm_email = v.trim().to_string();
    }
    if let Some(v) = &body.alarm_webhook {
        w.alarm_webhook = v.trim().to_string();
    }
    if body.nodes.is_some() || body.edges.is_some() {
        let nodes: Vec<NodeBody> = match &body.nodes {
            Some(n) => n.clone(),
            None => w.definition.nodes.iter().map(node_body).collect(),
        };
        let edges: Vec<EdgeBody> = match &body.edges {
            Some(e) => e.clone(),
            None => w.definition.edges.iter().map(edge_body).collect(),
        };
        match definition_of(&nodes, &edges) {
            Ok(def) => w.definition = def,
            Err(found) => return Ok(Err(found)),
        }
    }
    Ok(Ok(()))
}

/// Checks the fields that need no database; returns the workflow's time zone.
pub(super) fn validate_fields(w: &Workflow, default_tz: Tz) -> ApiResult<Tz> {
    if w.name.is_empty() {
        return Err(ApiError::field("name", "name is required"));
    }
    max_chars("name", &w.name, 128)?;
    max_chars("description", &w.description, 1024)?;
    if !matches!(
        w.schedule_type,
        ScheduleType::None | ScheduleType::Cron | ScheduleType::FixRate
    ) {
        return Err(ApiError::field(
            "scheduleType",
            format!(
                "a workflow's scheduleType is NONE, CRON or FIX_RATE, not {}",
                w.schedule_type
            ),
        ));
    }
    max_chars("scheduleConf", &w.schedule_conf, 128)?;
    if w.schedule_type == ScheduleType::Cron && w.schedule_conf.is_empty() {
        return Err(ApiError::field(
            "scheduleConf",
            "a CRON workflow needs a cron expression in scheduleConf",
        ));
    }
    timing::validate(w.schedule_type, &w.schedule_conf)
        .map_err(|e| ApiError::schedule("scheduleConf", e))?;
    max_chars("timezone", &w.timezone, 64)?;
    let tz =
        parse_timezone(&w.timezone, default_tz).map_err(|e| ApiError::schedule("timezone", e))?;
    if !(1..=MAX_CONCURRENT_RUNS_MAX).contains(&w.max_concurrent_runs) {
        return Err(ApiError::field(
            "maxConcurrentRuns",
            format!("maxConcurrentRuns must be 1 to {MAX_CONCURRENT_RUNS_MAX}"),
        ));
    }
    if !(0..=QUEUE_MAX_MAX).contains(&w.queue_max) {
        return Err(ApiError::field(
            "queueMax",
            format!("queueMax must be 0 to {QUEUE_MAX_MAX}"),
        ));
    }
    if !(0..=RUN_TIMEOUT_MAX_SECS).contains(&w.run_timeout_secs) {
        return Err(ApiError::field(
            "runTimeoutSecs",
            format!("runTimeoutSecs must be 0 (none) to {RUN_TIMEOUT_MAX_SECS} (30 days)"),
        ));
    }
    check_alarm_fields(&w.alarm_email, &w.alarm_webhook)?;
    Ok(tz)
}

/// Every problem of the graph and of its nodes' jobs and expressions; `jobs` holds the jobs the
/// nodes name that exist (any group: one of another group is refused like a missing one, so
/// the answer tells nobody which ids exist elsewhere).
pub(crate) fn graph_problems(
    def: &Definition,
    job_group: i32,
    jobs: &HashMap<i32, JobInfo>,
) -> Vec<Problem> {
    let mut found = problems(def);
    if !size_problems(def).is_empty() {
        return found;
    }
    // the expressions of every DECISION node, compiled together on one thread
    let mut decisions: Vec<(usize, String)> = Vec::new();
    for (i, node) in def.nodes.iter().enumerate() {
        if let Some(id) = node.job_id.filter(|_| node.kind == NodeKind::Job) {
            match jobs.get(&id).filter(|j| j.job_group == job_group) {
                None => found.push(problem(
                    format!("nodes[{i}].jobId"),
                    format!("job {id} does not exist in this workflow's executor group ({job_group})"),
                )),
                Some(job) if job.executor_route_strategy == RouteStrategy::ShardingBroadcast => {
                    found.push(problem(
                        format!("nodes[{i}].jobId"),
                        format!(
                            "job {id} routes SHARDING_BROADCAST: a workflow node is one run on one executor; give the job another route"
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        if node
            .params
            .as_ref()
            .is_some_and(|p| p.len() > EXECUTOR_PARAM_MAX)
        {
            found.push(problem(
                format!("nodes[{i}].params"),
                format!("params may be at most {EXECUTOR_PARAM_MAX} bytes"),
            ));
        }
        if node.kind == NodeKind::Decision {
            let expression = node.expression.as_deref().unwrap_or_default();
            let fits = expression.len() <= crate::workflow::graph::EXPRESSION_MAX;
            if !expression.trim().is_empty() && fits {
                decisions.push((i, expression.to_string()));
            }
        }
    }
    let (places, expressions): (Vec<usize>, Vec<String>) = decisions.into_iter().unzip();
    for (i, why) in places.into_iter().zip(decision::syntax_errors(expressions)) {
        if let Some(why) = why {
            found.push(problem(format!("nodes[{i}].expression"), why));
        }
    }
    found
}

/// A 400 naming every problem of `found` as every form of the API does: one problem as `error`
/// and `field`, several in `errors` too, each worded on its own so a reader's language reaches
/// all of them.
pub(crate) fn refused(found: &[Problem]) -> ApiError {
    let mut problems = Problems::default();
    for p in found {
        problems.note(ApiError::field(p.field.clone(), p.error.clone()));
    }
    problems
        .into_result()
        .err()
        .unwrap_or_else(|| ApiError::bad_request("the workflow is not valid"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(keys: &[&str]) -> Vec<NodeBody> {
        keys.iter()
            .map(|k| NodeBody {
                key: k.to_string(),
                kind: "JOB".into(),
                job_id: Some(1),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn names_of_kinds_joins_and_conditions_are_read_or_named() {
        let mut n = nodes(&["a", "b"]);
        n[1].kind = "SCRIPT".into();
        n[0].join = Some("MOST".into());
        let e = vec![EdgeBody {
            from: "a".into(),
            to: "b".into(),
            when: Some("SOMETIMES".into()),
        }];
        let found = definition_of(&n, &e).unwrap_err();
        let fields: Vec<&str> = found.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["nodes[0].join", "nodes[1].kind", "edges[0].when"]);
        assert!(found[1].error.contains("JOB"), "{}", found[1].error);
        let def = definition_of(&nodes(&["a"]), &[]).unwrap();
        assert_eq!(def.nodes[0].join, crate::model::Join::All);
    }

    #[test]
    fn jobs_of_another_group_and_broadcast_jobs_are_refused() {
        let def = definition_of(&nodes(&["a", "b", "c"]), &[]).unwrap();
        let mut def = def;
        def.nodes[1].job_id = Some(2);
        def.nodes[2].job_id = Some(3);
        let mut own = JobInfo::new(7, "own", "h");
        own.id = 1;
        let mut other = JobInfo::new(8, "other", "h");
        other.id = 2;
        let mut broadcast = JobInfo::new(7, "all", "h");
        broadcast.id = 3;
        broadcast.executor_route_strategy = RouteStrategy::ShardingBroadcast;
        let jobs = HashMap::from([(1, own), (2, other), (3, broadcast)]);
        let found = graph_problems(&def, 7, &jobs);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].field, "nodes[1].jobId");
        assert!(found[0]
            .error
            .contains("does not exist in this workflow's executor group"));
        assert!(found[1].error.contains("SHARDING_BROADCAST"));
    }

    #[test]
    fn a_bad_expression_is_refused_when_saved() {
        let mut n = nodes(&["d"]);
        n[0].kind = "DECISION".into();
        n[0].job_id = None;
        n[0].expression = Some("context.rows >".into());
        let def = definition_of(&n, &[]).unwrap();
        let found = graph_problems(&def, 1, &HashMap::new());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].field, "nodes[0].expression");
        let e = refused(&found);
        assert!(
            matches!(&e, ApiError::BadRequest { field: Some(f), message }
                if f == "nodes[0].expression" && message.starts_with("expression does not compile")),
            "{e:?}"
        );
    }

    #[test]
    fn several_problems_are_refused_each_with_its_field() {
        let found = vec![
            problem("nodes[0].key".into(), "a node needs a key"),
            problem("edges[1].when".into(), "when must be SUCCESS"),
        ];
        let ApiError::Invalid(each) = refused(&found) else {
            panic!("several problems answer with every one of them");
        };
        let fields: Vec<&str> = each.iter().map(|p| p.field.as_ref()).collect();
        assert_eq!(fields, ["nodes[0].key", "edges[1].when"]);
        assert_eq!(each[0].message, "a node needs a key");
    }
}
