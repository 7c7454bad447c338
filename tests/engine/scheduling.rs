//! The scheduling engine end to end: fire times, misfires, FIX_DELAY, zones, outages; an
//! in-process admin on a real database, fake executors over real HTTP. Every test runs on
//! SQLite, PostgreSQL and MySQL.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use crate::engine_support::Engine;
use crate::kit::{Behaviour, FakeExecutor, TestApp};
use jobwheel::actors::dispatch::{Trigger, TriggerBatch};
use jobwheel::clock::now_ms;
use jobwheel::model::{
    JobInfo, MisfireStrategy, ScheduleType, TriggerType, TRIGGER_STATUS_RUNNING,
};
use jobwheel::store::Backend;

/// The first fire time of a test's jobs: the whole second 2 s ahead.
pub(crate) fn first_fire() -> i64 {
    (now_ms() / 1_000 + 2) * 1_000
}

/// Makes a job a running every-second cron job, first firing at `first`.
pub(crate) fn every_second(first: i64) -> impl Fn(&mut JobInfo) + Copy {
    move |j| {
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "* * * * * ?".into();
        j.trigger_status = TRIGGER_STATUS_RUNNING;
        j.trigger_next_time = first;
    }
}

/// Sleeps until epoch ms `at` (not at all if it has passed).
pub(crate) async fn sleep_until(at: i64) {
    actix_web::rt::time::sleep(Duration::from_millis((at - now_ms()).max(0) as u64)).await;
}

/// `count` [`every_second`] jobs in a new group `app`, served by a registered default executor,
/// left to fire for `run_ms` from [`first_fire`], then stopped: the executor, the first fire time
/// and the jobs.
pub(crate) async fn fire_every_second(
    admin: &TestApp,
    app: &str,
    count: usize,
    run_ms: i64,
) -> (FakeExecutor, i64, Vec<i32>) {
    let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    exec.register(app).await;
    let group = admin.db_group(app).await;
    let first = first_fire();
    let mut jobs = Vec::new();
    for _ in 0..count {
        jobs.push(admin.db_job(group, every_second(first)).await);
    }
    sleep_until(first + run_ms).await;
    for job in &jobs {
        admin.store.stop_job(*job, now_ms()).await.unwrap();
    }
    (exec, first, jobs)
}

backends!(app: every_second_cron_fires_once_in_each_second, |admin| {
    let (exec, first, jobs) = fire_every_second(admin, "precision", 20, 11_500).await;
    actix_web::rt::time::sleep(Duration::from_millis(1_500)).await;

    // steady window: the 10 whole seconds from the first fire time
    let window: Vec<i64> = (0..10).map(|i| first + i * 1_000).collect();
    let received = exec.received();
    let mut by_log: HashMap<i64, usize> = HashMap::new();
    for r in &received {
        *by_log.entry(r.param.log_id).or_default() += 1;
    }
    assert!(
        by_log.values().all(|n| *n == 1),
        "an executor got a log id twice"
    );
    for job in &jobs {
        let logs = admin.logs_of(*job).await;
        let mut per_second: BTreeMap<i64, usize> = BTreeMap::new();
        for log in &logs {
            *per_second.entry(log.schedule_time).or_default() += 1;
            if window.contains(&log.schedule_time) {
                assert_eq!(
                    log.trigger_code, 200,
                    "job {job} log {}: {:?}",
                    log.id, log.trigger_msg
                );
            }
        }
        for second in &window {
            let n = per_second.get(second).copied().unwrap_or(0);
            assert_eq!(n, 1, "job {job}: {n} fires at {second} (first {first})");
        }
        let received_ids: HashSet<i64> = received
            .iter()
            .filter(|r| r.param.job_id == *job)
            .map(|r| r.param.log_id)
            .collect();
        for log in logs.iter().filter(|l| window.contains(&l.schedule_time)) {
            assert!(
                received_ids.contains(&log.id),
                "log {} never reached the executor",
                log.id
            );
        }
    }
});

