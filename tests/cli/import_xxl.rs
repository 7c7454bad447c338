//! `jobwheel import-xxl` on XXL-JOB 2.4 and 3.x databases built from the fixtures on the
//! MySQL/MariaDB test server, into a fresh target on every backend.

use std::collections::HashSet;
use std::process::{Command, Output};
use std::time::Duration;

use jobwheel::model::{
    AddressType, BlockStrategy, GlueType, JobInfo, MisfireStrategy, Role, RouteStrategy,
    ScheduleType, TriggerType,
};
use jobwheel::password::RESET_REQUIRED;
use jobwheel::store::{Backend, Store};
use sqlx::{Connection, Row};

use crate::kit::db::MYSQL_ENV as MYSQL_ENV_NAME;
use crate::kit::{expect_within, Behaviour, FakeExecutor, TestApp, TestDb};

const BIN: &str = env!("CARGO_BIN_EXE_jobwheel");
const FIXTURE_24: &str = include_str!("../fixtures/xxl_job_2_4.sql");
const FIXTURE_3X: &str = include_str!("../fixtures/xxl_job_3_x.sql");

/// An XXL-JOB database on the MySQL test server, dropped when the value goes.
struct XxlDb {
    server: String,
    name: String,
    url: String,
}

impl XxlDb {
    /// A new database filled by `fixture`; `None` when no MySQL server is configured (a
    /// failure under CI).
    async fn create(fixture: &str) -> Option<XxlDb> {
        let server = match std::env::var(MYSQL_ENV_NAME) {
            Ok(url) if !url.trim().is_empty() => url,
            _ if std::env::var_os("CI").is_some() => {
                panic!("CI is set but {MYSQL_ENV_NAME} is not: the XXL-JOB import cannot be tested")
            }
            _ => {
                eprintln!("skipping XXL-JOB import test: {MYSQL_ENV_NAME} is not set");
                return None;
            }
        };
        let name = format!("jw_xxl_{}", uuid::Uuid::new_v4().simple());
        let url = jobwheel_scratch::create_scratch_database(&server, &name)
            .await
            .expect("create the XXL-JOB database");
        let db = XxlDb { server, name, url };
        db.exec(fixture).await;
        Some(db)
    }

    async fn exec(&self, sql: &str) {
        let mut conn = sqlx::MySqlConnection::connect(&self.url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
        conn.close().await.unwrap();
    }

    /// A `DATETIME` as epoch ms, read the way the importer reads XXL-JOB's times.
    async fn epoch_ms(&self, datetime: &str) -> i64 {
        let mut conn = sqlx::MySqlConnection::connect(&self.url).await.unwrap();
        let row =
            sqlx::query("SELECT CAST(UNIX_TIMESTAMP(CAST(? AS DATETIME)) * 1000 AS SIGNED) AS t")
                .bind(datetime)
                .fetch_one(&mut conn)
                .await
                .unwrap();
        conn.close().await.unwrap();
        row.get("t")
    }
}

impl Drop for XxlDb {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                let _ = rt.block_on(jobwheel_scratch::drop_scratch_database(&server, &name));
            }
        })
        .join();
    }
}

/// Runs `jobwheel import-xxl` with `args`.
fn import(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("import-xxl")
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("JOBWHEEL_DATABASE_URL")
        .env_remove("JOBWHEEL_CONFIG")
        .output()
        .expect("run jobwheel import-xxl")
}

/// Stdout of a successful run.
fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "import failed: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Stderr of a run that ended with exit code 2.
fn bad_input(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit code 2:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "expected the line {line:?} in:\n{text}"
    );
}

async fn all_jobs(store: &Store) -> Vec<JobInfo> {
    let ids: Vec<i32> = (1..=200).collect();
    store.get_jobs(&ids).await.unwrap()
}

