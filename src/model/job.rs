//! Jobs and their groups: definitions, schedules, what follows a run, script versions, child lists.

use super::*;

/// An executor group (XXL-JOB `xxl_job_group`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobGroup {
    /// Primary key.
    pub id: i32,
    /// The executors' app name (`registryKey`).
    pub app_name: String,
    /// Display name.
    pub title: String,
    /// Automatic registration or a manual list.
    pub address_type: AddressType,
    /// Executor addresses, sorted for automatic groups.
    pub address_list: Vec<String>,
    /// Per-group access token (XXL-JOB 3.5); `None` means the global token applies.
    pub access_token: Option<String>,
    /// Last change, epoch ms.
    pub update_time: i64,
    /// The most runs of the group's jobs open at once across the cluster; 0 for no cap.
    pub max_concurrent_instances: i32,
    /// What a fire beyond that cap does.
    pub instance_overflow: InstanceOverflow,
}

/// The token a group's executors send and expect: the group's own, else the admin's global one.
pub fn executor_token(group: Option<&JobGroup>, global: &str) -> String {
    group
        .and_then(|g| g.access_token.as_deref())
        .filter(|t| !t.is_empty())
        .unwrap_or(global)
        .to_string()
}

/// A job definition (XXL-JOB `xxl_job_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobInfo {
    /// Primary key.
    pub id: i32,
    /// The executor group the job runs on.
    pub job_group: i32,
    /// Description shown in the UI.
    pub job_desc: String,
    /// Creation time, epoch ms.
    pub add_time: i64,
    /// Last change, epoch ms.
    pub update_time: i64,
    /// Owner.
    pub author: String,
    /// Comma-separated alarm e-mail addresses.
    pub alarm_email: String,
    /// URL that receives a JSON POST when a run fails.
    pub alarm_webhook: String,
    /// How fire times are computed.
    pub schedule_type: ScheduleType,
    /// Cron expression or seconds, per `schedule_type`.
    pub schedule_conf: String,
    /// IANA time zone for cron; empty means the admin's zone.
    pub timezone: String,
    /// What to do with a missed fire time.
    pub misfire_strategy: MisfireStrategy,
    /// How an executor is chosen.
    pub executor_route_strategy: RouteStrategy,
    /// BEAN handler name.
    pub executor_handler: String,
    /// Parameter passed to the handler.
    pub executor_param: String,
    /// What the executor does when the job is already running.
    pub executor_block_strategy: BlockStrategy,
    /// Seconds; 0 means no timeout.
    pub executor_timeout: i32,
    /// Retries after a failed run.
    pub executor_fail_retry_count: i32,
    /// Seconds to wait before a retry; 0 means at once.
    pub retry_interval_secs: i32,
    /// BEAN or a script type.
    pub glue_type: GlueType,
    /// Script source for GLUE types.
    pub glue_source: String,
    /// Note on the current script version.
    pub glue_remark: String,
    /// Script version, epoch ms.
    pub glue_updatetime: i64,
    /// Jobs triggered when this one succeeds.
    pub child_job_ids: Vec<i32>,
    /// 0 stopped, 1 scheduled.
    pub trigger_status: i32,
    /// Previous fire time, epoch ms.
    pub trigger_last_time: i64,
    /// Next fire time, epoch ms (0 when stopped).
    pub trigger_next_time: i64,
    /// The user whose rights the job acts with (its child jobs fire only in groups that user
    /// may use): whoever last saved it; 0 when unknown (saved before owners were recorded,
    /// imported, or made by the admin itself), which puts no limit on its children.
    pub owner_id: i32,
    /// Under SERIAL_EXECUTION, the most triggers that may wait behind the running one on an
    /// executor; one beyond is refused at once. 0 = unbounded. Java executors ignore it.
    pub max_queued: i32,
    /// Which executors of the group it runs on, by their labels (`gpu=true, region in (eu,us)`,
    /// the canonical text of a [`crate::routing::Selector`]); empty for any.
    pub executor_selector: String,
    /// Days its runs are kept, overriding the admin's `--log-retention-days`; 0 for that setting.
    pub log_retention_days: i32,
    /// Newest runs kept (older ones go whatever their age); 0 for no count bound.
    pub log_retention_runs: i32,
    /// The most of its runs open at once across the cluster (claimed with the run row); 0 for
    /// no cap.
    pub max_concurrent_instances: i32,
    /// What a fire beyond that cap does.
    pub instance_overflow: InstanceOverflow,
    /// Under QUEUE, the most fires waiting for a slot; one more is refused.
    pub instance_queue_max: i32,
    /// Under QUEUE, how long a fire may wait for a slot, seconds; then it is skipped.
    pub instance_queue_ttl_secs: i32,
}

