//! `JobContext`: what a handler knows about the run it serves, and where it writes its log.

use std::fmt::Display;
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::run_log::{RunLog, RunLogs};
use crate::protocol::TriggerParam;

/// The run a handler is executing: ids, parameter, shard, log file and cancellation signal.
///
/// ```
/// use std::time::Duration;
/// use jobwheel::executor::{Executor, JobContext, JobResult};
///
/// let builder = Executor::builder().handler("export", |ctx: JobContext| async move {
///     // the run's log, which the admin's console shows while it runs
///     ctx.log(format!("job {} run {}: exporting '{}'", ctx.job_id(), ctx.log_id(), ctx.param()));
///     // a broadcast job runs on every executor: take this executor's shard of the work
///     let (shard, of) = (ctx.shard_index(), ctx.shard_total());
///     tokio::select! {
///         _ = tokio::time::sleep(Duration::from_millis(10)) => {
///             JobResult::success_with(format!("shard {shard}/{of} exported"))
///         }
///         // kill from the console, the job's timeout, or shutdown
///         _ = ctx.cancelled() => JobResult::fail("stopped before the export ended"),
///     }
/// });
/// # drop(builder);
/// ```
#[derive(Debug, Clone)]
pub struct JobContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    job_id: i32,
    param: String,
    log_id: i64,
    log_date_time: i64,
    shard_index: i32,
    shard_total: i32,
    log: RunLog,
    cancel: CancellationToken,
    workflow_context: Option<String>,
}

impl JobContext {
    /// Context of one trigger; `cancel` fires on kill, timeout, cover or shutdown.
    pub(crate) fn new(
        param: &TriggerParam,
        logs: &Arc<RunLogs>,
        cancel: CancellationToken,
    ) -> Self {
        JobContext {
            inner: Arc::new(Inner {
                job_id: param.job_id,
                param: param.executor_params.clone(),
                log_id: param.log_id,
                log_date_time: param.log_date_time,
                shard_index: param.broadcast_index,
                shard_total: param.broadcast_total,
                log: logs.run(param.log_date_time, param.log_id),
                cancel,
                workflow_context: param.workflow_context.clone(),
            }),
        }
    }

    /// The job's id at the admin.
    pub fn job_id(&self) -> i32 {
        self.inner.job_id
    }

    /// The job parameter (`executorParams`), empty when none was given.
    pub fn param(&self) -> &str {
        &self.inner.param
    }

    /// The admin's log row of this run; the key of the callback.
    pub fn log_id(&self) -> i64 {
        self.inner.log_id
    }

    /// Trigger time in epoch milliseconds.
    pub fn log_date_time(&self) -> i64 {
        self.inner.log_date_time
    }

    /// 0-based shard index of a broadcast (0 otherwise).
    pub fn shard_index(&self) -> i32 {
        self.inner.shard_index
    }

    /// Shard count of a broadcast (1 otherwise).
    pub fn shard_total(&self) -> i32 {
        self.inner.shard_total
    }

    /// For a run of a workflow node: the workflow run's whole context (the outputs of the nodes
    /// that ended before it, merged), as a JSON object; `None` for any other run.
    pub fn workflow_context(&self) -> Option<serde_json::Value> {
        self.inner
            .workflow_context
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
    }

    /// Appends a line to this run's log, which the admin UI shows (a message with line breaks
    /// makes several lines).
    pub fn log(&self, message: impl Display) {
        self.inner.log.line(&message.to_string());
    }

    /// The file this run's log lines are appended to: a segment shared by up to 1,024 runs,
    /// each line starting with its run's log id (`{logId} {text}`); read a run's log whole
    /// through the executor's `/log`.
    pub fn log_file(&self) -> &Path {
        self.inner.log.path()
    }

    /// The run's cancellation signal: fires on kill, timeout, COVER_EARLY and shutdown.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// True once the run was told to stop; blocking handlers should poll it between steps.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the run is told to stop; async handlers may select on it to clean up.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    pub(crate) fn job_log(&self) -> &RunLog {
        &self.inner.log
    }
}
