//! What a workflow node's fire is routed by (its group, the group's live executors, the
//! cordons), kept for a moment between the runner's batches: a burst of results moves runs on in
//! many small batches, each of which would read the same rows again.
//!
//! A snapshot serves while this process has written none of those rows since it was read
//! ([`Store::routing_writes`](crate::store::Store::routing_writes)), and for at most
//! [`ROUTING_KEPT_MS`]: what other admins write is seen that much later. A group no executor
//! could take a fire of (no live registration, no address) is never kept, so one that has just
//! registered anywhere is found at the next fire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::actors::timing_rules::ROUTING_KEPT_MS;
use crate::model::{AddressType, ExecutorCordon, JobGroup, Registration};

/// The addresses a group's fires go to: its live registrations (automatic; not the list the
/// monitor last wrote, so a new executor is used at once) or its fixed list (manual).
pub(super) fn group_addresses<'a>(
    group: &'a JobGroup,
    live: &'a HashMap<String, Arc<Vec<Registration>>>,
) -> impl Iterator<Item = &'a str> {
    let (registered, listed): (&[Registration], &[String]) = match group.address_type {
        AddressType::Auto => (live.get(&group.app_name).map_or(&[], |l| l.as_slice()), &[]),
        AddressType::Manual => (&[], &group.address_list),
    };
    registered
        .iter()
        .map(|r| r.registry_value.as_str())
        .chain(listed.iter().map(String::as_str))
}

/// The rows one batch's routing reads.
#[derive(Debug, Clone, Default)]
pub(super) struct RoutingRows {
    /// Each group by id (`None`: it does not exist).
    pub groups: HashMap<i32, Option<Arc<JobGroup>>>,
    /// The live registrations of each AUTO group's app name.
    pub live: HashMap<String, Arc<Vec<Registration>>>,
    /// The cordons by address key.
    pub cordons: HashMap<String, ExecutorCordon>,
}

#[derive(Debug)]
struct Snapshot {
    rows: Arc<RoutingRows>,
    /// [`Store::routing_writes`](crate::store::Store::routing_writes) before they were read.
    writes: u64,
    read_at: i64,
}

/// The last node batch's routing rows, shared by the admin's trigger workers.
#[derive(Debug, Default)]
pub struct RoutingCache {
    last: Mutex<Option<Snapshot>>,
}

impl RoutingCache {
    /// The kept rows, when they hold every group of `groups` and nothing made them stale.
    pub(super) fn get(&self, groups: &[i32], writes: u64, now: i64) -> Option<Arc<RoutingRows>> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let s = last.as_ref()?;
        let current = s.writes == writes && (0..ROUTING_KEPT_MS).contains(&(now - s.read_at));
        (current && groups.iter().all(|g| s.rows.groups.contains_key(g))).then(|| s.rows.clone())
    }

    /// Keeps a copy of `rows`, read at `read_at` after `writes` writes, less the groups a fire
    /// could not be sent to.
    pub(super) fn keep(&self, rows: &RoutingRows, writes: u64, read_at: i64) {
        let mut rows = rows.clone();
        let live = &rows.live;
        rows.groups.retain(|_, group| {
            group
                .as_deref()
                .is_some_and(|g| group_addresses(g, live).next().is_some())
        });
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        *last = Some(Snapshot {
            rows: Arc::new(rows),
            writes,
            read_at,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InstanceOverflow;

    fn group(id: i32, app: &str, address_type: AddressType, addresses: &[&str]) -> JobGroup {
        JobGroup {
            id,
            app_name: app.into(),
            title: app.into(),
            address_type,
            address_list: addresses.iter().map(|a| a.to_string()).collect(),
            access_token: None,
            update_time: 0,
            max_concurrent_instances: 0,
            instance_overflow: InstanceOverflow::Skip,
        }
    }

    fn registration(app: &str) -> Registration {
        Registration {
            id: 1,
            registry_group: "EXECUTOR".into(),
            registry_key: app.into(),
            registry_value: format!("http://{app}:9999/"),
            protocol: "v2".into(),
            update_time: 0,
            load: None,
            labels: Default::default(),
        }
    }

    fn rows() -> RoutingRows {
        let mut rows = RoutingRows::default();
        let auto = group(1, "billing", AddressType::Auto, &[]);
        let empty = group(2, "reports", AddressType::Auto, &[]);
        let manual = group(3, "legacy", AddressType::Manual, &["http://10.0.0.9:9999/"]);
        let bare = group(4, "nowhere", AddressType::Manual, &[]);
        for g in [auto, empty, manual, bare] {
            rows.groups.insert(g.id, Some(Arc::new(g)));
        }
        rows.groups.insert(5, None);
        rows.live
            .insert("billing".into(), Arc::new(vec![registration("billing")]));
        rows.live.insert("reports".into(), Arc::new(vec![]));
        rows
    }

    #[test]
    fn kept_rows_serve_until_a_write_or_their_time_is_up() {
        let cache = RoutingCache::default();
        assert!(cache.get(&[1], 0, 1_000).is_none());
        cache.keep(&rows(), 7, 1_000);
        let got = cache
            .get(&[1, 3], 7, 1_000 + ROUTING_KEPT_MS - 1)
            .expect("kept");
        assert_eq!(got.live["billing"].len(), 1);
        // this process wrote a group, a registration or a cordon since
        assert!(cache.get(&[1], 8, 1_001).is_none());
        // other admins' writes: seen once the time is up
        assert!(cache.get(&[1], 7, 1_000 + ROUTING_KEPT_MS).is_none());
        // a clock that went back does not make old rows current
        assert!(cache.get(&[1], 7, 999).is_none());
    }

    #[test]
    fn groups_no_fire_could_go_to_are_not_kept() {
        let cache = RoutingCache::default();
        cache.keep(&rows(), 0, 0);
        assert!(cache.get(&[1], 0, 0).is_some(), "AUTO with a live executor");
        assert!(cache.get(&[3], 0, 0).is_some(), "MANUAL with an address");
        for missing in [2, 4, 5] {
            assert!(cache.get(&[missing], 0, 0).is_none(), "group {missing}");
            // one such group in a batch: the batch reads them all again
            assert!(
                cache.get(&[1, missing], 0, 0).is_none(),
                "group 1 and {missing}"
            );
        }
    }
}
