//! What the workflow tests add to the kit: jobs for the recording executor ([`Worker`]),
//! workflows, triggers, and waits.

use std::collections::HashMap;
use std::time::Duration;

use jobwheel::clock::now_ms;
use serde_json::{json, Value};

pub use crate::kit::worker::{Plan, Worker};
use crate::kit::{expect_within, TestApp};

/// How long a workflow of quick nodes may take to end in a test.
pub const RUN_WAIT: Duration = Duration::from_secs(30);

/// An automatic group of app `app`, written straight to the database.
pub async fn db_group(store: &jobwheel::store::Store, app: &str) -> i32 {
    store
        .insert_group(&jobwheel::model::JobGroup {
            id: 0,
            app_name: app.to_string(),
            title: app.to_string(),
            address_type: jobwheel::model::AddressType::Auto,
            address_list: vec![],
            access_token: None,
            update_time: now_ms(),
            max_concurrent_instances: 0,
            instance_overflow: jobwheel::model::InstanceOverflow::Skip,
        })
        .await
        .expect("insert group")
}

/// A group of app `app` and one job per handler (schedule NONE, route FIRST); the group's id and
/// the jobs' ids by handler.
pub async fn group_with_jobs(
    admin: &TestApp,
    app: &str,
    handlers: &[&str],
) -> (i64, HashMap<String, i64>) {
    let group = admin.group(app).await;
    let mut jobs = HashMap::new();
    for h in handlers {
        let res = admin
            .api
            .create_job(json!({
                "jobGroup": group,
                "jobDesc": format!("node job {h}"),
                "scheduleType": "NONE",
                "executorHandler": h,
                "executorParam": format!("default-{h}"),
            }))
            .await;
        assert_eq!(res.status, 201, "create job {h}: {}", res.body);
        jobs.insert(h.to_string(), res.id());
    }
    (group, jobs)
}

/// A JOB node of `key` running `jobs[key]`.
pub fn job_node(key: &str, jobs: &HashMap<String, i64>) -> Value {
    json!({"key": key, "kind": "JOB", "jobId": jobs[key]})
}

/// JOB nodes of `keys`.
pub fn nodes_of(keys: &[&str], jobs: &HashMap<String, i64>) -> Value {
    Value::Array(keys.iter().map(|k| job_node(k, jobs)).collect())
}

/// An edge.
pub fn edge(from: &str, to: &str, when: &str) -> Value {
    json!({"from": from, "to": to, "when": when})
}

/// Creates a workflow through the API; its id.
pub async fn create_workflow(admin: &TestApp, body: Value) -> i64 {
    let res = admin
        .api
        .request("POST", "/api/v1/workflows", Some(body))
        .await;
    assert_eq!(res.status, 201, "create workflow: {}", res.body);
    res.id()
}

/// The diamond: a → b, a → c, b → d, c → d, every node a job of its own handler.
pub fn diamond(group: i64, jobs: &HashMap<String, i64>) -> Value {
    json!({
        "name": "diamond",
        "jobGroup": group,
        "nodes": nodes_of(&["a", "b", "c", "d"], jobs),
        "edges": [edge("a", "b", "SUCCESS"), edge("a", "c", "SUCCESS"), edge("b", "d", "SUCCESS"), edge("c", "d", "SUCCESS")],
    })
}

/// Triggers workflow `id` with `params`; the new run's id.
pub async fn trigger(admin: &TestApp, id: i64, params: &str) -> i64 {
    let res = admin
        .api
        .request(
            "POST",
            &format!("/api/v1/workflows/{id}/trigger"),
            Some(json!({"params": params})),
        )
        .await;
    assert_eq!(res.status, 200, "trigger workflow {id}: {}", res.body);
    res.body["runId"].as_i64().expect("a run id")
}

/// The run as `GET /workflow-runs/{id}` answers.
pub async fn run_of(admin: &TestApp, run: i64) -> Value {
    let res = admin
        .api
        .request("GET", &format!("/api/v1/workflow-runs/{run}"), None)
        .await;
    assert_eq!(res.status, 200, "get run {run}: {}", res.body);
    res.body
}

/// Waits until run `run` has ended; the run.
pub async fn wait_ended(admin: &TestApp, run: i64) -> Value {
    expect_within(&format!("workflow run {run} to end"), RUN_WAIT, || async {
        let r = run_of(admin, run).await;
        let open = matches!(r["state"].as_str(), Some("RUNNING" | "QUEUED"));
        (!open).then_some(r)
    })
    .await
}

/// Waits until node `key` of run `run` is in `state`; the run.
pub async fn wait_node(admin: &TestApp, run: i64, key: &str, state: &str) -> Value {
    expect_within(
        &format!("node {key} of run {run} to be {state}"),
        RUN_WAIT,
        || async {
            let r = run_of(admin, run).await;
            (node(&r, key)["state"] == state).then_some(r)
        },
    )
    .await
}

/// Node `key` of a run.
pub fn node<'a>(run: &'a Value, key: &str) -> &'a Value {
    run["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["key"] == key))
        .unwrap_or_else(|| panic!("run has no node {key}: {run}"))
}

/// Every node's state, by key.
pub fn states(run: &Value) -> HashMap<String, String> {
    run["nodes"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .map(|n| {
                    (
                        n["key"].as_str().unwrap_or_default().to_string(),
                        n["state"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}
