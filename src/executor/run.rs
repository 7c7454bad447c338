//! Executing one trigger: the work goes to the user runtime, the caller enforces timeout and kill.

use std::any::Any;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::context::JobContext;
use super::glue::{self, ScriptSpec};
use super::handler::{HandlerFn, JobHandler, JobResult};
use super::run_log::RunLogs;
use super::run_slots::RunSlots;
use crate::actors::result_sender::ResultSender;
use crate::metrics::ExecutorMetrics;

/// Everything a job's worker needs besides its own work; shared by all workers of an executor.
pub struct RunEnv {
    /// Base folder of run logs and script files.
    pub log_base: PathBuf,
    /// The run logs under `log_base`.
    pub logs: Arc<RunLogs>,
    /// Where user code runs (never the arbiters of the executor's actors).
    pub runtime: Handle,
    /// Where results go.
    pub results: Addr<ResultSender>,
    /// How long a worker may idle before it is reaped.
    pub idle_timeout: Duration,
    /// Workers alive (started and not yet stopped), for shutdown.
    pub live_workers: AtomicUsize,
    /// Where triggers and runs are counted.
    pub metrics: ExecutorMetrics,
    /// The limit of runs at once.
    pub slots: RunSlots,
}

/// How long a cancelled run may take to wind down before its result is reported anyway.
const STOP_GRACE: Duration = Duration::from_millis(900);

/// What a job's worker runs for each trigger.
#[derive(Clone)]
pub(crate) enum Work {
    /// A handler registered by name.
    Handler {
        /// The registered name.
        name: String,
        /// The handler.
        handler: Arc<JobHandler>,
    },
    /// A GLUE script version.
    Script(Arc<ScriptSpec>),
}

impl Work {
    /// True when both describe the same worker, so a trigger can reuse the job's actor.
    pub(crate) fn same_as(&self, other: &Work) -> bool {
        match (self, other) {
            (Work::Handler { handler: a, .. }, Work::Handler { handler: b, .. }) => {
                Arc::ptr_eq(a, b)
            }
            (Work::Script(a), Work::Script(b)) => {
                a.glue_type == b.glue_type && a.updatetime == b.updatetime
            }
            _ => false,
        }
    }

    /// Short description for operator logs.
    pub(crate) fn describe(&self) -> String {
        match self {
            Work::Handler { name, .. } => format!("handler {name}"),
            Work::Script(s) => format!("{} v{}", s.glue_type, s.updatetime),
        }
    }
}

/// How a run ended, before it is turned into a callback.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The work returned.
    Finished(JobResult),
    /// The work panicked; carries the panic message.
    Panicked(String),
    /// The timeout fired and the work was cancelled.
    TimedOut,
    /// Kill, cover or shutdown cancelled the work.
    Cancelled,
}

/// Starts the work on the user runtime and waits for it, enforcing `timeout`; never panics.
pub(crate) async fn execute(
    work: &Work,
    ctx: JobContext,
    timeout: Option<Duration>,
    runtime: &Handle,
    log_base: PathBuf,
) -> Outcome {
    let token = ctx.cancellation().clone();
    let mut join = spawn(work, ctx, runtime, log_base);
    let limit = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        // a cancelled run reports the stop reason even if its work already returned (as Java does)
        biased;
        _ = token.cancelled() => {
            settle(join).await;
            Outcome::Cancelled
        }
        joined = &mut join => match joined {
            Ok(Some(result)) => Outcome::Finished(result),
            Ok(None) => Outcome::Cancelled,
            Err(e) if e.is_panic() => Outcome::Panicked(panic_message(e.into_panic())),
            Err(e) => Outcome::Panicked(format!("run aborted: {e}")),
        },
        _ = limit => {
            token.cancel();
            settle(join).await;
            Outcome::TimedOut
        }
    }
}

/// Gives cancelled work a moment to stop so its effects end before the result is reported.
async fn settle(join: JoinHandle<Option<JobResult>>) {
    let abort = join.abort_handle();
    if tokio::time::timeout(STOP_GRACE, join).await.is_err() {
        // drops an async task at its next await; blocking code cannot be stopped from outside
        abort.abort();
    }
}

/// Puts the work where it cannot stall the executor's actors: each run gets its own blocking thread
/// (async handlers are driven there with `block_on`), scripts run as a task supervising the child.
fn spawn(
    work: &Work,
    ctx: JobContext,
    runtime: &Handle,
    log_base: PathBuf,
) -> JoinHandle<Option<JobResult>> {
    match work {
        Work::Handler { handler, .. } => match &handler.run {
            HandlerFn::Async(f) => {
                let f = f.clone();
                let rt = runtime.clone();
                runtime.spawn_blocking(move || {
                    let token = ctx.cancellation().clone();
                    rt.block_on(async move {
                        tokio::select! {
                            r = f(ctx) => Some(r),
                            _ = token.cancelled() => None,
                        }
                    })
                })
            }
            HandlerFn::Blocking(f) => {
                let f = f.clone();
                runtime.spawn_blocking(move || Some(f(ctx)))
            }
        },
        Work::Script(spec) => {
            let spec = spec.clone();
            runtime.spawn(async move { Some(glue::run(&spec, &ctx, &log_base).await) })
        }
    }
}

/// The text of a panic payload (`&str` or `String`), as users wrote it.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "handler panicked".to_string()
    }
}

/// Runs a lifecycle hook on a blocking thread, logging a panic instead of spreading it.
pub(crate) async fn run_hook(
    hook: super::handler::Hook,
    runtime: &Handle,
    what: &'static str,
    job_id: i32,
) {
    match runtime.spawn_blocking(move || hook()).await {
        Ok(()) => {}
        Err(e) if e.is_panic() => log::error!(
            "job {job_id}: {what} hook panicked: {}",
            panic_message(e.into_panic())
        ),
        Err(e) => log::error!("job {job_id}: {what} hook did not run: {e}"),
    }
}
