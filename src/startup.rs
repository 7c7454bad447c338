//! Builds and runs the admin: database, migrations, first user, HTTP server.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Addr, Arbiter, Supervisor};
use actix_web::dev::Server;
use actix_web::{App, HttpServer};

use crate::actors::call_gauge::CallGauge;
use crate::actors::dispatch::{dispatch_settings, Dispatcher, GetDispatchStats};
use crate::actors::fault_exit::FaultExit;
use crate::actors::instance_queue::InstanceQueue;
use crate::actors::lease::Lease;
use crate::actors::monitor::{MonitorSettings, PassTurns};
use crate::actors::monitor_fail::{build_alarmer, FailMonitor};
use crate::actors::monitor_lost::LostResultMonitor;
use crate::actors::monitor_report::LogReportActor;
use crate::actors::node_beat::{LeaveCluster, NodeBeat, StepDown};
use crate::actors::registry::RegistryActor;
use crate::actors::result_intake::{ResultIntake, YIELD_TO_CALLS_MAX};
use crate::actors::ring::{PendingCount, RingActor};
use crate::actors::schedule::{ScheduleActor, StopScheduling};
use crate::actors::supervision::ActorBoard;
use crate::actors::suspect_watch::SuspectWatch;
use crate::actors::trigger::TriggerEnv;
use crate::actors::workflow_link::WorkflowLink;
use crate::actors::workflow_runner::{Engine as WorkflowEngine, WorkflowRunner};
use crate::bootstrap::{
    ensure_access_token, ensure_admin_user, ensure_demo, BootstrapError, LOCAL_APP_NAME,
};
use crate::config::{AdminSettings, LocalExecutorSettings};
use crate::executor::Executor;
use crate::keep_alive::SERVE_IDLE_FOR;
use crate::metrics::AdminMetrics;
use crate::routing::Suspects;
use crate::stop_signals::StopSignals;
use crate::store::{ActorStore, Backend, PoolSettings, Store, StoreError};
use crate::web::login_limit::LoginLimiter;
use crate::web::{self, AppState};
use crate::workflow::context::ContextLimits;

/// Why the admin could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The listen address is taken or not ours.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The first-start set-up (first user, access token, demo) failed.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    /// The in-process executor of standalone mode could not start.
    #[error("local executor: {0}")]
    Executor(String),
}

/// A built admin, listening but not yet serving.
pub struct Admin {
    port: u16,
    access_token: String,
    server: Server,
    store: Store,
    actors: AdminActors,
    executor: Option<Executor>,
    signals: StopSignals,
}

/// Addresses of the admin's actors.
#[derive(Clone)]
pub struct AdminActors {
    /// Pre-read loop.
    pub schedule: Addr<ScheduleActor>,
    /// The 60-slot ring.
    pub ring: Addr<RingActor>,
    /// Fast/slow dispatch pools.
    pub dispatcher: Addr<Dispatcher>,
    /// Executor registrations.
    pub registry: Addr<RegistryActor>,
    /// The executors routing leaves out, in step with the other admins.
    pub suspect_watch: Addr<SuspectWatch>,
    /// Fires waiting for a slot of their instance cap.
    pub instance_queue: Addr<InstanceQueue>,
    /// Run results.
    pub callbacks: Addr<ResultIntake>,
    /// Workflow runs: their fires, their nodes, users' actions on them.
    pub workflows: Addr<WorkflowRunner>,
    /// How the engine tells the workflow runner that runs have news.
    pub workflow_link: WorkflowLink,
    /// Retries and alarms of failed runs.
    pub fail_monitor: Addr<FailMonitor>,
    /// Runs whose result was lost with their executor.
    pub lost_monitor: Addr<LostResultMonitor>,
    /// Daily counts and log retention.
    pub report: Addr<LogReportActor>,
    /// This admin's heartbeat in the cluster.
    pub node: Addr<NodeBeat>,
    /// This admin's id in the cluster: the owner of the fire times it claims.
    pub node_id: Arc<str>,
    /// Every actor's life: state, restarts, last error.
    pub board: ActorBoard,
    /// What the actors count, served at `GET /metrics`.
    pub metrics: Arc<AdminMetrics>,
    // the ring's own thread, so a busy system arbiter never delays a tick
    _ring_arbiter: Arc<ArbiterGuard>,
}

