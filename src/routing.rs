//! Executor selection: the ten routing strategies of XXL-JOB's admin.
//!
//! [`Router`] holds the per-job state of ROUND, LEAST_FREQUENTLY_USED and
//! LEAST_RECENTLY_USED. It does no I/O and reads no clock: the caller passes the time in. Each
//! trigger worker owns one router, shared by that worker's fire tasks through `Rc<RefCell<…>>`:
//! mutable state shared on one thread only, borrowed for one synchronous [`Router::route`] call
//! and never across an `.await`, so it needs no lock. A job's triggers always reach the same
//! worker of a pool, so its state lives in one router per pool; like XXL-JOB, every admin node
//! has its own. Only the executors left out ([`Unreachable`]) are one set for all the routers of
//! an admin, behind a lock held for one map operation.
//!
//! The address list is the caller's: for an automatic group its live registrations, ordered by
//! address; for a manual group the list as typed. FIRST and LAST take that order as it is, as
//! XXL-JOB does.
//!
//! FAILOVER and BUSYOVER need the network, so [`Router::route`] only says which probe to run
//! and [`probe_in_order`] runs it with a caller-supplied HTTP call.
//!
//! Unlike XXL-JOB, the other strategies leave out for [`UNREACHABLE_FOR_MS`] an executor whose
//! last call got no answer (the caller says so: [`Router::no_answer`]): a crashed executor stays
//! registered until its registration expires (90 s), and XXL-JOB's ROUND sends it its share of
//! the triggers all that time, each one failing. While every address is left out, all are used.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use md5::{Digest, Md5};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::model::RouteStrategy;

/// XXL-JOB's trigger message when a group has no executor address.
pub const ADDRESS_EMPTY_MSG: &str = "Trigger Fail：registry address is empty";

/// XXL-JOB's run result when no address could be chosen.
pub const ROUTE_FAIL_MSG: &str = "Address Router Fail.";

/// How long per-job routing state lives before it is dropped (XXL-JOB's `CACHE_VALID_TIME`).
pub const STATE_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// Counters above this start again from a random value, as in XXL-JOB, so they never overflow.
const COUNT_LIMIT: u32 = 1_000_000;

/// ROUND's random start is drawn from `0..ROUND_START_BOUND`.
const ROUND_START_BOUND: u32 = 100;

/// Virtual nodes per address on the consistent-hash ring.
const VIRTUAL_NODE_NUM: u32 = 100;

/// How long an executor that did not answer a call is left out of the strategies that do not
/// probe; then it is tried again (short enough that a restarted executor is soon used again).
pub const UNREACHABLE_FOR_MS: i64 = 10_000;

/// A network check that FAILOVER and BUSYOVER run on each address in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    /// FAILOVER: `/beat`; code 200 means the executor is alive.
    Beat,
    /// BUSYOVER: `/idleBeat {jobId}`; code 200 means the job is idle there.
    IdleBeat,
}

impl ProbeKind {
    /// The title of each probe result in the trigger message.
    pub fn title(self) -> &'static str {
        match self {
            ProbeKind::Beat => "beat check",
            ProbeKind::IdleBeat => "idle check",
        }
    }
}

/// What [`Router::route`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteDecision {
    /// Trigger this executor.
    Address(String),
    /// SHARDING_BROADCAST: trigger every address, see [`broadcast_targets`].
    Broadcast,
    /// Run [`probe_in_order`] of this kind over these addresses; the first that passes wins.
    Probe(ProbeKind, Vec<String>),
    /// The address list is empty; the caller fails the trigger with [`ADDRESS_EMPTY_MSG`].
    NoAddress,
}

/// Per-job state that is dropped wholesale once it is older than [`STATE_TTL_MS`].
#[derive(Debug)]
struct Expiring<T> {
    /// `None` before first use; XXL-JOB starts from 0, which would misfire for `now_ms == 0`.
    valid_until: Option<i64>,
    jobs: HashMap<i32, T>,
}

impl<T> Default for Expiring<T> {
    fn default() -> Self {
        Expiring {
            valid_until: None,
            jobs: HashMap::new(),
        }
    }
}

