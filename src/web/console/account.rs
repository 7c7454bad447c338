//! The user's own account: changing one's password.

use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use super::{nav, render, Nav};
use crate::web::api::auth::Principal;

#[derive(Template)]
#[template(path = "password.html")]
struct PasswordPage {
    nav: Nav,
}

/// `GET /account/password`.
pub(super) async fn password(req: HttpRequest, principal: Principal) -> HttpResponse {
    render(&PasswordPage {
        nav: nav(&req, &principal, "password"),
    })
}
