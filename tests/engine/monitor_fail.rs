//! The fail monitor on a running admin, with a fake executor over HTTP: retries (count and
//! interval) and webhook alarms, and the turns admins of one database take at monitor passes,
//! on SQLite, PostgreSQL and MySQL.

use std::time::{Duration, Instant};

use crate::engine_support::*;
use crate::kit::{expect_within, FakeExecutor, TestApp};
use jobwheel::actors::dispatch::{trigger_and_wait, Trigger};
use jobwheel::actors::monitor_fail::RETRY_NOTE;
use jobwheel::actors::trigger::TriggerReport;
use jobwheel::metrics::AdminMetrics;
use jobwheel::model::{alarm_status, JobInfo, RunRow, TriggerType};
use jobwheel::startup::AdminActors;
use jobwheel::store::{Backend, Store};

fn settled(logs: &[RunRow], n: usize) -> bool {
    logs.len() == n
        && logs
            .iter()
            .all(|l| l.alarm_status == alarm_status::SENT || l.alarm_status == alarm_status::FAILED)
}

/// A job (handler `failing`, `edit` applied) in a new group `app`, whose runs a registered
/// [`failing`] executor takes, triggered by hand once through `actors` (`admin`'s or another
/// admin's): the executor (kept for the test's length), the group, the job and the report.
async fn trigger_failing_job(
    admin: &TestApp,
    actors: &AdminActors,
    app: &str,
    edit: impl FnOnce(&mut JobInfo),
) -> (FakeExecutor, i32, i32, TriggerReport) {
    let executor = FakeExecutor::start(&admin.base, &admin.token, failing());
    executor.register(app).await;
    let g = new_group(&admin.store, app).await;
    let mut j = job(g, app, "failing");
    edit(&mut j);
    let job_id = admin.store.insert_job(&j).await.unwrap();
    let report = trigger_and_wait(
        &actors.dispatcher,
        Trigger::new(job_id, TriggerType::Manual, 0),
    )
    .await
    .expect("trigger report");
    (executor, g, job_id, report)
}

/// The job's `n` logs once all are [`settled`], failing the test with `what` after 20 s.
async fn settled_logs(store: &Store, job_id: i32, n: usize, what: &str) -> Vec<RunRow> {
    expect_within(what, Duration::from_secs(20), || {
        let store = store.clone();
        async move {
            let logs = logs_of(&store, job_id).await;
            settled(&logs, n).then_some(logs)
        }
    })
    .await
}

/// Retry count 2 on a job whose runs always fail (result 500 by callback): 3 log rows, the
/// retries typed RETRY with counts 1 and 0; each failure alarms the webhook, which answers 200.
async fn retries_then_alarms_each_failure(backend: Backend) {
    let Some(admin) = TestApp::builder(backend).monitors(fast).start().await else {
        return;
    };
    let db = &admin;
    let (hooks_url, hooks) = start_webhook_receiver();
    let (_executor, g, job_id, report) =
        trigger_failing_job(&admin, &admin.actors, "mon-fail", |j| {
            j.job_desc = "always fails".into();
            j.executor_fail_retry_count = 2;
            j.alarm_webhook = format!("{hooks_url}/hook");
            j.executor_param = "p=1".into();
        })
        .await;
    assert_eq!(report.codes, vec![200]);

    let logs = settled_logs(&db.store, job_id, 3, "3 failed and alarmed logs").await;
    let types: Vec<TriggerType> = logs.iter().map(|l| l.trigger_type).collect();
    assert_eq!(
        types,
        vec![TriggerType::Manual, TriggerType::Retry, TriggerType::Retry]
    );
    let counts: Vec<i32> = logs.iter().map(|l| l.executor_fail_retry_count).collect();
    assert_eq!(counts, vec![2, 1, 0]);
    for l in &logs {
        assert_eq!(l.trigger_code, 200, "{l:?}");
        assert_eq!(l.handle_code, 500, "{l:?}");
        assert_eq!(l.executor_param.as_deref(), Some("p=1"));
        assert_eq!(l.alarm_status, alarm_status::SENT);
    }
    // the retried logs carry XXL-JOB's note; the last one had no retry left
    assert!(logs[0]
        .trigger_msg
        .as_deref()
        .unwrap_or_default()
        .ends_with(RETRY_NOTE));
    assert!(logs[1]
        .trigger_msg
        .as_deref()
        .unwrap_or_default()
        .ends_with(RETRY_NOTE));
    assert!(!logs[2]
        .trigger_msg
        .as_deref()
        .unwrap_or_default()
        .contains(">>>>>>>>>>>Fail retry trigger<<<<<<<<<<<"));
    assert!(logs[1]
        .trigger_msg
        .as_deref()
        .unwrap_or_default()
        .starts_with("Trigger type：Fail retry trigger"));

    // one webhook call per failed log, with its id
    let mut got: Vec<i64> = hooks
        .received()
        .iter()
        .map(|h| h["logId"].as_i64().unwrap_or_default())
        .collect();
    got.sort_unstable();
    let ids: Vec<i64> = logs.iter().map(|l| l.id).collect();
    assert_eq!(got, ids);
    let first = hooks
        .received()
        .into_iter()
        .find(|h| h["logId"] == logs[0].id)
        .unwrap();
    assert_eq!(first["jobId"], job_id);
    assert_eq!(first["jobGroup"], g);
    assert_eq!(first["jobDesc"], "always fails");
    assert_eq!(first["handleCode"], 500);
    assert_eq!(first["handleMsg"], "always fails");
    assert_eq!(first["triggerCode"], 200);
    assert_eq!(first["alarmType"], "FAIL");

    // nothing more happens: no fourth run, no second alarm
    actix_web::rt::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(logs_of(&db.store, job_id).await.len(), 3);
    assert_eq!(hooks.received().len(), 3);
    admin.finish().await;
}

