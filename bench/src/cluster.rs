//! `cluster`: J jobs on `* * * * * ?` for D seconds, fired by 1 or N admin processes on one
//! database to E simulated executors that are processes of their own (this binary in its hidden
//! `sim-executor` mode), each posting results in batches of up to 1,000 with 8 posts in flight,
//! round robin over the admins. Per configuration (backend × admins): lateness of each `/run`
//! receipt after its scheduled second, duplicates, gaps, the sustained rate, and from the
//! database the runs marked as reached (trigger code 200) that no executor received.
//!
//! With `--ratch-job BIN`, ratch-job fires the same jobs to the same executor processes (see
//! [`super::ratch`]), measured from the receipts alone.
//!
//! The configurations run one after the other in the same invocation, so the ratios the
//! issue names (PostgreSQL p99 / SQLite p99 with one admin; 3-admin rate and p99 / 1-admin) come
//! from the same machine state.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jobwheel::clock::{now_ms, sleep_until_epoch_ms};
use jobwheel::model::{RouteStrategy, ScheduleType};

pub use super::cluster_config::{Config, Scheduler};
use super::common::RunningAdmin;
use super::common::{
    load_average, logs_since, match_receipts, mib, second_after, start_admin, Ctx, LogFacts,
    Matched,
};
use super::db::{scheduled_job, BenchDb, BENCH_APP};
use super::procs::{cpu_percent, free_port, ProcSample, Spawned};
use super::ratch::{fires_of, RatchJob};
use super::sim::{parse_receipts, Receipt, ReceiptReport, Reporting, SimExecutor, RECEIPTS_PATH};
use super::stats::{check_fires, ms, percentile, summarize, FireCheck, Lateness, Table};

/// Most results in one callback post of a simulated executor process, as a real executor's.
pub const RESULT_BATCH: usize = 1_000;

/// Seconds skipped at each end of the firing window for the steady-window figures.
const STEADY_SKIP_MS: i64 = 2_000;

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Configurations, run in order.
    pub configs: Vec<Config>,
    /// Jobs, each firing every second.
    pub jobs: usize,
    /// Seconds of firing.
    pub duration: u64,
    /// Simulated executor processes.
    pub executors: usize,
    /// The ratchjob binary the `ratch-job` configurations run.
    pub ratch_job: Option<PathBuf>,
}

/// Figures of one configuration.
#[derive(Debug, Clone)]
struct Outcome {
    config: Config,
    /// Fires the window should hold: jobs × seconds.
    expected: usize,
    /// Receipts of fires scheduled in the window.
    lateness: Lateness,
    check: FireCheck,
    /// Receipts per second of the steady window.
    rate: f64,
    /// What jobwheel's run rows say against the receipts (ratch-job's are not read).
    runs: Option<RunRows>,
    /// Each admin's CPU over the window, percent of one core.
    admin_cpu: Vec<f64>,
    /// Each admin's RSS at the end of the window, KiB.
    admin_rss_kb: Vec<u64>,
    /// Bytes of the SQLite files or of ratch-job's data folder at the end of the window.
    disk_bytes: Option<u64>,
    /// Lateness p50 and p99 of each share (fires of jobs whose `id % admins` is its index).
    by_share: Vec<(f64, f64)>,
    note: String,
}

/// Runs every configuration and prints the table and ratios.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let server = ctx.backend_name();
    let mut outcomes = Vec::new();
    for config in &opts.configs {
        println!(
            "cluster: {}, {} jobs, cron '* * * * * ?', {} s, {} simulated executor processes (load average {})",
            config.label(&server),
            opts.jobs,
            opts.duration,
            opts.executors,
            load_average()
        );
        outcomes.push(run_config(ctx, opts, *config).await?);
    }
    println!("{}", table(&outcomes, opts, &server).render());
    println!("{}", ratios(&outcomes, &server, opts.jobs).render());
    // a whole second of late fires is 1/duration of them: the p99 is made of the worst seconds
    for o in &outcomes {
        let seconds: Vec<String> = o
            .lateness
            .per_second_p99
            .iter()
            .map(|p99| format!("{p99:.0}"))
            .collect();
        println!(
            "{}: p99 of each second in ms: {}",
            o.config.label(&server),
            seconds.join(" ")
        );
        // the admins split the jobs by `id % admins`: one slow admin shows as one slow share
        if o.by_share.len() > 1 {
            let shares: Vec<String> = (o.by_share.iter().enumerate())
                .map(|(i, (p50, p99))| format!("{i}: {p50:.0} / {p99:.0}"))
                .collect();
            println!(
                "{}: p50 / p99 in ms by job id % {}: {}",
                o.config.label(&server),
                o.by_share.len(),
                shares.join(", ")
            );
        }
    }
    if let Some(o) = outcomes.iter().find(|o| o.lateness.all.is_empty()) {
        return Err(format!(
            "{} fired nothing: the scenario could not run",
            o.config.label(&server)
        ));
    }
    Ok(())
}

