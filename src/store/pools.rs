//! The options every connection pool of the store is built with.

use std::time::Duration;

use sqlx::mysql::MySqlPoolOptions;

/// A connection idle this long is pinged before it is handed out; one used more recently is
/// handed out as it is.
const PING_IDLE_AFTER: Duration = Duration::from_secs(1);

/// The options of every pool of the store: a connection is tested before use only when it
/// has been idle (see [`PING_IDLE_AFTER`]).
///
/// The pool's own test pings every connection it hands out, and it pings every connection
/// given back too: two extra round trips around each use, most of them on connections used
/// a few milliseconds before (a workflow move, a fire's outcome, a result batch). A
/// connection broken while idle (the server restarted, a firewall dropped it) is still
/// caught before use. One that breaks within the second (the server restarted or killed the
/// session just then) fails its statement, as a statement under way would, and the check on
/// its release closes it: the caller's retry or the next pass gets a new connection.
pub(super) fn pool_options<DB: sqlx::Database>() -> sqlx::pool::PoolOptions<DB> {
    sqlx::pool::PoolOptions::<DB>::new()
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_IDLE_AFTER {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

/// The options of every MySQL pool of the store: each connection runs at READ COMMITTED.
///
/// The store's statements are written for PostgreSQL's READ COMMITTED. Under InnoDB's default
/// REPEATABLE READ a statement also locks every row and gap its scan passes until it commits, so
/// one admin's write that scans blocks, or deadlocks with, the claims and run rows the other
/// admins are writing. (InnoDB refuses READ COMMITTED with statement-based binary logging;
/// MariaDB's and MySQL's defaults, mixed and row, accept it.)
pub(super) fn mysql_pool() -> MySqlPoolOptions {
    pool_options().after_connect(|conn, _| {
        Box::pin(async move {
            sqlx::query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
                .execute(conn)
                .await
                .map(drop)
        })
    })
}
