//! Claimed fire times and the admins that hold them, on every backend.

use chrono_tz::Tz;
use jobwheel::actors::schedule::{pre_read, Node};
use jobwheel::clock::now_ms;
use jobwheel::model::{MisfireStrategy, TriggerType, TRIGGER_STATUS_RUNNING};
use jobwheel::store::{ClaimKey, MonitorPass, Share, Store};

use crate::kit::db::{cron_log, manual_log};
use crate::support::{accepted, job, new_group};

fn at(job_id: i32, fire_time: i64) -> ClaimKey {
    ClaimKey { job_id, fire_time }
}

/// A running job of group `g` firing every second from the second after `now`.
async fn every_second_from(s: &Store, g: i32, now: i64) -> i32 {
    let mut every_second = job(g, "every second");
    every_second.schedule_conf = "* * * * * ?".into();
    every_second.trigger_status = TRIGGER_STATUS_RUNNING;
    every_second.trigger_next_time = (now / 1_000 + 1) * 1_000;
    s.insert_job(&every_second).await.unwrap()
}

backends!(db: a_dead_admins_claims_are_taken_over_once, |db| {
    let s = &db.store;
    let g = new_group(s, "claims").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    s.beat_node("dead", "http://a:1", 0, 1_000).await.unwrap();
    s.beat_node("live", "http://b:1", 0, 100_000).await.unwrap();
    let mut tx = s.begin_schedule().await.unwrap();
    let cron = TriggerType::Cron;
    tx.insert_claims("dead", &[(at(j, 50_000), cron), (at(j, 51_000), cron)])
        .await
        .unwrap();
    tx.insert_claims("live", &[(at(j, 52_000), cron)]).await.unwrap();
    tx.commit().await.unwrap();
    // the first fire reached its executor before its admin died
    let done = s.insert_log(&cron_log(g, j, 50_000)).await.unwrap();
    s.set_trigger_outcome(done, &accepted("http://e:1/")).await.unwrap();

    let mut tx = s.begin_schedule().await.unwrap();
    let orphans = tx.take_over_claims("live", 95_000, 100).await.unwrap();
    tx.commit().await.unwrap();
    let keys: Vec<ClaimKey> = orphans.iter().map(|o| o.key).collect();
    assert_eq!(keys, vec![at(j, 50_000), at(j, 51_000)]);
    assert!(orphans.iter().all(|o| o.from == "dead" && o.trigger_type == cron));
    let runs: Vec<(i64, i32)> = orphans[0].runs.iter().map(|r| (r.log_id, r.code)).collect();
    assert_eq!(runs, vec![(done, 200)]);
    assert_eq!(orphans[0].runs[0].trigger_time, cron_log(g, j, 50_000).trigger_time, "the time it was sent with");
    assert!(orphans[1].runs.is_empty());
    let claim_job = orphans[0].job.as_ref().expect("the job exists");
    assert_eq!(claim_job.job_group, g);
    assert_eq!(claim_job.misfire_strategy, MisfireStrategy::DoNothing);
    assert_eq!(s.claims_of("live").await.unwrap().len(), 3);
    assert!(s.claims_of("dead").await.unwrap().is_empty());

    // taken once: a second look finds nothing, and the dead admin's row is gone
    let mut tx = s.begin_schedule().await.unwrap();
    assert!(tx.take_over_claims("other", 95_000, 100).await.unwrap().is_empty());
    tx.commit().await.unwrap();
    s.beat_node("dead", "http://a:1", 0, 1_000).await.unwrap();

    s.release_claims(&[at(j, 50_000)]).await.unwrap();
    assert_eq!(s.claims_of("live").await.unwrap().len(), 2);
    // a graceful stop hands back what is left, for any admin to take at once
    assert_eq!(s.leave_cluster("live").await.unwrap(), 2);
    let mut tx = s.begin_schedule().await.unwrap();
    let handed = tx.take_over_claims("other", 0, 100).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(handed.len(), 2);
    assert!(handed.iter().all(|o| o.from.is_empty()));
});

