//! Shared by the executor integration tests: a recording fake admin, the two executor targets (library and
//! `jobwheel executor` binary), trigger builders and polling helpers.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use jobwheel::executor::{Executor, ExecutorServer, JobContext, JobHandler, JobResult};
use jobwheel::protocol::{decode_callbacks, AdminProtocol, HandleCallbackParam, TriggerParam};
use serde_json::{json, Value};

/// App name every test executor registers under.
pub const APP: &str = "test-app";

#[allow(unused_imports)] // the security tests include this file without using it
pub use crate::kit::alive;
pub use crate::kit::poll_for;
pub use jobwheel::clock::now_ms;

// ---------------------------------------------------------------- fake admin

/// One request the fake admin received.
#[derive(Debug, Clone)]
pub struct Record {
    /// Request path, e.g. `/api/callback`.
    pub path: String,
    /// Lower-cased header names.
    pub headers: HashMap<String, String>,
    /// Raw body.
    pub body: String,
    /// The code the fake admin answered.
    pub answered: i32,
    /// When it arrived (epoch ms).
    pub at_ms: i64,
}

#[derive(Default)]
struct AdminState {
    records: Mutex<Vec<Record>>,
    failing: Mutex<bool>,
    hanging: Mutex<bool>,
}

/// An admin that records registry/callback requests and answers 200 (or 500 when told).
pub struct FakeAdmin {
    port: u16,
    state: Arc<AdminState>,
    handle: Option<ServerHandle>,
}

async fn record(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<Arc<AdminState>>,
) -> HttpResponse {
    let failing = *state.failing.lock().unwrap();
    let hanging = *state.hanging.lock().unwrap();
    let answered = if failing { 500 } else { 200 };
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    state.records.lock().unwrap().push(Record {
        path: req.path().to_string(),
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
        answered,
        at_ms: now_ms(),
    });
    if hanging {
        // an admin that takes a request and never answers in time
        actix_rt::time::sleep(Duration::from_secs(60)).await;
    }
    if req.path() == "/probe/redirect" {
        return HttpResponse::Found()
            .insert_header(("Location", "/probe/http"))
            .finish();
    }
    let answer = if failing {
        json!({"code":500,"msg":"fake admin failure"})
    } else {
        json!({"code":200,"msg":"Success"})
    };
    HttpResponse::Ok().json(answer)
}

impl FakeAdmin {
    /// Starts on an ephemeral port.
    pub fn start() -> Self {
        let mut admin = FakeAdmin {
            port: 0,
            state: Arc::new(AdminState::default()),
            handle: None,
        };
        admin.listen(0);
        admin
    }

    fn listen(&mut self, port: u16) {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("fake admin binds");
        self.port = listener.local_addr().unwrap().port();
        let state = self.state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(state.clone()))
                .default_service(web::to(record))
        })
        .workers(1)
        .listen(listener)
        .expect("fake admin listens")
        .run();
        self.handle = Some(server.handle());
        actix_rt::spawn(server);
    }

    /// Base URL to give the executor.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Answer 500 to everything (true) or 200 (false).
    pub fn set_failing(&self, failing: bool) {
        *self.state.failing.lock().unwrap() = failing;
    }

    /// Take requests and answer none of them for a minute (true), or answer (false).
    pub fn set_hanging(&self, hanging: bool) {
        *self.state.hanging.lock().unwrap() = hanging;
    }

    /// Stops listening (connections are refused).
    pub async fn stop(&mut self) {
        if let Some(h) = self.handle.take() {
            h.stop(false).await;
        }
    }

    /// Listens again on the same port.
    pub fn restart(&mut self) {
        let port = self.port;
        self.listen(port);
    }

    /// Every request so far.
    pub fn records(&self) -> Vec<Record> {
        self.state.records.lock().unwrap().clone()
    }

    /// Requests to one path.
    pub fn requests(&self, path: &str) -> Vec<Record> {
        self.records()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Callback items of requests the admin accepted (answered 200), in arrival order.
    pub fn accepted_callbacks(&self) -> Vec<HandleCallbackParam> {
        self.requests("/api/callback")
            .iter()
            .filter(|r| r.answered == 200)
            .flat_map(|r| decode_callbacks(r.body.as_bytes()).expect("callback body decodes"))
            .collect()
    }

    /// The accepted callback of `log_id`, once it arrived.
    pub fn callback_of(&self, log_id: i64) -> Option<HandleCallbackParam> {
        self.accepted_callbacks()
            .into_iter()
            .find(|c| c.log_id == log_id)
    }

    /// Waits for the accepted callback of `log_id`.
    pub async fn wait_callback(&self, log_id: i64, limit: Duration) -> HandleCallbackParam {
        poll_for(limit, || self.callback_of(log_id))
            .await
            .unwrap_or_else(|| {
                panic!(
                    "no callback for log {log_id} within {limit:?}; got {:?}",
                    self.accepted_callbacks()
                )
            })
    }

    /// When the accepted callback of `log_id` arrived.
    pub fn callback_time(&self, log_id: i64) -> Option<i64> {
        self.requests("/api/callback")
            .iter()
            .filter(|r| r.answered == 200)
            .find(|r| {
                decode_callbacks(r.body.as_bytes())
                    .map(|v| v.iter().any(|c| c.log_id == log_id))
                    .unwrap_or(false)
            })
            .map(|r| r.at_ms)
    }
}

