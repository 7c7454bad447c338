//! Supervision: each admin actor's life on one board — started, stopped, restarted and why —
//! shown at `GET /api/v1/system/actors`, and the restart policy.
//!
//! An actor that meets an error it cannot handle (its work panicked) stops; its `Supervisor`
//! starts it again on the same mailbox, with state reset and re-read from the database at its
//! next pass. A restart is one WARN line with the actor, the reason and the count; an actor that
//! restarts more than [`RESTARTS_BEFORE_BACKOFF`] times in a minute waits before it works again,
//! doubling the wait up to [`MAX_BACKOFF`], so a fault that repeats cannot spin a core or flood
//! the log.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Display;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;

use crate::clock::now_ms;
use crate::store::{ActorStore, StoreError, StoreResult};

/// Restarts within [`RESTART_WINDOW`] an actor may make at once; past them it backs off.
pub const RESTARTS_BEFORE_BACKOFF: usize = 5;
/// The window restarts are counted in.
pub const RESTART_WINDOW: Duration = Duration::from_secs(60);
/// Longest wait of a backing-off actor before it works again.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How long the board waits for an actor to answer a [`Probe`].
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Answered as soon as the actor reads it: the wait measures the backlog ahead of it.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Probe;

/// Implements [`Probe`] for actors, each answering at once.
macro_rules! answers_probes {
    ($($actor:ty),* $(,)?) => {
        $(impl actix::Handler<$crate::actors::supervision::Probe> for $actor {
            type Result = ();
            fn handle(&mut self, _: $crate::actors::supervision::Probe, _: &mut Self::Context) {}
        })*
    };
}
pub(crate) use answers_probes;

/// What an actor is doing, as the board last heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ActorState {
    /// Started and working.
    Running,
    /// Restarted too often in a minute: waiting before it works again.
    BackingOff,
    /// Stopped and not restarted (the admin is shutting down).
    Stopped,
}

/// One actor's entry, as `GET /api/v1/system/actors` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActorReport {
    /// The actor's name.
    pub name: String,
    /// What it is doing.
    pub state: ActorState,
    /// Restarts since the admin started.
    pub restarts: u32,
    /// The reason of its last restart, if any.
    pub last_error: Option<String>,
    /// When it last restarted, epoch ms.
    pub last_restart_time: Option<i64>,
    /// When it (re)started, epoch ms.
    pub started_time: i64,
    /// How long a message waited in its mailbox before it was read, ms: its backlog in time;
    /// `None` when it did not answer within 2 s.
    pub mailbox_wait_ms: Option<u64>,
}

#[derive(Debug)]
struct Entry {
    state: ActorState,
    restarts: u32,
    recent: VecDeque<Instant>,
    last_error: Option<String>,
    last_restart_time: Option<i64>,
    started_time: i64,
    backoff: Duration,
    probe: Option<Recipient<Probe>>,
    #[cfg(feature = "fault-hooks")]
    fault_armed: bool,
}

/// The admin's actors and their lives; cheap to clone, one per admin.
#[derive(Clone, Default)]
pub struct ActorBoard {
    entries: Arc<Mutex<BTreeMap<&'static str, Entry>>>,
}

