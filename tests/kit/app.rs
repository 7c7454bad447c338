//! An admin for a test: on a fresh database (or one the test prepared), on 127.0.0.1 port 0,
//! with a REST client already logged in as `admin` and the executors' token at hand.

use actix_web::http::Method;
use clap::{Args, Command};
use jobwheel::actors::monitor::MonitorSettings;
use jobwheel::config::{AdminSettings, LocalExecutorSettings, Sources};
use jobwheel::startup::{Admin, AdminActors};
use jobwheel::store::{Backend, Store};
use serde_json::{json, Value};

use super::api::{Api, Resp};
use super::db::TestDb;

/// Password of the `admin` user of every test admin.
pub const ADMIN_PASSWORD: &str = "admin-pass-123";

type SettingsEdit = Box<dyn FnOnce(&mut AdminSettings)>;
type MonitorsEdit = Box<dyn FnOnce(&mut MonitorSettings)>;

/// How to start a [`TestApp`].
pub struct AppBuilder {
    backend: Backend,
    db: Option<TestDb>,
    flags: Vec<String>,
    settings: Vec<SettingsEdit>,
    monitors: Option<MonitorsEdit>,
    standalone: bool,
}

impl AppBuilder {
    /// Standalone mode: the admin with its in-process executor (`jobwheel-local`, served under
    /// `/executor/`, running scripts) and the demo job; run logs go to a temporary folder.
    pub fn standalone(mut self) -> Self {
        self.standalone = true;
        self
    }

    /// The executors' token (default: the one the admin generates).
    pub fn token(mut self, token: &str) -> Self {
        self.flags
            .extend(["--access-token".to_string(), token.to_string()]);
        self
    }

    /// Runs on a database the test already prepared (monitors find its rows at their first
    /// pass).
    pub fn on(mut self, db: TestDb) -> Self {
        self.backend = db.backend();
        self.db = Some(db);
        self
    }

    /// Changes the resolved settings.
    pub fn settings(mut self, edit: impl FnOnce(&mut AdminSettings) + 'static) -> Self {
        self.settings.push(Box::new(edit));
        self
    }

    /// Changes the monitors' settings (periods, timeouts).
    pub fn monitors(mut self, edit: impl FnOnce(&mut MonitorSettings) + 'static) -> Self {
        self.monitors = Some(Box::new(edit));
        self
    }

    /// Starts the admin, or `None` when the backend is not configured.
    pub async fn start(self) -> Option<TestApp> {
        let _ = env_logger::builder().is_test(true).try_init();
        let db = match self.db {
            Some(db) => db,
            None => TestDb::create(self.backend).await?,
        };
        let flags = [
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &db.url,
            "--timezone",
            "UTC",
        ];
        let flags = [&flags[..], &["--admin-password", ADMIN_PASSWORD]].concat();
        let mut settings = admin_settings(&[&flags[..], &strs(&self.flags)].concat());
        for edit in self.settings {
            edit(&mut settings);
        }
        let logs = match self.standalone {
            true => Some(tempfile::tempdir().expect("a folder for run logs")),
            false => None,
        };
        let admin = match (self.monitors, &logs) {
            (_, Some(dir)) => {
                let local = LocalExecutorSettings {
                    log_path: dir.path().to_path_buf(),
                    ..LocalExecutorSettings::default()
                };
                Admin::build_standalone(&settings, &local).await
            }
            (Some(edit), None) => {
                let mut monitors = MonitorSettings::from_admin(&settings);
                edit(&mut monitors);
                Admin::build_with_monitors(&settings, monitors).await
            }
            (None, None) => Admin::build(&settings).await,
        }
        .expect("admin starts");
        let base = format!("http://127.0.0.1:{}", admin.port());
        let token = admin.access_token().to_string();
        let actors = admin.actors().clone();
        let admin_store = admin.store().clone();
        actix_web::rt::spawn(admin.run_until_stopped());
        let api = Api::new(&base);
        api.set_executor_token(Some(&token));
        let res = api.login("admin", ADMIN_PASSWORD).await;
        assert_eq!(res.status, 200, "admin login: {}", res.body);
        Some(TestApp {
            base,
            token,
            api,
            store: db.store.clone(),
            actors,
            settings,
            admin_store,
            db,
            _logs: logs,
        })
    }
}

/// The admin's settings from `flags` (as typed after `jobwheel admin`) and the defaults.
pub fn admin_settings(flags: &[&str]) -> AdminSettings {
    let args = std::iter::once("admin").chain(flags.iter().copied());
    let matches = AdminSettings::augment_args(Command::new("admin")).get_matches_from(args);
    AdminSettings::resolve(&matches, &Sources::default()).expect("test settings")
}

