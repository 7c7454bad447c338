//! Domain types shared by the store, the scheduler and the web layer.
//!
//! Enum values are stored and sent as XXL-JOB's exact enum names, so an XXL-JOB
//! database or client reads them unchanged.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use crate::protocol::{BlockStrategy, GlueType};

/// Why a text cannot be stored as it is, or `None` when every backend can hold it.
///
/// PostgreSQL refuses a NUL character in any text column (MySQL and SQLite keep it, but a value
/// one backend refuses is refused on all, so data moves between them). Rust strings are valid
/// UTF-8, which all three accept; lengths are checked field by field where the value is read.
pub fn unstorable(text: &str) -> Option<String> {
    if !text.as_bytes().contains(&0) {
        return None;
    }
    text.chars().position(|c| c == '\0').map(|at| {
        format!(
            "contains a NUL character (\\u0000) at character {}, which the database cannot store",
            at + 1
        )
    })
}

/// Text an executor sent, made storable: each NUL becomes U+FFFD (the replacement character)
/// and the text is cut to its first `max_chars` characters. What executors say is kept as far as
/// every backend can hold it, rather than refused and lost with the rows written beside it.
pub fn storable_text(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    let cut = match text.char_indices().nth(max_chars) {
        Some((at, _)) => &text[..at],
        None => text,
    };
    if cut.as_bytes().contains(&0) {
        std::borrow::Cow::Owned(cut.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(cut)
    }
}

/// Longest message of a run record (`trigger_msg`, `handle_msg`) in characters, XXL-JOB's limit
/// on `handle_msg`: four bytes a character still fit MySQL's TEXT (65,535 bytes).
pub const MESSAGE_MAX_CHARS: usize = 15_000;

/// Whether [`storable_text`] would change `text`.
pub fn needs_storable(text: &str, max_chars: usize) -> bool {
    // a text of at most max_chars bytes has at most max_chars characters
    text.as_bytes().contains(&0)
        || (text.len() > max_chars && text.chars().nth(max_chars).is_some())
}

/// Longest executor address: what a run record (`job_log.executor_address`) keeps of it.
pub const EXECUTOR_ADDRESS_MAX: usize = 255;

/// Most addresses a group's list may hold (each at most [`EXECUTOR_ADDRESS_MAX`] characters), on
/// every backend: MySQL keeps the list in a MEDIUMTEXT.
pub const ADDRESS_LIST_MAX: usize = 512;

/// Why `address` cannot be an executor's address, or `None` when it can: an absolute http(s)
/// URL with a host, at most [`EXECUTOR_ADDRESS_MAX`] characters, with no control character or
/// blank (the admin calls it and shows it). One rule for addresses typed by users and for those
/// executors register.
pub fn executor_address_problem(address: &str) -> Option<String> {
    if address.chars().count() > EXECUTOR_ADDRESS_MAX {
        return Some(format!(
            "an executor address must be at most {EXECUTOR_ADDRESS_MAX} characters"
        ));
    }
    if let Some(c) = address
        .chars()
        .find(|c| c.is_control() || c.is_whitespace())
    {
        return Some(format!(
            "an executor address may not contain {} (U+{:04X})",
            if c.is_whitespace() {
                "blanks"
            } else {
                "control characters"
            },
            c as u32
        ));
    }
    let lower = address.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Some(format!(
            "address '{address}' must start with http:// or https://"
        ));
    }
    match url::Url::parse(address) {
        Ok(u) if u.host_str().is_some_and(|h| !h.is_empty()) => None,
        _ => Some(format!("address '{address}' is not a valid URL")),
    }
}

/// The form two spellings of one executor address share (`http://h:1` and `http://h:1/`), for
/// telling whether an address is one a group has.
pub fn address_key(address: &str) -> String {
    address.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// A value that is not one of an enum's allowed names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} '{value}'; allowed: {}", allowed.join(", "))]
pub struct UnknownVariant {
    /// What the value was meant to be, e.g. "schedule type".
    pub kind: &'static str,
    /// The value as given.
    pub value: String,
    /// Every accepted value.
    pub allowed: &'static [&'static str],
}

/// Defines a string-valued enum with `as_str`, `ALL`, `FromStr`, `Display` and serde as the name.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $kind:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every variant's wire name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The wire/database name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = UnknownVariant;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownVariant { kind: $kind, value: s.to_string(), allowed: Self::NAMES }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

