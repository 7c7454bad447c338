//! The strategies against XXL-JOB's behaviour, and executors left out and brought back.

use super::*;

const A: &str = "http://127.0.0.1:9997/";
const B: &str = "http://127.0.0.1:9998/";
const C: &str = "http://127.0.0.1:9999/";
const T0: i64 = 1_700_000_000_000;

fn list(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn three() -> Vec<String> {
    list(&[A, B, C])
}

fn seeded(seed: u64) -> Router<StdRng> {
    Router::with_rng(StdRng::seed_from_u64(seed))
}

fn pick(
    router: &mut Router<StdRng>,
    strategy: RouteStrategy,
    job_id: i32,
    addresses: &[String],
    now_ms: i64,
) -> String {
    match router.route(strategy, job_id, addresses, now_ms) {
        RouteDecision::Address(address) => address,
        other => panic!("expected an address, got {other:?}"),
    }
}

// The vectors below were computed independently of this code, by this Python transcription
// of XXL-JOB's ExecutorRouteConsistentHash (rerun it to regenerate them):
//
//     import hashlib
//     def h(key):
//         d = hashlib.md5(key.encode("utf-8")).digest()
//         return (d[3] << 24) | (d[2] << 16) | (d[1] << 8) | d[0]
//     def ring(addrs):
//         r = {}
//         for a in addrs:
//             for i in range(100):
//                 r[h(f"SHARD-{a}-NODE-{i}")] = a  # TreeMap.put: later wins
//         return sorted(r.items())
//     def pick(job, addrs):
//         jh, rr = h(str(job)), ring(addrs)
//         return next((a for k, a in rr if k >= jh), rr[0][1])
//     A = ["http://127.0.0.1:9997/", "http://127.0.0.1:9998/", "http://127.0.0.1:9999/"]
//     for j in list(range(1, 21)) + [100, 12345, 0, -1, 2147483647, 1800]:
//         print(j, A.index(pick(j, A)), A.index(pick(j, [A[0], A[2]])))
//
// (job id, index in [A, B, C], index in [A, B, C] once B is gone)
const VECTORS: &[(i32, usize, usize)] = &[
    (1, 2, 2),
    (2, 2, 2),
    (3, 2, 2),
    (4, 1, 2),
    (5, 1, 2),
    (6, 2, 2),
    (7, 1, 2),
    (8, 1, 2),
    (9, 1, 0),
    (10, 0, 0),
    (11, 1, 0),
    (12, 1, 2),
    (13, 2, 2),
    (14, 1, 2),
    (15, 1, 2),
    (16, 2, 2),
    (17, 1, 0),
    (18, 1, 0),
    (19, 0, 0),
    (20, 1, 0),
    (100, 0, 0),
    (12345, 0, 0),
    (0, 1, 0),
    (-1, 1, 2),
    (i32::MAX, 0, 0),
    // Hashes above every ring node: wraps to the first node.
    (1800, 1, 2),
];

#[test]
fn hash_reads_md5_bytes_little_endian() {
    assert_eq!(hash_key("1"), 943_901_380);
    assert_eq!(hash_key("12345"), 248_216_706);
    assert_eq!(
        hash_key("SHARD-http://127.0.0.1:9997/-NODE-0"),
        2_684_989_972
    );
    assert_eq!(hash_key("1800"), 4_293_499_635);
}

#[test]
fn consistent_hash_matches_xxl_job_vectors() {
    let all = three();
    let without_b = list(&[A, C]);
    for &(job_id, index, index_without_b) in VECTORS {
        assert_eq!(
            consistent_hash(job_id, &all),
            Some(&all[index]),
            "job {job_id}"
        );
        assert_eq!(
            consistent_hash(job_id, &without_b),
            Some(&all[index_without_b]),
            "job {job_id} without B"
        );
    }
    let mut router = seeded(1);
    assert_eq!(
        pick(&mut router, RouteStrategy::ConsistentHash, 1, &all, T0),
        C
    );
    assert_eq!(consistent_hash(1, &[]), None);
}

#[test]
fn consistent_hash_moves_only_the_removed_addresses_jobs() {
    let all = three();
    let without_b = list(&[A, C]);
    for job_id in 1..=2000 {
        let before = consistent_hash(job_id, &all);
        let after = consistent_hash(job_id, &without_b);
        if before.map(String::as_str) != Some(B) {
            assert_eq!(
                before, after,
                "job {job_id} moved although its executor stayed"
            );
        }
    }
}

#[test]
fn first_and_last_are_fixed() {
    let all = three();
    let mut router = seeded(2);
    for now in 0..5 {
        assert_eq!(
            pick(&mut router, RouteStrategy::First, 7, &all, T0 + now),
            A
        );
        assert_eq!(pick(&mut router, RouteStrategy::Last, 7, &all, T0 + now), C);
    }
}

#[test]
fn round_cycles_in_order_from_a_random_start() {
    let all = three();
    let mut starts = std::collections::HashSet::new();
    for seed in 0..20 {
        let mut router = seeded(seed);
        let first = pick(&mut router, RouteStrategy::Round, 5, &all, T0);
        let start = all.iter().position(|a| *a == first).expect("in list");
        starts.insert(start);
        for k in 1..10 {
            let got = pick(&mut router, RouteStrategy::Round, 5, &all, T0 + k as i64);
            assert_eq!(got, all[(start + k) % 3]);
        }
        // Another job has its own counter.
        let other = pick(&mut router, RouteStrategy::Round, 6, &all, T0);
        assert!(all.contains(&other));
    }
    assert_eq!(starts.len(), 3, "random start should vary with the seed");
}

#[test]
fn round_restarts_randomly_above_the_limit() {
    let all = three();
    let mut router = seeded(3);
    pick(&mut router, RouteStrategy::Round, 5, &all, T0);
    router.round.jobs(T0).insert(5, COUNT_LIMIT + 1);
    pick(&mut router, RouteStrategy::Round, 5, &all, T0);
    assert!(router.round.jobs(T0)[&5] < ROUND_START_BOUND);
}

#[test]
fn random_stays_in_the_list_and_hits_every_address() {
    let all = three();
    let mut router = seeded(4);
    let mut hits = HashMap::new();
    for _ in 0..3000 {
        let got = pick(&mut router, RouteStrategy::Random, 1, &all, T0);
        assert!(all.contains(&got));
        *hits.entry(got).or_insert(0) += 1;
    }
    assert_eq!(hits.len(), 3);
    assert!(hits.values().all(|&n| n > 800), "{hits:?}");
}

#[test]
fn lfu_spreads_evenly() {
    let all = three();
    let mut router = seeded(5);
    let mut hits = HashMap::new();
    for _ in 0..300 {
        *hits
            .entry(pick(
                &mut router,
                RouteStrategy::LeastFrequentlyUsed,
                9,
                &all,
                T0,
            ))
            .or_insert(0) += 1;
    }
    assert_eq!(hits.len(), 3);
    assert!(hits.values().all(|&n| (98..=102).contains(&n)), "{hits:?}");
}

#[test]
fn lfu_breaks_ties_by_address_and_forgets_removed_addresses() {
    let all = three();
    let mut router = seeded(6);
    pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0);
    let counts = router.lfu.jobs(T0).entry(9).or_default();
    for count in counts.values_mut() {
        *count = 10;
    }
    assert_eq!(
        pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0),
        A
    );
    assert_eq!(
        pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0),
        B
    );
    assert_eq!(
        pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0),
        C
    );

    let without_b = list(&[A, C]);
    for _ in 0..20 {
        assert_ne!(
            pick(
                &mut router,
                RouteStrategy::LeastFrequentlyUsed,
                9,
                &without_b,
                T0
            ),
            B
        );
    }
    assert!(!router.lfu.jobs(T0)[&9].contains_key(B));

    // A returning executor starts low again (random in 0..size) and is picked next.
    assert_eq!(
        pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0),
        B
    );
}

