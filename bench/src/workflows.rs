//! `workflows`: five-node chains (a → b → c → d → e) started every second, so many that their
//! nodes fire at the asked rate, against simulated executors. Reports, from a parent's result
//! stored to its child's call reaching the executor, p50 and p99; the admin's CPU per node fire
//! beside its CPU per plain fire at the same rate (a step of the throughput scenario); and
//! checks that each node of each run was called once and every run ended.

use std::collections::HashMap;
use std::time::Instant;

use jobwheel::clock::{now_ms, sleep_until_epoch_ms};
use jobwheel::model::{
    Definition, EdgeDef, EdgeWhen, Join, MisfireStrategy, NodeDef, NodeKind, OverlapPolicy,
    RunState, ScheduleType, Workflow, TRIGGER_STATUS_RUNNING,
};
use jobwheel::store::{LogFilter, Store};

use super::common::{load_average, second_after, Ctx, Stage};
use super::db::scheduled_job;
use super::procs::{clock_ticks, ProcSample};
use super::stats::{ms, summarize, Table};

/// Nodes of each workflow, in chain order.
const CHAIN: [&str; 5] = ["a", "b", "c", "d", "e"];

/// Options of the scenario.
#[derive(Debug, Clone)]
pub struct Options {
    /// Node fires per second offered.
    pub rate: usize,
    /// Seconds of firing.
    pub duration: u64,
}

/// What one side of the comparison measured.
#[derive(Debug, Clone, Default)]
struct Side {
    /// Fires (plain) or node fires (workflows) in the window.
    fires: usize,
    /// Admin CPU seconds over the window.
    cpu_secs: f64,
}

impl Side {
    fn us_per_fire(&self) -> f64 {
        match self.fires {
            0 => f64::NAN,
            n => self.cpu_secs * 1e6 / n as f64,
        }
    }
}

fn cpu_secs(before: ProcSample, after: ProcSample) -> f64 {
    after.cpu_ticks.saturating_sub(before.cpu_ticks) as f64 / clock_ticks()
}

/// Measures the admin's CPU over `[from, to)` (epoch ms), sleeping until then.
async fn cpu_between(stage: &Stage, from: i64, to: i64) -> Result<f64, String> {
    sleep_until_epoch_ms(from).await;
    let before = stage.admin.process.sample()?;
    sleep_until_epoch_ms(to).await;
    let after = stage.admin.process.sample()?;
    Ok(cpu_secs(before, after))
}

/// Plain FIX_RATE 1 s jobs at `rate` fires per second: the admin's CPU per fire.
async fn plain(ctx: &Ctx, rate: usize, secs: u64) -> Result<Side, String> {
    let stage = Stage::start(ctx, "wfplain").await?;
    let result = async {
        let t0 = second_after(3_000 + rate as i64 / 2);
        let group = stage.group;
        stage
            .db
            .insert_jobs(rate, |i| {
                scheduled_job(group, i, (ScheduleType::FixRate, "1"), t0)
            })
            .await?;
        let (from, to) = (t0 + 2_000, t0 + secs as i64 * 1_000);
        let cpu = cpu_between(&stage, from, to).await?;
        let fires = rows_between(&stage.db.store, from, to, false).await?.len();
        Ok(Side {
            fires,
            cpu_secs: cpu,
        })
    }
    .await;
    stage.finish().await;
    result
}

/// A run row as the figures need it.
#[derive(Debug, Clone)]
struct Row {
    id: i64,
    run: i64,
    node: String,
    trigger_time: i64,
    handle_time: i64,
}