string_enum!(
    /// How a job's fire times are computed.
    ScheduleType, "schedule type" {
        /// Never fires by itself: manual, API or parent triggers only.
        None => "NONE",
        /// Quartz cron expression.
        Cron => "CRON",
        /// Every N seconds from the previous fire time.
        FixRate => "FIX_RATE",
        /// N seconds after the previous run ended.
        FixDelay => "FIX_DELAY",
    }
);

string_enum!(
    /// What to do with a fire time missed by more than the pre-read window.
    MisfireStrategy, "misfire strategy" {
        /// Skip the missed fire time.
        DoNothing => "DO_NOTHING",
        /// Fire once now, then continue from now.
        FireOnceNow => "FIRE_ONCE_NOW",
    }
);

string_enum!(
    /// How the admin picks an executor address for a trigger.
    RouteStrategy, "route strategy" {
        /// First address of the sorted list.
        First => "FIRST",
        /// Last address of the sorted list.
        Last => "LAST",
        /// Round robin per job.
        Round => "ROUND",
        /// Uniformly random.
        Random => "RANDOM",
        /// XXL-JOB's MD5 ring with 100 virtual nodes per address.
        ConsistentHash => "CONSISTENT_HASH",
        /// The address used least often by this job.
        LeastFrequentlyUsed => "LEAST_FREQUENTLY_USED",
        /// The address used longest ago by this job.
        LeastRecentlyUsed => "LEAST_RECENTLY_USED",
        /// The first address that answers `/beat`.
        Failover => "FAILOVER",
        /// The first address whose `/idleBeat` says the job is idle.
        Busyover => "BUSYOVER",
        /// Every address, with shard index/total.
        ShardingBroadcast => "SHARDING_BROADCAST",
    }
);

string_enum!(
    /// Why a job was triggered; recorded on each log row.
    TriggerType, "trigger type" {
        /// From the UI or REST API.
        Manual => "MANUAL",
        /// From the schedule.
        Cron => "CRON",
        /// A retry of a failed run.
        Retry => "RETRY",
        /// A parent job succeeded.
        Parent => "PARENT",
        /// From the executor-facing job API.
        Api => "API",
        /// Catch-up for a missed fire time.
        Misfire => "MISFIRE",
    }
);

string_enum!(
    /// Where a group's executor addresses come from.
    AddressType, "address type" {
        /// Executors register themselves.
        Auto => "AUTO",
        /// An operator typed the list.
        Manual => "MANUAL",
    }
);

impl AddressType {
    /// XXL-JOB's numeric code (0 automatic, 1 manual), as stored in the database.
    pub fn code(self) -> i32 {
        match self {
            AddressType::Auto => 0,
            AddressType::Manual => 1,
        }
    }

    /// The type for a stored numeric code; anything but 1 counts as automatic, as in XXL-JOB.
    pub fn from_code(code: i32) -> Self {
        if code == 1 {
            AddressType::Manual
        } else {
            AddressType::Auto
        }
    }
}

impl TriggerType {
    /// The English title XXL-JOB writes into trigger messages.
    pub fn title(self) -> &'static str {
        match self {
            TriggerType::Manual => "Manual trigger",
            TriggerType::Cron => "Cron trigger",
            TriggerType::Retry => "Fail retry trigger",
            TriggerType::Parent => "Parent job trigger",
            TriggerType::Api => "Api trigger",
            TriggerType::Misfire => "Misfire compensation trigger",
        }
    }
}

/// `trigger_status` of a stopped job.
pub const TRIGGER_STATUS_STOPPED: i32 = 0;
/// `trigger_status` of a running (scheduled) job.
pub const TRIGGER_STATUS_RUNNING: i32 = 1;

/// `trigger_next_time` of a FIX_DELAY job whose run has not ended yet: no pre-read picks it up
/// until the run's result sets the real next fire time.
pub const AWAITING_COMPLETION: i64 = i64::MAX;

/// `alarm_status` values of a log row (XXL-JOB's codes).
pub mod alarm_status {
    /// Not looked at yet.
    pub const DEFAULT: i32 = 0;
    /// Claimed by a fail monitor.
    pub const LOCKED: i32 = -1;
    /// Nothing to alarm (success, or the job is gone).
    pub const NOT_NEEDED: i32 = 1;
    /// Alarm delivered.
    pub const SENT: i32 = 2;
    /// Alarm delivery failed.
    pub const FAILED: i32 = 3;
}

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
}

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
        }
    }
}

/// What storing a run's result needs of its log row and its job, read in one narrow query:
/// callbacks arrive at the fire rate, and reading whole log and job rows costs more per callback
/// (measured: BENCHMARKS.md).
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

/// Role of an admin-UI user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Limited to the groups in `permission`.
    User,
    /// Everything.
    Admin,
}

