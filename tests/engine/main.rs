//! The scheduling engine and its monitors end to end: an in-process admin on a real database
//! (SQLite, PostgreSQL, MySQL), fake executors over real HTTP.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

#[path = "support.rs"]
mod engine_support;

mod admission;
mod cluster;
mod executor_faults;
mod instance_caps;
mod metrics;
mod monitor_email;
mod monitor_fail;
mod monitor_lost;
mod monitor_report;
mod once_per_fire;
mod outage;
mod results;
mod routing;
mod scheduling;
mod supervision;
