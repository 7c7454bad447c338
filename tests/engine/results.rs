//! What comes back: results stored once, child jobs after their parent, the executor-facing
//! API's checks, registrations, and two admins firing each time once.

use jobwheel::model::BeatReport;

use std::collections::HashSet;
use std::time::Duration;

use crate::engine_support::Engine;
use crate::kit::{Behaviour, FakeExecutor};
use jobwheel::clock::now_ms;
use jobwheel::model::{AddressType, JobGroup, TriggerType};
use serde_json::{json, Value};

use crate::scheduling::fire_every_second;

backends!(app: results_are_stored_once_and_unknown_logs_ignored, |admin| {
    let exec = FakeExecutor::start(
        &admin.base,
        &admin.token,
        Behaviour::without_results(),
    );
    exec.register("results").await;
    let group = admin.db_group("results").await;
    let job = admin.db_job(group, |_| {}).await;
    let log_id = admin.manual(job).await[0];
    let body =
        json!([{"logId": log_id, "logDateTim": now_ms(), "handleCode": 200, "handleMsg": "first"}]);
    assert_eq!(admin.post("/api/callback", body.clone()).await["code"], 200);
    let late = json!({"callbackList": [{"logId": log_id, "logDateTime": now_ms(), "handleCode": 500, "handleMsg": "second"}]});
    assert_eq!(
        admin.post("/xxl-job-admin/api/callback", late).await["code"],
        200
    );
    let log = admin.store.get_log(log_id).await.unwrap().unwrap();
    assert_eq!(
        (log.handle_code, log.handle_msg.as_deref()),
        (200, Some("first"))
    );
    let unknown = json!([{"logId": 987_654_321, "logDateTim": now_ms(), "handleCode": 200}]);
    assert_eq!(admin.post("/api/callback", unknown).await["code"], 200);
    assert_eq!(
        admin.post("/api/callback", json!("garbage")).await["code"],
        500
    );
});

backends!(app: a_child_job_fires_only_after_its_parent_succeeds, |admin| {
    let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    exec.register("family").await;
    let group = admin.db_group("family").await;
    let child = admin
        .db_job(group, |j| j.executor_handler = "child".into())
        .await;
    let parent = admin.db_job(group, |j| j.child_job_ids = vec![child]).await;
    admin.manual(parent).await;
    admin
        .wait_until("the child to fire", Duration::from_secs(10), || async {
            !admin.logs_of(child).await.is_empty()
        })
        .await;
    let child_logs = admin.logs_of(child).await;
    assert_eq!(child_logs[0].trigger_type, TriggerType::Parent);
    let parent_log = &admin.logs_of(parent).await[0];
    assert_eq!(parent_log.handle_code, 200);
    assert!(child_logs[0].trigger_time >= parent_log.handle_time);

    // a failing parent triggers nothing
    exec.set(|b| b.result = Some(500));
    let before = admin.logs_of(child).await.len();
    let failing = admin.db_job(group, |j| j.child_job_ids = vec![child]).await;
    admin.manual(failing).await;
    admin
        .wait_until("the parent's failure", Duration::from_secs(10), || async {
            admin.logs_of(failing).await[0].handle_code == 500
        })
        .await;
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(admin.logs_of(child).await.len(), before);
});

backends!(app: executor_api_checks_method_token_and_body, |b| b.token("s3cret"), |admin| {
        let body = json!({"registryGroup": "EXECUTOR", "registryKey": "tok", "registryValue": "http://127.0.0.1:1/"});
        let wrong = admin
            .executor_post("/api/registry", body.clone(), Some("nope"))
            .await;
        assert_eq!(
            wrong,
            json!({"code": 500, "msg": "The access token is wrong."})
        );
        let missing = admin.executor_post("/api/registry", body.clone(), None).await;
        assert_eq!(missing["msg"], "The access token is wrong.");
        let ok = admin
            .executor_post("/xxl-job-admin/api/registry", body.clone(), Some("s3cret"))
            .await;
        assert_eq!(ok["code"], 200);
        let live = admin
            .store
            .find_live_registry_for("tok", 0)
            .await
            .unwrap();
        assert_eq!(live.len(), 1);
        let blank = json!({"registryGroup": "EXECUTOR", "registryKey": "", "registryValue": "x"});
        assert_eq!(
            admin.executor_post("/api/registry", blank, Some("s3cret")).await["msg"],
            "Illegal Argument."
        );
        let mut res = awc::Client::default()
            .get(format!("{}/api/registry", admin.base))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let v: Value = res.json().await.unwrap();
        assert_eq!(v["msg"], "invalid request, HttpMethod not support.");
        assert_eq!(
            admin
                .executor_post("/api/registryRemove", body, Some("s3cret"))
                .await["code"],
            200
        );
        assert!(admin
            .store
            .find_live_registry_for("tok", 0)
            .await
            .unwrap()
            .is_empty());
    }
);

