//! `console`: how fast the admin console's busiest pages answer on a large database: the
//! dashboard (`/`), the job list (`/jobs`, page 1) and the run list filtered by one job
//! (`/runs?job=ID`, page 1), plus the unfiltered run list for reference. The database is seeded
//! with many jobs over a few groups and many run rows (spread over ~29 days, mixed outcomes,
//! across the jobs) before a `jobwheel admin` process is started on it; one client logs in and
//! requests each page in turn, sequentially over one kept-alive connection.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use jobwheel::clock::now_ms;
use jobwheel::model::{
    alarm_status, LogReport, ScheduleType, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};

use super::common::{load_average, start_admin, Ctx};
use super::db::{scheduled_job, BenchDb};
use super::first_paint;
use super::stats::{ms, percentile, Table};

/// The pages' target: p99 under this many milliseconds.
const TARGET_MS: f64 = 100.0;
/// Run rows per INSERT statement.
const ROWS_PER_STATEMENT: usize = 1_000;
/// Statements per transaction.
const STATEMENTS_PER_TX: usize = 50;
const DAY_MS: i64 = 86_400_000;
/// Runs are spread over this many days before now (retention is 30 days by default).
const SPAN_DAYS: i64 = 29;
/// Runs triggered in the last this many ms have no result yet.
const RUNNING_MS: i64 = 5 * 60_000;

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Jobs defined.
    pub jobs: usize,
    /// Run (log) rows.
    pub runs: usize,
    /// Groups the jobs are spread over.
    pub groups: usize,
    /// Requests measured per page.
    pub requests: usize,
    /// Requests per page before measuring.
    pub warmup: usize,
    /// Browser loads measured per page (first paint).
    pub paints: usize,
}

/// Runs the scenario and prints its tables.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let backend = ctx.backend_name();
    println!(
        "console: {} jobs in {} groups, {} runs over {SPAN_DAYS} days, {} requests per page after {} warm-up, on {backend} (load average {})",
        opts.jobs,
        opts.groups,
        opts.runs,
        opts.requests,
        opts.warmup,
        load_average()
    );
    let db = BenchDb::create(ctx.database_url.as_deref(), &ctx.work, "console").await?;
    let result = measure(ctx, &db, opts, &backend).await;
    db.drop_db().await;
    result
}

