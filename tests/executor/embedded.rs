//! Builds and starts `examples/embedded.rs`: its own routes and the executor answer on one port.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::executor_support::*;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(20);

fn example_binary() -> PathBuf {
    // `cargo test` builds examples, but a filtered run may not have; building again is a no-op
    let status = Command::new(env!("CARGO"))
        .args(["build", "--example", "embedded", "--quiet"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "example builds");
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_jobwheel"));
    bin_dir
        .parent()
        .expect("target dir")
        .join("examples")
        .join("embedded")
}

#[actix_rt::test]
async fn embedded_example_serves_its_routes_and_the_executor_on_one_port() {
    let admin = FakeAdmin::start();
    let logs = tempfile::tempdir().unwrap();
    let mut child = Command::new(example_binary())
        .env("ACCESS_TOKEN", TEST_TOKEN)
        .env("PORT", "0")
        .env("ADMIN_ADDRESSES", admin.url())
        .env("APP_NAME", APP)
        .env("EXECUTOR_IP", "127.0.0.1")
        .env("LOG_PATH", logs.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("example starts");
    let address = poll_for(WAIT, || {
        admin.requests("/api/registry").iter().find_map(|r| {
            let v: Value = serde_json::from_str(&r.body).ok()?;
            Some(v["registryValue"].as_str()?.to_string())
        })
    })
    .await
    .expect("example registered");
    assert!(address.ends_with("/xxl-job/"), "{address}");
    let root = address.trim_end_matches("xxl-job/").to_string();
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);

    let mut hello = client.get(format!("{root}hello")).send().await.unwrap();
    assert_eq!(hello.body().await.unwrap(), "hello from the service");
    // without the token the executor answers nothing but the refusal
    let mut beat = client.post(format!("{address}beat")).send().await.unwrap();
    let v: Value = serde_json::from_slice(&beat.body().await.unwrap()).unwrap();
    assert_eq!(v, json!({"code":500,"msg":"The access token is wrong."}));
    let mut beat = client
        .post(format!("{address}beat"))
        .insert_header(("XXL-JOB-ACCESS-TOKEN", TEST_TOKEN))
        .send()
        .await
        .unwrap();
    let v: Value = serde_json::from_slice(&beat.body().await.unwrap()).unwrap();
    assert_eq!(v, json!({"code":200,"msg":"Success"}));

    for (job, handler, msg) in [(1, "greet", "greeted world"), (2, "report", "report #1")] {
        let p = bean(job, handler, "world");
        let mut run = client
            .post(format!("{address}run"))
            .insert_header(("XXL-JOB-ACCESS-TOKEN", TEST_TOKEN))
            .send_json(&p)
            .await
            .unwrap();
        let v: Value = serde_json::from_slice(&run.body().await.unwrap()).unwrap();
        assert_eq!(v["code"], 200, "{v}");
        let cb = admin.wait_callback(p.log_id, WAIT).await;
        assert_eq!((cb.handle_code, cb.handle_msg.as_deref()), (200, Some(msg)));
    }
    // the executor's metrics, where the service mounted them, for the executor's token only
    let metrics = client.get(format!("{root}metrics")).send().await.unwrap();
    assert_eq!(metrics.status().as_u16(), 401);
    let mut metrics = client
        .get(format!("{root}metrics"))
        .insert_header(("Authorization", format!("Bearer {TEST_TOKEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status().as_u16(), 200);
    let text = String::from_utf8(metrics.body().await.unwrap().to_vec()).unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("Prometheus text format");
    let counter = |metric: &str, label: Option<(&str, &str)>| {
        scrape.samples.iter().find_map(|s| {
            let labelled = label.is_none_or(|(k, v)| s.labels.get(k) == Some(v));
            match s.value {
                prometheus_parse::Value::Counter(n) if s.metric == metric && labelled => Some(n),
                _ => None,
            }
        })
    };
    assert_eq!(
        counter("jobwheel_executor_triggers_accepted_total", None),
        Some(2.0)
    );
    assert_eq!(
        counter("jobwheel_executor_runs_total", Some(("result", "success"))),
        Some(2.0)
    );
    // the same registry under the executor's mount path
    let mut scoped = client
        .get(format!("{address}metrics"))
        .insert_header(("Authorization", format!("Bearer {TEST_TOKEN}")))
        .send()
        .await
        .unwrap();
    assert_eq!(scoped.status().as_u16(), 200);
    let scoped = String::from_utf8(scoped.body().await.unwrap().to_vec()).unwrap();
    assert!(scoped.contains("jobwheel_executor_runs_total{result=\"success\"} 2"));

    let mut stats = client.get(format!("{root}stats")).send().await.unwrap();
    let v: Value = serde_json::from_slice(&stats.body().await.unwrap()).unwrap();
    assert_eq!(v, json!({"reports": 1}));

    signal(child.id() as i32, libc::SIGTERM);
    let exited = poll_for(WAIT, || child.try_wait().ok().flatten()).await;
    assert!(
        exited.is_some_and(|s| s.success()),
        "example exits cleanly on SIGTERM"
    );
    assert_eq!(admin.requests("/api/registryRemove").len(), 1);
}
