//! Three admin processes on one PostgreSQL database, 200 five-node workflows firing every 10 s,
//! one admin SIGKILLed and started again: by the executor's own record every node of every run
//! ran exactly once, each fire time made one run, and every run ended.

use std::collections::HashMap;
use std::process::Child;
use std::time::Duration;

use jobwheel::clock::{now_ms, sleep_until_epoch_ms};
use jobwheel::model::{
    Definition, EdgeDef, EdgeWhen, Join, MisfireStrategy, NodeDef, NodeKind, OverlapPolicy,
    RunState, ScheduleType, Workflow, TRIGGER_STATUS_RUNNING,
};
use jobwheel::store::{Backend, LogFilter, Store};

use crate::kit::processes::{admin_logs, free_port, signal, start_admin, wait_healthy, TOKEN};
use crate::kit::{wait_for, TestDb};
use crate::support::Worker;

const WORKFLOWS: usize = 200;
/// Each workflow: a → (b, c) → d → e.
const NODES: [&str; 5] = ["a", "b", "c", "d", "e"];

fn five_nodes(jobs: &HashMap<&str, i32>) -> Definition {
    let node = |key: &str| NodeDef {
        key: key.into(),
        kind: NodeKind::Job,
        job_id: Some(jobs[key]),
        params: None,
        expression: None,
        join: Join::All,
        retries: None,
        timeout_secs: None,
    };
    let edge = |from: &str, to: &str| EdgeDef {
        from: from.into(),
        to: to.into(),
        when: EdgeWhen::Success,
    };
    Definition {
        nodes: NODES.iter().map(|k| node(k)).collect(),
        edges: vec![
            edge("a", "b"),
            edge("a", "c"),
            edge("b", "d"),
            edge("c", "d"),
            edge("d", "e"),
        ],
    }
}

fn workflow(group: i32, i: usize, def: &Definition, first: i64) -> Workflow {
    Workflow {
        id: 0,
        job_group: group,
        name: format!("five nodes {i}"),
        description: String::new(),
        schedule_type: ScheduleType::Cron,
        schedule_conf: "0/10 * * * * ?".into(),
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

/// Every run row of a workflow node: log id → (run, node).
async fn node_rows(store: &Store) -> HashMap<i64, (i64, String)> {
    let (_, logs) = store
        .list_logs(&LogFilter {
            limit: 1_000_000,
            ..Default::default()
        })
        .await
        .expect("runs");
    logs.into_iter()
        .filter_map(|l| Some((l.id, (l.wf_run_id?, l.wf_node?))))
        .collect()
}

async fn three_admins_one_killed(backend: Backend) {
    let Some(db) = TestDb::create(backend).await else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let bases: Vec<String> = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}"))
        .collect();
    let mut admins: Vec<Child> = vec![start_admin(&db.url, ports[0], dir.path(), "a0", None)];
    wait_healthy(ports[0]).await;
    for (i, port) in ports.iter().enumerate().skip(1) {
        admins.push(start_admin(
            &db.url,
            *port,
            dir.path(),
            &format!("a{i}"),
            None,
        ));
        wait_healthy(*port).await;
    }
    let base_refs: Vec<&str> = bases.iter().map(String::as_str).collect();
    let worker = Worker::start_for(&base_refs, TOKEN, "wf-cluster", &NODES).await;
    let group = crate::support::db_group(&db.store, "wf-cluster").await;
    let mut jobs = HashMap::new();
    for n in NODES {
        let mut job = jobwheel::model::JobInfo::new(group, format!("node {n}"), n);
        job.add_time = now_ms();
        jobs.insert(n, db.store.insert_job(&job).await.expect("job"));
    }
    let def = five_nodes(&jobs);
    // the first fire time 10 s from now at the earliest, on a multiple of 10 s
    let first = (now_ms() / 10_000 + 2) * 10_000;
    for i in 0..WORKFLOWS {
        db.store
            .insert_workflow(&workflow(group, i, &def, first))
            .await
            .expect("workflow");
    }
    // four fire times; the middle admin is killed 15 s in and started again 10 s later
    sleep_until_epoch_ms(first + 15_000).await;
    signal(&admins[1], "-KILL");
    let _ = admins[1].wait();
    sleep_until_epoch_ms(first + 25_000).await;
    admins[1] = start_admin(&db.url, ports[1], dir.path(), "a1-again", None);
    wait_healthy(ports[1]).await;
    sleep_until_epoch_ms(first + 35_000).await;
    for w in db.store.workflows_of_group(group).await.expect("workflows") {
        db.store.stop_workflow(w.id, now_ms()).await.expect("stop");
    }
    let last_fire = first + 30_000;

    let open = wait_for(Duration::from_secs(90), || {
        let store = &db.store;
        async move {
            let (_, runs) = store.list_runs(None, None, 0, 100_000).await.ok()?;
            runs.iter().all(|r| r.state.ended()).then_some(runs)
        }
    })
    .await;
    for admin in &mut admins {
        let _ = admin.kill();
        let _ = admin.wait();
    }
    let runs = open.unwrap_or_else(|| panic!("runs left open:\n{}", admin_logs(dir.path())));

    // each (workflow, fire time) made one run, and the four fire times all fired
    let mut per_fire: HashMap<(i32, i64), usize> = HashMap::new();
    for r in &runs {
        *per_fire
            .entry((r.workflow_id, r.schedule_time))
            .or_default() += 1;
    }
    assert!(
        per_fire.values().all(|n| *n == 1),
        "a fire time made two runs"
    );
    let fired: Vec<&(i32, i64)> = per_fire
        .keys()
        .filter(|(_, t)| (first..=last_fire).contains(t))
        .collect();
    assert_eq!(
        fired.len(),
        WORKFLOWS * 4,
        "every workflow fired at each of the four times"
    );
    let bad: Vec<_> = runs
        .iter()
        .filter(|r| r.state != RunState::Succeeded)
        .collect();
    assert!(
        bad.is_empty(),
        "runs that did not succeed: {:?}",
        bad.iter()
            .take(5)
            .map(|r| (r.id, r.state, &r.message))
            .collect::<Vec<_>>()
    );

    // by the executor's record: each node of each run ran once
    let rows = node_rows(&db.store).await;
    let mut ran: HashMap<(i64, String), usize> = HashMap::new();
    for r in worker.runs() {
        let key = rows
            .get(&r.log_id)
            .cloned()
            .expect("an executor run is a node's run row");
        *ran.entry(key).or_default() += 1;
    }
    let twice: Vec<_> = ran.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "nodes that ran twice: {twice:?}");
    for r in &runs {
        for n in NODES {
            assert_eq!(
                ran.get(&(r.id, n.to_string())),
                Some(&1),
                "run {} node {n}",
                r.id
            );
        }
    }
    assert_eq!(ran.len(), runs.len() * NODES.len());
    worker.stop().await;
    db.drop_db().await;
}

mod three_admins_one_killed {
    #[actix_web::test]
    async fn postgres() {
        super::three_admins_one_killed(jobwheel::store::Backend::Postgres).await;
    }
}
