//! The admin's calls to executors: `run`/`trigger`, `beat`, `idleBeat`, `kill`, `log`, and
//! jobwheel's `dropLogs`.
//!
//! One [`ExecutorCalls`] per arbiter/thread (awc clients are not `Send`); it keeps connections
//! alive between calls. Every answer is read as XXL-JOB's envelope, whichever of `content`/`data`
//! carries the payload.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::http1::{Http1Client, HttpTarget, BODY_MAX};
use crate::keep_alive::REUSE_IDLE_FOR;
use crate::protocol::{
    AdminProtocol, AnyReturn, DropLogsParam, DroppedLog, IdleBeatParam, KillParam, LogParam,
    LogResult, ReturnT, TriggerParam, ACCESS_TOKEN_HEADER, APP_NAME_HEADER, FAIL_CODE,
};

/// XXL-JOB's admin→executor timeout (`xxl.job.timeout`, 3 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);

/// Who the admin is to an executor: the token and app name headers, and the protocol generation.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// `XXL-JOB-ACCESS-TOKEN` value, if any.
    pub access_token: Option<String>,
    /// `XXL-JOB-APPNAME` value (sent to 3.5 executors, which require it).
    pub app_name: Option<String>,
    /// v3.5 executors take `/trigger` and `logDateTime`; older ones `/run` and `logDateTim`.
    pub protocol: AdminProtocol,
}

/// Most executor addresses whose parsed form is kept; past it the cache starts over, so
/// executors that come and go on new ports cannot grow it without bound.
const TARGETS_KEPT: usize = 1_024;

/// HTTP client for executor calls; create one per thread and reuse it.
pub struct ExecutorCalls {
    /// Plain `http://` executors: one write per request, pooled connections.
    plain: Http1Client,
    /// Everything else (`https://`, with the Mozilla roots).
    http: awc::Client,
    /// Each address as parsed for the plain client (`None`: left to awc), since parsing a URL
    /// (IDNA host processing included) costs more than the call's own framing.
    targets: RefCell<HashMap<String, Option<Rc<HttpTarget>>>>,
}

impl Default for ExecutorCalls {
    fn default() -> Self {
        Self::new(DEFAULT_TIMEOUT)
    }
}

