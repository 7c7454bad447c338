//! Wire types of the XXL-JOB admin⇄executor protocol, shared by jobwheel's admin and executor.
//!
//! The Java peers (xxl-job 2.4.x, 3.0–3.4.x and 3.5) read these bodies with Gson, which tolerates missing
//! fields, `null`s and numbers written as strings; we read the same way so that any body a Java peer
//! accepts is accepted here too. Where the versions disagree on the wire (the envelope's payload key,
//! `logDateTim` vs `logDateTime`, the callback body shape) we read every spelling and write the one the
//! configured [`AdminProtocol`] expects, or both where the peers ignore unknown keys.

use std::fmt;
use std::str::FromStr;

use serde::de::{DeserializeOwned, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Handle/answer code for success; the admin treats only this value as success.
pub const SUCCESS_CODE: i32 = 200;
/// Handle/answer code for any failure or rejection.
pub const FAIL_CODE: i32 = 500;
/// Handle code for an executor-enforced timeout; counts as a failure for retry and alarm.
pub const TIMEOUT_CODE: i32 = 502;

/// Header carrying the shared token; every version checks it.
pub const ACCESS_TOKEN_HEADER: &str = "XXL-JOB-ACCESS-TOKEN";
/// Header carrying the executor app name; 3.5 requires it and older versions ignore it.
pub const APP_NAME_HEADER: &str = "XXL-JOB-APPNAME";
/// The only `registryGroup` value executors ever register under.
pub const REGISTRY_GROUP_EXECUTOR: &str = "EXECUTOR";

/// Message of every successful answer from 3.x peers.
pub const MSG_SUCCESS: &str = "Success";
/// Answer for a missing or wrong token; admins compare it verbatim in their logs.
pub const MSG_ACCESS_TOKEN_WRONG: &str = "The access token is wrong.";
/// Answer for anything but POST; still sent with HTTP 200 as Java does.
pub const MSG_METHOD_NOT_SUPPORTED: &str = "invalid request, HttpMethod not support.";
/// Answer for an empty request path, kept identical to the Java executor.
pub const MSG_URI_EMPTY: &str = "invalid request, uri-mapping empty.";
/// `/idleBeat` answer for a busy job; BUSYOVER routing looks only at the code.
pub const MSG_JOB_BUSY: &str = "job thread is running or has trigger queue.";
/// `/kill` payload when no worker exists for the job.
pub const MSG_JOB_ALREADY_KILLED: &str = "job thread already killed.";
/// Rejection for DISCARD_LATER on a busy job; the colon is full-width (U+FF1A) as in Java.
pub const MSG_DISCARD_LATER: &str = "block strategy effect：Discard Later";
/// Stop reason of a worker replaced by COVER_EARLY; the colon is full-width (U+FF1A) as in Java.
pub const MSG_COVER_EARLY: &str = "block strategy effect：Cover Early";
/// Handle message for a timed-out run; the trailing space is part of the Java string.
pub const MSG_JOB_TIMEOUT: &str = "job execute timeout ";
/// Stop reason when the admin calls `/kill`.
pub const MSG_KILLED_BY_ADMIN: &str = "scheduling center kill job.";
/// Stop reason when a BEAN job's handler changed, so users see why the old worker vanished.
pub const MSG_CHANGE_HANDLER: &str =
    "change jobhandler or glue type, and terminate the old job thread.";
/// Stop reason when a glue job's source version changed.
pub const MSG_CHANGE_GLUE_SOURCE: &str =
    "change job source or glue type, and terminate the old job thread.";
/// Stop reason when an idle worker is reaped.
pub const MSG_IDLE_TIMEOUT: &str = "excutor idle times over limit.";
/// Stop reason for every worker when the executor shuts down.
pub const MSG_SHUTDOWN_KILL: &str = "web container destroy and kill the job.";
/// Handle message when a handler left a non-positive handle code.
pub const MSG_RESULT_LOST: &str = "job handle result lost.";
/// Appended to the stop reason in the callback of the run that was in progress.
pub const MSG_SUFFIX_RUNNING_KILLED: &str = " [job running, killed]";
/// Appended to the stop reason in the callbacks of triggers still queued when a worker stops.
pub const MSG_SUFFIX_QUEUED_KILLED: &str = " [job not executed, in the job queue, killed.]";
/// `/log` content for a log file that does not exist (with `isEnd` true).
pub const MSG_LOG_FILE_NOT_EXISTS: &str = "readLog fail, logFile not exists";

/// `/run` rejection when no handler has that name; the admin shows it in the trigger log.
pub fn handler_not_found(name: &str) -> String {
    format!("job handler [{name}] not found.")
}

/// `/run` rejection for a logId already queued, so an admin retry cannot run a trigger twice.
pub fn repeat_trigger(log_id: i64) -> String {
    format!("repeat trigger job, logId:{log_id}")
}

/// Answer for an unknown path, echoing the path as the Java executor does.
pub fn uri_not_found(uri: &str) -> String {
    format!("invalid request, uri-mapping({uri}) not found.")
}

/// Answer for a body that could not be handled, with the Java prefix admins already know.
pub fn request_error(detail: &str) -> String {
    format!("request error:{detail}")
}

/// `/run` rejection for a glue type this executor does not know, carrying the raw value for diagnosis.
pub fn glue_type_not_valid(raw: &str) -> String {
    format!("glueType[{raw}] is not valid.")
}

/// How long a peer may take to send a request body once its head arrived (executor and admin
/// alike): answers are small and bodies at most a few megabytes.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Tokens published in XXL-JOB's documentation and sample configurations; a deployment that
/// kept one is as open as one without a token, so both sides refuse them.
pub const WELL_KNOWN_TOKENS: &[&str] = &["default_token"];

/// Why an access token cannot be used, or `None` when it can.
pub fn unusable_token(token: &str) -> Option<&'static str> {
    let t = token.trim();
    if t.is_empty() {
        Some("the access token is empty")
    } else if WELL_KNOWN_TOKENS.iter().any(|k| k.eq_ignore_ascii_case(t)) {
        Some("the access token is XXL-JOB's published default, which anyone can send")
    } else {
        None
    }
}

/// Compares secrets without leaking through timing where they differ (only whether the lengths
/// differ, which a token's length does not give away in any useful way).
pub fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why a trigger's fields cannot be run, checked before it is queued (Java accepts a shard index
/// past the total, a total of 0 or below and unknown strategies, and runs them as nonsense).
pub fn check_trigger(p: &TriggerParam) -> Result<(), String> {
    if p.broadcast_total < 1 {
        return Err(format!(
            "invalid trigger: broadcastTotal must be 1 or more, got {}",
            p.broadcast_total
        ));
    }
    if p.broadcast_index < 0 || p.broadcast_index >= p.broadcast_total {
        return Err(format!(
            "invalid trigger: broadcastIndex must be from 0 to broadcastTotal - 1 ({}), got {}",
            p.broadcast_total - 1,
            p.broadcast_index
        ));
    }
    // a missing strategy means serial, as in Java; a name must be one of the three
    if !p.executor_block_strategy.is_empty()
        && BlockStrategy::parse(&p.executor_block_strategy).is_none()
    {
        return Err(format!(
            "invalid trigger: unknown executorBlockStrategy [{}], allowed: SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY",
            p.executor_block_strategy
        ));
    }
    Ok(())
}

/// Decoding failures; callers turn them into a 500 envelope, so the message must explain the body.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The body is not JSON or not of the expected shape; carries serde's message.
    #[error("malformed body: {0}")]
    Malformed(#[from] serde_json::Error),
    /// A configured admin protocol name is not one we can speak.
    #[error("unknown admin protocol [{0}], allowed values: v2, v3.5")]
    UnknownAdminProtocol(String),
    /// A block strategy name outside the Java enum.
    #[error(
        "unknown block strategy [{0}], allowed values: SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY"
    )]
    UnknownBlockStrategy(String),
    /// A glue type name outside the Java enum.
    #[error("unknown glue type [{0}], allowed values: BEAN, GLUE_GROOVY, GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL")]
    UnknownGlueType(String),
}

impl ProtocolError {
    fn shape(msg: impl fmt::Display) -> Self {
        ProtocolError::Malformed(<serde_json::Error as serde::de::Error>::custom(msg))
    }
}

/// Decodes any request or answer body, mapping serde failures to [`ProtocolError`] for the 500 answer.
///
/// The whole body must be UTF-8 JSON nested at most [`MAX_JSON_DEPTH`] deep, the fields it does
/// not read included: serde skips those without checking either.
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ProtocolError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ProtocolError::shape(format!("the body is not UTF-8: {e}")))?;
    if let Some(at) = too_deep(text.as_bytes()) {
        return Err(ProtocolError::shape(format!(
            "recursion limit exceeded: the body nests arrays and objects more than \
             {MAX_JSON_DEPTH} deep (at byte {at})"
        )));
    }
    Ok(serde_json::from_str(text)?)
}

/// How deep a body may nest arrays and objects: serde_json's own limit for what it parses.
pub const MAX_JSON_DEPTH: usize = 128;

/// The offset where `json` first nests deeper than [`MAX_JSON_DEPTH`], outside strings.
fn too_deep(json: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &b) in json.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(at);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Gson-like leniency: `null` means "keep the default", numbers may arrive as strings and vice versa.
mod lenient {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde_json::{Number, Value};

