//! A job's bounded SERIAL queue (`maxQueued`) end to end: the admin sends the bound, a jobwheel
//! executor refuses the trigger beyond it, and the refusal is the run row's trigger result.

use std::time::Duration;

use crate::engine_support::{wait_listed, Engine};
use crate::kit::worker::{Plan, Worker};
use jobwheel::model::{GlueType, RouteStrategy};

backends!(app: a_bounded_serial_queue_refuses_the_trigger_beyond_it, |admin| {
    let group = admin.db_group("bounded").await;
    let worker = Worker::start(admin, "bounded", &["slow"]).await;
    worker.plan("slow", Plan { sleep_ms: 2_000, ..Plan::default() });
    let job = admin
        .db_job(group, |j| {
            j.glue_type = GlueType::Bean;
            j.executor_handler = "slow".into();
            j.executor_route_strategy = RouteStrategy::First;
            j.max_queued = 2;
        })
        .await;
    wait_listed(admin, group, 1).await;

    // one runs, two wait behind it, the fourth finds the queue full
    let mut log_ids = Vec::new();
    for _ in 0..4 {
        log_ids.extend(admin.manual(job).await);
    }
    let rows = admin.logs_of(job).await;
    assert_eq!(rows.len(), 4, "{rows:?}");
    let refused = rows.iter().find(|r| r.id == log_ids[3]).expect("fourth row");
    assert_eq!(refused.trigger_code, 500, "{refused:?}");
    let msg = refused.trigger_msg.clone().unwrap_or_default();
    assert!(msg.contains("queue full: 2 waiting"), "{msg}");

    // the three accepted run, one after the other
    admin
        .wait_until("the three accepted runs end", Duration::from_secs(20), || async {
            let rows = admin.logs_of(job).await;
            log_ids[..3]
                .iter()
                .all(|id| rows.iter().any(|r| r.id == *id && r.handle_code == 200))
        })
        .await;
    let runs = worker.runs_of("slow");
    let ran: Vec<i64> = runs.iter().map(|r| r.log_id).collect();
    assert_eq!(ran, log_ids[..3].to_vec(), "only the accepted ran, in order");
    assert!(
        runs.windows(2).all(|w| w[0].ended <= w[1].started),
        "SERIAL: {runs:?}"
    );
    worker.stop().await;
});

backends!(app: a_job_that_requires_a_label_runs_only_where_it_is, |admin| {
    let group = admin.db_group("labelled").await;
    let gpu = Worker::start_labelled(admin, "labelled", &["train"], &[("gpu", "true")]).await;
    let plain = Worker::start(admin, "labelled", &["train"]).await;
    let job = admin
        .db_job(group, |j| {
            j.executor_handler = "train".into();
            j.executor_route_strategy = RouteStrategy::Round;
            j.executor_selector = "gpu=true".into();
        })
        .await;
    wait_listed(admin, group, 2).await;

    // ROUND over the group's two executors, but only the labelled one matches
    let mut log_ids = Vec::new();
    for _ in 0..6 {
        log_ids.extend(admin.manual(job).await);
    }
    admin
        .wait_until("six runs end", Duration::from_secs(20), || async {
            let rows = admin.logs_of(job).await;
            rows.len() == 6 && rows.iter().all(|r| r.handle_code == 200)
        })
        .await;
    assert_eq!(gpu.runs_of("train").len(), 6);
    assert!(plain.runs_of("train").is_empty());

    // with the labelled executor gone, the run fails at once and says why
    gpu.stop().await;
    admin
        .wait_until("the labelled executor is gone", Duration::from_secs(10), || async {
            admin
                .store
                .find_live_registry_for("labelled", 0)
                .await
                .is_ok_and(|l| l.len() == 1)
        })
        .await;
    let failed = admin.manual(job).await;
    let rows = admin.logs_of(job).await;
    let row = rows.iter().find(|r| r.id == failed[0]).expect("its row");
    assert_eq!(row.trigger_code, 500, "{row:?}");
    let msg = row.trigger_msg.clone().unwrap_or_default();
    assert!(msg.contains("no executor with gpu=true online"), "{msg}");
    assert!(plain.runs_of("train").is_empty());
    plain.stop().await;
});

backends!(app: a_cordoned_executor_gets_no_new_runs_and_finishes_its_own, |admin| {
    let group = admin.db_group("drain").await;
    let one = Worker::start(admin, "drain", &["work"]).await;
    let two = Worker::start(admin, "drain", &["work"]).await;
    for w in [&one, &two] {
        w.plan("work", Plan { sleep_ms: 1_500, ..Plan::default() });
    }
    let job = admin
        .db_job(group, |j| {
            j.executor_handler = "work".into();
            j.executor_route_strategy = RouteStrategy::Round;
        })
        .await;
    wait_listed(admin, group, 2).await;
    let address_of = |log_id: i64| async move {
        let row = admin.store.get_log(log_id).await.unwrap().unwrap();
        row.executor_address.unwrap_or_default()
    };

    // a run starts on the executor about to be drained
    let first = admin.manual(job).await[0];
    let drained = address_of(first).await;
    let cordon = jobwheel::model::ExecutorCordon {
        address: drained.clone(),
        since: jobwheel::clock::now_ms(),
        reason: "test drain".into(),
        by_user: "test".into(),
    };
    assert!(admin.store.cordon_executor(&cordon).await.unwrap());

    // every new run goes to the other executor, whatever ROUND would pick
    let mut later = Vec::new();
    for _ in 0..4 {
        later.extend(admin.manual(job).await);
    }
    for id in &later {
        let address = address_of(*id).await;
        assert!(!address.is_empty() && address != drained, "run {id} went to {address}");
    }
    // and the drained one's own run finishes
    admin
        .wait_until("every run ends", Duration::from_secs(30), || async {
            let rows = admin.logs_of(job).await;
            rows.len() == 5 && rows.iter().all(|r| r.handle_code == 200)
        })
        .await;
    let ran: usize = [&one, &two].iter().map(|w| w.runs_of("work").len()).sum();
    assert_eq!(ran, 5);

    // with every executor cordoned, a run fails at once and says why
    let rows = admin.store.find_live_registry_for("drain", 0).await.unwrap();
    for r in &rows {
        let cordon = jobwheel::model::ExecutorCordon {
            address: r.registry_value.clone(),
            ..cordon.clone()
        };
        admin.store.cordon_executor(&cordon).await.unwrap();
    }
    let refused = admin.manual(job).await[0];
    let row = admin.store.get_log(refused).await.unwrap().unwrap();
    assert_eq!(row.trigger_code, 500, "{row:?}");
    let msg = row.trigger_msg.unwrap_or_default();
    assert!(msg.contains("cordoned (draining)"), "{msg}");

    // lifted, the drained executor takes runs again
    for r in &rows {
        admin.store.uncordon_executor(&r.registry_value).await.unwrap();
    }
    admin.store.cordon_executor(&jobwheel::model::ExecutorCordon {
        address: rows.iter().find(|r| r.registry_value != drained).unwrap().registry_value.clone(),
        ..cordon.clone()
    }).await.unwrap();
    let back = admin.manual(job).await[0];
    assert_eq!(address_of(back).await, drained);
    one.stop().await;
    two.stop().await;
});
