//! The scheduling engine end to end: an in-process admin on a real database, fake executors
//! over real HTTP. Every test runs on SQLite, PostgreSQL and MySQL.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use crate::engine_support::Engine;
use crate::kit::{Behaviour, FakeExecutor, TestApp};
use jobwheel::actors::dispatch::{Trigger, TriggerBatch};
use jobwheel::clock::now_ms;
use jobwheel::model::{
    AddressType, JobGroup, JobInfo, MisfireStrategy, RouteStrategy, ScheduleType, TriggerType,
    TRIGGER_STATUS_RUNNING,
};
use jobwheel::store::Backend;
use serde_json::{json, Value};

/// The first fire time of a test's jobs: the whole second 2 s ahead.
fn first_fire() -> i64 {
    (now_ms() / 1_000 + 2) * 1_000
}

/// Makes a job a running every-second cron job, first firing at `first`.
fn every_second(first: i64) -> impl Fn(&mut JobInfo) + Copy {
    move |j| {
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "* * * * * ?".into();
        j.trigger_status = TRIGGER_STATUS_RUNNING;
        j.trigger_next_time = first;
    }
}

/// Sleeps until epoch ms `at` (not at all if it has passed).
async fn sleep_until(at: i64) {
    actix_web::rt::time::sleep(Duration::from_millis((at - now_ms()).max(0) as u64)).await;
}

