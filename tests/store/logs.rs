//! Run rows (`job_log`) read, filtered, claimed by the monitors and cleared; daily counts.

use jobwheel::model::BeatReport;

use jobwheel::model::{alarm_status, LogReport, NewRunRow, TriggerOutcome, TriggerType};
use jobwheel::store::{LogFilter, LogStatus};

use crate::kit::db::cron_log;

use crate::support::*;

backends!(db: a_log_count_can_stop_early, |db| {
    let s = &db.store;
    let g = new_group(s, "cap").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    for t in 1..=5 {
        s.insert_log(&cron_log(g, j, t * 1_000)).await.unwrap();
    }
    let capped = |most| LogFilter {
        job_group: Some(g),
        limit: 2,
        count_up_to: most,
        ..Default::default()
    };
    // past the cap the total reads cap + 1, so a page can say "more than"
    let (total, page) = s.list_logs(&capped(Some(3))).await.unwrap();
    assert_eq!((total, page.len()), (4, 2));
    assert_eq!(page[0].trigger_time, 5_000);
    assert_eq!(s.list_logs(&capped(Some(5))).await.unwrap().0, 5);
    assert_eq!(s.list_logs(&capped(None)).await.unwrap().0, 5);
});

backends!(db: logs_record_trigger_and_result_once, |db| {
    let s = &db.store;
    let g = new_group(s, "logs").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    let sent = NewRunRow {
        executor_sharding_param: Some("1/3".into()),
        executor_fail_retry_count: 2,
        ..cron_log(g, j, 5_000)
    };
    let id = s.insert_log(&sent).await.unwrap();
    let log = s.get_log(id).await.unwrap().unwrap();
    assert_eq!(
        (log.trigger_code, log.handle_code, log.alarm_status),
        (0, 0, 0)
    );
    assert_eq!(log.trigger_type, TriggerType::Cron);
    assert_eq!((log.schedule_time, log.trigger_time), (5_000, 5_000));

    let outcome = accepted("http://e:1/");
    assert!(s.set_trigger_outcome(id, &outcome).await.unwrap());
    let log = s.get_log(id).await.unwrap().unwrap();
    assert_eq!(log.trigger_code, 200);
    assert_eq!(log.executor_address.as_deref(), Some("http://e:1/"));
    assert_eq!(log.executor_sharding_param.as_deref(), Some("1/3"));
    assert_eq!(log.executor_fail_retry_count, 2);

    assert!(s
        .complete_log(id, 200, Some("done é"), 6_000)
        .await
        .unwrap());
    // a duplicate or late callback changes nothing
    assert!(!s.complete_log(id, 500, Some("late"), 7_000).await.unwrap());
    let log = s.get_log(id).await.unwrap().unwrap();
    assert_eq!((log.handle_code, log.handle_time), (200, 6_000));
    assert_eq!(log.handle_msg.as_deref(), Some("done é"));
    assert_eq!(log.alarm_status, alarm_status::NOT_NEEDED);

    assert!(!s.complete_log(id + 1000, 200, None, 1).await.unwrap());
    assert!(!s.set_trigger_outcome(id + 1000, &outcome).await.unwrap());
    assert!(s.get_log(id + 1000).await.unwrap().is_none());

    assert!(s.append_trigger_msg(id, "<br>retry").await.unwrap());
    assert_eq!(
        s.get_log(id).await.unwrap().unwrap().trigger_msg.as_deref(),
        Some("ok<br>retry")
    );
    assert!(!s.append_trigger_msg(id + 1000, "x").await.unwrap());
});

