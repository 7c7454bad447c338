//! Executor groups (`job_group`), and the migrations every test starts from.

use jobwheel::model::{AddressType, JobGroup};
use jobwheel::store::StoreError;

use crate::support::*;

backends!(db: migrations_are_idempotent_and_ping_answers, |db| {
    db.store.migrate().await.unwrap();
    db.store.migrate().await.unwrap();
    db.store.ping().await.unwrap();
    assert_eq!(db.store.count_jobs().await.unwrap(), 0);
});

backends!(db: groups_round_trip, |db| {
    let s = &db.store;
    let mut g = group("app-one");
    g.address_type = AddressType::Manual;
    g.address_list = vec!["http://b:1/".into(), "http://a:1/".into()];
    g.access_token = Some("tok".into());
    let id = s.insert_group(&g).await.unwrap();
    let got = s.get_group(id).await.unwrap().unwrap();
    assert_eq!(got.app_name, "app-one");
    assert_eq!(got.address_type, AddressType::Manual);
    assert_eq!(got.address_list, vec!["http://b:1/", "http://a:1/"]);
    assert_eq!(got.access_token.as_deref(), Some("tok"));

    let by_name = s.get_group_by_app_name("app-one").await.unwrap().unwrap();
    assert_eq!(by_name.id, id);
    assert!(s.get_group_by_app_name("nope").await.unwrap().is_none());

    let mut changed = got.clone();
    changed.title = "renamed".into();
    changed.address_list = vec![];
    assert!(s.update_group(&changed).await.unwrap());
    let got = s.get_group(id).await.unwrap().unwrap();
    assert_eq!(got.title, "renamed");
    assert!(got.address_list.is_empty());

    assert!(s
        .set_group_addresses(id, &["http://x:1/".into()], 5_000)
        .await
        .unwrap());
    let got = s.get_group(id).await.unwrap().unwrap();
    assert_eq!(got.address_list, vec!["http://x:1/"]);
    assert_eq!(got.update_time, 5_000);

    new_group(s, "app-zero").await;
    let names: Vec<String> = s
        .list_groups()
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.app_name)
        .collect();
    assert_eq!(names, vec!["app-one", "app-zero"]);

    assert!(s.delete_group(id).await.unwrap());
    assert!(!s.delete_group(id).await.unwrap());
    assert!(s.get_group(id).await.unwrap().is_none());
    let missing = JobGroup {
        id: 9999,
        ..group("ghost")
    };
    assert!(!s.update_group(&missing).await.unwrap());
});

backends!(db: duplicate_app_names_are_refused, |db| {
    let s = &db.store;
    new_group(s, "dup").await;
    match s.insert_group(&group("dup")).await {
        Err(StoreError::Duplicate(what)) => assert!(what.contains("dup"), "{what}"),
        other => panic!("expected a duplicate error, got {other:?}"),
    }
    let other = new_group(s, "other").await;
    let mut renamed = s.get_group(other).await.unwrap().unwrap();
    renamed.app_name = "dup".into();
    assert!(matches!(
        s.update_group(&renamed).await,
        Err(StoreError::Duplicate(_))
    ));
});