impl<T> Expiring<T> {
    /// The per-job map, cleared first if the TTL ran out (strictly after it, as XXL-JOB).
    fn jobs(&mut self, now_ms: i64) -> &mut HashMap<i32, T> {
        if self.valid_until.is_none_or(|until| now_ms > until) {
            self.jobs.clear();
            self.valid_until = Some(now_ms.saturating_add(STATE_TTL_MS));
        }
        &mut self.jobs
    }
}

/// The admin's executor selection, with the per-job state of the stateful strategies.
#[derive(Debug)]
pub struct Router<R = StdRng> {
    rng: R,
    /// ROUND: the job's last counter value.
    round: Expiring<u32>,
    /// LEAST_FREQUENTLY_USED: use count per address.
    lfu: Expiring<BTreeMap<String, u32>>,
    /// LEAST_RECENTLY_USED: addresses, least recently used first.
    lru: Expiring<Vec<String>>,
    /// Executors whose last call got no answer, and until when they are left out.
    unreachable: Unreachable,
}

/// Executors whose last call got no answer, and until when they are left out: one set for all
/// the routers of an admin (every worker of both pools), so that the first trigger an executor
/// fails to answer spares the other workers' triggers the same failure.
#[derive(Debug, Clone, Default)]
pub struct Unreachable(Arc<Mutex<HashMap<String, i64>>>);

impl Unreachable {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, i64>> {
        // the map is valid whatever a panicking holder did (each change is one call)
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Router<StdRng> {
    /// A router whose random choices are seeded from the OS.
    pub fn new() -> Self {
        Router::with_rng(StdRng::from_entropy())
    }
}

impl Default for Router<StdRng> {
    fn default() -> Self {
        Router::new()
    }
}

impl<R: Rng> Router<R> {
    /// A router drawing its random choices from `rng` (seed it for reproducible tests).
    pub fn with_rng(rng: R) -> Self {
        Router {
            rng,
            round: Expiring::default(),
            lfu: Expiring::default(),
            lru: Expiring::default(),
            unreachable: Unreachable::default(),
        }
    }

    /// The same router leaving out the executors of `unreachable`, a set other routers share.
    pub fn sharing(self, unreachable: Unreachable) -> Self {
        Router {
            unreachable,
            ..self
        }
    }

    /// Notes that a call to `address` got no answer at `now_ms` (refused, reset, timed out, not
    /// XXL-JOB's envelope): the strategies that do not probe leave it out for
    /// [`UNREACHABLE_FOR_MS`]. Returns whether it was in use until now.
    pub fn no_answer(&mut self, address: &str, now_ms: i64) -> bool {
        let until = now_ms.saturating_add(UNREACHABLE_FOR_MS);
        let before = self.unreachable.lock().insert(address.to_string(), until);
        before.is_none_or(|until| until <= now_ms)
    }

    /// Notes that `address` answered a call: it is used again at once.
    pub fn answered(&mut self, address: &str) {
        let mut unreachable = self.unreachable.lock();
        if !unreachable.is_empty() {
            unreachable.remove(address);
        }
    }

    /// `addresses` without those left out at `now_ms`; all of them when none would be left.
    fn reachable<'a>(&mut self, addresses: &'a [String], now_ms: i64) -> Cow<'a, [String]> {
        let mut unreachable = self.unreachable.lock();
        if unreachable.is_empty() {
            return Cow::Borrowed(addresses);
        }
        unreachable.retain(|_, until| *until > now_ms);
        let left_out = |a: &String| unreachable.contains_key(a);
        match addresses.iter().filter(|a| left_out(a)).count() {
            n if n == 0 || n == addresses.len() => Cow::Borrowed(addresses),
            _ => Cow::Owned(addresses.iter().filter(|a| !left_out(a)).cloned().collect()),
        }
    }

