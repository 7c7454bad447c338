//! Executor groups: each with its online addresses and their last heartbeat; a group's form.

use std::collections::HashMap;

use actix_web::{web, HttpRequest};
use askama::Template;

use super::errors::PageResult;
use super::{nav, render, save_target, utc_text, Nav};
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::model::{address_key, AddressType, ExecutorCordon, ExecutorSuspect, JobGroup};
use crate::protocol::ExecutorLoad;
use crate::web::api::auth::Principal;
use crate::web::api::error::ApiError;
use crate::web::AppState;

/// Why routing leaves an executor out: a call to it got no answer.
struct SuspectMark {
    since: i64,
    since_utc: String,
    reason: String,
}

/// An address's drain: cordoned or not, and the calls that change it.
struct Drain {
    /// Since when it is cordoned (epoch ms), and as text.
    since: Option<(i64, String)>,
    /// The body of the call that cordons it.
    cordon_body: String,
    /// The call that lifts its cordon.
    uncordon_url: String,
}

impl Drain {
    fn of(address: &str, cordons: &HashMap<String, ExecutorCordon>) -> Drain {
        let since = cordons
            .get(&address_key(address))
            .map(|c| (c.since, utc_text(c.since)));
        let uncordon_url = format!(
            "/api/v1/registry/cordons?address={}",
            super::url_encode(address)
        );
        Drain {
            since,
            cordon_body: serde_json::json!({ "address": address }).to_string(),
            uncordon_url,
        }
    }
}

/// An executor that beat recently.
struct Online {
    address: String,
    protocol: String,
    beat: i64,
    beat_utc: String,
    suspect: Option<SuspectMark>,
    /// What it ran and held queued at that beat, when it reports it.
    load: Option<ExecutorLoad>,
    /// Its labels as `key=value`.
    labels: Vec<String>,
    drain: Drain,
}

/// An address of a manual group's list.
struct Listed {
    address: String,
    suspect: Option<SuspectMark>,
    drain: Drain,
}

/// A group and who serves it.
struct GroupRow {
    group: JobGroup,
    auto: bool,
    online: Vec<Online>,
    listed: Vec<Listed>,
    jobs: i64,
}

#[derive(Template)]
#[template(path = "executors.html")]
struct ExecutorsPage {
    nav: Nav,
    groups: Vec<GroupRow>,
    is_admin: bool,
}

/// `GET /executors`: the groups the user may see.
pub(super) async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
) -> PageResult {
    let live = state
        .store
        .find_live_registry(now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    let marks: HashMap<String, ExecutorSuspect> = state.store.suspects_by_address().await?;
    let cordons = state.store.cordons_by_address_key().await?;
    let suspect = |address: &str| {
        marks.get(address).map(|m| SuspectMark {
            since: m.since,
            since_utc: utc_text(m.since),
            reason: m.reason.clone(),
        })
    };
    let mut groups = Vec::new();
    for group in state.store.list_groups().await? {
        if !principal.can_access(group.id) {
            continue;
        }
        let online = live
            .iter()
            .filter(|r| r.registry_key == group.app_name)
            .map(|r| Online {
                address: r.registry_value.clone(),
                protocol: r.protocol.clone(),
                beat: r.update_time,
                beat_utc: utc_text(r.update_time),
                suspect: suspect(&r.registry_value),
                load: r.load.clone(),
                labels: r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                drain: Drain::of(&r.registry_value, &cordons),
            })
            .collect();
        let listed = group
            .address_list
            .iter()
            .map(|a| Listed {
                address: a.clone(),
                suspect: suspect(a),
                drain: Drain::of(a, &cordons),
            })
            .collect();
        groups.push(GroupRow {
            jobs: state.store.count_jobs_in_group(group.id).await?,
            auto: group.address_type == AddressType::Auto,
            online,
            listed,
            group,
        });
    }
    Ok(render(&ExecutorsPage {
        nav: nav(&req, &principal, "executors"),
        is_admin: principal.is_admin(),
        groups,
    }))
}

#[derive(Template)]
#[template(path = "executor_edit.html")]
struct GroupForm {
    nav: Nav,
    group: JobGroup,
    addresses: String,
    api_url: String,
    api_method: &'static str,
    overflow_policies: &'static [&'static str],
}

fn form(req: &HttpRequest, principal: &Principal, group: JobGroup) -> PageResult {
    principal.require_admin()?;
    let (api_url, api_method) = save_target("groups", group.id);
    Ok(render(&GroupForm {
        nav: nav(req, principal, "executors"),
        addresses: group.address_list.join(", "),
        group,
        api_url,
        api_method,
        overflow_policies: crate::model::InstanceOverflow::NAMES,
    }))
}

/// `GET /executors/new` (admins).
pub(super) async fn new(req: HttpRequest, principal: Principal) -> PageResult {
    let group = JobGroup {
        id: 0,
        app_name: String::new(),
        title: String::new(),
        address_type: AddressType::Auto,
        address_list: Vec::new(),
        access_token: None,
        update_time: 0,
        max_concurrent_instances: 0,
        instance_overflow: crate::model::InstanceOverflow::Skip,
    };
    form(&req, &principal, group)
}

/// `GET /executors/{id}` (admins).
pub(super) async fn edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i32>,
) -> PageResult {
    principal.require_admin()?;
    let id = id.into_inner();
    let group = state
        .store
        .get_group(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("executor group {id} does not exist")))?;
    form(&req, &principal, group)
}
