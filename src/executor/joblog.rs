//! Run log files: `{log-path}/{yyyy-MM-dd}/{logId}.log`, appended line by line and tailed by `/log`.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{Local, TimeZone};

use crate::protocol::LogResult;

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
pub struct JobLog {
    path: PathBuf,
}

impl JobLog {
    /// The log of `log_id` under `base`.
    pub fn new(base: &Path, log_date_time: i64, log_id: i64) -> Self {
        JobLog {
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

/// Reads a run log from the 1-based `from_line_num`, as HEAD's executor answers `/log`.
pub fn read_log(base: &Path, log_date_time: i64, log_id: i64, from_line_num: i32) -> LogResult {
    let path = log_file_path(base, log_date_time, log_id);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(_) => return LogResult::not_exists(from_line_num),
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut content = String::new();
    let mut to_line_num = 0;
    for (i, line) in text.lines().enumerate() {
        let number = i as i32 + 1;
        if number >= from_line_num {
            content.push_str(line);
            content.push('\n');
            to_line_num = number;
        }
    }
    LogResult {
        from_line_num,
        to_line_num,
        log_content: content,
        is_end: false,
    }
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
        let log = JobLog::new(dir.path(), 0, 5);
        log.line("one");
        log.raw(b"two\r\nthree\n");
        let all = read_log(dir.path(), 0, 5, 1);
        assert_eq!(all.to_line_num, 3);
        assert!(!all.is_end);
        assert!(all.log_content.ends_with("[jobwheel] one\ntwo\nthree\n"));
        let tail = read_log(dir.path(), 0, 5, 3);
        assert_eq!((tail.from_line_num, tail.to_line_num), (3, 3));
        assert_eq!(tail.log_content, "three\n");
        let past = read_log(dir.path(), 0, 5, 9);
        assert_eq!((past.to_line_num, past.log_content.as_str()), (0, ""));
        let missing = read_log(dir.path(), 0, 6, 1);
        assert_eq!(missing, LogResult::not_exists(1));
        assert_eq!(missing.log_content, "readLog fail, logFile not exists");
        assert!(missing.is_end);
    }
}
