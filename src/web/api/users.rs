//! `/api/v1/users`: console users (administrators only). A user is an ADMIN (everything) or a
//! normal user (`USER`, also accepted as `NORMAL`) limited to the groups in `permission`.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::audit::{self, Change};
use super::auth::{check_new_password, hash_off_loop, Principal};
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use crate::model::{Role, User};
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/users", web::get().to(list))
        .route("/users", web::post().to(create))
        .route("/users/{id}", web::get().to(get))
        .route("/users/{id}", web::put().to(update))
        .route("/users/{id}", web::delete().to(delete))
        .route("/users/{id}/password", web::post().to(reset_password));
}

/// A user as the API shows it (never the password hash).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserView {
    id: i32,
    username: String,
    role: &'static str,
    permission: Vec<i32>,
}

impl From<&User> for UserView {
    fn from(u: &User) -> Self {
        UserView {
            id: u.id,
            username: u.username.clone(),
            role: role_name(u.role),
            permission: u.permission.clone(),
        }
    }
}

/// The API's name of a role.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Admin => "ADMIN",
        Role::User => "USER",
    }
}

fn parse_role(text: &str) -> ApiResult<Role> {
    match text.trim().to_ascii_uppercase().as_str() {
        "ADMIN" => Ok(Role::Admin),
        "USER" | "NORMAL" => Ok(Role::User),
        other => Err(ApiError::field(
            "role",
            format!("unknown role '{other}'; allowed: ADMIN, USER (NORMAL)"),
        )),
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UserBody {
    username: Option<String>,
    password: Option<String>,
    role: Option<String>,
    permission: Option<Vec<i32>>,
}

/// Checks that every group in `permission` exists.
async fn check_groups(state: &AppState, permission: &[i32]) -> ApiResult<()> {
    let groups = state.store.list_groups().await?;
    match permission
        .iter()
        .find(|id| !groups.iter().any(|g| g.id == **id))
    {
        Some(id) => Err(ApiError::field(
            "permission",
            format!("executor group {id} does not exist"),
        )),
        None => Ok(()),
    }
}

/// The user `id`, for an administrator only: 403 for anyone else, 404 when there is none.
pub(crate) async fn load_user(state: &AppState, principal: &Principal, id: i32) -> ApiResult<User> {
    principal.require_admin()?;
    state
        .store
        .get_user(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("user {id} does not exist")))
}

/// Refuses a change that would leave no administrator (nobody could manage users again).
async fn keep_an_admin(state: &AppState, leaving: &User) -> ApiResult<()> {
    if leaving.role != Role::Admin {
        return Ok(());
    }
    let admins = state
        .store
        .list_users()
        .await?
        .iter()
        .filter(|u| u.role == Role::Admin && u.id != leaving.id)
        .count();
    if admins == 0 {
        return Err(ApiError::Conflict(format!(
            "'{}' is the last administrator; make another user an administrator first",
            leaving.username
        )));
    }
    Ok(())
}

#[utoipa::path(
    get,
    path = "/users",
    tag = "users",
    summary = "Console users (administrators)",
    responses(
        (status = 200, description = "The users", body = Vec<UserView>),
        answers::Forbidden
    )
)]
async fn list(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let users = state.store.list_users().await?;
    Ok(HttpResponse::Ok().json(users.iter().map(UserView::from).collect::<Vec<_>>()))
}

#[utoipa::path(
    get,
    path = "/users/{id}",
    tag = "users",
    summary = "One user (administrators)",
    params(("id" = i32, Path, description = "The user's id")),
    responses(
        (status = 200, description = "The user", body = UserView),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    id: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let user = load_user(&state, &principal, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(UserView::from(&user)))
}

/// `POST /users {username, password, role, permission}`.
#[utoipa::path(
    post,
    path = "/users",
    tag = "users",
    summary = "Create a user (administrators)",
    request_body = UserBody,
    responses(
        (status = 201, description = "Created", body = UserView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<UserBody>,
) -> ApiResult<HttpResponse> {
    principal.require_admin()?;
    let body = body.into_inner();
    let username = body.username.unwrap_or_default().trim().to_string();
    let len = username.chars().count();
    if !(3..=64).contains(&len) {
        return Err(ApiError::field(
            "username",
            "username must be 3 to 64 characters long",
        ));
    }
    if username
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(ApiError::field(
            "username",
            "username may not contain spaces or control characters",
        ));
    }
    let password = body.password.unwrap_or_default();
    check_new_password("password", &password)?;
    let role = parse_role(body.role.as_deref().unwrap_or("USER"))?;
    let permission = body.permission.unwrap_or_default();
    check_groups(&state, &permission).await?;
    if state.store.get_user_by_name(&username).await?.is_some() {
        return Err(ApiError::Conflict(format!(
            "a user named '{username}' already exists"
        )));
    }
    let mut user = User {
        id: 0,
        username,
        password_hash: hash_off_loop(password).await?,
        role,
        permission,
    };
    user.id = state.store.insert_user(&user).await?;
    record(&state, &principal, "user.create", None, Some(&user)).await;
    log::info!(
        "user '{}' created user '{}' ({})",
        principal.user.username,
        user.username,
        role_name(user.role)
    );
    Ok(HttpResponse::Created().json(UserView::from(&user)))
}

