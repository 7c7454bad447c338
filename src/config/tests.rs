//! Settings resolved from flags and files, and the messages that name a bad one.

use super::*;
use crate::alarm::email::SmtpTls;
use crate::protocol::AdminProtocol;
use std::time::Duration;

fn file(text: &str) -> Sources {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, text).unwrap();
    Sources::load(&path).unwrap()
}

#[test]
fn defaults_apply_without_flags_or_file() {
    let s = AdminSettings::resolve(&AdminArgs::default(), &Sources::none()).unwrap();
    assert_eq!(s.bind.to_string(), "0.0.0.0:8080");
    assert_eq!(s.database_url, DEFAULT_DATABASE_URL);
    assert_eq!(s.log_retention_days, 30);
    assert_eq!(s.trigger_pool_fast_max, 200);
    assert_eq!(s.trigger_pool_slow_max, 100);
    assert!(s.access_token.is_none());
}

#[test]
fn flags_beat_the_file_and_sections_beat_the_top_level() {
    let f = file("bind = '127.0.0.1:1'\nlog_retention_days = 7\n[admin]\nbind = '127.0.0.1:2'\n");
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
    let err = AdminSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert!(
        err.contains("--database-url") && err.contains("'bogus'"),
        "{err}"
    );

    let mut args = with_token(ExecutorOnlyArgs::default());
    args.local.idle_timeout_secs = Some(0);
    let err = ExecutorSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert_eq!(
        err,
        "invalid --idle-timeout-secs '0': expected a whole number from 1 to 86400"
    );

    let args = AdminArgs {
        timezone: Some("Mars/Olympus".into()),
        ..Default::default()
    };
    let err = AdminSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert!(err.contains("Mars/Olympus"), "{err}");

    let args = AdminArgs {
        bind: Some("0.0.0.0:99999".into()),
        ..Default::default()
    };
    let err = AdminSettings::resolve(&args, &Sources::none())
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
    std::fs::write(&path, "bind = \n").unwrap();
    let err = Sources::load(&path).unwrap_err().0;
    assert!(err.contains("not valid TOML"), "{err}");
    let err = Sources::load(&dir.path().join("missing.toml"))
        .unwrap_err()
        .0;
    assert!(err.contains("cannot read config file"), "{err}");
}

fn with_token(own: ExecutorOnlyArgs) -> ExecutorArgs {
    ExecutorArgs {
        own: ExecutorOnlyArgs {
            access_token: Some("k3f9Qx1-test".into()),
            ..own
        },
        ..Default::default()
    }
}

fn executor(own: ExecutorOnlyArgs) -> ExecutorArgs {
    ExecutorArgs {
        own,
        ..Default::default()
    }
}

#[test]
fn executors_need_a_real_token_unless_insecure() {
    let err = ExecutorSettings::resolve(&ExecutorArgs::default(), &Sources::none())
        .unwrap_err()
        .0;
    assert_eq!(err, NO_TOKEN);
    assert!(err.contains("--access-token") && err.contains("--insecure"));
    let args = executor(ExecutorOnlyArgs {
        access_token: Some("default_token".into()),
        ..Default::default()
    });
    let err = ExecutorSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert!(
        err.contains("--access-token") && err.contains("default"),
        "{err}"
    );
    let args = executor(ExecutorOnlyArgs {
        insecure: Some(true),
        ..Default::default()
    });
    let s = ExecutorSettings::resolve(&args, &Sources::none()).unwrap();
    assert!(s.insecure && s.access_token.is_none());
    let s = ExecutorSettings::resolve(&with_token(ExecutorOnlyArgs::default()), &Sources::none())
        .unwrap();
    assert_eq!(s.access_token.as_deref(), Some("k3f9Qx1-test"));
    assert!(!s.insecure);
    assert_eq!(s.bind, DEFAULT_EXECUTOR_BIND);

    let args = AdminArgs {
        access_token: Some("default_token".into()),
        ..Default::default()
    };
    let err = AdminSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert!(err.starts_with("invalid --access-token"), "{err}");
}