fn strs(strings: &[String]) -> Vec<&str> {
    strings.iter().map(String::as_str).collect()
}

/// Another admin of the same cluster.
pub struct OtherAdmin {
    /// Base URL.
    pub base: String,
    /// Its actors.
    pub actors: AdminActors,
}

/// A running admin and a client logged in as `admin`.
pub struct TestApp {
    /// Base URL, `http://127.0.0.1:PORT`.
    pub base: String,
    /// The executors' access token.
    pub token: String,
    /// Client with the admin's session.
    pub api: Api,
    /// The test database (for set-up the API does not offer, and for checks).
    pub store: Store,
    /// The admin's actors.
    pub actors: AdminActors,
    settings: AdminSettings,
    admin_store: Store,
    db: TestDb,
    _logs: Option<tempfile::TempDir>,
}

impl TestApp {
    /// How to start one on `backend`.
    pub fn builder(backend: Backend) -> AppBuilder {
        AppBuilder {
            backend,
            db: None,
            flags: Vec::new(),
            settings: Vec::new(),
            monitors: None,
            standalone: false,
        }
    }

    /// An admin with the defaults on a fresh database.
    pub async fn start(backend: Backend) -> Option<TestApp> {
        Self::builder(backend).start().await
    }

    /// The database URL (for a second admin, or a raw connection).
    pub fn db_url(&self) -> &str {
        &self.db.url
    }

    /// A second admin on the same database and settings (a cluster member), with its own
    /// monitor settings when given.
    pub async fn another_admin(&self, monitors: Option<MonitorSettings>) -> OtherAdmin {
        let admin = match monitors {
            Some(m) => Admin::build_with_monitors(&self.settings, m).await,
            None => Admin::build(&self.settings).await,
        }
        .expect("second admin starts");
        let base = format!("http://127.0.0.1:{}", admin.port());
        let actors = admin.actors().clone();
        actix_web::rt::spawn(admin.run_until_stopped());
        OtherAdmin { base, actors }
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &AdminSettings {
        &self.settings
    }

    /// A new client without a session.
    pub fn anonymous(&self) -> Api {
        Api::new(&self.base)
    }

    /// A client logged in as a new normal user (role USER) who may use `groups`; the
    /// password is `<username>-pass-1`.
    pub async fn normal_user(&self, username: &str, groups: &[i64]) -> Api {
        let password = format!("{username}-pass-1");
        self.store
            .insert_user(&jobwheel::model::User {
                id: 0,
                username: username.into(),
                password_hash: jobwheel::password::hash_password(&password).unwrap(),
                role: jobwheel::model::Role::User,
                permission: groups.iter().map(|g| *g as i32).collect(),
            })
            .await
            .unwrap();
        let client = self.anonymous();
        let res = client.login(username, &password).await;
        assert_eq!(res.status, 200, "log in as {username}: {}", res.body);
        client
    }

    /// Creates a group through the API and returns its id.
    pub async fn group(&self, app_name: &str) -> i64 {
        let res = self
            .api
            .create_group(json!({"appName": app_name, "title": format!("{app_name} title")}))
            .await;
        assert_eq!(res.status, 201, "create group: {}", res.body);
        res.id()
    }

    /// Creates a BEAN job with a daily cron in `group` and returns its id.
    pub async fn job(&self, group: i64, desc: &str) -> i64 {
        let res = self
            .api
            .create_job(json!({
                "jobGroup": group,
                "jobDesc": desc,
                "scheduleType": "CRON",
                "scheduleConf": "0 0 3 * * ?",
                "executorHandler": "demoJobHandler",
            }))
            .await;
        assert_eq!(res.status, 201, "create job: {}", res.body);
        res.id()
    }

    /// POSTs to the executor API with `token` (or none), as an executor would; the envelope.
    pub async fn executor_post(&self, path: &str, body: Value, token: Option<&str>) -> Value {
        let client = self.anonymous();
        client.set_executor_token(token);
        let res: Resp = client.call_with(Method::POST, path, Some(body), &[]).await;
        assert_eq!(res.status, 200, "the executor API answers HTTP 200");
        res.body
    }

    /// Closes the admin's database pool: from now on every query of the admin fails.
    pub async fn close_admin_database(&self) {
        self.admin_store.close().await;
    }

    /// Stops using the database and removes it.
    pub async fn finish(self) {
        self.admin_store.close().await;
        self.db.drop_db().await;
    }
}
