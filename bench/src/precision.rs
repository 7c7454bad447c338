//! `precision`: J jobs on `* * * * * ?` for D seconds; lateness of each `/run` receipt after its
//! scheduled second, duplicates and gaps; then the same J once-a-second jobs in-process on
//! tokio-cron-scheduler, then the transport floor (the same calls from the admin's HTTP client
//! alone, [`super::transport`]), and the distributions side by side.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jobwheel::clock::{now_ms, now_us, sleep_until_epoch_ms};
use jobwheel::model::ScheduleType;
use tokio_cron_scheduler::{Job, JobScheduler};

use super::common::{logs_since, match_receipts, mib, second_after, Ctx, Matched, Stage};
use super::db::scheduled_job;
use super::procs::cpu_percent;
use super::stats::{
    check_fires, histogram_svg, ms, nice_ceiling, summarize, FireCheck, Lateness, Series, Table,
};
use super::transport;

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Jobs.
    pub jobs: usize,
    /// Seconds of firing.
    pub duration: u64,
    /// Where to write the SVG histogram.
    pub histogram: Option<PathBuf>,
}

/// Seconds skipped at each end of a run for the steady-window figures (gaps, steady lateness):
/// the first seconds open the admin's connections to the executors, the last may be cut short.
const STEADY_SKIP_MS: i64 = 2_000;

/// Lateness sample and fire check of one scheduler.
struct Outcome {
    lateness: Lateness,
    check: FireCheck,
    note: String,
}

/// Runs the scenario and prints its tables.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let backend = ctx.backend_name();
    println!(
        "precision: {} jobs, cron '* * * * * ?', {} s, on {backend} (load average {})",
        opts.jobs,
        opts.duration,
        super::common::load_average()
    );
    let (jw, admin_cpu, admin_rss) = run_jobwheel(ctx, opts).await?;
    println!(
        "precision: tokio-cron-scheduler, {} jobs, {} s",
        opts.jobs, opts.duration
    );
    let tcs = run_tokio_cron(opts.jobs, opts.duration)?;
    println!(
        "precision: transport floor, {} calls a second from the admin's HTTP client alone, {} s",
        opts.jobs, opts.duration
    );
    let floor = transport::run(opts.jobs, opts.duration, STEADY_SKIP_MS).await?;

    let mut t = Table::new(
        format!(
            "precision: {} jobs firing every second for {} s ({backend})",
            opts.jobs, opts.duration
        ),
        &[
            "scheduler",
            "fires",
            "p50 ms",
            "p99 ms",
            "max ms",
            "duplicates",
            "gaps",
            "notes",
        ],
    );
    let jw_s = summarize(&jw.lateness.all);
    let tcs_s = summarize(&tcs.lateness.all);
    let steady_note = format!(
        "steady window: first and last {} s skipped, as for gaps",
        STEADY_SKIP_MS / 1_000
    );
    for (name, o) in [
        ("jobwheel (admin process + DB)", &jw),
        ("tokio-cron-scheduler (in-process)", &tcs),
    ] {
        t.row(row(name, &o.lateness.all, Some(&o.check), &o.note));
        t.row(row(
            &format!("{name}, steady window"),
            &o.lateness.steady,
            Some(&o.check),
            &steady_note,
        ));
    }
    let floor_note = format!(
        "no scheduler, no database: {} of {} calls failed",
        floor.failed, floor.calls
    );
    t.row(row(
        "transport floor (the admin's client alone)",
        &floor.lateness.all,
        None,
        &floor_note,
    ));
    t.row(row(
        "transport floor, steady window",
        &floor.lateness.steady,
        None,
        &steady_note,
    ));
    println!("{}", t.render());
    let mut r = Table::new(
        "precision: ratio jobwheel / tokio-cron-scheduler",
        &["figure", "ratio"],
    );
    if let (Some(a), Some(b)) = (jw_s, tcs_s) {
        for (name, x, y) in [
            ("p50", a.p50, b.p50),
            ("p99", a.p99, b.p99),
            ("max", a.max, b.max),
        ] {
            r.row([name.to_string(), ratio(x, y)]);
        }
    }
    println!("{}", r.render());
    if let Some(line) = per_second_line("jobwheel", &jw.lateness.per_second_p99) {
        println!("{line}");
    }
    if let Some(line) = per_second_line("transport floor", &floor.lateness.per_second_p99) {
        println!("{line}");
    }
    let (c, s) = (floor.caller_us_per_call, floor.server_us_per_call);
    println!(
        "transport floor CPU per call: calling threads {:.1} µs ({:.1} user, {:.1} kernel), simulated executor {:.1} µs ({:.1} user, {:.1} kernel)",
        c.user + c.system,
        c.user,
        c.system,
        s.user + s.system,
        s.user,
        s.system
    );
    println!(
        "jobwheel admin during the run: CPU {admin_cpu:.1}% of one core ({:.1} µs per fire), peak RSS {} MiB\n",
        // every job fires once a second over the window the CPU was measured on
        admin_cpu / 100.0 * 1e6 / opts.jobs.max(1) as f64,
        mib(admin_rss)
    );
    if let Some(path) = &opts.histogram {
        let upper = jw_s
            .map(|s| s.p99)
            .into_iter()
            .chain(tcs_s.map(|s| s.p99))
            .fold(10.0_f64, f64::max);
        let upper = nice_ceiling(upper * 1.1);
        let svg = histogram_svg(
            &format!(
                "Lateness of once-a-second fires: {} jobs, {} s, {backend}",
                opts.jobs, opts.duration
            ),
            &[
                Series {
                    label: "jobwheel (receipt of /run at the executor)",
                    values: &jw.lateness.all,
                    color: "#1f77b4",
                },
                Series {
                    label: "tokio-cron-scheduler (callback start)",
                    values: &tcs.lateness.all,
                    color: "#ff7f0e",
                },
            ],
            upper,
            50,
        );
        std::fs::write(path, svg)
            .map_err(|e| format!("cannot write histogram '{}': {e}", path.display()))?;
        println!("histogram written to {}", path.display());
    }
    if jw.lateness.all.is_empty() {
        return Err("jobwheel fired nothing: the scenario could not run".into());
    }
    if tcs.lateness.all.is_empty() {
        return Err("tokio-cron-scheduler fired nothing: the scenario could not run".into());
    }
    Ok(())
}

