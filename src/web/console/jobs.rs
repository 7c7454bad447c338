//! The jobs page: a filtered, paged list with each job's next fire time.

use std::collections::HashMap;

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::pager::{page_number, page_size, Pager, Position};
use super::{nav, render, utc_text, visible_groups, Nav};
use crate::model::{GlueType, JobGroup, ScheduleType, TRIGGER_STATUS_STOPPED};
use crate::store::JobFilter;
use crate::web::api::auth::Principal;
use crate::web::api::error::ApiResult;
use crate::web::AppState;

/// Jobs on one page unless the reader chose another size.
const PAGE_SIZE: i64 = 20;

/// The list's filters as the page's form sends them (empty fields mean "any").
#[derive(Debug, Default, Deserialize)]
pub(super) struct JobsQuery {
    #[serde(default)]
    group: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    desc: String,
    #[serde(default)]
    handler: String,
    #[serde(default)]
    author: String,
    #[serde(default)]
    page: String,
    #[serde(default)]
    size: String,
}

/// The filters, understood; what cannot be read is left out rather than refused.
pub(super) struct JobsPageFilters {
    group: Option<i32>,
    status: Option<i32>,
    desc: String,
    handler: String,
    author: String,
    page: i64,
    size: i64,
}

impl JobsPageFilters {
    fn of(q: &JobsQuery) -> Self {
        JobsPageFilters {
            group: q.group.trim().parse().ok(),
            status: q.status.trim().parse().ok().filter(|s| *s == 0 || *s == 1),
            desc: q.desc.trim().to_string(),
            handler: q.handler.trim().to_string(),
            author: q.author.trim().to_string(),
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
        if let Some(s) = self.status {
            pairs.push(format!("status={s}"));
        }
        for (name, value) in [
            ("desc", &self.desc),
            ("handler", &self.handler),
            ("author", &self.author),
        ] {
            if !value.is_empty() {
                pairs.push(format!("{name}={}", super::url_encode(value)));
            }
        }
        pairs.push(format!("page={page}"));
        if size != PAGE_SIZE {
            pairs.push(format!("size={size}"));
        }
        format!("/jobs?{}", pairs.join("&"))
    }
}

/// One row of the list.
struct JobRow {
    id: i32,
    desc: String,
    group: String,
    schedule: String,
    handler: String,
    author: String,
    /// Whether the job runs a script (GLUE) rather than a BEAN handler.
    script: bool,
    scheduled: bool,
    next_fire: i64,
    next_fire_utc: String,
}

#[derive(Template)]
#[template(path = "jobs.html")]
struct JobsPage {
    nav: Nav,
    groups: Vec<JobGroup>,
    filter: JobsPageFilters,
    jobs: Vec<JobRow>,
    pager: Pager,
}

/// `GET /jobs?group&status&desc&handler&author&page&size`.
pub(super) async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    query: web::Query<JobsQuery>,
) -> ApiResult<HttpResponse> {
    let filter = JobsPageFilters::of(&query);
    let scope = principal.group_scope();
    let groups: Vec<JobGroup> = visible_groups(&state, &principal).await?;
    let (total, jobs) = state
        .store
        .list_jobs_scoped(
            &JobFilter {
                job_group: filter.group,
                trigger_status: filter.status,
                job_desc: Some(filter.desc.clone()),
                executor_handler: Some(filter.handler.clone()),
                author: Some(filter.author.clone()),
                offset: (filter.page - 1) * filter.size,
                limit: filter.size,
            },
            scope,
        )
        .await?;
    let titles: HashMap<i32, &str> = groups.iter().map(|g| (g.id, g.title.as_str())).collect();
    let jobs = jobs
        .into_iter()
        .map(|j| JobRow {
            id: j.id,
            script: j.glue_type != GlueType::Bean,
            group: titles
                .get(&j.job_group)
                .map_or_else(|| j.job_group.to_string(), |t| t.to_string()),
            schedule: match j.schedule_type {
                ScheduleType::None => "—".to_string(),
                other => format!("{other}: {}", j.schedule_conf),
            },
            handler: match j.glue_type {
                GlueType::Bean => j.executor_handler,
                script => script.as_str().to_string(),
            },
            desc: j.job_desc,
            author: j.author,
            scheduled: j.trigger_status != TRIGGER_STATUS_STOPPED,
            next_fire: j.trigger_next_time,
            next_fire_utc: utc_text(j.trigger_next_time),
        })
        .collect();
    let at = Position {
        page: filter.page,
        size: filter.size,
        total: Some(total),
        more: false,
    };
    Ok(render(&JobsPage {
        nav: nav(&req, &principal, "jobs"),
        pager: Pager::new(at, total.to_string(), |p, s| filter.href(p, s)),
        groups,
        filter,
        jobs,
    }))
}
