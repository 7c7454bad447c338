//! User handlers: results, async/blocking handler functions, init/destroy hooks and the name registry.

use std::collections::HashMap;
use std::fmt::{self, Display};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::context::JobContext;
use crate::protocol::{FAIL_CODE, MSG_JOB_TIMEOUT, SUCCESS_CODE, TIMEOUT_CODE};

/// Longest handle message sent to the admin, as Java truncates it.
const MAX_MSG_CHARS: usize = 50_000;

/// Longest workflow node output (a successful run's JSON object message) sent whole; the
/// admin's own limit (64 KiB by default) applies after.
pub const OUTPUT_MAX_BYTES: usize = 1024 * 1024;

/// Whether `text`, trimmed, is a JSON object: a workflow node's output.
pub(crate) fn is_json_object(text: &str) -> bool {
    let t = text.trim();
    t.starts_with('{')
        && t.ends_with('}')
        && matches!(
            serde_json::from_str::<serde_json::Value>(t),
            Ok(serde_json::Value::Object(_))
        )
}

/// Outcome of one run as the admin will record it.
///
/// ```
/// use jobwheel::executor::JobResult;
///
/// let done = JobResult::success_with("42 rows copied");
/// assert!(done.is_success());
/// assert_eq!((done.code(), done.msg()), (200, Some("42 rows copied")));
///
/// // a failure is retried and alarmed by the admin, as the job says
/// let failed = JobResult::fail("the disk is full");
/// assert_eq!((failed.code(), failed.is_success()), (500, false));
/// assert_eq!(JobResult::timeout().code(), 502);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobResult {
    code: i32,
    msg: Option<String>,
}

impl JobResult {
    /// Success (200) without a message.
    pub fn success() -> Self {
        JobResult {
            code: SUCCESS_CODE,
            msg: None,
        }
    }

    /// Success (200) with a message shown in the admin's log list.
    pub fn success_with(msg: impl Into<String>) -> Self {
        JobResult {
            code: SUCCESS_CODE,
            msg: Some(msg.into()),
        }
    }

    /// Failure (500) with its reason; the admin may retry and alarm.
    pub fn fail(msg: impl Into<String>) -> Self {
        JobResult {
            code: FAIL_CODE,
            msg: Some(msg.into()),
        }
    }

    /// Timeout (502) with the Java message `job execute timeout `.
    pub fn timeout() -> Self {
        Self::timeout_with(MSG_JOB_TIMEOUT)
    }

    /// Timeout (502) with a message of the handler's choosing.
    pub fn timeout_with(msg: impl Into<String>) -> Self {
        JobResult {
            code: TIMEOUT_CODE,
            msg: Some(msg.into()),
        }
    }

    /// The handle code: 200, 500 or 502.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The handle message, if any.
    pub fn msg(&self) -> Option<&str> {
        self.msg.as_deref()
    }

    /// True for 200.
    pub fn is_success(&self) -> bool {
        self.code == SUCCESS_CODE
    }

    /// The message as sent: at most 50,000 characters, then `...`, as the Java executor does;
    /// a successful run's JSON object (a workflow node's output) up to [`OUTPUT_MAX_BYTES`], whole.
    pub(crate) fn into_parts(self) -> (i32, Option<String>) {
        let success = self.code == SUCCESS_CODE;
        let msg = self.msg.map(|m| {
            let output = success && m.len() <= OUTPUT_MAX_BYTES && is_json_object(&m);
            if !output && m.chars().count() > MAX_MSG_CHARS {
                let mut cut: String = m.chars().take(MAX_MSG_CHARS).collect();
                cut.push_str("...");
                cut
            } else {
                m
            }
        });
        (self.code, msg)
    }
}

impl Display for JobResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "handleCode={}, handleMsg = {}",
            self.code,
            self.msg.as_deref().unwrap_or("null")
        )
    }
}

/// What a handler may return: a `JobResult`, `()` (success) or a `Result` whose error fails the run.
///
/// ```
/// use jobwheel::executor::{IntoJobResult, JobResult};
///
/// assert!(().into_job_result().is_success());
/// let parsed: Result<JobResult, std::num::ParseIntError> = "x".parse::<i32>().map(|_| JobResult::success());
/// let result = parsed.into_job_result();
/// assert_eq!(result.msg(), Some("invalid digit found in string"));
/// ```
pub trait IntoJobResult {
    /// Converts into the recorded outcome.
    fn into_job_result(self) -> JobResult;
}

impl IntoJobResult for JobResult {
    fn into_job_result(self) -> JobResult {
        self
    }
}

impl IntoJobResult for () {
    fn into_job_result(self) -> JobResult {
        JobResult::success()
    }
}

impl<T: IntoJobResult, E: Display> IntoJobResult for Result<T, E> {
    fn into_job_result(self) -> JobResult {
        match self {
            Ok(v) => v.into_job_result(),
            Err(e) => JobResult::fail(e.to_string()),
        }
    }
}

/// A boxed handler future; it need not be `Send` because it runs to completion on one thread.
pub(crate) type LocalJobFuture = Pin<Box<dyn Future<Output = JobResult>>>;
type AsyncFn = Arc<dyn Fn(JobContext) -> LocalJobFuture + Send + Sync>;
type BlockingFn = Arc<dyn Fn(JobContext) -> JobResult + Send + Sync>;
/// A lifecycle hook (init/destroy), run on a blocking thread.
pub(crate) type Hook = Arc<dyn Fn() + Send + Sync>;

