//! An executor's settings (the `jobwheel executor` binary, and the executor inside
//! `jobwheel standalone`), and the database URL of `jobwheel migrate`.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{ArgAction, ArgMatches, Args, Command, FromArgMatches};
use serde::Deserialize;

use super::*;
use crate::executor::{
    DEFAULT_EXECUTOR_BIND, DEFAULT_EXECUTOR_PORT, DEFAULT_LOG_PATH, MAX_CONCURRENT_RUNS,
};
use crate::protocol::{parse_label, parse_labels, AdminProtocol};

/// The one line an executor without a token stops with.
pub const NO_TOKEN: &str = "no access token: an executor without one runs whatever any caller \
     sends it, scripts included. Give the admin's token with --access-token TOKEN (or \
     JOBWHEEL_ACCESS_TOKEN; the admin prints it on first start), or pass --insecure to run open";

/// Flags and settings of an executor's machinery, shared by `jobwheel executor` and the
/// executor inside `jobwheel standalone`.
#[derive(Args, Deserialize, Debug, Clone)]
#[command(mut_args(|flag| flag.allow_negative_numbers(true)))] // `-1` reaches the value's check
pub struct LocalExecutorSettings {
    /// Folder of run logs, script files and pending callbacks
    #[arg(long, value_name = "DIR", value_parser = path::parse, default_value = DEFAULT_LOG_PATH)]
    #[serde(with = "path")]
    pub log_path: PathBuf,
    /// Seconds an idle job worker lives before it is reaped
    #[arg(long = "idle-timeout-secs", id = "idle_timeout_secs")]
    #[arg(value_name = "SECS", value_parser = idle_secs::parse, default_value = "90")]
    #[serde(rename = "idle_timeout_secs", with = "idle_secs")]
    pub idle_timeout: Duration,
    /// Run script (GLUE) jobs: true or false
    #[arg(long, value_name = "BOOL", default_value = "true", action = ArgAction::Set)]
    #[arg(value_parser = BoolishValueParser::new())]
    #[serde(with = "boolean")]
    pub glue_enabled: bool,
    /// Runs at once on this executor, handlers and scripts alike (more wait their turn); 0 for no limit
    #[arg(long, value_name = "N", value_parser = max_runs::parse, default_value = "0")]
    #[serde(with = "max_runs")]
    pub max_concurrent_runs: usize,
    /// A label to register with, KEY=VALUE (repeatable: --label gpu=true --label region=eu); jobs
    /// whose executorSelector requires labels run only on executors that have them
    #[arg(long, value_name = "KEY=VALUE", action = ArgAction::Append, value_parser = parse_label)]
    #[serde(default, with = "labels")]
    pub label: Vec<(String, String)>,
    /// Let httpJobHandler call loopback, private and link-local addresses
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    #[arg(value_parser = BoolishValueParser::new(), value_name = "BOOL", default_value = "false")]
    #[serde(with = "boolean")]
    pub http_job_allow_private: bool,
}

impl Default for LocalExecutorSettings {
    /// The flags' defaults.
    fn default() -> Self {
        let matches = Self::augment_args(Command::new("")).get_matches_from([""]);
        Self::from_arg_matches(&matches).expect("every flag has a default")
    }
}

/// Flags and settings of `jobwheel executor`.
#[derive(Args, Deserialize, Debug, Clone)]
#[command(mut_args(|flag| flag.allow_negative_numbers(true)))] // `-1` reaches the value's check
pub struct ExecutorSettings {
    /// Comma-separated admin base URLs, e.g. http://127.0.0.1:8080
    #[arg(long, value_name = "URLS", value_delimiter = ',')]
    #[serde(default, with = "admin_addresses")]
    pub admin_addresses: Vec<String>,
    /// App name this executor registers under
    #[arg(long, value_name = "NAME", default_value = "jobwheel-executor")]
    #[arg(hide_default_value = true)]
    #[serde(with = "app_name")]
    pub app_name: String,
    /// Address to register instead of http://IP:PORT/ (for NAT and containers)
    #[arg(long, value_name = "URL")]
    #[serde(default, with = "http_url")]
    pub address: Option<String>,
    /// IP to register [default: this machine's first non-loopback address]
    #[arg(long, value_name = "IP", value_parser = ip::parse)]
    #[serde(default, with = "ip")]
    pub ip: Option<IpAddr>,
    /// Port to listen on; 0 picks a free one
    #[arg(long, value_name = "PORT", value_parser = port::parse)]
    #[arg(default_value_t = DEFAULT_EXECUTOR_PORT)]
    #[serde(with = "port")]
    pub port: u16,
    /// IP address to listen on (the port is --port)
    #[arg(long, value_name = "IP", value_parser = ip::parse, default_value_t = DEFAULT_EXECUTOR_BIND)]
    #[serde(with = "ip")]
    pub bind: IpAddr,
    /// Token sent to and required from the admin (XXL-JOB-ACCESS-TOKEN); required unless --insecure
    #[arg(long, value_name = "TOKEN")]
    #[serde(default, with = "token")]
    pub access_token: Option<String>,
    /// Run without an access token: anyone who reaches the port can run jobs (and scripts)
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    #[arg(value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    #[arg(default_value = "false", hide_default_value = true)]
    #[serde(with = "boolean")]
    pub insecure: bool,
    /// Days of run log folders to keep; 0 keeps them forever
    #[arg(long, value_name = "DAYS", value_parser = days::parse, default_value = "30")]
    #[serde(with = "days")]
    pub log_retention_days: u32,
    /// Admin protocol: v2 (XXL-JOB 2.4 to 3.4, array callbacks) or v3.5 (callbackList)
    #[arg(long, value_name = "VERSION", value_parser = protocol::parse, default_value = "v2")]
    #[serde(with = "protocol")]
    pub admin_protocol: AdminProtocol,
    /// Log path, idle timeout, glue switch.
    #[command(flatten)]
    #[serde(skip)]
    pub local: LocalExecutorSettings,
}

