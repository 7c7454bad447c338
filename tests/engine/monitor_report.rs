//! The log report and retention pass on SQLite, PostgreSQL and MySQL: daily counts for the last
//! three days in the admin's zone, retention in batches that keeps recent rows, expired sessions.

use std::time::Duration;

use chrono_tz::Tz;
use jobwheel::actors::monitor::MonitorSettings;
use jobwheel::actors::monitor_report::{
    day_start, local_date, report_pass, SETTLED_DAY_RECOUNT_MS,
};
use jobwheel::model::{AddressType, JobGroup, JobInfo, Role, Session, TriggerOutcome, User};
use jobwheel::store::{LogFilter, Store};

use crate::engine_support::{fast, wait_listed, Engine};
use crate::kit::app::admin_settings;
use crate::kit::db::cron_log;
use crate::kit::worker::Worker;
use crate::kit::TestApp;
use jobwheel::model::{GlueType, RouteStrategy};
use serde_json::{json, Value};

const DAY: i64 = 86_400_000;
/// 2024-07-10T12:00:00Z
const NOW: i64 = 1_720_612_800_000;

fn settings(tz: &str, retention_days: u32, batch: i64) -> MonitorSettings {
    let days = retention_days.to_string();
    let admin = admin_settings(&["--timezone", tz, "--log-retention-days", &days]);
    let mut m = MonitorSettings::from_admin(&admin);
    m.retention_batch = batch;
    m.retention_every = Duration::from_secs(24 * 3_600);
    m
}

async fn fixture(store: &Store) -> (i32, i32) {
    let g = store
        .insert_group(&JobGroup {
            id: 0,
            app_name: "report".into(),
            title: "report".into(),
            address_type: AddressType::Auto,
            address_list: vec![],
            access_token: None,
            update_time: 0,
            max_concurrent_instances: 0,
            instance_overflow: jobwheel::model::InstanceOverflow::Skip,
        })
        .await
        .unwrap();
    let j = store
        .insert_job(&JobInfo::new(g, "report job", "h"))
        .await
        .unwrap();
    (g, j)
}

/// A log at `at`: `trigger` code (0 = not sent yet) and, if `handle` > 0, a result.
async fn log_at(store: &Store, g: i32, j: i32, at: i64, trigger: i32, handle: i32) -> i64 {
    let id = store.insert_log(&cron_log(g, j, at)).await.unwrap();
    if trigger > 0 {
        let outcome = TriggerOutcome {
            trigger_code: trigger,
            trigger_msg: "t".into(),
            executor_address: Some("http://e/".into()),
        };
        store.set_trigger_outcome(id, &outcome).await.unwrap();
    }
    if handle > 0 {
        store.complete_log(id, handle, None, at + 10).await.unwrap();
    }
    id
}

async fn all_log_ids(store: &Store) -> Vec<i64> {
    let (_, logs) = store
        .list_logs(&LogFilter {
            limit: 10_000,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut ids: Vec<i64> = logs.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    ids
}

backends!(db: daily_counts_follow_the_admin_zone, |db| {
    let s = &db.store;
    let (g, j) = fixture(s).await;
    let tz: Tz = "Asia/Shanghai".parse().unwrap();
    // in Shanghai NOW is 20:00 on July 10th; its day began at 2024-07-09T16:00Z
    let today = day_start(tz, local_date(tz, NOW));
    assert_eq!(today, NOW - 20 * 3_600_000);
    log_at(s, g, j, today, 200, 200).await; // success, first instant of the day
    log_at(s, g, j, today + 1_000, 200, 0).await; // running
    log_at(s, g, j, today + 2_000, 0, 0).await; // not sent yet: running
    log_at(s, g, j, today + 3_000, 500, 0).await; // trigger failed
    log_at(s, g, j, today + 4_000, 200, 500).await; // run failed
    log_at(s, g, j, today - 1, 200, 200).await; // yesterday's last instant
    log_at(s, g, j, today - DAY - 1, 200, 502).await; // the day before yesterday
    log_at(s, g, j, today - 3 * DAY, 200, 200).await; // outside the window

    let report = report_pass(s, &settings("Asia/Shanghai", 0, 1_000), NOW, true)
        .await
        .unwrap();
    assert!(!report.retention_ran, "retention 0 keeps logs forever");
    let rows: Vec<(i64, i64, i64, i64)> = report
        .reports
        .iter()
        .map(|r| (r.trigger_day, r.running_count, r.suc_count, r.fail_count))
        .collect();
    assert_eq!(
        rows,
        vec![
            (today, 2, 1, 2),
            (today - DAY, 0, 1, 0),
            (today - 2 * DAY, 0, 0, 1),
        ]
    );
    let stored = s
        .list_log_reports(today - 5 * DAY, today + DAY)
        .await
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[2].trigger_day, today);
    assert_eq!(
        (
            stored[2].running_count,
            stored[2].suc_count,
            stored[2].fail_count
        ),
        (2, 1, 2)
    );
    assert_eq!(stored[2].update_time, NOW);

    // a second pass replaces the figures instead of adding rows
    log_at(s, g, j, today + 5_000, 200, 200).await;
    report_pass(s, &settings("Asia/Shanghai", 0, 1_000), NOW + 1, false)
        .await
        .unwrap();
    let stored = s
        .list_log_reports(today - 5 * DAY, today + DAY)
        .await
        .unwrap();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[2].suc_count, 2);
    assert_eq!(s.count_logs(0, i64::MAX).await.unwrap().total, 9);
});