impl Role {
    /// XXL-JOB's numeric code (0 user, 1 admin).
    pub fn code(self) -> i32 {
        match self {
            Role::User => 0,
            Role::Admin => 1,
        }
    }

    /// The role for a stored code; anything but 1 is a normal user.
    pub fn from_code(code: i32) -> Self {
        if code == 1 {
            Role::Admin
        } else {
            Role::User
        }
    }
}

/// An admin-UI user (XXL-JOB `xxl_job_user`), with a salted password hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Primary key.
    pub id: i32,
    /// Login name.
    pub username: String,
    /// PHC-format password hash (argon2id).
    pub password_hash: String,
    /// Admin or normal user.
    pub role: Role,
    /// Group ids a normal user may access.
    pub permission: Vec<i32>,
}

impl User {
    /// Whether the user may use executor group `group`: an administrator any, a normal user
    /// those of its permission.
    pub fn may_use_group(&self, group: i32) -> bool {
        self.role == Role::Admin || self.permission.contains(&group)
    }
}

/// A logged-in session, stored so that every admin of a cluster accepts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 hex of the cookie value; the cookie itself is never stored.
    pub token_hash: String,
    /// The user.
    pub user_id: i32,
    /// Login time, epoch ms.
    pub created_time: i64,
    /// Expiry, epoch ms.
    pub expire_time: i64,
}

/// A bearer token for scripts calling the REST API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiToken {
    /// Primary key.
    pub id: i32,
    /// Label chosen by the user.
    pub name: String,
    /// SHA-256 hex of the token; the token itself is shown once and never stored.
    pub token_hash: String,
    /// The user the token acts as.
    pub user_id: i32,
    /// Creation time, epoch ms.
    pub created_time: i64,
    /// Last use, epoch ms (0 never).
    pub last_used_time: i64,
    /// Expiry, epoch ms (0 never).
    pub expire_time: i64,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_their_names() {
        for t in ScheduleType::ALL {
            assert_eq!(t.as_str().parse::<ScheduleType>().unwrap(), *t);
        }
        for r in RouteStrategy::ALL {
            assert_eq!(r.as_str().parse::<RouteStrategy>().unwrap(), *r);
        }
        assert_eq!(RouteStrategy::ALL.len(), 10);
    }

    #[test]
    fn unknown_enum_value_lists_allowed_values() {
        let err = "SOMETIMES".parse::<ScheduleType>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown schedule type 'SOMETIMES'; allowed: NONE, CRON, FIX_RATE, FIX_DELAY"
        );
    }

    #[test]
    fn enums_serialize_as_names() {
        let json = serde_json::to_string(&MisfireStrategy::FireOnceNow).unwrap();
        assert_eq!(json, "\"FIRE_ONCE_NOW\"");
        let back: MisfireStrategy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, MisfireStrategy::FireOnceNow);
        assert!(serde_json::from_str::<MisfireStrategy>("\"LATER\"").is_err());
    }

    #[test]
    fn id_lists_parse_and_join() {
        assert_eq!(parse_id_list(" 3, 4,,5 ").unwrap(), vec![3, 4, 5]);
        assert_eq!(parse_id_list("").unwrap(), Vec::<i32>::new());
        assert_eq!(parse_id_list("3,x").unwrap_err(), "'x' is not a job id");
        assert_eq!(join_ids(&[3, 4]), "3,4");
    }

    #[test]
    fn codes_map_both_ways() {
        assert_eq!(
            AddressType::from_code(AddressType::Manual.code()),
            AddressType::Manual
        );
        assert_eq!(AddressType::from_code(7), AddressType::Auto);
        assert_eq!(Role::from_code(Role::Admin.code()), Role::Admin);
        let counts = LogCounts {
            total: 10,
            running: 2,
            success: 5,
        };
        assert_eq!(counts.failed(), 3);
    }
}

/// One change made through the console or the REST API (the audit log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// Primary key (0 before it is stored).
    pub id: i64,
    /// When, epoch ms.
    pub time: i64,
    /// Who (the user, or the owner of the API token used).
    pub user_id: i32,
    /// Their name at the time.
    pub username: String,
    /// What was done, e.g. `job.update`.
    pub action: String,
    /// What kind of thing it was done to: `job`, `group`, `user`, `token`, `run`.
    pub target_type: String,
    /// Which one (0 when the action has no single target, e.g. clearing runs).
    pub target_id: i64,
    /// One line for lists, e.g. the job's description.
    pub summary: String,
    /// JSON object `{field: {"before": …, "after": …}}` of what changed.
    pub changes: String,
}
