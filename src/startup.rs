//! Builds and runs the admin: database, migrations, first user, HTTP server.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Addr, Arbiter, Supervisor};
use actix_web::dev::Server;
use actix_web::{App, HttpServer};

use crate::actors::callback::CallbackActor;
use crate::actors::dispatch::{dispatch_settings, Dispatcher, GetDispatchStats};
use crate::actors::monitor::MonitorSettings;
use crate::actors::monitor_fail::FailMonitor;
use crate::actors::monitor_lost::LostResultMonitor;
use crate::actors::monitor_report::LogReportActor;
use crate::actors::registry::RegistryActor;
use crate::actors::ring::{PendingCount, RingActor};
use crate::actors::schedule::{ScheduleActor, StopScheduling};
use crate::actors::trigger::TriggerEnv;
use crate::bootstrap::ensure_admin_user;
use crate::config::AdminSettings;
use crate::password::HashError;
use crate::store::{PoolSettings, Store, StoreError};
use crate::web::{self, AppState};

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
    /// The first user's password could not be hashed.
    #[error(transparent)]
    Hash(#[from] HashError),
}

/// A built admin, listening but not yet serving.
pub struct Admin {
    port: u16,
    server: Server,
    store: Store,
    actors: AdminActors,
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
    /// Run results.
    pub callbacks: Addr<CallbackActor>,
    /// Retries and alarms of failed runs.
    pub fail_monitor: Addr<FailMonitor>,
    /// Runs whose result was lost with their executor.
    pub lost_monitor: Addr<LostResultMonitor>,
    /// Daily counts and log retention.
    pub report: Addr<LogReportActor>,
    // the ring's own thread, so a busy system arbiter never delays a tick
    _ring_arbiter: Arc<ArbiterGuard>,
}

struct ArbiterGuard(Arbiter);

impl Drop for ArbiterGuard {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Starts the supervised scheduling and monitor actors on the current actix system.
pub fn start_actors(store: &Store, settings: &AdminSettings, admin_address: String) -> AdminActors {
    start_actors_with(
        store,
        settings,
        admin_address,
        MonitorSettings::from_admin(settings),
    )
}

/// [`start_actors`] with explicit monitor settings (tests shorten the intervals).
pub fn start_actors_with(
    store: &Store,
    settings: &AdminSettings,
    admin_address: String,
    monitors: MonitorSettings,
) -> AdminActors {
    let env = TriggerEnv {
        store: store.clone(),
        access_token: settings.access_token.clone(),
        default_tz: settings.timezone,
        admin_address,
    };
    let pools = dispatch_settings(
        settings.trigger_pool_fast_max,
        settings.trigger_pool_slow_max,
    );
    let dispatcher = Supervisor::start({
        let env = env.clone();
        move |_| Dispatcher::new(pools, env)
    });
    let ring_arbiter = Arbiter::new();
    let ring = Supervisor::start_in_arbiter(&ring_arbiter.handle(), {
        let dispatcher = dispatcher.clone();
        move |_| RingActor::new(dispatcher)
    });
    let registry = Supervisor::start({
        let store = store.clone();
        move |_| RegistryActor::new(store)
    });
    let callbacks = Supervisor::start({
        let env = env.clone();
        let dispatcher = dispatcher.clone();
        move |_| CallbackActor::new(env, dispatcher)
    });
    // XXL-JOB's pre-read batch: (fast + slow) * 10
    let batch = ((settings.trigger_pool_fast_max + settings.trigger_pool_slow_max) * 10) as i64;
    let schedule = Supervisor::start({
        let store = store.clone();
        let ring = ring.clone();
        let dispatcher = dispatcher.clone();
        let tz = settings.timezone;
        move |_| ScheduleActor::new(store, ring, dispatcher, tz, batch)
    });
    // XXL-JOB's start order: monitors before the schedule helper; each runs a pass at once
    let fail_monitor = Supervisor::start({
        let store = store.clone();
        let dispatcher = dispatcher.clone();
        let monitors = monitors.clone();
        move |_| FailMonitor::new(store, dispatcher, &monitors)
    });
    let lost_monitor = Supervisor::start({
        let env = env.clone();
        let dispatcher = dispatcher.clone();
        let monitors = monitors.clone();
        move |_| LostResultMonitor::new(env, dispatcher, &monitors)
    });
    let report = Supervisor::start({
        let store = store.clone();
        move |_| LogReportActor::new(store, monitors)
    });
    AdminActors {
        schedule,
        ring,
        dispatcher,
        registry,
        callbacks,
        fail_monitor,
        lost_monitor,
        report,
        _ring_arbiter: Arc::new(ArbiterGuard(ring_arbiter)),
    }
}

impl AdminActors {
    /// Graceful stop: no more pre-reads, then wait (bounded) until the ring has fired what it
    /// holds and the dispatches in flight have ended.
    pub async fn drain(&self, limit: Duration) {
        self.schedule.do_send(StopScheduling);
        let started = Instant::now();
        while started.elapsed() < limit {
            match self.ring.send(PendingCount).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    log::info!("waiting for {n} fire time(s) in the ring");
                    actix_web::rt::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
        // a dispatch ends within the executor call timeout
        let deadline =
            Instant::now() + crate::executor_client::DEFAULT_TIMEOUT + Duration::from_secs(1);
        while Instant::now() < deadline {
            match self.dispatcher.send(GetDispatchStats).await {
                Ok(stats) if stats.in_flight > 0 => {
                    log::info!("waiting for {} dispatch(es) in flight", stats.in_flight);
                    actix_web::rt::time::sleep(Duration::from_millis(100)).await;
                }
                _ => break,
            }
        }
    }
}

impl Admin {
    /// Opens the database, applies migrations, creates the first user, binds the port.
    pub async fn build(settings: &AdminSettings) -> Result<Admin, StartupError> {
        Self::build_with_monitors(settings, MonitorSettings::from_admin(settings)).await
    }

