//! Admission: cluster-wide instance limits of jobs and groups, what a fire beyond one does, and
//! the reason code every run row carries.

use super::*;

string_enum!(
    /// What a fire does when its job (or group) has `maxConcurrentInstances` runs open already.
    InstanceOverflow, "instance overflow policy" {
        /// The fire is not run; its run row says why (SKIPPED).
        Skip => "SKIP",
        /// The fire waits for a slot, up to `instanceQueueMax` waiting fires for at most
        /// `instanceQueueTtlSecs`; one beyond the bound is REFUSED, one past its time SKIPPED.
        Queue => "QUEUE",
        /// The oldest open run is closed (and killed on its executor) to make room.
        Replace => "REPLACE",
        /// The fire runs anyway; the limit only counts.
        Allow => "ALLOW",
    }
);

string_enum!(
    /// Why a run row stands as it does (`admission` on the row and in REST).
    Admission, "admission" {
        /// Admitted and sent to an executor (whatever the executor answered).
        Ran => "RAN",
        /// Waiting for a slot of its job's or group's instance limit.
        Queued => "QUEUED",
        /// Not run: the instance limit was reached (overflow SKIP), or it waited in the queue
        /// past its time to live.
        Skipped => "SKIPPED",
        /// Not run: the instance limit was reached and its queue was full.
        Refused => "REFUSED",
        /// Admitted, but no executor could be chosen (none online, none matching, all drained).
        NoExecutor => "NO_EXECUTOR",
    }
);

/// The most instances a limit may allow: beyond it a limit protects nothing.
pub const MAX_CONCURRENT_INSTANCES_LIMIT: i32 = 100_000;
/// The most fires a job's instance queue may hold.
pub const INSTANCE_QUEUE_MAX_LIMIT: i32 = 10_000;
/// The longest a queued fire may wait, seconds (a week).
pub const INSTANCE_QUEUE_TTL_MAX_SECS: i32 = 7 * 24 * 3600;
/// A new job's queue bound.
pub const INSTANCE_QUEUE_MAX_DEFAULT: i32 = 100;
/// A new job's queued fires' time to live, seconds.
pub const INSTANCE_QUEUE_TTL_DEFAULT_SECS: i32 = 600;
