//! The answer envelope of both directions (`ReturnT`), its payload under `content`, `data` or
//! both as each generation reads it.

use serde::de::Deserializer;
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::lenient;
use super::{LogResult, FAIL_CODE, MSG_SUCCESS, SUCCESS_CODE};

/// Answer envelope of both directions (Java `ReturnT`/`Response`); the payload is written twice for old and new readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnT<T> {
    /// 200 success, 500 failure, 502 timeout.
    pub code: i32,
    /// Human-readable message; omitted on the wire when `None` as Gson does.
    pub msg: Option<String>,
    /// Written as both `content` (≤3.2) and `data` (≥3.3); read from `data`, else `content`.
    pub payload: Option<T>,
}

/// Envelope whose payload is kept as raw JSON, for answers whose payload callers ignore.
pub type AnyReturn = ReturnT<Value>;
/// Envelope with a string payload, e.g. the `/kill` "already killed" answer.
pub type StringReturn = ReturnT<String>;
/// Envelope of the `/log` answer.
pub type LogReturn = ReturnT<LogResult>;

impl<T> ReturnT<T> {
    /// Plain success as 3.x peers send it (`{"code":200,"msg":"Success"}`).
    pub fn success() -> Self {
        Self::with_code(SUCCESS_CODE, MSG_SUCCESS)
    }

    /// Success carrying a payload, as the `/log` and `/kill` answers do.
    pub fn success_with(payload: T) -> Self {
        ReturnT {
            code: SUCCESS_CODE,
            msg: Some(MSG_SUCCESS.to_string()),
            payload: Some(payload),
        }
    }

    /// Failure with the message the peer will log or show.
    pub fn fail(msg: impl Into<String>) -> Self {
        Self::with_code(FAIL_CODE, msg)
    }

    /// Any code with a message, e.g. 502 for timeouts.
    pub fn with_code(code: i32, msg: impl Into<String>) -> Self {
        ReturnT {
            code,
            msg: Some(msg.into()),
            payload: None,
        }
    }

    /// Peers decide only on the code, never on the message.
    pub fn is_success(&self) -> bool {
        self.code == SUCCESS_CODE
    }
}

/// Which envelope key carries a payload: XXL-JOB up to 3.2 reads `content`, 3.3 and later `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadKey {
    /// Both, for a peer of unknown generation (extra keys are ignored by every reader).
    #[default]
    Both,
    /// `content` only (2.4–3.2).
    Content,
    /// `data` only (3.3 and later, and jobwheel).
    Data,
}

/// An envelope written with its payload under the given key(s), for answers whose payload is
/// large enough that writing it twice matters (`/log`).
pub struct Keyed<'a, T> {
    /// The envelope.
    pub ret: &'a ReturnT<T>,
    /// Where its payload goes.
    pub key: PayloadKey,
}

impl<T: Serialize> Serialize for Keyed<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ret = self.ret;
        let keys = match self.key {
            PayloadKey::Both => 2,
            _ => 1,
        };
        let len = 1 + usize::from(ret.msg.is_some()) + keys * usize::from(ret.payload.is_some());
        let mut st = serializer.serialize_struct("ReturnT", len)?;
        st.serialize_field("code", &ret.code)?;
        match &ret.msg {
            Some(msg) => st.serialize_field("msg", msg)?,
            None => st.skip_field("msg")?,
        }
        let (content, data) = match self.key {
            PayloadKey::Both => (true, true),
            PayloadKey::Content => (true, false),
            PayloadKey::Data => (false, true),
        };
        match &ret.payload {
            Some(payload) if content => st.serialize_field("content", payload)?,
            _ => st.skip_field("content")?,
        }
        match &ret.payload {
            Some(payload) if data => st.serialize_field("data", payload)?,
            _ => st.skip_field("data")?,
        }
        st.end()
    }
}

impl<T: Serialize> Serialize for ReturnT<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Keyed {
            ret: self,
            key: PayloadKey::Both,
        }
        .serialize(serializer)
    }
}

/// Reading side of [`ReturnT`]; both payload keys are optional and a `null` counts as absent.
#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de>")]
struct ReturnWire<T> {
    #[serde(default, deserialize_with = "lenient::int32")]
    code: i32,
    #[serde(default, deserialize_with = "lenient::opt_string")]
    msg: Option<String>,
    #[serde(default = "none")]
    content: Option<T>,
    #[serde(default = "none")]
    data: Option<T>,
}

