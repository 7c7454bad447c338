//! Database access: the one place that holds SQL.
//!
//! One [`Store`] API over three backends, chosen by the URL scheme: SQLite (embedded default,
//! one admin), PostgreSQL and MySQL/MariaDB (several admins sharing one database). Statements
//! are written once with `?` placeholders where the dialects agree; where they differ, each
//! backend has its own form: `dialect` for the short statements, and beside their callers for
//! the batch writes (`log_batch`) and the claim (`schedule`).

use std::borrow::Cow;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::postgres::{PgConnectOptions, PgPool};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use sqlx::ConnectOptions as _;

mod admission;
mod audit;
mod availability;
mod claims;
mod cordons;
mod definitions;
mod dialect;
mod glue;
mod groups;
mod jobs;
mod log_batch;
mod logs;
mod pools;
mod registry;
mod reports;
mod rows;
mod run_starts;
mod run_tx;
mod schedule;
mod scoped;
mod settings;
mod sqlite_lib;
mod suspects;
mod turns;
mod users;
mod workflow_runs;
mod workflows;
mod xxl_import;
pub mod xxl_source;

use pools::{mysql_pool, pool_options};

pub use admission::{Admitted, InstanceCaps, InstanceCounts, QueuedFire, ReplacedRun};
pub use audit::AuditFilter;
pub use availability::Availability;
pub use claims::{ClaimJob, ClaimKey, ClusterNode, OrphanFire, OrphanRun};
pub(crate) use groups::split_addresses;
pub use groups::GroupToken;
pub use jobs::JobFilter;
pub use logs::{LogFilter, LogResultRow, LogStatus, RunLogPlace, TRIGGER_OUTCOME_GRACE_MS};
pub use run_starts::FireClaim;
pub use run_tx::{NodeLog, NodeLogRow, RunTx};
pub use schedule::{ScheduleTx, ScheduleUpdate, Share};
pub use settings::ACCESS_TOKEN_SETTING;
pub use turns::MonitorPass;
pub use workflows::WorkflowFilter;
pub use xxl_import::ImportBatch;

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
static MYSQL_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/mysql");

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL cannot be used.
    #[error("{0}")]
    BadUrl(String),
    /// The data folder or file of an SQLite database cannot be created.
    #[error("cannot create '{path}': {source}")]
    DataFolder {
        /// The folder or file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The database answered with an error or could not be reached.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored row holds a value the code cannot read.
    #[error("corrupt row in {table} (id {id}): {detail}")]
    Corrupt {
        /// Table name.
        table: &'static str,
        /// Row id.
        id: i64,
        /// What is wrong.
        detail: String,
    },
    /// A unique value (app name, username, ...) is already taken.
    #[error("{0} already exists")]
    Duplicate(String),
    /// The database to import from is not an XXL-JOB database (the message says why).
    #[error("{0}")]
    NotXxlJob(String),
    /// A detached database task was cancelled (at shutdown) before it answered.
    #[error("database task failed: {0}")]
    Task(String),
    /// A detached database task panicked: a bug, which its actor cannot handle.
    #[error("database task panicked: {0}")]
    Panicked(String),
}

/// Result of a store call.
pub type StoreResult<T> = Result<T, StoreError>;

/// The database product behind a [`Store`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB.
    MySql,
}

impl Backend {
    /// The backend a database URL names, or a message naming the bad scheme.
    pub fn from_url(url: &str) -> Result<Backend, StoreError> {
        let Some((scheme, _)) = url.split_once(':') else {
            return Err(StoreError::BadUrl(format!(
                "database URL '{url}' has no scheme (expected sqlite:, postgres:// or mysql://)"
            )));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "sqlite" => Ok(Backend::Sqlite),
            "postgres" | "postgresql" => Ok(Backend::Postgres),
            "mysql" | "mariadb" => Ok(Backend::MySql),
            other => Err(StoreError::BadUrl(format!(
                "unsupported database URL scheme '{other}' (expected sqlite, postgres or mysql)"
            ))),
        }
    }

    /// Lower-case name for logs and test names.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::MySql => "mysql",
        }
    }
}

