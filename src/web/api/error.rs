//! The REST API's one error type and its HTTP mapping.
//!
//! Every error answers JSON `{"error": "...", "field": "..."}` (`field` only when one input is
//! to blame). Database failures answer 500 with a generic message; the detail goes to the log,
//! never to the client.

use std::borrow::Cow;

use actix_web::http::header::RETRY_AFTER;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use crate::store::StoreError;
use crate::timing::ScheduleError;

/// What went wrong in a REST call, by the status it answers.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the input is unusable.
    #[error("{message}")]
    BadRequest {
        /// For the user.
        message: String,
        /// The input field to blame, camelCase as in the request (`addressList[2]` for an item).
        field: Option<Cow<'static, str>>,
    },
    /// 400: several inputs are unusable, each named (a form shows them all at once).
    #[error("{}", .0.first().map(|p| p.message.as_str()).unwrap_or("invalid input"))]
    Invalid(Vec<FieldProblem>),
    /// 429: too many attempts; retry after the given seconds.
    #[error("{message}")]
    TooManyRequests {
        /// For the user.
        message: String,
        /// Seconds until a retry can succeed (`Retry-After`).
        retry_after_secs: u64,
    },
    /// 401: no valid session or token.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: logged in, but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// 404: the named resource does not exist.
    #[error("{message}")]
    NotFound {
        /// For the user.
        message: String,
        /// The input field that named it, if it came from the body or query.
        field: Option<&'static str>,
    },
    /// 413: the body is larger than the API reads.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 409: the request clashes with the current state.
    #[error("{0}")]
    Conflict(String),
    /// 502: an executor could not be reached or refused.
    #[error("{0}")]
    BadGateway(String),
    /// 503: an actor the call needs is gone (shutting down).
    #[error("{0}")]
    Unavailable(String),
    /// 500: a database or internal failure; logged, never shown.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result of a REST handler.
pub type ApiResult<T> = Result<T, ApiError>;

/// One unusable input of several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldProblem {
    /// The input field to blame, camelCase as in the request.
    pub field: Cow<'static, str>,
    /// What is wrong with it, for the user.
    #[serde(rename = "error")]
    pub message: String,
}

/// The problems one input has, gathered so that a form can show them all at once rather than
/// one per submit.
#[derive(Debug, Default)]
pub struct Problems {
    found: Vec<FieldProblem>,
    /// A failure that is not about the input (the database): answered before any problem.
    other: Option<ApiError>,
}

impl Problems {
    /// Keeps the problem `e` names.
    pub fn note(&mut self, e: ApiError) {
        match e {
            ApiError::BadRequest {
                message,
                field: Some(field),
            } => self.found.push(FieldProblem { field, message }),
            ApiError::Invalid(more) => self.found.extend(more),
            other => {
                self.other.get_or_insert(other);
            }
        }
    }

    /// `result`'s value, or `None` with its problem kept.
    pub fn ok<T>(&mut self, result: ApiResult<T>) -> Option<T> {
        result.map_err(|e| self.note(e)).ok()
    }

    /// Whether `field` already has a problem (a later rule about it would only repeat it).
    pub fn has(&self, field: &str) -> bool {
        self.found.iter().any(|p| p.field == field)
    }

    /// Ok when nothing was found; one problem answers as a plain 400 naming its field.
    pub fn into_result(mut self) -> ApiResult<()> {
        if let Some(other) = self.other {
            return Err(other);
        }
        match self.found.len() {
            0 => Ok(()),
            1 => {
                let p = self.found.remove(0);
                Err(ApiError::BadRequest {
                    message: p.message,
                    field: Some(p.field),
                })
            }
            _ => Err(ApiError::Invalid(self.found)),
        }
    }
}

impl ApiError {
    /// 400 blaming `field`.
    pub fn field(field: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        ApiError::BadRequest {
            message: message.into(),
            field: Some(field.into()),
        }
    }

    /// 400 without a single field to blame.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::BadRequest {
            message: message.into(),
            field: None,
        }
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::NotFound {
            message: message.into(),
            field: None,
        }
    }

    /// 404 naming the input field that referred to the missing thing.
    pub fn not_found_field(field: &'static str, message: impl Into<String>) -> Self {
        ApiError::NotFound {
            message: message.into(),
            field: Some(field),
        }
    }

    /// 400 for a schedule problem, blaming `field`.
    pub fn schedule(field: &'static str, e: ScheduleError) -> Self {
        ApiError::field(field, e.0)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Duplicate(what) => ApiError::Conflict(format!("{what} already exists")),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

/// The body of every error answer (its schema in the OpenAPI document).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ApiErrorBody {
    /// What went wrong, for the user.
    pub error: String,
    /// The input field to blame (camelCase, `addressList[2]` for an item), when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// With more than one bad input: every one of them (`error` and `field` name the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldProblem>>,
}