#[test]
fn lfu_restarts_counts_above_the_limit() {
    let all = three();
    let mut router = seeded(7);
    pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0);
    for count in router.lfu.jobs(T0).entry(9).or_default().values_mut() {
        *count = COUNT_LIMIT + 1;
    }
    pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 9, &all, T0);
    assert!(
        router.lfu.jobs(T0)[&9].values().all(|&c| c <= 3),
        "{:?}",
        router.lfu.jobs(T0)[&9]
    );
}

#[test]
fn lru_picks_the_least_recently_used() {
    let all = three();
    let mut router = seeded(8);
    let mut lru = |addresses: &[String]| {
        pick(
            &mut router,
            RouteStrategy::LeastRecentlyUsed,
            3,
            addresses,
            T0,
        )
    };
    assert_eq!(lru(&all), A);
    assert_eq!(lru(&all), B);
    assert_eq!(lru(&all), C);
    assert_eq!(lru(&all), A);
    // A new address joins as most recently used; a removed one disappears.
    let d = "http://127.0.0.1:10000/";
    let with_d = list(&[A, B, C, d]);
    assert_eq!(lru(&with_d), B);
    assert_eq!(lru(&with_d), C);
    assert_eq!(lru(&with_d), A);
    assert_eq!(lru(&with_d), d);
    let without_c = list(&[A, B, d]);
    assert_eq!(lru(&without_c), B);
    assert_eq!(lru(&without_c), A);
    assert_eq!(lru(&without_c), d);
    assert_eq!(lru(&without_c), B);
}

