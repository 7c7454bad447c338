//! Admission (`run_slot`, `run_queue`, `admission_lock`): instance caps that hold when several
//! admins admit at once, and each overflow policy.

use jobwheel::model::{alarm_status, Admission, InstanceOverflow, JobGroup, JobInfo, NewRunRow};
use jobwheel::store::{Admitted, InstanceCaps, PoolSettings, Store};

use super::support::{group, job};
use crate::kit::db::manual_log;

const NOW: i64 = 1_700_000_000_000;

async fn limited_job(s: &Store, cap: i32, overflow: InstanceOverflow) -> (JobGroup, JobInfo) {
    let mut g = group("admission-app");
    g.id = s.insert_group(&g).await.unwrap();
    let mut j = job(g.id, "capped");
    j.max_concurrent_instances = cap;
    j.instance_overflow = overflow;
    j.instance_queue_max = 2;
    j.instance_queue_ttl_secs = 60;
    j.id = s.insert_job(&j).await.unwrap();
    (g, j)
}

fn caps(g: &JobGroup, j: &JobInfo) -> InstanceCaps {
    InstanceCaps::of(j, Some(g)).expect("a capped job has caps")
}

fn row(j: &JobInfo) -> Vec<NewRunRow> {
    let mut r = manual_log(j.job_group, j.id, NOW);
    r.trigger_msg = Some("head<br>".into());
    r.executor_fail_retry_count = 3;
    vec![r]
}

fn ran(a: &Admitted) -> Option<i64> {
    match a {
        Admitted::Ran { ids, .. } => ids.first().copied(),
        Admitted::NotRun { .. } => None,
    }
}

fn not_run(a: &Admitted) -> (Admission, i64, String) {
    match a {
        Admitted::NotRun {
            admission,
            ids,
            why,
        } => (*admission, ids[0], why.clone()),
        Admitted::Ran { .. } => panic!("expected a fire not run, got {a:?}"),
    }
}

/// Stores on the same database, as other admins would hold.
async fn other_admins(url: &str, n: usize) -> Vec<Store> {
    let settings = PoolSettings {
        max_connections: 4,
        ..PoolSettings::default()
    };
    let mut stores = Vec::new();
    for _ in 0..n {
        stores.push(Store::connect(url, &settings).await.unwrap());
    }
    stores
}

backends!(db: a_cap_holds_when_three_admins_admit_at_once, |db| {
    let s = &db.store;
    let (g, j) = limited_job(s, 2, InstanceOverflow::Skip).await;
    let c = caps(&g, &j);
    let mut admins = other_admins(&db.url, 2).await;
    admins.push(s.clone());
    let mut tasks = Vec::new();
    for i in 0..30 {
        let store = admins[i % 3].clone();
        let (rows, c) = (row(&j), c.clone());
        tasks.push(tokio::spawn(async move { store.admit(&rows, &c, NOW).await }));
    }
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.unwrap().unwrap());
    }
    let running: Vec<i64> = outcomes.iter().filter_map(ran).collect();
    assert_eq!(running.len(), 2, "exactly the cap ran: {outcomes:?}");
    for o in outcomes.iter().filter(|o| ran(o).is_none()) {
        let (admission, id, why) = not_run(o);
        assert_eq!(admission, Admission::Skipped);
        assert!(why.contains("2 of 2 instances open"), "{why}");
        let stored = s.get_log(id).await.unwrap().unwrap();
        assert_eq!(
            (stored.admission, stored.trigger_code, stored.alarm_status),
            (Admission::Skipped, 500, alarm_status::NOT_NEEDED),
            "a skipped fire is recorded, with no alarm"
        );
        assert_eq!(stored.executor_fail_retry_count, 0, "and no retry");
        assert!(stored.trigger_msg.unwrap().starts_with("head<br>admission：SKIPPED"));
    }
    assert_eq!(s.instance_counts(j.id).await.unwrap().open, 2);
    // a run that ends frees its slot at once
    assert!(s.complete_log(running[0], 200, None, NOW + 5).await.unwrap());
    assert_eq!(s.instance_counts(j.id).await.unwrap().open, 1);
    let next = s.admit(&row(&j), &c, NOW + 6).await.unwrap();
    let next_id = ran(&next).expect("a slot was free");
    assert_eq!(s.get_log(next_id).await.unwrap().unwrap().admission, Admission::Ran);
    // the sweep deletes only the slots of closed runs
    assert_eq!(s.sweep_slots().await.unwrap(), 1);
    assert_eq!(s.sweep_slots().await.unwrap(), 0);
    assert_eq!(s.instance_counts(j.id).await.unwrap().open, 2);
    for a in &admins[..2] {
        a.close().await;
    }
});

