//! Run log files: `{log-path}/{yyyy-MM-dd}/{logId}.log`, appended line by line and tailed by `/log`.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{Local, TimeZone};

use crate::protocol::{
    cut_to_json_len, json_len, LogResult, LOG_PAGE_MAX_BYTES, LOG_PAGE_MAX_LINES,
};

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

/// Where the log of one run lives.
pub fn log_file_path(base: &Path, log_date_time: i64, log_id: i64) -> PathBuf {
    base.join(day_folder(log_date_time))
        .join(format!("{log_id}.log"))
}

/// One formatted line: `yyyy-MM-dd HH:mm:ss [jobwheel] message`.
pub fn format_line(message: &str) -> String {
    format!(
        "{} [jobwheel] {message}\n",
        Local::now().format("%Y-%m-%d %H:%M:%S")
    )
}

/// Appender of one run's log file; cheap to clone, opens the file per write so writers never hold it.
#[derive(Debug, Clone)]
pub struct RunLogFile {
    path: PathBuf,
}

impl RunLogFile {
    /// The log of `log_id` under `base`.
    pub fn new(base: &Path, log_date_time: i64, log_id: i64) -> Self {
        RunLogFile {
            path: log_file_path(base, log_date_time, log_id),
        }
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one timestamped line; a failing disk must not fail the job, so errors are only logged.
    pub fn line(&self, message: &str) {
        self.raw(format_line(message).as_bytes());
    }

    /// Appends bytes as they are (script output).
    pub fn raw(&self, bytes: &[u8]) {
        if let Err(e) = self.try_raw(bytes) {
            log::warn!("cannot write run log {}: {e}", self.path.display());
        }
    }

    fn try_raw(&self, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // one write call per line keeps concurrent appenders (stdout/stderr copiers) from interleaving mid-line
        f.write_all(bytes)
    }
}

/// Lines between two remembered offsets of a log file.
const INDEX_STRIDE: usize = 4_096;
/// Log files whose line offsets are remembered; past it the least recently read is forgotten.
const INDEXES_KEPT: usize = 64;

/// Every `INDEX_STRIDE`th line's byte offset in one log file, so a page deep in a large log is
/// found without reading the file from its start (logs only grow, so offsets stay valid).
#[derive(Debug, Clone, Default)]
struct LineIndex {
    /// `offsets[k]` is where line `k * INDEX_STRIDE + 1` starts; `offsets[0]` is 0.
    offsets: Vec<u64>,
    /// File length when last read; a shorter file was replaced, and its offsets are dropped.
    len: u64,
    /// When it was last used, for forgetting the least recently read.
    used: u64,
}

/// Reads run logs page by page for `/log`, remembering where lines start in the files read.
#[derive(Debug)]
pub struct LogReader {
    base: PathBuf,
    indexes: Mutex<(u64, HashMap<PathBuf, LineIndex>)>,
}

impl LogReader {
    /// A reader of the logs under `base`.
    pub fn new(base: &Path) -> Self {
        LogReader {
            base: base.to_path_buf(),
            indexes: Mutex::new((0, HashMap::new())),
        }
    }

    /// One page of a run log from the 1-based `from_line_num`: at most [`LOG_PAGE_MAX_LINES`]
    /// lines and [`LOG_PAGE_MAX_BYTES`] of JSON-escaped content (a single longer line is cut, and said
    /// so). `toLineNum` is the last line returned, 0 when none; the next page starts after it.
    pub fn read(&self, log_date_time: i64, log_id: i64, from_line_num: i32) -> LogResult {
        let path = log_file_path(&self.base, log_date_time, log_id);
        let Ok(file) = File::open(&path) else {
            return LogResult::not_exists(from_line_num);
        };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut index = self.index_of(&path, len);
        let page = read_page(file, &mut index, from_line_num.max(1) as usize);
        index.len = len;
        self.keep_index(path, index);
        match page {
            Ok((content, last)) => LogResult {
                from_line_num,
                to_line_num: last as i32,
                log_content: content,
                is_end: false,
            },
            Err(e) => LogResult {
                from_line_num,
                to_line_num: 0,
                log_content: format!("readLog fail, {e}"),
                is_end: true,
            },
        }
    }

