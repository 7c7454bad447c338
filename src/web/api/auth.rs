//! Login, logout, the current user, and the middleware that admits every other `/api/v1` call.
//!
//! A login stores a session in the database (SHA-256 of a random token; the token itself is
//! only in the client's HttpOnly cookie), so every admin of a cluster accepts it. Scripts send
//! `Authorization: Bearer <token>` instead; tokens are stored hashed the same way.

use std::future::{ready, Ready};
use std::sync::OnceLock;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::cookie::{time::Duration as CookieDuration, Cookie, SameSite};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use crate::clock::now_ms;
use crate::model::{Role, Session, User};
use crate::password::{hash_password, random_secret, reset_required, verify_password};
use crate::web::AppState;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "jobwheel_session";
/// Longest a session lasts after login, however active.
pub const SESSION_TTL_MS: i64 = 7 * 24 * 3600 * 1000;
/// A session unused for this long has expired.
pub const SESSION_IDLE_MS: i64 = 2 * 3600 * 1000;
/// A session's expiry is moved at most this often (one write per minute of use, not per call).
const SESSION_TOUCH_MS: i64 = 60 * 1000;
/// Characters of a session token (alphanumeric: ~5.95 bits each, so ~256 bits).
const TOKEN_LEN: usize = 43;
/// The one message for any failed login: it never tells which part was wrong.
const BAD_LOGIN: &str = "wrong username or password";
/// Longest accepted username/password, so hashing cannot be abused.
const MAX_CREDENTIAL_LEN: usize = 256;

/// SHA-256 hex of a session or API token: what the database holds.
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The authenticated caller of a request.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The user (or the owner of the bearer token).
    pub user: User,
    /// Hash of the session's token when the caller uses a session (not a bearer token).
    pub session: Option<String>,
}

impl Principal {
    /// Admins see everything.
    pub fn is_admin(&self) -> bool {
        self.user.role == Role::Admin
    }

    /// Whether the caller may see and change jobs, logs and executors of `group_id`.
    pub fn can_access(&self, group_id: i32) -> bool {
        self.is_admin() || self.user.permission.contains(&group_id)
    }

    /// 403 unless the caller may use `group_id`.
    pub fn require_group(&self, group_id: i32) -> ApiResult<()> {
        if self.can_access(group_id) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "no permission for executor group {group_id}"
            )))
        }
    }

    /// 403 unless the caller is an admin.
    pub fn require_admin(&self) -> ApiResult<()> {
        if self.is_admin() {
            Ok(())
        } else {
            Err(ApiError::Forbidden(
                "only administrators may do this".into(),
            ))
        }
    }

    /// The groups a normal user is limited to; `None` for admins (no limit).
    pub fn group_scope(&self) -> Option<&[i32]> {
        (!self.is_admin()).then_some(self.user.permission.as_slice())
    }
}

impl FromRequest for Principal {
    type Error = ApiError;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            req.extensions()
                .get::<Principal>()
                .cloned()
                .ok_or_else(|| ApiError::Unauthorized("not logged in".into())),
        )
    }
}

/// The bearer token of `Authorization: Bearer …`, if the request carries one; any other
/// scheme (Basic, which a browser may add by itself behind a proxy) is none.
pub(crate) fn bearer_token(headers: &header::HeaderMap) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        })
        .filter(|t| !t.is_empty())
}

