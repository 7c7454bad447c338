//! The audit log page (administrators): who changed what, when, before and after.

use actix_web::{web, HttpRequest};
use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::audit_change::{FieldChange, Shown};
use super::errors::PageResult;
use super::pager::{page_number, page_size, Pager, Position};
use super::{nav, render, url_encode, utc_text, Nav};
use crate::web::api::audit::filter_of;
use crate::web::api::auth::Principal;
use crate::web::AppState;

const PAGE_SIZE: i64 = 20;

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
    #[serde(default)]
    size: String,
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
    size: i64,
    query: AuditQuery,
    rows: Vec<Row>,
    pager: Pager,
}

fn href(q: &AuditQuery, page: i64, size: i64) -> String {
    format!(
        "/audit?user={}&target={}&id={}&action={}&page={page}&size={size}",
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
    let (page, size) = (page_number(&q.page), page_size(&q.size, PAGE_SIZE));
    let mut filter = filter_of(
        Some(q.user.clone()),
        Some(q.target.clone()),
        q.id.trim().parse().ok(),
        Some(q.action.clone()),
    );
    filter.offset = (page - 1) * size;
    filter.limit = size;
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
    let at = Position {
        page,
        size,
        total: Some(total),
        more: false,
    };
    Ok(render(&AuditPage {
        nav: nav(&req, &principal, "audit"),
        pager: Pager::new(at, total.to_string(), |p, s| href(&q, p, s)),
        size,
        query: q,
        rows,
    }))
}
