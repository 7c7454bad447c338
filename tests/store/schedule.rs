//! The pre-read transaction: shares, locks, and each fire time claimed once.

use std::time::Duration;

use jobwheel::model::{DueJob, TriggerType, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED};
use jobwheel::store::{Backend, ClaimKey, ScheduleUpdate, Share};

use crate::support::*;

backends!(db: an_admin_reads_its_share_of_the_jobs_and_the_strays, |db| {
    let s = &db.store;
    let g = new_group(s, "share").await;
    // the first is long overdue: a stray every admin reads
    let ids = running_jobs(s, g, [1_000, 8_000, 8_000, 8_000, 8_000, 8_000]).await;
    let mut tx = s.begin_schedule().await.unwrap();
    let mut seen = std::collections::HashMap::<i32, usize>::new();
    for index in 0..3 {
        let share = Share { index, of: 3 };
        let due = tx.due_jobs(10_000, 100, Some((share, 2_000))).await.unwrap();
        for j in &due {
            let stray = j.id == ids[0];
            assert!(
                stray || j.id % 3 == index as i32,
                "job {} read by share {index}",
                j.id
            );
            *seen.entry(j.id).or_default() += 1;
        }
    }
    tx.commit().await.unwrap();
    for id in &ids[1..] {
        assert_eq!(seen.get(id), Some(&1), "job {id} is in exactly one share");
    }
    assert_eq!(seen.get(&ids[0]), Some(&3), "a stray is read by every share");
});

backends!(db: shared_passes_skip_each_others_rows_and_wait_for_none, |db| {
    let s = &db.store;
    let g = new_group(s, "shared").await;
    // all long overdue: strays that every share reads
    let ids = running_jobs(s, g, [1_000; 4]).await;
    let share = |index| Some((Share { index, of: 2 }, 2_000));
    let mut first = s.begin_shared_schedule().await.unwrap();
    let held = first.due_jobs(10_000, 2, share(0)).await.unwrap();
    assert_eq!(held.len(), 2);
    // a second admin's pass, while the first is open: on a server database it neither waits
    // nor reads what the first holds; SQLite's one writer makes it wait, so it is not opened
    if s.backend() != Backend::Sqlite {
        let second = async {
            let mut tx = s.begin_shared_schedule().await.unwrap();
            let rest = tx.due_jobs(10_000, 100, share(1)).await.unwrap();
            let updates = next_fire_at(&rest, 20_000);
            assert!(tx.claim_all(&updates).await.unwrap().iter().all(|ok| *ok));
            tx.commit().await.unwrap();
            rest
        };
        let rest = tokio::time::timeout(Duration::from_secs(10), second)
            .await
            .expect("a shared pass does not wait for another");
        let rest: Vec<i32> = rest.iter().map(|j| j.id).collect();
        assert_eq!(rest.len(), 2, "the rows the first pass holds are skipped");
        assert!(held.iter().all(|j| !rest.contains(&j.id)));
    }
    first.commit().await.unwrap();
    // the cluster lock is taken only to take over: nothing to take over here
    s.beat_node("me", "http://a:1", 0, 50_000).await.unwrap();
    assert!(!s.has_orphans("me", 40_000).await.unwrap());
    s.beat_node("gone", "http://b:1", 0, 1_000).await.unwrap();
    assert!(s.has_orphans("me", 40_000).await.unwrap(), "an admin stopped beating");
    assert!(!s.has_orphans("me", 500).await.unwrap(), "not dead yet at that bound");
    let mut tx = s.begin_schedule().await.unwrap();
    let claim = ClaimKey { job_id: ids[0], fire_time: 30_000 };
    tx.insert_claims("leaving", &[(claim, TriggerType::Cron)]).await.unwrap();
    tx.commit().await.unwrap();
    s.leave_cluster("leaving").await.unwrap();
    assert!(s.has_orphans("me", 500).await.unwrap(), "fire times were handed back");
});

backends!(db: a_shared_pass_hides_no_other_share_from_its_admin, |db| {
    let s = &db.store;
    let g = new_group(s, "shares").await;
    // due in the window, none a stray; with many rows not yet due the scan takes the due
    // index, as it does in production
    let ids = running_jobs(s, g, [8_000; 6]).await;
    running_jobs(s, g, [1_000_000; 60]).await;
    let share = |index| Some((Share { index, of: 2 }, 2_000));
    // SQLite has one writer: a second pass waits for the first anyway
    if s.backend() != Backend::Sqlite {
        let mut first = s.begin_shared_schedule().await.unwrap();
        let held = first.due_jobs(10_000, 100, share(0)).await.unwrap();
        assert_eq!(held.len(), 3);
        // the second admin reads its whole share while the first pass is open: a scan that
        // kept the locks of the rows it passed (InnoDB does, even at READ COMMITTED) would
        // hide them
        let second = async {
            let mut tx = s.begin_shared_schedule().await.unwrap();
            let own = tx.due_jobs(10_000, 100, share(1)).await.unwrap();
            tx.commit().await.unwrap();
            own
        };
        let own = tokio::time::timeout(Duration::from_secs(10), second)
            .await
            .expect("a shared pass does not wait for another");
        let mut own: Vec<i32> = own.iter().map(|j| j.id).collect();
        own.sort_unstable();
        let expected: Vec<i32> = ids.iter().copied().filter(|id| id % 2 == 1).collect();
        assert_eq!(own, expected, "the second share, all of it");
        first.commit().await.unwrap();
    }
});

