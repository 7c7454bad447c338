//! Supervision with a real admin process: a fault hook (compiled only into test builds) makes
//! the schedule actor's work panic; the actor is restarted, says so in one WARN line, shows the
//! restart at `GET /api/v1/system/actors`, and jobs keep firing. Restarts past the allowance
//! within a minute make it back off, and say so.

use std::path::Path;
use std::process::Child;
use std::time::Duration;

use jobwheel::actors::supervision::RESTARTS_BEFORE_BACKOFF;
use jobwheel::clock::now_ms;
use jobwheel::model::{ScheduleType, TRIGGER_STATUS_RUNNING};
use jobwheel::store::Backend;

use crate::cluster::{free_port, signal, start_admin, wait_healthy, TOKEN};
use crate::engine_support::{job, manual_group};
use crate::kit::processes::admin_log;
use crate::kit::{expect_within, poll_for, Api, Behaviour, FakeExecutor, TestDb, ADMIN_PASSWORD};

/// The admin process, stopped however the test ends.
struct AdminProcess(Child);

impl Drop for AdminProcess {
    fn drop(&mut self) {
        signal(&self.0, "-TERM");
        let _ = self.0.wait();
    }
}

/// The lines of the admin's log that contain `text`.
fn log_lines(dir: &Path, text: &str) -> Vec<String> {
    let log = std::fs::read_to_string(admin_log(dir, "admin")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains(text))
        .map(str::to_string)
        .collect()
}

#[actix_web::test]
async fn a_panicking_actor_is_restarted_logged_listed_and_jobs_keep_firing() {
    let db = TestDb::create(Backend::Sqlite).await.expect("SQLite");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let exec = FakeExecutor::start(&base, TOKEN, Behaviour::default());
    let group = manual_group(&db.store, "supervised", &exec.address).await;
    let mut every_second = job(group, "every second", "demoJobHandler");
    every_second.schedule_type = ScheduleType::Cron;
    every_second.schedule_conf = "* * * * * ?".into();
    every_second.trigger_status = TRIGGER_STATUS_RUNNING;
    every_second.trigger_next_time = (now_ms() / 1_000 + 1) * 1_000;
    db.store.insert_job(&every_second).await.expect("job");

    let dir = tempfile::tempdir().expect("temp dir");
    let admin = AdminProcess(start_admin(&db.url, port, dir.path(), "admin"));
    wait_healthy(port).await;
    let api = Api::new(&base);
    assert_eq!(api.login("admin", ADMIN_PASSWORD).await.status, 200);
    poll_for(Duration::from_secs(15), || {
        (exec.calls_to("run").len() >= 2).then_some(())
    })
    .await
    .expect("the job fires before the fault");

    assert_eq!(api.inject_fault("nobody").await.status, 404);
    assert_eq!(api.inject_fault("schedule").await.status, 204);
    let restarted = "actor schedule restarting after: database task panicked: fault injected \
                     into actor schedule by a test (restart 1)";
    poll_for(Duration::from_secs(10), || {
        (!log_lines(dir.path(), restarted).is_empty()).then_some(())
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "no restart line in the log:\n{}",
            log_lines(dir.path(), "").join("\n")
        )
    });
    assert_eq!(log_lines(dir.path(), "actor schedule stopped").len(), 1);

    let actors = api.system_actors().await;
    assert_eq!(actors.status, 200, "{}", actors.body);
    let items = actors.body["items"].as_array().expect("items").clone();
    let names: Vec<&str> = items.iter().filter_map(|a| a["name"].as_str()).collect();
    for name in [
        "dispatcher",
        "fail-monitor",
        "log-report",
        "lost-monitor",
        "node-beat",
        "registry",
        "result-intake",
        "ring",
        "schedule",
        "suspect-watch",
        "instance-queue",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for actor in &items {
        assert!(
            actor["mailboxWaitMs"].is_u64(),
            "every actor answers its probe: {actor}"
        );
    }
    let schedule = items
        .iter()
        .find(|a| a["name"] == "schedule")
        .expect("schedule");
    assert_eq!(schedule["restarts"], 1, "{schedule}");
    assert_eq!(schedule["state"], "running", "{schedule}");
    assert!(
        schedule["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("fault injected")),
        "{schedule}"
    );
    let others_restarted = items
        .iter()
        .filter(|a| a["name"] != "schedule" && a["restarts"] != 0)
        .count();
    assert_eq!(others_restarted, 0, "{items:?}");

    // the restarted actor reads the job again and it keeps firing
    let fired_before = exec.calls_to("run").len();
    expect_within("fires after the restart", Duration::from_secs(10), || {
        let fired = exec.calls_to("run").len();
        async move { (fired >= fired_before + 3).then_some(()) }
    })
    .await;

    // restarts past the allowance within a minute: it backs off, and says so
    for restart in 2..=RESTARTS_BEFORE_BACKOFF + 1 {
        assert_eq!(api.inject_fault("schedule").await.status, 204);
        let line = format!("(restart {restart})");
        poll_for(Duration::from_secs(10), || {
            (!log_lines(dir.path(), &line).is_empty()).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("no line for restart {restart}"));
    }
    let backing_off = log_lines(dir.path(), "actor schedule restarted");
    assert_eq!(backing_off.len(), 1, "{backing_off:?}");
    assert!(backing_off[0].contains("backing off 1s"), "{backing_off:?}");
    assert!(backing_off[0].contains("WARN"), "{backing_off:?}");

    // and comes back to work after its wait
    let fired_before = exec.calls_to("run").len();
    expect_within("fires after backing off", Duration::from_secs(10), || {
        let fired = exec.calls_to("run").len();
        async move { (fired >= fired_before + 2).then_some(()) }
    })
    .await;

    drop(admin);
    db.drop_db().await;
}