    fn kind(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    fn integral(f: f64) -> Option<i64> {
        // 2^63 is exactly representable, so this bound keeps the cast in range.
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        (f.is_finite() && f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
    }

    fn number_to_i64(n: &Number) -> Option<i64> {
        n.as_i64().or_else(|| n.as_f64().and_then(integral))
    }

    fn value_to_i64<E: Error>(v: Value) -> Result<Option<i64>, E> {
        let parsed = match &v {
            Value::Null => return Ok(None),
            Value::Number(n) => number_to_i64(n),
            Value::String(s) => {
                let t = s.trim();
                t.parse::<i64>()
                    .ok()
                    .or_else(|| t.parse::<f64>().ok().and_then(integral))
            }
            _ => None,
        };
        match parsed {
            Some(i) => Ok(Some(i)),
            None => Err(E::custom(match &v {
                Value::Number(n) => format!("expected an integer, found {n}"),
                Value::String(s) => format!("expected an integer, found string {s:?}"),
                other => format!("expected an integer, found {}", kind(other)),
            })),
        }
    }

    fn value_to_i32<E: Error>(v: Value) -> Result<Option<i32>, E> {
        match value_to_i64::<E>(v)? {
            None => Ok(None),
            Some(i) => i32::try_from(i)
                .map(Some)
                .map_err(|_| E::custom(format!("integer {i} out of range for i32"))),
        }
    }

    pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            Value::Number(n) => Ok(Some(n.to_string())),
            Value::Bool(b) => Ok(Some(b.to_string())),
            other => Err(D::Error::custom(format!(
                "expected a string, found {}",
                kind(&other)
            ))),
        }
    }

    pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Ok(opt_string(d)?.unwrap_or_default())
    }

    pub fn opt_int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        value_to_i64(Value::deserialize(d)?)
    }

    pub fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        Ok(opt_int64(d)?.unwrap_or_default())
    }

    pub fn int32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
        Ok(value_to_i32(Value::deserialize(d)?)?.unwrap_or_default())
    }

    pub fn shard_total<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
        Ok(value_to_i32(Value::deserialize(d)?)?.unwrap_or(1))
    }

    pub fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(false),
            Value::Bool(b) => Ok(b),
            // Gson's Boolean.parseBoolean: only "true" (any case) is true.
            Value::String(s) => Ok(s.trim().eq_ignore_ascii_case("true")),
            other => Err(D::Error::custom(format!(
                "expected a boolean, found {}",
                kind(&other)
            ))),
        }
    }
}

/// Implements Display, FromStr and string serde for the name enums, so configs and JSON use the Java names.
macro_rules! named_enum_impls {
    ($ty:ident, $err:ident) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = ProtocolError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $ty::parse(s).ok_or_else(|| ProtocolError::$err(s.to_string()))
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// What to do with a trigger for a job that is already running (Java `ExecutorBlockStrategyEnum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockStrategy {
    /// Queue behind the running trigger; also what unknown names mean.
    SerialExecution,
    /// Reject the new trigger while the job is busy.
    DiscardLater,
    /// Stop the running trigger and its queue, then run the new one.
    CoverEarly,
}

impl BlockStrategy {
    /// Every strategy in Java declaration order, for UI lists and exhaustive tests.
    pub const ALL: &'static [BlockStrategy] = &[
        BlockStrategy::SerialExecution,
        BlockStrategy::DiscardLater,
        BlockStrategy::CoverEarly,
    ];

    /// The Java enum name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStrategy::SerialExecution => "SERIAL_EXECUTION",
            BlockStrategy::DiscardLater => "DISCARD_LATER",
            BlockStrategy::CoverEarly => "COVER_EARLY",
        }
    }

    /// The English title Java shows in the UI and embeds in block-strategy messages.
    pub fn title(self) -> &'static str {
        match self {
            BlockStrategy::SerialExecution => "Serial execution",
            BlockStrategy::DiscardLater => "Discard Later",
            BlockStrategy::CoverEarly => "Cover Early",
        }
    }

    /// Exact-name match like Java's `match`, so typos are not silently accepted where validation matters.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|b| b.as_str() == s)
    }

    /// The executor's reading of a raw name: Java treats anything unknown as serial.
    pub fn parse_or_serial(s: &str) -> Self {
        Self::parse(s).unwrap_or(BlockStrategy::SerialExecution)
    }
}

named_enum_impls!(BlockStrategy, UnknownBlockStrategy);

/// How a job's code is supplied (Java `GlueTypeEnum`); script types run an external interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GlueType {
    /// A handler registered in the executor by name.
    Bean,
    /// Groovy source compiled in the JVM; Java-only, so jobwheel executors reject it.
    GlueGroovy,
    /// Bash script.
    GlueShell,
    /// Python 3 script (`python3` since Java 3.2).
    GluePython,
    /// Python 2 script, run with `python`.
    GluePython2,
    /// Node.js script.
    GlueNodejs,
    /// PHP script.
    GluePhp,
    /// PowerShell script, run with `pwsh` as Java 3.4.2 does.
    GluePowershell,
}

impl GlueType {
    /// Every glue type, for UI lists and exhaustive tests.
    pub const ALL: &'static [GlueType] = &[
        GlueType::Bean,
        GlueType::GlueGroovy,
        GlueType::GlueShell,
        GlueType::GluePython,
        GlueType::GluePython2,
        GlueType::GlueNodejs,
        GlueType::GluePhp,
        GlueType::GluePowershell,
    ];

    /// The Java enum name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            GlueType::Bean => "BEAN",
            GlueType::GlueGroovy => "GLUE_GROOVY",
            GlueType::GlueShell => "GLUE_SHELL",
            GlueType::GluePython => "GLUE_PYTHON",
            GlueType::GluePython2 => "GLUE_PYTHON2",
            GlueType::GlueNodejs => "GLUE_NODEJS",
            GlueType::GluePhp => "GLUE_PHP",
            GlueType::GluePowershell => "GLUE_POWERSHELL",
        }
    }

    /// Exact-name match like Java's `GlueTypeEnum.match`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|g| g.as_str() == s)
    }

    /// Script types are run as a child process rather than an in-process handler.
    pub fn is_script(self) -> bool {
        self.interpreter().is_some()
    }

    /// Program put in `argv[0]` for script types (no shell is involved).
    pub fn interpreter(self) -> Option<&'static str> {
        match self {
            GlueType::Bean | GlueType::GlueGroovy => None,
            GlueType::GlueShell => Some("bash"),
            GlueType::GluePython => Some("python3"),
            GlueType::GluePython2 => Some("python"),
            GlueType::GlueNodejs => Some("node"),
            GlueType::GluePhp => Some("php"),
            GlueType::GluePowershell => Some("pwsh"),
        }
    }

    /// Script file suffix, part of the `{jobId}_{glueUpdatetime}{suffix}` file name.
    pub fn suffix(self) -> Option<&'static str> {
        match self {
            GlueType::Bean | GlueType::GlueGroovy => None,
            GlueType::GlueShell => Some(".sh"),
            GlueType::GluePython | GlueType::GluePython2 => Some(".py"),
            GlueType::GlueNodejs => Some(".js"),
            GlueType::GluePhp => Some(".php"),
            GlueType::GluePowershell => Some(".ps1"),
        }
    }

    /// Display name as the Java ≥3.2 UI shows it, used in messages users compare with Java's.
    pub fn desc(self) -> &'static str {
        match self {
            GlueType::Bean => "BEAN",
            GlueType::GlueGroovy => "GLUE(Java)",
            GlueType::GlueShell => "GLUE(Shell)",
            GlueType::GluePython => "GLUE(Python3)",
            GlueType::GluePython2 => "GLUE(Python2)",
            GlueType::GlueNodejs => "GLUE(Nodejs)",
            GlueType::GluePhp => "GLUE(PHP)",
            GlueType::GluePowershell => "GLUE(PowerShell)",
        }
    }
}

named_enum_impls!(GlueType, UnknownGlueType);

/// Which admin generation the executor talks to; only callbacks and `/log` differ and both can't be sent at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AdminProtocol {
    /// Admins up to 3.4.x: callback body is an array, time key `logDateTim`.
    #[default]
    V2,
    /// 3.5 admins: callback body is `{"callbackList":[...]}`, time key `logDateTime`.
    V35,
}

impl AdminProtocol {
    /// Every protocol, for help texts.
    pub const ALL: &'static [AdminProtocol] = &[AdminProtocol::V2, AdminProtocol::V35];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AdminProtocol::V2 => "v2",
            AdminProtocol::V35 => "v3.5",
        }
    }

    /// Case-insensitive match of the configuration spelling, so `V3.5` in an env var works.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
    }

    /// The epoch-ms key this generation uses in callback items and `/log` requests.
    pub fn log_date_key(self) -> &'static str {
        match self {
            AdminProtocol::V2 => "logDateTim",
            AdminProtocol::V35 => "logDateTime",
        }
    }
}

named_enum_impls!(AdminProtocol, UnknownAdminProtocol);

