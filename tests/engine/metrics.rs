//! `GET /metrics` on the admin and on its in-process executor, read as Prometheus reads it: the
//! fire and run counters agree with the run rows in the database.

use std::collections::HashMap;
use std::time::Duration;

use actix_web::http::Method;
use jobwheel::bootstrap::LOCAL_APP_NAME;
use jobwheel::clock::now_ms;
use jobwheel::model::{Admission, RunRow, ScheduleType, TriggerType, TRIGGER_STATUS_RUNNING};
use jobwheel::store::{JobFilter, LogFilter};
use prometheus_parse::{Scrape, Value};
use serde_json::json;

use crate::engine_support::Engine;
use crate::kit::TestApp;

const WAIT: Duration = Duration::from_secs(20);

/// GETs `url` with `bearer`, if any: the status and the body.
async fn get(url: &str, bearer: Option<&str>) -> (u16, String) {
    let mut req = awc::Client::default().get(url);
    if let Some(token) = bearer {
        req = req.insert_header(("Authorization", format!("Bearer {token}")));
    }
    let mut res = req.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    let body = res.body().limit(4 << 20).await.expect("body");
    (
        res.status().as_u16(),
        String::from_utf8(body.to_vec()).expect("UTF-8"),
    )
}

/// A successful scrape, parsed.
async fn scrape(url: &str, bearer: &str) -> Scrape {
    let (status, body) = get(url, Some(bearer)).await;
    assert_eq!(status, 200, "{url}: {body}");
    Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).expect("Prometheus text format")
}

/// The value of a counter, gauge or untyped series with exactly these labels.
pub(crate) fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && has_labels(s, labels))
        .find_map(|s| match s.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => Some(v),
            _ => None,
        })
}

/// Observations of a histogram series: its `+Inf` bucket.
fn observations(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && has_labels(s, labels))
        .find_map(|s| match &s.value {
            Value::Histogram(buckets) => buckets
                .iter()
                .find(|b| b.less_than.is_infinite())
                .map(|b| b.count),
            _ => None,
        })
        .unwrap_or_else(|| panic!("histogram {metric} {labels:?}"))
}

fn has_labels(sample: &prometheus_parse::Sample, labels: &[(&str, &str)]) -> bool {
    labels.iter().all(|(k, v)| sample.labels.get(k) == Some(*v))
}

async fn all_logs(app: &TestApp) -> Vec<RunRow> {
    let filter = LogFilter {
        limit: 10_000,
        ..Default::default()
    };
    app.store.list_logs(&filter).await.expect("logs").1
}

