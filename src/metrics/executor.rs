//! The executor's metrics: triggers accepted and refused, runs, live workers, result batches.

use std::time::Duration;

use prometheus::{GaugeVec, Histogram, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Registry};

use super::{histogram_opts, opts, register};

/// Why the executor refused a trigger: the `reason` label of
/// `jobwheel_executor_triggers_refused_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    /// The trigger's fields are invalid (shard index, block strategy).
    InvalidTrigger,
    /// The executor is shutting down.
    ShuttingDown,
    /// The glue type is unknown, or not supported here (GLUE(Java)).
    UnsupportedGlue,
    /// A script job while scripts are off.
    GlueDisabled,
    /// No handler of that name is registered.
    HandlerNotFound,
    /// `DISCARD_LATER` and the job is busy.
    DiscardLater,
    /// The logId is already queued or running.
    Duplicate,
    /// The job's bounded SERIAL queue (`maxQueued`) is full.
    QueueFull,
}

impl RefusalReason {
    /// Every reason, in the order of [`RefusalReason::label`].
    pub const ALL: [RefusalReason; 8] = [
        RefusalReason::InvalidTrigger,
        RefusalReason::ShuttingDown,
        RefusalReason::UnsupportedGlue,
        RefusalReason::GlueDisabled,
        RefusalReason::HandlerNotFound,
        RefusalReason::DiscardLater,
        RefusalReason::Duplicate,
        RefusalReason::QueueFull,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            RefusalReason::InvalidTrigger => "invalid_trigger",
            RefusalReason::ShuttingDown => "shutting_down",
            RefusalReason::UnsupportedGlue => "unsupported_glue",
            RefusalReason::GlueDisabled => "glue_disabled",
            RefusalReason::HandlerNotFound => "handler_not_found",
            RefusalReason::DiscardLater => "discard_later",
            RefusalReason::Duplicate => "duplicate",
            RefusalReason::QueueFull => "queue_full",
        }
    }
}

/// How a run ended: the `result` label of `jobwheel_executor_runs_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunResult {
    /// The work returned code 200.
    Success,
    /// The work returned another code.
    Failure,
    /// The timeout fired.
    Timeout,
    /// The work panicked.
    Panic,
    /// Killed, covered, reaped or shut down while running.
    Cancelled,
    /// Queued, and its worker was stopped before its turn: reported without running.
    NotRun,
}

impl RunResult {
    /// Every result, in the order of [`RunResult::label`].
    pub const ALL: [RunResult; 6] = [
        RunResult::Success,
        RunResult::Failure,
        RunResult::Timeout,
        RunResult::Panic,
        RunResult::Cancelled,
        RunResult::NotRun,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            RunResult::Success => "success",
            RunResult::Failure => "failure",
            RunResult::Timeout => "timeout",
            RunResult::Panic => "panic",
            RunResult::Cancelled => "cancelled",
            RunResult::NotRun => "not_run",
        }
    }
}

/// Seconds; from a quick handler to a long batch job.
const RUN_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0,
];

/// What is read from the executor's state at each scrape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutorSample {
    /// Job workers (`JobActor`s) alive.
    pub workers: usize,
    /// Triggers accepted and not started: behind their job's running trigger, or waiting for
    /// one of the executor's run slots.
    pub queued: usize,
    /// Runs waiting for a run slot (part of `queued`).
    pub waiting_for_slot: usize,
    /// Runs holding a run slot (0 without a limit).
    pub in_slots: usize,
    /// The executor's limit of runs at once; 0 for none.
    pub max_concurrent_runs: usize,
    /// Result batches saved under `callbacklogs/`, waiting to be re-sent.
    pub pending_callback_files: usize,
}

/// One job's triggers not started on this executor (queued behind its run, or waiting for a
/// run slot), for the per-job gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobQueue {
    /// The job.
    pub job_id: i32,
    /// Its triggers not started.
    pub waiting: usize,
    /// How long the oldest of them has waited.
    pub oldest_wait: Duration,
}

/// The executor's registry and the handles its actors count with; clones share them.
#[derive(Clone)]
pub struct ExecutorMetrics {
    registry: Registry,
    accepted: IntCounter,
    refused: [IntCounter; RefusalReason::ALL.len()],
    runs: [IntCounter; RunResult::ALL.len()],
    run_duration: Histogram,
    workers: IntGauge,
    queued: IntGauge,
    waiting_for_slot: IntGauge,
    in_slots: IntGauge,
    max_concurrent_runs: IntGauge,
    job_waiting: IntGaugeVec,
    job_oldest_wait: GaugeVec,
    batches_sent: IntCounter,
    batches_failed: IntCounter,
    pending_files: IntGauge,
}

impl std::fmt::Debug for ExecutorMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorMetrics").finish_non_exhaustive()
    }
}