/// A fresh database, its admins and executors; fires, measures, stops and drops them all.
async fn run_config(ctx: &Ctx, opts: &Options, config: Config) -> Result<Outcome, String> {
    let url = match config.scheduler {
        Scheduler::Sqlite => None,
        Scheduler::Server => ctx.database_url.as_deref(),
        Scheduler::RatchJob => {
            let bin = (opts.ratch_job.as_deref()).ok_or("ratch-job needs --ratch-job BIN")?;
            return run_ratch_job(ctx, opts, config, bin).await;
        }
    };
    let db = BenchDb::create(url, &ctx.work, "clu").await?;
    let mut admins = Vec::new();
    let mut executors = Vec::new();
    let result = async {
        let group = db.group(BENCH_APP).await?;
        // the first admin migrates and creates the first user alone, then the others join
        for _ in 0..config.admins {
            admins.push(start_admin(ctx, &db).await?);
        }
        let urls: Vec<String> = admins.iter().map(|a| a.url.clone()).collect();
        for _ in 0..opts.executors {
            executors.push(spawn_sim_executor(&ctx.work, &urls)?);
        }
        wait_registered(&db, &mut executors).await?;
        fire_and_measure(&db, group, opts, config, &mut admins, &executors).await
    }
    .await;
    for a in admins {
        a.process.stop(Duration::from_secs(10)).await;
    }
    for e in executors {
        e.process.stop(Duration::from_secs(2)).await;
    }
    db.drop_db().await;
    result
}

/// ratch-job with the same simulated executor processes and as many jobs firing every second;
/// measured from the executors' receipts and its process.
async fn run_ratch_job(
    ctx: &Ctx,
    opts: &Options,
    config: Config,
    bin: &Path,
) -> Result<Outcome, String> {
    let mut ratch = RatchJob::start(bin, &ctx.work).await?;
    let mut executors = Vec::new();
    let result = async {
        for _ in 0..opts.executors {
            executors.push(spawn_sim_executor(&ctx.work, &[ratch.admin_url()])?);
        }
        ratch.wait_registered(opts.executors).await?;
        let ids = ratch.create_jobs(opts.jobs).await?;
        // a created job fires at once: the window starts once they all fire, as jobwheel's
        let t0 = second_after(3_000);
        let end = t0 + opts.duration as i64 * 1_000;
        sleep_until_epoch_ms(t0).await;
        let before = ratch.process.sample()?;
        let started = Instant::now();
        sleep_until_epoch_ms(end).await;
        let after = ratch.process.sample()?;
        let disk_bytes = ratch.data_bytes();
        // the last second's fires
        actix_web::rt::time::sleep(Duration::from_secs(2)).await;
        let reports = fetch_reports(&executors).await?;
        let receipts = all_receipts(&reports);
        let mut outcome = measure(&reports, fires_of(&receipts), None, &ids, (t0, end), config);
        outcome.admin_cpu = vec![cpu_percent(before, after, started.elapsed())];
        outcome.admin_rss_kb = vec![after.rss_kb];
        outcome.disk_bytes = Some(disk_bytes);
        Ok(outcome)
    }
    .await;
    ratch.process.stop(Duration::from_secs(10)).await;
    for e in executors {
        e.process.stop(Duration::from_secs(2)).await;
    }
    result
}

