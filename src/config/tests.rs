//! Settings resolved from flags and files, and the messages that name a bad one.

use clap::{ArgMatches, Args, Command};

use super::*;
use crate::alarm::email::SmtpTls;
use crate::executor::{DEFAULT_EXECUTOR_BIND, DEFAULT_LOG_PATH};
use crate::protocol::AdminProtocol;
use std::time::Duration;

fn file(text: &str) -> Sources {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, text).unwrap();
    Sources::load(&path).unwrap()
}

type Resolve<T> = fn(&ArgMatches, &Sources) -> Result<T, ConfigError>;

/// The settings of a mode from `flags` (as typed after its name) over `sources`; an error is
/// the line the binary prints (without its `jobwheel: `).
fn resolve<T: Args>(mode: Resolve<T>, flags: &[&str], sources: &Sources) -> Result<T, String> {
    let args = std::iter::once("jobwheel").chain(flags.iter().copied());
    let matches = T::augment_args(Command::new("jobwheel")).try_get_matches_from(args);
    let matches = matches.map_err(|e| crate::cli::one_line(&e))?;
    mode(&matches, sources).map_err(|e| e.0)
}

fn admin(flags: &[&str], sources: &Sources) -> Result<AdminSettings, String> {
    resolve(AdminSettings::resolve, flags, sources)
}

fn executor(flags: &[&str], sources: &Sources) -> Result<ExecutorSettings, String> {
    resolve(ExecutorSettings::resolve, flags, sources)
}

fn standalone(flags: &[&str], sources: &Sources) -> Result<StandaloneSettings, String> {
    resolve(StandaloneSettings::resolve, flags, sources)
}

fn none() -> Sources {
    Sources::default()
}

const TOKEN: [&str; 2] = ["--access-token", "k3f9Qx1-test"];

#[test]
fn defaults_apply_without_flags_or_file() {
    let s = admin(&[], &none()).unwrap();
    assert_eq!(s.bind.to_string(), "0.0.0.0:8080");
    assert_eq!(s.database_url, DEFAULT_DATABASE_URL);
    assert_eq!(s.log_retention_days, 30);
    assert_eq!(s.trigger_pool_fast_max, 200);
    assert_eq!(s.trigger_pool_slow_max, 100);
    assert!(s.access_token.is_none());
    let local = LocalExecutorSettings::default();
    assert_eq!(local.log_path, std::path::PathBuf::from(DEFAULT_LOG_PATH));
    assert_eq!(local.idle_timeout, Duration::from_secs(90));
    assert!(local.glue_enabled && !local.http_job_allow_private);
}

#[test]
fn flags_beat_the_file_and_sections_beat_the_top_level() {
    let f = file("bind = '127.0.0.1:1'\nlog_retention_days = 7\n[admin]\nbind = '127.0.0.1:2'\n");
    let s = admin(&[], &f).unwrap();
    assert_eq!(s.bind.port(), 2);
    assert_eq!(s.log_retention_days, 7);
    let s = admin(&["--bind", "127.0.0.1:3"], &f).unwrap();
    assert_eq!(s.bind.port(), 3);
}

#[test]
fn bad_values_name_the_setting_and_value() {
    let err = admin(&["--database-url", "bogus://x"], &none()).unwrap_err();
    assert!(
        err.contains("--database-url") && err.contains("'bogus'"),
        "{err}"
    );

    let err = executor(
        &[&TOKEN[..], &["--idle-timeout-secs", "0"]].concat(),
        &none(),
    );
    assert_eq!(
        err.unwrap_err(),
        "invalid --idle-timeout-secs '0': expected a whole number from 1 to 86400"
    );

    for bad in ["-1", "many", "100001"] {
        let err = executor(
            &[&TOKEN[..], &["--max-concurrent-runs", bad]].concat(),
            &none(),
        );
        assert_eq!(
            err.unwrap_err(),
            format!(
                "invalid --max-concurrent-runs '{bad}': expected a whole number from 0 to 100000"
            )
        );
    }
    let s = executor(
        &[&TOKEN[..], &["--max-concurrent-runs", "8"]].concat(),
        &none(),
    )
    .unwrap();
    assert_eq!(s.local.max_concurrent_runs, 8);
    // labels: the flag repeated, or a list in the file; a malformed one is named
    let s = executor(
        &[&TOKEN[..], &["--label", "gpu=true", "--label", "region=eu"]].concat(),
        &none(),
    )
    .unwrap();
    assert_eq!(
        s.local.label,
        vec![
            ("gpu".to_string(), "true".to_string()),
            ("region".to_string(), "eu".to_string())
        ]
    );
    let f = file("[executor]\naccess-token = 'k3f9Qx1'\nlabel = ['gpu=true']\n");
    assert_eq!(executor(&[], &f).unwrap().local.label.len(), 1);
    let err = executor(&[&TOKEN[..], &["--label", "gpu"]].concat(), &none()).unwrap_err();
    assert_eq!(
        err,
        "invalid --label 'gpu': expected KEY=VALUE, e.g. gpu=true, not 'gpu'"
    );
    assert!(executor(&TOKEN, &none()).unwrap().local.label.is_empty());
    let f = file("[executor]\naccess-token = 'k3f9Qx1'\nmax-concurrent-runs = 3\n");
    assert_eq!(executor(&[], &f).unwrap().local.max_concurrent_runs, 3);

    let err = admin(&["--timezone", "Mars/Olympus"], &none()).unwrap_err();
    assert!(err.contains("Mars/Olympus"), "{err}");

    let err = admin(&["--bind", "0.0.0.0:99999"], &none()).unwrap_err();
    assert!(err.contains("99999"), "{err}");
}

