//! A job that spins the CPU for 5 s must not delay another job's start: every run of job B, triggered
//! every 100 ms, starts within 500 ms of its trigger.

use std::collections::HashMap;
use std::time::Duration;

use crate::executor_support::*;

both_targets!(spinning_job_does_not_delay_other_jobs);

/// The two variants each saturate a core; running them one at a time keeps the bound meaningful on a
/// two-core machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn spinning_job_does_not_delay_other_jobs(target: Target) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let starts_file = exec.log_dir.join("b-starts.txt");
    // library: an async handler that never yields; binary: a shell busy loop
    let spinner = match target {
        Target::Library => bean(60, "asyncSpin", "5000"),
        Target::Binary => shell(
            60,
            "end=$((SECONDS+5)); while [ $SECONDS -lt $end ]; do :; done",
            1,
        ),
    };
    let b_trigger = |_: usize| match target {
        Target::Library => bean(61, "recordStart", ""),
        Target::Binary => shell(
            61,
            &format!("echo \"$1 $(date +%s%3N)\" >> {}", starts_file.display()),
            1,
        ),
    };
    exec.run_ok(&spinner).await;
    actix_rt::time::sleep(Duration::from_millis(200)).await;
    let mut sent: HashMap<i64, i64> = HashMap::new();
    for i in 0..40 {
        let mut p = b_trigger(i);
        p.executor_params = p.log_id.to_string();
        sent.insert(p.log_id, now_ms());
        exec.run_ok(&p).await;
        actix_rt::time::sleep(Duration::from_millis(100)).await;
    }
    let spin_cb = admin
        .wait_callback(spinner.log_id, Duration::from_secs(20))
        .await;
    assert_eq!(spin_cb.handle_code, 200, "{spin_cb:?}");
    for id in sent.keys() {
        admin.wait_callback(*id, Duration::from_secs(10)).await;
    }
    let starts: Vec<(i64, i64)> = match target {
        Target::Library => exec.probe.starts.lock().unwrap().clone(),
        Target::Binary => std::fs::read_to_string(&starts_file)
            .unwrap()
            .lines()
            .map(|l| {
                let (id, t) = l.split_once(' ').unwrap();
                (id.parse().unwrap(), t.parse().unwrap())
            })
            .collect(),
    };
    assert_eq!(starts.len(), sent.len());
    let mut worst = 0;
    for (id, started) in starts {
        let delay = started - sent[&id];
        worst = worst.max(delay);
        assert!(
            delay <= 500,
            "run of log {id} started {delay} ms after its trigger"
        );
    }
    eprintln!("{target:?}: worst start delay {worst} ms while another job spun");
}