backends!(db: settled_past_days_are_counted_again_only_now_and_then, |db| {
    let s = &db.store;
    let (g, j) = fixture(s).await;
    let utc = settings("UTC", 0, 1_000);
    let today = day_start(Tz::UTC, local_date(Tz::UTC, NOW));
    let (yesterday, before) = (today - DAY, today - 2 * DAY);
    log_at(s, g, j, yesterday + 1_000, 200, 200).await;
    let open = log_at(s, g, j, before + 1_000, 200, 0).await; // still running
    let days = |r: &jobwheel::actors::monitor_report::ReportPassReport| -> Vec<i64> {
        r.reports.iter().map(|r| r.trigger_day).collect()
    };
    let counts = |day: i64| async move {
        let stored = s.list_log_reports(day, day + 1).await.unwrap();
        let r = &stored[0];
        (r.running_count, r.suc_count, r.fail_count)
    };
    let first = report_pass(s, &utc, NOW, false).await.unwrap();
    assert_eq!(days(&first), [today, yesterday, before]);

    // yesterday is settled: a run added to it is not seen by the next pass; the day before
    // still had a running run, and today is always counted
    log_at(s, g, j, yesterday + 2_000, 200, 200).await;
    s.complete_log(open, 500, None, NOW).await.unwrap();
    let second = report_pass(s, &utc, NOW + 60_000, false).await.unwrap();
    assert_eq!(days(&second), [today, before]);
    assert_eq!(counts(yesterday).await, (0, 1, 0));
    assert_eq!(counts(before).await, (0, 0, 1));

    // both past days settled now, until their counts are 10 minutes old
    let third = report_pass(s, &utc, NOW + 120_000, false).await.unwrap();
    assert_eq!(days(&third), [today]);
    let recount = NOW + SETTLED_DAY_RECOUNT_MS;
    let fourth = report_pass(s, &utc, recount, false).await.unwrap();
    assert_eq!(days(&fourth), [today, yesterday]);
    assert_eq!(counts(yesterday).await, (0, 2, 0));
});

backends!(db: a_day_counted_before_its_end_is_counted_again_after_it, |db| {
    let s = &db.store;
    let (g, j) = fixture(s).await;
    let utc = settings("UTC", 0, 1_000);
    let today = day_start(Tz::UTC, local_date(Tz::UTC, NOW));
    log_at(s, g, j, today + 1_000, 200, 200).await;
    // counted as "today" at 23:59:30; the next pass, after midnight, counts it as yesterday
    let before_midnight = today + DAY - 30_000;
    report_pass(s, &utc, before_midnight, false).await.unwrap();
    log_at(s, g, j, today + DAY - 1_000, 200, 200).await;
    let after = report_pass(s, &utc, today + DAY + 30_000, false).await.unwrap();
    let days: Vec<i64> = after.reports.iter().map(|r| r.trigger_day).collect();
    assert!(days.contains(&today), "{days:?}");
    let stored = s.list_log_reports(today, today + 1).await.unwrap();
    assert_eq!(stored[0].suc_count, 2);
});