impl ExecutorCalls {
    /// A client whose calls give up after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        // Executors answer where they are asked: no redirects to follow, so no redirect layer
        // (it clones every request's headers), and no Date/User-Agent headers to format per call.
        let connector = awc::Connector::new()
            .timeout(timeout)
            .limit(0)
            .conn_keep_alive(REUSE_IDLE_FOR);
        let connector = match crate::tls::client_config() {
            Ok(config) => connector.rustls_0_23(std::sync::Arc::new(config)),
            Err(e) => {
                log::error!("https executors are unreachable: cannot set up TLS: {e}");
                connector
            }
        };
        let http = awc::Client::builder()
            .disable_redirects()
            .no_default_headers()
            .timeout(timeout)
            .connector(connector)
            .finish();
        ExecutorCalls {
            plain: Http1Client::new(timeout),
            http,
            targets: RefCell::new(HashMap::new()),
        }
    }

    /// `address` parsed for the plain client, from the cache when seen before.
    fn target_of(&self, address: &str) -> Option<Rc<HttpTarget>> {
        if let Some(known) = self.targets.borrow().get(address) {
            return known.clone();
        }
        let parsed = HttpTarget::parse(address).map(Rc::new);
        let mut targets = self.targets.borrow_mut();
        if targets.len() >= TARGETS_KEPT {
            targets.clear();
        }
        targets.insert(address.to_string(), parsed.clone());
        parsed
    }

    /// Posts `body` to `{address}{path}` and reads the envelope; transport errors become `Err`.
    async fn call<B: Serialize>(
        &self,
        address: &str,
        path: &str,
        creds: &Credentials,
        body: Option<&B>,
    ) -> Result<AnyReturn, String> {
        let url = join_url(address, path);
        if let Some(target) = self.target_of(address) {
            return self.call_plain(&target, &url, path, creds, body).await;
        }
        let mut req = self
            .http
            .post(&url)
            .insert_header(("Content-Type", "application/json;charset=UTF-8"));
        if let Some(token) = &creds.access_token {
            req = req.insert_header((ACCESS_TOKEN_HEADER, token.as_str()));
        }
        if let Some(app) = &creds.app_name {
            req = req.insert_header((APP_NAME_HEADER, app.as_str()));
        }
        let sent = match body {
            Some(b) => {
                let json = serde_json::to_vec(b).map_err(|e| e.to_string())?;
                req.send_body(json).await
            }
            None => req.send().await,
        };
        let mut res = sent.map_err(|e| format!("{url}: {e}"))?;
        let bytes = res
            .body()
            .limit(BODY_MAX)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        read_answer(&url, res.status().as_u16(), &bytes)
    }

    async fn call_plain<B: Serialize>(
        &self,
        target: &HttpTarget,
        url: &str,
        path: &str,
        creds: &Credentials,
        body: Option<&B>,
    ) -> Result<AnyReturn, String> {
        let json = match body {
            Some(b) => serde_json::to_vec(b).map_err(|e| e.to_string())?,
            None => Vec::new(),
        };
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(3);
        headers.push(("Content-Type", "application/json;charset=UTF-8"));
        if let Some(token) = &creds.access_token {
            headers.push((ACCESS_TOKEN_HEADER, token.as_str()));
        }
        if let Some(app) = &creds.app_name {
            headers.push((APP_NAME_HEADER, app.as_str()));
        }
        let answer = self
            .plain
            .post(target, path, &headers, &json)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        read_answer(url, answer.status, &answer.body)
    }

    /// Hands a trigger to the executor; the answer means "queued", not "done".
    pub async fn run(&self, address: &str, creds: &Credentials, param: &TriggerParam) -> AnyReturn {
        self.try_run(address, creds, param)
            .await
            .unwrap_or_else(failure)
    }

    /// [`run`](Self::run), telling apart a call that got no XXL-JOB answer at all (refused,
    /// reset, timed out, another body): `Err` with the reason.
    pub async fn try_run(
        &self,
        address: &str,
        creds: &Credentials,
        param: &TriggerParam,
    ) -> Result<AnyReturn, String> {
        let path = match creds.protocol {
            AdminProtocol::V2 => "run",
            AdminProtocol::V35 => "trigger",
        };
        self.call(address, path, creds, Some(param)).await
    }

    /// Opens connections to `address` until `want` are idle for the calls about to come; the
    /// number opened. Only plain `http://` executors are warmed; a failure is left to the calls.
    pub async fn warm(&self, address: &str, want: usize) -> usize {
        match self.target_of(address) {
            Some(target) => self.plain.warm(&target, want).await,
            None => 0,
        }
    }

    /// Liveness probe (FAILOVER routing).
    pub async fn beat(&self, address: &str, creds: &Credentials) -> AnyReturn {
        self.try_beat(address, creds).await.unwrap_or_else(failure)
    }

    /// [`beat`](Self::beat), telling apart a call that got no XXL-JOB answer: `Err` with why.
    pub async fn try_beat(&self, address: &str, creds: &Credentials) -> Result<AnyReturn, String> {
        self.call::<Value>(address, "beat", creds, None).await
    }

    /// Busy probe for one job (BUSYOVER routing): 200 when idle.
    pub async fn idle_beat(&self, address: &str, creds: &Credentials, job_id: i32) -> AnyReturn {
        self.try_idle_beat(address, creds, job_id)
            .await
            .unwrap_or_else(failure)
    }

    /// [`idle_beat`](Self::idle_beat), telling apart a call that got no XXL-JOB answer.
    pub async fn try_idle_beat(
        &self,
        address: &str,
        creds: &Credentials,
        job_id: i32,
    ) -> Result<AnyReturn, String> {
        self.call(address, "idleBeat", creds, Some(&IdleBeatParam { job_id }))
            .await
    }

    /// Stops a job's worker on the executor.
    pub async fn kill(&self, address: &str, creds: &Credentials, job_id: i32) -> AnyReturn {
        self.call(address, "kill", creds, Some(&KillParam { job_id }))
            .await
            .unwrap_or_else(failure)
    }

    /// Asks a jobwheel executor to drop the logs of runs the admin's retention removed (at most
    /// [`DROP_LOGS_MAX_RUNS`](crate::protocol::DROP_LOGS_MAX_RUNS) per call); an XXL-JOB
    /// executor answers it not found.
    pub async fn drop_logs(
        &self,
        address: &str,
        creds: &Credentials,
        logs: Vec<DroppedLog>,
    ) -> AnyReturn {
        self.call(address, "dropLogs", creds, Some(&DropLogsParam { logs }))
            .await
            .unwrap_or_else(failure)
    }

    /// Reads a run's log from a 1-based line.
    pub async fn log(
        &self,
        address: &str,
        creds: &Credentials,
        log_id: i64,
        log_date_time: i64,
        from_line_num: i32,
    ) -> ReturnT<LogResult> {
        let param = LogParam {
            log_date_time,
            log_id,
            from_line_num,
            reads_data: true,
        };
        match self
            .call(address, "log", creds, Some(&param.to_json()))
            .await
        {
            Ok(answer) => ReturnT {
                code: answer.code,
                msg: answer.msg,
                payload: answer
                    .payload
                    .and_then(|v| serde_json::from_value::<LogResult>(v).ok()),
            },
            Err(e) => ReturnT::fail(e),
        }
    }
}