/// The most days or runs a job's own retention may set.
pub const LOG_RETENTION_DAYS_MAX: i32 = 36_500;
/// The most runs a job's own retention may keep.
pub const LOG_RETENTION_RUNS_MAX: i32 = 10_000_000;

/// The highest `maxQueued` a job may set: beyond it a bound protects nothing.
pub const MAX_QUEUED_LIMIT: i32 = 100_000;

impl JobInfo {
    /// A stopped BEAN job with XXL-JOB's defaults, for building new jobs.
    pub fn new(job_group: i32, job_desc: impl Into<String>, handler: impl Into<String>) -> Self {
        JobInfo {
            id: 0,
            job_group,
            job_desc: job_desc.into(),
            add_time: 0,
            update_time: 0,
            author: String::new(),
            alarm_email: String::new(),
            alarm_webhook: String::new(),
            schedule_type: ScheduleType::None,
            schedule_conf: String::new(),
            timezone: String::new(),
            misfire_strategy: MisfireStrategy::DoNothing,
            executor_route_strategy: RouteStrategy::First,
            executor_handler: handler.into(),
            executor_param: String::new(),
            executor_block_strategy: BlockStrategy::SerialExecution,
            executor_timeout: 0,
            executor_fail_retry_count: 0,
            retry_interval_secs: 0,
            glue_type: GlueType::Bean,
            glue_source: String::new(),
            glue_remark: String::new(),
            glue_updatetime: 0,
            child_job_ids: Vec::new(),
            trigger_status: TRIGGER_STATUS_STOPPED,
            trigger_last_time: 0,
            trigger_next_time: 0,
            owner_id: 0,
            max_queued: 0,
            executor_selector: String::new(),
            log_retention_days: 0,
            log_retention_runs: 0,
            max_concurrent_instances: 0,
            instance_overflow: InstanceOverflow::Skip,
            instance_queue_max: INSTANCE_QUEUE_MAX_DEFAULT,
            instance_queue_ttl_secs: INSTANCE_QUEUE_TTL_DEFAULT_SECS,
        }
    }
}

/// What storing a run's result needs of its log row and its job, read in one narrow query:
/// callbacks arrive at the fire rate, and reading whole log and job rows costs more per callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultLog {
    /// The log row.
    pub log_id: i64,
    /// Its job.
    pub job_id: i32,
    /// The executor group it was sent to (whose token a callback for it must carry).
    pub job_group: i32,
    /// 0 while no result is stored.
    pub handle_code: i32,
    /// Why it was triggered.
    pub trigger_type: TriggerType,
    /// The workflow run whose node it is (0: none).
    pub wf_run_id: i64,
    /// The job's follow-ups; `None` when the job was deleted meanwhile.
    pub job: Option<JobFollowUps>,
}

/// What follows a job's run: its children on success, and its next fire time if FIX_DELAY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFollowUps {
    /// How the job is scheduled.
    pub schedule: JobSchedule,
    /// Jobs triggered when a run succeeds.
    pub child_job_ids: Vec<i32>,
    /// The job's group now.
    pub job_group: i32,
    /// Whose rights its children fire with ([`JobInfo::owner_id`]).
    pub owner_id: i32,
}

