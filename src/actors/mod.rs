//! Actors. Executor side: `job_thread` (one `JobActor` per jobId), `executor_callback` (results to the
//! admins), `registrar` (registration beat).

#![warn(missing_docs)]

pub mod executor_callback;
pub mod job_thread;
pub mod registrar;

/// Mailbox capacity meaning "unbounded": actix's largest buffer (`usize::MAX` itself overflows its
/// sender arithmetic and panics). `do_send` ignores the bound anyway; this makes `send` agree.
pub const UNBOUNDED_MAILBOX: usize = usize::MAX >> 2;