impl Default for ExecutorMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ExecutorMetrics {
    /// A fresh registry with every executor metric at zero.
    pub fn new() -> Self {
        let registry = Registry::new();
        let refused = register(
            &registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_executor_triggers_refused_total",
                    "Triggers the executor refused, by reason",
                ),
                &["reason"],
            )
            .expect("constant metric"),
        );
        let runs = register(
            &registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_executor_runs_total",
                    "Runs reported to the admin, by how they ended",
                ),
                &["result"],
            )
            .expect("constant metric"),
        );
        let batches = register(
            &registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_executor_callback_batches_total",
                    "Result batches posted to an admin (saved ones re-sent included), by outcome",
                ),
                &["result"],
            )
            .expect("constant metric"),
        );
        let job_waiting = register(
            &registry,
            IntGaugeVec::new(
                opts(
                    "jobwheel_executor_job_queued_triggers",
                    "Triggers of a job not started (queued, or waiting for a run slot); only jobs with some",
                ),
                &["job"],
            )
            .expect("constant metric"),
        );
        let job_oldest_wait = register(
            &registry,
            GaugeVec::new(
                opts(
                    "jobwheel_executor_job_oldest_queued_seconds",
                    "How long a job's oldest trigger not started has waited; only jobs with some",
                ),
                &["job"],
            )
            .expect("constant metric"),
        );
        let counter = |name: &str, help: &str| {
            register(
                &registry,
                IntCounter::with_opts(opts(name, help)).expect("constant metric"),
            )
        };
        let gauge = |name: &str, help: &str| {
            register(
                &registry,
                IntGauge::with_opts(opts(name, help)).expect("constant metric"),
            )
        };
        ExecutorMetrics {
            accepted: counter(
                "jobwheel_executor_triggers_accepted_total",
                "Triggers the executor accepted (queued for their job's worker)",
            ),
            refused: RefusalReason::ALL.map(|r| refused.with_label_values(&[r.label()])),
            runs: RunResult::ALL.map(|r| runs.with_label_values(&[r.label()])),
            run_duration: register(
                &registry,
                Histogram::with_opts(histogram_opts(
                    "jobwheel_executor_run_duration_seconds",
                    "How long runs took, from their turn to their result (runs that started)",
                    RUN_BUCKETS,
                ))
                .expect("constant metric"),
            ),
            workers: gauge(
                "jobwheel_executor_job_workers",
                "Job workers (one actor per job id) alive",
            ),
            queued: gauge(
                "jobwheel_executor_queued_triggers",
                "Accepted triggers not started: behind their job's current run, or waiting for a run slot",
            ),
            job_waiting,
            job_oldest_wait,
            waiting_for_slot: gauge(
                "jobwheel_executor_runs_waiting_for_slot",
                "Runs waiting for one of the executor's run slots (max_concurrent_runs)",
            ),
            in_slots: gauge(
                "jobwheel_executor_runs_in_slots",
                "Runs holding a run slot (0 without max_concurrent_runs)",
            ),
            max_concurrent_runs: gauge(
                "jobwheel_executor_max_concurrent_runs",
                "The executor's limit of runs at once; 0 for none",
            ),
            batches_sent: batches.with_label_values(&["sent"]),
            batches_failed: batches.with_label_values(&["failed"]),
            pending_files: gauge(
                "jobwheel_executor_pending_callback_files",
                "Result batches no admin accepted, saved under callbacklogs/ for retry",
            ),
            registry,
        }
    }

    /// The registry, for a host that serves it itself or gathers it into its own.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Counts an accepted trigger.
    pub fn trigger_accepted(&self) {
        self.accepted.inc();
    }

    /// Counts a refused trigger.
    pub fn trigger_refused(&self, reason: RefusalReason) {
        self.refused[reason as usize].inc();
    }

    /// Counts a run's end; `seconds` is its duration if it started.
    pub fn run_ended(&self, result: RunResult, seconds: Option<f64>) {
        self.runs[result as usize].inc();
        if let Some(seconds) = seconds {
            self.run_duration.observe(seconds);
        }
    }

    /// Counts a result batch an admin accepted (`true`) or none did.
    pub fn callback_batch(&self, sent: bool) {
        match sent {
            true => self.batches_sent.inc(),
            false => self.batches_failed.inc(),
        }
    }

    /// Sets the gauges read from the executor's state.
    pub fn set_sample(&self, sample: ExecutorSample) {
        self.workers.set(sample.workers as i64);
        self.queued.set(sample.queued as i64);
        self.waiting_for_slot.set(sample.waiting_for_slot as i64);
        self.in_slots.set(sample.in_slots as i64);
        self.max_concurrent_runs
            .set(sample.max_concurrent_runs as i64);
        self.pending_files.set(sample.pending_callback_files as i64);
    }

    /// Sets the per-job gauges to `queues`: jobs no longer waiting lose their series, so the
    /// count of series stays that of the jobs with a queue.
    pub fn set_job_queues(&self, queues: &[JobQueue]) {
        self.job_waiting.reset();
        self.job_oldest_wait.reset();
        for q in queues {
            let job = q.job_id.to_string();
            self.job_waiting
                .with_label_values(&[job.as_str()])
                .set(q.waiting as i64);
            self.job_oldest_wait
                .with_label_values(&[job.as_str()])
                .set(q.oldest_wait.as_secs_f64());
        }
    }

    /// Every metric in the text format, gauges as last set.
    pub fn render(&self) -> String {
        super::render(&self.registry)
    }
}

