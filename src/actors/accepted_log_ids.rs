//! The log ids an executor accepted lately, so a trigger sent again with the same log id (an
//! admin that died between its call and its record of the answer, whose run another admin sends
//! again) is refused as a repeat instead of running a second time.
//!
//! They are kept in a file beside the result spool too (`{log-path}/accepted-log-ids`, one
//! `epochMs logId` line each, appended at most [`FLUSH_EVERY`] after the accept), so an executor
//! restarted after a crash still knows the runs it had: a resend after both an admin and the
//! executor died runs once as well. The file is rewritten from memory when it has grown to twice
//! what is remembered.

use std::collections::{HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::clock::now_ms;

/// How long an accepted log id is remembered: far past the admins' resend window.
pub const REMEMBER_FOR: Duration = Duration::from_secs(15 * 60);
/// Most log ids remembered; the oldest go first (16 bytes each, plus the set's).
pub const REMEMBER_MAX: usize = 65_536;
/// How often accepted ids are appended to the file.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// The file's name in the executor's log folder.
pub const FILE_NAME: &str = "accepted-log-ids";

/// Accepted log ids, oldest first, for [`REMEMBER_FOR`] and at most [`REMEMBER_MAX`].
#[derive(Debug, Default)]
pub struct AcceptedLogIds {
    /// (accepted at, accepted at in epoch ms, log id)
    order: VecDeque<(Instant, i64, i64)>,
    ids: HashSet<i64>,
    file: Option<KeptFile>,
}

/// The file the ids are kept in, and what is not in it yet.
#[derive(Debug)]
struct KeptFile {
    path: PathBuf,
    out: File,
    pending: Vec<u8>,
    /// Lines in the file now.
    lines: usize,
}

impl AcceptedLogIds {
    /// The ids kept in `dir` (created if missing), those still in the window; an unreadable
    /// file leaves an empty memory (logged), an unwritable one a memory-only table.
    pub fn open(dir: &Path) -> Self {
        let path = dir.join(FILE_NAME);
        let mut table = AcceptedLogIds::default();
        let (now, now_at) = (Instant::now(), now_ms());
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                for (at_ms, id) in text.lines().filter_map(parse_line) {
                    let age = Duration::from_millis(now_at.saturating_sub(at_ms).max(0) as u64);
                    if age > REMEMBER_FOR {
                        continue;
                    }
                    // a machine up for less than the age (rebooted since) keeps it from now
                    let at = now.checked_sub(age).unwrap_or(now);
                    table.remember(id, at, at_ms);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => log::warn!("{}: cannot read the accepted log ids: {e}", path.display()),
        }
        table.forget_old(now);
        if let Err(e) = std::fs::create_dir_all(dir) {
            log::warn!("{}: cannot keep accepted log ids: {e}", dir.display());
            return table;
        }
        match table.rewrite(&path) {
            Ok(file) => {
                log::info!(
                    "{} log id(s) accepted in the last {} s remembered from {}",
                    table.ids.len(),
                    REMEMBER_FOR.as_secs(),
                    path.display()
                );
                table.file = Some(file);
            }
            Err(e) => log::warn!("{}: cannot keep accepted log ids: {e}", path.display()),
        }
        table
    }

    /// Whether `log_id` was accepted lately.
    pub fn contains(&self, log_id: i64) -> bool {
        self.ids.contains(&log_id)
    }

    /// Records `log_id` as accepted at `now` (once; a repeat keeps its first time).
    pub fn record(&mut self, log_id: i64, now: Instant) {
        self.forget_old(now);
        let at_ms = now_ms();
        if self.remember(log_id, now, at_ms) {
            if let Some(file) = &mut self.file {
                let _ = writeln!(file.pending, "{at_ms} {log_id}");
            }
        }
    }

    /// Appends the ids accepted since the last flush to the file (rewriting it once it holds
    /// twice what is remembered).
    pub fn flush(&mut self) {
        let Some(file) = &mut self.file else {
            return;
        };
        if file.pending.is_empty() {
            return;
        }
        let added = file.pending.iter().filter(|&&b| b == b'\n').count();
        if file.lines + added > 2 * REMEMBER_MAX {
            let path = file.path.clone();
            self.file = match self.rewrite(&path) {
                Ok(file) => Some(file),
                Err(e) => {
                    log::warn!(
                        "{}: cannot rewrite the accepted log ids: {e}",
                        path.display()
                    );
                    None
                }
            };
            return;
        }
        match file.out.write_all(&file.pending) {
            Ok(()) => file.lines += added,
            Err(e) => log::warn!(
                "{}: cannot append accepted log ids: {e}",
                file.path.display()
            ),
        }
        file.pending.clear();
    }

    /// Adds `log_id` to memory; false if it was there.
    fn remember(&mut self, log_id: i64, at: Instant, at_ms: i64) -> bool {
        let added = self.ids.insert(log_id);
        if added {
            self.order.push_back((at, at_ms, log_id));
        }
        added
    }

    /// Writes what is remembered to a new file that replaces `path`, open for appending.
    fn rewrite(&self, path: &Path) -> std::io::Result<KeptFile> {
        // written under a dot-prefixed name and renamed, as the executor's other files are
        let fresh = path.with_file_name(format!(".{FILE_NAME}.new"));
        let mut text = Vec::with_capacity(self.order.len() * 24);
        for (_, at_ms, id) in &self.order {
            writeln!(text, "{at_ms} {id}")?;
        }
        std::fs::write(&fresh, &text)?;
        std::fs::rename(&fresh, path)?;
        let out = OpenOptions::new().append(true).open(path)?;
        Ok(KeptFile {
            path: path.to_path_buf(),
            out,
            pending: Vec::new(),
            lines: self.order.len(),
        })
    }

    /// Forgets ids accepted before the window, and the oldest beyond the bound.
    fn forget_old(&mut self, now: Instant) {
        while let Some(&(at, _, id)) = self.order.front() {
            let expired = now.saturating_duration_since(at) > REMEMBER_FOR;
            if !expired && self.order.len() < REMEMBER_MAX {
                break;
            }
            self.order.pop_front();
            self.ids.remove(&id);
        }
        if self.order.is_empty() && self.ids.capacity() > 1_024 {
            // a burst's tables are handed back once it is forgotten
            self.order = VecDeque::new();
            self.ids = HashSet::new();
        }
    }

    /// How many ids are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// `epochMs logId` → its two numbers.
fn parse_line(line: &str) -> Option<(i64, i64)> {
    let (at, id) = line.split_once(' ')?;
    Some((at.trim().parse().ok()?, id.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_known_until_it_is_forgotten() {
        let mut ids = AcceptedLogIds::default();
        let t0 = Instant::now();
        assert!(!ids.contains(7));
        ids.record(7, t0);
        ids.record(8, t0 + Duration::from_secs(60));
        assert!(ids.contains(7) && ids.contains(8));
        ids.record(9, t0 + REMEMBER_FOR + Duration::from_secs(1));
        assert!(!ids.contains(7), "forgotten after the window");
        assert!(ids.contains(8) && ids.contains(9));
        assert_eq!(ids.len(), 2);
    }

    #[test]
    fn the_oldest_go_first_beyond_the_bound() {
        let mut ids = AcceptedLogIds::default();
        let t0 = Instant::now();
        for id in 0..(REMEMBER_MAX as i64 + 10) {
            ids.record(id, t0);
        }
        assert_eq!(ids.len(), REMEMBER_MAX);
        assert!(!ids.contains(0), "the oldest was forgotten");
        assert!(ids.contains(REMEMBER_MAX as i64), "a recent one is kept");
    }

    #[test]
    fn the_ids_outlive_a_restart_within_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = AcceptedLogIds::open(dir.path());
        ids.record(41, Instant::now());
        ids.record(42, Instant::now());
        ids.flush();
        drop(ids);
        // an old line and a torn last line are left out
        let path = dir.path().join(FILE_NAME);
        let old = now_ms() - REMEMBER_FOR.as_millis() as i64 - 1_000;
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("{old} 7\n12x"));
        std::fs::write(&path, text).unwrap();
        let again = AcceptedLogIds::open(dir.path());
        assert!(again.contains(41) && again.contains(42));
        assert!(!again.contains(7), "past the window");
        assert_eq!(again.len(), 2);
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            kept.lines().count(),
            2,
            "rewritten with what is remembered: {kept}"
        );
    }

    #[test]
    fn the_file_is_rewritten_when_it_grows_past_twice_the_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut ids = AcceptedLogIds::open(dir.path());
        let t0 = Instant::now();
        for id in 0..(3 * REMEMBER_MAX as i64) {
            ids.record(id, t0);
            if id % 10_000 == 0 {
                ids.flush();
            }
        }
        ids.flush();
        let lines = std::fs::read_to_string(dir.path().join(FILE_NAME))
            .unwrap()
            .lines()
            .count();
        assert!(lines <= 2 * REMEMBER_MAX, "{lines} lines");
        assert!(lines >= REMEMBER_MAX - 1, "{lines} lines");
        drop(ids);
        let again = AcceptedLogIds::open(dir.path());
        assert!(again.contains(3 * REMEMBER_MAX as i64 - 1));
        assert!(!again.contains(0));
    }
}