#[test]
fn file_values_are_named_by_key_and_file() {
    let f = file("[executor]\nport = 123456\naccess-token = 'k3f9Qx1'\n");
    let err = executor(&[], &f).unwrap_err();
    assert!(
        err.starts_with("invalid port = '123456' in config file")
            && err.ends_with("expected a whole number from 0 to 65535"),
        "{err}"
    );
}

#[test]
fn unknown_keys_and_unreadable_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "bnid = 'x'\n").unwrap();
    let err = Sources::load(&path).unwrap_err().0;
    assert!(err.contains("unknown key 'bnid'"), "{err}");
    std::fs::write(&path, "[executor]\nprot = 1\n").unwrap();
    let err = Sources::load(&path).unwrap_err().0;
    assert!(err.contains("'executor.prot'"), "{err}");
    std::fs::write(&path, "admin = 1\n").unwrap();
    let err = Sources::load(&path).unwrap_err().0;
    assert!(
        err.contains("'admin'") && err.contains("must be a section"),
        "{err}"
    );
    std::fs::write(&path, "bind = \n").unwrap();
    let err = Sources::load(&path).unwrap_err().0;
    assert!(err.contains("not valid TOML"), "{err}");
    let err = Sources::load(&dir.path().join("missing.toml"))
        .unwrap_err()
        .0;
    assert!(err.contains("cannot read config file"), "{err}");
}

#[test]
fn executors_need_a_real_token_unless_insecure() {
    let err = executor(&[], &none()).unwrap_err();
    assert_eq!(err, NO_TOKEN);
    assert!(err.contains("--access-token") && err.contains("--insecure"));
    let err = executor(&["--access-token", "default_token"], &none()).unwrap_err();
    assert!(
        err.contains("--access-token") && err.contains("default"),
        "{err}"
    );
    let s = executor(&["--insecure"], &none()).unwrap();
    assert!(s.insecure && s.access_token.is_none());
    let s = executor(&TOKEN, &none()).unwrap();
    assert_eq!(s.access_token.as_deref(), Some("k3f9Qx1-test"));
    assert!(!s.insecure);
    assert_eq!(s.bind, DEFAULT_EXECUTOR_BIND);

    let err = admin(&["--access-token", "default_token"], &none()).unwrap_err();
    assert!(err.starts_with("invalid --access-token"), "{err}");
}

#[test]
fn standalone_listens_on_loopback_and_admin_on_every_address() {
    let s = standalone(&[], &none()).unwrap();
    assert_eq!(s.admin.bind.to_string(), "127.0.0.1:8080");
    assert!(s.executor.glue_enabled && !s.executor.http_job_allow_private);
    let a = admin(&[], &none()).unwrap();
    assert_eq!(a.bind.to_string(), "0.0.0.0:8080");
    let f = file("[admin]\nbind = '127.0.0.1:5'\n");
    let s = standalone(&[], &f).unwrap();
    assert_eq!(s.admin.bind.to_string(), "127.0.0.1:5");
    let s = standalone(&["--bind", "0.0.0.0:6"], &f).unwrap();
    assert_eq!(s.admin.bind.to_string(), "0.0.0.0:6");
    // a blank value unsets the file's: the standalone's own default applies
    let blank = file("[admin]\nbind = '127.0.0.1:5'\n")
        .with_environment([("JOBWHEEL_BIND".to_string(), String::new())]);
    let s = standalone(&[], &blank).unwrap();
    assert_eq!(s.admin.bind.to_string(), "127.0.0.1:8080");

    let f = file("[executor]\nbind = '127.0.0.1'\n");
    let s = executor(&TOKEN, &f).unwrap();
    assert_eq!(s.bind.to_string(), "127.0.0.1");
    let f = file("[executor]\nbind = '127.0.0.1:9999'\n");
    let err = executor(&TOKEN, &f).unwrap_err();
    assert!(
        err.starts_with("invalid bind = '127.0.0.1:9999' in config file")
            && err.ends_with("expected an IP address, e.g. 0.0.0.0"),
        "{err}"
    );
}