backends!(db: a_take_over_finds_each_fires_runs_among_many, |db| {
    let s = &db.store;
    let g = new_group(s, "many").await;
    let mut jobs = Vec::new();
    for i in 0..60 {
        jobs.push(s.insert_job(&job(g, &format!("j{i}"))).await.unwrap());
    }
    let fires: Vec<i64> = (0..5).map(|k| 100_000 + k * 1_000).collect();
    let mut claims = Vec::new();
    let mut logs = Vec::new();
    let mut want = std::collections::HashMap::new();
    for (n, &j) in jobs.iter().enumerate() {
        // a run of an earlier fire time, not claimed any more, and a manual run
        logs.push(cron_log(g, j, 99_000));
        logs.push(manual_log(g, j, 101_500));
        for (k, &fire) in fires.iter().enumerate() {
            claims.push((at(j, fire), TriggerType::Cron));
            // most fires went out (some late), some twice (closed and fired again), some not
            let runs = (n + k) % 3;
            for r in 0..runs {
                let mut run = cron_log(g, j, fire);
                run.trigger_time = fire + 1_500 * r as i64 + 7;
                logs.push(run);
            }
            want.insert(at(j, fire), runs);
        }
    }
    let ids = s.insert_logs(&logs).await.unwrap();
    let mut tx = s.begin_schedule().await.unwrap();
    tx.insert_claims("dead", &claims).await.unwrap();
    tx.commit().await.unwrap();
    s.beat_node("dead", "", 0, 1_000).await.unwrap();

    let mut tx = s.begin_schedule().await.unwrap();
    let orphans = tx.take_over_claims("live", 50_000, 1_000).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(orphans.len(), 300, "every claim, across several statements");
    assert!(orphans.windows(2).all(|w| w[0].key.fire_time <= w[1].key.fire_time));
    for o in &orphans {
        let mut got: Vec<i64> = o.runs.iter().map(|r| r.log_id).collect();
        got.sort_unstable();
        let mut expected: Vec<i64> = logs
            .iter()
            .zip(&ids)
            .filter(|(l, _)| l.trigger_type == TriggerType::Cron && at(l.job_id, l.schedule_time) == o.key)
            .map(|(_, id)| *id)
            .collect();
        expected.sort_unstable();
        assert_eq!(got.len(), want[&o.key], "{:?}", o.key);
        assert_eq!(got, expected, "{:?}", o.key);
    }
    assert_eq!(s.claims_of("live").await.unwrap().len(), 300);
});

backends!(db: runs_of_a_taken_over_fire_are_closed_or_recorded, |db| {
    let s = &db.store;
    let g = new_group(s, "closing").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    let open = s.insert_log(&cron_log(g, j, 7_000)).await.unwrap();
    let mut tx = s.begin_schedule().await.unwrap();
    tx.close_unrecorded_runs(&[open], "its admin stopped").await.unwrap();
    tx.insert_claims("x", &[(at(j, 9_000), TriggerType::Cron)]).await.unwrap();
    let orphans = tx.take_over_claims("me", 0, 10).await.unwrap();
    assert!(orphans.is_empty(), "an admin that never beat is not known dead");
    tx.commit().await.unwrap();
    s.beat_node("x", "", 0, 1_000).await.unwrap();
    let mut tx = s.begin_schedule().await.unwrap();
    let orphans = tx.take_over_claims("me", 2_000, 10).await.unwrap();
    assert_eq!(orphans.len(), 1);
    let claim_job = orphans[0].job.clone().expect("job");
    tx.record_unfired(&orphans[0], &claim_job, 20_000, "not fired: too late").await.unwrap();
    tx.release_claims(&[orphans[0].key]).await.unwrap();
    tx.commit().await.unwrap();
    let closed = s.get_log(open).await.unwrap().unwrap();
    assert_eq!((closed.trigger_code, closed.alarm_status), (500, 1));
    assert_eq!(closed.trigger_msg.as_deref(), Some("its admin stopped"));
    let (_, logs) = s
        .list_logs(&jobwheel::store::LogFilter { job_id: Some(j), limit: 10, ..Default::default() })
        .await
        .unwrap();
    let unfired = logs.iter().find(|l| l.schedule_time == 9_000).expect("a row for the fire");
    assert_eq!((unfired.trigger_code, unfired.alarm_status), (500, 1));
    assert_eq!(unfired.trigger_msg.as_deref(), Some("not fired: too late"));
    assert!(s.claims_of("me").await.unwrap().is_empty());
});

backends!(db: an_admin_stepping_down_leaves_the_shares_but_keeps_its_claims, |db| {
    let s = &db.store;
    let g = new_group(s, "stepping").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    for node in ["a", "b", "c"] {
        s.beat_node(node, "", 0, 10_000).await.unwrap();
    }
    let mut tx = s.begin_schedule().await.unwrap();
    tx.insert_claims("b", &[(at(j, 12_000), TriggerType::Cron)]).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(s.live_nodes(5_000).await.unwrap(), ["a", "b", "c"]);

    s.step_down("b").await.unwrap();
    // its later beats keep it out of the shares, yet alive: its claims are nobody's to take
    s.beat_node("b", "", 0, 11_000).await.unwrap();
    assert_eq!(s.live_nodes(5_000).await.unwrap(), ["a", "c"]);
    assert!(!s.has_orphans("a", 6_000).await.unwrap());
    assert_eq!(s.claims_of("b").await.unwrap(), vec![at(j, 12_000)]);
    // dying while stepping down is dying: what it held is taken over as usual
    let mut tx = s.begin_schedule().await.unwrap();
    let orphans = tx.take_over_claims("a", 20_000, 10).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(orphans.iter().map(|o| o.key).collect::<Vec<_>>(), vec![at(j, 12_000)]);
});

