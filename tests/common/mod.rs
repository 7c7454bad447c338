//! Test databases: a fresh, private database per test on each backend.
//!
//! SQLite always runs. PostgreSQL and MySQL run when `JOBWHEEL_TEST_PG_URL` /
//! `JOBWHEEL_TEST_MYSQL_URL` name a server database; each test gets its own schema
//! (PostgreSQL) or database (MySQL) there, so tests run in parallel. With `CI` set, a missing
//! or unreachable server is a failure, not a skip.

#![allow(dead_code)]

use std::path::PathBuf;

use jobwheel::store::{Backend, PoolSettings, Store};
use sqlx::Connection;

/// Environment variable with the PostgreSQL test server URL.
pub const PG_ENV: &str = "JOBWHEEL_TEST_PG_URL";
/// Environment variable with the MySQL/MariaDB test server URL.
pub const MYSQL_ENV: &str = "JOBWHEEL_TEST_MYSQL_URL";

/// A private database for one test, dropped by [`TestDb::drop_db`].
pub struct TestDb {
    /// URL that reaches exactly this test's database.
    pub url: String,
    /// Connected, migrated store.
    pub store: Store,
    backend: Backend,
    server_url: String,
    name: String,
    _dir: Option<tempfile::TempDir>,
}

fn unique_name() -> String {
    format!("jw_{}", uuid::Uuid::new_v4().simple())
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

/// Replaces the database name (the URL path) of a server URL.
fn with_database(url: &str, db: &str) -> String {
    let mut parsed = url::Url::parse(url).expect("test server URL must be a valid URL");
    parsed.set_path(&format!("/{db}"));
    parsed.to_string()
}

impl TestDb {
    /// A fresh migrated database on `backend`, or `None` when that backend is not configured.
    pub async fn create(backend: Backend) -> Option<TestDb> {
        let server_url = server_url(backend)?;
        let name = unique_name();
        let (url, dir) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let path: PathBuf = dir.path().join("test.db");
                (format!("sqlite://{}", path.display()), Some(dir))
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&server_url)
                    .await
                    .unwrap_or_else(|e| panic!("cannot reach PostgreSQL at {server_url}: {e}"));
                sqlx::query(&format!("CREATE SCHEMA {name}"))
                    .execute(&mut conn)
                    .await
                    .expect("create test schema");
                conn.close().await.ok();
                let sep = if server_url.contains('?') { '&' } else { '?' };
                (
                    format!("{server_url}{sep}options=-c%20search_path%3D{name}"),
                    None,
                )
            }
            Backend::MySql => {
                let mut conn = sqlx::MySqlConnection::connect(&server_url)
                    .await
                    .unwrap_or_else(|e| panic!("cannot reach MySQL at {server_url}: {e}"));
                sqlx::query(&format!("CREATE DATABASE {name} CHARACTER SET utf8mb4"))
                    .execute(&mut conn)
                    .await
                    .expect("create test database");
                conn.close().await.ok();
                (with_database(&server_url, &name), None)
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
            server_url,
            name,
            _dir: dir,
        })
    }

    /// Closes the pool and removes the schema/database (SQLite's folder goes with `self`).
    pub async fn drop_db(self) {
        self.store.close().await;
        match self.backend {
            Backend::Sqlite => {}
            Backend::Postgres => {
                if let Ok(mut conn) = sqlx::PgConnection::connect(&self.server_url).await {
                    let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name))
                        .execute(&mut conn)
                        .await;
                }
            }
            Backend::MySql => {
                if let Ok(mut conn) = sqlx::MySqlConnection::connect(&self.server_url).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {}", self.name))
                        .execute(&mut conn)
                        .await;
                }
            }
        }
    }
}

/// Runs `body` against a fresh database of `backend` (skipped when not configured).
pub async fn with_db<F, Fut>(backend: Backend, body: F)
where
    F: FnOnce(TestDb) -> Fut,
    Fut: std::future::Future<Output = TestDb>,
{
    if let Some(db) = TestDb::create(backend).await {
        let db = body(db).await;
        db.drop_db().await;
    }
}

/// Defines one test per backend (`name::sqlite`, `name::postgres`, `name::mysql`) sharing a body.
#[macro_export]
macro_rules! all_backends {
    ($name:ident, |$db:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body($db: $crate::common::TestDb) -> $crate::common::TestDb {
                $body
                $db
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                $crate::common::with_db(jobwheel::store::Backend::Sqlite, body).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                $crate::common::with_db(jobwheel::store::Backend::Postgres, body).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn mysql() {
                $crate::common::with_db(jobwheel::store::Backend::MySql, body).await;
            }
        }
    };
}