backends!(db: an_exclusive_pass_never_claims_what_a_shared_pass_just_claimed, |db| {
    let s = &db.store;
    let g = new_group(s, "exclusive").await;
    let ids = running_jobs(s, g, [8_000; 6]).await;
    running_jobs(s, g, [1_000_000; 60]).await;
    let claims = |jobs: &[DueJob]| next_fire_at(jobs, 20_000);
    // SQLite has one writer: the passes cannot overlap
    if s.backend() != Backend::Sqlite {
        let share = Some((Share { index: 0, of: 2 }, 2_000));
        let mut shared = s.begin_shared_schedule().await.unwrap();
        let held = shared.due_jobs(10_000, 100, share).await.unwrap();
        assert_eq!(held.len(), 3);
        // an admin that counts itself alone (it has just started) reads every job under the
        // cluster lock, while the shared pass makes the very same claims and commits
        let exclusive = async {
            let mut tx = s.begin_schedule().await.unwrap();
            let due = tx.due_jobs(10_000, 100, None).await.unwrap();
            (tx, due)
        };
        let shared_claims = async {
            // a head start for the exclusive read, so that it meets the shared pass's rows
            // still held; the assertions hold whichever goes first
            tokio::time::sleep(Duration::from_millis(300)).await;
            let ok = shared.claim_all(&claims(&held)).await.unwrap();
            shared.commit().await.unwrap();
            ok
        };
        let ((mut tx, due), shared_ok) = tokio::join!(exclusive, shared_claims);
        assert!(shared_ok.iter().all(|ok| *ok));
        let exclusive_ok = tx.claim_all(&claims(&due)).await.unwrap();
        tx.commit().await.unwrap();
        for id in &ids {
            let by_exclusive = due.iter().zip(&exclusive_ok).any(|(j, ok)| j.id == *id && *ok);
            let by_shared = held.iter().any(|j| j.id == *id);
            assert!(
                by_exclusive != by_shared,
                "job {id}: claimed by the shared pass {by_shared}, by the exclusive {by_exclusive}"
            );
        }
    }
});

backends!(db: schedule_claims_each_fire_time_once, |db| {
    let s = &db.store;
    let g = new_group(s, "due").await;
    let ids = running_jobs(s, g, [1_000, 3_000, 9_000]).await;
    let mut stopped = job(g, "stopped");
    stopped.trigger_next_time = 1_000;
    s.insert_job(&stopped).await.unwrap();
    // the newest job is the longest overdue: a limited read must reach it first, or a slow
    // pass keeps re-reading the low ids and starves it
    let mut overdue = job(g, "overdue");
    overdue.trigger_status = TRIGGER_STATUS_RUNNING;
    overdue.trigger_next_time = 500;
    let overdue = s.insert_job(&overdue).await.unwrap();

    let mut tx = s.begin_schedule().await.unwrap();
    let due = tx.due_jobs(5_000, 100, None).await.unwrap();
    assert_eq!(
        due.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![overdue, ids[0], ids[1]]
    );
    let stored = s.get_job(overdue).await.unwrap().unwrap();
    assert_eq!(
        due[0],
        jobwheel::model::DueJob::from(&stored),
        "a due job carries the job's scheduling columns"
    );
    let first = tx.due_jobs(5_000, 1, None).await.unwrap();
    assert_eq!(
        first.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![overdue]
    );
    let updates = [
        ScheduleUpdate {
            id: ids[0],
            expected_next: 1_000,
            last: 1_000,
            next: 2_000,
            stop: false,
        },
        // stale expectation: another admin already moved it
        ScheduleUpdate {
            id: ids[1],
            expected_next: 2_500,
            last: 2_500,
            next: 4_000,
            stop: false,
        },
    ];
    assert_eq!(tx.claim_all(&updates).await.unwrap(), vec![true, false]);
    tx.commit().await.unwrap();

    let j0 = s.get_job(ids[0]).await.unwrap().unwrap();
    assert_eq!((j0.trigger_last_time, j0.trigger_next_time), (1_000, 2_000));
    assert_eq!(
        s.get_job(ids[1]).await.unwrap().unwrap().trigger_next_time,
        3_000
    );

    // the same fire time cannot be claimed twice
    let mut tx = s.begin_schedule().await.unwrap();
    let again = ScheduleUpdate {
        id: ids[0],
        expected_next: 1_000,
        last: 1_000,
        next: 2_000,
        stop: false,
    };
    assert!(!tx.claim(&again).await.unwrap());
    // no next fire time: the job stops
    let stop = ScheduleUpdate {
        id: ids[2],
        expected_next: 9_000,
        last: 9_000,
        next: 0,
        stop: true,
    };
    assert!(tx.claim(&stop).await.unwrap());
    tx.commit().await.unwrap();
    let j2 = s.get_job(ids[2]).await.unwrap().unwrap();
    assert_eq!(
        (j2.trigger_status, j2.trigger_next_time),
        (TRIGGER_STATUS_STOPPED, 0)
    );

    // a job stopped meanwhile is not restarted by a claim
    s.stop_job(ids[1], 1).await.unwrap();
    let mut tx = s.begin_schedule().await.unwrap();
    let revive = ScheduleUpdate {
        id: ids[1],
        expected_next: 0,
        last: 0,
        next: 5_000,
        stop: false,
    };
    assert!(!tx.claim(&revive).await.unwrap());
    tx.commit().await.unwrap();
    assert_eq!(
        s.get_job(ids[1]).await.unwrap().unwrap().trigger_status,
        TRIGGER_STATUS_STOPPED
    );
});

