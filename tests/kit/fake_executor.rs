//! A recording executor speaking XXL-JOB's protocol over HTTP, for admin tests: it answers
//! `/run`, `/trigger`, `/beat`, `/idleBeat`, `/kill` and `/log` as [`Behaviour`] says, records
//! every call (path, body, token, app-name header, arrival), and can post results back.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use jobwheel::clock::now_ms;
use jobwheel::protocol::TriggerParam;
use serde_json::{json, Value};

/// How the fake answers.
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// `/beat` answers 200 (alive) or 500.
    pub alive: bool,
    /// `/idleBeat` answers 200 (idle) or 500 (busy).
    pub idle: bool,
    /// `/run` answers with this code.
    pub run_code: i32,
    /// `/run` answers with this message (default: "Success", or "refused by fake").
    pub run_msg: Option<String>,
    /// Triggers of these handlers are refused with code 500.
    pub refuse_handlers: Vec<String>,
    /// After an accepted run, post this handle code (and [`Behaviour::result_msg`]) to the
    /// admin `run_ms` later; `None` leaves the run without a result.
    pub result: Option<i32>,
    /// The message of the posted result.
    pub result_msg: String,
    /// Simulated run time before the result is posted.
    pub run_ms: u64,
    /// Delay before `/run` is answered (a slow or hanging executor).
    pub answer_after_ms: u64,
    /// The run log `/log` serves, a line each.
    pub log_lines: Vec<String>,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            alive: true,
            idle: true,
            run_code: 200,
            run_msg: None,
            refuse_handlers: Vec::new(),
            result: Some(200),
            result_msg: "fake result".to_string(),
            run_ms: 0,
            answer_after_ms: 0,
            log_lines: vec!["line 1".to_string(), "line 2".to_string()],
        }
    }
}

impl Behaviour {
    /// The defaults, but runs are left without a result (the test posts results itself, or
    /// kills the run).
    pub fn without_results() -> Self {
        Behaviour {
            result: None,
            ..Behaviour::default()
        }
    }
}

/// One call the fake received.
#[derive(Debug, Clone)]
pub struct Call {
    /// Path without the leading slash (`run`, `trigger`, `log`, ...).
    pub path: String,
    /// JSON body (`null` when there was none).
    pub body: Value,
    /// The `XXL-JOB-ACCESS-TOKEN` it carried.
    pub token: Option<String>,
    /// The `XXL-JOB-APPNAME` it carried.
    pub app_header: Option<String>,
    /// Arrival, epoch ms.
    pub at: i64,
}

/// One trigger (`/run` or `/trigger`) received.
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

struct Shared {
    calls: Mutex<Vec<Call>>,
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
    /// Starts a fake on 127.0.0.1:0 that reports results to `admin` (e.g.
    /// `http://127.0.0.1:8080`) with the admin's `token`.
    pub fn start(admin: &str, token: &str, behaviour: Behaviour) -> FakeExecutor {
        let shared = Arc::new(Shared {
            calls: Mutex::new(Vec::new()),
            behaviour: Mutex::new(behaviour),
            admin: admin.trim_end_matches('/').to_string(),
            token: token.to_string(),
        });
        let data = web::Data::from(shared.clone());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake executor");
        let port = listener.local_addr().expect("fake executor address").port();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(answer))
        })
        .workers(2)
        .listen(listener)
        .expect("listen fake executor")
        .run();
        actix_web::rt::spawn(server);
        FakeExecutor {
            shared,
            address: format!("http://127.0.0.1:{port}/"),
        }
    }

    /// Changes how the fake answers from now on.
    pub fn set(&self, f: impl FnOnce(&mut Behaviour)) {
        f(&mut self.shared.behaviour.lock().unwrap());
    }

    /// Every call to `path` so far (without the leading slash).
    pub fn calls(&self, path: &str) -> Vec<Call> {
        self.shared
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.path == path)
            .cloned()
            .collect()
    }

    /// The bodies of the calls to `path` so far.
    pub fn calls_to(&self, path: &str) -> Vec<Value> {
        self.calls(path).into_iter().map(|c| c.body).collect()
    }

    /// Every trigger received so far (`/run` and `/trigger`), in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.shared
            .calls
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.path == "run" || c.path == "trigger")
            .filter_map(|c| {
                Some(Received {
                    param: serde_json::from_value(c.body.clone()).ok()?,
                    at: c.at,
                    path: format!("/{}", c.path),
                    app_header: c.app_header.clone(),
                })
            })
            .collect()
    }

    /// Registers with the admin as `app` (2.4-style: no app-name header).
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
        let answer: Value = res.json().await.expect("registry answer");
        assert_eq!(answer["code"], 200, "registry refused: {answer}");
    }
}

