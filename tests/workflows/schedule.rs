//! Scheduled workflows: a CRON workflow whose runs outlast its period never has more running
//! than `maxConcurrentRuns` (the skipped fires recorded with why), QUEUE runs them one after
//! the other, a stopped schedule fires no more, reopening a run counts against the limit, and
//! workflows due in the same second (fired in one batch) each start one run per fire time.

use std::time::Duration;

use serde_json::{json, Value};

use crate::kit::expect_within;
use crate::support::*;

/// The runs of workflow `wf`, oldest first.
async fn runs(admin: &crate::kit::TestApp, wf: i64) -> Vec<Value> {
    let res = admin
        .api
        .request(
            "GET",
            &format!("/api/v1/workflow-runs?workflowId={wf}&limit=1000"),
            None,
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let mut items = res.body["items"].as_array().cloned().unwrap_or_default();
    items.reverse();
    items
}

/// Whether two runs' [start, end) overlap (an open run ends now).
fn overlap(a: &Value, b: &Value) -> bool {
    let span = |r: &Value| {
        let start = r["startedAt"].as_i64().unwrap_or(i64::MAX);
        let end = r["finishedAt"].as_i64().unwrap_or(i64::MAX);
        (start, end)
    };
    let ((s1, e1), (s2, e2)) = (span(a), span(b));
    s1 < e2 && s2 < e1
}

backends!(app: a_cron_workflow_with_one_concurrent_run_never_has_two, |admin| {
    let worker = Worker::start(admin, "wf-cron", &["slow"]).await;
    let (group, jobs) = group_with_jobs(admin, "wf-cron", &["slow"]).await;
    // each run takes 2.5 s; the schedule fires every second
    worker.plan("slow", Plan { sleep_ms: 2_500, ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "every second",
        "jobGroup": group,
        "scheduleType": "CRON",
        "scheduleConf": "* * * * * ?",
        "maxConcurrentRuns": 1,
        "nodes": [job_node("slow", &jobs)],
        "edges": [],
    })).await;
    let res = admin.api.request("POST", &format!("/api/v1/workflows/{wf}/start"), None).await;
    assert_eq!((res.status, &res.body["triggerStatus"]), (200, &json!(1)), "{}", res.body);
    expect_within("two runs to end and fires to be skipped", Duration::from_secs(40), || async {
        let all = runs(admin, wf).await;
        let ended = all.iter().filter(|r| r["state"] == "SUCCEEDED").count();
        let skipped = all.iter().filter(|r| r["state"] == "SKIPPED").count();
        (ended >= 2 && skipped >= 2).then_some(())
    })
    .await;
    let res = admin.api.request("POST", &format!("/api/v1/workflows/{wf}/stop"), None).await;
    assert_eq!(res.status, 200);
    let all = runs(admin, wf).await;
    let started: Vec<&Value> = all.iter().filter(|r| r["state"] != "SKIPPED").collect();
    for (i, a) in started.iter().enumerate() {
        for b in &started[i + 1..] {
            assert!(!overlap(a, b), "two runs at once: {a} {b}");
        }
    }
    let skipped = all.iter().find(|r| r["state"] == "SKIPPED").unwrap();
    assert!(skipped["message"].as_str().unwrap().contains("maxConcurrentRuns 1"), "{skipped}");
    assert_eq!(skipped["triggerType"], "CRON");
    // the executor's record agrees: its runs never overlapped
    let ran = worker.runs_of("slow");
    for (i, a) in ran.iter().enumerate() {
        for b in &ran[i + 1..] {
            assert!(a.ended <= b.started || b.ended <= a.started, "{a:?} {b:?}");
        }
    }
    worker.stop().await;
});

