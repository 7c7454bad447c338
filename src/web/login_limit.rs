//! Failed logins, throttled per (user name, client address) with a growing wait, and per client
//! address over a sliding window, so a password cannot be guessed at speed. An account is never
//! locked: failures from one address make that address wait for that user, and the user logs in
//! from anywhere else as usual (locking the account would let anyone keep the administrator out).
//! A success clears the counts of its user name and address.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::LoginLimit;

/// Past this many counted keys, stale ones are swept on the next failure.
const SWEEP_AT: usize = 10_000;

/// The failures of one user name from one address.
#[derive(Debug, Clone, Copy)]
struct PairFailures {
    /// In a row, since the last success or quiet spell.
    count: u32,
    last: Instant,
    /// No attempt before this.
    next_allowed: Instant,
}

#[derive(Debug, Default)]
struct Counts {
    pairs: HashMap<(String, Option<IpAddr>), PairFailures>,
    addresses: HashMap<IpAddr, VecDeque<Instant>>,
}

/// The failure counts of one admin (each admin of a cluster counts its own).
#[derive(Debug)]
pub struct LoginLimiter {
    limit: LoginLimit,
    counts: Mutex<Counts>,
}

impl LoginLimiter {
    /// A limiter with no failures counted.
    pub fn new(limit: LoginLimit) -> Self {
        LoginLimiter {
            limit,
            counts: Mutex::new(Counts::default()),
        }
    }

    fn pair(user: &str, address: Option<IpAddr>) -> (String, Option<IpAddr>) {
        (user.to_lowercase(), address)
    }

    /// A pair's failures are forgotten after this long without one.
    fn forget_after(&self) -> Duration {
        self.limit.max_wait * 2
    }

    /// `Err(wait)` when this user name from this address, or this address, must wait before a
    /// login may be tried again.
    pub fn check(&self, user: &str, address: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut wait = Duration::ZERO;
        if let Some(p) = counts.pairs.get(&Self::pair(user, address)) {
            wait = p.next_allowed.saturating_duration_since(now);
        }
        if let Some(times) = address.and_then(|a| counts.addresses.get_mut(&a)) {
            forget_before(times, now, self.limit.window);
            if times.len() >= self.limit.per_address {
                let frees = times[times.len() - self.limit.per_address] + self.limit.window;
                wait = wait.max(frees.saturating_duration_since(now));
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
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if counts.pairs.len() + counts.addresses.len() >= SWEEP_AT {
            let (window, forget) = (self.limit.window, self.forget_after());
            counts
                .pairs
                .retain(|_, p| now.saturating_duration_since(p.last) < forget);
            counts.addresses.retain(|_, times| {
                forget_before(times, now, window);
                !times.is_empty()
            });
        }
        let forget = self.forget_after();
        let pair = counts
            .pairs
            .entry(Self::pair(user, address))
            .or_insert(PairFailures {
                count: 0,
                last: now,
                next_allowed: now,
            });
        if now.saturating_duration_since(pair.last) >= forget {
            pair.count = 0;
        }
        pair.count += 1;
        pair.last = now;
        if pair.count as usize >= self.limit.per_user {
            let doublings = (pair.count as usize - self.limit.per_user).min(20) as u32;
            let wait = self
                .limit
                .window
                .saturating_mul(1 << doublings)
                .min(self.limit.max_wait);
            pair.next_allowed = now + wait;
        }
        if let Some(a) = address {
            let max = self.limit.per_address;
            let times = counts.addresses.entry(a).or_default();
            times.push_back(now);
            // only the last `max` failures decide when logins are allowed again
            while times.len() > max {
                times.pop_front();
            }
        }
    }

    /// A login succeeded: its user name starts afresh from its address. The address's own
    /// count stays (it runs out with the window): one account of one's own would otherwise
    /// clear it between every few guesses at others.
    pub fn succeeded(&self, user: &str, address: Option<IpAddr>) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.pairs.remove(&Self::pair(user, address));
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
            max_wait: Duration::from_secs(600),
        })
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn the_sixth_attempt_from_one_address_waits_and_waits_longer_after_each_failure() {
        let l = limiter();
        let from = ip("10.0.0.1");
        let t0 = Instant::now();
        for i in 0..5 {
            assert!(l.check("admin", from, t0 + Duration::from_secs(i)).is_ok());
            l.failed("admin", from, t0 + Duration::from_secs(i));
        }
        let wait = l
            .check("Admin", from, t0 + Duration::from_secs(10))
            .unwrap_err();
        assert_eq!(
            wait,
            Duration::from_secs(54),
            "a minute after the fifth failure"
        );
        let t1 = t0 + Duration::from_secs(64);
        assert!(l.check("admin", from, t1).is_ok());
        // the next failure doubles the wait, up to the longest
        l.failed("admin", from, t1);
        assert_eq!(
            l.check("admin", from, t1).unwrap_err(),
            Duration::from_secs(120)
        );
        let mut t = t1;
        for _ in 0..5 {
            t += Duration::from_secs(601);
            l.failed("admin", from, t);
        }
        assert_eq!(
            l.check("admin", from, t).unwrap_err(),
            Duration::from_secs(600)
        );
        // another user from the same address is still let in
        assert!(l.check("other", from, t).is_ok());
    }

    #[test]
    fn failures_from_one_address_do_not_keep_the_user_out_elsewhere() {
        let l = limiter();
        let t0 = Instant::now();
        for _ in 0..7 {
            l.failed("admin", ip("203.0.113.9"), t0);
        }
        assert!(l.check("admin", ip("203.0.113.9"), t0).is_err());
        assert!(l.check("admin", ip("10.0.0.5"), t0).is_ok());
        assert!(l.check("admin", None, t0).is_ok());
    }

    #[test]
    fn an_address_trying_many_users_is_limited_and_a_success_does_not_clear_it() {
        let l = limiter();
        let from = ip("10.0.0.2");
        let t0 = Instant::now();
        for i in 0..8 {
            l.failed(&format!("user{i}"), from, t0);
        }
        assert!(l.check("fresh", from, t0).is_err());
        assert!(l.check("fresh", ip("10.0.0.3"), t0).is_ok());
        // guesses, a login to one's own account, more guesses: the address is still counted
        let other = ip("10.0.0.4");
        for i in 0..7 {
            l.failed(&format!("user{i}"), other, t0);
        }
        assert!(l.check("mine", other, t0).is_ok());
        l.succeeded("mine", other);
        l.failed("user9", other, t0);
        assert!(l.check("user10", other, t0).is_err());
        assert!(l.check("mine", other, t0 + Duration::from_secs(61)).is_ok());
    }

    #[test]
    fn a_pair_is_forgotten_after_a_quiet_spell() {
        let l = limiter();
        let from = ip("10.0.0.4");
        let t0 = Instant::now();
        for _ in 0..5 {
            l.failed("admin", from, t0);
        }
        let later = t0 + Duration::from_secs(1_200);
        assert!(l.check("admin", from, later).is_ok());
        l.failed("admin", from, later);
        assert!(
            l.check("admin", from, later).is_ok(),
            "counting starts again"
        );
    }
}
