//! `executor`: the real executor library (in this process, on its own actix system and
//! threads) under 64 concurrent connections: `/run` acknowledgements and runs completed per
//! second, and the time from sending a trigger to its handler starting; then the `jobwheel
//! executor` process as operators run it (its built-in `demoJobHandler`, which writes a log
//! line, and its logging at info): runs completed per second, its CPU, and its memory idle and
//! after the load.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix_web::{App, HttpServer};
use jobwheel::executor::builtin::DEMO;
use jobwheel::executor::{Executor, JobContext, JobResult, MAX_CONCURRENT_RUNS};

use super::common::{mib, Ctx};
use super::load::{send_triggers, LoadOutcome, Work};
use super::memory::registered_executor;
use super::procs::{clock_ticks, cpu_percent, BENCH_TOKEN};
use super::sim::FakeAdmin;
use super::stats::{ms, summarize, Table};

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Concurrent connections.
    pub connections: usize,
    /// Seconds of load.
    pub duration: u64,
    /// Distinct job ids the triggers cycle through.
    pub jobs: i32,
}

type Starts = Arc<Mutex<HashMap<i64, Instant>>>;

/// A library executor served on 127.0.0.1 from its own thread and actix system.
struct LibraryExecutor {
    port: u16,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

fn start_library_executor(
    admin: String,
    log_path: std::path::PathBuf,
    starts: Starts,
    max_concurrent_runs: usize,
) -> Result<LibraryExecutor, String> {
    let (port_tx, port_rx) = std::sync::mpsc::channel::<Result<u16, String>>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let system = actix_web::rt::System::new();
        system.block_on(async move {
            let built = Executor::builder()
                .admin_addresses([admin])
                .app_name("jobwheel-bench-library")
                .access_token(BENCH_TOKEN)
                .ip("127.0.0.1")
                .port(0)
                .log_path(log_path)
                .max_concurrent_runs(max_concurrent_runs)
                .handler("benchNoop", move |ctx: JobContext| {
                    let starts = starts.clone();
                    async move {
                        starts
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .insert(ctx.log_id(), Instant::now());
                        JobResult::success()
                    }
                })
                .build();
            let executor = match built {
                Ok(e) => e,
                Err(e) => {
                    let _ = port_tx.send(Err(format!("cannot build the executor: {e}")));
                    return;
                }
            };
            let routes = executor.configure();
            let server = match HttpServer::new(move || App::new().configure(routes.clone()))
                .workers(2)
                .backlog(4096)
                .disable_signals()
                .bind(("127.0.0.1", 0))
            {
                Ok(s) => s,
                Err(e) => {
                    let _ = port_tx.send(Err(format!("cannot bind the executor: {e}")));
                    return;
                }
            };
            let port = server.addrs()[0].port();
            let server = server.run();
            let handle = server.handle();
            actix_web::rt::spawn(server);
            executor.start_registration(port);
            let _ = port_tx.send(Ok(port));
            let _ = stop_rx.await;
            executor.shutdown().await;
            handle.stop(true).await;
        });
    });
    let port = port_rx
        .recv_timeout(Duration::from_secs(30))
        .map_err(|_| "the executor thread did not start".to_string())??;
    Ok(LibraryExecutor {
        port,
        stop: stop_tx,
        thread,
    })
}

/// The log id the measured load counts from: past every warm-up id, since an executor refuses a
/// log id it accepted before.
const LOAD_AFTER_LOG_ID: i64 = 1_000_000_000;

/// A short load of `handler` on the executor at `base`, so connection set-up is not measured.
async fn warm_up(base: &str, handler: &str, opts: &Options) {
    send_triggers(
        base,
        handler,
        Work::Until {
            deadline: Instant::now() + Duration::from_millis(300),
            jobs: opts.jobs,
            after: 0,
        },
        opts.connections,
    )
    .await;
}

/// What a measured load did.
struct Measured {
    out: LoadOutcome,
    elapsed: Duration,
    /// Results the admin had before the load.
    done_before: usize,
    /// Runs whose results reached the admin while the load ran.
    completed: usize,
}

impl Measured {
    fn completed_rate(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// `opts.duration` seconds of triggers for `handler` on the executor at `base`, counting the
/// runs whose results reached `fake` meanwhile: the executor's sustained throughput end to end
/// (trigger, handler, result batch), not only its `/run` answers.
async fn measured_load(base: &str, handler: &str, opts: &Options, fake: &FakeAdmin) -> Measured {
    let (done_before, _) = fake.callbacks();
    let started = Instant::now();
    let out = send_triggers(
        base,
        handler,
        Work::Until {
            deadline: Instant::now() + Duration::from_secs(opts.duration),
            jobs: opts.jobs,
            after: LOAD_AFTER_LOG_ID,
        },
        opts.connections,
    )
    .await;
    let (done_after, _) = fake.callbacks();
    Measured {
        out,
        elapsed: started.elapsed(),
        done_before,
        completed: done_after.saturating_sub(done_before),
    }
}

/// Runs the scenario and prints its tables.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    println!(
        "executor: {} connections for {} s over {} job ids (load average {})",
        opts.connections,
        opts.duration,
        opts.jobs,
        super::common::load_average()
    );
    let mut t = Table::new(
        format!(
            "executor: library executor, {} connections, {} s, {} job ids",
            opts.connections, opts.duration, opts.jobs
        ),
        &[
            "max_concurrent_runs",
            "/run acks per s",
            "runs completed per s",
            "acked",
            "failed",
            "trigger→handler p50 ms",
            "p99 ms",
            "max ms",
            "handlers not started",
        ],
    );
    // without a limit, then with one never reached: what keeping the count costs
    let mut rates = Vec::new();
    for limit in [0, MAX_CONCURRENT_RUNS] {
        let (row, completed) = library_run(ctx, opts, limit).await?;
        t.row(row);
        rates.push(completed);
    }
    println!("{}", t.render());
    if let [free, limited] = rates[..] {
        println!(
            "runs completed per s with a limit never reached / without a limit: {:.3}\n",
            limited / free.max(1e-9)
        );
    }
    if ctx.bin.exists() {
        process_run(ctx, opts).await?;
    } else {
        println!(
            "no jobwheel binary at {}: the executor process was not measured\n",
            ctx.bin.display()
        );
    }
    Ok(())
}

