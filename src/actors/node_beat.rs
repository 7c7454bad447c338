//! NodeBeat: this admin's heartbeat in `admin_node`, once a second.
//!
//! Other admins take over the claimed fire times of an admin whose beat is older than
//! [`NODE_DEAD_AFTER_MS`]. An admin takes over only after beating without a gap for that long
//! itself: after a database outage every beat is old, and a live admin must be given the time
//! to beat again before anyone counts it dead. Admins compare their clocks through these
//! times, so they must agree within a second (they fire on wall-clock times anyway).

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use crate::clock::now_ms;
use crate::store::ActorStore;

/// An admin whose last beat is older than this is dead; its claimed fires are taken over.
pub const NODE_DEAD_AFTER_MS: i64 = 5_000;
/// Between two beats.
const BEAT_EVERY: Duration = Duration::from_secs(1);

/// Whether this admin may take over dead admins' fire times now (it has beaten without a gap
/// for [`NODE_DEAD_AFTER_MS`]).
#[derive(Message, Debug)]
#[rtype(result = "bool")]
pub struct MayTakeOver;

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
    beating: bool,
    left: bool,
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
            beating: false,
            left: false,
        }
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
        ctx.spawn(
            async move {
                store
                    .run(move |s| async move { s.beat_node(&node, &address, started, at).await })
                    .await
            }
            .into_actor(self)
            .map(move |result, act, _| {
                act.beating = false;
                match (result, act.healthy_since) {
                    (Ok(()), None) => {
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

impl Actor for NodeBeat {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        log::info!("admin node {} started ({})", self.node, self.address);
        self.beat(ctx);
        ctx.run_interval(BEAT_EVERY, |act, ctx| act.beat(ctx));
    }
}

impl Supervised for NodeBeat {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("admin node {}: heartbeat restarting", self.node);
        self.healthy_since = None;
        self.beating = false;
    }
}

impl Handler<MayTakeOver> for NodeBeat {
    type Result = bool;

    fn handle(&mut self, _msg: MayTakeOver, _ctx: &mut Self::Context) -> bool {
        !self.left
            && self
                .healthy_since
                .is_some_and(|since| now_ms() - since >= NODE_DEAD_AFTER_MS)
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