/// Finds the caller from the bearer token or the session cookie; `Ok(None)` when neither is valid.
pub(crate) async fn authenticate(
    state: &AppState,
    req: &HttpRequest,
) -> ApiResult<Option<Principal>> {
    let now = now_ms();
    if let Some(token) = bearer_token(req.headers()) {
        let Some(api_token) = state.store.use_api_token(&token_hash(&token), now).await? else {
            return Ok(None);
        };
        let user = state.store.get_user(api_token.user_id).await?;
        return Ok(user.map(|user| Principal {
            user,
            session: None,
        }));
    }
    let Some(cookie) = req.cookie(SESSION_COOKIE) else {
        return Ok(None);
    };
    let hash = token_hash(cookie.value());
    let Some(session) = state.store.get_session(&hash, now).await? else {
        return Ok(None);
    };
    let idle_expiry = (now + SESSION_IDLE_MS).min(session.created_time + SESSION_TTL_MS);
    if idle_expiry - session.expire_time >= SESSION_TOUCH_MS {
        state.store.touch_session(&hash, idle_expiry).await?;
    }
    let user = state.store.get_user(session.user_id).await?;
    Ok(user.map(|user| Principal {
        user,
        session: Some(hash),
    }))
}

/// Middleware: admits a request with a valid session or bearer token (401 JSON otherwise) and
/// leaves the [`Principal`] in the request's extensions.
pub async fn require_login(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Err(ApiError::Internal("application state missing".into()).into());
    };
    match authenticate(&state, req.request()).await? {
        Some(principal) => {
            req.extensions_mut().insert(principal);
            next.call(req).await
        }
        None => Err(ApiError::Unauthorized(
            "not logged in: POST /api/v1/auth/login, or send Authorization: Bearer <token>".into(),
        )
        .into()),
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub(super) struct LoginBody {
    username: String,
    password: String,
}

/// What login and `me` answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct Me {
    id: i32,
    username: String,
    role: &'static str,
    permission: Vec<i32>,
}

impl Me {
    fn of(user: &User) -> Self {
        Me {
            id: user.id,
            username: user.username.clone(),
            role: match user.role {
                Role::Admin => "ADMIN",
                Role::User => "USER",
            },
            permission: user.permission.clone(),
        }
    }
}

/// A valid hash that no password matches in practice, so an unknown user costs as much as a
/// known one (no timing hint about which usernames exist).
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| hash_password(&random_secret(32)).unwrap_or_default())
}

/// The session cookie with its flags: HttpOnly, SameSite=Strict, and Secure when the admin is
/// reached over https (its `--public-url`, or the request's scheme as a proxy reports it).
fn session_cookie<'c>(state: &AppState, req: &HttpRequest, value: String) -> Cookie<'c> {
    let https = state
        .settings
        .public_url
        .as_ref()
        .is_some_and(|u| u.scheme() == "https")
        || req.connection_info().scheme() == "https";
    Cookie::build(SESSION_COOKIE, value)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(https)
        .finish()
}

