//! Every long-lived component is an actor; this module holds the admin's and the executor's.
//!
//! Admin: [`schedule`] (pre-read), [`ring`] (60 one-second slots), [`dispatch`] (fast/slow pools
//! running [`trigger`]s), [`registry`] (executor registrations), [`callback`] (results).
//! Executor: [`job_thread`] (one `JobActor` per jobId), [`executor_callback`] (results to the
//! admins), [`registrar`] (registration beat).

pub mod callback;
pub mod dispatch;
pub mod executor_callback;
pub mod job_thread;
pub mod registrar;
pub mod registry;
pub mod ring;
pub mod schedule;
pub mod trigger;

/// Mailbox capacity meaning "unbounded": actix's largest buffer (`usize::MAX` itself overflows its
/// sender arithmetic and panics). `do_send` ignores the bound anyway; this makes `send` agree.
pub const UNBOUNDED_MAILBOX: usize = usize::MAX >> 2;