/// Run rows triggered in `[from, to)`: workflow node rows, or plain ones.
async fn rows_between(store: &Store, from: i64, to: i64, nodes: bool) -> Result<Vec<Row>, String> {
    let filter = LogFilter {
        from: Some(from - 60_000),
        limit: i64::MAX / 2,
        ..Default::default()
    };
    let (_, logs) = store
        .list_logs(&filter)
        .await
        .map_err(|e| format!("cannot read the admin's logs: {e}"))?;
    Ok(logs
        .into_iter()
        .filter(|l| (from..to).contains(&l.trigger_time) && l.wf_run_id.is_some() == nodes)
        .map(|l| Row {
            id: l.id,
            run: l.wf_run_id.unwrap_or(0),
            node: l.wf_node.unwrap_or_default(),
            trigger_time: l.trigger_time,
            handle_time: l.handle_time,
        })
        .collect())
}

fn chain(jobs: &[i32]) -> Definition {
    Definition {
        nodes: CHAIN
            .iter()
            .zip(jobs)
            .map(|(key, job)| NodeDef {
                key: key.to_string(),
                kind: NodeKind::Job,
                job_id: Some(*job),
                params: None,
                expression: None,
                join: Join::All,
                retries: None,
                timeout_secs: None,
            })
            .collect(),
        edges: CHAIN
            .windows(2)
            .map(|w| EdgeDef {
                from: w[0].into(),
                to: w[1].into(),
                when: EdgeWhen::Success,
            })
            .collect(),
    }
}

fn workflow(group: i32, i: usize, def: &Definition, first: i64) -> Workflow {
    Workflow {
        id: 0,
        job_group: group,
        name: format!("bench chain {i}"),
        description: String::new(),
        schedule_type: ScheduleType::FixRate,
        schedule_conf: "1".into(),
        timezone: "UTC".into(),
        misfire_strategy: MisfireStrategy::DoNothing,
        max_concurrent_runs: 1,
        overlap_policy: OverlapPolicy::Skip,
        queue_max: 10,
        run_timeout_secs: 0,
        alarm_email: String::new(),
        alarm_webhook: String::new(),
        definition: def.clone(),
        version: 1,
        trigger_status: TRIGGER_STATUS_RUNNING,
        trigger_last_time: 0,
        trigger_next_time: first,
        owner_id: 1,
        add_time: now_ms(),
        update_time: now_ms(),
    }
}

/// What the workflow side measured beside its CPU.
struct Flow {
    side: Side,
    /// Parent result stored → child call received, ms.
    hand_offs: Vec<f64>,
    /// Node calls received more than once.
    repeated: usize,
    /// Runs started in the window that did not succeed, and all started in it.
    failed_runs: usize,
    runs: usize,
    skipped_runs: usize,
}

async fn workflows(ctx: &Ctx, rate: usize, secs: u64) -> Result<Flow, String> {
    let stage = Stage::start(ctx, "wf").await?;
    let result = measure_workflows(&stage, rate, secs).await;
    stage.finish().await;
    result
}

