//! The audit log page (administrators): who changed what, when, before and after.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::audit_change::{FieldChange, Shown};
use super::errors::PageResult;
use super::{nav, render, url_encode, utc_text, Nav};
use crate::web::api::audit::filter_of;
use crate::web::api::auth::Principal;
use crate::web::AppState;

const PAGE_SIZE: i64 = 30;

#[derive(Debug, Default, Deserialize)]
pub(super) struct AuditQuery {
    #[serde(default)]
    user: String,
    #[serde(default)]
    target: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    page: String,
}

/// One entry as shown.
struct Row {
    time: i64,
    time_utc: String,
    username: String,
    action: String,
    target_type: String,
    target_id: i64,
    link: Option<String>,
    summary: String,
    changes: Vec<FieldChange>,
}

#[derive(Template)]
#[template(path = "audit.html")]
struct AuditPage {
    nav: Nav,
    query: AuditQuery,
    rows: Vec<Row>,
    total: i64,
    prev_href: Option<String>,
    next_href: Option<String>,
}

fn href(q: &AuditQuery, page: i64) -> String {
    format!(
        "/audit?user={}&target={}&id={}&action={}&page={page}",
        url_encode(q.user.trim()),
        url_encode(q.target.trim()),
        url_encode(q.id.trim()),
        url_encode(q.action.trim())
    )
}

/// `GET /audit?user&target&id&action&page`.
pub(super) async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    query: web::Query<AuditQuery>,
) -> PageResult {
    principal.require_admin()?;
    let q = query.into_inner();
    let page: i64 = q.page.trim().parse().ok().filter(|p| *p >= 1).unwrap_or(1);
    let mut filter = filter_of(
        Some(q.user.clone()),
        Some(q.target.clone()),
        q.id.trim().parse().ok(),
        Some(q.action.clone()),
    );
    filter.offset = (page - 1) * PAGE_SIZE;
    filter.limit = PAGE_SIZE;
    let (total, entries) = state.store.list_audit(&filter).await?;
    let rows = entries
        .into_iter()
        .map(|e| {
            let changes = match serde_json::from_str::<Value>(&e.changes) {
                Ok(Value::Object(map)) => map
                    .into_iter()
                    .map(|(field, pair)| FieldChange::of(field, &pair))
                    .collect(),
                _ => Vec::new(),
            };
            let link = match e.target_type.as_str() {
                "job" if !e.action.ends_with("delete") => Some(format!("/jobs/{}", e.target_id)),
                "group" if !e.action.ends_with("delete") => {
                    Some(format!("/executors/{}", e.target_id))
                }
                "user" if !e.action.ends_with("delete") => Some(format!("/users/{}", e.target_id)),
                "run" if e.target_id > 0 => Some(format!("/runs/{}", e.target_id)),
                _ => None,
            };
            Row {
                time: e.time,
                time_utc: utc_text(e.time),
                username: e.username,
                action: e.action,
                target_type: e.target_type,
                target_id: e.target_id,
                link,
                summary: e.summary,
                changes,
            }
        })
        .collect();
    let pages = (total + PAGE_SIZE - 1) / PAGE_SIZE;
    Ok(render(&AuditPage {
        nav: nav(&req, &principal, "audit"),
        prev_href: (page > 1).then(|| href(&q, page - 1)),
        next_href: (page < pages).then(|| href(&q, page + 1)),
        query: q,
        rows,
        total,
    }))
}
