//! The admin's settings: listen address, database, token, pools, zone, SMTP, login limits.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use chrono_tz::Tz;
use clap::builder::BoolishValueParser;
use clap::{ArgAction, ArgMatches, Args};
use lettre::message::Mailbox;
use serde::Deserialize;

use super::*;
use crate::alarm::email::{SmtpSettings, SmtpTls};

/// The admin's (scheduling center's) flags and settings.
#[derive(Args, Deserialize, Debug, Clone)]
#[command(mut_args(|flag| flag.allow_negative_numbers(true)))] // `-1` reaches the value's check
pub struct AdminSettings {
    /// Address to listen on [default: 0.0.0.0:8080 for admin, 127.0.0.1:8080 for standalone]
    #[arg(long, value_name = "HOST:PORT", value_parser = bind::parse, default_value = DEFAULT_BIND)]
    #[arg(hide_default_value = true)]
    #[serde(with = "bind")]
    pub bind: SocketAddr,
    /// URL users reach the admin at, e.g. https://jobs.example.com; https makes cookies Secure
    #[allow(rustdoc::bare_urls)] // the doc is the flag's --help text, read in a terminal
    #[arg(long, value_name = "URL", value_parser = public_url::parse)]
    #[serde(default, with = "public_url")]
    pub public_url: Option<url::Url>,
    /// Database URL: sqlite://FILE, postgres://... or mysql://...
    #[arg(long, value_name = "URL", default_value = DEFAULT_DATABASE_URL)]
    #[serde(with = "database_url")]
    pub database_url: String,
    /// Token executors must send in XXL-JOB-ACCESS-TOKEN [default: generated on first start, stored in the database]
    #[arg(long, value_name = "TOKEN")]
    #[serde(default, with = "token")]
    pub access_token: Option<String>,
    /// Password of the 'admin' user, used on first start only [default: random, printed once]
    #[arg(long, value_name = "PASSWORD")]
    #[serde(default, with = "trimmed")]
    pub admin_password: Option<String>,
    /// Days of run records to keep; 0 keeps them forever
    #[arg(long, value_name = "DAYS", value_parser = days::parse, default_value = "30")]
    #[serde(with = "days")]
    pub log_retention_days: u32,
    /// Most dispatches in flight on the fast pool
    #[arg(long, value_name = "N", value_parser = pool::parse)]
    #[arg(default_value_t = DEFAULT_TRIGGER_POOL_FAST_MAX)]
    #[serde(with = "pool")]
    pub trigger_pool_fast_max: usize,
    /// Most dispatches in flight on the slow pool
    #[arg(long, value_name = "N", value_parser = pool::parse)]
    #[arg(default_value_t = DEFAULT_TRIGGER_POOL_SLOW_MAX)]
    #[serde(with = "pool")]
    pub trigger_pool_slow_max: usize,
    /// IANA time zone for cron expressions without their own [default: this machine's]
    #[arg(long, value_name = "ZONE", value_parser = timezone::parse)]
    #[arg(default_value_t = machine_timezone(), hide_default_value = true)]
    #[serde(with = "timezone")]
    pub timezone: Tz,
    /// Seconds without a result after which a run on an executor that is gone is marked failed
    #[arg(long = "lost-result-timeout-secs", id = "lost_result_timeout_secs")]
    #[arg(value_name = "SECS", value_parser = lost_secs::parse, default_value = "600")]
    #[serde(rename = "lost_result_timeout_secs", with = "lost_secs")]
    pub lost_result_timeout: Duration,
    /// Let jobs' alarm webhooks reach loopback, private and link-local addresses
    #[arg(long, num_args = 0..=1, default_missing_value = "true", action = ArgAction::Set)]
    #[arg(value_parser = BoolishValueParser::new(), value_name = "BOOL", default_value = "false")]
    #[serde(with = "boolean")]
    pub alarm_webhook_allow_private: bool,
    /// Most bytes one workflow node's output (its JSON result) may have; a larger one fails its node
    #[arg(long, value_name = "BYTES", value_parser = output_bytes::parse, default_value = "65536")]
    #[serde(with = "output_bytes")]
    pub workflow_node_output_max: usize,
    /// Most bytes a workflow run's context (its nodes' outputs merged) may have
    #[arg(long, value_name = "BYTES", value_parser = context_bytes::parse, default_value = "1048576")]
    #[serde(with = "context_bytes")]
    pub workflow_context_max: usize,
    /// Mail server for alarm e-mails; `None` turns e-mail alarms off.
    #[arg(skip)]
    #[serde(skip)]
    pub smtp: Option<SmtpSettings>,
    /// The SMTP flags, each checked; [`Smtp::settings`] checks them together into `smtp`.
    #[command(flatten)]
    #[serde(skip)]
    smtp_flags: Smtp,
    /// Failed logins allowed per user and per address before logins are refused for a while
    /// (not a flag: 5 per user and 20 per address a minute; tests shorten the window).
    #[arg(skip)]
    #[serde(skip)]
    pub login_limit: LoginLimit,
}

