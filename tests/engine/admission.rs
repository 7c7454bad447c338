//! A job's bounded SERIAL queue (`maxQueued`) end to end: the admin sends the bound, a jobwheel
//! executor refuses the trigger beyond it, and the refusal is the run row's trigger result.

use std::time::Duration;

use crate::engine_support::Engine;
use crate::kit::worker::{Plan, Worker};
use jobwheel::model::{GlueType, RouteStrategy};

backends!(app: a_bounded_serial_queue_refuses_the_trigger_beyond_it, |admin| {
    let group = admin.db_group("bounded").await;
    let worker = Worker::start(admin, "bounded", &["slow"]).await;
    worker.plan("slow", Plan { sleep_ms: 2_000, ..Plan::default() });
    let job = admin
        .db_job(group, |j| {
            j.glue_type = GlueType::Bean;
            j.executor_handler = "slow".into();
            j.executor_route_strategy = RouteStrategy::First;
            j.max_queued = 2;
        })
        .await;
    admin
        .wait_until("the executor is listed", Duration::from_secs(10), || async {
            admin
                .store
                .get_group(group)
                .await
                .ok()
                .flatten()
                .is_some_and(|g| !g.address_list.is_empty())
        })
        .await;

    // one runs, two wait behind it, the fourth finds the queue full
    let mut log_ids = Vec::new();
    for _ in 0..4 {
        log_ids.extend(admin.manual(job).await);
    }
    let rows = admin.logs_of(job).await;
    assert_eq!(rows.len(), 4, "{rows:?}");
    let refused = rows.iter().find(|r| r.id == log_ids[3]).expect("fourth row");
    assert_eq!(refused.trigger_code, 500, "{refused:?}");
    let msg = refused.trigger_msg.clone().unwrap_or_default();
    assert!(msg.contains("queue full: 2 waiting"), "{msg}");

    // the three accepted run, one after the other
    admin
        .wait_until("the three accepted runs end", Duration::from_secs(20), || async {
            let rows = admin.logs_of(job).await;
            log_ids[..3]
                .iter()
                .all(|id| rows.iter().any(|r| r.id == *id && r.handle_code == 200))
        })
        .await;
    let runs = worker.runs_of("slow");
    let ran: Vec<i64> = runs.iter().map(|r| r.log_id).collect();
    assert_eq!(ran, log_ids[..3].to_vec(), "only the accepted ran, in order");
    assert!(
        runs.windows(2).all(|w| w[0].ended <= w[1].started),
        "SERIAL: {runs:?}"
    );
    worker.stop().await;
});
