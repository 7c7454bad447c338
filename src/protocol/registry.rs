//! `/api/registry` and `/api/registryRemove`: an executor's registration.

use serde::{Deserialize, Serialize};

use super::lenient;
use super::Labels;
use super::REGISTRY_GROUP_EXECUTOR;

/// Body of `/api/registry` and `/api/registryRemove`; the admin keys executors by all three fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct RegistryParam {
    /// Always `EXECUTOR` from executors.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_group: String,
    /// The executor app name, i.e. the group's `app_name`.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_key: String,
    /// The executor base URL, with the trailing slash the admin appends paths to.
    #[serde(deserialize_with = "lenient::string")]
    pub registry_value: String,
    /// What the executor runs and holds queued at this beat. A jobwheel extension: XXL-JOB
    /// admins ignore the key, Java executors never send it, and an admin that cannot read it
    /// keeps the registration without a load.
    #[serde(
        default,
        deserialize_with = "lenient::opt_load",
        skip_serializing_if = "Option::is_none"
    )]
    pub load: Option<ExecutorLoad>,
    /// The executor's labels (`region=eu`), which jobs' `executorSelector` choose by. A jobwheel
    /// extension like `load`; sent only when there are some.
    #[serde(
        default,
        deserialize_with = "lenient::labels",
        skip_serializing_if = "Labels::is_empty"
    )]
    pub labels: Labels,
}

/// The most jobs one beat reports queues of; the longest queues first.
pub const LOAD_JOBS_MAX: usize = 100;

/// An executor's load at one beat.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExecutorLoad {
    /// Runs executing now.
    pub running: u32,
    /// Triggers accepted and not started (behind their job's run, or waiting for a run slot).
    pub queued: u32,
    /// Its limit of runs at once (`max_concurrent_runs`); 0 for none.
    pub limit: u32,
    /// The jobs with triggers queued, the longest queues first, at most [`LOAD_JOBS_MAX`].
    pub jobs: Vec<JobLoad>,
}

/// One job's queue on an executor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobLoad {
    /// The job.
    pub job_id: i32,
    /// Its triggers not started.
    pub queued: u32,
    /// How long the oldest of them has waited, in milliseconds.
    pub oldest_queued_ms: u64,
}

impl ExecutorLoad {
    /// Whether the two hold the same counts (waiting times aside).
    pub fn same_counts(&self, other: &ExecutorLoad) -> bool {
        let counts = |l: &ExecutorLoad| {
            let mut jobs: Vec<(i32, u32)> = l.jobs.iter().map(|j| (j.job_id, j.queued)).collect();
            jobs.sort_unstable();
            (l.running, l.queued, l.limit, jobs)
        };
        counts(self) == counts(other)
    }

    /// The load as the admin keeps it: the job list cut to [`LOAD_JOBS_MAX`], longest first.
    pub fn bounded(mut self) -> Self {
        self.jobs
            .sort_by(|a, b| b.queued.cmp(&a.queued).then(a.job_id.cmp(&b.job_id)));
        self.jobs.truncate(LOAD_JOBS_MAX);
        self
    }
}

impl RegistryParam {
    /// Registration of an executor, so callers cannot get the group name wrong.
    pub fn executor(app_name: impl Into<String>, address: impl Into<String>) -> Self {
        RegistryParam {
            registry_group: REGISTRY_GROUP_EXECUTOR.to_string(),
            registry_key: app_name.into(),
            registry_value: address.into(),
            load: None,
            labels: Labels::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;

    #[test]
    fn registry_body() {
        let body = r#"{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:9999/"}"#;
        let r: RegistryParam = decode(body.as_bytes()).unwrap();
        assert_eq!(r.registry_group, REGISTRY_GROUP_EXECUTOR);
        assert_eq!(r.registry_key, "xxl-job-executor-sample");
        assert_eq!(r.registry_value, "http://127.0.0.1:9999/");
        assert_eq!(
            r,
            RegistryParam::executor("xxl-job-executor-sample", "http://127.0.0.1:9999/")
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), v(body));
    }

    #[test]
    fn load_extension_round_trips_and_a_malformed_one_is_dropped() {
        let body = r#"{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://e/",
            "load":{"running":4,"queued":16,"limit":4,"jobs":[{"jobId":7,"queued":3,"oldestQueuedMs":1500}]}}"#;
        let r: RegistryParam = decode(body.as_bytes()).unwrap();
        let load = r.load.clone().expect("load read");
        assert_eq!((load.running, load.queued, load.limit), (4, 16, 4));
        assert_eq!(
            load.jobs,
            vec![JobLoad {
                job_id: 7,
                queued: 3,
                oldest_queued_ms: 1500
            }]
        );
        let again: RegistryParam = decode(&serde_json::to_vec(&r).unwrap()).unwrap();
        assert_eq!(again, r);
        for bad in [r#""busy""#, r#"{"running":-1}"#, r#"{"jobs":"x"}"#, "null"] {
            let body = format!(
                r#"{{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://e/","load":{bad}}}"#
            );
            let r: RegistryParam = decode(body.as_bytes()).unwrap();
            assert_eq!(r.load, None, "{bad}");
            assert_eq!(r.registry_key, "app");
        }
    }

    #[test]
    fn a_bounded_load_keeps_the_longest_queues() {
        let jobs = (0..150)
            .map(|i| JobLoad {
                job_id: i,
                queued: i as u32,
                oldest_queued_ms: 0,
            })
            .collect();
        let load = ExecutorLoad {
            jobs,
            ..ExecutorLoad::default()
        }
        .bounded();
        assert_eq!(load.jobs.len(), LOAD_JOBS_MAX);
        assert_eq!(load.jobs[0].job_id, 149);
        assert_eq!(load.jobs[LOAD_JOBS_MAX - 1].job_id, 50);
    }
}