backends!(db: admins_take_turns_at_each_monitor_pass, |db| {
    let s = &db.store;
    let turn = |pass, node, slot| s.take_monitor_turn(pass, node, slot, slot * 10_000);
    // the first admin at an interval runs it; the others skip it
    assert!(turn(MonitorPass::Fail, "a", 7).await.unwrap());
    assert!(!turn(MonitorPass::Fail, "b", 7).await.unwrap());
    assert!(!turn(MonitorPass::Fail, "c", 7).await.unwrap());
    // the admin that took it may run it again (a failed pass retried within its interval)
    assert!(turn(MonitorPass::Fail, "a", 7).await.unwrap());
    // each monitor has turns of its own
    assert!(turn(MonitorPass::Lost, "b", 7).await.unwrap());
    assert!(turn(MonitorPass::Report, "c", 7).await.unwrap());
    // the next interval is anybody's, an earlier one nobody's
    assert!(turn(MonitorPass::Fail, "b", 8).await.unwrap());
    assert!(!turn(MonitorPass::Fail, "a", 8).await.unwrap());
    assert!(!turn(MonitorPass::Fail, "a", 7).await.unwrap());
    assert!(!turn(MonitorPass::Fail, "b", 6).await.unwrap());
    // an admin that died after taking a turn leaves the next one to the others
    assert!(turn(MonitorPass::Lost, "a", 9).await.unwrap());
});

backends!(db: a_pass_whose_commit_answer_is_lost_lists_its_claims_for_the_next_pass, |db| {
    let s = &db.store;
    let g = new_group(s, "lost answer").await;
    let now = now_ms();
    every_second_from(s, g, now).await;
    s.beat_node("a", "", 0, now).await.unwrap();
    let node = || Node { id: "a", take_over: true, share: Share::ALL };

    // the pass commits, but its answer is lost: it fails, and lists what it may have written
    s.lose_commit_answers(1);
    let mut unanswered = Vec::new();
    let failed = pre_read(s, Tz::UTC, 100, now, node(), &mut unanswered).await;
    assert!(failed.is_err(), "the commit's answer was lost");
    unanswered.sort_unstable_by_key(|k| k.fire_time);
    assert!(unanswered.len() >= 4, "{unanswered:?}");
    let written = s.claims_of("a").await.unwrap();
    assert_eq!(written, unanswered, "the claims were written after all");

    // the next pass hands them back and, this admin being live, takes them over to fire once
    let pass = pre_read(s, Tz::UTC, 100, now, node(), &mut unanswered).await.unwrap();
    assert!(unanswered.is_empty(), "{unanswered:?}");
    let mut fired: Vec<ClaimKey> = pass.fires.iter().map(|f| f.claim()).collect();
    fired.sort_unstable_by_key(|k| k.fire_time);
    assert_eq!((pass.taken_over, fired), (written.len(), written.clone()));
    assert!(s.claims_of("").await.unwrap().is_empty());
    assert_eq!(s.claims_of("a").await.unwrap(), written);
});