    fn index_of(&self, path: &Path, len: u64) -> LineIndex {
        let guard = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        match guard.1.get(path) {
            Some(index) if index.len <= len => index.clone(),
            _ => LineIndex {
                offsets: vec![0],
                ..LineIndex::default()
            },
        }
    }

    fn keep_index(&self, path: PathBuf, mut index: LineIndex) {
        let mut guard = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        let (clock, map) = &mut *guard;
        *clock += 1;
        index.used = *clock;
        if !map.contains_key(&path) && map.len() >= INDEXES_KEPT {
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, i)| i.used)
                .map(|(p, _)| p.clone())
            {
                map.remove(&oldest);
            }
        }
        // a concurrent read may have learned more of the same file
        match map.get(&path) {
            Some(known) if known.offsets.len() > index.offsets.len() && known.len <= index.len => {
                let mut known = known.clone();
                known.used = index.used;
                map.insert(path, known);
            }
            _ => {
                map.insert(path, index);
            }
        }
    }
}

/// Reads the page starting at 1-based line `from`, extending `index` with the offsets it
/// passes; the content and the number of the last line in it (0 when none).
fn read_page(file: File, index: &mut LineIndex, from: usize) -> std::io::Result<(String, usize)> {
    let target = from - 1; // 0-based
    let known = (target / INDEX_STRIDE).min(index.offsets.len() - 1);
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    reader.seek(SeekFrom::Start(index.offsets[known]))?;
    let mut pos = index.offsets[known];
    let mut line_no = known * INDEX_STRIDE; // 0-based number of the line starting at `pos`
    let mut line = Vec::new();
    let mut content = String::new();
    let (mut taken, mut bytes) = (0usize, 0usize);
    loop {
        if line_no % INDEX_STRIDE == 0 && line_no / INDEX_STRIDE == index.offsets.len() {
            index.offsets.push(pos);
        }
        if line_no >= target && (taken == LOG_PAGE_MAX_LINES || bytes >= LOG_PAGE_MAX_BYTES) {
            break;
        }
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        pos += read as u64;
        if line_no >= target {
            let raw = trim_line_end(&line);
            let text = String::from_utf8_lossy(raw);
            let size = json_len(&text) + 2; // and its "\n"
            if taken > 0 && bytes + size > LOG_PAGE_MAX_BYTES {
                // the line starts the next page; the position is not advanced past it
                break;
            }
            if size > LOG_PAGE_MAX_BYTES {
                content.push_str(cut_to_json_len(&text, LOG_PAGE_MAX_BYTES - 100));
                content.push_str(&format!(" [line cut: {} bytes]", raw.len()));
            } else {
                content.push_str(&text);
            }
            content.push('\n');
            bytes += size;
            taken += 1;
        }
        line_no += 1;
    }
    let last = if taken == 0 { 0 } else { target + taken };
    Ok((content, last))
}

