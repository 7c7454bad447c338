//! Runs: a run's row, its trigger outcome, a new row to insert, and the daily counts.

use super::*;

/// One trigger of a job on one executor (XXL-JOB `xxl_job_log`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// Primary key; the `logId` on the wire.
    pub id: i64,
    /// Group of the job at trigger time.
    pub job_group: i32,
    /// The job.
    pub job_id: i32,
    /// Why it was triggered.
    pub trigger_type: TriggerType,
    /// The fire time it was scheduled for, epoch ms (0 for manual triggers).
    pub schedule_time: i64,
    /// Executor address used (none if routing failed).
    pub executor_address: Option<String>,
    /// Handler name sent.
    pub executor_handler: Option<String>,
    /// Parameter sent.
    pub executor_param: Option<String>,
    /// `"i/n"` for broadcast shards.
    pub executor_sharding_param: Option<String>,
    /// Retries left after this run.
    pub executor_fail_retry_count: i32,
    /// When the trigger was made, epoch ms (`logDateTime` on the wire).
    pub trigger_time: i64,
    /// 0 not yet sent, 200 accepted, 500 failed.
    pub trigger_code: i32,
    /// Trigger details (HTML, as XXL-JOB).
    pub trigger_msg: Option<String>,
    /// When the result arrived, epoch ms (0 while running).
    pub handle_time: i64,
    /// 0 running/unknown, 200 success, 500 failure, 502 timeout.
    pub handle_code: i32,
    /// Result message.
    pub handle_msg: Option<String>,
    /// See [`alarm_status`].
    pub alarm_status: i32,
    /// The workflow run whose node this run is an attempt of, if any.
    pub wf_run_id: Option<i64>,
    /// That node's key.
    pub wf_node: Option<String>,
    /// Why it stands as it does: ran, queued, skipped, refused or no executor.
    pub admission: Admission,
}

/// What a trigger writes into its log row once the executor answered (what was sent is in the
/// row from its insert: [`NewRunRow`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriggerOutcome {
    /// 200 accepted, 500 failed.
    pub trigger_code: i32,
    /// Trigger details.
    pub trigger_msg: String,
    /// Executor address used.
    pub executor_address: Option<String>,
}

/// A new log row, inserted before the executor is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRunRow {
    /// Group of the job.
    pub job_group: i32,
    /// The job.
    pub job_id: i32,
    /// Why it was triggered.
    pub trigger_type: TriggerType,
    /// Scheduled fire time, epoch ms (0 for manual).
    pub schedule_time: i64,
    /// Trigger time, epoch ms.
    pub trigger_time: i64,
    /// Handler to be sent: known before the call, so a result that arrives before the trigger
    /// outcome is written still shows what ran.
    pub executor_handler: Option<String>,
    /// Parameter to be sent.
    pub executor_param: Option<String>,
    /// `"i/n"` for broadcast shards.
    pub executor_sharding_param: Option<String>,
    /// Retries left.
    pub executor_fail_retry_count: i32,
    /// The trigger message as far as it is known before the call (the executor's answer is
    /// appended with the outcome): stored with the row, the outcome hardly grows it.
    pub trigger_msg: Option<String>,
}

#[cfg(test)]
impl NewRunRow {
    /// A cron log row of job 1 in group 1, for tests that only need a row to exist.
    pub(crate) fn sample() -> Self {
        NewRunRow {
            job_group: 1,
            job_id: 1,
            trigger_type: TriggerType::Cron,
            schedule_time: 0,
            trigger_time: 1,
            executor_handler: None,
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
            trigger_msg: None,
        }
    }
}

/// Daily trigger counts (XXL-JOB `xxl_job_log_report`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogReport {
    /// Midnight of the day, epoch ms.
    pub trigger_day: i64,
    /// Runs without a result.
    pub running_count: i64,
    /// Successful runs.
    pub suc_count: i64,
    /// Failed runs.
    pub fail_count: i64,
    /// Last refresh, epoch ms.
    pub update_time: i64,
}

/// Counts of one period's log rows, the input of a [`LogReport`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogCounts {
    /// All rows.
    pub total: i64,
    /// Triggered (or not yet) and no result.
    pub running: i64,
    /// Result 200.
    pub success: i64,
}

impl LogCounts {
    /// Everything neither running nor successful.
    pub fn failed(&self) -> i64 {
        self.total - self.running - self.success
    }
}
