//! Talking to the admins: URL joining, headers, "first admin answering code 200 wins".

use std::time::Duration;

use serde_json::Value;

use crate::keep_alive::REUSE_IDLE_FOR;
use crate::protocol::{AdminProtocol, AnyReturn, ACCESS_TOKEN_HEADER, APP_NAME_HEADER};

/// Per-request limit; the Java executor uses 3 s, a little more tolerates a busy admin.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest admin answer read; answers are a few bytes.
const MAX_ANSWER: usize = 64 * 1024;

/// The admins and the credentials this executor presents to them.
#[derive(Debug)]
pub struct AdminLink {
    /// Base URLs, tried in order.
    pub addresses: Vec<String>,
    /// Sent as `XXL-JOB-APPNAME`.
    pub app_name: String,
    /// Sent as `XXL-JOB-ACCESS-TOKEN` (empty when none is configured).
    pub access_token: Option<String>,
    /// Callback body shape.
    pub protocol: AdminProtocol,
}

/// `{base}/api/{method}`, whether or not `base` ends with a slash.
pub fn api_url(base: &str, method: &str) -> String {
    format!("{}/api/{method}", base.trim_end_matches('/'))
}

/// An HTTP client for one arbiter (awc clients are not `Send`; keep one per actor and reuse it).
pub fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(ADMIN_TIMEOUT)
        .connector(awc::Connector::new().conn_keep_alive(REUSE_IDLE_FOR))
        .finish()
}

impl AdminLink {
    /// Posts `body` to each admin in order until one answers code 200; returns that admin or every failure.
    pub async fn post(
        &self,
        client: &awc::Client,
        method: &str,
        body: &Value,
    ) -> Result<String, String> {
        if self.addresses.is_empty() {
            return Err("no admin address configured".to_string());
        }
        let text = body.to_string();
        let mut failures = Vec::new();
        for base in &self.addresses {
            let url = api_url(base, method);
            match self.post_one(client, &url, &text).await {
                Ok(()) => return Ok(base.clone()),
                Err(e) => failures.push(format!("{url}: {e}")),
            }
        }
        Err(failures.join("; "))
    }

    async fn post_one(&self, client: &awc::Client, url: &str, body: &str) -> Result<(), String> {
        let mut resp = client
            .post(url)
            .insert_header(("Content-Type", "application/json;charset=UTF-8"))
            .insert_header((
                ACCESS_TOKEN_HEADER,
                self.access_token.clone().unwrap_or_default(),
            ))
            .insert_header((APP_NAME_HEADER, self.app_name.clone()))
            .send_body(body.to_string())
            .await
            .map_err(|e| e.to_string())?;
        let bytes = resp
            .body()
            .limit(MAX_ANSWER)
            .await
            .map_err(|e| format!("HTTP {}: {e}", resp.status()))?;
        let answer: AnyReturn = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "HTTP {}: not a JSON answer ({e}): {}",
                resp.status(),
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            )
        })?;
        if answer.is_success() {
            Ok(())
        } else {
            Err(format!(
                "code {}: {}",
                answer.code,
                answer.msg.unwrap_or_default()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keep_alive::test_server::closing_reused_connections;

    #[test]
    fn api_url_handles_trailing_slash() {
        assert_eq!(
            api_url("http://a:8080/xxl-job-admin/", "callback"),
            "http://a:8080/xxl-job-admin/api/callback"
        );
        assert_eq!(
            api_url("http://a:8080", "registry"),
            "http://a:8080/api/registry"
        );
    }

    #[actix_rt::test]
    async fn a_connection_idle_near_the_admins_keep_alive_is_not_reused() {
        let link = AdminLink {
            addresses: vec![format!(
                "http://{}",
                closing_reused_connections(r#"{"code":200}"#)
            )],
            app_name: "app".into(),
            access_token: None,
            protocol: AdminProtocol::default(),
        };
        let client = client();
        let body = serde_json::json!({});
        link.post(&client, "registry", &body)
            .await
            .expect("first call");
        // idle 4.5 s: within 0.5 s of actix-web's 5 s keep-alive, where its close may meet the
        // request; the pool must open a new connection instead
        actix_rt::time::sleep(Duration::from_millis(4_500)).await;
        link.post(&client, "registry", &body)
            .await
            .expect("a call after 4.5 s idle");
    }
}
