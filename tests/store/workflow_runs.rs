//! Workflow runs written in a move's transaction (`RunTx`): several runs by one statement.

use jobwheel::model::{
    Definition, MisfireStrategy, OverlapPolicy, RunState, ScheduleType, TriggerType, Workflow,
    WorkflowRun, TRIGGER_STATUS_RUNNING,
};

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