#[test]
fn standalone_listens_on_loopback_and_admin_on_every_address() {
    let s = StandaloneSettings::resolve(&StandaloneArgs::default(), &Sources::none()).unwrap();
    assert_eq!(s.admin.bind.to_string(), "127.0.0.1:8080");
    assert!(s.executor.glue_enabled && !s.executor.http_job_allow_private);
    let a = AdminSettings::resolve(&AdminArgs::default(), &Sources::none()).unwrap();
    assert_eq!(a.bind.to_string(), "0.0.0.0:8080");
    let f = file("[admin]\nbind = '127.0.0.1:5'\n");
    let s = StandaloneSettings::resolve(&StandaloneArgs::default(), &f).unwrap();
    assert_eq!(s.admin.bind.to_string(), "127.0.0.1:5");

    let f = file("[executor]\nbind = '127.0.0.1'\n");
    let s = ExecutorSettings::resolve(&with_token(ExecutorOnlyArgs::default()), &f).unwrap();
    assert_eq!(s.bind.to_string(), "127.0.0.1");
    let f = file("[executor]\nbind = '127.0.0.1:9999'\n");
    let err = ExecutorSettings::resolve(&with_token(ExecutorOnlyArgs::default()), &f)
        .unwrap_err()
        .0;
    assert!(
        err.starts_with("invalid bind = '127.0.0.1:9999' in config file")
            && err.ends_with("expected an IP address, e.g. 0.0.0.0"),
        "{err}"
    );
}

#[test]
fn public_urls_are_checked() {
    let args = AdminArgs {
        public_url: Some("https://jobs.example.com/".into()),
        ..Default::default()
    };
    let s = AdminSettings::resolve(&args, &Sources::none()).unwrap();
    assert_eq!(s.public_url.unwrap().scheme(), "https");
    for bad in ["jobs.example.com", "ftp://x", "https://x/?a=1"] {
        let args = AdminArgs {
            public_url: Some(bad.into()),
            ..Default::default()
        };
        let err = AdminSettings::resolve(&args, &Sources::none())
            .unwrap_err()
            .0;
        assert!(err.starts_with("invalid --public-url"), "{bad}: {err}");
    }
}

#[test]
fn executor_settings_parse_lists_and_protocols() {
    let args = with_token(ExecutorOnlyArgs {
        admin_addresses: Some(vec![
            "http://a:8080".into(),
            " http://b:8080/xxl-job-admin".into(),
        ]),
        admin_protocol: Some("V3.5".into()),
        address: Some("http://10.0.0.1:9999".into()),
        ..Default::default()
    });
    let s = ExecutorSettings::resolve(&args, &Sources::none()).unwrap();
    assert_eq!(s.admin_addresses.len(), 2);
    assert_eq!(s.admin_protocol, AdminProtocol::V35);
    // the builder adds the trailing slash
    assert_eq!(s.address.as_deref(), Some("http://10.0.0.1:9999"));
    assert_eq!(s.port, 9999);
    assert_eq!(s.local.idle_timeout, Duration::from_secs(90));
    assert!(s.local.glue_enabled);

    let args = with_token(ExecutorOnlyArgs {
        admin_protocol: Some("v4".into()),
        ..Default::default()
    });
    let err = ExecutorSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert_eq!(
        err,
        "invalid --admin-protocol 'v4': unknown admin protocol [v4], allowed values: v2, v3.5"
    );

    let args = with_token(ExecutorOnlyArgs {
        admin_addresses: Some(vec!["localhost:8080".into()]),
        ..Default::default()
    });
    let err = ExecutorSettings::resolve(&args, &Sources::none())
        .unwrap_err()
        .0;
    assert!(
        err.starts_with("invalid --admin-addresses 'localhost:8080'"),
        "{err}"
    );
}