#[cfg(test)]
mod tests {
    use super::super::sample_value as value;
    use super::*;

    #[test]
    fn counts_land_in_their_labelled_series() {
        let m = ExecutorMetrics::new();
        m.trigger_accepted();
        m.trigger_accepted();
        m.trigger_refused(RefusalReason::Duplicate);
        m.run_ended(RunResult::Success, Some(0.2));
        m.run_ended(RunResult::NotRun, None);
        m.callback_batch(true);
        m.callback_batch(false);
        m.callback_batch(false);
        m.set_sample(ExecutorSample {
            workers: 3,
            queued: 4,
            waiting_for_slot: 2,
            in_slots: 6,
            max_concurrent_runs: 6,
            pending_callback_files: 5,
        });
        let text = m.render();
        let v = |s: &str| value(&text, s);
        assert_eq!(v("jobwheel_executor_triggers_accepted_total"), Some(2.0));
        assert_eq!(v("jobwheel_executor_runs_waiting_for_slot"), Some(2.0));
        assert_eq!(v("jobwheel_executor_runs_in_slots"), Some(6.0));
        assert_eq!(v("jobwheel_executor_max_concurrent_runs"), Some(6.0));
        assert_eq!(
            v("jobwheel_executor_triggers_refused_total{reason=\"duplicate\"}"),
            Some(1.0)
        );
        assert_eq!(
            v("jobwheel_executor_triggers_refused_total{reason=\"shutting_down\"}"),
            Some(0.0)
        );
        assert_eq!(
            v("jobwheel_executor_runs_total{result=\"success\"}"),
            Some(1.0)
        );
        assert_eq!(
            v("jobwheel_executor_runs_total{result=\"not_run\"}"),
            Some(1.0)
        );
        // only runs that started are timed
        assert_eq!(v("jobwheel_executor_run_duration_seconds_count"), Some(1.0));
        assert_eq!(
            v("jobwheel_executor_callback_batches_total{result=\"failed\"}"),
            Some(2.0)
        );
        assert_eq!(v("jobwheel_executor_job_workers"), Some(3.0));
        assert_eq!(v("jobwheel_executor_queued_triggers"), Some(4.0));
        assert_eq!(v("jobwheel_executor_pending_callback_files"), Some(5.0));
    }

    #[test]
    fn every_label_is_exposed_before_it_is_counted() {
        let text = ExecutorMetrics::new().render();
        for r in RefusalReason::ALL {
            let series = format!(
                "jobwheel_executor_triggers_refused_total{{reason=\"{}\"}}",
                r.label()
            );
            assert_eq!(value(&text, &series), Some(0.0), "{series}");
        }
        for r in RunResult::ALL {
            let series = format!("jobwheel_executor_runs_total{{result=\"{}\"}}", r.label());
            assert_eq!(value(&text, &series), Some(0.0), "{series}");
        }
    }

    #[test]
    fn per_job_queues_keep_only_the_jobs_that_wait() {
        let m = ExecutorMetrics::new();
        let q = |job_id, waiting, ms| JobQueue {
            job_id,
            waiting,
            oldest_wait: Duration::from_millis(ms),
        };
        m.set_job_queues(&[q(7, 3, 1_500), q(9, 1, 20)]);
        let text = m.render();
        let v = |s: &str| value(&text, s);
        assert_eq!(
            v("jobwheel_executor_job_queued_triggers{job=\"7\"}"),
            Some(3.0)
        );
        assert_eq!(
            v("jobwheel_executor_job_oldest_queued_seconds{job=\"7\"}"),
            Some(1.5)
        );
        assert_eq!(
            v("jobwheel_executor_job_queued_triggers{job=\"9\"}"),
            Some(1.0)
        );
        m.set_job_queues(&[q(9, 2, 40)]);
        let text = m.render();
        assert!(
            !text.contains("job=\"7\""),
            "a job that no longer waits goes: {text}"
        );
        assert_eq!(
            value(&text, "jobwheel_executor_job_queued_triggers{job=\"9\"}"),
            Some(2.0)
        );
    }

    #[test]
    fn two_executors_in_one_process_count_apart() {
        let (a, b) = (ExecutorMetrics::new(), ExecutorMetrics::new());
        a.trigger_accepted();
        assert_eq!(
            value(&b.render(), "jobwheel_executor_triggers_accepted_total"),
            Some(0.0)
        );
        assert_eq!(
            value(
                &a.clone().render(),
                "jobwheel_executor_triggers_accepted_total"
            ),
            Some(1.0)
        );
    }
}
