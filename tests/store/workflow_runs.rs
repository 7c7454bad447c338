//! Workflow runs written in a move's transaction (`RunTx`): several runs by one statement, and
//! a second's due workflows locked, claimed and started together.

use jobwheel::model::{
    Definition, MisfireStrategy, NodeDef, NodeState, OverlapPolicy, RunState, ScheduleType,
    TriggerType, Workflow, WorkflowRun, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use jobwheel::store::FireClaim;

use crate::support::new_group;

fn workflow(group: i32) -> Workflow {
    Workflow {
        id: 0,
        job_group: group,
        name: "nightly".into(),
        description: String::new(),
        schedule_type: ScheduleType::None,
        schedule_conf: String::new(),
        timezone: "UTC".into(),
        misfire_strategy: MisfireStrategy::DoNothing,
        max_concurrent_runs: 5,
        overlap_policy: OverlapPolicy::Allow,
        queue_max: 10,
        run_timeout_secs: 0,
        alarm_email: String::new(),
        alarm_webhook: String::new(),
        definition: Definition {
            nodes: vec![],
            edges: vec![],
        },
        version: 1,
        trigger_status: TRIGGER_STATUS_RUNNING,
        trigger_last_time: 0,
        trigger_next_time: 0,
        owner_id: 1,
        add_time: 1_000,
        update_time: 1_000,
    }
}

fn new_run(w: &Workflow, i: i64) -> WorkflowRun {
    WorkflowRun {
        id: 0,
        workflow_id: w.id,
        job_group: w.job_group,
        version: w.version,
        definition: w.definition.clone().into(),
        state: RunState::Running,
        paused: false,
        trigger_type: TriggerType::Manual,
        params: String::new(),
        context: "{}".into(),
        message: format!("run {i}"),
        schedule_time: 0,
        create_time: 1_000 + i,
        start_time: 1_000 + i,
        end_time: 0,
        deadline: 0,
        alarm_status: 0,
    }
}

backends!(db: several_runs_are_saved_by_one_statement_each_with_its_own_fields, |db| {
    let s = &db.store;
    let group = new_group(s, "wf-app").await;
    let mut w = workflow(group);
    w.id = s.insert_workflow(&w).await.unwrap();
    let mut tx = s.begin_run_tx().await.unwrap();
    let mut runs = Vec::new();
    for i in 0..3 {
        let mut r = new_run(&w, i);
        r.id = tx.insert_run(&r, 2_000).await.unwrap();
        runs.push(r);
    }
    tx.commit().await.unwrap();

    // two runs move on differently; the third is not written
    runs[0].state = RunState::Succeeded;
    runs[0].end_time = 5_000;
    runs[0].context = r#"{"rows":42}"#.into();
    runs[0].message = "done: 'quoted', 多字节".into();
    runs[2].paused = true;
    runs[2].deadline = 9_000;
    runs[2].alarm_status = 1;
    runs[2].context = r#"{"a":{"b":[1,2]}}"#.into();
    let mut tx = s.begin_run_tx().await.unwrap();
    tx.save_runs(&[&runs[0], &runs[2]], 6_000).await.unwrap();
    tx.commit().await.unwrap();
    for (i, want) in runs.iter().enumerate() {
        let got = s.get_run(want.id).await.unwrap().expect("the run");
        assert_eq!(&got, want, "run {i}");
    }
    // one run alone, and none, take the same path
    runs[1].state = RunState::Failed;
    runs[1].message = "node b failed".into();
    let mut tx = s.begin_run_tx().await.unwrap();
    tx.save_runs(&[&runs[1]], 7_000).await.unwrap();
    tx.save_runs(&[], 7_000).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(s.get_run(runs[1].id).await.unwrap().as_ref(), Some(&runs[1]));
});

backends!(db: due_workflows_are_locked_claimed_and_started_together, |db| {
    let s = &db.store;
    let group = new_group(s, "wf-fire").await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let mut w = workflow(group);
        w.name = format!("w{i}");
        w.definition = Definition {
            nodes: vec![NodeDef::job("a", 1), NodeDef::job("b", 1)],
            edges: vec![],
        };
        w.trigger_next_time = 5_000;
        ids.push(s.insert_workflow(&w).await.unwrap());
    }
    let mut tx = s.begin_run_tx().await.unwrap();
    assert!(tx.lock_workflows(&[]).await.unwrap().is_empty());
    // in id order, a missing one left out
    let locked = tx.lock_workflows(&[ids[2], ids[0], 999_999, ids[1]]).await.unwrap();
    assert_eq!(locked.iter().map(|w| w.id).collect::<Vec<_>>(), ids);
    let claims = [
        FireClaim { id: ids[0], last: 5_000, next: Some(6_000) },
        FireClaim { id: ids[1], last: 5_000, next: None },
    ];
    tx.claim_workflow_fires(&claims).await.unwrap();
    // more runs than one statement takes; a SKIPPED run has no nodes
    let runs: Vec<WorkflowRun> = (0..40)
        .map(|i| {
            let mut r = new_run(&locked[0], i);
            if i % 3 == 0 {
                r.state = RunState::Skipped;
            }
            r
        })
        .collect();
    let run_ids = tx.insert_runs(&runs, 2_000).await.unwrap();
    tx.commit().await.unwrap();

    let mut stand = Vec::new();
    for id in &ids {
        let w = s.get_workflow(*id).await.unwrap().expect("the workflow");
        stand.push((w.trigger_last_time, w.trigger_next_time, w.trigger_status));
    }
    assert_eq!(
        stand,
        [
            (5_000, 6_000, TRIGGER_STATUS_RUNNING),
            (5_000, 0, TRIGGER_STATUS_STOPPED),
            (0, 5_000, TRIGGER_STATUS_RUNNING),
        ]
    );
    assert_eq!(run_ids.len(), runs.len());
    for (want, id) in runs.iter().zip(&run_ids) {
        let run = s.get_run(*id).await.unwrap().expect("the run");
        assert_eq!((&run.message, run.state), (&want.message, want.state));
        let nodes = s.run_nodes(*id).await.unwrap();
        let keys: Vec<&str> = nodes.iter().map(|n| n.node_key.as_str()).collect();
        let expected: &[&str] = match want.state {
            RunState::Skipped => &[],
            _ => &["a", "b"],
        };
        assert_eq!(keys, expected, "run {id}");
        assert!(nodes.iter().all(|n| n.state == NodeState::Waiting));
    }

    let mut tx = s.begin_run_tx().await.unwrap();
    assert!(tx.open_runs_of(&[]).await.unwrap().is_empty());
    let open = tx.open_runs_of(&[ids[0], ids[1]]).await.unwrap();
    tx.commit().await.unwrap();
    let running: Vec<i64> = (runs.iter().zip(&run_ids))
        .filter(|(r, _)| r.state == RunState::Running)
        .map(|(_, id)| *id)
        .collect();
    assert_eq!(open.len(), 1, "only the first workflow has runs");
    assert_eq!(open[&ids[0]].iter().map(|r| r.id).collect::<Vec<_>>(), running);
});
