//! Crash points for the crash tests: with the `fault-hooks` feature (test builds only) and
//! `JOBWHEEL_FAULT_EXIT_AT=POINT[:N]` in its environment, an admin process SIGKILLs itself the
//! N-th time (1st by default) it reaches `POINT`, exactly where a crash hurts most:
//!
//! - `workflow-claimed`: a workflow node's run row is inserted (claimed), its call not made;
//! - `call-answered`: an executor accepted a workflow node's call, its outcome not written;
//! - `result-stored`: a workflow node's result is stored, its run not moved on;
//! - `call-sent`: a job's `run` call went out (answered or not), its outcome not written.
//!
//! Without the feature it is an empty value whose checks compile away.

#[cfg(feature = "fault-hooks")]
use std::sync::atomic::{AtomicUsize, Ordering};
#[cfg(feature = "fault-hooks")]
use std::sync::Arc;

/// The environment variable naming the point.
pub const FAULT_EXIT_VAR: &str = "JOBWHEEL_FAULT_EXIT_AT";

/// Where (if anywhere) this process dies; clones share the count.
#[derive(Clone, Debug, Default)]
pub struct FaultExit {
    #[cfg(feature = "fault-hooks")]
    armed: Option<Arc<Armed>>,
}

#[cfg(feature = "fault-hooks")]
#[derive(Debug)]
struct Armed {
    point: String,
    nth: usize,
    seen: AtomicUsize,
}

impl FaultExit {
    /// The crash point the environment names (none without the `fault-hooks` feature).
    pub fn from_env() -> Self {
        #[cfg(feature = "fault-hooks")]
        {
            let Ok(spec) = std::env::var(FAULT_EXIT_VAR) else {
                return FaultExit::default();
            };
            let (point, nth) = match spec.split_once(':') {
                Some((p, n)) => (p.to_string(), n.parse().unwrap_or(1)),
                None => (spec, 1),
            };
            log::warn!("test crash point armed: this process dies at {point} #{nth}");
            FaultExit {
                armed: Some(Arc::new(Armed {
                    point,
                    nth,
                    seen: AtomicUsize::new(0),
                })),
            }
        }
        #[cfg(not(feature = "fault-hooks"))]
        FaultExit::default()
    }

    /// Marks `point` reached: the process is SIGKILLed here if it is the armed point's N-th time.
    pub fn reached(&self, point: &str) {
        #[cfg(feature = "fault-hooks")]
        if let Some(armed) = &self.armed {
            if armed.point == point && armed.seen.fetch_add(1, Ordering::SeqCst) + 1 == armed.nth {
                log::warn!("test crash point {point} reached: SIGKILL");
                // SAFETY: kill(2) on this process's own id; it does not return
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
            }
        }
        #[cfg(not(feature = "fault-hooks"))]
        let _ = point;
    }
}
