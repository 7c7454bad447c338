//! The console in Debian's chromium, driven through chromedriver, one file per page family:
//! [`session`] (log in, dashboard, language, password, log out), [`jobs`] (the job form, the
//! script editor), [`runs`] (live run logs, kills), [`admin`] (executors, users, tokens),
//! [`workflows`] (the workflow editor, list, runs; axe-core's accessibility check).
//! Screenshots land in `target/ui-screenshots/` for a person to look at.

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

/// The text a script run in the page returns (empty for anything else).
async fn script_text(b: &Browser, script: &str) -> String {
    b.client
        .execute(script, vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The text the element `css` shows.
async fn text_of(b: &Browser, css: &str) -> String {
    b.client
        .find(Locator::Css(css))
        .await
        .expect(css)
        .text()
        .await
        .unwrap()
}

/// Replaces the editor's text by typing `keys` into it.
async fn type_into_editor(b: &Browser, keys: &str) {
    let content = b
        .client
        .find(Locator::Css("#glue-form .cm-content"))
        .await
        .expect("the editor");
    content.click().await.unwrap();
    // Ctrl+A, then what replaces it
    content.send_keys("\u{E009}a\u{E009}").await.unwrap();
    content.send_keys(keys).await.unwrap();
}

/// Switches the console to `lang` (`en` or `zh`) from its front page, as a user does.
async fn use_language(b: &Browser, app: &TestApp, lang: &str) {
    b.client.goto(&format!("{}/", app.base)).await.unwrap();
    select(b, "#lang", lang).await;
    b.wait_text("header nav", if lang == "en" { "Jobs" } else { "任务管理" })
        .await;
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

/// Resizes the window so that the page's viewport is `width` × `height` pixels.
async fn set_size(b: &Browser, width: u32, height: u32) {
    b.client.set_window_size(width, height).await.unwrap();
    let inner = b
        .client
        .execute("return [window.innerWidth, window.innerHeight];", vec![])
        .await
        .unwrap();
    // the window's frame, if any, is added so that the viewport itself gets the size
    let frame = |wanted: u32, i: usize| wanted as i64 - inner[i].as_i64().unwrap_or(wanted as i64);
    let (fw, fh) = (frame(width, 0), frame(height, 1));
    if fw > 0 || fh > 0 {
        let grow = |wanted: u32, by: i64| (wanted as i64 + by.max(0)) as u32;
        b.client
            .set_window_size(grow(width, fw), grow(height, fh))
            .await
            .unwrap();
    }
}

/// [`set_size`] at a usual height.
async fn set_width(b: &Browser, width: u32) {
    set_size(b, width, 900).await;
}

/// Shoots the whole page at `width` (the window as tall as the page), then makes the window
/// its usual height again.
async fn full_shot(b: &Browser, width: u32, name: &str) {
    let tall = b
        .client
        .execute("return document.documentElement.scrollHeight;", vec![])
        .await
        .unwrap()
        .as_u64()
        .unwrap_or(900)
        .clamp(600, 6000) as u32;
    set_size(b, width, tall).await;
    b.screenshot(name).await;
    set_width(b, width).await;
}

/// Asserts that the page is no wider than the window (wide tables scroll inside their box).
async fn assert_fits(b: &Browser, page: &str) {
    let sizes = b
        .client
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth];",
            vec![],
        )
        .await
        .unwrap();
    let (content, window) = (sizes[0].as_i64(), sizes[1].as_i64());
    assert!(
        content <= window,
        "{page} is {content:?} px wide in a {window:?} px window"
    );
}

/// Where axe-core's script is looked for: `AXE_CORE_JS`, then npm's global and local installs.
fn axe_source() -> Option<String> {
    let mut places: Vec<PathBuf> = std::env::var_os("AXE_CORE_JS")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    places.push(PathBuf::from("/usr/lib/node_modules/axe-core/axe.min.js"));
    places.push(PathBuf::from(
        "/usr/local/lib/node_modules/axe-core/axe.min.js",
    ));
    places.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node_modules/axe-core/axe.min.js"));
    places.iter().find_map(|p| std::fs::read_to_string(p).ok())
}

/// Runs axe-core on the page the browser shows and fails the test on any violation; without
/// axe-core installed the check is skipped (a failure under `CI`).
async fn assert_accessible(b: &Browser, page: &str) {
    let Some(axe) = axe_source() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but axe-core is missing (npm install -g axe-core@4)"
        );
        eprintln!("skipped accessibility check of {page}: no axe-core");
        return;
    };
    b.client
        .execute(&format!("{axe}\n;return true;"), vec![])
        .await
        .expect("axe-core loads");
    let found = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, { resultTypes: ['violations'] })
               .then((r) => done(r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                 nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary) }))))
               .catch((e) => done([{ id: 'axe-error', help: String(e), nodes: [] }]));",
            vec![],
        )
        .await
        .expect("axe-core runs");
    let violations = found.as_array().cloned().unwrap_or_default();
    assert!(
        violations.is_empty(),
        "{page}: accessibility violations:\n{}",
        serde_json::to_string_pretty(&violations).unwrap_or_default()
    );
}

mod admin;
mod glue;
mod jobs;
mod keyboard;
mod responsive;
mod runs;
mod session;
mod workflows;
