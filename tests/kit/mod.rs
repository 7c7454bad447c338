//! What every integration test binary shares: test databases, an admin with a logged-in REST
//! client, a fake executor, the one wait helper, and the one per-backend macro.

#![allow(dead_code, unused_imports)]

pub mod api;
pub mod app;
pub mod db;
pub mod fake_executor;
pub mod idle_reuse;
pub mod processes;
pub mod wait;
pub mod worker;

pub use api::{Api, Page, Resp};
pub use app::{TestApp, ADMIN_PASSWORD};
pub use db::TestDb;
pub use fake_executor::{Behaviour, FakeExecutor};
pub use wait::{expect_within, poll_for, wait_for};

/// One test per backend (`name::sqlite`, `name::postgres`, `name::mysql`) sharing a body; a
/// backend that is not configured is skipped (a failure under `CI`).
///
/// - `backends!(db: name, |db| { .. })`: the body gets a fresh [`TestDb`].
/// - `backends!(app: name, |app| { .. })`: the body gets `&TestApp` (an admin with defaults).
/// - `backends!(app: name, |b| b.token("x"), |app| { .. })`: the same, built by the closure.
/// - `backends!(run: function)`: calls `async fn function(Backend)`.
#[macro_export]
macro_rules! backends {
    (db: $name:ident, |$db:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body($db: $crate::kit::TestDb) -> $crate::kit::TestDb {
                $body
                $db
            }

            async fn run(backend: jobwheel::store::Backend) {
                if let Some(db) = $crate::kit::TestDb::create(backend).await {
                    body(db).await.drop_db().await;
                }
            }

            $crate::backends!(@each run);
        }
    };
    (app: $name:ident, |$app:ident| $body:block) => {
        $crate::backends!(app: $name, |b| b, |$app| $body);
    };
    (app: $name:ident, |$b:ident| $build:expr, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn body($app: &$crate::kit::TestApp) $body

            async fn run(backend: jobwheel::store::Backend) {
                let $b = $crate::kit::TestApp::builder(backend);
                if let Some(app) = $build.start().await {
                    body(&app).await;
                    app.finish().await;
                }
            }

            $crate::backends!(@each run);
        }
    };
    (run: $function:ident) => {
        mod $function {
            #[allow(unused_imports)]
            use super::*;

            async fn run(backend: jobwheel::store::Backend) {
                super::$function(backend).await;
            }

            $crate::backends!(@each run);
        }
    };
    (@each $run:ident) => {
        #[actix_web::test]
        async fn sqlite() {
            $run(jobwheel::store::Backend::Sqlite).await;
        }

        #[actix_web::test]
        async fn postgres() {
            $run(jobwheel::store::Backend::Postgres).await;
        }

        #[actix_web::test]
        async fn mysql() {
            $run(jobwheel::store::Backend::MySql).await;
        }
    };
}

/// True while a process with this pid exists (zombies excluded).
pub fn alive(pid: i32) -> bool {
    // SAFETY: kill(pid, 0) only checks existence.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    if !exists {
        return false;
    }
    // a reaped-later zombie does not run; treat it as gone
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .map(|rest| rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}
