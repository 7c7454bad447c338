//! NodeBeat: this admin's heartbeat in `admin_node`, once a second, and its share of the jobs.
//!
//! Each beat also reads the live admins; ordered by id, they split the jobs by id modulo their
//! number, so each admin pre-reads and dispatches its own share and the work spreads instead of
//! going to whichever admin wins the schedule lock first. Shares follow the membership within a
//! beat when an admin joins or dies; a fire the shares missed meanwhile is read by any admin once
//! it is late ([`super::schedule`]), and the claim's compare-and-set keeps it at most once. An
//! admin stopping gracefully steps down first, so its share moves before it goes.
//!
//! Other admins take over the claimed fire times of an admin whose beat is older than
//! [`NODE_DEAD_AFTER_MS`]. An admin takes over only after beating without a gap for that long
//! itself: after a database outage every beat is old, and a live admin must be given the time
//! to beat again before anyone counts it dead. Admins compare their clocks through these
//! times, so they must agree within a second (they fire on wall-clock times anyway).

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use super::lease::Lease;
use super::supervision::{answers_probes, ActorLife};
use super::timing_rules::NODE_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::store::{ActorStore, Share};

/// Between two beats.
const BEAT_EVERY: Duration = Duration::from_secs(1);

/// What this admin's next pre-read pass may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassDuty {
    /// Take over dead admins' fire times (it has beaten without a gap for
    /// [`NODE_DEAD_AFTER_MS`]).
    pub take_over: bool,
    /// The jobs it pre-reads.
    pub share: Share,
}

/// Asks what this admin's next pass may do.
#[derive(Message, Debug)]
#[rtype(result = "PassDuty")]
pub struct GetPassDuty;

/// The first step of a graceful stop: take no share of the jobs any more, so the other admins
/// pre-read this admin's share from their next beat while it dispatches what it has claimed; it
/// keeps beating, or they would take those claims over as a dead admin's.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StepDown;

/// A graceful stop: stop beating, hand back the fire times still held, remove this admin's row.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct LeaveCluster;

/// This admin's membership of the cluster.
pub struct NodeBeat {
    store: ActorStore,
    node: Arc<str>,
    address: String,
    started_at: i64,
    /// Since when every beat succeeded; `None` after a failed one.
    healthy_since: Option<i64>,
    /// The share of the jobs the last beat found (kept through a failed beat: a pass cannot
    /// run without the database anyway).
    share: Share,
    beating: bool,
    stepped_down: bool,
    left: bool,
    life: ActorLife,
    /// Renewed by each beat that lands.
    lease: Arc<Lease>,
}

impl NodeBeat {
    /// The heartbeat of admin `node`, reachable at `address` (shown to operators).
    pub fn new(store: ActorStore, node: Arc<str>, address: String) -> Self {
        NodeBeat {
            store,
            node,
            address,
            started_at: now_ms(),
            healthy_since: None,
            share: Share::ALL,
            beating: false,
            stepped_down: false,
            left: false,
            life: ActorLife::detached("node-beat"),
            lease: Default::default(),
        }
    }

    /// Renews `lease` with each beat that lands.
    pub fn with_lease(self, lease: Arc<Lease>) -> Self {
        NodeBeat { lease, ..self }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        NodeBeat { life, ..self }
    }

    fn beat(&mut self, ctx: &mut Context<Self>) {
        if self.beating || self.left {
            return;
        }
        self.beating = true;
        let (store, node, address, started) = (
            self.store.clone(),
            self.node.clone(),
            self.address.clone(),
            self.started_at,
        );
        let at = now_ms();
        let life = self.life.clone();
        life.working();
        ctx.spawn(
            async move {
                life.fault_point(&store).await?;
                store
                    .run(move |s| async move {
                        s.beat_node(&node, &address, started, at).await?;
                        s.live_nodes(at - NODE_DEAD_AFTER_MS).await
                    })
                    .await
            }
            .into_actor(self)
            .map(move |result, act, ctx| {
                act.beating = false;
                if let Err(e) = &result {
                    if act.life.stop_on_panic(e, ctx) {
                        return;
                    }
                }
                if let Ok(members) = &result {
                    act.lease.beaten(at);
                    act.follow(members);
                }
                match (result, act.healthy_since) {
                    (Ok(_), None) => {
                        log::info!("admin node {} beats in the cluster", act.node);
                        act.healthy_since = Some(at);
                    }
                    (Err(e), Some(_)) => {
                        log::warn!("admin node {}: heartbeat failed: {e}", act.node);
                        act.healthy_since = None;
                    }
                    _ => {}
                }
            }),
        );
    }
}

