//! Webhook alarms: the job's `alarm_webhook` URL receives a JSON POST ([`AlarmPayload`]);
//! any 2xx answer within the timeout counts as delivered.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::LocalBoxFuture;

use super::{Alarm, AlarmEvent, AlarmPayload, AlarmResult};
use crate::executor::outbound::target_address;
use crate::keep_alive::REUSE_IDLE_FOR;

/// How long a webhook may take to answer, unless configured otherwise.
pub const DEFAULT_WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The setting that lets webhooks reach private addresses, named where one is refused.
pub const ALLOW_PRIVATE_FLAG: &str = "--alarm-webhook-allow-private";

/// Posts alarms to per-job URLs; one per arbiter (awc clients are not `Send`).
///
/// Like `httpJobHandler`, a webhook may not reach this machine or the networks behind it
/// (loopback, private, link-local, ...) unless `allow_private`: the URL is resolved, checked, and
/// called at the checked address, and redirects are not followed (a 3xx is a failed delivery).
pub struct WebhookAlarm {
    client: awc::Client,
    allow_private: bool,
}

impl WebhookAlarm {
    /// A webhook channel whose calls give up after `timeout`, reaching private addresses only
    /// with `allow_private`.
    pub fn new(timeout: Duration, allow_private: bool) -> Self {
        let connector = awc::Connector::new()
            .timeout(timeout)
            .conn_keep_alive(REUSE_IDLE_FOR);
        let connector = match crate::tls::client_config() {
            Ok(config) => connector.rustls_0_23(Arc::new(config)),
            Err(e) => {
                log::error!("https webhooks are unavailable: cannot set up TLS: {e}");
                connector
            }
        };
        let client = awc::Client::builder()
            .timeout(timeout)
            .disable_redirects()
            .connector(connector)
            .finish();
        WebhookAlarm {
            client,
            allow_private,
        }
    }

    async fn deliver(&self, event: &AlarmEvent) -> AlarmResult {
        let url = event.job.alarm_webhook.trim();
        if url.is_empty() {
            return AlarmResult::NotConfigured;
        }
        let parsed = match url::Url::parse(url) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => u,
            _ => return AlarmResult::Failed(format!("'{url}' is not an http:// or https:// URL")),
        };
        let address = match target_address(&parsed, self.allow_private, ALLOW_PRIVATE_FLAG).await {
            Ok(a) => a,
            Err(why) => return AlarmResult::Failed(why),
        };
        let payload = AlarmPayload::of(event);
        let sent = self
            .client
            .post(url)
            .address(address)
            .insert_header((
                "User-Agent",
                concat!("jobwheel/", env!("CARGO_PKG_VERSION")),
            ))
            .send_json(&payload)
            .await;
        match sent {
            Ok(mut res) => {
                let status = res.status();
                // read (a bounded part of) the answer so the connection can be reused
                let body = res.body().limit(64 * 1024).await.unwrap_or_default();
                if status.is_success() {
                    AlarmResult::Delivered
                } else {
                    let text: String = String::from_utf8_lossy(&body).chars().take(200).collect();
                    AlarmResult::Failed(format!("{url} answered HTTP {}: {text}", status.as_u16()))
                }
            }
            Err(e) => AlarmResult::Failed(format!("{url}: {e}")),
        }
    }
}

impl Alarm for WebhookAlarm {
    fn name(&self) -> &'static str {
        "webhook"
    }

    fn send<'a>(&'a self, event: &'a AlarmEvent) -> LocalBoxFuture<'a, AlarmResult> {
        Box::pin(self.deliver(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alarm::tests::event;
    use crate::keep_alive::test_server::closing_reused_connections;

    #[test]
    fn tls_is_available() {
        assert!(crate::tls::client_config().is_ok());
    }

    #[actix_rt::test]
    async fn blank_or_bad_urls() {
        let alarm = WebhookAlarm::new(Duration::from_secs(1), true);
        let mut e = event();
        assert_eq!(alarm.send(&e).await, AlarmResult::NotConfigured);
        e.job.alarm_webhook = "ftp://example.com/x".into();
        assert!(
            matches!(alarm.send(&e).await, AlarmResult::Failed(m) if m.contains("not an http"))
        );
        // nothing listens on port 1
        e.job.alarm_webhook = "http://127.0.0.1:1/hook".into();
        assert!(matches!(alarm.send(&e).await, AlarmResult::Failed(_)));
    }

    #[actix_rt::test]
    async fn a_connection_idle_near_the_servers_keep_alive_is_not_reused() {
        let alarm = WebhookAlarm::new(Duration::from_secs(2), true);
        let mut e = event();
        e.job.alarm_webhook = format!("http://{}/hook", closing_reused_connections("{}"));
        assert_eq!(alarm.send(&e).await, AlarmResult::Delivered);
        // idle 4.5 s: within 0.5 s of a 5 s keep-alive, where the server's close may meet the
        // request; the pool must open a new connection instead
        actix_rt::time::sleep(Duration::from_millis(4_500)).await;
        assert_eq!(alarm.send(&e).await, AlarmResult::Delivered);
    }

    #[actix_rt::test]
    async fn private_targets_are_refused_unless_allowed() {
        let alarm = WebhookAlarm::new(Duration::from_secs(1), false);
        let mut e = event();
        for url in [
            "http://127.0.0.1:1/hook",
            "http://localhost:1/hook",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]:1/",
            "http://10.1.2.3/",
        ] {
            e.job.alarm_webhook = url.into();
            match alarm.send(&e).await {
                AlarmResult::Failed(m) => {
                    assert!(m.contains(ALLOW_PRIVATE_FLAG), "{url}: {m}")
                }
                other => panic!("{url}: {other:?}"),
            }
        }
    }
}