/// How a handler's body runs.
#[derive(Clone)]
pub(crate) enum HandlerFn {
    /// A future, driven to completion on its own thread so it cannot stall other jobs.
    Async(AsyncFn),
    /// Plain code on a blocking thread.
    Blocking(BlockingFn),
}

/// A job handler: its function plus optional hooks run once when the job's worker starts and stops.
///
/// ```
/// use jobwheel::executor::{Executor, JobContext, JobHandler, JobResult};
///
/// // async: awaits without holding a thread; return a JobResult, () or a Result
/// let fetch = JobHandler::asynchronous(|ctx: JobContext| async move {
///     ctx.log(format!("fetching {}", ctx.param()));
///     JobResult::success()
/// })
/// .on_init(|| println!("first run of this job on this executor"))
/// .on_destroy(|| println!("the job's worker stopped"));
///
/// // blocking: plain code on a thread of its own; check is_cancelled() in long loops
/// let crunch = JobHandler::blocking(|ctx: JobContext| -> Result<(), String> {
///     for step in 0..3 {
///         if ctx.is_cancelled() {
///             return Err("killed".into());
///         }
///         ctx.log(format!("step {step} of shard {}/{}", ctx.shard_index(), ctx.shard_total()));
///     }
///     Ok(())
/// });
///
/// let builder = Executor::builder()
///     .app_name("reports")
///     .register("fetch", fetch)
///     .register("crunch", crunch);
/// # drop(builder);
/// ```
#[derive(Clone)]
pub struct JobHandler {
    pub(crate) run: HandlerFn,
    pub(crate) init: Option<Hook>,
    pub(crate) destroy: Option<Hook>,
}

impl fmt::Debug for JobHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.run {
            HandlerFn::Async(_) => "async",
            HandlerFn::Blocking(_) => "blocking",
        };
        f.debug_struct("JobHandler")
            .field("kind", &kind)
            .field("init", &self.init.is_some())
            .field("destroy", &self.destroy.is_some())
            .finish()
    }
}

impl JobHandler {
    /// An async handler, e.g. `async fn(JobContext) -> JobResult`.
    pub fn asynchronous<F, Fut, R>(f: F) -> Self
    where
        F: Fn(JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + 'static,
        R: IntoJobResult,
    {
        let f = Arc::new(f);
        let run: AsyncFn = Arc::new(move |ctx| {
            let fut = f(ctx);
            Box::pin(async move { fut.await.into_job_result() })
        });
        JobHandler {
            run: HandlerFn::Async(run),
            init: None,
            destroy: None,
        }
    }

    /// A blocking handler, run on a blocking thread; poll `ctx.is_cancelled()` to honour kill/timeout.
    pub fn blocking<F, R>(f: F) -> Self
    where
        F: Fn(JobContext) -> R + Send + Sync + 'static,
        R: IntoJobResult,
    {
        let run: BlockingFn = Arc::new(move |ctx| f(ctx).into_job_result());
        JobHandler {
            run: HandlerFn::Blocking(run),
            init: None,
            destroy: None,
        }
    }

    /// Runs once when the job's worker starts, before its first run.
    pub fn on_init(mut self, hook: impl Fn() + Send + Sync + 'static) -> Self {
        self.init = Some(Arc::new(hook));
        self
    }

    /// Runs once when the job's worker stops (idle, kill, handler change, shutdown).
    pub fn on_destroy(mut self, hook: impl Fn() + Send + Sync + 'static) -> Self {
        self.destroy = Some(Arc::new(hook));
        self
    }
}

/// The handlers of one executor by name; fixed once the executor is built.
#[derive(Debug, Default, Clone)]
pub(crate) struct HandlerRegistry {
    by_name: HashMap<String, Arc<JobHandler>>,
}

impl HandlerRegistry {
    /// Adds or replaces a handler.
    pub(crate) fn insert(&mut self, name: String, handler: JobHandler) {
        self.by_name.insert(name, Arc::new(handler));
    }

    /// The handler for a `executorHandler` name.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<JobHandler>> {
        self.by_name.get(name).cloned()
    }

    /// Registered names, for the start-up log line.
    pub(crate) fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_conversions() {
        assert_eq!(JobResult::success().code(), 200);
        assert_eq!(JobResult::fail("x").code(), 500);
        assert_eq!(JobResult::timeout().msg(), Some("job execute timeout "));
        assert_eq!(().into_job_result(), JobResult::success());
        let e: Result<(), String> = Err("boom".into());
        assert_eq!(e.into_job_result(), JobResult::fail("boom"));
        let ok: Result<JobResult, String> = Ok(JobResult::success_with("m"));
        assert_eq!(ok.into_job_result().msg(), Some("m"));
    }

    #[test]
    fn a_long_json_output_is_sent_whole() {
        let big = format!("{{\"rows\":\"{}\"}}", "x".repeat(200_000));
        let (_, msg) = JobResult::success_with(big.clone()).into_parts();
        assert_eq!(msg.as_deref(), Some(big.as_str()));
        // not a success, or not JSON: cut as Java cuts
        let (_, msg) = JobResult::fail(big.clone()).into_parts();
        assert_eq!(msg.unwrap().chars().count(), 50_003);
        let (_, msg) = JobResult::success_with(format!("x{big}")).into_parts();
        assert_eq!(msg.unwrap().chars().count(), 50_003);
    }

    #[test]
    fn long_messages_are_truncated() {
        let (_, msg) = JobResult::fail("é".repeat(60_000)).into_parts();
        let msg = msg.unwrap();
        assert_eq!(msg.chars().count(), 50_003);
        assert!(msg.ends_with("é..."));
    }
}
