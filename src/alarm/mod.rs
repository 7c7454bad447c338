//! Alarms for failed runs: e-mail (SMTP) and webhook (JSON POST), per job; and for FAILED or
//! TIMED_OUT workflow runs, through the same channels, to the workflow's addresses.
//!
//! The fail monitor builds one [`AlarmEvent`] per failed log (the workflow runner one per run) and hands it to the [`Alarmer`],
//! which asks every configured [`Alarm`] channel to deliver it. A channel that the job does not
//! use (no address, no URL) or that the admin has not configured (no SMTP server) answers
//! [`AlarmResult::NotConfigured`]; the log's `alarm_status` becomes 2 (sent) unless a channel
//! answered [`AlarmResult::Failed`], then 3.

use futures_util::future::LocalBoxFuture;
use serde::Serialize;

use crate::model::{alarm_status, JobGroup, JobInfo, RunRow, TriggerType, Workflow, WorkflowRun};

pub mod email;
pub mod webhook;

pub use email::EmailAlarm;
pub use webhook::WebhookAlarm;

/// The alarm type of a failed run (the only one XXL-JOB knows).
pub const ALARM_TYPE_FAIL: &str = "FAIL";
/// The alarm type of a workflow run that ended FAILED or TIMED_OUT.
pub const ALARM_TYPE_WORKFLOW: &str = "WORKFLOW_FAIL";

/// One failed run to alarm about.
#[derive(Debug, Clone)]
pub struct AlarmEvent {
    /// The job, as it is now (for a workflow run: its name and alarm addresses, id 0).
    pub job: JobInfo,
    /// The job's group, when it still exists.
    pub group: Option<JobGroup>,
    /// The failed log row (for a workflow run: its id, times and message).
    pub log: RunRow,
    /// The workflow run this alarm is about, if it is one.
    pub workflow: Option<WorkflowAlarm>,
}

/// What a workflow run's alarm says beside the common fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowAlarm {
    /// The workflow.
    pub workflow_id: i32,
    /// Its name.
    pub workflow_name: String,
    /// The run.
    pub workflow_run_id: i64,
    /// FAILED or TIMED_OUT.
    pub run_state: String,
    /// The nodes that failed (a TIMED_OUT run's cancelled ones are not listed).
    pub failed_nodes: Vec<String>,
}

impl AlarmEvent {
    /// The alarm of workflow `w`'s run `run`, which ended FAILED or TIMED_OUT with `failed_nodes`.
    pub fn of_workflow_run(
        w: &Workflow,
        run: &WorkflowRun,
        group: Option<JobGroup>,
        failed_nodes: Vec<String>,
    ) -> Self {
        let mut job = JobInfo::new(run.job_group, &w.name, "");
        job.id = 0;
        job.alarm_email = w.alarm_email.clone();
        job.alarm_webhook = w.alarm_webhook.clone();
        let log = RunRow {
            id: run.id,
            job_group: run.job_group,
            job_id: 0,
            trigger_type: TriggerType::Workflow,
            schedule_time: run.schedule_time,
            executor_address: None,
            executor_handler: None,
            executor_param: Some(run.params.clone()),
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
            trigger_time: run.start_time,
            trigger_code: crate::protocol::SUCCESS_CODE,
            trigger_msg: None,
            handle_time: run.end_time,
            handle_code: crate::protocol::FAIL_CODE,
            handle_msg: Some(run.message.clone()),
            alarm_status: alarm_status::LOCKED,
            wf_run_id: Some(run.id),
            wf_node: None,
            admission: crate::model::Admission::Ran,
        };
        AlarmEvent {
            job,
            group,
            log,
            workflow: Some(WorkflowAlarm {
                workflow_id: w.id,
                workflow_name: w.name.clone(),
                workflow_run_id: run.id,
                run_state: run.state.as_str().to_string(),
                failed_nodes,
            }),
        }
    }