#[test]
fn state_is_reset_after_24_hours() {
    let all = three();
    let mut router = seeded(9);
    let lru = RouteStrategy::LeastRecentlyUsed;
    assert_eq!(pick(&mut router, lru, 3, &all, T0), A);
    assert_eq!(pick(&mut router, lru, 3, &all, T0 + 1000), B);
    // Exactly at the limit the state is still valid, as in XXL-JOB (`now > validUntil`).
    assert_eq!(pick(&mut router, lru, 3, &all, T0 + STATE_TTL_MS), C);
    assert_eq!(pick(&mut router, lru, 3, &all, T0 + STATE_TTL_MS + 1), A);
    assert_eq!(pick(&mut router, lru, 3, &all, T0 + STATE_TTL_MS + 2), B);

    pick(&mut router, RouteStrategy::Round, 3, &all, T0);
    pick(&mut router, RouteStrategy::LeastFrequentlyUsed, 3, &all, T0);
    assert!(router.round.jobs(T0).contains_key(&3));
    assert!(router.lfu.jobs(T0).contains_key(&3));
    pick(
        &mut router,
        RouteStrategy::Round,
        4,
        &all,
        T0 + STATE_TTL_MS + 1,
    );
    pick(
        &mut router,
        RouteStrategy::LeastFrequentlyUsed,
        4,
        &all,
        T0 + STATE_TTL_MS + 1,
    );
    assert!(!router.round.jobs(T0 + STATE_TTL_MS + 1).contains_key(&3));
    assert!(!router.lfu.jobs(T0 + STATE_TTL_MS + 1).contains_key(&3));
}

#[test]
fn probes_and_broadcast_are_left_to_the_caller() {
    let all = three();
    let mut router = seeded(10);
    assert_eq!(
        router.route(RouteStrategy::Failover, 1, &all, T0),
        RouteDecision::Probe(ProbeKind::Beat, all.clone())
    );
    assert_eq!(
        router.route(RouteStrategy::Busyover, 1, &all, T0),
        RouteDecision::Probe(ProbeKind::IdleBeat, all.clone())
    );
    assert_eq!(
        router.route(RouteStrategy::ShardingBroadcast, 1, &all, T0),
        RouteDecision::Broadcast
    );
    assert_eq!(
        broadcast_targets(&all),
        vec![
            (A.to_string(), 0, 3),
            (B.to_string(), 1, 3),
            (C.to_string(), 2, 3)
        ]
    );
    assert_eq!(shard_address(&all, 2), Some(&all[2]));
    assert_eq!(shard_address(&all, 3), Some(&all[0]));
    assert_eq!(shard_address(&all, -1), Some(&all[0]));
}

#[test]
fn empty_list_gives_no_address_for_every_strategy() {
    let mut router = seeded(11);
    for &strategy in RouteStrategy::ALL {
        assert_eq!(
            router.route(strategy, 1, &[], T0),
            RouteDecision::NoAddress,
            "{strategy}"
        );
    }
    assert!(broadcast_targets(&[]).is_empty());
    assert_eq!(shard_address(&[], 0), None);
    assert_eq!(ADDRESS_EMPTY_MSG, "Trigger Fail：registry address is empty");
}

#[tokio::test]
async fn failover_skips_a_dead_executor_and_reports_every_beat() {
    let all = three();
    let mut probed = Vec::new();
    let result = probe_in_order(ProbeKind::Beat, &all, |address| {
        probed.push(address.clone());
        async move {
            if address == A {
                Err("connection refused".to_string())
            } else {
                Ok((200, "null".to_string()))
            }
        }
    })
    .await;
    let (address, msg) = result.expect("B answers");
    assert_eq!(address, B);
    assert_eq!(probed, list(&[A, B]), "probing stops at the first success");
    assert_eq!(
        msg,
        format!(
            "beat check：<br>address：{A}<br>code：500<br>msg：connection refused<br><br>\
             beat check：<br>address：{B}<br>code：200<br>msg：null"
        )
    );
}

#[tokio::test]
async fn busyover_skips_a_busy_executor() {
    let all = three();
    let result = probe_in_order(ProbeKind::IdleBeat, &all, |address| async move {
        if address == C {
            Ok((200, String::new()))
        } else {
            Ok((
                500,
                "job thread is running or has trigger queue.".to_string(),
            ))
        }
    })
    .await;
    let (address, msg) = result.expect("C is idle");
    assert_eq!(address, C);
    assert_eq!(msg.matches("idle check：").count(), 3);
    assert!(msg.ends_with(&format!("address：{C}<br>code：200<br>msg：")));
}

