//! An executor's settings (the `jobwheel executor` binary, and the executor inside
//! `jobwheel standalone`), and the database URL of `jobwheel migrate`.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::de::Error;
use serde::{Deserialize, Deserializer};

use super::{
    given, secs, token, within, AdminSettings, ConfigError, ExecutorArgs, Layers, MigrateArgs,
    Sources, StandaloneArgs, DEFAULT_DATABASE_URL, DEFAULT_EXECUTOR_BIND, DEFAULT_EXECUTOR_PORT,
    DEFAULT_LOG_PATH, DEFAULT_STANDALONE_BIND,
};
use crate::protocol::AdminProtocol;

/// The one line an executor without a token stops with.
pub const NO_TOKEN: &str = "no access token: an executor without one runs whatever any caller \
     sends it, scripts included. Give the admin's token with --access-token TOKEN (or \
     JOBWHEEL_ACCESS_TOKEN; the admin prints it on first start), or pass --insecure to run open";

/// Validated settings of an executor's machinery shared by the standalone and executor modes.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
pub struct LocalExecutorSettings {
    /// Folder of run logs, script files and pending callbacks.
    #[serde(deserialize_with = "text")]
    pub log_path: PathBuf,
    /// How long an idle job worker lives.
    #[serde(
        rename = "idle-timeout-secs",
        deserialize_with = "secs::<_, 1, 86_400>"
    )]
    pub idle_timeout: Duration,
    /// Whether script (GLUE) jobs may run.
    pub glue_enabled: bool,
    /// Whether `httpJobHandler` may call loopback, private and link-local addresses.
    pub http_job_allow_private: bool,
}

impl Default for LocalExecutorSettings {
    fn default() -> Self {
        LocalExecutorSettings {
            log_path: DEFAULT_LOG_PATH.into(),
            idle_timeout: Duration::from_secs(90),
            glue_enabled: true,
            http_job_allow_private: false,
        }
    }
}

/// Validated executor settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
pub struct ExecutorSettings {
    /// Admin base URLs, tried in order.
    #[serde(deserialize_with = "admin_addresses")]
    pub admin_addresses: Vec<String>,
    /// App name to register under.
    #[serde(deserialize_with = "app_name")]
    pub app_name: String,
    /// Address to register, overriding `http://ip:port/`.
    #[serde(deserialize_with = "http_url")]
    pub address: Option<String>,
    /// IP to register.
    #[serde(deserialize_with = "ip")]
    pub ip: Option<IpAddr>,
    /// Listen port (0: any free port).
    #[serde(deserialize_with = "within::<_, u16, _, 0, 65_535>")]
    pub port: u16,
    /// Listen address.
    #[serde(deserialize_with = "ip")]
    pub bind: IpAddr,
    /// Shared token with the admin; `None` only with `insecure`.
    #[serde(deserialize_with = "token")]
    pub access_token: Option<String>,
    /// Run without a token (`--insecure`).
    pub insecure: bool,
    /// Days of run log folders to keep; 0 keeps them forever.
    #[serde(deserialize_with = "within::<_, u32, _, 0, 36_500>")]
    pub log_retention_days: u32,
    /// How callbacks and log requests are spelled for the admin.
    #[serde(deserialize_with = "protocol")]
    pub admin_protocol: AdminProtocol,
    /// Log path, idle timeout, glue switch.
    #[serde(skip)]
    pub local: LocalExecutorSettings,
}

impl Default for ExecutorSettings {
    fn default() -> Self {
        ExecutorSettings {
            admin_addresses: Vec::new(),
            app_name: "jobwheel-executor".to_string(),
            address: None,
            ip: None,
            port: DEFAULT_EXECUTOR_PORT,
            bind: DEFAULT_EXECUTOR_BIND,
            access_token: None,
            insecure: false,
            log_retention_days: 30,
            admin_protocol: AdminProtocol::V2,
            local: LocalExecutorSettings::default(),
        }
    }
}

from_text!(text: PathBuf = str::parse::<PathBuf>);
from_text!(ip: IpAddr = |ip: &str| ip.parse().map_err(|_| "expected an IP address, e.g. 0.0.0.0"));
from_text!(protocol: AdminProtocol = str::parse::<AdminProtocol>);
from_text!(app_name: String = |name: &str| match name.len() {
    ..=64 => Ok(name.to_string()),
    _ => Err("expected at most 64 characters"),
});
from_text!(http_url: String = http);

fn http(url: &str) -> Result<String, String> {
    match url.starts_with("http://") || url.starts_with("https://") {
        true => Ok(url.to_string()),
        false => Err(format!(
            "expected a URL starting with http:// or https://, not '{url}'"
        )),
    }
}

/// A file may list the admins' URLs (`['http://a', 'http://b']`) or comma-separate them, as
/// the flag and its variable do; blanks are skipped.
fn admin_addresses<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let urls = super::text(&<figment::value::Value as Deserialize>::deserialize(d)?);
    let urls = urls.split(',').map(str::trim).filter(|url| !url.is_empty());
    urls.map(|url| http(url).map_err(D::Error::custom))
        .collect()
}

impl ExecutorSettings {
    /// Resolves flags/env over the file over defaults.
    pub fn resolve(args: &ExecutorArgs, file: &Sources) -> Result<Self, ConfigError> {
        let flags = [given(&args.own), given(&args.local)];
        let layers = Layers::new(file, "executor", &flags);
        let settings: ExecutorSettings = layers.extract()?;
        if settings.access_token.is_none() && !settings.insecure {
            return Err(ConfigError(NO_TOKEN.to_string()));
        }
        let local = layers.extract()?;
        Ok(ExecutorSettings { local, ..settings })
    }

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
            b = b.ip(ip.to_string());
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
    pub fn resolve(args: &StandaloneArgs, file: &Sources) -> Result<Self, ConfigError> {
        let flags = [given(&args.admin), given(&args.executor)];
        let layers = Layers::new(file, "admin", &flags);
        let mut admin = AdminSettings::from_layers(&layers)?;
        if !layers.merged.contains_key("bind") {
            admin.bind = DEFAULT_STANDALONE_BIND.parse().expect("a socket address");
        }
        let executor = layers.extract()?;
        Ok(StandaloneSettings { admin, executor })
    }
}

/// The database URL of `jobwheel migrate`.
pub fn resolve_migrate(args: &MigrateArgs, file: &Sources) -> Result<String, ConfigError> {
    let args: MigrateArgs = Layers::new(file, "admin", &[given(args)]).extract()?;
    Ok(args
        .database_url
        .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_string()))
}