backends!(app: a_batch_is_prepared_ahead_and_fired_on_time, |admin| {
    let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    exec.register("ahead").await;
    let group = admin.db_group("ahead").await;
    let running = |j: &mut JobInfo| {
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "0 0 0 1 1 ? 2099".into();
        j.trigger_status = TRIGGER_STATUS_RUNNING;
    };
    let a = admin.db_job(group, running).await;
    let b = admin.db_job(group, running).await;
    let stopped = admin.db_job(group, |_| {}).await;
    let missing = stopped + 1_000;
    // handed over 1.5 s ahead, as the ring does with the next second's fires
    let at = now_ms() + 1_500;
    let triggers = [a, b, stopped, missing]
        .map(|job| Trigger::new(job, TriggerType::Cron, at))
        .into_iter()
        .collect();
    admin.actors.dispatcher.do_send(TriggerBatch {
        triggers,
        ahead: true,
    });
    // the log rows exist before the fire time, and nothing has reached the executor yet
    admin
        .wait_until(
            "the prepared log rows",
            Duration::from_millis(1_200),
            || async { admin.logs_of(a).await.len() == 1 && admin.logs_of(b).await.len() == 1 },
        )
        .await;
    assert!(now_ms() < at, "preparing took longer than the lead");
    assert!(exec.received().is_empty(), "a prepared fire left early");
    let log = &admin.logs_of(a).await[0];
    assert_eq!(
        (log.schedule_time, log.trigger_time, log.trigger_code),
        (at, at, 0)
    );
    // what will be sent is on the row already, so a result that beats the outcome shows it
    let job_a = admin.store.get_job(a).await.unwrap().unwrap();
    assert_eq!(
        log.executor_handler.as_deref(),
        Some(job_a.executor_handler.as_str())
    );
    assert_eq!(
        log.executor_address, None,
        "the address is chosen at the fire"
    );

    admin
        .wait_until("both fires", Duration::from_secs(5), || async {
            exec.received().len() == 2
        })
        .await;
    for r in exec.received() {
        assert!(
            r.at >= at,
            "job {} ran at {} before its time {at}",
            r.param.job_id,
            r.at
        );
        assert_eq!(r.param.log_date_time, at);
    }
    // outcomes are written in batches a little after the fires
    admin
        .wait_until("the outcomes", Duration::from_secs(5), || async {
            let (la, lb) = (admin.logs_of(a).await, admin.logs_of(b).await);
            la[0].trigger_code == 200 && lb[0].trigger_code == 200
        })
        .await;
    assert!(
        admin.logs_of(stopped).await.is_empty(),
        "a stopped job's pre-read fire is dropped"
    );
    assert!(admin.logs_of(missing).await.is_empty());
});

backends!(app: misfires_catch_up_once_or_not_at_all, |admin| {
    let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    exec.register("misfire").await;
    let group = admin.db_group("misfire").await;
    // as if the admin had been down for 20 s: the fire time is 20 s past
    let missed = now_ms() - 20_000;
    let make = |strategy: MisfireStrategy| {
        let admin = &admin;
        async move {
            admin
                .db_job(group, |j| {
                    j.schedule_type = ScheduleType::FixRate;
                    j.schedule_conf = "3600".into();
                    j.misfire_strategy = strategy;
                    j.trigger_status = TRIGGER_STATUS_RUNNING;
                    j.trigger_next_time = missed;
                })
                .await
        }
    };
    let once = make(MisfireStrategy::FireOnceNow).await;
    let nothing = make(MisfireStrategy::DoNothing).await;
    admin
        .wait_until("the catch-up run", Duration::from_secs(10), || async {
            !admin.logs_of(once).await.is_empty()
        })
        .await;
    actix_web::rt::time::sleep(Duration::from_secs(3)).await;
    let logs = admin.logs_of(once).await;
    assert_eq!(logs.len(), 1, "one catch-up run");
    assert_eq!(logs[0].trigger_type, TriggerType::Misfire);
    assert!(
        admin.logs_of(nothing).await.is_empty(),
        "DO_NOTHING fires nothing"
    );
    for id in [once, nothing] {
        let job = admin.store.get_job(id).await.unwrap().unwrap();
        assert!(
            job.trigger_next_time > now_ms() + 3_000_000,
            "next fire computed from now"
        );
    }
});