async fn measure(ctx: &Ctx, db: &BenchDb, opts: &Options, backend: &str) -> Result<(), String> {
    // --- seed: jobs ---
    let mut groups = Vec::new();
    for g in 0..opts.groups.max(1) {
        groups.push(db.group(&format!("console-bench-{g}")).await?);
    }
    let far = now_ms() + 30 * DAY_MS;
    let t = Instant::now();
    db.insert_jobs(opts.jobs, |i| {
        let mut job = scheduled_job(
            groups[i % groups.len()],
            i,
            (ScheduleType::Cron, "0 0 3 * * ?"),
            far,
        );
        // one in five stopped; the rest scheduled, next fire far ahead (nothing fires)
        if i % 5 == 4 {
            job.trigger_status = TRIGGER_STATUS_STOPPED;
            job.trigger_next_time = 0;
        } else {
            job.trigger_status = TRIGGER_STATUS_RUNNING;
        }
        job
    })
    .await?;
    let jobs_secs = t.elapsed().as_secs_f64();
    let mut jobs: Vec<(i32, i32)> = Vec::new();
    for &g in &groups {
        jobs.extend(db.job_ids(g).await?.into_iter().map(|id| (id, g)));
    }
    jobs.sort_unstable();
    if jobs.is_empty() {
        return Err("no jobs were seeded".into());
    }

    // --- seed: runs ---
    let t = Instant::now();
    let reports = seed_runs(db, &jobs, opts.runs).await?;
    let runs_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for r in &reports {
        db.store
            .upsert_log_report(r)
            .await
            .map_err(|e| format!("cannot write daily counts: {e}"))?;
    }
    let analyze = analyze(db).await?;
    let after_secs = t.elapsed().as_secs_f64();
    let mut seeding = Table::new(
        format!("console: seeding ({backend})"),
        &["what", "rows", "seconds", "rows/s"],
    );
    seeding.row([
        "jobs (insert_jobs_bulk, 10,000 a transaction)".to_string(),
        opts.jobs.to_string(),
        format!("{jobs_secs:.1}"),
        format!("{:.0}", opts.jobs as f64 / jobs_secs.max(1e-9)),
    ]);
    seeding.row([
        format!(
            "runs (multi-row INSERT, {ROWS_PER_STATEMENT} rows a statement, {} a transaction)",
            ROWS_PER_STATEMENT * STATEMENTS_PER_TX
        ),
        opts.runs.to_string(),
        format!("{runs_secs:.1}"),
        format!("{:.0}", opts.runs as f64 / runs_secs.max(1e-9)),
    ]);
    seeding.row([
        format!("daily counts ({} days) and {analyze}", reports.len()),
        String::new(),
        format!("{after_secs:.1}"),
        String::new(),
    ]);
    println!("{}", seeding.render());

    // --- the admin, a session ---
    let admin = start_admin(ctx, db).await?;
    let measured = async {
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(30))
            .finish();
        let cookie = log_in(&client, &admin.url).await?;
        let job = jobs[jobs.len() / 2].0;
        let pages: Vec<(String, String, bool)> = vec![
            ("dashboard `/`".into(), "/".into(), true),
            ("job list `/jobs` (page 1)".into(), "/jobs".into(), true),
            (
                format!("run list `/runs?job={job}` (page 1, one job)"),
                format!("/runs?job={job}"),
                true,
            ),
            (
                "run list `/runs` (page 1, no filter; no target)".into(),
                "/runs".into(),
                false,
            ),
        ];
        for _ in 0..opts.warmup {
            for (_, path, _) in &pages {
                get_page(&client, &admin.url, path, &cookie).await?;
            }
        }
        // pages in turn, so a noisy moment of the machine touches each page alike
        let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.requests); pages.len()];
        let mut sizes = vec![0usize; pages.len()];
        for _ in 0..opts.requests {
            for (k, (_, path, _)) in pages.iter().enumerate() {
                let t = Instant::now();
                sizes[k] = get_page(&client, &admin.url, path, &cookie).await?;
                samples[k].push(t.elapsed().as_secs_f64() * 1_000.0);
            }
        }
        let mut table = Table::new(
            format!(
                "console: page times, {} jobs, {} runs, {} requests each, sequential, one kept-alive connection ({backend}, load average {})",
                opts.jobs,
                opts.runs,
                opts.requests,
                load_average()
            ),
            &[
                "page", "p50 ms", "p95 ms", "p99 ms", "max ms", "bytes", "target",
            ],
        );
        for (k, (name, _, targeted)) in pages.iter().enumerate() {
            let mut v = samples[k].clone();
            v.sort_by(f64::total_cmp);
            let p99 = percentile(&v, 99.0);
            table.row([
                name.clone(),
                ms(percentile(&v, 50.0)),
                ms(percentile(&v, 95.0)),
                ms(p99),
                ms(*v.last().unwrap_or(&0.0)),
                sizes[k].to_string(),
                if !targeted {
                    "—".to_string()
                } else if p99 < TARGET_MS {
                    format!("✔ p99 < {TARGET_MS:.0} ms")
                } else {
                    format!("✘ p99 ≥ {TARGET_MS:.0} ms")
                },
            ]);
        }
        println!("{}", table.render());

        // the same pages and the others of the console, as a browser paints them
        if !first_paint::available() {
            println!("first paint: skipped (no /usr/bin/chromium and /usr/bin/chromedriver)");
            return Ok(());
        }
        let run = any_run_of(&client, &admin.url, &cookie, job).await?;
        let group = jobs[0].1;
        let browsed: Vec<(String, String)> = [
            ("dashboard", "/".to_string()),
            ("job list", "/jobs".into()),
            ("job form (new)", "/jobs/new".into()),
            ("job form (edit)", format!("/jobs/{job}")),
            ("run list", "/runs".into()),
            ("run list, one job", format!("/runs?job={job}")),
            ("run page", format!("/runs/{run}")),
            ("workflows", "/workflows".into()),
            ("workflow editor (new)", "/workflows/new".into()),
            ("executor groups", "/executors".into()),
            ("executor group form", format!("/executors/{group}")),
            ("users", "/users".into()),
            ("API tokens", "/tokens".into()),
            ("audit log", "/audit".into()),
            ("password", "/account/password".into()),
            ("API reference", "/api-docs".into()),
            ("system", "/system".into()),
        ]
        .into_iter()
        .map(|(name, path)| (format!("{name} `{path}`"), path))
        .collect();
        let table = first_paint::measure(&first_paint::Plan {
            base: &admin.url,
            cookie: &cookie,
            pages: &browsed,
            visits: opts.paints,
            title: format!(
                "console: first paint in headless chromium, {} jobs, {} runs, {} loads each after one unmeasured, cache warm ({backend}, load average {})",
                opts.jobs,
                opts.runs,
                opts.paints,
                load_average()
            ),
        })
        .await?;
        println!("{}", table.render());
        Ok::<(), String>(())
    }
    .await;
    admin.process.stop(Duration::from_secs(10)).await;
    measured
}