/// A line without its `\n` (or `\r\n`).
fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_uses_local_day_and_log_id() {
        let dt = Local
            .with_ymd_and_hms(2026, 3, 4, 10, 0, 0)
            .single()
            .unwrap()
            .timestamp_millis();
        let p = log_file_path(Path::new("/l"), dt, 7);
        assert_eq!(p, PathBuf::from("/l/2026-03-04/7.log"));
    }

    #[test]
    fn read_from_line_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let reader = LogReader::new(dir.path());
        let log = RunLogFile::new(dir.path(), 0, 5);
        log.line("one");
        log.raw(b"two\r\nthree\n");
        let all = reader.read(0, 5, 1);
        assert_eq!(all.to_line_num, 3);
        assert!(!all.is_end);
        assert!(all.log_content.ends_with("[jobwheel] one\ntwo\nthree\n"));
        let tail = reader.read(0, 5, 3);
        assert_eq!((tail.from_line_num, tail.to_line_num), (3, 3));
        assert_eq!(tail.log_content, "three\n");
        let past = reader.read(0, 5, 9);
        assert_eq!((past.to_line_num, past.log_content.as_str()), (0, ""));
        let missing = reader.read(0, 6, 1);
        assert_eq!(missing, LogResult::not_exists(1));
        assert_eq!(missing.log_content, "readLog fail, logFile not exists");
        assert!(missing.is_end);
    }

    /// Reads every page of a log the way the admin does, from line 1 on.
    fn pages(reader: &LogReader, log_id: i64) -> Vec<LogResult> {
        let mut out = Vec::new();
        let mut from = 1;
        loop {
            let page = reader.read(0, log_id, from);
            if page.to_line_num < from {
                return out;
            }
            from = page.to_line_num + 1;
            out.push(page);
        }
    }

    #[test]
    fn large_logs_come_in_bounded_pages_with_every_line_once() {
        let dir = tempfile::tempdir().unwrap();
        let reader = LogReader::new(dir.path());
        let log = RunLogFile::new(dir.path(), 0, 7);
        let total = 3 * LOG_PAGE_MAX_LINES + 17;
        let text: String = (1..=total).map(|i| format!("line {i}\n")).collect();
        log.raw(text.as_bytes());
        let pages = pages(&reader, 7);
        assert_eq!(pages.len(), 4);
        let mut expect = 1;
        for page in &pages {
            assert!(page.log_content.lines().count() <= LOG_PAGE_MAX_LINES);
            for line in page.log_content.lines() {
                assert_eq!(line, format!("line {expect}"));
                expect += 1;
            }
        }
        assert_eq!(expect, total + 1);
        // a page deep in the file is found again from the remembered offsets, and the log grows
        let again = reader.read(0, 7, 20_001);
        assert!(again.log_content.starts_with("line 20001\n"));
        log.raw(b"appended\n");
        let tail = reader.read(0, 7, total as i32 + 1);
        assert_eq!(
            (tail.to_line_num as usize, tail.log_content.as_str()),
            (total + 1, "appended\n")
        );
    }

    #[test]
    fn pages_are_bounded_in_bytes_and_a_huge_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let reader = LogReader::new(dir.path());
        let log = RunLogFile::new(dir.path(), 0, 8);
        // control characters take six bytes each in JSON
        let escaped = "\u{1b}[0m".repeat(2_000);
        for _ in 0..100 {
            log.raw(format!("{escaped}\n").as_bytes());
        }
        log.raw(format!("{}\nafter\n", "x".repeat(3 * LOG_PAGE_MAX_BYTES)).as_bytes());
        let all = pages(&reader, 8);
        let mut lines = 0;
        for page in &all {
            let json = serde_json::to_string(&page.log_content).unwrap();
            assert!(
                json.len() <= LOG_PAGE_MAX_BYTES + 2,
                "page of {} bytes",
                json.len()
            );
            lines += page.log_content.lines().count();
        }
        assert_eq!(lines, 102);
        let cut = all
            .iter()
            .flat_map(|p| p.log_content.lines())
            .nth(100)
            .unwrap();
        assert!(
            cut.ends_with(&format!("[line cut: {} bytes]", 3 * LOG_PAGE_MAX_BYTES)),
            "{}",
            &cut[cut.len() - 40..]
        );
        assert_eq!(all.last().unwrap().log_content, "after\n");
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::*;

    /// Trigger times: any `i64`, the span a real admin sends, and the edges.
    fn log_date_time() -> impl Strategy<Value = i64> {
        prop_oneof![
            any::<i64>(),
            0i64..4_102_444_800_000,
            prop::sample::select(vec![i64::MIN, i64::MAX, -1, 0]),
        ]
    }

    /// `/log` with any time, id and first line: the page of a log that exists, or the "not
    /// exists" answer; never a panic, and never a file outside the log folder.
    #[test]
    fn any_log_request_is_answered() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let base = dir.path();
        RunLogFile::new(base, 0, 5).raw(b"one\ntwo\n");
        // one reader for every case, as the executor keeps one (its line index included)
        let reader = LogReader::new(base);
        proptest!(ProptestConfig::with_cases(10_000), |(
            date in log_date_time(),
            id in prop_oneof![Just(5i64), any::<i64>()],
            from in any::<i32>(),
        )| {
            let path = log_file_path(base, date, id);
            prop_assert!(path.starts_with(base));
            prop_assert_eq!(path.components().count(), base.components().count() + 2);
            let page = reader.read(date, id, from);
            prop_assert_eq!(page.from_line_num, from);
            if page.is_end {
                prop_assert_eq!(page, LogResult::not_exists(from));
            } else {
                prop_assert!(page.to_line_num == 0 || page.to_line_num >= from.max(1));
                prop_assert!(page.to_line_num <= 2);
            }
        });
    }
}
