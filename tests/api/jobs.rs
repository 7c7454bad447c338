//! REST API v1 jobs: CRUD with every validation error, child-job cycles, GLUE versions,
//! start/stop, next fire times and schedule previews (with a non-UTC zone).

use actix_web::http::Method;
use jobwheel::clock::now_ms;
use jobwheel::model::AWAITING_COMPLETION;
use serde_json::{json, Value};

const DAY_MS: i64 = 86_400_000;

/// 2026-01-01T00:00:00Z.
const NEW_YEAR_2026: i64 = 1_767_225_600_000;

fn base_job(group: i64) -> Value {
    json!({"jobGroup": group, "jobDesc": "nightly", "executorHandler": "demoJobHandler"})
}

fn with(mut v: Value, key: &str, value: Value) -> Value {
    v[key] = value;
    v
}

backends!(app: job_crud_and_defaults, |app| {
    let api = &app.api;
    let g = app.group("jobs-app").await;

    // omitted optional fields take XXL-JOB's defaults
    let res = api.create_job(base_job(g)).await;
    assert_eq!(res.status, 201, "{}", res.body);
    let minimal = res.id();
    let b = &res.body;
    assert_eq!(b["scheduleType"], "NONE");
    assert_eq!(b["misfireStrategy"], "DO_NOTHING");
    assert_eq!(b["executorRouteStrategy"], "FIRST");
    assert_eq!(b["executorBlockStrategy"], "SERIAL_EXECUTION");
    assert_eq!(b["glueType"], "BEAN");
    assert_eq!(b["triggerStatus"], 0);
    assert_eq!(b["triggerNextTime"], 0);
    assert_eq!(b["childJobIds"], json!([]));
    assert_eq!(b["maxQueued"], 0, "unbounded unless set");
    assert_eq!(
        (&b["maxConcurrentInstances"], &b["instanceOverflow"]),
        (&json!(0), &json!("SKIP")),
        "no instance cap unless set"
    );
    assert_eq!(
        (&b["instanceQueueMax"], &b["instanceQueueTtlSecs"]),
        (&json!(100), &json!(600))
    );

    let full = json!({
        "id": 777, "triggerStatus": 1, "triggerNextTime": 5,
        "jobGroup": g, "jobDesc": "report", "author": "ops", "alarmEmail": "ops@example.com",
        "alarmWebhook": "https://hooks.example.com/x", "scheduleType": "CRON",
        "scheduleConf": "0 0/5 * * * ?", "timezone": "Europe/Berlin",
        "misfireStrategy": "FIRE_ONCE_NOW", "executorRouteStrategy": "ROUND",
        "executorHandler": "reportHandler", "executorParam": "a=1",
        "executorBlockStrategy": "DISCARD_LATER", "executorTimeout": 30,
        "executorFailRetryCount": 2, "retryIntervalSecs": 10, "childJobIds": [minimal],
        "maxQueued": 0, "logRetentionDays": 90, "logRetentionRuns": 500,
        "maxConcurrentInstances": 3, "instanceOverflow": "QUEUE", "instanceQueueMax": 7,
        "instanceQueueTtlSecs": 120,
    });
    let res = api.create_job(full.clone()).await;
    assert_eq!(res.status, 201, "{}", res.body);
    let id = res.id();
    assert_ne!(id, 777, "ids are not taken from the body");
    let got = api.get_job(id).await;
    assert_eq!(got.status, 200);
    for key in [
        "jobGroup",
        "jobDesc",
        "author",
        "alarmEmail",
        "alarmWebhook",
        "scheduleType",
        "scheduleConf",
        "timezone",
        "misfireStrategy",
        "executorRouteStrategy",
        "executorHandler",
        "executorParam",
        "executorBlockStrategy",
        "executorTimeout",
        "executorFailRetryCount",
        "retryIntervalSecs",
        "childJobIds",
        "maxQueued",
        "logRetentionDays",
        "logRetentionRuns",
        "maxConcurrentInstances",
        "instanceOverflow",
        "instanceQueueMax",
        "instanceQueueTtlSecs",
    ] {
        assert_eq!(got.body[key], full[key], "{key}");
    }
    assert_eq!(
        got.body["triggerStatus"], 0,
        "trigger fields are not taken from the body"
    );

    // a job fired only by hand keeps no cron
    let res = api
        .update_job(minimal, json!({"scheduleType": "NONE", "scheduleConf": "0 0 3 * * ?"}))
        .await;
    assert_eq!((res.status, &res.body["scheduleConf"]), (200, &json!("")), "{}", res.body);

    // a SERIAL job's queue bound is kept, and an update that omits it keeps it
    let res = api.update_job(minimal, with(base_job(g), "maxQueued", json!(3))).await;
    assert_eq!((res.status, &res.body["maxQueued"]), (200, &json!(3)), "{}", res.body);
    let res = api.update_job(minimal, json!({"jobDesc": "still bounded"})).await;
    assert_eq!((res.status, &res.body["maxQueued"]), (200, &json!(3)), "{}", res.body);

    // a selector is kept in its canonical form, whether given as text or as an object
    let res = api
        .update_job(minimal, json!({"executorSelector": " region in ( eu,us ) ,gpu=true"}))
        .await;
    assert_eq!(res.body["executorSelector"], "region in (eu,us), gpu=true", "{}", res.body);
    let res = api.update_job(minimal, json!({"executorSelector": {"gpu": "true"}})).await;
    assert_eq!(res.body["executorSelector"], "gpu=true", "{}", res.body);
    let res = api.update_job(minimal, json!({"executorSelector": ""})).await;
    assert_eq!(res.body["executorSelector"], "", "{}", res.body);

    // list: filters and paging
    let all = api.list_jobs("").await;
    assert_eq!(all.status, 200);
    assert_eq!(all.body["total"], 2);
    let page = api.list_jobs("limit=1&offset=1").await;
    assert_eq!(page.body["total"], 2);
    assert_eq!(page.body["items"].as_array().unwrap().len(), 1);
    assert_eq!(page.body["items"][0]["id"], id);
    assert_eq!(api.list_jobs("jobDesc=repo").await.body["total"], 1);
    assert_eq!(api.list_jobs("author=ops").await.body["total"], 1);
    assert_eq!(api.list_jobs("executorHandler=demo").await.body["total"], 1);
    assert_eq!(
        api.list_jobs(&format!("jobGroup={g}&triggerStatus=0"))
            .await
            .body["total"],
        2
    );
    assert_eq!(api.list_jobs("triggerStatus=1").await.body["total"], 0);
    for bad in ["limit=0", "limit=1001", "offset=-1", "triggerStatus=7"] {
        let res = api.list_jobs(bad).await;
        assert_eq!(res.status, 400, "{bad}: {}", res.body);
    }
    let res = api.list_jobs("limit=abc").await;
    assert_eq!(res.status, 400);
    assert!(res.error().contains("invalid"), "{}", res.error());

    // update: omitted fields keep their values
    let res = api
        .update_job(id, json!({"jobDesc": "report v2", "executorParam": "b=2"}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["jobDesc"], "report v2");
    assert_eq!(res.body["author"], "ops");
    assert_eq!(res.body["scheduleConf"], "0 0/5 * * * ?");
    assert_eq!(
        api.update_job(9999, json!({"jobDesc": "x"})).await.status,
        404
    );

    // delete
    assert_eq!(api.delete_job(id).await.status, 204);
    assert_eq!(api.get_job(id).await.status, 404);
    assert_eq!(api.delete_job(id).await.status, 404);
    let res = api.raw(Method::GET, "/api/v1/jobs/abc", None, vec![]).await;
    assert_eq!(res.status, 400, "{}", res.body);
});

backends!(app: job_validation_errors, |app| {
    let api = &app.api;
    let g = app.group("valid-app").await;
    let cases = [
        (
            with(base_job(g), "scheduleType", json!("CRON")),
            "scheduleConf",
        ),
        (
            with(
                with(base_job(g), "scheduleType", json!("CRON")),
                "scheduleConf",
                json!("0 0 25 * * ?"),
            ),
            "scheduleConf",
        ),
        (
            with(
                with(base_job(g), "scheduleType", json!("FIX_RATE")),
                "scheduleConf",
                json!("0"),
            ),
            "scheduleConf",
        ),
        (
            with(
                with(base_job(g), "scheduleType", json!("FIX_DELAY")),
                "scheduleConf",
                json!("soon"),
            ),
            "scheduleConf",
        ),
        (
            with(base_job(g), "scheduleType", json!("SOMETIMES")),
            "scheduleType",
        ),
        (
            with(base_job(g), "executorRouteStrategy", json!("SOMEWHERE")),
            "executorRouteStrategy",
        ),
        (
            with(base_job(g), "misfireStrategy", json!("PANIC")),
            "misfireStrategy",
        ),
        (
            with(base_job(g), "executorBlockStrategy", json!("WAIT")),
            "executorBlockStrategy",
        ),
        (
            with(base_job(g), "glueType", json!("GLUE_COBOL")),
            "glueType",
        ),
        (
            with(base_job(g), "timezone", json!("Mars/Olympus")),
            "timezone",
        ),
        (
            with(base_job(g), "executorHandler", json!("")),
            "executorHandler",
        ),
        (
            with(base_job(g), "executorTimeout", json!(-1)),
            "executorTimeout",
        ),
        (
            with(base_job(g), "executorFailRetryCount", json!(-1)),
            "executorFailRetryCount",
        ),
        (
            with(base_job(g), "retryIntervalSecs", json!(-5)),
            "retryIntervalSecs",
        ),
        (with(base_job(g), "executorSelector", json!("gpu")), "executorSelector"),
        (with(base_job(g), "executorSelector", json!("region in eu")), "executorSelector"),
        (with(base_job(g), "executorSelector", json!("a=b,,c=d")), "executorSelector"),
        (with(base_job(g), "executorSelector", json!({"gpu": true})), "executorSelector"),
        (with(base_job(g), "executorSelector", json!({"bad key": "x"})), "executorSelector"),
        (with(base_job(g), "executorSelector", json!(["gpu=true"])), "executorSelector"),
        (with(base_job(g), "executorSelector", json!("a=b,".repeat(200))), "executorSelector"),
        (with(base_job(g), "logRetentionDays", json!(-1)), "logRetentionDays"),
        (with(base_job(g), "logRetentionDays", json!(36_501)), "logRetentionDays"),
        (with(base_job(g), "logRetentionRuns", json!(-3)), "logRetentionRuns"),
        (with(base_job(g), "logRetentionRuns", json!(10_000_001)), "logRetentionRuns"),
        (with(base_job(g), "maxConcurrentInstances", json!(-1)), "maxConcurrentInstances"),
        (with(base_job(g), "maxConcurrentInstances", json!(100_001)), "maxConcurrentInstances"),
        (with(base_job(g), "maxConcurrentInstances", json!("one")), "maxConcurrentInstances"),
        (with(base_job(g), "instanceOverflow", json!("DROP")), "instanceOverflow"),
        (with(base_job(g), "instanceOverflow", json!(1)), "instanceOverflow"),
        (with(base_job(g), "instanceQueueMax", json!(0)), "instanceQueueMax"),
        (with(base_job(g), "instanceQueueMax", json!(10_001)), "instanceQueueMax"),
        (with(base_job(g), "instanceQueueTtlSecs", json!(0)), "instanceQueueTtlSecs"),
        (with(base_job(g), "instanceQueueTtlSecs", json!(604_801)), "instanceQueueTtlSecs"),
        (with(base_job(g), "maxQueued", json!(-1)), "maxQueued"),
        (with(base_job(g), "maxQueued", json!(100_001)), "maxQueued"),
        (with(base_job(g), "maxQueued", json!("two")), "maxQueued"),
        (with(base_job(g), "maxQueued", json!(1e12)), "maxQueued"),
        (
            with(
                with(base_job(g), "maxQueued", json!(2)),
                "executorBlockStrategy",
                json!("DISCARD_LATER"),
            ),
            "maxQueued",
        ),
        (with(base_job(g), "jobDesc", json!("")), "jobDesc"),
        (
            with(base_job(g), "alarmEmail", json!("not-an-address")),
            "alarmEmail",
        ),
        (
            with(base_job(g), "alarmWebhook", json!("ftp://x")),
            "alarmWebhook",
        ),
        (
            with(base_job(g), "childJobIds", json!([9999])),
            "childJobIds",
        ),
        (json!({"jobDesc": "x", "executorHandler": "h"}), "jobGroup"),
    ];
    for (body, field) in cases {
        let res = api.create_job(body.clone()).await;
        assert_eq!(res.status, 400, "{body} -> {}", res.body);
        assert_eq!(res.field(), field, "{body} -> {}", res.body);
        assert!(!res.error().is_empty());
    }
    // messages name the problem
    let res = api
        .create_job(with(
            with(base_job(g), "scheduleType", json!("CRON")),
            "scheduleConf",
            json!("0 0 25 * * ?"),
        ))
        .await;
    assert!(res.error().contains("25"), "{}", res.error());
    let res = api
        .create_job(with(
            base_job(g),
            "executorRouteStrategy",
            json!("SOMEWHERE"),
        ))
        .await;
    assert!(res.error().contains("'SOMEWHERE'"), "{}", res.error());
    assert!(
        res.error()
            .contains("allowed: FIRST, LAST, ROUND, RANDOM, CONSISTENT_HASH"),
        "{}",
        res.error()
    );
    let res = api
        .create_job(with(base_job(g), "scheduleType", json!("SOMETIMES")))
        .await;
    assert!(
        res.error().contains("NONE, CRON, FIX_RATE, FIX_DELAY"),
        "{}",
        res.error()
    );

    // a missing group is 404
    let res = api.create_job(base_job(9999)).await;
    assert_eq!(res.status, 404, "{}", res.body);
    assert_eq!(res.field(), "jobGroup");

    // JSON that does not parse, or has wrong types: 400 with serde's message
    let res = api
        .raw(
            Method::POST,
            "/api/v1/jobs",
            Some("application/json"),
            b"{\"jobGroup\": ".to_vec(),
        )
        .await;
    assert_eq!(res.status, 400, "{}", res.body);
    assert!(res.error().contains("JSON"), "{}", res.error());
    let res = api
        .create_job(with(base_job(g), "executorTimeout", json!("abc")))
        .await;
    assert_eq!(res.status, 400);
    assert!(res.error().contains("invalid type"), "{}", res.error());
    let res = api
        .raw(
            Method::POST,
            "/api/v1/jobs",
            Some("text/plain"),
            b"hello".to_vec(),
        )
        .await;
    assert_eq!(res.status, 400, "{}", res.body);
    assert_eq!(
        api.list_jobs("").await.body["total"],
        0,
        "nothing was saved"
    );

    // several bad fields are named in one answer, the first as `field` and `error`
    let mut several = with(base_job(g), "jobDesc", json!(""));
    several = with(several, "executorRouteStrategy", json!("SOMEWHERE"));
    several = with(several, "executorTimeout", json!(-1));
    several = with(several, "timezone", json!("Mars/Olympus"));
    let res = api.create_job(several.clone()).await;
    assert_eq!(res.status, 400, "{}", res.body);
    let fields: Vec<&str> = res.body["errors"]
        .as_array()
        .expect("every problem")
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["executorRouteStrategy", "jobDesc", "timezone", "executorTimeout"]);
    assert_eq!(res.field(), "executorRouteStrategy");
    assert!(res.body["errors"].as_array().unwrap().iter().all(|e| !e["error"].as_str().unwrap().is_empty()));
    assert_eq!(api.list_jobs("").await.body["total"], 0, "nothing was saved");

    // a reader who chose Chinese (its browser, or the console's language cookie) reads every
    // problem in Chinese, the fields as they were; a 404 and a cron error too
    let english = res.body.clone();
    for header in [("Accept-Language", "zh-CN,zh;q=0.9"), ("Cookie", "jobwheel_lang=zh")] {
        let zh = api.call_with(Method::POST, "/api/v1/jobs", Some(several.clone()), &[header]).await;
        assert_eq!(zh.status, 400, "{}", zh.body);
        let problems = zh.body["errors"].as_array().expect("every problem");
        assert_eq!(problems.len(), 4, "{}", zh.body);
        for (en, zh) in english["errors"].as_array().unwrap().iter().zip(problems) {
            assert_eq!(en["field"], zh["field"]);
            let text = zh["error"].as_str().unwrap();
            assert!(text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "not Chinese: {text} (was {})", en["error"]);
        }
        assert_eq!(zh.field(), "executorRouteStrategy");
    }
    let zh = |path: &'static str, body: Value| async move {
        api.call_with(Method::POST, path, Some(body), &[("Accept-Language", "zh-CN")]).await
    };
    let cron = with(base_job(g), "scheduleType", json!("CRON"));
    let cron = zh("/api/v1/jobs", with(cron, "scheduleConf", json!("0 0 25 * * ?"))).await;
    assert_eq!((cron.status, cron.field()), (400, "scheduleConf".to_string()), "{}", cron.body);
    assert!(cron.error().contains("Cron"), "{}", cron.body);
    assert!(cron.error().contains("0 0 25 * * ?"), "the expression is quoted: {}", cron.body);
    let missing = api.call_with(Method::GET, "/api/v1/jobs/987654", None, &[("Accept-Language", "zh-CN")]).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.error(), "任务 987654 不存在");
    assert_eq!(api.request("GET", "/api/v1/jobs/987654", None).await.error(), "job 987654 does not exist");
});

