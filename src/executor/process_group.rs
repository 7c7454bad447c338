//! Signals to a script's process group: what a run's kill or timeout and the clean-up of a dead
//! executor's scripts both send.

use std::time::Duration;

/// Time a script gets between SIGTERM and SIGKILL.
pub(crate) const TERM_GRACE: Duration = Duration::from_millis(300);

/// Sends `signal` to every process of the group `pgid` (never to init's or all processes).
pub(crate) fn signal_group(pgid: i32, signal: libc::c_int) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) has no memory effects; a negative pid addresses the process group we created.
    unsafe {
        libc::kill(-pgid, signal);
    }
}
