//! Segment files: the lines of up to [`IDS_PER_SEGMENT`] runs in one file, each line
//! `{logId} {text}`, and the index that finds one run's lines in it.
//!
//! A file per run cost the executor a create, an open and a close per run (most of its kernel
//! time at thousands of runs a second); a segment is opened once and appended with one write
//! per line. Grouping by log id keeps a segment small (the runs of one admin's id range), so its
//! index is rebuilt by reading the one segment after a restart.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use chrono::{Local, TimeZone};

use super::page::Page;

/// Log ids whose lines share one segment file.
pub const IDS_PER_SEGMENT: i64 = 1024;
/// Lines of one run between two remembered offsets in its segment.
const STRIDE: usize = 1024;

/// The day folder name of a trigger time, in the executor's zone as the Java executor does.
pub fn day_folder(log_date_time: i64) -> String {
    match Local.timestamp_millis_opt(log_date_time) {
        chrono::LocalResult::Single(t) | chrono::LocalResult::Ambiguous(t, _) => {
            t.format("%Y-%m-%d").to_string()
        }
        // out-of-range times still need a stable folder rather than a failure
        chrono::LocalResult::None => "1970-01-01".to_string(),
    }
}

/// The segment holding the log of `log_id`: `{base}/{yyyy-MM-dd}/segment-{first id}.log`.
pub fn segment_path(base: &Path, log_date_time: i64, log_id: i64) -> PathBuf {
    let first = log_id.div_euclid(IDS_PER_SEGMENT) * IDS_PER_SEGMENT;
    base.join(day_folder(log_date_time))
        .join(format!("segment-{first}.log"))
}

/// Where an earlier jobwheel (and the Java executor) kept one run's log: `{day}/{logId}.log`;
/// still read, so logs written before an upgrade stay readable until their day is cleaned.
pub fn legacy_path(base: &Path, log_date_time: i64, log_id: i64) -> PathBuf {
    base.join(day_folder(log_date_time))
        .join(format!("{log_id}.log"))
}

/// Appends `text` as lines of `log_id` to `out`: one record per line, a last line without its
/// `\n` included; nothing for empty text.
pub fn encode(log_id: i64, text: &[u8], out: &mut Vec<u8>) {
    let prefix = format!("{log_id} ");
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    if text.is_empty() {
        return;
    }
    for line in text.split(|b| *b == b'\n') {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(line);
        out.push(b'\n');
    }
}

/// The log id and text of one record; `None` for a line that is not one (a torn write).
fn decode(record: &[u8]) -> Option<(i64, &[u8])> {
    let space = record.iter().position(|b| *b == b' ')?;
    let id = std::str::from_utf8(&record[..space]).ok()?.parse().ok()?;
    Some((id, &record[space + 1..]))
}

/// Where one run's lines are in a segment.
#[derive(Debug, Default)]
struct RunLines {
    /// Lines seen so far.
    count: usize,
    /// `marks[k]`: offset of the record of the run's line `k * STRIDE` (0-based).
    marks: Vec<u64>,
}

/// The runs of one file and where their lines start; extended as the file grows.
#[derive(Debug, Default)]
pub struct SegmentIndex {
    /// A file of one run's log only (the legacy layout): every line is that run's, unprefixed.
    legacy: Option<i64>,
    /// Bytes read so far (whole records only).
    scanned: u64,
    /// The file read so far (device and inode): a segment rewritten by a drop is another file,
    /// though it may have grown back to the same length.
    file: Option<(u64, u64)>,
    runs: HashMap<i64, RunLines>,
}

/// What tells one file from another at the same path.
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (0, 0)
    }
}

impl SegmentIndex {
    /// The index of a segment file.
    pub fn segment() -> Self {
        SegmentIndex::default()
    }

    /// The index of a legacy file holding the log of `log_id` alone.
    pub fn legacy(log_id: i64) -> Self {
        SegmentIndex {
            legacy: Some(log_id),
            ..SegmentIndex::default()
        }
    }

