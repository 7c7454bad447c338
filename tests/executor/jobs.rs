//! Job life cycle against the library and the binary: serial queue, block strategies, timeout, kill,
//! idle reaping and graceful shutdown. Script jobs record their pids so the tests see processes die.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::executor_support::*;
use jobwheel::protocol::TriggerParam;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

both_targets!(
    serial_runs_never_overlap,
    discard_later_refuses_while_busy,
    cover_early_kills_running_and_runs_new,
    timeout_reports_502_and_kills_process_group,
    kill_reports_500_and_reports_queued_as_not_executed,
    idle_worker_is_reaped_and_recreated,
    a_worker_busy_past_the_idle_timeout_is_not_reaped,
    shutdown_kills_reports_flushes_and_deregisters,
);

/// A script that, with param `long`, records its pid and its child's pid and waits on a long sleep.
fn long_script(dir: &Path, tag: &str) -> String {
    format!(
        "if [ \"$1\" = long ]; then echo $$ > {d}/{tag}.pid; sleep 60 & echo $! > {d}/{tag}.child; wait; fi; echo quick",
        d = dir.display()
    )
}

fn with_param(mut p: TriggerParam, param: &str) -> TriggerParam {
    p.executor_params = param.to_string();
    p
}

async fn assert_gone(pid: i32) {
    let gone = poll_for(Duration::from_secs(3), || (!alive(pid)).then_some(())).await;
    assert!(gone.is_some(), "process {pid} still alive");
}

async fn serial_runs_never_overlap(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let marks = exec.log_dir.join("marks.txt");
    let script = format!(
        "echo \"start $(date +%s%N)\" >> {m}; sleep 0.3; echo \"end $(date +%s%N)\" >> {m}",
        m = marks.display()
    );
    let triggers: Vec<TriggerParam> = (0..4).map(|_| shell(20, &script, 1)).collect();
    for p in &triggers {
        exec.run_ok(p).await;
    }
    for p in &triggers {
        assert_eq!(admin.wait_callback(p.log_id, WAIT).await.handle_code, 200);
    }
    let text = std::fs::read_to_string(&marks).unwrap();
    let events: Vec<(String, u128)> = text
        .lines()
        .map(|l| {
            let (k, t) = l.split_once(' ').unwrap();
            (k.to_string(), t.parse().unwrap())
        })
        .collect();
    assert_eq!(events.len(), 8, "{text}");
    for (i, pair) in events.chunks(2).enumerate() {
        assert_eq!(
            (pair[0].0.as_str(), pair[1].0.as_str()),
            ("start", "end"),
            "{text}"
        );
        if i > 0 {
            assert!(
                pair[0].1 >= events[2 * i - 1].1,
                "run {i} started before the previous ended: {text}"
            );
        }
    }
    // callbacks come in trigger order, each once
    let order: Vec<i64> = admin
        .accepted_callbacks()
        .iter()
        .map(|c| c.log_id)
        .collect();
    let expected: Vec<i64> = triggers.iter().map(|p| p.log_id).collect();
    assert_eq!(order, expected);
}

async fn discard_later_refuses_while_busy(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let script = long_script(&exec.log_dir, "d");
    let a = with_param(shell(21, &script, 1), "long");
    exec.run_ok(&a).await;
    read_pid(&exec.log_dir.join("d.pid")).await;
    let b = strategy(shell(21, &script, 1), "DISCARD_LATER");
    assert_eq!(
        exec.run(&b).await,
        json!({"code":500,"msg":"block strategy effect：Discard Later"})
    );
    assert_eq!(exec.post("/kill", json!({"jobId": 21})).await["code"], 200);
    admin.wait_callback(a.log_id, WAIT).await;
    // once idle, DISCARD_LATER runs normally
    let c = strategy(shell(21, &script, 1), "DISCARD_LATER");
    exec.run_ok(&c).await;
    assert_eq!(admin.wait_callback(c.log_id, WAIT).await.handle_code, 200);
    assert!(
        admin.callback_of(b.log_id).is_none(),
        "a discarded trigger has no callback"
    );
}