#[test]
fn smtp_settings_default_off_and_validate() {
    let s = AdminSettings::resolve(&AdminArgs::default(), &Sources::none()).unwrap();
    assert!(s.smtp.is_none());
    assert_eq!(s.lost_result_timeout, Duration::from_secs(600));

    let args = AdminArgs {
        smtp_host: Some("smtp.example.com".into()),
        smtp_username: Some("ops@example.com".into()),
        smtp_password: Some("pw".into()),
        lost_result_timeout_secs: Some(120),
        ..Default::default()
    };
    let s = AdminSettings::resolve(&args, &Sources::none()).unwrap();
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
        AdminSettings::resolve(&args, &Sources::none())
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
    let f = file("[admin]\nsmtp-host = 'mx'\nsmtp-password = 'pw'\n");
    let err = AdminSettings::resolve(&AdminArgs::default(), &f)
        .unwrap_err()
        .0;
    assert!(
        err.starts_with("smtp-password in config file '")
            && err.ends_with("' is set but --smtp-username is not"),
        "{err}"
    );
    let err = bad(AdminArgs {
        smtp_port: Some(0),
        ..Default::default()
    });
    assert_eq!(
        err,
        "invalid --smtp-port '0': expected a whole number from 1 to 65535"
    );
    let err = bad(AdminArgs {
        lost_result_timeout_secs: Some(5),
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

#[test]
fn quoted_numbers_and_booleans_in_a_file_are_read() {
    let f = file("[executor]\nport = '9998'\nglue-enabled = 'false'\ninsecure = true\n");
    let s = ExecutorSettings::resolve(&ExecutorArgs::default(), &f).unwrap();
    assert_eq!(s.port, 9998);
    assert!(!s.local.glue_enabled && s.insecure);
    let f = file("[executor]\nport = 'many'\ninsecure = true\n");
    let err = ExecutorSettings::resolve(&ExecutorArgs::default(), &f)
        .unwrap_err()
        .0;
    assert!(
        err.starts_with("invalid port = 'many' in config file"),
        "{err}"
    );
    let f = file("[executor]\ninsecure = 'maybe'\n");
    let err = ExecutorSettings::resolve(&ExecutorArgs::default(), &f)
        .unwrap_err()
        .0;
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
    let admin = AdminSettings::resolve(&AdminArgs::default(), &f).unwrap();
    assert_eq!(admin.database_url, "sqlite://./x.db");
    let standalone = StandaloneSettings::resolve(&StandaloneArgs::default(), &f).unwrap();
    assert_eq!(
        standalone.executor.log_path,
        std::path::PathBuf::from("/tmp/logs")
    );
    let executor = ExecutorSettings::resolve(&ExecutorArgs::default(), &f).unwrap();
    assert_eq!(executor.admin_addresses, vec!["http://a"]);
    assert_eq!(
        executor.local.log_path,
        std::path::PathBuf::from("/tmp/exec")
    );
    assert_eq!(
        resolve_migrate(&MigrateArgs::default(), &f).unwrap(),
        "sqlite://./x.db"
    );
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
    let s = AdminSettings::resolve(&AdminArgs::default(), &sources).unwrap();
    assert_eq!(s.timezone, chrono_tz::Europe::Berlin);
    assert_eq!(s.log_retention_days, 9);
    let args = AdminArgs {
        timezone: Some("UTC".into()),
        ..Default::default()
    };
    assert_eq!(
        AdminSettings::resolve(&args, &sources).unwrap().timezone,
        chrono_tz::UTC
    );

    // a blank value unsets its key: the default applies, not the file's value
    let sources = env(&[("JOBWHEEL_LOG_RETENTION_DAYS", " ")]);
    let s = AdminSettings::resolve(&AdminArgs::default(), &sources).unwrap();
    assert_eq!(s.log_retention_days, 30);

    let sources = env(&[("JOBWHEEL_LOG_RETENTION_DAYS", "-1")]);
    let err = AdminSettings::resolve(&AdminArgs::default(), &sources)
        .unwrap_err()
        .0;
    assert_eq!(
        err,
        "invalid JOBWHEEL_LOG_RETENTION_DAYS '-1': expected a whole number from 0 to 36500"
    );
    let sources = env(&[
        ("JOBWHEEL_ADMIN_ADDRESSES", "http://a, http://b"),
        ("JOBWHEEL_INSECURE", "yes"),
    ]);
    let s = ExecutorSettings::resolve(&ExecutorArgs::default(), &sources).unwrap();
    assert_eq!(s.admin_addresses, vec!["http://a", "http://b"]);
    assert!(s.insecure);
}
