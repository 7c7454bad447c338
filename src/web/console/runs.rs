//! The runs (XXL-JOB's "logs"): a filtered, paged list, and one run with its trigger message,
//! result and the executor's log, followed live until the run has a result.

use std::collections::HashMap;

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;

use super::errors::PageResult;
use super::pager::{page_number, page_size, Pager, Position};
use super::run_cause::{admission_reason, cut, Cause};
use super::{nav, render, url_encode, utc_text, visible_groups, Lang, Nav};
use crate::model::{Admission, JobGroup, RunRow};
use crate::store::{LogFilter, LogStatus};
use crate::web::api::auth::Principal;
use crate::web::api::logs::load_log;
use crate::web::AppState;

/// Runs on one page.
const PAGE_SIZE: i64 = 20;
/// Runs counted for the pager; past this the page says `10000+` (an exact count of a million
/// rows is a full scan on PostgreSQL).
const COUNT_UP_TO: i64 = 10_000;

/// The list's filters as the page's form sends them (empty fields mean "any").
#[derive(Debug, Default, Deserialize)]
pub(super) struct RunsQuery {
    #[serde(default)]
    group: String,
    #[serde(default)]
    job: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    page: String,
    #[serde(default)]
    size: String,
}

/// The filters, understood; what cannot be read is left out.
pub(super) struct RunsPageFilters {
    group: Option<i32>,
    job: Option<i32>,
    status: Option<LogStatus>,
    status_text: String,
    from: Option<i64>,
    to: Option<i64>,
    page: i64,
    size: i64,
}

impl RunsPageFilters {
    fn of(q: &RunsQuery) -> Self {
        let status = q.status.trim().parse::<LogStatus>().ok();
        RunsPageFilters {
            group: q.group.trim().parse().ok().filter(|g| *g > 0),
            job: q.job.trim().parse().ok().filter(|j| *j > 0),
            status_text: if status.is_some() {
                q.status.trim().to_string()
            } else {
                String::new()
            },
            status,
            from: q.from.trim().parse().ok().filter(|t| *t > 0),
            to: q.to.trim().parse().ok().filter(|t| *t > 0),
            page: page_number(&q.page),
            size: page_size(&q.size, PAGE_SIZE),
        }
    }

    fn is_group(&self, id: impl std::borrow::Borrow<i32>) -> bool {
        self.group == Some(*id.borrow())
    }

    fn job_text(&self) -> String {
        self.job.map(|j| j.to_string()).unwrap_or_default()
    }

    fn start_ms(&self) -> i64 {
        self.from.unwrap_or(0)
    }

    fn end_ms(&self) -> i64 {
        self.to.unwrap_or(0)
    }

    /// This list at another page and size.
    fn href(&self, page: i64, size: i64) -> String {
        let mut pairs = vec![];
        for (name, value) in [
            ("group", self.group.map(i64::from)),
            ("job", self.job.map(i64::from)),
            ("from", self.from),
            ("to", self.to),
        ] {
            if let Some(v) = value {
                pairs.push(format!("{name}={v}"));
            }
        }
        if !self.status_text.is_empty() {
            pairs.push(format!("status={}", url_encode(&self.status_text)));
        }
        pairs.push(format!("page={page}"));
        if size != PAGE_SIZE {
            pairs.push(format!("size={size}"));
        }
        format!("/runs?{}", pairs.join("&"))
    }
}

/// How a run stands, for its pill.
fn outcome(log: &RunRow) -> (&'static str, &'static str) {
    match log.admission {
        Admission::Queued => return ("run", "state_QUEUED"),
        Admission::Skipped => return ("fail", "state_SKIPPED"),
        _ => {}
    }
    match (log.trigger_code, log.handle_code) {
        (_, 200) => ("ok", "success"),
        (_, code) if code > 0 => ("fail", "fail"),
        (200, _) => ("run", "running"),
        (0, _) => ("run", "pending"),
        _ => ("fail", "fail"),
    }
}

/// One row of the list.
struct RunListItem {
    id: i64,
    job_id: i32,
    job: String,
    trigger_type: &'static str,
    trigger_time: i64,
    trigger_utc: String,
    address: String,
    pill: &'static str,
    state: &'static str,
    handle_msg: String,
    /// Why it failed, when it did.
    cause: Option<CauseLine>,
    running: bool,
}

/// A failure's cause as a list shows it: its sentence's key, the executor, the words.
struct CauseLine {
    key: &'static str,
    address: String,
    detail: String,
}

#[derive(Template)]
#[template(path = "runs.html")]
struct RunsPage {
    nav: Nav,
    groups: Vec<JobGroup>,
    filter: RunsPageFilters,
    runs: Vec<RunListItem>,
    /// Says the count, or `10000+` past [`COUNT_UP_TO`].
    pager: Pager,
    /// The job picker's text: `#id description` of the job filtered on.
    job_label: String,
}