/// A simulated executor process and its port.
struct SimProcess {
    process: Spawned,
    port: u16,
}

/// Starts this binary as `sim-executor` on a free port, reporting to `admins`.
fn spawn_sim_executor(work: &Path, admins: &[String]) -> Result<SimProcess, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate the bench binary: {e}"))?;
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    let args = [
        "sim-executor".to_string(),
        "--admin".into(),
        admins.join(","),
        "--port".into(),
        port.to_string(),
    ];
    let log = work.join(format!("sim-executor-{port}.log"));
    let process = Spawned::start("simulated executor", &me, &args, log)?;
    Ok(SimProcess { process, port })
}

/// Waits until every executor has registered (read from the database, as the admins read it).
async fn wait_registered(db: &BenchDb, executors: &mut [SimProcess]) -> Result<(), String> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let live = db
            .store
            .find_live_registry_for(BENCH_APP, now_ms() - 60_000)
            .await
            .map_err(|e| format!("cannot read the registry: {e}"))?;
        if live.len() >= executors.len() {
            return Ok(());
        }
        for e in executors.iter_mut() {
            e.process.check_alive()?;
        }
        if Instant::now() > until {
            return Err(format!(
                "{} of {} simulated executors registered within 30 s",
                live.len(),
                executors.len()
            ));
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Inserts the jobs, fires them for the window, stops the admins, then reads receipts and runs.
async fn fire_and_measure(
    db: &BenchDb,
    group: i32,
    opts: &Options,
    config: Config,
    admins: &mut Vec<RunningAdmin>,
    executors: &[SimProcess],
) -> Result<Outcome, String> {
    let t0 = second_after(3_000 + opts.jobs as i64 / 2);
    let end = t0 + opts.duration as i64 * 1_000;
    db.insert_jobs(opts.jobs, |i| {
        let mut job = scheduled_job(group, i, (ScheduleType::Cron, "* * * * * ?"), t0);
        // spread over the executors, as a fleet is used
        job.executor_route_strategy = RouteStrategy::Round;
        job
    })
    .await?;
    let mut note = String::new();
    if now_ms() > t0 - 1_000 {
        note.push_str("jobs were inserted less than 1 s before the first second; ");
    }
    let ids = db.job_ids(group).await?;
    sleep_until_epoch_ms(t0).await;
    let before = samples(admins)?;
    let started = Instant::now();
    sleep_until_epoch_ms(end).await;
    let after = samples(admins)?;
    let admin_cpu = before
        .iter()
        .zip(&after)
        .map(|(b, a)| cpu_percent(*b, *a, started.elapsed()))
        .collect();
    let disk_bytes = sqlite_bytes(&db.url);
    // the last second's fires, then the admins stop: nothing changes the runs after that
    actix_web::rt::time::sleep(Duration::from_secs(2)).await;
    for a in std::mem::take(admins) {
        a.process.stop(Duration::from_secs(10)).await;
    }
    let reports = fetch_reports(executors).await?;
    let logs = logs_since(&db.store, t0 - 10_000).await?;
    let receipts = all_receipts(&reports);
    let received: HashSet<i64> = receipts.iter().map(|r| r.log_id).collect();
    let matched = match_receipts(&receipts, &logs);
    let runs = Some(run_rows(&logs, &received));
    let mut outcome = measure(&reports, matched, runs, &ids, (t0, end), config);
    outcome.admin_cpu = admin_cpu;
    outcome.admin_rss_kb = after.iter().map(|a| a.rss_kb).collect();
    outcome.disk_bytes = disk_bytes;
    outcome.note.insert_str(0, &note);
    Ok(outcome)
}

/// Bytes of a SQLite database's file and its write-ahead log; `None` for a server's.
fn sqlite_bytes(url: &str) -> Option<u64> {
    let path = url.strip_prefix("sqlite://")?;
    let size = |p: String| std::fs::metadata(p).map_or(0, |m| m.len());
    Some(size(path.to_string()) + size(format!("{path}-wal")))
}

fn samples(admins: &[RunningAdmin]) -> Result<Vec<ProcSample>, String> {
    admins.iter().map(|a| a.process.sample()).collect()
}

/// Every executor's receipts and counters.
async fn fetch_reports(executors: &[SimProcess]) -> Result<Vec<ReceiptReport>, String> {
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(60))
        .finish();
    let mut out = Vec::new();
    for e in executors {
        let url = format!("http://127.0.0.1:{}{RECEIPTS_PATH}", e.port);
        let mut res = client
            .get(&url)
            .send()
            .await
            .map_err(|err| format!("GET {url}: {err}"))?;
        let body = res
            .body()
            .limit(1 << 30)
            .await
            .map_err(|err| format!("GET {url}: {err}"))?;
        out.push(parse_receipts(&body).map_err(|err| format!("GET {url}: {err}"))?);
    }
    Ok(out)
}