backends!(db: retention_deletes_old_logs_in_batches, |db| {
    let s = &db.store;
    let (g, j) = fixture(s).await;
    // UTC, 30 days: everything triggered before 2024-06-10T00:00Z goes
    let cutoff = day_start(Tz::UTC, local_date(Tz::UTC, NOW)) - 30 * DAY;
    for i in 0..24 {
        log_at(s, g, j, cutoff - DAY - i * 60_000, 200, 200).await;
    }
    log_at(s, g, j, cutoff - 1, 200, 500).await;
    let mut kept = vec![
        log_at(s, g, j, cutoff, 200, 200).await,
        log_at(s, g, j, NOW - DAY, 200, 200).await,
        log_at(s, g, j, NOW, 200, 0).await,
    ];
    kept.sort_unstable();

    // not due: nothing deleted
    let report = report_pass(s, &settings("UTC", 30, 10), NOW, false)
        .await
        .unwrap();
    assert!(!report.retention_ran);
    assert_eq!(all_log_ids(s).await.len(), 28);

    let report = report_pass(s, &settings("UTC", 30, 10), NOW, true)
        .await
        .unwrap();
    assert!(report.retention_ran);
    assert_eq!(report.logs_deleted, 25);
    assert_eq!(report.batches, 3, "25 rows in batches of 10");
    assert_eq!(all_log_ids(s).await, kept);

    // a second run finds nothing more
    let report = report_pass(s, &settings("UTC", 30, 10), NOW, true)
        .await
        .unwrap();
    assert_eq!((report.logs_deleted, report.batches), (0, 0));
    assert_eq!(all_log_ids(s).await, kept);
});

backends!(db: jobs_keep_their_own_retention, |db| {
    let s = &db.store;
    let (g, plain) = fixture(s).await;
    let with = |desc: &str, days: i32, runs: i32| {
        let mut job = JobInfo::new(g, desc, "h");
        job.log_retention_days = days;
        job.log_retention_runs = runs;
        job
    };
    // the admin keeps 30 days; one job its newest 3 runs, one 90 days, one 7 days and 2 runs
    let last3 = s.insert_job(&with("newest three", 0, 3)).await.unwrap();
    let long = s.insert_job(&with("ninety days", 90, 0)).await.unwrap();
    let short = s.insert_job(&with("a week, two runs", 7, 2)).await.unwrap();
    let today = day_start(Tz::UTC, local_date(Tz::UTC, NOW));
    let ages = [60, 40, 20, 10, 5, 1]; // days before today
    let mut rows: Vec<(i32, i64, i64)> = Vec::new();
    for job in [plain, last3, long, short] {
        for age in ages {
            let id = log_at(s, g, job, today - age * DAY + 3_600_000, 200, 200).await;
            rows.push((job, age, id));
        }
    }
    let report = report_pass(s, &settings("UTC", 30, 4), NOW, true)
        .await
        .unwrap();
    assert!(report.retention_ran);
    let left = all_log_ids(s).await;
    let kept_ages = |job: i32| -> Vec<i64> {
        rows.iter()
            .filter(|(j, _, id)| *j == job && left.contains(id))
            .map(|(_, age, _)| *age)
            .collect()
    };
    assert_eq!(kept_ages(plain), [20, 10, 5, 1], "the admin's 30 days");
    assert_eq!(kept_ages(last3), [10, 5, 1], "its newest 3 (and the 30 days)");
    assert_eq!(kept_ages(long), [60, 40, 20, 10, 5, 1], "its own 90 days");
    assert_eq!(kept_ages(short), [5, 1], "its 7 days and newest 2");
    // what a job's own bounds removed is to be dropped on its executor too; what the admin's
    // days removed goes by the executors' own days, as XXL-JOB's does
    let mut dropped: Vec<(i64, i64, Option<String>)> = report
        .dropped
        .iter()
        .map(|p| (p.log_id, p.trigger_time, p.executor_address.clone()))
        .collect();
    dropped.sort_unstable();
    let expected: Vec<(i64, i64, Option<String>)> = rows
        .iter()
        .filter(|(j, age, _)| (*j == last3 && *age == 20) || (*j == short && *age >= 10))
        .map(|(_, age, id)| (*id, today - age * DAY + 3_600_000, Some("http://e/".into())))
        .collect();
    assert_eq!(dropped, expected);
    assert!(report.dropped.iter().all(|p| p.job_group == g));

    // with the admin keeping everything, a job's own bounds still hold
    let runs = s.insert_job(&with("two runs", 0, 2)).await.unwrap();
    for age in ages {
        log_at(s, g, runs, today - age * DAY, 200, 200).await;
    }
    let before = all_log_ids(s).await.len();
    let report = report_pass(s, &settings("UTC", 0, 100), NOW, true)
        .await
        .unwrap();
    assert!(report.retention_ran);
    assert_eq!(report.logs_deleted, 4, "only the two-run job's four oldest");
    assert_eq!(report.dropped.len(), 4);
    assert_eq!(all_log_ids(s).await.len(), before - 4);
});

