//! The login page (logging in and out is the REST API's; the page's script calls it).

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::{assets, render, Lang, Nav};
use crate::web::api::auth::authenticate;
use crate::web::AppState;

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    nav: Nav,
    next: String,
}

#[derive(Deserialize)]
pub(super) struct LoginQuery {
    next: Option<String>,
}

/// Only a path on this admin may follow a login (`//host` and `/\host` leave it).
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_string(),
        _ => "/".to_string(),
    }
}

/// `GET /login`: the form; someone already logged in goes straight on.
pub(super) async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<LoginQuery>,
) -> HttpResponse {
    let next = safe_next(query.next.as_deref());
    if let Ok(Some(p)) = authenticate(&state, &req).await {
        if p.session.is_some() {
            return HttpResponse::SeeOther()
                .insert_header(("Location", next))
                .finish();
        }
    }
    render(&LoginPage {
        nav: Nav {
            admin: false,
            lang: Lang::of(&req),
            user: None,
            active: "login",
            asset_version: assets::VERSION,
        },
        next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_follow_a_login() {
        assert_eq!(safe_next(Some("/jobs?group=1")), "/jobs?group=1");
        assert_eq!(safe_next(Some("//evil.example")), "/");
        assert_eq!(safe_next(Some("/\\evil.example")), "/");
        assert_eq!(safe_next(Some("https://evil.example")), "/");
        assert_eq!(safe_next(None), "/");
    }
}
