//! `/log`: a page of a run's log, asked by line and answered within a size bound.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient;
use super::{AdminProtocol, MSG_LOG_FILE_NOT_EXISTS};

/// Body of `/log`; no `Serialize` because the time key depends on the admin protocol.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "LogParamWire")]
pub struct LogParam {
    /// Trigger time in epoch ms, which picks the dated log directory; read from either spelling.
    pub log_date_time: i64,
    /// The log row, i.e. the log file name.
    pub log_id: i64,
    /// 1-based first line wanted; the UI polls from `toLineNum + 1`.
    pub from_line_num: i32,
    /// The request spelled the time `logDateTime`: a 3.5 admin or jobwheel, which read `data`.
    pub reads_data: bool,
}

/// Reading side of [`LogParam`], keeping both time spellings apart so neither errors as a duplicate.
#[derive(Deserialize, Default)]
#[serde(default)]
struct LogParamWire {
    #[serde(rename = "logDateTime", deserialize_with = "lenient::opt_int64")]
    log_date_time: Option<i64>,
    #[serde(rename = "logDateTim", deserialize_with = "lenient::opt_int64")]
    log_date_tim: Option<i64>,
    #[serde(rename = "logId", deserialize_with = "lenient::int64")]
    log_id: i64,
    #[serde(rename = "fromLineNum", deserialize_with = "lenient::int32")]
    from_line_num: i32,
}

impl From<LogParamWire> for LogParam {
    fn from(w: LogParamWire) -> Self {
        LogParam {
            reads_data: w.log_date_time.is_some(),
            log_date_time: w.log_date_time.or(w.log_date_tim).unwrap_or(0),
            log_id: w.log_id,
            from_line_num: w.from_line_num,
        }
    }
}

impl LogParam {
    /// The `/log` request with both time keys: each executor generation reads its own and ignores
    /// the other, and `logDateTime` tells a jobwheel executor that this admin reads `data`, so
    /// the page is written once.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for proto in AdminProtocol::ALL {
            m.insert(
                proto.log_date_key().to_string(),
                Value::from(self.log_date_time),
            );
        }
        m.insert("logId".to_string(), Value::from(self.log_id));
        m.insert("fromLineNum".to_string(), Value::from(self.from_line_num));
        Value::Object(m)
    }
}

/// Payload of the `/log` answer; the admin polls again from `toLineNum + 1` until the job has a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct LogResult {
    /// Echo of the requested first line.
    #[serde(deserialize_with = "lenient::int32")]
    pub from_line_num: i32,
    /// Last line returned (0 when none), where the next poll continues.
    #[serde(deserialize_with = "lenient::int32")]
    pub to_line_num: i32,
    /// The lines joined with `\n`, or an error text such as [`MSG_LOG_FILE_NOT_EXISTS`].
    #[serde(deserialize_with = "lenient::string")]
    pub log_content: String,
    /// Gson writes the field name `isEnd`; the Java admin UI's Jackson JSON calls it `end`.
    #[serde(rename = "isEnd", alias = "end", deserialize_with = "lenient::boolean")]
    pub is_end: bool,
}

/// Most lines one `/log` page holds.
pub const LOG_PAGE_MAX_LINES: usize = 10_000;
/// Most bytes one `/log` page's content takes once written as a JSON string, so no answer (the
/// executor's, or the admin's passing it on) grows past a few hundred kilobytes, whatever the
/// log's size.
pub const LOG_PAGE_MAX_BYTES: usize = 256 * 1024;

/// How many bytes `text` takes written as a JSON string (without the quotes), as serde_json
/// writes it: two for the short escapes, six for other control characters.
pub fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The longest start of `text` whose JSON form fits in `max` bytes.
pub fn cut_to_json_len(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += json_char_len(c);
        if used > max {
            return &text[..i];
        }
    }
    text
}

