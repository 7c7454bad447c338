//! The admin's metrics: fires, dispatch, the pre-read, results, retries, alarms, the database.

use std::collections::BTreeMap;

use prometheus::{
    Histogram, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Registry,
};

use super::workflow::WorkflowMetrics;
use super::{histogram_opts, opts, register};
use crate::model::{Admission, TriggerType};

/// The dispatch pools, in the order of their label values.
const POOLS: [&str; 2] = ["fast", "slow"];

/// Seconds: an executor call on a LAN takes a millisecond; the call timeout is 3 s, probes
/// (FAILOVER, BUSYOVER) may add more.
const DISPATCH_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Seconds: a fire is due to go out within milliseconds of its time; a misfire is 5 s late.
const LATENESS_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];
/// Jobs read by one pass; the default batch is 3,000.
const PREREAD_BATCH_BUCKETS: &[f64] = &[
    0.0, 1.0, 10.0, 50.0, 100.0, 500.0, 1000.0, 2000.0, 3000.0, 5000.0, 10000.0,
];
/// Seconds one pass holds the cluster lock.
const PREREAD_DURATION_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// What one batch of executor results did, for `jobwheel_callback_results_*`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallbackCounts {
    /// Results received.
    pub received: usize,
    /// Results for runs that already had one.
    pub duplicate: usize,
    /// Results for log ids nobody knows.
    pub unknown: usize,
    /// Results refused (another group's run, or a message the database cannot hold).
    pub refused: usize,
}

/// What is read from the admin's state at each scrape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdminSample {
    /// Dispatches in flight on the fast and the slow pool.
    pub in_flight: [usize; 2],
    /// Live executor registrations per app name.
    pub executors: BTreeMap<String, usize>,
    /// Connections of the database pool in use.
    pub db_in_use: usize,
    /// Connections of the database pool open and idle.
    pub db_idle: usize,
}

/// The admin's registry and the handles its actors count with; clones share them.
#[derive(Clone)]
pub struct AdminMetrics {
    registry: Registry,
    /// [trigger type][0 success, 1 failure]
    fires: Vec<[IntCounter; 2]>,
    dispatch: [Histogram; 2],
    lateness: Histogram,
    ring: IntGauge,
    preread_jobs: Histogram,
    preread_duration: Histogram,
    in_flight: [IntGauge; 2],
    executors: IntGaugeVec,
    callbacks_received: IntCounter,
    /// duplicate, unknown_log, refused
    callbacks_ignored: [IntCounter; 3],
    callback_writes: IntCounter,
    retries: IntCounter,
    alarms_sent: IntCounter,
    alarms_failed: IntCounter,
    lost: IntCounter,
    /// by monitor and whether this admin ran the pass or another admin had its turn
    monitor_passes: IntCounterVec,
    /// by [`Admission`], in the order of `Admission::ALL`
    admissions: Vec<IntCounter>,
    db_in_use: IntGauge,
    db_idle: IntGauge,
    workflow: WorkflowMetrics,
}

