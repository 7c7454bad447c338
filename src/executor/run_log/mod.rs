//! Run logs: every run's lines appended to shared segment files
//! (`{log-path}/{yyyy-MM-dd}/segment-{first id}.log`, see [`segment`]) and read back page by
//! page for `/log`, which stays what XXL-JOB admins expect: a run's log by line number.

mod drop;
mod page;
pub mod segment;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use chrono::Local;

use crate::protocol::LogResult;
use segment::{legacy_path, segment_path, SegmentIndex};

/// Segment files kept open for appending; past it the least recently written is closed.
const OPEN_KEPT: usize = 32;
/// How long an open segment is written before it is opened again, so a day folder the
/// retention removed is created anew instead of lines going to a deleted file.
const REOPEN_AFTER: Duration = Duration::from_secs(60);
/// Segment indexes kept for `/log`; past it the least recently read is forgotten.
const INDEXES_KEPT: usize = 16;
/// A script's output line longer than this is written in pieces, so a stream without line
/// ends cannot grow the buffer without bound.
const PENDING_MAX: usize = 64 * 1024;

/// One formatted line: `yyyy-MM-dd HH:mm:ss [jobwheel] message`.
pub fn format_line(message: &str) -> String {
    format!(
        "{} [jobwheel] {message}\n",
        Local::now().format("%Y-%m-%d %H:%M:%S")
    )
}

#[derive(Debug)]
struct OpenSegment {
    file: Arc<File>,
    opened: Instant,
    used: u64,
}

/// The run logs under one folder: appends to segments (kept open) and reads pages of them.
#[derive(Debug)]
pub struct RunLogs {
    base: PathBuf,
    /// Appends and reads hold it shared; dropping runs' lines (a segment rewritten and renamed)
    /// holds it alone, so no append lands in a file being replaced and no read indexes one.
    gate: RwLock<()>,
    open: Mutex<(u64, HashMap<PathBuf, OpenSegment>)>,
    indexes: Mutex<(u64, HashMap<PathBuf, KeptIndex>)>,
}

/// A segment's index and when it was last read (a clock tick).
type KeptIndex = (u64, Arc<Mutex<SegmentIndex>>);

impl RunLogs {
    /// The run logs under `base`.
    pub fn new(base: &Path) -> Arc<Self> {
        Arc::new(RunLogs {
            base: base.to_path_buf(),
            gate: RwLock::new(()),
            open: Mutex::new((0, HashMap::new())),
            indexes: Mutex::new((0, HashMap::new())),
        })
    }

    /// The appender of one run's log.
    pub fn run(self: &Arc<Self>, log_date_time: i64, log_id: i64) -> RunLog {
        RunLog {
            logs: self.clone(),
            segment: Arc::from(segment_path(&self.base, log_date_time, log_id)),
            log_id,
        }
    }

    fn append(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let _appending = self.gate.read().unwrap_or_else(PoisonError::into_inner);
        let file = self.open_for_append(path)?;
        // one write per call: appends of other runs and threads never land inside it
        (&*file).write_all(bytes)
    }

    fn open_for_append(&self, path: &Path) -> std::io::Result<Arc<File>> {
        let mut guard = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let (clock, open) = &mut *guard;
        *clock += 1;
        if let Some(seg) = open.get_mut(path) {
            if seg.opened.elapsed() < REOPEN_AFTER {
                seg.used = *clock;
                return Ok(seg.file.clone());
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)?;
        end_torn_record(&file)?;
        let file = Arc::new(file);
        if !open.contains_key(path) && open.len() >= OPEN_KEPT {
            if let Some(oldest) = open
                .iter()
                .min_by_key(|(_, s)| s.used)
                .map(|(p, _)| p.clone())
            {
                open.remove(&oldest);
            }
        }
        open.insert(
            path.to_path_buf(),
            OpenSegment {
                file: file.clone(),
                opened: Instant::now(),
                used: *clock,
            },
        );
        Ok(file)
    }

    /// One page of a run log from the 1-based `from_line_num`: at most
    /// [`crate::protocol::LOG_PAGE_MAX_LINES`] lines and [`crate::protocol::LOG_PAGE_MAX_BYTES`]
    /// of JSON-escaped content. `toLineNum` is the last line returned, 0 when none; the next
    /// page starts after it. A run without a line is "not exists", as the Java executor says.
    pub fn read(&self, log_date_time: i64, log_id: i64, from_line_num: i32) -> LogResult {
        let first = (from_line_num.max(1) - 1) as usize;
        // shared with appends, alone against drops: the file opened and the index built from
        // it are of the same segment, never one from before a drop replaced it and one after
        let _reading = self.gate.read().unwrap_or_else(PoisonError::into_inner);
        let places = [
            (segment_path(&self.base, log_date_time, log_id), false),
            (legacy_path(&self.base, log_date_time, log_id), true),
        ];
        for (path, legacy) in places {
            match self.read_in(&path, legacy, log_id, first) {
                Ok(None) => continue,
                Ok(Some((content, last))) => {
                    return LogResult {
                        from_line_num,
                        to_line_num: last as i32,
                        log_content: content,
                        is_end: false,
                    }
                }
                Err(e) => {
                    return LogResult {
                        from_line_num,
                        to_line_num: 0,
                        log_content: format!("readLog fail, {e}"),
                        is_end: true,
                    }
                }
            }
        }
        LogResult::not_exists(from_line_num)
    }

    /// The page from `path`, `None` when the file does not exist or holds no line of the run.
    fn read_in(
        &self,
        path: &Path,
        legacy: bool,
        log_id: i64,
        first: usize,
    ) -> std::io::Result<Option<(String, usize)>> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let index = self.index_of(path, legacy, log_id);
        let mut index = index.lock().unwrap_or_else(PoisonError::into_inner);
        index.catch_up(&mut file)?;
        if !index.has(log_id) {
            return Ok(None);
        }
        index.page(&mut file, log_id, first).map(Some)
    }

