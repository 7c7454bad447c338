//! `ExecutorBuilder` and the running `Executor`: settings, handler registration, actor start-up,
//! mounting into an actix-web app, and graceful shutdown.

use std::future::Future;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_web::{web, HttpRequest};

use super::admin_link::AdminLink;
use super::builtin;
use super::handler::{HandlerRegistry, IntoJobResult, JobHandler};
use super::http::{self, ServiceState};
use super::run::RunEnv;
use super::run_log::RunLogs;
use super::run_slots::RunSlots;
use super::scrape;
use super::script_records;
use super::JobContext;
use crate::actors::job_table::{GetCensus, JobTable, StopAccepting, StopAll};
use crate::actors::log_cleaner::LogCleaner;
use crate::actors::registrar::{Deregister, Registrar};
use crate::actors::result_sender::{
    CallbackTuning, Flush, PushCallback, ResultSender, CALLBACK_DIR,
};
use crate::metrics::ExecutorMetrics;
use crate::protocol::{
    label_key_problem, label_value_problem, unusable_token, AdminProtocol, Labels, LABELS_MAX,
    MSG_SHUTDOWN_KILL,
};

mod checks;

/// Default port of an executor's own server (XXL-JOB's).
pub const DEFAULT_EXECUTOR_PORT: u16 = 9999;
/// Default listen address of an executor's own server, which admins must reach.
pub const DEFAULT_EXECUTOR_BIND: IpAddr = IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);
/// Default folder of run logs, script files and pending results.
pub const DEFAULT_LOG_PATH: &str = "./data/joblogs";
/// The largest `max_concurrent_runs` accepted; more is a typo, not a limit.
pub const MAX_CONCURRENT_RUNS: usize = 100_000;

/// How long a shutdown waits for running jobs before killing them (XXL-JOB 3.5 waits 5 s).
const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Registration beat, XXL-JOB's `BEAT_TIMEOUT`.
const DEFAULT_REGISTRY_INTERVAL: Duration = Duration::from_secs(30);
/// Bound on waiting for killed workers to report, and for the last callbacks to go out.
const REPORT_WAIT: Duration = Duration::from_secs(10);

/// Why a library executor without a token is not built, and how to give one.
pub const NO_TOKEN_LIBRARY: &str = "no access token: an executor without one runs whatever any \
     caller sends it. Call .access_token(TOKEN) on the builder with the admin's token (the admin \
     prints it on first start), or .insecure_no_access_token() to run open";

/// Why an executor could not be built or served.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    /// A setting cannot be used; the message names it.
    #[error("invalid executor setting: {0}")]
    Setting(String),
    /// Built outside an actix system (use `#[actix_web::main]` or `actix_rt::System`).
    #[error("the executor must be built inside a running actix system (e.g. #[actix_web::main])")]
    NoSystem,
    /// The log folder, the port or the job runtime could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// Builds an [`Executor`]: settings first, then handlers by name.
///
/// ```
/// use jobwheel::executor::{Executor, ExecutorError, JobContext, JobResult};
///
/// // without the admin's token nothing starts, and the error says how to give one
/// let refused = Executor::builder().app_name("reports").build();
/// assert!(matches!(refused, Err(ExecutorError::Setting(_))));
///
/// // inside an actix system (what #[actix_web::main] gives a service)
/// actix_web::rt::System::new().block_on(async {
///     let executor = Executor::builder()
///         .admin_addresses(["http://127.0.0.1:8080"])
///         .app_name("reports")
///         .access_token("the-admins-access-token")
///         .log_path(std::env::temp_dir().join("jobwheel-doc-executor"))
///         .handler("hello", |ctx: JobContext| async move {
///             ctx.log(format!("hello {}", ctx.param()));
///             JobResult::success()
///         })
///         .blocking_handler("tidy", |_ctx: JobContext| ())
///         .build()
///         .expect("valid settings");
///     // one port for the service and the executor: mount it in the service's app, then
///     // register http://IP:PORT/xxl-job/ with executor.start_registration(port)
///     let _routes = executor.scope("/xxl-job");
/// });
/// ```
#[derive(Debug)]
pub struct ExecutorBuilder {
    admin_addresses: Vec<String>,
    app_name: String,
    access_token: Option<String>,
    address: Option<String>,
    ip: Option<String>,
    port: u16,
    mount_path: String,
    log_path: PathBuf,
    log_retention_days: u32,
    idle_timeout: Duration,
    max_concurrent_runs: usize,
    labels: Vec<(String, String)>,
    admin_protocol: AdminProtocol,
    glue_enabled: bool,
    insecure: bool,
    bind: IpAddr,
    http_job_allow_private: bool,
    builtins: bool,
    trim_memory: bool,
    shutdown_grace: Duration,
    registry_interval: Duration,
    callback: CallbackTuning,
    job_threads: usize,
    handlers: HandlerRegistry,
}

