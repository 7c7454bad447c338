//! What every scenario shares: settings, the work folder, an admin process on a bench database
//! with a registered simulated executor, and reading back the admin's log rows.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use jobwheel::clock::now_ms;
use jobwheel::store::{LogFilter, Store};

use super::db::{BenchDb, BENCH_APP};
use super::procs::{free_port, spawn_admin, wait_healthy, Spawned};
use super::sim::{Receipt, SimExecutor};

/// Settings of a run, from the command line.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The `jobwheel` binary.
    pub bin: PathBuf,
    /// Folder for SQLite files, process logs and executor log folders.
    pub work: PathBuf,
    /// Server URL (PostgreSQL/MySQL) or `None` for SQLite.
    pub database_url: Option<String>,
}

impl Ctx {
    /// The backend name the scenario runs on.
    pub fn backend_name(&self) -> String {
        match self.database_url.as_deref() {
            None => "sqlite".into(),
            Some(u) => jobwheel::store::Backend::from_url(u)
                .map(|b| b.name().to_string())
                .unwrap_or_else(|_| "?".into()),
        }
    }
}

/// An admin process serving a bench database.
pub struct RunningAdmin {
    /// The process.
    pub process: Spawned,
    /// Its base URL.
    pub url: String,
    /// Process start to `/healthz` 200.
    pub startup: Duration,
}

/// Starts `jobwheel admin` on `db` and waits until it is healthy.
pub async fn start_admin(ctx: &Ctx, db: &BenchDb) -> Result<RunningAdmin, String> {
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    let mut process = spawn_admin(&ctx.bin, port, &db.url, &ctx.work)?;
    let startup = wait_healthy(&mut process, port, Duration::from_secs(60)).await?;
    Ok(RunningAdmin {
        process,
        url: format!("http://127.0.0.1:{port}"),
        startup,
    })
}

/// An admin plus a registered simulated executor on a fresh bench database with its group.
pub struct Stage {
    /// The database.
    pub db: BenchDb,
    /// The bench group's id.
    pub group: i32,
    /// The admin process.
    pub admin: RunningAdmin,
    /// The simulated executor.
    pub sim: SimExecutor,
}

impl Stage {
    /// Sets up database, group, admin and a registered simulated executor.
    pub async fn start(ctx: &Ctx, tag: &str) -> Result<Stage, String> {
        let db = BenchDb::create(ctx.database_url.as_deref(), &ctx.work, tag).await?;
        let group = db.group(BENCH_APP).await?;
        let admin = start_admin(ctx, &db).await?;
        let sim = SimExecutor::start(&admin.url, 2)?;
        sim.register(BENCH_APP).await?;
        Ok(Stage {
            db,
            group,
            admin,
            sim,
        })
    }

    /// Stops the admin (gracefully), the simulated executor, and drops the database.
    pub async fn finish(self) {
        self.admin.process.stop(Duration::from_secs(10)).await;
        self.sim.stop().await;
        self.db.drop_db().await;
    }
}

/// What a log row says about one fire.
#[derive(Debug, Clone, Copy)]
pub struct LogFacts {
    /// The job.
    pub job_id: i32,
    /// The scheduled second, epoch ms.
    pub schedule_time: i64,
    /// Trigger code (0: not recorded yet, 200: reached an executor).
    pub trigger_code: i32,
    /// Result code (0: none yet).
    pub handle_code: i32,
    /// When the result was stored, epoch ms.
    pub handle_time: i64,
}

/// `/run` receipts matched to their run rows.
pub struct Matched {
    /// (job, scheduled second) of each matched receipt.
    pub fires: Vec<(i32, i64)>,
    /// (scheduled second, ms from it to the receipt) of each matched receipt.
    pub late: Vec<(i64, f64)>,
    /// Receipts whose log id has no run row.
    pub unknown: usize,
}

/// Matches each receipt to its run row by log id.
pub fn match_receipts(receipts: &[Receipt], logs: &HashMap<i64, LogFacts>) -> Matched {
    let mut matched = Matched {
        fires: Vec::with_capacity(receipts.len()),
        late: Vec::with_capacity(receipts.len()),
        unknown: 0,
    };
    for r in receipts {
        match logs.get(&r.log_id) {
            Some(l) => {
                matched.fires.push((l.job_id, l.schedule_time));
                matched.late.push((
                    l.schedule_time,
                    r.at_us as f64 / 1_000.0 - l.schedule_time as f64,
                ));
            }
            None => matched.unknown += 1,
        }
    }
    matched
}

/// Every log row triggered at or after `from_ms`, by log id.
pub async fn logs_since(store: &Store, from_ms: i64) -> Result<HashMap<i64, LogFacts>, String> {
    let filter = LogFilter {
        from: Some(from_ms),
        limit: i64::MAX / 2,
        ..Default::default()
    };
    let (_, logs) = store
        .list_logs(&filter)
        .await
        .map_err(|e| format!("cannot read the admin's logs: {e}"))?;
    Ok(logs
        .into_iter()
        .map(|l| {
            (
                l.id,
                LogFacts {
                    job_id: l.job_id,
                    schedule_time: l.schedule_time,
                    trigger_code: l.trigger_code,
                    handle_code: l.handle_code,
                    handle_time: l.handle_time,
                },
            )
        })
        .collect())
}

/// The next whole second at least `lead_ms` from now, epoch ms.
pub fn second_after(lead_ms: i64) -> i64 {
    let t = now_ms() + lead_ms;
    (t.div_euclid(1_000) + 1) * 1_000
}

/// KiB as MiB with one decimal.
pub fn mib(kb: u64) -> String {
    format!("{:.1}", kb as f64 / 1024.0)
}

/// The machine's load average over the last minute, for the report.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}
