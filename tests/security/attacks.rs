//! Each attack on the default set-up that used to succeed, tried again as an attacker on the
//! same network would: it must now fail and change nothing.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::executor_support::{bean, Exec, FakeAdmin, Opts, Target};
use crate::kit::{Api, Behaviour, FakeExecutor, Resp, TestApp};
use jobwheel::store::Backend;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(20);
const WRONG: &str = "The access token is wrong.";

/// Creates a group through the API, with its own token when given.
async fn group(app: &TestApp, name: &str, token: Option<&str>) -> i64 {
    let mut body = json!({"appName": name, "title": name});
    if let Some(t) = token {
        body["accessToken"] = json!(t);
    }
    let res = app.api.create_group(body).await;
    assert_eq!(res.status, 201, "{}", res.body);
    res.id()
}

/// An executor-API client presenting `token` (or none).
fn as_executor(app: &TestApp, token: Option<&str>) -> Api {
    let api = app.anonymous();
    api.set_executor_token(token);
    api
}

/// A fake executor that leaves every run without a result: the test posts them.
fn resultless_executor(app: &TestApp) -> FakeExecutor {
    FakeExecutor::start(&app.base, &app.token, Behaviour::without_results())
}

fn registration(app_name: &str, address: &str) -> Value {
    json!({"registryGroup": "EXECUTOR", "registryKey": app_name, "registryValue": address})
}

/// Addresses online for `app_name` (through the REST registry list).
async fn online(app: &TestApp, app_name: &str) -> Vec<String> {
    let res = app.api.registry().await;
    assert_eq!(res.status, 200, "{}", res.body);
    res.body
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|r| r["appName"] == app_name)
        .filter_map(|r| r["address"].as_str().map(str::to_string))
        .collect()
}

backends!(app: the_registry_takes_only_the_right_token, |app| {
    let own = group(app, "sec-own", Some("group-one-secret-1")).await;
    group(app, "sec-two", Some("group-two-secret-2")).await;
    group(app, "sec-plain", None).await;
    let none = as_executor(app, None);
    let wrong = as_executor(app, Some("not-the-token"));
    let global = as_executor(app, Some(&app.token));
    let other_group = as_executor(app, Some("group-two-secret-2"));
    let own_group = as_executor(app, Some("group-one-secret-1"));
    let attacker = "http://10.66.66.66:9999/";

    // a group without a token of its own: the admin's generated token, nothing else
    for client in [&none, &wrong, &other_group] {
        let res = client
            .post_as_executor("/api/registry", registration("sec-plain", attacker))
            .await;
        assert_eq!(res.body, json!({"code": 500, "msg": WRONG}));
    }
    assert!(online(app, "sec-plain").await.is_empty());
    let res = global
        .post_as_executor(
            "/api/registry",
            registration("sec-plain", "http://127.0.0.1:7/"),
        )
        .await;
    assert_eq!(res.body["code"], 200, "{}", res.body);

    // a group with its own token: only that one, not even the global token
    for client in [&none, &wrong, &global, &other_group] {
        let res = client
            .post_as_executor(
                "/xxl-job-admin/api/registry",
                registration("sec-own", attacker),
            )
            .await;
        assert_eq!(res.body, json!({"code": 500, "msg": WRONG}));
    }
    assert!(
        online(app, "sec-own").await.is_empty(),
        "nothing registered"
    );
    let real = "http://127.0.0.1:8/";
    let res = own_group
        .post_as_executor("/api/registry", registration("sec-own", real))
        .await;
    assert_eq!(res.body["code"], 200, "{}", res.body);

    // removing the real executor takes its group's token too
    for client in [&none, &global, &other_group] {
        let res = client
            .post_as_executor("/api/registryRemove", registration("sec-own", real))
            .await;
        assert_eq!(res.body, json!({"code": 500, "msg": WRONG}));
    }
    assert_eq!(online(app, "sec-own").await, vec![real.to_string()]);
    let stored = app.store.get_group(own as i32).await.unwrap().unwrap();
    assert_eq!(stored.address_list, vec![real.to_string()]);
    let res = own_group
        .post_as_executor("/api/registryRemove", registration("sec-own", real))
        .await;
    assert_eq!(res.body["code"], 200);
    assert!(online(app, "sec-own").await.is_empty());
});

