//! Every store function, and the first-start set-up, with the same bodies on SQLite,
//! PostgreSQL and MySQL: one file per store module.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

mod admission;
mod bootstrap;
mod claims;
mod cordons;
mod groups;
mod jobs;
mod log_batch;
mod logs;
mod registry;
mod schedule;
mod support;
mod suspects;
mod users;
mod workflow_runs;
