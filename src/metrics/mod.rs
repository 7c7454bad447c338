//! Prometheus metrics: one registry per admin and per executor, served at `GET /metrics`.
//!
//! Each side owns its [`prometheus::Registry`] inside a struct of typed handles
//! ([`ExecutorMetrics`], and `AdminMetrics` with the admin) created at start-up and handed to
//! the actors that count; nothing is registered globally. Labelled series are resolved once
//! when the struct is built, so counting on the dispatch path is an atomic add, without a
//! label lookup or an allocation per fire. Gauges that mirror an actor's state are read when
//! the metrics are scraped.

use prometheus::{Encoder, HistogramOpts, Opts, Registry, TextEncoder};

#[cfg(feature = "admin")]
mod admin;
mod executor;
#[cfg(feature = "admin")]
mod workflow;

#[cfg(feature = "admin")]
pub use admin::{AdminMetrics, AdminSample, CallbackCounts};
pub use executor::{ExecutorMetrics, ExecutorSample, JobQueue, RefusalReason, RunResult};
#[cfg(feature = "admin")]
pub use workflow::WorkflowMetrics;

/// `Content-Type` of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The registry's metrics in the Prometheus text format.
pub fn render(registry: &Registry) -> String {
    let mut out = Vec::new();
    // encoding into memory fails only on a metric family the registry itself refused to hold
    if let Err(e) = TextEncoder::new().encode(&registry.gather(), &mut out) {
        log::error!("metrics not encoded: {e}");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The value of `series` (name and labels as rendered) in rendered `text`, for unit tests.
#[cfg(test)]
fn sample_value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Registers `metric` (built by the caller from constant names) and returns it.
///
/// A failure means two metrics share a name or a name is malformed: a programming error that
/// the unit tests of each side catch, so it panics at start-up rather than going unnoticed.
fn register<M: prometheus::core::Collector + Clone + 'static>(registry: &Registry, metric: M) -> M {
    registry
        .register(Box::new(metric.clone()))
        .expect("metric names are constant and unique");
    metric
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help)
}

fn histogram_opts(name: &str, help: &str, buckets: &[f64]) -> HistogramOpts {
    HistogramOpts::new(name, help).buckets(buckets.to_vec())
}