/// `GET /runs?group&job&status&from&to&page&size`.
pub(super) async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    query: web::Query<RunsQuery>,
) -> PageResult {
    let filter = RunsPageFilters::of(&query);
    let lang = Lang::of(&req);
    let groups: Vec<JobGroup> = visible_groups(&state, &principal).await?;
    let (total, logs) = state
        .store
        .list_logs_scoped(
            &LogFilter {
                job_group: filter.group,
                job_id: filter.job,
                status: filter.status,
                admission: None,
                from: filter.from,
                to: filter.to,
                offset: (filter.page - 1) * filter.size,
                limit: filter.size,
                count_up_to: Some(COUNT_UP_TO),
            },
            principal.group_scope(),
        )
        .await?;
    // the picker names the job filtered on, when the reader may see it
    let job_label = match filter.job {
        Some(id) => match state.store.get_job(id).await? {
            Some(j) if principal.can_access(j.job_group) => format!("#{id} {}", j.job_desc),
            _ => format!("#{id}"),
        },
        None => String::new(),
    };
    let mut job_ids: Vec<i32> = logs.iter().map(|l| l.job_id).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let names: HashMap<i32, String> = state
        .store
        .get_jobs(&job_ids)
        .await?
        .into_iter()
        .map(|j| (j.id, j.job_desc))
        .collect();
    let runs: Vec<RunListItem> = logs
        .into_iter()
        .map(|l| {
            let (pill, state) = outcome(&l);
            let trigger_text = plain_text(l.trigger_msg.as_deref().unwrap_or_default());
            let cause = Cause::of(&l, &trigger_text)
                .map(|c| c.worded(lang))
                .map(|c| CauseLine {
                    key: c.key(),
                    address: c.address().to_string(),
                    detail: c.detail(120),
                });
            RunListItem {
                cause,
                id: l.id,
                job_id: l.job_id,
                job: names.get(&l.job_id).cloned().unwrap_or_default(),
                trigger_type: l.trigger_type.as_str(),
                trigger_time: l.trigger_time,
                trigger_utc: utc_text(l.trigger_time),
                address: l.executor_address.clone().unwrap_or_default(),
                pill,
                state,
                handle_msg: cut(l.handle_msg.as_deref().unwrap_or_default(), 120),
                running: state == "running",
            }
        })
        .collect();
    // past the cap the count is unknown: a full page may have a next one
    let capped = total > COUNT_UP_TO;
    let at = Position {
        page: filter.page,
        size: filter.size,
        total: (!capped).then_some(total),
        more: match capped {
            true => runs.len() as i64 == filter.size,
            false => filter.page * filter.size < total,
        },
    };
    let said = match capped {
        true => format!("{COUNT_UP_TO}+"),
        false => total.to_string(),
    };
    Ok(render(&RunsPage {
        nav: nav(&req, &principal, "runs"),
        pager: Pager::new(at, said, |p, s| filter.href(p, s)),
        job_label,
        groups,
        filter,
        runs,
    }))
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunPage {
    nav: Nav,
    run: RunRow,
    job: String,
    pill: &'static str,
    state: &'static str,
    trigger_msg: String,
    trigger_utc: String,
    handle_utc: String,
    running: bool,
    /// Why it waits for a slot of its instance cap, while it does (a kill takes it off the
    /// queue).
    queued: Option<String>,
    /// Why it failed, when it did.
    cause: Option<Cause>,
    /// The body of the call that runs the job again with this run's parameter.
    rerun_body: String,
}

/// `GET /runs/{id}`: the run, with its log followed by the page's script.
pub(super) async fn detail(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i64>,
) -> PageResult {
    let run = load_log(&state, &principal, id.into_inner()).await?;
    let job = state
        .store
        .get_job(run.job_id)
        .await?
        .map(|j| j.job_desc)
        .unwrap_or_default();
    let (pill, status) = outcome(&run);
    let lang = Lang::of(&req);
    let trigger_msg = plain_text(run.trigger_msg.as_deref().unwrap_or_default());
    let cause = Cause::of(&run, &trigger_msg).map(|c| c.worded(lang));
    let queued = (run.admission == Admission::Queued)
        .then(|| lang.message(&admission_reason(&trigger_msg)).into_owned());
    // the stored message is English (logs and API clients read it so); its lines are worded
    // for the reader, those the catalogue does not know kept as they are
    let trigger_msg = trigger_msg
        .lines()
        .map(|line| lang.message(line))
        .collect::<Vec<_>>()
        .join("\n");
    let rerun_body = serde_json::json!({
        "executorParam": run.executor_param.clone().unwrap_or_default()
    })
    .to_string();
    Ok(render(&RunPage {
        cause,
        rerun_body,
        nav: nav(&req, &principal, "runs"),
        job,
        pill,
        state: status,
        trigger_msg,
        trigger_utc: utc_text(run.trigger_time),
        handle_utc: utc_text(run.handle_time),
        running: status == "running",
        queued,
        run,
    }))
}

/// A trigger message (HTML, as XXL-JOB writes it) as plain text: line breaks kept, tags
/// dropped; what is left is escaped by the template like any other value.
fn plain_text(html: &str) -> String {
    let html = html.replace("<br>", "\n").replace("<br/>", "\n");
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    let mut chars = html.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // as in HTML, `<` opens a tag only before a letter or `/`
            '<' if !in_tag
                && chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphabetic() || *n == '/') =>
            {
                in_tag = true
            }
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_messages_lose_their_tags_not_their_text() {
        assert_eq!(
            plain_text("a：1<br><span style=\"x\"> >>Trigger<< </span><br>b"),
            "a：1\n >>Trigger<< \nb"
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_character() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("日本語の文", 3), "日本語…");
    }
}
