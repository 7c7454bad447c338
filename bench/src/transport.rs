//! The transport floor beside `precision`: the same J `/run` calls each second, made by the
//! admin's own executor client straight to the same simulated executor, with no scheduler, no
//! database and no admin process around them. jobwheel cannot be less late than its own calls
//! on this machine, so the floor tells how much of its lateness is the calls themselves and how
//! much is the scheduling around them.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use jobwheel::actors::dispatch::dispatch_settings;
use jobwheel::clock::sleep_until_epoch_ms;
use jobwheel::config::{DEFAULT_TRIGGER_POOL_FAST_MAX, DEFAULT_TRIGGER_POOL_SLOW_MAX};
use jobwheel::executor_calls::{Credentials, ExecutorCalls};
use jobwheel::protocol::{TriggerParam, SUCCESS_CODE};
use tokio::sync::Semaphore;

use super::common::second_after;
use super::procs::{own_threads_cpu, this_thread_cpu, CpuSplit};
use super::sim::SimExecutor;
use super::stats::Lateness;

/// Name prefix of the calling threads.
const CALLER_THREAD: &str = "floor-call";
/// Name prefix of the simulated executor's threads (see `wire_server`).
const SERVER_THREAD: &str = "sim-http";

/// What the floor run measured.
pub struct Floor {
    /// Lateness of every call's receipt after its second.
    pub lateness: Lateness,
    /// Calls made.
    pub calls: u64,
    /// Calls that did not get a success answer.
    pub failed: u64,
    /// CPU per call of the calling threads, µs.
    pub caller_us_per_call: CpuSplit<f64>,
    /// CPU per call of the simulated executor's threads, µs.
    pub server_us_per_call: CpuSplit<f64>,
}

/// One calling thread's share: the jobs it fires each second and when.
#[derive(Clone)]
struct Plan {
    address: String,
    first_second: i64,
    seconds: u64,
    jobs: usize,
    threads: usize,
    index: usize,
    in_flight: usize,
}

/// Fires `jobs` calls at each of `seconds` seconds, spread over as many threads and with as many
/// calls in flight as the admin's fast trigger pool has by default; measures their receipts.
pub async fn run(jobs: usize, seconds: u64, steady_skip_ms: i64) -> Result<Floor, String> {
    let sim = SimExecutor::start_unreported(2)?;
    let settings = dispatch_settings(DEFAULT_TRIGGER_POOL_FAST_MAX, DEFAULT_TRIGGER_POOL_SLOW_MAX);
    let threads = settings.fast_arbiters;
    let first_second = second_after(1_000);
    let end = first_second + seconds as i64 * 1_000;
    let permits = Arc::new(Semaphore::new(settings.fast_max));
    let server_cpu = own_threads_cpu(SERVER_THREAD);
    let mut joins = Vec::new();
    for index in 0..threads {
        let plan = Plan {
            address: sim.address.clone(),
            first_second,
            seconds,
            jobs,
            threads,
            index,
            in_flight: settings.fast_max,
        };
        let permits = permits.clone();
        let join = std::thread::Builder::new()
            .name(format!("{CALLER_THREAD}-{index}"))
            .spawn(move || call_thread(plan, permits))
            .map_err(|e| format!("cannot start a calling thread: {e}"))?;
        joins.push(join);
    }
    let mut results = Vec::new();
    for join in joins {
        // the threads end a few seconds after `end`; wait without blocking the bench's runtime
        while !join.is_finished() {
            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
        }
        results.push(
            join.join()
                .map_err(|_| "a calling thread panicked".to_string())??,
        );
    }
    let (calls, failed, caller_cpu) = results
        .iter()
        .fold((0, 0, CpuSplit::default()), |(c, f, cpu), r| {
            (c + r.calls, f + r.failed, cpu + r.cpu)
        });
    let server_cpu = own_threads_cpu(SERVER_THREAD) - server_cpu;
    let receipts = sim.receipts();
    sim.stop().await;

    let lateness = Lateness::of(
        receipts.iter().map(|r| {
            let second = scheduled_second(r.log_id, jobs, first_second);
            (second, r.at_us as f64 / 1_000.0 - second as f64)
        }),
        (first_second, end),
        steady_skip_ms,
    );
    let per_call = |cpu: CpuSplit<f64>| {
        let scale = if calls == 0 { 0.0 } else { 1e6 / calls as f64 };
        CpuSplit {
            user: cpu.user * scale,
            system: cpu.system * scale,
        }
    };
    Ok(Floor {
        lateness,
        calls,
        failed,
        caller_us_per_call: per_call(caller_cpu),
        server_us_per_call: per_call(server_cpu),
    })
}