/// Pool sizing and timeouts.
#[derive(Debug, Clone)]
pub struct PoolSettings {
    /// Most connections open at once.
    pub max_connections: u32,
    /// How long a caller waits for a free connection.
    pub acquire_timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            max_connections: 16,
            acquire_timeout: Duration::from_secs(10),
        }
    }
}

#[derive(Clone)]
pub(crate) enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
    MySql(MySqlPool),
}

/// Handle to the database; cheap to clone (it wraps a connection pool).
#[derive(Clone)]
pub struct Store {
    pub(crate) db: Db,
    /// Whether the database answers, shared by every clone and [`Store::own_connection`].
    availability: std::sync::Arc<Availability>,
    /// Writes this process made to groups, registrations and cordons (shared by every clone):
    /// what routing read before a write is stale after it.
    routing_writes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Run definitions parsed once per workflow version (shared by every clone).
    definitions: definitions::Definitions,
    /// Pre-read commits still to report an error after committing (test builds only).
    #[cfg(feature = "fault-hooks")]
    lost_commit_answers: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// Most connections of an SQLite pool (see [`Store::connect`]).
const SQLITE_MAX_CONNECTIONS: u32 = 4;
/// Rows an SQLite connection thread may queue for its reader before it waits: more than the
/// largest batch the trigger path reads (500), so a batch streams without the thread parking
/// and being woken once per row (sqlx's default is 50).
const SQLITE_ROW_BUFFER: usize = 1_024;

/// Statements slower than this are logged by sqlx ...
const SLOW_STATEMENT: Duration = Duration::from_secs(1);
/// ... at debug level only: sqlx prints the whole statement, and a batch write's runs to tens
/// of kilobytes, which would flood an operator's log at warning level under load.
const SLOW_STATEMENT_LEVEL: log::LevelFilter = log::LevelFilter::Debug;

/// Runs the same body against whichever pool the store holds; `$pool` is bound to it.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.db {
            $crate::store::Db::Sqlite($pool) => $body,
            $crate::store::Db::Postgres($pool) => $body,
            $crate::store::Db::MySql($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

impl Store {
    /// Connects to the database the URL names, creating an SQLite file and its folder if needed.
    pub async fn connect(url: &str, settings: &PoolSettings) -> StoreResult<Store> {
        let db = match Backend::from_url(url)? {
            Backend::Sqlite => {
                sqlite_lib::tune();
                let options = SqliteConnectOptions::from_str(url)
                    .map_err(|e| StoreError::BadUrl(format!("invalid SQLite URL '{url}': {e}")))?;
                let file = options.get_filename().to_path_buf();
                if !is_memory(url, &file) {
                    if let Some(parent) = file.parent() {
                        ensure_folder(parent)?;
                    }
                    ensure_private_file(&file)?;
                }
                let options = options
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(Duration::from_secs(10))
                    .row_buffer_size(SQLITE_ROW_BUFFER)
                    .statement_cache_capacity(STATEMENT_CACHE)
                    .log_slow_statements(SLOW_STATEMENT_LEVEL, SLOW_STATEMENT);
                // SQLite has one writer and the trigger path writes in batches, so a few
                // connections carry the load as well as more would, and each one is a thread
                // with its own allocator arena and page cache
                let pool = pool_options::<sqlx::Sqlite>()
                    .max_connections(settings.max_connections.clamp(1, SQLITE_MAX_CONNECTIONS))
                    .acquire_timeout(settings.acquire_timeout)
                    .connect_with(options)
                    .await?;
                Db::Sqlite(pool)
            }
            Backend::Postgres => {
                let options = PgConnectOptions::from_str(url)
                    .map_err(|e| {
                        StoreError::BadUrl(format!("invalid PostgreSQL URL '{url}': {e}"))
                    })?
                    .statement_cache_capacity(STATEMENT_CACHE)
                    .log_slow_statements(SLOW_STATEMENT_LEVEL, SLOW_STATEMENT);
                let pool = pool_options::<sqlx::Postgres>()
                    .max_connections(settings.max_connections)
                    .acquire_timeout(settings.acquire_timeout)
                    .connect_with(options)
                    .await?;
                Db::Postgres(pool)
            }
            Backend::MySql => {
                let url = mysql_url(url);
                let options = MySqlConnectOptions::from_str(&url)
                    .map_err(|e| StoreError::BadUrl(format!("invalid MySQL URL '{url}': {e}")))?
                    .statement_cache_capacity(MYSQL_STATEMENT_CACHE)
                    .log_slow_statements(SLOW_STATEMENT_LEVEL, SLOW_STATEMENT);
                let pool = mysql_pool()
                    .max_connections(settings.max_connections)
                    .acquire_timeout(settings.acquire_timeout)
                    .connect_with(options)
                    .await?;
                Db::MySql(pool)
            }
        };
        Ok(Store {
            db,
            availability: Default::default(),
            routing_writes: Default::default(),
            definitions: Default::default(),
            #[cfg(feature = "fault-hooks")]
            lost_commit_answers: Default::default(),
        })
    }

    /// A pool of one connection to the same database, opened on first use, for work that must
    /// not queue behind the main pool: the cluster heartbeat, which other admins read as "alive".
    pub fn own_connection(&self) -> Store {
        const WAIT: Duration = Duration::from_secs(5);
        let db = match &self.db {
            Db::Sqlite(pool) => Db::Sqlite(
                pool_options::<sqlx::Sqlite>()
                    .max_connections(1)
                    .acquire_timeout(WAIT)
                    .connect_lazy_with((*pool.connect_options()).clone()),
            ),
            Db::Postgres(pool) => Db::Postgres(
                pool_options::<sqlx::Postgres>()
                    .max_connections(1)
                    .acquire_timeout(WAIT)
                    .connect_lazy_with((*pool.connect_options()).clone()),
            ),
            Db::MySql(pool) => Db::MySql(
                mysql_pool()
                    .max_connections(1)
                    .acquire_timeout(WAIT)
                    .connect_lazy_with((*pool.connect_options()).clone()),
            ),
        };
        Store {
            db,
            availability: self.availability.clone(),
            routing_writes: self.routing_writes.clone(),
            definitions: self.definitions.clone(),
            #[cfg(feature = "fault-hooks")]
            lost_commit_answers: self.lost_commit_answers.clone(),
        }
    }

    /// How many writes this process made to groups, registrations and cordons: a routing read
    /// cached under one count is stale once it moves (other admins' writes are not counted).
    pub fn routing_writes(&self) -> u64 {
        self.routing_writes
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Counts a write to groups, registrations or cordons (see [`Store::routing_writes`]).
    pub(crate) fn routing_written(&self) {
        self.routing_writes
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Applies the backend's pending migrations; a second run changes nothing.
    pub async fn migrate(&self) -> StoreResult<()> {
        match &self.db {
            Db::Sqlite(pool) => SQLITE_MIGRATOR.run(pool).await?,
            Db::Postgres(pool) => POSTGRES_MIGRATOR.run(pool).await?,
            Db::MySql(pool) => MYSQL_MIGRATOR.run(pool).await?,
        }
        Ok(())
    }

    /// The database product behind this store.
    pub fn backend(&self) -> Backend {
        match &self.db {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
            Db::MySql(_) => Backend::MySql,
        }
    }

    /// Answers when the database answers a trivial query.
    pub async fn ping(&self) -> StoreResult<()> {
        let started = std::time::Instant::now();
        let answer: StoreResult<()> = async {
            on_pool!(self, pool => { sqlx::query("SELECT 1").execute(pool).await?; });
            Ok(())
        }
        .await;
        self.availability.observe(&answer, started);
        answer
    }

    /// Whether the database answered the last call made through an [`ActorStore`] or a ping.
    pub fn availability(&self) -> &Availability {
        &self.availability
    }

    /// Connections of the pool (not of [`Store::own_connection`]'s) in use and idle.
    pub fn pool_usage(&self) -> (usize, usize) {
        let (size, idle) = on_pool!(self, pool => (pool.size() as usize, pool.num_idle()));
        (size.saturating_sub(idle), idle)
    }

    /// Closes every connection; later calls fail.
    pub async fn close(&self) {
        on_pool!(self, pool => pool.close().await)
    }

    /// The statement in this backend's placeholder style (`?` is rewritten to `$n` for PostgreSQL).
    pub(crate) fn sql<'a>(&self, sql: impl Into<Cow<'a, str>>) -> Cow<'a, str> {
        let sql = sql.into();
        match self.backend() {
            Backend::Postgres => Cow::Owned(numbered_placeholders(&sql)),
            _ => sql,
        }
    }
}

/// The database as actors reach it: the only way in is [`ActorStore::run`], which runs the
/// work as a tokio task of its own.
///
/// Actors run their futures on an arbiter's local task set, which is dropped outside any
/// runtime context when the arbiter stops; a pooled connection dropped there panics in sqlx's
/// `Drop` and aborts the process. A tokio task is dropped inside its runtime instead. Actors are
/// given this handle rather than a [`Store`], so the rule is kept by the types, not by comments.
#[derive(Clone)]
pub struct ActorStore {
    store: Store,
}

impl ActorStore {
    /// The handle actors are built with.
    pub fn new(store: Store) -> Self {
        ActorStore { store }
    }

    /// Runs `work` on the store as a task of its own and waits for it; a task that panicked is
    /// [`StoreError::Panicked`], one cancelled at shutdown [`StoreError::Task`].
    pub async fn run<T, F, Fut>(&self, work: F) -> StoreResult<T>
    where
        F: FnOnce(Store) -> Fut,
        Fut: std::future::Future<Output = StoreResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        let started = std::time::Instant::now();
        let result = tokio::spawn(work(self.store.clone()))
            .await
            .unwrap_or_else(|e| Err(task_failure(e)));
        self.store.availability.observe(&result, started);
        result
    }

    /// Starts `work` on the store as a task of its own and does not wait for it: for retries
    /// that outlive the actor's message (a task is dropped inside its runtime, as above).
    pub fn spawn<F, Fut>(&self, work: F)
    where
        F: FnOnce(Store) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        tokio::spawn(work(self.store.clone()));
    }

