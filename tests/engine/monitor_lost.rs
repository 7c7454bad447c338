//! The lost-result monitor on a running admin: a run accepted by an executor that does not
//! answer (or answers that the job is idle there), older than the timeout, is marked failed
//! through the callback path, whether the executor is still registered or not; young runs and
//! runs their executor confirms as still running are left alone.

use jobwheel::model::BeatReport;

use std::time::Duration;

use crate::engine_support::*;
use crate::kit::db::manual_log;
use crate::kit::{expect_within, FakeExecutor, TestApp, TestDb};
use jobwheel::actors::monitor_lost::{LOST_MSG, OUTCOME_LOST_MSG};
use jobwheel::clock::now_ms;
use jobwheel::model::{alarm_status, RunRow, TriggerOutcome};
use jobwheel::store::{Backend, Store};

async fn accepted_log(store: &Store, group: i32, job: i32, at: i64, address: &str) -> i64 {
    let id = store.insert_log(&manual_log(group, job, at)).await.unwrap();
    store
        .set_trigger_outcome(
            id,
            &TriggerOutcome {
                trigger_code: 200,
                trigger_msg: "accepted".into(),
                executor_address: Some(address.to_string()),
            },
        )
        .await
        .unwrap();
    id
}

/// Waits (10 s at most) until run `id` has a result, and returns its row.
async fn result_of(s: &Store, id: i64, what: &str) -> RunRow {
    expect_within(what, Duration::from_secs(10), || {
        let s = s.clone();
        async move {
            let log = s.get_log(id).await.unwrap().unwrap();
            (log.handle_code != 0).then_some(log)
        }
    })
    .await
}

async fn lost_results_are_marked_failed(backend: Backend) {
    let Some(db) = TestDb::create(backend).await else {
        return;
    };
    let s = db.store.clone();
    let g = new_group(&s, "mon-lost").await;
    let job_id = s.insert_job(&job(g, "lost", "h")).await.unwrap();
    let now = now_ms();
    // a killed executor stays registered until its beat is 90 s old: it is asked all the same
    s.upsert_registry(
        "EXECUTOR",
        "mon-lost",
        "http://127.0.0.1:2/",
        "v2",
        now,
        &BeatReport::default(),
    )
    .await
    .unwrap();
    let gone = accepted_log(&s, g, job_id, now - 10_000, "http://127.0.0.1:1/").await;
    let registered_gone = accepted_log(&s, g, job_id, now - 10_000, "http://127.0.0.1:2/").await;
    let young = accepted_log(&s, g, job_id, now, "http://127.0.0.1:1/").await;
    // manually listed executors are never registered, registered ones may have restarted
    let busy_executor = FakeExecutor::start("", "", probe(true));
    let idle_executor = FakeExecutor::start("", "", probe(false));
    let registered_busy = FakeExecutor::start("", "", probe(true));
    s.upsert_registry(
        "EXECUTOR",
        "mon-lost",
        &registered_busy.address,
        "v2",
        now,
        &BeatReport::default(),
    )
    .await
    .unwrap();
    let busy = accepted_log(&s, g, job_id, now - 10_000, &busy_executor.address).await;
    let idle = accepted_log(&s, g, job_id, now - 10_000, &idle_executor.address).await;
    let alive = accepted_log(&s, g, job_id, now - 10_000, &registered_busy.address).await;
    // a run whose trigger's outcome was never written (its admin could not record it)
    let unrecorded = s
        .insert_log(&manual_log(g, job_id, now - 10_000))
        .await
        .unwrap();

    let admin = TestApp::builder(backend)
        .on(db)
        .monitors(|m| {
            fast(m);
            m.lost_result_timeout = Duration::from_secs(3);
        })
        .start()
        .await
        .expect("admin");
    let log = result_of(&s, gone, "the lost result").await;
    assert_eq!(log.handle_code, 500);
    assert_eq!(log.handle_msg.as_deref(), Some(LOST_MSG));
    assert!(log.handle_time >= now);
    // a failure like any other: the fail monitor alarms it (nothing configured: status 2)
    expect_within("the alarm status", Duration::from_secs(10), || {
        let s = s.clone();
        async move {
            let log = s.get_log(gone).await.unwrap().unwrap();
            (log.alarm_status == alarm_status::SENT).then_some(())
        }
    })
    .await;
    let log = result_of(
        &s,
        registered_gone,
        "the run on the registered executor that is gone",
    )
    .await;
    assert_eq!(log.handle_msg.as_deref(), Some(LOST_MSG));
    let log = result_of(&s, idle, "the run on the idle executor").await;
    assert_eq!(log.handle_msg.as_deref(), Some(LOST_MSG));
    // the young run turns lost once the timeout has passed
    let log = result_of(&s, young, "the young run to be lost").await;
    assert!(log.handle_time >= now + 3_000, "marked too early: {log:?}");
    assert_eq!(log.handle_msg.as_deref(), Some(LOST_MSG));
    // a run with no recorded outcome does not stay open forever either
    let log = result_of(&s, unrecorded, "the run without a recorded outcome").await;
    assert_eq!(log.trigger_code, 0);
    assert_eq!(log.handle_code, 500);
    assert_eq!(log.handle_msg.as_deref(), Some(OUTCOME_LOST_MSG));
    // runs their executor, registered or not, still runs are never marked
    assert_eq!(s.get_log(alive).await.unwrap().unwrap().handle_code, 0);
    assert_eq!(s.get_log(busy).await.unwrap().unwrap().handle_code, 0);
    admin.finish().await;
}

