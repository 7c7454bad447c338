//! The system page (administrators): what an operator opens first in an incident. This admin's
//! actors, the admins of the cluster and the fires each holds, the database, and the executors'
//! health.

use actix_web::{web, HttpRequest};
use askama::Template;

use super::errors::PageResult;
use super::{nav, render, utc_text, Nav};
use crate::actors::supervision::{ActorReport, ActorState};
use crate::actors::timing_rules::{EXECUTOR_DEAD_AFTER_MS, NODE_DEAD_AFTER_MS};
use crate::clock::now_ms;
use crate::model::address_key;
use crate::web::api::auth::Principal;
use crate::web::AppState;

/// An actor's row.
struct ActorRow {
    report: ActorReport,
    /// `ok`, `warn` or `fail`, for its pill.
    pill: &'static str,
    /// The catalogue key of its state.
    state: &'static str,
    restarted_utc: String,
}

/// An admin of the cluster.
struct NodeRow {
    id: String,
    address: String,
    started_ms: i64,
    started_utc: String,
    beat_ms: i64,
    beat_utc: String,
    /// Beat within the dead-after window and not leaving.
    alive: bool,
    leaving: bool,
    this: bool,
    claims: i64,
}

/// An executor's health.
struct ExecutorRow {
    app_name: String,
    address: String,
    beat_ms: i64,
    beat_utc: String,
    /// (running, queued, limit) when it reports its load.
    load: Option<(u32, u32, u32)>,
    suspect: bool,
    cordoned: bool,
}

#[derive(Template)]
#[template(path = "system.html")]
struct SystemPage {
    nav: Nav,
    actors: Vec<ActorRow>,
    nodes: Vec<NodeRow>,
    backend: &'static str,
    database_up: bool,
    pool_in_use: usize,
    pool_idle: usize,
    executors: Vec<ExecutorRow>,
}

/// `GET /system`.
pub(super) async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
) -> PageResult {
    principal.require_admin()?;
    let now = now_ms();
    let actors = state
        .actors
        .report()
        .await
        .into_iter()
        .map(|report| {
            let (pill, key) = match report.state {
                ActorState::Running if report.mailbox_wait_ms.is_none() => {
                    ("warn", "actor_unanswered")
                }
                ActorState::Running => ("ok", "actor_running"),
                ActorState::BackingOff => ("fail", "actor_backing_off"),
                ActorState::Stopped => ("fail", "actor_stopped"),
            };
            ActorRow {
                restarted_utc: report.last_restart_time.map(utc_text).unwrap_or_default(),
                report,
                pill,
                state: key,
            }
        })
        .collect();
    let nodes = state
        .store
        .cluster_nodes()
        .await?
        .into_iter()
        .map(|n| NodeRow {
            this: *n.id == *state.node_id,
            alive: !n.leaving && now - n.beat_at <= NODE_DEAD_AFTER_MS,
            started_ms: n.started_at,
            started_utc: utc_text(n.started_at),
            beat_utc: utc_text(n.beat_at),
            beat_ms: n.beat_at,
            id: n.id,
            address: n.address,
            leaving: n.leaving,
            claims: n.claims,
        })
        .collect();
    let live = state
        .store
        .find_live_registry(now - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    let suspects = state.store.suspects_by_address().await?;
    let cordons = state.store.cordons_by_address_key().await?;
    let executors = live
        .into_iter()
        .map(|r| ExecutorRow {
            suspect: suspects.contains_key(&r.registry_value),
            cordoned: cordons.contains_key(&address_key(&r.registry_value)),
            load: r.load.map(|l| (l.running, l.queued, l.limit)),
            beat_utc: utc_text(r.update_time),
            beat_ms: r.update_time,
            app_name: r.registry_key,
            address: r.registry_value,
        })
        .collect();
    let (pool_in_use, pool_idle) = state.store.pool_usage();
    Ok(render(&SystemPage {
        nav: nav(&req, &principal, "system"),
        actors,
        nodes,
        backend: state.store.backend().name(),
        database_up: state.store.availability().is_up(),
        pool_in_use,
        pool_idle,
        executors,
    }))
}