// ---------------------------------------------------------------- targets

/// Which executor a scenario runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `jobwheel::executor` in the test process, serving its own port.
    Library,
    /// The `jobwheel executor` binary as a child process.
    Binary,
}

/// Executor settings a scenario may change.
/// The token test executors share with their admin unless a test picks another.
pub const TEST_TOKEN: &str = "test-executor-token";

#[derive(Debug, Clone)]
pub struct Opts {
    /// The access token; `None` starts the executor insecure (`--insecure`).
    pub token: Option<String>,
    pub idle_timeout_secs: u64,
    pub glue_enabled: bool,
    /// `httpJobHandler` may call loopback and private addresses.
    pub http_job_allow_private: bool,
    pub protocol: AdminProtocol,
    /// Reuse this log folder (e.g. with pre-written callback files).
    pub log_dir: Option<PathBuf>,
    /// Runs at once; 0 for no limit.
    pub max_concurrent_runs: usize,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            token: Some(TEST_TOKEN.to_string()),
            idle_timeout_secs: 90,
            glue_enabled: true,
            http_job_allow_private: false,
            protocol: AdminProtocol::V2,
            log_dir: None,
            max_concurrent_runs: 0,
        }
    }
}

/// Counters the library target's test handlers update.
#[derive(Debug, Default)]
pub struct Probe {
    pub init: AtomicUsize,
    pub destroy: AtomicUsize,
    pub dropped: AtomicUsize,
    pub starts: Mutex<Vec<(i64, i64)>>,
}