backends!(app: fix_delay_waits_for_the_previous_run, |admin| {
    let exec = FakeExecutor::start(
        &admin.base,
        &admin.token,
        Behaviour {
            run_ms: 1_000,
            ..Default::default()
        },
    );
    exec.register("delay").await;
    let group = admin.db_group("delay").await;
    let job = admin
        .db_job(group, |j| {
            j.schedule_type = ScheduleType::FixDelay;
            j.schedule_conf = "2".into();
            j.trigger_status = TRIGGER_STATUS_RUNNING;
            j.trigger_next_time = (now_ms() / 1_000 + 1) * 1_000;
        })
        .await;
    admin
        .wait_until("three runs", Duration::from_secs(20), || async {
            admin.logs_of(job).await.len() >= 3
        })
        .await;
    admin.store.stop_job(job, now_ms()).await.unwrap();
    let logs = admin.logs_of(job).await;
    for pair in logs.windows(2) {
        let (prev, next) = (&pair[0], &pair[1]);
        assert!(prev.handle_time > 0, "run {} ended", prev.id);
        // next fire = previous end + 2 s, rounded up to a whole second
        let expected = (prev.handle_time + 2_000 + 999) / 1_000 * 1_000;
        assert_eq!(next.schedule_time, expected, "{logs:#?}");
        assert!(next.trigger_time >= prev.handle_time + 2_000);
    }
});

backends!(app: cron_follows_the_job_time_zone, |admin| {
    let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    exec.register("zones").await;
    let group = admin.db_group("zones").await;
    let hour_in = |tz: chrono_tz::Tz| {
        use chrono::Timelike;
        chrono::Utc::now().with_timezone(&tz).hour()
    };
    let shanghai_hour = hour_in(chrono_tz::Asia::Shanghai);
    let cron = format!("* * {shanghai_hour} * * ?");
    let first = first_fire();
    let make = |zone: &'static str| {
        let admin = &admin;
        let cron = cron.clone();
        async move {
            admin
                .db_job(group, |j| {
                    j.schedule_type = ScheduleType::Cron;
                    j.schedule_conf = cron;
                    j.timezone = zone.into();
                    j.trigger_status = TRIGGER_STATUS_RUNNING;
                    j.trigger_next_time = first;
                })
                .await
        }
    };
    let in_shanghai = make("Asia/Shanghai").await;
    let in_new_york = make("America/New_York").await;
    sleep_until(first + 3_500).await;
    admin.store.stop_job(in_shanghai, now_ms()).await.unwrap();
    // a minute boundary may end Shanghai's hour early; otherwise it fired each second
    assert!(
        admin.logs_of(in_shanghai).await.len() >= 2,
        "fires during its zone's hour"
    );
    let ny = admin.store.get_job(in_new_york).await.unwrap().unwrap();
    if hour_in(chrono_tz::America::New_York) != shanghai_hour {
        assert!(
            admin.logs_of(in_new_york).await.len() <= 1,
            "only the stored first fire time"
        );
        assert!(
            ny.trigger_next_time > now_ms(),
            "next fire waits for its zone's hour"
        );
    }
});

