//! Input the database cannot hold is refused before any handler sees it: a JSON body or query
//! parameter with a NUL character answers 400 naming the field (PostgreSQL refuses NUL in text;
//! without this check it surfaced as a 500 from deep inside a write).

use std::future::Future;
use std::pin::Pin;

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpRequest};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ApiError;
use crate::model::unstorable;

/// A JSON body whose every string the database can store, read as `T`. Size limits and syntax
/// errors are those of the API's `JsonConfig`.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    /// The body.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let raw = web::Json::<Value>::from_request(req, payload);
        Box::pin(async move {
            let value = raw.await?.into_inner();
            Ok(Json(parse_value(value)?))
        })
    }
}

/// An optional JSON body read as `T`: an empty (or blank) body is `T::default()`; a given one
/// must say it is JSON (`application/json` or a `+json` type) and is read like every other.
pub fn optional_json<T: DeserializeOwned + Default>(
    req: &HttpRequest,
    body: &[u8],
) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    if !is_json(req) {
        return Err(ApiError::bad_request(
            "invalid JSON body: Content type error (send Content-Type: application/json)",
        ));
    }
    let value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))?;
    parse_value(value)
}

/// Whether the request says its body is JSON (`application/json`, or a `+json` type).
fn is_json(req: &HttpRequest) -> bool {
    use actix_web::HttpMessage as _;
    req.mime_type().ok().flatten().is_some_and(|m| {
        m.type_() == actix_web::mime::APPLICATION
            && (m.subtype() == actix_web::mime::JSON || m.suffix() == Some(actix_web::mime::JSON))
    })
}

/// Checks a parsed body's strings, then reads it as `T`.
pub fn parse_value<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    if let Some((field, why)) = find_unstorable(&value, &mut String::new()) {
        let name = if field.is_empty() {
            "body".to_string()
        } else {
            field
        };
        return Err(ApiError::field(name.clone(), format!("{name} {why}")));
    }
    // the error names the field it met (`maxQueued`, `nodes[2].key`) so a client can show it
    // beside that field, as every other 400 does
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path.is_empty() || path == "." {
            ApiError::bad_request(format!("invalid JSON body: {}", e.inner()))
        } else {
            ApiError::field(
                path.clone(),
                format!("invalid JSON body: {path}: {}", e.inner()),
            )
        }
    })
}

/// The path (`jobDesc`, `addressList[2]`, `a.b`) of the first string or key that cannot be
/// stored, with why.
fn find_unstorable(value: &Value, path: &mut String) -> Option<(String, String)> {
    match value {
        Value::String(s) => unstorable(s).map(|why| (path.clone(), why)),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = find_unstorable(item, path);
            path.truncate(len);
            found
        }),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key.replace('\0', "\\u0000"));
            let found = match unstorable(key) {
                Some(why) => Some((path.clone(), format!("(a key) {why}"))),
                None => find_unstorable(item, path),
            };
            path.truncate(len);
            found
        }),
        _ => None,
    }
}

/// Middleware: a query parameter (name or value) with a NUL answers 400 naming it.
pub async fn check_query(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if let Some(err) = query_problem(req.query_string()) {
        return Err(err.into());
    }
    next.call(req).await
}

