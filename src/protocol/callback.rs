//! `/api/callback`: run results, as each executor generation writes them, read item by item.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::lenient;
use super::{AdminProtocol, ProtocolError};

/// One job result in `/api/callback`; no `Serialize` because the time key depends on the admin protocol.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "CallbackWire")]
pub struct HandleCallbackParam {
    /// The log row the result belongs to; the admin ignores it if that row already has a result.
    pub log_id: i64,
    /// Trigger time in epoch ms, read from `logDateTim` or `logDateTime`.
    pub log_date_time: i64,
    /// 200 success, 500 failure, 502 timeout.
    pub handle_code: i32,
    /// Result text appended to the log row; omitted on the wire when `None`.
    pub handle_msg: Option<String>,
}

/// Reading side of [`HandleCallbackParam`], keeping both time spellings apart so neither errors as a duplicate.
#[derive(Deserialize, Default)]
#[serde(default)]
struct CallbackWire {
    #[serde(rename = "logId", deserialize_with = "lenient::int64")]
    log_id: i64,
    #[serde(rename = "logDateTime", deserialize_with = "lenient::opt_int64")]
    log_date_time: Option<i64>,
    #[serde(rename = "logDateTim", deserialize_with = "lenient::opt_int64")]
    log_date_tim: Option<i64>,
    #[serde(rename = "handleCode", deserialize_with = "lenient::int32")]
    handle_code: i32,
    #[serde(rename = "handleMsg", deserialize_with = "lenient::opt_string")]
    handle_msg: Option<String>,
}

impl From<CallbackWire> for HandleCallbackParam {
    fn from(w: CallbackWire) -> Self {
        HandleCallbackParam {
            log_id: w.log_id,
            log_date_time: w.log_date_time.or(w.log_date_tim).unwrap_or(0),
            handle_code: w.handle_code,
            handle_msg: w.handle_msg,
        }
    }
}

impl HandleCallbackParam {
    /// Builds a result for the callback queue; a NUL in the message, which an admin's database
    /// may refuse (and then refuse the result), is sent as U+FFFD.
    pub fn new(
        log_id: i64,
        log_date_time: i64,
        handle_code: i32,
        handle_msg: Option<String>,
    ) -> Self {
        let handle_msg = handle_msg.map(|m| {
            if m.contains('\0') {
                m.replace('\0', "\u{FFFD}")
            } else {
                m
            }
        });
        HandleCallbackParam {
            log_id,
            log_date_time,
            handle_code,
            handle_msg,
        }
    }

    /// One callback item with the time key the given admin generation reads.
    pub fn to_json(&self, proto: AdminProtocol) -> Value {
        let mut m = Map::new();
        m.insert("logId".to_string(), Value::from(self.log_id));
        m.insert(
            proto.log_date_key().to_string(),
            Value::from(self.log_date_time),
        );
        m.insert("handleCode".to_string(), Value::from(self.handle_code));
        if let Some(msg) = &self.handle_msg {
            m.insert("handleMsg".to_string(), Value::String(msg.clone()));
        }
        Value::Object(m)
    }
}

/// The `/api/callback` body for the configured admin generation (array for V2, `callbackList` object for V35).
pub fn encode_callbacks(items: &[HandleCallbackParam], proto: AdminProtocol) -> Value {
    let list = Value::Array(items.iter().map(|i| i.to_json(proto)).collect());
    match proto {
        AdminProtocol::V2 => list,
        AdminProtocol::V35 => {
            let mut m = Map::new();
            m.insert("callbackList".to_string(), list);
            Value::Object(m)
        }
    }
}

/// Reads an `/api/callback` body from any executor generation: a bare array or `{"callbackList":[...]}`.
/// One item that cannot be read fails the whole body (see [`decode_callback_items`]).
pub fn decode_callbacks(body: &[u8]) -> Result<Vec<HandleCallbackParam>, ProtocolError> {
    decode_callback_items(body)?
        .into_iter()
        .map(|item| match item {
            CallbackItem::Result(r) => Ok(r),
            CallbackItem::Malformed { why, .. } => Err(ProtocolError::shape(why)),
        })
        .collect()
}

/// One item of a callback body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackItem {
    /// A result.
    Result(HandleCallbackParam),
    /// An item that is not a result, with why, and its `logId` when that much can be read.
    Malformed {
        /// The run it names, if readable.
        log_id: Option<i64>,
        /// What is wrong with it.
        why: String,
    },
}