backends!(app: child_jobs_refuse_self_and_cycles, |app| {
    let api = &app.api;
    let g = app.group("chain-app").await;
    let a = app.job(g, "a").await;
    let b = app.job(g, "b").await;
    let c = app.job(g, "c").await;

    let res = api.update_job(a, json!({"childJobIds": [a]})).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "childJobIds");
    assert!(res.error().contains("own child"), "{}", res.error());

    let res = api.update_job(a, json!({"childJobIds": [b]})).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let res = api.update_job(b, json!({"childJobIds": [a]})).await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.error(),
        format!("child jobs form a cycle: {b} → {a} → {b}")
    );

    // a longer loop through other jobs' lists
    let res = api.update_job(b, json!({"childJobIds": [c]})).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let res = api.update_job(c, json!({"childJobIds": [a]})).await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.error(),
        format!("child jobs form a cycle: {c} → {a} → {b} → {c}")
    );

    // a diamond is no cycle
    let res = api.update_job(a, json!({"childJobIds": [b, c]})).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["childJobIds"], json!([b, c]));
});

backends!(app: glue_source_changes_are_versioned, |app| {
    let api = &app.api;
    let g = app.group("glue-app").await;
    let res = api
        .create_job(json!({
            "jobGroup": g, "jobDesc": "script", "glueType": "GLUE_SHELL",
            "glueSource": "echo one", "glueRemark": "first",
        }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let id = res.id();
    let first = res.body["glueUpdatetime"].as_i64().unwrap();
    assert!(first > 0);

    let res = api.update_job(id, json!({"jobDesc": "script job"})).await;
    assert_eq!(
        res.body["glueUpdatetime"].as_i64().unwrap(),
        first,
        "no glue change"
    );
    assert!(app
        .store
        .list_glue_versions(id as i32)
        .await
        .unwrap()
        .is_empty());

    actix_web::rt::time::sleep(std::time::Duration::from_millis(5)).await;
    let res = api
        .update_job(
            id,
            json!({"glueSource": "echo two", "glueRemark": "second"}),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["glueSource"], "echo two");
    assert_eq!(res.body["glueRemark"], "second");
    assert!(res.body["glueUpdatetime"].as_i64().unwrap() > first);
    let versions = app.store.list_glue_versions(id as i32).await.unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].glue_source, "echo two");
});