fn none<T>() -> Option<T> {
    None
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ReturnT<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = ReturnWire::<T>::deserialize(deserializer)?;
        Ok(ReturnT {
            code: wire.code,
            msg: wire.msg,
            payload: wire.data.or(wire.content),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::*;
    use crate::protocol::*;
    use serde_json::json;

    #[test]
    fn beat_success_answer() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200,"msg":"Success"}"#);
        assert_eq!(r.code, 200);
        assert_eq!(r.msg.as_deref(), Some("Success"));
        assert!(r.payload.is_none());
        assert!(r.is_success());
        assert_eq!(
            serde_json::to_value(AnyReturn::success()).unwrap(),
            v(r#"{"code":200,"msg":"Success"}"#)
        );
    }

    #[test]
    fn beat_answer_2_4_2_without_msg() {
        let r: AnyReturn = envelope_roundtrip(r#"{"code":200}"#);
        assert_eq!(r.code, 200);
        assert!(r.msg.is_none());
        assert!(r.payload.is_none());
        assert!(r.is_success());
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"code":200}"#);
    }

    #[test]
    fn error_answers_match_observed() {
        let cases: Vec<(&str, String)> = vec![
            (
                r#"{"code":500,"msg":"The access token is wrong."}"#,
                MSG_ACCESS_TOKEN_WRONG.to_string(),
            ),
            (
                r#"{"code":500,"msg":"invalid request, HttpMethod not support."}"#,
                MSG_METHOD_NOT_SUPPORTED.to_string(),
            ),
            (
                r#"{"code":500,"msg":"invalid request, uri-mapping(/foo) not found."}"#,
                uri_not_found("/foo"),
            ),
            (
                r#"{"code":500,"msg":"job thread is running or has trigger queue."}"#,
                MSG_JOB_BUSY.to_string(),
            ),
            (
                r#"{"code":500,"msg":"job handler [nope] not found."}"#,
                handler_not_found("nope"),
            ),
            (
                r#"{"code":500,"msg":"block strategy effect：Discard Later"}"#,
                MSG_DISCARD_LATER.to_string(),
            ),
            (
                r#"{"code":500,"msg":"request error:..."}"#,
                request_error("..."),
            ),
        ];
        for (observed, msg) in cases {
            let r: AnyReturn = envelope_roundtrip(observed);
            assert_eq!(r.code, FAIL_CODE);
            assert!(!r.is_success());
            assert_eq!(r.msg.as_deref(), Some(msg.as_str()));
            // Our own constructor produces the observed body exactly.
            assert_eq!(
                serde_json::to_value(AnyReturn::fail(msg)).unwrap(),
                v(observed)
            );
        }
    }

    #[test]
    fn idle_beat_and_run_success_answers() {
        for observed in [
            r#"{"code":200,"msg":"Success"}"#,
            r#"{"code":200,"msg":"Success"}"#,
        ] {
            let r: AnyReturn = envelope_roundtrip(observed);
            assert!(r.is_success());
        }
    }

    #[test]
    fn envelope_writes_both_content_and_data() {
        let r = ReturnT::success_with(json!({"a":1}));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code":200,"msg":"Success","content":{"a":1},"data":{"a":1}})
        );
        let r = ReturnT {
            code: 200,
            msg: None,
            payload: Some(5),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code":200,"content":5,"data":5})
        );
    }

    #[test]
    fn envelope_reads_content_only_and_data_only() {
        let c: ReturnT<LogResult> = decode(
            br#"{"code":200,"content":{"fromLineNum":3,"toLineNum":9,"logContent":"x","isEnd":false}}"#,
        )
        .unwrap();
        assert_eq!(c.payload.as_ref().map(|p| p.to_line_num), Some(9));
        assert!(c.msg.is_none());
        let d: ReturnT<LogResult> = decode(
            br#"{"code":200,"msg":"Success","data":{"fromLineNum":3,"toLineNum":9,"logContent":"x","isEnd":false}}"#,
        )
        .unwrap();
        assert_eq!(d.payload, c.payload);
    }

    #[test]
    fn envelope_prefers_data_and_treats_null_as_absent() {
        let r: StringReturn = decode(br#"{"code":200,"content":"old","data":"new"}"#).unwrap();
        assert_eq!(r.payload.as_deref(), Some("new"));
        let r: StringReturn = decode(br#"{"code":200,"content":"old","data":null}"#).unwrap();
        assert_eq!(r.payload.as_deref(), Some("old"));
        let r: StringReturn = decode(br#"{"code":200,"content":null,"data":null}"#).unwrap();
        assert!(r.payload.is_none());
        let r: AnyReturn = decode(br#"{"code":500,"msg":null,"data":null}"#).unwrap();
        assert_eq!(r.code, 500);
        assert!(r.msg.is_none());
        assert!(r.payload.is_none());
    }

    #[test]
    fn envelope_constructors() {
        let r = AnyReturn::fail("boom");
        assert_eq!((r.code, r.msg.as_deref()), (FAIL_CODE, Some("boom")));
        let r = AnyReturn::with_code(TIMEOUT_CODE, MSG_JOB_TIMEOUT);
        assert_eq!(r.code, 502);
        assert!(!r.is_success());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"code":502,"msg":"job execute timeout "})
        );
        assert_eq!((SUCCESS_CODE, FAIL_CODE, TIMEOUT_CODE), (200, 500, 502));
    }

    #[test]
    fn envelope_ignores_unknown_fields_and_is_lenient() {
        let r: AnyReturn =
            decode(br#"{"code":"200","msg":"Success","extra":[1,2],"success":true}"#).unwrap();
        assert!(r.is_success());
        let r: AnyReturn = decode(br#"{}"#).unwrap();
        assert_eq!(r.code, 0);
    }

    #[test]
    fn a_keyed_envelope_writes_its_payload_once() {
        let r = ReturnT::success_with(5);
        let one = |key| serde_json::to_value(Keyed { ret: &r, key }).unwrap();
        assert_eq!(
            one(PayloadKey::Data),
            json!({"code":200,"msg":"Success","data":5})
        );
        assert_eq!(
            one(PayloadKey::Content),
            json!({"code":200,"msg":"Success","content":5})
        );
        assert_eq!(
            one(PayloadKey::Both),
            json!({"code":200,"msg":"Success","content":5,"data":5})
        );
    }
}
