//! Job definitions (`job_info`) and their script versions.

use jobwheel::model::{
    BlockStrategy, GlueType, JobInfo, MisfireStrategy, RouteStrategy, ScheduleType,
    TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use jobwheel::store::{JobFilter, LogFilter};

use crate::kit::db::cron_log;

use crate::support::*;

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

    // an edit's new next fire time lands only on the times it read
    let last = s.get_job(id).await.unwrap().unwrap().trigger_last_time;
    assert!(!s.reschedule_job(id, (last, 64_000), 80_000).await.unwrap(), "a pass moved them");
    assert!(s.reschedule_job(id, (last, 65_000), 80_000).await.unwrap());
    assert!(s.reschedule_job(id, (last, 80_000), 80_000).await.unwrap(), "unchanged is found");
    assert_eq!(s.get_job(id).await.unwrap().unwrap().trigger_next_time, 80_000);

    assert!(s.stop_job(id, 3_000).await.unwrap());
    let got = s.get_job(id).await.unwrap().unwrap();
    assert_eq!(
        (got.trigger_status, got.trigger_next_time),
        (TRIGGER_STATUS_STOPPED, 0)
    );
    assert!(!s.reschedule_job(id, (got.trigger_last_time, 0), 90_000).await.unwrap(), "stopped");
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
