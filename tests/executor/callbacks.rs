//! Callbacks are never lost and never sent twice: admin answering 500, admin down, files from a
//! previous run; saved batches follow as soon as an admin accepts a post again.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::executor_support::*;

both_targets!(
    callbacks_survive_admin_errors_and_outage,
    saved_results_are_retried_within_seconds,
    pending_files_are_delivered_at_start,
    a_shutdown_whose_admin_hangs_saves_every_result,
);

fn callback_files(exec: &Exec) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(exec.log_dir.join("callbacklogs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (5 s at most) until every saved batch is gone, delivered.
async fn expect_files_deleted(exec: &Exec) {
    let gone = poll_for(Duration::from_secs(5), || {
        callback_files(exec).is_empty().then_some(())
    })
    .await;
    assert!(gone.is_some(), "delivered files not deleted");
}

fn accepted_counts(admin: &FakeAdmin) -> HashMap<i64, usize> {
    let mut counts = HashMap::new();
    for c in admin.accepted_callbacks() {
        *counts.entry(c.log_id).or_insert(0) += 1;
    }
    counts
}

async fn callbacks_survive_admin_errors_and_outage(target: Target) {
    let mut admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;

    // the admin answers 500: the batch is saved
    admin.set_failing(true);
    let failed: Vec<_> = (0..3).map(|i| bean(40 + i, "demoJobHandler", "")).collect();
    for p in &failed {
        exec.run_ok(p).await;
    }
    let saved = poll_for(Duration::from_secs(10), || {
        let refused = admin
            .requests("/api/callback")
            .iter()
            .any(|r| r.answered == 500);
        (refused && !callback_files(&exec).is_empty()).then_some(())
    })
    .await;
    assert!(saved.is_some(), "refused batch not saved");

    // the admin is down: saved as well
    admin.stop().await;
    let files_before = callback_files(&exec).len();
    let down: Vec<_> = (0..2).map(|i| bean(50 + i, "demoJobHandler", "")).collect();
    for p in &down {
        exec.run_ok(p).await;
    }
    let saved = poll_for(Duration::from_secs(15), || {
        (callback_files(&exec).len() > files_before).then_some(())
    })
    .await;
    assert!(saved.is_some(), "batch for a down admin not saved");

    // back: the next result the admin accepts brings the saved ones at once (not after the
    // 30 s the retries may have backed off to), each once
    admin.set_failing(false);
    admin.restart();
    let back = Instant::now();
    let fresh = bean(52, "demoJobHandler", "");
    exec.run_ok(&fresh).await;
    admin
        .wait_callback(fresh.log_id, Duration::from_secs(10))
        .await;
    let all: Vec<i64> = failed.iter().chain(&down).map(|p| p.log_id).collect();
    let delivered = poll_for(Duration::from_secs(5), || {
        let counts = accepted_counts(&admin);
        all.iter().all(|id| counts.contains_key(id)).then_some(())
    })
    .await;
    assert!(
        delivered.is_some(),
        "saved results not delivered within 5 s of an accepted post: {:?}",
        accepted_counts(&admin)
    );
    eprintln!(
        "{target:?}: delivered {:?} after the admin came back",
        back.elapsed()
    );
    expect_files_deleted(&exec).await;
    actix_rt::time::sleep(Duration::from_millis(500)).await;
    let counts = accepted_counts(&admin);
    for id in &all {
        assert_eq!(counts[id], 1, "log {id} accepted more than once");
    }
}

async fn saved_results_are_retried_within_seconds(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    admin.set_failing(true);
    let refused = bean(60, "demoJobHandler", "");
    exec.run_ok(&refused).await;
    let saved = poll_for(Duration::from_secs(10), || {
        (!callback_files(&exec).is_empty()).then_some(())
    })
    .await;
    assert!(saved.is_some(), "refused batch not saved");
    // no new result comes to carry it: the retry after a failure is seconds away, not 30 s
    admin.set_failing(false);
    let fixed = Instant::now();
    admin
        .wait_callback(refused.log_id, Duration::from_secs(10))
        .await;
    eprintln!(
        "{target:?}: saved result delivered {:?} after the admin answered again",
        fixed.elapsed()
    );
    expect_files_deleted(&exec).await;
}

async fn pending_files_are_delivered_at_start(target: Target) {
    let admin = FakeAdmin::start();
    let dir = tempfile::tempdir().unwrap();
    let pending = dir.path().join("callbacklogs");
    std::fs::create_dir_all(&pending).unwrap();
    let old = now_ms() - 60_000;
    std::fs::write(
        pending.join("callback-0000000000001-previous.json"),
        format!(
            r#"[{{"logId":7001,"logDateTime":{old},"handleCode":200}},{{"logId":7002,"logDateTime":{old},"handleCode":500,"handleMsg":"from a previous run"}}]"#
        ),
    )
    .unwrap();
    let opts = Opts {
        log_dir: Some(dir.path().to_path_buf()),
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let first = admin.wait_callback(7001, Duration::from_secs(10)).await;
    assert_eq!(first.log_date_time, old);
    let second = admin.wait_callback(7002, Duration::from_secs(10)).await;
    assert_eq!(second.handle_msg.as_deref(), Some("from a previous run"));
    expect_files_deleted(&exec).await;
    // the v2 admin gets the array with logDateTim
    let req = admin.requests("/api/callback").remove(0);
    assert!(
        req.body.starts_with('[') && req.body.contains("\"logDateTim\""),
        "{}",
        req.body
    );
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(accepted_counts(&admin)[&7001], 1);
}

/// Results waiting to be sent when the executor stops and its admin hangs are saved, all of
/// them, within the shutdown's wait: none is left in memory behind a post that never answers.
async fn a_shutdown_whose_admin_hangs_saves_every_result(target: Target) {
    let admin = FakeAdmin::start();
    let mut exec = Exec::start(target, &admin, Opts::default()).await;
    admin.set_hanging(true);
    let runs: Vec<_> = (0..300)
        .map(|i| bean(60 + i, "demoJobHandler", ""))
        .collect();
    for p in &runs {
        exec.run_ok(p).await;
    }
    let posting = poll_for(Duration::from_secs(10), || {
        (!admin.requests("/api/callback").is_empty()).then_some(())
    })
    .await;
    assert!(posting.is_some(), "no result was posted");
    // the stop ends what still runs, each with a result, before it flushes the results
    let log_dir = exec.log_dir.clone();
    exec.stop().await;
    let mut saved: Vec<i64> = Vec::new();
    for path in std::fs::read_dir(log_dir.join("callbacklogs"))
        .expect("results saved")
        .flatten()
    {
        let Ok(body) = std::fs::read_to_string(path.path()) else {
            continue;
        };
        let Ok(serde_json::Value::Array(items)) = serde_json::from_str(&body) else {
            continue;
        };
        saved.extend(items.iter().filter_map(|i| i["logId"].as_i64()));
    }
    let missing: Vec<i64> = runs
        .iter()
        .map(|p| p.log_id)
        .filter(|id| !saved.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "{} results not saved: {missing:?}",
        missing.len()
    );
}
