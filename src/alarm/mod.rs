//! Alarms for failed runs: e-mail (SMTP) and webhook (JSON POST), per job.
//!
//! The fail monitor builds one [`AlarmEvent`] per failed log and hands it to the [`Alarmer`],
//! which asks every configured [`Alarm`] channel to deliver it. A channel that the job does not
//! use (no address, no URL) or that the admin has not configured (no SMTP server) answers
//! [`AlarmResult::NotConfigured`]; the log's `alarm_status` becomes 2 (sent) unless a channel
//! answered [`AlarmResult::Failed`], then 3.

use futures_util::future::LocalBoxFuture;
use serde::Serialize;

use crate::model::{alarm_status, JobGroup, JobInfo, RunRow};

pub mod email;
pub mod webhook;

pub use email::EmailAlarm;
pub use webhook::WebhookAlarm;

/// The alarm type of a failed run (the only one XXL-JOB knows).
pub const ALARM_TYPE_FAIL: &str = "FAIL";

/// One failed run to alarm about.
#[derive(Debug, Clone)]
pub struct AlarmEvent {
    /// The job, as it is now.
    pub job: JobInfo,
    /// The job's group, when it still exists.
    pub group: Option<JobGroup>,
    /// The failed log row.
    pub log: RunRow,
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
                    log::info!(
                        "{} alarm sent for job {} log {}",
                        channel.name(),
                        event.job.id,
                        event.log.id
                    );
                    outcome.delivered.push(channel.name());
                }
                AlarmResult::Failed(why) => {
                    log::warn!(
                        "{} alarm failed for job {} log {}: {why}",
                        channel.name(),
                        event.job.id,
                        event.log.id
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
    /// Always [`ALARM_TYPE_FAIL`].
    pub alarm_type: String,
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
            alarm_type: ALARM_TYPE_FAIL.to_string(),
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
            },
            job,
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
}