struct ArbiterGuard(Arbiter);

impl Drop for ArbiterGuard {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Starts the supervised scheduling and monitor actors on the current actix system; they call
/// executors with `access_token` (groups with their own token use that instead).
pub fn start_actors(
    store: &Store,
    settings: &AdminSettings,
    access_token: &str,
    admin_address: String,
) -> AdminActors {
    start_actors_with(
        store,
        settings,
        access_token,
        admin_address,
        MonitorSettings::from_admin(settings),
    )
}

/// [`start_actors`] with explicit monitor settings (tests shorten the intervals).
pub fn start_actors_with(
    store: &Store,
    settings: &AdminSettings,
    access_token: &str,
    admin_address: String,
    monitors: MonitorSettings,
) -> AdminActors {
    // actors reach the database only through tasks of their own (see `ActorStore`)
    let db = ActorStore::new(store.clone());
    let metrics = Arc::new(AdminMetrics::new());
    let node_id: Arc<str> = uuid::Uuid::new_v4().to_string().into();
    // on SQLite an admin is alone: no one takes its claims over while it stalls
    let lease = match store.backend() {
        Backend::Sqlite => Arc::new(Lease::default()),
        _ => Lease::of(node_id.clone()),
    };
    let workflow_link = WorkflowLink::default();
    let faults = FaultExit::from_env();
    let suspects = Suspects::default();
    let env = TriggerEnv {
        metrics: metrics.clone(),
        store: db.clone(),
        access_token: access_token.to_string(),
        default_tz: settings.timezone,
        admin_address,
        lease: lease.clone(),
        workflows: workflow_link.clone(),
        faults: faults.clone(),
        suspects: suspects.clone(),
        node_id: node_id.clone(),
        routing: Default::default(),
    };
    let pools = dispatch_settings(
        settings.trigger_pool_fast_max,
        settings.trigger_pool_slow_max,
    );
    // executor calls in flight, which result and outcome writes yield to
    let calls = CallGauge::new();
    let board = ActorBoard::new();
    let dispatcher = Supervisor::start({
        let (env, calls) = (env.clone(), calls.clone());
        let life = board.life("dispatcher");
        move |_| Dispatcher::new(pools, env, calls).with_life(life)
    });
    let workflows = Supervisor::start({
        let (store, dispatcher, metrics) = (db.clone(), dispatcher.clone(), metrics.clone());
        let engine = WorkflowEngine {
            node_id: node_id.clone(),
            limits: ContextLimits {
                node_output: settings.workflow_node_output_max,
                run_context: settings.workflow_context_max,
            },
            default_tz: settings.timezone,
            faults: faults.clone(),
        };
        let token = access_token.to_string();
        let monitors = monitors.clone();
        let life = board.life("workflow-runner");
        move |_| {
            let alarmer = build_alarmer(&monitors);
            let calls = (token.clone(), alarmer);
            WorkflowRunner::new(
                store.clone(),
                dispatcher.clone(),
                engine.clone(),
                metrics.clone(),
                calls,
            )
            .with_life(life.clone())
        }
    });
    workflow_link.connect(workflows.clone().recipient());
    let ring_arbiter = Arbiter::new();
    let ring = Supervisor::start_in_arbiter(&ring_arbiter.handle(), {
        let dispatcher = dispatcher.clone();
        let life = board.life("ring");
        let metrics = metrics.clone();
        move |_| RingActor::new(dispatcher, metrics).with_life(life)
    });
    let registry = Supervisor::start({
        let store = db.clone();
        let life = board.life("registry");
        move |_| RegistryActor::new(store).with_life(life)
    });
    let suspect_watch = Supervisor::start({
        let store = db.clone();
        let life = board.life("suspect-watch");
        move |_| SuspectWatch::new(store, suspects).with_life(life)
    });
    let instance_queue = Supervisor::start({
        let (store, dispatcher, metrics) = (db.clone(), dispatcher.clone(), metrics.clone());
        let life = board.life("instance-queue");
        move |_| {
            InstanceQueue::new(store.clone(), dispatcher.clone(), metrics.clone())
                .with_life(life.clone())
        }
    });
    let callbacks = Supervisor::start({
        let env = env.clone();
        let dispatcher = dispatcher.clone();
        let life = board.life("result-intake");
        move |_| ResultIntake::new(env, dispatcher, calls, YIELD_TO_CALLS_MAX).with_life(life)
    });
    // XXL-JOB's pre-read batch: (fast + slow) * 10
    let batch = ((settings.trigger_pool_fast_max + settings.trigger_pool_slow_max) * 10) as i64;
    let node = Supervisor::start({
        // a connection of its own: a busy pool must not make this admin look dead
        let store = ActorStore::new(store.own_connection());
        let (id, address) = (node_id.clone(), env.admin_address.clone());
        let life = board.life("node-beat");
        let lease = lease.clone();
        move |_| {
            NodeBeat::new(store.clone(), id.clone(), address.clone())
                .with_life(life.clone())
                .with_lease(lease.clone())
        }
    });
    let schedule = Supervisor::start({
        let store = db.clone();
        let ring = ring.clone();
        let dispatcher = dispatcher.clone();
        let tz = settings.timezone;
        let me = (node_id.clone(), node.clone());
        let life = board.life("schedule");
        let metrics = metrics.clone();
        let lease = lease.clone();
        move |_| {
            ScheduleActor::new(store, ring, dispatcher, me, (tz, batch), metrics)
                .with_life(life)
                .with_lease(lease.clone())
        }
    });
    // XXL-JOB's start order: monitors before the schedule helper; each runs a pass at once (when
    // no other admin of the database took that interval's turn)
    let turns = PassTurns::new(node_id.clone(), metrics.clone());
    let fail_monitor = Supervisor::start({
        let store = db.clone();
        let dispatcher = dispatcher.clone();
        let monitors = monitors.clone();
        let life = board.life("fail-monitor");
        let (turns, metrics) = (turns.clone(), metrics.clone());
        move |_| {
            FailMonitor::new(store, dispatcher, &monitors, turns.clone(), metrics.clone())
                .with_life(life)
        }
    });
    let lost_monitor = Supervisor::start({
        let env = env.clone();
        let dispatcher = dispatcher.clone();
        let monitors = monitors.clone();
        let life = board.life("lost-monitor");
        let turns = turns.clone();
        move |_| LostResultMonitor::new(env, dispatcher, &monitors, turns.clone()).with_life(life)
    });
    let report = Supervisor::start({
        let store = db.clone();
        let life = board.life("log-report");
        let token = access_token.to_string();
        move |_| {
            LogReportActor::new(store, monitors, turns)
                .with_life(life)
                .with_executor_token(token)
        }
    });
    board.watch("dispatcher", dispatcher.clone().recipient());
    board.watch("ring", ring.clone().recipient());
    board.watch("registry", registry.clone().recipient());
    board.watch("suspect-watch", suspect_watch.clone().recipient());
    board.watch("instance-queue", instance_queue.clone().recipient());
    board.watch("result-intake", callbacks.clone().recipient());
    board.watch("node-beat", node.clone().recipient());
    board.watch("schedule", schedule.clone().recipient());
    board.watch("fail-monitor", fail_monitor.clone().recipient());
    board.watch("lost-monitor", lost_monitor.clone().recipient());
    board.watch("log-report", report.clone().recipient());
    board.watch("workflow-runner", workflows.clone().recipient());
    AdminActors {
        schedule,
        ring,
        dispatcher,
        registry,
        suspect_watch,
        instance_queue,
        callbacks,
        workflows,
        workflow_link,
        fail_monitor,
        lost_monitor,
        report,
        node,
        node_id,
        board,
        metrics,
        _ring_arbiter: Arc::new(ArbiterGuard(ring_arbiter)),
    }
}

impl AdminActors {
    /// Graceful stop: no more pre-reads, the other admins take this one's share, then wait (bounded) until the ring has fired what it
    /// holds and the dispatches in flight have ended; then leave the cluster, handing back any
    /// fire time still claimed.
    pub async fn drain(&self, limit: Duration) {
        self.schedule.do_send(StopScheduling);
        let _ = self.node.send(StepDown).await;
        let started = Instant::now();
        let mut announced = false;
        while started.elapsed() < limit {
            match self.ring.send(PendingCount).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if !announced {
                        log::info!("waiting for {n} pre-read fire time(s) in the ring");
                        announced = true;
                    }
                    actix_web::rt::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        // a dispatch ends within the executor call timeout
        let deadline =
            Instant::now() + crate::executor_calls::DEFAULT_TIMEOUT + Duration::from_secs(1);
        while Instant::now() < deadline {
            match self.dispatcher.send(GetDispatchStats).await {
                Ok(stats) if stats.in_flight > 0 => {
                    log::debug!("waiting for {} dispatch(es) in flight", stats.in_flight);
                    actix_web::rt::time::sleep(Duration::from_millis(50)).await;
                }
                _ => break,
            }
        }
        // what is still claimed goes to the other admins at their next pass
        let _ = self.node.send(LeaveCluster).await;
    }
}

impl Admin {
    /// Opens the database, applies migrations, creates the first user, binds the port.
    pub async fn build(settings: &AdminSettings) -> Result<Admin, StartupError> {
        Self::build_with(settings, None, MonitorSettings::from_admin(settings)).await
    }

