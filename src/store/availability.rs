//! Whether the database answers, as the admin's own work finds it: one log line when it stops
//! answering and one when it answers again, however many calls fail in between.
//!
//! During an outage every actor's pass fails, each on its own timer; an operator needs to read
//! that the database went away and when it came back, not a line per failed query.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{StoreError, StoreResult};

/// See [`Availability`].
const SETTLE: Duration = Duration::from_secs(1);

/// The database's state as last observed; shared by every clone of a [`super::Store`].
///
/// A call counts only if it started after the last change: when an outage begins, calls that
/// were already answered but are noted a moment later must not end it, and once it is over, a
/// call stuck since the outage must not start another. An outage ends only with a call begun
/// `SETTLE` after it began, since connections break one by one as a server goes away and the
/// last of them still answer for a moment.
#[derive(Debug)]
pub struct Availability {
    /// How long after an outage began a call must start to end it.
    settle: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Answering since this instant (the start, or the end of the last outage).
    Up(Instant),
    /// Unreachable since this instant.
    Down(Instant),
}

impl Default for Availability {
    fn default() -> Self {
        Availability {
            settle: SETTLE,
            state: Mutex::new(State::Up(Instant::now())),
        }
    }
}

impl Availability {
    /// Notes the result of a database call begun at `started`: an outage error marks the
    /// database down, any answer marks it up; each change is logged once.
    pub fn observe<T>(&self, result: &StoreResult<T>, started: Instant) {
        match result {
            // this process is shutting down (it closed its pool, or its runtime stops under a
            // call in flight): the database is not down
            Err(StoreError::Database(sqlx::Error::PoolClosed)) => {}
            Err(StoreError::Database(sqlx::Error::Io(e)))
                if tokio::runtime::is_rt_shutdown_err(e) => {}
            Err(e) if e.is_outage() => self.failed(e, started),
            // an answer, possibly an error of the statement's own
            _ => self.answered(started),
        }
    }

    /// Notes a call begun at `started` that the database did not answer in time.
    pub fn timed_out(&self, why: &str, started: Instant) {
        self.failed(&why, started);
    }

    /// Whether the database answered the latest calls.
    pub fn is_up(&self) -> bool {
        matches!(*self.lock(), State::Up(_))
    }

    fn answered(&self, started: Instant) {
        let mut state = self.lock();
        if let State::Down(since) = *state {
            if started >= since + self.settle {
                *state = State::Up(Instant::now());
                log::info!(
                    "database reachable again after {:.1} s; scheduling resumes",
                    since.elapsed().as_secs_f64()
                );
            }
        }
    }

    fn failed(&self, e: &dyn std::fmt::Display, started: Instant) {
        let mut state = self.lock();
        if let State::Up(since) = *state {
            if started >= since {
                *state = State::Down(Instant::now());
                log::error!(
                    "database unreachable ({e}); scheduling pauses and is retried with backoff until it answers"
                );
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // the guarded value is a plain timestamp: a panic elsewhere cannot leave it half-written
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl StoreError {
    /// Whether this error says the database could not be reached (as opposed to an answer
    /// refusing the statement): connection refused or reset, pool timeout, server shutting down.
    pub fn is_outage(&self) -> bool {
        let StoreError::Database(e) = self else {
            return false;
        };
        match e {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => true,
            sqlx::Error::Database(db) => {
                let code = db.code().unwrap_or_default();
                // PostgreSQL: class 08 (connection exception), 57P01-03 (shutdown, cannot
                // connect now); MySQL: 1053 server shutdown, 2006/2013 connection lost
                code.starts_with("08")
                    || code.starts_with("57P")
                    || matches!(code.as_ref(), "1053" | "2006" | "2013")
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> StoreResult<()> {
        Err(StoreError::Database(sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionRefused,
        ))))
    }

    fn unsettled() -> Availability {
        Availability {
            settle: Duration::ZERO,
            ..Availability::default()
        }
    }

    #[test]
    fn an_outage_is_noted_once_and_ends_with_an_answer() {
        let availability = unsettled();
        assert!(availability.is_up());
        availability.observe(&refused(), Instant::now());
        let down = *availability.lock();
        availability.observe(&refused(), Instant::now());
        // a second failure does not restart the outage
        assert_eq!(*availability.lock(), down);
        assert!(!availability.is_up());
        availability.observe(&Ok(()), Instant::now());
        assert!(availability.is_up());
    }

    #[test]
    fn calls_begun_before_a_change_do_not_undo_it() {
        let availability = unsettled();
        let before_outage = Instant::now();
        availability.observe(&refused(), Instant::now());
        // answered just before the outage, noted just after
        availability.observe(&Ok(()), before_outage);
        assert!(!availability.is_up());
        let during_outage = Instant::now();
        availability.observe(&Ok(()), Instant::now());
        assert!(availability.is_up());
        // stuck since the outage, failed after it ended
        availability.observe(&refused(), during_outage);
        assert!(availability.is_up());
    }

    #[test]
    fn a_refused_statement_is_an_answer() {
        let availability = unsettled();
        availability.observe(&refused(), Instant::now());
        let duplicate: StoreResult<()> = Err(StoreError::Duplicate("user".into()));
        assert!(!StoreError::Duplicate("user".into()).is_outage());
        availability.observe(&duplicate, Instant::now());
        assert!(availability.is_up());
        assert!(StoreError::Database(sqlx::Error::PoolTimedOut).is_outage());
        assert!(!StoreError::Database(sqlx::Error::RowNotFound).is_outage());
    }

    #[test]
    fn an_outage_outlasts_the_answers_of_its_first_moment() {
        let availability = Availability::default();
        availability.observe(&refused(), Instant::now());
        availability.observe(&Ok(()), Instant::now());
        assert!(!availability.is_up());
        availability.observe(&Ok(()), Instant::now() + SETTLE);
        assert!(availability.is_up());
    }

    #[test]
    fn a_pool_closed_at_shutdown_is_no_outage() {
        let availability = unsettled();
        let closed: StoreResult<()> = Err(StoreError::Database(sqlx::Error::PoolClosed));
        availability.observe(&closed, Instant::now());
        assert!(availability.is_up());
    }

    #[test]
    fn a_runtime_stopping_under_a_call_is_no_outage() {
        // the error a socket gives once its runtime shuts down, as a call in flight meets it
        let stopped = tokio::runtime::Runtime::new().unwrap();
        let listener = stopped.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"));
        drop(stopped);
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let error = runtime.block_on(listener.unwrap().accept()).unwrap_err();
        let availability = unsettled();
        let gone: StoreResult<()> = Err(StoreError::Database(sqlx::Error::Io(error)));
        availability.observe(&gone, Instant::now());
        assert!(availability.is_up());
        // any other broken socket still is one
        availability.observe(&refused(), Instant::now());
        assert!(!availability.is_up());
    }
}
