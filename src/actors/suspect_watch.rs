//! SuspectWatch: keeps this admin's suspect executors ([`Suspects`]) in step with the database,
//! where every admin of the cluster marks the executors its calls got no answer from.
//!
//! Each second it reads the marks: those made by other admins join this admin's set, and an
//! executor that registered (beat) after it was marked is cleared for everyone. Every
//! [`SUSPECT_PROBE_MS`] it probes each suspect with `/beat`, without a token (any XXL-JOB
//! answer, even a refusal, says the process is back; the token is not sent to an executor that
//! might not be the one it was), and forgets marks of addresses no group can route to any more.

use std::collections::HashSet;
use std::time::Duration;

use actix::prelude::*;

use super::supervision::{answers_probes, ActorLife};
use super::timing_rules::{EXECUTOR_DEAD_AFTER_MS, SUSPECT_PROBE_MS, SUSPECT_REFRESH_MS};
use crate::clock::now_ms;
use crate::executor_calls::{Credentials, ExecutorCalls};
use crate::model::ExecutorSuspect;
use crate::routing::Suspects;
use crate::store::{ActorStore, Store, StoreResult};

/// A `/beat` probe gives up after this: an executor that is back answers within it.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads and probes the suspect executors; supervised, so a crash restarts it.
pub struct SuspectWatch {
    store: ActorStore,
    suspects: Suspects,
    life: ActorLife,
    /// A pass still running: the next tick is skipped rather than piled up.
    busy: bool,
    /// When the last probe pass started.
    probed_at: i64,
}

impl SuspectWatch {
    /// A watch over `suspects`, the set this admin's routers share.
    pub fn new(store: ActorStore, suspects: Suspects) -> Self {
        SuspectWatch {
            store,
            suspects,
            life: ActorLife::detached("suspect-watch"),
            busy: false,
            probed_at: 0,
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        SuspectWatch { life, ..self }
    }
}

impl Actor for SuspectWatch {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let wait = self.life.started();
        ctx.notify_later(Tick, wait);
        let every = Duration::from_millis(SUSPECT_REFRESH_MS as u64);
        ctx.run_interval(every, |_, ctx| ctx.notify(Tick));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

// the marks live in the database and in the shared set; a restart reads them again
impl Supervised for SuspectWatch {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        self.busy = false;
    }
}

answers_probes!(SuspectWatch);

#[derive(Message)]
#[rtype(result = "()")]
struct Tick;

impl Handler<Tick> for SuspectWatch {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _msg: Tick, _ctx: &mut Self::Context) -> Self::Result {
        if self.busy {
            return Box::pin(fut::ready(()));
        }
        self.busy = true;
        let now = now_ms();
        let probe = now - self.probed_at >= SUSPECT_PROBE_MS;
        if probe {
            self.probed_at = now;
        }
        let (store, suspects, life) =
            (self.store.clone(), self.suspects.clone(), self.life.clone());
        life.working();
        Box::pin(
            async move {
                life.fault_point(&store).await?;
                let marks = store.run(|s| async move { refresh(&s).await }).await?;
                suspects.refresh(marks.iter().map(|m| (m.address.clone(), m.since)), now);
                if probe && !marks.is_empty() {
                    probe_all(&store, &suspects, &marks).await?;
                }
                Ok(())
            }
            .into_actor(self)
            .map(|result: StoreResult<()>, act, ctx| {
                act.busy = false;
                match result {
                    Err(e) if act.life.stop_on_panic(&e, ctx) => {}
                    Err(e) => log::log!(
                        act.store.failure_level(log::Level::Warn),
                        "suspect executors not read (again in a second): {e}"
                    ),
                    Ok(()) => {}
                }
            }),
        )
    }
}

/// The marks standing now: those of executors that registered since they were marked are
/// cleared (their beat says they are back).
async fn refresh(store: &Store) -> StoreResult<Vec<ExecutorSuspect>> {
    let mut standing = Vec::new();
    for mark in store.list_suspects().await? {
        match mark.last_beat {
            Some(beat) if beat > mark.since => {
                if store.clear_suspect(&mark.address, Some(mark.since)).await? {
                    log::info!(
                        "executor {} beat again: routing uses it again (suspect since {})",
                        mark.address,
                        mark.since
                    );
                }
            }
            _ => standing.push(mark),
        }
    }
    Ok(standing)
}

/// Probes each suspect with `/beat`: one that answers is cleared; one no group can route to any
/// more (no live registration, in no group's list) is forgotten.
async fn probe_all(
    store: &ActorStore,
    suspects: &Suspects,
    marks: &[ExecutorSuspect],
) -> StoreResult<()> {
    let listed: HashSet<String> = store
        .run(|s| async move { s.list_groups().await })
        .await?
        .into_iter()
        .flat_map(|g| g.address_list)
        .collect();
    let client = ExecutorCalls::new(PROBE_TIMEOUT);
    let live_after = now_ms() - EXECUTOR_DEAD_AFTER_MS;
    for mark in marks {
        let registered = mark.last_beat.is_some_and(|beat| beat > live_after);
        if !registered && !listed.contains(&mark.address) {
            let address = mark.address.clone();
            let since = mark.since;
            store
                .run(move |s| async move { s.clear_suspect(&address, Some(since)).await })
                .await?;
            suspects.clear(&mark.address, now_ms());
            log::info!(
                "executor {}: no group routes to it any more; its suspect mark is dropped",
                mark.address
            );
            continue;
        }
        if client
            .try_beat(&mark.address, &Credentials::default())
            .await
            .is_ok()
        {
            let address = mark.address.clone();
            store
                .run(move |s| async move { s.clear_suspect(&address, None).await })
                .await?;
            suspects.clear(&mark.address, now_ms());
            log::info!(
                "executor {} answered a beat: routing uses it again",
                mark.address
            );
        }
    }
    Ok(())
}
