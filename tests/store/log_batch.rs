//! Many run rows at once: inserts, outcomes and results in batches, as the trigger and callback
//! paths write them, and what two admins writing the same rows do.

use std::time::Duration;

use jobwheel::model::{NewRunRow, ScheduleType, TriggerOutcome, TriggerType};
use jobwheel::store::Backend;

use crate::kit::db::cron_log;

use crate::support::*;

backends!(db: logs_are_inserted_and_triggered_in_bulk, |db| {
    let s = &db.store;
    let g = new_group(s, "bulk-logs").await;
    let j1 = s.insert_job(&job(g, "j1")).await.unwrap();
    let j2 = s.insert_job(&job(g, "j2")).await.unwrap();
    assert!(s.insert_logs(&[]).await.unwrap().is_empty());
    // more rows than one statement carries, alternating jobs, so order mistakes show
    // what is to be sent is stored with the row, before any outcome
    let logs: Vec<NewRunRow> = (0..2_500)
        .map(|i| NewRunRow {
            executor_handler: Some(format!("handler{i}")),
            executor_param: (i % 3 == 0).then(|| format!("p={i}")),
            executor_sharding_param: (i % 2 == 1).then(|| format!("{i}/2500")),
            executor_fail_retry_count: (i % 4) as i32,
            trigger_msg: (i % 5 != 0).then(|| format!("Trigger type：Cron<br>row {i}")),
            ..cron_log(g, if i % 2 == 0 { j1 } else { j2 }, 10_000 + i)
        })
        .collect();
    let ids = s.insert_logs(&logs).await.unwrap();
    assert_eq!(ids.len(), logs.len());
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "ids are distinct");
    for (i, id) in [
        (0usize, ids[0]),
        (1, ids[1]),
        (1_999, ids[1_999]),
        (2_499, ids[2_499]),
    ] {
        let log = s.get_log(id).await.unwrap().unwrap();
        assert_eq!(
            (log.job_id, log.trigger_time, log.trigger_code),
            (logs[i].job_id, logs[i].trigger_time, 0),
            "row {i} has the id returned at position {i}"
        );
        assert_eq!(
            (
                log.executor_handler,
                log.executor_param,
                log.executor_sharding_param,
                log.executor_fail_retry_count,
                log.trigger_msg
            ),
            (
                logs[i].executor_handler.clone(),
                logs[i].executor_param.clone(),
                logs[i].executor_sharding_param.clone(),
                logs[i].executor_fail_retry_count,
                logs[i].trigger_msg.clone()
            ),
            "row {i} holds what is to be sent"
        );
    }

    let mut failed = accepted("http://e:2/");
    failed.trigger_code = 500;
    failed.trigger_msg = "refused é".into();
    failed.executor_address = None;
    let outcomes: Vec<(i64, TriggerOutcome)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            (
                *id,
                if i == 7 {
                    failed.clone()
                } else {
                    accepted("http://e:1/")
                },
            )
        })
        .collect();
    s.set_trigger_outcomes(&outcomes).await.unwrap();
    s.set_trigger_outcomes(&[]).await.unwrap();
    let ok = s.get_log(ids[2_400]).await.unwrap().unwrap();
    assert_eq!(
        (
            ok.trigger_code,
            ok.trigger_msg.as_deref(),
            ok.executor_address.as_deref()
        ),
        (200, Some("ok"), Some("http://e:1/"))
    );
    let bad = s.get_log(ids[7]).await.unwrap().unwrap();
    assert_eq!(
        (
            bad.trigger_code,
            bad.trigger_msg.as_deref(),
            bad.executor_address
        ),
        (500, Some("refused é"), None)
    );
    // what was sent stays as the insert wrote it
    assert_eq!(
        (bad.executor_handler, bad.executor_sharding_param),
        (logs[7].executor_handler.clone(), logs[7].executor_sharding_param.clone())
    );
    assert_eq!(bad.executor_fail_retry_count, logs[7].executor_fail_retry_count);
    // an outcome for a log that is gone changes nothing and is no error
    s.set_trigger_outcomes(&[(ids[2_499] + 10_000, accepted("x"))])
        .await
        .unwrap();
    // a run row sent twice (its admin taken over) keeps an accepted outcome: a late refusal
    // from the other admin does not make it a failure, alone or in a batch; a refused row may
    // still be accepted later
    let late_refusal = TriggerOutcome {
        trigger_msg: "refused late".into(),
        ..failed.clone()
    };
    s.set_trigger_outcomes(&[(ids[1], late_refusal.clone()), (ids[7], accepted("http://e:9/"))])
        .await
        .unwrap();
    assert!(!s.set_trigger_outcome(ids[2], &late_refusal).await.unwrap());
    for (id, code, address) in [(ids[1], 200, "http://e:1/"), (ids[2], 200, "http://e:1/"), (ids[7], 200, "http://e:9/")] {
        let row = s.get_log(id).await.unwrap().unwrap();
        assert_eq!((row.trigger_code, row.executor_address.as_deref()), (code, Some(address)), "row {id}");
    }
});

