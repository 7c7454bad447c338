//! Settings: defaults, then a `--config` TOML file (its top level, then its `[admin]` or
//! `[executor]` section), then `JOBWHEEL_<FLAG>` environment variables, then flags.
//!
//! Every layer maps flags' long names to values. Figment extracts the settings structs from the
//! merged layers and their fields' deserializers check each value, so a file, a variable and a
//! flag go through the same checks; a bad value ends the process with one line naming its key
//! and where it came from (`invalid --port '70000': …`, `invalid port = '70000' in config file
//! 'x.toml': …`). A file's keys that are no mode's flags are refused when it is read.

use std::fmt::Display;
use std::path::Path;
use std::time::Duration;

use chrono_tz::Tz;
use clap::{Args, Command};
use figment::error::Kind;
use figment::providers::Serialized;
use figment::value::{Dict, Map, Value};
use figment::Figment;
use serde::de::{DeserializeOwned, Deserializer, Error};
use serde::{Deserialize, Serialize};

/// `fn $name`, a field's deserializer: the value's trimmed text read by `$parse`, whose error
/// says what was expected, into a field of type `$ty` or `Option<$ty>`.
macro_rules! from_text {
    ($name:ident: $ty:ty = $parse:expr) => {
        fn $name<'de, D: serde::Deserializer<'de>, O: From<$ty>>(d: D) -> Result<O, D::Error> {
            let text = <String as serde::Deserialize>::deserialize(d)?;
            ($parse)(text.trim())
                .map(O::from)
                .map_err(serde::de::Error::custom)
        }
    };
}

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
use crate::protocol::unusable_token;
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

/// The prefix of a setting's environment variable: `JOBWHEEL_LOG_PATH` sets `log-path`.
const ENV_PREFIX: &str = "JOBWHEEL_";

/// Every key a file may hold: the long names of every mode's flags.
fn known_keys() -> Vec<String> {
    let modes: [fn(Command) -> Command; 3] = [
        AdminArgs::augment_args,
        ExecutorArgs::augment_args,
        MigrateArgs::augment_args,
    ];
    let commands = modes.map(|augment| augment(Command::new("")));
    let longs = commands.iter().flat_map(Command::get_arguments);
    longs
        .filter_map(|a| a.get_long())
        .map(str::to_string)
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
        let file = config.map_or_else(|| Ok(Sources::none()), Sources::load)?;
        Ok(file.with_environment(std::env::vars()))
    }

    /// Adds the `JOBWHEEL_<FLAG>` variables among `vars` (others, like `JOBWHEEL_CONFIG`, are
    /// not settings and are left to whoever reads them).
    pub fn with_environment(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let known = known_keys();
        self.env = vars
            .into_iter()
            .filter_map(|(name, value)| {
                let key = name.strip_prefix(ENV_PREFIX)?.to_lowercase();
                let key = key.replace('_', "-");
                known.contains(&key).then(|| (key, Value::from(value)))
            })
            .collect();
        self
    }

    /// Reads and checks a TOML file (keys are the flag names, `_` and `-` alike); unknown keys
    /// are refused so that a typo is not silently ignored.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let describe = format!("config file '{}'", path.display());
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read {describe}: {e}")))?;
        let mut top: Dict = toml::from_str(&text).map_err(|e: toml::de::Error| {
            let why = e.message().trim().replace('\n', "; ");
            ConfigError(format!("{describe} is not valid TOML: {why}"))
        })?;
        let known = known_keys();
        let check = |dict: Dict, prefix: &str| {
            let known = dict
                .into_iter()
                .map(|(key, value)| match key.replace('_', "-") {
                    key if known.contains(&key) => Ok((key, value)),
                    key => Err(ConfigError(format!(
                        "unknown key '{prefix}{key}' in {describe}"
                    ))),
                });
            known.collect::<Result<Dict, _>>()
        };
        let mut sections = Map::new();
        for name in ["admin", "executor"] {
            match top.remove(name) {
                Some(Value::Dict(_, dict)) => {
                    sections.insert(name.into(), check(dict, &format!("{name}."))?)
                }
                None => None,
                Some(_) => {
                    let why = format!("'{name}' in {describe} must be a section ([{name}])");
                    return Err(ConfigError(why));
                }
            };
        }
        let top = check(top, "")?;
        Ok(Sources {
            describe,
            top,
            sections,
            env: Dict::new(),
        })
    }
}