backends!(db: queued_fires_wait_for_a_slot_within_their_bound_and_time, |db| {
    let s = &db.store;
    let (g, j) = limited_job(s, 1, InstanceOverflow::Queue).await;
    let c = caps(&g, &j);
    let first = ran(&s.admit(&row(&j), &c, NOW).await.unwrap()).expect("first runs");
    let (a1, q1, _) = not_run(&s.admit(&row(&j), &c, NOW + 1).await.unwrap());
    let (a2, q2, _) = not_run(&s.admit(&row(&j), &c, NOW + 2).await.unwrap());
    assert_eq!((a1, a2), (Admission::Queued, Admission::Queued));
    let (a3, refused, why) = not_run(&s.admit(&row(&j), &c, NOW + 3).await.unwrap());
    assert_eq!(a3, Admission::Refused, "the queue holds 2");
    assert!(why.contains("instanceQueueMax 2"), "{why}");
    let stored = s.get_log(refused).await.unwrap().unwrap();
    assert_eq!(
        (stored.trigger_code, stored.alarm_status, stored.executor_fail_retry_count),
        (500, alarm_status::DEFAULT, 0),
        "a refusal alarms, and is not retried"
    );
    let queued = s.get_log(q1).await.unwrap().unwrap();
    assert_eq!(
        (queued.admission, queued.trigger_code, queued.alarm_status),
        (Admission::Queued, 0, alarm_status::QUEUED),
        "a queued row waits unseen by the monitors"
    );
    assert_eq!(
        s.instance_counts(j.id).await.unwrap().queued,
        2,
        "both wait"
    );

    // the slot is taken: nothing leaves the queue
    let (fires, expired) = s.take_queued(NOW + 10).await.unwrap();
    assert!(fires.is_empty() && expired.is_empty(), "{fires:?} {expired:?}");
    // the run ends: the oldest queued fire takes its slot, once, on one admin
    assert!(s.complete_log(first, 200, None, NOW + 20).await.unwrap());
    let other = other_admins(&db.url, 1).await.remove(0);
    let (a, b) = tokio::join!(s.take_queued(NOW + 30), other.take_queued(NOW + 30));
    let (mut fires, _) = a.unwrap();
    fires.extend(b.unwrap().0);
    assert_eq!(fires.len(), 1, "one slot, one fire: {fires:?}");
    assert_eq!(fires[0].log_id, q1, "oldest first");
    assert_eq!(fires[0].trigger_time, NOW + 30, "sent now");
    assert_eq!(fires[0].fail_retry_count, 3);
    let sent = s.get_log(q1).await.unwrap().unwrap();
    assert_eq!(
        (sent.admission, sent.alarm_status, sent.trigger_time),
        (Admission::Ran, alarm_status::DEFAULT, NOW + 30)
    );
    assert_eq!(s.instance_counts(j.id).await.unwrap().open, 1);

    // the second waits past its time to live (60 s from NOW + 2): skipped, not run
    let (fires, expired) = s.take_queued(NOW + 2 + 60_000).await.unwrap();
    assert!(fires.is_empty());
    assert_eq!(expired, vec![q2]);
    let gone = s.get_log(q2).await.unwrap().unwrap();
    assert_eq!(
        (gone.admission, gone.trigger_code, gone.alarm_status),
        (Admission::Skipped, 500, alarm_status::NOT_NEEDED)
    );
    assert!(gone.trigger_msg.unwrap().contains("time to live"));
    assert_eq!(s.instance_counts(j.id).await.unwrap().queued, 0);
    other.close().await;
});

backends!(db: replace_closes_the_oldest_and_allow_only_counts, |db| {
    let s = &db.store;
    let (g, mut j) = limited_job(s, 1, InstanceOverflow::Replace).await;
    let c = caps(&g, &j);
    let old = ran(&s.admit(&row(&j), &c, NOW).await.unwrap()).unwrap();
    let admitted = s.admit(&row(&j), &c, NOW + 1).await.unwrap();
    let Admitted::Ran { ids, replaced } = admitted else {
        panic!("REPLACE runs the new fire: {admitted:?}");
    };
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced[0].log_id, old);
    let closed = s.get_log(old).await.unwrap().unwrap();
    assert_eq!(
        (closed.handle_code, closed.alarm_status),
        (500, alarm_status::NOT_NEEDED)
    );
    assert!(
        closed.handle_msg.unwrap().contains(&format!("run {}", ids[0])),
        "names what replaced it"
    );
    assert_eq!(s.instance_counts(j.id).await.unwrap().open, 1);

    j.instance_overflow = InstanceOverflow::Allow;
    let c = caps(&g, &j);
    assert!(ran(&s.admit(&row(&j), &c, NOW + 2).await.unwrap()).is_some());
    assert_eq!(
        s.instance_counts(j.id).await.unwrap().open,
        2,
        "ALLOW runs beyond the cap, and counts"
    );
});

backends!(db: a_group_cap_holds_across_its_jobs, |db| {
    let s = &db.store;
    let mut g = group("capped-group");
    g.max_concurrent_instances = 1;
    g.id = s.insert_group(&g).await.unwrap();
    assert_eq!(
        s.get_group(g.id).await.unwrap().unwrap().max_concurrent_instances,
        1
    );
    let mut jobs = Vec::new();
    for name in ["a", "b"] {
        let mut j = job(g.id, name);
        j.id = s.insert_job(&j).await.unwrap();
        jobs.push(j);
    }
    assert!(InstanceCaps::of(&jobs[0], None).is_none(), "no cap, no admission");
    let first = s
        .admit(&row(&jobs[0]), &caps(&g, &jobs[0]), NOW)
        .await
        .unwrap();
    assert!(ran(&first).is_some());
    let (admission, _, why) = not_run(
        &s.admit(&row(&jobs[1]), &caps(&g, &jobs[1]), NOW + 1)
            .await
            .unwrap(),
    );
    assert_eq!(admission, Admission::Skipped);
    assert!(why.contains(&format!("group {} has 1 of 1", g.id)), "{why}");
});