    /// What the alarm is about, for log lines: `job 7 log 42` or `workflow 3 run 9`.
    pub fn what(&self) -> String {
        match &self.workflow {
            Some(w) => format!("workflow {} run {}", w.workflow_id, w.workflow_run_id),
            None => format!("job {} log {}", self.job.id, self.log.id),
        }
    }
}

/// What one channel did with an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlarmResult {
    /// The job does not use this channel, or the admin has not set it up.
    NotConfigured,
    /// Delivered.
    Delivered,
    /// Delivery failed; the text says why.
    Failed(String),
}

/// An alarm channel.
pub trait Alarm {
    /// Short name for log lines ("email", "webhook").
    fn name(&self) -> &'static str;
    /// Delivers the alarm for one failed run. Never panics; failures come back as
    /// [`AlarmResult::Failed`].
    fn send<'a>(&'a self, event: &'a AlarmEvent) -> LocalBoxFuture<'a, AlarmResult>;
}

/// What all channels together did with an event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AlarmOutcome {
    /// Channels that delivered.
    pub delivered: Vec<&'static str>,
    /// Channels that failed, with the reason.
    pub failed: Vec<(&'static str, String)>,
}

impl AlarmOutcome {
    /// The `alarm_status` to record: 3 if any channel failed, else 2 (also when none applied).
    pub fn status(&self) -> i32 {
        if self.failed.is_empty() {
            alarm_status::SENT
        } else {
            alarm_status::FAILED
        }
    }
}

/// Every alarm channel of the admin.
pub struct Alarmer {
    channels: Vec<Box<dyn Alarm>>,
}

impl Alarmer {
    /// An alarmer over the given channels.
    pub fn new(channels: Vec<Box<dyn Alarm>>) -> Self {
        Alarmer { channels }
    }

    /// Sends an event through every channel, one after the other.
    pub async fn raise(&self, event: &AlarmEvent) -> AlarmOutcome {
        let mut outcome = AlarmOutcome::default();
        for channel in &self.channels {
            match channel.send(event).await {
                AlarmResult::NotConfigured => {}
                AlarmResult::Delivered => {
                    log::info!("{} alarm sent for {}", channel.name(), event.what());
                    outcome.delivered.push(channel.name());
                }
                AlarmResult::Failed(why) => {
                    log::warn!(
                        "{} alarm failed for {}: {why}",
                        channel.name(),
                        event.what()
                    );
                    outcome.failed.push((channel.name(), why));
                }
            }
        }
        outcome
    }
}

/// The JSON a webhook receives (field names as XXL-JOB's log fields).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AlarmPayload {
    /// The failed log.
    pub log_id: i64,
    /// The job.
    pub job_id: i32,
    /// The job's group id.
    pub job_group: i32,
    /// The job's description.
    pub job_desc: String,
    /// 200 accepted, 500 trigger failed.
    pub trigger_code: i32,
    /// Trigger details (HTML, as stored).
    pub trigger_msg: String,
    /// 0 no result, 500 failed, 502 timeout, ...
    pub handle_code: i32,
    /// The executor's result message.
    pub handle_msg: String,
    /// Trigger time, epoch ms.
    pub trigger_time: i64,
    /// Result time, epoch ms (0 when there is none).
    pub handle_time: i64,
    /// [`ALARM_TYPE_FAIL`], or [`ALARM_TYPE_WORKFLOW`] for a workflow run.
    pub alarm_type: String,
    /// For a workflow run (whose `logId` is the run's id and `jobId` 0): which, and how it ended.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<WorkflowAlarm>,
}

