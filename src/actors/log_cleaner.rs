//! Run-log retention: day folders older than the retention are deleted at start and every 24 h.
//!
//! Semantics: `0` keeps everything. Otherwise a folder named `yyyy-MM-dd` is deleted when
//! `today 00:00 > folder date + days` (XXL-JOB's rule); values 1 and 2 are honoured as given,
//! unlike XXL-JOB which silently ignores anything below 3.

use std::path::{Path, PathBuf};
use std::time::Duration;

use actix::prelude::*;
use chrono::{Local, NaiveDate};

const ROUND: Duration = Duration::from_secs(24 * 60 * 60);

/// The folders to delete under `base` on `today` with `days` of retention.
pub fn expired_day_dirs(base: &Path, today: NaiveDate, days: u32) -> Vec<PathBuf> {
    if days == 0 {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(date) = NaiveDate::parse_from_str(&name, "%Y-%m-%d") else {
            continue;
        };
        if today > date + chrono::Days::new(u64::from(days)) {
            out.push(entry.path());
        }
    }
    out.sort();
    out
}

/// Deletes expired day folders periodically.
pub struct LogCleaner {
    base: PathBuf,
    days: u32,
}

impl LogCleaner {
    /// A cleaner of `base` keeping `days` days (0: keep all).
    pub fn new(base: PathBuf, days: u32) -> Self {
        LogCleaner { base, days }
    }

    fn clean(&self) {
        let base = self.base.clone();
        let days = self.days;
        // directory walks and deletes are blocking; keep them off the arbiter
        tokio::task::spawn_blocking(move || {
            for dir in expired_day_dirs(&base, Local::now().date_naive(), days) {
                match std::fs::remove_dir_all(&dir) {
                    Ok(()) => {
                        log::info!("run logs {} deleted (retention {days} days)", dir.display())
                    }
                    Err(e) => log::warn!("cannot delete run logs {}: {e}", dir.display()),
                }
            }
        });
    }
}

impl Actor for LogCleaner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if self.days == 0 {
            return;
        }
        self.clean();
        ctx.run_interval(ROUND, |act, _| act.clean());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_dated_folders_expire() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "2026-01-01",
            "2026-01-07",
            "2026-01-08",
            "gluesource",
            "2026-1-x",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("2025-01-01"), "a file, not a folder").unwrap();
        let today = NaiveDate::from_ymd_opt(2026, 1, 10).unwrap();
        let gone = expired_day_dirs(dir.path(), today, 2);
        assert_eq!(
            gone,
            vec![dir.path().join("2026-01-01"), dir.path().join("2026-01-07")]
        );
        assert!(expired_day_dirs(dir.path(), today, 0).is_empty());
        assert!(expired_day_dirs(dir.path(), today, 30).is_empty());
    }
}
