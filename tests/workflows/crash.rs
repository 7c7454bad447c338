//! An admin SIGKILLed at each point that matters of a workflow run (after a node's claim, after
//! its executor accepted the call, after its result was stored) and started again: the run
//! ends, and by the executor's own record every node ran once.

use std::time::Duration;

use jobwheel::store::Backend;
use serde_json::json;

use crate::kit::processes::{admin_logs, free_port, start_admin, wait_dead, wait_healthy, TOKEN};
use crate::kit::{wait_for, Api, TestDb, ADMIN_PASSWORD};
use crate::support::*;

const NODES: [&str; 5] = ["n1", "n2", "n3", "n4", "n5"];

async fn admin_dies_and_comes_back(backend: Backend) {
    let Some(db) = TestDb::create(backend).await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    // the first life dies at the second claim: n1 ran, n2 is claimed but never called
    let crashes = ["workflow-claimed:2", "call-answered:1", "result-stored:1"];
    let mut admin = start_admin(&db.url, port, dir.path(), "first", Some(crashes[0]));
    wait_healthy(port).await;
    let api = Api::new(&base);
    assert_eq!(api.login("admin", ADMIN_PASSWORD).await.status, 200);
    let worker = Worker::start_for(&[base.as_str()], TOKEN, "wf-crash", &NODES).await;
    for n in NODES {
        worker.plan(
            n,
            Plan {
                sleep_ms: 200,
                ..Plan::default()
            },
        );
    }
    let group = api
        .create_group(json!({"appName": "wf-crash", "title": "crash"}))
        .await
        .id();
    let mut nodes = Vec::new();
    for n in NODES {
        let job = api
            .create_job(json!({"jobGroup": group, "jobDesc": n, "scheduleType": "NONE", "executorHandler": n}))
            .await;
        assert_eq!(job.status, 201, "{}", job.body);
        nodes.push(json!({"key": n, "kind": "JOB", "jobId": job.id()}));
    }
    let edges: Vec<_> = NODES
        .windows(2)
        .map(|w| edge(w[0], w[1], "SUCCESS"))
        .collect();
    let res = api
        .request(
            "POST",
            "/api/v1/workflows",
            Some(json!({"name": "chain", "jobGroup": group, "nodes": nodes, "edges": edges})),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let wf = res.id();
    let res = api
        .request("POST", &format!("/api/v1/workflows/{wf}/trigger"), None)
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let run = res.body["runId"].as_i64().unwrap();

    for (i, point) in crashes.iter().enumerate() {
        wait_dead(&mut admin, dir.path(), point).await;
        let next = crashes.get(i + 1).copied();
        admin = start_admin(&db.url, port, dir.path(), &format!("life-{}", i + 2), next);
        wait_healthy(port).await;
    }
    // the last life runs clean: the run ends
    let ended = wait_for(Duration::from_secs(90), || {
        let api = &api;
        async move {
            let r = api
                .request("GET", &format!("/api/v1/workflow-runs/{run}"), None)
                .await;
            (r.status == 200 && !matches!(r.body["state"].as_str(), Some("RUNNING" | "QUEUED")))
                .then_some(r.body)
        }
    })
    .await;
    let _ = admin.kill();
    let _ = admin.wait();
    let ended = ended.unwrap_or_else(|| panic!("the run did not end:\n{}", admin_logs(dir.path())));
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    for n in NODES {
        let ran = worker.runs_of(n);
        assert_eq!(
            ran.len(),
            1,
            "{n} ran once by the executor's record: {ran:?}"
        );
        assert_eq!(
            node(&ended, n)["logIds"],
            json!([ran[0].log_id]),
            "{n}: one run row, the one that ran"
        );
    }
    worker.stop().await;
    db.drop_db().await;
}

backends!(run: admin_dies_and_comes_back);
