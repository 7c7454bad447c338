//! `jobwheel-bench`: starts what it measures (the admin and executor as their own processes,
//! simulated executors speaking the real protocol over HTTP on 127.0.0.1) and prints figures.
//!
//! ```sh
//! cargo build --release -p jobwheel -p jobwheel-bench
//! target/release/jobwheel-bench precision --jobs 1000 --duration 30 --histogram docs/precision-histogram.svg
//! target/release/jobwheel-bench throughput --database-url postgres://postgres@127.0.0.1/jobwheel_bench
//! target/release/jobwheel-bench cluster --jobs 10000 --database-url postgres://postgres@127.0.0.1/jobwheel_bench
//! ```
//!
//! `cluster` starts this binary again as its simulated executors (the hidden `sim-executor`
//! mode), so they are processes of their own like a real executor fleet.

mod cluster;
mod cluster_config;
mod common;
mod console;
mod db;
mod executor;
mod first_paint;
mod load;
mod memory;
mod precision;
mod procs;
mod ratch;
mod scale;
mod sim;
mod startup;
mod stats;
mod throughput;
mod transport;
mod wire_server;
mod workflows;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

use crate::common::Ctx;

/// Benchmarks of jobwheel: firing precision, throughput, memory, scale, executor, startup,
/// console, cluster, workflows.
#[derive(Parser, Debug)]
#[command(name = "jobwheel-bench", version, about)]
struct Args {
    /// What to measure
    #[arg(value_enum)]
    scenario: Scenario,
    /// PostgreSQL or MySQL server URL (a private scratch schema/database is created there and
    /// dropped after); omitted or `sqlite:`: a fresh SQLite file in the work folder
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// Jobs: firing jobs (precision and cluster, default 1000), jobs defined (memory, default 100000;
    /// console, default 10000)
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Seconds of firing or load (precision and cluster 30, throughput/memory 15 per step, executor 10)
    #[arg(long, value_name = "SECS")]
    duration: Option<u64>,
    /// Every scenario in a few seconds with tiny sizes; fails only if the scenario cannot run
    #[arg(long)]
    smoke: bool,
    /// precision: write the lateness histogram (SVG) here
    #[arg(long, value_name = "FILE")]
    histogram: Option<PathBuf>,
    /// throughput: fires per second of each step, comma-separated
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    steps: Option<Vec<usize>>,
    /// throughput/memory: a result stored later than this after its second is lagging
    #[arg(long, value_name = "MS", default_value_t = 2_000)]
    lag_bound_ms: i64,
    /// memory: fires per second of the admin's busy figure; workflows: node fires per second
    #[arg(long, value_name = "N")]
    rate: Option<usize>,
    /// memory: distinct job ids (JobActors) triggered on the executor
    #[arg(long, value_name = "N")]
    actors: Option<usize>,
    /// memory: the executor's idle timeout (JobActors are reaped after it)
    #[arg(long, value_name = "SECS")]
    idle_timeout_secs: Option<u64>,
    /// executor: concurrent connections
    #[arg(long, value_name = "N", default_value_t = 64)]
    connections: usize,
    /// scale: jobs defined per compared size, comma-separated (first is the baseline)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    sizes: Option<Vec<usize>>,
    /// scale: jobs firing each second among them
    #[arg(long, value_name = "N")]
    due: Option<usize>,
    /// startup: starts measured of each kind; console: run (log) rows seeded (default 1000000)
    #[arg(long, value_name = "N")]
    runs: Option<usize>,
    /// console: requests measured per page
    #[arg(long, value_name = "N")]
    requests: Option<usize>,
    /// cluster: what runs, in order, as BACKEND:ADMINS (sqlite:1, pg:3, mysql:3, server:3,
    /// ratch-job:1); default sqlite:1, ratch-job:1 with --ratch-job and, with a server
    /// --database-url, the server with each --admins count
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// cluster: admin counts run on the --database-url server after the SQLite baseline
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values_t = [1, 3])]
    admins: Vec<usize>,
    /// cluster: a ratchjob binary (ratch-job, built with cargo) to run beside jobwheel with the
    /// same jobs and simulated executors (configuration ratch-job:1)
    #[arg(long, value_name = "BIN")]
    ratch_job: Option<PathBuf>,
    /// cluster: simulated executor processes (default 4)
    #[arg(long, value_name = "N")]
    executors: Option<usize>,
    /// sim-executor (internal): the admins' base URLs, comma-separated
    #[arg(long, value_name = "LIST", value_delimiter = ',', hide = true)]
    admin: Vec<String>,
    /// sim-executor (internal): the port to serve on (127.0.0.1)
    #[arg(long, value_name = "PORT", hide = true)]
    port: Option<u16>,
    /// Folder for SQLite files and process logs (default: a new folder under the temp dir,
    /// removed after a successful run)
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// Lateness of once-a-second cron jobs, against tokio-cron-scheduler and the bare HTTP calls
    Precision,
    /// Highest sustained end-to-end fire rate
    Throughput,
    /// Admin and executor resident memory
    Memory,
    /// Pre-read cost with 1,000,000 jobs defined
    Scale,
    /// Executor /run acknowledgements and trigger-to-handler latency
    Executor,
    /// Time to healthy (admin) and to first registration (executor)
    Startup,
    /// Console pages (dashboard, job list, run list of one job) on 10,000 jobs and 1,000,000 runs
    Console,
    /// 1 and 3 admins on one database against simulated executor processes, beside SQLite
    Cluster,
    /// Workflows: a parent's result to its child's call, and admin CPU per node fire
    Workflows,
    /// Internal: one simulated executor process of the cluster scenario
    #[value(hide = true)]
    SimExecutor,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.scenario == Scenario::SimExecutor {
        return sim_executor(&args);
    }
    let bin = match procs::jobwheel_binary() {
        Ok(b) => b,
        Err(e) if args.scenario != Scenario::Scale && args.scenario != Scenario::Executor => {
            eprintln!("jobwheel-bench: {e}");
            return ExitCode::from(2);
        }
        Err(_) => PathBuf::from("jobwheel"),
    };
    let (work, temporary) = match &args.work_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("jobwheel-bench-{}", std::process::id())),
            true,
        ),
    };
    if let Err(e) = std::fs::create_dir_all(&work) {
        eprintln!(
            "jobwheel-bench: cannot create work folder '{}': {e}",
            work.display()
        );
        return ExitCode::from(2);
    }
    let database_url = args
        .database_url
        .clone()
        .filter(|u| !u.trim().to_ascii_lowercase().starts_with("sqlite"));
    let ctx = Ctx {
        bin,
        work: work.clone(),
        database_url,
    };
    let result = actix_web::rt::System::new().block_on(run(&args, &ctx));
    match result {
        Ok(()) => {
            if temporary {
                let _ = std::fs::remove_dir_all(&work);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("jobwheel-bench: {e} (logs kept in {})", work.display());
            ExitCode::from(1)
        }
    }
}

