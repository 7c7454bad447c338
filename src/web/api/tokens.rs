//! `/api/v1/tokens`: API tokens for scripts. A token acts as the user who made it, with that
//! user's rights; its secret is shown once, at creation, and only its hash is stored. Tokens are
//! made from a logged-in session only, so revoking a token leaves none it made behind.

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::audit::{self, Change};
use super::auth::{token_hash, Principal};
use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use crate::clock::now_ms;
use crate::model::ApiToken;
use crate::password::random_secret;
use crate::web::AppState;

/// What every token's secret starts with, so a leaked one is easy to recognise and search for.
pub const TOKEN_PREFIX: &str = "jw_";
/// Random characters after the prefix (~238 bits).
const SECRET_LEN: usize = 40;
/// Longest lifetime a token may be given.
const MAX_DAYS: i64 = 3650;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/tokens", web::get().to(list))
        .route("/tokens", web::post().to(create))
        .route("/tokens/{id}", web::delete().to(revoke));
}

/// A token as listed (never its secret).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    id: i32,
    name: String,
    user_id: i32,
    username: String,
    created_time: i64,
    last_used_time: i64,
    expire_time: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Created {
    #[serde(flatten)]
    view: TokenView,
    /// The secret: shown this once.
    token: String,
}

fn view(t: ApiToken, username: String) -> TokenView {
    TokenView {
        id: t.id,
        name: t.name,
        user_id: t.user_id,
        username,
        created_time: t.created_time,
        last_used_time: t.last_used_time,
        expire_time: t.expire_time,
    }
}

/// `GET /tokens`: one's own tokens; an administrator sees everyone's.
#[utoipa::path(
    get,
    path = "/tokens",
    tag = "tokens",
    summary = "API tokens: one's own; an administrator sees everyone's",
    responses(
        (status = 200, description = "The tokens, never their secrets", body = Vec<TokenView>)
    )
)]
async fn list(state: web::Data<AppState>, principal: Principal) -> ApiResult<HttpResponse> {
    let tokens = if principal.is_admin() {
        state.store.list_all_api_tokens().await?
    } else {
        state.store.list_api_tokens(principal.user.id).await?
    };
    let users = state.store.list_users().await?;
    let name_of = |id: i32| {
        users
            .iter()
            .find(|u| u.id == id)
            .map(|u| u.username.clone())
            .unwrap_or_default()
    };
    let views: Vec<TokenView> = tokens
        .into_iter()
        .map(|t| {
            let name = name_of(t.user_id);
            view(t, name)
        })
        .collect();
    Ok(HttpResponse::Ok().json(views))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    name: Option<String>,
    /// Days until it expires; absent or 0: never.
    expires_in_days: Option<i64>,
}

/// `POST /tokens {name, expiresInDays?}` → the token with its secret (shown once).
#[utoipa::path(
    post,
    path = "/tokens",
    tag = "tokens",
    summary = "Create an API token; the answer holds its secret, shown this once",
    request_body = CreateBody,
    responses(
        (status = 201, description = "Created", body = Created),
        answers::BadInput,
        answers::Forbidden
    )
)]
async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    body: Json<CreateBody>,
) -> ApiResult<HttpResponse> {
    // a token that could make tokens would outlive its own revocation through them
    if principal.session.is_none() {
        return Err(ApiError::Forbidden(
            "API tokens are created by a logged-in user (a session), not with another API token"
                .into(),
        ));
    }
    let body = body.into_inner();
    let name = body.name.unwrap_or_default().trim().to_string();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(ApiError::field(
            "name",
            "a token needs a name of 1 to 64 characters",
        ));
    }
    let days = body.expires_in_days.unwrap_or(0);
    if !(0..=MAX_DAYS).contains(&days) {
        return Err(ApiError::field(
            "expiresInDays",
            format!("expiresInDays must be 0 (never) to {MAX_DAYS}"),
        ));
    }
    let now = now_ms();
    let secret = format!("{TOKEN_PREFIX}{}", random_secret(SECRET_LEN));
    let mut token = ApiToken {
        id: 0,
        name,
        token_hash: token_hash(&secret),
        user_id: principal.user.id,
        created_time: now,
        last_used_time: 0,
        expire_time: if days == 0 {
            0
        } else {
            now + days * 86_400_000
        },
    };
    token.id = state.store.insert_api_token(&token).await?;
    record(&state, &principal, "token.create", &token, false).await;
    log::info!(
        "user '{}' created API token {} ({:?})",
        principal.user.username,
        token.id,
        token.name
    );
    Ok(HttpResponse::Created().json(Created {
        view: view(token, principal.user.username.clone()),
        token: secret,
    }))
}

/// Records a token's creation or revocation (its name and owner, never its secret or hash).
async fn record(
    state: &AppState,
    principal: &Principal,
    action: &'static str,
    t: &ApiToken,
    gone: bool,
) {
    let shown =
        serde_json::json!({"name": t.name, "userId": t.user_id, "expireTime": t.expire_time});
    let change = Change {
        action,
        target_type: "token",
        target_id: t.id.into(),
        summary: t.name.clone(),
        before: gone.then(|| shown.clone()),
        after: (!gone).then_some(shown),
    };
    audit::record(state, principal, change).await;
}

/// `DELETE /tokens/{id}`: one's own token, or anyone's for an administrator.
#[utoipa::path(
    delete,
    path = "/tokens/{id}",
    tag = "tokens",
    summary = "Revoke an API token (one's own, or anyone's for an administrator)",
    params(("id" = i32, Path, description = "The token's id")),
    responses(
        (status = 204, description = "Revoked"),
        answers::Forbidden,
        answers::NotFound
    )
)]
async fn revoke(
    state: web::Data<AppState>,
    principal: Principal,
    id: web::Path<i32>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let token = state
        .store
        .get_api_token(id)
        .await?
        .filter(|t| principal.is_admin() || t.user_id == principal.user.id)
        .ok_or_else(|| ApiError::not_found(format!("API token {id} does not exist")))?;
    state.store.delete_api_token(token.id).await?;
    record(&state, &principal, "token.revoke", &token, true).await;
    log::info!(
        "user '{}' revoked API token {} ({:?})",
        principal.user.username,
        token.id,
        token.name
    );
    Ok(HttpResponse::NoContent().finish())
}