/// Body of `/run` and `/trigger`; strategy and glue type stay raw so unknown values reach the executor's messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TriggerParam {
    /// Job row id; the executor keeps one worker per jobId.
    #[serde(deserialize_with = "lenient::int32")]
    pub job_id: i32,
    /// BEAN handler name (may be empty for glue jobs).
    #[serde(deserialize_with = "lenient::string")]
    pub executor_handler: String,
    /// Job parameter; plural on the wire unlike the database column.
    #[serde(deserialize_with = "lenient::string")]
    pub executor_params: String,
    /// Raw block strategy name; see [`BlockStrategy::parse_or_serial`].
    #[serde(deserialize_with = "lenient::string")]
    pub executor_block_strategy: String,
    /// Timeout in seconds; ≤0 means none.
    #[serde(deserialize_with = "lenient::int32")]
    pub executor_timeout: i32,
    /// Log row id; the key of de-duplication and of the callback.
    #[serde(deserialize_with = "lenient::int64")]
    pub log_id: i64,
    /// Trigger time in epoch ms; selects the executor's dated log directory.
    #[serde(deserialize_with = "lenient::int64")]
    pub log_date_time: i64,
    /// Raw glue type name; see [`GlueType::parse`].
    #[serde(deserialize_with = "lenient::string")]
    pub glue_type: String,
    /// Script source for glue jobs, empty for BEAN.
    #[serde(deserialize_with = "lenient::string")]
    pub glue_source: String,
    /// Glue version in epoch ms; a new value replaces the job's worker.
    #[serde(deserialize_with = "lenient::int64")]
    pub glue_updatetime: i64,
    /// 0-based shard index of a broadcast.
    #[serde(deserialize_with = "lenient::int32")]
    pub broadcast_index: i32,
    /// Shard count; defaults to 1 because the admin sends `{0,1}` for non-broadcast triggers.
    #[serde(deserialize_with = "lenient::shard_total")]
    pub broadcast_total: i32,
}

impl Default for TriggerParam {
    fn default() -> Self {
        TriggerParam {
            job_id: 0,
            executor_handler: String::new(),
            executor_params: String::new(),
            executor_block_strategy: String::new(),
            executor_timeout: 0,
            log_id: 0,
            log_date_time: 0,
            glue_type: String::new(),
            glue_source: String::new(),
            glue_updatetime: 0,
            broadcast_index: 0,
            broadcast_total: 1,
        }
    }
}

impl TriggerParam {
    /// The strategy the executor applies: unknown names mean serial, as in Java.
    pub fn block_strategy_enum(&self) -> BlockStrategy {
        BlockStrategy::parse_or_serial(&self.executor_block_strategy)
    }

    /// The glue type if known; `None` must be answered with [`glue_type_not_valid`].
    pub fn glue_type_enum(&self) -> Option<GlueType> {
        GlueType::parse(&self.glue_type)
    }
}

/// Answer envelope of both directions (Java `ReturnT`/`Response`); the payload is written twice for old and new readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnT<T> {
    /// 200 success, 500 failure, 502 timeout.
    pub code: i32,
    /// Human-readable message; omitted on the wire when `None` as Gson does.
    pub msg: Option<String>,
    /// Written as both `content` (≤3.2) and `data` (≥3.3); read from `data`, else `content`.
    pub payload: Option<T>,
}

/// Envelope whose payload is kept as raw JSON, for answers whose payload callers ignore.
pub type AnyReturn = ReturnT<Value>;
/// Envelope with a string payload, e.g. the `/kill` "already killed" answer.
pub type StringReturn = ReturnT<String>;
/// Envelope of the `/log` answer.
pub type LogReturn = ReturnT<LogResult>;

impl<T> ReturnT<T> {
    /// Plain success as 3.x peers send it (`{"code":200,"msg":"Success"}`).
    pub fn success() -> Self {
        Self::with_code(SUCCESS_CODE, MSG_SUCCESS)
    }

    /// Success carrying a payload, as the `/log` and `/kill` answers do.
    pub fn success_with(payload: T) -> Self {
        ReturnT {
            code: SUCCESS_CODE,
            msg: Some(MSG_SUCCESS.to_string()),
            payload: Some(payload),
        }
    }

    /// Failure with the message the peer will log or show.
    pub fn fail(msg: impl Into<String>) -> Self {
        Self::with_code(FAIL_CODE, msg)
    }

    /// Any code with a message, e.g. 502 for timeouts.
    pub fn with_code(code: i32, msg: impl Into<String>) -> Self {
        ReturnT {
            code,
            msg: Some(msg.into()),
            payload: None,
        }
    }

    /// Peers decide only on the code, never on the message.
    pub fn is_success(&self) -> bool {
        self.code == SUCCESS_CODE
    }
}

/// Which envelope key carries a payload: XXL-JOB up to 3.2 reads `content`, 3.3 and later `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadKey {
    /// Both, for a peer of unknown generation (extra keys are ignored by every reader).
    #[default]
    Both,
    /// `content` only (2.4–3.2).
    Content,
    /// `data` only (3.3 and later, and jobwheel).
    Data,
}

/// An envelope written with its payload under the given key(s), for answers whose payload is
/// large enough that writing it twice matters (`/log`).
pub struct Keyed<'a, T> {
    /// The envelope.
    pub ret: &'a ReturnT<T>,
    /// Where its payload goes.
    pub key: PayloadKey,
}

impl<T: Serialize> Serialize for Keyed<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ret = self.ret;
        let keys = match self.key {
            PayloadKey::Both => 2,
            _ => 1,
        };
        let len = 1 + usize::from(ret.msg.is_some()) + keys * usize::from(ret.payload.is_some());
        let mut st = serializer.serialize_struct("ReturnT", len)?;
        st.serialize_field("code", &ret.code)?;
        match &ret.msg {
            Some(msg) => st.serialize_field("msg", msg)?,
            None => st.skip_field("msg")?,
        }
        let (content, data) = match self.key {
            PayloadKey::Both => (true, true),
            PayloadKey::Content => (true, false),
            PayloadKey::Data => (false, true),
        };
        match &ret.payload {
            Some(payload) if content => st.serialize_field("content", payload)?,
            _ => st.skip_field("content")?,
        }
        match &ret.payload {
            Some(payload) if data => st.serialize_field("data", payload)?,
            _ => st.skip_field("data")?,
        }
        st.end()
    }
}

impl<T: Serialize> Serialize for ReturnT<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Keyed {
            ret: self,
            key: PayloadKey::Both,
        }
        .serialize(serializer)
    }
}

/// Reading side of [`ReturnT`]; both payload keys are optional and a `null` counts as absent.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de>")]
struct ReturnWire<T> {
    #[serde(default, deserialize_with = "lenient::int32")]
    code: i32,
    #[serde(default, deserialize_with = "lenient::opt_string")]
    msg: Option<String>,
    #[serde(default = "none")]
    content: Option<T>,
    #[serde(default = "none")]
    data: Option<T>,
}

fn none<T>() -> Option<T> {
    None
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ReturnT<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = ReturnWire::<T>::deserialize(deserializer)?;
        Ok(ReturnT {
            code: wire.code,
            msg: wire.msg,
            payload: wire.data.or(wire.content),
        })
    }
}

/// Body of `/api/registry` and `/api/registryRemove`; the admin keys executors by all three fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RegistryParam {
    /// Always `EXECUTOR` from executors.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_group: String,
    /// The executor app name, i.e. the group's `app_name`.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_key: String,
    /// The executor base URL, with the trailing slash the admin appends paths to.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_value: String,
}

impl RegistryParam {
    /// Registration of an executor, so callers cannot get the group name wrong.
    pub fn executor(app_name: impl Into<String>, address: impl Into<String>) -> Self {
        RegistryParam {
            registry_group: REGISTRY_GROUP_EXECUTOR.to_string(),
            registry_key: app_name.into(),
            registry_value: address.into(),
        }
    }
}

/// One job result in `/api/callback`; no `Serialize` because the time key depends on the admin protocol.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "CallbackWire")]
pub struct HandleCallbackParam {
    /// The log row the result belongs to; the admin ignores it if that row already has a result.
    pub log_id: i64,
    /// Trigger time in epoch ms, read from `logDateTim` or `logDateTime`.
    pub log_date_time: i64,
    /// 200 success, 500 failure, 502 timeout.
    pub handle_code: i32,
    /// Result text appended to the log row; omitted on the wire when `None`.
    pub handle_msg: Option<String>,
}

/// Reading side of [`HandleCallbackParam`], keeping both time spellings apart so neither errors as a duplicate.
#[derive(Deserialize, Default)]
#[serde(default)]
struct CallbackWire {
    #[serde(rename = "logId", deserialize_with = "lenient::int64")]
    log_id: i64,
    #[serde(rename = "logDateTime", deserialize_with = "lenient::opt_int64")]
    log_date_time: Option<i64>,
    #[serde(rename = "logDateTim", deserialize_with = "lenient::opt_int64")]
    log_date_tim: Option<i64>,
    #[serde(rename = "handleCode", deserialize_with = "lenient::int32")]
    handle_code: i32,
    #[serde(rename = "handleMsg", deserialize_with = "lenient::opt_string")]
    handle_msg: Option<String>,
}

impl From<CallbackWire> for HandleCallbackParam {
    fn from(w: CallbackWire) -> Self {
        HandleCallbackParam {
            log_id: w.log_id,
            log_date_time: w.log_date_time.or(w.log_date_tim).unwrap_or(0),
            handle_code: w.handle_code,
            handle_msg: w.handle_msg,
        }
    }
}