// a host name is resolved
setting!(bind: SocketAddr = |addr: &str| match addr.to_socket_addrs() {
    Ok(mut addrs) => addrs.next().ok_or_else(|| "the host name has no address".to_string()),
    Err(e) => Err(format!("expected HOST:PORT, e.g. 0.0.0.0:8080 ({e})")),
});
setting!(trimmed: String = str::parse::<String>);
setting!(pool: usize = |n| number(n, 1, 100_000));
// an executor sends an output whole up to 1 MiB; a context is one row, read with every node
// fire, that MariaDB's default packet limit (16 MiB) must carry
setting!(output_bytes: usize = |n| number(n, 1_024, 1024 * 1024));
setting!(context_bytes: usize = |n| number(n, 1_024, 8 * 1024 * 1024));
setting!(lost_secs: Duration = |secs| number(secs, 30, 2_592_000).map(Duration::from_secs));
setting!(timezone: Tz = |zone: &str| zone.parse::<Tz>()
    .map_err(|_| "expected an IANA time zone name, e.g. Europe/Berlin"));
// an absolute http(s) URL with a host and no query; its path (a proxy's prefix) is kept
setting!(public_url: url::Url = |text: &str| match url::Url::parse(text) {
    Err(e) => Err(format!("not a URL ({e}), e.g. https://jobs.example.com")),
    Ok(url) if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() => {
        Err("expected an http:// or https:// URL with a host".into())
    }
    Ok(url) if url.query().is_some() || url.fragment().is_some() => {
        Err("a query or fragment has no place in it".into())
    }
    Ok(url) => Ok(url),
});
setting!(smtp_host: String = |host: &str| match host.contains(char::is_whitespace) {
    false if !host.contains('/') => Ok(host.to_string()),
    _ => Err("expected a host name, e.g. smtp.example.com"),
});
setting!(smtp_port: u16 = |port| number(port, 1, 65_535));
setting!(mailbox: String = |from: &str| from.parse::<Mailbox>()
    .map(|_| from.to_string())
    .map_err(|e| format!("expected an e-mail address ({e})")));
setting!(smtp_tls: SmtpTls = str::parse::<SmtpTls>);

/// The SMTP flags, each checked; [`Smtp::settings`] checks them together.
#[derive(Args, Deserialize, Debug, Clone, Default)]
struct Smtp {
    /// SMTP server for alarm e-mails; unset turns e-mail alarms off
    #[arg(long, value_name = "HOST")]
    #[serde(default, with = "smtp_host")]
    smtp_host: Option<String>,
    /// SMTP port [default: 587 for starttls, 465 for tls, 25 for none]
    #[arg(long, value_name = "PORT", value_parser = smtp_port::parse)]
    #[serde(default, with = "smtp_port")]
    smtp_port: Option<u16>,
    /// SMTP security: starttls (required STARTTLS), tls (implicit TLS) or none [default: starttls]
    #[arg(long, value_name = "MODE", value_parser = smtp_tls::parse)]
    #[serde(default, with = "smtp_tls")]
    smtp_tls: Option<SmtpTls>,
    /// SMTP login user (empty: no login)
    #[arg(long, value_name = "USER")]
    #[serde(default, with = "trimmed")]
    smtp_username: Option<String>,
    /// SMTP login password
    #[arg(long, value_name = "PASSWORD")]
    #[serde(default)]
    smtp_password: Option<String>,
    /// Sender of alarm e-mails, e.g. "jobwheel <ops@example.com>" [default: the username if it is an address]
    #[arg(long, value_name = "ADDRESS")]
    #[serde(default, with = "mailbox")]
    smtp_from: Option<String>,
}

impl Smtp {
    fn settings(self, layers: &Layers) -> Result<Option<SmtpSettings>, ConfigError> {
        let Some(host) = self.smtp_host else {
            return Ok(None);
        };
        let missing = |set, unset| {
            let [set, unset] = [set, unset].map(|key| layers.name(key));
            Err(ConfigError(format!("{set} is set but {unset} is not")))
        };
        let credentials = match (self.smtp_username, self.smtp_password) {
            (Some(user), Some(password)) => Some((user, password)),
            (None, None) => None,
            (Some(_), None) => return missing("smtp_username", "smtp_password"),
            (None, Some(_)) => return missing("smtp_password", "smtp_username"),
        };
        let user = credentials.as_ref().map(|(user, _)| user);
        let user = user.filter(|user| user.parse::<Mailbox>().is_ok()).cloned();
        let Some(from) = self.smtp_from.or(user) else {
            return Err(ConfigError(format!(
                "--smtp-from is required when {} is set (the username is not an e-mail address)",
                layers.name("smtp_host")
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
    /// The settings of `jobwheel admin`: its parsed flags over `sources` over the defaults.
    pub fn resolve(matches: &ArgMatches, sources: &Sources) -> Result<Self, ConfigError> {
        let layers = Layers::new(matches, sources, "admin");
        let settings: AdminSettings = layers.extract()?;
        let smtp = layers.extract::<Smtp>()?.settings(&layers)?;
        Ok(AdminSettings { smtp, ..settings })
    }
}

/// How many failed logins a (user, address) pair and an address may have, and how long they wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimit {
    /// Failures of one user name from one address before each further attempt waits.
    pub per_user: usize,
    /// Failures per client address in the window, whatever the user names (many users may share
    /// one address behind a NAT).
    pub per_address: usize,
    /// The first wait of a (user, address) pair, doubling at each further failure; also the
    /// sliding window of the per-address count.
    pub window: Duration,
    /// The longest a (user, address) pair waits.
    pub max_wait: Duration,
}

impl Default for LoginLimit {
    fn default() -> Self {
        LoginLimit {
            per_user: 5,
            per_address: 20,
            window: Duration::from_secs(60),
            max_wait: Duration::from_secs(15 * 60),
        }
    }
}
