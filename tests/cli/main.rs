//! The `jobwheel` binary as a user runs it: bad settings, migrate, start/stop, health.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

mod import_xxl;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use jobwheel::store::Backend;
use kit::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_jobwheel");

fn jobwheel(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("run jobwheel")
}

/// The one stderr line of a failed start, checked to be a single line without a panic.
fn single_error_line(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure, got {:?}",
        out.status
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line, got:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    lines[0].to_string()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_healthy(port: u16, timeout: Duration) -> reqwest_like::Status {
    let started = Instant::now();
    loop {
        if let Some(status) = reqwest_like::get_status(port, "/healthz").await {
            return status;
        }
        assert!(
            started.elapsed() < timeout,
            "admin did not answer within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A minimal HTTP GET over a raw socket, so the test needs no HTTP client crate.
mod reqwest_like {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Status code and body of a response.
    pub struct Status {
        pub code: u16,
        pub body: String,
    }

    pub async fn get_status(port: u16, path: &str) -> Option<Status> {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.ok()?;
        let text = String::from_utf8_lossy(&raw).to_string();
        let code = text.split_whitespace().nth(1)?.parse().ok()?;
        let body = text
            .split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        Some(Status { code, body })
    }
}

fn interrupt(child: &Child) {
    // SIGINT, as Ctrl-C sends it
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("send SIGINT");
    assert!(status.success());
}

fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            panic!("process did not stop within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn version_and_help_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = jobwheel(dir.path(), &["--version"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("jobwheel "));
    let out = jobwheel(dir.path(), &["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for mode in ["standalone", "admin", "executor", "migrate"] {
        assert!(help.contains(mode), "help lacks {mode}:\n{help}");
    }
    let out = jobwheel(dir.path(), &["admin", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--bind",
        "--database-url",
        "--access-token",
        "--admin-password",
        "--log-retention-days",
        "--trigger-pool-fast-max",
        "--trigger-pool-slow-max",
        "--timezone",
        "JOBWHEEL_BIND",
    ] {
        assert!(help.contains(flag), "admin help lacks {flag}:\n{help}");
    }
    let out = jobwheel(dir.path(), &["executor", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--admin-addresses",
        "--app-name",
        "--address",
        "--ip",
        "--port",
        "--access-token",
        "--log-path",
        "--log-retention-days",
        "--idle-timeout-secs",
        "--admin-protocol",
    ] {
        assert!(help.contains(flag), "executor help lacks {flag}:\n{help}");
    }
}

#[test]
fn a_bogus_database_scheme_is_one_line_and_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = jobwheel(dir.path(), &["admin", "--database-url", "bogus://x"]);
    let line = single_error_line(&out);
    assert!(
        line.contains("'bogus'") && line.contains("--database-url"),
        "{line}"
    );
    assert!(!dir.path().join("data").exists(), "nothing may be created");
}

#[test]
fn bad_values_end_with_one_line_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["executor", "--access-token", "t0k3n", "--port", "70000"],
            "70000",
        ),
        (&["executor"], "--access-token"),
        (&["executor", "--access-token", "default_token"], "default"),
        (&["admin", "--access-token", "default_token"], "default"),
        (
            &["executor", "--insecure", "--bind", "127.0.0.1:9"],
            "127.0.0.1:9",
        ),
        (&["admin", "--bind", "0.0.0.0:99999"], "99999"),
        (&["admin", "--timezone", "Mars/Base"], "Mars/Base"),
        (&["admin", "--log-retention-days", "-3"], "-3"),
        (
            &[
                "executor",
                "--access-token",
                "t0k3n",
                "--admin-protocol",
                "v9",
            ],
            "v9",
        ),
        (&["--config", "missing.toml", "admin"], "missing.toml"),
        (&["migrate", "--database-url", "oracle://x"], "'oracle'"),
    ];
    for (args, needle) in cases {
        let out = jobwheel(dir.path(), args);
        let line = single_error_line(&out);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
    // environment variables are validated the same way
    let out = Command::new(BIN)
        .args(["executor"])
        .env("JOBWHEEL_ACCESS_TOKEN", "t0k3n")
        .env("JOBWHEEL_PORT", "65536")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(single_error_line(&out).contains("65536"));
}

#[test]
fn flags_before_a_subcommand_are_refused_but_environment_variables_work() {
    let dir = tempfile::tempdir().unwrap();
    let line = single_error_line(&jobwheel(dir.path(), &["--bind", "127.0.0.1:1", "admin"]));
    assert!(line.contains("--bind must follow the subcommand"), "{line}");
    // an environment variable reaches the subcommand (here: validated and refused by value)
    let out = Command::new(BIN)
        .args(["admin", "--bind", "127.0.0.1:0"])
        .env("JOBWHEEL_TIMEZONE", "Not/AZone")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(single_error_line(&out).contains("Not/AZone"));
}

#[test]
fn a_bad_config_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "bind = [\n").unwrap();
    let line = single_error_line(&jobwheel(dir.path(), &["--config", "bad.toml", "admin"]));
    assert!(line.contains("bad.toml") && line.contains("TOML"), "{line}");
    std::fs::write(dir.path().join("typo.toml"), "databse-url = 'x'\n").unwrap();
    let line = single_error_line(&jobwheel(dir.path(), &["--config", "typo.toml", "admin"]));
    assert!(line.contains("databse-url"), "{line}");
    std::fs::write(
        dir.path().join("port.toml"),
        "[admin]\nbind = '127.0.0.1:70000'\n",
    )
    .unwrap();
    let line = single_error_line(&jobwheel(dir.path(), &["--config", "port.toml", "admin"]));
    assert!(
        line.contains("port.toml") && line.contains("70000"),
        "{line}"
    );
}

#[test]
fn an_unwritable_data_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // a file where a folder must go fails even for root
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    let out = jobwheel(
        dir.path(),
        &[
            "admin",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            "sqlite://./blocker/sub/jobwheel.db",
        ],
    );
    let line = single_error_line(&out);
    assert!(line.contains("blocker"), "{line}");
}

#[test]
fn migrate_creates_the_sqlite_schema_twice_without_change() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let out = jobwheel(dir.path(), &["migrate"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("migrations applied (sqlite)"));
    }
    assert!(dir.path().join("data/jobwheel.db").exists());
}

