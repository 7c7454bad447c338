//! Actors. Executor side: `job_thread` (one `JobActor` per jobId), `executor_callback` (results to the
//! admins), `registrar` (registration beat).

pub mod executor_callback;
pub mod job_thread;
pub mod registrar;
