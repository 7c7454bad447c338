//! Executor selection: the ten routing strategies of XXL-JOB's admin.
//!
//! [`Router`] holds the per-job state of ROUND, LEAST_FREQUENTLY_USED and
//! LEAST_RECENTLY_USED. It does no I/O and reads no clock: the caller passes the time in. Each
//! trigger worker owns one router, shared by that worker's fire tasks through `Rc<RefCell<…>>`:
//! mutable state shared on one thread only, borrowed for one synchronous [`Router::route`] call
//! and never across an `.await`, so it needs no lock. A job's triggers always reach the same
//! worker of a pool, so its state lives in one router per pool; like XXL-JOB, every admin node
//! has its own. Only the suspect executors ([`Suspects`]) are one set for all the routers of an
//! admin, behind a lock held for one map operation.
//!
//! The address list is the caller's: for an automatic group its live registrations, ordered by
//! address; for a manual group the list as typed. FIRST and LAST take that order as it is, as
//! XXL-JOB does.
//!
//! FAILOVER and BUSYOVER need the network, so [`Router::route`] only says which probe to run
//! and [`probe_in_order`] runs it with a caller-supplied HTTP call.
//!
//! Unlike XXL-JOB, an executor whose last call got no answer (the caller says so:
//! [`Router::no_answer`]) is a suspect ([`Suspects`]): the strategies that do not probe leave
//! it out and FAILOVER and BUSYOVER probe it last, until it beats again or answers (the caller
//! says so: [`Router::answered`]). A crashed executor stays registered until its registration
//! expires (90 s), and XXL-JOB's ROUND sends it its share of the triggers all that time, each
//! one failing. While every address is suspect, all are used.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::future::Future;

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
    /// Executors whose last call got no answer.
    suspects: Suspects,
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
            suspects: Suspects::default(),
        }
    }

    /// The same router with the suspects of `suspects`, a set other routers share.
    pub fn sharing(self, suspects: Suspects) -> Self {
        Router { suspects, ..self }
    }

    /// Notes that a call to `address` got no answer at `now_ms` (refused, reset, timed out, not
    /// XXL-JOB's envelope): it is a suspect from now on. Returns whether it was not already.
    pub fn no_answer(&mut self, address: &str, now_ms: i64) -> bool {
        self.suspects.mark(address, now_ms)
    }

    /// Notes that `address` answered a call at `now_ms`: it is used again at once. Returns
    /// whether it was a suspect.
    pub fn answered(&mut self, address: &str, now_ms: i64) -> bool {
        self.suspects.clear(address, now_ms)
    }

    /// Decides the executor for one trigger of `job_id`, as far as that needs no network.
    ///
    /// `addresses` in the caller's order (FIRST and LAST pick its ends); `now_ms` (epoch ms)
    /// drives the 24 h reset of the per-job state.
    pub fn route(
        &mut self,
        strategy: RouteStrategy,
        job_id: i32,
        addresses: &[String],
        now_ms: i64,
    ) -> RouteDecision {
        let addresses = match strategy {
            // the probes find out for themselves, the suspects last
            RouteStrategy::Failover | RouteStrategy::Busyover => {
                Cow::Owned(self.suspects.last(addresses))
            }
            _ => self.suspects.leave_out(addresses),
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
}

mod broadcast;
mod hashing;
mod probe;
mod selector;
mod stateful;
mod suspects;

pub use broadcast::{broadcast_targets, shard_address};
pub use hashing::{consistent_hash, hash_key};
pub use probe::probe_in_order;
pub use selector::{Selector, SELECTOR_MAX};
use stateful::Expiring;
pub use suspects::{Suspects, OWN_CHANGE_WINS_MS};

#[cfg(test)]
mod tests;
