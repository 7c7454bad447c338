//! Settings from flags, `JOBWHEEL_<FLAG>` environment variables and an optional TOML file.
//!
//! Precedence: flag, then environment, then the file (a `[admin]`/`[executor]` section before its
//! top level), then the default. Values are validated here, once, so that a bad one ends the
//! process with a single line naming it instead of failing later somewhere deep.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono_tz::Tz;
use clap::Args;

use crate::protocol::{unusable_token, AdminProtocol};
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
pub use crate::executor::{DEFAULT_EXECUTOR_BIND, DEFAULT_EXECUTOR_PORT, DEFAULT_LOG_PATH};
/// Calls in flight on the fast trigger pool unless configured (XXL-JOB's default too).
pub const DEFAULT_TRIGGER_POOL_FAST_MAX: usize = 200;
/// Calls in flight on the slow trigger pool unless configured (XXL-JOB's default too).
pub const DEFAULT_TRIGGER_POOL_SLOW_MAX: usize = 100;
/// App name of the executor that runs inside `jobwheel standalone`.
pub const LOCAL_APP_NAME: &str = "jobwheel-local";

/// Flags of the admin (scheduling center).
#[derive(Args, Debug, Clone, Default)]
pub struct AdminArgs {
    /// Address to listen on [default: 0.0.0.0:8080 for admin, 127.0.0.1:8080 for standalone]
    #[arg(long, env = "JOBWHEEL_BIND", value_name = "HOST:PORT")]
    pub bind: Option<String>,
    /// URL users reach the admin at, e.g. https://jobs.example.com; https makes cookies Secure
    #[arg(long, env = "JOBWHEEL_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// Database URL: sqlite://FILE, postgres://... or mysql://... [default: sqlite://./data/jobwheel.db]
    #[arg(long, env = "JOBWHEEL_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
    /// Token executors must send in XXL-JOB-ACCESS-TOKEN [default: generated on first start, stored in the database]
    #[arg(
        long,
        env = "JOBWHEEL_ACCESS_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub access_token: Option<String>,
    /// Password of the 'admin' user, used on first start only [default: random, printed once]
    #[arg(
        long,
        env = "JOBWHEEL_ADMIN_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    pub admin_password: Option<String>,
    /// Days of run records to keep; 0 keeps them forever [default: 30]
    #[arg(
        long,
        env = "JOBWHEEL_LOG_RETENTION_DAYS",
        allow_hyphen_values = true,
        value_name = "DAYS"
    )]
    pub log_retention_days: Option<String>,
    /// Most dispatches in flight on the fast pool [default: 200]
    #[arg(
        long,
        env = "JOBWHEEL_TRIGGER_POOL_FAST_MAX",
        allow_hyphen_values = true,
        value_name = "N"
    )]
    pub trigger_pool_fast_max: Option<String>,
    /// Most dispatches in flight on the slow pool [default: 100]
    #[arg(
        long,
        env = "JOBWHEEL_TRIGGER_POOL_SLOW_MAX",
        allow_hyphen_values = true,
        value_name = "N"
    )]
    pub trigger_pool_slow_max: Option<String>,
    /// IANA time zone for cron expressions without their own [default: this machine's]
    #[arg(long, env = "JOBWHEEL_TIMEZONE", value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Seconds without a result after which a run on an executor that is gone is marked failed [default: 600]
    #[arg(
        long,
        env = "JOBWHEEL_LOST_RESULT_TIMEOUT_SECS",
        allow_hyphen_values = true,
        value_name = "SECS"
    )]
    pub lost_result_timeout_secs: Option<String>,
    /// SMTP server for alarm e-mails; unset turns e-mail alarms off
    #[arg(long, env = "JOBWHEEL_SMTP_HOST", value_name = "HOST")]
    pub smtp_host: Option<String>,
    /// SMTP port [default: 587 for starttls, 465 for tls, 25 for none]
    #[arg(
        long,
        env = "JOBWHEEL_SMTP_PORT",
        allow_hyphen_values = true,
        value_name = "PORT"
    )]
    pub smtp_port: Option<String>,
    /// SMTP security: starttls (required STARTTLS), tls (implicit TLS) or none [default: starttls]
    #[arg(long, env = "JOBWHEEL_SMTP_TLS", value_name = "MODE")]
    pub smtp_tls: Option<String>,
    /// SMTP login user (empty: no login)
    #[arg(long, env = "JOBWHEEL_SMTP_USERNAME", value_name = "USER")]
    pub smtp_username: Option<String>,
    /// SMTP login password
    #[arg(
        long,
        env = "JOBWHEEL_SMTP_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    pub smtp_password: Option<String>,
    /// Sender of alarm e-mails, e.g. "jobwheel <ops@example.com>" [default: the username if it is an address]
    #[arg(long, env = "JOBWHEEL_SMTP_FROM", value_name = "ADDRESS")]
    pub smtp_from: Option<String>,
}