impl HandleCallbackParam {
    /// Builds a result for the callback queue; a NUL in the message, which an admin's database
    /// may refuse (and then refuse the result), is sent as U+FFFD.
    pub fn new(
        log_id: i64,
        log_date_time: i64,
        handle_code: i32,
        handle_msg: Option<String>,
    ) -> Self {
        let handle_msg = handle_msg.map(|m| {
            if m.contains('\0') {
                m.replace('\0', "\u{FFFD}")
            } else {
                m
            }
        });
        HandleCallbackParam {
            log_id,
            log_date_time,
            handle_code,
            handle_msg,
        }
    }

    /// One callback item with the time key the given admin generation reads.
    pub fn to_json(&self, proto: AdminProtocol) -> Value {
        let mut m = Map::new();
        m.insert("logId".to_string(), Value::from(self.log_id));
        m.insert(
            proto.log_date_key().to_string(),
            Value::from(self.log_date_time),
        );
        m.insert("handleCode".to_string(), Value::from(self.handle_code));
        if let Some(msg) = &self.handle_msg {
            m.insert("handleMsg".to_string(), Value::String(msg.clone()));
        }
        Value::Object(m)
    }
}

/// The `/api/callback` body for the configured admin generation (array for V2, `callbackList` object for V35).
pub fn encode_callbacks(items: &[HandleCallbackParam], proto: AdminProtocol) -> Value {
    let list = Value::Array(items.iter().map(|i| i.to_json(proto)).collect());
    match proto {
        AdminProtocol::V2 => list,
        AdminProtocol::V35 => {
            let mut m = Map::new();
            m.insert("callbackList".to_string(), list);
            Value::Object(m)
        }
    }
}

/// Reads an `/api/callback` body from any executor generation: a bare array or `{"callbackList":[...]}`.
/// One item that cannot be read fails the whole body (see [`decode_callback_items`]).
pub fn decode_callbacks(body: &[u8]) -> Result<Vec<HandleCallbackParam>, ProtocolError> {
    decode_callback_items(body)?
        .into_iter()
        .map(|item| match item {
            CallbackItem::Result(r) => Ok(r),
            CallbackItem::Malformed { why, .. } => Err(ProtocolError::shape(why)),
        })
        .collect()
}

/// One item of a callback body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackItem {
    /// A result.
    Result(HandleCallbackParam),
    /// An item that is not a result, with why, and its `logId` when that much can be read.
    Malformed {
        /// The run it names, if readable.
        log_id: Option<i64>,
        /// What is wrong with it.
        why: String,
    },
}

impl CallbackItem {
    /// The run it names, when that can be read.
    pub fn log_id(&self) -> Option<i64> {
        match self {
            CallbackItem::Result(r) => Some(r.log_id),
            CallbackItem::Malformed { log_id, .. } => *log_id,
        }
    }
}

/// Reads an `/api/callback` body item by item: the body's shape must be right, but one item of
/// the wrong type does not cost the others (the admin stores those and closes the bad one's run
/// when it can tell which run that is).
pub fn decode_callback_items(body: &[u8]) -> Result<Vec<CallbackItem>, ProtocolError> {
    let list = match serde_json::from_slice::<Value>(body)? {
        Value::Array(list) => list,
        Value::Object(mut obj) => match obj.remove("callbackList") {
            Some(Value::Array(list)) => list,
            Some(Value::Null) => Vec::new(),
            Some(_) => return Err(ProtocolError::shape("callbackList must be an array")),
            None => {
                return Err(ProtocolError::shape(
                    "expected a JSON array or an object with callbackList",
                ))
            }
        },
        _ => {
            return Err(ProtocolError::shape(
                "expected a JSON array or an object with callbackList",
            ))
        }
    };
    Ok(list
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let log_id = item.get("logId").and_then(|v| match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            });
            match serde_json::from_value::<HandleCallbackParam>(item) {
                Ok(result) => CallbackItem::Result(result),
                Err(e) => CallbackItem::Malformed {
                    log_id,
                    why: format!("callback item {} is not a result: {e}", i + 1),
                },
            }
        })
        .collect())
}

/// Body of `/log`; no `Serialize` because the time key depends on the admin protocol.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "LogParamWire")]
pub struct LogParam {
    /// Trigger time in epoch ms, which picks the dated log directory; read from either spelling.
    pub log_date_time: i64,
    /// The log row, i.e. the log file name.
    pub log_id: i64,
    /// 1-based first line wanted; the UI polls from `toLineNum + 1`.
    pub from_line_num: i32,
    /// The request spelled the time `logDateTime`: a 3.5 admin or jobwheel, which read `data`.
    pub reads_data: bool,
}

/// Reading side of [`LogParam`], keeping both time spellings apart so neither errors as a duplicate.
#[derive(Deserialize, Default)]
#[serde(default)]
struct LogParamWire {
    #[serde(rename = "logDateTime", deserialize_with = "lenient::opt_int64")]
    log_date_time: Option<i64>,
    #[serde(rename = "logDateTim", deserialize_with = "lenient::opt_int64")]
    log_date_tim: Option<i64>,
    #[serde(rename = "logId", deserialize_with = "lenient::int64")]
    log_id: i64,
    #[serde(rename = "fromLineNum", deserialize_with = "lenient::int32")]
    from_line_num: i32,
}

impl From<LogParamWire> for LogParam {
    fn from(w: LogParamWire) -> Self {
        LogParam {
            reads_data: w.log_date_time.is_some(),
            log_date_time: w.log_date_time.or(w.log_date_tim).unwrap_or(0),
            log_id: w.log_id,
            from_line_num: w.from_line_num,
        }
    }
}

impl LogParam {
    /// The `/log` request with both time keys: each executor generation reads its own and ignores
    /// the other, and `logDateTime` tells a jobwheel executor that this admin reads `data`, so
    /// the page is written once.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for proto in AdminProtocol::ALL {
            m.insert(
                proto.log_date_key().to_string(),
                Value::from(self.log_date_time),
            );
        }
        m.insert("logId".to_string(), Value::from(self.log_id));
        m.insert("fromLineNum".to_string(), Value::from(self.from_line_num));
        Value::Object(m)
    }
}

/// Payload of the `/log` answer; the admin polls again from `toLineNum + 1` until the job has a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct LogResult {
    /// Echo of the requested first line.
    #[serde(deserialize_with = "lenient::int32")]
    pub from_line_num: i32,
    /// Last line returned (0 when none), where the next poll continues.
    #[serde(deserialize_with = "lenient::int32")]
    pub to_line_num: i32,
    /// The lines joined with `\n`, or an error text such as [`MSG_LOG_FILE_NOT_EXISTS`].
    #[serde(deserialize_with = "lenient::string")]
    pub log_content: String,
    /// Gson writes the field name `isEnd`; the Java admin UI's Jackson JSON calls it `end`.
    #[serde(rename = "isEnd", alias = "end", deserialize_with = "lenient::boolean")]
    pub is_end: bool,
}

/// Most lines one `/log` page holds.
pub const LOG_PAGE_MAX_LINES: usize = 10_000;
/// Most bytes one `/log` page's content takes once written as a JSON string, so no answer (the
/// executor's, or the admin's passing it on) grows past a few hundred kilobytes, whatever the
/// log's size.
pub const LOG_PAGE_MAX_BYTES: usize = 256 * 1024;

/// How many bytes `text` takes written as a JSON string (without the quotes), as serde_json
/// writes it: two for the short escapes, six for other control characters.
pub fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The longest start of `text` whose JSON form fits in `max` bytes.
pub fn cut_to_json_len(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += json_char_len(c);
        if used > max {
            return &text[..i];
        }
    }
    text
}

impl LogResult {
    /// This page cut to the page bound at a line end, for executors that send a whole log at
    /// once (XXL-JOB's): `toLineNum` then names the last line kept, and the next page starts
    /// after it. A page within the bound is returned as it is.
    pub fn bounded(mut self) -> Self {
        if self.to_line_num < self.from_line_num || self.from_line_num < 1 {
            return self; // no lines, or an error text
        }
        let (mut kept, mut bytes, mut end) = (0usize, 0usize, 0usize);
        for line in self.log_content.split_inclusive('\n') {
            let size = json_len(line);
            if kept == LOG_PAGE_MAX_LINES || (kept > 0 && bytes + size > LOG_PAGE_MAX_BYTES) {
                break;
            }
            if size > LOG_PAGE_MAX_BYTES {
                // a single huge line: cut, and counted as read
                let cut = cut_to_json_len(line, LOG_PAGE_MAX_BYTES - 100).len();
                self.log_content.truncate(end + cut);
                self.log_content.push_str(" [line cut]\n");
                self.to_line_num = self.from_line_num;
                return self;
            }
            end += line.len();
            bytes += size;
            kept += 1;
        }
        let whole = self.log_content.split_inclusive('\n').count();
        if kept < whole {
            self.log_content.truncate(end);
            // a page numbered near i32::MAX by its executor must not overflow (kept ≤ 10,000)
            let kept = i32::try_from(kept).unwrap_or(i32::MAX);
            self.to_line_num = self.from_line_num.saturating_add(kept - 1);
        }
        self
    }

    /// The answer for a log file that does not exist, ending the UI's polling.
    pub fn not_exists(from_line_num: i32) -> Self {
        LogResult {
            from_line_num,
            to_line_num: 0,
            log_content: MSG_LOG_FILE_NOT_EXISTS.to_string(),
            is_end: true,
        }
    }
}

/// Body of `/kill`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct KillParam {
    /// The job whose worker is stopped.
    #[serde(deserialize_with = "lenient::int32")]
    pub job_id: i32,
}