impl Default for ExecutorBuilder {
    fn default() -> Self {
        ExecutorBuilder {
            admin_addresses: Vec::new(),
            app_name: "jobwheel-executor".to_string(),
            access_token: None,
            address: None,
            ip: None,
            port: DEFAULT_EXECUTOR_PORT,
            mount_path: String::new(),
            log_path: PathBuf::from(DEFAULT_LOG_PATH),
            log_retention_days: 30,
            idle_timeout: Duration::from_secs(90),
            max_concurrent_runs: 0,
            labels: Vec::new(),
            admin_protocol: AdminProtocol::V2,
            // a host service opts in to running scripts it is sent
            glue_enabled: false,
            insecure: false,
            bind: DEFAULT_EXECUTOR_BIND,
            http_job_allow_private: false,
            builtins: false,
            trim_memory: false,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            registry_interval: DEFAULT_REGISTRY_INTERVAL,
            callback: CallbackTuning::default(),
            job_threads: 2,
            handlers: HandlerRegistry::default(),
        }
    }
}

impl ExecutorBuilder {
    /// A builder with XXL-JOB's defaults (port 9999, 90 s idle timeout, 30 days of logs, v2
    /// admins); script jobs off, and an access token required.
    pub fn new() -> Self {
        Self::default()
    }

    /// Admin base URLs, tried in order (e.g. `http://127.0.0.1:8080/xxl-job-admin`).
    pub fn admin_addresses<I, S>(mut self, addresses: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.admin_addresses = addresses.into_iter().map(Into::into).collect();
        self
    }

    /// The app name (executor group) to register under.
    pub fn app_name(mut self, name: impl Into<String>) -> Self {
        self.app_name = name.into();
        self
    }

    /// Shared token: required from the admin and sent to it (the admin prints its token on first
    /// start; a group with its own token uses that). Without one, [`build`](Self::build) fails
    /// unless [`insecure_no_access_token`](Self::insecure_no_access_token) was called.
    pub fn access_token(mut self, token: impl Into<String>) -> Self {
        let t = token.into();
        self.access_token = (!t.trim().is_empty()).then(|| t.trim().to_string());
        self
    }

    /// Runs without an access token: anyone who can reach the executor's port can trigger its
    /// jobs (and scripts, if enabled) and read their logs. Logged in those words at every start.
    pub fn insecure_no_access_token(mut self) -> Self {
        self.insecure = true;
        self
    }

    /// IP address the executor's own server listens on (default 0.0.0.0; admins must reach it).
    /// Not used when it is mounted into a host app.
    pub fn bind(mut self, ip: IpAddr) -> Self {
        self.bind = ip;
        self
    }

    /// Address to register instead of `http://ip:port{mount}/` (NAT, containers).
    pub fn address(mut self, address: impl Into<String>) -> Self {
        let mut a = address.into();
        if !a.ends_with('/') {
            a.push('/');
        }
        self.address = Some(a);
        self
    }

    /// IP to register (not used for binding); detected when unset.
    pub fn ip(mut self, ip: impl Into<String>) -> Self {
        self.ip = Some(ip.into());
        self
    }

    /// Port of the executor's own server (0: any free port); for a mounted executor, the host app's port.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Path the executor is mounted under in the host app, e.g. `/xxl-job`; part of the registered address.
    pub fn mount_path(mut self, path: impl Into<String>) -> Self {
        self.mount_path = path.into();
        self
    }

