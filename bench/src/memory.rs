//! `memory`: admin RSS idle (no jobs, then N jobs defined, scheduled far ahead) and at a firing
//! rate; `jobwheel executor` RSS idle, with many live JobActors, and after they are reaped.

use std::time::{Duration, Instant};

use jobwheel::clock::now_ms;
use jobwheel::model::ScheduleType;

use super::common::{mib, start_admin, Ctx};
use super::db::{scheduled_job, BenchDb, BENCH_APP};
use super::load::{send_triggers, Work};
use super::procs::{free_port, spawn_executor, Spawned};
use super::sim::FakeAdmin;
use super::stats::Table;
use super::throughput::run_step;

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Jobs defined for the admin's idle figure.
    pub jobs: usize,
    /// Fires per second for the admin's busy figure.
    pub rate: usize,
    /// Seconds of the busy run.
    pub duration: u64,
    /// Result bound of the busy run (as in `throughput`).
    pub bound_ms: i64,
    /// Distinct job ids triggered on the executor.
    pub actors: usize,
    /// The executor's idle timeout.
    pub idle_timeout_secs: u64,
    /// Seconds to let a process settle before an idle reading.
    pub settle_secs: u64,
}

/// Runs the scenario and prints its tables.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let backend = ctx.backend_name();
    println!(
        "memory: admin idle with {} jobs on {backend} (load average {})",
        opts.jobs,
        super::common::load_average()
    );
    let mut t = Table::new(
        format!("memory ({backend})"),
        &[
            "process",
            "state",
            "RSS MiB",
            "of which anonymous MiB",
            "of which file-backed MiB",
            "notes",
        ],
    );
    admin_idle(ctx, opts, &mut t).await?;
    println!(
        "memory: admin at {} fires/s for {} s",
        opts.rate, opts.duration
    );
    let step = run_step(ctx, opts.rate, opts.duration, opts.bound_ms).await?;
    t.row([
        "admin".to_string(),
        format!("firing {} jobs/s", opts.rate),
        mib(step.admin_rss_kb),
        "-".to_string(),
        "-".to_string(),
        format!(
            "peak; {:.0} results stored/s, sustained: {}",
            step.stored_per_sec,
            if step.sustained { "yes" } else { "no" }
        ),
    ]);
    println!("memory: executor with {} JobActors", opts.actors);
    executor_memory(ctx, opts, &mut t).await?;
    println!("{}", t.render());
    Ok(())
}

async fn admin_idle(ctx: &Ctx, opts: &Options, t: &mut Table) -> Result<(), String> {
    let db = BenchDb::create(ctx.database_url.as_deref(), &ctx.work, "mem").await?;
    let result = async {
        let group = db.group(BENCH_APP).await?;
        let mut admin = start_admin(ctx, &db).await?;
        actix_web::rt::time::sleep(Duration::from_secs(opts.settle_secs)).await;
        let empty = admin.process.sample()?;
        t.row([
            "admin".to_string(),
            "idle, no jobs".to_string(),
            mib(empty.rss_kb),
            mib(empty.anon_kb),
            mib(empty.file_kb),
            String::new(),
        ]);
        // scheduled, but not due for 30 days: every pre-read pass looks and finds nothing
        let far = now_ms() + 30 * 86_400_000;
        let loaded = Instant::now();
        db.insert_jobs(opts.jobs, |i| {
            scheduled_job(group, i, (ScheduleType::Cron, "* * * * * ?"), far)
        })
        .await?;
        let load_secs = loaded.elapsed().as_secs_f64();
        actix_web::rt::time::sleep(Duration::from_secs(opts.settle_secs)).await;
        admin.process.check_alive()?;
        let idle = admin.process.sample()?;
        t.row([
            "admin".to_string(),
            format!("idle, {} jobs defined", opts.jobs),
            mib(idle.rss_kb),
            mib(idle.anon_kb),
            mib(idle.file_kb),
            format!("jobs scheduled 30 days ahead (loaded in {load_secs:.1} s)"),
        ]);
        admin.process.stop(Duration::from_secs(10)).await;
        Ok::<(), String>(())
    }
    .await;
    db.drop_db().await;
    result
}

/// Waits until `check` holds, polling every 50 ms, at most `limit`.
async fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if check() {
            return true;
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

/// Starts `jobwheel executor` against a fake admin; returns it once it has registered.
pub async fn registered_executor(
    ctx: &Ctx,
    fake: &FakeAdmin,
    idle_timeout_secs: u64,
) -> Result<(Spawned, u16), String> {
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    fake.clear_registrations();
    let mut exec = spawn_executor(&ctx.bin, port, &fake.url, idle_timeout_secs, &ctx.work)?;
    if !wait_until(Duration::from_secs(30), || !fake.registrations().is_empty()).await {
        exec.check_alive()?;
        return Err(format!(
            "the executor did not register within 30 s; see {}",
            exec.log.display()
        ));
    }
    Ok((exec, port))
}

async fn executor_memory(ctx: &Ctx, opts: &Options, t: &mut Table) -> Result<(), String> {
    let fake = FakeAdmin::start()?;
    let (mut exec, port) = registered_executor(ctx, &fake, opts.idle_timeout_secs).await?;
    let result = async {
        actix_web::rt::time::sleep(Duration::from_secs(opts.settle_secs)).await;
        let idle = exec.sample()?;
        t.row([
            "executor".to_string(),
            "idle, registered".to_string(),
            mib(idle.rss_kb),
            mib(idle.anon_kb),
            mib(idle.file_kb),
            String::new(),
        ]);
        let work: Vec<(i32, i64)> = (1..=opts.actors as i64).map(|i| (i as i32, i)).collect();
        let base = format!("http://127.0.0.1:{port}/");
        let out = send_triggers(
            &base,
            jobwheel::executor::builtin::DEMO,
            Work::List(work),
            64,
        )
        .await;
        if out.failed > 0 {
            return Err(format!(
                "{} of {} triggers failed: {}",
                out.failed,
                opts.actors,
                out.first_error.unwrap_or_default()
            ));
        }
        let done = wait_until(Duration::from_secs(120), || {
            fake.callbacks().0 >= opts.actors
        })
        .await;
        exec.check_alive()?;
        let live = exec.sample()?;
        let per_actor =
            (live.rss_kb.saturating_sub(idle.rss_kb)) as f64 * 1024.0 / opts.actors as f64;
        let per_actor_anon =
            (live.anon_kb.saturating_sub(idle.anon_kb)) as f64 * 1024.0 / opts.actors as f64;
        t.row([
            "executor".to_string(),
            format!("{} idle JobActors alive", opts.actors),
            mib(live.rss_kb),
            mib(live.anon_kb),
            mib(live.file_kb),
            format!(
                "{per_actor:.0} bytes per JobActor over idle ({per_actor_anon:.0} anonymous); {} of {} results reported{}",
                fake.callbacks().0,
                opts.actors,
                if done { "" } else { " (timed out waiting)" }
            ),
        ]);
        // reaped after the idle timeout; a little slack for the timers
        actix_web::rt::time::sleep(Duration::from_secs(opts.idle_timeout_secs + 5)).await;
        exec.check_alive()?;
        let reaped = exec.sample()?;
        t.row([
            "executor".to_string(),
            "after the JobActors were reaped".to_string(),
            mib(reaped.rss_kb),
            mib(reaped.anon_kb),
            mib(reaped.file_kb),
            format!("idle timeout {} s", opts.idle_timeout_secs),
        ]);
        Ok(())
    }
    .await;
    exec.stop(Duration::from_secs(10)).await;
    fake.stop().await;
    result
}
