//! Settings: defaults, then a `--config` TOML file (its top level, then its `[admin]` or
//! `[executor]` section), then `JOBWHEEL_<FLAG>` environment variables, then flags.
//!
//! The flag structs are also the serde structs (`deny_unknown_fields`) that figment extracts the
//! merged layers into, so a file's keys are the flags' long names, a typo is refused rather than
//! ignored, and a bad value ends the process with one line naming its key and where it came from
//! (`invalid --port '70000': …`, `invalid port = '70000' in config file 'x.toml': …`).

use std::fmt::Display;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::Path;

use chrono_tz::Tz;
use clap::{Args, Command};
use figment::error::Kind;
use figment::providers::Serialized;
use figment::value::{Dict, Map, Value};
use figment::Figment;
use serde::de::DeserializeOwned;
use serde::Serialize;

mod admin;
mod executor;
mod flags;
#[cfg(test)]
mod tests;

pub use admin::AdminSettings;
pub use executor::{
    resolve_migrate, ExecutorSettings, LocalExecutorSettings, StandaloneSettings, NO_TOKEN,
};
pub use flags::{
    AdminArgs, ExecutorArgs, ExecutorOnlyArgs, LocalExecutorArgs, MigrateArgs, StandaloneArgs,
};

pub use crate::executor::{DEFAULT_EXECUTOR_BIND, DEFAULT_EXECUTOR_PORT, DEFAULT_LOG_PATH};
use crate::store::Backend;

/// A setting that cannot be used, with a message naming it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Default listen address of `jobwheel admin` (XXL-JOB's port), which executors must reach.
pub const DEFAULT_BIND: &str = "0.0.0.0:8080";
/// Default listen address of `jobwheel standalone`: this machine only, until `--bind` opens it.
pub const DEFAULT_STANDALONE_BIND: &str = "127.0.0.1:8080";
/// Default database: an SQLite file beside the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://./data/jobwheel.db";
/// Calls in flight on the fast trigger pool unless configured (XXL-JOB's default too).
pub const DEFAULT_TRIGGER_POOL_FAST_MAX: usize = 200;
/// Calls in flight on the slow trigger pool unless configured (XXL-JOB's default too).
pub const DEFAULT_TRIGGER_POOL_SLOW_MAX: usize = 100;
/// App name of the executor that runs inside `jobwheel standalone`.
pub const LOCAL_APP_NAME: &str = "jobwheel-local";

/// Which part of a config file a mode reads over its top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `[admin]`
    Admin,
    /// `[executor]`
    Executor,
}

impl Section {
    fn name(self) -> &'static str {
        match self {
            Section::Admin => "admin",
            Section::Executor => "executor",
        }
    }
}

/// The prefix of a setting's environment variable: `JOBWHEEL_LOG_PATH` sets `log-path`.
const ENV_PREFIX: &str = "JOBWHEEL_";

/// The long names of a command's flags.
fn long_names(command: Command) -> Vec<String> {
    command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(str::to_string)
        .collect()
}

/// Every key a file may hold: the long names of every mode's flags.
fn known_keys() -> Vec<String> {
    [
        AdminArgs::augment_args(Command::new("admin")),
        ExecutorArgs::augment_args(Command::new("executor")),
        LocalExecutorArgs::augment_args(Command::new("local")),
        MigrateArgs::augment_args(Command::new("migrate")),
    ]
    .into_iter()
    .flat_map(long_names)
    .collect()
}

/// Where settings come from besides the flags: a `--config` file and `JOBWHEEL_*` variables.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    describe: String,
    top: Dict,
    sections: Map<String, Dict>,
    env: Dict,
}

impl Sources {
    /// Neither a file nor the environment: every setting not flagged takes its default.
    pub fn none() -> Self {
        Sources::default()
    }

    /// The `--config` file (if any) and this process's environment.
    pub fn read(config: Option<&Path>) -> Result<Self, ConfigError> {
        let file = match config {
            Some(path) => Sources::load(path)?,
            None => Sources::none(),
        };
        Ok(file.with_environment(std::env::vars()))
    }

