//! Helpers of the monitor tests: an in-process admin with short monitor intervals, a fake
//! executor whose runs always fail, and a webhook receiver.

#![allow(dead_code)]

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use jobwheel::actors::monitor::MonitorSettings;
use jobwheel::config::{AdminArgs, AdminSettings, ConfigFile};
use jobwheel::model::{AddressType, JobGroup, JobInfo, JobLog};
use jobwheel::startup::{Admin, AdminActors};
use jobwheel::store::{LogFilter, Store};
use serde_json::{json, Value};

use crate::common::TestDb;

/// A running admin.
pub struct TestAdmin {
    pub port: u16,
    pub store: Store,
    pub actors: AdminActors,
}

impl TestAdmin {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops using the database (the admin's actors log errors from then on).
    pub async fn close(&self) {
        self.store.close().await;
    }
}

/// The access token of the monitor tests' admins and executors.
pub const TOKEN: &str = "monitor-test-token";

/// Admin settings for a test database.
pub fn admin_settings(db: &TestDb, extra: AdminArgs) -> AdminSettings {
    let args = AdminArgs {
        bind: Some("127.0.0.1:0".into()),
        database_url: Some(db.url.clone()),
        admin_password: Some("monitor-test".into()),
        timezone: Some("UTC".into()),
        access_token: Some(TOKEN.into()),
        ..extra
    };
    AdminSettings::resolve(&args, &ConfigFile::none()).expect("test admin settings")
}

/// Short intervals: fail monitor 200 ms, lost results 200 ms, report 1 h (tests call it directly).
pub fn fast_monitors(settings: &AdminSettings) -> MonitorSettings {
    let mut m = MonitorSettings::from_admin(settings);
    m.fail_interval = Duration::from_millis(200);
    m.lost_interval = Duration::from_millis(200);
    m.report_interval = Duration::from_secs(3_600);
    m.webhook_timeout = Duration::from_secs(3);
    m
}

/// Builds and serves an admin on the current actix system.
pub async fn start_admin(settings: &AdminSettings, monitors: MonitorSettings) -> TestAdmin {
    let admin = Admin::build_with_monitors(settings, monitors)
        .await
        .expect("admin starts");
    let port = admin.port();
    let store = admin.store().clone();
    let actors = admin.actors().clone();
    actix_web::rt::spawn(admin.run_until_stopped());
    TestAdmin {
        port,
        store,
        actors,
    }
}

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind test server");
    let port = l.local_addr().expect("local addr").port();
    (l, port)
}

struct ExecutorState {
    admin_url: String,
}

/// `/run`: handler `refuse` answers code 500 (the trigger fails); any other is accepted and,
/// 50 ms later, reported failed to the admin's `/api/callback`.
async fn run(state: web::Data<ExecutorState>, body: web::Json<Value>) -> HttpResponse {
    let handler = body["executorHandler"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if handler == "refuse" {
        return HttpResponse::Ok()
            .json(json!({"code": 500, "msg": "refused by the test executor"}));
    }
    let log_id = body["logId"].as_i64().unwrap_or_default();
    let log_time = body["logDateTime"]
        .as_i64()
        .or_else(|| body["logDateTim"].as_i64())
        .unwrap_or_default();
    let url = format!("{}/api/callback", state.admin_url);
    actix_web::rt::spawn(async move {
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        let client = awc::Client::default();
        let result = json!([{"logId": log_id, "logDateTim": log_time, "handleCode": 500, "handleMsg": "always fails"}]);
        let post = client
            .post(&url)
            .insert_header(("XXL-JOB-ACCESS-TOKEN", TOKEN));
        if let Err(e) = post.send_json(&result).await {
            eprintln!("test executor: callback for log {log_id} failed: {e}");
        }
    });
    HttpResponse::Ok().json(json!({"code": 200}))
}

async fn ok() -> HttpResponse {
    HttpResponse::Ok().json(json!({"code": 200}))
}

/// Starts the fake executor; returns its address as registered (`http://127.0.0.1:PORT/`).
pub fn start_failing_executor(admin_url: String) -> String {
    let (l, port) = listener();
    let state = web::Data::new(ExecutorState { admin_url });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .route("/run", web::post().to(run))
            .route("/beat", web::post().to(ok))
            .route("/idleBeat", web::post().to(ok))
    })
    .workers(1)
    .listen(l)
    .expect("listen")
    .run();
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}/")
}