async fn cover_early_kills_running_and_runs_new(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let script = long_script(&exec.log_dir, "c");
    let a = with_param(shell(22, &script, 1), "long");
    exec.run_ok(&a).await;
    let pid = read_pid(&exec.log_dir.join("c.pid")).await;
    let child = read_pid(&exec.log_dir.join("c.child")).await;
    let queued = shell(22, &script, 1);
    exec.run_ok(&queued).await;
    let b = strategy(shell(22, &script, 1), "COVER_EARLY");
    assert_eq!(exec.run(&b).await["code"], 200);
    let cb = admin.wait_callback(a.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    assert_eq!(
        cb.handle_msg.as_deref(),
        Some("block strategy effect：Cover Early [job running, killed]")
    );
    let q = admin.wait_callback(queued.log_id, WAIT).await;
    assert_eq!(
        q.handle_msg.as_deref(),
        Some("block strategy effect：Cover Early [job not executed, in the job queue, killed.]")
    );
    assert_eq!(admin.wait_callback(b.log_id, WAIT).await.handle_code, 200);
    assert_gone(pid).await;
    assert_gone(child).await;
}

async fn timeout_reports_502_and_kills_process_group(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let script = long_script(&exec.log_dir, "t");
    let mut p = with_param(shell(23, &script, 1), "long");
    p.executor_timeout = 2;
    let sent = now_ms();
    exec.run_ok(&p).await;
    let pid = read_pid(&exec.log_dir.join("t.pid")).await;
    let child = read_pid(&exec.log_dir.join("t.child")).await;
    let cb = admin.wait_callback(p.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 502);
    assert_eq!(cb.handle_msg.as_deref(), Some("job execute timeout "));
    let took = admin.callback_time(p.log_id).unwrap() - sent;
    assert!(
        (1900..=3000).contains(&took),
        "timeout reported after {took} ms"
    );
    assert!(!alive(pid), "script {pid} survived its timeout");
    assert_gone(child).await;
    assert!(exec.log_of(&p).await.contains("job execute timeout"));
}

async fn kill_reports_500_and_reports_queued_as_not_executed(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let script = long_script(&exec.log_dir, "k");
    let a = with_param(shell(24, &script, 1), "long");
    exec.run_ok(&a).await;
    let pid = read_pid(&exec.log_dir.join("k.pid")).await;
    let child = read_pid(&exec.log_dir.join("k.child")).await;
    let queued: Vec<TriggerParam> = (0..2).map(|_| shell(24, &script, 1)).collect();
    for q in &queued {
        exec.run_ok(q).await;
    }
    let sent = now_ms();
    assert_eq!(
        exec.post("/kill", json!({"jobId": 24})).await,
        json!({"code":200,"msg":"Success"})
    );
    let cb = admin.wait_callback(a.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    assert_eq!(
        cb.handle_msg.as_deref(),
        Some("scheduling center kill job. [job running, killed]")
    );
    let took = admin.callback_time(a.log_id).unwrap() - sent;
    assert!(took <= 2000, "kill reported after {took} ms");
    assert!(!alive(pid), "script {pid} survived the kill");
    assert_gone(child).await;
    for q in &queued {
        let cb = admin.wait_callback(q.log_id, WAIT).await;
        assert_eq!(cb.handle_code, 500);
        assert_eq!(
            cb.handle_msg.as_deref(),
            Some("scheduling center kill job. [job not executed, in the job queue, killed.]")
        );
    }
    // a new trigger gets a fresh worker
    let again = shell(24, &script, 1);
    exec.run_ok(&again).await;
    assert_eq!(
        admin.wait_callback(again.log_id, WAIT).await.handle_code,
        200
    );
}

/// The router reaps by each worker's last activity: a run longer than the idle timeout, and a
/// trigger queued behind it, keep the worker alive until both have finished.
async fn a_worker_busy_past_the_idle_timeout_is_not_reaped(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        idle_timeout_secs: 1,
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let long = shell(26, "sleep 2.5; echo long", 1);
    let queued = shell(26, "sleep 2.5; echo long", 1);
    exec.run_ok(&long).await;
    exec.run_ok(&queued).await;
    // past the idle timeout, and past a reap pass, while the first run is still going
    actix_rt::time::sleep(Duration::from_millis(1_800)).await;
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 26})).await["code"],
        500,
        "the worker should still be busy"
    );
    for p in [&long, &queued] {
        let result = admin.wait_callback(p.log_id, WAIT).await;
        assert_eq!(
            result.handle_code, 200,
            "log {} was stopped: {:?}",
            p.log_id, result.handle_msg
        );
    }
    if target == Target::Binary {
        let reaped = poll_for(Duration::from_secs(5), || {
            exec.stderr()
                .contains("job 26: idle worker reaped")
                .then_some(())
        })
        .await;
        assert!(reaped.is_some(), "the idle worker was never reaped");
    }
}

