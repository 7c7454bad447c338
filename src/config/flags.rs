//! The command line's flags. Under its long name each is also a key of a `--config` file and,
//! spelled `JOBWHEEL_<FLAG>`, an environment variable; the flags given form the top layer.

use std::net::IpAddr;

use clap::builder::BoolishValueParser;
use clap::Args;
use serde::{Deserialize, Serialize};

/// Flags of the admin (scheduling center).
#[derive(Args, Serialize, Debug, Clone, Default)]
#[serde(rename_all = "kebab-case")]
pub struct AdminArgs {
    /// Address to listen on [default: 0.0.0.0:8080 for admin, 127.0.0.1:8080 for standalone]
    #[arg(long, value_name = "HOST:PORT")]
    pub bind: Option<String>,
    /// URL users reach the admin at, e.g. https://jobs.example.com; https makes cookies Secure
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Database URL: sqlite://FILE, postgres://... or mysql://... [default: sqlite://./data/jobwheel.db]
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// Token executors must send in XXL-JOB-ACCESS-TOKEN [default: generated on first start, stored in the database]
    #[arg(long, value_name = "TOKEN")]
    pub access_token: Option<String>,
    /// Password of the 'admin' user, used on first start only [default: random, printed once]
    #[arg(long, value_name = "PASSWORD")]
    pub admin_password: Option<String>,
    /// Days of run records to keep; 0 keeps them forever [default: 30]
    #[arg(long, allow_hyphen_values = true, value_name = "DAYS")]
    pub log_retention_days: Option<u32>,
    /// Most dispatches in flight on the fast pool [default: 200]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    pub trigger_pool_fast_max: Option<usize>,
    /// Most dispatches in flight on the slow pool [default: 100]
    #[arg(long, allow_hyphen_values = true, value_name = "N")]
    pub trigger_pool_slow_max: Option<usize>,
    /// IANA time zone for cron expressions without their own [default: this machine's]
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Seconds without a result after which a run on an executor that is gone is marked failed [default: 600]
    #[arg(long, allow_hyphen_values = true, value_name = "SECS")]
    pub lost_result_timeout_secs: Option<u64>,
    /// SMTP server for alarm e-mails; unset turns e-mail alarms off
    #[arg(long, value_name = "HOST")]
    pub smtp_host: Option<String>,
    /// SMTP port [default: 587 for starttls, 465 for tls, 25 for none]
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    pub smtp_port: Option<u16>,
    /// SMTP security: starttls (required STARTTLS), tls (implicit TLS) or none [default: starttls]
    #[arg(long, value_name = "MODE")]
    pub smtp_tls: Option<String>,
    /// SMTP login user (empty: no login)
    #[arg(long, value_name = "USER")]
    pub smtp_username: Option<String>,
    /// SMTP login password
    #[arg(long, value_name = "PASSWORD")]
    pub smtp_password: Option<String>,
    /// Sender of alarm e-mails, e.g. "jobwheel <ops@example.com>" [default: the username if it is an address]
    #[arg(long, value_name = "ADDRESS")]
    pub smtp_from: Option<String>,
}

/// Flags only `jobwheel executor` has (the executor inside standalone needs none of them).
#[derive(Args, Serialize, Debug, Clone, Default)]
#[serde(rename_all = "kebab-case")]
pub struct ExecutorOnlyArgs {
    /// Comma-separated admin base URLs, e.g. http://127.0.0.1:8080
    #[arg(long, value_name = "URLS", value_delimiter = ',')]
    pub admin_addresses: Option<Vec<String>>,
    /// App name this executor registers under
    #[arg(long, value_name = "NAME")]
    pub app_name: Option<String>,
    /// Address to register instead of http://IP:PORT/ (for NAT and containers)
    #[arg(long, value_name = "URL")]
    pub address: Option<String>,
    /// IP to register [default: this machine's first non-loopback address]
    #[arg(long, value_name = "IP")]
    pub ip: Option<IpAddr>,
    /// Port to listen on; 0 picks a free one [default: 9999]
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    pub port: Option<u16>,
    /// IP address to listen on (the port is --port) [default: 0.0.0.0]
    #[arg(long, value_name = "IP")]
    pub bind: Option<IpAddr>,
    /// Token sent to and required from the admin (XXL-JOB-ACCESS-TOKEN); required unless --insecure
    #[arg(long, value_name = "TOKEN")]
    pub access_token: Option<String>,
    /// Run without an access token: anyone who reaches the port can run jobs (and scripts)
    #[arg(long, num_args = 0..=1, default_missing_value = "true",
        value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub insecure: Option<bool>,
    /// Days of run log folders to keep; 0 keeps them forever [default: 30]
    #[arg(long, allow_hyphen_values = true, value_name = "DAYS")]
    pub log_retention_days: Option<u32>,
    /// Admin protocol: v2 (XXL-JOB 2.4 to 3.4, array callbacks) or v3.5 (callbackList) [default: v2]
    #[arg(long, value_name = "VERSION")]
    pub admin_protocol: Option<String>,
}

/// Executor flags that also apply to the executor inside `jobwheel standalone`.
#[derive(Args, Serialize, Debug, Clone, Default)]
#[serde(rename_all = "kebab-case")]
pub struct LocalExecutorArgs {
    /// Folder of run logs, script files and pending callbacks [default: ./data/joblogs]
    #[arg(long, value_name = "DIR")]
    pub log_path: Option<String>,
    /// Seconds an idle job worker lives before it is reaped [default: 90]
    #[arg(long, allow_hyphen_values = true, value_name = "SECS")]
    pub idle_timeout_secs: Option<u64>,
    /// Run script (GLUE) jobs: true or false [default: true]
    #[arg(long, value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub glue_enabled: Option<bool>,
    /// Let httpJobHandler call loopback, private and link-local addresses [default: false]
    #[arg(long, num_args = 0..=1, default_missing_value = "true",
        value_parser = BoolishValueParser::new(), value_name = "BOOL")]
    pub http_job_allow_private: Option<bool>,
}

/// Flags of `jobwheel executor`.
#[derive(Args, Debug, Clone, Default)]
pub struct ExecutorArgs {
    #[command(flatten)]
    pub own: ExecutorOnlyArgs,
    #[command(flatten)]
    pub local: LocalExecutorArgs,
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
#[derive(Args, Serialize, Deserialize, Debug, Clone, Default)]
#[serde(rename_all = "kebab-case")]
pub struct MigrateArgs {
    /// Database URL: sqlite://FILE, postgres://... or mysql://... [default: sqlite://./data/jobwheel.db]
    #[arg(long, value_name = "URL")]
    #[serde(default, deserialize_with = "super::database_url")]
    pub database_url: Option<String>,
}