/// XXL-JOB's envelope from an answer's body; a status other than 2xx is an error.
fn read_answer(url: &str, status: u16, bytes: &[u8]) -> Result<AnyReturn, String> {
    if !(200..300).contains(&status) {
        return Err(format!("{url}: HTTP {status} {}", excerpt(bytes)));
    }
    serde_json::from_slice::<AnyReturn>(bytes)
        .map_err(|e| format!("{url}: unreadable answer ({e}): {}", excerpt(bytes)))
}

/// The start of a body, for an error message.
fn excerpt(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().take(200).collect()
}

/// A call without an answer, as XXL-JOB's failed envelope carrying the reason.
pub fn failure(e: String) -> AnyReturn {
    ReturnT::with_code(FAIL_CODE, e)
}

/// `{address}{path}` with exactly one slash between (addresses end with `/` by convention).
pub fn join_url(address: &str, path: &str) -> String {
    format!("{}/{}", address.trim_end_matches('/'), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_join_with_one_slash() {
        assert_eq!(join_url("http://h:9999/", "run"), "http://h:9999/run");
        assert_eq!(join_url("http://h:9999", "run"), "http://h:9999/run");
        assert_eq!(
            join_url("http://h:9999/jobs/", "beat"),
            "http://h:9999/jobs/beat"
        );
    }

    #[test]
    fn addresses_are_parsed_once_and_the_cache_stays_bounded() {
        let client = ExecutorCalls::default();
        let first = client.target_of("http://127.0.0.1:9999/").expect("plain");
        let again = client.target_of("http://127.0.0.1:9999/").expect("plain");
        assert!(Rc::ptr_eq(&first, &again), "parsed twice");
        assert!(client.target_of("https://127.0.0.1:9999/").is_none());
        assert!(client.target_of("not a url").is_none());
        for port in 0..(TARGETS_KEPT as u16 + 10) {
            assert!(client
                .target_of(&format!("http://127.0.0.1:{}/", 10_000 + port))
                .is_some());
        }
        assert!(client.targets.borrow().len() <= TARGETS_KEPT);
    }
}