/// `POST /api/v1/auth/login {username, password}`; too many failures answer 429.
#[utoipa::path(
    post,
    path = "/auth/login",
    tag = "auth",
    summary = "Log in: answers the user and sets the session cookie",
    request_body = LoginBody,
    security(()),
    responses(
        (status = 200, description = "Logged in; the `jobwheel_session` cookie is set", body = Me),
        answers::BadInput,
        (status = 401, description = "Wrong username or password", body = crate::web::api::error::ApiErrorBody),
        answers::TooMany
    )
)]
pub(super) async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Json<LoginBody>,
) -> ApiResult<HttpResponse> {
    let LoginBody { username, password } = body.into_inner();
    let username = username.trim().to_string();
    if username.is_empty() || password.is_empty() {
        return Err(ApiError::bad_request("username and password are required"));
    }
    let address = req.peer_addr().map(|a| a.ip());
    if let Err(wait) = state.logins.check(&username, address, Instant::now()) {
        let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
        log::warn!(
            "login for {username:?} from {} refused: too many failed logins",
            address.map_or("?".to_string(), |a| a.to_string())
        );
        return Err(ApiError::TooManyRequests {
            message: format!("too many failed logins; try again in {secs} s"),
            retry_after_secs: secs,
        });
    }
    if username.len() > MAX_CREDENTIAL_LEN || password.len() > MAX_CREDENTIAL_LEN {
        state.logins.failed(&username, address, Instant::now());
        return Err(ApiError::Unauthorized(BAD_LOGIN.into()));
    }
    let user = state.store.get_user_by_name(&username).await?;
    if user
        .as_ref()
        .is_some_and(|u| reset_required(&u.password_hash))
    {
        log::info!("login for {username:?} refused: the password must be set by an administrator");
        state.logins.failed(&username, address, Instant::now());
        return Err(ApiError::Unauthorized(format!(
            "user '{username}' has no password yet (imported from XXL-JOB): an administrator \
             must set one under Users before this user can log in"
        )));
    }
    let stored = user
        .as_ref()
        .map(|u| u.password_hash.clone())
        .unwrap_or_else(|| dummy_hash().to_string());
    // argon2 takes tens of milliseconds of CPU: keep it off the worker's event loop
    let matches = web::block(move || verify_password(&password, &stored))
        .await
        .map_err(|e| ApiError::Internal(format!("password check failed: {e}")))?;
    let Some(user) = user.filter(|_| matches) else {
        log::info!("failed login for {username:?}");
        state.logins.failed(&username, address, Instant::now());
        return Err(ApiError::Unauthorized(BAD_LOGIN.into()));
    };
    state.logins.succeeded(&username, address);
    let token = random_secret(TOKEN_LEN);
    let now = now_ms();
    state
        .store
        .insert_session(&Session {
            token_hash: token_hash(&token),
            user_id: user.id,
            created_time: now,
            expire_time: now + SESSION_IDLE_MS,
        })
        .await?;
    // an occasional sweep keeps the session table small
    if let Err(e) = state.store.delete_expired_sessions(now).await {
        log::warn!("cannot delete expired sessions: {e}");
    }
    let mut cookie = session_cookie(&state, &req, token);
    cookie.set_max_age(CookieDuration::milliseconds(SESSION_TTL_MS));
    log::info!("user {:?} logged in", user.username);
    Ok(HttpResponse::Ok().cookie(cookie).json(Me::of(&user)))
}

/// `POST /api/v1/auth/logout`: ends the cookie's session (if any) and clears the cookie.
#[utoipa::path(
    post,
    path = "/auth/logout",
    tag = "auth",
    summary = "Log out: ends the cookie's session and clears the cookie",
    security(()),
    responses(
        (status = 204, description = "Logged out")
    )
)]
pub(super) async fn logout(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> ApiResult<HttpResponse> {
    if let Some(cookie) = req.cookie(SESSION_COOKIE) {
        state
            .store
            .delete_session(&token_hash(cookie.value()))
            .await?;
    }
    let mut removal = session_cookie(&state, &req, String::new());
    removal.make_removal();
    Ok(HttpResponse::NoContent().cookie(removal).finish())
}

/// Shortest password a user may choose.
pub const MIN_PASSWORD_LEN: usize = 8;

/// A new password a user typed, checked: 8 to 256 characters.
pub fn check_new_password(field: &'static str, password: &str) -> ApiResult<()> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_LEN {
        return Err(ApiError::field(
            field,
            format!("a password needs at least {MIN_PASSWORD_LEN} characters"),
        ));
    }
    if password.len() > MAX_CREDENTIAL_LEN {
        return Err(ApiError::field(
            field,
            format!("a password may have at most {MAX_CREDENTIAL_LEN} bytes"),
        ));
    }
    Ok(())
}