backends!(run: retries_then_alarms_each_failure);

/// The executor refuses the run (trigger code 500): the failed trigger is retried too; the
/// webhook answers 500, so each log's alarm status is 3.
async fn refused_triggers_retry_and_failed_webhooks_show(backend: Backend) {
    let Some(admin) = TestApp::builder(backend).monitors(fast).start().await else {
        return;
    };
    let (hooks_url, hooks) = start_webhook_receiver();
    let (_executor, _, job_id, report) =
        trigger_failing_job(&admin, &admin.actors, "mon-refuse", |j| {
            j.job_desc = "refused".into();
            j.executor_handler = "refuse".into();
            j.executor_fail_retry_count = 1;
            j.alarm_webhook = format!("{hooks_url}/fail");
        })
        .await;
    assert_eq!(report.codes, vec![500]);

    let logs = settled_logs(&admin.store, job_id, 2, "2 refused and alarmed logs").await;
    assert_eq!(logs[1].trigger_type, TriggerType::Retry);
    for l in &logs {
        assert_eq!(l.trigger_code, 500, "{l:?}");
        assert_eq!(l.handle_code, 0);
        assert_eq!(l.alarm_status, alarm_status::FAILED, "{l:?}");
    }
    assert_eq!(hooks.received().len(), 2);
    admin.finish().await;
}

backends!(run: refused_triggers_retry_and_failed_webhooks_show);

/// With `retry_interval_secs = 2` the retry is triggered no sooner than 2 s after the failed
/// result; a job without alarms gets status 2.
async fn retry_waits_for_the_interval(backend: Backend) {
    let Some(admin) = TestApp::builder(backend).monitors(fast).start().await else {
        return;
    };
    let db = &admin;
    let (_executor, _, job_id, _) = trigger_failing_job(&admin, &admin.actors, "mon-wait", |j| {
        j.job_desc = "waits".into();
        j.executor_fail_retry_count = 1;
        j.retry_interval_secs = 2;
    })
    .await;

    // after the failure and a few passes, the retry is still pending and the log unclaimed
    let store = db.store.clone();
    let failed = expect_within("the first failure", Duration::from_secs(10), || {
        let store = store.clone();
        async move {
            let logs = logs_of(&store, job_id).await;
            logs.first().filter(|l| l.handle_code == 500).cloned()
        }
    })
    .await;
    actix_web::rt::time::sleep(Duration::from_millis(1_000)).await;
    let logs = logs_of(&db.store, job_id).await;
    assert_eq!(logs.len(), 1, "retried before the interval: {logs:?}");
    assert_eq!(logs[0].alarm_status, alarm_status::DEFAULT);

    let logs = settled_logs(&store, job_id, 2, "the retry, failed and alarmed").await;
    assert_eq!(logs[1].trigger_type, TriggerType::Retry);
    assert!(
        logs[1].trigger_time >= failed.handle_time + 2_000,
        "retry at {} but failure at {}",
        logs[1].trigger_time,
        failed.handle_time
    );
    assert!(logs.iter().all(|l| l.alarm_status == alarm_status::SENT));
    admin.finish().await;
}