/// The hidden `sim-executor` mode: runs until it is stopped.
fn sim_executor(args: &Args) -> ExitCode {
    let Some(port) = args.port else {
        eprintln!("jobwheel-bench sim-executor: --port is required");
        return ExitCode::from(2);
    };
    // it ends with the bench that started it, even a bench killed outright
    // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag of the calling process
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
    let admins = args.admin.clone();
    match actix_web::rt::System::new().block_on(cluster::sim_executor_main(admins, port)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jobwheel-bench sim-executor: {e}");
            ExitCode::from(1)
        }
    }
}

/// The cluster scenario's configurations from `--configs`, or the defaults.
fn cluster_configs(args: &Args, ctx: &Ctx) -> Result<Vec<cluster::Config>, String> {
    let server = match ctx.database_url.as_deref() {
        None => None,
        Some(u) => Some(jobwheel::store::Backend::from_url(u).map_err(|e| e.to_string())?),
    };
    let ratch_job = args.ratch_job.is_some();
    if let Some(bin) = &args.ratch_job {
        if !bin.is_file() {
            return Err(format!("--ratch-job: no file '{}'", bin.display()));
        }
    }
    match &args.configs {
        Some(list) => list
            .iter()
            .map(|c| cluster::Config::parse(c, server, ratch_job))
            .collect(),
        None => Ok(cluster::Config::defaults(server, &args.admins, ratch_job)),
    }
}