/// Every executor's receipts, in one list.
fn all_receipts(reports: &[ReceiptReport]) -> Vec<Receipt> {
    reports
        .iter()
        .flat_map(|r| r.receipts.iter().copied())
        .collect()
}

/// The figures of one configuration from the executors' receipts matched to their fires and,
/// for jobwheel, what its run rows say.
fn measure(
    reports: &[ReceiptReport],
    matched: Matched,
    runs: Option<RunRows>,
    ids: &[i32],
    (t0, end): (i64, i64),
    config: Config,
) -> Outcome {
    let Matched {
        fires,
        late,
        unknown,
    } = matched;
    let (from, to) = (t0 + STEADY_SKIP_MS, end - STEADY_SKIP_MS);
    let steady_seconds = ((to - from) / 1_000).max(0);
    let in_steady = fires.iter().filter(|(_, s)| *s >= from && *s < to).count();
    let mut note = String::new();
    if unknown > 0 {
        note.push_str(&format!("{unknown} receipts without a run row; "));
    }
    let posted: u64 = reports.iter().map(|r| r.posted).sum();
    let posts: u64 = reports.iter().map(|r| r.posts).sum();
    if posts > 0 {
        note.push_str(&format!(
            "{posted} results posted in {posts} posts ({:.0} a post); ",
            posted as f64 / posts as f64
        ));
    }
    let failed: u64 = reports.iter().map(|r| r.failed).sum();
    if failed > 0 {
        note.push_str(&format!("{failed} results could not be posted; "));
    }
    let bad: u64 = reports.iter().map(|r| r.bad_requests).sum();
    if bad > 0 {
        note.push_str(&format!("{bad} unreadable /run bodies; "));
    }
    let by_share = by_share(&fires, &late, config.admins, (t0, end));
    Outcome {
        config,
        expected: ids.len() * ((end - t0) / 1_000).max(0) as usize,
        lateness: Lateness::of(late, (t0, end), STEADY_SKIP_MS),
        check: check_fires(fires, ids, from, to),
        rate: if steady_seconds > 0 {
            in_steady as f64 / steady_seconds as f64
        } else {
            0.0
        },
        runs,
        admin_cpu: Vec::new(),
        admin_rss_kb: Vec::new(),
        disk_bytes: None,
        by_share,
        note,
    }
}

/// Lateness p50 and p99 of the window's fires of each share (`job id % shares`); `fires` and
/// `late` are parallel, as [`match_receipts`] gives them.
fn by_share(
    fires: &[(i32, i64)],
    late: &[(i64, f64)],
    shares: usize,
    (start, end): (i64, i64),
) -> Vec<(f64, f64)> {
    let mut samples = vec![Vec::new(); shares.max(1)];
    for (&(job, _), &(second, ms)) in fires.iter().zip(late) {
        if second >= start && second < end {
            samples[job.rem_euclid(shares.max(1) as i32) as usize].push(ms);
        }
    }
    samples
        .into_iter()
        .map(|mut sample| {
            sample.sort_by(f64::total_cmp);
            match sample.is_empty() {
                true => (0.0, 0.0),
                false => (percentile(&sample, 50.0), percentile(&sample, 99.0)),
            }
        })
        .collect()
}

/// What the run rows say against what the executors received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct RunRows {
    reached_not_received: usize,
    code_zero: usize,
    failed: usize,
}

