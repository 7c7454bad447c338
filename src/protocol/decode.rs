//! Reading a body off the wire: the whole body checked (UTF-8, depth), then decoded, every
//! failure a [`ProtocolError`] with a message for the 500 answer.

use std::fmt;

use serde::de::DeserializeOwned;

/// Decoding failures; callers turn them into a 500 envelope, so the message must explain the body.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The body is not JSON or not of the expected shape; carries serde's message.
    #[error("malformed body: {0}")]
    Malformed(#[from] serde_json::Error),
    /// A configured admin protocol name is not one we can speak.
    #[error("unknown admin protocol [{0}], allowed values: v2, v3.5")]
    UnknownAdminProtocol(String),
    /// A block strategy name outside the Java enum.
    #[error(
        "unknown block strategy [{0}], allowed values: SERIAL_EXECUTION, DISCARD_LATER, COVER_EARLY"
    )]
    UnknownBlockStrategy(String),
    /// A glue type name outside the Java enum.
    #[error("unknown glue type [{0}], allowed values: BEAN, GLUE_GROOVY, GLUE_SHELL, GLUE_PYTHON, GLUE_PYTHON2, GLUE_NODEJS, GLUE_PHP, GLUE_POWERSHELL")]
    UnknownGlueType(String),
}

impl ProtocolError {
    pub(super) fn shape(msg: impl fmt::Display) -> Self {
        ProtocolError::Malformed(<serde_json::Error as serde::de::Error>::custom(msg))
    }
}

/// Decodes any request or answer body, mapping serde failures to [`ProtocolError`] for the 500 answer.
///
/// The whole body must be UTF-8 JSON nested at most [`MAX_JSON_DEPTH`] deep, the fields it does
/// not read included: serde skips those without checking either.
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ProtocolError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ProtocolError::shape(format!("the body is not UTF-8: {e}")))?;
    if let Some(at) = too_deep(text.as_bytes()) {
        return Err(ProtocolError::shape(format!(
            "recursion limit exceeded: the body nests arrays and objects more than \
             {MAX_JSON_DEPTH} deep (at byte {at})"
        )));
    }
    Ok(serde_json::from_str(text)?)
}

/// How deep a body may nest arrays and objects: serde_json's own limit for what it parses.
pub const MAX_JSON_DEPTH: usize = 128;

/// The offset where `json` first nests deeper than [`MAX_JSON_DEPTH`], outside strings.
fn too_deep(json: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &b) in json.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(at);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::protocol::*;
    use serde_json::json;

    #[test]
    fn bodies_are_checked_whole_even_where_unread() {
        let mut not_utf8 = br#"{"jobId":1,"x":""#.to_vec();
        not_utf8.extend_from_slice(&[0xff, 0xfe]);
        not_utf8.extend_from_slice(br#""}"#);
        let err = decode::<KillParam>(&not_utf8).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
        let deep = format!(
            r#"{{"jobId":1,"x":{}{}}}"#,
            "[".repeat(50_000),
            "]".repeat(50_000)
        );
        let err = decode::<KillParam>(deep.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than 128 deep"), "{err}");
        // brackets inside strings are text, and 128 levels are allowed
        let fine = format!(
            r#"{{"jobId":7,"s":"[[[{{\"","x":{}{}}}"#,
            "[".repeat(127),
            "]".repeat(127)
        );
        assert_eq!(decode::<KillParam>(fine.as_bytes()).unwrap().job_id, 7);
    }

    #[test]
    fn malformed_json_gives_protocol_error() {
        let err = decode::<TriggerParam>(b"not json").expect_err("must fail");
        assert!(matches!(err, ProtocolError::Malformed(_)));
        assert!(err.to_string().starts_with("malformed body: "), "{err}");
        assert!(decode_callbacks(b"not json").is_err());
        assert!(decode_callbacks(b"").is_err());
        assert!(decode::<KillParam>(b"").is_err());
        assert!(decode::<LogParam>(b"{\"logId\":").is_err());
        let err = decode::<KillParam>(br#"{"jobId":"abc"}"#).expect_err("must fail");
        assert!(err.to_string().contains("abc"), "{err}");
        let err = decode::<KillParam>(br#"{"jobId":9999999999}"#).expect_err("must fail");
        assert!(err.to_string().contains("out of range"), "{err}");
        assert!(decode::<KillParam>(br#"{"jobId":1.5}"#).is_err());
        assert!(decode::<TriggerParam>(br#"{"glueSource":{"a":1}}"#).is_err());
        assert!(decode::<LogResult>(br#"{"isEnd":3}"#).is_err());
    }

    #[test]
    fn beat_request_body_is_a_json_empty_string() {
        // The 2.4.2 admin sends `""`; it must at least be valid JSON for a body-agnostic reader.
        let b: serde_json::Value = decode(br#""""#).unwrap();
        assert_eq!(b, json!(""));
    }
}