async fn idle_worker_is_reaped_and_recreated(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        idle_timeout_secs: 1,
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let handler = match target {
        Target::Library => "hooked",
        Target::Binary => "demoJobHandler",
    };
    let first = bean(25, handler, "");
    exec.run_ok(&first).await;
    admin.wait_callback(first.log_id, WAIT).await;
    let reaped = poll_for(Duration::from_secs(5), || match target {
        Target::Library => (exec.probe.destroy.load(Ordering::SeqCst) == 1).then_some(()),
        Target::Binary => exec
            .stderr()
            .contains("job 25: idle worker reaped")
            .then_some(()),
    })
    .await;
    assert!(
        reaped.is_some(),
        "worker not reaped; stderr: {}",
        exec.stderr()
    );
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 25})).await["code"],
        200
    );
    actix_rt::time::sleep(Duration::from_millis(1500)).await;
    if target == Target::Library {
        assert_eq!(exec.probe.init.load(Ordering::SeqCst), 1);
        assert_eq!(
            exec.probe.destroy.load(Ordering::SeqCst),
            1,
            "destroy ran once"
        );
    } else {
        assert_eq!(
            exec.stderr().matches("job 25: idle worker reaped").count(),
            1
        );
    }
    let second = bean(25, handler, "");
    exec.run_ok(&second).await;
    assert_eq!(
        admin.wait_callback(second.log_id, WAIT).await.handle_code,
        200
    );
    if target == Target::Library {
        assert_eq!(
            exec.probe.init.load(Ordering::SeqCst),
            2,
            "a new worker ran init"
        );
        let log = exec.log_of(&second).await;
        assert!(log.contains("hooked ran"), "{log}");
    }
}

async fn shutdown_kills_reports_flushes_and_deregisters(target: Target) {
    let admin = FakeAdmin::start();
    let mut exec = Exec::start(target, &admin, Opts::default()).await;
    let script = long_script(&exec.log_dir, "s");
    let a = with_param(shell(26, &script, 1), "long");
    exec.run_ok(&a).await;
    let pid = read_pid(&exec.log_dir.join("s.pid")).await;
    let queued = shell(26, &script, 1);
    exec.run_ok(&queued).await;
    let quick = bean(27, "demoJobHandler", "");
    exec.run_ok(&quick).await;
    exec.stop().await;
    let cb = admin.wait_callback(a.log_id, WAIT).await;
    assert_eq!(
        cb.handle_msg.as_deref(),
        Some("web container destroy and kill the job. [job running, killed]")
    );
    let q = admin.wait_callback(queued.log_id, WAIT).await;
    assert_eq!(
        q.handle_msg.as_deref(),
        Some(
            "web container destroy and kill the job. [job not executed, in the job queue, killed.]"
        )
    );
    assert_eq!(
        admin.wait_callback(quick.log_id, WAIT).await.handle_code,
        200
    );
    assert!(!alive(pid), "script {pid} survived shutdown");
    let removed = admin.requests("/api/registryRemove");
    assert_eq!(removed.len(), 1, "registryRemove sent once");
    // results first, then the registration goes
    let last_callback = admin
        .requests("/api/callback")
        .iter()
        .map(|r| r.at_ms)
        .max()
        .unwrap();
    assert!(removed[0].at_ms >= last_callback);
}

/// A SIGKILLed executor leaves its running script's process group behind; the next executor on
/// the same log path kills it before taking triggers and reports the run failed.
#[actix_rt::test]
async fn a_killed_executors_script_is_stopped_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("gluerunning");
    let opts = || Opts {
        log_dir: Some(dir.path().to_path_buf()),
        ..Opts::default()
    };
    let first_admin = FakeAdmin::start();
    let mut first = Exec::start(Target::Binary, &first_admin, opts()).await;
    let quick = shell(29, &long_script(dir.path(), "o"), 1);
    first.run_ok(&quick).await;
    assert_eq!(
        first_admin
            .wait_callback(quick.log_id, WAIT)
            .await
            .handle_code,
        200
    );
    let long = with_param(shell(29, &long_script(dir.path(), "o"), 1), "long");
    first.run_ok(&long).await;
    let pid = read_pid(&dir.path().join("o.pid")).await;
    let child = read_pid(&dir.path().join("o.child")).await;
    let recorded = std::fs::read_dir(&records).unwrap().count();
    assert_eq!(recorded, 1, "the running script, and only it, is recorded");

    first.kill();
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    assert!(
        alive(pid) && alive(child),
        "the script ended with its executor"
    );
    assert!(first_admin.callback_of(long.log_id).is_none());

    // the next executor registers with another admin, so the callback is the one it sends
    let admin = FakeAdmin::start();
    let next = Exec::start(Target::Binary, &admin, opts()).await;
    let result = admin.wait_callback(long.log_id, WAIT).await;
    assert_eq!(result.handle_code, 500, "{result:?}");
    let msg = result.handle_msg.unwrap_or_default();
    assert!(msg.contains("killed the script's process group"), "{msg}");
    assert_gone(pid).await;
    assert_gone(child).await;
    assert!(next
        .log_of(&long)
        .await
        .contains("killed the script's process group"));
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    assert!(
        next.stderr().contains(&format!("log {}", long.log_id)),
        "{}",
        next.stderr()
    );
}
