//! Every long-lived component is an actor; this module holds the admin's and the executor's.
//!
//! Admin: [`schedule`] (pre-read), [`ring`] (60 one-second slots), [`dispatch`] (fast/slow pools
//! running [`trigger`]s, their outcomes written by [`outcome_writer`]), [`registry`] (executor registrations), [`callback`] (results),
//! both writers yielding to the calls counted by [`call_gauge`],
//! and the monitors ([`monitor`]): [`monitor_fail`] (retries, alarms), [`monitor_lost`] (lost
//! results), [`monitor_report`] (daily counts, retention).
//! Executor: [`job_thread`] (one `JobActor` per jobId), [`executor_callback`] (results to the
//! admins), [`registrar`] (registration beat).

#![warn(missing_docs)]

pub mod call_gauge;
pub mod callback;
pub mod dispatch;
pub mod executor_callback;
pub mod job_thread;
pub mod monitor;
pub mod monitor_fail;
pub mod monitor_lost;
pub mod monitor_report;
pub mod outcome_writer;
pub mod registrar;
pub mod registry;
pub mod ring;
pub mod schedule;
pub mod trigger;

/// Mailbox capacity meaning "unbounded": actix's largest buffer (`usize::MAX` itself overflows its
/// sender arithmetic and panics). `do_send` ignores the bound anyway; this makes `send` agree.
pub const UNBOUNDED_MAILBOX: usize = usize::MAX >> 2;