    /// Folder of run logs, script files and pending callbacks.
    pub fn log_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_path = path.into();
        self
    }

    /// Days of run-log day folders to keep; 0 keeps them forever.
    pub fn log_retention_days(mut self, days: u32) -> Self {
        self.log_retention_days = days;
        self
    }

    /// How long a job's worker may idle before it is reaped (its destroy hook runs).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// At most `n` runs at once on this executor, handler and script runs alike; 0 (the
    /// default) for no limit. A run beyond it waits for a slot (first come, first served across
    /// jobs) with its job's later triggers queued behind it, and `/idleBeat` answers busy while
    /// every slot is taken, so BUSYOVER routing sends work elsewhere. At most
    /// [`MAX_CONCURRENT_RUNS`].
    pub fn max_concurrent_runs(mut self, n: usize) -> Self {
        self.max_concurrent_runs = n;
        self
    }

    /// Adds a label the executor registers with (`region`, `eu`): jobs whose `executorSelector`
    /// requires it run only on executors that have it. Keys are 1–63 letters, digits, `.`, `_`,
    /// `-` or `/`; values likewise without `/`; at most [`LABELS_MAX`]. Checked by `build`.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.push((key.into(), value.into()));
        self
    }

    /// Adds every label of `labels` (see [`label`](Self::label)).
    pub fn labels(mut self, labels: impl IntoIterator<Item = (String, String)>) -> Self {
        self.labels.extend(labels);
        self
    }

    /// Callback body shape: v2 (XXL-JOB 2.4–3.4 admins, jobwheel) or v3.5.
    pub fn admin_protocol(mut self, protocol: AdminProtocol) -> Self {
        self.admin_protocol = protocol;
        self
    }

    /// Whether GLUE script jobs may run (off by default: a script is code the admin sends).
    pub fn glue_enabled(mut self, enabled: bool) -> Self {
        self.glue_enabled = enabled;
        self
    }

    /// Whether the built-in `httpJobHandler` may call loopback, private and link-local
    /// addresses (off by default, so a job cannot reach what only this machine can).
    pub fn http_job_allow_private(mut self, allow: bool) -> Self {
        self.http_job_allow_private = allow;
        self
    }

    /// After a burst of idle job workers is reaped, hand the process's free heap pages back to
    /// the kernel (glibc's `malloc_trim`). Off by default: the allocator is the host service's;
    /// `jobwheel executor` turns it on.
    pub fn trim_memory_after_reaping(mut self, trim: bool) -> Self {
        self.trim_memory = trim;
        self
    }

    /// How long shutdown lets running jobs finish before killing them.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Registration beat interval (30 s by default).
    pub fn registry_interval(mut self, interval: Duration) -> Self {
        self.registry_interval = interval;
        self
    }

    /// How often saved callback batches are retried (30 s by default).
    pub fn callback_retry_interval(mut self, interval: Duration) -> Self {
        self.callback.retry_interval = interval;
        self
    }

    /// Callback batching: most results per request and the quiet time that triggers a send.
    pub fn callback_batching(mut self, batch_size: usize, quiet: Duration) -> Self {
        self.callback.batch_size = batch_size.max(1);
        self.callback.quiet = quiet;
        self
    }

    /// Worker threads of the runtime that drives timers and I/O of user handlers (default 2).
    pub fn job_threads(mut self, threads: usize) -> Self {
        self.job_threads = threads.max(1);
        self
    }

    /// Registers an async handler, e.g. `async fn(JobContext) -> JobResult`.
    pub fn handler<F, Fut, R>(self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoJobResult,
    {
        self.register(name, JobHandler::asynchronous(f))
    }

    /// Registers a blocking handler, run on its own blocking thread.
    pub fn blocking_handler<F, R>(self, name: impl Into<String>, f: F) -> Self
    where
        F: Fn(JobContext) -> R + Send + Sync + 'static,
        R: IntoJobResult,
    {
        self.register(name, JobHandler::blocking(f))
    }

    /// Registers a handler built with [`JobHandler`] (e.g. with init/destroy hooks).
    pub fn register(mut self, name: impl Into<String>, handler: JobHandler) -> Self {
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Adds `demoJobHandler`, `shardingJobHandler` and `httpJobHandler` when the executor is
    /// built; a handler of your own with one of those names wins.
    pub fn with_builtin_handlers(mut self) -> Self {
        self.builtins = true;
        self
    }

    /// Starts the executor's actors (inside the current actix system) and returns its handle.
    ///
    /// Nothing listens yet: call `Executor::serve` for an own port, or mount
    /// [`Executor::configure`]/[`Executor::scope`] in an app and call [`Executor::start_registration`].
    pub fn build(mut self) -> Result<Executor, ExecutorError> {
        self.validate()?;
        if self.builtins {
            let allow_private = self.http_job_allow_private;
            self.handlers = builtin::add_missing(self.handlers, allow_private);
        }
        if actix_rt::System::try_current().is_none() {
            return Err(ExecutorError::NoSystem);
        }
        std::fs::create_dir_all(&self.log_path).map_err(|source| ExecutorError::Io {
            what: format!("cannot create log path {}", self.log_path.display()),
            source,
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.job_threads)
            .thread_name("jobwheel-job")
            .enable_all()
            .build()
            .map_err(|source| ExecutorError::Io {
                what: "cannot start the job runtime".to_string(),
                source,
            })?;
        let labels = self.checked_labels()?;
        let link = Arc::new(AdminLink {
            addresses: self.admin_addresses.clone(),
            app_name: self.app_name.clone(),
            access_token: self.access_token.clone(),
            protocol: self.admin_protocol,
        });
        // the executor's own actors get their own thread, apart from the host app's and the users' code
        let arbiter = Arbiter::new();
        let handle = arbiter.handle();
        let metrics = ExecutorMetrics::new();
        let callback = {
            let link = link.clone();
            let base = self.log_path.clone();
            let tuning = self.callback.clone();
            let metrics = metrics.clone();
            Supervisor::start_in_arbiter(&handle, move |_| {
                ResultSender::new(link, &base, tuning, metrics.clone())
            })
        };
        // before this executor takes a trigger: no script of a run lost with its predecessor
        // may run beside the admin's retry of that run
        let logs = RunLogs::new(&self.log_path);
        for result in script_records::stop_left_behind(&self.log_path, &logs) {
            callback.do_send(PushCallback(result));
        }
        let env = Arc::new(RunEnv {
            log_base: self.log_path.clone(),
            logs: logs.clone(),
            runtime: runtime.handle().clone(),
            results: callback.clone(),
            idle_timeout: self.idle_timeout,
            live_workers: AtomicUsize::new(0),
            metrics: metrics.clone(),
            slots: RunSlots::new(self.max_concurrent_runs),
        });
        let handlers = Arc::new(self.handlers);
        log::info!(
            "executor {} handlers: {}",
            self.app_name,
            handlers.names().join(", ")
        );
        let exposure = self.insecure.then(|| Exposure {
            glue: self.glue_enabled,
            handlers: handlers.names().join(", "),
        });
        // an executor mounted in a host app, or on a fixed port, says it now; one on port 0
        // when its port is known
        if let Some(exposure) = exposure.as_ref().filter(|_| self.port != 0) {
            exposure.warn(&self.app_name, self.port);
        }
        let jobs = {
            let handlers = handlers.clone();
            let (glue, trim) = (self.glue_enabled, self.trim_memory);
            Supervisor::start_in_arbiter(&handle, move |_| JobTable::new(handlers, env, glue, trim))
        };
        {
            let base = self.log_path.clone();
            let days = self.log_retention_days;
            LogCleaner::start_in_arbiter(&handle, move |_| LogCleaner::new(base, days));
        }
        let state = ServiceState {
            app_name: Arc::from(self.app_name.as_str()),
            access_token: self.access_token.as_deref().map(Arc::from),
            logs,
            jobs: jobs.clone(),
            metrics,
            callback_dir: Arc::from(self.log_path.join(CALLBACK_DIR).as_path()),
        };
        Ok(Executor {
            inner: Arc::new(Inner {
                ip: self.ip.clone().unwrap_or_else(detect_ip),
                port: self.port,
                bind: self.bind,
                exposure,
                address: self.address,
                mount_path: self.mount_path,
                link,
                registry_interval: self.registry_interval,
                labels,
                shutdown_grace: self.shutdown_grace,
                state,
                jobs,
                callback,
                registrar: OnceLock::new(),
                shut_down: AtomicBool::new(false),
                arbiter,
                _runtime: UserRuntime(Some(runtime)),
            }),
        })
    }
}

/// The runtime user code runs on; dropped without blocking, since drops may happen inside async code.
struct UserRuntime(Option<tokio::runtime::Runtime>);

impl Drop for UserRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// What an executor without a token lets anyone do, for the warning at its start.
pub(crate) struct Exposure {
    glue: bool,
    handlers: String,
}

impl Exposure {
    /// One line, in words, of what is open on `port`.
    pub(crate) fn warn(&self, app_name: &str, port: u16) {
        let what = if self.glue {
            "run scripts".to_string()
        } else {
            format!("run its handlers ({})", self.handlers)
        };
        log::warn!(
            "executor {app_name} runs WITHOUT an access token (insecure): anyone who can reach port {port} can {what} as user {}, kill its jobs and read their logs",
            current_user()
        );
    }
}

/// The user this process runs as, by name where the system knows it.
fn current_user() -> String {
    // SAFETY: geteuid cannot fail; getpwuid_r writes into the buffers given to it and only
    // returns a pointer into them (or null), which is read before they go out of scope
    unsafe {
        let uid = libc::geteuid();
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc == 0 && !result.is_null() && !pwd.pw_name.is_null() {
            let name = std::ffi::CStr::from_ptr(pwd.pw_name).to_string_lossy();
            return format!("{name} (uid {uid})");
        }
        format!("uid {uid}")
    }
}

struct Inner {
    ip: String,
    port: u16,
    bind: IpAddr,
    exposure: Option<Exposure>,
    address: Option<String>,
    mount_path: String,
    link: Arc<AdminLink>,
    registry_interval: Duration,
    /// What the executor registers with for jobs' selectors.
    labels: Labels,
    shutdown_grace: Duration,
    state: ServiceState,
    jobs: Addr<JobTable>,
    callback: Addr<ResultSender>,
    registrar: OnceLock<Addr<Registrar>>,
    shut_down: AtomicBool,
    arbiter: Arbiter,
    _runtime: UserRuntime,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.arbiter.stop();
    }
}

/// A running executor; cheap to clone (clones share it).
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("app_name", &self.inner.link.app_name)
            .field("port", &self.inner.port)
            .finish()
    }
}

