//! InstanceQueue: sends the fires that waited for a slot of their job's (or group's) instance
//! cap once slots free, and closes those that waited past their time to live.
//!
//! Every admin runs one; each pass takes a job's queued fires in a transaction under the job's
//! admission lock, so a queued fire leaves its queue once, on one admin. A run that ends frees
//! its slot at once (a slot counts only while its run row is open); the queue sees it within
//! a tick. Slots of closed runs are swept every minute.

use std::time::Duration;

use actix::prelude::*;

use super::dispatch::{Dispatcher, TriggerBatch};
use super::supervision::{answers_probes, ActorLife};
use super::trigger::{Dequeued, Trigger};
use crate::clock::now_ms;
use crate::metrics::AdminMetrics;
use crate::model::Admission;
use crate::store::{ActorStore, QueuedFire, StoreResult};

/// How often the queues are looked at.
const TICK: Duration = Duration::from_secs(1);
/// How often slots of closed runs are swept.
const SWEEP_EVERY_MS: i64 = 60_000;

/// Sends queued fires as slots free; supervised, so a crash restarts it.
pub struct InstanceQueue {
    store: ActorStore,
    dispatcher: Addr<Dispatcher>,
    metrics: std::sync::Arc<AdminMetrics>,
    life: ActorLife,
    /// A pass still running: the next tick is skipped rather than piled up.
    busy: bool,
    swept_at: i64,
}

impl InstanceQueue {
    /// A queue runner that sends through `dispatcher`.
    pub fn new(
        store: ActorStore,
        dispatcher: Addr<Dispatcher>,
        metrics: std::sync::Arc<AdminMetrics>,
    ) -> Self {
        InstanceQueue {
            store,
            dispatcher,
            metrics,
            life: ActorLife::detached("instance-queue"),
            busy: false,
            swept_at: 0,
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        InstanceQueue { life, ..self }
    }
}

impl Actor for InstanceQueue {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let wait = self.life.started();
        ctx.notify_later(Tick, wait);
        ctx.run_interval(TICK, |_, ctx| ctx.notify(Tick));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

// the queues live in the database; a restart reads them again
impl Supervised for InstanceQueue {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        self.busy = false;
    }
}

answers_probes!(InstanceQueue);

#[derive(Message)]
#[rtype(result = "()")]
struct Tick;

impl Handler<Tick> for InstanceQueue {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _msg: Tick, _ctx: &mut Self::Context) -> Self::Result {
        if self.busy {
            return Box::pin(fut::ready(()));
        }
        self.busy = true;
        let now = now_ms();
        let sweep = now - self.swept_at >= SWEEP_EVERY_MS;
        if sweep {
            self.swept_at = now;
        }
        let (store, life) = (self.store.clone(), self.life.clone());
        life.working();
        Box::pin(
            async move {
                life.fault_point(&store).await?;
                if sweep {
                    let swept = store.run(|s| async move { s.sweep_slots().await }).await?;
                    if swept > 0 {
                        log::debug!("{swept} instance slot(s) of closed runs swept");
                    }
                }
                store
                    .run(move |s| async move { s.take_queued(now).await })
                    .await
            }
            .into_actor(self)
            .map(
                |result: StoreResult<(Vec<QueuedFire>, Vec<i64>)>, act, ctx| {
                    act.busy = false;
                    match result {
                        Err(e) if act.life.stop_on_panic(&e, ctx) => {}
                        Err(e) => log::log!(
                            act.store.failure_level(log::Level::Warn),
                            "instance queues not looked at (again in a second): {e}"
                        ),
                        Ok((fires, expired)) => act.send(fires, expired),
                    }
                },
            ),
        )
    }
}

impl InstanceQueue {
    fn send(&self, fires: Vec<QueuedFire>, expired: Vec<i64>) {
        if !expired.is_empty() {
            log::info!(
                "queued fire(s) {expired:?} waited past their time to live: skipped, not run"
            );
            self.metrics.admitted(Admission::Skipped, expired.len());
        }
        if fires.is_empty() {
            return;
        }
        for f in &fires {
            log::info!(
                "job {} log {}: a slot freed, the queued fire is sent",
                f.job_id,
                f.log_id
            );
        }
        let triggers = fires
            .into_iter()
            .map(|f| Trigger {
                fail_retry_count: Some(f.fail_retry_count),
                executor_param: Some(f.executor_param.unwrap_or_default()),
                sharding_param: f.sharding_param,
                dequeued: Some(Dequeued {
                    log_id: f.log_id,
                    trigger_time: f.trigger_time,
                }),
                ..Trigger::new(f.job_id, f.trigger_type, f.schedule_time)
            })
            .collect();
        self.dispatcher.do_send(TriggerBatch {
            triggers,
            ahead: false,
        });
    }
}
