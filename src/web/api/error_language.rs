//! Error messages in the reader's language: an answer of 400 and up whose reader chose Chinese
//! (the console's language cookie, else `Accept-Language`) has its `error` texts translated
//! through the message catalogue. `field` and the status stay as they are: they are what
//! programs read; clients that send neither keep the English.

use actix_web::body::{self, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::InternalError;
use actix_web::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use actix_web::middleware::Next;
use actix_web::{Error, HttpResponse};
use serde_json::Value;

use crate::web::lang::Lang;

/// Error answers larger than this are passed on untouched (an error body is a few lines).
const MOST_TRANSLATED: usize = 256 * 1024;

/// Middleware of `/api/v1`: see the module's doc.
pub(super) async fn errors_in_reader_language(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let lang = Lang::of(req.request());
    if lang == Lang::En {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    }
    match next.call(req).await {
        Ok(res) => {
            let (http_req, res) = res.into_parts();
            Ok(ServiceResponse::new(
                http_req,
                in_language(res.map_into_boxed_body(), lang).await,
            ))
        }
        // an inner middleware's refusal (no login, a cross-site write): the same error, worded
        Err(e) => {
            let res = in_language(e.error_response(), lang).await;
            Err(InternalError::from_response(e.to_string(), res).into())
        }
    }
}

/// `res` with its error texts in `lang`, when it is a JSON error answer.
async fn in_language(res: HttpResponse, lang: Lang) -> HttpResponse {
    let is_json = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if res.status().as_u16() < 400 || !is_json {
        return res;
    }
    let (head, body) = res.into_parts();
    let bytes = match body::to_bytes_limited(body, MOST_TRANSLATED).await {
        Ok(Ok(bytes)) => bytes,
        // unreadable or too long: answered as an empty error rather than half of one
        _ => Default::default(),
    };
    let translated = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut answer) => {
            translate(&mut answer, lang);
            serde_json::to_vec(&answer).map(Into::into).unwrap_or(bytes)
        }
        Err(_) => bytes,
    };
    let mut res = head.set_body(BoxBody::new(translated));
    res.headers_mut().remove(CONTENT_LENGTH);
    res
}

/// The answer's `error` and each `errors[].error` in `lang`.
fn translate(answer: &mut Value, lang: Lang) {
    let one = |v: &mut Value| {
        if let Some(text) = v.as_str() {
            let text = lang.message(text).into_owned();
            *v = Value::String(text);
        }
    };
    if let Some(error) = answer.get_mut("error") {
        one(error);
    }
    if let Some(Value::Array(errors)) = answer.get_mut("errors") {
        for problem in errors {
            if let Some(error) = problem.get_mut("error") {
                one(error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_and_each_problem_are_translated_and_fields_kept() {
        let mut answer = json!({
            "error": "jobDesc is required",
            "field": "jobDesc",
            "errors": [
                {"field": "jobDesc", "error": "jobDesc is required"},
                {"field": "x", "error": "a text no pattern knows"}
            ]
        });
        translate(&mut answer, Lang::Zh);
        assert_eq!(answer["field"], "jobDesc");
        assert_ne!(answer["error"], "jobDesc is required", "{answer}");
        assert!(answer["error"].as_str().unwrap().contains("jobDesc"));
        assert_eq!(answer["errors"][0]["error"], answer["error"]);
        assert_eq!(answer["errors"][1]["error"], "a text no pattern knows");
    }
}
