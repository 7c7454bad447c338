//! The admin engine's timing rules, in one leaf module every admin actor (and the REST layer)
//! reads from: how far ahead fires are read, when a fire is a misfire, when an admin or an
//! executor counts as dead, and the fence and take-over rules built on those.

/// How far ahead fire times are read (XXL-JOB's `PRE_READ_MS`); a started or rescheduled job
/// fires no earlier than now plus this.
pub const PRE_READ_MS: i64 = 5_000;
/// A fire time later than this is a misfire.
pub const MISFIRE_AFTER_MS: i64 = 5_000;
/// A fire time this late that no admin has claimed is read by every admin, whatever its share:
/// the shares missed it while the admins disagreed on who is live (one joined or died).
pub const STRAY_AFTER_MS: i64 = 2_000;
/// An admin whose last beat is older than this is dead; its claimed fires are taken over.
pub const NODE_DEAD_AFTER_MS: i64 = 5_000;
/// A last beat this old may already count as dead elsewhere: the others' clocks may be a
/// second ahead, and a call leaves some time after the check.
pub const FENCE_AFTER_MS: i64 = NODE_DEAD_AFTER_MS - 2_000;
/// A taken-over fire later than this is a misfire: a normal misfire's time plus the time it
/// takes to notice a dead admin.
pub const TAKEOVER_MISFIRE_AFTER_MS: i64 = MISFIRE_AFTER_MS + NODE_DEAD_AFTER_MS;
/// Most fire times one pass takes over; a pass that took this many runs again at once.
pub const TAKEOVER_BATCH: i64 = 5_000;
/// Longest a workflow node batch's routing rows (group, live executors, cordons) serve later
/// batches; writes of this admin end it sooner, other admins' writes are seen within it.
pub const ROUTING_KEPT_MS: i64 = 1_000;
/// An executor registration without a beat for this long is dead (XXL-JOB's 90 s).
pub const EXECUTOR_DEAD_AFTER_MS: i64 = 90_000;
/// How often an admin reads the suspect executors the others marked (and those that beat again).
pub const SUSPECT_REFRESH_MS: i64 = 1_000;
/// How often an admin probes its suspect executors with `/beat` (those of manual groups, which
/// may never register, come back this way).
pub const SUSPECT_PROBE_MS: i64 = 10_000;
