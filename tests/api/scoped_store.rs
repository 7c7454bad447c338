//! The store functions added for the REST API, on SQLite, PostgreSQL and MySQL.

use jobwheel::model::{AddressType, JobGroup, JobInfo, ScheduleType, TRIGGER_STATUS_RUNNING};
use jobwheel::store::{JobFilter, LogFilter, Store};

use crate::kit::db::manual_log;

async fn group(store: &Store, app: &str) -> i32 {
    store
        .insert_group(&JobGroup {
            id: 0,
            app_name: app.into(),
            title: app.into(),
            address_type: AddressType::Auto,
            address_list: vec![],
            access_token: None,
            update_time: 1,
            max_concurrent_instances: 0,
            instance_overflow: jobwheel::model::InstanceOverflow::Skip,
        })
        .await
        .unwrap()
}

async fn job(store: &Store, group: i32, desc: &str) -> i32 {
    let mut j = JobInfo::new(group, desc, "handler");
    j.schedule_type = ScheduleType::Cron;
    j.schedule_conf = "0 0 3 * * ?".into();
    store.insert_job(&j).await.unwrap()
}

async fn log(store: &Store, group: i32, job: i32, t: i64) -> i64 {
    store.insert_log(&manual_log(group, job, t)).await.unwrap()
}

fn page() -> JobFilter {
    JobFilter {
        limit: 100,
        ..Default::default()
    }
}

backends!(db: scoped_lists_keep_to_the_groups, |db| {
    let s = &db.store;
    let a = group(s, "app-a").await;
    let b = group(s, "app-b").await;
    let c = group(s, "app-c").await;
    let ja = job(s, a, "alpha").await;
    let jb = job(s, b, "beta").await;
    job(s, c, "gamma").await;
    for (g, j) in [(a, ja), (b, jb), (b, jb)] {
        log(s, g, j, 1_000).await;
    }

    let (total, jobs) = s.list_jobs_scoped(&page(), None).await.unwrap();
    assert_eq!((total, jobs.len()), (3, 3));
    let (total, jobs) = s.list_jobs_scoped(&page(), Some(&[a, b])).await.unwrap();
    assert_eq!(total, 2);
    assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), vec![ja, jb]);
    // other filters combine with the scope
    let filter = JobFilter {
        job_desc: Some("bet".into()),
        ..page()
    };
    let (total, jobs) = s.list_jobs_scoped(&filter, Some(&[a, b])).await.unwrap();
    assert_eq!((total, jobs[0].id), (1, jb));
    assert_eq!(s.list_jobs_scoped(&page(), Some(&[])).await.unwrap().0, 0);

    let logs = LogFilter {
        limit: 100,
        ..Default::default()
    };
    assert_eq!(s.list_logs_scoped(&logs, None).await.unwrap().0, 3);
    let (total, rows) = s.list_logs_scoped(&logs, Some(&[b, c])).await.unwrap();
    assert_eq!(total, 2);
    assert!(rows.iter().all(|l| l.job_group == b));
    let only_a = LogFilter {
        job_group: Some(a),
        ..logs.clone()
    };
    assert_eq!(s.list_logs_scoped(&only_a, Some(&[b])).await.unwrap().0, 0);
    assert_eq!(s.list_logs_scoped(&logs, Some(&[])).await.unwrap().0, 0);
});

backends!(db: definition_updates_leave_schedule_and_script_alone, |db| {
    let s = &db.store;
    let g = group(s, "app-def").await;
    let id = job(s, g, "before").await;
    assert!(s.start_job(id, 5_000, 1).await.unwrap());
    assert!(s.save_glue(id, "echo 1", "v1", 7, 30).await.unwrap());
    let mut edited = s.get_job(id).await.unwrap().unwrap();
    edited.job_desc = "after".into();
    edited.author = "ops".into();
    edited.child_job_ids = vec![id + 100];
    edited.executor_timeout = 9;
    edited.glue_remark = "renamed".into();
    // what the scheduler and save_glue own must not be written back
    edited.trigger_status = 0;
    edited.trigger_next_time = 1;
    edited.trigger_last_time = 2;
    edited.glue_source = "echo stale".into();
    edited.glue_updatetime = 3;
    edited.update_time = 10;
    assert!(s.update_job_definition(&edited).await.unwrap());
    let got = s.get_job(id).await.unwrap().unwrap();
    assert_eq!(got.job_desc, "after");
    assert_eq!(got.author, "ops");
    assert_eq!(got.child_job_ids, vec![id + 100]);
    assert_eq!(got.executor_timeout, 9);
    assert_eq!(got.glue_remark, "renamed");
    assert_eq!(got.update_time, 10);
    assert_eq!(got.trigger_status, TRIGGER_STATUS_RUNNING);
    assert_eq!(got.trigger_next_time, 5_000);
    assert_eq!(got.glue_source, "echo 1");
    assert_eq!(got.glue_updatetime, 7);
    edited.id = 999_999;
    assert!(!s.update_job_definition(&edited).await.unwrap());
});