impl Default for AdminMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl AdminMetrics {
    /// A fresh registry with every admin metric at zero.
    pub fn new() -> Self {
        let registry = Registry::new();
        let fires = register(
            &registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_fires_total",
                    "Runs whose trigger was attempted (one per shard), by trigger type and trigger result",
                ),
                &["trigger_type", "result"],
            )
            .expect("constant metric"),
        );
        let dispatch = register(
            &registry,
            HistogramVec::new(
                histogram_opts(
                    "jobwheel_dispatch_duration_seconds",
                    "Time from a fire's start (routing, probes) to its executor's answer, by pool",
                    DISPATCH_BUCKETS,
                ),
                &["pool"],
            )
            .expect("constant metric"),
        );
        let in_flight = register(
            &registry,
            IntGaugeVec::new(
                opts(
                    "jobwheel_dispatch_in_flight",
                    "Triggers handed to a pool and not finished (prepared ones waiting for their second included)",
                ),
                &["pool"],
            )
            .expect("constant metric"),
        );
        let callbacks_ignored = register(
            &registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_callback_results_ignored_total",
                    "Executor results not stored as sent, by reason",
                ),
                &["reason"],
            )
            .expect("constant metric"),
        );
        let alarms = register(
            &registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_alarms_total",
                    "Failed runs whose alarms were delivered (or had none to send) or failed",
                ),
                &["result"],
            )
            .expect("constant metric"),
        );
        let db = register(
            &registry,
            IntGaugeVec::new(
                opts(
                    "jobwheel_db_connections",
                    "Connections of the admin's database pool, by state",
                ),
                &["state"],
            )
            .expect("constant metric"),
        );
        let counter = |name: &str, help: &str| {
            register(
                &registry,
                IntCounter::with_opts(opts(name, help)).expect("constant metric"),
            )
        };
        let histogram = |name: &str, help: &str, buckets: &[f64]| {
            register(
                &registry,
                Histogram::with_opts(histogram_opts(name, help, buckets)).expect("constant metric"),
            )
        };
        AdminMetrics {
            fires: TriggerType::ALL
                .iter()
                .map(|t| {
                    ["success", "failure"].map(|r| fires.with_label_values(&[t.as_str(), r]))
                })
                .collect(),
            dispatch: POOLS.map(|p| dispatch.with_label_values(&[p])),
            lateness: histogram(
                "jobwheel_fire_lateness_seconds",
                "How late scheduled fires (CRON, MISFIRE) called their executor: call time minus fire time",
                LATENESS_BUCKETS,
            ),
            ring: register(
                &registry,
                IntGauge::with_opts(opts(
                    "jobwheel_ring_fire_times",
                    "Pre-read fire times waiting in the ring",
                ))
                .expect("constant metric"),
            ),
            preread_jobs: histogram(
                "jobwheel_preread_batch_jobs",
                "Jobs read by one pre-read pass",
                PREREAD_BATCH_BUCKETS,
            ),
            preread_duration: histogram(
                "jobwheel_preread_duration_seconds",
                "How long one pre-read pass took (lock, read, claim, commit)",
                PREREAD_DURATION_BUCKETS,
            ),
            in_flight: POOLS.map(|p| in_flight.with_label_values(&[p])),
            executors: register(
                &registry,
                IntGaugeVec::new(
                    opts(
                        "jobwheel_registered_executors",
                        "Live executor registrations, by app name (executor group)",
                    ),
                    &["app_name"],
                )
                .expect("constant metric"),
            ),
            callbacks_received: counter(
                "jobwheel_callback_results_received_total",
                "Run results received from executors",
            ),
            callbacks_ignored: ["duplicate", "unknown_log", "refused"]
                .map(|r| callbacks_ignored.with_label_values(&[r])),
            callback_writes: counter(
                "jobwheel_callback_writes_total",
                "Database writes of run results; one write stores every batch received while the one before ran",
            ),
            retries: counter(
                "jobwheel_retries_total",
                "RETRY triggers dispatched for failed runs",
            ),
            alarms_sent: alarms.with_label_values(&["sent"]),
            alarms_failed: alarms.with_label_values(&["failed"]),
            lost: counter(
                "jobwheel_lost_results_total",
                "Runs marked failed because their result was lost with their executor",
            ),
            monitor_passes: register(
                &registry,
                IntCounterVec::new(
                    opts(
                        "jobwheel_monitor_passes_total",
                        "Monitor passes (fail, lost, report) this admin ran, or skipped because another admin had the interval's turn",
                    ),
                    &["monitor", "result"],
                )
                .expect("constant metric"),
            ),
            admissions: {
                let by_code = register(
                    &registry,
                    IntCounterVec::new(
                        opts(
                            "jobwheel_admissions_total",
                            "Run rows by admission: RAN, QUEUED, SKIPPED, REFUSED (instance limits) and NO_EXECUTOR",
                        ),
                        &["admission"],
                    )
                    .expect("constant metric"),
                );
                Admission::ALL
                    .iter()
                    .map(|a| by_code.with_label_values(&[a.as_str()]))
                    .collect()
            },
            db_in_use: db.with_label_values(&["in_use"]),
            db_idle: db.with_label_values(&["idle"]),
            workflow: WorkflowMetrics::new(&registry),
            registry,
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The workflow metrics.
    pub fn workflow(&self) -> &WorkflowMetrics {
        &self.workflow
    }

    /// The pool index of a label value ("fast" 0, anything else the slow pool).
    pub fn pool_index(pool: &str) -> usize {
        usize::from(pool != POOLS[0])
    }

    /// Counts one run's trigger outcome.
    pub fn fired(&self, trigger_type: TriggerType, success: bool) {
        let t = TriggerType::ALL
            .iter()
            .position(|t| *t == trigger_type)
            .unwrap_or_default();
        if let Some(pair) = self.fires.get(t) {
            pair[usize::from(!success)].inc();
        }
    }

    /// The dispatch-duration histogram of pool `index` (see [`AdminMetrics::pool_index`]).
    pub fn dispatch_histogram(&self, index: usize) -> Histogram {
        self.dispatch[index.min(1)].clone()
    }

    /// Records how late a scheduled fire called its executor (early calls count as 0).
    pub fn fire_lateness(&self, late_ms: i64) {
        self.lateness.observe(late_ms.max(0) as f64 / 1_000.0);
    }

    /// Sets the ring's occupancy.
    pub fn ring_occupancy(&self, fire_times: usize) {
        self.ring.set(fire_times as i64);
    }

    /// Records one pre-read pass.
    pub fn preread(&self, jobs: usize, seconds: f64) {
        self.preread_jobs.observe(jobs as f64);
        self.preread_duration.observe(seconds);
    }

    /// Counts what a batch of executor results did.
    pub fn callbacks(&self, counts: CallbackCounts) {
        self.callbacks_received.inc_by(counts.received as u64);
        for (counter, n) in
            self.callbacks_ignored
                .iter()
                .zip([counts.duplicate, counts.unknown, counts.refused])
        {
            counter.inc_by(n as u64);
        }
    }

    /// Counts one database write of result batches.
    pub fn callback_write(&self) {
        self.callback_writes.inc();
    }

    /// Counts a retry dispatched.
    pub fn retried(&self) {
        self.retries.inc();
    }

    /// Counts a failed run's alarms: delivered (`true`) or a channel failed.
    pub fn alarm(&self, sent: bool) {
        match sent {
            true => self.alarms_sent.inc(),
            false => self.alarms_failed.inc(),
        }
    }

    /// Counts a run marked lost.
    pub fn lost_result(&self) {
        self.lost.inc();
    }

    /// Counts one interval of a monitor: this admin ran its pass (`true`) or another one did.
    pub fn monitor_pass(&self, monitor: &str, ran: bool) {
        let result = if ran { "ran" } else { "skipped" };
        self.monitor_passes
            .with_label_values(&[monitor, result])
            .inc();
    }

    /// Counts `n` run rows that stood as `admission`.
    pub fn admitted(&self, admission: Admission, n: usize) {
        let i = Admission::ALL.iter().position(|a| *a == admission);
        if let Some(counter) = i.and_then(|i| self.admissions.get(i)) {
            counter.inc_by(n as u64);
        }
    }

    /// Sets the gauges read from the admin's state.
    pub fn set_sample(&self, sample: &AdminSample) {
        for (gauge, n) in self.in_flight.iter().zip(sample.in_flight) {
            gauge.set(n as i64);
        }
        // apps whose executors all left disappear rather than stay at their last count
        self.executors.reset();
        for (app, n) in &sample.executors {
            self.executors.with_label_values(&[app]).set(*n as i64);
        }
        self.db_in_use.set(sample.db_in_use as i64);
        self.db_idle.set(sample.db_idle as i64);
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
    fn fires_count_by_trigger_type_and_result() {
        let m = AdminMetrics::new();
        m.fired(TriggerType::Cron, true);
        m.fired(TriggerType::Cron, true);
        m.fired(TriggerType::Cron, false);
        m.fired(TriggerType::Retry, false);
        let text = m.render();
        let fires = |t: &str, r: &str| {
            value(
                &text,
                &format!("jobwheel_fires_total{{result=\"{r}\",trigger_type=\"{t}\"}}"),
            )
        };
        assert_eq!(fires("CRON", "success"), Some(2.0));
        assert_eq!(fires("CRON", "failure"), Some(1.0));
        assert_eq!(fires("RETRY", "failure"), Some(1.0));
        // every pair is exposed from the start, so a rate over it never lacks a series
        for t in TriggerType::ALL {
            assert!(fires(t.as_str(), "success").is_some(), "{t}");
        }
    }

    #[test]
    fn histograms_and_counters_record() {
        let m = AdminMetrics::new();
        m.dispatch_histogram(AdminMetrics::pool_index("slow"))
            .observe(0.2);
        m.fire_lateness(-30);
        m.fire_lateness(1_500);
        m.preread(12, 0.01);
        m.callbacks(CallbackCounts {
            received: 5,
            duplicate: 1,
            unknown: 2,
            refused: 0,
        });
        m.retried();
        m.alarm(true);
        m.alarm(false);
        m.alarm(false);
        m.lost_result();
        m.monitor_pass("fail", true);
        m.monitor_pass("fail", false);
        m.monitor_pass("fail", false);
        m.ring_occupancy(7);
        let text = m.render();
        let v = |s: &str| value(&text, s);
        assert_eq!(
            v("jobwheel_dispatch_duration_seconds_count{pool=\"slow\"}"),
            Some(1.0)
        );
        assert_eq!(
            v("jobwheel_dispatch_duration_seconds_count{pool=\"fast\"}"),
            Some(0.0)
        );
        assert_eq!(v("jobwheel_fire_lateness_seconds_count"), Some(2.0));
        // the early call counts as on time
        assert_eq!(
            v("jobwheel_fire_lateness_seconds_bucket{le=\"0.001\"}"),
            Some(1.0)
        );
        assert_eq!(v("jobwheel_fire_lateness_seconds_sum"), Some(1.5));
        assert_eq!(v("jobwheel_preread_batch_jobs_sum"), Some(12.0));
        assert_eq!(v("jobwheel_preread_duration_seconds_count"), Some(1.0));
        assert_eq!(v("jobwheel_callback_results_received_total"), Some(5.0));
        assert_eq!(
            v("jobwheel_callback_results_ignored_total{reason=\"unknown_log\"}"),
            Some(2.0)
        );
        assert_eq!(v("jobwheel_retries_total"), Some(1.0));
        assert_eq!(v("jobwheel_alarms_total{result=\"failed\"}"), Some(2.0));
        assert_eq!(v("jobwheel_lost_results_total"), Some(1.0));
        assert_eq!(
            v("jobwheel_monitor_passes_total{monitor=\"fail\",result=\"skipped\"}"),
            Some(2.0)
        );
        assert_eq!(v("jobwheel_ring_fire_times"), Some(7.0));
    }

    #[test]
    fn a_sample_replaces_the_previous_one() {
        let m = AdminMetrics::new();
        let mut sample = AdminSample {
            in_flight: [3, 1],
            db_in_use: 2,
            db_idle: 5,
            ..Default::default()
        };
        sample.executors.insert("billing".into(), 2);
        sample.executors.insert("mail".into(), 1);
        m.set_sample(&sample);
        sample.executors.remove("mail");
        m.set_sample(&sample);
        let text = m.render();
        let v = |s: &str| value(&text, s);
        assert_eq!(v("jobwheel_dispatch_in_flight{pool=\"fast\"}"), Some(3.0));
        assert_eq!(v("jobwheel_dispatch_in_flight{pool=\"slow\"}"), Some(1.0));
        assert_eq!(
            v("jobwheel_registered_executors{app_name=\"billing\"}"),
            Some(2.0)
        );
        assert_eq!(v("jobwheel_registered_executors{app_name=\"mail\"}"), None);
        assert_eq!(v("jobwheel_db_connections{state=\"idle\"}"), Some(5.0));
        assert_eq!(v("jobwheel_db_connections{state=\"in_use\"}"), Some(2.0));
    }
}
