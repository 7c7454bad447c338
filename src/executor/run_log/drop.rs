//! Dropping runs' lines: when the admin's retention removes run rows by their job's own bounds
//! (`logRetentionDays`, `logRetentionRuns`), it asks the executors to drop those runs' logs.
//! Segments are shared with other runs, so each segment holding one is rewritten without its
//! lines (under a dot-prefixed name, then renamed over it) and removed when nothing is left.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

use super::segment::{legacy_path, segment_path};
use super::RunLogs;

impl RunLogs {
    /// Removes the lines of `runs` (`(logDateTime, logId)`) from their segments, and their
    /// files of the earlier layout; how many of them had lines here.
    pub fn drop_runs(&self, runs: &[(i64, i64)]) -> std::io::Result<usize> {
        let mut by_segment: HashMap<PathBuf, HashSet<i64>> = HashMap::new();
        for &(log_date_time, log_id) in runs {
            by_segment
                .entry(segment_path(&self.base, log_date_time, log_id))
                .or_default()
                .insert(log_id);
        }
        // alone: no append is under way, and none starts until the segments are in place
        let _alone = self.gate.write().unwrap_or_else(PoisonError::into_inner);
        let mut found = HashSet::new();
        for (path, ids) in &by_segment {
            self.forget(path);
            found.extend(rewrite_without(path, ids)?);
        }
        for &(log_date_time, log_id) in runs {
            let legacy = legacy_path(&self.base, log_date_time, log_id);
            match std::fs::remove_file(&legacy) {
                Ok(()) => {
                    self.forget(&legacy);
                    found.insert(log_id);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found.len())
    }

    /// Closes `path` if it is open for appending and forgets its index: it is about to change.
    fn forget(&self, path: &Path) {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .remove(path);
        self.indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .remove(path);
    }
}

/// Rewrites the segment at `path` without the lines of `ids`; the ids that had lines. A
/// segment left empty is removed; one holding none of them is left as it is.
fn rewrite_without(path: &Path, ids: &HashSet<i64>) -> std::io::Result<HashSet<i64>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(e),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.dropping"));
    let mut reader = BufReader::new(file);
    let mut writer = BufWriter::new(File::create(&temp)?);
    let (mut found, mut kept) = (HashSet::new(), 0u64);
    let mut line = Vec::new();
    let outcome = (|| -> std::io::Result<()> {
        while reader.read_until(b'\n', &mut line)? > 0 {
            match line_id(&line).filter(|id| ids.contains(id)) {
                Some(id) => {
                    found.insert(id);
                }
                None => {
                    writer.write_all(&line)?;
                    kept += 1;
                }
            }
            line.clear();
        }
        writer.flush()?;
        writer.get_ref().sync_all()
    })();
    if let Err(e) = outcome {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    drop(writer);
    if found.is_empty() {
        std::fs::remove_file(&temp)?;
    } else if kept == 0 {
        std::fs::remove_file(&temp)?;
        std::fs::remove_file(path)?;
    } else {
        std::fs::rename(&temp, path)?;
    }
    Ok(found)
}

/// The log id a segment line starts with.
fn line_id(line: &[u8]) -> Option<i64> {
    let end = line.iter().position(|b| *b == b' ')?;
    std::str::from_utf8(&line[..end]).ok()?.parse().ok()
}
