//! Failed logins, counted per user name and per client address over a sliding window: past
//! the limit, a login is refused (429) until the oldest failure leaves the window, so a password
//! cannot be guessed at speed. A success clears both counts.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    User(String),
    Address(IpAddr),
}

/// How many failed logins, over how long, a user name and a client address may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimit {
    /// Failures per user name in the window before logins for it are refused.
    pub per_user: usize,
    /// Failures per client address in the window (many users may share one behind a NAT).
    pub per_address: usize,
    /// The sliding window.
    pub window: Duration,
}

impl Default for LoginLimit {
    fn default() -> Self {
        LoginLimit {
            per_user: 5,
            per_address: 20,
            window: Duration::from_secs(60),
        }
    }
}

/// Past this many counted keys, expired ones are swept on the next failure.
const SWEEP_AT: usize = 10_000;

/// The failure counts of one admin (each admin of a cluster counts its own).
#[derive(Debug)]
pub struct LoginLimiter {
    limit: LoginLimit,
    failures: Mutex<HashMap<Key, VecDeque<Instant>>>,
}

impl LoginLimiter {
    /// A limiter with no failures counted.
    pub fn new(limit: LoginLimit) -> Self {
        LoginLimiter {
            limit,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn keys(user: &str, address: Option<IpAddr>) -> impl Iterator<Item = Key> {
        [
            Some(Key::User(user.to_lowercase())),
            address.map(Key::Address),
        ]
        .into_iter()
        .flatten()
    }

    fn max_for(&self, key: &Key) -> usize {
        match key {
            Key::User(_) => self.limit.per_user,
            Key::Address(_) => self.limit.per_address,
        }
    }

    /// `Err(wait)` when the user name or the address used up its failures: a login may be
    /// tried again after `wait`.
    pub fn check(&self, user: &str, address: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let mut wait = Duration::ZERO;
        for key in Self::keys(user, address) {
            let max = self.max_for(&key);
            if let Some(times) = failures.get_mut(&key) {
                forget_before(times, now, self.limit.window);
                if times.len() >= max {
                    let frees = times[times.len() - max] + self.limit.window;
                    wait = wait.max(frees.saturating_duration_since(now));
                }
            }
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait)
        }
    }

    /// Counts a wrong password (or unknown user).
    pub fn failed(&self, user: &str, address: Option<IpAddr>, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() >= SWEEP_AT {
            let window = self.limit.window;
            failures.retain(|_, times| {
                forget_before(times, now, window);
                !times.is_empty()
            });
        }
        for key in Self::keys(user, address) {
            let max = self.max_for(&key);
            let times = failures.entry(key).or_default();
            times.push_back(now);
            // only the last `max` failures decide when logins are allowed again
            while times.len() > max {
                times.pop_front();
            }
        }
    }

    /// A login succeeded: its user name and address start afresh.
    pub fn succeeded(&self, user: &str, address: Option<IpAddr>) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        for key in Self::keys(user, address) {
            failures.remove(&key);
        }
    }
}

fn forget_before(times: &mut VecDeque<Instant>, now: Instant, window: Duration) {
    while times
        .front()
        .is_some_and(|t| now.saturating_duration_since(*t) >= window)
    {
        times.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter() -> LoginLimiter {
        LoginLimiter::new(LoginLimit {
            per_user: 5,
            per_address: 8,
            window: Duration::from_secs(60),
        })
    }

    #[test]
    fn the_sixth_attempt_within_the_window_is_refused_until_it_passes() {
        let l = limiter();
        let ip = Some("10.0.0.1".parse().unwrap());
        let t0 = Instant::now();
        for i in 0..5 {
            assert!(l.check("admin", ip, t0 + Duration::from_secs(i)).is_ok());
            l.failed("admin", ip, t0 + Duration::from_secs(i));
        }
        let wait = l
            .check("Admin", ip, t0 + Duration::from_secs(10))
            .unwrap_err();
        assert_eq!(
            wait,
            Duration::from_secs(50),
            "until the first failure is a minute old"
        );
        assert!(l.check("admin", ip, t0 + Duration::from_secs(60)).is_ok());
        // another user from the same address is still let in
        assert!(l.check("other", ip, t0 + Duration::from_secs(10)).is_ok());
    }

    #[test]
    fn an_address_trying_many_users_is_limited_and_a_success_clears() {
        let l = limiter();
        let ip = Some("10.0.0.2".parse().unwrap());
        let t0 = Instant::now();
        for i in 0..8 {
            l.failed(&format!("user{i}"), ip, t0);
        }
        assert!(l.check("fresh", ip, t0).is_err());
        assert!(l
            .check("fresh", Some("10.0.0.3".parse().unwrap()), t0)
            .is_ok());
        l.succeeded("fresh", ip);
        assert!(l.check("fresh", ip, t0).is_ok());
    }
}