backends!(db: schedule_lock_excludes_a_second_admin, |db| {
    let s = db.store.clone();
    let first = s.begin_schedule().await.unwrap();
    let second_admin = tokio::spawn({
        let s = s.clone();
        async move {
            let started = std::time::Instant::now();
            let tx = s.begin_schedule().await.unwrap();
            let waited = started.elapsed();
            tx.commit().await.unwrap();
            waited
        }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        !second_admin.is_finished(),
        "the second admin must wait for the lock"
    );
    first.commit().await.unwrap();
    let waited = tokio::time::timeout(Duration::from_secs(10), second_admin)
        .await
        .expect("second admin gets the lock after the first commits")
        .unwrap();
    assert!(
        waited >= Duration::from_millis(300),
        "waited only {waited:?}"
    );
});

backends!(db: batched_claims_report_each_job, |db| {
    let s = &db.store;
    let g = new_group(s, "many").await;
    let ids = running_jobs(s, g, [1_000; 1_100]).await;
    // every seventh job was moved meanwhile (an edit), so its claim must fail
    for id in ids.iter().step_by(7) {
        s.set_next_fire_time(*id, 1_500).await.unwrap();
    }
    let mut tx = s.begin_schedule().await.unwrap();
    assert_eq!(tx.due_jobs(2_000, 5_000, None).await.unwrap().len(), 1_100);
    let updates: Vec<ScheduleUpdate> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| ScheduleUpdate {
            id: *id,
            expected_next: 1_000,
            last: 1_000,
            next: 2_000 + i as i64,
            stop: i == 1,
        })
        .collect();
    let claimed = tx.claim_all(&updates).await.unwrap();
    tx.commit().await.unwrap();
    for (i, ok) in claimed.iter().enumerate() {
        assert_eq!(*ok, i % 7 != 0, "job #{i}");
    }
    let j = s.get_job(ids[3]).await.unwrap().unwrap();
    assert_eq!((j.trigger_last_time, j.trigger_next_time), (1_000, 2_003));
    let stopped = s.get_job(ids[1]).await.unwrap().unwrap();
    assert_eq!(
        (stopped.trigger_status, stopped.trigger_next_time),
        (TRIGGER_STATUS_STOPPED, 0)
    );
    assert_eq!(
        s.get_job(ids[7]).await.unwrap().unwrap().trigger_next_time,
        1_500
    );
});

backends!(db: due_jobs_plan_is_explained, |db| {
    let s = &db.store;
    let plan = s.explain_due_jobs(10_000, 100).await.unwrap();
    assert!(!plan.trim().is_empty());
    assert!(plan.to_lowercase().contains("job_info"), "{plan}");
});

backends!(db: claim_plan_finds_each_job_by_its_key, |db| {
    let s = &db.store;
    let plan = s.explain_claim(500).await.unwrap();
    assert!(plan.to_lowercase().contains("job_info"), "{plan}");
    if s.backend() == Backend::Sqlite {
        // SQLite's plan does not depend on table statistics here: a walk of the due index
        // (whose cost grows with every enabled job) shows on an empty table too
        assert!(
            plan.contains("SEARCH job_info USING INTEGER PRIMARY KEY"),
            "{plan}"
        );
        assert!(!plan.contains("ix_job_info_due"), "{plan}");
        assert!(!plan.contains("SCAN job_info"), "{plan}");
    }
});
