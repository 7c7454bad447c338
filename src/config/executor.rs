//! An executor's settings (the `jobwheel executor` binary, and the executor inside
//! `jobwheel standalone`), and the database URL of `jobwheel migrate`.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{
    given, non_empty, AdminSettings, ConfigError, ExecutorArgs, ExecutorOnlyArgs, Layers,
    LocalExecutorArgs, MigrateArgs, Section, Sources, StandaloneArgs, DEFAULT_EXECUTOR_BIND,
    DEFAULT_EXECUTOR_PORT, DEFAULT_LOG_PATH, DEFAULT_STANDALONE_BIND,
};
use crate::protocol::{unusable_token, AdminProtocol};

/// The one line an executor without a token stops with.
pub const NO_TOKEN: &str = "no access token: an executor without one runs whatever any caller \
     sends it, scripts included. Give the admin's token with --access-token TOKEN (or \
     JOBWHEEL_ACCESS_TOKEN; the admin prints it on first start), or pass --insecure to run open";

/// A usable token, or `None` with `insecure`; a missing or published token stops the executor.
fn executor_token(
    token: Option<String>,
    insecure: bool,
    layers: &Layers,
) -> Result<Option<String>, ConfigError> {
    match non_empty(token) {
        Some(token) => match unusable_token(&token) {
            Some(why) => Err(ConfigError(format!(
                "invalid {}: {why}; use the admin's own token",
                layers.name("access-token")
            ))),
            None => Ok(Some(token)),
        },
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
    fn from_layers(layers: &Layers) -> Result<Self, ConfigError> {
        let args: LocalExecutorArgs = layers.extract()?;
        Ok(LocalExecutorSettings {
            log_path: non_empty(args.log_path)
                .unwrap_or_else(|| DEFAULT_LOG_PATH.to_string())
                .into(),
            idle_timeout: Duration::from_secs(layers.within(
                "idle-timeout-secs",
                args.idle_timeout_secs,
                90,
                1..=86_400,
            )?),
            glue_enabled: args.glue_enabled.unwrap_or(true),
            http_job_allow_private: args.http_job_allow_private.unwrap_or(false),
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
    pub fn resolve(args: &ExecutorArgs, file: &Sources) -> Result<Self, ConfigError> {
        let layers = &Layers::new(
            file,
            Section::Executor,
            &[given(&args.own), given(&args.local)],
        );
        let own: ExecutorOnlyArgs = layers.extract()?;
        let is_http = |a: &str| a.starts_with("http://") || a.starts_with("https://");
        let admin_addresses: Vec<String> = own
            .admin_addresses
            .iter()
            .flatten()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect();
        if let Some(bad) = admin_addresses.iter().find(|a| !is_http(a)) {
            return Err(layers.invalid(
                "admin-addresses",
                bad,
                "each must start with http:// or https://",
            ));
        }
        let app_name = non_empty(own.app_name).unwrap_or_else(|| "jobwheel-executor".to_string());
        if app_name.len() > 64 {
            return Err(layers.invalid("app-name", app_name, "at most 64 characters"));
        }
        let address = match non_empty(own.address) {
            Some(a) if !is_http(&a) => {
                return Err(layers.invalid("address", a, "it must start with http:// or https://"))
            }
            Some(a) if a.ends_with('/') => Some(a),
            Some(a) => Some(format!("{a}/")),
            None => None,
        };
        let admin_protocol = match non_empty(own.admin_protocol) {
            None => AdminProtocol::V2,
            Some(text) => AdminProtocol::parse(&text)
                .ok_or_else(|| layers.invalid("admin-protocol", &text, "expected v2 or v3.5"))?,
        };
        let insecure = own.insecure.unwrap_or(false);
        Ok(ExecutorSettings {
            admin_addresses,
            app_name,
            address,
            ip: own.ip.map(|ip| ip.to_string()),
            port: own.port.unwrap_or(DEFAULT_EXECUTOR_PORT),
            bind: own.bind.unwrap_or(DEFAULT_EXECUTOR_BIND),
            access_token: executor_token(own.access_token, insecure, layers)?,
            insecure,
            log_retention_days: layers.within(
                "log-retention-days",
                own.log_retention_days,
                30,
                0..=36_500,
            )?,
            admin_protocol,
            local: LocalExecutorSettings::from_layers(layers)?,
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
    pub fn resolve(args: &StandaloneArgs, file: &Sources) -> Result<Self, ConfigError> {
        let layers = &Layers::new(
            file,
            Section::Admin,
            &[given(&args.admin), given(&args.executor)],
        );
        Ok(StandaloneSettings {
            admin: AdminSettings::from_layers(layers, DEFAULT_STANDALONE_BIND)?,
            executor: LocalExecutorSettings::from_layers(layers)?,
        })
    }
}

/// The database URL of `jobwheel migrate`.
pub fn resolve_migrate(args: &MigrateArgs, file: &Sources) -> Result<String, ConfigError> {
    let layers = Layers::new(file, Section::Admin, &[given(args)]);
    let args: MigrateArgs = layers.extract()?;
    layers.database_url(args.database_url)
}