    /// [`Admin::build`] with explicit monitor settings (tests shorten the intervals).
    pub async fn build_with_monitors(
        settings: &AdminSettings,
        monitors: MonitorSettings,
    ) -> Result<Admin, StartupError> {
        Self::build_with(settings, None, monitors).await
    }

    /// Like [`build`](Self::build), plus an in-process executor (`jobwheel-local`) served under
    /// `/executor/` on the admin's own port, and a demo job on a fresh database: standalone mode.
    pub async fn build_standalone(
        settings: &AdminSettings,
        local: &LocalExecutorSettings,
    ) -> Result<Admin, StartupError> {
        Self::build_with(settings, Some(local), MonitorSettings::from_admin(settings)).await
    }

    async fn build_with(
        settings: &AdminSettings,
        local: Option<&LocalExecutorSettings>,
        monitors: MonitorSettings,
    ) -> Result<Admin, StartupError> {
        let store = Store::connect(&settings.database_url, &PoolSettings::default()).await?;
        store.migrate().await?;
        log::info!(
            "database ready ({}, migrations applied)",
            store.backend().name()
        );
        ensure_admin_user(&store, settings.admin_password.as_deref()).await?;
        let access_token = ensure_access_token(&store, settings.access_token.as_deref()).await?;
        if local.is_some() {
            ensure_demo(&store, settings.timezone).await?;
        }

        // before the port opens and the actors claim fires: a stop from then on must drain (not
        // before the migrations, whose lock may be waited for: a stop then ends the process)
        let signals = StopSignals::listen();
        let listener = TcpListener::bind(settings.bind).map_err(|source| StartupError::Bind {
            addr: settings.bind.to_string(),
            source,
        })?;
        let port = listener
            .local_addr()
            .map_err(|source| StartupError::Bind {
                addr: settings.bind.to_string(),
                source,
            })?
            .port();
        let executor = match local {
            Some(local) => Some(local_executor(settings, local, &access_token, port)?),
            None => None,
        };
        let actors = start_actors_with(
            &store,
            settings,
            &access_token,
            format!("http://{}:{port}", settings.bind.ip()),
            monitors,
        );
        let state = AppState {
            store: store.clone(),
            access_token: access_token.clone(),
            registry: actors.registry.clone(),
            callbacks: actors.callbacks.clone(),
            workflows: actors.workflows.clone(),
            workflow_link: actors.workflow_link.clone(),
            dispatcher: actors.dispatcher.clone(),
            actors: actors.board.clone(),
            settings: Arc::new(settings.clone()),
            logins: Arc::new(LoginLimiter::new(settings.login_limit)),
            metrics: actors.metrics.clone(),
            node_id: actors.node_id.clone(),
        };
        let mounted = executor.clone();
        let server = HttpServer::new(move || {
            let app = App::new().configure(web::configure(state.clone()));
            match &mounted {
                Some(executor) => app.service(executor.scope(LOCAL_EXECUTOR_PATH)),
                None => app,
            }
        })
        // signals are handled in run_until_stopped: actix-server would stop the whole system
        // before the ring is drained and the local executor has reported its runs
        // a compressed page leaves in several writes; with Nagle's algorithm the last waits for
        // the browser's delayed ACK, 40 ms on Linux, on many answers
        .tcp_nodelay(true)
        .keep_alive(SERVE_IDLE_FOR)
        .disable_signals()
        .shutdown_timeout(5)
        .listen(listener)
        .map_err(|source| StartupError::Bind {
            addr: settings.bind.to_string(),
            source,
        })?
        .run();
        log::info!("admin listening on {}:{port}", settings.bind.ip());
        if let Some(executor) = &executor {
            executor.start_registration(port);
            log::info!(
                "local executor '{LOCAL_APP_NAME}' serving at {}",
                executor.registered_address(port)
            );
        }
        Ok(Admin {
            port,
            access_token,
            server,
            store,
            actors,
            executor,
            signals,
        })
    }

