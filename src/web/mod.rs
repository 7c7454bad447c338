//! The admin's HTTP surface: health, the REST API and the executor-facing API.

use std::sync::Arc;

use actix::Addr;
use actix_web::web;

use crate::actors::dispatch::Dispatcher;
use crate::actors::registry::RegistryActor;
use crate::actors::result_intake::ResultIntake;
use crate::actors::supervision::ActorBoard;
use crate::actors::workflow_link::WorkflowLink;
use crate::actors::workflow_runner::WorkflowRunner;
use crate::config::AdminSettings;
use crate::metrics::AdminMetrics;
use crate::store::Store;

pub mod api;
mod body_deadline;
pub mod body_limit;
mod console;
mod executor_facing;
#[cfg(feature = "fault-hooks")]
mod fault_hooks;
mod health;
mod lang;
pub mod login_limit;
mod messages;
mod messages_zh;
mod metrics;
mod origin;

/// What every handler can reach: the database and the admin's actors.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// Global executor token (groups with their own token use that instead).
    pub access_token: String,
    /// Executor registrations.
    pub registry: Addr<RegistryActor>,
    /// Run results.
    pub callbacks: Addr<ResultIntake>,
    /// Workflow runs: triggers and users' actions.
    pub workflows: Addr<WorkflowRunner>,
    /// How result completions tell the workflow runner.
    pub workflow_link: WorkflowLink,
    /// Triggers (manual, API).
    pub dispatcher: Addr<Dispatcher>,
    /// The admin actors' lives, for operators.
    pub actors: ActorBoard,
    /// The admin's settings (time zone, retention, ...).
    pub settings: Arc<AdminSettings>,
    /// Failed logins, to slow password guessing.
    pub logins: Arc<login_limit::LoginLimiter>,
    /// What `GET /metrics` serves.
    pub metrics: Arc<AdminMetrics>,
    /// This admin's id in the cluster.
    pub node_id: Arc<str>,
}

/// Mounts every admin route on an actix-web app.
pub fn configure(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(state))
            .app_data(web::PayloadConfig::new(5 * 1024 * 1024))
            .route("/healthz", web::get().to(health::healthz))
            .route("/metrics", web::get().to(metrics::metrics));
        // before the executor API, whose "/api" scope would otherwise take "/api/v1" too
        api::mount(cfg);
        executor_facing::mount(cfg, "");
        executor_facing::mount(cfg, "/xxl-job-admin");
        #[cfg(feature = "fault-hooks")]
        fault_hooks::mount(cfg);
        // last: its pages and their fallback answer every path the others leave
        console::mount(cfg);
    }
}