/// `PUT /users/{id} {role?, permission?}`: the username stays; passwords change elsewhere.
#[utoipa::path(
    put,
    path = "/users/{id}",
    tag = "users",
    summary = "Change a user's role and groups (administrators)",
    params(("id" = i32, Path, description = "The user's id")),
    request_body = UserBody,
    responses(
        (status = 200, description = "Changed", body = UserView),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    id: web::Path<i32>,
    body: Json<UserBody>,
) -> ApiResult<HttpResponse> {
    let before = load_user(&state, &principal, id.into_inner()).await?;
    let body = body.into_inner();
    if body
        .username
        .as_deref()
        .is_some_and(|u| u.trim() != before.username)
    {
        return Err(ApiError::field("username", "a username cannot be changed"));
    }
    if body.password.is_some() {
        return Err(ApiError::field(
            "password",
            "passwords are reset with POST /users/{id}/password",
        ));
    }
    let mut user = before.clone();
    if let Some(role) = body.role.as_deref() {
        user.role = parse_role(role)?;
    }
    if let Some(permission) = body.permission {
        check_groups(&state, &permission).await?;
        user.permission = permission;
    }
    if user.role != Role::Admin {
        keep_an_admin(&state, &before).await?;
    }
    state.store.update_user(&user).await?;
    record(
        &state,
        &principal,
        "user.update",
        Some(&before),
        Some(&user),
    )
    .await;
    log::info!(
        "user '{}' changed user '{}' ({})",
        principal.user.username,
        user.username,
        role_name(user.role)
    );
    Ok(HttpResponse::Ok().json(UserView::from(&user)))
}

/// `DELETE /users/{id}`: the user's sessions and tokens end with it.
#[utoipa::path(
    delete,
    path = "/users/{id}",
    tag = "users",
    summary = "Delete a user with their sessions and tokens (administrators)",
    params(("id" = i32, Path, description = "The user's id")),
    responses(
        (status = 204, description = "Deleted"),
        answers::Forbidden,
        answers::NotFound,
        answers::Conflict
    )
)]
async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    id: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let user = load_user(&state, &principal, id.into_inner()).await?;
    if user.id == principal.user.id {
        return Err(ApiError::Conflict("you cannot delete yourself".into()));
    }
    keep_an_admin(&state, &user).await?;
    state.store.delete_user(user.id).await?;
    record(&state, &principal, "user.delete", Some(&user), None).await;
    log::info!(
        "user '{}' deleted user '{}'",
        principal.user.username,
        user.username
    );
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Deserialize, ToSchema)]
struct ResetBody {
    password: Option<String>,
}

/// `POST /users/{id}/password {password}`: sets a new password and ends the user's sessions.
#[utoipa::path(
    post,
    path = "/users/{id}/password",
    tag = "users",
    summary = "Set a user's password and end their sessions (administrators)",
    params(("id" = i32, Path, description = "The user's id")),
    request_body = ResetBody,
    responses(
        (status = 204, description = "Changed"),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn reset_password(
    state: web::Data<AppState>,
    principal: Principal,
    id: web::Path<i32>,
    body: Json<ResetBody>,
) -> ApiResult<HttpResponse> {
    let user = load_user(&state, &principal, id.into_inner()).await?;
    let password = body.into_inner().password.unwrap_or_default();
    check_new_password("password", &password)?;
    let user = User {
        password_hash: hash_off_loop(password).await?,
        ..user
    };
    state.store.update_user(&user).await?;
    let keep = principal.session.clone().unwrap_or_default();
    let ended = state.store.delete_user_sessions(user.id, &keep).await?;
    let mut change = change_of("user.password_reset", None, Some(&user));
    change.after = Some(serde_json::json!({"password": "reset", "sessionsEnded": ended}));
    audit::record(&state, &principal, change).await;
    log::info!(
        "user '{}' reset the password of '{}'; {ended} session(s) ended",
        principal.user.username,
        user.username
    );
    Ok(HttpResponse::NoContent().finish())
}

/// The audit entry of a change of a user (never the password hash).
fn change_of(action: &'static str, before: Option<&User>, after: Option<&User>) -> Change {
    let shown = after.or(before);
    Change {
        action,
        target_type: "user",
        target_id: shown.map_or(0, |u| u.id.into()),
        summary: shown.map(|u| u.username.clone()).unwrap_or_default(),
        before: before.and_then(|u| audit::snapshot(&UserView::from(u))),
        after: after.and_then(|u| audit::snapshot(&UserView::from(u))),
    }
}

async fn record(
    state: &AppState,
    principal: &Principal,
    action: &'static str,
    before: Option<&User>,
    after: Option<&User>,
) {
    audit::record(state, principal, change_of(action, before, after)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_accept_both_names_of_a_normal_user() {
        assert_eq!(parse_role("admin").unwrap(), Role::Admin);
        assert_eq!(parse_role("USER").unwrap(), Role::User);
        assert_eq!(parse_role("normal").unwrap(), Role::User);
        assert!(parse_role("root").is_err());
    }
}