backends!(db: expired_sessions_are_removed, |db| {
    let s = &db.store;
    let user = s
        .insert_user(&User {
            id: 0,
            username: "u".into(),
            password_hash: "x".into(),
            role: Role::User,
            permission: vec![],
        })
        .await
        .unwrap();
    for (hash, expire) in [("old", NOW - 1), ("now", NOW), ("live", NOW + DAY)] {
        s.insert_session(&Session {
            token_hash: hash.into(),
            user_id: user,
            created_time: NOW - DAY,
            expire_time: expire,
        })
        .await
        .unwrap();
    }
    let report = report_pass(s, &settings("UTC", 0, 1_000), NOW, false)
        .await
        .unwrap();
    assert_eq!(report.sessions_deleted, 2);
    assert!(s.get_session("live", NOW).await.unwrap().is_some());
});

/// Reads run `log_id`'s log from `worker` directly, as the admin's `/log` call does.
async fn worker_log(app: &TestApp, worker: &Worker, log_id: i64, at: i64) -> Value {
    let mut answer = awc::Client::default()
        .post(format!("{}log", worker.address()))
        .insert_header(("XXL-JOB-ACCESS-TOKEN", app.token.as_str()))
        .send_json(&json!({"logDateTime": at, "logId": log_id, "fromLineNum": 1}))
        .await
        .expect("the executor answers");
    let body: Value = answer.json().await.expect("an envelope");
    body["data"].clone()
}

backends!(app: executors_drop_the_lines_of_runs_a_jobs_own_bounds_removed, |b| b.monitors(|m| {
    fast(m);
    m.report_interval = Duration::from_millis(300);
    m.retention_every = Duration::ZERO;
}), |admin| {
    let group = admin.db_group("dropping").await;
    let worker = Worker::start(admin, "dropping", &["work"]).await;
    let job = admin
        .db_job(group, |j| {
            j.glue_type = GlueType::Bean;
            j.executor_handler = "work".into();
            j.executor_route_strategy = RouteStrategy::First;
            j.log_retention_runs = 1;
        })
        .await;
    wait_listed(admin, group, 1).await;
    // three runs one after the other, each with lines on the executor
    let mut runs = Vec::new();
    for _ in 0..3 {
        let id = admin.manual(job).await[0];
        admin
            .wait_until("the run ends", Duration::from_secs(10), || async {
                admin.logs_of(job).await.iter().any(|r| r.id == id && r.handle_code == 200)
            })
            .await;
        let row = admin.logs_of(job).await.into_iter().find(|r| r.id == id).expect("its row");
        let page = worker_log(admin, &worker, id, row.trigger_time).await;
        assert!(page["toLineNum"].as_i64().unwrap_or(0) > 0, "run {id} has lines: {page}");
        runs.push((id, row.trigger_time));
    }
    // the job keeps its newest run: the rows of the first two go, and then their lines
    admin
        .wait_until("the executor drops the two older runs' lines", Duration::from_secs(15), || async {
            let rows: Vec<i64> = admin.logs_of(job).await.iter().map(|r| r.id).collect();
            let mut gone = rows == [runs[2].0];
            for (id, at) in &runs[..2] {
                gone &= worker_log(admin, &worker, *id, *at).await["toLineNum"] == 0;
            }
            gone
        })
        .await;
    let (id, at) = runs[2];
    let kept = worker_log(admin, &worker, id, at).await;
    assert!(kept["toLineNum"].as_i64().unwrap_or(0) > 0, "the kept run keeps its lines: {kept}");
    worker.stop().await;
});
