//! What a page shows when it cannot be shown: the API's error, as a page.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use askama::Template;

use super::{assets, Lang, Nav};
use crate::store::StoreError;
use crate::web::api::error::ApiError;

/// A page's failure: the REST layer's error, rendered as HTML instead of JSON.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PageError(pub ApiError);

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> Self {
        PageError(e)
    }
}

impl From<StoreError> for PageError {
    fn from(e: StoreError) -> Self {
        PageError(e.into())
    }
}

/// What a page handler returns.
pub type PageResult = Result<HttpResponse, PageError>;

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    nav: Nav,
    status: u16,
    /// What the status means, in the page's language.
    headline: &'static str,
    message: String,
}

impl PageError {
    /// The error as a page inside the console's layout (`nav` from the request it answers).
    pub fn page(&self, nav: Nav) -> HttpResponse {
        let message = match &self.0 {
            ApiError::Internal(detail) => {
                log::error!("console page failed: {detail}");
                "internal error; see the admin's log".to_string()
            }
            other => other.to_string(),
        };
        let status = self.status_code().as_u16();
        let headline = match nav.t(&format!("error_{status}")) {
            "?" => nav.t("error_500"),
            words => words,
        };
        let page = ErrorPage {
            nav,
            status,
            headline,
            message,
        };
        let html = page.render().unwrap_or_else(|_| "error".to_string());
        HttpResponse::build(self.status_code())
            .content_type("text/html; charset=utf-8")
            .body(html)
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        self.0.status_code()
    }

    /// Without a request at hand: the page in English without the navigation bar (the
    /// session middleware renders it with both; see `require_session`).
    fn error_response(&self) -> HttpResponse {
        self.page(Nav {
            admin: false,
            lang: Lang::En,
            user: None,
            active: "",
            asset_version: assets::VERSION,
        })
    }
}
