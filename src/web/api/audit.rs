//! The audit log: every change made through the REST API (and so through the console) is
//! recorded with who, when, and the fields it changed; `GET /api/v1/audit` lists them for
//! administrators.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use super::auth::Principal;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::{paging, Page};
use crate::clock::now_ms;
use crate::model::AuditEntry;
use crate::store::AuditFilter;
use crate::web::AppState;

/// Fields that change on their own (times the scheduler moves): not news in an audit entry.
const NOISE: &[&str] = &[
    "updateTime",
    "glueUpdatetime",
    "triggerLastTime",
    "triggerNextTime",
    "lastUsedTime",
];
/// Longest text kept of one value (a script, a long parameter).
const MAX_VALUE_CHARS: usize = 2000;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/audit", web::get().to(list));
}

/// What one change did to a thing: its state before and after (`None` when it did not exist).
pub struct Change {
    /// The action, e.g. `job.update`.
    pub action: &'static str,
    /// `job`, `group`, `user`, `token` or `run`.
    pub target_type: &'static str,
    /// Which one.
    pub target_id: i64,
    /// One line for lists.
    pub summary: String,
    /// Before (a serialized view of the thing).
    pub before: Option<Value>,
    /// After.
    pub after: Option<Value>,
}

fn clip(v: &Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > MAX_VALUE_CHARS => {
            let cut: String = s.chars().take(MAX_VALUE_CHARS).collect();
            Value::String(format!("{cut}…"))
        }
        other => other.clone(),
    }
}

/// `{field: {before, after}}` of the fields that differ (all fields for a creation or deletion).
pub fn diff(before: Option<&Value>, after: Option<&Value>) -> Value {
    let empty = Map::new();
    let fields = |v: Option<&Value>| v.and_then(Value::as_object).unwrap_or(&empty).clone();
    let (b, a) = (fields(before), fields(after));
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Map::new();
    for key in keys {
        if NOISE.contains(&key.as_str()) {
            continue;
        }
        let (old, new) = (b.get(key), a.get(key));
        if old != new {
            let mut pair = Map::new();
            pair.insert("before".into(), old.map(clip).unwrap_or(Value::Null));
            pair.insert("after".into(), new.map(clip).unwrap_or(Value::Null));
            out.insert(key.clone(), Value::Object(pair));
        }
    }
    Value::Object(out)
}

/// A view of a thing, for [`Change::before`]/[`Change::after`].
pub fn snapshot(view: &impl Serialize) -> Option<Value> {
    serde_json::to_value(view).ok()
}

/// Records `change` as done by `principal`. A failure to record is logged, not returned: the
/// change itself is already made.
pub async fn record(state: &AppState, principal: &Principal, change: Change) {
    let entry = AuditEntry {
        id: 0,
        time: now_ms(),
        user_id: principal.user.id,
        username: principal.user.username.clone(),
        action: change.action.to_string(),
        target_type: change.target_type.to_string(),
        target_id: change.target_id,
        summary: change.summary.chars().take(500).collect(),
        changes: diff(change.before.as_ref(), change.after.as_ref()).to_string(),
    };
    if let Err(e) = state.store.insert_audit(&entry).await {
        log::error!(
            "cannot record {} of {} {} by '{}' in the audit log: {e}",
            entry.action,
            entry.target_type,
            entry.target_id,
            entry.username
        );
    }
}

/// An entry as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct EntryView {
    id: i64,
    time: i64,
    user_id: i32,
    username: String,
    action: String,
    target_type: String,
    target_id: i64,
    summary: String,
    /// `{field: {before, after}}` of the fields that changed.
    #[schema(value_type = Object)]
    changes: Value,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    username: Option<String>,
    target_type: Option<String>,
    target_id: Option<i64>,
    action: Option<String>,
    from: Option<i64>,
    to: Option<i64>,
    offset: Option<i64>,
    limit: Option<i64>,
}

/// The filter a query asks for.
pub(crate) fn filter_of(
    username: Option<String>,
    target_type: Option<String>,
    target_id: Option<i64>,
    action: Option<String>,
) -> AuditFilter {
    let text = |t: Option<String>| t.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
    AuditFilter {
        username: text(username),
        target_type: text(target_type),
        target_id,
        action: text(action),
        ..AuditFilter::default()
    }
}

/// `GET /audit?username&targetType&targetId&action&from&to&offset&limit` (administrators).
#[utoipa::path(
    get,
    path = "/audit",
    tag = "audit",
    summary = "Audit entries: who changed what, newest first (administrators)",
    params(ListQuery),
    responses(
        (status = 200, description = "One page of entries", body = super::Page<EntryView>),
        answers::BadInput,
        answers::Forbidden
    )
)]
async fn list(
    state: web::Data<AppState>,
    principal: Principal,
    query: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let q = query.into_inner();
    let (offset, limit) = paging(q.offset, q.limit)?;
    if let (Some(from), Some(to)) = (q.from, q.to) {
        if from > to {
            return Err(ApiError::field("from", "from must not be after to"));
        }
    }
    let filter = AuditFilter {
        from: q.from,
        to: q.to,
        offset,
        limit,
        ..filter_of(q.username, q.target_type, q.target_id, q.action)
    };
    let (total, entries) = state.store.list_audit(&filter).await?;
    let items = entries
        .into_iter()
        .map(|e| EntryView {
            changes: serde_json::from_str(&e.changes).unwrap_or(Value::Null),
            id: e.id,
            time: e.time,
            user_id: e.user_id,
            username: e.username,
            action: e.action,
            target_type: e.target_type,
            target_id: e.target_id,
            summary: e.summary,
        })
        .collect();
    Ok(HttpResponse::Ok().json(Page { total, items }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_changed_fields_are_kept_and_long_values_clipped() {
        let before = json!({"jobDesc": "a", "author": "x", "updateTime": 1, "glueSource": "s"});
        let after =
            json!({"jobDesc": "b", "author": "x", "updateTime": 2, "glueSource": "t".repeat(3000)});
        let d = diff(Some(&before), Some(&after));
        assert_eq!(d["jobDesc"], json!({"before": "a", "after": "b"}));
        assert!(d.get("author").is_none() && d.get("updateTime").is_none());
        let clipped = d["glueSource"]["after"].as_str().unwrap();
        assert_eq!(clipped.chars().count(), MAX_VALUE_CHARS + 1);
        let created = diff(None, Some(&json!({"jobDesc": "n"})));
        assert_eq!(created["jobDesc"], json!({"before": null, "after": "n"}));
    }
}
