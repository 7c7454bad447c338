//! A recording executor speaking the real protocol over HTTP, for admin tests.
//!
//! It answers `/run`, `/trigger`, `/beat`, `/idleBeat`, `/kill`, `/log` like an XXL-JOB executor,
//! records every trigger with its arrival time, and can post results back to the admin.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use jobwheel::clock::now_ms;
use jobwheel::protocol::TriggerParam;
use serde_json::json;

/// One `/run` received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The trigger body.
    pub param: TriggerParam,
    /// Arrival, epoch ms.
    pub at: i64,
    /// `/run` or `/trigger`.
    pub path: String,
    /// The `XXL-JOB-APPNAME` header, if sent.
    pub app_header: Option<String>,
}

/// How the fake behaves.
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// Answer `/beat` with 200 (alive) or 500.
    pub alive: bool,
    /// Answer `/idleBeat` with 200 (idle) or 500 (busy).
    pub idle: bool,
    /// Answer `/run` with this code.
    pub run_code: i32,
    /// After a run is accepted, post this handle code to the admin after `run_ms`.
    pub result: Option<i32>,
    /// Simulated run duration before the result is posted.
    pub run_ms: u64,
    /// Delay before `/run` is answered (a slow or hanging executor).
    pub answer_after_ms: u64,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            alive: true,
            idle: true,
            run_code: 200,
            result: Some(200),
            run_ms: 0,
            answer_after_ms: 0,
        }
    }
}

struct Shared {
    received: Mutex<Vec<Received>>,
    behaviour: Mutex<Behaviour>,
    admin: String,
    token: String,
}

/// A running fake executor.
#[derive(Clone)]
pub struct FakeExecutor {
    shared: Arc<Shared>,
    /// Its address as registered, with the trailing slash.
    pub address: String,
}

impl FakeExecutor {
    /// Starts a fake on 127.0.0.1:0 that reports results to `admin` (e.g. `http://127.0.0.1:8080`)
    /// with the admin's access `token`.
    pub async fn start(admin: &str, token: &str, behaviour: Behaviour) -> FakeExecutor {
        let shared = Arc::new(Shared {
            received: Mutex::new(Vec::new()),
            behaviour: Mutex::new(behaviour),
            admin: admin.trim_end_matches('/').to_string(),
            token: token.to_string(),
        });
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/run", web::post().to(run))
                .route("/trigger", web::post().to(run))
                .route("/beat", web::post().to(beat))
                .route("/idleBeat", web::post().to(idle_beat))
                .route("/kill", web::post().to(ok))
                .route("/log", web::post().to(log))
        })
        .workers(2)
        .bind(("127.0.0.1", 0))
        .expect("bind fake executor");
        let port = server.addrs()[0].port();
        actix_web::rt::spawn(server.run());
        FakeExecutor {
            shared,
            address: format!("http://127.0.0.1:{port}/"),
        }
    }

    /// Every trigger received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// Changes how the fake answers from now on.
    pub fn set(&self, f: impl FnOnce(&mut Behaviour)) {
        f(&mut self.shared.behaviour.lock().unwrap());
    }

    /// Registers with the admin as `app` (v2: no app-name header).
    pub async fn register(&self, app: &str) {
        self.register_as(app, false).await;
    }

    /// Registers as `app`; `v35` sends the `XXL-JOB-APPNAME` header as 3.5 executors do.
    pub async fn register_as(&self, app: &str, v35: bool) {
        let body =
            json!({"registryGroup": "EXECUTOR", "registryKey": app, "registryValue": self.address});
        let mut req = awc::Client::default()
            .post(format!("{}/api/registry", self.shared.admin))
            .insert_header(("XXL-JOB-ACCESS-TOKEN", self.shared.token.as_str()));
        if v35 {
            req = req.insert_header(("XXL-JOB-APPNAME", app));
        }
        let mut res = req.send_json(&body).await.expect("registry call");
        let answer: serde_json::Value = res.json().await.expect("registry answer");
        assert_eq!(answer["code"], 200, "registry refused: {answer}");
    }
}

async fn run(
    shared: web::Data<Shared>,
    req: actix_web::HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let param: TriggerParam = match serde_json::from_slice(&body) {
        Ok(p) => p,
        Err(e) => {
            return HttpResponse::Ok()
                .json(json!({"code": 500, "msg": format!("request error:{e}")}))
        }
    };
    let behaviour = shared.behaviour.lock().unwrap().clone();
    shared.received.lock().unwrap().push(Received {
        param: param.clone(),
        at: now_ms(),
        path: req.path().to_string(),
        app_header: req
            .headers()
            .get("XXL-JOB-APPNAME")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    });
    if behaviour.answer_after_ms > 0 {
        actix_web::rt::time::sleep(Duration::from_millis(behaviour.answer_after_ms)).await;
    }
    if behaviour.run_code != 200 {
        return HttpResponse::Ok()
            .json(json!({"code": behaviour.run_code, "msg": "refused by fake"}));
    }
    if let Some(code) = behaviour.result {
        let admin = shared.admin.clone();
        let token = shared.token.clone();
        actix_web::rt::spawn(async move {
            if behaviour.run_ms > 0 {
                actix_web::rt::time::sleep(Duration::from_millis(behaviour.run_ms)).await;
            }
            let item = json!([{"logId": param.log_id, "logDateTim": param.log_date_time, "handleCode": code, "handleMsg": "fake result"}]);
            // the admin may be busy; a few attempts like a real executor's retry
            for _ in 0..5 {
                if let Ok(mut res) = awc::Client::default()
                    .post(format!("{admin}/api/callback"))
                    .insert_header(("XXL-JOB-ACCESS-TOKEN", token.as_str()))
                    .send_json(&item)
                    .await
                {
                    if let Ok(v) = res.json::<serde_json::Value>().await {
                        if v["code"] == 200 {
                            return;
                        }
                    }
                }
                actix_web::rt::time::sleep(Duration::from_millis(200)).await;
            }
        });
    }
    HttpResponse::Ok().json(json!({"code": 200, "msg": "Success"}))
}

async fn beat(shared: web::Data<Shared>) -> HttpResponse {
    let alive = shared.behaviour.lock().unwrap().alive;
    if alive {
        HttpResponse::Ok().json(json!({"code": 200, "msg": "Success"}))
    } else {
        HttpResponse::Ok().json(json!({"code": 500, "msg": "fake is down"}))
    }
}

async fn idle_beat(shared: web::Data<Shared>) -> HttpResponse {
    let idle = shared.behaviour.lock().unwrap().idle;
    if idle {
        HttpResponse::Ok().json(json!({"code": 200, "msg": "Success"}))
    } else {
        HttpResponse::Ok()
            .json(json!({"code": 500, "msg": "job thread is running or has trigger queue."}))
    }
}

async fn ok() -> HttpResponse {
    HttpResponse::Ok().json(json!({"code": 200, "msg": "Success"}))
}

async fn log() -> HttpResponse {
    HttpResponse::Ok().json(json!({"code": 200, "msg": "Success", "data": {"fromLineNum": 1, "toLineNum": 1, "logContent": "fake log\n", "isEnd": false}}))
}
