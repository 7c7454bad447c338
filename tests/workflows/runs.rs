//! Runs: the diamond, failure edges, decisions, context, retry, mark-success, pause, cancel.

use std::time::Duration;

use serde_json::{json, Value};

use crate::kit::expect_within;
use crate::support::*;

backends!(app: a_diamond_runs_the_join_once_after_both_sides_which_run_side_by_side, |admin| {
    let handlers = ["a", "b", "c", "d"];
    let worker = Worker::start(admin, "wf-diamond", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-diamond", &handlers).await;
    // b and c each take a while: side by side, the run takes one of them, not both
    worker.plan("b", Plan { sleep_ms: 600, ..Plan::default() });
    worker.plan("c", Plan { sleep_ms: 600, ..Plan::default() });
    let wf = create_workflow(admin, diamond(group, &jobs)).await;
    let run = trigger(admin, wf, "").await;
    let ended = wait_ended(admin, run).await;
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    for key in handlers {
        assert_eq!(worker.runs_of(key).len(), 1, "{key} ran once");
        assert_eq!(node(&ended, key)["state"], "SUCCEEDED");
        assert_eq!(node(&ended, key)["logIds"].as_array().unwrap().len(), 1);
    }
    let (a, b, c, d) = (&worker.runs_of("a")[0], &worker.runs_of("b")[0], &worker.runs_of("c")[0], &worker.runs_of("d")[0]);
    assert!(b.started >= a.ended && c.started >= a.ended, "b and c after a");
    assert!(d.started >= b.ended && d.started >= c.ended, "d after both");
    assert!(b.started < c.ended && c.started < b.ended, "b and c overlapped: {b:?} {c:?}");
    // each node's run row points back at its run and node
    let log_id = node(&ended, "d")["logIds"][0].as_i64().unwrap();
    let log = admin.store.get_log(log_id).await.unwrap().unwrap();
    assert_eq!((log.wf_run_id, log.wf_node.as_deref()), (Some(run), Some("d")));
    assert_eq!(log.trigger_type.as_str(), "WORKFLOW");
    worker.stop().await;
});

backends!(app: a_failure_edge_runs_the_compensation_and_the_other_branch_is_skipped, |admin| {
    let handlers = ["load", "publish", "rollback"];
    let worker = Worker::start(admin, "wf-fail", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-fail", &handlers).await;
    worker.plan("load", Plan { fail: Some("disk full".into()), ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "compensate",
        "jobGroup": group,
        "nodes": nodes_of(&handlers, &jobs),
        "edges": [edge("load", "publish", "SUCCESS"), edge("load", "rollback", "FAILURE")],
    })).await;
    let run = trigger(admin, wf, "").await;
    let ended = wait_ended(admin, run).await;
    let s = states(&ended);
    assert_eq!(s["load"], "FAILED");
    assert_eq!(s["rollback"], "SUCCEEDED");
    assert_eq!(s["publish"], "SKIPPED");
    // a failure with a FAILURE edge is handled: the run succeeds
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    assert!(worker.runs_of("publish").is_empty());
    assert_eq!(worker.runs_of("rollback").len(), 1);
    // its messages are for people: in Chinese for a reader who asks, states unchanged
    assert_eq!(node(&ended, "load")["message"], "its run failed (code 500): disk full");
    let path = format!("/api/v1/workflow-runs/{run}");
    let zh = admin.api.call_with(actix_web::http::Method::GET, &path, None, &[("Accept-Language", "zh-CN")]).await;
    assert_eq!(zh.status, 200, "{}", zh.body);
    assert_eq!(node(&zh.body, "load")["message"], "运行失败（结果码 500）：disk full", "{}", zh.body);
    assert_eq!(node(&zh.body, "load")["state"], "FAILED");
    worker.stop().await;
});

backends!(app: a_failure_blocks_only_its_descendants_and_retry_reruns_only_them, |admin| {
    let handlers = ["root", "bad", "after_bad", "good", "after_good"];
    let worker = Worker::start(admin, "wf-retry", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-retry", &handlers).await;
    worker.plan("bad", Plan { fail: Some("flaky".into()), ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "retry me",
        "jobGroup": group,
        "nodes": nodes_of(&handlers, &jobs),
        "edges": [edge("root", "bad", "SUCCESS"), edge("bad", "after_bad", "SUCCESS"),
                  edge("root", "good", "SUCCESS"), edge("good", "after_good", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "").await;
    let ended = wait_ended(admin, run).await;
    let s = states(&ended);
    assert_eq!(ended["state"], "FAILED", "{ended}");
    assert_eq!((s["bad"].as_str(), s["after_bad"].as_str()), ("FAILED", "SKIPPED"));
    // the independent branch ran on
    assert_eq!((s["good"].as_str(), s["after_good"].as_str()), ("SUCCEEDED", "SUCCEEDED"));

    worker.plan("bad", Plan::default());
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/retry"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["id"], run, "the same run id");
    let ended = wait_ended(admin, run).await;
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    assert_eq!(worker.runs_of("bad").len(), 2, "the failed node ran again");
    assert_eq!(worker.runs_of("after_bad").len(), 1, "what follows it ran");
    for kept in ["root", "good", "after_good"] {
        assert_eq!(worker.runs_of(kept).len(), 1, "{kept} kept its success");
    }
    assert_eq!(node(&ended, "bad")["logIds"].as_array().unwrap().len(), 2);
    // a run that succeeded cannot be retried
    let again = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/retry"), None).await;
    assert_eq!(again.status, 409, "{}", again.body);
    let why = again.body["error"].as_str().unwrap_or_default();
    assert!(why.contains("only a FAILED, CANCELLED or TIMED_OUT run"), "{why}");
    worker.stop().await;
});

backends!(app: a_job_moved_to_another_group_is_not_run_by_an_older_run, |admin| {
    let handlers = ["first", "moved"];
    let worker = Worker::start(admin, "wf-moved", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-moved", &handlers).await;
    worker.plan("first", Plan { fail: Some("not yet".into()), ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "moved", "jobGroup": group, "nodes": nodes_of(&handlers, &jobs),
        "edges": [edge("first", "moved", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "").await;
    assert_eq!(wait_ended(admin, run).await["state"], "FAILED");
    // the workflow drops the job, which then moves to another group; the run keeps its snapshot
    let res = admin.api.request("PUT", &format!("/api/v1/workflows/{wf}"), Some(json!({"nodes": nodes_of(&["first"], &jobs), "edges": []}))).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let elsewhere = admin.group("wf-elsewhere").await;
    let res = admin.api.update_job(jobs["moved"], json!({"jobGroup": elsewhere})).await;
    assert_eq!(res.status, 200, "{}", res.body);
    worker.plan("first", Plan::default());
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/retry"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let ended = wait_ended(admin, run).await;
    assert_eq!((node(&ended, "first")["state"].as_str(), node(&ended, "moved")["state"].as_str()), (Some("SUCCEEDED"), Some("FAILED")), "{ended}");
    let message = node(&ended, "moved")["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains(&format!("not in the run's executor group ({group})")), "{message}");
    assert!(worker.runs_of("moved").is_empty());
    worker.stop().await;
});

backends!(app: context_values_reach_the_next_nodes_params_and_handlers, |admin| {
    let handlers = ["extract", "load"];
    let worker = Worker::start(admin, "wf-ctx", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-ctx", &handlers).await;
    worker.plan("extract", Plan { output: Some(r#"{"rows": 42, "table": {"name": "orders"}}"#.into()), ..Plan::default() });
    let mut load = job_node("load", &jobs);
    load["params"] = json!("rows=${context.rows} table=${context.table.name} mode=${workflow.params}");
    let wf = create_workflow(admin, json!({
        "name": "etl",
        "jobGroup": group,
        "nodes": [job_node("extract", &jobs), load],
        "edges": [edge("extract", "load", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "full").await;
    let ended = wait_ended(admin, run).await;
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    let load = &worker.runs_of("load")[0];
    assert_eq!(load.param, "rows=42 table=orders mode=full");
    assert_eq!(load.context.as_ref().unwrap()["rows"], 42, "the handler reads the whole context");
    assert_eq!(ended["context"]["rows"], 42);
    assert_eq!(node(&ended, "extract")["output"]["table"]["name"], "orders");
    // a node without params runs with its job's
    assert_eq!(worker.runs_of("extract")[0].param, "default-extract");
    assert_eq!(ended["params"], "full");
    worker.stop().await;
});

backends!(app: a_decision_sends_the_run_down_one_branch_and_the_join_runs_once, |admin| {
    let handlers = ["count", "big", "small", "report"];
    let worker = Worker::start(admin, "wf-decide", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-decide", &handlers).await;
    worker.plan("count", Plan { output: Some(r#"{"rows": 500}"#.into()), ..Plan::default() });
    let mut report = job_node("report", &jobs);
    report["join"] = json!("ANY");
    let wf = create_workflow(admin, json!({
        "name": "decide",
        "jobGroup": group,
        "nodes": [job_node("count", &jobs), job_node("big", &jobs), job_node("small", &jobs), report,
                  {"key": "many", "kind": "DECISION", "expression": "context.rows > 100"}],
        "edges": [edge("count", "many", "SUCCESS"), edge("many", "big", "TRUE"), edge("many", "small", "FALSE"),
                  edge("big", "report", "SUCCESS"), edge("small", "report", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "").await;
    let ended = wait_ended(admin, run).await;
    let s = states(&ended);
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    assert_eq!((s["big"].as_str(), s["small"].as_str()), ("SUCCEEDED", "SKIPPED"));
    assert_eq!(node(&ended, "many")["decision"], true);
    assert_eq!(worker.runs_of("big").len(), 1);
    assert!(worker.runs_of("small").is_empty());
    assert_eq!(worker.runs_of("report").len(), 1, "the join ran once");
    worker.stop().await;
});

backends!(app: a_failed_node_marked_succeeded_lets_what_follows_run, |admin| {
    let handlers = ["first", "second"];
    let worker = Worker::start(admin, "wf-mark", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-mark", &handlers).await;
    worker.plan("first", Plan { fail: Some("no".into()), ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "mark",
        "jobGroup": group,
        "nodes": [job_node("first", &jobs), job_node("second", &jobs)],
        "edges": [edge("first", "second", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "").await;
    let ended = wait_ended(admin, run).await;
    assert_eq!(ended["state"], "FAILED");
    let missing = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/nodes/nope/mark-success"), None).await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/nodes/first/mark-success"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let ended = wait_ended(admin, run).await;
    assert_eq!(ended["state"], "SUCCEEDED", "{ended}");
    assert_eq!(worker.runs_of("first").len(), 1, "not run again");
    assert_eq!(worker.runs_of("second").len(), 1);
    let again = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/nodes/first/mark-success"), None).await;
    assert_eq!(again.status, 409, "{}", again.body);
    // a DECISION node that failed has no true or false to follow: it is not marked
    let wf = create_workflow(admin, json!({
        "name": "gate", "jobGroup": group,
        "nodes": [{"key": "gate", "kind": "DECISION", "expression": "context.missing == 1"}, job_node("second", &jobs)],
        "edges": [edge("gate", "second", "TRUE")],
    })).await;
    let run = trigger(admin, wf, "").await;
    let ended = wait_ended(admin, run).await;
    assert_eq!((ended["state"].as_str(), node(&ended, "gate")["state"].as_str()), (Some("FAILED"), Some("FAILED")), "{ended}");
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/nodes/gate/mark-success"), None).await;
    assert_eq!(res.status, 409, "{}", res.body);
    assert!(res.error().contains("DECISION node"), "{}", res.body);
    worker.stop().await;
});

backends!(app: a_node_whose_run_row_is_deleted_fails_instead_of_holding_its_run, |admin| {
    let handlers = ["slow", "next"];
    let worker = Worker::start(admin, "wf-gone", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-gone", &handlers).await;
    worker.plan("slow", Plan { sleep_ms: 60_000, ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "gone", "jobGroup": group, "nodes": nodes_of(&handlers, &jobs),
        "edges": [edge("slow", "next", "SUCCESS")],
    })).await;
    let run = trigger(admin, wf, "").await;
    wait_node(admin, run, "slow", "RUNNING").await;
    // the job's run records are cleared while its node runs: no result can reach that row now
    let res = admin.api.request("DELETE", &format!("/api/v1/logs?jobId={}&keepLast=0", jobs["slow"]), None).await;
    assert_eq!((res.status, &res.body["deleted"]), (200, &json!(1)), "{}", res.body);
    // the next look at the run (a resume asks for one at once) fails the node
    for action in ["pause", "resume"] {
        let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/{action}"), None).await;
        assert_eq!(res.status, 200, "{action}: {}", res.body);
    }
    let ended = wait_ended(admin, run).await;
    assert_eq!((ended["state"].as_str(), node(&ended, "next")["state"].as_str()), (Some("FAILED"), Some("SKIPPED")), "{ended}");
    let message = node(&ended, "slow")["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("run row was deleted while it ran"), "{message}");
    worker.stop().await;
});

backends!(app: a_paused_run_starts_no_node_until_resumed_and_cancel_kills_running_nodes, |admin| {
    let handlers = ["slow", "next"];
    let worker = Worker::start(admin, "wf-pause", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-pause", &handlers).await;
    worker.plan("slow", Plan { sleep_ms: 800, ..Plan::default() });
    let body = json!({
        "name": "pause",
        "jobGroup": group,
        "nodes": [job_node("slow", &jobs), job_node("next", &jobs)],
        "edges": [edge("slow", "next", "SUCCESS")],
    });
    let wf = create_workflow(admin, body).await;
    let run = trigger(admin, wf, "").await;
    wait_node(admin, run, "slow", "RUNNING").await;
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/pause"), None).await;
    assert_eq!((res.status, &res.body["paused"]), (200, &json!(true)), "{}", res.body);
    // slow ends; next waits while the run is paused
    wait_node(admin, run, "slow", "SUCCEEDED").await;
    let r = run_of(admin, run).await;
    assert_eq!((r["state"].as_str(), node(&r, "next")["state"].as_str()), (Some("RUNNING"), Some("WAITING")));
    assert!(worker.runs_of("next").is_empty());
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/resume"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(wait_ended(admin, run).await["state"], "SUCCEEDED");
    assert_eq!(worker.runs_of("next").len(), 1);

    // cancel: the running node is killed on its executor, the waiting one cancelled
    worker.plan("slow", Plan { sleep_ms: 60_000, ..Plan::default() });
    let run = trigger(admin, wf, "").await;
    wait_node(admin, run, "slow", "RUNNING").await;
    expect_within("the slow node to start on its executor", RUN_WAIT, || async {
        (worker.runs_of("slow").len() == 2).then_some(())
    })
    .await;
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/cancel"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let ended = wait_ended(admin, run).await;
    assert_eq!(ended["state"], "CANCELLED");
    assert_eq!(states(&ended)["slow"], "CANCELLED");
    assert_eq!(states(&ended)["next"], "CANCELLED");
    expect_within("the executor to stop the node", Duration::from_secs(10), || async {
        worker.runs_of("slow").iter().all(|r| r.ended > 0).then_some(())
    })
    .await;
    let ran = worker.runs_of("slow");
    assert!(ran[1].ended - ran[1].started < 30_000, "killed, not run to its end");
    let again = admin.api.request("POST", &format!("/api/v1/workflow-runs/{run}/cancel"), None).await;
    assert_eq!(again.status, 409);
    let _: Value = again.body;
    worker.stop().await;
});