backends!(app: a_result_is_taken_only_from_the_runs_group, |app| {
    let exec = resultless_executor(app);
    let own_token = "group-one-secret-1";
    let own = group(app, "res-own", Some(own_token)).await;
    group(app, "res-two", Some("group-two-secret-2")).await;
    let own_group = as_executor(app, Some(own_token));
    let res = own_group
        .post_as_executor("/api/registry", registration("res-own", &exec.address))
        .await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let job = app.job(own, "guarded").await;
    let res = app.api.trigger_job(job, None).await;
    assert_eq!(res.body["triggerCodes"], json!([200]), "{}", res.body);
    let log_id = res.body["logIds"][0].as_i64().unwrap();
    // the admin called the executor with the group's own token, not the global one
    let runs = exec.calls("run");
    assert_eq!(runs[0].token.as_deref(), Some(own_token));

    let forged =
        json!([{"logId": log_id, "logDateTim": 0, "handleCode": 200, "handleMsg": "forged"}]);
    let res = as_executor(app, None)
        .post_as_executor("/api/callback", forged.clone())
        .await;
    assert_eq!(res.body, json!({"code": 500, "msg": WRONG}));
    for token in [app.token.as_str(), "group-two-secret-2"] {
        let res = as_executor(app, Some(token))
            .post_as_executor("/api/callback", forged.clone())
            .await;
        assert_eq!(res.body["code"], 500, "{}", res.body);
        let msg = res.body["msg"].as_str().unwrap_or_default();
        assert!(msg.contains(&format!("logId {log_id}")), "{msg}");
    }
    let log = app.api.get_log(log_id).await;
    assert_eq!(
        log.body["handleCode"], 0,
        "a refused result changes nothing"
    );

    let real = json!([{"logId": log_id, "logDateTim": 0, "handleCode": 200, "handleMsg": "done"}]);
    let res = own_group.post_as_executor("/api/callback", real).await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let log = app.api.get_log(log_id).await;
    assert_eq!(
        (&log.body["handleCode"], &log.body["handleMsg"]),
        (&json!(200), &json!("done"))
    );
});

/// Asserts a 400 that blames `field`.
pub(crate) fn assert_refused(res: &Resp, field: &str) {
    assert_eq!(
        (res.status, res.field().as_str()),
        (400, field),
        "{}",
        res.body
    );
}

/// One field of a job body set to text with a NUL.
fn job_body(group: i64, field: &str) -> Value {
    let mut body = json!({
        "jobGroup": group,
        "jobDesc": "nul test",
        "scheduleType": "CRON",
        "scheduleConf": "0 0 3 * * ?",
        "executorHandler": "demoJobHandler",
    });
    body[field] = json!("before\u{0}after");
    body
}