impl LogResult {
    /// This page cut to the page bound at a line end, for executors that send a whole log at
    /// once (XXL-JOB's): `toLineNum` then names the last line kept, and the next page starts
    /// after it. A page within the bound is returned as it is.
    pub fn bounded(mut self) -> Self {
        if self.to_line_num < self.from_line_num || self.from_line_num < 1 {
            return self; // no lines, or an error text
        }
        let (mut kept, mut bytes, mut end) = (0usize, 0usize, 0usize);
        for line in self.log_content.split_inclusive('\n') {
            let size = json_len(line);
            if kept == LOG_PAGE_MAX_LINES || (kept > 0 && bytes + size > LOG_PAGE_MAX_BYTES) {
                break;
            }
            if size > LOG_PAGE_MAX_BYTES {
                // a single huge line: cut, and counted as read
                let cut = cut_to_json_len(line, LOG_PAGE_MAX_BYTES - 100).len();
                self.log_content.truncate(end + cut);
                self.log_content.push_str(" [line cut]\n");
                self.to_line_num = self.from_line_num;
                return self;
            }
            end += line.len();
            bytes += size;
            kept += 1;
        }
        let whole = self.log_content.split_inclusive('\n').count();
        if kept < whole {
            self.log_content.truncate(end);
            // a page numbered near i32::MAX by its executor must not overflow (kept ≤ 10,000)
            let kept = i32::try_from(kept).unwrap_or(i32::MAX);
            self.to_line_num = self.from_line_num.saturating_add(kept - 1);
        }
        self
    }

    /// The answer for a log file that does not exist, ending the UI's polling.
    pub fn not_exists(from_line_num: i32) -> Self {
        LogResult {
            from_line_num,
            to_line_num: 0,
            log_content: MSG_LOG_FILE_NOT_EXISTS.to_string(),
            is_end: true,
        }
    }
}

/// Most runs one `/dropLogs` request names, so one request stays small and quick to serve.
pub const DROP_LOGS_MAX_RUNS: usize = 1_000;

/// One run whose log an executor is asked to drop: the `/log` request's two keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedLog {
    /// The run's log row.
    #[serde(deserialize_with = "lenient::int64")]
    pub log_id: i64,
    /// Its trigger time in epoch ms, which names the dated directory its lines are in.
    #[serde(deserialize_with = "lenient::int64")]
    pub log_date_time: i64,
}