backends!(run: retry_waits_for_the_interval);

/// Two admins on one database scan at the same aligned instants: each failed log is still
/// retried and alarmed once (the claim decides), so retry count 2 gives exactly 3 rows and
/// 3 webhook calls.
async fn two_admins_retry_once(backend: Backend) {
    let Some(first) = TestApp::builder(backend).monitors(fast).start().await else {
        return;
    };
    let db = &first;
    let second = first.another_admin(Some(fast_monitors_of(&first))).await;
    let (hooks_url, hooks) = start_webhook_receiver();
    let (_executor, _, job_id, _) = trigger_failing_job(&first, &second.actors, "mon-pair", |j| {
        j.job_desc = "fails on a cluster".into();
        j.executor_fail_retry_count = 2;
        j.alarm_webhook = format!("{hooks_url}/hook");
    })
    .await;

    let logs = settled_logs(&db.store, job_id, 3, "3 failed and alarmed logs").await;
    actix_web::rt::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(logs_of(&db.store, job_id).await.len(), 3);
    let mut got: Vec<i64> = hooks
        .received()
        .iter()
        .map(|h| h["logId"].as_i64().unwrap_or_default())
        .collect();
    got.sort_unstable();
    assert_eq!(got, logs.iter().map(|l| l.id).collect::<Vec<_>>());
    first.finish().await;
}

backends!(run: two_admins_retry_once);

/// This admin's count of `monitor`'s intervals with `result` (`ran` or `skipped`).
fn passes(metrics: &AdminMetrics, monitor: &str, result: &str) -> u64 {
    let text = metrics.render();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("Prometheus text format");
    let labels = [("monitor", monitor), ("result", result)];
    let count = crate::metrics::value(&scrape, "jobwheel_monitor_passes_total", &labels);
    count.unwrap_or_default() as u64
}

/// Two admins on one database take turns at the monitors' passes: together they run about one
/// fail pass and one lost-result pass an interval (200 ms here), where each would otherwise run
/// its own, and what one skips the other ran.
async fn two_admins_take_turns_at_monitor_passes(backend: Backend) {
    let Some(first) = TestApp::builder(backend).monitors(fast).start().await else {
        return;
    };
    let second = first.another_admin(Some(fast_monitors_of(&first))).await;
    let since = Instant::now();
    actix_web::rt::time::sleep(Duration::from_secs(4)).await;
    let admins = [&first.actors.metrics, &second.actors.metrics];
    // intervals the window touched, and the two admins' first passes, which may repeat the
    // interval the same admin then runs aligned
    let intervals = since.elapsed().as_millis() as u64 / 200 + 2;
    for monitor in ["fail", "lost"] {
        let ran: Vec<u64> = admins.iter().map(|m| passes(m, monitor, "ran")).collect();
        let skipped: Vec<u64> = admins
            .iter()
            .map(|m| passes(m, monitor, "skipped"))
            .collect();
        let (ran_all, skipped_all) = (ran.iter().sum::<u64>(), skipped.iter().sum::<u64>());
        println!("{monitor} monitor over {intervals} intervals: ran {ran:?}, skipped {skipped:?}");
        assert!(
            ran_all <= intervals + 2,
            "{monitor}: {ran_all} passes in {intervals} intervals: admins did not take turns"
        );
        assert!(
            ran_all >= intervals / 2,
            "{monitor}: only {ran_all} passes ran"
        );
        assert!(
            skipped_all >= intervals / 4,
            "{monitor}: {skipped_all} intervals skipped: the admins did not meet"
        );
    }
    first.finish().await;
}

backends!(run: two_admins_take_turns_at_monitor_passes);