backends!(app: text_with_nul_is_refused_by_name_and_stores_nothing, |app| {
    let api = &app.api;
    // groups
    let res = api
        .create_group(json!({"appName": "nul-group", "title": "a\u{0}b"}))
        .await;
    assert_refused(&res, "title");
    assert!(res.error().contains("NUL"), "{}", res.error());
    assert_eq!(
        api.list_groups().await.body.as_array().map(Vec::len),
        Some(0)
    );
    let g = app.group("nul-group").await;

    // jobs: every text field, on create
    for field in [
        "jobDesc",
        "author",
        "executorHandler",
        "executorParam",
        "glueSource",
        "glueRemark",
        "alarmEmail",
    ] {
        let res = api.create_job(job_body(g, field)).await;
        assert_refused(&res, field);
    }
    assert_eq!(api.list_jobs("").await.body["total"], 0, "nothing stored");
    // ... and on update, leaving the job as it was
    let job = app.job(g, "kept").await;
    let res = api.update_job(job, json!({"jobDesc": "x\u{0}"})).await;
    assert_refused(&res, "jobDesc");
    assert_eq!(api.get_job(job).await.body["jobDesc"], "kept");
    let res = api
        .update_job(job, json!({"childJobIds": [], "glueSource": "\u{0}"}))
        .await;
    assert_eq!(res.field(), "glueSource");

    // a manual trigger's parameter, and a list filter
    let res = api
        .trigger_job(job, Some(json!({"executorParam": "p\u{0}"})))
        .await;
    assert_refused(&res, "executorParam");
    let res = api
        .trigger_job(
            job,
            Some(json!({"addressList": ["http://127.0.0.1:1/", "\u{0}"]})),
        )
        .await;
    assert_refused(&res, "addressList[1]");
    assert_eq!(api.list_logs("").await.body["total"], 0);
    for query in ["jobDesc=a%00b", "author=%00", "executorHandler=x%00"] {
        let res = api.list_jobs(query).await;
        assert_eq!(res.status, 400, "{query}: {}", res.body);
        assert_eq!(res.field(), query.split('=').next().unwrap());
    }
    let res = api.list_logs("status=%00").await;
    assert_refused(&res, "status");

    // the login name
    let res = app.anonymous().login("adm\u{0}in", "whatever").await;
    assert_refused(&res, "username");

    // the executor API names the field and stores nothing
    let reg = as_executor(app, Some(&app.token));
    let res = reg
        .post_as_executor(
            "/api/registry",
            registration("nul-group", "http://127.0.0.1:1/\u{0}"),
        )
        .await;
    assert_eq!(res.body["code"], 500);
    assert!(
        res.body["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("registryValue"),
        "{}",
        res.body
    );
    assert!(online(app, "nul-group").await.is_empty());
});

backends!(app: a_callback_holding_a_nul_stores_every_result, |app| {
    let exec = resultless_executor(app);
    let g = app.group("mixed-app").await;
    let reg = as_executor(app, Some(&app.token));
    let res = reg
        .post_as_executor("/api/registry", registration("mixed-app", &exec.address))
        .await;
    assert_eq!(res.body["code"], 200);
    let job = app.job(g, "mixed").await;
    let mut logs = Vec::new();
    for _ in 0..2 {
        let res = app.api.trigger_job(job, None).await;
        logs.push(res.body["logIds"][0].as_i64().unwrap());
    }
    let (good, odd) = (logs[0], logs[1]);
    let batch = json!([
        {"logId": good, "logDateTim": 0, "handleCode": 200, "handleMsg": "fine"},
        {"logId": odd, "logDateTim": 0, "handleCode": 200, "handleMsg": "broken\u{0}message"},
    ]);
    let res = reg.post_as_executor("/api/callback", batch.clone()).await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let stored = app.api.get_log(good).await.body;
    assert_eq!(
        (&stored["handleCode"], &stored["handleMsg"]),
        (&json!(200), &json!("fine"))
    );
    // the NUL the database cannot hold is replaced; the executor's code and text are kept
    let kept = app.api.get_log(odd).await.body;
    assert_eq!(kept["handleCode"], 200);
    assert_eq!(kept["handleMsg"], "broken\u{FFFD}message");

    // a re-sent batch is a duplicate: accepted, nothing stored twice
    let res = reg.post_as_executor("/api/callback", batch).await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    assert_eq!(app.api.get_log(odd).await.body["handleMsg"], "broken\u{FFFD}message");
});

/// A login window short enough to wait out in a test, long enough for six logins.

#[actix_web::test]
async fn a_three_million_line_run_log_pages_through_the_api() {
    use jobwheel::executor::{Executor, JobContext, JobResult};

    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let logs = tempfile::tempdir().unwrap();
    let executor = Executor::builder()
        .admin_addresses([app.base.clone()])
        .app_name("big-log-app")
        .access_token(app.token.clone())
        .ip("127.0.0.1")
        .port(0)
        .log_path(logs.path())
        .handler("quiet", |_ctx: JobContext| async { JobResult::success() })
        .build()
        .unwrap();
    let server = executor.serve().await.unwrap();
    let g = app.group("big-log-app").await;
    let address = server.address();
    let registered = {
        let started = Instant::now();
        loop {
            if online(&app, "big-log-app").await.contains(&address) {
                break true;
            }
            if started.elapsed() > WAIT {
                break false;
            }
            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
        }
    };
    assert!(registered, "executor registered");
    let res = app
        .api
        .create_job(json!({
            "jobGroup": g, "jobDesc": "big", "scheduleType": "NONE", "executorHandler": "quiet",
        }))
        .await;
    let job = res.id();
    let res = app.api.trigger_job(job, None).await;
    assert_eq!(res.body["triggerCodes"], json!([200]), "{}", res.body);
    let log_id = res.body["logIds"][0].as_i64().unwrap();
    let trigger_time = app.api.get_log(log_id).await.body["triggerTime"]
        .as_i64()
        .unwrap();

    // the run's own lines, then three million more, straight into its segment
    let path =
        jobwheel::executor::run_log::segment::segment_path(logs.path(), trigger_time, log_id);
    let ended = Instant::now();
    while !path.exists() && ended.elapsed() < WAIT {
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    let own_prefix = format!("{log_id} ");
    let own_lines = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(&own_prefix))
        .count();
    const LINES: usize = 3_000_000;
    {
        let mut file = std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap(),
        );
        for i in 1..=LINES {
            writeln!(file, "{log_id} big {i}").unwrap();
        }
    }

    let client = awc::Client::builder()
        .timeout(Duration::from_secs(60))
        .finish();
    let cookie = format!("jobwheel_session={}", app.api.session_cookie().unwrap());
    let (mut from, mut next_big, mut pages, mut largest) = (1i64, 1usize, 0, 0usize);
    loop {
        let mut res = client
            .get(format!(
                "{}/api/v1/logs/{log_id}/content?fromLine={from}",
                app.base
            ))
            .insert_header(("Cookie", cookie.as_str()))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let bytes = res.body().limit(4 * 1024 * 1024).await.unwrap();
        largest = largest.max(bytes.len());
        assert!(
            bytes.len() <= 1024 * 1024,
            "an answer of {} bytes",
            bytes.len()
        );
        let page: Value = serde_json::from_slice(&bytes).unwrap();
        let to = page["toLineNum"].as_i64().unwrap();
        if to < from {
            break;
        }
        let content = page["logContent"].as_str().unwrap();
        let mut n = from;
        for line in content.lines() {
            if n as usize > own_lines {
                assert_eq!(line, format!("big {next_big}"), "line {n}");
                next_big += 1;
            }
            n += 1;
        }
        assert_eq!(n - 1, to, "toLineNum is the last line sent");
        from = to + 1;
        pages += 1;
    }
    assert_eq!(next_big - 1, LINES, "every line exactly once");
    assert!(pages >= 2, "{pages} pages");
    eprintln!("{pages} pages, largest answer {largest} bytes");
    server.stop().await;
    app.finish().await;
}