/// The error answers a handler can give, each a response in the OpenAPI document; handlers
/// list the ones they give beside their success (`responses((status = 200, …), NotFound)`).
// never built: only their OpenAPI descriptions are read
#[allow(dead_code)]
pub mod answers {
    use crate::web::api::error::ApiErrorBody;

    /// 400 with the field to blame.
    #[derive(utoipa::IntoResponses)]
    #[response(status = 400, description = "Bad input; `field` names it")]
    pub struct BadInput(ApiErrorBody);

    /// 403: the caller's role or groups do not cover it.
    #[derive(utoipa::IntoResponses)]
    #[response(status = 403, description = "Not permitted")]
    pub struct Forbidden(ApiErrorBody);

    /// 404: no such item.
    #[derive(utoipa::IntoResponses)]
    #[response(status = 404, description = "Not found")]
    pub struct NotFound(ApiErrorBody);

    /// 409: the change conflicts with the current state.
    #[derive(utoipa::IntoResponses)]
    #[response(status = 409, description = "Conflicts with the current state")]
    pub struct Conflict(ApiErrorBody);

    /// 429 with the seconds to wait.
    #[derive(utoipa::IntoResponses)]
    #[response(
        status = 429,
        description = "Too many attempts",
        headers(("Retry-After" = u64, description = "Seconds until an attempt is allowed again"))
    )]
    pub struct TooMany(ApiErrorBody);
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } | ApiError::Invalid(_) => StatusCode::BAD_REQUEST,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BadGateway(_) => StatusCode::BAD_GATEWAY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let (error, field): (String, Option<&str>) = match self {
            ApiError::BadRequest { message, field } => (message.clone(), field.as_deref()),
            ApiError::Invalid(found) => (self.to_string(), found.first().map(|p| p.field.as_ref())),
            ApiError::NotFound { message, field } => (message.clone(), *field),
            ApiError::Internal(detail) => {
                log::error!("REST API internal error: {detail}");
                ("internal error; see the admin's log".to_string(), None)
            }
            other => (other.to_string(), None),
        };
        let mut res = HttpResponse::build(self.status_code());
        if let ApiError::TooManyRequests {
            retry_after_secs, ..
        } = self
        {
            res.insert_header((RETRY_AFTER, retry_after_secs.to_string()));
        }
        res.json(ApiErrorBody {
            error,
            field: field.map(str::to_string),
            errors: match self {
                ApiError::Invalid(found) => Some(found.clone()),
                _ => None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;

    fn body(e: ApiError) -> (u16, serde_json::Value) {
        let res = e.error_response();
        let status = res.status().as_u16();
        let bytes = res.into_body().try_into_bytes().unwrap_or_default();
        (status, serde_json::from_slice(&bytes).unwrap_or_default())
    }

    #[test]
    fn errors_answer_json_with_their_status() {
        let (s, b) = body(ApiError::field("appName", "too short"));
        assert_eq!(s, 400);
        assert_eq!(b["error"], "too short");
        assert_eq!(b["field"], "appName");
        let (s, b) = body(ApiError::Conflict("taken".into()));
        assert_eq!(s, 409);
        assert!(b.get("field").is_none());
    }

    #[test]
    fn several_problems_answer_together_and_one_as_before() {
        let mut p = Problems::default();
        p.note(ApiError::field("jobDesc", "jobDesc is required"));
        p.note(ApiError::field(
            "executorTimeout",
            "executorTimeout must be 0 or more",
        ));
        assert!(p.has("jobDesc") && !p.has("author"));
        let (s, b) = body(p.into_result().unwrap_err());
        assert_eq!(s, 400);
        assert_eq!(
            (b["error"].as_str(), b["field"].as_str()),
            (Some("jobDesc is required"), Some("jobDesc"))
        );
        assert_eq!(b["errors"][1]["field"], "executorTimeout");
        assert_eq!(b["errors"][1]["error"], "executorTimeout must be 0 or more");
        let mut one = Problems::default();
        assert_eq!(one.ok(Err::<(), _>(ApiError::field("a", "bad a"))), None);
        let (_, b) = body(one.into_result().unwrap_err());
        assert!(
            b.get("errors").is_none(),
            "one problem answers as it always did: {b}"
        );
        assert!(Problems::default().into_result().is_ok());
        let mut failing = Problems::default();
        failing.note(ApiError::field("a", "bad a"));
        failing.note(ApiError::Internal("db down".into()));
        assert!(matches!(failing.into_result(), Err(ApiError::Internal(_))));
    }

    #[test]
    fn database_errors_do_not_leak() {
        let e: ApiError =
            StoreError::Database(sqlx::Error::Protocol("SELECT secret FROM x".into())).into();
        let (s, b) = body(e);
        assert_eq!(s, 500);
        assert!(!b["error"].as_str().unwrap_or_default().contains("SELECT"));
        let e: ApiError = StoreError::Duplicate("group with app name 'x'".into()).into();
        assert_eq!(body(e).0, 409);
    }
}
