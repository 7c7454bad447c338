//! Built-in handlers of `jobwheel executor`: `demoJobHandler`, `shardingJobHandler`, `httpJobHandler`.

use std::time::Duration;

use serde::Deserialize;

use super::builder::ExecutorBuilder;
use super::context::JobContext;
use super::handler::JobResult;

/// Name of the handler that logs its parameter.
pub const DEMO: &str = "demoJobHandler";
/// Name of the handler that logs its shard.
pub const SHARDING: &str = "shardingJobHandler";
/// Name of the handler that calls a URL.
pub const HTTP: &str = "httpJobHandler";

/// Default request timeout of `httpJobHandler`, in seconds.
const HTTP_DEFAULT_TIMEOUT_SECS: u64 = 30;
/// Largest response body `httpJobHandler` reads; it only reports the size.
const HTTP_MAX_BODY: usize = 64 * 1024 * 1024;

/// Adds the three built-ins to a builder.
pub fn register_all(builder: ExecutorBuilder) -> ExecutorBuilder {
    builder
        .handler(DEMO, demo)
        .handler(SHARDING, sharding)
        .blocking_handler(HTTP, http)
}

/// Logs its parameter and succeeds, like XXL-JOB's sample.
pub async fn demo(ctx: JobContext) -> JobResult {
    ctx.log(format!("jobwheel demo job, param: {}", ctx.param()));
    JobResult::success()
}

/// Logs which shard it runs.
pub async fn sharding(ctx: JobContext) -> JobResult {
    ctx.log(format!(
        "sharding: index = {}, total = {}",
        ctx.shard_index(),
        ctx.shard_total()
    ));
    JobResult::success_with(format!("shard {}/{}", ctx.shard_index(), ctx.shard_total()))
}

/// Parameter of `httpJobHandler`.
#[derive(Debug, Deserialize)]
struct HttpParam {
    url: String,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    body: Option<String>,
    /// Seconds.
    #[serde(default)]
    timeout: Option<u64>,
}

/// Calls a URL (`{"url","method","body","timeout"}`) and records the status and body size.
pub fn http(ctx: JobContext) -> JobResult {
    let param: HttpParam = match serde_json::from_str(ctx.param()) {
        Ok(p) => p,
        Err(e) => {
            let msg = format!(
                "param must be JSON like {{\"url\":\"http://...\",\"method\":\"GET\",\"body\":\"\",\"timeout\":30}}: {e}"
            );
            ctx.log(&msg);
            return JobResult::fail(msg);
        }
    };
    let method = match param
        .method
        .as_deref()
        .unwrap_or("GET")
        .to_ascii_uppercase()
        .parse::<awc::http::Method>()
    {
        Ok(m) => m,
        Err(e) => return JobResult::fail(format!("invalid method: {e}")),
    };
    let timeout = Duration::from_secs(param.timeout.unwrap_or(HTTP_DEFAULT_TIMEOUT_SECS).max(1));
    // awc needs an actix runtime on this thread; this blocking thread is ours for the run
    let rt = match actix_rt::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return JobResult::fail(format!("cannot start an HTTP runtime: {e}")),
    };
    ctx.log(format!("{method} {}", param.url));
    rt.block_on(async {
        let client = awc::Client::builder().timeout(timeout).finish();
        let request = client.request(method, param.url.as_str());
        let send = async {
            let mut resp = match param.body {
                Some(body) => request.send_body(body).await,
                None => request.send().await,
            }
            .map_err(|e| format!("request failed: {e}"))?;
            let status = resp.status();
            let body = resp
                .body()
                .limit(HTTP_MAX_BODY)
                .await
                .map_err(|e| format!("status {status}, body unreadable: {e}"))?;
            Ok::<_, String>((status, body.len()))
        };
        tokio::select! {
            r = send => match r {
                Ok((status, size)) => {
                    let msg = format!("status {}, body {size} bytes", status.as_u16());
                    ctx.log(&msg);
                    if status.is_success() {
                        JobResult::success_with(msg)
                    } else {
                        JobResult::fail(msg)
                    }
                }
                Err(e) => {
                    ctx.log(&e);
                    JobResult::fail(e)
                }
            },
            _ = ctx.cancelled() => JobResult::fail("request cancelled"),
        }
    })
}
