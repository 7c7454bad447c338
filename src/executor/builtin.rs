//! Built-in handlers of `jobwheel executor`: `demoJobHandler`, `shardingJobHandler`, `httpJobHandler`.

use std::time::Duration;

use serde::Deserialize;

use super::context::JobContext;
use super::handler::{HandlerRegistry, JobHandler, JobResult};
use super::outbound::target_address;

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

/// Redirects `httpJobHandler` follows, each to a checked address.
const HTTP_MAX_REDIRECTS: usize = 5;

/// Adds the three built-ins where no handler of that name is registered; `httpJobHandler` may
/// call private addresses only with `allow_private`.
pub(crate) fn add_missing(mut handlers: HandlerRegistry, allow_private: bool) -> HandlerRegistry {
    let builtins = [
        (DEMO, JobHandler::asynchronous(demo)),
        (SHARDING, JobHandler::asynchronous(sharding)),
        (
            HTTP,
            JobHandler::blocking(move |ctx: JobContext| http(ctx, allow_private)),
        ),
    ];
    for (name, handler) in builtins {
        if handlers.get(name).is_none() {
            handlers.insert(name.to_string(), handler);
        }
    }
    handlers
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

/// Calls a URL (`{"url","method","body","timeout"}`) and records the status and body size;
/// loopback, private and link-local addresses are refused unless `allow_private`.
pub fn http(ctx: JobContext, allow_private: bool) -> JobResult {
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
    let url = match url::Url::parse(param.url.trim()) {
        Ok(u) => u,
        Err(e) => return fail_logged(&ctx, format!("invalid url '{}': {e}", param.url)),
    };
    let timeout = Duration::from_secs(param.timeout.unwrap_or(HTTP_DEFAULT_TIMEOUT_SECS).max(1));
    // awc needs an actix runtime on this thread; this blocking thread is ours for the run
    let rt = match actix_rt::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return JobResult::fail(format!("cannot start an HTTP runtime: {e}")),
    };
    ctx.log(format!("{method} {url}"));
    rt.block_on(async {
        let call = call_checked(&ctx, method, url, param.body, timeout, allow_private);
        tokio::select! {
            r = call => match r {
                Ok((status, size)) => {
                    let msg = format!("status {}, body {size} bytes", status.as_u16());
                    ctx.log(&msg);
                    if status.is_success() {
                        JobResult::success_with(msg)
                    } else {
                        JobResult::fail(msg)
                    }
                }
                Err(e) => fail_logged(&ctx, e),
            },
            _ = ctx.cancelled() => JobResult::fail("request cancelled"),
        }
    })
}

fn fail_logged(ctx: &JobContext, msg: String) -> JobResult {
    ctx.log(&msg);
    JobResult::fail(msg)
}

/// Sends the request to the checked address of `url`, following redirects (each checked too);
/// the final status and body size.
async fn call_checked(
    ctx: &JobContext,
    mut method: awc::http::Method,
    mut url: url::Url,
    mut body: Option<String>,
    timeout: Duration,
    allow_private: bool,
) -> Result<(awc::http::StatusCode, usize), String> {
    let client = awc::Client::builder()
        .timeout(timeout)
        .disable_redirects()
        .finish();
    for hop in 0..=HTTP_MAX_REDIRECTS {
        let addr = target_address(&url, allow_private, "--http-job-allow-private").await?;
        let request = client.request(method.clone(), url.as_str()).address(addr);
        let mut resp = match &body {
            Some(b) => request.send_body(b.clone()).await,
            None => request.send().await,
        }
        .map_err(|e| format!("request failed: {e}"))?;
        let status = resp.status();
        let location = resp
            .headers()
            .get(awc::http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match location.filter(|_| status.is_redirection()) {
            Some(next) if hop < HTTP_MAX_REDIRECTS => {
                url = url
                    .join(&next)
                    .map_err(|e| format!("status {status}: bad redirect '{next}': {e}"))?;
                ctx.log(format!("status {}, redirected to {url}", status.as_u16()));
                // as browsers do: 303, and 301/302 of a POST, continue as a GET without a body
                let keeps_method = matches!(status.as_u16(), 307 | 308)
                    || (method != awc::http::Method::POST && status.as_u16() != 303);
                if !keeps_method {
                    method = awc::http::Method::GET;
                    body = None;
                }
            }
            Some(_) => return Err(format!("more than {HTTP_MAX_REDIRECTS} redirects")),
            None => {
                let size = resp
                    .body()
                    .limit(HTTP_MAX_BODY)
                    .await
                    .map_err(|e| format!("status {status}, body unreadable: {e}"))?
                    .len();
                return Ok((status, size));
            }
        }
    }
    Err(format!("more than {HTTP_MAX_REDIRECTS} redirects"))
}