/// Body of `/idleBeat`, used by BUSYOVER routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct IdleBeatParam {
    /// The job whose worker must be idle.
    #[serde(deserialize_with = "lenient::int32")]
    pub job_id: i32,
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).expect("test JSON must parse")
    }

    /// Decodes an observed envelope, re-encodes it and checks the result is the observed body with the
    /// payload (if any) under both keys.
    fn envelope_roundtrip<T: Serialize + DeserializeOwned>(observed: &str) -> ReturnT<T> {
        let decoded: ReturnT<T> = decode(observed.as_bytes()).expect("observed envelope decodes");
        let mut expected = v(observed);
        if let Some(obj) = expected.as_object_mut() {
            let payload = obj.get("data").or_else(|| obj.get("content")).cloned();
            if let Some(p) = payload.filter(|p| !p.is_null()) {
                obj.insert("content".into(), p.clone());
                obj.insert("data".into(), p);
            } else {
                obj.remove("content");
                obj.remove("data");
            }
        }
        assert_eq!(serde_json::to_value(&decoded).unwrap(), expected);
        decoded
    }

    // ---- executor answers (observed) ----

    #[test]
    fn beat_success_answer() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200,"msg":"Success"}"#);
        assert_eq!(r.code, 200);
        assert_eq!(r.msg.as_deref(), Some("Success"));
        assert!(r.payload.is_none());
        assert!(r.is_success());
        assert_eq!(
            serde_json::to_value(AnyReturn::success()).unwrap(),
            v(r#"{"code":200,"msg":"Success"}"#)
        );
    }

    #[test]
    fn beat_answer_2_4_2_without_msg() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200}"#);
        assert_eq!(r.code, 200);
        assert!(r.msg.is_none());
        assert!(r.payload.is_none());
        assert!(r.is_success());
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"code":200}"#);
    }

    #[test]
    fn error_answers_match_observed() {
        let cases: Vec<(&str, String)> = vec![
            (
                r#"{"code":500,"msg":"The access token is wrong."}"#,
                MSG_ACCESS_TOKEN_WRONG.to_string(),
            ),
            (
                r#"{"code":500,"msg":"invalid request, HttpMethod not support."}"#,
                MSG_METHOD_NOT_SUPPORTED.to_string(),
            ),
            (
                r#"{"code":500,"msg":"invalid request, uri-mapping(/foo) not found."}"#,
                uri_not_found("/foo"),
            ),
            (
                r#"{"code":500,"msg":"job thread is running or has trigger queue."}"#,
                MSG_JOB_BUSY.to_string(),
            ),
            (
                r#"{"code":500,"msg":"job handler [nope] not found."}"#,
                handler_not_found("nope"),
            ),
            (
                r#"{"code":500,"msg":"block strategy effect：Discard Later"}"#,
                MSG_DISCARD_LATER.to_string(),
            ),
            (
                r#"{"code":500,"msg":"request error:..."}"#,
                request_error("..."),
            ),
        ];
        for (observed, msg) in cases {
            let r: AnyReturn = envelope_roundtrip(observed);
            assert_eq!(r.code, FAIL_CODE);
            assert!(!r.is_success());
            assert_eq!(r.msg.as_deref(), Some(msg.as_str()));
            // Our own constructor produces the observed body exactly.
            assert_eq!(
                serde_json::to_value(AnyReturn::fail(msg)).unwrap(),
                v(observed)
            );
        }
    }

    #[test]
    fn discard_later_uses_full_width_colon() {
        assert!(MSG_DISCARD_LATER.contains('\u{FF1A}'));
        assert!(MSG_COVER_EARLY.contains('\u{FF1A}'));
        assert_eq!(
            MSG_DISCARD_LATER,
            format!(
                "block strategy effect\u{FF1A}{}",
                BlockStrategy::DiscardLater.title()
            )
        );
        assert_eq!(
            MSG_COVER_EARLY,
            format!(
                "block strategy effect\u{FF1A}{}",
                BlockStrategy::CoverEarly.title()
            )
        );
    }

    #[test]
    fn idle_beat_and_run_success_answers() {
        for observed in [
            r#"{"code":200,"msg":"Success"}"#,
            r#"{"code":200,"msg":"Success"}"#,
        ] {
            let r: AnyReturn = envelope_roundtrip(observed);
            assert!(r.is_success());
        }
    }

    #[test]
    fn log_answer_with_lines() {
        let observed = r#"{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":4,"logContent":"...lines...\n","isEnd":false}}"#;
        let r: LogReturn = envelope_roundtrip(observed);
        assert!(r.is_success());
        let p = r.payload.expect("payload");
        assert_eq!(p.from_line_num, 1);
        assert_eq!(p.to_line_num, 4);
        assert_eq!(p.log_content, "...lines...\n");
        assert!(!p.is_end);
    }

    #[test]
    fn log_answer_unknown_log() {
        let observed = r#"{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":0,"logContent":"readLog fail, logFile not exists","isEnd":true}}"#;
        let r: LogReturn = envelope_roundtrip(observed);
        let p = r.payload.clone().expect("payload");
        assert_eq!(p, LogResult::not_exists(1));
        assert_eq!(p.log_content, MSG_LOG_FILE_NOT_EXISTS);
        assert!(p.is_end);
        let ours = LogReturn::success_with(LogResult::not_exists(1));
        assert_eq!(ours, r);
        let enc = serde_json::to_value(&ours).unwrap();
        assert_eq!(enc["data"], v(observed)["data"]);
        assert_eq!(enc["content"], v(observed)["data"]);
    }

    #[test]
    fn kill_answers() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200,"msg":"Success"}"#);
        assert!(r.is_success());

        let observed = r#"{"code":200,"msg":"Success","data":"job thread already killed."}"#;
        let r: StringReturn = envelope_roundtrip(observed);
        assert!(r.is_success());
        assert_eq!(r.msg.as_deref(), Some(MSG_SUCCESS));
        assert_eq!(r.payload.as_deref(), Some(MSG_JOB_ALREADY_KILLED));
        let ours = StringReturn::success_with(MSG_JOB_ALREADY_KILLED.to_string());
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            json!({"code":200,"msg":"Success","content":"job thread already killed.","data":"job thread already killed."})
        );
        // The same answer as a payload-agnostic envelope.
        let any: AnyReturn = decode(observed.as_bytes()).unwrap();
        assert_eq!(any.payload, Some(json!("job thread already killed.")));
    }

    #[test]
    fn kill_2_4_answer_has_message_only() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200,"msg":"job thread already killed."}"#);
        assert!(r.is_success());
        assert_eq!(r.msg.as_deref(), Some(MSG_JOB_ALREADY_KILLED));
    }

    // ---- envelope mechanics ----

    #[test]
    fn envelope_writes_both_content_and_data() {
        let r = ReturnT::success_with(json!({"a":1}));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code":200,"msg":"Success","content":{"a":1},"data":{"a":1}})
        );
        let r = ReturnT {
            code: 200,
            msg: None,
            payload: Some(5),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code":200,"content":5,"data":5})
        );
    }

    #[test]
    fn envelope_reads_content_only_and_data_only() {
        let c: ReturnT<LogResult> = decode(
            br#"{"code":200,"content":{"fromLineNum":3,"toLineNum":9,"logContent":"x","isEnd":false}}"#,
        )
        .unwrap();
        assert_eq!(c.payload.as_ref().map(|p| p.to_line_num), Some(9));
        assert!(c.msg.is_none());
        let d: ReturnT<LogResult> = decode(
            br#"{"code":200,"msg":"Success","data":{"fromLineNum":3,"toLineNum":9,"logContent":"x","isEnd":false}}"#,
        )
        .unwrap();
        assert_eq!(d.payload, c.payload);
    }

    #[test]
    fn envelope_prefers_data_and_treats_null_as_absent() {
        let r: StringReturn = decode(br#"{"code":200,"content":"old","data":"new"}"#).unwrap();
        assert_eq!(r.payload.as_deref(), Some("new"));
        let r: StringReturn = decode(br#"{"code":200,"content":"old","data":null}"#).unwrap();
        assert_eq!(r.payload.as_deref(), Some("old"));
        let r: StringReturn = decode(br#"{"code":200,"content":null,"data":null}"#).unwrap();
        assert!(r.payload.is_none());
        let r: AnyReturn = decode(br#"{"code":500,"msg":null,"data":null}"#).unwrap();
        assert_eq!(r.code, 500);
        assert!(r.msg.is_none());
        assert!(r.payload.is_none());
    }

    #[test]
    fn envelope_constructors() {
        let r = AnyReturn::fail("boom");
        assert_eq!((r.code, r.msg.as_deref()), (FAIL_CODE, Some("boom")));
        let r = AnyReturn::with_code(TIMEOUT_CODE, MSG_JOB_TIMEOUT);
        assert_eq!(r.code, 502);
        assert!(!r.is_success());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code":502,"msg":"job execute timeout "})
        );
        assert_eq!((SUCCESS_CODE, FAIL_CODE, TIMEOUT_CODE), (200, 500, 502));
    }

    #[test]
    fn envelope_ignores_unknown_fields_and_is_lenient() {
        let r: AnyReturn =
            decode(br#"{"code":"200","msg":"Success","extra":[1,2],"success":true}"#).unwrap();
        assert!(r.is_success());
        let r: AnyReturn = decode(br#"{}"#).unwrap();
        assert_eq!(r.code, 0);
    }

    // ---- admin -> executor requests ----

    #[test]
    fn run_body_observed() {
        let body = r#"{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"hello","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":101,"logDateTime":1796010589000,"glueType":"BEAN","glueSource":"","glueUpdatetime":1796010589000,"broadcastIndex":0,"broadcastTotal":1}"#;
        let p: TriggerParam = decode(body.as_bytes()).unwrap();
        assert_eq!(p.job_id, 1);
        assert_eq!(p.executor_handler, "demoJobHandler");
        assert_eq!(p.executor_params, "hello");
        assert_eq!(p.executor_block_strategy, "SERIAL_EXECUTION");
        assert_eq!(p.block_strategy_enum(), BlockStrategy::SerialExecution);
        assert_eq!(p.executor_timeout, 0);
        assert_eq!(p.log_id, 101);
        assert_eq!(p.log_date_time, 1_796_010_589_000);
        assert_eq!(p.glue_type, "BEAN");
        assert_eq!(p.glue_type_enum(), Some(GlueType::Bean));
        assert_eq!(p.glue_source, "");
        assert_eq!(p.glue_updatetime, 1_796_010_589_000);
        assert_eq!(p.broadcast_index, 0);
        assert_eq!(p.broadcast_total, 1);
        assert_eq!(serde_json::to_value(&p).unwrap(), v(body));
    }

    #[test]
    fn trigger_body_reference_example() {
        let body = r#"{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":101,"logDateTime":1700000000000,"glueType":"BEAN","glueSource":"","glueUpdatetime":1541254891000,"broadcastIndex":0,"broadcastTotal":1}"#;
        let p: TriggerParam = decode(body.as_bytes()).unwrap();
        assert_eq!(p.executor_params, "");
        assert_eq!(p.log_date_time, 1_700_000_000_000);
        assert_eq!(p.glue_updatetime, 1_541_254_891_000);
        assert_eq!(p.broadcast_total, 1);
        assert_eq!(serde_json::to_value(&p).unwrap(), v(body));
    }

    #[test]
    fn observed_run_variants() {
        // DISCARD_LATER, COVER_EARLY and executorTimeout 2 from the observed exchanges.
        let p: TriggerParam = decode(
            br#"{"jobId":6,"executorHandler":"sleepJob","executorBlockStrategy":"DISCARD_LATER","executorTimeout":2,"logId":120,"glueType":"BEAN","broadcastTotal":1}"#,
        )
        .unwrap();
        assert_eq!(p.block_strategy_enum(), BlockStrategy::DiscardLater);
        assert_eq!(p.executor_timeout, 2);
        let p: TriggerParam =
            decode(br#"{"jobId":6,"executorBlockStrategy":"COVER_EARLY"}"#).unwrap();
        assert_eq!(p.block_strategy_enum(), BlockStrategy::CoverEarly);
        let p: TriggerParam = decode(br#"{"jobId":1,"executorHandler":"nope"}"#).unwrap();
        assert_eq!(p.executor_handler, "nope");
        assert_eq!(
            handler_not_found(&p.executor_handler),
            "job handler [nope] not found."
        );
    }

    #[test]
    fn trigger_param_is_lenient_like_gson() {
        let p: TriggerParam = decode(br#"{"jobId":7}"#).unwrap();
        assert_eq!(p.job_id, 7);
        assert_eq!(p.executor_handler, "");
        assert_eq!(p.executor_params, "");
        assert_eq!(p.log_id, 0);
        assert_eq!(p.broadcast_index, 0);
        assert_eq!(p.broadcast_total, 1);

        let p: TriggerParam = decode(
            br#"{"jobId":"3","executorHandler":null,"executorParams":null,"glueType":null,"glueSource":null,"logId":"42","logDateTime":1.7e12,"broadcastTotal":null,"executorTimeout":null}"#,
        )
        .unwrap();
        assert_eq!(p.job_id, 3);
        assert_eq!(p.executor_handler, "");
        assert_eq!(p.executor_params, "");
        assert_eq!(p.glue_type, "");
        assert_eq!(p.glue_source, "");
        assert_eq!(p.log_id, 42);
        assert_eq!(p.log_date_time, 1_700_000_000_000);
        assert_eq!(p.broadcast_total, 1);
        assert_eq!(p.executor_timeout, 0);

        // A number where a string is expected reads as its text, as Gson does.
        let p: TriggerParam = decode(br#"{"executorParams":12}"#).unwrap();
        assert_eq!(p.executor_params, "12");

        // An explicit broadcastTotal 0 (the docs' example) is kept as sent.
        let p: TriggerParam = decode(br#"{"broadcastTotal":0}"#).unwrap();
        assert_eq!(p.broadcast_total, 0);

        assert_eq!(TriggerParam::default().broadcast_total, 1);
    }

    #[test]
    fn trigger_param_unknown_values_stay_raw() {
        let p: TriggerParam =
            decode(br#"{"executorBlockStrategy":"WHATEVER","glueType":"GLUE_RUBY"}"#).unwrap();
        assert_eq!(p.executor_block_strategy, "WHATEVER");
        assert_eq!(p.block_strategy_enum(), BlockStrategy::SerialExecution);
        assert_eq!(p.glue_type, "GLUE_RUBY");
        assert_eq!(p.glue_type_enum(), None);
        assert_eq!(
            glue_type_not_valid(&p.glue_type),
            "glueType[GLUE_RUBY] is not valid."
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let p: TriggerParam = decode(br#"{"jobId":1,"somethingNew":{"x":[1]},"logId":5}"#).unwrap();
        assert_eq!((p.job_id, p.log_id), (1, 5));
        let k: KillParam = decode(br#"{"jobId":2,"reason":"x"}"#).unwrap();
        assert_eq!(k.job_id, 2);
        let items = decode_callbacks(br#"[{"logId":1,"handleCode":200,"extra":true}]"#).unwrap();
        assert_eq!(items[0].log_id, 1);
        let l: LogParam = decode(br#"{"logId":1,"fromLineNum":2,"x":null}"#).unwrap();
        assert_eq!((l.log_id, l.from_line_num, l.log_date_time), (1, 2, 0));
        let r: RegistryParam =
            decode(br#"{"registryGroup":"EXECUTOR","registryKey":"a","registryValue":"b","v":1}"#)
                .unwrap();
        assert_eq!(r.registry_key, "a");
    }

    #[test]
    fn kill_and_idle_beat_bodies() {
        for body in [r#"{"jobId":1}"#, r#"{"jobId":6}"#] {
            let k: KillParam = decode(body.as_bytes()).unwrap();
            assert_eq!(serde_json::to_value(k).unwrap(), v(body));
            let i: IdleBeatParam = decode(body.as_bytes()).unwrap();
            assert_eq!(i.job_id, k.job_id);
            assert_eq!(serde_json::to_value(i).unwrap(), v(body));
        }
        let k: KillParam = decode(br#"{"jobId":6}"#).unwrap();
        assert_eq!(k, KillParam { job_id: 6 });
        assert_eq!(
            format!("{MSG_KILLED_BY_ADMIN}{MSG_SUFFIX_RUNNING_KILLED}"),
            "scheduling center kill job. [job running, killed]"
        );
        assert_eq!(
            format!("{MSG_KILLED_BY_ADMIN}{MSG_SUFFIX_QUEUED_KILLED}"),
            "scheduling center kill job. [job not executed, in the job queue, killed.]"
        );
    }

    #[test]
    fn tokens_compare_exactly_and_published_ones_are_unusable() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "abcd"));
        assert!(unusable_token("default_token").is_some());
        assert!(unusable_token(" DEFAULT_TOKEN ").is_some());
        assert!(unusable_token("  ").is_some());
        assert!(unusable_token("k3f9Qx1").is_none());
    }

    #[test]
    fn triggers_with_impossible_shards_or_strategies_are_refused() {
        let ok = TriggerParam::default();
        assert!(check_trigger(&ok).is_ok(), "defaults: shard 0 of 1, serial");
        let bad = |edit: fn(&mut TriggerParam)| {
            let mut p = TriggerParam::default();
            edit(&mut p);
            check_trigger(&p).unwrap_err()
        };
        assert!(bad(|p| p.broadcast_total = 0).contains("broadcastTotal"));
        assert!(bad(|p| p.broadcast_total = -1).contains("broadcastTotal"));
        assert!(bad(|p| p.broadcast_index = 1).contains("broadcastIndex"));
        assert!(bad(|p| p.broadcast_index = -1).contains("broadcastIndex"));
        assert!(bad(|p| p.executor_block_strategy = "SOMETIMES".into()).contains("SOMETIMES"));
        let p = TriggerParam {
            broadcast_total: 3,
            broadcast_index: 2,
            executor_block_strategy: "COVER_EARLY".into(),
            ..Default::default()
        };
        assert!(check_trigger(&p).is_ok());
    }

    #[test]
    fn whole_logs_from_old_executors_are_cut_to_one_page() {
        let lines: String = (1..=25_000).map(|i| format!("l{i}\n")).collect();
        let whole = LogResult {
            from_line_num: 11,
            to_line_num: 25_010,
            log_content: lines,
            is_end: false,
        };
        let page = whole.clone().bounded();
        assert_eq!(page.to_line_num, 11 + LOG_PAGE_MAX_LINES as i32 - 1);
        assert_eq!(page.log_content.lines().count(), LOG_PAGE_MAX_LINES);
        assert!(page.log_content.ends_with("l10000\n"));
        let small = LogResult {
            to_line_num: 12,
            log_content: "a\nb\n".into(),
            ..whole.clone()
        };
        assert_eq!(small.clone().bounded(), small);
        let wide = LogResult {
            from_line_num: 1,
            to_line_num: 2,
            log_content: format!("{}\nnext\n", "\u{1}".repeat(LOG_PAGE_MAX_BYTES)),
            is_end: false,
        };
        let page = wide.bounded();
        assert_eq!(page.to_line_num, 1);
        assert!(serde_json::to_string(&page.log_content).unwrap().len() <= LOG_PAGE_MAX_BYTES);
        assert!(page.log_content.ends_with(" [line cut]\n"));
    }

    #[test]
    fn results_built_here_carry_no_nul() {
        let item = HandleCallbackParam::new(1, 2, 500, Some("panic: a\0b".into()));
        assert_eq!(item.handle_msg.as_deref(), Some("panic: a\u{FFFD}b"));
    }

    #[test]
    fn a_keyed_envelope_writes_its_payload_once() {
        let r = ReturnT::success_with(5);
        let one = |key| serde_json::to_value(Keyed { ret: &r, key }).unwrap();
        assert_eq!(
            one(PayloadKey::Data),
            json!({"code":200,"msg":"Success","data":5})
        );
        assert_eq!(
            one(PayloadKey::Content),
            json!({"code":200,"msg":"Success","content":5})
        );
        assert_eq!(
            one(PayloadKey::Both),
            json!({"code":200,"msg":"Success","content":5,"data":5})
        );
    }

    #[test]
    fn beat_request_body_is_a_json_empty_string() {
        // The 2.4.2 admin sends `""`; it must at least be valid JSON for a body-agnostic reader.
        let b: Value = decode(br#""""#).unwrap();
        assert_eq!(b, json!(""));
    }

    #[test]
    fn log_request_both_spellings() {
        let old = r#"{"logDateTim":1700000000000,"logId":101,"fromLineNum":1}"#;
        let p: LogParam = decode(old.as_bytes()).unwrap();
        assert_eq!(p.log_date_time, 1_700_000_000_000);
        assert_eq!(p.log_id, 101);
        assert_eq!(p.from_line_num, 1);
        assert!(!p.reads_data, "a 2.4-3.4 admin's request");

        let new = r#"{"logId":101,"logDateTime":1700000000000,"fromLineNum":1}"#;
        let q: LogParam = decode(new.as_bytes()).unwrap();
        assert_eq!(
            (q.log_date_time, q.log_id, q.from_line_num),
            (p.log_date_time, p.log_id, p.from_line_num)
        );
        assert!(q.reads_data, "a 3.5 admin's request");

        // jobwheel's admin sends both spellings, so every generation finds its own
        let ours = q.to_json();
        assert_eq!(
            ours,
            json!({"logDateTim":1700000000000i64,"logDateTime":1700000000000i64,"logId":101,"fromLineNum":1})
        );
        let back: LogParam = serde_json::from_value(ours).unwrap();
        assert!(back.reads_data);

        // Observed 3.4.2 request with the 3.4.2 capture's date.
        let p: LogParam =
            decode(br#"{"logDateTim":1796010589000,"logId":101,"fromLineNum":1}"#).unwrap();
        assert_eq!(p.log_date_time, 1_796_010_589_000);

        // Both present: the 3.5 spelling wins, and it is not a duplicate-field error.
        let p: LogParam =
            decode(br#"{"logDateTim":1,"logDateTime":2,"logId":3,"fromLineNum":4}"#).unwrap();
        assert_eq!(p.log_date_time, 2);
    }

    #[test]
    fn log_result_accepts_end_alias_and_writes_is_end() {
        let r: LogResult =
            decode(br#"{"fromLineNum":5,"toLineNum":7,"logContent":"a\nb","end":true}"#).unwrap();
        assert!(r.is_end);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"fromLineNum":5,"toLineNum":7,"logContent":"a\nb","isEnd":true})
        );
        let r: LogResult = decode(br#"{"fromLineNum":1,"logContent":null}"#).unwrap();
        assert_eq!(r.log_content, "");
        assert!(!r.is_end);
    }

    // ---- executor -> admin requests ----

    #[test]
    fn registry_body() {
        let body = r#"{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:9999/"}"#;
        let r: RegistryParam = decode(body.as_bytes()).unwrap();
        assert_eq!(r.registry_group, REGISTRY_GROUP_EXECUTOR);
        assert_eq!(r.registry_key, "xxl-job-executor-sample");
        assert_eq!(r.registry_value, "http://127.0.0.1:9999/");
        assert_eq!(
            r,
            RegistryParam::executor("xxl-job-executor-sample", "http://127.0.0.1:9999/")
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), v(body));
    }

    #[test]
    fn callback_single_without_msg() {
        let body = r#"[{"logId":101,"logDateTim":1796010589000,"handleCode":200}]"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(
            items,
            vec![HandleCallbackParam::new(101, 1_796_010_589_000, 200, None)]
        );
        assert_eq!(encode_callbacks(&items, AdminProtocol::V2), v(body));
    }

    #[test]
    fn callback_batched() {
        let body = r#"[{"logId":103,"logDateTim":1796010589000,"handleCode":500,"handleMsg":"peer fail:x"},{"logId":104,"logDateTim":1796010589000,"handleCode":200}]"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].log_id, 103);
        assert_eq!(items[0].handle_code, 500);
        assert_eq!(items[0].handle_msg.as_deref(), Some("peer fail:x"));
        assert_eq!(items[1].log_id, 104);
        assert_eq!(items[1].handle_msg, None);
        assert_eq!(encode_callbacks(&items, AdminProtocol::V2), v(body));
    }

    #[test]
    fn callback_unicode_raw_utf8() {
        let body = r#"[{"logId":110,"logDateTim":1796010589000,"handleCode":200,"handleMsg":"echo:unicode-é-中"}]"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(items[0].handle_msg.as_deref(), Some("echo:unicode-é-中"));
        let enc = encode_callbacks(&items, AdminProtocol::V2);
        assert_eq!(enc, v(body));
        let text = serde_json::to_string(&enc).unwrap();
        assert!(text.contains("echo:unicode-é-中"), "{text}");
        assert!(!text.contains("\\u"), "{text}");
        // Escaped input reads the same.
        let escaped = decode_callbacks(
            br#"[{"logId":110,"logDateTim":1796010589000,"handleCode":200,"handleMsg":"echo:unicode-\u00e9-\u4e2d"}]"#,
        )
        .unwrap();
        assert_eq!(escaped, items);
    }

    #[test]
    fn callback_3_5_callback_list() {
        let body =
            r#"{"callbackList":[{"logId":101,"logDateTime":1796010620000,"handleCode":200}]}"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(
            items,
            vec![HandleCallbackParam::new(101, 1_796_010_620_000, 200, None)]
        );
        assert_eq!(encode_callbacks(&items, AdminProtocol::V35), v(body));
        // The same items for an old admin.
        assert_eq!(
            encode_callbacks(&items, AdminProtocol::V2),
            json!([{"logId":101,"logDateTim":1796010620000i64,"handleCode":200}])
        );
    }

    #[test]
    fn callback_observed_results() {
        // Cover-early, timeout and kill results from the observed exchanges.
        let cover = format!("{MSG_COVER_EARLY}{MSG_SUFFIX_RUNNING_KILLED}");
        assert_eq!(
            cover,
            "block strategy effect：Cover Early [job running, killed]"
        );
        let body = json!([
            {"logId":120,"logDateTim":1796010589000i64,"handleCode":500,"handleMsg":cover},
            {"logId":121,"logDateTim":1796010589000i64,"handleCode":502,"handleMsg":"job execute timeout "},
            {"logId":122,"logDateTim":1796010589000i64,"handleCode":500,"handleMsg":"scheduling center kill job. [job running, killed]"}
        ]);
        let items = decode_callbacks(body.to_string().as_bytes()).unwrap();
        assert_eq!(items[0].handle_msg.as_deref(), Some(cover.as_str()));
        assert_eq!(items[1].handle_code, TIMEOUT_CODE);
        assert_eq!(items[1].handle_msg.as_deref(), Some(MSG_JOB_TIMEOUT));
        assert_eq!(items[2].handle_code, FAIL_CODE);
        assert_eq!(encode_callbacks(&items, AdminProtocol::V2), body);
    }

    #[test]
    fn callback_null_msg_omitted_and_spellings() {
        let items = decode_callbacks(
            br#"[{"logId":1,"logDateTim":10,"handleCode":200,"handleMsg":null},{"logId":2,"handleCode":500},{"logId":3,"logDateTim":5,"logDateTime":6,"handleCode":200}]"#,
        )
        .unwrap();
        assert_eq!(items[0].handle_msg, None);
        assert_eq!(items[0].log_date_time, 10);
        assert_eq!(items[1].log_date_time, 0);
        assert_eq!(items[2].log_date_time, 6);
        let enc = encode_callbacks(&items[..1], AdminProtocol::V35);
        assert_eq!(
            enc,
            json!({"callbackList":[{"logId":1,"logDateTime":10,"handleCode":200}]})
        );
        assert!(!serde_json::to_string(&enc).unwrap().contains("handleMsg"));
        let item = HandleCallbackParam::new(9, 8, 200, None);
        assert_eq!(
            item.to_json(AdminProtocol::V2),
            json!({"logId":9,"logDateTim":8,"handleCode":200})
        );
    }

    #[test]
    fn one_bad_callback_item_costs_only_itself() {
        let items = decode_callback_items(
            br#"[{"logId":1,"handleCode":200},{"logId":"2","handleCode":"oops"},{"logId":[3]},{"logId":4,"handleCode":500}]"#,
        )
        .unwrap();
        assert_eq!(items.len(), 4);
        assert!(matches!(&items[0], CallbackItem::Result(r) if r.log_id == 1));
        match &items[1] {
            CallbackItem::Malformed { log_id, why } => {
                assert_eq!(*log_id, Some(2));
                assert!(
                    why.contains("callback item 2") && why.contains("oops"),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &items[2],
            CallbackItem::Malformed { log_id: None, .. }
        ));
        assert!(matches!(&items[3], CallbackItem::Result(r) if r.handle_code == 500));
        // the strict reader still refuses the whole body
        assert!(decode_callbacks(br#"[{"logId":1},{"logId":2,"handleCode":{}}]"#).is_err());
    }

    #[test]
    fn bodies_are_checked_whole_even_where_unread() {
        let mut not_utf8 = br#"{"jobId":1,"x":""#.to_vec();
        not_utf8.extend_from_slice(&[0xff, 0xfe]);
        not_utf8.extend_from_slice(br#""}"#);
        let err = decode::<KillParam>(&not_utf8).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
        let deep = format!(
            r#"{{"jobId":1,"x":{}{}}}"#,
            "[".repeat(50_000),
            "]".repeat(50_000)
        );
        let err = decode::<KillParam>(deep.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than 128 deep"), "{err}");
        // brackets inside strings are text, and 128 levels are allowed
        let fine = format!(
            r#"{{"jobId":7,"s":"[[[{{\"","x":{}{}}}"#,
            "[".repeat(127),
            "]".repeat(127)
        );
        assert_eq!(decode::<KillParam>(fine.as_bytes()).unwrap().job_id, 7);
    }

    #[test]
    fn callback_edge_shapes() {
        assert!(decode_callbacks(b"[]").unwrap().is_empty());
        assert!(decode_callbacks(br#"{"callbackList":[]}"#)
            .unwrap()
            .is_empty());
        assert!(decode_callbacks(br#"{"callbackList":null}"#)
            .unwrap()
            .is_empty());
        assert_eq!(encode_callbacks(&[], AdminProtocol::V2), json!([]));
        assert_eq!(
            encode_callbacks(&[], AdminProtocol::V35),
            json!({"callbackList":[]})
        );
        for bad in [
            &br#"{"list":[]}"#[..],
            br#"{"callbackList":{}}"#,
            br#""x""#,
            b"42",
            br#"[1]"#,
            br#"[{"logId":"abc"}]"#,
        ] {
            let err = decode_callbacks(bad).expect_err("bad shape must fail");
            assert!(matches!(err, ProtocolError::Malformed(_)), "{err}");
        }
    }

    // ---- errors ----

    #[test]
    fn malformed_json_gives_protocol_error() {
        let err = decode::<TriggerParam>(b"not json").expect_err("must fail");
        assert!(matches!(err, ProtocolError::Malformed(_)));
        assert!(err.to_string().starts_with("malformed body: "), "{err}");
        assert!(decode_callbacks(b"not json").is_err());
        assert!(decode_callbacks(b"").is_err());
        assert!(decode::<KillParam>(b"").is_err());
        assert!(decode::<LogParam>(b"{\"logId\":").is_err());
        let err = decode::<KillParam>(br#"{"jobId":"abc"}"#).expect_err("must fail");
        assert!(err.to_string().contains("abc"), "{err}");
        let err = decode::<KillParam>(br#"{"jobId":9999999999}"#).expect_err("must fail");
        assert!(err.to_string().contains("out of range"), "{err}");
        assert!(decode::<KillParam>(br#"{"jobId":1.5}"#).is_err());
        assert!(decode::<TriggerParam>(br#"{"glueSource":{"a":1}}"#).is_err());
        assert!(decode::<LogResult>(br#"{"isEnd":3}"#).is_err());
    }

    // ---- enums and helpers ----

    #[test]
    fn admin_protocol_parsing() {
        assert_eq!("v2".parse::<AdminProtocol>().unwrap(), AdminProtocol::V2);
        assert_eq!("V2".parse::<AdminProtocol>().unwrap(), AdminProtocol::V2);
        assert_eq!("v3.5".parse::<AdminProtocol>().unwrap(), AdminProtocol::V35);
        assert_eq!("V3.5".parse::<AdminProtocol>().unwrap(), AdminProtocol::V35);
        for p in AdminProtocol::ALL {
            assert_eq!(p.as_str().parse::<AdminProtocol>().unwrap(), *p);
            assert_eq!(p.to_string(), p.as_str());
        }
        let err = "v4".parse::<AdminProtocol>().expect_err("v4 is unknown");
        let msg = err.to_string();
        assert!(msg.contains("v4"), "{msg}");
        assert!(msg.contains("v2") && msg.contains("v3.5"), "{msg}");
        assert!("".parse::<AdminProtocol>().is_err());
        assert!("v3".parse::<AdminProtocol>().is_err());
        assert_eq!(AdminProtocol::default(), AdminProtocol::V2);
        assert_eq!(AdminProtocol::V2.log_date_key(), "logDateTim");
        assert_eq!(AdminProtocol::V35.log_date_key(), "logDateTime");
        assert_eq!(
            serde_json::from_str::<AdminProtocol>(r#""v3.5""#).unwrap(),
            AdminProtocol::V35
        );
    }

    #[test]
    fn block_strategy_names() {
        let names: Vec<&str> = BlockStrategy::ALL.iter().map(|b| b.as_str()).collect();
        assert_eq!(names, ["SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"]);
        for b in BlockStrategy::ALL {
            assert_eq!(BlockStrategy::parse(b.as_str()), Some(*b));
            assert_eq!(b.as_str().parse::<BlockStrategy>().unwrap(), *b);
            assert_eq!(serde_json::to_value(b).unwrap(), json!(b.as_str()));
        }
        assert_eq!(BlockStrategy::parse("serial_execution"), None);
        assert_eq!(
            BlockStrategy::parse_or_serial("bogus"),
            BlockStrategy::SerialExecution
        );
        let err = "bogus".parse::<BlockStrategy>().expect_err("unknown");
        for b in BlockStrategy::ALL {
            assert!(err.to_string().contains(b.as_str()), "{err}");
        }
    }

    #[test]
    fn glue_type_table() {
        type Row = (
            &'static str,
            bool,
            Option<&'static str>,
            Option<&'static str>,
            &'static str,
        );
        let rows: Vec<Row> = GlueType::ALL
            .iter()
            .map(|g| {
                (
                    g.as_str(),
                    g.is_script(),
                    g.interpreter(),
                    g.suffix(),
                    g.desc(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("BEAN", false, None, None, "BEAN"),
                ("GLUE_GROOVY", false, None, None, "GLUE(Java)"),
                ("GLUE_SHELL", true, Some("bash"), Some(".sh"), "GLUE(Shell)"),
                (
                    "GLUE_PYTHON",
                    true,
                    Some("python3"),
                    Some(".py"),
                    "GLUE(Python3)"
                ),
                (
                    "GLUE_PYTHON2",
                    true,
                    Some("python"),
                    Some(".py"),
                    "GLUE(Python2)"
                ),
                (
                    "GLUE_NODEJS",
                    true,
                    Some("node"),
                    Some(".js"),
                    "GLUE(Nodejs)"
                ),
                ("GLUE_PHP", true, Some("php"), Some(".php"), "GLUE(PHP)"),
                (
                    "GLUE_POWERSHELL",
                    true,
                    Some("pwsh"),
                    Some(".ps1"),
                    "GLUE(PowerShell)"
                ),
            ]
        );
        let err = "GLUE_RUBY".parse::<GlueType>().expect_err("unknown");
        for g in GlueType::ALL {
            assert_eq!(GlueType::parse(g.as_str()), Some(*g));
            assert_eq!(g.as_str().parse::<GlueType>().unwrap(), *g);
            assert_eq!(g.to_string(), g.as_str());
            let back: GlueType = serde_json::from_value(json!(g.as_str())).unwrap();
            assert_eq!(back, *g);
            assert!(err.to_string().contains(g.as_str()), "{err}");
        }
        assert!(err.to_string().contains("GLUE_RUBY"));
        assert_eq!(GlueType::parse("bean"), None);
        assert!(serde_json::from_value::<GlueType>(json!("GLUE_RUBY")).is_err());
    }

    #[test]
    fn message_helpers() {
        assert_eq!(handler_not_found("x"), "job handler [x] not found.");
        assert_eq!(repeat_trigger(101), "repeat trigger job, logId:101");
        assert_eq!(
            uri_not_found("/foo"),
            "invalid request, uri-mapping(/foo) not found."
        );
        assert_eq!(request_error("boom"), "request error:boom");
        assert_eq!(ACCESS_TOKEN_HEADER, "XXL-JOB-ACCESS-TOKEN");
        assert_eq!(APP_NAME_HEADER, "XXL-JOB-APPNAME");
        assert_eq!(MSG_JOB_TIMEOUT, "job execute timeout ");
        assert_eq!(
            MSG_SUFFIX_QUEUED_KILLED,
            " [job not executed, in the job queue, killed.]"
        );
    }
}