impl Executor {
    /// A builder with XXL-JOB's defaults.
    pub fn builder() -> ExecutorBuilder {
        ExecutorBuilder::new()
    }

    /// The app name this executor registers under.
    pub fn app_name(&self) -> &str {
        &self.inner.link.app_name
    }

    /// The configured port (the executor's own, or the host app's when mounted).
    pub fn port(&self) -> u16 {
        self.inner.port
    }

    /// The IP address the executor's own server listens on.
    pub fn bind(&self) -> IpAddr {
        self.inner.bind
    }

    /// Logs what an executor without a token opens, once its port is known (port 0 at build).
    pub(crate) fn warn_if_insecure_on(&self, port: u16) {
        if self.inner.port == 0 {
            if let Some(exposure) = &self.inner.exposure {
                exposure.warn(&self.inner.link.app_name, port);
            }
        }
    }

    /// The address registered for `port`: the configured address, else `http://ip:port{mount}/`.
    pub fn registered_address(&self, port: u16) -> String {
        if let Some(a) = &self.inner.address {
            return a.clone();
        }
        let ip = &self.inner.ip;
        let host = if ip.contains(':') {
            format!("[{ip}]")
        } else {
            ip.clone()
        };
        let mount = self.inner.mount_path.trim_matches('/');
        if mount.is_empty() {
            format!("http://{host}:{port}/")
        } else {
            format!("http://{host}:{port}/{mount}/")
        }
    }

