//! Throw-away databases on a server: a private schema on PostgreSQL, a private database on
//! MySQL, so repeated runs start empty and never touch other data.

use jobwheel::store::Backend;
use sqlx::Connection;

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

fn backend(server_url: &str) -> Result<Backend, String> {
    Backend::from_url(server_url).map_err(|e| e.to_string())
}

/// The URL of scratch database `name` on the server `server_url` names.
pub fn scratch_url(server_url: &str, name: &str) -> Result<String, String> {
    check_name(name)?;
    match backend(server_url)? {
        Backend::Sqlite => Err(
            "SQLite has no server: use a new database file instead of a scratch database".into(),
        ),
        Backend::Postgres => {
            let sep = if server_url.contains('?') { '&' } else { '?' };
            Ok(format!(
                "{server_url}{sep}options=-c%20search_path%3D{name}"
            ))
        }
        Backend::MySql => {
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
    match backend(server_url)? {
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(server_url)
                .await
                .map_err(failed)?;
            sqlx::query(statement)
                .execute(&mut conn)
                .await
                .map_err(failed)?;
            conn.close().await.map_err(failed)
        }
        Backend::MySql => {
            let mut conn = sqlx::MySqlConnection::connect(server_url)
                .await
                .map_err(failed)?;
            sqlx::query(statement)
                .execute(&mut conn)
                .await
                .map_err(failed)?;
            conn.close().await.map_err(failed)
        }
        Backend::Sqlite => Ok(()),
    }
}

/// Creates the empty scratch database `name` (a schema on PostgreSQL, a database on MySQL)
/// on the server `server_url` names and returns the URL reaching exactly it.
pub async fn create_scratch_database(server_url: &str, name: &str) -> Result<String, String> {
    let url = scratch_url(server_url, name)?;
    let statement = match backend(server_url)? {
        Backend::MySql => format!("CREATE DATABASE {name} CHARACTER SET utf8mb4"),
        _ => format!("CREATE SCHEMA {name}"),
    };
    ddl(server_url, &statement).await?;
    Ok(url)
}

/// Drops the scratch database `name` and everything in it; absent is not an error.
pub async fn drop_scratch_database(server_url: &str, name: &str) -> Result<(), String> {
    check_name(name)?;
    let statement = match backend(server_url)? {
        Backend::MySql => format!("DROP DATABASE IF EXISTS {name}"),
        _ => format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
    };
    ddl(server_url, &statement).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use jobwheel::model::JobInfo;
    use jobwheel::store::Store;

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

    /// On the servers the test suite is given (`JOBWHEEL_TEST_PG_URL`, `JOBWHEEL_TEST_MYSQL_URL`);
    /// under `CI` both must be there.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scratch_databases_come_and_go() {
        for var in ["JOBWHEEL_TEST_PG_URL", "JOBWHEEL_TEST_MYSQL_URL"] {
            let Ok(server) = std::env::var(var) else {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI is set but {var} is not"
                );
                eprintln!("skipping scratch database test: {var} is not set");
                continue;
            };
            let name = format!("jwscratch_{}", uuid::Uuid::new_v4().simple());
            let url = create_scratch_database(&server, &name).await.unwrap();
            let store = Store::connect(&url, &Default::default()).await.unwrap();
            store.migrate().await.unwrap();
            let group = jobwheel::model::JobGroup {
                id: 0,
                app_name: "scratch".into(),
                title: "scratch".into(),
                address_type: jobwheel::model::AddressType::Auto,
                address_list: Vec::new(),
                access_token: None,
                update_time: 0,
            };
            let g = store.insert_group(&group).await.unwrap();
            store
                .insert_job(&JobInfo::new(g, "in scratch", "h"))
                .await
                .unwrap();
            assert_eq!(store.count_jobs().await.unwrap(), 1);
            store.close().await;
            drop_scratch_database(&server, &name).await.unwrap();
            // dropping twice is fine, and a fresh one with the same name starts empty
            drop_scratch_database(&server, &name).await.unwrap();
            let url = create_scratch_database(&server, &name).await.unwrap();
            let store = Store::connect(&url, &Default::default()).await.unwrap();
            store.migrate().await.unwrap();
            assert_eq!(store.count_jobs().await.unwrap(), 0);
            store.close().await;
            drop_scratch_database(&server, &name).await.unwrap();
        }
    }
}