fn query_problem(query: &str) -> Option<ApiError> {
    url::form_urlencoded::parse(query.as_bytes()).find_map(|(key, value)| {
        let why = unstorable(&key).or_else(|| unstorable(&value))?;
        let name = key.replace('\0', "\\u0000");
        Some(ApiError::field(name.clone(), format!("{name} {why}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(e: ApiError) -> String {
        match e {
            ApiError::BadRequest { field, .. } => field.unwrap_or_default().into_owned(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_first_unstorable_string_is_named_by_its_path() {
        let bad = |v: Value| field(parse_value::<Value>(v).unwrap_err());
        assert_eq!(bad(json!({"jobDesc": "a\u{0}b"})), "jobDesc");
        assert_eq!(
            bad(json!({"addressList": ["ok", "x\u{0}"]})),
            "addressList[1]"
        );
        assert_eq!(bad(json!({"a": {"b": "\u{0}"}})), "a.b");
        assert_eq!(bad(json!("\u{0}")), "body");
        let ok: Value = parse_value(json!({"jobDesc": "fine", "n": 1})).unwrap();
        assert_eq!(ok["n"], 1);
    }

    #[test]
    fn query_parameters_with_nul_are_named() {
        assert!(query_problem("jobDesc=abc&limit=5").is_none());
        let e = query_problem("limit=5&jobDesc=a%00b").unwrap();
        assert_eq!(field(e), "jobDesc");
    }
}

/// Generators of request bodies for the REST modules' property tests.
#[cfg(test)]
pub(crate) mod strategies {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    /// Any JSON value, at most three levels deep; strings include NUL and non-ASCII text.
    pub(crate) fn json_value() -> BoxedStrategy<Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            ".{0,12}".prop_map(Value::String),
            "[a-z\u{0}é]{0,3}".prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 10, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
        .boxed()
    }

    /// An object with any subset of `fields`, each holding a value from its own strategy
    /// (usually) or any JSON value.
    pub(crate) fn object(
        fields: Vec<(&'static str, BoxedStrategy<Value>)>,
    ) -> BoxedStrategy<Value> {
        let parts: Vec<BoxedStrategy<Option<(&'static str, Value)>>> = fields
            .into_iter()
            .map(|(key, good)| {
                prop::option::weighted(0.5, prop_oneof![9 => good, 1 => json_value()])
                    .prop_map(move |v| v.map(|v| (key, v)))
                    .boxed()
            })
            .collect();
        parts
            .prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .flatten()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect::<Map<_, _>>(),
                )
            })
            .boxed()
    }

    /// One of `choices`, or any short text.
    pub(crate) fn text(choices: &'static [&'static str]) -> BoxedStrategy<Value> {
        prop_oneof![
            3 => prop::sample::select(choices).prop_map(|s| json!(s)),
            1 => ".{0,20}".prop_map(Value::String),
            1 => "[ ]?[A-Za-z0-9_.@:/-]{0,68}[ ]?".prop_map(Value::String),
        ]
        .boxed()
    }

    /// An integer, usually in `lo..=hi`.
    pub(crate) fn int(lo: i64, hi: i64) -> BoxedStrategy<Value> {
        prop_oneof![
            3 => (lo..=hi).prop_map(Value::from),
            1 => any::<i64>().prop_map(Value::from),
        ]
        .boxed()
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::strategies::json_value;
    use super::*;

    fn contains_nul(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains('\0'),
            Value::Array(items) => items.iter().any(contains_nul),
            Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v)),
            _ => false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A body is read, or refused with 400; a refusal for a NUL names where it is.
        #[test]
        fn bodies_are_read_or_refused_with_400(value in json_value()) {
            let has_nul = contains_nul(&value);
            match parse_value::<Value>(value.clone()) {
                Ok(read) => {
                    prop_assert!(!has_nul);
                    prop_assert_eq!(read, value);
                }
                Err(ApiError::BadRequest { message, field }) => {
                    prop_assert!(has_nul);
                    prop_assert!(message.contains("NUL"), "{message}");
                    prop_assert!(field.is_some_and(|f| !f.is_empty()));
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }

        /// Query strings of any bytes: a NUL anywhere is named, anything else passes.
        #[test]
        fn query_strings_with_nul_are_refused(query in "([a-zA-Z%0-9=&+\u{0}é]|%00|%FF|%){0,30}") {
            let decoded_nul = url::form_urlencoded::parse(query.as_bytes())
                .any(|(k, v)| k.contains('\0') || v.contains('\0'));
            match query_problem(&query) {
                Some(ApiError::BadRequest { field: Some(_), message }) => {
                    prop_assert!(decoded_nul);
                    prop_assert!(message.contains("NUL"));
                }
                Some(other) => prop_assert!(false, "{other:?}"),
                None => prop_assert!(!decoded_nul),
            }
        }
    }
}
