//! Builds and runs the admin: database, migrations, first user, HTTP server.

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::{App, HttpServer};

use crate::config::AdminSettings;
use crate::model::{Role, User};
use crate::password::{hash_password, random_secret, HashError};
use crate::store::{PoolSettings, Store, StoreError};
use crate::web::{self, AppState};

/// Why the admin could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The listen address is taken or not ours.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The first user's password could not be hashed.
    #[error(transparent)]
    Hash(#[from] HashError),
}

/// A built admin, listening but not yet serving.
pub struct Admin {
    port: u16,
    server: Server,
    store: Store,
}

impl Admin {
    /// Opens the database, applies migrations, creates the first user, binds the port.
    pub async fn build(settings: &AdminSettings) -> Result<Admin, StartupError> {
        let store = Store::connect(&settings.database_url, &PoolSettings::default()).await?;
        store.migrate().await?;
        log::info!(
            "database ready ({}, migrations applied)",
            store.backend().name()
        );
        ensure_admin_user(&store, settings.admin_password.as_deref()).await?;

        let listener = TcpListener::bind(settings.bind).map_err(|source| StartupError::Bind {
            addr: settings.bind.to_string(),
            source,
        })?;
        let port = listener
            .local_addr()
            .map_err(|source| StartupError::Bind {
                addr: settings.bind.to_string(),
                source,
            })?
            .port();
        let state = AppState {
            store: store.clone(),
        };
        let server = HttpServer::new(move || App::new().configure(web::configure(state.clone())))
            .listen(listener)
            .map_err(|source| StartupError::Bind {
                addr: settings.bind.to_string(),
                source,
            })?
            .run();
        log::info!("admin listening on {}:{port}", settings.bind.ip());
        Ok(Admin {
            port,
            server,
            store,
        })
    }

    /// The bound port (useful when binding port 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The admin's database.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Serves until Ctrl-C/SIGTERM, then stops gracefully.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let result = self.server.await;
        self.store.close().await;
        log::info!("admin stopped");
        result
    }
}

/// On a database without users, creates `admin` with the given password, or a random one that
/// is printed once (never a well-known default like XXL-JOB's admin/123456).
pub async fn ensure_admin_user(
    store: &Store,
    password: Option<&str>,
) -> Result<Option<String>, StartupError> {
    if store.count_users().await? > 0 {
        if password.is_some() {
            log::info!("--admin-password ignored: users already exist");
        }
        return Ok(None);
    }
    let (password, generated) = match password {
        Some(p) => (p.to_string(), false),
        None => (random_secret(16), true),
    };
    let user = User {
        id: 0,
        username: "admin".into(),
        password_hash: hash_password(&password)?,
        role: Role::Admin,
        permission: Vec::new(),
    };
    match store.insert_user(&user).await {
        Ok(_) => {}
        // another admin of the cluster created it first
        Err(StoreError::Duplicate(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    if generated {
        println!("created user 'admin' with password: {password}  (shown once; change it after logging in)");
        log::warn!("created user 'admin' with a generated password (printed on stdout)");
        Ok(Some(password))
    } else {
        log::info!("created user 'admin' with the password from --admin-password");
        Ok(None)
    }
}