/// An argon2 hash of `password`, computed off the event loop.
pub async fn hash_off_loop(password: String) -> ApiResult<String> {
    web::block(move || hash_password(&password))
        .await
        .map_err(|e| ApiError::Internal(format!("password hashing failed: {e}")))?
        .map_err(|e| ApiError::Internal(format!("password hashing failed: {e}")))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct PasswordBody {
    current_password: String,
    new_password: String,
}

/// `POST /api/v1/auth/password {currentPassword, newPassword}`: changes one's own password and
/// ends one's other sessions (and only a session can do it: a token cannot prove the password).
#[utoipa::path(
    post,
    path = "/auth/password",
    tag = "auth",
    summary = "Change one's own password (a session, not a token); ends one's other sessions",
    request_body = PasswordBody,
    responses(
        (status = 204, description = "Changed"),
        answers::BadInput,
        answers::Forbidden,
        answers::TooMany
    )
)]
pub(super) async fn change_password(
    state: web::Data<AppState>,
    principal: Principal,
    req: HttpRequest,
    body: Json<PasswordBody>,
) -> ApiResult<HttpResponse> {
    let PasswordBody {
        current_password,
        new_password,
    } = body.into_inner();
    let Some(session) = principal.session.clone() else {
        return Err(ApiError::Forbidden(
            "a password is changed from a logged-in session, not with an API token".into(),
        ));
    };
    let username = principal.user.username.clone();
    let address = req.peer_addr().map(|a| a.ip());
    if let Err(wait) = state.logins.check(&username, address, Instant::now()) {
        let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
        return Err(ApiError::TooManyRequests {
            message: format!("too many wrong passwords; try again in {secs} s"),
            retry_after_secs: secs,
        });
    }
    let stored = principal.user.password_hash.clone();
    let current_ok = current_password.len() <= MAX_CREDENTIAL_LEN
        && web::block(move || verify_password(&current_password, &stored))
            .await
            .map_err(|e| ApiError::Internal(format!("password check failed: {e}")))?;
    if !current_ok {
        state.logins.failed(&username, address, Instant::now());
        return Err(ApiError::field(
            "currentPassword",
            "the current password is wrong",
        ));
    }
    check_new_password("newPassword", &new_password)?;
    let user = User {
        password_hash: hash_off_loop(new_password).await?,
        ..principal.user
    };
    state.store.update_user(&user).await?;
    let ended = state.store.delete_user_sessions(user.id, &session).await?;
    log::info!(
        "user {:?} changed their password; {ended} other session(s) ended",
        user.username
    );
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /api/v1/auth/me`.
#[utoipa::path(
    get,
    path = "/auth/me",
    tag = "auth",
    summary = "The logged-in user",
    responses(
        (status = 200, description = "The caller", body = Me)
    )
)]
pub(super) async fn me(principal: Principal) -> web::Json<Me> {
    web::Json(Me::of(&principal.user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_hashes_are_sha256_hex() {
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn group_permissions_follow_the_role() {
        let user = User {
            id: 2,
            username: "u".into(),
            password_hash: String::new(),
            role: Role::User,
            permission: vec![3],
        };
        let p = Principal {
            user: user.clone(),
            session: None,
        };
        assert!(p.can_access(3));
        assert!(!p.can_access(4));
        assert!(p.require_admin().is_err());
        assert_eq!(p.group_scope(), Some(&[3][..]));
        let admin = Principal {
            user: User {
                role: Role::Admin,
                ..user
            },
            session: None,
        };
        assert!(admin.can_access(4));
        assert_eq!(admin.group_scope(), None);
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A new password is accepted exactly when it has 8 characters or more and at most
        /// 256 bytes (argon2 gets no more); otherwise 400 naming the field.
        #[test]
        fn new_passwords_are_checked_by_length(password in prop_oneof![
            ".{0,20}",
            "[a-zé中]{60,130}",
        ]) {
            let expected = password.chars().count() >= MIN_PASSWORD_LEN
                && password.len() <= MAX_CREDENTIAL_LEN;
            match check_new_password("newPassword", &password) {
                Ok(()) => prop_assert!(expected),
                Err(ApiError::BadRequest { field, message }) => {
                    prop_assert!(!expected);
                    prop_assert_eq!(field.as_deref(), Some("newPassword"));
                    prop_assert!(!message.is_empty());
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }
}