    /// [`Admin::build`] with explicit monitor settings (tests shorten the intervals).
    pub async fn build_with_monitors(
        settings: &AdminSettings,
        monitors: MonitorSettings,
    ) -> Result<Admin, StartupError> {
        let store = Store::connect(&settings.database_url, &PoolSettings::default()).await?;
        store.migrate().await?;
        log::info!(
            "database ready ({}, migrations applied)",
            store.backend().name()
        );
        ensure_admin_user(&store, settings.admin_password.as_deref()).await?;

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
        let actors = start_actors_with(
            &store,
            settings,
            format!("http://{}:{port}", settings.bind.ip()),
            monitors,
        );
        let state = AppState {
            store: store.clone(),
            access_token: settings.access_token.clone(),
            registry: actors.registry.clone(),
            callbacks: actors.callbacks.clone(),
            dispatcher: actors.dispatcher.clone(),
            settings: Arc::new(settings.clone()),
        };
        let server = HttpServer::new(move || App::new().configure(web::configure(state.clone())))
            .listen(listener)
            .map_err(|source| StartupError::Bind {
                addr: settings.bind.to_string(),
                source,
            })?
            .run();
        log::info!("admin listening on {}:{port}", settings.bind.ip());
        Ok(Admin {
            port,
            server,
            store,
            actors,
        })
    }

    /// The bound port (useful when binding port 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The admin's database.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The admin's actors.
    pub fn actors(&self) -> &AdminActors {
        &self.actors
    }

    /// Serves until Ctrl-C/SIGTERM, then stops gracefully: pre-reading stops, the ring fires
    /// what it holds (at most 6 s: its window is 5 s), then the database closes.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let result = self.server.await;
        self.actors.drain(Duration::from_secs(6)).await;
        self.store.close().await;
        log::info!("admin stopped");
        result
    }
}