    /// Decides the executor for one trigger of `job_id`, as far as that needs no network.
    ///
    /// `addresses` in the caller's order (FIRST and LAST pick its ends); `now_ms` (epoch ms)
    /// drives the 24 h reset and the end of an executor's time left out.
    pub fn route(
        &mut self,
        strategy: RouteStrategy,
        job_id: i32,
        addresses: &[String],
        now_ms: i64,
    ) -> RouteDecision {
        let addresses = match strategy {
            // the probes find out for themselves, every trigger
            RouteStrategy::Failover | RouteStrategy::Busyover => Cow::Borrowed(addresses),
            _ => self.reachable(addresses, now_ms),
        };
        let addresses = &*addresses;
        let (Some(first), Some(last)) = (addresses.first(), addresses.last()) else {
            return RouteDecision::NoAddress;
        };
        let picked = match strategy {
            RouteStrategy::First => first.clone(),
            RouteStrategy::Last => last.clone(),
            RouteStrategy::Round => self.round(job_id, addresses, now_ms),
            RouteStrategy::Random => addresses[self.rng.gen_range(0..addresses.len())].clone(),
            RouteStrategy::ConsistentHash => match consistent_hash(job_id, addresses) {
                Some(address) => address.clone(),
                None => return RouteDecision::NoAddress,
            },
            RouteStrategy::LeastFrequentlyUsed => {
                self.least_frequently_used(job_id, addresses, now_ms)
            }
            RouteStrategy::LeastRecentlyUsed => {
                match self.least_recently_used(job_id, addresses, now_ms) {
                    Some(address) => address,
                    None => return RouteDecision::NoAddress,
                }
            }
            RouteStrategy::Failover => {
                return RouteDecision::Probe(ProbeKind::Beat, addresses.to_vec())
            }
            RouteStrategy::Busyover => {
                return RouteDecision::Probe(ProbeKind::IdleBeat, addresses.to_vec())
            }
            RouteStrategy::ShardingBroadcast => return RouteDecision::Broadcast,
        };
        RouteDecision::Address(picked)
    }

    /// ROUND: a random start spreads jobs that begin together over the executors.
    fn round(&mut self, job_id: i32, addresses: &[String], now_ms: i64) -> String {
        let counter = match self.round.jobs(now_ms).get(&job_id) {
            Some(&count) if count <= COUNT_LIMIT => count + 1,
            _ => self.rng.gen_range(0..ROUND_START_BOUND),
        };
        self.round.jobs(now_ms).insert(job_id, counter);
        addresses[counter as usize % addresses.len()].clone()
    }

    /// LEAST_FREQUENTLY_USED; ties go to the smallest address (XXL-JOB: HashMap order).
    fn least_frequently_used(&mut self, job_id: i32, addresses: &[String], now_ms: i64) -> String {
        let size = u32::try_from(addresses.len()).unwrap_or(u32::MAX);
        let rng = &mut self.rng;
        let counts = self.lfu.jobs(now_ms).entry(job_id).or_default();
        for address in addresses {
            match counts.get(address) {
                Some(&count) if count <= COUNT_LIMIT => {}
                // A random start keeps a new executor from taking every trigger at once.
                _ => {
                    counts.insert(address.clone(), rng.gen_range(0..size));
                }
            }
        }
        counts.retain(|address, _| addresses.contains(address));
        // BTreeMap iterates by address and min_by_key keeps the first minimum.
        match counts.iter_mut().min_by_key(|(_, count)| **count) {
            Some((address, count)) => {
                *count += 1;
                address.clone()
            }
            // Unreachable with a non-empty list; fall back like FIRST rather than panic.
            None => addresses[0].clone(),
        }
    }

    /// LEAST_RECENTLY_USED: new addresses join as most recently used, like a LinkedHashMap put.
    fn least_recently_used(
        &mut self,
        job_id: i32,
        addresses: &[String],
        now_ms: i64,
    ) -> Option<String> {
        let order = self.lru.jobs(now_ms).entry(job_id).or_default();
        for address in addresses {
            if !order.contains(address) {
                order.push(address.clone());
            }
        }
        order.retain(|address| addresses.contains(address));
        if order.is_empty() {
            return None;
        }
        let eldest = order.remove(0);
        order.push(eldest.clone());
        Some(eldest)
    }
}