backends!(app: start_stop_and_fire_times, |app| {
    let api = &app.api;
    let g = app.group("timing-app").await;
    let res = api
        .create_job(json!({
            "jobGroup": g, "jobDesc": "9 am in Shanghai", "executorHandler": "h",
            "scheduleType": "CRON", "scheduleConf": "0 0 9 * * ?", "timezone": "Asia/Shanghai",
        }))
        .await;
    let id = res.id();
    let before = now_ms();
    let res = api.start_job(id).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["triggerStatus"], 1);
    let next = res.body["triggerNextTime"].as_i64().unwrap();
    assert!(next >= before + 5000);
    assert!(next <= before + DAY_MS + 5000);
    assert_eq!(
        next.rem_euclid(DAY_MS),
        3_600_000,
        "09:00 in Shanghai is 01:00 UTC"
    );

    let res = api.next_fire_times(id, "count=3").await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(
        res.body["fireTimes"],
        json!([next, next + DAY_MS, next + 2 * DAY_MS])
    );
    assert_eq!(
        api.next_fire_times(id, "").await.body["fireTimes"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    for bad in ["count=0", "count=101", "count=x"] {
        assert_eq!(api.next_fire_times(id, bad).await.status, 400, "{bad}");
    }

    // an edit that keeps the schedule keeps the next fire time
    let res = api.update_job(id, json!({"jobDesc": "renamed"})).await;
    assert_eq!(res.body["triggerNextTime"], next);
    // a running job with a new schedule fires at its first time after now + 5 s
    let res = api
        .update_job(id, json!({"scheduleConf": "0 30 9 * * ?"}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["triggerStatus"], 1);
    let moved = res.body["triggerNextTime"].as_i64().unwrap();
    assert_eq!(moved.rem_euclid(DAY_MS), 5_400_000);

    let res = api.stop_job(id).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.body["triggerStatus"], 0);
    assert_eq!(res.body["triggerNextTime"], 0);
    assert_eq!(api.start_job(9999).await.status, 404);

    // NONE cannot be started
    let none = app.job(g, "manual only").await;
    let res = api.update_job(none, json!({"scheduleType": "NONE"})).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let res = api.start_job(none).await;
    assert_eq!(res.status, 400);
    assert!(res.error().contains("NONE"), "{}", res.error());

    // a FIX_DELAY job waiting for its run shows no next fire time
    let res = api
        .create_job(json!({
            "jobGroup": g, "jobDesc": "delay", "executorHandler": "h",
            "scheduleType": "FIX_DELAY", "scheduleConf": "3600",
        }))
        .await;
    let delay = res.id();
    let res = api.start_job(delay).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert!(res.body["triggerNextTime"].as_i64().unwrap() >= before + 3_600_000);
    assert!(app
        .store
        .set_next_fire_time(delay as i32, AWAITING_COMPLETION)
        .await
        .unwrap());
    let res = api.get_job(delay).await;
    assert_eq!(res.body["triggerNextTime"], Value::Null);
    assert_eq!(res.body["triggerStatus"], 1);
    api.stop_job(delay).await;
});

backends!(app: schedule_previews, |app| {
    let api = &app.api;
    let res = api
        .preview(json!({
            "scheduleType": "CRON", "scheduleConf": "0 0 9 * * ?",
            "timezone": "Asia/Shanghai", "from": NEW_YEAR_2026, "count": 3,
        }))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let first = NEW_YEAR_2026 + 3_600_000; // 2026-01-01T01:00:00Z = 09:00 in Shanghai
    assert_eq!(
        res.body["fireTimes"],
        json!([first, first + DAY_MS, first + 2 * DAY_MS])
    );

    let res = api
        .preview(json!({"scheduleType": "FIX_RATE", "scheduleConf": "10", "from": NEW_YEAR_2026}))
        .await;
    let times: Vec<i64> = res.body["fireTimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_i64().unwrap())
        .collect();
    assert_eq!(
        times,
        (1..=5)
            .map(|i| NEW_YEAR_2026 + i * 10_000)
            .collect::<Vec<_>>()
    );

    let res = api
        .preview(json!({"scheduleType": "CRON", "scheduleConf": "0 0 9 * *"}))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "scheduleConf");
    let res = api
        .preview(json!({"scheduleType": "HOURLY", "scheduleConf": "1"}))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "scheduleType");
    assert!(res.error().contains("allowed"), "{}", res.error());
    let res = api
        .preview(json!({"scheduleType": "CRON", "scheduleConf": "0 0 9 * * ?", "timezone": "Nowhere/City"}))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "timezone");
    let res = api
        .preview(json!({"scheduleType": "CRON", "scheduleConf": "0 0 9 * * ?", "count": 500}))
        .await;
    assert_eq!(res.status, 400);
    assert_eq!(res.field(), "count");
    let res = api.preview(json!({"scheduleType": "NONE"})).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.body["fireTimes"], json!([]));
});
