//! The admin's settings: listen address, database, token, pools, zone, SMTP, login limits.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use chrono_tz::Tz;
use lettre::message::Mailbox;
use serde::Deserialize;

use super::{
    database_url, given, machine_timezone, secs, token, within, AdminArgs, ConfigError, Layers,
    Sources, DEFAULT_BIND, DEFAULT_DATABASE_URL, DEFAULT_TRIGGER_POOL_FAST_MAX,
    DEFAULT_TRIGGER_POOL_SLOW_MAX,
};
use crate::alarm::email::{SmtpSettings, SmtpTls};
use crate::web::login_limit::LoginLimit;

/// Validated admin settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", default)]
pub struct AdminSettings {
    /// Listen address.
    #[serde(deserialize_with = "bind")]
    pub bind: SocketAddr,
    /// The URL users reach the admin at (`--public-url`), without a trailing slash.
    #[serde(deserialize_with = "public_url")]
    pub public_url: Option<url::Url>,
    /// Database URL (scheme checked).
    #[serde(deserialize_with = "database_url")]
    pub database_url: String,
    /// Global executor token from the flag; `None` uses the one stored in the database
    /// (generated on first start).
    #[serde(deserialize_with = "token")]
    pub access_token: Option<String>,
    /// First-start password of the `admin` user.
    #[serde(deserialize_with = "trimmed")]
    pub admin_password: Option<String>,
    /// Days of run records to keep; 0 keeps them forever.
    #[serde(deserialize_with = "within::<_, u32, _, 0, 36_500>")]
    pub log_retention_days: u32,
    /// Fast dispatch pool in-flight limit.
    #[serde(deserialize_with = "within::<_, usize, _, 1, 100_000>")]
    pub trigger_pool_fast_max: usize,
    /// Slow dispatch pool in-flight limit.
    #[serde(deserialize_with = "within::<_, usize, _, 1, 100_000>")]
    pub trigger_pool_slow_max: usize,
    /// Default zone of cron expressions.
    #[serde(deserialize_with = "timezone")]
    pub timezone: Tz,
    /// A run without a result for this long, on an executor that is gone, is marked failed.
    #[serde(
        rename = "lost-result-timeout-secs",
        deserialize_with = "secs::<_, 30, 2_592_000>"
    )]
    pub lost_result_timeout: Duration,
    /// Mail server for alarm e-mails; `None` turns e-mail alarms off.
    #[serde(skip)]
    pub smtp: Option<SmtpSettings>,
    /// Failed logins allowed per user and per address before logins are refused for a while
    /// (not a flag: 5 per user and 20 per address a minute; tests shorten the window).
    #[serde(skip)]
    pub login_limit: LoginLimit,
}

impl Default for AdminSettings {
    fn default() -> Self {
        AdminSettings {
            bind: DEFAULT_BIND.parse().expect("a socket address"),
            public_url: None,
            database_url: DEFAULT_DATABASE_URL.to_string(),
            access_token: None,
            admin_password: None,
            log_retention_days: 30,
            trigger_pool_fast_max: DEFAULT_TRIGGER_POOL_FAST_MAX,
            trigger_pool_slow_max: DEFAULT_TRIGGER_POOL_SLOW_MAX,
            timezone: machine_timezone(),
            lost_result_timeout: Duration::from_secs(600),
            smtp: None,
            login_limit: LoginLimit::default(),
        }
    }
}

// a host name is resolved
from_text!(bind: SocketAddr = |addr: &str| match addr.to_socket_addrs() {
    Ok(mut addrs) => addrs.next().ok_or_else(|| "the host name has no address".to_string()),
    Err(e) => Err(format!("expected HOST:PORT, e.g. 0.0.0.0:8080 ({e})")),
});
from_text!(trimmed: String = str::parse::<String>);
from_text!(timezone: Tz = |zone: &str| zone.parse::<Tz>()
    .map_err(|_| "expected an IANA time zone name, e.g. Europe/Berlin"));
// an absolute http(s) URL with a host and no query; its path (a proxy's prefix) is kept
from_text!(public_url: url::Url = |text: &str| match url::Url::parse(text) {
    Err(e) => Err(format!("not a URL ({e}), e.g. https://jobs.example.com")),
    Ok(url) if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() => {
        Err("expected an http:// or https:// URL with a host".into())
    }
    Ok(url) if url.query().is_some() || url.fragment().is_some() => {
        Err("a query or fragment has no place in it".into())
    }
    Ok(url) => Ok(url),
});
from_text!(smtp_host: String = |host: &str| match host.contains(char::is_whitespace) {
    false if !host.contains('/') => Ok(host.to_string()),
    _ => Err("expected a host name, e.g. smtp.example.com"),
});
from_text!(mailbox: String = |from: &str| from.parse::<Mailbox>()
    .map(|_| from.to_string())
    .map_err(|e| format!("expected an e-mail address ({e})")));
from_text!(smtp_tls: SmtpTls = str::parse::<SmtpTls>);

/// The SMTP keys, each checked; [`Smtp::settings`] checks them together.
#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case", default)]
struct Smtp {
    #[serde(deserialize_with = "smtp_host")]
    smtp_host: Option<String>,
    #[serde(deserialize_with = "within::<_, u16, _, 1, 65_535>")]
    smtp_port: Option<u16>,
    #[serde(deserialize_with = "smtp_tls")]
    smtp_tls: Option<SmtpTls>,
    #[serde(deserialize_with = "trimmed")]
    smtp_username: Option<String>,
    smtp_password: Option<String>,
    #[serde(deserialize_with = "mailbox")]
    smtp_from: Option<String>,
}

impl Smtp {
    fn settings(self, layers: &Layers) -> Result<Option<SmtpSettings>, ConfigError> {
        let Some(host) = self.smtp_host else {
            return Ok(None);
        };
        let missing = |set: &str, unset: &str| {
            let [set, unset] = [set, unset].map(|key| layers.name(&format!("smtp-{key}")));
            Err(ConfigError(format!("{set} is set but {unset} is not")))
        };
        let credentials = match (self.smtp_username, self.smtp_password) {
            (Some(user), Some(password)) => Some((user, password)),
            (None, None) => None,
            (Some(_), None) => return missing("username", "password"),
            (None, Some(_)) => return missing("password", "username"),
        };
        let user = credentials.as_ref().map(|(user, _)| user);
        let user = user.filter(|user| user.parse::<Mailbox>().is_ok()).cloned();
        let Some(from) = self.smtp_from.or(user) else {
            return Err(ConfigError(format!(
                "--smtp-from is required when {} is set (the username is not an e-mail address)",
                layers.name("smtp-host")
            )));
        };
        let tls = self.smtp_tls.unwrap_or(SmtpTls::StartTls);
        let port = self.smtp_port.unwrap_or(tls.default_port());
        Ok(Some(SmtpSettings {
            host,
            port,
            tls,
            credentials,
            from,
        }))
    }
}

impl AdminSettings {
    /// Resolves flags/env over the file over defaults (`jobwheel admin`).
    pub fn resolve(args: &AdminArgs, file: &Sources) -> Result<Self, ConfigError> {
        Self::from_layers(&Layers::new(file, "admin", &[given(args)]))
    }

    /// The settings the layers hold.
    pub(crate) fn from_layers(layers: &Layers) -> Result<Self, ConfigError> {
        let settings: AdminSettings = layers.extract()?;
        let smtp = layers.extract::<Smtp>()?.settings(layers)?;
        Ok(AdminSettings { smtp, ..settings })
    }
}