/// Posts a trigger straight to an executor, as an admin would, and returns the answer.
async fn run_raw(exec: &Exec, body: Value) -> Value {
    exec.post("/run", body).await
}

async fn executor_refuses_impossible_triggers(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let base = serde_json::to_value(bean(30, "demoJobHandler", "")).unwrap();
    for (edit, needle) in [
        (json!({"broadcastTotal": 0}), "broadcastTotal"),
        (json!({"broadcastTotal": -1}), "broadcastTotal"),
        (
            json!({"broadcastIndex": 2, "broadcastTotal": 2}),
            "broadcastIndex",
        ),
        (json!({"broadcastIndex": -1}), "broadcastIndex"),
        (json!({"executorBlockStrategy": "WHENEVER"}), "WHENEVER"),
    ] {
        let mut body = base.clone();
        for (k, v) in edit.as_object().unwrap() {
            body[k] = v.clone();
        }
        let answer = run_raw(&exec, body).await;
        assert_eq!(answer["code"], 500, "{edit}: {answer}");
        assert!(
            answer["msg"].as_str().unwrap_or_default().contains(needle),
            "{answer}"
        );
    }
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert!(admin.accepted_callbacks().is_empty(), "nothing ran");
}

#[actix_web::test]
async fn executor_refuses_impossible_triggers_library() {
    executor_refuses_impossible_triggers(Target::Library).await;
}

