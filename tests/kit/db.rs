//! Test databases: a fresh, private database per test on each backend, made with the store's
//! scratch databases (a schema on PostgreSQL, a database on MySQL, a file for SQLite) and dropped
//! when the test ends, even when it fails.
//!
//! SQLite always runs. PostgreSQL and MySQL run when `JOBWHEEL_TEST_PG_URL` /
//! `JOBWHEEL_TEST_MYSQL_URL` name a server database; with `CI` set, a missing or unreachable
//! server is a failure, not a skip.

use std::path::PathBuf;

use jobwheel::model::{NewRunRow, TriggerType};
use jobwheel::store::{Backend, PoolSettings, Store};

/// Environment variable with the PostgreSQL test server URL.
pub const PG_ENV: &str = "JOBWHEEL_TEST_PG_URL";
/// Environment variable with the MySQL/MariaDB test server URL.
pub const MYSQL_ENV: &str = "JOBWHEEL_TEST_MYSQL_URL";

/// A private database for one test; dropped by [`TestDb::drop_db`], or by its drop guard.
pub struct TestDb {
    /// URL that reaches exactly this test's database.
    pub url: String,
    /// Connected, migrated store.
    pub store: Store,
    backend: Backend,
    /// The server and the scratch database's name, until it is dropped.
    scratch: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

/// A log row to insert for a cron fire of `job_id` (in `job_group`) scheduled for and triggered
/// at `at`, epoch ms, before any executor is called.
pub fn cron_log(job_group: i32, job_id: i32, at: i64) -> NewRunRow {
    NewRunRow {
        trigger_type: TriggerType::Cron,
        schedule_time: at,
        ..manual_log(job_group, job_id, at)
    }
}

/// A log row to insert for a manual trigger of `job_id` (in `job_group`) at `at`, epoch ms
/// (schedule time 0), before any executor is called.
pub fn manual_log(job_group: i32, job_id: i32, at: i64) -> NewRunRow {
    NewRunRow {
        job_group,
        job_id,
        trigger_type: TriggerType::Manual,
        schedule_time: 0,
        trigger_time: at,
        executor_handler: None,
        executor_param: None,
        executor_sharding_param: None,
        executor_fail_retry_count: 0,
        trigger_msg: None,
    }
}

/// The server URL for a backend, or `None` to skip; panics under CI when it is missing.
fn server_url(backend: Backend) -> Option<String> {
    let var = match backend {
        Backend::Sqlite => return Some(String::new()),
        Backend::Postgres => PG_ENV,
        Backend::MySql => MYSQL_ENV,
    };
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!(
                "CI is set but {var} is not: the {} tests cannot run",
                backend.name()
            )
        }
        _ => {
            eprintln!("skipping {} test: {var} is not set", backend.name());
            None
        }
    }
}

impl TestDb {
    /// A fresh migrated database on `backend`, or `None` when that backend is not configured.
    pub async fn create(backend: Backend) -> Option<TestDb> {
        let server = server_url(backend)?;
        let (url, scratch, dir) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let path: PathBuf = dir.path().join("test.db");
                (format!("sqlite://{}", path.display()), None, Some(dir))
            }
            _ => {
                let name = format!("jw_{}", uuid::Uuid::new_v4().simple());
                let url = jobwheel_scratch::create_scratch_database(&server, &name)
                    .await
                    .unwrap_or_else(|e| panic!("cannot create a test database on {server}: {e}"));
                (url, Some((server, name)), None)
            }
        };
        let settings = PoolSettings {
            max_connections: 5,
            ..PoolSettings::default()
        };
        let store = Store::connect(&url, &settings)
            .await
            .unwrap_or_else(|e| panic!("connect to test database {url}: {e}"));
        store.migrate().await.expect("migrate test database");
        Some(TestDb {
            url,
            store,
            backend,
            scratch,
            _dir: dir,
        })
    }

    /// Which backend it is on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Closes the pool and removes the database (SQLite's folder goes with `self`).
    pub async fn drop_db(mut self) {
        self.store.close().await;
        if let Some((server, name)) = self.scratch.take() {
            let _ = jobwheel_scratch::drop_scratch_database(&server, &name).await;
        }
    }
}

impl Drop for TestDb {
    /// A test that failed before [`TestDb::drop_db`] still leaves no database behind: the drop
    /// runs on a thread and runtime of its own, since this may run inside async code. The wait
    /// is bounded: a transaction the failed test left open holds the tables until its pool,
    /// further up the unwinding stack, is dropped, and the drop goes on once it is.
    fn drop(&mut self) {
        if let Some((server, name)) = self.scratch.take() {
            let (done, dropped) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    let _ = rt.block_on(jobwheel_scratch::drop_scratch_database(&server, &name));
                }
                let _ = done.send(());
            });
            let _ = dropped.recv_timeout(std::time::Duration::from_secs(10));
        }
    }
}