    fn index_of(&self, path: &Path, legacy: bool, log_id: i64) -> Arc<Mutex<SegmentIndex>> {
        let mut guard = self.indexes.lock().unwrap_or_else(PoisonError::into_inner);
        let (clock, indexes) = &mut *guard;
        *clock += 1;
        if let Some((used, index)) = indexes.get_mut(path) {
            *used = *clock;
            return index.clone();
        }
        if indexes.len() >= INDEXES_KEPT {
            if let Some(oldest) = indexes
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(p, _)| p.clone())
            {
                indexes.remove(&oldest);
            }
        }
        let index = Arc::new(Mutex::new(match legacy {
            true => SegmentIndex::legacy(log_id),
            false => SegmentIndex::segment(),
        }));
        indexes.insert(path.to_path_buf(), (*clock, index.clone()));
        index
    }
}

/// Appender of one run's log; cheap to clone.
#[derive(Debug, Clone)]
pub struct RunLog {
    logs: Arc<RunLogs>,
    segment: Arc<Path>,
    log_id: i64,
}

impl RunLog {
    /// The segment file the run's lines go to (shared with other runs: each line starts with
    /// its log id).
    pub fn path(&self) -> &Path {
        &self.segment
    }

    /// Appends one timestamped line; a failing disk must not fail the job, so errors are only logged.
    pub fn line(&self, message: &str) {
        self.raw(format_line(message).as_bytes());
    }

    /// Appends text as it is, one line per `\n` (a last line without one included).
    pub fn raw(&self, text: &[u8]) {
        let mut record = Vec::with_capacity(text.len() + 24);
        segment::encode(self.log_id, text, &mut record);
        if record.is_empty() {
            return;
        }
        if let Err(e) = self.logs.append(&self.segment, &record) {
            log::warn!(
                "log {}: cannot write run log {}: {e}",
                self.log_id,
                self.segment.display()
            );
        }
    }
}

/// A stream's output cut into whole lines for a run log, so the lines of stdout and stderr
/// (and of other runs) never split each other.
#[derive(Debug)]
pub struct LineBuffer {
    log: RunLog,
    pending: Vec<u8>,
}

impl LineBuffer {
    /// Lines for `log`.
    pub fn new(log: RunLog) -> Self {
        LineBuffer {
            log,
            pending: Vec::new(),
        }
    }

    /// Writes the whole lines of what came so far and keeps the rest.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let whole = match self.pending.iter().rposition(|b| *b == b'\n') {
            Some(end) => end + 1,
            None if self.pending.len() > PENDING_MAX => self.pending.len(),
            None => return,
        };
        self.log.raw(&self.pending[..whole]);
        self.pending.drain(..whole);
    }

    /// Writes what is left: the stream ended.
    pub fn finish(mut self) {
        if !self.pending.is_empty() {
            self.log.raw(&std::mem::take(&mut self.pending));
        }
    }
}

/// Ends the record a killed process left half written (a segment whose last byte is not a line
/// end), so the next record is not glued to it and read as that run's.
fn end_torn_record(file: &File) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    if last[0] != b'\n' {
        (&*file).write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