backends!(db: claims_of_a_commit_that_went_unanswered_are_handed_back_and_taken_over, |db| {
    let s = &db.store;
    let g = new_group(s, "unanswered").await;
    let now = now_ms();
    every_second_from(s, g, now).await;
    let elsewhere = s.insert_job(&job(g, "b's")).await.unwrap();
    for node in ["a", "b"] {
        s.beat_node(node, "", 0, now).await.unwrap();
    }
    let node = |id, take_over| Node { id, take_over, share: Share::ALL };

    // a's pass commits its claims, and (say) the answer to its commit is lost on the way
    let pass = pre_read(s, Tz::UTC, 100, now, node("a", false), &mut Vec::new()).await.unwrap();
    let mut written: Vec<ClaimKey> = pass.fires.iter().map(|f| f.claim()).collect();
    written.sort_unstable_by_key(|k| k.fire_time);
    assert!(written.len() >= 4, "{written:?}");
    // b holds a claim of a fire time listed with them: it stays b's
    let b_claim = at(elsewhere, written[0].fire_time);
    let mut tx = s.begin_schedule().await.unwrap();
    tx.insert_claims("b", &[(b_claim, TriggerType::Cron)]).await.unwrap();
    tx.commit().await.unwrap();
    let mut unanswered = written.clone();
    unanswered.push(b_claim);

    // a's next pass hands back what it holds of them first
    pre_read(s, Tz::UTC, 100, now, node("a", false), &mut unanswered).await.unwrap();
    assert!(unanswered.is_empty(), "handed back once: {unanswered:?}");
    assert!(s.claims_of("a").await.unwrap().is_empty());
    assert_eq!(s.claims_of("").await.unwrap(), written);
    assert_eq!(s.claims_of("b").await.unwrap(), vec![b_claim]);
    // and a live admin's next pass takes them over, to fire them once
    let taken = pre_read(s, Tz::UTC, 100, now, node("b", true), &mut Vec::new()).await.unwrap();
    let mut fired: Vec<ClaimKey> = taken.fires.iter().map(|f| f.claim()).collect();
    fired.sort_unstable_by_key(|k| k.fire_time);
    assert_eq!((taken.taken_over, fired), (written.len(), written.clone()));
    assert!(s.claims_of("").await.unwrap().is_empty());
});

/// An admin leaving the cluster hands back its own claims without touching another admin's: on
/// PostgreSQL and MySQL it does not wait for a pass that is writing claims of its own, and
/// that pass commits them unchanged.
#[tokio::test]
async fn leaving_the_cluster_waits_for_no_other_admins_pass() {
    use jobwheel::store::Backend;
    use std::time::Duration;
    for backend in [Backend::Postgres, Backend::MySql] {
        let Some(db) = crate::kit::db::TestDb::create(backend).await else {
            continue;
        };
        let s = &db.store;
        let g = new_group(s, "leaving").await;
        let cron = TriggerType::Cron;
        let mut jobs = Vec::new();
        for i in 0..40 {
            jobs.push(s.insert_job(&job(g, &format!("j{i}"))).await.unwrap());
        }
        // jobs interleaved between the two admins, as shares by id are
        let mine: Vec<_> = jobs
            .iter()
            .step_by(2)
            .map(|j| (at(*j, 5_000), cron))
            .collect();
        let theirs: Vec<_> = jobs
            .iter()
            .skip(1)
            .step_by(2)
            .map(|j| (at(*j, 5_000), cron))
            .collect();
        let mut tx = s.begin_shared_schedule().await.unwrap();
        tx.insert_claims("leaving", &mine).await.unwrap();
        tx.commit().await.unwrap();

        // the other admin's pass, still open
        let mut pass = s.begin_shared_schedule().await.unwrap();
        pass.insert_claims("staying", &theirs).await.unwrap();
        let store = s.clone();
        let mut leave = tokio::spawn(async move { store.leave_cluster("leaving").await });
        let left_meanwhile = tokio::time::timeout(Duration::from_secs(5), &mut leave).await;
        // the pass commits whatever happened, so that a failed check hangs nothing
        pass.commit().await.unwrap();
        let (left_meanwhile, handed) = match left_meanwhile {
            Ok(left) => (true, left.unwrap().unwrap()),
            Err(_) => (false, leave.await.unwrap().unwrap()),
        };

        assert!(
            left_meanwhile,
            "{backend:?}: leaving waited for the other admin's pass"
        );
        assert_eq!(handed, 20, "{backend:?}");
        assert_eq!(s.claims_of("").await.unwrap().len(), 20, "{backend:?}");
        assert_eq!(
            s.claims_of("staying").await.unwrap().len(),
            20,
            "{backend:?}"
        );
        db.drop_db().await;
    }
}

backends!(db: the_cluster_lists_each_admin_with_its_claims, |db| {
    let s = &db.store;
    s.beat_node("node-b", "http://b:8080", 1_000, 5_000).await.unwrap();
    s.beat_node("node-a", "http://a:8080", 2_000, 6_000).await.unwrap();
    s.step_down("node-b").await.unwrap();
    let nodes = s.cluster_nodes().await.unwrap();
    let seen: Vec<(&str, &str, i64, i64, bool, i64)> = nodes
        .iter()
        .map(|n| (n.id.as_str(), n.address.as_str(), n.started_at, n.beat_at, n.leaving, n.claims))
        .collect();
    assert_eq!(
        seen,
        [
            ("node-a", "http://a:8080", 2_000, 6_000, false, 0),
            ("node-b", "http://b:8080", 1_000, 5_000, true, 0)
        ]
    );
});