impl AlarmPayload {
    /// The payload of an event.
    pub fn of(event: &AlarmEvent) -> Self {
        let log = &event.log;
        AlarmPayload {
            log_id: log.id,
            job_id: log.job_id,
            job_group: log.job_group,
            job_desc: event.job.job_desc.clone(),
            trigger_code: log.trigger_code,
            trigger_msg: log.trigger_msg.clone().unwrap_or_default(),
            handle_code: log.handle_code,
            handle_msg: log.handle_msg.clone().unwrap_or_default(),
            trigger_time: log.trigger_time,
            handle_time: log.handle_time,
            alarm_type: match event.workflow {
                Some(_) => ALARM_TYPE_WORKFLOW,
                None => ALARM_TYPE_FAIL,
            }
            .to_string(),
            workflow: event.workflow.clone(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::TriggerType;

    pub(crate) fn event() -> AlarmEvent {
        let mut job = JobInfo::new(3, "Nightly <export>", "exportHandler");
        job.id = 7;
        job.alarm_email = "a@example.com, b@example.com ,a@example.com".into();
        AlarmEvent {
            group: None,
            log: RunRow {
                id: 42,
                job_group: 3,
                job_id: 7,
                trigger_type: TriggerType::Cron,
                schedule_time: 1_000,
                executor_address: Some("http://127.0.0.1:9999/".into()),
                executor_handler: Some("exportHandler".into()),
                executor_param: None,
                executor_sharding_param: None,
                executor_fail_retry_count: 0,
                trigger_time: 1_000,
                trigger_code: 200,
                trigger_msg: Some("Trigger type：Cron trigger".into()),
                handle_time: 2_000,
                handle_code: 500,
                handle_msg: Some("disk <full>".into()),
                alarm_status: alarm_status::LOCKED,
                wf_run_id: None,
                wf_node: None,
                admission: crate::model::Admission::Ran,
            },
            job,
            workflow: None,
        }
    }

    struct Fixed(&'static str, AlarmResult);

    impl Alarm for Fixed {
        fn name(&self) -> &'static str {
            self.0
        }
        fn send<'a>(&'a self, _event: &'a AlarmEvent) -> LocalBoxFuture<'a, AlarmResult> {
            Box::pin(async move { self.1.clone() })
        }
    }

    #[actix_rt::test]
    async fn status_is_sent_unless_a_channel_failed() {
        let e = event();
        let none = Alarmer::new(vec![Box::new(Fixed("a", AlarmResult::NotConfigured))]);
        assert_eq!(none.raise(&e).await.status(), alarm_status::SENT);
        let ok = Alarmer::new(vec![
            Box::new(Fixed("a", AlarmResult::Delivered)),
            Box::new(Fixed("b", AlarmResult::NotConfigured)),
        ]);
        let outcome = ok.raise(&e).await;
        assert_eq!(outcome.delivered, vec!["a"]);
        assert_eq!(outcome.status(), alarm_status::SENT);
        let bad = Alarmer::new(vec![
            Box::new(Fixed("a", AlarmResult::Delivered)),
            Box::new(Fixed("b", AlarmResult::Failed("x".into()))),
        ]);
        assert_eq!(bad.raise(&e).await.status(), alarm_status::FAILED);
    }

    #[test]
    fn payload_uses_xxl_field_names() {
        let json = serde_json::to_value(AlarmPayload::of(&event())).unwrap();
        assert_eq!(json["logId"], 42);
        assert_eq!(json["jobId"], 7);
        assert_eq!(json["jobGroup"], 3);
        assert_eq!(json["handleCode"], 500);
        assert_eq!(json["handleMsg"], "disk <full>");
        assert_eq!(json["alarmType"], "FAIL");
        assert_eq!(json.as_object().unwrap().len(), 11);
    }

    #[test]
    fn a_workflow_run_alarm_names_the_run() {
        let mut e = event();
        e.workflow = Some(WorkflowAlarm {
            workflow_id: 3,
            workflow_name: "nightly".into(),
            workflow_run_id: 9,
            run_state: "FAILED".into(),
            failed_nodes: vec!["load".into()],
        });
        let json = serde_json::to_value(AlarmPayload::of(&e)).unwrap();
        assert_eq!(json["alarmType"], "WORKFLOW_FAIL");
        assert_eq!(json["workflowRunId"], 9);
        assert_eq!(json["runState"], "FAILED");
        assert_eq!(json["failedNodes"][0], "load");
        assert_eq!(e.what(), "workflow 3 run 9");
    }
}