async fn measure_workflows(stage: &Stage, rate: usize, secs: u64) -> Result<Flow, String> {
    let count = (rate / CHAIN.len()).max(1);
    let t0 = second_after(3_000 + count as i64);
    let group = stage.group;
    let mut jobs = Vec::new();
    for i in 0..CHAIN.len() {
        let mut job = scheduled_job(group, i, (ScheduleType::None, ""), 0);
        job.trigger_status = 0;
        let id = stage
            .db
            .store
            .insert_job(&job)
            .await
            .map_err(|e| format!("job: {e}"))?;
        jobs.push(id);
    }
    let def = chain(&jobs);
    for i in 0..count {
        stage
            .db
            .store
            .insert_workflow(&workflow(group, i, &def, t0))
            .await
            .map_err(|e| format!("workflow: {e}"))?;
    }
    let (from, to) = (t0 + 2_000, t0 + secs as i64 * 1_000);
    let started = Instant::now();
    let cpu = cpu_between(stage, from, to).await?;
    let _ = started;
    // stop the schedules, then let the runs in flight end
    for w in stage
        .db
        .store
        .workflows_of_group(group)
        .await
        .map_err(|e| e.to_string())?
    {
        let _ = stage.db.store.stop_workflow(w.id, now_ms()).await;
    }
    sleep_until_epoch_ms(now_ms() + 3_000).await;
    let rows = rows_between(&stage.db.store, from, to, true).await?;
    let receipts: HashMap<i64, Vec<i64>> =
        stage
            .sim
            .receipts()
            .into_iter()
            .fold(HashMap::new(), |mut m, r| {
                m.entry(r.log_id).or_default().push(r.at_us);
                m
            });
    let repeated = receipts.values().filter(|v| v.len() > 1).count();
    let mut by_run: HashMap<i64, HashMap<String, &Row>> = HashMap::new();
    for r in &rows {
        by_run.entry(r.run).or_default().insert(r.node.clone(), r);
    }
    let mut hand_offs = Vec::new();
    for nodes in by_run.values() {
        for pair in CHAIN.windows(2) {
            let (Some(parent), Some(child)) = (nodes.get(pair[0]), nodes.get(pair[1])) else {
                continue;
            };
            let Some(at) = receipts.get(&child.id).and_then(|v| v.first()) else {
                continue;
            };
            if parent.handle_time > 0 {
                hand_offs.push(*at as f64 / 1_000.0 - parent.handle_time as f64);
            }
        }
    }
    let (_, runs) = stage
        .db
        .store
        .list_runs(None, None, 0, i64::MAX / 4)
        .await
        .map_err(|e| e.to_string())?;
    let in_window: Vec<_> = runs
        .iter()
        .filter(|r| (from..to - 2_000).contains(&r.create_time))
        .collect();
    let skipped_runs = in_window
        .iter()
        .filter(|r| r.state == RunState::Skipped)
        .count();
    let failed_runs = in_window
        .iter()
        .filter(|r| !matches!(r.state, RunState::Succeeded | RunState::Skipped))
        .count();
    Ok(Flow {
        side: Side {
            fires: rows.iter().filter(|r| r.trigger_time > 0).count(),
            cpu_secs: cpu,
        },
        hand_offs,
        repeated,
        failed_runs,
        runs: in_window.len(),
        skipped_runs,
    })
}

/// Runs both sides and prints the figures.
pub async fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let backend = ctx.backend_name();
    println!(
        "workflows: {} node fires/s ({} five-node chains a second) for {} s on {backend} (load average {})",
        opts.rate,
        opts.rate / CHAIN.len(),
        opts.duration,
        load_average()
    );
    let flow = workflows(ctx, opts.rate, opts.duration).await?;
    println!(
        "plain: {} fires/s for {} s on {backend}",
        opts.rate, opts.duration
    );
    let plain = plain(ctx, opts.rate, opts.duration).await?;
    let hand = summarize(&flow.hand_offs);
    let mut t = Table::new(
        format!(
            "workflows: five-node chains every second, {} node fires/s offered, {} s ({backend})",
            opts.rate, opts.duration
        ),
        &[
            "node fires in window",
            "hand-off p50 ms",
            "hand-off p99 ms",
            "hand-off max ms",
            "runs started",
            "runs skipped",
            "runs not succeeded",
            "calls repeated",
            "admin CPU µs / node fire",
            "admin CPU µs / plain fire",
            "ratio",
        ],
    );
    let ratio = flow.side.us_per_fire() / plain.us_per_fire();
    t.row([
        flow.side.fires.to_string(),
        hand.map_or("-".into(), |s| ms(s.p50)),
        hand.map_or("-".into(), |s| ms(s.p99)),
        hand.map_or("-".into(), |s| ms(s.max)),
        flow.runs.to_string(),
        flow.skipped_runs.to_string(),
        flow.failed_runs.to_string(),
        flow.repeated.to_string(),
        format!("{:.0}", flow.side.us_per_fire()),
        format!("{:.0}", plain.us_per_fire()),
        format!("{ratio:.2}"),
    ]);
    println!("{}", t.render());
    if flow.side.fires == 0 {
        return Err("no workflow node fired: the scenario could not run".into());
    }
    Ok(())
}