    /// Adds the `JOBWHEEL_<FLAG>` variables among `vars` (others, like `JOBWHEEL_CONFIG`, are
    /// not settings and are left to whoever reads them).
    pub fn with_environment(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let known = known_keys();
        self.env = vars
            .into_iter()
            .filter_map(|(name, value)| {
                let key = name
                    .strip_prefix(ENV_PREFIX)?
                    .to_lowercase()
                    .replace('_', "-");
                known.contains(&key).then(|| (key, Value::from(value)))
            })
            .collect();
        self
    }

    /// Reads and checks a TOML file (keys are the flag names, `_` and `-` alike); unknown keys
    /// are refused so that a typo is not silently ignored.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(format!("cannot read config file '{}': {e}", path.display()))
        })?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ConfigError(format!(
                "config file '{}' is not valid TOML: {}",
                path.display(),
                e.message().trim().replace('\n', "; ")
            ))
        })?;
        let describe = format!("config file '{}'", path.display());
        let known = known_keys();
        let check = |name: &str, shown: &str| match known.iter().any(|k| k == name) {
            true => Ok(()),
            false => Err(ConfigError(format!("unknown key '{shown}' in {describe}"))),
        };
        let mut file = Sources {
            describe: describe.clone(),
            ..Sources::default()
        };
        for (key, value) in table {
            let key = key.replace('_', "-");
            if key == "admin" || key == "executor" {
                let toml::Value::Table(section) = value else {
                    return Err(ConfigError(format!(
                        "'{key}' in {describe} must be a section ([{key}])"
                    )));
                };
                let mut dict = Dict::new();
                for (inner, value) in section {
                    let inner = inner.replace('_', "-");
                    check(&inner, &format!("{key}.{inner}"))?;
                    dict.insert(inner, figment_value(value, &describe)?);
                }
                file.sections.insert(key, dict);
            } else {
                check(&key, &key)?;
                file.top.insert(key, figment_value(value, &describe)?);
            }
        }
        Ok(file)
    }
}

fn figment_value(value: toml::Value, describe: &str) -> Result<Value, ConfigError> {
    Value::serialize(value)
        .map_err(|e| ConfigError(format!("{describe} holds a value that cannot be read: {e}")))
}

/// One mode's layers, lowest first: the file's top level, its section, the environment, the flags.
pub(crate) struct Layers<'a> {
    sources: &'a Sources,
    section: Dict,
    flags: Dict,
}