/// Flags of an executor.
#[derive(Args, Debug, Clone, Default)]
pub struct ExecutorArgs {
    /// Comma-separated admin base URLs, e.g. http://127.0.0.1:8080
    #[arg(long, env = "JOBWHEEL_ADMIN_ADDRESSES", value_name = "URLS")]
    pub admin_addresses: Option<String>,
    /// App name this executor registers under
    #[arg(long, env = "JOBWHEEL_APP_NAME", value_name = "NAME")]
    pub app_name: Option<String>,
    /// Address to register instead of http://IP:PORT/ (for NAT and containers)
    #[arg(long, env = "JOBWHEEL_ADDRESS", value_name = "URL")]
    pub address: Option<String>,
    /// IP to register [default: this machine's first non-loopback address]
    #[arg(long, env = "JOBWHEEL_IP", value_name = "IP")]
    pub ip: Option<String>,
    /// Port to listen on; 0 picks a free one [default: 9999]
    #[arg(
        long,
        env = "JOBWHEEL_PORT",
        allow_hyphen_values = true,
        value_name = "PORT"
    )]
    pub port: Option<String>,
    /// IP address to listen on [default: 0.0.0.0]
    #[arg(long, env = "JOBWHEEL_BIND", value_name = "IP")]
    pub bind: Option<String>,
    /// Token sent to and required from the admin (XXL-JOB-ACCESS-TOKEN); required unless --insecure
    #[arg(
        long,
        env = "JOBWHEEL_ACCESS_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub access_token: Option<String>,
    /// Run without an access token: anyone who reaches the port can run jobs (and scripts)
    #[arg(
        long,
        env = "JOBWHEEL_INSECURE",
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub insecure: Option<String>,
    /// Days of run log folders to keep; 0 keeps them forever [default: 30]
    #[arg(
        long,
        env = "JOBWHEEL_LOG_RETENTION_DAYS",
        allow_hyphen_values = true,
        value_name = "DAYS"
    )]
    pub log_retention_days: Option<String>,
    #[command(flatten)]
    pub local: LocalExecutorArgs,
    /// Admin protocol: v2 (XXL-JOB 2.4 to 3.4, array callbacks) or v3.5 (callbackList) [default: v2]
    #[arg(long, env = "JOBWHEEL_ADMIN_PROTOCOL", value_name = "VERSION")]
    pub admin_protocol: Option<String>,
}

/// Executor flags that also apply to the executor inside `jobwheel standalone`.
#[derive(Args, Debug, Clone, Default)]
pub struct LocalExecutorArgs {
    /// Folder of run logs, script files and pending callbacks [default: ./data/joblogs]
    #[arg(long, env = "JOBWHEEL_LOG_PATH", value_name = "DIR")]
    pub log_path: Option<String>,
    /// Seconds an idle job worker lives before it is reaped [default: 90]
    #[arg(
        long,
        env = "JOBWHEEL_IDLE_TIMEOUT_SECS",
        allow_hyphen_values = true,
        value_name = "SECS"
    )]
    pub idle_timeout_secs: Option<String>,
    /// Run script (GLUE) jobs: true or false [default: true]
    #[arg(long, env = "JOBWHEEL_GLUE_ENABLED", value_name = "BOOL")]
    pub glue_enabled: Option<String>,
    /// Let httpJobHandler call loopback, private and link-local addresses [default: false]
    #[arg(
        long,
        env = "JOBWHEEL_HTTP_JOB_ALLOW_PRIVATE",
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub http_job_allow_private: Option<String>,
}

/// Flags of `jobwheel standalone` (admin plus an in-process executor).
#[derive(Args, Debug, Clone, Default)]
pub struct StandaloneArgs {
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(flatten)]
    pub executor: LocalExecutorArgs,
}

/// Flags of `jobwheel migrate`.
#[derive(Args, Debug, Clone, Default)]
pub struct MigrateArgs {
    /// Database URL: sqlite://FILE, postgres://... or mysql://... [default: sqlite://./data/jobwheel.db]
    #[arg(long, env = "JOBWHEEL_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,
}

/// Every key a config file may hold, in any section.
const KNOWN_KEYS: &[&str] = &[
    "bind",
    "public-url",
    "insecure",
    "http-job-allow-private",
    "database-url",
    "access-token",
    "admin-password",
    "log-retention-days",
    "trigger-pool-fast-max",
    "trigger-pool-slow-max",
    "timezone",
    "lost-result-timeout-secs",
    "smtp-host",
    "smtp-port",
    "smtp-tls",
    "smtp-username",
    "smtp-password",
    "smtp-from",
    "admin-addresses",
    "app-name",
    "address",
    "ip",
    "port",
    "log-path",
    "idle-timeout-secs",
    "glue-enabled",
    "admin-protocol",
];

/// Which part of a config file a mode reads first.
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

/// A loaded `--config` file (or none). Keys are the flag names; `_` and `-` are interchangeable.
#[derive(Debug, Clone, Default)]
pub struct ConfigFile {
    path: Option<PathBuf>,
    table: toml::Table,
}

impl ConfigFile {
    /// No file: every lookup falls through to the default.
    pub fn none() -> Self {
        ConfigFile::default()
    }

    /// Reads and checks a TOML file; unknown keys are refused so that a typo is not silently ignored.
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
        let file = ConfigFile {
            path: Some(path.to_path_buf()),
            table: normalize(table),
        };
        file.check_keys()?;
        Ok(file)
    }

    fn describe(&self) -> String {
        match &self.path {
            Some(p) => format!("config file '{}'", p.display()),
            None => "config file".to_string(),
        }
    }

    fn check_keys(&self) -> Result<(), ConfigError> {
        for (key, value) in &self.table {
            if key == "admin" || key == "executor" {
                let toml::Value::Table(section) = value else {
                    return Err(ConfigError(format!(
                        "'{key}' in {} must be a section ([{key}])",
                        self.describe()
                    )));
                };
                for inner in section.keys() {
                    if !KNOWN_KEYS.contains(&inner.as_str()) {
                        return Err(ConfigError(format!(
                            "unknown key '{key}.{inner}' in {}",
                            self.describe()
                        )));
                    }
                }
            } else if !KNOWN_KEYS.contains(&key.as_str()) {
                return Err(ConfigError(format!(
                    "unknown key '{key}' in {}",
                    self.describe()
                )));
            }
        }
        Ok(())
    }

    /// The value of `key` for `section`, as text (numbers and booleans spelled out, arrays comma-joined).
    fn get(&self, section: Section, key: &str) -> Result<Option<String>, ConfigError> {
        let in_section = self
            .table
            .get(section.name())
            .and_then(|s| s.as_table())
            .and_then(|s| s.get(key));
        let Some(value) = in_section.or_else(|| self.table.get(key)) else {
            return Ok(None);
        };
        let text = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    other => Err(ConfigError(format!(
                        "'{key}' in {} must list strings, found {other}",
                        self.describe()
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            other => {
                return Err(ConfigError(format!(
                    "'{key}' in {} has an unusable value {other}",
                    self.describe()
                )))
            }
        };
        Ok(Some(text))
    }
}

fn normalize(table: toml::Table) -> toml::Table {
    table
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                toml::Value::Table(t) => toml::Value::Table(normalize(t)),
                other => other,
            };
            (k.replace('_', "-"), v)
        })
        .collect()
}

