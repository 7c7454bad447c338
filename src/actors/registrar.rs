//! `Registrar`: registers the executor with the admins at start and every 30 s; removes it on shutdown.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;

use crate::executor::admin_link::{self, AdminLink};
use crate::protocol::RegistryParam;

/// Registers `address` under the app name.
pub struct Registrar {
    link: Arc<AdminLink>,
    address: String,
    interval: Duration,
    client: Option<awc::Client>,
    in_flight: bool,
    removed: bool,
    /// Last round's outcome, so only changes are logged at info level.
    last_ok: Option<bool>,
}

/// Stops registering and sends `/api/registryRemove`; resolves when an admin answered or all failed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Deregister;

impl Registrar {
    /// A registrar for `address`, registering every `interval`.
    pub fn new(link: Arc<AdminLink>, address: String, interval: Duration) -> Self {
        Registrar {
            link,
            address,
            interval,
            client: None,
            in_flight: false,
            removed: false,
            last_ok: None,
        }
    }

    fn enabled(&self) -> bool {
        !self.link.addresses.is_empty() && !self.link.app_name.is_empty()
    }

    fn body(&self) -> serde_json::Value {
        serde_json::to_value(RegistryParam::executor(
            self.link.app_name.clone(),
            self.address.clone(),
        ))
        .unwrap_or_default()
    }

    fn register(&mut self, ctx: &mut Context<Self>) {
        if self.in_flight || self.removed || !self.enabled() {
            return;
        }
        self.in_flight = true;
        let link = self.link.clone();
        let client = self.client.get_or_insert_with(admin_link::client).clone();
        let body = self.body();
        let fut = async move { link.post(&client, "registry", &body).await };
        ctx.spawn(fut.into_actor(self).map(|res, act, _| {
            act.in_flight = false;
            let ok = res.is_ok();
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
        let body = self.body();
        let address = self.address.clone();
        Box::pin(async move {
            match link.post(&client, "registryRemove", &body).await {
                Ok(admin) => log::info!("registration of {address} removed at {admin}"),
                Err(e) => log::warn!("registryRemove of {address} failed: {e}"),
            }
        })
    }
}
