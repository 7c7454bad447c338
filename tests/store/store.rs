//! Every store function, run with the same body on SQLite, PostgreSQL and MySQL.

use std::time::Duration;

use jobwheel::model::{
    alarm_status, AddressType, ApiToken, BlockStrategy, DueJob, GlueType, JobGroup, JobInfo,
    LogReport, MisfireStrategy, NewRunRow, Role, RouteStrategy, ScheduleType, Session,
    TriggerOutcome, TriggerType, User, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use jobwheel::store::{
    Backend, ClaimKey, JobFilter, LogFilter, LogStatus, ScheduleUpdate, Share, Store, StoreError,
};

use crate::kit::db::cron_log;

fn group(app: &str) -> JobGroup {
    JobGroup {
        id: 0,
        app_name: app.to_string(),
        title: format!("{app} title"),
        address_type: AddressType::Auto,
        address_list: vec![],
        access_token: None,
        update_time: 1_000,
    }
}

pub(crate) async fn new_group(store: &Store, app: &str) -> i32 {
    store.insert_group(&group(app)).await.unwrap()
}

pub(crate) fn job(group: i32, desc: &str) -> JobInfo {
    let mut j = JobInfo::new(group, desc, "demoJobHandler");
    j.add_time = 1_000;
    j.update_time = 1_000;
    j.author = "ops".into();
    j.schedule_type = ScheduleType::Cron;
    j.schedule_conf = "0/5 * * * * ?".into();
    j
}

/// Inserts one running job per fire time in `next_times` (named `j0`, `j1`, …); their ids.
async fn running_jobs(
    s: &Store,
    group: i32,
    next_times: impl IntoIterator<Item = i64>,
) -> Vec<i32> {
    let mut ids = vec![];
    for (i, next) in next_times.into_iter().enumerate() {
        let mut j = job(group, &format!("j{i}"));
        j.trigger_status = TRIGGER_STATUS_RUNNING;
        j.trigger_next_time = next;
        ids.push(s.insert_job(&j).await.unwrap());
    }
    ids
}

pub(crate) fn accepted(address: &str) -> TriggerOutcome {
    TriggerOutcome {
        trigger_code: 200,
        trigger_msg: "ok".into(),
        executor_address: Some(address.to_string()),
    }
}

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

backends!(db: jobs_round_trip_every_field, |db| {
    let s = &db.store;
    let g = new_group(s, "jobs").await;
    let mut j = job(g, "nightly report");
    j.alarm_email = "a@x, b@x".into();
    j.alarm_webhook = "http://hook/".into();
    j.timezone = "Asia/Shanghai".into();
    j.misfire_strategy = MisfireStrategy::FireOnceNow;
    j.executor_route_strategy = RouteStrategy::ConsistentHash;
    j.executor_param = "é-中 param".into();
    j.executor_block_strategy = BlockStrategy::CoverEarly;
    j.executor_timeout = 30;
    j.executor_fail_retry_count = 2;
    j.retry_interval_secs = 15;
    j.glue_type = GlueType::GlueShell;
    j.glue_source = "#!/bin/bash\necho hi\n".into();
    j.glue_remark = "first".into();
    j.glue_updatetime = 1_234;
    j.child_job_ids = vec![7, 8];
    j.trigger_status = TRIGGER_STATUS_RUNNING;
    j.trigger_last_time = 11;
    j.trigger_next_time = 22;
    let id = s.insert_job(&j).await.unwrap();
    let got = s.get_job(id).await.unwrap().unwrap();
    j.id = id;
    assert_eq!(got, j);

    let mut changed = got.clone();
    changed.job_desc = "weekly report".into();
    changed.add_time = 99_999; // not updatable
    changed.child_job_ids = vec![];
    changed.schedule_type = ScheduleType::FixDelay;
    changed.schedule_conf = "30".into();
    assert!(s.update_job(&changed).await.unwrap());
    let got = s.get_job(id).await.unwrap().unwrap();
    assert_eq!(got.job_desc, "weekly report");
    assert_eq!(got.add_time, 1_000);
    assert!(got.child_job_ids.is_empty());
    assert_eq!(got.schedule_type, ScheduleType::FixDelay);

    assert!(s.get_job(id + 1000).await.unwrap().is_none());
    let missing = JobInfo {
        id: id + 1000,
        ..got.clone()
    };
    assert!(!s.update_job(&missing).await.unwrap());
});

backends!(db: job_list_filters_and_pages, |db| {
    let s = &db.store;
    let g1 = new_group(s, "g1").await;
    let g2 = new_group(s, "g2").await;
    for i in 0..5 {
        let mut j = job(g1, &format!("alpha {i}"));
        j.author = if i % 2 == 0 { "alice" } else { "bob" }.into();
        s.insert_job(&j).await.unwrap();
    }
    let mut special = job(g2, "100%_done");
    special.executor_handler = "httpJobHandler".into();
    special.trigger_status = TRIGGER_STATUS_RUNNING;
    let special_id = s.insert_job(&special).await.unwrap();

    let all = JobFilter {
        limit: 100,
        ..Default::default()
    };
    let (total, jobs) = s.list_jobs(&all).await.unwrap();
    assert_eq!((total, jobs.len()), (6, 6));

    let page = JobFilter {
        job_group: Some(g1),
        offset: 3,
        limit: 2,
        ..Default::default()
    };
    let (total, jobs) = s.list_jobs(&page).await.unwrap();
    assert_eq!(total, 5);
    assert_eq!(
        jobs.iter().map(|j| j.job_desc.as_str()).collect::<Vec<_>>(),
        vec!["alpha 3", "alpha 4"]
    );

    let by_author = JobFilter {
        author: Some("ali".into()),
        limit: 100,
        ..Default::default()
    };
    assert_eq!(s.list_jobs(&by_author).await.unwrap().0, 3);

    // LIKE wildcards in the filter text match literally
    let literal = JobFilter {
        job_desc: Some("%_".into()),
        limit: 100,
        ..Default::default()
    };
    let (total, jobs) = s.list_jobs(&literal).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(jobs[0].id, special_id);

    let running = JobFilter {
        trigger_status: Some(TRIGGER_STATUS_RUNNING),
        executor_handler: Some("http".into()),
        limit: 100,
        ..Default::default()
    };
    assert_eq!(s.list_jobs(&running).await.unwrap().0, 1);

    assert_eq!(s.count_jobs().await.unwrap(), 6);
    assert_eq!(s.count_jobs_in_group(g1).await.unwrap(), 5);
    assert_eq!(s.count_jobs_in_group(g2).await.unwrap(), 1);

    let ids: Vec<i32> = s
        .get_jobs(&[special_id, 424242])
        .await
        .unwrap()
        .iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(ids, vec![special_id]);
    assert!(s.get_jobs(&[]).await.unwrap().is_empty());
});

backends!(db: start_stop_and_next_fire_time, |db| {
    let s = &db.store;
    let g = new_group(s, "sched").await;
    let id = s.insert_job(&job(g, "j")).await.unwrap();

    assert!(s.start_job(id, 50_000, 2_000).await.unwrap());
    let got = s.get_job(id).await.unwrap().unwrap();
    assert_eq!(got.trigger_status, TRIGGER_STATUS_RUNNING);
    assert_eq!(got.trigger_next_time, 50_000);
    assert_eq!(got.update_time, 2_000);

    assert!(s.set_next_fire_time(id, 60_000).await.unwrap());
    assert_eq!(
        s.get_job(id).await.unwrap().unwrap().trigger_next_time,
        60_000
    );

    // FIX_DELAY: resumed only while waiting for its run
    assert!(!s.resume_after_run(id, 65_000).await.unwrap());
    assert!(s
        .set_next_fire_time(id, jobwheel::model::AWAITING_COMPLETION)
        .await
        .unwrap());
    assert!(s.resume_after_run(id, 65_000).await.unwrap());
    assert!(!s.resume_after_run(id, 66_000).await.unwrap());
    assert_eq!(
        s.get_job(id).await.unwrap().unwrap().trigger_next_time,
        65_000
    );

    assert!(s.stop_job(id, 3_000).await.unwrap());
    let got = s.get_job(id).await.unwrap().unwrap();
    assert_eq!(
        (got.trigger_status, got.trigger_next_time),
        (TRIGGER_STATUS_STOPPED, 0)
    );
    // a stopped job's fire time is not moved (FIX_DELAY completion after a stop)
    assert!(!s.set_next_fire_time(id, 70_000).await.unwrap());
    assert!(!s.start_job(id + 100, 1, 1).await.unwrap());
    assert!(!s.stop_job(id + 100, 1).await.unwrap());
});

backends!(db: glue_versions_are_saved_and_pruned, |db| {
    let s = &db.store;
    let g = new_group(s, "glue").await;
    let mut j = job(g, "script");
    j.glue_type = GlueType::GluePython;
    let id = s.insert_job(&j).await.unwrap();
    for v in 1..=5 {
        assert!(s
            .save_glue(id, &format!("print({v})"), &format!("v{v}"), 10_000 + v, 3)
            .await
            .unwrap());
    }
    let got = s.get_job(id).await.unwrap().unwrap();
    assert_eq!(got.glue_source, "print(5)");
    assert_eq!(got.glue_remark, "v5");
    assert_eq!(got.glue_updatetime, 10_005);

    let versions = s.list_glue_versions(id).await.unwrap();
    assert_eq!(
        versions
            .iter()
            .map(|v| v.glue_remark.as_str())
            .collect::<Vec<_>>(),
        vec!["v5", "v4", "v3"]
    );
    assert_eq!(versions[0].glue_type, GlueType::GluePython);
    assert_eq!(versions[0].glue_source, "print(5)");
    assert_eq!(s.prune_glue_versions(id, 1).await.unwrap(), 2);
    assert_eq!(s.list_glue_versions(id).await.unwrap().len(), 1);
    assert!(!s.save_glue(id + 100, "x", "y", 1, 3).await.unwrap());
});

backends!(db: deleting_a_job_removes_its_logs_and_glue, |db| {
    let s = &db.store;
    let g = new_group(s, "del").await;
    let id = s.insert_job(&job(g, "doomed")).await.unwrap();
    let keep = s.insert_job(&job(g, "kept")).await.unwrap();
    s.save_glue(id, "x", "v", 1, 30).await.unwrap();
    s.insert_log(&cron_log(g, id, 100)).await.unwrap();
    let kept_log = s.insert_log(&cron_log(g, keep, 100)).await.unwrap();
    assert!(s.delete_job(id).await.unwrap());
    assert!(!s.delete_job(id).await.unwrap());
    assert!(s.get_job(id).await.unwrap().is_none());
    assert!(s.list_glue_versions(id).await.unwrap().is_empty());
    let all = LogFilter {
        limit: 100,
        ..Default::default()
    };
    let (total, logs) = s.list_logs(&all).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(logs[0].id, kept_log);
});

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
    s.upsert_registry("EXECUTOR", "lost", "http://alive/", "v2", 1_000)
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

backends!(db: registry_upserts_and_expires, |db| {
    let s = &db.store;
    s.upsert_registry("EXECUTOR", "app", "http://b:1/", "v2", 1_000)
        .await
        .unwrap();
    s.upsert_registry("EXECUTOR", "app", "http://a:1/", "v2", 1_000)
        .await
        .unwrap();
    s.upsert_registry("EXECUTOR", "other", "http://c:1/", "v2", 1_000)
        .await
        .unwrap();
    // a heartbeat refreshes the row instead of adding one
    s.upsert_registry("EXECUTOR", "app", "http://b:1/", "v3.5", 5_000)
        .await
        .unwrap();
    let live = s.find_live_registry(0).await.unwrap();
    assert_eq!(live.len(), 3);
    assert_eq!(
        live.iter()
            .map(|r| r.registry_value.as_str())
            .collect::<Vec<_>>(),
        vec!["http://a:1/", "http://b:1/", "http://c:1/"]
    );
    let b = s
        .find_registration("http://b:1/", 0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((b.protocol.as_str(), b.update_time), ("v3.5", 5_000));
    assert!(s
        .find_registration("http://b:1/", 5_000)
        .await
        .unwrap()
        .is_none());

    let app = s.find_live_registry_for("app", 0).await.unwrap();
    assert_eq!(
        app.iter()
            .map(|r| r.registry_value.as_str())
            .collect::<Vec<_>>(),
        vec!["http://a:1/", "http://b:1/"]
    );
    assert_eq!(
        s.find_live_registry_for("app", 2_000).await.unwrap().len(),
        1
    );
    assert!(s
        .find_live_registry_for("none", 0)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(s.find_live_registry(2_000).await.unwrap().len(), 1);
    assert_eq!(s.remove_dead_registry(2_000).await.unwrap(), 2);
    assert_eq!(s.find_live_registry(0).await.unwrap().len(), 1);
    assert!(s
        .remove_registry("EXECUTOR", "app", "http://b:1/")
        .await
        .unwrap());
    assert!(!s
        .remove_registry("EXECUTOR", "app", "http://b:1/")
        .await
        .unwrap());
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

backends!(db: users_sessions_and_tokens, |db| {
    let s = &db.store;
    assert_eq!(s.count_users().await.unwrap(), 0);
    let mut u = User {
        id: 0,
        username: "alice".into(),
        password_hash: "$argon2id$x".into(),
        role: Role::User,
        permission: vec![1, 2],
    };
    let id = s.insert_user(&u).await.unwrap();
    u.id = id;
    assert_eq!(s.get_user(id).await.unwrap().unwrap(), u);
    assert_eq!(s.get_user_by_name("alice").await.unwrap().unwrap(), u);
    assert!(matches!(
        s.insert_user(&u).await,
        Err(StoreError::Duplicate(_))
    ));
    u.role = Role::Admin;
    u.permission = vec![];
    u.password_hash = "$argon2id$y".into();
    assert!(s.update_user(&u).await.unwrap());
    assert_eq!(s.get_user(id).await.unwrap().unwrap(), u);
    let bob = s
        .insert_user(&User {
            id: 0,
            username: "bob".into(),
            ..u.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        s.list_users()
            .await
            .unwrap()
            .iter()
            .map(|u| u.username.as_str())
            .collect::<Vec<_>>(),
        vec!["alice", "bob"]
    );

    let session = Session {
        token_hash: "h1".into(),
        user_id: id,
        created_time: 10,
        expire_time: 100,
    };
    s.insert_session(&session).await.unwrap();
    s.insert_session(&Session {
        token_hash: "h2".into(),
        expire_time: 50,
        ..session.clone()
    })
    .await
    .unwrap();
    assert_eq!(s.get_session("h1", 20).await.unwrap().unwrap(), session);
    assert!(s.get_session("h1", 100).await.unwrap().is_none(), "expired");
    assert_eq!(s.delete_expired_sessions(60).await.unwrap(), 1);
    assert!(s.delete_session("h1").await.unwrap());
    assert!(!s.delete_session("h1").await.unwrap());

    let token = ApiToken {
        id: 0,
        name: "ci".into(),
        token_hash: "th".into(),
        user_id: id,
        created_time: 10,
        last_used_time: 0,
        expire_time: 0,
    };
    let tid = s.insert_api_token(&token).await.unwrap();
    assert!(matches!(
        s.insert_api_token(&token).await,
        Err(StoreError::Duplicate(_))
    ));
    let used = s.use_api_token("th", 500).await.unwrap().unwrap();
    assert_eq!((used.id, used.last_used_time), (tid, 500));
    assert!(s.use_api_token("nope", 500).await.unwrap().is_none());
    let expiring = s
        .insert_api_token(&ApiToken {
            token_hash: "th2".into(),
            expire_time: 100,
            ..token.clone()
        })
        .await
        .unwrap();
    assert!(
        s.use_api_token("th2", 200).await.unwrap().is_none(),
        "expired"
    );
    assert_eq!(
        s.list_api_tokens(id)
            .await
            .unwrap()
            .iter()
            .map(|t| t.id)
            .collect::<Vec<_>>(),
        vec![expiring, tid]
    );
    assert!(s.delete_api_token(expiring).await.unwrap());
    assert!(!s.delete_api_token(expiring).await.unwrap());

    s.insert_session(&Session {
        token_hash: "h3".into(),
        ..session.clone()
    })
    .await
    .unwrap();
    assert!(s.delete_user(id).await.unwrap());
    assert!(s.get_user(id).await.unwrap().is_none());
    assert!(s.get_session("h3", 20).await.unwrap().is_none());
    assert!(s.list_api_tokens(id).await.unwrap().is_empty());
    assert!(!s.delete_user(id).await.unwrap());
    assert!(s.get_user(bob).await.unwrap().is_some());
});

/// Claims of `jobs` that fire their due time and move on to `next`.
fn next_fire_at(jobs: &[DueJob], next: i64) -> Vec<ScheduleUpdate> {
    jobs.iter()
        .map(|j| ScheduleUpdate {
            id: j.id,
            expected_next: j.trigger_next_time,
            last: j.trigger_next_time,
            next,
            stop: false,
        })
        .collect()
}

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

backends!(db: jobs_load_in_bulk, |db| {
    let s = &db.store;
    let g = new_group(s, "bulk").await;
    assert_eq!(s.insert_jobs_bulk(&[]).await.unwrap(), 0);
    let jobs: Vec<JobInfo> = (0..1_203)
        .map(|i| {
            let mut j = job(g, &format!("bulk {i}"));
            j.trigger_status = TRIGGER_STATUS_RUNNING;
            j.trigger_next_time = 5_000 + i64::from(i);
            j
        })
        .collect();
    assert_eq!(s.insert_jobs_bulk(&jobs).await.unwrap(), 1_203);
    assert_eq!(s.count_jobs().await.unwrap(), 1_203);
    let filter = JobFilter {
        job_group: Some(g),
        limit: 2_000,
        ..Default::default()
    };
    let (total, stored) = s.list_jobs(&filter).await.unwrap();
    assert_eq!(total, 1_203);
    let last = stored.iter().find(|j| j.job_desc == "bulk 1202").unwrap();
    assert_eq!(last.trigger_next_time, 6_202);
    assert_eq!(last.schedule_conf, "0/5 * * * * ?");
    assert_eq!(last.trigger_status, TRIGGER_STATUS_RUNNING);
    // the pre-read sees them like singly inserted jobs
    let mut tx = s.begin_schedule().await.unwrap();
    assert_eq!(tx.due_jobs(5_099, 10_000, None).await.unwrap().len(), 100);
    tx.commit().await.unwrap();
    // more ids than one statement takes, with unknown ones among them
    let mut wanted: Vec<i32> = stored.iter().map(|j| j.id).collect();
    wanted.push(i32::MAX);
    let got = s.get_jobs(&wanted).await.unwrap();
    assert_eq!(got.len(), 1_203);
    let mut got_ids: Vec<i32> = got.iter().map(|j| j.id).collect();
    got_ids.sort_unstable();
    got_ids.dedup();
    assert_eq!(got_ids.len(), 1_203, "each job once");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch_databases_come_and_go() {
    for var in [crate::kit::db::PG_ENV, crate::kit::db::MYSQL_ENV] {
        let Ok(server) = std::env::var(var) else {
            eprintln!("skipping scratch database test: {var} is not set");
            continue;
        };
        let name = format!("jwscratch_{}", uuid::Uuid::new_v4().simple());
        let url = Store::create_scratch_database(&server, &name)
            .await
            .unwrap();
        let store = Store::connect(&url, &Default::default()).await.unwrap();
        store.migrate().await.unwrap();
        let g = new_group(&store, "scratch").await;
        store.insert_job(&job(g, "in scratch")).await.unwrap();
        assert_eq!(store.count_jobs().await.unwrap(), 1);
        store.close().await;
        Store::drop_scratch_database(&server, &name).await.unwrap();
        // dropping twice is fine, and a fresh one with the same name starts empty
        Store::drop_scratch_database(&server, &name).await.unwrap();
        let url = Store::create_scratch_database(&server, &name)
            .await
            .unwrap();
        let store = Store::connect(&url, &Default::default()).await.unwrap();
        store.migrate().await.unwrap();
        assert_eq!(store.count_jobs().await.unwrap(), 0);
        store.close().await;
        Store::drop_scratch_database(&server, &name).await.unwrap();
    }
}

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
    assert_eq!(indexes.len(), 5, "{indexes:?}");
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
