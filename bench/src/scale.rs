//! `scale`: the pre-read pass (the admin's own `pre_read`: lock, due jobs, claims, commit) run
//! in-process once a second against databases with few and with very many jobs defined, of
//! which the same number fire each second; plus each backend's plans of the due-jobs query and
//! of the claim.

use std::time::Instant;

use jobwheel::actors::schedule::{pre_read, Node};
use jobwheel::actors::timing_rules::PRE_READ_MS;
use jobwheel::clock::{now_ms, sleep_until_epoch_ms};
use jobwheel::model::ScheduleType;

use super::common::{second_after, Ctx};
use super::db::{scheduled_job, BenchDb, BENCH_APP};
use super::stats::{ms, summarize, Table};

/// The admin's default pre-read batch: (fast 200 + slow 100) x 10.
const BATCH: i64 = 3_000;

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Jobs defined, per size compared (the first is the baseline).
    pub sizes: Vec<usize>,
    /// Jobs firing every second among them.
    pub due: usize,
    /// Passes measured (one a second) after the first.
    pub passes: usize,
}

struct SizeResult {
    defined: usize,
    load_secs: f64,
    first_ms: f64,
    passes: Vec<f64>,
    read: Vec<usize>,
    plan: String,
    claim_plan: String,
}

/// Runs the scenario and prints its tables.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let backend = ctx.backend_name();
    let mut results = Vec::new();
    for &defined in &opts.sizes {
        println!(
            "scale: {defined} jobs defined, {} due each second, on {backend} (load average {})",
            opts.due,
            super::common::load_average()
        );
        let db = BenchDb::create(ctx.database_url.as_deref(), &ctx.work, "scale").await?;
        let r = measure(&db, defined, opts).await;
        db.drop_db().await;
        results.push(r?);
    }
    let base = results
        .first()
        .and_then(|r| summarize(&r.passes))
        .map(|s| s.p50);
    let mut t = Table::new(
        format!(
            "scale: pre-read pass cost, {} jobs due each second, batch {BATCH} ({backend})",
            opts.due
        ),
        &[
            "jobs defined",
            "load s",
            "first pass ms",
            "pass p50 ms",
            "pass p99 ms",
            "pass max ms",
            "jobs read per pass (median)",
            "p50 vs first size",
        ],
    );
    for r in &results {
        let s = summarize(&r.passes).ok_or("no pass measured")?;
        let mut read = r.read.clone();
        read.sort_unstable();
        t.row([
            r.defined.to_string(),
            format!("{:.1}", r.load_secs),
            ms(r.first_ms),
            ms(s.p50),
            ms(s.p99),
            ms(s.max),
            read.get(read.len() / 2).copied().unwrap_or(0).to_string(),
            base.filter(|b| *b > 0.0)
                .map_or("-".into(), |b| format!("{:.2}x", s.p50 / b)),
        ]);
    }
    println!("{}", t.render());
    for r in &results {
        println!(
            "plan of the due-jobs query on {backend} with {} jobs defined:\n```\n{}\n```\n",
            r.defined, r.plan
        );
        println!(
            "plan of one claim statement (500 jobs) on {backend} with {} jobs defined:\n```\n{}\n```\n",
            r.defined, r.claim_plan
        );
    }
    Ok(())
}

async fn measure(db: &BenchDb, defined: usize, opts: &Options) -> Result<SizeResult, String> {
    let group = db.group(BENCH_APP).await?;
    let due = opts.due.clamp(1, defined.max(1));
    let every = (defined / due).max(1);
    // due jobs spread through the id range, due from the moment they are written (the first
    // pass, not measured, catches them up); the rest scheduled 30 days ahead
    let far = now_ms() + 30 * 86_400_000;
    let loaded = Instant::now();
    db.insert_jobs(defined, |i| {
        let is_due = i % every == 0 && i / every < due;
        scheduled_job(
            group,
            i,
            (ScheduleType::Cron, "* * * * * ?"),
            if is_due { now_ms() } else { far },
        )
    })
    .await?;
    let load_secs = loaded.elapsed().as_secs_f64();
    let plan = db
        .store
        .explain_due_jobs(now_ms() + PRE_READ_MS, BATCH)
        .await
        .map_err(|e| format!("cannot explain the due-jobs query: {e}"))?;
    let claim_plan = db
        .store
        .explain_claim(500)
        .await
        .map_err(|e| format!("cannot explain the claim statement: {e}"))?;
    let tz = chrono_tz::Tz::UTC;
    let mut passes = Vec::new();
    let mut read = Vec::new();
    let mut first_ms = 0.0;
    for k in 0..=opts.passes {
        // like the admin: a pass a little after each second begins
        sleep_until_epoch_ms(second_after(0) + 100).await;
        let t = Instant::now();
        // its claims are written as the admin's are; nothing dispatches, nothing takes over
        let node = Node {
            id: "jobwheel-bench",
            take_over: false,
            share: jobwheel::store::Share::ALL,
        };
        let pass = pre_read(&db.store, tz, BATCH, now_ms(), node, &mut Vec::new())
            .await
            .map_err(|e| format!("pre-read pass failed: {e}"))?;
        let took = t.elapsed().as_secs_f64() * 1_000.0;
        if k == 0 {
            first_ms = took;
        } else {
            passes.push(took);
            read.push(pass.read);
        }
    }
    Ok(SizeResult {
        defined,
        load_secs,
        first_ms,
        passes,
        read,
        plan,
        claim_plan,
    })
}
