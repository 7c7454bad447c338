//! What executors send back must not cost the admin a run's outcome: a NUL in an answer (which
//! PostgreSQL refuses) once lost a whole batch of outcomes, and a callback item of the wrong type
//! once had the whole batch refused.

use serde_json::json;

use crate::kit::{Behaviour, FakeExecutor, TestApp};

/// A fake executor registered in `app_name` that leaves its runs without a result.
async fn registered(app: &TestApp, app_name: &str, behaviour: Behaviour) -> FakeExecutor {
    let exec = FakeExecutor::start(&app.base, &app.token, behaviour);
    exec.register(app_name).await;
    exec
}

backends!(app: an_executor_answer_holding_a_nul_loses_no_outcome, |app| {
    let group = app.group("nul-answer").await;
    let good = registered(app, "nul-answer", Behaviour::without_results()).await;
    let odd = registered(
        app,
        "nul-answer",
        Behaviour {
            run_msg: Some("accepted\u{0}by me".into()),
            ..Behaviour::without_results()
        },
    )
    .await;
    let res = app
        .api
        .create_job(json!({"jobGroup": group, "jobDesc": "broadcast", "scheduleType": "NONE",
            "executorHandler": "demoJobHandler", "executorRouteStrategy": "SHARDING_BROADCAST"}))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let broadcast = res.id();

    // one good and one NUL-answering shard: both outcomes are stored
    let res = app.api.trigger_job(broadcast, None).await;
    assert_eq!(res.body["triggerCodes"], json!([200, 200]), "{}", res.body);
    let mut msgs = Vec::new();
    for id in res.body["logIds"].as_array().unwrap() {
        let run = app.api.get_log(id.as_i64().unwrap()).await.body;
        assert_eq!(run["triggerCode"], 200, "{run}");
        msgs.push(run["triggerMsg"].as_str().unwrap_or_default().to_string());
    }
    assert!(msgs.iter().any(|m| m.contains("accepted\u{FFFD}by me")), "{msgs:?}");
    assert!(msgs.iter().all(|m| !m.contains('\u{0}')));
    assert_eq!(good.calls("run").len() + odd.calls("run").len(), 2);

    // a refusal holding a NUL is stored as a failed trigger, with the executor's words
    odd.set(|b| {
        b.run_code = 500;
        b.run_msg = Some("no\u{0}way".into());
    });
    let job = app.job(group, "single").await;
    let res = app
        .api
        .trigger_job(job, Some(json!({"addressList": [odd.address]})))
        .await;
    assert_eq!(res.body["triggerCodes"], json!([500]), "{}", res.body);
    let run = app.api.get_log(res.body["logIds"][0].as_i64().unwrap()).await.body;
    assert_eq!(run["triggerCode"], 500);
    assert!(run["triggerMsg"].as_str().unwrap_or_default().contains("no\u{FFFD}way"), "{run}");
});

backends!(app: a_callback_with_one_item_of_the_wrong_type_keeps_the_others, |app| {
    let group = app.group("typed-results").await;
    registered(app, "typed-results", Behaviour::without_results()).await;
    let job = app.job(group, "typed").await;
    let mut logs = Vec::new();
    for _ in 0..3 {
        let res = app.api.trigger_job(job, None).await;
        logs.push(res.body["logIds"][0].as_i64().unwrap());
    }
    let (fine, wrong, nameless) = (logs[0], logs[1], logs[2]);
    let batch = json!([
        {"logId": fine, "logDateTim": 0, "handleCode": 200, "handleMsg": "fine"},
        {"logId": wrong, "logDateTim": 0, "handleCode": "oops"},
        {"logId": [nameless], "handleCode": 200},
    ]);
    let res = app.executor_post("/api/callback", batch.clone(), Some(&app.token)).await;
    assert_eq!(res["code"], 500, "the executor is told: {res}");
    let msg = res["msg"].as_str().unwrap_or_default();
    assert!(msg.contains(&format!("logId {wrong}")) && msg.contains("callback item 2"), "{msg}");
    assert!(msg.contains("1 other result(s) stored"), "{msg}");

    let stored = app.api.get_log(fine).await.body;
    assert_eq!((&stored["handleCode"], &stored["handleMsg"]), (&json!(200), &json!("fine")));
    // the item that names its run closes that run as failed, saying why
    let closed = app.api.get_log(wrong).await.body;
    assert_eq!(closed["handleCode"], 500);
    let why = closed["handleMsg"].as_str().unwrap_or_default();
    assert!(why.contains("result refused by the admin") && why.contains("oops"), "{why}");
    // one that names none cannot be placed, and changes nothing
    assert_eq!(app.api.get_log(nameless).await.body["handleCode"], 0);

    // the batch sent again stores nothing twice
    app.executor_post("/api/callback", batch, Some(&app.token)).await;
    assert_eq!(app.api.get_log(fine).await.body["handleMsg"], "fine");
    assert_eq!(app.api.get_log(wrong).await.body["handleMsg"], closed["handleMsg"]);
});