/// XXL-JOB's ring hash: MD5 of the UTF-8 key, bytes 0–3 read as a little-endian `u32`.
pub fn hash_key(key: &str) -> u32 {
    let digest = Md5::digest(key.as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// CONSISTENT_HASH, bit-compatible with XXL-JOB's `ExecutorRouteConsistentHash`.
///
/// Each address gets 100 virtual nodes `SHARD-{address}-NODE-{i}`; a later node with an equal
/// hash replaces the earlier one (Java `TreeMap.put`). The job's hash is that of its decimal id;
/// the first node at or after it wins, wrapping to the first node. `None` for no addresses.
pub fn consistent_hash(job_id: i32, addresses: &[String]) -> Option<&String> {
    let mut ring = BTreeMap::new();
    for address in addresses {
        for i in 0..VIRTUAL_NODE_NUM {
            ring.insert(hash_key(&format!("SHARD-{address}-NODE-{i}")), address);
        }
    }
    let job_hash = hash_key(&job_id.to_string());
    ring.range(job_hash..)
        .next()
        .or_else(|| ring.iter().next())
        .map(|(_, address)| *address)
}

/// SHARDING_BROADCAST: every address with its shard index and the shard total.
pub fn broadcast_targets(addresses: &[String]) -> Vec<(String, i32, i32)> {
    let total = i32::try_from(addresses.len()).unwrap_or(i32::MAX);
    addresses
        .iter()
        .zip(0..total)
        .map(|(address, index)| (address.clone(), index, total))
        .collect()
}

/// The address of shard `index` (a broadcast retry); XXL-JOB falls back to the first address.
pub fn shard_address(addresses: &[String], index: i32) -> Option<&String> {
    usize::try_from(index)
        .ok()
        .and_then(|i| addresses.get(i))
        .or_else(|| addresses.first())
}

/// FAILOVER/BUSYOVER: probes each address in order; the first answering code 200 wins.
///
/// `probe(address)` performs `/beat` or `/idleBeat` and yields `(code, msg)`; an `Err` counts as
/// code 500 with the error as message, as XXL-JOB does with an exception. On success returns the
/// address and every result so far, in XXL-JOB's HTML form; otherwise all results as the error
/// (or [`ADDRESS_EMPTY_MSG`] for an empty list).
pub async fn probe_in_order<F, Fut>(
    kind: ProbeKind,
    addresses: &[String],
    mut probe: F,
) -> Result<(String, String), String>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Result<(i32, String), String>>,
{
    if addresses.is_empty() {
        return Err(ADDRESS_EMPTY_MSG.to_string());
    }
    let mut report = String::new();
    for address in addresses {
        let (code, msg) = probe(address.clone())
            .await
            .unwrap_or_else(|err| (500, err));
        if !report.is_empty() {
            report.push_str("<br><br>");
        }
        // Writing to a String cannot fail.
        let _ = write!(
            report,
            "{}：<br>address：{address}<br>code：{code}<br>msg：{msg}",
            kind.title()
        );
        if code == 200 {
            return Ok((address.clone(), report));
        }
    }
    Err(report)
}

#[cfg(test)]
mod tests {
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
    fn an_executor_without_answer_is_left_out_for_a_while() {
        let mut router = seeded(7);
        let addresses = three();
        assert!(router.no_answer(B, T0), "newly left out");
        assert!(!router.no_answer(B, T0 + 1), "already left out");
        let during: Vec<String> = (0..30)
            .map(|i| pick(&mut router, RouteStrategy::Round, 1, &addresses, T0 + i))
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
        // the probes are not spared: they find out for themselves
        assert_eq!(
            router.route(RouteStrategy::Failover, 1, &addresses, T0 + 5),
            RouteDecision::Probe(ProbeKind::Beat, three())
        );
        // tried again once the time is up
        let after: Vec<String> = (0..6)
            .map(|i| {
                pick(
                    &mut router,
                    RouteStrategy::Round,
                    1,
                    &addresses,
                    T0 + UNREACHABLE_FOR_MS + i,
                )
            })
            .collect();
        assert!(after.iter().any(|a| a == B), "{after:?}");
        assert!(
            router.no_answer(B, T0 + UNREACHABLE_FOR_MS),
            "left out anew"
        );
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
        router.answered(A);
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
        let unreachable = Unreachable::default();
        let mut first = seeded(3).sharing(unreachable.clone());
        let mut second = seeded(4).sharing(unreachable);
        let mut own = seeded(5);
        let addresses = three();
        assert!(first.no_answer(A, T0), "newly left out");
        assert!(
            !second.no_answer(A, T0 + 1),
            "already left out by the first"
        );
        assert_eq!(
            pick(&mut second, RouteStrategy::First, 1, &addresses, T0),
            B
        );
        // a router of its own knows nothing of it
        assert_eq!(pick(&mut own, RouteStrategy::First, 1, &addresses, T0), A);
        second.answered(A);
        assert_eq!(pick(&mut first, RouteStrategy::First, 1, &addresses, T0), A);
    }
}
