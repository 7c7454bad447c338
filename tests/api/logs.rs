//! REST API v1 logs against a fake executor: manual trigger, log list and filters, the
//! executor log proxy, kill, clearing, and the registry list.

use crate::kit::db::cron_log;
use crate::kit::{Behaviour, FakeExecutor};
use actix_web::http::Method;
use serde_json::json;

backends!(app: manual_trigger_content_kill_and_clear, |app| {
    let api = &app.api;
    let exec = FakeExecutor::start(
        &app.base,
        &app.token,
        Behaviour::without_results(),
    );
    let g = app.group("fake-app").await;
    let res = api.register_executor("fake-app", &exec.address).await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let job = app.job(g, "manual").await;

    // trigger: the log row exists and the executor accepted the run
    let res = api
        .trigger_job(job, Some(json!({"executorParam": "p=1"})))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["triggerCodes"], json!([200]));
    let log_id = res.body["logIds"][0].as_i64().unwrap();
    let runs = exec.calls_to("run");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["logId"], log_id);
    assert_eq!(runs[0]["jobId"], job);
    assert_eq!(runs[0]["executorParams"], "p=1");

    let logs = api.list_logs(&format!("jobId={job}")).await;
    assert_eq!(logs.status, 200, "{}", logs.body);
    assert_eq!(logs.body["total"], 1);
    let item = &logs.body["items"][0];
    assert_eq!(item["id"], log_id);
    assert_eq!(item["jobGroup"], g);
    assert_eq!(item["triggerType"], "MANUAL");
    assert_eq!(item["triggerCode"], 200);
    assert_eq!(item["executorAddress"], exec.address.as_str());
    assert_eq!(item["executorHandler"], "demoJobHandler");
    assert_eq!(item["executorParam"], "p=1");
    assert_eq!(item["handleCode"], 0);
    assert!(item["triggerTime"].as_i64().unwrap() > 0);
    assert_eq!(api.list_logs("status=running").await.body["total"], 1);
    assert_eq!(api.list_logs("status=success").await.body["total"], 0);
    assert_eq!(
        api.list_logs(&format!("jobGroup={g}&from=0&to=1"))
            .await
            .body["total"],
        0
    );
    let res = api.list_logs("status=done").await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "status");
    assert!(
        res.error().contains("allowed: success, fail, running"),
        "{}",
        res.error()
    );
    assert_eq!(api.get_log(log_id).await.body["id"], log_id);
    assert_eq!(api.get_log(999_999).await.status, 404);

    // the executor's log, proxied
    let res = api.log_content(log_id, 1).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["fromLineNum"], 1);
    assert_eq!(res.body["toLineNum"], 2);
    assert_eq!(res.body["logContent"], "line 1\nline 2");
    assert_eq!(res.body["isEnd"], false);
    let asked = exec.calls_to("log");
    assert_eq!(asked[0]["logId"], log_id);
    assert_eq!(asked[0]["fromLineNum"], 1);
    let res = api.log_content(log_id, 3).await;
    assert_eq!(res.body["isEnd"], false, "still running: not the end");
    assert_eq!(api.log_content(log_id, 0).await.status, 400);

    // kill: the executor is told, the run is recorded as failed through the callback path
    let res = api.kill_log(log_id).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(exec.calls_to("kill"), vec![json!({"jobId": job})]);
    let killed = api.get_log(log_id).await;
    assert_eq!(killed.body["handleCode"], 500);
    assert_eq!(
        killed.body["handleMsg"],
        "Manual operation, kill job: killed"
    );
    assert!(killed.body["handleTime"].as_i64().unwrap() > 0);
    let res = api.log_content(log_id, 3).await;
    assert_eq!(
        res.body["isEnd"], true,
        "past the last line of a finished run"
    );
    let res = api.kill_log(log_id).await;
    assert_eq!(res.status, 409, "{}", res.body);
    assert_eq!(api.list_logs("status=fail").await.body["total"], 1);

    // triggers without a body, and bad trigger bodies
    let res = api.trigger_job(job, None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let res = api
        .trigger_job(job, Some(json!({"addressList": ["10.0.0.1:9999"]})))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "addressList");
    let res = api
        .raw(
            Method::POST,
            &format!("/api/v1/jobs/{job}/trigger"),
            Some("application/json"),
            b"{nope".to_vec(),
        )
        .await;
    assert_eq!(res.status, 400, "{}", res.body);
    assert_eq!(api.trigger_job(999_999, None).await.status, 404);

    // an executor of the group that is gone: the trigger is recorded as failed; its log cannot
    // be read (502) and there is nothing to kill (409)
    let res = api.register_executor("fake-app", "http://127.0.0.1:1/").await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let res = api
        .trigger_job(job, Some(json!({"addressList": ["http://127.0.0.1:1/"]})))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["triggerCodes"], json!([500]));
    let dead = res.body["logIds"][0].as_i64().unwrap();
    assert_eq!(
        api.get_log(dead).await.body["executorAddress"],
        "http://127.0.0.1:1/"
    );
    let res = api.log_content(dead, 1).await;
    assert_eq!(res.status, 502, "{}", res.body);
    assert!(!res.error().is_empty());
    assert_eq!(api.kill_log(dead).await.status, 409);
    let gone = json!({"registryGroup": "EXECUTOR", "registryKey": "fake-app",
        "registryValue": "http://127.0.0.1:1/"});
    let res = api.post_as_executor("/api/registryRemove", gone).await;
    assert_eq!(res.body["code"], 200, "{}", res.body);

    // clearing: exactly one of olderThanDays and keepLast
    assert_eq!(
        api.list_logs(&format!("jobId={job}")).await.body["total"],
        3
    );
    assert_eq!(api.clear_logs(&format!("jobId={job}")).await.status, 400);
    assert_eq!(
        api.clear_logs(&format!("jobId={job}&keepLast=1&olderThanDays=1"))
            .await
            .status,
        400
    );
    assert_eq!(
        api.clear_logs(&format!("jobId={job}&keepLast=-1"))
            .await
            .status,
        400
    );
    let res = api.clear_logs(&format!("jobId={job}&keepLast=1")).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["deleted"], 2);
    let left = api.list_logs(&format!("jobId={job}")).await;
    assert_eq!(left.body["total"], 1);
    assert_eq!(left.body["items"][0]["id"], dead, "the newest row is kept");
    let res = api
        .clear_logs(&format!("jobGroup={g}&olderThanDays=1"))
        .await;
    assert_eq!(res.body["deleted"], 0, "nothing is a day old");
    let res = api
        .clear_logs(&format!("jobGroup={g}&olderThanDays=0"))
        .await;
    assert_eq!(res.body["deleted"], 1);

    // the registry lists the fake executor
    let online = api.registry().await;
    assert_eq!(online.status, 200);
    assert_eq!(
        online.body,
        json!([{
            "appName": "fake-app",
            "address": exec.address,
            "protocol": "v2",
            "updateTime": online.body[0]["updateTime"],
            "suspectSince": null,
            "suspectReason": null,
            "load": null,
            "labels": {},
            "cordonedSince": null,
        }])
    );
});