impl ActorBoard {
    /// An empty board.
    pub fn new() -> Self {
        ActorBoard::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<&'static str, Entry>> {
        // an entry is plain data written whole; a panic elsewhere cannot leave it half-written
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The handle an actor named `name` reports its life through.
    pub fn life(&self, name: &'static str) -> ActorLife {
        self.lock().entry(name).or_insert_with(|| Entry {
            state: ActorState::Running,
            restarts: 0,
            recent: VecDeque::new(),
            last_error: None,
            last_restart_time: None,
            started_time: now_ms(),
            backoff: Duration::ZERO,
            probe: None,
            #[cfg(feature = "fault-hooks")]
            fault_armed: false,
        });
        ActorLife {
            name,
            board: self.clone(),
        }
    }

    /// Lets the board measure `name`'s mailbox backlog through `probe`.
    pub fn watch(&self, name: &'static str, probe: Recipient<Probe>) {
        if let Some(entry) = self.lock().get_mut(name) {
            entry.probe = Some(probe);
        }
    }

    /// Every actor's entry, with its mailbox measured now.
    pub async fn report(&self) -> Vec<ActorReport> {
        let entries: Vec<_> = self
            .lock()
            .iter()
            .map(|(name, e)| {
                let report = ActorReport {
                    name: name.to_string(),
                    state: e.state,
                    restarts: e.restarts,
                    last_error: e.last_error.clone(),
                    last_restart_time: e.last_restart_time,
                    started_time: e.started_time,
                    mailbox_wait_ms: None,
                };
                (report, e.probe.clone())
            })
            .collect();
        let probes = entries.into_iter().map(|(mut report, probe)| async move {
            if let Some(probe) = probe {
                let sent = Instant::now();
                let answered = tokio::time::timeout(PROBE_TIMEOUT, probe.send(Probe)).await;
                if let Ok(Ok(())) = answered {
                    report.mailbox_wait_ms = Some(sent.elapsed().as_millis() as u64);
                }
            }
            report
        });
        futures_util::future::join_all(probes).await
    }

    /// Makes the next unit of work of `name` panic, as a bug would (test builds only).
    #[cfg(feature = "fault-hooks")]
    pub fn arm_fault(&self, name: &str) -> bool {
        match self.lock().iter_mut().find(|(n, _)| **n == name) {
            Some((_, entry)) => {
                entry.fault_armed = true;
                true
            }
            None => false,
        }
    }
}

/// One actor's reporting handle on the [`ActorBoard`].
#[derive(Clone)]
pub struct ActorLife {
    name: &'static str,
    board: ActorBoard,
}

impl ActorLife {
    /// A handle on a board of its own, for actors built outside an admin (tests).
    pub fn detached(name: &'static str) -> Self {
        ActorBoard::new().life(name)
    }

    /// The actor's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Notes a (re)start; returns how long the actor waits before it works: zero, unless it
    /// restarted too often in the last minute.
    pub fn started(&self) -> Duration {
        let mut board = self.board.lock();
        let Some(entry) = board.get_mut(self.name) else {
            return Duration::ZERO;
        };
        entry.started_time = now_ms();
        let wait = entry.backoff;
        entry.state = match wait.is_zero() {
            true => ActorState::Running,
            false => ActorState::BackingOff,
        };
        wait
    }

    /// Notes that the actor works again after backing off.
    pub fn working(&self) {
        if let Some(entry) = self.board.lock().get_mut(self.name) {
            entry.state = ActorState::Running;
        }
    }

    /// Notes that the actor stops for `reason` and is about to be restarted: one WARN line,
    /// and a second when the restarts of the last minute make it back off.
    pub fn failed(&self, reason: &dyn Display) {
        let mut board = self.board.lock();
        let Some(entry) = board.get_mut(self.name) else {
            return;
        };
        let now = Instant::now();
        entry.restarts += 1;
        entry.last_error = Some(reason.to_string());
        entry.last_restart_time = Some(now_ms());
        entry.recent.push_back(now);
        while entry
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) > RESTART_WINDOW)
        {
            entry.recent.pop_front();
        }
        log::warn!(
            "actor {} restarting after: {reason} (restart {})",
            self.name,
            entry.restarts
        );
        entry.backoff = backoff_after(entry.recent.len());
        if !entry.backoff.is_zero() {
            log::warn!(
                "actor {} restarted {} times within {:?}; backing off {:?} before it works again",
                self.name,
                entry.recent.len(),
                RESTART_WINDOW,
                entry.backoff
            );
        }
    }

    /// Notes that the actor stopped (restarted or shut down): one INFO line.
    pub fn stopped(&self) {
        log::info!("actor {} stopped", self.name);
        if let Some(entry) = self.board.lock().get_mut(self.name) {
            entry.state = ActorState::Stopped;
        }
    }

    /// Whether a test armed a fault for this actor's next unit of work (clears it).
    pub fn take_fault(&self) -> bool {
        #[cfg(feature = "fault-hooks")]
        if let Some(entry) = self.board.lock().get_mut(self.name) {
            return std::mem::take(&mut entry.fault_armed);
        }
        false
    }
}

