//! `Registrar`: registers the executor with the admins at start and every 30 s, and sooner when
//! its load differs from the last one an admin accepted (so a failed beat is tried again after
//! a few seconds, not 30 s later); removes it on shutdown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use crate::actors::job_table::GetLoad;
use crate::executor::admin_link::{self, AdminLink};
use crate::protocol::{ExecutorLoad, Labels, RegistryParam};

/// How often the load is looked at between beats.
const LOAD_CHECK_EVERY: Duration = Duration::from_secs(1);

/// The least time between two beats sent because the load changed: an executor whose queues
/// move all the time beats this often, not on every change.
const LOAD_BEAT_GAP: Duration = Duration::from_secs(5);

/// Registers `address` under the app name.
pub struct Registrar {
    link: Arc<AdminLink>,
    address: String,
    interval: Duration,
    /// Where each beat reads the executor's load from.
    load: Recipient<GetLoad>,
    /// The labels it registers with.
    labels: Labels,
    client: Option<awc::Client>,
    in_flight: bool,
    removed: bool,
    /// Last round's outcome, so only changes are logged at info level.
    last_ok: Option<bool>,
    /// The load the last accepted beat carried: an early beat goes when the load differs.
    accepted_load: Option<ExecutorLoad>,
    /// When the last beat ended, accepted or not: early beats keep [`LOAD_BEAT_GAP`] from it.
    last_beat_at: Option<Instant>,
}

/// Stops registering and sends `/api/registryRemove`; resolves when an admin answered or all failed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Deregister;

impl Registrar {
    /// A registrar for `address`, registering every `interval`.
    pub fn new(
        link: Arc<AdminLink>,
        address: String,
        interval: Duration,
        load: Recipient<GetLoad>,
        labels: Labels,
    ) -> Self {
        Registrar {
            link,
            address,
            interval,
            load,
            labels,
            client: None,
            in_flight: false,
            removed: false,
            last_ok: None,
            accepted_load: None,
            last_beat_at: None,
        }
    }

    fn enabled(&self) -> bool {
        !self.link.addresses.is_empty() && !self.link.app_name.is_empty()
    }

    fn body(&self, load: Option<ExecutorLoad>) -> serde_json::Value {
        registration(
            &self.link.app_name,
            &self.address,
            load,
            self.labels.clone(),
        )
    }

    fn register(&mut self, ctx: &mut Context<Self>) {
        if self.in_flight || self.removed || !self.enabled() {
            return;
        }
        self.in_flight = true;
        let link = self.link.clone();
        let client = self.client.get_or_insert_with(admin_link::client).clone();
        let load = self.load.clone();
        let address = self.address.clone();
        let labels = self.labels.clone();
        let fut = async move {
            // a beat without its load is still a beat: the load is only a figure
            let load = load.send(GetLoad).await.ok();
            let body = registration(&link.app_name, &address, load.clone(), labels);
            (link.post(&client, "registry", &body).await, load)
        };
        ctx.spawn(fut.into_actor(self).map(|(res, load), act, _| {
            act.in_flight = false;
            act.last_beat_at = Some(Instant::now());
            let ok = res.is_ok();
            // a refused or lost beat leaves the admins' view as it was, so the load is sent
            // again at the next gap (a keep-alive connection the admin closed as the beat left
            // on it fails the beat; the admins must not keep the old load for 30 s for that)
            if ok {
                act.accepted_load = load;
            }
            match res {
                Ok(admin) if act.last_ok != Some(true) => log::info!(
                    "registered {} as {} at {admin}",
                    act.link.app_name,
                    act.address
                ),
                Ok(admin) => log::debug!("registry beat accepted by {admin}"),
                Err(e) if act.last_ok != Some(false) => {
                    log::warn!("registration of {} failed: {e}", act.address)
                }
                Err(e) => log::debug!("registration still failing: {e}"),
            }
            act.last_ok = Some(ok);
        }));
    }

    /// Beats early when the load's counts changed since the last beat, at most every
    /// [`LOAD_BEAT_GAP`], so the admins' view of queues is seconds old, not up to 30 s.
    fn check_load(&mut self, ctx: &mut Context<Self>) {
        if self.in_flight || self.removed {
            return;
        }
        if self
            .last_beat_at
            .is_some_and(|at| at.elapsed() < LOAD_BEAT_GAP)
        {
            return;
        }
        let load = self.load.clone();
        ctx.spawn(
            async move { load.send(GetLoad).await.ok() }
                .into_actor(self)
                .map(|now, act, ctx| {
                    let changed = match (&now, &act.accepted_load) {
                        (Some(now), Some(sent)) => !now.same_counts(sent),
                        (Some(_), None) => true,
                        (None, _) => false,
                    };
                    if changed {
                        act.register(ctx);
                    }
                }),
        );
    }
}

/// The registry body of `address` under `app_name`.
fn registration(
    app_name: &str,
    address: &str,
    load: Option<ExecutorLoad>,
    labels: Labels,
) -> serde_json::Value {
    let mut param = RegistryParam::executor(app_name, address);
    param.load = load;
    param.labels = labels;
    serde_json::to_value(param).unwrap_or_default()
}

impl Actor for Registrar {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if !self.enabled() {
            log::info!("no admin address or app name: this executor does not register");
            return;
        }
        self.register(ctx);
        ctx.run_interval(self.interval, |act, ctx| act.register(ctx));
        ctx.run_interval(LOAD_CHECK_EVERY, |act, ctx| act.check_load(ctx));
    }
}

/// Restarted by its supervisor if it ever stops, so the executor keeps its registration.
impl Supervised for Registrar {
    fn restarting(&mut self, _: &mut Self::Context) {
        log::warn!("registrar restarting");
        self.in_flight = false;
        self.client = None;
    }
}

impl Handler<Deregister> for Registrar {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: Deregister, _: &mut Self::Context) -> Self::Result {
        let first = !self.removed;
        self.removed = true;
        if !first || !self.enabled() {
            return Box::pin(async {});
        }
        let link = self.link.clone();
        let client = self.client.get_or_insert_with(admin_link::client).clone();
        let body = self.body(None);
        let address = self.address.clone();
        Box::pin(async move {
            match link.post(&client, "registryRemove", &body).await {
                Ok(admin) => log::info!("registration of {address} removed at {admin}"),
                Err(e) => log::warn!("registryRemove of {address} failed: {e}"),
            }
        })
    }
}
