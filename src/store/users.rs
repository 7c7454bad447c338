//! The admin's users, their sessions and API tokens (`job_user`, `user_session`, `api_token`).

use super::dialect::insert_returning_id;
use super::rows::RowExt;
use super::{duplicate_as, on_pool, Store, StoreResult};
use crate::model::{join_ids, parse_id_list, ApiToken, Role, Session, User};

fn user_from_row(row: &impl RowExt) -> Result<User, sqlx::Error> {
    Ok(User {
        id: row.int("id")?,
        username: row.text("username")?,
        password_hash: row.text("password")?,
        role: Role::from_code(row.int("role")?),
        // a hand-edited permission list with junk in it grants nothing rather than failing the login
        permission: parse_id_list(&row.opt_text("permission")?.unwrap_or_default())
            .unwrap_or_default(),
    })
}

fn token_from_row(row: &impl RowExt) -> Result<ApiToken, sqlx::Error> {
    Ok(ApiToken {
        id: row.int("id")?,
        name: row.text("name")?,
        token_hash: row.text("token_hash")?,
        user_id: row.int("user_id")?,
        created_time: row.long("created_time")?,
        last_used_time: row.long("last_used_time")?,
        expire_time: row.long("expire_time")?,
    })
}

const USER_COLUMNS: &str = "id, username, password, role, permission";
const TOKEN_COLUMNS: &str =
    "id, name, token_hash, user_id, created_time, last_used_time, expire_time";

impl Store {
    /// Inserts a user and returns the id; a taken username is [`super::StoreError::Duplicate`].
    pub async fn insert_user(&self, user: &User) -> StoreResult<i32> {
        let id = insert_returning_id!(
            self,
            "INSERT INTO job_user (username, password, role, permission) VALUES (?, ?, ?, ?)",
            |q| q
                .bind(&user.username)
                .bind(&user.password_hash)
                .bind(user.role.code())
                .bind(join_ids(&user.permission))
        )
        .map_err(|e| duplicate_as(e, || format!("user '{}'", user.username)))?;
        Ok(id as i32)
    }

    /// Replaces a user's password hash, role and permissions; false when no such user.
    pub async fn update_user(&self, user: &User) -> StoreResult<bool> {
        let sql =
            self.sql("UPDATE job_user SET password = ?, role = ?, permission = ? WHERE id = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(&user.password_hash)
            .bind(user.role.code())
            .bind(join_ids(&user.permission))
            .bind(user.id)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done > 0)
    }