async fn migrate_server_twice(backend: Backend) {
    let Some(db) = TestDb::create(backend).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // the test database is already migrated once by TestDb; run the CLI on top, twice
    for _ in 0..2 {
        let out = jobwheel(dir.path(), &["migrate", "--database-url", &db.url]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(db.store.count_jobs().await.unwrap(), 0);
    db.store.ping().await.unwrap();
    db.drop_db().await;
}

#[tokio::test]
async fn migrate_on_postgres_is_idempotent() {
    migrate_server_twice(Backend::Postgres).await;
}

#[tokio::test]
async fn migrate_on_mysql_is_idempotent() {
    migrate_server_twice(Backend::MySql).await;
}

#[actix_web::test]
async fn standalone_starts_runs_the_demo_job_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(BIN)
        .args(["--bind", &format!("127.0.0.1:{port}")])
        .current_dir(dir.path())
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // the generated password is printed once on stdout
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let printed = |label: &str| {
        rx.recv_timeout(Duration::from_secs(30))
            .ok()
            .and_then(|line| {
                line.split(label)
                    .nth(1)
                    .map(|p| p.split_whitespace().next().unwrap_or("").to_string())
            })
    };
    let password = printed("password: ").expect("the first start prints the admin password");
    let token = printed("access token: ").expect("and the generated access token");
    assert!(token.len() >= 22, "at least 128 bits: {token}");
    let status = wait_healthy(port, Duration::from_secs(30)).await;
    assert_eq!(status.code, 200, "{}", status.body);
    assert!(status.body.contains("UP"), "{}", status.body);
    assert!(dir.path().join("data/jobwheel.db").exists());

    // the demo job (every 10 s) runs on the in-process executor; its result shows in the API
    let base = format!("http://127.0.0.1:{port}/api/v1");
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);
    let res = client
        .post(format!("{base}/auth/login"))
        .send_json(&serde_json::json!({"username": "admin", "password": password}))
        .await
        .unwrap();
    assert_eq!(
        res.status().as_u16(),
        200,
        "login with the printed password"
    );
    let cookie = res
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("session cookie")
        .to_string();
    let started = Instant::now();
    let demo_ok = loop {
        let mut res = client
            .get(format!("{base}/logs?status=success"))
            .insert_header(("Cookie", cookie.as_str()))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let body: serde_json::Value = res.json().await.unwrap();
        // the executor's result can be stored a moment before the trigger's own outcome
        // (address, code), which is written in batches: wait for a row with both
        let both = body["items"].as_array().and_then(|items| {
            items
                .iter()
                .find(|l| l["triggerCode"] == 200 && l["handleCode"] == 200)
                .cloned()
        });
        if let Some(log) = both {
            break log;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no successful demo run within 15 s: {body}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(demo_ok["executorHandler"], "demoJobHandler");
    assert_eq!(demo_ok["handleCode"], 200);
    assert!(demo_ok["executorAddress"]
        .as_str()
        .unwrap_or("")
        .ends_with("/executor/"));

    // the in-process executor runs nothing for a caller without the generated token
    let script = serde_json::json!({"jobId": 77, "executorHandler": "", "glueType": "GLUE_SHELL",
        "glueSource": "id", "glueUpdatetime": 1, "logId": 1, "logDateTime": 1,
        "broadcastIndex": 0, "broadcastTotal": 1});
    let executor_run = format!("http://127.0.0.1:{port}/executor/run");
    for sent in [None, Some("guess")] {
        let mut req = client.post(&executor_run);
        if let Some(t) = sent {
            req = req.insert_header(("XXL-JOB-ACCESS-TOKEN", t));
        }
        let mut res = req.send_json(&script).await.unwrap();
        let v: serde_json::Value = res.json().await.unwrap();
        assert_eq!(v["msg"], "The access token is wrong.", "{v}");
    }
    let mut res = client
        .post(format!("http://127.0.0.1:{port}/executor/beat"))
        .insert_header(("XXL-JOB-ACCESS-TOKEN", token.as_str()))
        .send()
        .await
        .unwrap();
    let v: serde_json::Value = res.json().await.unwrap();
    assert_eq!(v["code"], 200, "the printed token opens it: {v}");

    interrupt(&child);
    let exit = wait_exit(&mut child, Duration::from_secs(20));
    assert!(exit.success(), "clean stop expected, got {exit:?}");

    // a second start on the same folder prints neither secret again
    let mut again = Command::new(BIN)
        .args(["--bind", &format!("127.0.0.1:{port}")])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(wait_healthy(port, Duration::from_secs(30)).await.code, 200);
    interrupt(&again);
    assert!(wait_exit(&mut again, Duration::from_secs(20)).success());
    let mut out = String::new();
    std::io::Read::read_to_string(&mut again.stdout.take().unwrap(), &mut out).unwrap();
    assert!(!out.contains(&token) && !out.contains(&password), "{out}");
}

/// The long flags `jobwheel MODE --help` lists.
fn flags_of(mode: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let help = String::from_utf8(jobwheel(dir.path(), &[mode, "--help"]).stdout).unwrap();
    let longs = help
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("--"))
        .map(|w| w.trim_end_matches([',', '.', ']', ')']).to_string());
    let mut flags: Vec<String> = longs
        .filter(|f| !f.is_empty() && !matches!(f.as_str(), "help" | "version" | "config"))
        .collect();
    flags.sort();
    flags.dedup();
    assert!(
        !flags.is_empty(),
        "no flags in `jobwheel {mode} --help`:\n{help}"
    );
    flags
}

/// Waits until something listens on `port` of 127.0.0.1.
fn wait_listening(child: &mut Child, port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("stopped before listening: {status:?}");
        }
        assert!(started.elapsed() < Duration::from_secs(30), "not listening");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_sample_config_names_every_flag_and_each_mode_starts_with_it() {
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/packaging/jobwheel.toml"
    ))
    .unwrap();
    let mut documented = 0;
    for mode in ["admin", "executor", "standalone", "migrate"] {
        for flag in flags_of(mode) {
            documented += 1;
            assert!(
                sample.contains(&format!("\n# {flag} = ")),
                "packaging/jobwheel.toml does not document --{flag} of {mode}"
            );
        }
    }
    assert!(documented > 30, "only {documented} flags found");
    // every documented value, uncommented, is one jobwheel accepts
    let uncommented: String = sample
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(setting)
                if setting
                    .split_once(" = ")
                    .is_some_and(|(k, _)| !k.contains(' ')) =>
            {
                setting
            }
            _ => line,
        })
        .map(|line| format!("{line}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("jobwheel.toml");
    std::fs::write(&config, uncommented).unwrap();
    let config = config.to_str().unwrap();

    let port = free_port();
    let db = format!("sqlite://{}/jobwheel.db", dir.path().display());
    let bind = format!("127.0.0.1:{port}");
    let port_text = port.to_string();
    let logs = dir.path().join("joblogs");
    let runs: [Vec<&str>; 2] = [
        vec!["admin", "--bind", &bind, "--database-url", &db],
        vec!["executor", "--bind", "127.0.0.1", "--port", &port_text],
    ];
    for args in runs {
        let mut child = Command::new(BIN)
            .args(["--config", config])
            .args(&args)
            .env("JOBWHEEL_LOG_PATH", &logs)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(&mut child, port);
        interrupt(&child);
        let exit = wait_exit(&mut child, Duration::from_secs(20));
        assert!(
            exit.success(),
            "{args:?} with the sample settings: {exit:?}"
        );
    }
}