impl ActorLife {
    /// Stops the actor when `e` is a panic of its work, which it cannot handle: its supervisor
    /// then restarts it with fresh state. Other errors are the caller's; returns whether it
    /// stopped.
    pub fn stop_on_panic<A>(&self, e: &StoreError, ctx: &mut Context<A>) -> bool
    where
        A: Actor<Context = Context<A>>,
    {
        if !matches!(e, StoreError::Panicked(_)) {
            return false;
        }
        self.failed(e);
        ctx.stop();
        true
    }

    /// A store task that panics when a test armed a fault for this actor, as a bug in its work
    /// would; otherwise nothing.
    pub async fn fault_point(&self, store: &ActorStore) -> StoreResult<()> {
        let armed = self.take_fault();
        if !armed {
            return Ok(());
        }
        let name = self.name;
        store
            .run(move |_| async move {
                if armed {
                    panic!("fault injected into actor {name} by a test");
                }
                Ok(())
            })
            .await
    }
}

/// The wait before work after `recent` restarts within the window: none up to
/// [`RESTARTS_BEFORE_BACKOFF`], then 1 s doubling per extra restart, at most [`MAX_BACKOFF`].
pub fn backoff_after(recent: usize) -> Duration {
    match recent.checked_sub(RESTARTS_BEFORE_BACKOFF + 1) {
        None => Duration::ZERO,
        Some(extra) => Duration::from_secs(1u64 << extra.min(6)).min(MAX_BACKOFF),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_past_the_allowance_and_is_bounded() {
        assert_eq!(backoff_after(0), Duration::ZERO);
        assert_eq!(backoff_after(RESTARTS_BEFORE_BACKOFF), Duration::ZERO);
        assert_eq!(
            backoff_after(RESTARTS_BEFORE_BACKOFF + 1),
            Duration::from_secs(1)
        );
        assert_eq!(
            backoff_after(RESTARTS_BEFORE_BACKOFF + 3),
            Duration::from_secs(4)
        );
        assert_eq!(backoff_after(1_000), MAX_BACKOFF);
    }

    #[actix_rt::test]
    async fn the_board_counts_restarts_and_backs_off_after_too_many() {
        let board = ActorBoard::new();
        let life = board.life("schedule");
        assert_eq!(life.started(), Duration::ZERO);
        for _ in 0..RESTARTS_BEFORE_BACKOFF {
            life.failed(&"boom");
            assert_eq!(life.started(), Duration::ZERO);
        }
        life.failed(&"boom again");
        assert_eq!(life.started(), Duration::from_secs(1));
        let report = board.report().await;
        assert_eq!(report.len(), 1);
        let entry = &report[0];
        assert_eq!(entry.name, "schedule");
        assert_eq!(entry.state, ActorState::BackingOff);
        assert_eq!(entry.restarts, RESTARTS_BEFORE_BACKOFF as u32 + 1);
        assert_eq!(entry.last_error.as_deref(), Some("boom again"));
        assert_eq!(entry.mailbox_wait_ms, None, "no probe to measure with");
        life.working();
        life.stopped();
        assert_eq!(board.report().await[0].state, ActorState::Stopped);
    }

    struct Quiet;
    impl Actor for Quiet {
        type Context = Context<Self>;
    }
    answers_probes!(Quiet);

    #[actix_rt::test]
    async fn the_board_measures_an_actors_mailbox() {
        let board = ActorBoard::new();
        let _life = board.life("quiet");
        board.watch("quiet", Quiet.start().recipient());
        let report = board.report().await;
        assert!(report[0].mailbox_wait_ms.is_some(), "{report:?}");
    }
}