backends!(db: log_list_filters_by_status_job_and_time, |db| {
    let s = &db.store;
    let g = new_group(s, "ll").await;
    let g2 = new_group(s, "ll2").await;
    let j1 = s.insert_job(&job(g, "a")).await.unwrap();
    let j2 = s.insert_job(&job(g2, "b")).await.unwrap();
    // success, failed run, trigger failure, running, not yet triggered
    let ok = s.insert_log(&cron_log(g, j1, 1_000)).await.unwrap();
    s.set_trigger_outcome(ok, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(ok, 200, None, 1_100).await.unwrap();
    let failed = s.insert_log(&cron_log(g, j1, 2_000)).await.unwrap();
    s.set_trigger_outcome(failed, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(failed, 502, Some("timeout"), 2_100)
        .await
        .unwrap();
    let trigger_failed = s.insert_log(&cron_log(g, j1, 3_000)).await.unwrap();
    let mut refused = accepted("http://e/");
    refused.trigger_code = 500;
    s.set_trigger_outcome(trigger_failed, &refused)
        .await
        .unwrap();
    let running = s.insert_log(&cron_log(g2, j2, 4_000)).await.unwrap();
    s.set_trigger_outcome(running, &accepted("http://e/"))
        .await
        .unwrap();
    s.insert_log(&cron_log(g2, j2, 5_000)).await.unwrap();

    let ids = |f: LogFilter| async move {
        s.list_logs(&LogFilter { limit: 100, ..f })
            .await
            .unwrap()
            .1
            .into_iter()
            .map(|l| l.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(LogFilter {
            status: Some(LogStatus::Success),
            ..Default::default()
        })
        .await,
        vec![ok]
    );
    assert_eq!(
        ids(LogFilter {
            status: Some(LogStatus::Fail),
            ..Default::default()
        })
        .await,
        vec![trigger_failed, failed]
    );
    assert_eq!(
        ids(LogFilter {
            status: Some(LogStatus::Running),
            ..Default::default()
        })
        .await,
        vec![running]
    );
    assert_eq!(
        ids(LogFilter {
            job_id: Some(j2),
            ..Default::default()
        })
        .await
        .len(),
        2
    );
    assert_eq!(
        ids(LogFilter {
            job_group: Some(g),
            ..Default::default()
        })
        .await
        .len(),
        3
    );
    assert_eq!(
        ids(LogFilter {
            from: Some(2_000),
            to: Some(4_000),
            ..Default::default()
        })
        .await,
        vec![trigger_failed, failed]
    );
    let (total, page) = s
        .list_logs(&LogFilter {
            offset: 1,
            limit: 2,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(total, 5);
    assert_eq!(page.len(), 2);

    let counts = s.count_logs(0, 10_000).await.unwrap();
    assert_eq!(
        (
            counts.total,
            counts.running,
            counts.success,
            counts.failed()
        ),
        (5, 2, 1, 2)
    );
    let counts = s.count_logs(10_000, 20_000).await.unwrap();
    assert_eq!(counts.total, 0);
});

backends!(db: failed_logs_are_claimed_once_for_alarms, |db| {
    let s = &db.store;
    let g = new_group(s, "fail").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    let ok = s.insert_log(&cron_log(g, j, 1)).await.unwrap();
    s.set_trigger_outcome(ok, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(ok, 200, None, 2).await.unwrap();
    let running = s.insert_log(&cron_log(g, j, 1)).await.unwrap();
    s.set_trigger_outcome(running, &accepted("http://e/"))
        .await
        .unwrap();
    let failed = s.insert_log(&cron_log(g, j, 1)).await.unwrap();
    s.set_trigger_outcome(failed, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(failed, 500, Some("boom"), 2).await.unwrap();
    let refused = s.insert_log(&cron_log(g, j, 1)).await.unwrap();
    let mut o = accepted("http://e/");
    o.trigger_code = 500;
    s.set_trigger_outcome(refused, &o).await.unwrap();

    assert_eq!(
        s.find_failed_log_ids(100).await.unwrap(),
        vec![failed, refused]
    );
    assert_eq!(s.find_failed_log_ids(1).await.unwrap(), vec![failed]);
    assert!(s
        .update_alarm_status(failed, alarm_status::DEFAULT, alarm_status::LOCKED)
        .await
        .unwrap());
    // a second admin loses the claim
    assert!(!s
        .update_alarm_status(failed, alarm_status::DEFAULT, alarm_status::LOCKED)
        .await
        .unwrap());
    assert!(s
        .update_alarm_status(failed, alarm_status::LOCKED, alarm_status::SENT)
        .await
        .unwrap());
    assert_eq!(s.find_failed_log_ids(100).await.unwrap(), vec![refused]);
    assert_eq!(
        s.get_log(failed).await.unwrap().unwrap().alarm_status,
        alarm_status::SENT
    );
});

backends!(db: failed_logs_wait_for_their_retry_interval, |db| {
    let s = &db.store;
    let g = new_group(s, "retry-wait").await;
    let mut waiting_job = job(g, "waits");
    waiting_job.retry_interval_secs = 30;
    let waits = s.insert_job(&waiting_job).await.unwrap();
    let at_once = s.insert_job(&job(g, "at once")).await.unwrap();
    // runs sent with retries left
    let retrying = |job: i32, at: i64| NewRunRow {
        executor_fail_retry_count: 2,
        ..cron_log(g, job, at)
    };

    // failed with a result at 10 s: due at 40 s
    let handled = s.insert_log(&retrying(waits, 1_000)).await.unwrap();
    s.set_trigger_outcome(handled, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(handled, 500, Some("boom"), 10_000)
        .await
        .unwrap();
    // the trigger itself failed at 5 s: due at 35 s
    let refused = s.insert_log(&retrying(waits, 5_000)).await.unwrap();
    let mut o = accepted("http://e/");
    o.trigger_code = 500;
    s.set_trigger_outcome(refused, &o).await.unwrap();
    // no retries left: only an alarm, which does not wait
    let last = s.insert_log(&cron_log(g, waits, 1_000)).await.unwrap();
    s.set_trigger_outcome(last, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(last, 500, None, 10_000).await.unwrap();
    // a job without an interval retries at once
    let quick = s.insert_log(&retrying(at_once, 1_000)).await.unwrap();
    s.set_trigger_outcome(quick, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(quick, 500, None, 10_000).await.unwrap();
    // a 24-day interval must not overflow 32-bit arithmetic
    let mut long_job = job(g, "long");
    long_job.retry_interval_secs = 2_100_000;
    let long = s.insert_job(&long_job).await.unwrap();
    let far = s.insert_log(&retrying(long, 1_000)).await.unwrap();
    s.set_trigger_outcome(far, &accepted("http://e/"))
        .await
        .unwrap();
    s.complete_log(far, 500, None, 10_000).await.unwrap();

    assert_eq!(
        s.find_failed_log_ids_due(20_000, 100).await.unwrap(),
        vec![last, quick]
    );
    assert_eq!(
        s.find_failed_log_ids_due(35_000, 100).await.unwrap(),
        vec![refused, last, quick]
    );
    assert_eq!(
        s.find_failed_log_ids_due(40_000, 100).await.unwrap(),
        vec![handled, refused, last, quick]
    );
    assert_eq!(
        s.find_failed_log_ids_due(40_000, 1).await.unwrap(),
        vec![handled]
    );
    // a result stored before the trigger's outcome waits for it (at most a minute)
    let early = s.insert_log(&retrying(at_once, 30_000)).await.unwrap();
    s.complete_log(early, 500, None, 30_100).await.unwrap();
    assert!(!s
        .find_failed_log_ids_due(40_000, 100)
        .await
        .unwrap()
        .contains(&early));
    assert!(s
        .find_failed_log_ids_due(90_000, 100)
        .await
        .unwrap()
        .contains(&early));
    s.set_trigger_outcome(early, &accepted("http://e/"))
        .await
        .unwrap();
    assert!(s
        .find_failed_log_ids_due(40_000, 100)
        .await
        .unwrap()
        .contains(&early));

    let far_due = 10_000 + 2_100_000_000;
    assert!(!s
        .find_failed_log_ids_due(far_due - 1, 100)
        .await
        .unwrap()
        .contains(&far));
    assert!(s
        .find_failed_log_ids_due(far_due, 100)
        .await
        .unwrap()
        .contains(&far));
});

backends!(db: lost_result_candidates_are_old_open_runs, |db| {
    let s = &db.store;
    let g = new_group(s, "lost").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    // a registration does not exclude a run: the monitor asks the executor
    s.upsert_registry("EXECUTOR", "lost", "http://alive/", "v2", 1_000, &BeatReport::default())
        .await
        .unwrap();
    let on_alive = s.insert_log(&cron_log(g, j, 1_000)).await.unwrap();
    s.set_trigger_outcome(on_alive, &accepted("http://alive/"))
        .await
        .unwrap();
    let on_gone = s.insert_log(&cron_log(g, j, 1_000)).await.unwrap();
    s.set_trigger_outcome(on_gone, &accepted("http://gone/"))
        .await
        .unwrap();
    let too_young = s.insert_log(&cron_log(g, j, 9_000)).await.unwrap();
    s.set_trigger_outcome(too_young, &accepted("http://gone/"))
        .await
        .unwrap();
    let finished = s.insert_log(&cron_log(g, j, 1_000)).await.unwrap();
    s.set_trigger_outcome(finished, &accepted("http://gone/"))
        .await
        .unwrap();
    s.complete_log(finished, 200, None, 2_000).await.unwrap();
    // refused by its executor: failed already, nothing to wait for
    let refused = s.insert_log(&cron_log(g, j, 1_000)).await.unwrap();
    let refusal = TriggerOutcome {
        trigger_code: 500,
        ..accepted("http://gone/")
    };
    s.set_trigger_outcome(refused, &refusal).await.unwrap();
    // its trigger's outcome never written: a candidate too, so that it does not stay open
    let unrecorded = s.insert_log(&cron_log(g, j, 1_000)).await.unwrap();

    assert_eq!(
        s.find_lost_log_ids(5_000, 0, 100).await.unwrap(),
        vec![on_alive, on_gone, unrecorded]
    );
    // paged by id
    assert_eq!(s.find_lost_log_ids(5_000, 0, 1).await.unwrap(), vec![on_alive]);
    assert_eq!(
        s.find_lost_log_ids(5_000, on_alive, 100).await.unwrap(),
        vec![on_gone, unrecorded]
    );
    assert!(s
        .find_lost_log_ids(5_000, unrecorded, 100)
        .await
        .unwrap()
        .is_empty());
});

backends!(db: logs_are_cleared_in_batches, |db| {
    let s = &db.store;
    let g = new_group(s, "clear").await;
    let g2 = new_group(s, "clear2").await;
    let j = s.insert_job(&job(g, "j")).await.unwrap();
    let j2 = s.insert_job(&job(g2, "j2")).await.unwrap();
    let mut ids = vec![];
    for t in 1..=10 {
        ids.push(s.insert_log(&cron_log(g, j, t * 1_000)).await.unwrap());
    }
    let other = s.insert_log(&cron_log(g2, j2, 1_000)).await.unwrap();

    let old = s
        .find_log_ids_to_clear(Some(g), None, Some(4_000), None, 100)
        .await
        .unwrap();
    assert_eq!(old, ids[..3].to_vec());
    let batch = s
        .find_log_ids_to_clear(None, Some(j), None, None, 4)
        .await
        .unwrap();
    assert_eq!(batch, ids[..4].to_vec());
    let keep_last = s
        .find_log_ids_to_clear(None, Some(j), None, Some(7), 100)
        .await
        .unwrap();
    assert_eq!(keep_last, ids[..3].to_vec());
    assert!(s
        .find_log_ids_to_clear(None, Some(j), None, Some(50), 100)
        .await
        .unwrap()
        .is_empty());
    let everything_before = s
        .find_log_ids_to_clear(None, None, Some(2_000), None, 100)
        .await
        .unwrap();
    assert_eq!(everything_before, vec![ids[0], other]);

    assert_eq!(s.delete_logs(&keep_last).await.unwrap(), 3);
    assert_eq!(s.delete_logs(&[]).await.unwrap(), 0);
    let (total, _) = s
        .list_logs(&LogFilter {
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(total, 8);
});

backends!(db: log_reports_upsert_per_day, |db| {
    let s = &db.store;
    let day = |d: i64| d * 86_400_000;
    let report = |d: i64, suc: i64| LogReport {
        trigger_day: day(d),
        running_count: 1,
        suc_count: suc,
        fail_count: 2,
        update_time: 7,
    };
    s.upsert_log_report(&report(1, 10)).await.unwrap();
    s.upsert_log_report(&report(2, 20)).await.unwrap();
    s.upsert_log_report(&report(1, 11)).await.unwrap();
    let reports = s.list_log_reports(day(0), day(3)).await.unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0], report(1, 11));
    assert_eq!(reports[1].suc_count, 20);
    assert_eq!(s.list_log_reports(day(2), day(3)).await.unwrap().len(), 1);
});
