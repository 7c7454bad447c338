//! The admin's workflow metrics: runs by state, node fires and how long nodes took.

use prometheus::{HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Registry};

use super::{histogram_opts, opts, register};

/// Seconds a node took from its fire to its end: a script runs for seconds to hours.
const NODE_DURATION_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 14400.0,
];

/// The states a run is open in, for the gauge read at each scrape.
pub const OPEN_RUN_STATES: [&str; 2] = ["QUEUED", "RUNNING"];

/// Handles of the workflow metrics, registered in the admin's registry.
#[derive(Clone)]
pub struct WorkflowMetrics {
    runs: IntCounterVec,
    open_runs: IntGaugeVec,
    node_fires: IntCounter,
    node_duration: HistogramVec,
}

impl WorkflowMetrics {
    /// Registers the workflow metrics in `registry`.
    pub(super) fn new(registry: &Registry) -> Self {
        let runs = register(
            registry,
            IntCounterVec::new(
                opts(
                    "jobwheel_workflow_runs_total",
                    "Workflow runs that reached a state: RUNNING, QUEUED or SKIPPED when fired, then the state they ended in",
                ),
                &["state"],
            )
            .expect("constant metric"),
        );
        let open_runs = register(
            registry,
            IntGaugeVec::new(
                opts(
                    "jobwheel_workflow_runs_open",
                    "Workflow runs queued or running now, across the cluster",
                ),
                &["state"],
            )
            .expect("constant metric"),
        );
        let node_fires = register(
            registry,
            IntCounter::with_opts(opts(
                "jobwheel_workflow_node_fires_total",
                "JOB node attempts this admin claimed and handed to the dispatcher",
            ))
            .expect("constant metric"),
        );
        let node_duration = register(
            registry,
            HistogramVec::new(
                histogram_opts(
                    "jobwheel_workflow_node_duration_seconds",
                    "How long workflow nodes took from their fire to their end, by the state they ended in",
                    NODE_DURATION_BUCKETS,
                ),
                &["state"],
            )
            .expect("constant metric"),
        );
        for state in OPEN_RUN_STATES {
            open_runs.with_label_values(&[state]).set(0);
        }
        WorkflowMetrics {
            runs,
            open_runs,
            node_fires,
            node_duration,
        }
    }

    /// Counts a run reaching `state`.
    pub fn run_reached(&self, state: &str) {
        self.runs.with_label_values(&[state]).inc();
    }

    /// Counts a node attempt fired.
    pub fn node_fired(&self) {
        self.node_fires.inc();
    }

    /// Records a node that ended in `state` after `ms` milliseconds.
    pub fn node_ended(&self, state: &str, ms: i64) {
        self.node_duration
            .with_label_values(&[state])
            .observe(ms.max(0) as f64 / 1_000.0);
    }

    /// Sets the open runs per state (states not given count 0).
    pub fn set_open_runs(&self, counts: &[(String, i64)]) {
        for state in OPEN_RUN_STATES {
            let n = counts
                .iter()
                .find(|(s, _)| s == state)
                .map_or(0, |(_, n)| *n);
            self.open_runs.with_label_values(&[state]).set(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sample_value as value;
    use super::*;

    #[test]
    fn runs_nodes_and_open_runs_record() {
        let registry = Registry::new();
        let m = WorkflowMetrics::new(&registry);
        m.run_reached("RUNNING");
        m.run_reached("RUNNING");
        m.run_reached("FAILED");
        m.node_fired();
        m.node_ended("SUCCEEDED", 1_500);
        m.set_open_runs(&[("RUNNING".into(), 3)]);
        let text = super::super::render(&registry);
        let v = |s: &str| value(&text, s);
        assert_eq!(
            v("jobwheel_workflow_runs_total{state=\"RUNNING\"}"),
            Some(2.0)
        );
        assert_eq!(
            v("jobwheel_workflow_runs_total{state=\"FAILED\"}"),
            Some(1.0)
        );
        assert_eq!(v("jobwheel_workflow_node_fires_total"), Some(1.0));
        assert_eq!(
            v("jobwheel_workflow_node_duration_seconds_sum{state=\"SUCCEEDED\"}"),
            Some(1.5)
        );
        assert_eq!(
            v("jobwheel_workflow_runs_open{state=\"RUNNING\"}"),
            Some(3.0)
        );
        assert_eq!(
            v("jobwheel_workflow_runs_open{state=\"QUEUED\"}"),
            Some(0.0)
        );
    }
}