    /// Mounts the six executor paths on an app or scope: `App::new().configure(executor.configure())`.
    pub fn configure(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        http::routes(self.inner.state.clone())
    }

    /// The executor's metrics: its registry, for a host that gathers it into its own.
    pub fn metrics(&self) -> &ExecutorMetrics {
        &self.inner.state.metrics
    }

    /// Every metric in the Prometheus text format, with the gauges (workers, queued triggers,
    /// saved result batches) read now: what `GET /metrics` answers.
    pub async fn render_metrics(&self) -> String {
        scrape::render(&self.inner.state).await
    }

    /// `GET /metrics` for a host app that serves the executor's metrics at a path of its
    /// choosing: `app.route("/metrics", executor.metrics_route())`. It answers 401 without the
    /// executor's access token (as `Authorization: Bearer`), unless the executor has none.
    pub fn metrics_route(&self) -> actix_web::Route {
        let state = self.inner.state.clone();
        web::get().to(move |req: HttpRequest| scrape::metrics(req, state.clone()))
    }

    /// A scope at `path` with the executor's paths, `GET {path}/metrics`, and Java's answer for
    /// any other path under it.
    pub fn scope(&self, path: &str) -> actix_web::Scope {
        let state = self.inner.state.clone();
        web::scope(path)
            .configure(http::routes(state.clone()))
            .route("/metrics", self.metrics_route())
            .default_service(web::to(move |req: HttpRequest| {
                http::not_found(req, state.clone())
            }))
    }