/// Increments a counter when the handler's future is dropped (finished or cancelled).
struct DropGuard(Arc<Probe>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// A running executor under test.
pub struct Exec {
    /// `http://127.0.0.1:PORT/`
    pub base: String,
    pub log_dir: PathBuf,
    pub token: Option<String>,
    pub probe: Arc<Probe>,
    server: Option<ExecutorServer>,
    child: Option<Child>,
    stderr_file: Option<PathBuf>,
    _tmp: Option<tempfile::TempDir>,
    client: awc::Client,
}

fn library_handlers(probe: Arc<Probe>) -> Vec<(&'static str, JobHandler)> {
    let p1 = probe.clone();
    let p2 = probe.clone();
    let p3 = probe.clone();
    let p4 = probe.clone();
    let p5 = probe.clone();
    vec![
        (
            "asyncSleep",
            JobHandler::asynchronous(move |ctx: JobContext| {
                let guard = DropGuard(p1.clone());
                async move {
                    let _guard = guard;
                    let ms: u64 = ctx.param().parse().unwrap_or(1000);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    JobResult::success_with("slept")
                }
            }),
        ),
        (
            "asyncSpin",
            // never yields: the worst an async handler can do to a runtime
            JobHandler::asynchronous(|ctx: JobContext| async move {
                let ms: u64 = ctx.param().parse().unwrap_or(5000);
                let end = Instant::now() + Duration::from_millis(ms);
                let mut x: u64 = 0;
                while Instant::now() < end {
                    x = x.wrapping_add(1);
                }
                JobResult::success_with(format!("spun {x}"))
            }),
        ),
        (
            "recordStart",
            JobHandler::asynchronous(move |ctx: JobContext| {
                let p = p2.clone();
                async move {
                    p.starts.lock().unwrap().push((ctx.log_id(), now_ms()));
                    JobResult::success()
                }
            }),
        ),
        (
            "panicker",
            JobHandler::asynchronous(|_ctx: JobContext| async move {
                if true {
                    panic!("boom from handler");
                }
                JobResult::success()
            }),
        ),
        (
            "failing",
            JobHandler::blocking(|_ctx: JobContext| -> Result<(), String> {
                Err("bad input".to_string())
            }),
        ),
        (
            "blockingEcho",
            JobHandler::blocking(|ctx: JobContext| {
                ctx.log(format!("echo {}", ctx.param()));
                JobResult::success_with(format!("echo:{}", ctx.param()))
            }),
        ),
        (
            "hooked",
            JobHandler::asynchronous(|ctx: JobContext| async move {
                ctx.log("hooked ran");
                JobResult::success()
            })
            .on_init(move || {
                p3.init.fetch_add(1, Ordering::SeqCst);
            })
            .on_destroy(move || {
                p4.destroy.fetch_add(1, Ordering::SeqCst);
            }),
        ),
        (
            "cancelAware",
            JobHandler::blocking(move |ctx: JobContext| {
                while !ctx.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                p5.dropped.fetch_add(1, Ordering::SeqCst);
                JobResult::success_with("saw cancel")
            }),
        ),
    ]
}

impl Exec {
    /// Starts an executor of `target` registered with `admin`.
    pub async fn start(target: Target, admin: &FakeAdmin, opts: Opts) -> Exec {
        let (tmp, log_dir) = match &opts.log_dir {
            Some(d) => (None, d.clone()),
            None => {
                let t = tempfile::tempdir().unwrap();
                let d = t.path().to_path_buf();
                (Some(t), d)
            }
        };
        let probe = Arc::new(Probe::default());
        let client = crate::kit::api::client(Duration::from_secs(10), true);
        match target {
            Target::Library => {
                let mut b = Executor::builder()
                    .admin_addresses([admin.url()])
                    .app_name(APP)
                    .ip("127.0.0.1")
                    .port(0)
                    .log_path(&log_dir)
                    .idle_timeout(Duration::from_secs(opts.idle_timeout_secs))
                    .glue_enabled(opts.glue_enabled)
                    .http_job_allow_private(opts.http_job_allow_private)
                    .admin_protocol(opts.protocol)
                    .max_concurrent_runs(opts.max_concurrent_runs)
                    .with_builtin_handlers();
                b = match &opts.token {
                    Some(t) => b.access_token(t.clone()),
                    None => b.insecure_no_access_token(),
                };
                for (name, h) in library_handlers(probe.clone()) {
                    b = b.register(name, h);
                }
                let executor = b.build().expect("executor builds");
                let server = executor.serve().await.expect("executor serves");
                Exec {
                    base: format!("http://127.0.0.1:{}/", server.port()),
                    log_dir,
                    token: opts.token,
                    probe,
                    server: Some(server),
                    child: None,
                    stderr_file: None,
                    _tmp: tmp,
                    client,
                }
            }
            Target::Binary => {
                let stderr_file = log_dir.join("executor-stderr.log");
                let stderr = std::fs::File::create(&stderr_file).unwrap();
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_jobwheel"));
                cmd.arg("executor")
                    .args(["--admin-addresses", &admin.url()])
                    .args(["--app-name", APP])
                    .args(["--ip", "127.0.0.1"])
                    .args(["--port", "0"])
                    .args(["--log-path", log_dir.to_str().unwrap()])
                    .args(["--idle-timeout-secs", &opts.idle_timeout_secs.to_string()])
                    .args(["--glue-enabled", &opts.glue_enabled.to_string()])
                    .args([
                        "--http-job-allow-private",
                        &opts.http_job_allow_private.to_string(),
                    ])
                    .args(["--admin-protocol", opts.protocol.as_str()])
                    .args([
                        "--max-concurrent-runs",
                        &opts.max_concurrent_runs.to_string(),
                    ])
                    .env("RUST_LOG", "info")
                    .stdout(Stdio::null())
                    .stderr(stderr);
                for (k, _) in std::env::vars() {
                    if k.starts_with("JOBWHEEL_") {
                        cmd.env_remove(k);
                    }
                }
                match &opts.token {
                    Some(t) => cmd.args(["--access-token", t]),
                    None => cmd.arg("--insecure"),
                };
                let child = cmd.spawn().expect("jobwheel binary starts");
                let mut exec = Exec {
                    base: String::new(),
                    log_dir,
                    token: opts.token,
                    probe,
                    server: None,
                    child: Some(child),
                    stderr_file: Some(stderr_file),
                    _tmp: tmp,
                    client,
                };
                // the registration carries the port the binary bound
                let base = poll_for(Duration::from_secs(20), || {
                    admin.requests("/api/registry").iter().find_map(|r| {
                        let v: Value = serde_json::from_str(&r.body).ok()?;
                        Some(v["registryValue"].as_str()?.to_string())
                    })
                })
                .await;
                match base {
                    Some(b) => exec.base = b,
                    None => panic!("binary did not register; stderr:\n{}", exec.stderr()),
                }
                exec
            }
        }
    }

    /// The binary's log output so far (empty for the library).
    pub fn stderr(&self) -> String {
        self.stderr_file
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    }

    /// POSTs raw text to a path with the configured token; returns the JSON answer.
    pub async fn post_raw(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> Value {
        let mut req = self
            .client
            .post(format!("{}{}", self.base, path.trim_start_matches('/')))
            .insert_header(("Content-Type", "application/json"));
        if let Some(t) = &self.token {
            req = req.insert_header(("XXL-JOB-ACCESS-TOKEN", t.clone()));
        }
        for (k, v) in headers {
            req = req.insert_header((*k, *v));
        }
        let mut resp = req
            .send_body(body.to_string())
            .await
            .expect("executor answers");
        assert_eq!(resp.status().as_u16(), 200, "every answer is HTTP 200");
        let bytes = resp.body().await.expect("body");
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    }

    /// POSTs JSON to a path.
    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.post_raw(path, &body.to_string(), &[]).await
    }

    /// `GET /metrics` (with the token): the text exposition.
    pub async fn metrics(&self) -> String {
        let mut req = self.client.get(format!("{}metrics", self.base));
        if let Some(t) = &self.token {
            req = req.insert_header(("Authorization", format!("Bearer {t}")));
        }
        let mut resp = req.send().await.expect("executor answers");
        assert_eq!(resp.status().as_u16(), 200);
        String::from_utf8_lossy(&resp.body().await.expect("body")).into_owned()
    }

    /// `/run` with a trigger.
    pub async fn run(&self, p: &TriggerParam) -> Value {
        self.post("/run", serde_json::to_value(p).unwrap()).await
    }

    /// `/run` that must be accepted.
    pub async fn run_ok(&self, p: &TriggerParam) {
        let a = self.run(p).await;
        assert_eq!(a["code"], 200, "trigger {} refused: {a}", p.log_id);
    }

    /// Reads the whole run log of a trigger through `/log`.
    pub async fn log_of(&self, p: &TriggerParam) -> String {
        let a = self
            .post(
                "/log",
                json!({"logDateTim": p.log_date_time, "logId": p.log_id, "fromLineNum": 1}),
            )
            .await;
        a["data"]["logContent"].as_str().unwrap_or("").to_string()
    }

    /// SIGKILL to the binary, waiting until it is gone (the library lives in the test's process).
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("only the binary can be killed");
        child.kill().expect("SIGKILL");
        child.wait().expect("the killed binary reaped");
    }

    /// Graceful stop: the library's `stop`, SIGTERM for the binary (waits for exit).
    pub async fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await;
        }
        if let Some(mut child) = self.child.take() {
            signal(child.id() as i32, libc::SIGTERM);
            let exited =
                poll_for(Duration::from_secs(30), || child.try_wait().ok().flatten()).await;
            assert!(exited.is_some(), "binary did not exit after SIGTERM");
        }
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sends a signal to a process.
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: plain kill(2).
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Reads a pid written by a script, waiting for the file.
pub async fn read_pid(path: &Path) -> i32 {
    poll_for(Duration::from_secs(10), || {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
    })
    .await
    .unwrap_or_else(|| panic!("no pid in {}", path.display()))
}