backends!(db: results_are_stored_in_batches_once_each, |db| {
    let s = &db.store;
    let g = new_group(s, "batch").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    let mut ids = vec![];
    for t in 0..5 {
        ids.push(s.insert_log(&cron_log(g, j, 1_000 + t)).await.unwrap());
    }
    let mut got: Vec<i64> = s
        .get_logs(&[ids[1], ids[3], 999_999])
        .await
        .unwrap()
        .iter()
        .map(|l| l.id)
        .collect();
    got.sort_unstable();
    assert_eq!(got, vec![ids[1], ids[3]]);
    assert!(s.get_logs(&[]).await.unwrap().is_empty());

    s.complete_log(ids[0], 200, None, 10).await.unwrap();
    let row = |id: i64, code: i32, msg: &str| jobwheel::store::LogResultRow {
        log_id: id,
        handle_code: code,
        handle_msg: Some(msg.to_string()),
    };
    let results = vec![
        row(ids[0], 500, "late"), // already has a result
        row(ids[1], 200, "ok"),
        row(ids[2], 502, "timeout é"),
        row(ids[2], 200, "duplicate"), // the same log twice in one batch
        row(999_999, 200, "unknown"),
    ];
    assert_eq!(
        s.complete_logs(&results, 20).await.unwrap(),
        vec![false, true, true, false, false]
    );
    let l1 = s.get_log(ids[1]).await.unwrap().unwrap();
    assert_eq!(
        (l1.handle_code, l1.handle_time, l1.alarm_status),
        (200, 20, 1)
    );
    let l2 = s.get_log(ids[2]).await.unwrap().unwrap();
    assert_eq!(
        (l2.handle_code, l2.handle_msg.as_deref()),
        (502, Some("timeout é"))
    );
    assert_eq!(l2.alarm_status, 0, "a failure keeps its alarm pending");
    assert!(s.complete_logs(&[], 1).await.unwrap().is_empty());
});

backends!(db: result_logs_carry_what_storing_a_result_needs, |db| {
    let s = &db.store;
    let g = new_group(s, "result-logs").await;
    let child = s.insert_job(&job(g, "child")).await.unwrap();
    let mut parent = job(g, "parent");
    parent.schedule_type = ScheduleType::FixDelay;
    parent.schedule_conf = "30".into();
    parent.timezone = "Asia/Shanghai".into();
    parent.child_job_ids = vec![child];
    let parent = s.insert_job(&parent).await.unwrap();
    let ids = s
        .insert_logs(&[
            cron_log(g, parent, 10),
            NewRunRow {
                trigger_type: TriggerType::Manual,
                ..cron_log(g, child, 20)
            },
            // a job deleted after its trigger leaves a log with no job
            cron_log(g, 999_999, 30),
        ])
        .await
        .unwrap();
    s.complete_log(ids[1], 500, Some("boom"), 40).await.unwrap();
    assert!(s.get_result_logs(&[]).await.unwrap().is_empty());
    let mut got = s
        .get_result_logs(&[ids[2], ids[0], 123_456_789, ids[1]])
        .await
        .unwrap();
    got.sort_by_key(|l| l.log_id);
    assert_eq!(got.len(), 3, "an unknown id is left out: {got:?}");
    let (p, c, orphan) = (&got[0], &got[1], &got[2]);
    assert_eq!(
        (p.log_id, p.job_id, p.handle_code, p.trigger_type),
        (ids[0], parent, 0, TriggerType::Cron)
    );
    let follow = p.job.as_ref().expect("the parent exists");
    assert_eq!(follow.child_job_ids, vec![child]);
    assert_eq!(
        (
            follow.schedule.id,
            follow.schedule.schedule_type,
            follow.schedule.schedule_conf.as_str(),
            follow.schedule.timezone.as_str()
        ),
        (parent, ScheduleType::FixDelay, "30", "Asia/Shanghai")
    );
    assert_eq!((c.handle_code, c.trigger_type), (500, TriggerType::Manual));
    assert!(c.job.as_ref().unwrap().child_job_ids.is_empty());
    assert_eq!((orphan.job_id, &orphan.job), (999_999, &None));
});

