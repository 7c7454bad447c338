//! Executors routing leaves out (`executor_suspect`).

use jobwheel::model::BeatReport;

backends!(db: suspects_are_marked_once_listed_with_their_beat_and_cleared, |db| {
    let s = &db.store;
    s.upsert_registry("EXECUTOR", "app", "http://a:1/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    s.upsert_registry("EXECUTOR", "other", "http://a:1/", "v2", 3_000, &BeatReport::default())
        .await
        .unwrap();
    assert!(s.list_suspects().await.unwrap().is_empty());

    // the first mark stands: a second admin's later mark changes nothing
    assert!(s
        .mark_suspect("http://a:1/", 5_000, "connection refused", "admin-1")
        .await
        .unwrap());
    assert!(!s
        .mark_suspect("http://a:1/", 6_000, "timed out", "admin-2")
        .await
        .unwrap());
    // a manual group's address has no registration; a reason longer than the column is cut
    let long = "é".repeat(2 * jobwheel::model::SUSPECT_REASON_MAX);
    assert!(s
        .mark_suspect("http://b:1/", 7_000, &long, "admin-2")
        .await
        .unwrap());
    let listed = s.list_suspects().await.unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let a = &listed[0];
    assert_eq!(
        (a.address.as_str(), a.since, a.reason.as_str(), a.noted_by.as_str(), a.last_beat),
        ("http://a:1/", 5_000, "connection refused", "admin-1", Some(3_000))
    );
    let b = &listed[1];
    assert_eq!((b.address.as_str(), b.last_beat), ("http://b:1/", None));
    assert_eq!(
        b.reason.chars().count(),
        jobwheel::model::SUSPECT_REASON_MAX
    );

    // an address no registration or list could hold is not stored
    let too_long = format!("http://h/{}", "a".repeat(300));
    assert!(!s.mark_suspect(&too_long, 1, "x", "n").await.unwrap());

    // clearing the mark made at another time leaves it; clearing it or any mark removes it
    assert!(!s.clear_suspect("http://a:1/", Some(4_000)).await.unwrap());
    assert!(s.clear_suspect("http://a:1/", Some(5_000)).await.unwrap());
    assert!(s.clear_suspect("http://b:1/", None).await.unwrap());
    assert!(!s.clear_suspect("http://b:1/", None).await.unwrap());
    assert!(s.list_suspects().await.unwrap().is_empty());
});