#[test]
fn public_urls_are_checked() {
    let s = admin(&["--public-url", "https://jobs.example.com/"], &none()).unwrap();
    assert_eq!(s.public_url.unwrap().scheme(), "https");
    for bad in ["jobs.example.com", "ftp://x", "https://x/?a=1"] {
        let err = admin(&["--public-url", bad], &none()).unwrap_err();
        assert!(err.starts_with("invalid --public-url"), "{bad}: {err}");
    }
}

#[test]
fn executor_settings_parse_lists_and_protocols() {
    let flags = [
        "--admin-addresses",
        "http://a:8080, http://b:8080/xxl-job-admin",
        "--admin-protocol",
        "V3.5",
        "--address",
        "http://10.0.0.1:9999",
    ];
    let s = executor(&[&TOKEN[..], &flags].concat(), &none()).unwrap();
    assert_eq!(s.admin_addresses.len(), 2);
    assert_eq!(s.admin_protocol, AdminProtocol::V35);
    // the builder adds the trailing slash
    assert_eq!(s.address.as_deref(), Some("http://10.0.0.1:9999"));
    assert_eq!(s.port, 9999);
    assert_eq!(s.local.idle_timeout, Duration::from_secs(90));
    assert!(s.local.glue_enabled);

    let err = executor(&[&TOKEN[..], &["--admin-protocol", "v4"]].concat(), &none());
    assert_eq!(
        err.unwrap_err(),
        "invalid --admin-protocol 'v4': unknown admin protocol [v4], allowed values: v2, v3.5"
    );

    let flags = ["--admin-addresses", "localhost:8080"];
    let err = executor(&[&TOKEN[..], &flags].concat(), &none()).unwrap_err();
    assert!(
        err.starts_with("invalid --admin-addresses 'localhost:8080'"),
        "{err}"
    );
}

#[test]
fn smtp_settings_default_off_and_validate() {
    let s = admin(&[], &none()).unwrap();
    assert!(s.smtp.is_none());
    assert_eq!(s.lost_result_timeout, Duration::from_secs(600));

    let flags = [
        "--smtp-host",
        "smtp.example.com",
        "--smtp-username",
        "ops@example.com",
        "--smtp-password",
        "pw",
        "--lost-result-timeout-secs",
        "120",
    ];
    let s = admin(&flags, &none()).unwrap();
    let smtp = s.smtp.unwrap();
    assert_eq!(smtp.port, 587);
    assert_eq!(smtp.tls, SmtpTls::StartTls);
    assert_eq!(smtp.from, "ops@example.com");
    assert!(!format!("{smtp:?}").contains("pw"));
    assert_eq!(s.lost_result_timeout, Duration::from_secs(120));

    let f = file(
        "[admin]\nsmtp-host = 'mx'\nsmtp-tls = 'TLS'\nsmtp-from = 'Jobs <jobs@example.com>'\n",
    );
    let smtp = admin(&[], &f).unwrap().smtp.unwrap();
    assert_eq!((smtp.port, smtp.tls), (465, SmtpTls::Tls));
    assert!(smtp.credentials.is_none());

    let bad = |flags: &[&str]| admin(&[&["--smtp-host", "mx"], flags].concat(), &none());
    let err = bad(&["--smtp-tls", "ssl", "--smtp-from", "a@b.c"]).unwrap_err();
    assert_eq!(
        err,
        "invalid --smtp-tls 'ssl': expected starttls, tls or none"
    );
    let err = bad(&[]).unwrap_err();
    assert!(err.contains("--smtp-from is required"), "{err}");
    let err = bad(&["--smtp-from", "not an address"]).unwrap_err();
    assert!(
        err.starts_with("invalid --smtp-from 'not an address'"),
        "{err}"
    );
    let err = bad(&["--smtp-from", "a@b.c", "--smtp-username", "u"]).unwrap_err();
    assert_eq!(err, "--smtp-username is set but --smtp-password is not");
    let f = file("[admin]\nsmtp-host = 'mx'\nsmtp-password = 'pw'\n");
    let err = admin(&[], &f).unwrap_err();
    assert!(
        err.starts_with("smtp-password in config file '")
            && err.ends_with("' is set but --smtp-username is not"),
        "{err}"
    );
    let err = admin(&["--smtp-port", "0"], &none()).unwrap_err();
    assert_eq!(
        err,
        "invalid --smtp-port '0': expected a whole number from 1 to 65535"
    );
    let err = admin(&["--lost-result-timeout-secs", "5"], &none()).unwrap_err();
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
    let s = executor(&[], &f).unwrap();
    assert_eq!(s.admin_addresses, vec!["http://a", "http://b"]);
    assert!(!s.local.glue_enabled);
}