    /// The database the store is on.
    pub fn backend(&self) -> Backend {
        self.store.backend()
    }

    /// The level to log a failed pass at: debug while the database is down (the outage itself
    /// is logged once, by [`Availability`]), `otherwise` when it answered.
    pub fn failure_level(&self, otherwise: log::Level) -> log::Level {
        match self.store.availability.is_up() {
            true => otherwise,
            false => log::Level::Debug,
        }
    }
}

/// A store task that did not return: [`StoreError::Panicked`] with the panic's message, or
/// [`StoreError::Task`] when it was cancelled.
fn task_failure(e: tokio::task::JoinError) -> StoreError {
    if !e.is_panic() {
        return StoreError::Task(e.to_string());
    }
    let payload = e.into_panic();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    StoreError::Panicked(message)
}

/// `mariadb://` is accepted as a synonym; the driver only knows `mysql://`.
fn mysql_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mariadb") => format!("mysql://{rest}"),
        _ => url.to_string(),
    }
}

/// Creates the folder (and its parents) if missing; what this creates only its owner may enter.
fn ensure_folder(path: &Path) -> StoreResult<()> {
    if path.as_os_str().is_empty() || path.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(path)
        .map_err(|source| StoreError::DataFolder {
            path: path.display().to_string(),
            source,
        })
}

