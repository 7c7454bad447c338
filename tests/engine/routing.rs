//! Where fires go: the routing strategies over real executors, the slow pool, a hanging
//! executor, and each executor called in the protocol it registered with.

use std::collections::{HashMap, HashSet};

use crate::engine_support::Engine;
use crate::kit::{Behaviour, FakeExecutor};
use jobwheel::clock::now_ms;
use jobwheel::model::RouteStrategy;

use crate::scheduling::{every_second, first_fire, sleep_until};

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