/// One setting's raw text and where it came from, for error messages.
struct Raw {
    text: String,
    origin: String,
    from_file: Option<String>,
}

impl Raw {
    /// `--port '70000'` or `port = '70000' in config file 'x.toml'`.
    fn describe(&self) -> String {
        match &self.from_file {
            None => format!("{} '{}'", self.origin, self.text),
            Some(file) => format!("{} = '{}' in {file}", self.origin, self.text),
        }
    }
}

/// Picks the flag/env value, else the file's, naming the origin for messages.
fn pick(
    flag: &Option<String>,
    file: &ConfigFile,
    section: Section,
    key: &str,
) -> Result<Option<Raw>, ConfigError> {
    if let Some(text) = flag {
        return Ok(Some(Raw {
            text: text.clone(),
            origin: format!("--{key}"),
            from_file: None,
        }));
    }
    Ok(file.get(section, key)?.map(|text| Raw {
        text,
        origin: key.to_string(),
        from_file: Some(file.describe()),
    }))
}

fn invalid(raw: &Raw, why: impl std::fmt::Display) -> ConfigError {
    ConfigError(format!("invalid {}: {why}", raw.describe()))
}

fn parse_number<T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy>(
    raw: Option<Raw>,
    default: T,
    min: T,
    max: T,
) -> Result<T, ConfigError> {
    let Some(raw) = raw else { return Ok(default) };
    match raw.text.trim().parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(invalid(
            &raw,
            format!("expected a whole number from {min} to {max}"),
        )),
    }
}

fn parse_bool(raw: Option<Raw>, default: bool) -> Result<bool, ConfigError> {
    let Some(raw) = raw else { return Ok(default) };
    match raw.text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(invalid(&raw, "expected true or false")),
    }
}

fn non_empty(raw: Option<Raw>) -> Option<String> {
    raw.map(|r| r.text.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Checks a database URL's scheme, naming the bad part.
pub fn check_database_url(url: &str, origin: &str) -> Result<(), ConfigError> {
    Backend::from_url(url)
        .map(|_| ())
        .map_err(|e| ConfigError(format!("invalid {origin}: {e}")))
}

fn database_url(raw: Option<Raw>) -> Result<String, ConfigError> {
    match raw {
        None => Ok(DEFAULT_DATABASE_URL.to_string()),
        Some(raw) => {
            let url = raw.text.trim().to_string();
            check_database_url(&url, &raw.describe())?;
            Ok(url)
        }
    }
}

/// The machine's IANA zone, or UTC when it cannot be told.
pub fn machine_timezone() -> Tz {
    iana_time_zone::get_timezone()
        .ok()
        .and_then(|name| name.parse::<Tz>().ok())
        .unwrap_or(Tz::UTC)
}

/// Validated admin settings.
#[derive(Debug, Clone)]
pub struct AdminSettings {
    /// Listen address.
    pub bind: SocketAddr,
    /// The URL users reach the admin at (`--public-url`), without a trailing slash.
    pub public_url: Option<url::Url>,
    /// Database URL (scheme checked).
    pub database_url: String,
    /// Global executor token from the flag; `None` uses the one stored in the database
    /// (generated on first start).
    pub access_token: Option<String>,
    /// First-start password of the `admin` user.
    pub admin_password: Option<String>,
    /// Days of run records to keep; 0 keeps them forever.
    pub log_retention_days: u32,
    /// Fast dispatch pool in-flight limit.
    pub trigger_pool_fast_max: usize,
    /// Slow dispatch pool in-flight limit.
    pub trigger_pool_slow_max: usize,
    /// Default zone of cron expressions.
    pub timezone: Tz,
    /// A run without a result for this long, on an executor that is gone, is marked failed.
    pub lost_result_timeout: Duration,
    /// Mail server for alarm e-mails; `None` turns e-mail alarms off.
    pub smtp: Option<SmtpSettings>,
    /// Failed logins allowed per user and per address before logins are refused for a while
    /// (not a flag: 5 per user and 20 per address a minute; tests shorten the window).
    pub login_limit: LoginLimit,
}

/// How many failed logins, over how long, a user name and a client address may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimit {
    /// Failures per user name in the window before logins for it are refused.
    pub per_user: usize,
    /// Failures per client address in the window (many users may share one behind a NAT).
    pub per_address: usize,
    /// The sliding window.
    pub window: Duration,
}

impl Default for LoginLimit {
    fn default() -> Self {
        LoginLimit {
            per_user: 5,
            per_address: 20,
            window: Duration::from_secs(60),
        }
    }
}

/// How the connection to the SMTP server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// Plain connection upgraded with STARTTLS, which the server must offer (port 587).
    StartTls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No encryption (port 25, or a local relay).
    None,
}