backends!(app: fires_and_runs_agree_with_the_database, |b| b.standalone(), |app| {
    // the demo job must not fire while the counts are compared
    let (_, running) = app
        .store
        .list_jobs(&JobFilter {
            trigger_status: Some(TRIGGER_STATUS_RUNNING),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    for job in running {
        assert_eq!(app.api.stop_job(job.id as i64).await.status, 200);
    }
    let group = app
        .store
        .get_group_by_app_name(LOCAL_APP_NAME)
        .await
        .unwrap()
        .expect("the local executor's group")
        .id;
    app.wait_until("the local executor registers", WAIT, || async {
        !app.store
            .find_live_registry_for(LOCAL_APP_NAME, now_ms() - 90_000)
            .await
            .unwrap()
            .is_empty()
    })
    .await;

    let manual = app.db_job(group, |_| {}).await;
    let missing = app.db_job(group, |j| j.executor_handler = "noSuchHandler".into()).await;
    let every_second = app
        .db_job(group, |j| {
            j.schedule_type = ScheduleType::Cron;
            j.schedule_conf = "* * * * * ?".into();
            j.trigger_status = TRIGGER_STATUS_RUNNING;
            j.trigger_next_time = (now_ms() / 1_000 + 1) * 1_000;
        })
        .await;
    for _ in 0..3 {
        assert_eq!(app.manual(manual).await.len(), 1);
    }
    for _ in 0..2 {
        assert_eq!(app.manual(missing).await.len(), 1);
    }
    app.wait_until("the cron job fires twice", WAIT, || async {
        app.logs_of(every_second).await.len() >= 2
    })
    .await;
    assert_eq!(app.api.stop_job(every_second as i64).await.status, 200);
    // fires prepared before the stop still go out: wait until every row has its outcome and
    // every accepted run its result, twice in a row a second apart
    let deadline = std::time::Instant::now() + WAIT;
    let mut settled = 0;
    while settled < 2 {
        assert!(std::time::Instant::now() < deadline, "runs still unfinished after {WAIT:?}");
        let done = all_logs(app)
            .await
            .iter()
            .all(|l| l.trigger_code != 0 && (l.trigger_code != 200 || l.handle_code != 0));
        settled = if done { settled + 1 } else { 0 };
        actix_web::rt::time::sleep(Duration::from_secs(1)).await;
    }
    let logs = all_logs(app).await;

    // the admin's metrics need an administrator's login
    let url = format!("{}/metrics", app.base);
    assert_eq!(get(&url, None).await.0, 401);
    let token = app
        .api
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "prometheus"})), &[])
        .await;
    let token = token.body["token"].as_str().expect("an API token").to_string();
    let user = app.normal_user("viewer", &[group as i64]).await;
    let user_token = user
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "mine"})), &[])
        .await;
    let user_token = user_token.body["token"].as_str().expect("a token").to_string();
    assert_eq!(get(&url, Some(&user_token)).await.0, 403);
    let admin = scrape(&url, &token).await;

    // one fire per run row, by trigger type and outcome
    let mut rows: HashMap<(String, &str), f64> = HashMap::new();
    for l in &logs {
        let result = if l.trigger_code == 200 { "success" } else { "failure" };
        *rows.entry((l.trigger_type.to_string(), result)).or_default() += 1.0;
    }
    assert!(rows.get(&("CRON".to_string(), "success")).copied().unwrap_or(0.0) >= 2.0);
    assert_eq!(rows.get(&("MANUAL".to_string(), "failure")), Some(&2.0));
    for t in TriggerType::ALL {
        for result in ["success", "failure"] {
            let series = [("trigger_type", t.as_str()), ("result", result)];
            let want = rows.get(&(t.to_string(), result)).copied().unwrap_or(0.0);
            assert_eq!(
                value(&admin, "jobwheel_fires_total", &series),
                Some(want),
                "{series:?}"
            );
        }
    }
    // every run row counted once by its admission (no instance caps here: RAN or NO_EXECUTOR)
    for admission in Admission::ALL {
        let want = logs.iter().filter(|l| l.admission == *admission).count() as f64;
        let series = [("admission", admission.as_str())];
        assert_eq!(
            value(&admin, "jobwheel_admissions_total", &series),
            Some(want),
            "{series:?}"
        );
    }
    let fires = logs.len() as f64;
    let dispatched = observations(&admin, "jobwheel_dispatch_duration_seconds", &[("pool", "fast")])
        + observations(&admin, "jobwheel_dispatch_duration_seconds", &[("pool", "slow")]);
    assert_eq!(dispatched, fires, "one dispatch per fire (no broadcast here)");
    let scheduled = logs
        .iter()
        .filter(|l| matches!(l.trigger_type, TriggerType::Cron | TriggerType::Misfire))
        .count() as f64;
    assert_eq!(observations(&admin, "jobwheel_fire_lateness_seconds", &[]), scheduled);
    assert!(observations(&admin, "jobwheel_preread_duration_seconds", &[]) >= 1.0);
    let results = logs.iter().filter(|l| l.handle_code != 0).count() as f64;
    assert_eq!(
        value(&admin, "jobwheel_callback_results_received_total", &[]),
        Some(results)
    );
    assert_eq!(
        value(&admin, "jobwheel_registered_executors", &[("app_name", LOCAL_APP_NAME)]),
        Some(1.0)
    );
    assert_eq!(value(&admin, "jobwheel_dispatch_in_flight", &[("pool", "fast")]), Some(0.0));
    assert!(value(&admin, "jobwheel_db_connections", &[("state", "idle")]).is_some());
    assert!(value(&admin, "jobwheel_ring_fire_times", &[]).is_some());
    // an administrator's session works as well as a token
    let (status, _) = {
        let cookie = app.api.session_cookie().expect("session");
        let mut res = awc::Client::default()
            .get(&url)
            .insert_header(("Cookie", format!("jobwheel_session={cookie}")))
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.body().await.unwrap())
    };
    assert_eq!(status, 200);

    // the in-process executor: its own metrics under its mount path, with the executors' token
    let url = format!("{}/executor/metrics", app.base);
    assert_eq!(get(&url, None).await.0, 401);
    assert_eq!(get(&url, Some("not-the-token")).await.0, 401);
    let executor = scrape(&url, &app.token).await;
    let accepted = logs.iter().filter(|l| l.trigger_code == 200).count() as f64;
    let succeeded = logs.iter().filter(|l| l.handle_code == 200).count() as f64;
    assert_eq!(accepted, succeeded, "demoJobHandler always succeeds");
    assert_eq!(
        value(&executor, "jobwheel_executor_triggers_accepted_total", &[]),
        Some(accepted)
    );
    assert_eq!(
        value(&executor, "jobwheel_executor_triggers_refused_total", &[("reason", "handler_not_found")]),
        Some(2.0)
    );
    assert_eq!(
        value(&executor, "jobwheel_executor_runs_total", &[("result", "success")]),
        Some(succeeded)
    );
    assert_eq!(
        value(&executor, "jobwheel_executor_runs_total", &[("result", "failure")]),
        Some(0.0)
    );
    assert_eq!(
        observations(&executor, "jobwheel_executor_run_duration_seconds", &[]),
        succeeded
    );
    assert_eq!(value(&executor, "jobwheel_executor_queued_triggers", &[]), Some(0.0));
    assert_eq!(
        value(&executor, "jobwheel_executor_pending_callback_files", &[]),
        Some(0.0)
    );
    // at least the batch of the last run went out
    assert!(
        value(&executor, "jobwheel_executor_callback_batches_total", &[("result", "sent")])
            .is_some_and(|n| n >= 1.0)
    );
    // the job workers, idle for less than their 90 s, are alive: one per job that ran
    let mut ran: Vec<i32> = logs.iter().filter(|l| l.handle_code != 0).map(|l| l.job_id).collect();
    ran.sort_unstable();
    ran.dedup();
    assert_eq!(
        value(&executor, "jobwheel_executor_job_workers", &[]),
        Some(ran.len() as f64)
    );
});
