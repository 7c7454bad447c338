//! The strategies that keep per-job state: ROUND, LEAST_FREQUENTLY_USED and LEAST_RECENTLY_USED,
//! each job's state dropped a day after its last use.

use super::*;

/// Per-job state that is dropped wholesale once it is older than [`STATE_TTL_MS`].
#[derive(Debug)]
pub(super) struct Expiring<T> {
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
    pub(super) fn jobs(&mut self, now_ms: i64) -> &mut HashMap<i32, T> {
        if self.valid_until.is_none_or(|until| now_ms > until) {
            self.jobs.clear();
            self.valid_until = Some(now_ms.saturating_add(STATE_TTL_MS));
        }
        &mut self.jobs
    }
}

impl<R: Rng> Router<R> {
    /// ROUND: a random start spreads jobs that begin together over the executors.
    pub(super) fn round(&mut self, job_id: i32, addresses: &[String], now_ms: i64) -> String {
        let counter = match self.round.jobs(now_ms).get(&job_id) {
            Some(&count) if count <= COUNT_LIMIT => count + 1,
            _ => self.rng.gen_range(0..ROUND_START_BOUND),
        };
        self.round.jobs(now_ms).insert(job_id, counter);
        addresses[counter as usize % addresses.len()].clone()
    }

    /// LEAST_FREQUENTLY_USED; ties go to the smallest address (XXL-JOB: HashMap order).
    pub(super) fn least_frequently_used(
        &mut self,
        job_id: i32,
        addresses: &[String],
        now_ms: i64,
    ) -> String {
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
    pub(super) fn least_recently_used(
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