backends!(run: lost_results_are_marked_failed);

/// After every admin was down, executors deliver the results they saved meanwhile: the first
/// pass waits for them (`lost_first_pass_after`), so a run that ended is not judged lost first.
#[actix_web::test]
async fn results_saved_while_no_admin_answered_come_before_the_first_pass() {
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let s = db.store.clone();
    let g = new_group(&s, "mon-grace").await;
    let job_id = s.insert_job(&job(g, "grace", "h")).await.unwrap();
    // both runs ended on an executor that is idle now; one result was saved there
    let idle_executor = FakeExecutor::start("", "", probe(false));
    let old = now_ms() - 60_000;
    let delivered = accepted_log(&s, g, job_id, old, &idle_executor.address).await;
    let unreported = accepted_log(&s, g, job_id, old, &idle_executor.address).await;

    let grace = Duration::from_secs(3);
    let started = now_ms();
    let admin = TestApp::builder(Backend::Sqlite)
        .on(db)
        .monitors(move |m| {
            fast(m);
            m.lost_result_timeout = Duration::from_secs(1);
            m.lost_first_pass_after = grace;
        })
        .start()
        .await
        .expect("admin");
    // the executor's saved result, a second after the admin came back
    tokio::time::sleep(Duration::from_secs(1)).await;
    let result = serde_json::json!([{"logId": delivered, "logDateTim": old + 5_000, "handleCode": 200, "handleMsg": "done"}]);
    assert_eq!(admin.post("/api/callback", result).await["code"], 200);

    let log = result_of(&s, unreported, "the run without a result lost").await;
    assert_eq!(log.handle_msg.as_deref(), Some(LOST_MSG));
    assert!(
        log.handle_time >= started + grace.as_millis() as i64,
        "judged {} ms after the admin started, before the first pass was due",
        log.handle_time - started
    );
    let log = s.get_log(delivered).await.unwrap().unwrap();
    assert_eq!(
        (log.handle_code, log.handle_msg.as_deref()),
        (200, Some("done")),
        "the delivered result was kept"
    );
    admin.finish().await;
}

/// Every monitor's pass is stuck in the database (SQLite held locked) when the admin's actix
/// system goes away: the passes' database work runs in tasks of their own, so the stop drops it
/// inside its runtime and the process lives on (a pooled connection dropped on a stopping
/// arbiter's task set would abort it, and this test binary with it).
#[test]
fn the_admin_stops_in_the_middle_of_every_monitor_pass() {
    use sqlx::{Connection, Executor};

    let (url_tx, url_rx) = std::sync::mpsc::channel::<String>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let admin_thread = std::thread::spawn(move || {
        actix_rt::System::new().block_on(async move {
            let db = TestDb::create(Backend::Sqlite).await.unwrap();
            let s = db.store.clone();
            let g = new_group(&s, "mon-stop").await;
            let job_id = s.insert_job(&job(g, "stop", "h")).await.unwrap();
            // work for each monitor: a failed run, a lost one, and days to count
            let failed =
                accepted_log(&s, g, job_id, now_ms() - 60_000, "http://127.0.0.1:1/").await;
            s.complete_logs(
                &[jobwheel::store::LogResultRow {
                    log_id: failed,
                    handle_code: 500,
                    handle_msg: Some("failed".into()),
                }],
                now_ms(),
            )
            .await
            .unwrap();
            accepted_log(&s, g, job_id, now_ms() - 60_000, "http://127.0.0.1:1/").await;
            let url = db.url.clone();
            let _admin = TestApp::builder(Backend::Sqlite)
                .on(db)
                .monitors(|m| {
                    fast(m);
                    m.report_interval = Duration::from_millis(200);
                    m.lost_result_timeout = Duration::from_secs(1);
                })
                .start()
                .await
                .expect("admin");
            url_tx.send(url).unwrap();
            let _ = stop_rx.await;
            // leaving the block drops the system while the passes wait on the lock
        });
    });
    let url = url_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("admin started");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut lock = rt.block_on(async {
        // from now on every statement waits on SQLite's lock, for up to its 10 s timeout
        let mut lock = sqlx::SqliteConnection::connect(&url).await.unwrap();
        lock.execute("BEGIN EXCLUSIVE").await.unwrap();
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        lock
    });
    let _ = stop_tx.send(());
    let outcome = admin_thread.join();
    rt.block_on(async { lock.execute("ROLLBACK").await.unwrap() });
    assert!(
        outcome.is_ok(),
        "the admin's thread panicked while stopping"
    );
    // the process is still here: nothing aborted it
}