impl CallbackItem {
    /// The run it names, when that can be read.
    pub fn log_id(&self) -> Option<i64> {
        match self {
            CallbackItem::Result(r) => Some(r.log_id),
            CallbackItem::Malformed { log_id, .. } => *log_id,
        }
    }
}

/// Reads an `/api/callback` body item by item: the body's shape must be right, but one item of
/// the wrong type does not cost the others (the admin stores those and closes the bad one's run
/// when it can tell which run that is).
pub fn decode_callback_items(body: &[u8]) -> Result<Vec<CallbackItem>, ProtocolError> {
    let list = match serde_json::from_slice::<Value>(body)? {
        Value::Array(list) => list,
        Value::Object(mut obj) => match obj.remove("callbackList") {
            Some(Value::Array(list)) => list,
            Some(Value::Null) => Vec::new(),
            Some(_) => return Err(ProtocolError::shape("callbackList must be an array")),
            None => {
                return Err(ProtocolError::shape(
                    "expected a JSON array or an object with callbackList",
                ))
            }
        },
        _ => {
            return Err(ProtocolError::shape(
                "expected a JSON array or an object with callbackList",
            ))
        }
    };
    Ok(list
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let log_id = item.get("logId").and_then(|v| match v {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            });
            match serde_json::from_value::<HandleCallbackParam>(item) {
                Ok(result) => CallbackItem::Result(result),
                Err(e) => CallbackItem::Malformed {
                    log_id,
                    why: format!("callback item {} is not a result: {e}", i + 1),
                },
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;
    use serde_json::json;

    #[test]
    fn results_built_here_carry_no_nul() {
        let item = HandleCallbackParam::new(1, 2, 500, Some("panic: a\0b".into()));
        assert_eq!(item.handle_msg.as_deref(), Some("panic: a\u{FFFD}b"));
    }

    #[test]
    fn callback_single_without_msg() {
        let body = r#"[{"logId":101,"logDateTim":1796010589000,"handleCode":200}]"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(
            items,
            vec![HandleCallbackParam::new(101, 1_796_010_589_000, 200, None)]
        );
        assert_eq!(encode_callbacks(&items, AdminProtocol::V2), v(body));
    }

    #[test]
    fn callback_batched() {
        let body = r#"[{"logId":103,"logDateTim":1796010589000,"handleCode":500,"handleMsg":"peer fail:x"},{"logId":104,"logDateTim":1796010589000,"handleCode":200}]"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].log_id, 103);
        assert_eq!(items[0].handle_code, 500);
        assert_eq!(items[0].handle_msg.as_deref(), Some("peer fail:x"));
        assert_eq!(items[1].log_id, 104);
        assert_eq!(items[1].handle_msg, None);
        assert_eq!(encode_callbacks(&items, AdminProtocol::V2), v(body));
    }

    #[test]
    fn callback_unicode_raw_utf8() {
        let body = r#"[{"logId":110,"logDateTim":1796010589000,"handleCode":200,"handleMsg":"echo:unicode-é-中"}]"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(items[0].handle_msg.as_deref(), Some("echo:unicode-é-中"));
        let enc = encode_callbacks(&items, AdminProtocol::V2);
        assert_eq!(enc, v(body));
        let text = serde_json::to_string(&enc).unwrap();
        assert!(text.contains("echo:unicode-é-中"), "{text}");
        assert!(!text.contains("\\u"), "{text}");
        // Escaped input reads the same.
        let escaped = decode_callbacks(
            br#"[{"logId":110,"logDateTim":1796010589000,"handleCode":200,"handleMsg":"echo:unicode-\u00e9-\u4e2d"}]"#,
        )
        .unwrap();
        assert_eq!(escaped, items);
    }

    #[test]
    fn callback_3_5_callback_list() {
        let body =
            r#"{"callbackList":[{"logId":101,"logDateTime":1796010620000,"handleCode":200}]}"#;
        let items = decode_callbacks(body.as_bytes()).unwrap();
        assert_eq!(
            items,
            vec![HandleCallbackParam::new(101, 1_796_010_620_000, 200, None)]
        );
        assert_eq!(encode_callbacks(&items, AdminProtocol::V35), v(body));
        // The same items for an old admin.
        assert_eq!(
            encode_callbacks(&items, AdminProtocol::V2),
            json!([{"logId":101,"logDateTim":1796010620000i64,"handleCode":200}])
        );
    }

    #[test]
    fn callback_observed_results() {
        // Cover-early, timeout and kill results from the observed exchanges.
        let cover = format!("{MSG_COVER_EARLY}{MSG_SUFFIX_RUNNING_KILLED}");
        assert_eq!(
            cover,
            "block strategy effect：Cover Early [job running, killed]"
        );
        let body = json!([
            {"logId":120,"logDateTim":1796010589000i64,"handleCode":500,"handleMsg":cover},
            {"logId":121,"logDateTim":1796010589000i64,"handleCode":502,"handleMsg":"job execute timeout "},
            {"logId":122,"logDateTim":1796010589000i64,"handleCode":500,"handleMsg":"scheduling center kill job. [job running, killed]"}
        ]);
        let items = decode_callbacks(body.to_string().as_bytes()).unwrap();
        assert_eq!(items[0].handle_msg.as_deref(), Some(cover.as_str()));
        assert_eq!(items[1].handle_code, TIMEOUT_CODE);
        assert_eq!(items[1].handle_msg.as_deref(), Some(MSG_JOB_TIMEOUT));
        assert_eq!(items[2].handle_code, FAIL_CODE);
        assert_eq!(encode_callbacks(&items, AdminProtocol::V2), body);
    }

    #[test]
    fn callback_null_msg_omitted_and_spellings() {
        let items = decode_callbacks(
            br#"[{"logId":1,"logDateTim":10,"handleCode":200,"handleMsg":null},{"logId":2,"handleCode":500},{"logId":3,"logDateTim":5,"logDateTime":6,"handleCode":200}]"#,
        )
        .unwrap();
        assert_eq!(items[0].handle_msg, None);
        assert_eq!(items[0].log_date_time, 10);
        assert_eq!(items[1].log_date_time, 0);
        assert_eq!(items[2].log_date_time, 6);
        let enc = encode_callbacks(&items[..1], AdminProtocol::V35);
        assert_eq!(
            enc,
            json!({"callbackList":[{"logId":1,"logDateTime":10,"handleCode":200}]})
        );
        assert!(!serde_json::to_string(&enc).unwrap().contains("handleMsg"));
        let item = HandleCallbackParam::new(9, 8, 200, None);
        assert_eq!(
            item.to_json(AdminProtocol::V2),
            json!({"logId":9,"logDateTim":8,"handleCode":200})
        );
    }

    #[test]
    fn one_bad_callback_item_costs_only_itself() {
        let items = decode_callback_items(
            br#"[{"logId":1,"handleCode":200},{"logId":"2","handleCode":"oops"},{"logId":[3]},{"logId":4,"handleCode":500}]"#,
        )
        .unwrap();
        assert_eq!(items.len(), 4);
        assert!(matches!(&items[0], CallbackItem::Result(r) if r.log_id == 1));
        match &items[1] {
            CallbackItem::Malformed { log_id, why } => {
                assert_eq!(*log_id, Some(2));
                assert!(
                    why.contains("callback item 2") && why.contains("oops"),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &items[2],
            CallbackItem::Malformed { log_id: None, .. }
        ));
        assert!(matches!(&items[3], CallbackItem::Result(r) if r.handle_code == 500));
        // the strict reader still refuses the whole body
        assert!(decode_callbacks(br#"[{"logId":1},{"logId":2,"handleCode":{}}]"#).is_err());
    }

    #[test]
    fn callback_edge_shapes() {
        assert!(decode_callbacks(b"[]").unwrap().is_empty());
        assert!(decode_callbacks(br#"{"callbackList":[]}"#)
            .unwrap()
            .is_empty());
        assert!(decode_callbacks(br#"{"callbackList":null}"#)
            .unwrap()
            .is_empty());
        assert_eq!(encode_callbacks(&[], AdminProtocol::V2), json!([]));
        assert_eq!(
            encode_callbacks(&[], AdminProtocol::V35),
            json!({"callbackList":[]})
        );
        for bad in [
            &br#"{"list":[]}"#[..],
            br#"{"callbackList":{}}"#,
            br#""x""#,
            b"42",
            br#"[1]"#,
            br#"[{"logId":"abc"}]"#,
        ] {
            let err = decode_callbacks(bad).expect_err("bad shape must fail");
            assert!(matches!(err, ProtocolError::Malformed(_)), "{err}");
        }
    }
}