impl SmtpTls {
    /// The port used when `--smtp-port` is not given.
    pub fn default_port(self) -> u16 {
        match self {
            SmtpTls::StartTls => 587,
            SmtpTls::Tls => 465,
            SmtpTls::None => 25,
        }
    }
}

/// Validated SMTP settings for alarm e-mails.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpSettings {
    /// Server host name.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Connection security.
    pub tls: SmtpTls,
    /// Login user and password, if the server wants a login.
    pub credentials: Option<(String, String)>,
    /// Sender mailbox (checked to parse as an address).
    pub from: String,
}

impl std::fmt::Debug for SmtpSettings {
    // the password never reaches a log line
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.credentials.as_ref().map(|(u, _)| u))
            .field("from", &self.from)
            .finish()
    }
}

fn smtp_settings(args: &AdminArgs, file: &ConfigFile) -> Result<Option<SmtpSettings>, ConfigError> {
    let s = Section::Admin;
    let tls = match pick(&args.smtp_tls, file, s, "smtp-tls")? {
        None => SmtpTls::StartTls,
        Some(raw) => match raw.text.trim().to_ascii_lowercase().as_str() {
            "starttls" => SmtpTls::StartTls,
            "tls" => SmtpTls::Tls,
            "none" => SmtpTls::None,
            _ => return Err(invalid(&raw, "expected starttls, tls or none")),
        },
    };
    let port = parse_number(
        pick(&args.smtp_port, file, s, "smtp-port")?,
        tls.default_port(),
        1,
        u16::MAX,
    )?;
    let username = non_empty(pick(&args.smtp_username, file, s, "smtp-username")?);
    let password = pick(&args.smtp_password, file, s, "smtp-password")?
        .map(|r| r.text)
        .filter(|p| !p.is_empty());
    let from_raw = pick(&args.smtp_from, file, s, "smtp-from")?;
    let Some(host) = non_empty(pick(&args.smtp_host, file, s, "smtp-host")?) else {
        return Ok(None);
    };
    if host.contains("://") || host.contains('/') || host.contains(char::is_whitespace) {
        return Err(ConfigError(format!(
            "invalid --smtp-host '{host}': expected a host name, e.g. smtp.example.com"
        )));
    }
    let credentials = match (username, password) {
        (Some(u), Some(p)) => Some((u, p)),
        (None, None) => None,
        (Some(_), None) => {
            return Err(ConfigError(
                "--smtp-username is set but --smtp-password is not".to_string(),
            ))
        }
        (None, Some(_)) => {
            return Err(ConfigError(
                "--smtp-password is set but --smtp-username is not".to_string(),
            ))
        }
    };
    let from = match from_raw.filter(|r| !r.text.trim().is_empty()) {
        Some(raw) => {
            let text = raw.text.trim().to_string();
            text.parse::<lettre::message::Mailbox>()
                .map_err(|e| invalid(&raw, format!("not an e-mail address ({e})")))?;
            text
        }
        None => match &credentials {
            Some((user, _)) if user.parse::<lettre::message::Mailbox>().is_ok() => user.clone(),
            _ => {
                return Err(ConfigError(
                    "--smtp-from is required when --smtp-host is set (the username is not an e-mail address)"
                        .to_string(),
                ))
            }
        },
    };
    Ok(Some(SmtpSettings {
        host,
        port,
        tls,
        credentials,
        from,
    }))
}

impl AdminSettings {
    /// Resolves flags/env over the file over defaults (`jobwheel admin`).
    pub fn resolve(args: &AdminArgs, file: &ConfigFile) -> Result<Self, ConfigError> {
        Self::resolve_with_bind(args, file, DEFAULT_BIND)
    }

    /// [`resolve`](Self::resolve) with another default listen address.
    fn resolve_with_bind(
        args: &AdminArgs,
        file: &ConfigFile,
        default_bind: &str,
    ) -> Result<Self, ConfigError> {
        let s = Section::Admin;
        let bind = match pick(&args.bind, file, s, "bind")? {
            None => default_bind.parse().map_err(|_| {
                ConfigError(format!("invalid built-in bind address {default_bind}"))
            })?,
            Some(raw) => parse_bind(&raw)?,
        };
        let access_token = match pick(&args.access_token, file, s, "access-token")? {
            Some(raw) if !raw.text.trim().is_empty() => {
                if let Some(why) = unusable_token(&raw.text) {
                    return Err(ConfigError(format!(
                        "invalid {}: {why}; leave it unset to use a generated one",
                        raw.origin
                    )));
                }
                Some(raw.text.trim().to_string())
            }
            _ => None,
        };
        let public_url = match pick(&args.public_url, file, s, "public-url")? {
            Some(raw) if !raw.text.trim().is_empty() => Some(parse_public_url(&raw)?),
            _ => None,
        };
        let timezone =
            match pick(&args.timezone, file, s, "timezone")? {
                None => machine_timezone(),
                Some(raw) => raw.text.trim().parse::<Tz>().map_err(|_| {
                    invalid(&raw, "not an IANA time zone name (e.g. Europe/Berlin)")
                })?,
            };
        Ok(AdminSettings {
            bind,
            public_url,
            database_url: database_url(pick(&args.database_url, file, s, "database-url")?)?,
            access_token,
            admin_password: non_empty(pick(&args.admin_password, file, s, "admin-password")?),
            log_retention_days: parse_number(
                pick(&args.log_retention_days, file, s, "log-retention-days")?,
                30,
                0,
                36_500,
            )?,
            trigger_pool_fast_max: parse_number(
                pick(
                    &args.trigger_pool_fast_max,
                    file,
                    s,
                    "trigger-pool-fast-max",
                )?,
                DEFAULT_TRIGGER_POOL_FAST_MAX,
                1,
                100_000,
            )?,
            trigger_pool_slow_max: parse_number(
                pick(
                    &args.trigger_pool_slow_max,
                    file,
                    s,
                    "trigger-pool-slow-max",
                )?,
                DEFAULT_TRIGGER_POOL_SLOW_MAX,
                1,
                100_000,
            )?,
            timezone,
            lost_result_timeout: Duration::from_secs(parse_number(
                pick(
                    &args.lost_result_timeout_secs,
                    file,
                    s,
                    "lost-result-timeout-secs",
                )?,
                600u64,
                30,
                30 * 86_400,
            )?),
            smtp: smtp_settings(args, file)?,
            login_limit: LoginLimit::default(),
        })
    }
}