    fn record<'a>(&self, line: &'a [u8]) -> Option<(i64, &'a [u8])> {
        match self.legacy {
            Some(id) => Some((id, line)),
            None => decode(line),
        }
    }

    /// Reads what was appended since the last call; another file than the one read so far, or
    /// a file shorter than what was read, was replaced, and is read again from its start.
    pub fn catch_up(&mut self, file: &mut File) -> std::io::Result<()> {
        let meta = file.metadata()?;
        let len = meta.len();
        let id = identity(&meta);
        if len < self.scanned || self.file.is_some_and(|read| read != id) {
            self.scanned = 0;
            self.runs.clear();
        }
        self.file = Some(id);
        if len == self.scanned {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.scanned))?;
        let mut reader = BufReader::with_capacity(64 * 1024, &mut *file);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line)?;
            // a record still being written is read once it is whole; a legacy file's last
            // line may lack its end for good, and is read when the run ends (see `page`)
            if read == 0 || line.last() != Some(&b'\n') {
                break;
            }
            let at = self.scanned;
            self.scanned += read as u64;
            let Some((id, _)) = self.record(&line) else {
                continue;
            };
            let run = self.runs.entry(id).or_default();
            if run.count % STRIDE == 0 {
                run.marks.push(at);
            }
            run.count += 1;
        }
        Ok(())
    }

    /// Whether the file holds the log of `log_id` (a legacy file always does, even empty).
    pub fn has(&self, log_id: i64) -> bool {
        self.legacy.is_some() || self.runs.contains_key(&log_id)
    }

    /// The page of the log of `log_id` from its 0-based line `first`: the content and the
    /// 1-based number of its last line (0 when none).
    pub fn page(
        &self,
        file: &mut File,
        log_id: i64,
        first: usize,
    ) -> std::io::Result<(String, usize)> {
        let mut page = Page::default();
        let unindexed = RunLines::default();
        let run = match self.runs.get(&log_id) {
            Some(run) => run,
            // a legacy file whose only line has no end yet
            None if self.legacy.is_some() => &unindexed,
            None => return Ok(page.finish(first)),
        };
        let mark = (first / STRIDE).min(run.marks.len().saturating_sub(1));
        let start = run.marks.get(mark).copied().unwrap_or(self.scanned);
        file.seek(SeekFrom::Start(start))?;
        let mut reader = BufReader::with_capacity(64 * 1024, &mut *file);
        let mut line_no = if run.marks.is_empty() {
            0
        } else {
            mark * STRIDE
        };
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let whole = line.last() == Some(&b'\n');
            if !whole && self.legacy.is_none() {
                break;
            }
            let record = line.strip_suffix(b"\n").unwrap_or(&line);
            let Some((id, text)) = self.record(record) else {
                continue;
            };
            if id != log_id {
                continue;
            }
            if line_no >= first && !page.push(text) {
                break;
            }
            line_no += 1;
            // every line of the run indexed is read: the rest of the file is other runs' (a
            // poll of a finished run's page would read the whole segment to its end)
            if self.legacy.is_none() && line_no >= run.count {
                break;
            }
        }
        Ok(page.finish(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_path_uses_local_day_and_the_first_id_of_the_range() {
        let dt = Local
            .with_ymd_and_hms(2026, 3, 4, 10, 0, 0)
            .single()
            .unwrap()
            .timestamp_millis();
        let day = Path::new("/l/2026-03-04");
        assert_eq!(
            segment_path(Path::new("/l"), dt, 7),
            day.join("segment-0.log")
        );
        assert_eq!(
            segment_path(Path::new("/l"), dt, 5000),
            day.join("segment-4096.log")
        );
        assert_eq!(
            segment_path(Path::new("/l"), dt, -1),
            day.join("segment--1024.log")
        );
        assert_eq!(legacy_path(Path::new("/l"), dt, 7), day.join("7.log"));
    }

    #[test]
    fn records_split_lines_and_round_trip() {
        let mut out = Vec::new();
        encode(42, b"one\ntwo\r\n\nthree", &mut out);
        encode(42, b"", &mut out);
        encode(-3, b"x y\n", &mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "42 one\n42 two\r\n42 \n42 three\n-3 x y\n"
        );
        let records: Vec<_> = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| decode(l).unwrap())
            .collect();
        assert_eq!(records[4], (-3, &b"x y"[..]));
        assert_eq!(decode(b"torn"), None);
        assert_eq!(decode(b"4x2 text"), None);
    }
}