#[tokio::test]
async fn all_failing_probes_report_every_result() {
    let all = three();
    let err = probe_in_order(ProbeKind::Beat, &all, |address| async move {
        Err::<(i32, String), _>(format!("refused by {address}"))
    })
    .await
    .expect_err("nobody answers");
    for address in &all {
        assert!(
            err.contains(&format!(
                "address：{address}<br>code：500<br>msg：refused by {address}"
            )),
            "{err}"
        );
    }
    assert_eq!(err.matches("<br><br>").count(), 2);

    let err = probe_in_order(ProbeKind::IdleBeat, &all, |_| async {
        Ok((500, "busy".to_string()))
    })
    .await
    .expect_err("all busy");
    assert_eq!(err.matches("idle check：").count(), 3);

    let err = probe_in_order(ProbeKind::Beat, &[], |_| async { Ok((200, String::new())) })
        .await
        .expect_err("no address");
    assert_eq!(err, ADDRESS_EMPTY_MSG);
}

#[test]
fn a_suspect_is_left_out_until_it_answers_and_probed_last() {
    let mut router = seeded(7);
    let addresses = three();
    assert!(router.no_answer(B, T0), "newly suspect");
    assert!(!router.no_answer(B, T0 + 1), "already suspect");
    // no time brings it back: a day later it is still left out
    let during: Vec<String> = (0..30)
        .map(|i| {
            pick(
                &mut router,
                RouteStrategy::Round,
                1,
                &addresses,
                T0 + i * 3_600_000,
            )
        })
        .collect();
    assert!(!during.iter().any(|a| a == B), "{during:?}");
    assert!(during.iter().any(|a| a == A) && during.iter().any(|a| a == C));
    for strategy in [
        RouteStrategy::Random,
        RouteStrategy::LeastFrequentlyUsed,
        RouteStrategy::LeastRecentlyUsed,
        RouteStrategy::ConsistentHash,
    ] {
        for job in 0..20 {
            let picked = pick(&mut router, strategy, job, &addresses, T0 + 5);
            assert_ne!(picked, B, "{strategy:?}");
        }
    }
    // the probes try it too, last, so a live executor answers before its call could time out
    let last = vec![A.to_string(), C.to_string(), B.to_string()];
    assert_eq!(
        router.route(RouteStrategy::Failover, 1, &addresses, T0 + 5),
        RouteDecision::Probe(ProbeKind::Beat, last.clone())
    );
    assert_eq!(
        router.route(RouteStrategy::Busyover, 1, &addresses, T0 + 5),
        RouteDecision::Probe(ProbeKind::IdleBeat, last)
    );
    assert!(router.answered(B, T0 + 6), "it was suspect");
    assert!(!router.answered(B, T0 + 7), "no longer suspect");
    let after: Vec<String> = (0..6)
        .map(|i| {
            pick(
                &mut router,
                RouteStrategy::Round,
                1,
                &addresses,
                T0 + 10 + i,
            )
        })
        .collect();
    assert!(after.iter().any(|a| a == B), "{after:?}");
}

#[test]
fn an_answer_brings_an_executor_back_and_none_left_means_all() {
    let mut router = seeded(1);
    let addresses = three();
    router.no_answer(A, T0);
    assert_eq!(
        pick(&mut router, RouteStrategy::First, 1, &addresses, T0),
        B
    );
    assert_eq!(pick(&mut router, RouteStrategy::Last, 1, &addresses, T0), C);
    router.answered(A, T0);
    assert_eq!(
        pick(&mut router, RouteStrategy::First, 1, &addresses, T0),
        A
    );
    // every executor silent: the list as it is, rather than no trigger at all
    for a in [A, B, C] {
        router.no_answer(a, T0);
    }
    assert_eq!(
        pick(&mut router, RouteStrategy::First, 1, &addresses, T0),
        A
    );
    assert_eq!(pick(&mut router, RouteStrategy::Last, 1, &addresses, T0), C);
}

#[test]
fn routers_sharing_a_set_leave_out_what_any_of_them_heard_nothing_from() {
    let suspects = Suspects::default();
    let mut first = seeded(3).sharing(suspects.clone());
    let mut second = seeded(4).sharing(suspects);
    let mut own = seeded(5);
    let addresses = three();
    assert!(first.no_answer(A, T0), "newly suspect");
    assert!(!second.no_answer(A, T0 + 1), "already suspect by the first");
    assert_eq!(
        pick(&mut second, RouteStrategy::First, 1, &addresses, T0),
        B
    );
    // a router of its own knows nothing of it
    assert_eq!(pick(&mut own, RouteStrategy::First, 1, &addresses, T0), A);
    second.answered(A, T0);
    assert_eq!(pick(&mut first, RouteStrategy::First, 1, &addresses, T0), A);
}