/// Logs in as `admin` (the bench admin's password) and returns the `Cookie` header to send.
async fn log_in(client: &awc::Client, base: &str) -> Result<String, String> {
    let res = client
        .post(format!("{base}/api/v1/auth/login"))
        .send_json(
            &serde_json::json!({"username": "admin", "password": super::procs::ADMIN_PASSWORD}),
        )
        .await
        .map_err(|e| format!("login request failed: {e}"))?;
    if res.status().as_u16() != 200 {
        return Err(format!("login answered {}", res.status()));
    }
    let cookies: Vec<String> = res
        .headers()
        .get_all(actix_web::http::header::SET_COOKIE)
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next().map(|s| s.trim().to_string()))
        .collect();
    if cookies.is_empty() {
        return Err("login set no cookie".into());
    }
    Ok(cookies.join("; "))
}

/// The id of one run of `job`, for the run page.
async fn any_run_of(
    client: &awc::Client,
    base: &str,
    cookie: &str,
    job: i32,
) -> Result<i64, String> {
    let mut res = client
        .get(format!("{base}/api/v1/logs?jobId={job}&limit=1"))
        .insert_header((actix_web::http::header::COOKIE, cookie))
        .send()
        .await
        .map_err(|e| format!("GET /api/v1/logs failed: {e}"))?;
    let body: serde_json::Value = res
        .json()
        .limit(1 << 20)
        .await
        .map_err(|e| format!("GET /api/v1/logs: {e}"))?;
    body["items"][0]["id"]
        .as_i64()
        .ok_or_else(|| format!("job {job} has no run: {body}"))
}

/// GETs a page with the session; returns its body's size. Anything but 200 is an error.
async fn get_page(
    client: &awc::Client,
    base: &str,
    path: &str,
    cookie: &str,
) -> Result<usize, String> {
    let mut res = client
        .get(format!("{base}{path}"))
        .insert_header((actix_web::http::header::COOKIE, cookie))
        .send()
        .await
        .map_err(|e| format!("GET {path} failed: {e}"))?;
    let status = res.status().as_u16();
    let body = res
        .body()
        .limit(16 << 20)
        .await
        .map_err(|e| format!("GET {path}: cannot read the body: {e}"))?;
    if status != 200 {
        return Err(format!("GET {path} answered {status}"));
    }
    Ok(body.len())
}