async fn run(args: &Args, ctx: &Ctx) -> Result<(), String> {
    let smoke = args.smoke;
    let pick = |given: Option<u64>, full: u64, small: u64| {
        given.unwrap_or(if smoke { small } else { full })
    };
    let pick_n = |given: Option<usize>, full: usize, small: usize| {
        given.unwrap_or(if smoke { small } else { full })
    };
    match args.scenario {
        Scenario::Precision => {
            precision::run(
                ctx,
                &precision::Options {
                    jobs: pick_n(args.jobs, 1_000, 50),
                    duration: pick(args.duration, 30, 5),
                    histogram: args.histogram.clone(),
                },
            )
            .await
        }
        Scenario::Throughput => {
            throughput::run(
                ctx,
                &throughput::Options {
                    steps: args.steps.clone().unwrap_or_else(|| {
                        if smoke {
                            vec![50, 100]
                        } else {
                            vec![500, 1_000, 2_000, 5_000, 10_000]
                        }
                    }),
                    duration: pick(args.duration, 15, 5),
                    bound_ms: args.lag_bound_ms,
                },
            )
            .await
        }
        Scenario::Memory => {
            memory::run(
                ctx,
                &memory::Options {
                    jobs: pick_n(args.jobs, 100_000, 1_000),
                    rate: pick_n(args.rate, 5_000, 50),
                    duration: pick(args.duration, 15, 5),
                    bound_ms: args.lag_bound_ms,
                    actors: pick_n(args.actors, 10_000, 200),
                    idle_timeout_secs: pick(args.idle_timeout_secs, 10, 2),
                    settle_secs: if smoke { 1 } else { 5 },
                },
            )
            .await
        }
        Scenario::Scale => {
            scale::run(
                ctx,
                &scale::Options {
                    sizes: args.sizes.clone().unwrap_or_else(|| {
                        if smoke {
                            vec![1_000, 10_000]
                        } else {
                            vec![10_000, 1_000_000]
                        }
                    }),
                    due: pick_n(args.due, 1_000, 100),
                    passes: pick(args.duration, 10, 2) as usize,
                },
            )
            .await
        }
        Scenario::Executor => {
            executor::run(
                ctx,
                &executor::Options {
                    connections: args.connections,
                    duration: pick(args.duration, 10, 2),
                    jobs: pick_n(args.jobs, 1_000, 100) as i32,
                },
            )
            .await
        }
        Scenario::Cluster => {
            cluster::run(
                ctx,
                &cluster::Options {
                    configs: cluster_configs(args, ctx)?,
                    jobs: pick_n(args.jobs, 1_000, 20),
                    duration: pick(args.duration, 30, 5),
                    executors: pick_n(args.executors, 4, 2),
                    ratch_job: args.ratch_job.clone(),
                },
            )
            .await
        }
        Scenario::Workflows => {
            workflows::run(
                ctx,
                &workflows::Options {
                    rate: pick_n(args.rate, 1_000, 50),
                    duration: pick(args.duration, 20, 5),
                },
            )
            .await
        }
        Scenario::SimExecutor => sim_executor_mode_error(),
        Scenario::Startup => startup::run(ctx, pick_n(args.runs, 5, 1)).await,
        Scenario::Console => {
            if ctx.backend_name() == "mysql" {
                return Err("console: SQLite and PostgreSQL only".into());
            }
            console::run(
                ctx,
                &console::Options {
                    jobs: pick_n(args.jobs, 10_000, 200),
                    runs: pick_n(args.runs, 1_000_000, 5_000),
                    groups: 4,
                    requests: pick_n(args.requests, 200, 10),
                    warmup: if smoke { 2 } else { 20 },
                    paints: if smoke { 1 } else { 20 },
                },
            )
            .await
        }
    }
}

/// `sim-executor` is handled before the scenarios run.
fn sim_executor_mode_error() -> Result<(), String> {
    Err("sim-executor is not a scenario".into())
}
