//! Executor faults with real `jobwheel executor` processes (issue 17, point 5).
//!
//! - One of two executors is SIGKILLed while it runs 10 script jobs: FAILOVER and BUSYOVER jobs
//!   firing every second go to the other one from the next second on, the 10 runs are failed by
//!   the lost-result monitor (a 3 s timeout here), and the killed executor, started again on
//!   its port on the same log folder, first stops the 10 scripts it left behind and is then
//!   used again without any run or result appearing twice. Four ROUND jobs, on
//!   all the dispatch workers, send A triggers that fail in one fire second, then none: A is a
//!   suspect until it registers again, and FAILOVER and BUSYOVER probe it last.
//! - Two admins on one database, FIRST and ROUND jobs every second, one executor SIGKILLed:
//!   every admin stops choosing it within a second of the first failed call (the mark is shared
//!   through the database), both APIs show it suspect, and once it is back it is chosen again.
//! - An executor whose admin is down saves a finished run's result; the executor is SIGKILLed,
//!   the admin and then the executor are started again: the result reaches the database.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use jobwheel::actors::monitor_lost::LOST_MSG;
use jobwheel::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use jobwheel::clock::now_ms;
use jobwheel::executor_calls::DEFAULT_TIMEOUT;
use jobwheel::model::{GlueType, RouteStrategy, RunRow, ScheduleType, TRIGGER_STATUS_RUNNING};
use jobwheel::store::{Backend, Store};

use crate::cluster::{free_port, start_admin, wait_healthy, TOKEN};
use crate::engine_support::*;
use crate::kit::{alive, expect_within, poll_for, Api, TestApp, TestDb, ADMIN_PASSWORD};

const BIN: &str = env!("CARGO_BIN_EXE_jobwheel");

/// ROUND jobs firing every second, more than the dispatch workers of a small machine.
const ROUND_JOBS: usize = 4;

