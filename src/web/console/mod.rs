//! The console: server-rendered pages for operators, on the same sessions as the REST API.
//!
//! Pages only read; every change goes through `/api/v1` from the page's script, so the API's
//! validation, permissions and Origin check are the only ones. Pages need a session (else they
//! redirect to `/login`) and answer with a strict Content-Security-Policy: no inline script, no
//! outside source.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::{from_fn, Compress, Next};
use actix_web::{web, HttpMessage, HttpResponse};
use askama::Template;

use super::api::auth::{authenticate, Principal};
use super::AppState;

mod account;
mod api_docs;
mod api_schema_text;
mod api_text;
mod assets;
mod audit;
mod audit_change;
pub mod chart;
mod dashboard;
mod errors;
mod executors;
mod glue;
mod i18n;
mod job_edit;
mod jobs;
mod login;
mod pager;
mod run_cause;
mod runs;
mod system;
mod users;
mod workflow_edit;
mod workflow_runs;
mod workflows;

pub use i18n::Lang;

/// What the layout shows around every page: language, user, which tab is open.
pub struct Nav {
    /// Whether the user is an administrator (the Users tab).
    pub admin: bool,
    /// The page's language.
    pub lang: Lang,
    /// The logged-in user's name (`None` on the login page).
    pub user: Option<String>,
    /// The tab to mark as open.
    pub active: &'static str,
    /// Appended to asset URLs so a new build's assets are not taken from a browser's cache.
    pub asset_version: &'static str,
}

impl Nav {
    /// The page text for `key`.
    pub fn t(&self, key: &str) -> &'static str {
        self.lang.t(key)
    }

    /// An enum value's words (`kind` is `schedule`, `misfire`, `glue`, `route`, `block`,
    /// `overflow` or `trigger`); the value itself where the catalogue has none.
    pub fn choice<'a>(&self, kind: &str, value: &'a str) -> std::borrow::Cow<'a, str> {
        match self.lang.t(&format!("{kind}_{value}")) {
            "?" => value.into(),
            words => words.into(),
        }
    }
}

/// Each page is its own resource (not one catch-all scope), so that paths the console does
/// not serve, such as an embedded executor's, reach whoever else is mounted.
macro_rules! pages {
    ($cfg:expr, $($path:literal => $handler:expr),+ $(,)?) => {
        $(
            $cfg.service(
                web::resource($path)
                    .wrap(from_fn(require_session))
                    .wrap(from_fn(security_headers))
                    .wrap(Compress::default())
                    .route(web::get().to($handler)),
            );
        )+
    };
}

/// Mounts the console's pages and assets.
pub fn mount(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/static/{file}")
            .wrap(Compress::default())
            .route(web::get().to(assets::serve)),
    )
    .service(
        web::resource("/login")
            .wrap(from_fn(security_headers))
            .wrap(Compress::default())
            .route(web::get().to(login::page)),
    );
    pages!(cfg,
        "/" => dashboard::page,
        "/jobs" => jobs::list,
        "/jobs/new" => job_edit::new,
        "/jobs/{id}" => job_edit::edit,
        "/jobs/{id}/glue" => glue::page,
        "/workflows" => workflows::list,
        "/workflows/new" => workflow_edit::new,
        "/workflows/{id}" => workflow_edit::edit,
        "/workflows/{id}/runs" => workflow_runs::list,
        "/workflow-runs/{id}" => workflow_runs::detail,
        "/runs" => runs::list,
        "/runs/{id}" => runs::detail,
        "/executors" => executors::list,
        "/executors/new" => executors::new,
        "/executors/{id}" => executors::edit,
        "/users" => users::list,
        "/users/new" => users::new,
        "/users/{id}" => users::edit,
        "/tokens" => users::tokens,
        "/audit" => audit::page,
        "/system" => system::page,
        "/account/password" => account::password,
        "/api-docs" => api_docs::page,
    );
}

