//! `throughput`: steps of J FIX_RATE 1 s jobs (J fires per second); a step is sustained when
//! every fire of its steady window has its result stored within the bound, none lost and none
//! duplicated. Reports the highest sustained end-to-end rate and the admin's CPU share.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use jobwheel::clock::sleep_until_epoch_ms;
use jobwheel::model::ScheduleType;

use super::common::{logs_since, mib, second_after, Ctx, Stage};
use super::db::scheduled_job;
use super::procs::cpu_percent;
use super::stats::{ms, summarize, Table};

/// One step's figures.
#[derive(Debug, Clone)]
pub struct StepResult {
    /// Jobs, i.e. fires per second offered.
    pub jobs: usize,
    /// (job, second) pairs of the steady window.
    pub expected: usize,
    /// Results stored per second of the steady window.
    pub stored_per_sec: f64,
    /// Pairs with no stored success.
    pub lost: usize,
    /// Extra log rows or receipts for the same pair.
    pub duplicates: usize,
    /// Results stored later than the bound.
    pub late: usize,
    /// Scheduled second to result stored, p50 and p99, ms.
    pub lag: Option<(f64, f64)>,
    /// Admin CPU, percent of one core, over the firing period.
    pub admin_cpu: f64,
    /// Admin peak RSS, KiB.
    pub admin_rss_kb: u64,
    /// Nothing lost, duplicated or late.
    pub sustained: bool,
}

/// Runs one step: `jobs` once-a-second jobs for `secs` seconds on a fresh admin and database.
pub async fn run_step(
    ctx: &Ctx,
    jobs: usize,
    secs: u64,
    bound_ms: i64,
) -> Result<StepResult, String> {
    let stage = Stage::start(ctx, "tput").await?;
    let result = measure_step(&stage, jobs, secs, bound_ms).await;
    stage.finish().await;
    result
}

async fn measure_step(
    stage: &Stage,
    jobs: usize,
    secs: u64,
    bound_ms: i64,
) -> Result<StepResult, String> {
    let t0 = second_after(3_000 + jobs as i64 / 2);
    let end = t0 + secs as i64 * 1_000;
    let group = stage.group;
    stage
        .db
        .insert_jobs(jobs, |i| {
            scheduled_job(group, i, (ScheduleType::FixRate, "1"), t0)
        })
        .await?;
    let ids = stage.db.job_ids(group).await?;
    sleep_until_epoch_ms(t0).await;
    let before = stage.admin.process.sample()?;
    let started = Instant::now();
    let peak = stage.admin.process.peak_rss_until(end).await?;
    let after = stage.admin.process.sample()?;
    let admin_cpu = cpu_percent(before, after, started.elapsed());
    // results of the window's last fires may take up to the bound
    sleep_until_epoch_ms(end + bound_ms + 500).await;
    let (from, to) = (t0 + 2_000, end - 2_000);
    let logs = logs_since(&stage.db.store, t0 - 10_000).await?;
    let mut rows_per_pair: HashMap<(i32, i64), usize> = HashMap::new();
    let mut stored: HashSet<(i32, i64)> = HashSet::new();
    let mut lags = Vec::new();
    let mut late = 0;
    for l in logs.values() {
        if l.schedule_time < from || l.schedule_time >= to {
            continue;
        }
        *rows_per_pair
            .entry((l.job_id, l.schedule_time))
            .or_default() += 1;
        if l.handle_code == 200 {
            stored.insert((l.job_id, l.schedule_time));
            let lag = l.handle_time - l.schedule_time;
            lags.push(lag as f64);
            if lag > bound_ms {
                late += 1;
            }
        }
    }
    let mut receipts_per_log: HashMap<i64, usize> = HashMap::new();
    for r in stage.sim.receipts() {
        *receipts_per_log.entry(r.log_id).or_default() += 1;
    }
    let duplicates = rows_per_pair.values().map(|n| n - 1).sum::<usize>()
        + receipts_per_log.values().map(|n| n - 1).sum::<usize>();
    let seconds = ((to - from) / 1_000).max(0) as usize;
    let expected = ids.len() * seconds;
    let wanted: HashSet<i32> = ids.into_iter().collect();
    let stored_ok = stored.iter().filter(|(j, _)| wanted.contains(j)).count();
    let lost = expected.saturating_sub(stored_ok);
    let lag = summarize(&lags).map(|s| (s.p50, s.p99));
    Ok(StepResult {
        jobs,
        expected,
        stored_per_sec: if seconds > 0 {
            stored_ok as f64 / seconds as f64
        } else {
            0.0
        },
        lost,
        duplicates,
        late,
        lag,
        admin_cpu,
        admin_rss_kb: peak,
        sustained: lost == 0 && duplicates == 0 && late == 0 && expected > 0,
    })
}

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Jobs per step (fires per second), raised in order.
    pub steps: Vec<usize>,
    /// Seconds per step.
    pub duration: u64,
    /// A result stored later than this after its second counts as lagging.
    pub bound_ms: i64,
}

/// A table of step results.
pub fn step_table(title: String, steps: &[StepResult], bound_ms: i64) -> Table {
    let mut t = Table::new(
        title,
        &[
            "fires/s offered",
            "fires in window",
            "results stored/s",
            "lost",
            "duplicated",
            &format!("later than {bound_ms} ms"),
            "lag p50 ms",
            "lag p99 ms",
            "admin CPU % (1 core)",
            "admin peak RSS MiB",
            "sustained",
        ],
    );
    for s in steps {
        let (p50, p99) = s
            .lag
            .map_or(("-".into(), "-".into()), |(a, b)| (ms(a), ms(b)));
        t.row([
            s.jobs.to_string(),
            s.expected.to_string(),
            format!("{:.0}", s.stored_per_sec),
            s.lost.to_string(),
            s.duplicates.to_string(),
            s.late.to_string(),
            p50,
            p99,
            format!("{:.0}", s.admin_cpu),
            mib(s.admin_rss_kb),
            if s.sustained { "yes" } else { "no" }.to_string(),
        ]);
    }
    t
}

/// Runs the steps until one is not sustained and prints the table.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let backend = ctx.backend_name();
    let mut results = Vec::new();
    for &jobs in &opts.steps {
        println!(
            "throughput: {jobs} fires/s for {} s on {backend} (load average {})",
            opts.duration,
            super::common::load_average()
        );
        let r = run_step(ctx, jobs, opts.duration, opts.bound_ms).await?;
        let sustained = r.sustained;
        results.push(r);
        if !sustained {
            break;
        }
    }
    let t = step_table(
        format!(
            "throughput: FIX_RATE 1 s jobs, {} s per step, steady window without the first and last 2 s ({backend})",
            opts.duration
        ),
        &results,
        opts.bound_ms,
    );
    println!("{}", t.render());
    match results
        .iter()
        .filter(|r| r.sustained)
        .max_by_key(|r| r.jobs)
    {
        Some(best) => println!(
            "highest sustained end-to-end rate: {:.0} fires/s (admin CPU {:.0}% of one core)\n",
            best.stored_per_sec, best.admin_cpu
        ),
        None => println!("no step was sustained\n"),
    }
    if results.iter().all(|r| r.stored_per_sec == 0.0) {
        return Err("no result was stored: the scenario could not run".into());
    }
    Ok(())
}