// ---------------------------------------------------------------- triggers

static NEXT_LOG: AtomicUsize = AtomicUsize::new(1000);

/// A fresh log id, unique within the test process.
pub fn next_log_id() -> i64 {
    NEXT_LOG.fetch_add(1, Ordering::SeqCst) as i64
}

/// A BEAN trigger.
pub fn bean(job_id: i32, handler: &str, param: &str) -> TriggerParam {
    TriggerParam {
        job_id,
        executor_handler: handler.to_string(),
        executor_params: param.to_string(),
        executor_block_strategy: "SERIAL_EXECUTION".to_string(),
        executor_timeout: 0,
        log_id: next_log_id(),
        log_date_time: now_ms(),
        glue_type: "BEAN".to_string(),
        glue_source: String::new(),
        glue_updatetime: 1_700_000_000_000,
        broadcast_index: 0,
        broadcast_total: 1,
        workflow_context: None,
        max_queued: None,
    }
}

/// A GLUE_SHELL trigger with `source` as version `version`.
pub fn shell(job_id: i32, source: &str, version: i64) -> TriggerParam {
    TriggerParam {
        glue_type: "GLUE_SHELL".to_string(),
        glue_source: source.to_string(),
        glue_updatetime: version,
        executor_handler: String::new(),
        ..bean(job_id, "", "")
    }
}

/// Sets the block strategy.
pub fn strategy(mut p: TriggerParam, s: &str) -> TriggerParam {
    p.executor_block_strategy = s.to_string();
    p
}

/// Generates `mod $name { library, binary }` running the scenario `$name(Target)` against both targets.
#[macro_export]
macro_rules! both_targets {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[actix_rt::test]
                async fn library() {
                    super::$name($crate::executor_support::Target::Library).await
                }
                #[actix_rt::test]
                async fn binary() {
                    super::$name($crate::executor_support::Target::Binary).await
                }
            }
        )*
    };
}