fn run_rows(logs: &HashMap<i64, LogFacts>, received: &HashSet<i64>) -> RunRows {
    let mut out = RunRows::default();
    for (id, l) in logs {
        match l.trigger_code {
            200 if !received.contains(id) => out.reached_not_received += 1,
            200 => {}
            0 => out.code_zero += 1,
            _ => out.failed += 1,
        }
    }
    out
}

fn table(outcomes: &[Outcome], opts: &Options, server: &str) -> Table {
    let mut t = Table::new(
        format!(
            "cluster: {} jobs firing every second for {} s, {} simulated executor processes (results in batches of up to {RESULT_BATCH}); steady window without the first and last {} s",
            opts.jobs,
            opts.duration,
            opts.executors,
            STEADY_SKIP_MS / 1_000
        ),
        &[
            "configuration",
            "fires expected",
            "receipts",
            "duplicates",
            "gaps (steady)",
            "p50 ms",
            "p99 ms",
            "max ms",
            "steady p99 ms",
            "sustained /s",
            "200 not received",
            "code 0 left",
            "failed triggers",
            "admin CPU % (1 core each)",
            "admin CPU µs per fire (all admins)",
            "admin RSS MiB (window's end)",
            "on disk MiB (window's end)",
            "notes",
        ],
    );
    for o in outcomes {
        let (p50, p99, max) = summarize(&o.lateness.all)
            .map_or(("-".into(), "-".into(), "-".into()), |s| {
                (ms(s.p50), ms(s.p99), ms(s.max))
            });
        let steady = summarize(&o.lateness.steady).map_or("-".into(), |s| ms(s.p99));
        let cpu: Vec<String> = o.admin_cpu.iter().map(|c| format!("{c:.0}")).collect();
        let rss: Vec<String> = o.admin_rss_kb.iter().map(|kb| mib(*kb)).collect();
        // ratch-job's run rows are not read: what they would say is not known
        let runs =
            |f: fn(&RunRows) -> usize| o.runs.as_ref().map_or("-".into(), |r| f(r).to_string());
        t.row([
            o.config.label(server),
            o.expected.to_string(),
            o.lateness.all.len().to_string(),
            o.check.duplicates.to_string(),
            format!("{} of {}", o.check.gaps, o.check.expected),
            p50,
            p99,
            max,
            steady,
            format!("{:.0}", o.rate),
            runs(|r| r.reached_not_received),
            runs(|r| r.code_zero),
            runs(|r| r.failed),
            cpu.join(" / "),
            format!("{:.1}", us_per_fire(o, opts.jobs)),
            rss.join(" / "),
            o.disk_bytes.map_or("-".into(), |b| mib(b / 1024)),
            o.note.trim_end_matches("; ").to_string(),
        ]);
    }
    t
}

/// Admin CPU per fire, all admins together: every job fires once a second over the window the
/// CPU was measured on.
fn us_per_fire(o: &Outcome, jobs: usize) -> f64 {
    o.admin_cpu.iter().sum::<f64>() / 100.0 * 1e6 / jobs.max(1) as f64
}

fn p99(o: &Outcome) -> (Option<f64>, Option<f64>) {
    (
        summarize(&o.lateness.all).map(|s| s.p99),
        summarize(&o.lateness.steady).map(|s| s.p99),
    )
}

