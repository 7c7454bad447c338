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

/// Only a path on this admin may follow a login: one starting with a single `/` followed by
/// anything but `/` or `\` (`//host`, `/\host` leave it), with no control character, written
/// or percent-encoded (browsers drop a tab or a line break and read `/\t/host` as `//host`).
/// Anything else goes to `/`. The login page's script applies the same rule.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if is_local_path(n) => n.to_string(),
        _ => "/".to_string(),
    }
}

fn is_local_path(next: &str) -> bool {
    let bytes = next.as_bytes();
    let local = bytes.first() == Some(&b'/') && !matches!(bytes.get(1), Some(b'/' | b'\\'));
    local && !next.chars().any(char::is_control) && !has_encoded_control(next)
}

/// Whether `text` holds `%XX` for a control character (`%00`–`%1F`, `%7F`), or for `/` or `\`
/// right after the leading slash.
fn has_encoded_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(3).enumerate().any(|(at, w)| {
        let Some(code) = (w[0] == b'%')
            .then(|| std::str::from_utf8(&w[1..]).ok())
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        else {
            return false;
        };
        code < 0x20 || code == 0x7f || (at == 1 && matches!(code, b'/' | b'\\'))
    })
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
        for bad in [
            "/\t/evil.example",
            "/\r\nSet-Cookie: x=1",
            "/\u{1}",
            "/\u{7f}",
            "/%09/evil.example",
            "/%0d%0aSet-Cookie:x",
            "/jobs%0A",
            "/%2F/evil.example",
            "/%5cevil.example",
            "",
            "jobs",
            "\\\\evil.example",
        ] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad:?}");
        }
        for good in ["/", "/jobs", "/runs?job=3&from=1", "/a%20b", "/x/%2Fy"] {
            assert_eq!(safe_next(Some(good)), good);
        }
    }
}
