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
