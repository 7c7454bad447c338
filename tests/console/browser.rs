//! The console in Debian's chromium, driven through chromedriver: log in, the dashboard, the
//! job list, the language switch, changing the password, logging out. Screenshots land in
//! `target/ui-screenshots/` for a person to look at.

use std::cell::RefCell;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use chrono::Days;
use fantoccini::{Client, ClientBuilder, Locator};
use jobwheel::actors::monitor_report::{day_start, local_date};
use jobwheel::clock::now_ms;
use jobwheel::model::LogReport;
use jobwheel::store::Backend;
use serde_json::json;

use crate::kit::{wait_for, Behaviour, FakeExecutor, TestApp, ADMIN_PASSWORD};

/// How long a page may take to show what a step expects.
const WAIT: Duration = Duration::from_secs(10);
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// A headless chromium session; its chromedriver is killed on drop.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// A browser, or `None` (skipped) where chromium is not installed; under `CI` a missing
    /// browser fails the test.
    pub async fn start() -> Option<Browser> {
        if !std::path::Path::new(CHROMEDRIVER).exists() || !std::path::Path::new(CHROMIUM).exists()
        {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but {CHROMEDRIVER} or {CHROMIUM} is missing (apt-get install chromium chromium-driver)"
            );
            eprintln!("skipped: no chromium/chromedriver");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // its own process group, so that dropping the browser ends chromium too, even when a
        // failed step never closed the session
        let driver = Command::new(CHROMEDRIVER)
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = tempfile::tempdir().unwrap();
        let caps = json!({
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--window-size=1366,900",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        });
        let caps = match caps {
            serde_json::Value::Object(map) => map,
            _ => unreachable!(),
        };
        let url = format!("http://127.0.0.1:{port}");
        let mut last = None;
        for _ in 0..100 {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => {
                    return Some(Browser {
                        client,
                        driver,
                        _profile: profile,
                    })
                }
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver did not answer: {last:?}");
    }

    /// Saves what the window shows as `target/ui-screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ui-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let png = self.client.screenshot().await.expect("screenshot");
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// The current path and query.
    pub async fn path(&self) -> String {
        let url = self.client.current_url().await.unwrap();
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        }
    }

    /// Waits until the current path is `path`.
    pub async fn wait_path(&self, path: &str) {
        let seen = &RefCell::new(String::new());
        let arrived = wait_for(WAIT, move || async move {
            let now = self.path().await;
            let hit = now == path;
            *seen.borrow_mut() = now;
            hit.then_some(())
        })
        .await;
        assert!(
            arrived.is_some(),
            "expected to be at {path}, still at {}",
            seen.borrow()
        );
    }

    /// Waits until the element `css` shows `text`.
    pub async fn wait_text(&self, css: &str, text: &str) {
        let seen = &RefCell::new(String::new());
        let shown = wait_for(WAIT, move || async move {
            let now = match self.client.find(Locator::Css(css)).await {
                Ok(el) => el.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            let hit = now.contains(text);
            *seen.borrow_mut() = now;
            hit.then_some(())
        })
        .await;
        assert!(
            shown.is_some(),
            "{css} should show {text:?}, shows {:?}",
            seen.borrow()
        );
    }

    /// Types `text` into the field `css`.
    pub async fn fill(&self, css: &str, text: &str) {
        let field = self.client.find(Locator::Css(css)).await.expect(css);
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Logs in as `admin` through the login page.
    pub async fn log_in(&self, app: &TestApp) {
        self.client
            .goto(&format!("{}/login", app.base))
            .await
            .unwrap();
        self.fill("input[name=username]", "admin").await;
        self.fill("input[name=password]", ADMIN_PASSWORD).await;
        self.click("button[type=submit]").await;
        self.wait_path("/").await;
    }

    /// Clicks the element `css`.
    pub async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .expect(css)
            .click()
            .await
            .unwrap();
    }
}

/// An admin built by `builder` on SQLite and a browser, or `None` where either is missing.
async fn open(builder: crate::kit::app::AppBuilder) -> Option<(TestApp, Browser)> {
    let app = builder.start().await?;
    match Browser::start().await {
        Some(browser) => Some((app, browser)),
        None => {
            app.finish().await;
            None
        }
    }
}

/// Ends the browser session, then the admin and its database.
async fn close(app: TestApp, browser: Browser) {
    browser.client.clone().close().await.unwrap();
    drop(browser);
    app.finish().await;
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.driver.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group; no memory is shared
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.driver.wait();
    }
}

#[actix_web::test]
async fn an_operator_logs_in_reads_the_dashboard_and_jobs_and_logs_out() {
    // one report pass only (at start), so that the week of reports written below stays
    let builder = TestApp::builder(Backend::Sqlite)
        .monitors(|m| m.report_interval = Duration::from_secs(3600));
    let Some((app, browser)) = open(builder).await else {
        return;
    };
    let group = app.group("demo-app").await;
    for (desc, author) in [
        ("Nightly report <b>export</b>", "ops"),
        ("<script>alert(1)</script> Clean temp files", "ops"),
        ("Sync partners", "li.wei"),
    ] {
        let id = app.job(group, desc).await;
        let res = app
            .api
            .call_with(
                actix_web::http::Method::GET,
                &format!("/api/v1/jobs/{id}"),
                None,
                &[],
            )
            .await;
        let mut job = res.body;
        job["author"] = json!(author);
        assert_eq!(app.api.update_job(id, job).await.status, 200);
    }
    let first = app.api.list_jobs("").await.body["items"][0]["id"]
        .as_i64()
        .unwrap();
    assert_eq!(app.api.start_job(first).await.status, 200);

    let b = &browser;
    let c = &b.client;
    // a page without a session sends the browser to log in, and back after
    c.goto(&format!("{}/jobs", app.base)).await.unwrap();
    b.wait_path("/login?next=/jobs").await;
    b.fill("input[name=username]", "admin").await;
    b.fill("input[name=password]", "wrong-password").await;
    b.click("button[type=submit]").await;
    b.wait_text("[data-error-for='']", "wrong username or password")
        .await;
    b.screenshot("login-error").await;
    b.fill("input[name=password]", ADMIN_PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Nightly report <b>export</b>")
        .await;
    // a description holding a script is shown as text and never runs
    b.wait_text("#jobs tbody", "<script>alert(1)</script> Clean temp files")
        .await;
    assert!(
        c.get_alert_text().await.is_err(),
        "no dialog: the description was not run"
    );
    let rows = c
        .find_all(Locator::Css("#jobs tbody tr[data-job-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    // next fire time, put in the browser's zone by the page's script (no "UTC" left)
    let next = c
        .find(Locator::Css(&format!("tr[data-job-id='{first}'] time")))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!next.contains("UTC") && next.len() == 19, "{next}");
    b.screenshot("jobs").await;

    // filters
    c.find(Locator::Css("select[name=status]"))
        .await
        .unwrap()
        .select_by_value("1")
        .await
        .unwrap();
    b.click(".filters button[type=submit]").await;
    b.wait_path("/jobs?group=&status=1&desc=&handler=&author=")
        .await;
    let rows = c
        .find_all(Locator::Css("#jobs tbody tr[data-job-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);

    // dashboard, over a week of daily reports, written after the start's report pass
    let tz = app.settings().timezone;
    let today = local_date(tz, now_ms());
    let first_pass = wait_for(WAIT, || async {
        let reports = app
            .store
            .list_log_reports(day_start(tz, today), day_start(tz, today + Days::new(1)))
            .await
            .unwrap();
        (!reports.is_empty()).then_some(())
    })
    .await;
    assert!(
        first_pass.is_some(),
        "the report pass at start wrote today's row"
    );
    for (back, ok, failed, running) in [
        (6, 1210, 14, 0),
        (5, 1302, 3, 0),
        (4, 1187, 41, 0),
        (3, 1244, 0, 0),
        (2, 1390, 9, 0),
        (1, 1275, 22, 0),
        (0, 640, 5, 12),
    ] {
        app.store
            .upsert_log_report(&LogReport {
                trigger_day: day_start(tz, today - Days::new(back)),
                running_count: running,
                suc_count: ok,
                fail_count: failed,
                update_time: now_ms(),
            })
            .await
            .unwrap();
    }
    b.click("header nav a[href='/']").await;
    b.wait_path("/").await;
    b.wait_text("#jobs-scheduled", "1").await;
    b.wait_text("#jobs-stopped", "2").await;
    let bars = c.find_all(Locator::Css("svg.chart g")).await.unwrap();
    assert_eq!(bars.len(), 7);
    b.wait_text("#runs-today", "657").await;
    let failed = c
        .find_all(Locator::Css("svg.chart rect.fail"))
        .await
        .unwrap();
    assert_eq!(failed.len(), 6, "a red segment on each day with failures");
    b.screenshot("dashboard").await;

    // the language switch is remembered by the browser
    c.find(Locator::Css("#lang"))
        .await
        .unwrap()
        .select_by_value("zh")
        .await
        .unwrap();
    b.wait_text("header nav", "任务管理").await;
    c.goto(&format!("{}/jobs", app.base)).await.unwrap();
    b.wait_text("h1", "任务管理").await;
    b.screenshot("jobs-zh").await;
    c.find(Locator::Css("#lang"))
        .await
        .unwrap()
        .select_by_value("en")
        .await
        .unwrap();
    b.wait_text("h1", "Jobs").await;

    // change the password: mistakes are shown beside their field
    b.click("header .me a[href='/account/password']").await;
    b.wait_path("/account/password").await;
    b.fill("input[name=currentPassword]", ADMIN_PASSWORD).await;
    b.fill("input[name=newPassword]", "brand-new-pass").await;
    b.fill("input[name=repeat]", "brand-new-typo").await;
    b.click("button[type=submit]").await;
    b.wait_text("[data-error-for='repeat'], [data-error-for='']", "differ")
        .await;
    b.fill("input[name=newPassword]", "short").await;
    b.fill("input[name=repeat]", "short").await;
    b.click("button[type=submit]").await;
    b.wait_text("[data-error-for='newPassword']", "at least 8")
        .await;
    b.screenshot("password-error").await;
    b.fill("input[name=newPassword]", "brand-new-pass").await;
    b.fill("input[name=repeat]", "brand-new-pass").await;
    b.click("button[type=submit]").await;
    b.wait_text(".notice", "Password changed").await;
    assert_eq!(
        app.anonymous()
            .login("admin", "brand-new-pass")
            .await
            .status,
        200
    );

    // log out: the session is gone, pages redirect again
    b.click("#logout").await;
    b.wait_path("/login").await;
    c.goto(&format!("{}/", app.base)).await.unwrap();
    b.wait_path("/login").await;
    b.screenshot("login").await;
    // and in again, with the new password
    b.fill("input[name=username]", "admin").await;
    b.fill("input[name=password]", "brand-new-pass").await;
    b.click("button[type=submit]").await;
    b.wait_path("/").await;
    b.wait_text("header .me", "admin").await;

    close(app, browser).await;
}

#[actix_web::test]
async fn an_operator_creates_edits_runs_copies_and_deletes_a_job() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("demo-app").await;
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    executor.register("demo-app").await;
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;
    b.click("header nav a[href='/jobs']").await;
    b.wait_path("/jobs").await;

    // a new job: the API's complaint is shown beside its field
    b.click("#new-job").await;
    b.wait_path("/jobs/new").await;
    b.fill("#job-form input[name=scheduleConf]", "0 0/15 * * * ?")
        .await;
    b.fill("#job-form input[name=timezone]", "Asia/Shanghai")
        .await;
    // the preview follows the schedule as it is typed, in the job's zone
    b.wait_text("#preview-times", "(Asia/Shanghai)").await;
    let times = c.find_all(Locator::Css("#preview-times li")).await.unwrap();
    assert_eq!(times.len(), 5);
    let first = times[0].text().await.unwrap();
    assert!(
        first.contains(":00:00")
            || first.contains(":15:00")
            || first.contains(":30:00")
            || first.contains(":45:00"),
        "{first}"
    );
    b.fill("#job-form input[name=scheduleConf]", "0 0 25 * * ?")
        .await;
    b.wait_text("#preview-error", "hour").await;
    b.screenshot("job-preview-error").await;
    b.fill("#job-form input[name=scheduleConf]", "0 0/15 * * * ?")
        .await;
    b.wait_text("#preview-times", "(Asia/Shanghai)").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_text("[data-error-for=jobDesc]", "jobDesc is required")
        .await;
    b.screenshot("job-new-error").await;
    b.fill("#job-form input[name=jobDesc]", "Quarter-hour sync")
        .await;
    b.fill("#job-form input[name=author]", "ops").await;
    b.fill("#job-form input[name=executorHandler]", "demoJobHandler")
        .await;
    b.fill("#job-form textarea[name=executorParam]", "--full")
        .await;
    b.fill("#job-form input[name=executorFailRetryCount]", "2")
        .await;
    b.screenshot("job-new").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Quarter-hour sync").await;
    let listed = app.api.list_jobs("").await;
    let job = &listed.body["items"][0];
    let id = job["id"].as_i64().unwrap();
    assert_eq!(
        (
            job["jobGroup"].as_i64(),
            job["timezone"].as_str(),
            job["executorParam"].as_str()
        ),
        (Some(group), Some("Asia/Shanghai"), Some("--full"))
    );
    assert_eq!(job["executorFailRetryCount"], 2);

    // edit: the form holds the saved values
    b.click(&format!("tr[data-job-id='{id}'] a[href='/jobs/{id}']"))
        .await;
    b.wait_path(&format!("/jobs/{id}")).await;
    let param = c
        .find(Locator::Css("#job-form textarea[name=executorParam]"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(param.as_deref(), Some("--full"));
    b.fill("#job-form input[name=jobDesc]", "Quarter-hour sync v2")
        .await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Quarter-hour sync v2").await;

    // start, then stop
    b.click(&format!(
        "tr[data-job-id='{id}'] button[data-call$='/start']"
    ))
    .await;
    b.wait_text(&format!("tr[data-job-id='{id}']"), "Scheduled")
        .await;
    assert_eq!(app.api.get_job(id).await.body["triggerStatus"], 1);
    b.click(&format!(
        "tr[data-job-id='{id}'] button[data-call$='/stop']"
    ))
    .await;
    b.wait_text(&format!("tr[data-job-id='{id}']"), "Stopped")
        .await;

    // run once with a parameter: the executor receives it
    b.click(&format!("tr[data-job-id='{id}'] button[data-trigger]"))
        .await;
    b.fill("#trigger-form textarea[name=executorParam]", "once-param")
        .await;
    b.screenshot("job-trigger").await;
    b.click("#trigger-form button[type=submit]").await;
    b.wait_text("#trigger-form .notice", "Triggered").await;
    let params = wait_for(WAIT, || async {
        let runs = executor.calls_to("run");
        let params: Vec<String> = runs
            .iter()
            .map(|r| r["executorParams"].as_str().unwrap_or_default().to_string())
            .collect();
        (!params.is_empty()).then_some(params)
    })
    .await;
    assert_eq!(params, Some(vec!["once-param".to_string()]));
    // a bad address is refused beside its field
    b.fill("#trigger-form input[name=addressList]", "10.0.0.1:9999")
        .await;
    b.click("#trigger-form button[type=submit]").await;
    b.wait_text("#trigger-form [data-error-for=addressList]", "http://")
        .await;
    b.click("#trigger-form button[data-close]").await;

    // copy: a new stopped job with the same definition
    b.click(&format!(
        "tr[data-job-id='{id}'] a[href='/jobs/new?copy={id}']"
    ))
    .await;
    b.wait_path(&format!("/jobs/new?copy={id}")).await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Quarter-hour sync v2 (copy)")
        .await;
    let listed = app.api.list_jobs("").await;
    assert_eq!(listed.body["total"], 2);
    let copy = &listed.body["items"][1];
    assert_eq!(copy["executorParam"], "--full");
    assert_eq!(copy["scheduleConf"], "0 0/15 * * * ?");
    b.screenshot("jobs-actions").await;

    // delete, after a confirmation
    let copy_id = copy["id"].as_i64().unwrap();
    b.click(&format!("tr[data-job-id='{copy_id}'] button.danger"))
        .await;
    c.accept_alert().await.unwrap();
    let gone = wait_for(WAIT, || async {
        (app.api.get_job(copy_id).await.status == 404).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the copy was deleted");
    b.wait_path("/jobs").await;

    // a job that does not exist, or a page of nonsense: an error page, not a crash
    c.goto(&format!("{}/jobs/999999", app.base)).await.unwrap();
    b.wait_text("h1", "404").await;

    close(app, browser).await;
}

#[actix_web::test]
async fn an_operator_follows_a_run_live_kills_it_and_clears_runs() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("demo-app").await;
    let executor = FakeExecutor::start(
        &app.base,
        &app.token,
        Behaviour {
            log_lines: vec!["starting".into(), "step 1".into()],
            ..Behaviour::without_results()
        },
    );
    executor.register("demo-app").await;
    let job = app.job(group, "Long import").await;
    let res = app.api.trigger_job(job, None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let run = res.body["logIds"][0].as_i64().unwrap();
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    b.click("header nav a[href='/runs']").await;
    b.wait_path("/runs").await;
    b.wait_text(&format!("tr[data-run-id='{run}']"), "Running")
        .await;
    b.wait_text(&format!("tr[data-run-id='{run}']"), "Long import")
        .await;

    // the run's page follows the executor's log as lines arrive; markup in a log stays text
    b.click(&format!("tr[data-run-id='{run}'] a[href='/runs/{run}']"))
        .await;
    b.wait_path(&format!("/runs/{run}")).await;
    b.wait_text("#run-log", "step 1").await;
    b.wait_text("#tail-state", "following").await;
    executor.set(|be| be.log_lines.push("step 2 <b>not bold</b>".into()));
    b.wait_text("#run-log", "step 2 <b>not bold</b>").await;
    let bold = c.find_all(Locator::Css("#run-log b")).await.unwrap();
    assert!(bold.is_empty(), "log text is never markup");
    b.screenshot("run-live").await;

    // kill: the run ends as failed, and the page stops following
    b.click("button[data-call$='/kill']").await;
    c.accept_alert().await.unwrap();
    b.wait_text("#run-state", "Failed").await;
    b.wait_text("#result-msg", "Manual operation, kill job")
        .await;
    b.wait_text("#tail-state", "complete").await;
    b.screenshot("run-killed").await;

    // the list filters by outcome
    let other = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs?status=fail", app.base))
        .await
        .unwrap();
    b.wait_text("#runs tbody", "Manual operation").await;
    let rows = c
        .find_all(Locator::Css("#runs tbody tr[data-run-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    c.goto(&format!("{}/runs", app.base)).await.unwrap();
    b.wait_text(&format!("tr[data-run-id='{other}']"), "Running")
        .await;
    b.screenshot("runs").await;

    // clear by rule: keep none of this job's runs
    b.click("#clear-open").await;
    c.find(Locator::Css("#clear-form select[name=rule]"))
        .await
        .unwrap()
        .select_by_value("keepLast=0")
        .await
        .unwrap();
    b.fill("#clear-form input[name=jobId]", &job.to_string())
        .await;
    b.click("#clear-form button[type=submit]").await;
    b.wait_text("#runs tbody", "No runs match").await;
    assert_eq!(app.api.list_logs("").await.body["total"], 0);

    close(app, browser).await;
}

/// The `value` of the form field `css`.
async fn field_value(b: &Browser, css: &str) -> String {
    b.client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

#[actix_web::test]
async fn an_operator_edits_a_script_views_and_restores_a_version() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("glue-app").await;
    let res = app
        .api
        .create_job(json!({
            "jobGroup": group,
            "jobDesc": "Nightly cleanup script",
            "glueType": "GLUE_SHELL",
            "glueSource": "echo v0",
            "glueRemark": "created",
        }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let id = res.id();
    let bean = app.job(group, "Bean job").await;
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // the list offers the editor for script jobs only
    b.click("header nav a[href='/jobs']").await;
    b.wait_path("/jobs").await;
    let bean_links = c
        .find_all(Locator::Css(&format!(
            "tr[data-job-id='{bean}'] a.glue-link"
        )))
        .await
        .unwrap();
    assert!(bean_links.is_empty(), "a BEAN job has no GLUE link");
    b.click(&format!("tr[data-job-id='{id}'] a[href='/jobs/{id}/glue']"))
        .await;
    b.wait_path(&format!("/jobs/{id}/glue")).await;
    assert_eq!(field_value(b, "#glue-source").await, "echo v0");
    b.wait_text("#glue-gutter", "1").await;
    b.wait_text("#glue-no-versions", "No versions").await;

    // Tab indents by four spaces, Shift+Tab takes four back from the line's start
    let area = c.find(Locator::Css("#glue-source")).await.unwrap();
    area.clear().await.unwrap();
    area.send_keys("#!/bin/bash\nif true; then\n\t\t")
        .await
        .unwrap();
    assert_eq!(
        field_value(b, "#glue-source").await,
        "#!/bin/bash\nif true; then\n        "
    );
    area.send_keys("\u{E008}\u{E004}\u{E000}echo \"<b>hi</b>\"\nfi")
        .await
        .unwrap();
    let source = "#!/bin/bash\nif true; then\n    echo \"<b>hi</b>\"\nfi";
    assert_eq!(field_value(b, "#glue-source").await, source);
    b.wait_text("#glue-gutter", "4").await;
    let gutter = c
        .find(Locator::Css("#glue-gutter"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(gutter, "1\n2\n3\n4");

    // a remark is required; then the save shows up in the versions
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("[data-error-for=glueRemark]", "glueRemark is required")
        .await;
    b.fill("#glue-form input[name=glueRemark]", "indent the echo")
        .await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("#glue-form .notice", "Saved").await;
    b.wait_text("#glue-versions tbody", "indent the echo").await;
    b.wait_text("#glue-current-remark", "indent the echo").await;
    assert_eq!(
        field_value(b, "#glue-form input[name=glueRemark]").await,
        "",
        "the remark is cleared for the next save"
    );
    let glue = app.api.get_glue(id).await.body;
    assert_eq!(glue["current"]["glueSource"], source);
    let first = glue["versions"][0]["id"].as_i64().unwrap();
    b.screenshot("glue-editor").await;

    b.fill("#glue-source", "echo three").await;
    b.fill("#glue-form input[name=glueRemark]", "third").await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("#glue-versions tbody tr:first-child", "third")
        .await;
    assert_eq!(
        c.find_all(Locator::Css("#glue-versions tbody tr"))
            .await
            .unwrap()
            .len(),
        2
    );
    b.wait_text("#glue-gutter", "1").await;

    // the older version's source, read-only, markup shown as text
    b.click(&format!("button[data-view-version='{first}']"))
        .await;
    b.wait_text("#glue-view-source", "echo \"<b>hi</b>\"").await;
    b.wait_text("#glue-view-remark", "indent the echo").await;
    b.wait_text("#glue-view-id", &first.to_string()).await;
    let bold = c.find_all(Locator::Css("#glue-view b")).await.unwrap();
    assert!(bold.is_empty(), "sources are never markup");
    assert_eq!(field_value(b, "#glue-source").await, "echo three");
    b.screenshot("glue-versions").await;

    // restore it: the page reloads with it as the current source
    b.click("#glue-view-restore").await;
    c.accept_alert().await.unwrap();
    b.wait_text(
        "#glue-versions tbody tr:first-child",
        &format!("restored from version {first}"),
    )
    .await;
    assert_eq!(field_value(b, "#glue-source").await, source);
    b.wait_text("#glue-gutter", "4").await;
    assert_eq!(
        app.api.get_glue(id).await.body["current"]["glueSource"],
        source
    );

    // a BEAN job's page says it has no script and links to its form
    c.goto(&format!("{}/jobs/{bean}/glue", app.base))
        .await
        .unwrap();
    b.wait_text("#glue-none", "BEAN").await;
    b.click(&format!("#glue-none a[href='/jobs/{bean}']")).await;
    b.wait_path(&format!("/jobs/{bean}")).await;

    close(app, browser).await;
}

#[actix_web::test]
async fn an_administrator_manages_executors_users_and_tokens() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // executor groups: create with a bad name (the API's message beside it), then a good one
    b.click("header nav a[href='/executors']").await;
    b.wait_path("/executors").await;
    b.click("#new-group").await;
    b.wait_path("/executors/new").await;
    b.fill("#group-form input[name=appName]", "bad name!").await;
    b.fill("#group-form input[name=title]", "Orders").await;
    b.click("#group-form button[type=submit]").await;
    b.wait_text("[data-error-for=appName]", "letters, digits")
        .await;
    b.fill("#group-form input[name=appName]", "order-service")
        .await;
    b.click("#group-form button[type=submit]").await;
    b.wait_path("/executors").await;
    b.wait_text("#groups", "order-service").await;
    executor.register("order-service").await;
    c.goto(&format!("{}/executors", app.base)).await.unwrap();
    b.wait_text("#groups td.online", &executor.address).await;
    b.wait_text("#groups td.online", "beat").await;
    b.screenshot("executors").await;
    let group = app.api.list_groups().await.body[0]["id"].as_i64().unwrap();

    // users: a normal user limited to the new group
    b.click("header nav a[href='/users']").await;
    b.wait_path("/users").await;
    b.click("#new-user").await;
    b.wait_path("/users/new").await;
    b.fill("#user-form input[name=username]", "grace").await;
    b.fill("#user-form input[name=password]", "short").await;
    b.click("#user-form button[type=submit]").await;
    b.wait_text("[data-error-for=password]", "at least 8").await;
    b.fill("#user-form input[name=password]", "grace-pass-1")
        .await;
    b.click(&format!(
        "#user-form input[name=permission][value='{group}']"
    ))
    .await;
    b.click("#user-form button[type=submit]").await;
    b.wait_path("/users").await;
    b.wait_text("#users", "grace").await;
    b.wait_text("#users", "order-service").await;
    b.screenshot("users").await;
    let grace = app.anonymous();
    assert_eq!(grace.login("grace", "grace-pass-1").await.status, 200);
    assert_eq!(grace.me().await.body["permission"], json!([group]));

    // grace, in her own browser session, sees her group's job and run, not another group's
    let billing = app.group("billing").await;
    let secret_job = app.job(billing, "Billing secret job").await;
    let order_job = app.job(group, "Order sync").await;
    let now = now_ms();
    let mut runs = Vec::new();
    for (g, j) in [(group, order_job), (billing, secret_job)] {
        let log = crate::kit::db::manual_log(g as i32, j as i32, now);
        runs.push(app.store.insert_log(&log).await.unwrap());
    }
    b.click("#logout").await;
    b.wait_path("/login").await;
    b.fill("input[name=username]", "grace").await;
    b.fill("input[name=password]", "grace-pass-1").await;
    b.click("button[type=submit]").await;
    b.wait_path("/").await;
    c.goto(&format!("{}/jobs", app.base)).await.unwrap();
    b.wait_text("#jobs tbody", "Order sync").await;
    let page = c.source().await.unwrap();
    assert!(!page.contains("Billing secret job") && !page.contains("billing title"));
    assert!(
        c.find(Locator::Css("header nav a[href='/users']"))
            .await
            .is_err(),
        "no Users tab for a normal user"
    );
    c.goto(&format!("{}/runs", app.base)).await.unwrap();
    b.wait_text(&format!("tr[data-run-id='{}']", runs[0]), "Order sync")
        .await;
    assert!(c
        .find(Locator::Css(&format!("tr[data-run-id='{}']", runs[1])))
        .await
        .is_err());
    for url in [
        format!("/api/v1/jobs/{secret_job}"),
        format!("/api/v1/logs/{}", runs[1]),
        format!("/api/v1/groups/{billing}"),
        "/api/v1/users".to_string(),
    ] {
        let status = c
            .execute(
                "return fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.status);",
                vec![json!(url)],
            )
            .await
            .unwrap();
        assert_eq!(status, json!(403), "{url}");
    }
    c.goto(&format!("{}/jobs/{secret_job}", app.base))
        .await
        .unwrap();
    b.wait_text("h1", "403").await;
    b.wait_text("header .me", "grace").await;
    b.screenshot("normal-user-403").await;
    b.click("#logout").await;
    b.wait_path("/login").await;
    b.log_in(&app).await;

    // tokens: the secret is shown once; revoking removes the row
    b.click("header nav a[href='/tokens']").await;
    b.wait_path("/tokens").await;
    b.fill("#token-form input[name=name]", "deploy-script")
        .await;
    b.click("#token-form button[type=submit]").await;
    b.wait_text("#token-value", "jw_").await;
    b.wait_text("#tokens", "deploy-script").await;
    b.screenshot("tokens").await;
    let secret = c
        .find(Locator::Css("#token-value"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let script = app.anonymous();
    script.set_bearer(Some(&secret));
    assert_eq!(script.me().await.body["username"], "admin");
    c.goto(&format!("{}/tokens", app.base)).await.unwrap();
    assert!(
        !c.source().await.unwrap().contains(&secret),
        "never shown again"
    );
    b.click("#tokens button[data-call]").await;
    c.accept_alert().await.unwrap();
    b.wait_text("#tokens", "No tokens").await;
    assert_eq!(script.me().await.status, 401);

    // the audit log lists what this test changed, newest first
    b.click("header nav a[href='/audit']").await;
    b.wait_path("/audit").await;
    b.wait_text("#audit", "token.revoke").await;
    for action in ["token.create", "user.create", "group.create"] {
        b.wait_text("#audit", action).await;
    }
    b.wait_text("#audit", "grace").await;
    b.screenshot("audit").await;

    // the API reference, rendered from the OpenAPI document
    b.click("header nav a[href='/api-docs']").await;
    b.wait_path("/api-docs").await;
    b.wait_text("main", "/api/v1/jobs/{id}/trigger").await;
    b.screenshot("api-docs").await;

    close(app, browser).await;
}

/// Picks `value` in the select `css`.
async fn select(b: &Browser, css: &str, value: &str) {
    b.client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .select_by_value(value)
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_script_job_made_in_the_console_runs_on_the_embedded_executor_live() {
    // groups are created through the form in an_administrator_manages_executors_users_and_tokens
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite).standalone()).await else {
        return;
    };
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // the embedded executor's group (its executor accepts triggers for its own app name)
    let groups = app.api.list_groups().await.body;
    let group = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["appName"] == "jobwheel-local")
        .expect("standalone's group")["id"]
        .as_i64()
        .unwrap();

    // a GLUE_SHELL job from the form, its script from the GLUE editor
    c.goto(&format!("{}/jobs/new", app.base)).await.unwrap();
    select(b, "#job-form select[name=jobGroup]", &group.to_string()).await;
    b.fill("#job-form input[name=jobDesc]", "Count to five")
        .await;
    select(b, "#job-form select[name=scheduleType]", "NONE").await;
    select(b, "#job-form select[name=glueType]", "GLUE_SHELL").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    let listed = app.api.list_jobs("").await.body;
    let job = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobDesc"] == "Count to five")
        .expect("the new job");
    assert_eq!(
        (job["glueType"].as_str(), job["jobGroup"].as_i64()),
        (Some("GLUE_SHELL"), Some(group)),
        "{listed}"
    );
    let job = job["id"].as_i64().unwrap();
    c.goto(&format!("{}/jobs/{job}/glue", app.base))
        .await
        .unwrap();
    let editor = c.find(Locator::Css("textarea.code")).await.unwrap();
    editor.clear().await.unwrap();
    editor
        .send_keys("for i in 1 2 3 4 5; do echo \"line $i\"; sleep 1; done\n")
        .await
        .unwrap();
    b.fill("input[name=glueRemark]", "count").await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("#glue-versions", "count").await;

    // run once: the run's page shows the script's lines as they are written
    let run = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs/{run}", app.base)).await.unwrap();
    b.wait_text("#run-log", "line 1").await;
    let partial = c
        .find(Locator::Css("#run-log"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !partial.contains("line 5"),
        "the first line arrived before the last was written: {partial}"
    );
    b.wait_text("#run-log", "line 3").await;
    b.screenshot("run-live-tail").await;
    b.wait_text("#run-log", "line 5").await;
    b.wait_text("#run-state", "Succeeded").await;

    // a long run, killed from its page
    let mut body = app.api.get_job(job).await.body;
    body["glueSource"] = json!("echo started; sleep 300; echo never");
    body["glueRemark"] = json!("long");
    assert_eq!(app.api.update_job(job, body).await.status, 200);
    let long = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs/{long}", app.base)).await.unwrap();
    b.wait_text("#run-log", "started").await;
    b.click("button[data-call$='/kill']").await;
    c.accept_alert().await.unwrap();
    b.wait_text("#run-state", "Failed").await;
    b.wait_text("#result-msg", "kill").await;
    b.screenshot("run-killed-script").await;
    let run = app.api.get_log(long).await.body;
    assert!(run["handleCode"].as_i64().unwrap() >= 500, "{run}");

    close(app, browser).await;
}
