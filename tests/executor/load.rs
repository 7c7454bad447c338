//! Many triggers: 1,000 over 50 jobs give exactly 1,000 callbacks, each once, in fewer requests.

use std::collections::HashMap;
use std::time::Duration;

use crate::executor_support::*;
use futures_util::future::join_all;

both_targets!(thousand_triggers_over_fifty_jobs);

async fn thousand_triggers_over_fifty_jobs(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let jobs: Vec<Vec<_>> = (0..50)
        .map(|j| {
            (0..20)
                .map(|_| bean(100 + j, "demoJobHandler", "load"))
                .collect()
        })
        .collect();
    let exec_ref = &exec;
    // 50 concurrent senders, one per job, each sending its 20 triggers in order
    join_all(jobs.iter().map(|triggers| async move {
        for p in triggers {
            exec_ref.run_ok(p).await;
        }
    }))
    .await;
    let expected: Vec<i64> = jobs.iter().flatten().map(|p| p.log_id).collect();
    assert_eq!(expected.len(), 1000);
    let done = poll_for(Duration::from_secs(60), || {
        (admin.accepted_callbacks().len() >= 1000).then_some(())
    })
    .await;
    assert!(
        done.is_some(),
        "only {} callbacks",
        admin.accepted_callbacks().len()
    );
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    let callbacks = admin.accepted_callbacks();
    assert_eq!(callbacks.len(), 1000, "exactly one callback per trigger");
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for c in &callbacks {
        assert_eq!(c.handle_code, 200);
        *counts.entry(c.log_id).or_insert(0) += 1;
    }
    for id in &expected {
        assert_eq!(counts.get(id), Some(&1), "log {id}");
    }
    let requests = admin.requests("/api/callback").len();
    assert!(
        requests < 1000,
        "{requests} requests for 1000 results: not batched"
    );
    eprintln!("{target:?}: 1000 results in {requests} callback requests");
}