setting!(path: PathBuf = str::parse::<PathBuf>);
setting!(idle_secs: Duration = |secs| number(secs, 1, 86_400).map(Duration::from_secs));
setting!(port: u16 = |port| number(port, 0, 65_535));
// the flag's values arrive comma-joined, as a file's list does: checked as one set
setting!(labels: Vec<(String, String)> = |text: &str| {
    parse_labels(text).map(|labels| labels.into_iter().collect::<Vec<_>>())
});
setting!(max_runs: usize = |n| number(n, 0, MAX_CONCURRENT_RUNS as u64));
setting!(ip: IpAddr = |ip: &str| ip.parse().map_err(|_| "expected an IP address, e.g. 0.0.0.0"));
setting!(protocol: AdminProtocol = str::parse::<AdminProtocol>);
setting!(app_name: String = |name: &str| match name.len() {
    ..=64 => Ok(name.to_string()),
    _ => Err("expected at most 64 characters"),
});
setting!(http_url: String = |url: &str| match url.split_once("://") {
    Some(("http" | "https", _)) => Ok(url.to_string()),
    _ => Err(format!("expected a URL starting with http:// or https://, not '{url}'")),
});
// a file may list the admins' URLs (`['http://a', 'http://b']`) or comma-separate them, as the
// flag and its variable do; blanks are skipped
setting!(admin_addresses: Vec<String> = |urls: &str| {
    let urls = urls.split(',').map(str::trim).filter(|url| !url.is_empty());
    urls.map(http_url::parse).collect::<Result<Vec<_>, _>>()
});

impl ExecutorSettings {
    /// The settings of `jobwheel executor`: its parsed flags over `sources` over the defaults.
    pub fn resolve(matches: &ArgMatches, sources: &Sources) -> Result<Self, ConfigError> {
        let layers = Layers::new(matches, sources, "executor");
        let settings: ExecutorSettings = layers.extract()?;
        if settings.access_token.is_none() && !settings.insecure {
            return Err(ConfigError(NO_TOKEN.to_string()));
        }
        let local = layers.extract()?;
        Ok(ExecutorSettings { local, ..settings })
    }
}

/// Flags and settings of `jobwheel standalone` (admin plus an in-process executor).
#[derive(Args, Debug, Clone)]
#[command(mut_arg("bind", |bind| bind.default_value(DEFAULT_STANDALONE_BIND)))]
pub struct StandaloneSettings {
    /// The admin.
    #[command(flatten)]
    pub admin: AdminSettings,
    /// The in-process executor's machinery.
    #[command(flatten)]
    pub executor: LocalExecutorSettings,
}

impl StandaloneSettings {
    /// The settings of `jobwheel standalone`: its parsed flags over `sources` over the defaults.
    pub fn resolve(matches: &ArgMatches, sources: &Sources) -> Result<Self, ConfigError> {
        let admin = AdminSettings::resolve(matches, sources)?;
        let executor = Layers::new(matches, sources, "admin").extract()?;
        Ok(StandaloneSettings { admin, executor })
    }
}

/// Flags and settings of `jobwheel migrate`.
#[derive(Args, Deserialize, Debug, Clone)]
pub struct MigrateSettings {
    /// Database URL: sqlite://FILE, postgres://... or mysql://...
    #[arg(long, value_name = "URL", default_value = DEFAULT_DATABASE_URL)]
    #[serde(with = "database_url")]
    pub database_url: String,
}

impl MigrateSettings {
    /// The settings of `jobwheel migrate`: its parsed flags over `sources` over the defaults.
    pub fn resolve(matches: &ArgMatches, sources: &Sources) -> Result<Self, ConfigError> {
        Layers::new(matches, sources, "admin").extract()
    }
}