fn header(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn envelope(code: i32, msg: &str) -> HttpResponse {
    HttpResponse::Ok().json(json!({"code": code, "msg": msg}))
}

async fn answer(req: HttpRequest, body: web::Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let path = req.path().trim_start_matches('/').to_string();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.calls.lock().unwrap().push(Call {
        path: path.clone(),
        body: json.clone(),
        token: header(&req, "XXL-JOB-ACCESS-TOKEN"),
        app_header: header(&req, "XXL-JOB-APPNAME"),
        at: now_ms(),
    });
    let behaviour = shared.behaviour.lock().unwrap().clone();
    match path.as_str() {
        "run" | "trigger" => run(&shared, json, behaviour).await,
        "beat" if behaviour.alive => envelope(200, "Success"),
        "beat" => envelope(500, "fake is down"),
        "idleBeat" if behaviour.idle => envelope(200, "Success"),
        "idleBeat" => envelope(500, "job thread is running or has trigger queue."),
        "kill" => envelope(200, "killed"),
        "log" => {
            // as a 2.4 executor: the lines from `fromLineNum`, under `content`
            let from = json["fromLineNum"].as_i64().unwrap_or(1).max(1) as usize;
            let lines = &behaviour.log_lines;
            let (to, content) = if from <= lines.len() {
                (lines.len(), lines[from - 1..].join("\n"))
            } else {
                (0, String::new())
            };
            HttpResponse::Ok().json(json!({"code": 200, "content": {
                "fromLineNum": from, "toLineNum": to, "logContent": content, "isEnd": false
            }}))
        }
        other => envelope(
            500,
            &format!("invalid request, uri-mapping(/{other}) not found."),
        ),
    }
}

async fn run(shared: &web::Data<Shared>, body: Value, behaviour: Behaviour) -> HttpResponse {
    let param: TriggerParam = match serde_json::from_value(body) {
        Ok(p) => p,
        Err(e) => return envelope(500, &format!("request error:{e}")),
    };
    if behaviour.answer_after_ms > 0 {
        actix_web::rt::time::sleep(Duration::from_millis(behaviour.answer_after_ms)).await;
    }
    if behaviour.run_code != 200 || behaviour.refuse_handlers.contains(&param.executor_handler) {
        let msg = behaviour.run_msg.as_deref().unwrap_or("refused by fake");
        return envelope(behaviour.run_code.max(500), msg);
    }
    if let Some(code) = behaviour.result {
        let admin = shared.admin.clone();
        let token = shared.token.clone();
        actix_web::rt::spawn(async move {
            if behaviour.run_ms > 0 {
                actix_web::rt::time::sleep(Duration::from_millis(behaviour.run_ms)).await;
            }
            let item = json!([{"logId": param.log_id, "logDateTim": param.log_date_time,
                "handleCode": code, "handleMsg": behaviour.result_msg}]);
            // the admin may be busy; a few attempts like a real executor's retry
            for _ in 0..5 {
                if let Ok(mut res) = awc::Client::default()
                    .post(format!("{admin}/api/callback"))
                    .insert_header(("XXL-JOB-ACCESS-TOKEN", token.as_str()))
                    .send_json(&item)
                    .await
                {
                    if let Ok(v) = res.json::<Value>().await {
                        if v["code"] == 200 {
                            return;
                        }
                    }
                }
                actix_web::rt::time::sleep(Duration::from_millis(200)).await;
            }
        });
    }
    envelope(200, behaviour.run_msg.as_deref().unwrap_or("Success"))
}
