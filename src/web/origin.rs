//! Cross-site request forgery: a browser sends the session cookie with a form or script on
//! another site that posts here, and marks such a request with that site's `Origin` (or
//! `Referer`). A state-changing request from another origin is refused with 403 unless it
//! authenticates with a bearer token, which no other site can make a browser send.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::web;

use super::api::auth::bearer_token;
use super::api::error::ApiError;
use super::AppState;

/// Middleware: refuses a cross-origin `POST`, `PUT`, `PATCH` or `DELETE` (403).
pub async fn same_origin_writes(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let safe = matches!(
        *req.method(),
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    );
    // only a bearer token exempts a request: with any other `Authorization` (a proxy's Basic
    // auth, which the browser adds by itself) the session cookie is what authenticates it
    if !safe && bearer_token(req.headers()).is_none() {
        let public = req
            .app_data::<web::Data<AppState>>()
            .and_then(|s| s.settings.public_url.clone());
        if let Some(sender) = cross_origin_sender(&req, public.as_ref()) {
            log::warn!(
                "{} {} refused: sent from another site ({sender})",
                req.method(),
                req.path()
            );
            return Err(ApiError::Forbidden(format!(
                "cross-site request refused: it comes from {sender}, not from this admin"
            ))
            .into());
        }
    }
    next.call(req).await
}

/// The other origin a request was sent from, or `None` when it is this admin's own (or the
/// request names none, as non-browser clients do).
fn cross_origin_sender(req: &ServiceRequest, public: Option<&url::Url>) -> Option<String> {
    let text = |name| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let sender = text(header::ORIGIN).or_else(|| text(header::REFERER))?;
    let Ok(sender_url) = url::Url::parse(sender) else {
        // `Origin: null` (sandboxed frames, some redirects) or garbage: not this admin
        return Some(sender.to_string());
    };
    let info = req.connection_info();
    let own = url::Url::parse(&format!("{}://{}", info.scheme(), info.host())).ok();
    let allowed = own
        .iter()
        .chain(public)
        .any(|u| u.origin() == sender_url.origin());
    (!allowed).then(|| sender_url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn sender(headers: &[(&str, &str)], public: Option<&str>) -> Option<String> {
        let mut req = TestRequest::post().uri("/api/v1/jobs");
        for (name, value) in headers {
            req = req.insert_header((*name, *value));
        }
        let req = req.to_srv_request();
        let public = public.map(|p| url::Url::parse(p).unwrap());
        cross_origin_sender(&req, public.as_ref())
    }

    #[test]
    fn only_this_admins_origin_may_write() {
        let host = ("Host", "admin.local:8080");
        assert_eq!(sender(&[host], None), None, "no Origin: a script or curl");
        assert_eq!(
            sender(&[host, ("Origin", "http://admin.local:8080")], None),
            None
        );
        assert_eq!(
            sender(&[host, ("Origin", "http://evil.example")], None).as_deref(),
            Some("http://evil.example")
        );
        assert_eq!(
            sender(&[host, ("Referer", "http://evil.example/page?x=1")], None).as_deref(),
            Some("http://evil.example")
        );
        assert_eq!(
            sender(&[host, ("Referer", "http://admin.local:8080/jobs")], None),
            None
        );
        assert_eq!(
            sender(&[host, ("Origin", "null")], None).as_deref(),
            Some("null")
        );
        // behind a proxy: the public URL is this admin too
        let public = Some("https://jobs.example.com/");
        assert_eq!(
            sender(&[host, ("Origin", "https://jobs.example.com")], public),
            None
        );
        assert!(sender(
            &[host, ("Origin", "https://jobs.example.com.evil.io")],
            public
        )
        .is_some());
    }
}