#[actix_web::test]
async fn executor_refuses_impossible_triggers_binary() {
    executor_refuses_impossible_triggers(Target::Binary).await;
}

#[actix_web::test]
async fn an_executor_without_a_token_only_answers_that_it_is_wrong() {
    let admin = FakeAdmin::start();
    let exec = Exec::start(Target::Binary, &admin, Opts::default()).await;
    let script = serde_json::to_value(crate::executor_support::shell(31, "id", 1)).unwrap();
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);
    for token in [None, Some("guess")] {
        let mut req = client.post(format!("{}run", exec.base));
        if let Some(t) = token {
            req = req.insert_header(("XXL-JOB-ACCESS-TOKEN", t));
        }
        let mut res = req.send_json(&script).await.unwrap();
        let v: Value = serde_json::from_slice(&res.body().await.unwrap()).unwrap();
        assert_eq!(v, json!({"code": 500, "msg": WRONG}));
    }
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert!(admin.accepted_callbacks().is_empty(), "no script ran");
}

#[test]
fn an_insecure_executor_says_what_it_opens() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_jobwheel"))
        .args(["executor", "--insecure", "--port", "0", "--ip", "127.0.0.1"])
        .args(["--admin-addresses", "http://127.0.0.1:1"])
        .env("RUST_LOG", "warn")
        .env_remove("JOBWHEEL_ACCESS_TOKEN")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    let mut warning = None;
    while started.elapsed() < WAIT {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains("WITHOUT an access token") => {
                warning = Some(line);
                break;
            }
            _ => {}
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let line = warning.expect("a warning at start");
    assert!(line.contains("anyone who can reach port"), "{line}");
    assert!(line.contains("can run scripts as user"), "{line}");
    assert!(!line.contains("port 0 "), "names the bound port: {line}");
}

/// Sends a request head promising a body, then one byte of it, and waits for the answer.
fn trickle(port: u16, path: &str, token: &str) -> (Duration, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         XXL-JOB-ACCESS-TOKEN: {token}\r\nContent-Length: 1000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") && answer.len() > 40 {
                    break;
                }
            }
        }
    }
    (
        started.elapsed(),
        String::from_utf8_lossy(&answer).to_string(),
    )
}

#[actix_web::test]
async fn a_body_sent_too_slowly_is_given_up_on() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let admin = FakeAdmin::start();
    let exec = Exec::start(Target::Library, &admin, Opts::default()).await;
    let exec_port: u16 = exec
        .base
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let admin_port: u16 = app.base.rsplit(':').next().unwrap().parse().unwrap();
    let limit = jobwheel::protocol::BODY_TIMEOUT;
    let token = app.token.clone();
    let (to_exec, to_admin) = (
        std::thread::spawn(move || trickle(exec_port, "/run", crate::executor_support::TEST_TOKEN)),
        std::thread::spawn(move || trickle(admin_port, "/api/callback", &token)),
    );
    for (who, handle) in [("executor", to_exec), ("admin", to_admin)] {
        let handle = actix_web::rt::task::spawn_blocking(move || handle.join().unwrap());
        let (took, answer) = handle.await.unwrap();
        assert!(took < limit + Duration::from_secs(10), "{who}: {took:?}");
        assert!(
            took >= limit - Duration::from_secs(1),
            "{who}: {took:?}: {answer}"
        );
        assert!(!answer.is_empty(), "{who} answered");
    }
    app.finish().await;
}

/// The well-known token is refused like none at all.
#[test]
fn the_published_default_token_does_not_start_an_executor() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_jobwheel"))
        .args(["executor", "--access-token", "default_token", "--port", "0"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("published default"), "{err}");
}
