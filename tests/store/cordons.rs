//! Executors cordoned for a drain (`executor_cordon`).

use jobwheel::model::ExecutorCordon;

backends!(db: cordons_are_kept_once_and_lifted, |db| {
    let s = &db.store;
    let cordon = |address: &str, since: i64| ExecutorCordon {
        address: address.to_string(),
        since,
        reason: "kernel upgrade".to_string(),
        by_user: "admin".to_string(),
    };
    assert!(s.cordon_executor(&cordon("http://b:1/", 2_000)).await.unwrap());
    assert!(s.cordon_executor(&cordon("http://a:1/", 1_000)).await.unwrap());
    // cordoning again keeps the first
    assert!(!s.cordon_executor(&cordon("http://b:1/", 3_000)).await.unwrap());
    let all = s.list_cordons().await.unwrap();
    assert_eq!(all, vec![cordon("http://a:1/", 1_000), cordon("http://b:1/", 2_000)]);
    assert!(s.uncordon_executor("http://a:1/").await.unwrap());
    assert!(!s.uncordon_executor("http://a:1/").await.unwrap());
    assert_eq!(s.list_cordons().await.unwrap(), vec![cordon("http://b:1/", 2_000)]);
    // found by any spelling of its address
    let by_key = s.cordons_by_address_key().await.unwrap();
    let key = jobwheel::model::address_key(" HTTP://B:1 ");
    assert_eq!(by_key.get(&key), Some(&cordon("http://b:1/", 2_000)));
    assert_eq!(by_key.len(), 1);
});