backends!(app: queued_runs_wait_for_a_slot_and_run_in_order, |admin| {
    let worker = Worker::start(admin, "wf-queue", &["step"]).await;
    let (group, jobs) = group_with_jobs(admin, "wf-queue", &["step"]).await;
    worker.plan("step", Plan { sleep_ms: 500, ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "queue",
        "jobGroup": group,
        "overlapPolicy": "QUEUE",
        "queueMax": 2,
        "nodes": [job_node("step", &jobs)],
        "edges": [],
    })).await;
    let mut answers = Vec::new();
    for _ in 0..4 {
        let res = admin.api.request("POST", &format!("/api/v1/workflows/{wf}/trigger"), None).await;
        assert_eq!(res.status, 200, "{}", res.body);
        answers.push(res.body);
    }
    let states: Vec<&str> = answers.iter().map(|a| a["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["RUNNING", "QUEUED", "QUEUED", "SKIPPED"], "{answers:?}");
    assert!(answers[3]["message"].as_str().unwrap().contains("queue is full"));
    for a in &answers[..3] {
        let id = a["runId"].as_i64().unwrap();
        assert_eq!(wait_ended(admin, id).await["state"], "SUCCEEDED");
    }
    let ran = worker.runs_of("step");
    assert_eq!(ran.len(), 3);
    for pair in ran.windows(2) {
        assert!(pair[0].ended <= pair[1].started, "one after the other: {ran:?}");
    }
    worker.stop().await;
});

backends!(app: a_fire_never_overtakes_the_queue, |admin| {
    let worker = Worker::start(admin, "wf-fifo", &["step"]).await;
    let (group, jobs) = group_with_jobs(admin, "wf-fifo", &["step"]).await;
    worker.plan("step", Plan { sleep_ms: 3_000, ..Plan::default() });
    let wf = create_workflow(admin, json!({
        "name": "fifo", "jobGroup": group, "overlapPolicy": "QUEUE", "queueMax": 5,
        "nodes": [job_node("step", &jobs)], "edges": [],
    })).await;
    let fire = || async {
        let res = admin.api.request("POST", &format!("/api/v1/workflows/{wf}/trigger"), None).await;
        assert_eq!(res.status, 200, "{}", res.body);
        (res.body["runId"].as_i64().unwrap(), res.body["state"].as_str().unwrap().to_string())
    };
    let (_, first) = fire().await;
    let (waiting, second) = fire().await;
    assert_eq!((first.as_str(), second.as_str()), ("RUNNING", "QUEUED"));
    // a slot opens (the limit raised) while a run waits: the next fire starts the waiting one
    // and queues itself behind it, whether or not the queue's own pass came first
    let res = admin.api.request("PUT", &format!("/api/v1/workflows/{wf}"), Some(json!({"maxConcurrentRuns": 2}))).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let (_, third) = fire().await;
    assert_eq!(third, "QUEUED");
    assert_eq!(run_of(admin, waiting).await["state"], "RUNNING");
    worker.stop().await;
});

backends!(app: a_retry_counts_against_max_concurrent_runs, |admin| {
    let worker = Worker::start(admin, "wf-reopen", &["step"]).await;
    let (group, jobs) = group_with_jobs(admin, "wf-reopen", &["step"]).await;
    let wf = create_workflow(admin, json!({
        "name": "one at a time", "jobGroup": group, "maxConcurrentRuns": 1,
        "nodes": [job_node("step", &jobs)], "edges": [],
    })).await;
    worker.plan("step", Plan { fail: Some("boom".into()), ..Plan::default() });
    let failed = trigger(admin, wf, "").await;
    assert_eq!(wait_ended(admin, failed).await["state"], "FAILED");
    worker.plan("step", Plan { sleep_ms: 3_000, ..Plan::default() });
    let running = trigger(admin, wf, "").await;
    wait_node(admin, running, "step", "RUNNING").await;
    // reopening the failed run now would make two runs at once
    for action in ["retry", "nodes/step/mark-success"] {
        let path = format!("/api/v1/workflow-runs/{failed}/{action}");
        let res = admin.api.request("POST", &path, None).await;
        assert_eq!(res.status, 409, "{action}: {}", res.body);
        let message = res.body["error"].as_str().unwrap_or_default();
        assert!(message.contains("maxConcurrentRuns 1"), "{action}: {message}");
    }
    assert_eq!(run_of(admin, failed).await["state"], "FAILED");
    assert_eq!(wait_ended(admin, running).await["state"], "SUCCEEDED");
    // once the other has ended, the retry is taken
    let res = admin.api.request("POST", &format!("/api/v1/workflow-runs/{failed}/retry"), None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(wait_ended(admin, failed).await["state"], "SUCCEEDED");
    worker.stop().await;
});

backends!(app: workflows_due_in_one_second_fire_together_once_per_fire_time, |admin| {
    let handlers = ["slow", "first", "second", "third"];
    let worker = Worker::start(admin, "wf-together", &handlers).await;
    let (group, jobs) = group_with_jobs(admin, "wf-together", &handlers).await;
    worker.plan("slow", Plan { sleep_ms: 2_500, ..Plan::default() });
    worker.plan("third", Plan { sleep_ms: 1_500, ..Plan::default() });
    let every_second = |name: &str, policy: &str, nodes: Value, edges: Value| json!({
        "name": name, "jobGroup": group, "scheduleType": "CRON", "scheduleConf": "* * * * * ?",
        "maxConcurrentRuns": 1, "overlapPolicy": policy, "nodes": nodes, "edges": edges,
    });
    let skip = create_workflow(admin, every_second("skip", "SKIP", json!([job_node("slow", &jobs)]), json!([]))).await;
    let chain = create_workflow(admin, every_second("chain", "SKIP", nodes_of(&["first", "second"], &jobs), json!([edge("first", "second", "SUCCESS")]))).await;
    let allow = create_workflow(admin, every_second("allow", "ALLOW", json!([job_node("third", &jobs)]), json!([]))).await;
    let all = [skip, chain, allow];
    // started together, the three are due in the same seconds: each pass fires them in one batch
    for wf in all {
        let res = admin.api.request("POST", &format!("/api/v1/workflows/{wf}/start"), None).await;
        assert_eq!(res.status, 200, "{}", res.body);
    }
    let count = |runs: &[Value], state: &str| runs.iter().filter(|r| r["state"] == state).count();
    expect_within("each workflow to fire and run several times", Duration::from_secs(40), || async {
        let (s, c, a) = (runs(admin, skip).await, runs(admin, chain).await, runs(admin, allow).await);
        let beside = a.iter().any(|r| r["message"].as_str().unwrap_or_default().contains("overlap policy ALLOW"));
        (count(&s, "SUCCEEDED") >= 2 && count(&s, "SKIPPED") >= 2 && count(&c, "SUCCEEDED") >= 3 && beside)
            .then_some(())
    })
    .await;
    for wf in all {
        let res = admin.api.request("POST", &format!("/api/v1/workflows/{wf}/stop"), None).await;
        assert_eq!(res.status, 200, "{}", res.body);
    }
    let mut started = std::collections::HashMap::new();
    for wf in all {
        let runs = expect_within("the last runs to end", Duration::from_secs(20), || async {
            let runs = runs(admin, wf).await;
            runs.iter().all(|r| r["finishedAt"].as_i64().is_some()).then_some(runs)
        })
        .await;
        // one run per fire time, whatever its outcome
        let mut times: Vec<i64> = runs.iter().map(|r| r["scheduleTime"].as_i64().unwrap()).collect();
        let fires = times.len();
        times.sort_unstable();
        times.dedup();
        assert_eq!(times.len(), fires, "workflow {wf}: a fire time with two runs: {runs:?}");
        // and none missing: SKIP and ALLOW record every fire, run or skipped
        assert!(times.windows(2).all(|t| t[1] - t[0] == 1_000), "workflow {wf}: a fire time without a run: {times:?}");
        assert!(runs.iter().all(|r| r["triggerType"] == "CRON"), "{runs:?}");
        assert!(runs.iter().all(|r| matches!(r["state"].as_str(), Some("SUCCEEDED" | "SKIPPED"))), "{runs:?}");
        started.insert(wf, runs.len() - count(&runs, "SKIPPED"));
    }
    // the executor's record: each started run called its nodes once
    assert_eq!(worker.runs_of("slow").len(), started[&skip]);
    assert_eq!(worker.runs_of("first").len(), started[&chain]);
    assert_eq!(worker.runs_of("second").len(), started[&chain]);
    assert_eq!(worker.runs_of("third").len(), started[&allow]);
    let slow = worker.runs_of("slow");
    for (i, a) in slow.iter().enumerate() {
        for b in &slow[i + 1..] {
            assert!(a.ended <= b.started || b.ended <= a.started, "{a:?} {b:?}");
        }
    }
    worker.stop().await;
});
