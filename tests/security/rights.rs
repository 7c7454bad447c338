//! What a normal user (rights on some groups only) could once reach beyond them: the executors'
//! token through a manual trigger's address list, jobs of other groups through child jobs, and
//! tokens that outlive the token that made them. Each is tried again as that user would.

use std::time::Duration;

use actix_web::http::Method;
use jobwheel::actors::dispatch::{trigger_and_wait, Trigger};
use jobwheel::model::TriggerType;
use serde_json::json;

use crate::kit::{expect_within, Behaviour, FakeExecutor, TestApp};

const WAIT: Duration = Duration::from_secs(20);

/// A fake executor registered in group `app_name`, reporting success.
async fn registered(app: &TestApp, app_name: &str) -> FakeExecutor {
    let exec = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    exec.register(app_name).await;
    exec
}

backends!(app: a_manual_trigger_reaches_only_the_groups_executors, |app| {
    let group = app.group("rights-a").await;
    let exec = registered(app, "rights-a").await;
    let job = app.job(group, "guarded").await;
    let alice = app.normal_user("alice", &[group]).await;
    // the attacker's own listener, and an internal address
    let trap = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    for (who, client) in [("a group user", &alice), ("an administrator", &app.api)] {
        for list in [
            json!([trap.address]),
            json!([exec.address, trap.address]),
            json!(["http://169.254.169.254/latest/"]),
        ] {
            let res = client
                .trigger_job(job, Some(json!({"addressList": list})))
                .await;
            assert_eq!((res.status, res.field()), (400, "addressList".to_string()), "{who}: {}", res.body);
            assert!(res.error().contains("is not an executor of group 'rights-a'"), "{}", res.error());
        }
    }
    assert!(trap.calls("run").is_empty(), "the token never left for the trap");
    assert_eq!(app.api.list_logs(&format!("jobId={job}")).await.body["total"], 0);

    // the group's own executor may be named, with or without its trailing slash
    let own = exec.address.trim_end_matches('/').to_string();
    let res = alice.trigger_job(job, Some(json!({"addressList": [own]}))).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["triggerCodes"], json!([200]));
    assert_eq!(exec.calls("run").len(), 1);

    // below the API too: the engine leaves out what the group does not have
    let mut t = Trigger::new(job as i32, TriggerType::Manual, 0);
    t.address_list = Some(vec![trap.address.clone()]);
    let report = trigger_and_wait(&app.actors.dispatcher, t).await.expect("a report");
    assert_eq!(report.codes, vec![500]);
    let run = app.api.get_log(report.log_ids[0]).await.body;
    let msg = run["triggerMsg"].as_str().unwrap_or_default();
    assert!(msg.contains("is not an executor of this job's group"), "{msg}");
    assert!(trap.calls("run").is_empty());
});

backends!(app: child_jobs_need_rights_on_the_childs_group, |app| {
    let a = app.group("child-a").await;
    let b = app.group("child-b").await;
    let exec = registered(app, "child-a").await;
    let in_a = app.job(a, "in a").await;
    let in_b = app.job(b, "in b").await;
    let alice = app.normal_user("alice", &[a]).await;
    let body = |children: serde_json::Value| {
        json!({"jobGroup": a, "jobDesc": "parent", "scheduleType": "NONE",
            "executorHandler": "demoJobHandler", "childJobIds": children})
    };

    // another group's job and a job that does not exist get the same answer
    let other = alice.create_job(body(json!([in_b]))).await;
    let missing = alice.create_job(body(json!([999_999]))).await;
    for res in [&other, &missing] {
        assert_eq!((res.status, res.field()), (400, "childJobIds".to_string()), "{}", res.body);
    }
    assert_eq!(
        other.error().replace(&in_b.to_string(), "N"),
        missing.error().replace("999999", "N"),
        "the answer tells nothing about which ids exist"
    );
    let parent = alice.create_job(body(json!([in_a]))).await;
    assert_eq!(parent.status, 201, "{}", parent.body);
    let res = alice
        .update_job(parent.id(), json!({"childJobIds": [in_a, in_b]}))
        .await;
    assert_eq!((res.status, res.field()), (400, "childJobIds".to_string()), "{}", res.body);

    // at fire time: bob set a child in b, then lost his rights on b
    let bob = app.normal_user("bob", &[a, b]).await;
    let res = bob.create_job(body(json!([in_a, in_b]))).await;
    assert_eq!(res.status, 201, "{}", res.body);
    let chained = res.id();
    let bob_id = app.store.get_user_by_name("bob").await.unwrap().unwrap().id;
    let res = app
        .api
        .call_with(Method::PUT, &format!("/api/v1/users/{bob_id}"), Some(json!({"permission": [a]})), &[])
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let res = app.api.trigger_job(chained, None).await;
    assert_eq!(res.body["triggerCodes"], json!([200]), "{}", res.body);
    let log = res.body["logIds"][0].as_i64().unwrap();
    // the child in a fires; the one in b does not, and the parent's run says why
    expect_within("the child in group a to reach its executor", WAIT, || async {
        (exec.calls("run").len() == 2).then_some(())
    })
    .await;
    assert_eq!(app.api.list_logs(&format!("jobId={in_a}")).await.body["total"], 1);
    let parent_run = app.api.get_log(log).await.body;
    let msg = parent_run["handleMsg"].as_str().unwrap_or_default();
    assert!(msg.contains(&format!("[Job ID={in_b}], Trigger skipped")), "{msg}");
    assert!(msg.contains("'bob' may not use"), "{msg}");
    assert_eq!(app.api.list_logs(&format!("jobId={in_b}")).await.body["total"], 0);
});

backends!(app: an_api_token_cannot_make_tokens, |app| {
    let created = app
        .api
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "ci"})), &[])
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let script = app.anonymous();
    script.set_bearer(created.body["token"].as_str());
    let res = script
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "heir"})), &[])
        .await;
    assert_eq!(res.status, 403, "{}", res.body);
    assert!(res.error().contains("session"), "{}", res.error());
    let listed = app.api.call_with(Method::GET, "/api/v1/tokens", None, &[]).await;
    assert_eq!(listed.body.as_array().map(Vec::len), Some(1), "{}", listed.body);
    // the token still does what its user may
    assert_eq!(script.list_jobs("").await.status, 200);
});