async fn xxl_24_is_imported_and_fires(backend: Backend) {
    let Some(xxl) = XxlDb::create(FIXTURE_24).await else {
        return;
    };
    let Some(target) = TestDb::create(backend).await else {
        return;
    };
    let store = target.store.clone();
    let args = [
        "--from",
        &xxl.url,
        "--database-url",
        &target.url,
        "--include-logs",
    ];

    // a dry run says what it would do and writes nothing
    let dry: Vec<&str> = args.iter().copied().chain(["--dry-run"]).collect();
    let out = succeeded(&import(&dry));
    has_line(&out, "jobs: 10 to create, 0 already present, 0 skipped");
    assert!(out.contains("dry run: nothing is written"), "{out}");
    assert_eq!(store.count_jobs().await.unwrap(), 0);
    assert!(store.list_groups().await.unwrap().is_empty());
    assert_eq!(store.count_users().await.unwrap(), 0);
    assert!(store.get_log(100).await.unwrap().is_none());

    let out = succeeded(&import(&args));
    has_line(&out, "groups: 3 created, 0 already present, 0 skipped");
    has_line(&out, "jobs: 10 created, 0 already present, 0 skipped");
    has_line(
        &out,
        "script versions: 3 created, 0 already present, 0 skipped",
    );
    has_line(&out, "users: 2 created, 0 already present, 0 skipped");
    has_line(&out, "run logs: 3 created, 0 already present, 1 skipped");
    has_line(&out, "  skipped 103: its job is not imported");
    has_line(&out, "  admin");
    has_line(&out, "  alice");

    // groups keep their ids and settings
    let manual = store.get_group(4).await.unwrap().expect("group 4");
    assert_eq!(manual.app_name, "manual-app");
    assert_eq!(manual.address_type, AddressType::Manual);
    assert_eq!(
        manual.address_list,
        vec!["http://10.0.0.1:9999/", "http://10.0.0.2:9999/"]
    );
    let sample = store.get_group(1).await.unwrap().expect("group 1");
    assert_eq!(
        (sample.title.as_str(), sample.address_type),
        ("示例执行器", AddressType::Auto)
    );
    assert_eq!(sample.access_token, None);

    // jobs keep their ids and every setting
    let jobs = all_jobs(&store).await;
    let ids: Vec<i32> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, vec![1, 2, 3, 5, 8, 13, 21, 34, 55, 89]);
    let routes: HashSet<RouteStrategy> = jobs.iter().map(|j| j.executor_route_strategy).collect();
    assert_eq!(routes.len(), RouteStrategy::ALL.len());
    let blocks: HashSet<_> = jobs.iter().map(|j| j.executor_block_strategy).collect();
    assert_eq!(blocks.len(), 3);
    let glues: HashSet<GlueType> = jobs.iter().map(|j| j.glue_type).collect();
    assert_eq!(glues.len(), 7, "every glue type of 2.4: {glues:?}");
    let schedules: HashSet<ScheduleType> = jobs.iter().map(|j| j.schedule_type).collect();
    assert_eq!(
        schedules,
        HashSet::from([
            ScheduleType::Cron,
            ScheduleType::FixRate,
            ScheduleType::None
        ])
    );
    let fire = &jobs[1];
    assert_eq!(fire.job_desc, "fires every second");
    assert_eq!(
        (fire.schedule_type, fire.schedule_conf.as_str()),
        (ScheduleType::FixRate, "1")
    );
    assert_eq!(fire.misfire_strategy, MisfireStrategy::FireOnceNow);
    assert_eq!(fire.executor_block_strategy, BlockStrategy::DiscardLater);
    assert_eq!(
        (fire.executor_timeout, fire.executor_fail_retry_count),
        (30, 2)
    );
    assert_eq!(fire.child_job_ids, vec![3, 5]);
    assert_eq!(
        (fire.trigger_status, fire.executor_param.as_str()),
        (1, "p=1")
    );
    let first = &jobs[0];
    assert_eq!(first.alarm_email, "ops@example.com");
    assert_eq!(first.schedule_conf, "0 0 0 * * ? *");
    assert_eq!(first.add_time, xxl.epoch_ms("2024-05-01 09:00:00").await);
    assert_eq!(first.update_time, xxl.epoch_ms("2024-05-02 09:00:00").await);
    assert_eq!(first.trigger_status, 0);
    let shell = &jobs[2];
    assert_eq!(shell.glue_type, GlueType::GlueShell);
    assert_eq!(shell.glue_source, "#!/bin/bash\necho v3");
    assert_eq!(
        shell.glue_updatetime,
        xxl.epoch_ms("2024-05-03 10:00:00").await
    );

    // script history keeps its ids and versions
    let history = store.list_glue_versions(3).await.unwrap();
    let versions: Vec<(i32, &str)> = history
        .iter()
        .map(|v| (v.id, v.glue_remark.as_str()))
        .collect();
    assert_eq!(versions, vec![(2, "second"), (1, "first")]);
    assert_eq!(history[1].glue_source, "#!/bin/bash\necho v1");
    assert_eq!(
        history[1].add_time,
        xxl.epoch_ms("2024-05-01 10:00:00").await
    );
    assert_eq!(store.list_glue_versions(5).await.unwrap()[0].id, 4);

    // users keep role and groups, without a password
    let alice = store
        .get_user_by_name("alice")
        .await
        .unwrap()
        .expect("alice");
    assert_eq!(
        (alice.role, alice.permission.clone()),
        (Role::User, vec![1, 4])
    );
    assert_eq!(alice.password_hash, RESET_REQUIRED);
    let admin = store
        .get_user_by_name("admin")
        .await
        .unwrap()
        .expect("admin");
    assert_eq!(admin.role, Role::Admin);

    // run logs keep ids, codes, messages and times
    let ok = store.get_log(100).await.unwrap().expect("log 100");
    assert_eq!((ok.job_id, ok.trigger_type), (1, TriggerType::Cron));
    assert_eq!((ok.trigger_code, ok.handle_code), (200, 200));
    assert_eq!(ok.handle_msg.as_deref(), Some("ok"));
    assert_eq!(ok.trigger_time, xxl.epoch_ms("2024-05-01 10:00:00").await);
    assert_eq!(ok.handle_time, xxl.epoch_ms("2024-05-01 10:00:01").await);
    let failed = store.get_log(101).await.unwrap().expect("log 101");
    assert_eq!(
        (failed.trigger_type, failed.handle_code),
        (TriggerType::Manual, 500)
    );
    assert_eq!(
        failed.alarm_status, 1,
        "XXL-JOB's own failures are not retried again"
    );
    let open = store.get_log(102).await.unwrap().expect("log 102");
    assert_eq!(open.trigger_type, TriggerType::Retry);
    assert_eq!(open.executor_sharding_param.as_deref(), Some("1/2"));
    assert_eq!((open.handle_code, open.alarm_status), (0, 0));
    assert!(store.get_log(103).await.unwrap().is_none());

    // new rows get ids after the imported ones (PostgreSQL's sequences moved on)
    let new_id = store
        .insert_job(&JobInfo::new(1, "made after the import", "h"))
        .await
        .unwrap();
    assert_eq!(new_id, 90);
    store.delete_job(new_id).await.unwrap();

    // a second run changes nothing
    let out = succeeded(&import(&args));
    has_line(&out, "groups: 0 created, 3 already present, 0 skipped");
    has_line(&out, "jobs: 0 created, 10 already present, 0 skipped");
    has_line(
        &out,
        "script versions: 0 created, 3 already present, 0 skipped",
    );
    has_line(&out, "users: 0 created, 2 already present, 0 skipped");
    has_line(&out, "run logs: 0 created, 3 already present, 1 skipped");
    assert_eq!(all_jobs(&store).await, jobs);

    // a value jobwheel does not know stops the import before anything is written
    xxl.exec("UPDATE xxl_job_info SET executor_route_strategy = 'NOWHERE' WHERE id = 21")
        .await;
    let fresh = TestDb::create(backend).await.expect("a second target");
    let err = bad_input(&import(&["--from", &xxl.url, "--database-url", &fresh.url]));
    assert!(
        err.contains(
            "xxl_job_info id 21, column executor_route_strategy: unknown route strategy 'NOWHERE'"
        ),
        "{err}"
    );
    assert_eq!(fresh.store.count_jobs().await.unwrap(), 0);
    assert!(fresh.store.list_groups().await.unwrap().is_empty());
    fresh.drop_db().await;

    // the imported admin gets the start-up password; imported users are told to get one
    let app = TestApp::builder(backend)
        .on(target)
        .start()
        .await
        .expect("admin on the imported database");
    let refused = app.anonymous().login("alice", "123456").await;
    assert_eq!(refused.status, 401);
    assert!(
        refused.body["error"]
            .as_str()
            .is_some_and(|e| e.contains("has no password yet")),
        "{}",
        refused.body
    );

    // the imported FIX_RATE job fires on its own
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    executor.register("jw-import-fire").await;
    let run = expect_within("a run of imported job 2", Duration::from_secs(15), || {
        let got = executor
            .received()
            .into_iter()
            .find(|r| r.param.job_id == 2);
        std::future::ready(got)
    })
    .await;
    assert_eq!(run.param.executor_handler, "fireHandler");
    assert_eq!(run.param.executor_params, "p=1");
    app.finish().await;
}
crate::backends!(run: xxl_24_is_imported_and_fires);