/// A rendered page, or 500 when a template fails (which the compiler mostly rules out).
fn render(page: &impl Template) -> HttpResponse {
    match page.render() {
        Ok(html) => HttpResponse::Ok()
            .content_type("text/html; charset=utf-8")
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(html),
        Err(e) => {
            log::error!("console page failed to render: {e}");
            HttpResponse::InternalServerError().body("the page failed to render")
        }
    }
}

/// The layout of a page for `principal`.
fn nav(req: &actix_web::HttpRequest, principal: &Principal, active: &'static str) -> Nav {
    Nav {
        admin: principal.is_admin(),
        lang: Lang::of(req),
        user: Some(principal.user.username.clone()),
        active,
        asset_version: assets::VERSION,
    }
}

/// Middleware: a page without a valid session redirects to the login page, which comes back
/// to the page after logging in.
async fn require_session(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<actix_web::body::EitherBody<impl MessageBody>>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Err(actix_web::error::ErrorInternalServerError("state missing"));
    };
    match authenticate(&state, req.request()).await? {
        Some(principal) if principal.session.is_some() => {
            req.extensions_mut().insert(principal.clone());
            let res = next.call(req).await?;
            // a page that failed is shown inside the layout, in the user's language
            let failed = res
                .response()
                .error()
                .and_then(|e| e.as_error::<errors::PageError>())
                .map(|e| e.page(nav(res.request(), &principal, "")));
            Ok(match failed {
                Some(page) => res.into_response(page).map_into_right_body(),
                None => res.map_into_left_body(),
            })
        }
        _ => {
            let target = match req.query_string() {
                "" => req.path().to_string(),
                q => format!("{}?{q}", req.path()),
            };
            let location = match target.as_str() {
                "/" => "/login".to_string(),
                t => format!("/login?next={}", url_encode(t)),
            };
            let response = HttpResponse::SeeOther()
                .insert_header((header::LOCATION, location))
                .finish();
            Ok(req.into_response(response).map_into_right_body())
        }
    }
}

/// Percent-encodes everything but unreserved characters and `/`.
pub(super) fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Every page's policy: no inline or outside script or style, no framing.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// [`CONTENT_SECURITY_POLICY`] that also lets `<style nonce="{nonce}">` apply: CodeMirror
/// writes its styles into such an element. Scripts stay `'self'` only.
fn policy_with_style_nonce(nonce: &str) -> String {
    CONTENT_SECURITY_POLICY.replacen(
        "style-src 'self'",
        &format!("style-src 'self' 'nonce-{nonce}'"),
        1,
    )
}

/// Middleware: every page forbids inline and outside scripts, framing and MIME sniffing.
async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    // a page that set its own policy (the GLUE page's style nonce) keeps it
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        );
    }
    for (name, value) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    Ok(res)
}

/// The executor groups `principal` may see, in id order.
async fn visible_groups(
    state: &AppState,
    principal: &Principal,
) -> Result<Vec<crate::model::JobGroup>, crate::store::StoreError> {
    let groups = state.store.list_groups().await?;
    Ok(groups
        .into_iter()
        .filter(|g| principal.can_access(g.id))
        .collect())
}

/// Where a form saves: `POST /api/v1/{collection}` for a new item (`id` 0), else
/// `PUT /api/v1/{collection}/{id}`.
fn save_target(collection: &str, id: i32) -> (String, &'static str) {
    match id {
        0 => (format!("/api/v1/{collection}"), "POST"),
        id => (format!("/api/v1/{collection}/{id}"), "PUT"),
    }
}

/// Epoch ms as `YYYY-MM-DD HH:MM:SS UTC`: what a page shows until its script puts the time in
/// the browser's zone.
fn utc_text(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_targets_are_encoded() {
        assert_eq!(
            url_encode("/jobs?group=1&x=a b"),
            "/jobs%3Fgroup%3D1%26x%3Da%20b"
        );
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
    }
}