/// Whether an SQLite URL names an in-memory database rather than a file.
fn is_memory(url: &str, file: &Path) -> bool {
    file.as_os_str() == ":memory:" || url.contains(":memory:") || url.contains("mode=memory")
}

/// Creates the SQLite file readable and writable by its owner only, before SQLite opens it:
/// it holds the executors' access token, password hashes and session hashes, and SQLite gives
/// the write-ahead log and shared-memory files it makes beside it the database file's mode. An
/// existing file is left as it is, with a warning when other users may read it.
fn ensure_private_file(file: &Path) -> StoreResult<()> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    match open.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            #[cfg(unix)]
            if let Ok(meta) = std::fs::metadata(file) {
                let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
                if mode & 0o077 != 0 {
                    log::warn!(
                        "database file {} may be read by other users (mode {:o}): it holds the \
                         executors' access token; chmod 600 it",
                        file.display(),
                        mode & 0o777
                    );
                }
            }
            Ok(())
        }
        Err(source) => Err(StoreError::DataFolder {
            path: file.display().to_string(),
            source,
        }),
    }
}

/// Rewrites `?` placeholders as `$1, $2, ...`; statements here never hold `?` inside literals.
fn numbered_placeholders(sql: &str) -> String {
    use std::fmt::Write as _;
    // every PostgreSQL statement passes here: no allocation per placeholder
    let mut out = String::with_capacity(sql.len() + sql.len() / 8);
    for (n, part) in sql.split('?').enumerate() {
        if n > 0 {
            let _ = write!(out, "${n}");
        }
        out.push_str(part);
    }
    out
}

