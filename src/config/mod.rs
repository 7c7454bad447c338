//! Settings: the flags' defaults, then a `--config` TOML file (its top level, then its `[admin]`
//! or `[executor]` section), then `JOBWHEEL_<FLAG>` environment variables, then flags.
//!
//! Each mode's settings struct is both its clap flags and the serde struct figment extracts from
//! the merged layers. The fields' deserializers check every value, so a file, a variable and a
//! flag go through the same checks; a bad value ends the process with one line naming its key
//! and where it came from (`invalid --port '70000': …`, `invalid port = '70000' in config file
//! 'x.toml': …`). A file's keys that are no mode's flags are refused when it is read.

use std::path::Path;

use chrono_tz::Tz;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command};
use figment::providers::Serialized;
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};
use serde::de::DeserializeOwned;

/// `mod $name`: `parse`, a flag's value parser reading the trimmed text with `$parse` (whose
/// error says what was expected), and `deserialize`, the same check for a field of type `$ty` or
/// `Option<$ty>` (`#[serde(with = "$name")]`) whatever a file or variable holds.
macro_rules! setting {
    ($name:ident: $ty:ty = $parse:expr) => {
        pub(crate) mod $name {
            #[allow(unused_imports)] // the parser may need nothing of its module
            use super::*;
            use serde::{de::Error as _, Deserializer as De};
            pub fn parse(text: &str) -> Result<$ty, String> {
                ($parse)(text.trim()).map_err(|e| e.to_string())
            }
            pub fn deserialize<'de, D: De<'de>, O: From<$ty>>(d: D) -> Result<O, D::Error> {
                let value: figment::value::Value = serde::Deserialize::deserialize(d)?;
                let parsed = parse(&crate::config::text(&value));
                parsed.map(O::from).map_err(D::Error::custom)
            }
        }
    };
}

mod admin;
mod executor;
#[cfg(test)]
mod tests;

pub use admin::{AdminSettings, LoginLimit};
pub use executor::{
    ExecutorSettings, LocalExecutorSettings, MigrateSettings, StandaloneSettings, NO_TOKEN,
};

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

/// The prefix of a setting's environment variable: `JOBWHEEL_LOG_PATH` sets `log_path`.
const ENV_PREFIX: &str = "JOBWHEEL_";
/// The layers that are not a file, by name.
const ENV: &str = "environment";
const FLAGS: &str = "flags";

/// Settings from one place (named by `.0`), keyed by the flags' ids: `log_retention_days`.
#[derive(Debug, Clone, Default)]
struct Layer(String, Dict);

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.0.clone())
    }

    fn data(&self) -> figment::Result<Map<Profile, Dict>> {
        Ok(Profile::Default.collect(self.1.clone()))
    }
}

/// Where settings come from besides the flags: a `--config` file and `JOBWHEEL_*` variables
/// (`Sources::default()` has neither: every setting not flagged takes its default).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    file: Figment,
    env: Layer,
}

impl Sources {
    /// The `--config` file (if any) and this process's environment.
    pub fn read(config: Option<&Path>) -> Result<Self, ConfigError> {
        let file = config.map_or(Ok(Self::default()), Self::load)?;
        Ok(file.with_environment(std::env::vars()))
    }

    /// Adds the `JOBWHEEL_<FLAG>` variables among `vars` (others, like `JOBWHEEL_CONFIG`, are
    /// no mode's settings and are left to whoever reads them).
    pub fn with_environment(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let vars = vars.into_iter().filter_map(|(name, value)| {
            Some((name.strip_prefix(ENV_PREFIX)?.to_lowercase(), value.into()))
        });
        self.env = Layer(ENV.into(), vars.collect());
        self
    }

    /// Reads and checks a TOML file (keys are the flag names, `_` and `-` alike); unknown keys
    /// are refused so that a typo is not silently ignored.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let name = format!("config file '{}'", path.display());
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("cannot read {name}: {e}")))?;
        let top = toml::from_str(&text).map_err(|e: toml::de::Error| {
            let why = e.message().trim().replace('\n', "; ");
            ConfigError(format!("{name} is not valid TOML: {why}"))
        })?;
        // standalone's and migrate's flags are among the admin's and the executor's
        let modes = [AdminSettings::augment_args, ExecutorSettings::augment_args];
        let modes = modes.map(|augment| augment(Command::new("")));
        let known = modes.iter().flat_map(Command::get_arguments);
        let known = known.map(|flag| flag.get_id().as_str()).collect();
        let top = checked(top, "", &name, &known).map_err(ConfigError)?;
        let (file, env) = (Figment::from(Layer(name, top)), Layer::default());
        Ok(Sources { file, env })
    }
}