/// `count` [`every_second`] jobs in a new group `app`, served by a registered default executor,
/// left to fire for `run_ms` from [`first_fire`], then stopped: the executor, the first fire time
/// and the jobs.
async fn fire_every_second(
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

backends!(app: routing_strategies_spread_over_three_executors, |admin| {
    let mut execs = Vec::new();
    for _ in 0..3 {
        let e = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        e.register("routing").await;
        execs.push(e);
    }
    let mut sorted: Vec<String> = execs.iter().map(|e| e.address.clone()).collect();
    sorted.sort();
    let group = admin.db_group("routing").await;
    let job_with = |strategy: RouteStrategy| {
        let admin = &admin;
        async move {
            admin
                .db_job(group, |j| {
                    j.executor_route_strategy = strategy;
                })
                .await
        }
    };
    let address_of = |log_ids: Vec<i64>| {
        let admin = &admin;
        async move {
            let mut out = Vec::new();
            for id in log_ids {
                let log = admin.store.get_log(id).await.unwrap().unwrap();
                assert_eq!(log.trigger_code, 200, "{:?}", log.trigger_msg);
                out.push(log.executor_address.unwrap());
            }
            out
        }
    };

    let first = job_with(RouteStrategy::First).await;
    let last = job_with(RouteStrategy::Last).await;
    let round = job_with(RouteStrategy::Round).await;
    let mut firsts = Vec::new();
    let mut lasts = Vec::new();
    let mut rounds = Vec::new();
    for _ in 0..6 {
        firsts.extend(address_of(admin.manual(first).await).await);
        lasts.extend(address_of(admin.manual(last).await).await);
        rounds.extend(address_of(admin.manual(round).await).await);
    }
    assert!(firsts.iter().all(|a| *a == sorted[0]), "FIRST: {firsts:?}");
    assert!(lasts.iter().all(|a| *a == sorted[2]), "LAST: {lasts:?}");
    // ROUND cycles: each consecutive triple covers all three
    for triple in rounds.chunks(3) {
        let set: HashSet<&String> = triple.iter().collect();
        assert_eq!(set.len(), 3, "ROUND: {rounds:?}");
    }
    for w in rounds.windows(2) {
        let (i, j) = (
            sorted.iter().position(|a| *a == w[0]).unwrap(),
            sorted.iter().position(|a| *a == w[1]).unwrap(),
        );
        assert_eq!((i + 1) % 3, j, "ROUND goes in order: {rounds:?}");
    }

    // CONSISTENT_HASH: stable, and the address XXL-JOB's ring picks
    let hashed = job_with(RouteStrategy::ConsistentHash).await;
    let picks = {
        let mut v = Vec::new();
        for _ in 0..4 {
            v.extend(address_of(admin.manual(hashed).await).await);
        }
        v
    };
    let expected = jobwheel::routing::consistent_hash(hashed, &sorted)
        .unwrap()
        .clone();
    assert!(
        picks.iter().all(|a| *a == expected),
        "CONSISTENT_HASH: {picks:?} vs {expected}"
    );

    // FAILOVER skips a dead executor, BUSYOVER a busy one
    let dead = execs.iter().find(|e| e.address == sorted[0]).unwrap();
    dead.set(|b| b.alive = false);
    let failover = job_with(RouteStrategy::Failover).await;
    let picked = address_of(admin.manual(failover).await).await;
    assert_eq!(picked, vec![sorted[1].clone()], "FAILOVER");
    let busy = execs.iter().find(|e| e.address == sorted[1]).unwrap();
    busy.set(|b| b.idle = false);
    let busyover = job_with(RouteStrategy::Busyover).await;
    let picked = address_of(admin.manual(busyover).await).await;
    assert_eq!(
        picked,
        vec![sorted[0].clone()],
        "BUSYOVER skips the busy one (the dead one is idle)"
    );

    // SHARDING_BROADCAST reaches all three with 0/3, 1/3, 2/3
    let broadcast = job_with(RouteStrategy::ShardingBroadcast).await;
    let logs = admin.manual(broadcast).await;
    assert_eq!(logs.len(), 3);
    let mut shards = Vec::new();
    for id in &logs {
        let log = admin.store.get_log(*id).await.unwrap().unwrap();
        shards.push((
            log.executor_sharding_param.unwrap(),
            log.executor_address.unwrap(),
        ));
    }
    shards.sort();
    assert_eq!(
        shards,
        vec![
            ("0/3".to_string(), sorted[0].clone()),
            ("1/3".to_string(), sorted[1].clone()),
            ("2/3".to_string(), sorted[2].clone())
        ]
    );
    let mut got: Vec<(i32, i32)> = Vec::new();
    for e in &execs {
        for r in e.received().iter().filter(|r| r.param.job_id == broadcast) {
            got.push((r.param.broadcast_index, r.param.broadcast_total));
        }
    }
    got.sort();
    assert_eq!(got, vec![(0, 3), (1, 3), (2, 3)]);

    // RANDOM, LFU and LRU stay within the list; LFU and LRU spread evenly
    for strategy in [
        RouteStrategy::Random,
        RouteStrategy::LeastFrequentlyUsed,
        RouteStrategy::LeastRecentlyUsed,
    ] {
        let job = job_with(strategy).await;
        let mut counts: HashMap<String, usize> = HashMap::new();
        for _ in 0..9 {
            for a in address_of(admin.manual(job).await).await {
                assert!(sorted.contains(&a));
                *counts.entry(a).or_default() += 1;
            }
        }
        match strategy {
            RouteStrategy::LeastRecentlyUsed => {
                assert!(counts.values().all(|n| *n == 3), "{strategy}: {counts:?}")
            }
            // LFU starts new addresses at a random count below the list size, as XXL-JOB does
            RouteStrategy::LeastFrequentlyUsed => {
                let (min, max) = (
                    counts.values().min().copied(),
                    counts.values().max().copied(),
                );
                assert_eq!(counts.len(), 3, "{strategy}: {counts:?}");
                assert!(
                    max.unwrap_or(0) - min.unwrap_or(0) <= 3,
                    "{strategy}: {counts:?}"
                );
            }
            _ => {}
        }
    }
});

backends!(app: results_are_stored_once_and_unknown_logs_ignored, |admin| {
    let exec = FakeExecutor::start(
        &admin.base,
        &admin.token,
        Behaviour::without_results(),
    );
    exec.register("results").await;
    let group = admin.db_group("results").await;
    let job = admin.db_job(group, |_| {}).await;
    let log_id = admin.manual(job).await[0];
    let body =
        json!([{"logId": log_id, "logDateTim": now_ms(), "handleCode": 200, "handleMsg": "first"}]);
    assert_eq!(admin.post("/api/callback", body.clone()).await["code"], 200);
    let late = json!({"callbackList": [{"logId": log_id, "logDateTime": now_ms(), "handleCode": 500, "handleMsg": "second"}]});
    assert_eq!(
        admin.post("/xxl-job-admin/api/callback", late).await["code"],
        200
    );
    let log = admin.store.get_log(log_id).await.unwrap().unwrap();
    assert_eq!(
        (log.handle_code, log.handle_msg.as_deref()),
        (200, Some("first"))
    );
    let unknown = json!([{"logId": 987_654_321, "logDateTim": now_ms(), "handleCode": 200}]);
    assert_eq!(admin.post("/api/callback", unknown).await["code"], 200);
    assert_eq!(
        admin.post("/api/callback", json!("garbage")).await["code"],
        500
    );
});

backends!(app: a_child_job_fires_only_after_its_parent_succeeds, |admin| {
    let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    exec.register("family").await;
    let group = admin.db_group("family").await;
    let child = admin
        .db_job(group, |j| j.executor_handler = "child".into())
        .await;
    let parent = admin.db_job(group, |j| j.child_job_ids = vec![child]).await;
    admin.manual(parent).await;
    admin
        .wait_until("the child to fire", Duration::from_secs(10), || async {
            !admin.logs_of(child).await.is_empty()
        })
        .await;
    let child_logs = admin.logs_of(child).await;
    assert_eq!(child_logs[0].trigger_type, TriggerType::Parent);
    let parent_log = &admin.logs_of(parent).await[0];
    assert_eq!(parent_log.handle_code, 200);
    assert!(child_logs[0].trigger_time >= parent_log.handle_time);

    // a failing parent triggers nothing
    exec.set(|b| b.result = Some(500));
    let before = admin.logs_of(child).await.len();
    let failing = admin.db_job(group, |j| j.child_job_ids = vec![child]).await;
    admin.manual(failing).await;
    admin
        .wait_until("the parent's failure", Duration::from_secs(10), || async {
            admin.logs_of(failing).await[0].handle_code == 500
        })
        .await;
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(admin.logs_of(child).await.len(), before);
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

backends!(app: executor_api_checks_method_token_and_body, |b| b.token("s3cret"), |admin| {
        let body = json!({"registryGroup": "EXECUTOR", "registryKey": "tok", "registryValue": "http://127.0.0.1:1/"});
        let wrong = admin
            .executor_post("/api/registry", body.clone(), Some("nope"))
            .await;
        assert_eq!(
            wrong,
            json!({"code": 500, "msg": "The access token is wrong."})
        );
        let missing = admin.executor_post("/api/registry", body.clone(), None).await;
        assert_eq!(missing["msg"], "The access token is wrong.");
        let ok = admin
            .executor_post("/xxl-job-admin/api/registry", body.clone(), Some("s3cret"))
            .await;
        assert_eq!(ok["code"], 200);
        let live = admin
            .store
            .find_live_registry_for("tok", 0)
            .await
            .unwrap();
        assert_eq!(live.len(), 1);
        let blank = json!({"registryGroup": "EXECUTOR", "registryKey": "", "registryValue": "x"});
        assert_eq!(
            admin.executor_post("/api/registry", blank, Some("s3cret")).await["msg"],
            "Illegal Argument."
        );
        let mut res = awc::Client::default()
            .get(format!("{}/api/registry", admin.base))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let v: Value = res.json().await.unwrap();
        assert_eq!(v["msg"], "invalid request, HttpMethod not support.");
        assert_eq!(
            admin
                .executor_post("/api/registryRemove", body, Some("s3cret"))
                .await["code"],
            200
        );
        assert!(admin
            .store
            .find_live_registry_for("tok", 0)
            .await
            .unwrap()
            .is_empty());
    }
);

backends!(app: slow_dispatches_move_a_job_to_the_slow_pool, |admin| {
    let slow = FakeExecutor::start(
        &admin.base,
        &admin.token,
        Behaviour {
            answer_after_ms: 600,
            ..Default::default()
        },
    );
    slow.register("slowpool").await;
    let group = admin.db_group("slowpool").await;
    let job = admin.db_job(group, |_| {}).await;
    for _ in 0..11 {
        admin.manual(job).await;
    }
    let stats = admin
        .actors
        .dispatcher
        .send(jobwheel::actors::dispatch::GetDispatchStats)
        .await
        .unwrap();
    // the count is per wall-clock minute: a minute boundary during the loop resets it
    if stats.slow_jobs.is_empty() {
        assert!(now_ms() % 60_000 < 15_000, "job not moved: {stats:?}");
    } else {
        assert_eq!(stats.slow_jobs, vec![job]);
        admin.manual(job).await;
        let after = admin
            .actors
            .dispatcher
            .send(jobwheel::actors::dispatch::GetDispatchStats)
            .await
            .unwrap();
        assert!(after.slow_dispatched > stats.slow_dispatched, "{after:?}");
    }
});

backends!(app: a_hanging_executor_does_not_delay_other_jobs, |admin| {
    let hanging = FakeExecutor::start(
        &admin.base,
        &admin.token,
        Behaviour {
            answer_after_ms: 20_000,
            ..Default::default()
        },
    );
    hanging.register("hangs").await;
    let healthy = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
    healthy.register("healthy").await;
    let hang_group = admin.db_group("hangs").await;
    let ok_group = admin.db_group("healthy").await;
    let first = first_fire();
    for _ in 0..5 {
        admin.db_job(hang_group, every_second(first)).await;
    }
    let ok_job = admin.db_job(ok_group, every_second(first)).await;
    sleep_until(first + 6_500).await;
    let received: Vec<_> = healthy
        .received()
        .into_iter()
        .filter(|r| r.param.job_id == ok_job)
        .collect();
    let logs = admin.logs_of(ok_job).await;
    for second in (0..6).map(|i| first + i * 1_000) {
        let log = logs
            .iter()
            .find(|l| l.schedule_time == second)
            .unwrap_or_else(|| panic!("no fire at {second}"));
        let got = received
            .iter()
            .find(|r| r.param.log_id == log.id)
            .expect("reached the executor");
        assert!(
            got.at - second < 1_000,
            "healthy job {} ms late at {second}",
            got.at - second
        );
    }
    assert!(
        hanging.received().len() >= 5,
        "the hanging executor was called too"
    );
});

backends!(app: two_admins_on_one_database_fire_each_time_once, |admin| {
    let _second = admin.another_admin(None).await.base;
    let (_exec, first, jobs) = fire_every_second(admin, "cluster", 10, 6_500).await;
    for job in &jobs {
        let logs = admin.logs_of(*job).await;
        let mut seen = HashSet::new();
        for log in &logs {
            assert!(
                seen.insert(log.schedule_time),
                "job {job} fired twice at {}",
                log.schedule_time
            );
        }
        for second in (0..6).map(|i| first + i * 1_000) {
            assert!(seen.contains(&second), "job {job} missed {second}");
        }
    }
});

backends!(app: registry_monitor_drops_dead_executors_and_sorts_auto_lists, |admin| {
        let store = &admin.store;
        let auto = admin.db_group("monitored").await;
        let manual = store
            .insert_group(&JobGroup {
                id: 0,
                app_name: "handmade".into(),
                title: "handmade".into(),
                address_type: AddressType::Manual,
                address_list: vec!["http://z:1/".into(), "http://a:1/".into()],
                access_token: None,
                update_time: now_ms(),
            })
            .await
            .unwrap();
        let now = now_ms();
        store
            .upsert_registry("EXECUTOR", "monitored", "http://c:1/", "v2", now)
            .await
            .unwrap();
        store
            .upsert_registry("EXECUTOR", "monitored", "http://b:1/", "v2", now)
            .await
            .unwrap();
        store
            .upsert_registry(
                "EXECUTOR",
                "monitored",
                "http://dead:1/",
                "v2",
                now - 91_000,
            )
            .await
            .unwrap();
        store
            .upsert_registry("EXECUTOR", "handmade", "http://x:1/", "v2", now)
            .await
            .unwrap();
        admin
            .actors
            .registry
            .send(jobwheel::actors::registry::RefreshGroups)
            .await
            .unwrap()
            .unwrap();
        let g = store.get_group(auto).await.unwrap().unwrap();
        assert_eq!(g.address_list, vec!["http://b:1/", "http://c:1/"]);
        let m = store.get_group(manual).await.unwrap().unwrap();
        assert_eq!(
            m.address_list,
            vec!["http://z:1/", "http://a:1/"],
            "manual lists are kept"
        );
        assert!(
            store
                .find_registration("http://dead:1/", 0)
                .await
                .unwrap()
                .is_none(),
            "dead entry removed"
        );

        // a new executor is listed at once, and a leaving one removed at once
        let exec = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        exec.register("monitored").await;
        let g = store.get_group(auto).await.unwrap().unwrap();
        assert!(
            g.address_list.contains(&exec.address),
            "{:?}",
            g.address_list
        );
        let body = json!({"registryGroup": "EXECUTOR", "registryKey": "monitored", "registryValue": exec.address});
        assert_eq!(admin.post("/api/registryRemove", body).await["code"], 200);
        let g = store.get_group(auto).await.unwrap().unwrap();
        assert_eq!(g.address_list, vec!["http://b:1/", "http://c:1/"]);
    }
);

backends!(app: executors_are_called_in_the_protocol_they_registered_with, |admin| {
        let old = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        old.register_as("proto-old", false).await;
        let new = FakeExecutor::start(&admin.base, &admin.token, Behaviour::default());
        new.register_as("proto-new", true).await;
        let old_job = admin.db_job(admin.db_group("proto-old").await, |_| {}).await;
        let new_job = admin.db_job(admin.db_group("proto-new").await, |_| {}).await;
        admin.manual(old_job).await;
        admin.manual(new_job).await;
        let got = old.received();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].path, "/run", "XXL-JOB 2.4-3.4 executors take /run");
        let got = new.received();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].path, "/trigger", "3.5 executors take /trigger");
        assert_eq!(got[0].app_header.as_deref(), Some("proto-new"));
    }
);

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
