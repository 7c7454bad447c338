//! Script jobs as nodes, on the admin's own executor: a script's last line of output, a JSON
//! object, is its node's output; cancelling a run stops its running script.

use std::time::Duration;

use jobwheel::bootstrap::LOCAL_APP_NAME;
use jobwheel::clock::now_ms;
use serde_json::json;

use crate::kit::{expect_within, poll_for, TestApp};
use crate::support::*;

/// The local executor's group, once the executor has registered.
async fn local_group(admin: &TestApp) -> i64 {
    let group = admin
        .store
        .get_group_by_app_name(LOCAL_APP_NAME)
        .await
        .unwrap()
        .expect("the local executor's group")
        .id;
    expect_within(
        "the local executor to register",
        Duration::from_secs(30),
        || async {
            let live = admin
                .store
                .find_live_registry_for(LOCAL_APP_NAME, now_ms() - 90_000)
                .await
                .unwrap();
            (!live.is_empty()).then_some(())
        },
    )
    .await;
    group as i64
}

async fn script_job(admin: &TestApp, group: i64, desc: &str, source: &str) -> i64 {
    let res = admin
        .api
        .create_job(json!({
            "jobGroup": group,
            "jobDesc": desc,
            "scheduleType": "NONE",
            "glueType": "GLUE_SHELL",
            "glueSource": source,
        }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    res.id()
}

backends!(app: a_scripts_last_json_line_is_its_output_and_cancel_stops_a_running_script, |b| b.standalone(), |admin| {
    let group = local_group(admin).await;
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    let pid_path = pid_file.path().display().to_string();
    let count = script_job(admin, group, "count", "echo counting\necho '{\"rows\": 7}'\n").await;
    let show = script_job(admin, group, "show", "echo \"got $1\"\n").await;
    let wait = script_job(admin, group, "wait", &format!("echo $$ > {pid_path}\nsleep 120\n")).await;
    let wf = create_workflow(admin, json!({
        "name": "scripts",
        "jobGroup": group,
        "nodes": [
            {"key": "count", "kind": "JOB", "jobId": count},
            {"key": "show", "kind": "JOB", "jobId": show, "params": "rows=${context.rows}"},
            {"key": "wait", "kind": "JOB", "jobId": wait},
        ],
        "edges": [edge("count", "show", "SUCCESS"), edge("show", "wait", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "").await;
    let r = wait_node(admin, run, "wait", "RUNNING").await;
    assert_eq!(r["context"]["rows"], 7, "{r}");
    assert_eq!(node(&r, "count")["output"], json!({"rows": 7}));
    // the next node got the value in its parameter
    let show_log = node(&r, "show")["logIds"][0].as_i64().unwrap();
    let content = admin.api.log_content(show_log, 1).await;
    assert!(content.body.to_string().contains("got rows=7"), "{}", content.body);

    let pid: i32 = poll_for(Duration::from_secs(20), || {
        std::fs::read_to_string(&pid_path).ok()?.trim().parse().ok()
    })
    .await
    .expect("the script started");
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/cancel"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(wait_ended(admin, run).await["state"], "CANCELLED");
    // SAFETY: signal 0 only asks whether the process exists
    let gone = poll_for(Duration::from_secs(20), || (unsafe { libc::kill(pid, 0) } != 0).then_some(())).await;
    assert!(gone.is_some(), "the script {pid} was stopped");
});