/// A file's `table` (its top level, or the section whose keys `prefix` names) with `-` in keys
/// read as `_`; a key that is no mode's flag, nor a section at the top level, is refused.
fn checked(table: Dict, prefix: &str, file: &str, known: &Vec<&str>) -> Result<Dict, String> {
    let checked = table.into_iter().map(|(key, value)| {
        let (key, flag) = (key.replace('-', "_"), key.replace('_', "-"));
        let is_section = prefix.is_empty() && ["admin", "executor"].contains(&key.as_str());
        match value {
            _ if known.contains(&key.as_str()) => Ok((key, value)),
            Value::Dict(_, table) if is_section => {
                let section = checked(table, &format!("{key}."), file, known)?;
                Ok((key, section.into()))
            }
            _ if is_section => Err(format!("'{key}' in {file} must be a section ([{key}])")),
            _ => Err(format!("unknown key '{prefix}{flag}' in {file}")),
        }
    });
    checked.collect()
}

/// One mode's layers: the flags' defaults, then the values set in the file, its `section`, the
/// environment and the flags, the last of each key winning; a blank value unsets its key.
pub(crate) struct Layers {
    /// The values set (not the defaults), each tagged with the layer it came from.
    set: Figment,
    /// The defaults and every value set that is not blank.
    values: Figment,
}

impl Layers {
    /// The layers of a mode whose parsed command line is `matches`.
    pub(crate) fn new(matches: &ArgMatches, sources: &Sources, section: &str) -> Self {
        let [mut flags, mut defaults] = [Dict::new(), Dict::new()];
        for id in matches.ids().map(|id| id.as_str()) {
            let Ok(Some(raw)) = matches.try_get_raw(id) else {
                continue;
            };
            let text: Vec<_> = raw.map(|v| v.to_string_lossy()).collect();
            let default = matches.value_source(id) == Some(ValueSource::DefaultValue);
            let layer = if default { &mut defaults } else { &mut flags };
            layer.insert(id.to_string(), text.join(",").into());
        }
        let set = sources.file.clone().merge(sources.file.focus(section));
        let set = set.merge(&sources.env).merge(Layer(FLAGS.into(), flags));
        let mut values: Dict = set.extract().unwrap_or_default();
        values.retain(|_, value| !value.as_str().is_some_and(|text| text.trim().is_empty()));
        defaults.extend(values);
        let values = Figment::from(Serialized::defaults(defaults));
        Layers { set, values }
    }

    /// The settings struct `T` the layers hold; a bad value is named with where it came from.
    pub(crate) fn extract<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        self.values.extract().map_err(|e| {
            let (key, why) = (e.path.first().map_or("", String::as_str), &e.kind);
            let value = self.set.find_value(key).map_or(String::new(), |v| text(&v));
            ConfigError(match self.name(key).split_once(" in ") {
                Some((key, file)) => format!("invalid {key} = '{value}' in {file}: {why}"),
                None => format!("invalid {} '{value}': {why}", self.name(key)),
            })
        })
    }

    /// `key` named where it was set: `--port`, `JOBWHEEL_PORT` or `port in config file 'x.toml'`.
    pub(crate) fn name(&self, key: &str) -> String {
        let flag = key.replace('_', "-");
        match self.set.find_metadata(key).map(|m| &*m.name) {
            Some(ENV) => format!("{ENV_PREFIX}{}", key.to_uppercase()),
            Some(FLAGS) | None => format!("--{flag}"),
            Some(file) => format!("{flag} in {file}"),
        }
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

/// A whole number from `lo` to `hi`.
fn number<T: TryFrom<u64>>(text: &str, lo: u64, hi: u64) -> Result<T, String> {
    let number = text.parse().ok().filter(|n| (lo..=hi).contains(n));
    let number = number.and_then(|n| T::try_from(n).ok());
    number.ok_or_else(|| format!("expected a whole number from {lo} to {hi}"))
}

setting!(days: u32 = |days| number(days, 0, 36_500));
setting!(database_url: String = |url: &str| Backend::from_url(url).map(|_| url.to_string()));
setting!(token: String = |token: &str| match unusable_token(token) {
    Some(why) => Err(format!("{why}; expected a token of your own")),
    None => Ok(token.to_string()),
});
setting!(boolean: bool = |text: &str| match text.to_lowercase().as_str() {
    "true" | "yes" | "y" | "t" | "on" | "1" => Ok(true),
    "false" | "no" | "n" | "f" | "off" | "0" => Ok(false),
    _ => Err("expected true or false"),
});

/// The machine's IANA zone, or UTC when it cannot be told.
pub fn machine_timezone() -> Tz {
    let zone = iana_time_zone::get_timezone().map(|name| name.parse::<Tz>());
    zone.ok().and_then(Result::ok).unwrap_or(Tz::UTC)
}