async fn xxl_3x_is_imported(backend: Backend) {
    let Some(xxl) = XxlDb::create(FIXTURE_3X).await else {
        return;
    };
    let Some(target) = TestDb::create(backend).await else {
        return;
    };
    let store = target.store.clone();
    let args = [
        "--from",
        &xxl.url,
        "--database-url",
        &target.url,
        "--include-logs",
    ];
    let dry: Vec<&str> = args.iter().copied().chain(["--dry-run"]).collect();
    let out = succeeded(&import(&dry));
    assert!(out.contains("3.5-style columns"), "{out}");
    has_line(&out, "groups: 3 to create, 0 already present, 0 skipped");
    assert_eq!(store.count_jobs().await.unwrap(), 0);

    let out = succeeded(&import(&args));
    has_line(&out, "groups: 3 created, 0 already present, 0 skipped");
    has_line(&out, "jobs: 4 created, 0 already present, 0 skipped");
    has_line(
        &out,
        "script versions: 1 created, 0 already present, 0 skipped",
    );
    has_line(&out, "users: 2 created, 0 already present, 0 skipped");
    has_line(&out, "run logs: 2 created, 0 already present, 0 skipped");
    has_line(&out, "  bob");

    let group = store.get_group(1).await.unwrap().expect("group 1");
    assert_eq!(group.title, "通用执行器Sample");
    assert_eq!(group.access_token.as_deref(), Some("group-one-token"));
    let jobs = all_jobs(&store).await;
    assert_eq!(
        jobs.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![1, 2, 4, 7]
    );
    assert_eq!(jobs[0].job_desc, "示例任务01");
    assert_eq!(jobs[1].alarm_email, "a@example.com,b@example.com");
    assert_eq!(jobs[1].executor_param, r#"{"a":1}"#);
    assert_eq!(jobs[2].glue_type, GlueType::GluePython2);
    assert_eq!(
        jobs[2].executor_route_strategy,
        RouteStrategy::ShardingBroadcast
    );
    assert_eq!(jobs[3].child_job_ids, vec![2]);
    assert_eq!(store.list_glue_versions(4).await.unwrap()[0].id, 10);
    let bob = store.get_user_by_name("bob").await.unwrap().expect("bob");
    assert_eq!((bob.role, bob.permission), (Role::User, vec![3]));
    let parent = store.get_log(5001).await.unwrap().expect("log 5001");
    assert_eq!(
        (parent.trigger_type, parent.trigger_code),
        (TriggerType::Parent, 500)
    );
    assert_eq!(parent.alarm_status, 3);

    let out = succeeded(&import(&args));
    has_line(&out, "groups: 0 created, 3 already present, 0 skipped");
    has_line(&out, "jobs: 0 created, 4 already present, 0 skipped");
    has_line(&out, "run logs: 0 created, 2 already present, 0 skipped");
    assert_eq!(all_jobs(&store).await, jobs);
    target.drop_db().await;
}
crate::backends!(run: xxl_3x_is_imported);

#[actix_web::test]
async fn unusable_sources_are_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let target = format!("sqlite://{}", dir.path().join("t.db").display());

    let err = bad_input(&import(&[
        "--from",
        "postgres://u@h/xxl",
        "--database-url",
        &target,
    ]));
    assert!(
        err.contains("must start with mysql:// or mariadb://"),
        "{err}"
    );

    let err = bad_input(&import(&[
        "--from",
        "mysql://root@127.0.0.1:1/xxl_job",
        "--database-url",
        &target,
    ]));
    assert!(err.contains("cannot reach the XXL-JOB database"), "{err}");

    // a database that is not XXL-JOB's (empty)
    let Some(other) = XxlDb::create("CREATE TABLE shop_order (id INT PRIMARY KEY)").await else {
        return;
    };
    let err = bad_input(&import(&["--from", &other.url, "--database-url", &target]));
    assert!(
        err.contains("is not an XXL-JOB database: it has no table xxl_job_group"),
        "{err}"
    );
}