/// An executor that only answers probes: `/beat` 200, and `/idleBeat` 500 "running" when
/// `busy`, else 200 (idle). Returns its address.
pub fn start_probe_executor(busy: bool) -> String {
    let (l, port) = listener();
    let server = HttpServer::new(move || {
        App::new().route("/beat", web::post().to(ok)).route(
            "/idleBeat",
            web::post().to(move || async move {
                if busy {
                    HttpResponse::Ok().json(
                        json!({"code": 500, "msg": "job thread is running or has trigger queue."}),
                    )
                } else {
                    HttpResponse::Ok().json(json!({"code": 200}))
                }
            }),
        )
    })
    .workers(1)
    .listen(l)
    .expect("listen")
    .run();
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}/")
}

/// Registers an executor with the admin over its HTTP API.
pub async fn register(admin_url: &str, app: &str, address: &str) {
    let client = awc::Client::default();
    let mut res = client
        .post(format!("{admin_url}/api/registry"))
        .insert_header(("XXL-JOB-ACCESS-TOKEN", TOKEN))
        .send_json(
            &json!({"registryGroup": "EXECUTOR", "registryKey": app, "registryValue": address}),
        )
        .await
        .expect("registry call");
    let body: Value = res.json().await.expect("registry answer");
    assert_eq!(body["code"], 200, "{body}");
}

/// Requests received by a webhook receiver.
#[derive(Clone, Default)]
pub struct Hooks(pub Arc<Mutex<Vec<Value>>>);

impl Hooks {
    pub fn received(&self) -> Vec<Value> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

/// A webhook receiver: `/hook` answers 200, `/fail` 500; both record the JSON body.
pub fn start_webhook_receiver() -> (String, Hooks) {
    let hooks = Hooks::default();
    let (l, port) = listener();
    let data = web::Data::new(hooks.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route(
                "/hook",
                web::post().to(|h: web::Data<Hooks>, body: web::Json<Value>| async move {
                    h.0.lock().expect("hooks").push(body.into_inner());
                    HttpResponse::Ok().body("ok")
                }),
            )
            .route(
                "/fail",
                web::post().to(|h: web::Data<Hooks>, body: web::Json<Value>| async move {
                    h.0.lock().expect("hooks").push(body.into_inner());
                    HttpResponse::InternalServerError().body("nope")
                }),
            )
    })
    .workers(1)
    .listen(l)
    .expect("listen")
    .run();
    actix_web::rt::spawn(server);
    (format!("http://127.0.0.1:{port}"), hooks)
}

/// An automatic group for `app`.
pub async fn new_group(store: &Store, app: &str) -> i32 {
    store
        .insert_group(&JobGroup {
            id: 0,
            app_name: app.to_string(),
            title: format!("{app} executors"),
            address_type: AddressType::Auto,
            address_list: vec![],
            access_token: None,
            update_time: 0,
        })
        .await
        .expect("insert group")
}

/// A manual-only job (schedule NONE) with the given handler.
pub fn job(group: i32, desc: &str, handler: &str) -> JobInfo {
    let mut j = JobInfo::new(group, desc, handler);
    j.author = "tests".into();
    j
}

/// The job's logs, oldest first.
pub async fn logs_of(store: &Store, job_id: i32) -> Vec<JobLog> {
    let (_, mut logs) = store
        .list_logs(&LogFilter {
            job_id: Some(job_id),
            limit: 1_000,
            ..Default::default()
        })
        .await
        .expect("list logs");
    logs.reverse();
    logs
}

/// Polls `check` every 100 ms until it answers `Some`, for at most `limit`.
pub async fn wait_for<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        if started.elapsed() > limit {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Defines `sqlite`, `postgres` and `mysql` actix tests running `$body(backend)`.
#[macro_export]
macro_rules! on_each_backend {
    ($body:ident) => {
        #[actix_web::test]
        async fn sqlite() {
            $body(jobwheel::store::Backend::Sqlite).await;
        }

        #[actix_web::test]
        async fn postgres() {
            $body(jobwheel::store::Backend::Postgres).await;
        }

        #[actix_web::test]
        async fn mysql() {
            $body(jobwheel::store::Backend::MySql).await;
        }
    };
}