/// Statements whose SQL grows with their rows or ids keep their prepared form in the
/// connection's statement cache up to this many: the small batches of workflow moves, node
/// fires and their results come many times a second and would otherwise be parsed each time,
/// while a second's pre-read (hundreds of rows) is prepared once per use so that its many sizes
/// do not fill the cache.
const KEPT_UP_TO: usize = 4;

/// Whether a statement over `n` rows or ids is kept prepared (see [`KEPT_UP_TO`]).
pub(crate) fn kept(n: usize) -> bool {
    n <= KEPT_UP_TO
}

/// Prepared statements each connection keeps: the fixed ones, the small-batch forms of the
/// growing ones (about 20 statements × [`KEPT_UP_TO`] sizes) and the power-of-two forms of the
/// workflow moves' and results' statements (about 10 × 11).
const STATEMENT_CACHE: usize = 200;
/// The same on MySQL/MariaDB, whose server counts every connection's prepared statements
/// against one limit (`max_prepared_stmt_count`, 16,382 by default): 16 connections of 100
/// leave room for ten admins. The rarely used long forms are the ones evicted.
const MYSQL_STATEMENT_CACHE: usize = 100;

/// An `IN (...)` list's ids (or an update's rows) padded to the next power of two by repeating
/// the last (the same rows match): a list of any length is one of a few statements, each kept
/// prepared (a workflow move's reads, of a few to fifty runs, were parsed anew at almost every
/// move).
pub(crate) fn pow2_padded<T: Copy>(items: &[T]) -> Vec<T> {
    let mut padded = items.to_vec();
    if let Some(&last) = items.last() {
        padded.resize(items.len().next_power_of_two(), last);
    }
    padded
}

/// An `IN (...)` list of `ids` padded as [`pow2_padded`]: its placeholders and its parameters.
pub(crate) fn padded_id_list<T: Copy + Into<rows::Param>>(ids: &[T]) -> (String, Vec<rows::Param>) {
    let padded = pow2_padded(ids);
    let list = placeholders(padded.len());
    (list, padded.into_iter().map(Into::into).collect())
}

/// `items` in chunks of power-of-two lengths, largest first, none over `max` (a power of two):
/// a write of any number of rows is a few statements, each kept prepared.
pub(crate) fn pow2_chunks<T>(items: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        let n = rest.len().min(max);
        if n == 0 {
            return None;
        }
        let size = 1 << (usize::BITS - 1 - n.leading_zeros());
        let (head, tail) = rest.split_at(size);
        rest = tail;
        Some(head)
    })
}

/// `?, ?, ?` with `n` placeholders, for `IN (...)` lists.
pub(crate) fn placeholders(n: usize) -> String {
    let mut s = String::with_capacity(n * 3);
    for i in 0..n {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('?');
    }
    s
}

/// Runs `attempt` again, up to three times in all, while it fails with a deadlock or a
/// serialization failure (PostgreSQL and MySQL abort one of two statements that lock the same
/// rows in different orders; the statement itself is sound and succeeds when retried).
pub(crate) async fn retry_on_deadlock<T, F, Fut>(mut attempt: F) -> StoreResult<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = StoreResult<T>>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(e) if tries < 3 && is_deadlock(&e) => {
                log::debug!("statement retried after a deadlock: {e}");
                tries += 1;
                tokio::time::sleep(Duration::from_millis(10 * tries)).await;
            }
            other => return other,
        }
    }
}

/// A deadlock or serialization failure: SQLSTATE 40P01 or 40001 (MySQL reports its deadlock,
/// error 1213, as 40001).
fn is_deadlock(e: &StoreError) -> bool {
    match e {
        StoreError::Database(sqlx::Error::Database(db)) => {
            matches!(db.code().as_deref(), Some("40P01" | "40001"))
        }
        _ => false,
    }
}