#[test]
fn quoted_numbers_and_booleans_in_a_file_are_read() {
    let f = file("[executor]\nport = '9998'\nglue-enabled = 'false'\ninsecure = true\n");
    let s = executor(&[], &f).unwrap();
    assert_eq!(s.port, 9998);
    assert!(!s.local.glue_enabled && s.insecure);
    let f = file("[executor]\nport = 'many'\ninsecure = true\n");
    let err = executor(&[], &f).unwrap_err();
    assert!(
        err.starts_with("invalid port = 'many' in config file"),
        "{err}"
    );
    let f = file("[executor]\ninsecure = 'maybe'\n");
    let err = executor(&[], &f).unwrap_err();
    assert!(
        err.starts_with("invalid insecure = 'maybe' in config file")
            && err.ends_with("expected true or false"),
        "{err}"
    );
}

#[test]
fn a_file_shared_by_every_mode_serves_each_its_own_keys() {
    let f = file(
        "database-url = 'sqlite://./x.db'\nadmin-addresses = 'http://a'\n\
         [admin]\nlog-path = '/tmp/logs'\ntimezone = 'UTC'\n\
         [executor]\ninsecure = true\nlog-path = '/tmp/exec'\n",
    );
    let admin = admin(&[], &f).unwrap();
    assert_eq!(admin.database_url, "sqlite://./x.db");
    let standalone = standalone(&[], &f).unwrap();
    assert_eq!(
        standalone.executor.log_path,
        std::path::PathBuf::from("/tmp/logs")
    );
    let executor = executor(&[], &f).unwrap();
    assert_eq!(executor.admin_addresses, vec!["http://a"]);
    assert_eq!(
        executor.local.log_path,
        std::path::PathBuf::from("/tmp/exec")
    );
    let migrate = resolve(MigrateSettings::resolve, &[], &f).unwrap();
    assert_eq!(migrate.database_url, "sqlite://./x.db");
}

#[test]
fn the_environment_sits_between_the_file_and_the_flags() {
    let env = |pairs: &[(&str, &str)]| {
        let vars = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        file("timezone = 'Asia/Tokyo'\nlog-retention-days = 9\n").with_environment(vars)
    };
    let sources = env(&[
        ("JOBWHEEL_TIMEZONE", "Europe/Berlin"),
        ("JOBWHEEL_TEST_PG_URL", "not a setting"),
        ("OTHER_PORT", "1"),
    ]);
    let s = admin(&[], &sources).unwrap();
    assert_eq!(s.timezone, chrono_tz::Europe::Berlin);
    assert_eq!(s.log_retention_days, 9);
    let s = admin(&["--timezone", "UTC"], &sources).unwrap();
    assert_eq!(s.timezone, chrono_tz::UTC);

    // a blank value unsets its key: the default applies, not the file's value
    let sources = env(&[("JOBWHEEL_LOG_RETENTION_DAYS", " ")]);
    let s = admin(&[], &sources).unwrap();
    assert_eq!(s.log_retention_days, 30);
    let s = admin(&["--admin-password", " "], &sources).unwrap();
    assert!(s.admin_password.is_none());

    let sources = env(&[("JOBWHEEL_LOG_RETENTION_DAYS", "-1")]);
    let err = admin(&[], &sources).unwrap_err();
    assert_eq!(
        err,
        "invalid JOBWHEEL_LOG_RETENTION_DAYS '-1': expected a whole number from 0 to 36500"
    );
    let sources = env(&[
        ("JOBWHEEL_ADMIN_ADDRESSES", "http://a, http://b"),
        ("JOBWHEEL_INSECURE", "yes"),
    ]);
    let s = executor(&[], &sources).unwrap();
    assert_eq!(s.admin_addresses, vec!["http://a", "http://b"]);
    assert!(s.insecure);
}

#[test]
fn the_binary_without_a_mode_runs_standalone_on_loopback() {
    use clap::CommandFactory;
    let cli = crate::cli::Cli::command();
    let matches = cli.clone().try_get_matches_from(["jobwheel"]).unwrap();
    let s = StandaloneSettings::resolve(&matches, &none()).unwrap();
    assert_eq!(s.admin.bind.to_string(), "127.0.0.1:8080");
    let matches = cli.try_get_matches_from(["jobwheel", "admin"]).unwrap();
    let (_, admin_flags) = matches.subcommand().unwrap();
    let a = AdminSettings::resolve(admin_flags, &none()).unwrap();
    assert_eq!(a.bind.to_string(), "0.0.0.0:8080");
}