    /// Deletes a user with their sessions and tokens; false when no such user.
    pub async fn delete_user(&self, id: i32) -> StoreResult<bool> {
        let statements = [
            self.sql("DELETE FROM user_session WHERE user_id = ?"),
            self.sql("DELETE FROM api_token WHERE user_id = ?"),
            self.sql("DELETE FROM job_user WHERE id = ?"),
        ];
        let done = on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut last = 0;
            for sql in &statements {
                last = sqlx::query(sql).bind(id).execute(&mut *tx).await?.rows_affected();
            }
            tx.commit().await?;
            last
        });
        Ok(done > 0)
    }

    /// One user by login name.
    pub async fn get_user_by_name(&self, username: &str) -> StoreResult<Option<User>> {
        let sql = self.sql(format!(
            "SELECT {USER_COLUMNS} FROM job_user WHERE username = ?"
        ));
        let user = on_pool!(self, pool => match sqlx::query(&sql).bind(username).fetch_optional(pool).await? {
            Some(row) => Some(user_from_row(&row)?),
            None => None,
        });
        Ok(user)
    }

    /// One user by id.
    pub async fn get_user(&self, id: i32) -> StoreResult<Option<User>> {
        let sql = self.sql(format!("SELECT {USER_COLUMNS} FROM job_user WHERE id = ?"));
        let user = on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Some(user_from_row(&row)?),
            None => None,
        });
        Ok(user)
    }

    /// Every user, ordered by name.
    pub async fn list_users(&self) -> StoreResult<Vec<User>> {
        let sql = format!("SELECT {USER_COLUMNS} FROM job_user ORDER BY username");
        let users = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(user_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(users)
    }

    /// How many users exist (zero on a fresh database).
    pub async fn count_users(&self) -> StoreResult<i64> {
        on_pool!(self, pool => Ok(sqlx::query("SELECT COUNT(*) AS n FROM job_user").fetch_one(pool).await?.long("n")?))
    }

    /// Stores a new session.
    pub async fn insert_session(&self, session: &Session) -> StoreResult<()> {
        let sql = self.sql(
            "INSERT INTO user_session (token_hash, user_id, created_time, expire_time) VALUES (?, ?, ?, ?)",
        );
        on_pool!(self, pool => { sqlx::query(&sql)
            .bind(&session.token_hash)
            .bind(session.user_id)
            .bind(session.created_time)
            .bind(session.expire_time)
            .execute(pool)
            .await?; });
        Ok(())
    }

    /// The unexpired session with this token hash.
    pub async fn get_session(&self, token_hash: &str, now: i64) -> StoreResult<Option<Session>> {
        let sql = self.sql(
            "SELECT token_hash, user_id, created_time, expire_time FROM user_session \
             WHERE token_hash = ? AND expire_time > ?",
        );
        let session = on_pool!(self, pool => match sqlx::query(&sql).bind(token_hash).bind(now).fetch_optional(pool).await? {
            Some(row) => Some(Session {
                token_hash: row.text("token_hash")?,
                user_id: row.int("user_id")?,
                created_time: row.long("created_time")?,
                expire_time: row.long("expire_time")?,
            }),
            None => None,
        });
        Ok(session)
    }

    /// Ends one session (logout); false when it did not exist.
    pub async fn delete_session(&self, token_hash: &str) -> StoreResult<bool> {
        let sql = self.sql("DELETE FROM user_session WHERE token_hash = ?");
        let done = on_pool!(self, pool => sqlx::query(&sql).bind(token_hash).execute(pool).await?.rows_affected());
        Ok(done > 0)
    }

    /// Moves a session's expiry (idle sessions expire; activity keeps one alive).
    pub async fn touch_session(&self, token_hash: &str, expire_time: i64) -> StoreResult<()> {
        let sql = self.sql("UPDATE user_session SET expire_time = ? WHERE token_hash = ?");
        on_pool!(self, pool => { sqlx::query(&sql).bind(expire_time).bind(token_hash).execute(pool).await?; });
        Ok(())
    }

    /// Ends every session of a user but `keep` (the one changing its password); returns how many.
    pub async fn delete_user_sessions(&self, user_id: i32, keep: &str) -> StoreResult<u64> {
        let sql = self.sql("DELETE FROM user_session WHERE user_id = ? AND token_hash <> ?");
        let done = on_pool!(self, pool => sqlx::query(&sql).bind(user_id).bind(keep).execute(pool).await?.rows_affected());
        Ok(done)
    }

    /// Deletes sessions expired at `now`; returns how many.
    pub async fn delete_expired_sessions(&self, now: i64) -> StoreResult<u64> {
        let sql = self.sql("DELETE FROM user_session WHERE expire_time <= ?");
        let done = on_pool!(self, pool => sqlx::query(&sql).bind(now).execute(pool).await?.rows_affected());
        Ok(done)
    }

    /// Stores a new API token (its hash) and returns the id.
    pub async fn insert_api_token(&self, token: &ApiToken) -> StoreResult<i32> {
        let id = insert_returning_id!(
            self,
            "INSERT INTO api_token (name, token_hash, user_id, created_time, last_used_time, expire_time) \
             VALUES (?, ?, ?, ?, ?, ?)",
            |q| q
                .bind(&token.name)
                .bind(&token.token_hash)
                .bind(token.user_id)
                .bind(token.created_time)
                .bind(token.last_used_time)
                .bind(token.expire_time)
        )
        .map_err(|e| duplicate_as(e, || "API token".to_string()))?;
        Ok(id as i32)
    }

    /// The unexpired token with this hash, marking it used at `now`.
    pub async fn use_api_token(&self, token_hash: &str, now: i64) -> StoreResult<Option<ApiToken>> {
        let select = self.sql(format!(
            "SELECT {TOKEN_COLUMNS} FROM api_token WHERE token_hash = ? AND (expire_time = 0 OR expire_time > ?)"
        ));
        let touch = self.sql("UPDATE api_token SET last_used_time = ? WHERE id = ?");
        let token = on_pool!(self, pool => match sqlx::query(&select).bind(token_hash).bind(now).fetch_optional(pool).await? {
            Some(row) => {
                let mut token = token_from_row(&row)?;
                sqlx::query(&touch).bind(now).bind(token.id).execute(pool).await?;
                token.last_used_time = now;
                Some(token)
            }
            None => None,
        });
        Ok(token)
    }

    /// A user's tokens, newest first.
    pub async fn list_api_tokens(&self, user_id: i32) -> StoreResult<Vec<ApiToken>> {
        let sql = self.sql(format!(
            "SELECT {TOKEN_COLUMNS} FROM api_token WHERE user_id = ? ORDER BY id DESC"
        ));
        let tokens = on_pool!(self, pool => sqlx::query(&sql)
            .bind(user_id)
            .fetch_all(pool)
            .await?
            .iter()
            .map(token_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(tokens)
    }

    /// Every user's tokens, newest first.
    pub async fn list_all_api_tokens(&self) -> StoreResult<Vec<ApiToken>> {
        let sql = format!("SELECT {TOKEN_COLUMNS} FROM api_token ORDER BY id DESC");
        let tokens = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(token_from_row)
            .collect::<Result<Vec<_>, _>>()?);
        Ok(tokens)
    }

    /// One token by id.
    pub async fn get_api_token(&self, id: i32) -> StoreResult<Option<ApiToken>> {
        let sql = self.sql(format!(
            "SELECT {TOKEN_COLUMNS} FROM api_token WHERE id = ?"
        ));
        let token = on_pool!(self, pool => match sqlx::query(&sql).bind(id).fetch_optional(pool).await? {
            Some(row) => Some(token_from_row(&row)?),
            None => None,
        });
        Ok(token)
    }

    /// Revokes a token; false when no such token.
    pub async fn delete_api_token(&self, id: i32) -> StoreResult<bool> {
        let sql = self.sql("DELETE FROM api_token WHERE id = ?");
        let done =
            on_pool!(self, pool => sqlx::query(&sql).bind(id).execute(pool).await?.rows_affected());
        Ok(done > 0)
    }
}
