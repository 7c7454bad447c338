//! RegistryActor: executor registrations and the address lists of automatic groups
//! (XXL-JOB `JobRegistryHelper`, every 30 s; dead after 90 s without a beat).

use std::time::Duration;

use actix::prelude::*;

use super::supervision::{answers_probes, ActorLife};
use super::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::model::{AddressType, BeatReport, JobGroup};

use crate::store::{ActorStore, Store, StoreError};

/// How often dead registrations are removed and group lists refreshed (XXL-JOB's beat).
pub const MONITOR_INTERVAL: Duration = Duration::from_secs(30);

/// An executor's heartbeat.
#[derive(Message, Debug, Clone)]
#[rtype(result = "Result<(), String>")]
pub struct Register {
    /// Always `EXECUTOR` in practice.
    pub group: String,
    /// App name.
    pub app_name: String,
    /// Executor address.
    pub address: String,
    /// "v3.5" when the executor sent `XXL-JOB-APPNAME`, else "v2".
    pub protocol: String,
    /// Its load and labels, when it reports them (jobwheel executors).
    pub report: BeatReport,
}

/// An executor leaving (graceful shutdown).
#[derive(Message, Debug, Clone)]
#[rtype(result = "Result<(), String>")]
pub struct Unregister {
    /// Always `EXECUTOR` in practice.
    pub group: String,
    /// App name.
    pub app_name: String,
    /// Executor address.
    pub address: String,
}

/// Run the monitor pass now (tests, and after a group is edited).
#[derive(Message, Debug)]
#[rtype(result = "Result<(), String>")]
pub struct RefreshGroups;

/// Owns registrations; supervised, so a crash restarts it.
pub struct RegistryActor {
    store: ActorStore,
    interval: Duration,
    life: ActorLife,
}

impl RegistryActor {
    /// A registry with XXL-JOB's 30 s monitor interval.
    pub fn new(store: ActorStore) -> Self {
        Self::with_interval(store, MONITOR_INTERVAL)
    }

    /// A registry with a custom monitor interval.
    pub fn with_interval(store: ActorStore, interval: Duration) -> Self {
        RegistryActor {
            store,
            interval,
            life: ActorLife::detached("registry"),
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        RegistryActor { life, ..self }
    }
}

impl Actor for RegistryActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(4096);
        log::info!("registry actor started (monitor every {:?})", self.interval);
        let wait = self.life.started();
        ctx.notify_later(Tick, wait);
        ctx.run_interval(self.interval, |_, ctx| ctx.notify(Tick));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
    }
}

// registrations live in the database; a restart has no state of its own to reset
impl Supervised for RegistryActor {}

answers_probes!(RegistryActor);

#[derive(Message)]
#[rtype(result = "()")]
struct Tick;

impl Handler<Tick> for RegistryActor {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _msg: Tick, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        let life = self.life.clone();
        life.working();
        Box::pin(
            async move {
                life.fault_point(&store).await?;
                store.run(|s| async move { refresh_all(&s).await }).await
            }
            .into_actor(self)
            .map(|result, act, ctx| match result {
                Err(e) if act.life.stop_on_panic(&e, ctx) => {}
                Err(e) => log::log!(
                    act.store.failure_level(log::Level::Error),
                    "registry monitor pass failed (retried next pass): {e}"
                ),
                Ok(()) => {}
            }),
        )
    }
}

impl Handler<RefreshGroups> for RegistryActor {
    type Result = ResponseFuture<Result<(), String>>;

    fn handle(&mut self, _msg: RefreshGroups, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        Box::pin(async move {
            store
                .run(|s| async move { refresh_all(&s).await })
                .await
                .map_err(|e| e.to_string())
        })
    }
}

impl Handler<Register> for RegistryActor {
    type Result = ResponseFuture<Result<(), String>>;

    fn handle(&mut self, msg: Register, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        Box::pin(in_task(store, move |store| async move {
            let known = store
                .find_registration(&msg.address, now_ms() - EXECUTOR_DEAD_AFTER_MS)
                .await
                .map_err(|e| e.to_string())?
                .is_some_and(|r| r.registry_key == msg.app_name);
            store
                .upsert_registry(
                    &msg.group,
                    &msg.app_name,
                    &msg.address,
                    &msg.protocol,
                    now_ms(),
                    &msg.report,
                )
                .await
                .map_err(|e| e.to_string())?;
            if !known {
                log::info!(
                    "executor registered: app {} at {} ({})",
                    msg.app_name,
                    msg.address,
                    msg.protocol
                );
                // a new executor is listed at once, not after the next 30 s pass
                refresh_group(&store, &msg.app_name)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }))
    }
}

impl Handler<Unregister> for RegistryActor {
    type Result = ResponseFuture<Result<(), String>>;

    fn handle(&mut self, msg: Unregister, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        Box::pin(in_task(store, move |store| async move {
            let removed = store
                .remove_registry(&msg.group, &msg.app_name, &msg.address)
                .await
                .map_err(|e| e.to_string())?;
            if removed {
                log::info!("executor removed: app {} at {}", msg.app_name, msg.address);
                refresh_group(&store, &msg.app_name)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        }))
    }
}

/// Runs a handler's database work as a task of its own (see [`ActorStore`]).
async fn in_task<F, Fut>(store: ActorStore, work: F) -> Result<(), String>
where
    F: FnOnce(Store) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    store
        .run(move |s| {
            let fut = work(s);
            async move { Ok(fut.await) }
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r)
}

/// Removes dead registrations and rewrites every automatic group's sorted address list.
pub async fn refresh_all(store: &Store) -> Result<(), StoreError> {
    let now = now_ms();
    let removed = store
        .remove_dead_registry(now - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    if removed > 0 {
        log::info!("registry: removed {removed} executor registration(s) without a beat for 90 s");
    }
    let live = store
        .find_live_registry(now - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    for group in store.list_groups().await? {
        if group.address_type != AddressType::Auto {
            continue; // manual groups keep what the operator typed
        }
        let addresses = live
            .iter()
            .filter(|r| r.registry_group == "EXECUTOR" && r.registry_key == group.app_name)
            .map(|r| r.registry_value.clone());
        write_if_changed(store, &group, addresses, now).await?;
    }
    Ok(())
}

/// Stores an automatic group's address list, sorted and without repeats, if it changed.
async fn write_if_changed(
    store: &Store,
    group: &JobGroup,
    addresses: impl Iterator<Item = String>,
    now: i64,
) -> Result<(), StoreError> {
    let mut addresses: Vec<String> = addresses.collect();
    addresses.sort();
    addresses.dedup();
    if addresses != group.address_list {
        store.set_group_addresses(group.id, &addresses, now).await?;
    }
    Ok(())
}

/// Rewrites one app's automatic group list from the live registrations.
async fn refresh_group(store: &Store, app_name: &str) -> Result<(), StoreError> {
    let Some(group) = store.get_group_by_app_name(app_name).await? else {
        return Ok(());
    };
    if group.address_type != AddressType::Auto {
        return Ok(());
    }
    let now = now_ms();
    let live = store
        .find_live_registry_for(app_name, now - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    write_if_changed(
        store,
        &group,
        live.into_iter().map(|r| r.registry_value),
        now,
    )
    .await
}