/// Maps a unique-constraint violation to [`StoreError::Duplicate`] naming `what`.
pub(crate) fn duplicate_as(err: sqlx::Error, what: impl FnOnce() -> String) -> StoreError {
    if let sqlx::Error::Database(db) = &err {
        if db.is_unique_violation() {
            return StoreError::Duplicate(what());
        }
    }
    StoreError::Database(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_lists_are_padded_to_a_few_sizes_with_the_same_ids() {
        assert_eq!(pow2_padded::<i64>(&[]), Vec::<i64>::new());
        assert_eq!(pow2_padded(&[7]), [7]);
        assert_eq!(pow2_padded(&[1, 2, 3]), [1, 2, 3, 3]);
        let sizes: std::collections::BTreeSet<usize> =
            (1..=800).map(|n| pow2_padded(&vec![1; n]).len()).collect();
        assert_eq!(sizes.len(), 11, "{sizes:?}");
        assert!(pow2_padded(&[5, 9, 2, 4, 8])
            .iter()
            .all(|i| [5, 9, 2, 4, 8].contains(i)));
    }

    #[test]
    fn writes_are_split_into_power_of_two_chunks_in_order() {
        let items: Vec<u32> = (0..77).collect();
        let sizes: Vec<usize> = pow2_chunks(&items, 32).map(<[u32]>::len).collect();
        assert_eq!(sizes, [32, 32, 8, 4, 1]);
        let joined: Vec<u32> = pow2_chunks(&items, 32).flatten().copied().collect();
        assert_eq!(joined, items);
        assert_eq!(pow2_chunks::<u32>(&[], 32).count(), 0);
    }

    #[cfg(unix)]
    #[actix_rt::test]
    async fn an_sqlite_database_is_created_for_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("new-folder").join("jobwheel.db");
        let url = format!("sqlite://{}", file.display());
        let store = Store::connect(&url, &Default::default())
            .await
            .expect("connect");
        store.migrate().await.expect("migrate");
        store
            .init_setting("probe", "x", 1)
            .await
            .expect("a write, so the WAL exists");
        let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        for suffix in ["-wal", "-shm"] {
            let side = std::path::PathBuf::from(format!("{}{suffix}", file.display()));
            assert_eq!(mode(&side), 0o600, "{suffix}");
        }
        store.close().await;
    }

    #[test]
    fn url_schemes_pick_backends() {
        assert_eq!(
            Backend::from_url("sqlite://./data/x.db").unwrap(),
            Backend::Sqlite
        );
        assert_eq!(
            Backend::from_url("sqlite::memory:").unwrap(),
            Backend::Sqlite
        );
        assert_eq!(
            Backend::from_url("postgres://u@h/db").unwrap(),
            Backend::Postgres
        );
        assert_eq!(
            Backend::from_url("postgresql://u@h/db").unwrap(),
            Backend::Postgres
        );
        assert_eq!(Backend::from_url("mysql://u@h/db").unwrap(), Backend::MySql);
        assert_eq!(
            Backend::from_url("mariadb://u@h/db").unwrap(),
            Backend::MySql
        );
    }

    #[test]
    fn bad_schemes_are_named() {
        let err = Backend::from_url("bogus://x").unwrap_err().to_string();
        assert!(err.contains("'bogus'"), "{err}");
        let err = Backend::from_url("nothing").unwrap_err().to_string();
        assert!(err.contains("no scheme"), "{err}");
    }

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(
            numbered_placeholders("UPDATE t SET a = ? WHERE id = ? AND b IN (?, ?)"),
            "UPDATE t SET a = $1 WHERE id = $2 AND b IN ($3, $4)"
        );
        assert_eq!(placeholders(3), "?, ?, ?");
        assert_eq!(placeholders(0), "");
    }

    #[test]
    fn mariadb_scheme_is_rewritten() {
        assert_eq!(mysql_url("mariadb://root@h/db"), "mysql://root@h/db");
        assert_eq!(mysql_url("mysql://root@h/db"), "mysql://root@h/db");
    }
}