impl NodeBeat {
    /// Takes this admin's share among the live `members`, saying so when it changes.
    fn follow(&mut self, members: &[String]) {
        if self.stepped_down {
            return;
        }
        let share = Share::among(members, &self.node);
        if share != self.share {
            log::info!(
                "admin node {}: {} live admin(s); it pre-reads the jobs whose id modulo {} is {}",
                self.node,
                members.len(),
                share.of,
                share.index
            );
            self.share = share;
        }
    }
}

impl Actor for NodeBeat {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        log::info!("admin node {} started ({})", self.node, self.address);
        let wait = self.life.started();
        ctx.run_later(wait, |act, ctx| {
            act.beat(ctx);
            ctx.run_interval(BEAT_EVERY, |act, ctx| act.beat(ctx));
        });
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

impl Supervised for NodeBeat {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        // beats again from scratch: it must beat without a gap before it takes over anyone
        self.healthy_since = None;
        self.beating = false;
    }
}

answers_probes!(NodeBeat);

impl Handler<GetPassDuty> for NodeBeat {
    type Result = MessageResult<GetPassDuty>;

    fn handle(&mut self, _msg: GetPassDuty, _ctx: &mut Self::Context) -> Self::Result {
        let take_over = !self.stepped_down
            && !self.left
            && self
                .healthy_since
                .is_some_and(|since| now_ms() - since >= NODE_DEAD_AFTER_MS);
        MessageResult(PassDuty {
            take_over,
            share: self.share,
        })
    }
}

impl Handler<StepDown> for NodeBeat {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _msg: StepDown, _ctx: &mut Self::Context) -> Self::Result {
        self.stepped_down = true;
        let (store, node) = (self.store.clone(), self.node.clone());
        Box::pin(async move {
            let id = node.clone();
            match store.run(move |s| async move { s.step_down(&id).await }).await {
                Ok(()) => log::info!(
                    "admin node {node} stepped down: the other admins take its share of the jobs"
                ),
                Err(e) => log::warn!(
                    "admin node {node} could not step down ({e}); the other admins take its share once it has left"
                ),
            }
        })
    }
}

impl Handler<LeaveCluster> for NodeBeat {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _msg: LeaveCluster, _ctx: &mut Self::Context) -> Self::Result {
        self.left = true;
        let (store, node) = (self.store.clone(), self.node.clone());
        Box::pin(async move {
            let id = node.clone();
            match store
                .run(move |s| async move { s.leave_cluster(&id).await })
                .await
            {
                Ok(0) => log::info!("admin node {node} left the cluster"),
                Ok(n) => log::warn!(
                    "admin node {node} left the cluster, handing back {n} fire time(s) it could not dispatch"
                ),
                Err(e) => log::error!(
                    "admin node {node} could not leave the cluster ({e}); other admins take its fire times over once its beat is {NODE_DEAD_AFTER_MS} ms old"
                ),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn live_admins_split_the_jobs_by_their_order() {
        let live = members(&["a", "b", "c"]);
        assert_eq!(Share::among(&live, "a"), Share { index: 0, of: 3 });
        assert_eq!(Share::among(&live, "c"), Share { index: 2, of: 3 });
    }

    #[test]
    fn a_lone_or_unlisted_admin_reads_every_job() {
        assert_eq!(Share::among(&members(&["a"]), "a"), Share::ALL);
        assert_eq!(Share::among(&members(&["a", "b"]), "z"), Share::ALL);
        assert_eq!(Share::among(&[], "a"), Share::ALL);
    }
}