/// One mode's layers and their merge: a blank text unsets its key.
pub(crate) struct Layers<'a> {
    file: &'a str,
    /// Lowest first: the file's top level, its section, the environment, the flags.
    all: [Dict; 4],
    merged: Dict,
}

impl<'a> Layers<'a> {
    /// The layers a mode reads: the file's `section` and the flags [`given`] by its leaf structs.
    pub(crate) fn new(sources: &'a Sources, section: &str, flags: &[Dict]) -> Self {
        let all = [
            sources.top.clone(),
            sources.sections.get(section).cloned().unwrap_or_default(),
            sources.env.clone(),
            flags
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ];
        let mut merged = Dict::new();
        for (key, value) in all.iter().flatten() {
            match value {
                Value::String(_, text) if text.trim().is_empty() => merged.remove(key),
                value => merged.insert(key.clone(), value.clone()),
            };
        }
        let file = &sources.describe;
        Layers { file, all, merged }
    }

    /// The settings struct `T` the merged layers hold; a bad value is named by [`Self::invalid`].
    pub(crate) fn extract<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        let figment = Figment::from(Serialized::defaults(&self.merged));
        figment.extract_lossy().map_err(|e| {
            let key = e.path.first().map_or("", String::as_str);
            match &e.kind {
                Kind::InvalidType(_, expected) | Kind::InvalidValue(_, expected) => {
                    let expected = expected.replace("a boolean", "true or false");
                    self.invalid(key, format!("expected {expected}"))
                }
                kind => self.invalid(key, kind),
            }
        })
    }

    /// `key` named where it was set: `--port`, `JOBWHEEL_PORT` or `port in config file 'x.toml'`.
    pub(crate) fn name(&self, key: &str) -> String {
        match self.all.iter().rposition(|layer| layer.contains_key(key)) {
            Some(0 | 1) => format!("{key} in {}", self.file),
            Some(2) => format!("{ENV_PREFIX}{}", key.to_uppercase().replace('-', "_")),
            _ => format!("--{key}"),
        }
    }

    /// The bad value of `key`, named with where it came from and `why` it cannot be used.
    fn invalid(&self, key: &str, why: impl Display) -> ConfigError {
        let layer = self.all.iter().rposition(|layer| layer.contains_key(key));
        let value = layer.map_or(String::new(), |i| text(&self.all[i][key]));
        ConfigError(match layer {
            Some(0 | 1) => format!("invalid {key} = '{value}' in {}: {why}", self.file),
            _ => format!("invalid {} '{value}': {why}", self.name(key)),
        })
    }
}

/// A value as it was written (a list comma-separated, as its flag takes it).
fn text(value: &Value) -> String {
    match value {
        Value::String(_, text) => text.clone(),
        Value::Array(_, items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        value => serde_json::to_string(value).unwrap_or_default(),
    }
}

/// The flags of a leaf struct that were given (on the command line or as variables).
pub(crate) fn given(leaf: &impl Serialize) -> Dict {
    let Ok(Value::Dict(_, flags)) = Value::serialize(leaf) else {
        return Dict::new();
    };
    let given = flags
        .into_iter()
        .filter(|(_, v)| !matches!(v, Value::Empty(..)));
    given.collect()
}

/// A field's deserializer: a whole number (or its text) from `LO` to `HI`.
fn within<'de, D, T, O, const LO: u64, const HI: u64>(d: D) -> Result<O, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
    O: From<T>,
{
    let number = u64::deserialize(d).ok().filter(|n| (LO..=HI).contains(n));
    let number = number.and_then(|n| T::try_from(n).ok()).map(O::from);
    number.ok_or_else(|| D::Error::custom(format!("expected a whole number from {LO} to {HI}")))
}

/// A field's deserializer: whole seconds from `LO` to `HI`.
fn secs<'de, D: Deserializer<'de>, const LO: u64, const HI: u64>(
    d: D,
) -> Result<Duration, D::Error> {
    within::<D, u64, u64, LO, HI>(d).map(Duration::from_secs)
}

from_text!(database_url: String = |url: &str| Backend::from_url(url).map(|_| url.to_string()));
from_text!(token: String = |token: &str| match unusable_token(token) {
    Some(why) => Err(format!("{why}; expected a token of your own")),
    None => Ok(token.to_string()),
});

/// The machine's IANA zone, or UTC when it cannot be told.
pub fn machine_timezone() -> Tz {
    iana_time_zone::get_timezone()
        .ok()
        .and_then(|name| name.parse::<Tz>().ok())
        .unwrap_or(Tz::UTC)
}