backends!(app: two_admins_on_one_database_fire_each_time_once, |admin| {
    let _second = admin.another_admin(None).await.base;
    let (_exec, first, jobs) = fire_every_second(admin, "cluster", 10, 6_500).await;
    for job in &jobs {
        let logs = admin.logs_of(*job).await;
        let mut seen = HashSet::new();
        for log in &logs {
            assert!(
                seen.insert(log.schedule_time),
                "job {job} fired twice at {}",
                log.schedule_time
            );
        }
        for second in (0..6).map(|i| first + i * 1_000) {
            assert!(seen.contains(&second), "job {job} missed {second}");
        }
    }
});

backends!(app: registry_monitor_drops_dead_executors_and_sorts_auto_lists, |admin| {
        let store = &admin.store;
        let auto = admin.db_group("monitored").await;
        let manual = store
            .insert_group(&JobGroup {
                id: 0,
                app_name: "handmade".into(),
                title: "handmade".into(),
                address_type: AddressType::Manual,
                address_list: vec!["http://z:1/".into(), "http://a:1/".into()],
                access_token: None,
                update_time: now_ms(),
                max_concurrent_instances: 0,
                instance_overflow: jobwheel::model::InstanceOverflow::Skip,
            })
            .await
            .unwrap();
        let now = now_ms();
        store
            .upsert_registry("EXECUTOR", "monitored", "http://c:1/", "v2", now, &BeatReport::default())
            .await
            .unwrap();
        store
            .upsert_registry("EXECUTOR", "monitored", "http://b:1/", "v2", now, &BeatReport::default())
            .await
            .unwrap();
        store
            .upsert_registry(
                "EXECUTOR",
                "monitored",
                "http://dead:1/",
                "v2",
                now - 91_000, &BeatReport::default())
            .await
            .unwrap();
        store
            .upsert_registry("EXECUTOR", "handmade", "http://x:1/", "v2", now, &BeatReport::default())
            .await
            .unwrap();
        admin
            .actors
            .registry
            .send(jobwheel::actors::registry::RefreshGroups)
            .await
            .unwrap()
            .unwrap();
        let g = store.get_group(auto).await.unwrap().unwrap();
        assert_eq!(g.address_list, vec!["http://b:1/", "http://c:1/"]);
        let m = store.get_group(manual).await.unwrap().unwrap();
        assert_eq!(
            m.address_list,
            vec!["http://z:1/", "http://a:1/"],
            "manual lists are kept"
        );
        assert!(
            store
                .find_registration("http://dead:1/", 0)
                .await
                .unwrap()
                .is_none(),
            "dead entry removed"
        );

        // a new executor is listed at once, and a leaving one removed at once
        let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        exec.register("monitored").await;
        let g = store.get_group(auto).await.unwrap().unwrap();
        assert!(
            g.address_list.contains(&exec.address),
            "{:?}",
            g.address_list
        );
        let body = json!({"registryGroup": "EXECUTOR", "registryKey": "monitored", "registryValue": exec.address});
        assert_eq!(admin.post("/api/registryRemove", body).await["code"], 200);
        let g = store.get_group(auto).await.unwrap().unwrap();
        assert_eq!(g.address_list, vec!["http://b:1/", "http://c:1/"]);
    }
);