/// A job's schedule: enough to compute its next fire time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSchedule {
    /// The job.
    pub id: i32,
    /// Cron, fixed rate, fixed delay or none.
    pub schedule_type: ScheduleType,
    /// Cron expression or seconds.
    pub schedule_conf: String,
    /// IANA time zone for cron, empty for the admin's default.
    pub timezone: String,
}

impl JobInfo {
    /// Its schedule.
    pub fn schedule(&self) -> JobSchedule {
        JobSchedule {
            id: self.id,
            schedule_type: self.schedule_type,
            schedule_conf: self.schedule_conf.clone(),
            timezone: self.timezone.clone(),
        }
    }
}

/// What the pre-read needs of a due job to plan its fire times: the scheduling columns only,
/// since a pass reads every job firing in the next seconds (10,000 rows a second at 10,000
/// once-a-second jobs) and the trigger reads the whole job again when it fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueJob {
    /// Primary key.
    pub id: i32,
    /// How the next fire time is computed.
    pub schedule_type: ScheduleType,
    /// Cron expression or seconds, per `schedule_type`.
    pub schedule_conf: String,
    /// IANA zone of the cron expression; empty for the admin's default.
    pub timezone: String,
    /// What to do with a fire time that was missed.
    pub misfire_strategy: MisfireStrategy,
    /// Last claimed fire time, epoch ms.
    pub trigger_last_time: i64,
    /// Next fire time, epoch ms.
    pub trigger_next_time: i64,
}

impl From<&JobInfo> for DueJob {
    fn from(j: &JobInfo) -> DueJob {
        DueJob {
            id: j.id,
            schedule_type: j.schedule_type,
            schedule_conf: j.schedule_conf.clone(),
            timezone: j.timezone.clone(),
            misfire_strategy: j.misfire_strategy,
            trigger_last_time: j.trigger_last_time,
            trigger_next_time: j.trigger_next_time,
        }
    }
}

/// One live executor registration (XXL-JOB `xxl_job_registry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// Primary key.
    pub id: i64,
    /// Always `EXECUTOR` in practice.
    pub registry_group: String,
    /// App name.
    pub registry_key: String,
    /// Executor address, e.g. `http://10.0.0.1:9999/`.
    pub registry_value: String,
    /// Protocol the executor speaks: "v2" or "v3.5".
    pub protocol: String,
    /// Last heartbeat, epoch ms.
    pub update_time: i64,
    /// What it ran and held queued at that beat; `None` when it does not report it.
    pub load: Option<crate::protocol::ExecutorLoad>,
    /// Its labels, for jobs' selectors; empty for executors that send none (Java's).
    pub labels: crate::protocol::Labels,
}

/// What a beat reports besides the address: jobwheel executors' extensions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BeatReport {
    /// Its load.
    pub load: Option<crate::protocol::ExecutorLoad>,
    /// Its labels.
    pub labels: crate::protocol::Labels,
}

/// A saved version of a job's script (XXL-JOB `xxl_job_logglue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlueVersion {
    /// Primary key.
    pub id: i32,
    /// The job.
    pub job_id: i32,
    /// Script type.
    pub glue_type: GlueType,
    /// Script source.
    pub glue_source: String,
    /// Note.
    pub glue_remark: String,
    /// When saved, epoch ms.
    pub add_time: i64,
}

/// Parses a comma-separated id list, ignoring blanks; a non-number is an error naming it.
pub fn parse_id_list(s: &str) -> Result<Vec<i32>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<i32>()
                .map_err(|_| format!("'{p}' is not a job id"))
        })
        .collect()
}

/// Joins ids the way XXL-JOB stores `child_jobid`.
pub fn join_ids(ids: &[i32]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Longest `executorParam` in bytes, on create, update and trigger alike, and of a workflow
/// node's parameter with its context's values (MySQL's TEXT, which the run record copies it
/// into).
pub const EXECUTOR_PARAM_MAX: usize = 65_535;