/// On PostgreSQL and MySQL a result write does not wait for a row another admin's outcome write
/// holds: it stores the rest at once and comes back for the held row, so the two cannot
/// deadlock, and a write that waits cannot hold up the other admins' writes of the rows it has.
async fn results_pass_rows_held_by_another_writer(backend: Backend) {
    use sqlx::Connection;
    let Some(db) = crate::kit::db::TestDb::create(backend).await else {
        return;
    };
    let s = &db.store;
    let g = new_group(s, "held").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    let held = s.insert_log(&cron_log(g, j, 1_000)).await.unwrap();
    let free = s.insert_log(&cron_log(g, j, 2_000)).await.unwrap();

    // another writer's transaction holds `held`'s row until told to roll back
    let hold = format!("SELECT id FROM job_log WHERE id = {held} FOR UPDATE");
    let (locked, is_locked) = tokio::sync::oneshot::channel();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let url = db.url.clone();
    let holder = tokio::spawn(async move {
        macro_rules! hold_until_released {
            ($conn:ty) => {{
                let mut conn = <$conn>::connect(&url).await.unwrap();
                let mut tx = conn.begin().await.unwrap();
                sqlx::query(&hold).execute(&mut *tx).await.unwrap();
                locked.send(()).unwrap();
                let _ = released.await;
                tx.rollback().await.unwrap();
            }};
        }
        match backend {
            Backend::Postgres => hold_until_released!(sqlx::PgConnection),
            Backend::MySql => hold_until_released!(sqlx::MySqlConnection),
            Backend::Sqlite => unreachable!("one writer at a time: nothing to pass"),
        }
    });
    is_locked.await.unwrap();

    let row = |id: i64| jobwheel::store::LogResultRow {
        log_id: id,
        handle_code: 200,
        handle_msg: None,
    };
    let store = s.clone();
    let write = tokio::spawn(async move { store.complete_logs(&[row(held), row(free)], 30).await });
    let free_stored = async {
        loop {
            if s.get_log(free).await.unwrap().unwrap().handle_code == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), free_stored)
        .await
        .expect("the free row is stored while the other row is held");
    assert_eq!(s.get_log(held).await.unwrap().unwrap().handle_code, 0);
    release.send(()).unwrap();
    holder.await.unwrap();

    let stored = write.await.unwrap().unwrap();
    assert_eq!(stored, vec![true, true]);
    assert_eq!(s.get_log(held).await.unwrap().unwrap().handle_code, 200);
    db.drop_db().await;
}

#[tokio::test]
async fn postgres_results_pass_rows_held_by_another_writer() {
    results_pass_rows_held_by_another_writer(Backend::Postgres).await;
}

#[tokio::test]
async fn mysql_results_pass_rows_held_by_another_writer() {
    results_pass_rows_held_by_another_writer(Backend::MySql).await;
}

/// On PostgreSQL a trigger's outcome changes no indexed column of its run row and finds room on
/// the row's page (the row was inserted with its message's head), so the new row version stays
/// beside the old one: a heap-only update, with no new entry in any of the table's indexes.
#[tokio::test]
async fn postgres_writes_outcomes_on_their_rows_pages() {
    use sqlx::Connection;
    let Some(db) = crate::kit::db::TestDb::create(Backend::Postgres).await else {
        return;
    };
    let s = &db.store;
    let g = new_group(s, "hot").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    // as long as a real head: trigger type, admin, four executors, route, block, timeout, retries
    let head = format!("Trigger type：Cron<br>{}<br><br>", "x".repeat(440));
    let logs: Vec<NewRunRow> = (0..300)
        .map(|i| NewRunRow {
            executor_handler: Some("demoJobHandler".into()),
            executor_param: Some(String::new()),
            trigger_msg: Some(head.clone()),
            ..cron_log(g, j, 1_000 + i)
        })
        .collect();
    let ids = s.insert_logs(&logs).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let sql = "SELECT (ctid::text::point)[0]::bigint FROM job_log WHERE id = ANY($1) ORDER BY id";
    let page_of_each = sqlx::query_scalar::<_, i64>(sql).bind(ids.clone());
    let before = page_of_each.fetch_all(&mut conn).await.unwrap();
    let mut outcome = accepted("http://127.0.0.1:46685/");
    outcome.trigger_msg =
        format!("{head}Trigger Job：<br>address：http://127.0.0.1:46685/<br>code：200<br>msg：");
    let rows: Vec<(i64, TriggerOutcome)> = ids.iter().map(|id| (*id, outcome.clone())).collect();
    s.set_trigger_outcomes(&rows).await.unwrap();
    let page_of_each = sqlx::query_scalar::<_, i64>(sql).bind(ids.clone());
    let after = page_of_each.fetch_all(&mut conn).await.unwrap();
    assert_eq!(before.len(), 300);
    assert_eq!(after, before, "every outcome stays on its row's page");
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'job_log' \
         AND schemaname = current_schema()",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    // the primary key, four for the lists and alarms, one for workflow node attempts
    assert_eq!(indexes.len(), 6, "{indexes:?}");
    for column in ["trigger_code", "trigger_msg", "executor_address"] {
        assert!(
            indexes.iter().all(|i| !i.contains(column)),
            "{column} is indexed: {indexes:?}"
        );
    }
    let log = s.get_log(ids[0]).await.unwrap().unwrap();
    assert_eq!(log.trigger_code, 200);
    assert_eq!(log.trigger_msg, Some(outcome.trigger_msg.clone()));
    db.drop_db().await;
}
