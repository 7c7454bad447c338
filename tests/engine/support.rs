//! What the engine and monitor tests add to the kit: jobs and groups written straight to the
//! database, manual triggers through the dispatcher, executor behaviours, a webhook receiver.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use jobwheel::actors::dispatch::{trigger_and_wait, Trigger};
use jobwheel::actors::monitor::MonitorSettings;
use jobwheel::clock::now_ms;
use jobwheel::model::{AddressType, JobGroup, JobInfo, RunRow, TriggerType};
use jobwheel::store::{LogFilter, Store};
use serde_json::Value;

use crate::kit::{expect_within, Behaviour, TestApp};

/// Short monitor periods: fail and lost-result passes every 200 ms from the start, the report
/// only at start (tests call its pass directly).
pub fn fast(m: &mut MonitorSettings) {
    m.fail_interval = Duration::from_millis(200);
    m.lost_interval = Duration::from_millis(200);
    m.lost_first_pass_after = Duration::ZERO;
    m.report_interval = Duration::from_secs(3_600);
    m.webhook_timeout = Duration::from_secs(3);
    // the tests' webhook receivers listen on loopback
    m.webhook_allow_private = true;
}

/// [`fast`] monitor settings for another admin beside `app`.
pub fn fast_monitors_of(app: &TestApp) -> MonitorSettings {
    let mut m = MonitorSettings::from_admin(app.settings());
    fast(&mut m);
    m
}

/// An executor whose runs fail: handler `refuse` is refused (the trigger fails); any other run
/// is accepted and reported failed 50 ms later.
pub fn failing() -> Behaviour {
    Behaviour {
        refuse_handlers: vec!["refuse".to_string()],
        result: Some(500),
        result_msg: "always fails".to_string(),
        run_ms: 50,
        ..Behaviour::default()
    }
}

/// An executor that only answers probes: alive, and busy (`idleBeat` 500) or idle.
pub fn probe(busy: bool) -> Behaviour {
    Behaviour {
        idle: !busy,
        ..Behaviour::without_results()
    }
}

/// An automatic group for `app`, written straight to the database.
pub async fn new_group(store: &Store, app: &str) -> i32 {
    store
        .insert_group(&JobGroup {
            id: 0,
            app_name: app.to_string(),
            title: format!("{app} executors"),
            address_type: AddressType::Auto,
            address_list: vec![],
            access_token: None,
            update_time: now_ms(),
            max_concurrent_instances: 0,
            instance_overflow: jobwheel::model::InstanceOverflow::Skip,
        })
        .await
        .expect("insert group")
}

/// A manual group listing the one executor at `address`, written straight to the database.
pub async fn manual_group(store: &Store, app: &str, address: &str) -> i32 {
    store
        .insert_group(&JobGroup {
            id: 0,
            app_name: app.to_string(),
            title: format!("{app} executors"),
            address_type: AddressType::Manual,
            address_list: vec![address.to_string()],
            access_token: None,
            update_time: now_ms(),
            max_concurrent_instances: 0,
            instance_overflow: jobwheel::model::InstanceOverflow::Skip,
        })
        .await
        .expect("insert group")
}

/// A manual-only job (schedule NONE) with the given handler.
pub fn job(group: i32, desc: &str, handler: &str) -> JobInfo {
    let mut j = JobInfo::new(group, desc, handler);
    j.author = "tests".into();
    j.add_time = now_ms();
    j.update_time = now_ms();
    j
}

/// The job's logs, oldest first.
pub async fn logs_of(store: &Store, job_id: i32) -> Vec<RunRow> {
    let (_, mut logs) = store
        .list_logs(&LogFilter {
            job_id: Some(job_id),
            limit: 10_000,
            ..Default::default()
        })
        .await
        .expect("list logs");
    logs.sort_by_key(|l| l.id);
    logs
}

/// What the engine tests do with an admin, beside the kit's REST client.
pub trait Engine {
    /// A group written straight to the database.
    async fn db_group(&self, app: &str) -> i32;
    /// A job written straight to the database, `edit` applied first.
    async fn db_job(&self, group: i32, edit: impl FnOnce(&mut JobInfo)) -> i32;
    /// One manual trigger through the dispatcher; the log ids.
    async fn manual(&self, job_id: i32) -> Vec<i64>;
    /// The job's logs, oldest first.
    async fn logs_of(&self, job_id: i32) -> Vec<RunRow>;
    /// Posts to the executor API with the admin's token.
    async fn post(&self, path: &str, body: Value) -> Value;
    /// Waits until `check` holds, failing the test with `what` after `limit`.
    async fn wait_until<F, Fut>(&self, what: &str, limit: Duration, check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>;
}

impl Engine for TestApp {
    async fn db_group(&self, app: &str) -> i32 {
        new_group(&self.store, app).await
    }

    async fn db_job(&self, group: i32, edit: impl FnOnce(&mut JobInfo)) -> i32 {
        let mut j = job(group, "test job", "demoJobHandler");
        edit(&mut j);
        self.store.insert_job(&j).await.unwrap()
    }

    async fn manual(&self, job_id: i32) -> Vec<i64> {
        trigger_and_wait(
            &self.actors.dispatcher,
            Trigger::new(job_id, TriggerType::Manual, 0),
        )
        .await
        .expect("trigger report")
        .log_ids
    }

    async fn logs_of(&self, job_id: i32) -> Vec<RunRow> {
        logs_of(&self.store, job_id).await
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.executor_post(path, body, Some(&self.token)).await
    }

    async fn wait_until<F, Fut>(&self, what: &str, limit: Duration, mut check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        expect_within(what, limit, || {
            let fut = check();
            async move { fut.await.then_some(()) }
        })
        .await
    }
}

/// Requests received by a webhook receiver.
#[derive(Clone, Default)]
pub struct Hooks(pub Arc<Mutex<Vec<Value>>>);

impl Hooks {
    /// Bodies received so far.
    pub fn received(&self) -> Vec<Value> {
        self.0.lock().expect("hooks").clone()
    }
}

/// A webhook receiver: `/hook` answers 200, `/fail` 500; both record the body. Its base URL.
pub fn start_webhook_receiver() -> (String, Hooks) {
    let hooks = Hooks::default();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind webhook receiver");
    let port = listener.local_addr().expect("local addr").port();
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
    .listen(listener)
    .expect("listen")
    .run();
    actix_web::rt::spawn(server);
    (format!("http://127.0.0.1:{port}"), hooks)
}

/// Waits until `group` lists `n` registered executors.
pub async fn wait_listed(admin: &TestApp, group: i32, n: usize) {
    admin
        .wait_until(
            "the executors are listed",
            Duration::from_secs(10),
            || async {
                admin
                    .store
                    .get_group(group)
                    .await
                    .ok()
                    .flatten()
                    .is_some_and(|g| g.address_list.len() == n)
            },
        )
        .await;
}
