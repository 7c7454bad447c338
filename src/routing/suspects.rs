//! The executors a call got no answer from: one set for all the routers of an admin, kept in
//! step with the other admins' through the database (`executor_suspect`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How long this admin's own marks and clears win over what it reads from the database: a read
/// that began before the write landed must not undo it.
pub const OWN_CHANGE_WINS_MS: i64 = 3_000;

/// Executors a call got no answer from (refused, reset, timed out, not XXL-JOB's envelope):
/// the strategies that do not probe leave them out and FAILOVER and BUSYOVER probe them last,
/// until they beat again or answer. Shared by every router of an admin (each worker of both
/// pools), behind a lock held for one map operation, so the first call an executor fails to
/// answer spares the other workers' triggers the same failure.
#[derive(Debug, Clone, Default)]
pub struct Suspects(Arc<Mutex<SuspectSet>>);

#[derive(Debug, Default)]
struct SuspectSet {
    /// Each suspect address and since when (epoch ms).
    since: HashMap<String, i64>,
    /// This admin's own changes of the last [`OWN_CHANGE_WINS_MS`]: suspect or not, and when.
    own: HashMap<String, (bool, i64)>,
}

impl Suspects {
    fn lock(&self) -> MutexGuard<'_, SuspectSet> {
        // the sets are valid whatever a panicking holder did (each change is one call)
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks `address` suspect at `now_ms`; true when it was not already.
    pub fn mark(&self, address: &str, now_ms: i64) -> bool {
        let mut set = self.lock();
        set.own.insert(address.to_string(), (true, now_ms));
        match set.since.contains_key(address) {
            true => false,
            false => {
                set.since.insert(address.to_string(), now_ms);
                true
            }
        }
    }

    /// Clears `address` (it answered at `now_ms`); true when it was suspect.
    pub fn clear(&self, address: &str, now_ms: i64) -> bool {
        let mut set = self.lock();
        if set.since.is_empty() {
            return false;
        }
        let was = set.since.remove(address).is_some();
        if was {
            set.own.insert(address.to_string(), (false, now_ms));
        }
        was
    }

    /// Whether `address` is suspect.
    pub fn contains(&self, address: &str) -> bool {
        self.lock().since.contains_key(address)
    }

    /// The suspect addresses and since when.
    pub fn snapshot(&self) -> HashMap<String, i64> {
        self.lock().since.clone()
    }

    /// Takes the database's set (`address`, since) read at `now_ms`, keeping this admin's own
    /// changes of the last [`OWN_CHANGE_WINS_MS`] over it.
    pub fn refresh(&self, stored: impl IntoIterator<Item = (String, i64)>, now_ms: i64) {
        let mut set = self.lock();
        let mut since: HashMap<String, i64> = stored.into_iter().collect();
        set.own
            .retain(|_, (_, at)| now_ms.saturating_sub(*at) < OWN_CHANGE_WINS_MS);
        for (address, (suspect, at)) in &set.own {
            match suspect {
                true => {
                    since.entry(address.clone()).or_insert(*at);
                }
                false => {
                    since.remove(address);
                }
            }
        }
        set.since = since;
    }

    /// `addresses` without the suspects; all of them when none would be left.
    pub(super) fn leave_out<'a>(&self, addresses: &'a [String]) -> std::borrow::Cow<'a, [String]> {
        use std::borrow::Cow;
        let set = self.lock();
        if set.since.is_empty() {
            return Cow::Borrowed(addresses);
        }
        let suspect = |a: &String| set.since.contains_key(a);
        match addresses.iter().filter(|a| suspect(a)).count() {
            n if n == 0 || n == addresses.len() => Cow::Borrowed(addresses),
            _ => Cow::Owned(addresses.iter().filter(|a| !suspect(a)).cloned().collect()),
        }
    }

    /// `addresses` with the suspects moved to the end, each part in its order.
    pub(super) fn last(&self, addresses: &[String]) -> Vec<String> {
        let set = self.lock();
        let (mut fine, suspect): (Vec<String>, Vec<String>) = addresses
            .iter()
            .cloned()
            .partition(|a| !set.since.contains_key(a));
        fine.extend(suspect);
        fine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_mark_stands_until_cleared_and_all_are_used_when_all_are_suspect() {
        let s = Suspects::default();
        let all = list(&["a", "b", "c"]);
        assert!(s.mark("b", 1_000));
        assert!(!s.mark("b", 2_000), "marked twice");
        assert_eq!(s.snapshot().get("b"), Some(&1_000));
        assert_eq!(&*s.leave_out(&all), &list(&["a", "c"])[..]);
        assert_eq!(s.last(&all), list(&["a", "c", "b"]));
        assert!(s.mark("a", 1_000) && s.mark("c", 1_000));
        assert_eq!(&*s.leave_out(&all), &all[..], "all suspect: all used");
        assert!(s.clear("a", 5_000));
        assert!(!s.clear("a", 5_000));
        assert_eq!(&*s.leave_out(&all), &list(&["a"])[..]);
    }

    #[test]
    fn a_refresh_takes_the_databases_set_but_not_over_this_admins_recent_changes() {
        let s = Suspects::default();
        s.mark("own", 10_000);
        s.mark("cleared", 9_000);
        s.clear("cleared", 10_000);
        // read before this admin's writes landed: "own" missing, "cleared" still there
        s.refresh(
            [("cleared".to_string(), 9_000), ("other".to_string(), 8_000)],
            11_000,
        );
        let seen = s.snapshot();
        assert_eq!(seen.get("own"), Some(&10_000));
        assert_eq!(seen.get("other"), Some(&8_000));
        assert!(!seen.contains_key("cleared"));
        // later, the database is what counts
        s.refresh(
            [("cleared".to_string(), 12_000)],
            10_000 + OWN_CHANGE_WINS_MS,
        );
        let seen = s.snapshot();
        assert_eq!(seen.keys().collect::<Vec<_>>(), vec!["cleared"]);
    }
}