    /// Answer for unknown paths, for an app that serves nothing but the executor.
    pub(crate) fn not_found_service(
        &self,
    ) -> impl Fn(HttpRequest) -> std::pin::Pin<Box<dyn Future<Output = actix_web::HttpResponse>>>
           + Clone
           + 'static {
        let state = self.inner.state.clone();
        move |req: HttpRequest| Box::pin(http::not_found(req, state.clone()))
    }

    /// Starts registering `registered_address(port)` with the admins (once; later calls do nothing).
    pub fn start_registration(&self, port: u16) {
        let address = self.registered_address(port);
        let link = self.inner.link.clone();
        let interval = self.inner.registry_interval;
        let load = self.inner.jobs.clone().recipient();
        let labels = self.inner.labels.clone();
        let handle = self.inner.arbiter.handle();
        self.inner.registrar.get_or_init(move || {
            Supervisor::start_in_arbiter(&handle, move |_| {
                Registrar::new(link, address, interval, load.clone(), labels.clone())
            })
        });
    }

    /// Refuses every further trigger (first step of [`shutdown`](Self::shutdown)).
    pub async fn stop_accepting(&self) {
        let _ = self.inner.jobs.send(StopAccepting).await;
    }

    /// Graceful stop: refuse triggers, let running jobs finish for the grace period, kill and report the
    /// rest, deliver (or save) every callback, then remove the registration. Safe to call twice.
    pub async fn shutdown(&self) {
        if self.inner.shut_down.swap(true, Ordering::SeqCst) {
            return;
        }
        let inner = &self.inner;
        log::info!("executor {} shutting down", inner.link.app_name);
        let _ = inner.jobs.send(StopAccepting).await;
        let deadline = Instant::now() + inner.shutdown_grace;
        let mut busy = 0;
        while let Ok(census) = inner.jobs.send(GetCensus).await {
            busy = census.busy;
            if busy == 0 || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if busy > 0 {
            log::warn!("{busy} job(s) still running after the grace period; killing them");
        }
        let _ = inner
            .jobs
            .send(StopAll {
                reason: MSG_SHUTDOWN_KILL.to_string(),
            })
            .await;
        let deadline = Instant::now() + REPORT_WAIT;
        while let Ok(census) = inner.jobs.send(GetCensus).await {
            if census.live == 0 || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        match tokio::time::timeout(REPORT_WAIT, inner.callback.send(Flush)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => log::error!("callbacks not flushed: result sender gone ({e})"),
            Err(_) => log::warn!(
                "callbacks still in flight at shutdown; unsent ones stay in callbacklogs/"
            ),
        }
        if let Some(registrar) = inner.registrar.get() {
            match tokio::time::timeout(REPORT_WAIT, registrar.send(Deregister)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => log::warn!("registryRemove not sent: registrar gone ({e})"),
                Err(_) => log::warn!("registryRemove not answered within {REPORT_WAIT:?}"),
            }
        }
        log::info!("executor {} stopped", inner.link.app_name);
    }
}

/// The machine's outward IP (no packet is sent: connecting a UDP socket only picks a route).
fn detect_ip() -> String {
    std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| {
            s.connect("10.255.255.255:1")?;
            s.local_addr()
        })
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_unspecified())
        .map(|ip| ip.to_string())
        .unwrap_or_else(|| "127.0.0.1".to_string())
}
