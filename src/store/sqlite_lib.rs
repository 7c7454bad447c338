//! Process-wide settings of the SQLite library, applied once before its first connection.
//!
//! Invariant: SQLite's allocation statistics are off (unless another user of SQLite in the
//! process initialized it first). They are kept by default under one global mutex taken on every
//! malloc and free, and sqlx runs each connection on a thread of its own, so under load the
//! connection threads queue on that mutex. jobwheel never reads
//! those statistics.

use std::sync::Once;

static TUNE: Once = Once::new();

/// Switches off SQLite's allocation statistics; must run before the first connection opens.
///
/// Returns whether the setting took: SQLite refuses it once the library is initialized (by
/// another user of SQLite in the same process), which only costs the mutex again.
pub(crate) fn tune() -> bool {
    let mut applied = false;
    TUNE.call_once(|| {
        // SAFETY: sqlite3_config is documented as callable before sqlite3_initialize and from
        // a single thread; `Once` gives the single caller, and SQLite answers SQLITE_MISUSE
        // (without acting) if it was already initialized. MEMSTATUS takes one int argument.
        let rc = unsafe {
            libsqlite3_sys::sqlite3_config(
                libsqlite3_sys::SQLITE_CONFIG_MEMSTATUS,
                0 as std::os::raw::c_int,
            )
        };
        applied = rc == libsqlite3_sys::SQLITE_OK;
        if applied {
            log::debug!("SQLite allocation statistics off");
        } else {
            log::debug!(
                "SQLite allocation statistics left on (library already initialized, rc {rc})"
            );
        }
    });
    applied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_at_most_once() {
        // whichever test opened SQLite first decides the first answer; a second call never acts
        let _ = tune();
        assert!(!tune());
    }
}
