//! First paint of the console's pages in Debian's chromium (headless, driven by chromedriver),
//! as a user sees them: the browser's own `first-contentful-paint` entry, from the start of
//! the navigation (request, HTML, styles and scripts, layout) to the first text drawn. Each page
//! is loaded `visits` times after one unmeasured load, with the browser's cache as a returning
//! user has it (the assets are versioned and cached for a year).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use serde_json::json;

use super::stats::{ms, percentile, Table};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";
/// The target: no page's first paint over this many milliseconds.
pub const TARGET_MS: f64 = 200.0;

/// chromedriver, killed (with its chromium) on drop.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // its own process group: chromium goes with it
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// Whether the browser is installed here.
pub fn available() -> bool {
    Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists()
}

/// What to load: each of `pages` (name, path) `visits` times on `base`, logged in with
/// `cookie` (`name=value`); `title` heads the table.
pub struct Plan<'a> {
    pub base: &'a str,
    pub cookie: &'a str,
    pub pages: &'a [(String, String)],
    pub visits: usize,
    pub title: String,
}

/// Loads the plan's pages in a fresh browser and returns the table of first paints.
pub async fn measure(plan: &Plan<'_>) -> Result<Table, String> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no port for chromedriver: {e}"))?
        .port();
    let _driver = Driver(
        Command::new(CHROMEDRIVER)
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("chromedriver does not start: {e}"))?,
    );
    let profile = std::env::temp_dir().join(format!("jw-first-paint-{}", std::process::id()));
    let caps = json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--window-size=1400,900",
                format!("--user-data-dir={}", profile.display()),
            ]
        }
    });
    let serde_json::Value::Object(caps) = caps else {
        return Err("capabilities are not an object".into());
    };
    let client = connect(port, caps).await?;
    let result = visit_all(&client, plan).await;
    let _ = client.close().await;
    let _ = std::fs::remove_dir_all(&profile);
    result
}

async fn connect(
    port: u16,
    caps: serde_json::Map<String, serde_json::Value>,
) -> Result<Client, String> {
    let url = format!("http://127.0.0.1:{port}");
    let mut last = String::new();
    for _ in 0..100 {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(client) => return Ok(client),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("chromedriver did not answer: {last}"))
}

async fn visit_all(client: &Client, plan: &Plan<'_>) -> Result<Table, String> {
    let Plan {
        base,
        cookie,
        pages,
        visits,
        ..
    } = *plan;
    // the session cookie is set on the admin's origin, as the login page would
    client
        .goto(&format!("{base}/login"))
        .await
        .map_err(|e| format!("the browser cannot open the login page: {e}"))?;
    let (name, value) = cookie
        .split_once('=')
        .ok_or_else(|| format!("not a cookie: {cookie}"))?;
    client
        .execute(
            "document.cookie = arguments[0] + '=' + arguments[1] + '; path=/'; return true;",
            vec![json!(name), json!(value)],
        )
        .await
        .map_err(|e| format!("cannot set the session cookie: {e}"))?;
    let mut table = Table::new(
        plan.title.clone(),
        &[
            "page",
            "first paint p50 ms",
            "p95 ms",
            "max ms",
            "HTML received p50 ms",
            "DOM ready p50 ms",
            "target",
        ],
    );
    let mut worst = 0.0f64;
    for (page, path) in pages {
        let url = format!("{base}{path}");
        let mut samples = Vec::with_capacity(visits);
        let (mut html, mut ready) = (Vec::new(), Vec::new());
        for visit in 0..=visits {
            client
                .goto(&url)
                .await
                .map_err(|e| format!("GET {path} in the browser: {e}"))?;
            let (paint, received, dom_ready) = paint_ms(client, path).await?;
            if visit > 0 {
                samples.push(paint);
                html.push(received);
                ready.push(dom_ready);
            }
        }
        samples.sort_by(f64::total_cmp);
        html.sort_by(f64::total_cmp);
        ready.sort_by(f64::total_cmp);
        let max = *samples.last().unwrap_or(&0.0);
        worst = worst.max(max);
        table.row([
            page.clone(),
            ms(percentile(&samples, 50.0)),
            ms(percentile(&samples, 95.0)),
            ms(max),
            ms(percentile(&html, 50.0)),
            ms(percentile(&ready, 50.0)),
            if max <= TARGET_MS {
                format!("✔ ≤ {TARGET_MS:.0} ms")
            } else {
                format!("✘ > {TARGET_MS:.0} ms")
            },
        ]);
    }
    println!("first paint: worst page's slowest load {worst:.1} ms (target ≤ {TARGET_MS:.0} ms)");
    Ok(table)
}

/// The page's first contentful paint, when its HTML had arrived and when its DOM was ready
/// (ms from the navigation's start), once the browser has a paint.
async fn paint_ms(client: &Client, path: &str) -> Result<(f64, f64, f64), String> {
    for _ in 0..200 {
        let found = client
            .execute(
                "const p = performance.getEntriesByName('first-contentful-paint')[0];\
                 const n = performance.getEntriesByType('navigation')[0];\
                 if (location.pathname === '/login' && arguments[0] !== '/login') return -1;\
                 return p && n ? [p.startTime, n.responseEnd, n.domContentLoadedEventEnd] : null;",
                vec![json!(path)],
            )
            .await
            .map_err(|e| format!("{path}: cannot read the paint timing: {e}"))?;
        if found.as_f64().is_some_and(|v| v < 0.0) {
            return Err(format!("{path}: the browser was sent to log in"));
        }
        if let Some([paint, html, ready]) = found
            .as_array()
            .map(|a| [0, 1, 2].map(|i| a.get(i).and_then(serde_json::Value::as_f64).unwrap_or(0.0)))
        {
            return Ok((paint, html, ready));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(format!("{path}: no first paint within 2 s"))
}
