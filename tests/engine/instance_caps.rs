//! A job's cluster-wide instance cap (`maxConcurrentInstances`) end to end: three admins on one
//! database fire the same capped job at once; one run at a time reaches the executors, the
//! others wait in the job's queue and run, one after the other, as slots free.

use std::time::Duration;

use crate::engine_support::Engine;
use crate::kit::worker::{Plan, Worker};
use jobwheel::actors::dispatch::{trigger_and_wait, Trigger};
use jobwheel::clock::now_ms;
use jobwheel::model::{
    Admission, InstanceOverflow, RouteStrategy, ScheduleType, TriggerType, TRIGGER_STATUS_RUNNING,
};

backends!(app: three_admins_keep_a_capped_job_to_one_run_at_a_time, |admin| {
    let second = admin.another_admin(None).await;
    let third = admin.another_admin(None).await;
    let admins = [admin.base.as_str(), second.base.as_str(), third.base.as_str()];
    let group = admin.db_group("capped").await;
    // two executors, routed in turn: without the cap two runs would overlap
    let workers = [
        Worker::start_for(&admins, &admin.token, "capped", &["slow"]).await,
        Worker::start_for(&admins, &admin.token, "capped", &["slow"]).await,
    ];
    for w in &workers {
        w.plan("slow", Plan { sleep_ms: 700, ..Plan::default() });
    }
    let job = admin
        .db_job(group, |j| {
            j.executor_handler = "slow".into();
            j.executor_route_strategy = RouteStrategy::Round;
            j.max_concurrent_instances = 1;
            j.instance_overflow = InstanceOverflow::Queue;
            j.instance_queue_max = 10;
        })
        .await;
    admin
        .wait_until("both executors are registered", Duration::from_secs(10), || async {
            admin
                .store
                .find_live_registry_for("capped", 0)
                .await
                .is_ok_and(|r| r.len() == 2)
        })
        .await;

    // five fires at once, through the three admins' dispatchers
    let dispatchers = [
        &admin.actors.dispatcher,
        &second.actors.dispatcher,
        &third.actors.dispatcher,
    ];
    let fires = (0..5).map(|i| {
        trigger_and_wait(dispatchers[i % 3], Trigger::new(job, TriggerType::Manual, 0))
    });
    let reports: Vec<_> = futures_util::future::join_all(fires)
        .await
        .into_iter()
        .map(|r| r.expect("a report"))
        .collect();
    let queued = reports
        .iter()
        .filter(|r| r.admission == Some(Admission::Queued))
        .count();
    assert_eq!(queued, 4, "one ran at once, four queued: {reports:?}");

    admin
        .wait_until("all five runs end", Duration::from_secs(40), || async {
            let rows = admin.logs_of(job).await;
            rows.len() == 5 && rows.iter().all(|r| r.handle_code == 200)
        })
        .await;
    let rows = admin.logs_of(job).await;
    assert!(
        rows.iter().all(|r| r.admission == Admission::Ran),
        "every queued fire ran: {rows:?}"
    );
    let mut runs: Vec<_> = workers.iter().flat_map(|w| w.runs_of("slow")).collect();
    runs.sort_by_key(|r| r.started);
    assert_eq!(runs.len(), 5, "each fire ran once: {runs:?}");
    assert!(
        runs.windows(2).all(|w| w[0].ended <= w[1].started),
        "never two at once, on any executor: {runs:?}"
    );
    let executors: std::collections::HashSet<_> = rows
        .iter()
        .filter_map(|r| r.executor_address.clone())
        .collect();
    assert_eq!(executors.len(), 2, "both executors were used: {rows:?}");
    for w in workers {
        w.stop().await;
    }
});

// the case: a 3 s job fired every second by three admins, cap 1, overflow SKIP
backends!(app: three_admins_never_overlap_a_slow_every_second_job, |admin| {
    let second = admin.another_admin(None).await;
    let third = admin.another_admin(None).await;
    let admins = [admin.base.as_str(), second.base.as_str(), third.base.as_str()];
    let group = admin.db_group("every-second").await;
    let workers = [
        Worker::start_for(&admins, &admin.token, "every-second", &["slow"]).await,
        Worker::start_for(&admins, &admin.token, "every-second", &["slow"]).await,
    ];
    for w in &workers {
        w.plan("slow", Plan { sleep_ms: 3_000, ..Plan::default() });
    }
    admin
        .wait_until("both executors are registered", Duration::from_secs(10), || async {
            admin
                .store
                .find_live_registry_for("every-second", 0)
                .await
                .is_ok_and(|r| r.len() == 2)
        })
        .await;
    let job = admin
        .db_job(group, |j| {
            j.executor_handler = "slow".into();
            j.executor_route_strategy = RouteStrategy::Round;
            j.schedule_type = ScheduleType::Cron;
            j.schedule_conf = "* * * * * ?".into();
            j.trigger_status = TRIGGER_STATUS_RUNNING;
            j.trigger_next_time = (now_ms() / 1_000 + 1) * 1_000;
            j.max_concurrent_instances = 1;
        })
        .await;

    admin
        .wait_until("three runs have ended", Duration::from_secs(40), || async {
            let rows = admin.logs_of(job).await;
            rows.iter().filter(|r| r.handle_code == 200).count() >= 3
        })
        .await;
    assert_eq!(admin.api.stop_job(i64::from(job)).await.status, 200);
    // fires prepared before the stop still go out: until every admitted run has ended
    admin
        .wait_until("every admitted run ends", Duration::from_secs(20), || async {
            let rows = admin.logs_of(job).await;
            rows.iter()
                .filter(|r| r.admission == Admission::Ran)
                .all(|r| r.handle_code != 0)
        })
        .await;

    let rows = admin.logs_of(job).await;
    let ran: Vec<_> = rows.iter().filter(|r| r.admission == Admission::Ran).collect();
    let skipped = rows
        .iter()
        .filter(|r| r.admission == Admission::Skipped)
        .count();
    assert!(
        skipped >= 2 * ran.len() - 2,
        "about two fires in three were skipped: {ran:?} ran, {skipped} skipped"
    );
    assert!(
        rows.iter()
            .all(|r| matches!(r.admission, Admission::Ran | Admission::Skipped)),
        "nothing else under SKIP: {rows:?}"
    );
    let mut runs: Vec<_> = workers.iter().flat_map(|w| w.runs_of("slow")).collect();
    runs.sort_by_key(|r| r.started);
    assert_eq!(runs.len(), ran.len(), "each admitted fire ran once: {runs:?}");
    assert!(
        runs.windows(2).all(|w| w[0].ended <= w[1].started),
        "never two at once, on any executor: {runs:?}"
    );
    for w in workers {
        w.stop().await;
    }
});
