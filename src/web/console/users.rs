//! Users (administrators only) and API tokens (everyone's own).

use actix_web::{web, HttpRequest};
use askama::Template;

use super::errors::PageResult;
use super::{nav, render, save_target, utc_text, Nav};
use crate::model::{JobGroup, Role, User};
use crate::web::api::auth::Principal;
use crate::web::api::users;
use crate::web::AppState;

/// A user as listed.
struct UserRow {
    user: User,
    admin: bool,
    groups: String,
}

#[derive(Template)]
#[template(path = "users.html")]
struct UsersPage {
    nav: Nav,
    users: Vec<UserRow>,
    me: i32,
}

/// `GET /users` (administrators).
pub(super) async fn list(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
) -> PageResult {
    principal.require_admin()?;
    let groups = state.store.list_groups().await?;
    let users = state
        .store
        .list_users()
        .await?
        .into_iter()
        .map(|user| UserRow {
            admin: user.role == Role::Admin,
            groups: user
                .permission
                .iter()
                .map(|id| {
                    groups
                        .iter()
                        .find(|g| g.id == *id)
                        .map_or_else(|| id.to_string(), |g| g.app_name.clone())
                })
                .collect::<Vec<_>>()
                .join(", "),
            user,
        })
        .collect();
    Ok(render(&UsersPage {
        nav: nav(&req, &principal, "users"),
        me: principal.user.id,
        users,
    }))
}

/// A group a normal user may be given, and whether this one has it.
struct GroupChoice {
    group: JobGroup,
    granted: bool,
}

#[derive(Template)]
#[template(path = "user_edit.html")]
struct UserForm {
    nav: Nav,
    user: User,
    admin: bool,
    groups: Vec<GroupChoice>,
    api_url: String,
    api_method: &'static str,
}

async fn form(
    state: &AppState,
    req: &HttpRequest,
    principal: &Principal,
    user: User,
) -> PageResult {
    principal.require_admin()?;
    let groups = state
        .store
        .list_groups()
        .await?
        .into_iter()
        .map(|group| GroupChoice {
            granted: user.permission.contains(&group.id),
            group,
        })
        .collect();
    let (api_url, api_method) = save_target("users", user.id);
    Ok(render(&UserForm {
        nav: nav(req, principal, "users"),
        admin: user.role == Role::Admin,
        user,
        groups,
        api_url,
        api_method,
    }))
}

/// `GET /users/new`.
pub(super) async fn new(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
) -> PageResult {
    let user = User {
        id: 0,
        username: String::new(),
        password_hash: String::new(),
        role: Role::User,
        permission: Vec::new(),
    };
    form(&state, &req, &principal, user).await
}

/// `GET /users/{id}`.
pub(super) async fn edit(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    id: web::Path<i32>,
) -> PageResult {
    let user = users::load_user(&state, &principal, id.into_inner()).await?;
    form(&state, &req, &principal, user).await
}

/// A token as listed.
struct TokenRow {
    id: i32,
    name: String,
    owner: String,
    created: i64,
    created_utc: String,
    last_used: i64,
    last_used_utc: String,
    expires: i64,
    expires_utc: String,
}

#[derive(Template)]
#[template(path = "tokens.html")]
struct TokensPage {
    nav: Nav,
    tokens: Vec<TokenRow>,
    all: bool,
}

/// `GET /tokens`: one's own tokens (an administrator's page lists everyone's).
pub(super) async fn tokens(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
) -> PageResult {
    let all = principal.is_admin();
    let tokens = if all {
        state.store.list_all_api_tokens().await?
    } else {
        state.store.list_api_tokens(principal.user.id).await?
    };
    let users = state.store.list_users().await?;
    let tokens = tokens
        .into_iter()
        .map(|t| TokenRow {
            id: t.id,
            owner: users
                .iter()
                .find(|u| u.id == t.user_id)
                .map(|u| u.username.clone())
                .unwrap_or_default(),
            name: t.name,
            created: t.created_time,
            created_utc: utc_text(t.created_time),
            last_used: t.last_used_time,
            last_used_utc: utc_text(t.last_used_time),
            expires: t.expire_time,
            expires_utc: utc_text(t.expire_time),
        })
        .collect();
    Ok(render(&TokensPage {
        nav: nav(&req, &principal, "tokens"),
        tokens,
        all,
    }))
}
