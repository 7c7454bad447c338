//! The executor's concurrency limit (`max_concurrent_runs`), against the library and the binary.

use std::time::{Duration, Instant};

use crate::executor_support::*;
use serde_json::json;

const LIMIT: usize = 4;
const JOBS: i32 = 20;

both_targets!(a_full_executor_queues_runs_says_busy_and_drains);
both_targets!(a_refused_load_beat_is_sent_again);

/// The value of an unlabelled metric in the text exposition.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// (start, end) in epoch nanoseconds, from the lines the test script writes.
fn span(log: &str) -> Option<(u128, u128)> {
    let stamp = |tag: &str| {
        log.lines()
            .find_map(|l| l.strip_prefix(tag)?.trim().parse::<u128>().ok())
    };
    Some((stamp("span-start ")?, stamp("span-end ")?))
}

async fn a_full_executor_queues_runs_says_busy_and_drains(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        max_concurrent_runs: LIMIT,
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    // the runs hold their slots until the test opens the gate, so the full state lasts
    let gate = exec.log_dir.join("gate");
    let script = format!(
        "echo span-start $(date +%s%N); while [ ! -e '{}' ]; do sleep 0.05; done; sleep 0.2; echo span-end $(date +%s%N)",
        gate.display()
    );
    let script = script.as_str();
    let runs: Vec<_> = (1..=JOBS).map(|job| shell(job, script, 1)).collect();
    for run in &runs {
        exec.run_ok(run).await;
    }

    // four run, sixteen wait for a slot, counted as queued
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    while Instant::now() < deadline {
        seen = exec.metrics().await;
        if metric(&seen, "jobwheel_executor_runs_waiting_for_slot") == Some(16.0) {
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    let m = |name: &str| metric(&seen, name);
    assert_eq!(
        m("jobwheel_executor_runs_waiting_for_slot"),
        Some(16.0),
        "{seen}"
    );
    assert_eq!(m("jobwheel_executor_queued_triggers"), Some(16.0), "{seen}");
    assert_eq!(m("jobwheel_executor_runs_in_slots"), Some(LIMIT as f64));
    assert_eq!(
        m("jobwheel_executor_max_concurrent_runs"),
        Some(LIMIT as f64)
    );
    // while full, every job is busy, even one that never ran here
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 999})).await,
        json!({"code":500,"msg":"job thread is running or has trigger queue."})
    );

    // the registry beat reports the load soon after it changed, not 30 s later
    let load = poll_for(Duration::from_secs(15), || {
        admin.requests("/api/registry").iter().rev().find_map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body).ok()?;
            let load = body.get("load")?;
            (load["queued"] == 16).then(|| load.clone())
        })
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "no beat reported 16 queued: {:?}",
            admin.requests("/api/registry")
        )
    });
    assert_eq!(
        (&load["running"], &load["limit"]),
        (&json!(LIMIT), &json!(LIMIT)),
        "{load}"
    );
    let jobs = load["jobs"].as_array().expect("jobs listed");
    assert_eq!(jobs.len(), 16, "{load}");
    assert!(jobs.iter().all(|j| j["queued"] == 1), "{load}");
    std::fs::write(&gate, "open").expect("gate opens");

    // all of them run, never more than four at once by their own clocks
    let mut spans = Vec::new();
    for run in &runs {
        let result = admin
            .wait_callback(run.log_id, Duration::from_secs(60))
            .await;
        assert_eq!(result.handle_code, 200, "{result:?}");
        let log = exec.log_of(run).await;
        spans.push(span(&log).unwrap_or_else(|| panic!("no span in the log: {log}")));
    }
    let most = spans
        .iter()
        .map(|(start, _)| {
            spans
                .iter()
                .filter(|(s, e)| s <= start && start < e)
                .count()
        })
        .max()
        .unwrap_or(0);
    assert_eq!(most, LIMIT, "runs at once: {spans:?}");
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 999})).await,
        json!({"code":200,"msg":"Success"})
    );
    let after = exec.metrics().await;
    assert_eq!(
        metric(&after, "jobwheel_executor_runs_waiting_for_slot"),
        Some(0.0)
    );
    assert_eq!(metric(&after, "jobwheel_executor_runs_in_slots"), Some(0.0));
    assert!(
        !after.contains("jobwheel_executor_job_queued_triggers{"),
        "no job waits: {after}"
    );
}

/// The `queued` of each registry beat the admin answered `answered` (200 or 500).
fn beats_queued(admin: &FakeAdmin, answered: i32) -> Vec<serde_json::Value> {
    admin
        .requests("/api/registry")
        .iter()
        .filter(|r| r.answered == answered)
        .filter_map(|r| {
            let body: serde_json::Value = serde_json::from_str(&r.body).ok()?;
            Some(body.get("load")?["queued"].clone())
        })
        .collect()
}

/// A load beat the admin refused (or lost: a keep-alive connection closed as it left) is sent
/// again once the gap has passed, not left for the 30 s beat while the admins see the old load.
async fn a_refused_load_beat_is_sent_again(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        max_concurrent_runs: 1,
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let first = poll_for(Duration::from_secs(15), || {
        beats_queued(&admin, 200).first().cloned()
    })
    .await;
    assert_eq!(first, Some(json!(0)), "the first beat, with nothing queued");
    admin.set_failing(true);
    let gate = exec.log_dir.join("gate");
    let script = format!("while [ ! -e '{}' ]; do sleep 0.05; done", gate.display());
    let runs: Vec<_> = (1..=3).map(|job| shell(job, &script, 1)).collect();
    for run in &runs {
        exec.run_ok(run).await;
    }
    // one runs, two wait: the early beat carrying them is refused ...
    let refused = poll_for(Duration::from_secs(15), || {
        beats_queued(&admin, 500).contains(&json!(2)).then_some(())
    })
    .await;
    assert!(refused.is_some(), "{:?}", admin.requests("/api/registry"));
    admin.set_failing(false);
    // ... and sent again, though the load has not changed since
    let accepted = poll_for(Duration::from_secs(15), || {
        beats_queued(&admin, 200).contains(&json!(2)).then_some(())
    })
    .await;
    assert!(accepted.is_some(), "{:?}", admin.requests("/api/registry"));
    std::fs::write(&gate, "open").expect("gate opens");
    for run in &runs {
        let result = admin
            .wait_callback(run.log_id, Duration::from_secs(60))
            .await;
        assert_eq!(result.handle_code, 200, "{result:?}");
    }
}