/// Body of `/dropLogs`, jobwheel's extension: the admin's retention removed these runs by their
/// job's own bounds, so their lines go too. XXL-JOB executors answer it not found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropLogsParam {
    /// At most [`DROP_LOGS_MAX_RUNS`].
    pub logs: Vec<DroppedLog>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;
    use serde_json::json;

    #[test]
    fn drop_logs_bodies_read_ints_leniently() {
        let p: DropLogsParam = serde_json::from_value(
            json!({"logs": [{"logId": "7", "logDateTime": 1700000000000i64}]}),
        )
        .unwrap();
        assert_eq!(
            p.logs,
            vec![DroppedLog {
                log_id: 7,
                log_date_time: 1_700_000_000_000
            }]
        );
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(back["logs"][0]["logId"], json!(7));
        assert!(serde_json::from_value::<DropLogsParam>(json!({})).is_err());
    }

    #[test]
    fn log_answer_with_lines() {
        let observed = r#"{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":4,"logContent":"...lines...\n","isEnd":false}}"#;
        let r: LogReturn = envelope_roundtrip(observed);
        assert!(r.is_success());
        let p = r.payload.expect("payload");
        assert_eq!(p.from_line_num, 1);
        assert_eq!(p.to_line_num, 4);
        assert_eq!(p.log_content, "...lines...\n");
        assert!(!p.is_end);
    }

    #[test]
    fn log_answer_unknown_log() {
        let observed = r#"{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":0,"logContent":"readLog fail, logFile not exists","isEnd":true}}"#;
        let r: LogReturn = envelope_roundtrip(observed);
        let p = r.payload.clone().expect("payload");
        assert_eq!(p, LogResult::not_exists(1));
        assert_eq!(p.log_content, MSG_LOG_FILE_NOT_EXISTS);
        assert!(p.is_end);
        let ours = LogReturn::success_with(LogResult::not_exists(1));
        assert_eq!(ours, r);
        let enc = serde_json::to_value(&ours).unwrap();
        assert_eq!(enc["data"], v(observed)["data"]);
        assert_eq!(enc["content"], v(observed)["data"]);
    }

    #[test]
    fn whole_logs_from_old_executors_are_cut_to_one_page() {
        let lines: String = (1..=25_000).map(|i| format!("l{i}\n")).collect();
        let whole = LogResult {
            from_line_num: 11,
            to_line_num: 25_010,
            log_content: lines,
            is_end: false,
        };
        let page = whole.clone().bounded();
        assert_eq!(page.to_line_num, 11 + LOG_PAGE_MAX_LINES as i32 - 1);
        assert_eq!(page.log_content.lines().count(), LOG_PAGE_MAX_LINES);
        assert!(page.log_content.ends_with("l10000\n"));
        let small = LogResult {
            to_line_num: 12,
            log_content: "a\nb\n".into(),
            ..whole.clone()
        };
        assert_eq!(small.clone().bounded(), small);
        let wide = LogResult {
            from_line_num: 1,
            to_line_num: 2,
            log_content: format!("{}\nnext\n", "\u{1}".repeat(LOG_PAGE_MAX_BYTES)),
            is_end: false,
        };
        let page = wide.bounded();
        assert_eq!(page.to_line_num, 1);
        assert!(serde_json::to_string(&page.log_content).unwrap().len() <= LOG_PAGE_MAX_BYTES);
        assert!(page.log_content.ends_with(" [line cut]\n"));
    }

    #[test]
    fn log_request_both_spellings() {
        let old = r#"{"logDateTim":1700000000000,"logId":101,"fromLineNum":1}"#;
        let p: LogParam = decode(old.as_bytes()).unwrap();
        assert_eq!(p.log_date_time, 1_700_000_000_000);
        assert_eq!(p.log_id, 101);
        assert_eq!(p.from_line_num, 1);
        assert!(!p.reads_data, "a 2.4-3.4 admin's request");

        let new = r#"{"logId":101,"logDateTime":1700000000000,"fromLineNum":1}"#;
        let q: LogParam = decode(new.as_bytes()).unwrap();
        assert_eq!(
            (q.log_date_time, q.log_id, q.from_line_num),
            (p.log_date_time, p.log_id, p.from_line_num)
        );
        assert!(q.reads_data, "a 3.5 admin's request");

        // jobwheel's admin sends both spellings, so every generation finds its own
        let ours = q.to_json();
        assert_eq!(
            ours,
            json!({"logDateTim":1700000000000i64,"logDateTime":1700000000000i64,"logId":101,"fromLineNum":1})
        );
        let back: LogParam = serde_json::from_value(ours).unwrap();
        assert!(back.reads_data);

        // Observed 3.4.2 request with the 3.4.2 capture's date.
        let p: LogParam =
            decode(br#"{"logDateTim":1796010589000,"logId":101,"fromLineNum":1}"#).unwrap();
        assert_eq!(p.log_date_time, 1_796_010_589_000);

        // Both present: the 3.5 spelling wins, and it is not a duplicate-field error.
        let p: LogParam =
            decode(br#"{"logDateTim":1,"logDateTime":2,"logId":3,"fromLineNum":4}"#).unwrap();
        assert_eq!(p.log_date_time, 2);
    }

    #[test]
    fn log_result_accepts_end_alias_and_writes_is_end() {
        let r: LogResult =
            decode(br#"{"fromLineNum":5,"toLineNum":7,"logContent":"a\nb","end":true}"#).unwrap();
        assert!(r.is_end);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"fromLineNum":5,"toLineNum":7,"logContent":"a\nb","isEnd":true})
        );
        let r: LogResult = decode(br#"{"fromLineNum":1,"logContent":null}"#).unwrap();
        assert_eq!(r.log_content, "");
        assert!(!r.is_end);
    }
}
