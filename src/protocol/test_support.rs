//! What the protocol's unit tests share: JSON from text, and an envelope's round trip.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{decode, ReturnT};

/// `s` parsed as JSON.
pub(crate) fn v(s: &str) -> Value {
    serde_json::from_str(s).expect("test JSON must parse")
}

/// Decodes an observed envelope, re-encodes it and checks the result is the observed body with the
/// payload (if any) under both keys.
pub(crate) fn envelope_roundtrip<T: Serialize + DeserializeOwned>(observed: &str) -> ReturnT<T> {
    let decoded: ReturnT<T> = decode(observed.as_bytes()).expect("observed envelope decodes");
    let mut expected = v(observed);
    if let Some(obj) = expected.as_object_mut() {
        let payload = obj.get("data").or_else(|| obj.get("content")).cloned();
        if let Some(p) = payload.filter(|p| !p.is_null()) {
            obj.insert("content".into(), p.clone());
            obj.insert("data".into(), p);
        } else {
            obj.remove("content");
            obj.remove("data");
        }
    }
    assert_eq!(serde_json::to_value(&decoded).unwrap(), expected);
    decoded
}
