//! The workflows page: the workflows the user may see, filtered by group and name, with their
//! schedules, newest run and actions (edit, run once, start/stop, runs, delete while no run is
//! open), all through the REST API.

use std::collections::HashMap;

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::errors::PageResult;
use super::pager::{page_number, page_size, Pager, Position};
use super::{nav, render, url_encode, utc_text, visible_groups, Lang, Nav};
use crate::model::{JobGroup, ScheduleType, TRIGGER_STATUS_STOPPED};
use crate::store::WorkflowFilter;
use crate::web::api::auth::Principal;
use crate::web::AppState;

/// Workflows on one page.
const PAGE_SIZE: i64 = 20;

/// The list's filters as the page's form sends them (empty fields mean "any").
#[derive(Debug, Default, Deserialize)]
pub(super) struct WorkflowsQuery {
    #[serde(default)]
    group: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    page: String,
    #[serde(default)]
    size: String,
}

/// The filters, understood; what cannot be read is left out rather than refused.
pub(super) struct WorkflowsPageFilters {
    group: Option<i32>,
    name: String,
    page: i64,
    size: i64,
}

impl WorkflowsPageFilters {
    fn of(q: &WorkflowsQuery) -> Self {
        WorkflowsPageFilters {
            group: q.group.trim().parse().ok().filter(|g| *g > 0),
            name: q.name.trim().to_string(),
            page: page_number(&q.page),
            size: page_size(&q.size, PAGE_SIZE),
        }
    }

    /// Whether the list is limited to group `id`.
    fn is_group(&self, id: impl std::borrow::Borrow<i32>) -> bool {
        self.group == Some(*id.borrow())
    }

    /// This list at another page and size.
    fn href(&self, page: i64, size: i64) -> String {
        let mut pairs = vec![];
        if let Some(g) = self.group {
            pairs.push(format!("group={g}"));
        }
        if !self.name.is_empty() {
            pairs.push(format!("name={}", url_encode(&self.name)));
        }
        pairs.push(format!("page={page}"));
        if size != PAGE_SIZE {
            pairs.push(format!("size={size}"));
        }
        format!("/workflows?{}", pairs.join("&"))
    }
}

/// One row of the list.
struct WorkflowRow {
    id: i32,
    name: String,
    group: String,
    schedule: String,
    /// Whether the schedule can be started at all (NONE cannot).
    schedulable: bool,
    scheduled: bool,
    version: i32,
    nodes: usize,
    next_fire: i64,
    next_fire_utc: String,
    /// The newest run: its id, state words and pill class.
    last_run: Option<(i64, &'static str, &'static str)>,
    /// Whether a run is queued or running (the API refuses to delete the workflow then).
    busy: bool,
}

#[derive(Template)]
#[template(path = "workflows.html")]
struct WorkflowsPage {
    nav: Nav,
    groups: Vec<JobGroup>,
    filter: WorkflowsPageFilters,
    workflows: Vec<WorkflowRow>,
    pager: Pager,
    texts: String,
}

/// `GET /workflows?group&name&page&size`.
pub(super) async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    query: web::Query<WorkflowsQuery>,
) -> PageResult {
    let filter = WorkflowsPageFilters::of(&query);
    let groups: Vec<JobGroup> = visible_groups(&state, &principal).await?;
    // a group the user may not see lists nothing rather than failing the page
    let group = filter.group.filter(|g| principal.can_access(*g));
    let (total, items) = match (filter.group, group) {
        (Some(_), None) => (0, Vec::new()),
        _ => {
            state
                .store
                .list_workflows(
                    &WorkflowFilter {
                        job_group: group,
                        name: Some(filter.name.clone()),
                        offset: (filter.page - 1) * PAGE_SIZE,
                        limit: PAGE_SIZE,
                    },
                    principal.group_scope(),
                )
                .await?
        }
    };
    let titles: HashMap<i32, &str> = groups.iter().map(|g| (g.id, g.title.as_str())).collect();
    let nav = nav(&req, &principal, "workflows");
    // two small queries per row: a page holds at most PAGE_SIZE workflows
    let mut last_runs = HashMap::new();
    let mut busy = HashMap::new();
    for w in &items {
        busy.insert(w.id, state.store.count_open_runs_of(w.id).await? > 0);
        let (_, newest) = state
            .store
            .list_runs(Some(w.id), principal.group_scope(), 0, 1)
            .await?;
        if let Some(r) = newest.first() {
            let name = r.state.as_str();
            last_runs.insert(w.id, (r.id, nav.t(&format!("state_{name}")), pill(name)));
        }
    }
    let workflows = items
        .into_iter()
        .map(|w| WorkflowRow {
            last_run: last_runs.get(&w.id).copied(),
            busy: busy.get(&w.id).copied().unwrap_or(false),
            id: w.id,
            group: titles
                .get(&w.job_group)
                .map_or_else(|| w.job_group.to_string(), |t| t.to_string()),
            schedule: match w.schedule_type {
                ScheduleType::None => "—".to_string(),
                other => format!("{other}: {}", w.schedule_conf),
            },
            schedulable: w.schedule_type != ScheduleType::None,
            scheduled: w.trigger_status != TRIGGER_STATUS_STOPPED,
            version: w.version,
            nodes: w.definition.nodes.len(),
            next_fire: w.trigger_next_time,
            next_fire_utc: utc_text(w.trigger_next_time),
            name: w.name,
        })
        .collect();
    let at = Position {
        page: filter.page,
        size: filter.size,
        total: Some(total),
        more: false,
    };
    Ok(render(&WorkflowsPage {
        texts: js_texts(nav.lang, TRIGGER_TEXTS),
        nav,
        pager: Pager::new(at, total.to_string(), |p, s| filter.href(p, s)),
        groups,
        filter,
        workflows,
    }))
}

/// What the trigger dialog's script says.
pub(super) const TRIGGER_TEXTS: &[&str] = &["open_run", "wf_triggered"];

/// The page texts `keys` as a JSON object for the page's script (which builds parts of the page
/// itself and has no other way to learn the language's words).
pub(super) fn js_texts(lang: Lang, keys: &[&str]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = keys
        .iter()
        .map(|k| (k.to_string(), serde_json::Value::from(lang.t(k))))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// The pill class of a run or node state.
pub(super) fn pill(state: &str) -> &'static str {
    match state {
        "SUCCEEDED" => "ok",
        "FAILED" | "TIMED_OUT" => "fail",
        "RUNNING" | "QUEUED" => "run",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_read_leniently_and_kept_in_page_links() {
        let q = WorkflowsQuery {
            group: " 3 ".into(),
            name: "night & day".into(),
            page: "x".into(),
            size: "50".into(),
        };
        let f = WorkflowsPageFilters::of(&q);
        assert_eq!((f.group, f.page), (Some(3), 1));
        assert!(f.is_group(3));
        assert_eq!(
            f.href(2, f.size),
            "/workflows?group=3&name=night%20%26%20day&page=2&size=50"
        );
        assert_eq!(
            f.href(1, PAGE_SIZE),
            "/workflows?group=3&name=night%20%26%20day&page=1"
        );
    }

    #[test]
    fn script_texts_are_translated_json() {
        let texts = js_texts(Lang::Zh, TRIGGER_TEXTS);
        let parsed: serde_json::Value = serde_json::from_str(&texts).unwrap();
        for key in TRIGGER_TEXTS {
            let text = parsed[key].as_str().unwrap();
            assert!(text != "?" && !text.is_empty(), "{key}");
        }
    }
}