/// Inserts `n` run rows across `jobs` (job id, group), oldest first over the last
/// [`SPAN_DAYS`] days: ~90 % success, ~6 % failed results, ~2 % failed triggers (their alarms
/// already sent, so the fail monitor has nothing to do), and the last [`RUNNING_MS`] still
/// running. Returns the daily counts (UTC days) for the dashboard's report table.
async fn seed_runs(db: &BenchDb, jobs: &[(i32, i32)], n: usize) -> Result<Vec<LogReport>, String> {
    let now = now_ms();
    let start = now - SPAN_DAYS * DAY_MS;
    let step = (SPAN_DAYS * DAY_MS) as f64 / n.max(1) as f64;
    let mut reports: Vec<LogReport> = Vec::new();
    let mut statements: Vec<String> = Vec::with_capacity(STATEMENTS_PER_TX);
    let mut i = 0usize;
    while i < n {
        let end = (i + ROWS_PER_STATEMENT).min(n);
        let mut sql = String::with_capacity(ROWS_PER_STATEMENT * 200);
        sql.push_str(
            "INSERT INTO job_log (job_group, job_id, trigger_type, schedule_time, executor_address, \
             executor_handler, executor_fail_retry_count, trigger_time, trigger_code, trigger_msg, \
             handle_time, handle_code, handle_msg, alarm_status) VALUES ",
        );
        for k in i..end {
            let (job, group) = jobs[k % jobs.len()];
            let time = start + (k as f64 * step) as i64;
            // a cheap hash, so outcomes do not line up with jobs
            let h = (k as u64).wrapping_mul(2_654_435_761) % 100;
            let (trigger_code, handle_code, alarm) = if now - time < RUNNING_MS {
                (200, 0, alarm_status::DEFAULT)
            } else if h < 2 {
                (500, 0, alarm_status::SENT)
            } else if h < 8 {
                (200, 500, alarm_status::SENT)
            } else {
                (200, 200, alarm_status::NOT_NEEDED)
            };
            let handle_time = if handle_code > 0 { time + 150 } else { 0 };
            let trigger_msg = if trigger_code == 200 {
                "'trigger: ok'"
            } else {
                "'trigger: executor unreachable'"
            };
            let handle_msg = if handle_code == 500 {
                "'bench failure'"
            } else {
                "NULL"
            };
            if k > i {
                sql.push_str(", ");
            }
            let _ = write!(
                sql,
                "({group}, {job}, 'CRON', {time}, 'http://127.0.0.1:9/', 'benchNoop', 0, {time}, \
                 {trigger_code}, {trigger_msg}, {handle_time}, {handle_code}, {handle_msg}, {alarm})"
            );
            let day = time - time.rem_euclid(DAY_MS);
            if reports.last().map(|r| r.trigger_day) != Some(day) {
                reports.push(LogReport {
                    trigger_day: day,
                    running_count: 0,
                    suc_count: 0,
                    fail_count: 0,
                    update_time: now,
                });
            }
            let report = reports.last_mut().expect("a day's counts");
            match (trigger_code, handle_code) {
                (_, 200) => report.suc_count += 1,
                (200, 0) => report.running_count += 1,
                _ => report.fail_count += 1,
            }
        }
        statements.push(sql);
        i = end;
        if statements.len() == STATEMENTS_PER_TX || i >= n {
            execute_in_tx(db, &statements).await?;
            statements.clear();
        }
    }
    Ok(reports)
}

/// Runs the statements in one transaction on a connection of the bench's own.
async fn execute_in_tx(db: &BenchDb, statements: &[String]) -> Result<(), String> {
    use sqlx::Connection as _;
    let err = |e: sqlx::Error| format!("cannot insert runs: {e}");
    if db.url.starts_with("sqlite") {
        let mut conn = sqlx::SqliteConnection::connect(&db.url)
            .await
            .map_err(err)?;
        let mut tx = conn.begin().await.map_err(err)?;
        for s in statements {
            sqlx::raw_sql(s).execute(&mut *tx).await.map_err(err)?;
        }
        tx.commit().await.map_err(err)?;
        conn.close().await.map_err(err)?;
    } else {
        let mut conn = sqlx::PgConnection::connect(&db.url).await.map_err(err)?;
        let mut tx = conn.begin().await.map_err(err)?;
        for s in statements {
            sqlx::raw_sql(s).execute(&mut *tx).await.map_err(err)?;
        }
        tx.commit().await.map_err(err)?;
        conn.close().await.map_err(err)?;
    }
    Ok(())
}

/// PostgreSQL: `VACUUM ANALYZE` (what autovacuum does soon after a load this size; without it
/// the planner knows nothing of the new rows). SQLite: nothing, as the admin never runs
/// `ANALYZE` either.
async fn analyze(db: &BenchDb) -> Result<&'static str, String> {
    use sqlx::Connection as _;
    if db.url.starts_with("postgres") {
        let err = |e: sqlx::Error| format!("cannot analyze: {e}");
        let mut conn = sqlx::PgConnection::connect(&db.url).await.map_err(err)?;
        sqlx::raw_sql("VACUUM ANALYZE job_log, job_info, job_log_report")
            .execute(&mut conn)
            .await
            .map_err(err)?;
        conn.close().await.map_err(err)?;
        Ok("VACUUM ANALYZE of the tables")
    } else {
        Ok("no ANALYZE (the admin runs none)")
    }
}