/// One load on a library executor with `limit` runs at once (0: none): its table row and its
/// runs completed per second.
async fn library_run(
    ctx: &Ctx,
    opts: &Options,
    limit: usize,
) -> Result<([String; 9], f64), String> {
    let fake = FakeAdmin::start()?;
    let starts: Starts = Arc::new(Mutex::new(HashMap::new()));
    let exec = start_library_executor(
        fake.url.clone(),
        ctx.work.join(format!("library-executor-{limit}")),
        starts.clone(),
        limit,
    )?;
    let base = format!("http://127.0.0.1:{}/", exec.port);
    warm_up(&base, "benchNoop", opts).await;
    starts
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    let load = measured_load(&base, "benchNoop", opts, &fake).await;
    let completed_rate = load.completed_rate();
    let out = load.out;
    // every acknowledged trigger's handler should start soon after
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let started = {
            let s = starts.lock().unwrap_or_else(PoisonError::into_inner);
            out.sent_at.keys().filter(|id| s.contains_key(*id)).count()
        };
        if started >= out.sent_at.len() || Instant::now() > until {
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    let s = starts
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let latencies: Vec<f64> = out
        .sent_at
        .iter()
        .filter_map(|(id, sent)| {
            s.get(id)
                .map(|st| st.saturating_duration_since(*sent).as_secs_f64() * 1_000.0)
        })
        .collect();
    let not_started = out.sent_at.len() - latencies.len();
    let _ = exec.stop.send(());
    let _ = actix_web::rt::task::spawn_blocking(move || exec.thread.join()).await;
    fake.stop().await;

    let rate = out.acked as f64 / out.elapsed.as_secs_f64().max(1e-9);
    let lat = summarize(&latencies);
    if let Some(e) = &out.first_error {
        println!("first failure: {e}\n");
    }
    if out.acked == 0 {
        return Err("no trigger was acknowledged: the scenario could not run".into());
    }
    let row = [
        match limit {
            0 => "none".to_string(),
            n => format!("{n} (never reached)"),
        },
        format!("{rate:.0}"),
        format!("{completed_rate:.0}"),
        out.acked.to_string(),
        out.failed.to_string(),
        lat.map_or("-".into(), |l| ms(l.p50)),
        lat.map_or("-".into(), |l| ms(l.p99)),
        lat.map_or("-".into(), |l| ms(l.max)),
        not_started.to_string(),
    ];
    Ok((row, completed_rate))
}

/// The `jobwheel executor` process under the same load: runs completed per second, CPU, memory.
async fn process_run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let fake = FakeAdmin::start()?;
    let (mut exec, port) = registered_executor(ctx, &fake, 600).await?;
    let base = format!("http://127.0.0.1:{port}/");
    actix_web::rt::time::sleep(Duration::from_secs(1)).await;
    let idle = exec.sample()?;
    warm_up(&base, DEMO, opts).await;
    let before = exec.sample()?;
    let load = measured_load(&base, DEMO, opts, &fake).await;
    let during = exec.sample()?;
    let completed_rate = load.completed_rate();
    let cpu = cpu_percent(before, during, load.elapsed);
    let cpu_us_per_run = during.cpu_ticks.saturating_sub(before.cpu_ticks) as f64 / clock_ticks()
        * 1e6
        / (load.completed.max(1) as f64);
    let out = load.out;
    // every acknowledged run reports its result; memory is read once they all have
    let expected = load.done_before + out.acked as usize;
    let until = Instant::now() + Duration::from_secs(60);
    while fake.callbacks().0 < expected && Instant::now() < until {
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    let unreported = expected.saturating_sub(fake.callbacks().0);
    exec.check_alive()?;
    let after = exec.sample()?;
    drop(exec);
    fake.stop().await;
    let mut t = Table::new(
        format!(
            "executor: jobwheel executor process, demoJobHandler, {} connections, {} s, {} job ids",
            opts.connections, opts.duration, opts.jobs
        ),
        &[
            "runs completed per s",
            "/run acks per s",
            "failed",
            "CPU %",
            "CPU µs per run",
            "RSS idle",
            "RSS after the load",
            "results not reported",
        ],
    );
    t.row([
        format!("{completed_rate:.0}"),
        format!(
            "{:.0}",
            out.acked as f64 / out.elapsed.as_secs_f64().max(1e-9)
        ),
        out.failed.to_string(),
        format!("{cpu:.0}"),
        format!("{cpu_us_per_run:.0}"),
        mib(idle.rss_kb),
        mib(after.rss_kb),
        unreported.to_string(),
    ]);
    println!("{}", t.render());
    if let Some(e) = out.first_error {
        println!("first failure: {e}\n");
    }
    Ok(())
}
