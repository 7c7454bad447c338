//! The admin's settings: listen address, database, token, pools, zone, SMTP, login limits.

use std::net::SocketAddr;
use std::time::Duration;

use chrono_tz::Tz;

use super::{
    given, machine_timezone, non_empty, parse_bind, AdminArgs, ConfigError, Layers, Section,
    Sources, DEFAULT_BIND, DEFAULT_TRIGGER_POOL_FAST_MAX, DEFAULT_TRIGGER_POOL_SLOW_MAX,
};
use crate::alarm::email::{SmtpSettings, SmtpTls};
use crate::protocol::unusable_token;
use crate::web::login_limit::LoginLimit;

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

fn smtp_settings(args: &AdminArgs, layers: &Layers) -> Result<Option<SmtpSettings>, ConfigError> {
    let tls = match non_empty(args.smtp_tls.clone()) {
        None => SmtpTls::StartTls,
        Some(text) => match text.to_ascii_lowercase().as_str() {
            "starttls" => SmtpTls::StartTls,
            "tls" => SmtpTls::Tls,
            "none" => SmtpTls::None,
            _ => return Err(layers.invalid("smtp-tls", text, "expected starttls, tls or none")),
        },
    };
    let port = layers.within(
        "smtp-port",
        args.smtp_port,
        tls.default_port(),
        1..=u16::MAX,
    )?;
    let Some(host) = non_empty(args.smtp_host.clone()) else {
        return Ok(None);
    };
    if host.contains("://") || host.contains('/') || host.contains(char::is_whitespace) {
        return Err(layers.invalid(
            "smtp-host",
            host,
            "expected a host name, e.g. smtp.example.com",
        ));
    }
    let password = args.smtp_password.clone().filter(|p| !p.is_empty());
    let credentials = match (non_empty(args.smtp_username.clone()), password) {
        (Some(u), Some(p)) => Some((u, p)),
        (None, None) => None,
        (Some(_), None) => {
            return Err(ConfigError(
                "--smtp-username is set but --smtp-password is not".into(),
            ))
        }
        (None, Some(_)) => {
            return Err(ConfigError(
                "--smtp-password is set but --smtp-username is not".into(),
            ))
        }
    };
    let is_mailbox = |text: &str| text.parse::<lettre::message::Mailbox>().map(|_| ());
    let from = match (non_empty(args.smtp_from.clone()), &credentials) {
        (Some(from), _) => {
            is_mailbox(&from).map_err(|e| layers.invalid("smtp-from", &from, format!("not an e-mail address ({e})")))?;
            from
        }
        (None, Some((user, _))) if is_mailbox(user).is_ok() => user.clone(),
        (None, _) => return Err(ConfigError(
            "--smtp-from is required when --smtp-host is set (the username is not an e-mail address)".into(),
        )),
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
    pub fn resolve(args: &AdminArgs, file: &Sources) -> Result<Self, ConfigError> {
        Self::from_layers(
            &Layers::new(file, Section::Admin, &[given(args)]),
            DEFAULT_BIND,
        )
    }

    /// The settings the layers hold, listening on `default_bind` unless told otherwise.
    pub(crate) fn from_layers(layers: &Layers, default_bind: &str) -> Result<Self, ConfigError> {
        let args: AdminArgs = layers.extract()?;
        let bind = args.bind.as_deref().unwrap_or(default_bind);
        let bind = parse_bind(bind).map_err(|why| layers.invalid("bind", bind, why))?;
        let access_token = match non_empty(args.access_token.clone()) {
            Some(token) => match unusable_token(&token) {
                Some(why) => {
                    return Err(ConfigError(format!(
                        "invalid {}: {why}; leave it unset to use a generated one",
                        layers.name("access-token")
                    )))
                }
                None => Some(token),
            },
            None => None,
        };
        let public_url = match non_empty(args.public_url.clone()) {
            Some(text) => Some(
                parse_public_url(&text).map_err(|why| layers.invalid("public-url", &text, why))?,
            ),
            None => None,
        };
        let timezone = match non_empty(args.timezone.clone()) {
            None => machine_timezone(),
            Some(zone) => zone.parse::<Tz>().map_err(|_| {
                layers.invalid(
                    "timezone",
                    &zone,
                    "not an IANA time zone name (e.g. Europe/Berlin)",
                )
            })?,
        };
        let lost_result_secs = layers.within(
            "lost-result-timeout-secs",
            args.lost_result_timeout_secs,
            600,
            30..=30 * 86_400,
        )?;
        Ok(AdminSettings {
            bind,
            public_url,
            database_url: layers.database_url(args.database_url.clone())?,
            access_token,
            admin_password: non_empty(args.admin_password.clone()),
            log_retention_days: layers.within(
                "log-retention-days",
                args.log_retention_days,
                30,
                0..=36_500,
            )?,
            trigger_pool_fast_max: layers.within(
                "trigger-pool-fast-max",
                args.trigger_pool_fast_max,
                DEFAULT_TRIGGER_POOL_FAST_MAX,
                1..=100_000,
            )?,
            trigger_pool_slow_max: layers.within(
                "trigger-pool-slow-max",
                args.trigger_pool_slow_max,
                DEFAULT_TRIGGER_POOL_SLOW_MAX,
                1..=100_000,
            )?,
            timezone,
            lost_result_timeout: Duration::from_secs(lost_result_secs),
            smtp: smtp_settings(&args, layers)?,
            login_limit: LoginLimit::default(),
        })
    }
}

/// An absolute http(s) URL with a host and no query; its path (a proxy's prefix) is kept.
fn parse_public_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text)
        .map_err(|e| format!("not a URL ({e}), e.g. https://jobs.example.com"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err("expected an http:// or https:// URL with a host".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("a query or fragment has no place in it".into());
    }
    Ok(url)
}