impl<'a> Layers<'a> {
    /// The layers `section` reads, under the flags [`given`] by each leaf struct.
    pub(crate) fn new(sources: &'a Sources, section: Section, flags: &[Dict]) -> Self {
        let section = sources.sections.get(section.name()).cloned();
        Layers {
            sources,
            section: section.unwrap_or_default(),
            flags: flags
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    fn all(&self) -> [&Dict; 4] {
        [
            &self.sources.top,
            &self.section,
            &self.sources.env,
            &self.flags,
        ]
    }

    /// The leaf struct `A` merged from every layer; a value of the wrong type is named with
    /// its key and where it came from.
    pub(crate) fn extract<A: Args + DeserializeOwned>(&self) -> Result<A, ConfigError> {
        let keys = long_names(A::augment_args(Command::new("")));
        let own = |dict: &Dict| -> Dict {
            let own = dict.iter().filter(|(k, _)| keys.contains(k));
            own.map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        let merged = self
            .all()
            .into_iter()
            .fold(Figment::new(), |merged, layer| {
                merged.merge(Serialized::defaults(own(layer)))
            });
        merged.extract_lossy::<A>().map_err(|e| {
            let key = e.path.last().map(String::as_str).unwrap_or_default();
            let value = self.all().into_iter().rev().find_map(|d| d.get(key));
            match (&e.kind, value) {
                (Kind::InvalidType(_, expected) | Kind::InvalidValue(_, expected), Some(value)) => {
                    let text = match value {
                        Value::String(_, s) => s.clone(),
                        Value::Num(_, n) => n
                            .to_i128()
                            .map(|i| i.to_string())
                            .or(n.to_f64().map(|f| f.to_string()))
                            .unwrap_or_default(),
                        Value::Bool(_, b) => b.to_string(),
                        _ => format!("{:?}", value.to_actual()),
                    };
                    self.invalid(key, text, format!("expected {}", plain(expected)))
                }
                _ => ConfigError(format!("invalid {}: {}", self.name(key), e.kind)),
            }
        })
    }

    /// The file that set `key`, unless the environment or a flag overrides it.
    fn file_of(&self, key: &str) -> Option<&str> {
        let layer = self.all().iter().rposition(|d| d.contains_key(key));
        matches!(layer, Some(0 | 1)).then_some(self.sources.describe.as_str())
    }

    /// `key` named where it was set: `--port`, `JOBWHEEL_PORT` or `port in config file 'x.toml'`.
    pub(crate) fn name(&self, key: &str) -> String {
        match (
            self.file_of(key),
            self.sources.env.contains_key(key) && !self.flags.contains_key(key),
        ) {
            (Some(file), _) => format!("{key} in {file}"),
            (None, true) => format!("{ENV_PREFIX}{}", key.to_uppercase().replace('-', "_")),
            (None, false) => format!("--{key}"),
        }
    }

    /// A bad `value` of `key`, named with where it came from.
    pub(crate) fn invalid(&self, key: &str, value: impl Display, why: impl Display) -> ConfigError {
        ConfigError(match self.file_of(key) {
            Some(file) => format!("invalid {key} = '{value}' in {file}: {why}"),
            None => format!("invalid {} '{value}': {why}", self.name(key)),
        })
    }

    /// `value`, or `default` when unset, checked to lie in `range`.
    pub(crate) fn within<T: PartialOrd + Display + Copy>(
        &self,
        key: &str,
        value: Option<T>,
        default: T,
        range: RangeInclusive<T>,
    ) -> Result<T, ConfigError> {
        match value {
            Some(v) if !range.contains(&v) => Err(self.invalid(
                key,
                v,
                format!(
                    "expected a whole number from {} to {}",
                    range.start(),
                    range.end()
                ),
            )),
            v => Ok(v.unwrap_or(default)),
        }
    }

    /// The database URL, its scheme checked.
    pub(crate) fn database_url(&self, value: Option<String>) -> Result<String, ConfigError> {
        match non_empty(value) {
            None => Ok(DEFAULT_DATABASE_URL.to_string()),
            Some(url) => {
                Backend::from_url(&url).map_err(|e| self.invalid("database-url", &url, e))?;
                Ok(url)
            }
        }
    }
}

/// The flags of a leaf struct that were given (on the command line or as variables).
pub(crate) fn given(leaf: &impl Serialize) -> Dict {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(leaf) else {
        return Dict::new();
    };
    map.into_iter()
        .filter(|(_, v)| !v.is_null())
        .filter_map(|(k, v)| Some((k, Value::serialize(v).ok()?)))
        .collect()
}

/// What serde expected, in an operator's words.
fn plain(expected: &str) -> String {
    let max = match expected {
        "u16" => u64::from(u16::MAX),
        "u32" => u64::from(u32::MAX),
        "u64" | "usize" => u64::MAX,
        "a boolean" => return "true or false".to_string(),
        other => return other.to_string(),
    };
    format!("a whole number from 0 to {max}")
}

/// A trimmed, non-empty text.
pub(crate) fn non_empty(value: Option<String>) -> Option<String> {
    value
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// The machine's IANA zone, or UTC when it cannot be told.
pub fn machine_timezone() -> Tz {
    iana_time_zone::get_timezone()
        .ok()
        .and_then(|name| name.parse::<Tz>().ok())
        .unwrap_or(Tz::UTC)
}

/// `HOST:PORT` to listen on (a host name is resolved).
pub(crate) fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        None => Err("expected HOST:PORT, e.g. 0.0.0.0:8080".into()),
        Some((_, port)) if port.parse::<u16>().is_err() => {
            Err("the port must be a number from 0 to 65535".into())
        }
        Some(_) => text
            .to_socket_addrs()
            .map_err(|e| e.to_string())?
            .next()
            .ok_or_else(|| "the host name has no address".into()),
    }
}