/// The comparisons, for the configurations this run holds.
fn ratios(outcomes: &[Outcome], server: &str, jobs: usize) -> Table {
    let mut t = Table::new(
        "cluster: ratios within this run",
        &["ratio", "whole window", "steady window", "target"],
    );
    let find = |scheduler: Scheduler, admins: usize| {
        outcomes
            .iter()
            .find(|o| o.config == Config { scheduler, admins })
    };
    // each ratch-job run against the SQLite run just before it (or the first), so alternating
    // configurations pair up
    for (i, theirs) in outcomes.iter().enumerate() {
        if theirs.config.scheduler != Scheduler::RatchJob {
            continue;
        }
        let ours = (outcomes[..i].iter().rev())
            .find(|o| o.config.scheduler == Scheduler::Sqlite)
            .or_else(|| find(Scheduler::Sqlite, 1));
        let Some(ours) = ours else { break };
        let rss = |o: &Outcome| o.admin_rss_kb.first().map(|kb| *kb as f64);
        let (a, b) = (p99(ours), p99(theirs));
        // CPU is measured over the whole window, RSS at its end
        let rows = [
            (
                "admin CPU µs per fire",
                ratio(
                    Some(us_per_fire(ours, jobs)),
                    Some(us_per_fire(theirs, jobs)),
                ),
                "-".into(),
                "≤ 1.0",
            ),
            ("p99", ratio(a.0, b.0), ratio(a.1, b.1), "≤ 0.33"),
            (
                "admin RSS at the window's end",
                ratio(rss(ours), rss(theirs)),
                "-".into(),
                "≤ 0.5",
            ),
        ];
        for (what, whole, steady, target) in rows {
            t.row([
                format!(
                    "{what}: sqlite 1 admin / ratch-job (configuration {})",
                    i + 1
                ),
                whole,
                steady,
                target.into(),
            ]);
        }
    }
    if let (Some(lite), Some(one)) = (find(Scheduler::Sqlite, 1), find(Scheduler::Server, 1)) {
        let (a, b) = (p99(one), p99(lite));
        t.row([
            format!("p99: {server} 1 admin / sqlite 1 admin"),
            ratio(a.0, b.0),
            ratio(a.1, b.1),
            "≤ 1.2".into(),
        ]);
    }
    let one = find(Scheduler::Server, 1);
    for many in outcomes
        .iter()
        .filter(|o| o.config.scheduler == Scheduler::Server && o.config.admins > 1)
    {
        let Some(one) = one else { break };
        let n = many.config.admins;
        t.row([
            format!("sustained rate: {server} {n} admins / 1 admin"),
            "-".into(),
            ratio(Some(many.rate), Some(one.rate)),
            "≥ 1.0".into(),
        ]);
        let (a, b) = (p99(many), p99(one));
        t.row([
            format!("p99: {server} {n} admins / 1 admin"),
            ratio(a.0, b.0),
            ratio(a.1, b.1),
            "≤ 1.2".into(),
        ]);
    }
    t
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".into(),
    }
}

/// The hidden `sim-executor` mode: serves the executor protocol on 127.0.0.1:`port`, registers
/// with the first admin that accepts (again every 30 s), posts results round robin over
/// `admins`, and answers [`RECEIPTS_PATH`] until it is stopped.
pub async fn sim_executor_main(admins: Vec<String>, port: u16) -> Result<(), String> {
    if admins.is_empty() {
        return Err("sim-executor: --admin is required".into());
    }
    let reporting = Reporting {
        admins,
        batch: RESULT_BATCH,
    };
    let sim = SimExecutor::start_reporting(reporting, port, 1)?;
    loop {
        if let Err(e) = sim.register(BENCH_APP).await {
            eprintln!("sim-executor: cannot register: {e}");
        }
        actix_web::rt::time::sleep(Duration::from_secs(30)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_split_the_window_by_job_id() {
        // jobs 3 and 6 are share 0, job 4 share 1; nothing of share 2; second 9,000 is outside
        let fires = [(3, 1_000), (6, 1_000), (4, 2_000), (4, 9_000)];
        let late = [
            (1_000, 10.0),
            (1_000, 30.0),
            (2_000, 2_500.0),
            (9_000, 99.0),
        ];
        let shares = by_share(&fires, &late, 3, (0, 5_000));
        assert_eq!(shares, vec![(10.0, 30.0), (2_500.0, 2_500.0), (0.0, 0.0)]);
    }

    #[test]
    fn run_rows_are_checked_against_receipts() {
        let fact = |trigger_code| LogFacts {
            job_id: 1,
            schedule_time: 0,
            trigger_code,
            handle_code: 0,
            handle_time: 0,
        };
        let logs: HashMap<i64, LogFacts> =
            [(1, fact(200)), (2, fact(200)), (3, fact(0)), (4, fact(500))]
                .into_iter()
                .collect();
        let received: HashSet<i64> = [1].into_iter().collect();
        assert_eq!(
            run_rows(&logs, &received),
            RunRows {
                reached_not_received: 1,
                code_zero: 1,
                failed: 1
            }
        );
    }
}