/// A row of the lateness table; the transport floor has no jobs to check for duplicates or gaps.
fn row(name: &str, lateness: &[f64], check: Option<&FireCheck>, note: &str) -> Vec<String> {
    let (p50, p99, max) = summarize(lateness).map_or(("-".into(), "-".into(), "-".into()), |s| {
        (ms(s.p50), ms(s.p99), ms(s.max))
    });
    let (duplicates, gaps) = check.map_or(("-".into(), "-".into()), |c| {
        (
            c.duplicates.to_string(),
            format!("{} of {}", c.gaps, c.expected),
        )
    });
    vec![
        name.to_string(),
        lateness.len().to_string(),
        p50,
        p99,
        max,
        duplicates,
        gaps,
        note.to_string(),
    ]
}

/// Where in the run the late fires are: each second's p99, for the first, the median and the
/// worst second (the whole run's p99 is set by its worst 1% of fires, often one second's).
fn per_second_line(name: &str, p99s: &[f64]) -> Option<String> {
    let first = *p99s.first()?;
    let mut sorted = p99s.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let (worst_at, worst) = p99s
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, v)| (i, *v))?;
    let over_20 = p99s.iter().filter(|v| **v > 20.0).count();
    Some(format!(
        "{name} p99 per second: first second {}, median second {}, worst second {} (second {} of {}); {over_20} of {} seconds over 20 ms",
        ms(first),
        ms(median),
        ms(worst),
        worst_at + 1,
        p99s.len(),
        p99s.len()
    ))
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "-".into()
    }
}

/// The admin process fires J cron jobs to a simulated executor; returns the outcome, the
/// admin's CPU share and peak RSS (KiB) during the run.
async fn run_jobwheel(ctx: &Ctx, opts: &Options) -> Result<(Outcome, f64, u64), String> {
    let stage = Stage::start(ctx, "prec").await?;
    let result = fire_and_measure(&stage, opts).await;
    stage.finish().await;
    result
}

