//! Throw-away databases on a server (benchmarks): a private schema on PostgreSQL, a private
//! database on MySQL, so repeated runs start empty and never touch other data.

use sqlx::Connection;

use super::{Backend, Store, StoreError, StoreResult};

/// Only lower-case letters, digits and `_`, starting with a letter: the name is spliced into DDL.
fn check_name(name: &str) -> StoreResult<()> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::BadUrl(format!(
            "scratch database name '{name}' must be 1-48 of [a-z0-9_], starting with a letter"
        )))
    }
}

/// The URL of scratch database `name` on the server `server_url` names.
pub fn scratch_url(server_url: &str, name: &str) -> StoreResult<String> {
    check_name(name)?;
    match Backend::from_url(server_url)? {
        Backend::Sqlite => Err(StoreError::BadUrl(
            "SQLite has no server: use a new database file instead of a scratch database".into(),
        )),
        Backend::Postgres => {
            let sep = if server_url.contains('?') { '&' } else { '?' };
            Ok(format!(
                "{server_url}{sep}options=-c%20search_path%3D{name}"
            ))
        }
        Backend::MySql => {
            let mut parsed = url::Url::parse(server_url).map_err(|e| {
                StoreError::BadUrl(format!("invalid MySQL URL '{server_url}': {e}"))
            })?;
            parsed.set_path(&format!("/{name}"));
            Ok(parsed.to_string())
        }
    }
}

impl Store {
    /// Creates the empty scratch database `name` (a schema on PostgreSQL, a database on MySQL)
    /// on the server `server_url` names and returns the URL reaching exactly it.
    pub async fn create_scratch_database(server_url: &str, name: &str) -> StoreResult<String> {
        let url = scratch_url(server_url, name)?;
        match Backend::from_url(server_url)? {
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(server_url).await?;
                sqlx::query(&format!("CREATE SCHEMA {name}"))
                    .execute(&mut conn)
                    .await?;
                conn.close().await?;
            }
            Backend::MySql => {
                let mut conn = sqlx::MySqlConnection::connect(server_url).await?;
                sqlx::query(&format!("CREATE DATABASE {name} CHARACTER SET utf8mb4"))
                    .execute(&mut conn)
                    .await?;
                conn.close().await?;
            }
            Backend::Sqlite => {}
        }
        Ok(url)
    }

    /// Drops the scratch database `name` and everything in it; absent is not an error.
    pub async fn drop_scratch_database(server_url: &str, name: &str) -> StoreResult<()> {
        check_name(name)?;
        match Backend::from_url(server_url)? {
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(server_url).await?;
                sqlx::query(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                    .execute(&mut conn)
                    .await?;
                conn.close().await?;
            }
            Backend::MySql => {
                let mut conn = sqlx::MySqlConnection::connect(server_url).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name}"))
                    .execute(&mut conn)
                    .await?;
                conn.close().await?;
            }
            Backend::Sqlite => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("jwbench_1a").is_ok());
        for bad in ["", "1abc", "a-b", "A", "a;drop", &"a".repeat(49)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_reach_the_scratch_database() {
        assert_eq!(
            scratch_url("postgres://u@h:5432/db", "jwb_x").unwrap(),
            "postgres://u@h:5432/db?options=-c%20search_path%3Djwb_x"
        );
        assert_eq!(
            scratch_url("mysql://root@h:3306/db", "jwb_x").unwrap(),
            "mysql://root@h:3306/jwb_x"
        );
        assert!(scratch_url("sqlite://x.db", "jwb_x").is_err());
    }
}