/// A `jobwheel executor` process; SIGKILLed when dropped.
struct ExecutorProcess {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT/`, as it registers.
    address: String,
}

impl ExecutorProcess {
    /// Starts an executor for `app` on `port`, reporting to `admin`, with its run logs and
    /// pending results under `log_path` (its own output goes to `executor.log` there).
    fn start(admin: &str, app: &str, port: u16, log_path: &Path) -> ExecutorProcess {
        std::fs::create_dir_all(log_path).expect("log folder");
        let output = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path.join("executor.log"))
            .expect("executor log file");
        let mut cmd = Command::new(BIN);
        cmd.arg("executor")
            .args(["--admin-addresses", admin, "--app-name", app])
            .args(["--ip", "127.0.0.1", "--port", &port.to_string()])
            .args(["--log-path", &log_path.display().to_string()])
            .args(["--access-token", TOKEN])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(output);
        for (key, _) in std::env::vars() {
            if key.starts_with("JOBWHEEL_") {
                cmd.env_remove(key);
            }
        }
        ExecutorProcess {
            child: Some(cmd.spawn().expect("start an executor")),
            address: format!("http://127.0.0.1:{port}/"),
        }
    }

    /// SIGKILL, and wait for the process to be gone.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL");
            let _ = child.wait();
        }
    }
}

impl Drop for ExecutorProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Script runs that outlive their killed executor: each writes its process group id to a file,
/// and every group left is killed when this is dropped.
struct Orphans(PathBuf);

impl Orphans {
    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for Orphans {
    fn drop(&mut self) {
        for pid in self.pids() {
            // SAFETY: kill(2) on a process group this test's scripts created.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// Waits until `app` has a live registration at each of `addresses` updated after `since`.
async fn wait_registered(store: &Store, app: &str, addresses: &[&str], since: i64) {
    expect_within(
        "the executors' registrations",
        Duration::from_secs(20),
        || {
            let store = store.clone();
            async move {
                let live = store
                    .find_live_registry_for(app, now_ms() - EXECUTOR_DEAD_AFTER_MS)
                    .await
                    .ok()?;
                addresses
                    .iter()
                    .all(|a| {
                        live.iter()
                            .any(|r| r.registry_value == *a && r.update_time > since)
                    })
                    .then_some(())
            }
        },
    )
    .await;
}

/// Whether `log` ran on `executor`.
fn ran_on(log: &RunRow, executor: &ExecutorProcess) -> bool {
    log.executor_address.as_deref() == Some(executor.address.as_str())
}

/// Waits (10 s at most) until a run of `job` succeeded on `executor`.
async fn expect_done_on(app: &TestApp, job: i32, executor: &ExecutorProcess, what: &str) {
    app.wait_until(what, Duration::from_secs(10), || async move {
        app.logs_of(job)
            .await
            .iter()
            .any(|l| l.handle_code == 200 && ran_on(l, executor))
    })
    .await;
}

/// A running job of `group` firing every second from `first_fire`, routed by `route`.
async fn every_second(
    app: &TestApp,
    group: i32,
    route: RouteStrategy,
    desc: String,
    first_fire: i64,
) -> i32 {
    app.db_job(group, |j| {
        j.job_desc = desc;
        j.executor_route_strategy = route;
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "* * * * * ?".into();
        j.trigger_status = TRIGGER_STATUS_RUNNING;
        j.trigger_next_time = first_fire;
    })
    .await
}

/// Whether a run has a result.
fn finished(log: &RunRow) -> bool {
    log.handle_code != 0
}

async fn killed_executor_is_routed_around_and_its_runs_are_failed(backend: Backend) {
    let Some(admin) = TestApp::builder(backend)
        .token(TOKEN)
        .monitors(|m| {
            fast(m);
            m.lost_result_timeout = Duration::from_secs(3);
        })
        .start()
        .await
    else {
        return;
    };
    let app = &admin;
    let dir = tempfile::tempdir().expect("temp dir");
    let s = app.store.clone();
    let group = new_group(&s, "faults").await;

    // A sorts first: FIRST, FAILOVER and BUSYOVER all try it first while it lives
    let mut ports = [free_port(), free_port()];
    ports.sort_by_key(|p| format!("http://127.0.0.1:{p}/"));
    let (log_a, log_b) = (dir.path().join("a"), dir.path().join("b"));
    let mut a = ExecutorProcess::start(&app.base, "faults", ports[0], &log_a);
    let b = ExecutorProcess::start(&app.base, "faults", ports[1], &log_b);
    wait_registered(&s, "faults", &[&a.address, &b.address], 0).await;

    // 10 long script runs on A, each recording its process group so the test can end it
    let orphans = Orphans(dir.path().join("script-pids"));
    let mut long_jobs = Vec::new();
    for i in 0..10 {
        let id = app
            .db_job(group, |j| {
                j.job_desc = format!("long {i}");
                j.executor_handler = String::new();
                j.glue_type = GlueType::GlueShell;
                j.glue_source = format!("echo $$ >> '{}'\nsleep 30\n", orphans.0.display());
                j.glue_updatetime = now_ms();
                j.executor_route_strategy = RouteStrategy::First;
            })
            .await;
        long_jobs.push(id);
    }
    let mut long_runs = Vec::new();
    for &id in &long_jobs {
        long_runs.extend(app.manual(id).await);
    }
    assert_eq!(long_runs.len(), 10);
    poll_for(Duration::from_secs(10), || {
        (orphans.pids().len() == 10).then_some(())
    })
    .await
    .expect("the 10 scripts running on A");

    // FAILOVER and BUSYOVER every second
    let first_fire = (now_ms() / 1_000 + 1) * 1_000;
    let mut probing = Vec::new();
    for route in [RouteStrategy::Failover, RouteStrategy::Busyover] {
        let id = every_second(
            app,
            group,
            route,
            format!("{route} every second"),
            first_fire,
        )
        .await;
        probing.push((route, id));
    }
    // consecutive ids: the jobs spread over the dispatch workers, each with its own router
    let mut rounds = Vec::new();
    for i in 0..ROUND_JOBS {
        let desc = format!("ROUND {i} every second");
        rounds.push(every_second(app, group, RouteStrategy::Round, desc, first_fire).await);
    }
    let round = rounds[0];
    for &(route, id) in &probing {
        expect_done_on(app, id, &a, &format!("a {route} run done on A")).await;
    }
    let long_logs = |s: Store| {
        let runs = long_runs.clone();
        async move {
            let mut logs = Vec::new();
            for id in runs {
                logs.push(s.get_log(id).await.unwrap().expect("the run's log"));
            }
            logs
        }
    };
    expect_done_on(app, round, &a, "a ROUND run done on A").await;
    expect_done_on(app, round, &b, "a ROUND run done on B").await;
    for log in long_logs(s.clone()).await {
        assert_eq!(log.trigger_code, 200, "{log:?}");
        assert_eq!(log.executor_address.as_deref(), Some(a.address.as_str()));
        assert!(!finished(&log), "a 30 s script already ended: {log:?}");
    }

    a.kill();
    let killed_at = now_ms();

    // from the next second on, every fire reaches B at once and succeeds there
    let after_kill = |l: &RunRow| l.schedule_time > killed_at;
    for &(route, id) in &probing {
        app.wait_until(
            &format!("3 {route} runs done on B after the kill"),
            Duration::from_secs(15),
            || async move {
                app.logs_of(id)
                    .await
                    .iter()
                    .filter(|l| after_kill(l) && finished(l))
                    .count()
                    >= 3
            },
        )
        .await;
    }
    for &(route, id) in &probing {
        let logs: Vec<RunRow> = app
            .logs_of(id)
            .await
            .into_iter()
            .filter(|l| after_kill(l))
            .collect();
        let probe = match route {
            RouteStrategy::Failover => "beat check",
            _ => "idle check",
        };
        let mut probed_a_at = Vec::new();
        for log in logs.iter().filter(|l| finished(l)) {
            assert_eq!(log.trigger_code, 200, "{route}: {log:?}");
            assert_eq!(log.handle_code, 200, "{route}: {log:?}");
            assert!(ran_on(log, &b), "{route}: {log:?}");
            // A was still registered; probed while not yet suspect, it failed at once
            let msg = log.trigger_msg.as_deref().unwrap_or_default();
            if msg.contains(&format!("{probe}：<br>address：{}<br>", a.address)) {
                assert!(
                    msg.contains(&format!("{probe}：<br>address：{}<br>code：500", a.address)),
                    "{route}: {msg}"
                );
                probed_a_at.push(log.schedule_time);
            }
            // the probe of A failed fast: not by the call timeout
            assert!(
                log.handle_time - log.schedule_time < DEFAULT_TIMEOUT.as_millis() as i64,
                "{route}: the run ended {} ms after its fire time",
                log.handle_time - log.schedule_time
            );
        }
        // once a call to A failed, A is a suspect: probed last, so B answers first
        assert!(
            probed_a_at.len() <= 1,
            "{route}: A probed at {probed_a_at:?} after its first failed call"
        );
        // no second skipped
        let mut seconds: Vec<i64> = logs.iter().map(|l| l.schedule_time / 1_000).collect();
        seconds.sort_unstable();
        assert!(
            seconds.windows(2).all(|w| w[1] == w[0] + 1),
            "{route}: fires after the kill {seconds:?}"
        );
    }

    // the 10 runs A took with it are failed by the lost-result monitor
    let lost = expect_within("the 10 lost runs failed", Duration::from_secs(15), || {
        let logs = long_logs(s.clone());
        async move {
            let logs = logs.await;
            logs.iter().all(finished).then_some(logs)
        }
    })
    .await;
    for log in &lost {
        assert_eq!(log.handle_code, 500, "{log:?}");
        assert_eq!(log.handle_msg.as_deref(), Some(LOST_MSG), "{log:?}");
    }
    // A's registration outlives A meanwhile (until its beat is 90 s old)
    let live = s
        .find_live_registry_for("faults", now_ms() - EXECUTOR_DEAD_AFTER_MS)
        .await
        .unwrap();
    assert!(live.iter().any(|r| r.registry_value == a.address));

    // ROUND sent A the triggers of one fire second, which failed, and then left A out: a
    // suspect until it beats again, the other fires all reached B
    app.wait_until(
        "6 ROUND fires after the kill",
        Duration::from_secs(15),
        || async move {
            let logs = app.logs_of(round).await;
            logs.iter()
                .filter(|l| after_kill(l) && l.trigger_code != 0)
                .count()
                >= 6
        },
    )
    .await;
    let restarted_at = now_ms();
    let mut round_runs: Vec<RunRow> = Vec::new();
    for &id in &rounds {
        let logs = app.logs_of(id).await.into_iter();
        round_runs.extend(logs.filter(|l| after_kill(l) && l.schedule_time < restarted_at - 1_000));
    }
    // every worker's router leaves A out once any trigger failed on it: the failed triggers
    // share a fire second, and no time brings A back while it is down
    let mut failed_at: Vec<i64> = round_runs
        .iter()
        .filter(|l| l.trigger_code != 200)
        .map(|l| l.schedule_time)
        .collect();
    failed_at.sort_unstable();
    failed_at.dedup();
    assert!(
        failed_at.len() <= 1,
        "ROUND: triggers failed at {failed_at:?} in the {} ms A was down (expected one second \
         at most): {round_runs:?}",
        restarted_at - killed_at
    );
    let on_b = round_runs
        .iter()
        .filter(|l| l.trigger_code == 200)
        .collect::<Vec<_>>();
    assert!(on_b.len() >= 4 * ROUND_JOBS, "ROUND: {round_runs:?}");
    assert!(on_b.iter().all(|l| ran_on(l, &b)), "ROUND: {round_runs:?}");

    // A again, on its port and log folder: used again, and nothing is run or reported twice
    let a = ExecutorProcess::start(&app.base, "faults", ports[0], &log_a);
    wait_registered(&s, "faults", &[&a.address], restarted_at).await;
    // it stopped the 10 scripts its predecessor left running before it registered
    let left: Vec<i32> = orphans
        .pids()
        .into_iter()
        .filter(|&pid| alive(pid))
        .collect();
    assert!(
        left.is_empty(),
        "scripts of the killed A still run: {left:?}"
    );
    for &(route, id) in &probing {
        let a = &a;
        app.wait_until(
            &format!("2 {route} runs done on A after its restart"),
            Duration::from_secs(15),
            || async move {
                app.logs_of(id)
                    .await
                    .iter()
                    .filter(|l| {
                        l.schedule_time > restarted_at && l.handle_code == 200 && ran_on(l, a)
                    })
                    .count()
                    >= 2
            },
        )
        .await;
    }
    let rounds = rounds.iter().map(|&id| (RouteStrategy::Round, id));
    for (route, id) in probing.iter().copied().chain(rounds) {
        let mut per_second: HashMap<i64, usize> = HashMap::new();
        for log in app.logs_of(id).await {
            *per_second.entry(log.schedule_time).or_default() += 1;
        }
        assert!(
            per_second.values().all(|&n| n == 1),
            "{route}: a fire time with more than one run: {per_second:?}"
        );
    }
    for (&job, lost) in long_jobs.iter().zip(&lost) {
        let logs = app.logs_of(job).await;
        assert_eq!(logs.len(), 1, "job {job} ran again: {logs:?}");
        // the fail monitor moves its alarm status on; its result stays
        let result = |l: &RunRow| (l.handle_code, l.handle_msg.clone(), l.handle_time);
        assert_eq!(
            result(&logs[0]),
            result(lost),
            "job {job}'s lost run changed"
        );
    }
    assert_eq!(orphans.pids().len(), 10, "a long script started again");

    drop((a, b, orphans));
    drop(dir);
    admin.finish().await;
}

backends!(run: killed_executor_is_routed_around_and_its_runs_are_failed);

/// The suspect mark of `address` in `api`'s `GET /api/v1/registry`: `Some(since)` when marked,
/// `None` when registered and not marked.
async fn suspect_in_registry(api: &Api, address: &str) -> Option<Option<i64>> {
    let res = api.registry().await;
    assert_eq!(res.status, 200, "{}", res.body);
    let items = res.body.as_array()?.clone();
    let entry = items.iter().find(|e| e["address"] == address)?;
    Some(entry["suspectSince"].as_i64())
}

async fn every_admin_routes_around_a_dead_executor_after_one_failed_call(backend: Backend) {
    let Some(admin) = TestApp::builder(backend)
        .token(TOKEN)
        .monitors(fast)
        .start()
        .await
    else {
        return;
    };
    let app = &admin;
    let second = app.another_admin(None).await;
    let second_api = Api::new(&second.base);
    let res = second_api.login("admin", ADMIN_PASSWORD).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let dir = tempfile::tempdir().expect("temp dir");
    let s = app.store.clone();
    let group = new_group(&s, "suspects").await;
    let mut ports = [free_port(), free_port()];
    ports.sort_by_key(|p| format!("http://127.0.0.1:{p}/"));
    let log_a = dir.path().join("a");
    let mut a = ExecutorProcess::start(&app.base, "suspects", ports[0], &log_a);
    let b = ExecutorProcess::start(&app.base, "suspects", ports[1], &dir.path().join("b"));
    wait_registered(&s, "suspects", &[&a.address, &b.address], 0).await;

    // FIRST and ROUND jobs every second; the two admins share their fire times
    let first_fire = (now_ms() / 1_000 + 1) * 1_000;
    let mut jobs = Vec::new();
    for (route, n) in [(RouteStrategy::First, 3), (RouteStrategy::Round, 3)] {
        for i in 0..n {
            let desc = format!("{route} {i} every second");
            jobs.push((
                route,
                every_second(app, group, route, desc, first_fire).await,
            ));
        }
    }
    let (first, round) = (jobs[0].1, jobs[3].1);
    expect_done_on(app, first, &a, "a FIRST run done on A").await;
    expect_done_on(app, round, &b, "a ROUND run done on B").await;
    assert_eq!(suspect_in_registry(&app.api, &a.address).await, Some(None));

    a.kill();
    let killed_at = now_ms();
    let after_kill = |l: &RunRow| l.schedule_time > killed_at;
    let b = &b;
    app.wait_until(
        "5 FIRST fires done on B after the kill",
        Duration::from_secs(15),
        || async move {
            app.logs_of(first)
                .await
                .iter()
                .filter(|l| after_kill(l) && l.handle_code == 200 && ran_on(l, b))
                .count()
                >= 5
        },
    )
    .await;
    // both admins show A suspect, with the reason its call met
    for api in [&app.api, &second_api] {
        let since = suspect_in_registry(api, &a.address).await;
        assert!(
            matches!(since, Some(Some(t)) if t >= killed_at),
            "{since:?}"
        );
        let res = api.registry_suspects().await;
        assert_eq!(res.status, 200, "{}", res.body);
        let marks = res.body.as_array().expect("a list").clone();
        assert_eq!(marks.len(), 1, "{marks:?}");
        assert_eq!(marks[0]["address"], a.address.as_str());
        assert_eq!(marks[0]["appNames"], serde_json::json!(["suspects"]));
        assert!(!marks[0]["reason"].as_str().unwrap_or_default().is_empty());
    }
    let back_at = now_ms();
    let mut failed_at = Vec::new();
    for &(_, id) in &jobs {
        for log in app.logs_of(id).await {
            if after_kill(&log) && log.schedule_time < back_at - 1_000 && log.trigger_code != 0 {
                if log.trigger_code != 200 {
                    failed_at.push(log.schedule_time);
                } else {
                    assert!(ran_on(&log, b), "{log:?}");
                }
            }
        }
    }
    failed_at.sort_unstable();
    failed_at.dedup();
    // the fires of one second were in flight together; an admin that did not make the first
    // failed call reads the mark within a second
    assert!(
        failed_at.len() <= 2 && failed_at.windows(2).all(|w| w[1] - w[0] <= 1_000),
        "calls to A failed at {failed_at:?} (killed at {killed_at})"
    );

    // A back on its port: it registers, and every admin chooses it again
    let a = ExecutorProcess::start(&app.base, "suspects", ports[0], &log_a);
    wait_registered(&s, "suspects", &[&a.address], back_at).await;
    for api in [&app.api, &second_api] {
        let address = a.address.as_str();
        app.wait_until(
            "A no longer suspect",
            Duration::from_secs(10),
            || async move { suspect_in_registry(api, address).await == Some(None) },
        )
        .await;
    }
    let a = &a;
    for (route, id) in [(RouteStrategy::First, first), (RouteStrategy::Round, round)] {
        app.wait_until(
            &format!("{route} runs on A again"),
            Duration::from_secs(10),
            || async move {
                app.logs_of(id)
                    .await
                    .iter()
                    .any(|l| l.schedule_time > back_at && l.handle_code == 200 && ran_on(l, a))
            },
        )
        .await;
    }
    let res = app.api.registry_suspects().await;
    assert_eq!(res.body, serde_json::json!([]), "{}", res.body);
    drop(second);
    admin.finish().await;
}

backends!(run: every_admin_routes_around_a_dead_executor_after_one_failed_call);

/// The result of a run that ended while no admin was up is saved by its executor, and sent by
/// the executor's next process once an admin is back.
#[actix_web::test]
async fn a_restarted_executor_delivers_the_results_it_had_saved() {
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let s = db.store.clone();
    let group = new_group(&s, "saved").await;
    // the script ends when the test says so: after the admin is gone
    let go = dir.path().join("go");
    let mut script = job(group, "ends on a signal from the test", "");
    script.glue_type = GlueType::GlueShell;
    script.glue_source = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done\necho done\n",
        go.display()
    );
    script.glue_updatetime = now_ms();
    let job_id = s.insert_job(&script).await.expect("job");

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut admin = start_admin(&db.url, port, dir.path(), "admin");
    wait_healthy(port).await;
    let log_path = dir.path().join("executor");
    let mut executor = ExecutorProcess::start(&base, "saved", free_port(), &log_path);
    wait_registered(&s, "saved", &[&executor.address], 0).await;

    let api = Api::new(&base);
    assert_eq!(api.login("admin", ADMIN_PASSWORD).await.status, 200);
    let res = api.trigger_job(job_id as i64, None).await;
    assert_eq!(res.status, 200, "trigger: {}", res.body);
    let run = expect_within("the run accepted", Duration::from_secs(10), || {
        let s = s.clone();
        async move {
            let logs = logs_of(&s, job_id).await;
            logs.into_iter().find(|l| l.trigger_code == 200)
        }
    })
    .await;
    assert_eq!(
        run.executor_address.as_deref(),
        Some(executor.address.as_str())
    );

    admin.kill().expect("SIGKILL the admin");
    let _ = admin.wait();
    std::fs::write(&go, "").expect("let the script end");
    let pending = log_path.join("callbacklogs");
    let saved = poll_for(Duration::from_secs(15), || {
        let files = std::fs::read_dir(&pending).ok()?;
        let names: Vec<String> = files
            .flatten()
            .map(|f| f.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
            .collect();
        (!names.is_empty()).then_some(names)
    })
    .await;
    assert!(saved.is_some(), "the result was not saved for later");
    executor.kill();
    assert_eq!(
        s.get_log(run.id)
            .await
            .unwrap()
            .expect("the run")
            .handle_code,
        0,
        "a result arrived with no admin up"
    );

    let mut admin = start_admin(&db.url, port, dir.path(), "admin-again");
    wait_healthy(port).await;
    let executor = ExecutorProcess::start(&base, "saved", free_port(), &log_path);
    let done = expect_within("the saved result stored", Duration::from_secs(20), || {
        let s = s.clone();
        async move {
            let log = s.get_log(run.id).await.ok()??;
            finished(&log).then_some(log)
        }
    })
    .await;
    assert_eq!(done.handle_code, 200, "{done:?}");
    // sent once: its file is gone, and the job has its one run
    poll_for(Duration::from_secs(10), || {
        let left = std::fs::read_dir(&pending)
            .map(|d| {
                d.flatten()
                    .filter(|f| f.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
            .unwrap_or(0);
        (left == 0).then_some(())
    })
    .await
    .expect("the delivered file removed");
    assert_eq!(logs_of(&s, job_id).await.len(), 1);

    drop(executor);
    let _ = admin.kill();
    let _ = admin.wait();
    db.drop_db().await;
}