/// An absolute http(s) URL with a host and no query; its path (a proxy's prefix) is kept.
fn parse_public_url(raw: &Raw) -> Result<url::Url, ConfigError> {
    let url = url::Url::parse(raw.text.trim()).map_err(|e| {
        invalid(
            raw,
            format!("not a URL ({e}), e.g. https://jobs.example.com"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(invalid(
            raw,
            "expected an http:// or https:// URL with a host",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid(raw, "a query or fragment has no place in it"));
    }
    Ok(url)
}

fn parse_bind(raw: &Raw) -> Result<SocketAddr, ConfigError> {
    let text = raw.text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let (_, port) = text
        .rsplit_once(':')
        .ok_or_else(|| invalid(raw, "expected HOST:PORT, e.g. 0.0.0.0:8080"))?;
    if port.parse::<u16>().is_err() {
        return Err(invalid(raw, "the port must be a number from 0 to 65535"));
    }
    text.to_socket_addrs()
        .map_err(|e| invalid(raw, e))?
        .next()
        .ok_or_else(|| invalid(raw, "the host name has no address"))
}

/// The one line an executor without a token stops with.
pub const NO_TOKEN: &str = "no access token: an executor without one runs whatever any caller \
     sends it, scripts included. Give the admin's token with --access-token TOKEN (or \
     JOBWHEEL_ACCESS_TOKEN; the admin prints it on first start), or pass --insecure to run open";

/// A usable token, or `None` with `insecure`; a missing or published token stops the executor.
fn executor_token(raw: Option<Raw>, insecure: bool) -> Result<Option<String>, ConfigError> {
    match raw.filter(|r| !r.text.trim().is_empty()) {
        Some(raw) => {
            if let Some(why) = unusable_token(&raw.text) {
                return Err(ConfigError(format!(
                    "invalid {}: {why}; use the admin's own token",
                    raw.origin
                )));
            }
            Ok(Some(raw.text.trim().to_string()))
        }
        None if insecure => Ok(None),
        None => Err(ConfigError(NO_TOKEN.to_string())),
    }
}

/// Validated settings of an executor's machinery shared by the standalone and executor modes.
#[derive(Debug, Clone)]
pub struct LocalExecutorSettings {
    /// Folder of run logs, script files and pending callbacks.
    pub log_path: PathBuf,
    /// How long an idle job worker lives.
    pub idle_timeout: Duration,
    /// Whether script (GLUE) jobs may run.
    pub glue_enabled: bool,
    /// Whether `httpJobHandler` may call loopback, private and link-local addresses.
    pub http_job_allow_private: bool,
}

impl LocalExecutorSettings {
    fn resolve(
        args: &LocalExecutorArgs,
        file: &ConfigFile,
        s: Section,
    ) -> Result<Self, ConfigError> {
        Ok(LocalExecutorSettings {
            log_path: non_empty(pick(&args.log_path, file, s, "log-path")?)
                .unwrap_or_else(|| DEFAULT_LOG_PATH.to_string())
                .into(),
            idle_timeout: Duration::from_secs(parse_number(
                pick(&args.idle_timeout_secs, file, s, "idle-timeout-secs")?,
                90u64,
                1,
                86_400,
            )?),
            glue_enabled: parse_bool(pick(&args.glue_enabled, file, s, "glue-enabled")?, true)?,
            http_job_allow_private: parse_bool(
                pick(
                    &args.http_job_allow_private,
                    file,
                    s,
                    "http-job-allow-private",
                )?,
                false,
            )?,
        })
    }
}

/// Validated executor settings.
#[derive(Debug, Clone)]
pub struct ExecutorSettings {
    /// Admin base URLs, tried in order.
    pub admin_addresses: Vec<String>,
    /// App name to register under.
    pub app_name: String,
    /// Address to register, overriding `http://ip:port/`.
    pub address: Option<String>,
    /// IP to register.
    pub ip: Option<String>,
    /// Listen port (0: any free port).
    pub port: u16,
    /// Listen address.
    pub bind: IpAddr,
    /// Shared token with the admin; `None` only with `insecure`.
    pub access_token: Option<String>,
    /// Run without a token (`--insecure`).
    pub insecure: bool,
    /// Days of run log folders to keep; 0 keeps them forever.
    pub log_retention_days: u32,
    /// How callbacks and log requests are spelled for the admin.
    pub admin_protocol: AdminProtocol,
    /// Log path, idle timeout, glue switch.
    pub local: LocalExecutorSettings,
}

impl ExecutorSettings {
    /// Resolves flags/env over the file over defaults.
    pub fn resolve(args: &ExecutorArgs, file: &ConfigFile) -> Result<Self, ConfigError> {
        let s = Section::Executor;
        let admin_addresses: Vec<String> =
            non_empty(pick(&args.admin_addresses, file, s, "admin-addresses")?)
                .map(|list| {
                    list.split(',')
                        .map(|a| a.trim().to_string())
                        .filter(|a| !a.is_empty())
                        .collect()
                })
                .unwrap_or_default();
        for a in &admin_addresses {
            if !(a.starts_with("http://") || a.starts_with("https://")) {
                return Err(ConfigError(format!(
                    "invalid admin address '{a}': it must start with http:// or https://"
                )));
            }
        }
        let app_name = non_empty(pick(&args.app_name, file, s, "app-name")?)
            .unwrap_or_else(|| "jobwheel-executor".to_string());
        if app_name.len() > 64 {
            return Err(ConfigError(format!(
                "invalid --app-name '{app_name}': at most 64 characters"
            )));
        }
        let address = match pick(&args.address, file, s, "address")? {
            Some(raw) if !raw.text.trim().is_empty() => {
                let t = raw.text.trim();
                if !(t.starts_with("http://") || t.starts_with("https://")) {
                    return Err(invalid(&raw, "it must start with http:// or https://"));
                }
                Some(if t.ends_with('/') {
                    t.to_string()
                } else {
                    format!("{t}/")
                })
            }
            _ => None,
        };
        let ip = match pick(&args.ip, file, s, "ip")? {
            Some(raw) if !raw.text.trim().is_empty() => {
                raw.text
                    .trim()
                    .parse::<std::net::IpAddr>()
                    .map_err(|_| invalid(&raw, "not an IP address"))?;
                Some(raw.text.trim().to_string())
            }
            _ => None,
        };
        let admin_protocol = match pick(&args.admin_protocol, file, s, "admin-protocol")? {
            None => AdminProtocol::V2,
            Some(raw) => AdminProtocol::parse(raw.text.trim())
                .ok_or_else(|| invalid(&raw, "expected v2 or v3.5"))?,
        };
        let bind = match pick(&args.bind, file, s, "bind")? {
            None => DEFAULT_EXECUTOR_BIND,
            Some(raw) => raw.text.trim().parse().map_err(|_| {
                invalid(&raw, "expected the IP address to listen on, e.g. 0.0.0.0 or 127.0.0.1 (the port is --port)")
            })?,
        };
        let insecure = parse_bool(pick(&args.insecure, file, s, "insecure")?, false)?;
        let access_token =
            executor_token(pick(&args.access_token, file, s, "access-token")?, insecure)?;
        Ok(ExecutorSettings {
            admin_addresses,
            app_name,
            address,
            ip,
            port: parse_number(
                pick(&args.port, file, s, "port")?,
                DEFAULT_EXECUTOR_PORT,
                0,
                u16::MAX,
            )?,
            bind,
            access_token,
            insecure,
            log_retention_days: parse_number(
                pick(&args.log_retention_days, file, s, "log-retention-days")?,
                30,
                0,
                36_500,
            )?,
            admin_protocol,
            local: LocalExecutorSettings::resolve(&args.local, file, s)?,
        })
    }
}

impl ExecutorSettings {
    /// The builder of the executor these settings describe (the binary's: it trims memory after
    /// reaping, since the process's allocator is its own).
    pub fn builder(self) -> crate::executor::ExecutorBuilder {
        let mut b = crate::executor::Executor::builder()
            .admin_addresses(self.admin_addresses)
            .app_name(self.app_name)
            .port(self.port)
            .bind(self.bind)
            .log_path(self.local.log_path)
            .log_retention_days(self.log_retention_days)
            .idle_timeout(self.local.idle_timeout)
            .admin_protocol(self.admin_protocol)
            .glue_enabled(self.local.glue_enabled)
            .http_job_allow_private(self.local.http_job_allow_private)
            .trim_memory_after_reaping(true);
        if let Some(token) = self.access_token {
            b = b.access_token(token);
        }
        if self.insecure {
            b = b.insecure_no_access_token();
        }
        if let Some(address) = self.address {
            b = b.address(address);
        }
        if let Some(ip) = self.ip {
            b = b.ip(ip);
        }
        b
    }
}

/// Validated settings of `jobwheel standalone`.
#[derive(Debug, Clone)]
pub struct StandaloneSettings {
    /// The admin.
    pub admin: AdminSettings,
    /// The in-process executor's machinery.
    pub executor: LocalExecutorSettings,
}

impl StandaloneSettings {
    /// Resolves flags/env over the file over defaults.
    pub fn resolve(args: &StandaloneArgs, file: &ConfigFile) -> Result<Self, ConfigError> {
        Ok(StandaloneSettings {
            admin: AdminSettings::resolve_with_bind(&args.admin, file, DEFAULT_STANDALONE_BIND)?,
            executor: LocalExecutorSettings::resolve(&args.executor, file, Section::Admin)?,
        })
    }
}

/// The database URL of `jobwheel migrate`.
pub fn resolve_migrate(args: &MigrateArgs, file: &ConfigFile) -> Result<String, ConfigError> {
    database_url(pick(
        &args.database_url,
        file,
        Section::Admin,
        "database-url",
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ConfigFile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, text).unwrap();
        ConfigFile::load(&path).unwrap()
    }

    #[test]
    fn defaults_apply_without_flags_or_file() {
        let s = AdminSettings::resolve(&AdminArgs::default(), &ConfigFile::none()).unwrap();
        assert_eq!(s.bind.to_string(), "0.0.0.0:8080");
        assert_eq!(s.database_url, DEFAULT_DATABASE_URL);
        assert_eq!(s.log_retention_days, 30);
        assert_eq!(s.trigger_pool_fast_max, 200);
        assert_eq!(s.trigger_pool_slow_max, 100);
        assert!(s.access_token.is_none());
    }

    #[test]
    fn flags_beat_the_file_and_sections_beat_the_top_level() {
        let f =
            file("bind = '127.0.0.1:1'\nlog_retention_days = 7\n[admin]\nbind = '127.0.0.1:2'\n");
        let s = AdminSettings::resolve(&AdminArgs::default(), &f).unwrap();
        assert_eq!(s.bind.port(), 2);
        assert_eq!(s.log_retention_days, 7);
        let args = AdminArgs {
            bind: Some("127.0.0.1:3".into()),
            ..Default::default()
        };
        assert_eq!(AdminSettings::resolve(&args, &f).unwrap().bind.port(), 3);
    }

    #[test]
    fn bad_values_name_the_setting_and_value() {
        let args = AdminArgs {
            database_url: Some("bogus://x".into()),
            ..Default::default()
        };
        let err = AdminSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert!(
            err.contains("--database-url") && err.contains("'bogus'"),
            "{err}"
        );

        let args = ExecutorArgs {
            port: Some("70000".into()),
            ..with_token(ExecutorArgs::default())
        };
        let err = ExecutorSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert_eq!(
            err,
            "invalid --port '70000': expected a whole number from 0 to 65535"
        );

        let args = AdminArgs {
            timezone: Some("Mars/Olympus".into()),
            ..Default::default()
        };
        let err = AdminSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert!(err.contains("Mars/Olympus"), "{err}");

        let args = AdminArgs {
            bind: Some("0.0.0.0:99999".into()),
            ..Default::default()
        };
        let err = AdminSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert!(err.contains("99999"), "{err}");
    }

    #[test]
    fn file_values_are_named_by_key_and_file() {
        let f = file("[executor]\nport = 123456\naccess-token = 'k3f9Qx1'\n");
        let err = ExecutorSettings::resolve(&ExecutorArgs::default(), &f)
            .unwrap_err()
            .0;
        assert!(
            err.starts_with("invalid port = '123456' in config file"),
            "{err}"
        );
        assert!(err.contains("123456"), "{err}");
    }

    #[test]
    fn unknown_keys_and_unreadable_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "bnid = 'x'\n").unwrap();
        let err = ConfigFile::load(&path).unwrap_err().0;
        assert!(err.contains("unknown key 'bnid'"), "{err}");
        std::fs::write(&path, "[executor]\nprot = 1\n").unwrap();
        let err = ConfigFile::load(&path).unwrap_err().0;
        assert!(err.contains("'executor.prot'"), "{err}");
        std::fs::write(&path, "bind = \n").unwrap();
        let err = ConfigFile::load(&path).unwrap_err().0;
        assert!(err.contains("not valid TOML"), "{err}");
        let err = ConfigFile::load(&dir.path().join("missing.toml"))
            .unwrap_err()
            .0;
        assert!(err.contains("cannot read config file"), "{err}");
    }

    fn with_token(args: ExecutorArgs) -> ExecutorArgs {
        ExecutorArgs {
            access_token: Some("k3f9Qx1-test".into()),
            ..args
        }
    }

    #[test]
    fn executors_need_a_real_token_unless_insecure() {
        let err = ExecutorSettings::resolve(&ExecutorArgs::default(), &ConfigFile::none())
            .unwrap_err()
            .0;
        assert_eq!(err, NO_TOKEN);
        assert!(err.contains("--access-token") && err.contains("--insecure"));
        let args = ExecutorArgs {
            access_token: Some("default_token".into()),
            ..Default::default()
        };
        let err = ExecutorSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert!(
            err.contains("--access-token") && err.contains("default"),
            "{err}"
        );
        let args = ExecutorArgs {
            insecure: Some("true".into()),
            ..Default::default()
        };
        let s = ExecutorSettings::resolve(&args, &ConfigFile::none()).unwrap();
        assert!(s.insecure && s.access_token.is_none());
        let s =
            ExecutorSettings::resolve(&with_token(ExecutorArgs::default()), &ConfigFile::none())
                .unwrap();
        assert_eq!(s.access_token.as_deref(), Some("k3f9Qx1-test"));
        assert!(!s.insecure);
        assert_eq!(s.bind, DEFAULT_EXECUTOR_BIND);

        let args = AdminArgs {
            access_token: Some("default_token".into()),
            ..Default::default()
        };
        let err = AdminSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert!(err.starts_with("invalid --access-token"), "{err}");
    }

    #[test]
    fn standalone_listens_on_loopback_and_admin_on_every_address() {
        let s =
            StandaloneSettings::resolve(&StandaloneArgs::default(), &ConfigFile::none()).unwrap();
        assert_eq!(s.admin.bind.to_string(), "127.0.0.1:8080");
        assert!(s.executor.glue_enabled && !s.executor.http_job_allow_private);
        let a = AdminSettings::resolve(&AdminArgs::default(), &ConfigFile::none()).unwrap();
        assert_eq!(a.bind.to_string(), "0.0.0.0:8080");

        let args = with_token(ExecutorArgs {
            bind: Some("127.0.0.1".into()),
            ..Default::default()
        });
        let s = ExecutorSettings::resolve(&args, &ConfigFile::none()).unwrap();
        assert_eq!(s.bind.to_string(), "127.0.0.1");
        let args = with_token(ExecutorArgs {
            bind: Some("127.0.0.1:9999".into()),
            ..Default::default()
        });
        let err = ExecutorSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert!(err.starts_with("invalid --bind '127.0.0.1:9999'"), "{err}");
    }

    #[test]
    fn public_urls_are_checked() {
        let args = AdminArgs {
            public_url: Some("https://jobs.example.com/".into()),
            ..Default::default()
        };
        let s = AdminSettings::resolve(&args, &ConfigFile::none()).unwrap();
        assert_eq!(s.public_url.unwrap().scheme(), "https");
        for bad in ["jobs.example.com", "ftp://x", "https://x/?a=1"] {
            let args = AdminArgs {
                public_url: Some(bad.into()),
                ..Default::default()
            };
            let err = AdminSettings::resolve(&args, &ConfigFile::none())
                .unwrap_err()
                .0;
            assert!(err.starts_with("invalid --public-url"), "{bad}: {err}");
        }
    }

    #[test]
    fn executor_settings_parse_lists_and_protocols() {
        let args = ExecutorArgs {
            admin_addresses: Some("http://a:8080, http://b:8080/xxl-job-admin".into()),
            admin_protocol: Some("V3.5".into()),
            address: Some("http://10.0.0.1:9999".into()),
            ..with_token(ExecutorArgs::default())
        };
        let s = ExecutorSettings::resolve(&args, &ConfigFile::none()).unwrap();
        assert_eq!(s.admin_addresses.len(), 2);
        assert_eq!(s.admin_protocol, AdminProtocol::V35);
        assert_eq!(s.address.as_deref(), Some("http://10.0.0.1:9999/"));
        assert_eq!(s.port, 9999);
        assert_eq!(s.local.idle_timeout, Duration::from_secs(90));
        assert!(s.local.glue_enabled);

        let args = ExecutorArgs {
            admin_protocol: Some("v4".into()),
            ..with_token(ExecutorArgs::default())
        };
        let err = ExecutorSettings::resolve(&args, &ConfigFile::none())
            .unwrap_err()
            .0;
        assert_eq!(err, "invalid --admin-protocol 'v4': expected v2 or v3.5");

        let args = ExecutorArgs {
            admin_addresses: Some("localhost:8080".into()),
            ..with_token(ExecutorArgs::default())
        };
        assert!(ExecutorSettings::resolve(&args, &ConfigFile::none()).is_err());
    }

    #[test]
    fn smtp_settings_default_off_and_validate() {
        let s = AdminSettings::resolve(&AdminArgs::default(), &ConfigFile::none()).unwrap();
        assert!(s.smtp.is_none());
        assert_eq!(s.lost_result_timeout, Duration::from_secs(600));

        let args = AdminArgs {
            smtp_host: Some("smtp.example.com".into()),
            smtp_username: Some("ops@example.com".into()),
            smtp_password: Some("pw".into()),
            lost_result_timeout_secs: Some("120".into()),
            ..Default::default()
        };
        let s = AdminSettings::resolve(&args, &ConfigFile::none()).unwrap();
        let smtp = s.smtp.unwrap();
        assert_eq!(smtp.port, 587);
        assert_eq!(smtp.tls, SmtpTls::StartTls);
        assert_eq!(smtp.from, "ops@example.com");
        assert!(!format!("{smtp:?}").contains("pw"));
        assert_eq!(s.lost_result_timeout, Duration::from_secs(120));

        let f = file(
            "[admin]\nsmtp-host = 'mx'\nsmtp-tls = 'TLS'\nsmtp-from = 'Jobs <jobs@example.com>'\n",
        );
        let smtp = AdminSettings::resolve(&AdminArgs::default(), &f)
            .unwrap()
            .smtp
            .unwrap();
        assert_eq!((smtp.port, smtp.tls), (465, SmtpTls::Tls));
        assert!(smtp.credentials.is_none());

        let bad = |args: AdminArgs| {
            AdminSettings::resolve(&args, &ConfigFile::none())
                .unwrap_err()
                .0
        };
        let host = || Some("mx".to_string());
        let err = bad(AdminArgs {
            smtp_host: host(),
            smtp_tls: Some("ssl".into()),
            smtp_from: Some("a@b.c".into()),
            ..Default::default()
        });
        assert_eq!(
            err,
            "invalid --smtp-tls 'ssl': expected starttls, tls or none"
        );
        let err = bad(AdminArgs {
            smtp_host: host(),
            ..Default::default()
        });
        assert!(err.contains("--smtp-from is required"), "{err}");
        let err = bad(AdminArgs {
            smtp_host: host(),
            smtp_from: Some("not an address".into()),
            ..Default::default()
        });
        assert!(
            err.starts_with("invalid --smtp-from 'not an address'"),
            "{err}"
        );
        let err = bad(AdminArgs {
            smtp_host: host(),
            smtp_from: Some("a@b.c".into()),
            smtp_username: Some("u".into()),
            ..Default::default()
        });
        assert_eq!(err, "--smtp-username is set but --smtp-password is not");
        let err = bad(AdminArgs {
            smtp_port: Some("0".into()),
            ..Default::default()
        });
        assert_eq!(
            err,
            "invalid --smtp-port '0': expected a whole number from 1 to 65535"
        );
        let err = bad(AdminArgs {
            lost_result_timeout_secs: Some("5".into()),
            ..Default::default()
        });
        assert!(
            err.starts_with("invalid --lost-result-timeout-secs '5'"),
            "{err}"
        );
    }

    #[test]
    fn file_arrays_join_into_lists() {
        let f = file(
            "admin-addresses = ['http://a', 'http://b']\nglue-enabled = false\naccess-token = 'k3f9Qx1'\n",
        );
        let s = ExecutorSettings::resolve(&ExecutorArgs::default(), &f).unwrap();
        assert_eq!(s.admin_addresses, vec!["http://a", "http://b"]);
        assert!(!s.local.glue_enabled);
    }
}
