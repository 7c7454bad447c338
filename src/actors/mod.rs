//! Every long-lived component is an actor; this folder holds the executor's and the admin's.
//!
//! Executor (feature `executor`): [`job_table`] (the jobId → worker table that applies each
//! trigger, refusing log ids it accepted lately), [`job_thread`] (one `JobActor` per jobId: its mailbox is the job's queue),
//! [`result_sender`] (results to the admins, batched, kept on disk until accepted),
//! [`registrar`] (registration beat), [`log_cleaner`] (run-log retention).
//!
//! Admin (feature `admin`): [`schedule`] (pre-read, taking over the fires of admins that stopped:
//! [`takeover`], [`node_beat`]), [`ring`] (60 one-second slots),
//! [`dispatch`] (fast/slow pools running [`trigger`]s, their outcomes written by
//! [`outcome_writer`]), [`registry`] (executor registrations), [`suspect_watch`] (the executors
//! routing leaves out, in step with the other admins), [`result_intake`] (results), both
//! writers yielding to the calls counted by [`call_gauge`], [`instance_queue`] (fires waiting
//! for a slot of an instance cap), and the monitors ([`monitor`]):
//! [`monitor_fail`] (retries, alarms), [`monitor_lost`] (lost results), [`monitor_report`] (daily
//! counts, retention), and [`workflow_runner`] (workflow runs: their fires, their nodes, users'
//! actions), told of node results through [`workflow_link`].
//!
//! See `docs/architecture.md` for how they fit together.

#![warn(missing_docs)]

#[cfg(feature = "executor")]
mod accepted_log_ids;
#[cfg(feature = "executor")]
pub mod job_table;
#[cfg(feature = "executor")]
pub mod job_thread;
#[cfg(feature = "executor")]
pub mod log_cleaner;
#[cfg(feature = "executor")]
pub mod registrar;
#[cfg(feature = "executor")]
pub mod result_sender;

#[cfg(feature = "admin")]
pub mod call_gauge;
#[cfg(feature = "admin")]
pub mod db_retry;
#[cfg(feature = "admin")]
pub mod dispatch;
#[cfg(feature = "admin")]
pub mod fault_exit;
#[cfg(feature = "admin")]
pub mod fire;
#[cfg(feature = "admin")]
pub mod instance_queue;
#[cfg(feature = "admin")]
pub mod lease;
#[cfg(feature = "admin")]
pub mod monitor;
#[cfg(feature = "admin")]
pub mod monitor_fail;
#[cfg(feature = "admin")]
pub mod monitor_lost;
#[cfg(feature = "admin")]
pub mod monitor_report;
#[cfg(feature = "admin")]
pub mod node_beat;
#[cfg(feature = "admin")]
pub mod outcome_writer;
#[cfg(feature = "admin")]
pub mod registry;
#[cfg(feature = "admin")]
pub mod result_intake;
#[cfg(feature = "admin")]
pub mod ring;
#[cfg(feature = "admin")]
pub mod schedule;
#[cfg(feature = "admin")]
pub mod supervision;
#[cfg(feature = "admin")]
pub mod suspect_watch;
#[cfg(feature = "admin")]
pub mod takeover;
#[cfg(feature = "admin")]
pub mod timing_rules;
#[cfg(feature = "admin")]
pub mod trigger;
#[cfg(feature = "admin")]
pub mod workflow_link;
#[cfg(feature = "admin")]
pub mod workflow_runner;

/// Mailbox capacity meaning "unbounded": actix's largest buffer (`usize::MAX` itself overflows its
/// sender arithmetic and panics). `do_send` ignores the bound anyway; this makes `send` agree.
pub const UNBOUNDED_MAILBOX: usize = usize::MAX >> 2;
