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
    serde_json::from_value(value)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
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