async fn fire_and_measure(stage: &Stage, opts: &Options) -> Result<(Outcome, f64, u64), String> {
    // the jobs are in the database well before their first second
    let lead = 3_000 + opts.jobs as i64 / 2;
    let t0 = second_after(lead);
    let end = t0 + opts.duration as i64 * 1_000;
    let group = stage.group;
    stage
        .db
        .insert_jobs(opts.jobs, |i| {
            scheduled_job(group, i, (ScheduleType::Cron, "* * * * * ?"), t0)
        })
        .await?;
    let mut note = String::new();
    if now_ms() > t0 - 1_000 {
        note = "jobs were inserted less than 1 s before the first second".into();
    }
    let ids = stage.db.job_ids(group).await?;
    sleep_until_epoch_ms(t0).await;
    let before = stage.admin.process.sample()?;
    let started = Instant::now();
    let peak_rss = stage.admin.process.peak_rss_until(end).await?;
    let after = stage.admin.process.sample()?;
    let cpu = cpu_percent(before, after, started.elapsed());
    // the last second's fires and their results
    actix_web::rt::time::sleep(Duration::from_secs(2)).await;
    // receipts first: the admin keeps firing, and every receipt's log row is written before
    // its /run is sent, so the logs read afterwards hold them all
    let receipts = stage.sim.receipts();
    let logs = logs_since(&stage.db.store, t0 - 10_000).await?;
    let Matched {
        fires,
        late,
        unknown,
    } = match_receipts(&receipts, &logs);
    if unknown > 0 {
        note.push_str(&format!("{unknown} receipts without a log row; "));
    }
    let (_, failed) = stage.sim.callbacks();
    if failed > 0 {
        note.push_str(&format!("{failed} results could not be posted; "));
    }
    if stage.sim.bad_requests() > 0 {
        note.push_str(&format!(
            "{} unreadable /run bodies; ",
            stage.sim.bad_requests()
        ));
    }
    let check = check_fires(fires, &ids, t0 + STEADY_SKIP_MS, end - STEADY_SKIP_MS);
    Ok((
        Outcome {
            lateness: Lateness::of(late, (t0, end), STEADY_SKIP_MS),
            check,
            note,
        },
        cpu,
        peak_rss,
    ))
}

/// The same once-a-second jobs on tokio-cron-scheduler (2 worker threads, like the machine's
/// cores). The scheduled second of a callback is the whole second at or before its start,
/// exact while lateness stays under 1 s (the max column shows whether it did).
fn run_tokio_cron(jobs: usize, secs: u64) -> Result<Outcome, String> {
    let records: Arc<Mutex<Vec<(i32, i64, f64)>>> = Arc::new(Mutex::new(Vec::new()));
    // its own thread and runtime, created and dropped there (not inside the actix system)
    let window = std::thread::spawn({
        let records = records.clone();
        move || {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| format!("cannot build a tokio runtime: {e}"))?
                .block_on(tokio_cron_body(jobs, secs, records))
        }
    })
    .join()
    .map_err(|_| "tokio-cron-scheduler run panicked".to_string())??;
    let (t0, end) = window;
    let records = std::mem::take(&mut *records.lock().unwrap_or_else(PoisonError::into_inner));
    let lateness = Lateness::of(
        records.iter().map(|(_, s, l)| (*s, *l)),
        (t0, end),
        STEADY_SKIP_MS,
    );
    let ids: Vec<i32> = (0..jobs as i32).collect();
    let check = check_fires(
        records.iter().map(|(j, s, _)| (*j, *s)),
        &ids,
        t0 + STEADY_SKIP_MS,
        end - STEADY_SKIP_MS,
    );
    Ok(Outcome {
        lateness,
        check,
        note: "scheduled second = callback start rounded down".into(),
    })
}

async fn tokio_cron_body(
    jobs: usize,
    secs: u64,
    records: Arc<Mutex<Vec<(i32, i64, f64)>>>,
) -> Result<(i64, i64), String> {
    let mut sched = JobScheduler::new()
        .await
        .map_err(|e| format!("tokio-cron-scheduler: {e}"))?;
    for i in 0..jobs as i32 {
        let records = records.clone();
        let job = Job::new_async("* * * * * *", move |_id, _l| {
            let records = records.clone();
            Box::pin(async move {
                let at = now_us() as f64 / 1_000.0;
                let second = (at / 1_000.0).floor() as i64 * 1_000;
                records
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((i, second, at - second as f64));
            })
        })
        .map_err(|e| format!("tokio-cron-scheduler job: {e}"))?;
        sched
            .add(job)
            .await
            .map_err(|e| format!("tokio-cron-scheduler add: {e}"))?;
    }
    sched
        .start()
        .await
        .map_err(|e| format!("tokio-cron-scheduler start: {e}"))?;
    let t0 = second_after(1_000);
    let end = t0 + secs as i64 * 1_000;
    let wait = (end + 1_500 - now_ms()).max(0) as u64;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    sched
        .shutdown()
        .await
        .map_err(|e| format!("tokio-cron-scheduler shutdown: {e}"))?;
    Ok((t0, end))
}