backends!(app: clearing_many_logs_goes_in_batches, |app| {
    let api = &app.api;
    let g = app.group("bulk-app").await;
    let job = app.job(g, "bulk").await;
    let now = jobwheel::clock::now_ms();
    for i in 0..1200 {
        app.store
            .insert_log(&cron_log(g as i32, job as i32, now - 100_000 + i))
            .await
            .unwrap();
    }
    let res = api.clear_logs(&format!("jobGroup={g}&keepLast=50")).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["deleted"], 1150);
    assert_eq!(
        api.list_logs(&format!("jobGroup={g}")).await.body["total"],
        50
    );
});

backends!(app: instance_caps_show_on_triggers_and_runs, |app| {
    let api = &app.api;
    let exec = FakeExecutor::start(&app.base, &app.token, Behaviour::without_results());
    let g = app.group("capped-app").await;
    let res = api.register_executor("capped-app", &exec.address).await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let job = app.job(g, "capped").await;
    let res = api
        .update_job(job, json!({"maxConcurrentInstances": 1, "instanceOverflow": "QUEUE"}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);

    // the first runs (its result never comes, so it holds the slot); the second waits
    let first = api.trigger_job(job, None).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(first.body.get("admission").is_none(), "{}", first.body);
    let second = api.trigger_job(job, None).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["admission"], "QUEUED", "{}", second.body);
    assert!(
        second.body["reason"].as_str().unwrap().contains("1 of 1 instances open"),
        "{}",
        second.body
    );
    let queued_id = second.body["logIds"][0].as_i64().unwrap();
    assert_eq!(exec.calls_to("run").len(), 1, "a queued fire is not sent");
    let queued = api.list_logs(&format!("jobId={job}&admission=QUEUED")).await;
    assert_eq!(queued.body["total"], 1, "{}", queued.body);
    assert_eq!(queued.body["items"][0]["id"], queued_id);
    assert_eq!(queued.body["items"][0]["admission"], "QUEUED");
    let res = api.list_logs("admission=LATER").await;
    assert_eq!((res.status, res.field()), (400, "admission".to_string()), "{}", res.body);

    // a kill takes it off the queue, unrun
    let res = api.kill_log(queued_id).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let row = api.get_log(queued_id).await;
    assert_eq!(row.body["admission"], "SKIPPED", "{}", row.body);
    assert_eq!(row.body["triggerCode"], 500);
    let res = api.kill_log(queued_id).await;
    assert_eq!(res.status, 409, "nothing left to kill: {}", res.body);

    // under SKIP the fire is recorded and not run
    api.update_job(job, json!({"instanceOverflow": "SKIP"})).await;
    let skipped = api.trigger_job(job, None).await;
    assert_eq!(skipped.body["admission"], "SKIPPED", "{}", skipped.body);
    assert_eq!(skipped.body["triggerCodes"], json!([500]));
    assert_eq!(exec.calls_to("run").len(), 1);

    // no executor to send to: the run row says so
    let empty = app.group("empty-app").await;
    let lonely = app.job(empty, "lonely").await;
    let res = api.trigger_job(lonely, None).await;
    let id = res.body["logIds"][0].as_i64().unwrap();
    assert_eq!(api.get_log(id).await.body["admission"], "NO_EXECUTOR");
    let first_id = first.body["logIds"][0].as_i64().unwrap();
    assert_eq!(api.get_log(first_id).await.body["admission"], "RAN");
});
