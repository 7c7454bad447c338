//! What the store tests share: groups, jobs and run outcomes to start from.

use jobwheel::model::{
    AddressType, DueJob, JobGroup, JobInfo, ScheduleType, TriggerOutcome, TRIGGER_STATUS_RUNNING,
};
use jobwheel::store::{ScheduleUpdate, Store};

pub(crate) fn group(app: &str) -> JobGroup {
    JobGroup {
        id: 0,
        app_name: app.to_string(),
        title: format!("{app} title"),
        address_type: AddressType::Auto,
        address_list: vec![],
        access_token: None,
        update_time: 1_000,
        max_concurrent_instances: 0,
        instance_overflow: jobwheel::model::InstanceOverflow::Skip,
    }
}

pub(crate) async fn new_group(store: &Store, app: &str) -> i32 {
    store.insert_group(&group(app)).await.unwrap()
}

pub(crate) fn job(group: i32, desc: &str) -> JobInfo {
    let mut j = JobInfo::new(group, desc, "demoJobHandler");
    j.add_time = 1_000;
    j.update_time = 1_000;
    j.author = "ops".into();
    j.schedule_type = ScheduleType::Cron;
    j.schedule_conf = "0/5 * * * * ?".into();
    j
}

/// Inserts one running job per fire time in `next_times` (named `j0`, `j1`, …); their ids.
pub(crate) async fn running_jobs(
    s: &Store,
    group: i32,
    next_times: impl IntoIterator<Item = i64>,
) -> Vec<i32> {
    let mut ids = vec![];
    for (i, next) in next_times.into_iter().enumerate() {
        let mut j = job(group, &format!("j{i}"));
        j.trigger_status = TRIGGER_STATUS_RUNNING;
        j.trigger_next_time = next;
        ids.push(s.insert_job(&j).await.unwrap());
    }
    ids
}

pub(crate) fn accepted(address: &str) -> TriggerOutcome {
    TriggerOutcome {
        trigger_code: 200,
        trigger_msg: "ok".into(),
        executor_address: Some(address.to_string()),
    }
}

/// Claims of `jobs` that fire their due time and move on to `next`.
pub(crate) fn next_fire_at(jobs: &[DueJob], next: i64) -> Vec<ScheduleUpdate> {
    jobs.iter()
        .map(|j| ScheduleUpdate {
            id: j.id,
            expected_next: j.trigger_next_time,
            last: j.trigger_next_time,
            next,
            stop: false,
        })
        .collect()
}
