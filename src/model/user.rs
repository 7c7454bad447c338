//! Users, their sessions and API tokens, and the audit log's entries.

use super::*;

/// Role of an admin-UI user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Limited to the groups in `permission`.
    User,
    /// Everything.
    Admin,
}

impl Role {
    /// XXL-JOB's numeric code (0 user, 1 admin).
    pub fn code(self) -> i32 {
        match self {
            Role::User => 0,
            Role::Admin => 1,
        }
    }

    /// The role for a stored code; anything but 1 is a normal user.
    pub fn from_code(code: i32) -> Self {
        if code == 1 {
            Role::Admin
        } else {
            Role::User
        }
    }
}

/// An admin-UI user (XXL-JOB `xxl_job_user`), with a salted password hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Primary key.
    pub id: i32,
    /// Login name.
    pub username: String,
    /// PHC-format password hash (argon2id).
    pub password_hash: String,
    /// Admin or normal user.
    pub role: Role,
    /// Group ids a normal user may access.
    pub permission: Vec<i32>,
}

impl User {
    /// Whether the user may use executor group `group`: an administrator any, a normal user
    /// those of its permission.
    pub fn may_use_group(&self, group: i32) -> bool {
        self.role == Role::Admin || self.permission.contains(&group)
    }
}

/// A logged-in session, stored so that every admin of a cluster accepts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 hex of the cookie value; the cookie itself is never stored.
    pub token_hash: String,
    /// The user.
    pub user_id: i32,
    /// Login time, epoch ms.
    pub created_time: i64,
    /// Expiry, epoch ms.
    pub expire_time: i64,
}

/// A bearer token for scripts calling the REST API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiToken {
    /// Primary key.
    pub id: i32,
    /// Label chosen by the user.
    pub name: String,
    /// SHA-256 hex of the token; the token itself is shown once and never stored.
    pub token_hash: String,
    /// The user the token acts as.
    pub user_id: i32,
    /// Creation time, epoch ms.
    pub created_time: i64,
    /// Last use, epoch ms (0 never).
    pub last_used_time: i64,
    /// Expiry, epoch ms (0 never).
    pub expire_time: i64,
}

/// One change made through the console or the REST API (the audit log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// Primary key (0 before it is stored).
    pub id: i64,
    /// When, epoch ms.
    pub time: i64,
    /// Who (the user, or the owner of the API token used).
    pub user_id: i32,
    /// Their name at the time.
    pub username: String,
    /// What was done, e.g. `job.update`.
    pub action: String,
    /// What kind of thing it was done to: `job`, `group`, `user`, `token`, `run`.
    pub target_type: String,
    /// Which one (0 when the action has no single target, e.g. clearing runs).
    pub target_id: i64,
    /// One line for lists, e.g. the job's description.
    pub summary: String,
    /// JSON object `{field: {"before": …, "after": …}}` of what changed.
    pub changes: String,
}