backends!(app: an_admin_down_for_20_s_catches_up_per_misfire_strategy, |admin| {
        // the first admin stops before the jobs' fire time, as in a crash or an upgrade
        admin
            .actors
            .schedule
            .send(jobwheel::actors::schedule::StopScheduling)
            .await
            .unwrap();
        let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        exec.register("downtime").await;
        let group = admin.db_group("downtime").await;
        let due = now_ms() + 2_000;
        let make = |strategy: MisfireStrategy| {
            let admin = &admin;
            async move {
                admin
                    .db_job(group, |j| {
                        j.schedule_type = ScheduleType::FixRate;
                        j.schedule_conf = "3600".into();
                        j.misfire_strategy = strategy;
                        j.trigger_status = TRIGGER_STATUS_RUNNING;
                        j.trigger_next_time = due;
                    })
                    .await
            }
        };
        let mut once = Vec::new();
        let mut nothing = Vec::new();
        for _ in 0..3 {
            once.push(make(MisfireStrategy::FireOnceNow).await);
            nothing.push(make(MisfireStrategy::DoNothing).await);
        }
        actix_web::rt::time::sleep(Duration::from_secs(20)).await;
        for id in once.iter().chain(&nothing) {
            assert!(
                admin.logs_of(*id).await.is_empty(),
                "nothing fires while the admin is down"
            );
        }
        // the admin comes back: a new one on the same database
        let _back = admin.another_admin(None).await.base;
        admin
            .wait_until("the catch-up runs", Duration::from_secs(10), || async {
                let mut all = true;
                for id in &once {
                    all &= !admin.logs_of(*id).await.is_empty();
                }
                all
            })
            .await;
        actix_web::rt::time::sleep(Duration::from_secs(2)).await;
        for id in &once {
            let logs = admin.logs_of(*id).await;
            assert_eq!(logs.len(), 1, "one catch-up run for job {id}");
            assert_eq!(logs[0].trigger_type, TriggerType::Misfire);
        }
        for id in &nothing {
            assert!(
                admin.logs_of(*id).await.is_empty(),
                "DO_NOTHING job {id} fired"
            );
            let job = admin.store.get_job(*id).await.unwrap().unwrap();
            assert!(
                job.trigger_next_time > now_ms(),
                "next fire moved past the downtime"
            );
        }
    }
);

/// Runs one statement on the test database, outside the store (to break and mend it).
async fn raw_sql(admin: &TestApp, sql: &str) {
    use sqlx::Connection;
    match admin.store.backend() {
        Backend::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(admin.db_url())
                .await
                .unwrap();
            sqlx::query(sql).execute(&mut c).await.unwrap();
        }
        Backend::Postgres => {
            let mut c = sqlx::PgConnection::connect(admin.db_url()).await.unwrap();
            sqlx::query(sql).execute(&mut c).await.unwrap();
        }
        Backend::MySql => {
            let mut c = sqlx::MySqlConnection::connect(admin.db_url())
                .await
                .unwrap();
            sqlx::query(sql).execute(&mut c).await.unwrap();
        }
    }
}

backends!(app: the_scheduler_survives_database_errors_and_resumes, |admin| {
        let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        exec.register("outage").await;
        let group = admin.db_group("outage").await;
        // the jobs table vanishes for a few seconds: every pre-read fails meanwhile
        raw_sql(admin, "ALTER TABLE job_info RENAME TO job_info_away").await;
        actix_web::rt::time::sleep(Duration::from_secs(3)).await;
        raw_sql(admin, "ALTER TABLE job_info_away RENAME TO job_info").await;
        let job = admin
            .db_job(group, |j| {
                j.schedule_type = ScheduleType::FixRate;
                j.schedule_conf = "3600".into();
                j.trigger_status = TRIGGER_STATUS_RUNNING;
                j.trigger_next_time = now_ms() + 1_000;
            })
            .await;
        admin
            .wait_until(
                "a run after the outage",
                Duration::from_secs(20),
                // the log row is written up to a second before the fire, its outcome after it
                || async {
                    admin
                        .logs_of(job)
                        .await
                        .first()
                        .is_some_and(|l| l.trigger_code == 200)
                },
            )
            .await;
        assert_eq!(admin.logs_of(job).await.len(), 1);
    }
);