    /// The bound port (useful when binding port 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The token executors must send (and receive) in `XXL-JOB-ACCESS-TOKEN`, unless their
    /// group has its own.
    pub fn access_token(&self) -> &str {
        &self.access_token
    }

    /// The admin's database.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The admin's actors.
    pub fn actors(&self) -> &AdminActors {
        &self.actors
    }

    /// Serves until Ctrl-C/SIGTERM (or until the HTTP server is stopped), then stops gracefully:
    /// pre-reading stops, the ring fires what it holds (at most 6 s: its window is 5 s) and the
    /// dispatches in flight end, the local executor finishes and reports its runs, then the
    /// HTTP server and the database close.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let handle = self.server.handle();
        let mut join = actix_web::rt::spawn(self.server);
        let mut signals = self.signals;
        let served = tokio::select! {
            r = &mut join => Some(r),
            () = signals.received() => {
                log::info!("signal received; stopping the admin");
                None
            }
        };
        self.actors.drain(Duration::from_secs(6)).await;
        if let Some(executor) = &self.executor {
            executor.shutdown().await;
        }
        let served = match served {
            Some(r) => r,
            None => {
                handle.stop(true).await;
                join.await
            }
        };
        self.store.close().await;
        log::info!("admin stopped");
        served.map_err(std::io::Error::other)?
    }
}

/// Path of the in-process executor on the admin's port in standalone mode.
pub const LOCAL_EXECUTOR_PATH: &str = "/executor";

/// The standalone executor: built-in handlers, registered at `http://127.0.0.1:{port}/executor/`.
fn local_executor(
    settings: &AdminSettings,
    local: &LocalExecutorSettings,
    access_token: &str,
    port: u16,
) -> Result<Executor, StartupError> {
    Executor::builder()
        .admin_addresses([format!("http://127.0.0.1:{port}")])
        .app_name(LOCAL_APP_NAME)
        .ip("127.0.0.1")
        .port(port)
        .mount_path(LOCAL_EXECUTOR_PATH)
        .log_path(local.log_path.clone())
        .log_retention_days(settings.log_retention_days)
        .idle_timeout(local.idle_timeout)
        .max_concurrent_runs(local.max_concurrent_runs)
        .labels(local.label.clone())
        .glue_enabled(local.glue_enabled)
        .http_job_allow_private(local.http_job_allow_private)
        .trim_memory_after_reaping(true)
        .access_token(access_token)
        .with_builtin_handlers()
        .build()
        .map_err(|e| StartupError::Executor(e.to_string()))
}
