//! `GET /api/v1/registry`: the executors online now (a beat within the last 90 s), and
//! `GET /api/v1/registry/suspects`: the executors routing leaves out.

use std::collections::{HashMap, HashSet};

use actix_web::{web, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Principal;
use super::error::ApiResult;
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::model::{address_key, ExecutorSuspect};
use crate::protocol::{ExecutorLoad, REGISTRY_GROUP_EXECUTOR};
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/registry", web::get().to(list))
        .route("/registry/suspects", web::get().to(suspects));
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Online {
    app_name: String,
    address: String,
    protocol: String,
    update_time: i64,
    /// Since when routing leaves it out (epoch ms): a call to it got no answer; `null` when not.
    suspect_since: Option<i64>,
    /// What that call met; `null` when not suspect.
    suspect_reason: Option<String>,
    /// What it ran and held queued at its latest beat (`updateTime`); `null` for executors
    /// that do not report it (Java's xxl-job-core).
    load: Option<Load>,
    /// Its labels, which jobs' `executorSelector` choose by; `{}` for executors without any.
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    labels: crate::protocol::Labels,
    /// Since when it is cordoned (epoch ms): it gets no new runs; `null` when not.
    cordoned_since: Option<i64>,
}

/// An executor's load as its latest beat reported it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Load {
    /// Runs executing.
    running: u32,
    /// Triggers accepted and not started: behind their job's run, or waiting for a run slot.
    queued: u32,
    /// Its limit of runs at once (`max_concurrent_runs`); 0 for none.
    limit: u32,
    /// The jobs with triggers queued, the longest queues first (at most 100).
    jobs: Vec<JobQueue>,
}

/// One job's queue on an executor.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct JobQueue {
    job_id: i32,
    /// Its triggers not started.
    queued: u32,
    /// How long the oldest of them had waited, in seconds.
    oldest_queued_seconds: f64,
}

impl From<ExecutorLoad> for Load {
    fn from(load: ExecutorLoad) -> Self {
        Load {
            running: load.running,
            queued: load.queued,
            limit: load.limit,
            jobs: load
                .jobs
                .into_iter()
                .map(|j| JobQueue {
                    job_id: j.job_id,
                    queued: j.queued,
                    oldest_queued_seconds: j.oldest_queued_ms as f64 / 1000.0,
                })
                .collect(),
        }
    }
}

/// An executor address routing leaves out until it beats again or answers a probe.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Suspect {
    address: String,
    /// When the first admin that noticed marked it, epoch ms.
    since: i64,
    /// What the call that marked it met.
    reason: String,
    /// The admin (cluster node id) that marked it.
    noted_by: String,
    /// Its latest registration beat (epoch ms); `null` when it never registered (a manual
    /// group's address) or its registration was removed.
    last_beat: Option<i64>,
    /// The groups (app names) of the caller's that route to it: registered there or listed.
    app_names: Vec<String>,
}

/// Admins see every executor; a normal user those of the groups they may use.
#[utoipa::path(
    get,
    path = "/registry",
    tag = "registry",
    summary = "Executors online (those of the permitted groups for a normal user)",
    responses(
        (status = 200, description = "The executors, each with its suspect mark if any and its load as its latest beat reported it", body = Vec<Online>)
    )
)]
async fn list(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    let live = state
        .store
        .find_live_registry(now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    let marks: HashMap<String, ExecutorSuspect> = state.store.suspects_by_address().await?;
    let cordons = state.store.cordons_by_address_key().await?;
    let visible_apps: Option<HashSet<String>> = match principal.group_scope() {
        None => None,
        Some(_) => Some(
            state
                .store
                .list_groups()
                .await?
                .into_iter()
                .filter(|g| principal.can_access(g.id))
                .map(|g| g.app_name)
                .collect(),
        ),
    };
    let online: Vec<Online> = live
        .into_iter()
        .filter(|r| r.registry_group == REGISTRY_GROUP_EXECUTOR)
        .filter(|r| {
            visible_apps
                .as_ref()
                .is_none_or(|apps| apps.contains(&r.registry_key))
        })
        .map(|r| {
            let mark = marks.get(&r.registry_value);
            let cordon = cordons.get(&address_key(&r.registry_value));
            Online {
                suspect_since: mark.map(|m| m.since),
                suspect_reason: mark.map(|m| m.reason.clone()),
                app_name: r.registry_key,
                address: r.registry_value,
                protocol: r.protocol,
                update_time: r.update_time,
                load: r.load.map(Load::from),
                cordoned_since: cordon.map(|c| c.since),
                labels: r.labels,
            }
        })
        .collect();
    Ok(HttpResponse::Ok().json(online))
}

/// Admins see every mark; a normal user those of addresses their groups route to.
#[utoipa::path(
    get,
    path = "/registry/suspects",
    tag = "registry",
    summary = "Executors routing leaves out: a call got no answer, and they have not beaten or answered a probe since",
    responses(
        (status = 200, description = "The suspect executors, by address", body = Vec<Suspect>)
    )
)]
async fn suspects(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    let marks = state.store.list_suspects().await?;
    if marks.is_empty() {
        return Ok(HttpResponse::Ok().json(Vec::<Suspect>::new()));
    }
    let live = state
        .store
        .find_live_registry(now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    let groups: Vec<_> = state
        .store
        .list_groups()
        .await?
        .into_iter()
        .filter(|g| principal.can_access(g.id))
        .collect();
    let mut routed_by: HashMap<&str, Vec<String>> = HashMap::new();
    for group in &groups {
        let registered = live
            .iter()
            .filter(|r| {
                r.registry_group == REGISTRY_GROUP_EXECUTOR && r.registry_key == group.app_name
            })
            .map(|r| r.registry_value.as_str());
        let listed = group.address_list.iter().map(String::as_str);
        let mut addresses: Vec<&str> = registered.chain(listed).collect();
        addresses.sort_unstable();
        addresses.dedup();
        for address in addresses {
            routed_by
                .entry(address)
                .or_default()
                .push(group.app_name.clone());
        }
    }
    let all = principal.group_scope().is_none();
    let visible: Vec<Suspect> = marks
        .into_iter()
        .filter_map(|m| {
            let app_names = routed_by
                .get(m.address.as_str())
                .cloned()
                .unwrap_or_default();
            (all || !app_names.is_empty()).then_some(Suspect {
                address: m.address,
                since: m.since,
                reason: m.reason,
                noted_by: m.noted_by,
                last_beat: m.last_beat,
                app_names,
            })
        })
        .collect();
    Ok(HttpResponse::Ok().json(visible))
}
