//! What only the library has: Rust handlers (async, blocking, hooks), their failures, cancellation of
//! their work, mounting into an app, builder validation and shutdown refusing triggers.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::executor_support::*;
use actix_web::{web, App, HttpResponse, HttpServer};
use jobwheel::executor::{Executor, ExecutorError, JobContext, JobResult};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(15);

async fn library(admin: &FakeAdmin) -> Exec {
    Exec::start(Target::Library, admin, Opts::default()).await
}

/// The JSON answer to an empty POST to `url` carrying the test token.
async fn post_empty(client: &awc::Client, url: String) -> Value {
    let mut res = client
        .post(url)
        .insert_header(("XXL-JOB-ACCESS-TOKEN", TEST_TOKEN))
        .send()
        .await
        .unwrap();
    serde_json::from_slice(&res.body().await.unwrap()).unwrap()
}

#[actix_rt::test]
async fn async_timeout_drops_the_handler_future() {
    let admin = FakeAdmin::start();
    let exec = library(&admin).await;
    let mut p = bean(80, "asyncSleep", "30000");
    p.executor_timeout = 1;
    let sent = now_ms();
    exec.run_ok(&p).await;
    let cb = admin.wait_callback(p.log_id, WAIT).await;
    assert_eq!(
        (cb.handle_code, cb.handle_msg.as_deref()),
        (502, Some("job execute timeout "))
    );
    let took = admin.callback_time(p.log_id).unwrap() - sent;
    assert!((900..=2000).contains(&took), "reported after {took} ms");
    let dropped = poll_for(Duration::from_secs(2), || {
        (exec.probe.dropped.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    assert!(dropped.is_some(), "the handler future was not dropped");
}

#[actix_rt::test]
async fn kill_cancels_blocking_handler_cooperatively() {
    let admin = FakeAdmin::start();
    let exec = library(&admin).await;
    let p = bean(81, "cancelAware", "");
    exec.run_ok(&p).await;
    actix_rt::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(exec.post("/kill", json!({"jobId": 81})).await["code"], 200);
    let cb = admin.wait_callback(p.log_id, WAIT).await;
    assert_eq!(
        cb.handle_msg.as_deref(),
        Some("scheduling center kill job. [job running, killed]")
    );
    assert_eq!(
        exec.probe.dropped.load(Ordering::SeqCst),
        1,
        "handler saw the cancellation"
    );
}

#[actix_rt::test]
async fn panic_and_error_fail_only_that_run() {
    let admin = FakeAdmin::start();
    let exec = library(&admin).await;
    let boom = bean(82, "panicker", "");
    exec.run_ok(&boom).await;
    let cb = admin.wait_callback(boom.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    assert_eq!(cb.handle_msg.as_deref(), Some("boom from handler"));
    let log = exec.log_of(&boom).await;
    assert!(
        log.contains("JobThread Exception:boom from handler"),
        "{log}"
    );
    assert!(log.contains("execute end(error)"), "{log}");

    // the same job's worker survives the panic; other jobs never noticed
    let again = bean(82, "panicker", "");
    exec.run_ok(&again).await;
    assert_eq!(
        admin.wait_callback(again.log_id, WAIT).await.handle_code,
        500
    );
    let err = bean(83, "failing", "");
    exec.run_ok(&err).await;
    let cb = admin.wait_callback(err.log_id, WAIT).await;
    assert_eq!(
        (cb.handle_code, cb.handle_msg.as_deref()),
        (500, Some("bad input"))
    );
    let echo = bean(84, "blockingEcho", "é中");
    exec.run_ok(&echo).await;
    let cb = admin.wait_callback(echo.log_id, WAIT).await;
    assert_eq!(
        (cb.handle_code, cb.handle_msg.as_deref()),
        (200, Some("echo:é中"))
    );
    assert!(exec.log_of(&echo).await.contains("echo é中"));
}

#[actix_rt::test]
async fn handler_change_replaces_worker_and_runs_hooks() {
    let admin = FakeAdmin::start();
    let exec = library(&admin).await;
    let hooked = bean(85, "hooked", "");
    exec.run_ok(&hooked).await;
    admin.wait_callback(hooked.log_id, WAIT).await;
    assert_eq!(exec.probe.init.load(Ordering::SeqCst), 1);
    // the job now names another handler: its old worker stops (destroy), the new one runs
    let other = bean(85, "blockingEcho", "x");
    exec.run_ok(&other).await;
    admin.wait_callback(other.log_id, WAIT).await;
    let destroyed = poll_for(Duration::from_secs(3), || {
        (exec.probe.destroy.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    assert!(destroyed.is_some());
}

#[actix_rt::test]
async fn shutdown_refuses_new_triggers() {
    let admin = FakeAdmin::start();
    let logs = tempfile::tempdir().unwrap();
    let executor = Executor::builder()
        .admin_addresses([admin.url()])
        .app_name(APP)
        .access_token(TEST_TOKEN)
        .ip("127.0.0.1")
        .port(0)
        .log_path(logs.path())
        .shutdown_grace(Duration::from_secs(3))
        .handler("sleep", |_ctx: JobContext| async {
            actix_rt::time::sleep(Duration::from_secs(1)).await;
            JobResult::success()
        })
        .build()
        .unwrap();
    let server = executor.serve().await.unwrap();
    let base = format!("http://127.0.0.1:{}/", server.port());
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);
    let post = |path: &str, body: Value| {
        let req = client
            .post(format!("{base}{path}"))
            .insert_header(("XXL-JOB-ACCESS-TOKEN", TEST_TOKEN));
        async move {
            let mut r = req.send_json(&body).await.unwrap();
            serde_json::from_slice::<Value>(&r.body().await.unwrap()).unwrap()
        }
    };
    let running = bean(86, "sleep", "");
    assert_eq!(
        post("run", serde_json::to_value(&running).unwrap()).await["code"],
        200
    );
    let stopper = executor.clone();
    let stopping = actix_rt::spawn(async move { stopper.shutdown().await });
    actix_rt::time::sleep(Duration::from_millis(200)).await;
    let late = bean(87, "sleep", "");
    assert_eq!(
        post("run", serde_json::to_value(&late).unwrap()).await,
        json!({"code":500,"msg":"executor is shutting down, trigger refused."})
    );
    stopping.await.unwrap();
    // the running job finished inside the grace period
    assert_eq!(
        admin.wait_callback(running.log_id, WAIT).await.handle_code,
        200
    );
    assert_eq!(admin.requests("/api/registryRemove").len(), 1);
    server.stop().await;
}

#[actix_rt::test]
async fn mounts_into_an_app_with_configure_and_scope() {
    let admin = FakeAdmin::start();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let logs = tempfile::tempdir().unwrap();
    let executor = Executor::builder()
        .admin_addresses([admin.url()])
        .app_name(APP)
        .access_token(TEST_TOKEN)
        .ip("127.0.0.1")
        .port(port)
        .mount_path("/xxl-job")
        .log_path(logs.path())
        .with_builtin_handlers()
        .build()
        .unwrap();
    let exec = executor.clone();
    let server = HttpServer::new(move || {
        App::new()
            .route(
                "/hello",
                web::get().to(|| async { HttpResponse::Ok().body("hi") }),
            )
            .service(exec.scope("/xxl-job"))
            .service(web::scope("/root-style").configure(exec.configure()))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_rt::spawn(server);
    executor.start_registration(port);
    let reg = poll_for(WAIT, || admin.requests("/api/registry").into_iter().next())
        .await
        .expect("registered");
    let value: Value = serde_json::from_str(&reg.body).unwrap();
    assert_eq!(
        value["registryValue"],
        format!("http://127.0.0.1:{port}/xxl-job/")
    );
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);
    let base = format!("http://127.0.0.1:{port}");
    let mut hello = client.get(format!("{base}/hello")).send().await.unwrap();
    assert_eq!(hello.body().await.unwrap(), "hi");
    for prefix in ["/xxl-job", "/root-style"] {
        let v = post_empty(&client, format!("{base}{prefix}/beat")).await;
        assert_eq!(v, json!({"code":200,"msg":"Success"}), "{prefix}");
    }
    let v = post_empty(&client, format!("{base}/xxl-job/nope")).await;
    assert_eq!(
        v,
        json!({"code":500,"msg":"invalid request, uri-mapping(/xxl-job/nope) not found."})
    );
    let p = bean(88, "shardingJobHandler", "");
    let mut run = client
        .post(format!("{base}/xxl-job/run"))
        .insert_header(("XXL-JOB-ACCESS-TOKEN", TEST_TOKEN))
        .send_json(&p)
        .await
        .unwrap();
    let v: Value = serde_json::from_slice(&run.body().await.unwrap()).unwrap();
    assert_eq!(v["code"], 200);
    let cb = admin.wait_callback(p.log_id, WAIT).await;
    assert_eq!(cb.handle_msg.as_deref(), Some("shard 0/1"));
    executor.shutdown().await;
    handle.stop(true).await;
}

#[actix_rt::test]
async fn builder_rejects_bad_settings() {
    let with_token = || Executor::builder().access_token(TEST_TOKEN);
    let bad_admin = with_token().admin_addresses(["localhost:8080"]).build();
    assert!(matches!(bad_admin, Err(ExecutorError::Setting(m)) if m.contains("localhost:8080")));
    let empty_app = with_token().app_name(" ").build();
    assert!(matches!(empty_app, Err(ExecutorError::Setting(_))));
    let zero_idle = with_token().idle_timeout(Duration::ZERO).build();
    assert!(matches!(zero_idle, Err(ExecutorError::Setting(_))));
}

#[actix_rt::test]
async fn a_library_executor_needs_a_real_token_unless_built_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let err = Executor::builder()
        .log_path(dir.path())
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, ExecutorError::Setting(m) if m.contains(".access_token(") && m.contains(".insecure_no_access_token()")),
        "{err}"
    );
    let err = Executor::builder()
        .log_path(dir.path())
        .access_token("default_token")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("published default"), "{err}");
    let open = Executor::builder()
        .log_path(dir.path())
        .insecure_no_access_token()
        .build();
    assert!(open.is_ok());
}

#[test]
fn builder_needs_an_actix_system() {
    let dir = tempfile::tempdir().unwrap();
    let err = Executor::builder()
        .access_token(TEST_TOKEN)
        .log_path(dir.path())
        .build()
        .unwrap_err();
    assert!(matches!(err, ExecutorError::NoSystem), "{err}");
}