/// The log id of job `job` (0-based) in second `second` (0-based) of the run.
fn log_id_of(second: u64, job: usize, jobs: usize) -> i64 {
    (second as i64) * jobs as i64 + job as i64
}

/// The scheduled second (epoch ms) of a call from its log id.
fn scheduled_second(log_id: i64, jobs: usize, first_second: i64) -> i64 {
    first_second + log_id / (jobs.max(1) as i64) * 1_000
}

/// Calls made, calls that failed and CPU used on one thread.
struct Tally {
    calls: u64,
    failed: u64,
    cpu: CpuSplit<f64>,
}

/// One calling thread: its own runtime and client, like one of the admin's trigger arbiters.
fn call_thread(plan: Plan, permits: Arc<Semaphore>) -> Result<Tally, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a calling thread's runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    let cpu_before = this_thread_cpu();
    local.block_on(&rt, async move {
        let client = Rc::new(ExecutorCalls::default());
        let calls = Rc::new(Cell::new(0u64));
        let failed = Rc::new(Cell::new(0u64));
        let outstanding = Rc::new(Cell::new(0usize));
        let mut seconds = Vec::new();
        for second in 0..plan.seconds {
            let (plan, client, permits) = (plan.clone(), client.clone(), permits.clone());
            let (calls, failed, outstanding) = (calls.clone(), failed.clone(), outstanding.clone());
            seconds.push(tokio::task::spawn_local(async move {
                let at = plan.first_second + second as i64 * 1_000;
                let share: Vec<usize> = (plan.index..plan.jobs).step_by(plan.threads).collect();
                // as the admin does when the ring hands a second over, 500 ms ahead
                sleep_until_epoch_ms(at - 500).await;
                client
                    .warm(&plan.address, share.len().min(plan.in_flight))
                    .await;
                sleep_until_epoch_ms(at).await;
                for job in share {
                    let Ok(permit) = permits.clone().acquire_owned().await else {
                        return;
                    };
                    let param = TriggerParam {
                        job_id: job as i32 + 1,
                        executor_handler: "benchNoop".into(),
                        executor_block_strategy: "SERIAL_EXECUTION".into(),
                        log_id: log_id_of(second, job, plan.jobs),
                        log_date_time: at,
                        glue_type: "BEAN".into(),
                        ..TriggerParam::default()
                    };
                    let (client, address) = (client.clone(), plan.address.clone());
                    let (calls, failed, outstanding) =
                        (calls.clone(), failed.clone(), outstanding.clone());
                    outstanding.set(outstanding.get() + 1);
                    tokio::task::spawn_local(async move {
                        let answer = client.run(&address, &Credentials::default(), &param).await;
                        drop(permit);
                        calls.set(calls.get() + 1);
                        if answer.code != SUCCESS_CODE {
                            failed.set(failed.get() + 1);
                        }
                        outstanding.set(outstanding.get() - 1);
                    });
                }
            }));
        }
        for second in seconds {
            let _ = second.await;
        }
        while outstanding.get() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(Tally {
            calls: calls.get(),
            failed: failed.get(),
            cpu: this_thread_cpu() - cpu_before,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ids_map_back_to_their_second() {
        let first = 1_700_000_000_000;
        for (second, job) in [(0, 0), (0, 999), (1, 0), (29, 517)] {
            let id = log_id_of(second, job, 1_000);
            assert_eq!(
                scheduled_second(id, 1_000, first),
                first + second as i64 * 1_000
            );
        }
        assert_ne!(log_id_of(0, 999, 1_000), log_id_of(1, 0, 1_000));
    }
}
