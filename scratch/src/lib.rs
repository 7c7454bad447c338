//! Throw-away databases on a server: a private schema on PostgreSQL, a private database on
//! MySQL, so repeated test and benchmark runs start empty and never touch other data. Not part
//! of jobwheel itself: its tests and its benchmark share it.

use sqlx::Connection;

/// The servers a scratch database can live on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    Postgres,
    MySql,
}

/// Only lower-case letters, digits and `_`, starting with a letter: the name is spliced into DDL.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "scratch database name '{name}' must be 1-48 of [a-z0-9_], starting with a letter"
        ))
    }
}

/// Which server `server_url` names, by its scheme.
fn server(server_url: &str) -> Result<Server, String> {
    match server_url.split_once(':').map(|(scheme, _)| scheme) {
        Some("postgres" | "postgresql") => Ok(Server::Postgres),
        Some("mysql" | "mariadb") => Ok(Server::MySql),
        _ => Err(format!(
            "'{server_url}' is not a postgres:// or mysql:// URL (SQLite has no server: use a \
             new database file instead of a scratch database)"
        )),
    }
}

/// The URL of scratch database `name` on the server `server_url` names.
pub fn scratch_url(server_url: &str, name: &str) -> Result<String, String> {
    check_name(name)?;
    match server(server_url)? {
        Server::Postgres => {
            let sep = if server_url.contains('?') { '&' } else { '?' };
            Ok(format!(
                "{server_url}{sep}options=-c%20search_path%3D{name}"
            ))
        }
        Server::MySql => {
            let mut parsed = url::Url::parse(server_url)
                .map_err(|e| format!("invalid MySQL URL '{server_url}': {e}"))?;
            parsed.set_path(&format!("/{name}"));
            Ok(parsed.to_string())
        }
    }
}

/// Runs one DDL statement on the server `server_url` names.
async fn ddl(server_url: &str, statement: &str) -> Result<(), String> {
    let failed = |e: sqlx::Error| format!("{statement}: {e}");
    match server(server_url)? {
        Server::Postgres => {
            let mut conn = sqlx::PgConnection::connect(server_url)
                .await
                .map_err(failed)?;
            sqlx::query(statement)
                .execute(&mut conn)
                .await
                .map_err(failed)?;
            conn.close().await.map_err(failed)
        }
        Server::MySql => {
            let mut conn = sqlx::MySqlConnection::connect(
                server_url.replacen("mariadb:", "mysql:", 1).as_str(),
            )
            .await
            .map_err(failed)?;
            sqlx::query(statement)
                .execute(&mut conn)
                .await
                .map_err(failed)?;
            conn.close().await.map_err(failed)
        }
    }
}

/// Creates the empty scratch database `name` (a schema on PostgreSQL, a database on MySQL)
/// on the server `server_url` names and returns the URL reaching exactly it.
pub async fn create_scratch_database(server_url: &str, name: &str) -> Result<String, String> {
    let url = scratch_url(server_url, name)?;
    let statement = match server(server_url)? {
        Server::MySql => format!("CREATE DATABASE {name} CHARACTER SET utf8mb4"),
        Server::Postgres => format!("CREATE SCHEMA {name}"),
    };
    ddl(server_url, &statement).await?;
    Ok(url)
}

/// Drops the scratch database `name` and everything in it; absent is not an error.
pub async fn drop_scratch_database(server_url: &str, name: &str) -> Result<(), String> {
    check_name(name)?;
    let statement = match server(server_url)? {
        Server::MySql => format!("DROP DATABASE IF EXISTS {name}"),
        Server::Postgres => format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
    };
    ddl(server_url, &statement).await
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
        assert!(scratch_url("mariadb://root@h/db", "jwb_x").is_ok());
    }

    /// On the servers the test suite is given (`JOBWHEEL_TEST_PG_URL`, `JOBWHEEL_TEST_MYSQL_URL`);
    /// under `CI` both must be there.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scratch_databases_come_and_go() {
        for var in ["JOBWHEEL_TEST_PG_URL", "JOBWHEEL_TEST_MYSQL_URL"] {
            let Ok(server_url) = std::env::var(var) else {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI is set but {var} is not"
                );
                eprintln!("skipping scratch database test: {var} is not set");
                continue;
            };
            let name = format!("jwscratch_{}", uuid::Uuid::new_v4().simple());
            let url = create_scratch_database(&server_url, &name).await.unwrap();
            let tables = |url: String| async move {
                let sql = "CREATE TABLE t (x INT)";
                if url.starts_with("postgres") {
                    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
                    sqlx::query(sql).execute(&mut c).await.is_ok()
                } else {
                    let mut c = sqlx::MySqlConnection::connect(&url).await.unwrap();
                    sqlx::query(sql).execute(&mut c).await.is_ok()
                }
            };
            assert!(
                tables(url.clone()).await,
                "a table is made in the new database"
            );
            assert!(
                !tables(url).await,
                "and it is that database's: made twice fails"
            );
            drop_scratch_database(&server_url, &name).await.unwrap();
            // dropping twice is fine, and a fresh one with the same name starts empty
            drop_scratch_database(&server_url, &name).await.unwrap();
            let url = create_scratch_database(&server_url, &name).await.unwrap();
            assert!(tables(url).await, "a fresh one starts empty");
            drop_scratch_database(&server_url, &name).await.unwrap();
        }
    }
}
