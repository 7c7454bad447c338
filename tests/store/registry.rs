//! Executor registrations (`job_registry`).

use jobwheel::model::BeatReport;

backends!(db: registry_upserts_and_expires, |db| {
    let s = &db.store;
    s.upsert_registry("EXECUTOR", "app", "http://b:1/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    s.upsert_registry("EXECUTOR", "app", "http://a:1/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    s.upsert_registry("EXECUTOR", "other", "http://c:1/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    // a heartbeat refreshes the row instead of adding one
    s.upsert_registry("EXECUTOR", "app", "http://b:1/", "v3.5", 5_000, &BeatReport::default())
        .await
        .unwrap();
    let live = s.find_live_registry(0).await.unwrap();
    assert_eq!(live.len(), 3);
    assert_eq!(
        live.iter()
            .map(|r| r.registry_value.as_str())
            .collect::<Vec<_>>(),
        vec!["http://a:1/", "http://b:1/", "http://c:1/"]
    );
    let b = s
        .find_registration("http://b:1/", 0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((b.protocol.as_str(), b.update_time), ("v3.5", 5_000));
    assert!(s
        .find_registration("http://b:1/", 5_000)
        .await
        .unwrap()
        .is_none());

    let app = s.find_live_registry_for("app", 0).await.unwrap();
    assert_eq!(
        app.iter()
            .map(|r| r.registry_value.as_str())
            .collect::<Vec<_>>(),
        vec!["http://a:1/", "http://b:1/"]
    );
    assert_eq!(
        s.find_live_registry_for("app", 2_000).await.unwrap().len(),
        1
    );
    assert!(s
        .find_live_registry_for("none", 0)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(s.find_live_registry(2_000).await.unwrap().len(), 1);
    assert_eq!(s.remove_dead_registry(2_000).await.unwrap(), 2);
    assert_eq!(s.find_live_registry(0).await.unwrap().len(), 1);
    assert!(s
        .remove_registry("EXECUTOR", "app", "http://b:1/")
        .await
        .unwrap());
    assert!(!s
        .remove_registry("EXECUTOR", "app", "http://b:1/")
        .await
        .unwrap());
});

backends!(db: a_beat_keeps_its_load_and_labels_and_the_next_beat_replaces_them, |db| {
    use jobwheel::protocol::{ExecutorLoad, JobLoad};
    let s = &db.store;
    let load = ExecutorLoad {
        running: 4,
        queued: 16,
        limit: 4,
        jobs: vec![JobLoad {
            job_id: 7,
            queued: 3,
            oldest_queued_ms: 1_500,
        }],
    };
    let labels = jobwheel::protocol::Labels::from([("gpu".to_string(), "true".to_string())]);
    let report = BeatReport {
        load: Some(load.clone()),
        labels: labels.clone(),
    };
    s.upsert_registry("EXECUTOR", "app", "http://a:1/", "v2", 1_000, &report)
        .await
        .unwrap();
    let live = s.find_live_registry(0).await.unwrap();
    assert_eq!(live[0].load.as_ref(), Some(&load));
    assert_eq!(live[0].labels, labels);
    // a Java executor's beat (no load) clears what an earlier beat reported
    s.upsert_registry("EXECUTOR", "app", "http://a:1/", "v2", 2_000, &BeatReport::default())
        .await
        .unwrap();
    let live = s.find_live_registry_for("app", 0).await.unwrap();
    assert_eq!((live[0].update_time, live[0].load.as_ref()), (2_000, None));
});

backends!(db: every_routing_write_is_counted_for_the_cached_routing, |db| {
    use jobwheel::model::ExecutorCordon;
    let s = &db.store;
    let mut seen = s.routing_writes();
    let mut moved = |what: &str, now: u64| {
        assert!(now > seen, "{what} was not counted");
        seen = now;
    };
    let report = BeatReport::default();
    s.upsert_registry("EXECUTOR", "app", "http://a:1/", "v2", 1_000, &report)
        .await
        .unwrap();
    moved("a beat", s.routing_writes());
    let mut group = crate::support::group("routed");
    group.id = s.insert_group(&group).await.unwrap();
    moved("a new group", s.routing_writes());
    group.title = "renamed".into();
    s.update_group(&group).await.unwrap();
    moved("a group's change", s.routing_writes());
    s.set_group_addresses(group.id, &["http://a:1/".into()], 2_000)
        .await
        .unwrap();
    moved("a group's addresses", s.routing_writes());
    let cordon = ExecutorCordon {
        address: "http://a:1/".into(),
        since: 1,
        reason: "drain".into(),
        by_user: "ops".into(),
    };
    s.cordon_executor(&cordon).await.unwrap();
    moved("a cordon", s.routing_writes());
    s.uncordon_executor("http://a:1/").await.unwrap();
    moved("a lifted cordon", s.routing_writes());
    s.remove_registry("EXECUTOR", "app", "http://a:1/")
        .await
        .unwrap();
    moved("a removed registration", s.routing_writes());
    s.delete_group(group.id).await.unwrap();
    moved("a deleted group", s.routing_writes());
    // every clone counts on the same count
    s.clone()
        .upsert_registry("EXECUTOR", "app", "http://b:1/", "v2", 1_000, &report)
        .await
        .unwrap();
    moved("a clone's beat", s.routing_writes());
});

backends!(db: app_names_compare_byte_for_byte, |db| {
    let s = &db.store;
    let group = s
        .insert_group(&jobwheel::model::JobGroup {
            id: 0,
            app_name: "pay-exec".into(),
            title: "pay".into(),
            address_type: jobwheel::model::AddressType::Auto,
            address_list: vec![],
            access_token: Some("group-own-token".into()),
            update_time: 0,
            max_concurrent_instances: 0,
            instance_overflow: jobwheel::model::InstanceOverflow::Skip,
        })
        .await
        .unwrap();
    // another spelling is another app: not the group's, not listed as its executor
    s.upsert_registry("EXECUTOR", "PAY-EXEC", "http://attacker:9/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    assert!(s.find_live_registry_for("pay-exec", 0).await.unwrap().is_empty());
    assert!(s.get_group_by_app_name("PAY-EXEC").await.unwrap().is_none());
    assert_eq!(s.get_group_by_app_name("pay-exec").await.unwrap().map(|g| g.id), Some(group));
    // removing under the other spelling leaves the group's own executor registered
    s.upsert_registry("EXECUTOR", "pay-exec", "http://pay:9/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    assert!(!s.remove_registry("EXECUTOR", "PAY-EXEC", "http://pay:9/").await.unwrap());
    assert_eq!(s.find_live_registry_for("pay-exec", 0).await.unwrap().len(), 1);
});
