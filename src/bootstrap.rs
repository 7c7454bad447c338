//! First-start set-up of an empty database: the `admin` user, and in standalone mode a demo
//! group and job so a new user sees runs appear.

use chrono_tz::Tz;

use crate::clock::now_ms;
use crate::model::{
    AddressType, JobGroup, JobInfo, Role, ScheduleType, User, TRIGGER_STATUS_RUNNING,
};
use crate::password::{hash_password, random_secret, reset_required};
use crate::protocol::unusable_token;
use crate::store::{Store, StoreError, ACCESS_TOKEN_SETTING};
use crate::timing;

/// App name of the executor that runs inside `jobwheel standalone`, and of its demo group.
pub const LOCAL_APP_NAME: &str = "jobwheel-local";

/// Why the first-start set-up could not be done.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// The database refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The first user's password could not be hashed.
    #[error(transparent)]
    Hash(#[from] crate::password::HashError),
    /// The executors' access token cannot be used.
    #[error("{0}")]
    Token(String),
}

/// Cron of the demo job: every 10 seconds.
pub const DEMO_CRON: &str = "0/10 * * * * ?";

/// On a database without users, creates `admin` with the given password, or a random one that
/// is printed once (never a well-known default like XXL-JOB's admin/123456). On a database whose
/// administrators were all imported without a password, gives one of them (`admin` first) that
/// password instead, so someone can log in and set the others'.
pub async fn ensure_admin_user(
    store: &Store,
    password: Option<&str>,
) -> Result<Option<String>, BootstrapError> {
    if store.count_users().await? > 0 {
        return unlock_imported_admin(store, password).await;
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

/// When every administrator still waits for a password (a fresh import from XXL-JOB), sets one
/// for `admin`, or else the first administrator, as a first start would for a new `admin`.
async fn unlock_imported_admin(
    store: &Store,
    password: Option<&str>,
) -> Result<Option<String>, BootstrapError> {
    let admins: Vec<User> = store
        .list_users()
        .await?
        .into_iter()
        .filter(|u| u.role == Role::Admin)
        .collect();
    let waiting = admins.iter().all(|u| reset_required(&u.password_hash));
    let chosen = admins
        .iter()
        .find(|u| u.username == "admin")
        .or_else(|| admins.first());
    let Some(user) = chosen.filter(|_| waiting) else {
        if password.is_some() {
            log::info!("--admin-password ignored: users already exist");
        }
        return Ok(None);
    };
    let (password, generated) = match password {
        Some(p) => (p.to_string(), false),
        None => (random_secret(16), true),
    };
    let user = User {
        password_hash: hash_password(&password)?,
        ..user.clone()
    };
    store.update_user(&user).await?;
    let name = &user.username;
    if generated {
        println!("administrator '{name}' (imported without a password) now has password: {password}  (shown once; change it after logging in)");
        log::warn!(
            "gave the imported administrator '{name}' a generated password (printed on stdout)"
        );
        Ok(Some(password))
    } else {
        log::info!("gave the imported administrator '{name}' the password from --admin-password");
        Ok(None)
    }
}

/// Characters of a generated access token (alphanumeric: ~190 bits).
const ACCESS_TOKEN_LEN: usize = 32;

/// The executors' access token: `--access-token` when given, else the one stored in the
/// database, else a new random one, stored (every admin of a cluster then uses it) and printed
/// once. The admin never runs without one.
pub async fn ensure_access_token(
    store: &Store,
    flag: Option<&str>,
) -> Result<String, BootstrapError> {
    if let Some(token) = flag {
        log::info!("executor access token: the one given with --access-token");
        return Ok(token.to_string());
    }
    if let Some(stored) = store.get_setting(ACCESS_TOKEN_SETTING).await? {
        if let Some(why) = unusable_token(&stored) {
            return Err(BootstrapError::Token(format!(
                "the access token stored in the database cannot be used: {why}; give one with --access-token"
            )));
        }
        log::info!("executor access token: the one stored in the database");
        return Ok(stored);
    }
    let generated = random_secret(ACCESS_TOKEN_LEN);
    let token = store
        .init_setting(ACCESS_TOKEN_SETTING, &generated, now_ms())
        .await?;
    if token == generated {
        println!(
            "generated the executors' access token: {token}  (shown once; stored in the database; \
             executors need it: --access-token; Java: xxl.job.admin.accessToken, 2.4: xxl.job.accessToken)"
        );
        log::warn!("generated an access token for executors (printed on stdout)");
    }
    Ok(token)
}

/// On a database without groups or jobs, creates the `jobwheel-local` group and a started demo
/// job running `demoJobHandler` every 10 s; returns the job id when it created one.
pub async fn ensure_demo(store: &Store, tz: Tz) -> Result<Option<i32>, BootstrapError> {
    if !store.list_groups().await?.is_empty() || store.count_jobs().await? > 0 {
        return Ok(None);
    }
    let now = now_ms();
    let group = JobGroup {
        id: 0,
        app_name: LOCAL_APP_NAME.to_string(),
        title: "Local executor".to_string(),
        address_type: AddressType::Auto,
        address_list: Vec::new(),
        access_token: None,
        update_time: now,
        max_concurrent_instances: 0,
        instance_overflow: crate::model::InstanceOverflow::Skip,
    };
    let group_id = match store.insert_group(&group).await {
        Ok(id) => id,
        // another admin of the cluster created it first
        Err(StoreError::Duplicate(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut job = JobInfo::new(
        group_id,
        "Demo job: logs its parameter every 10 s",
        "demoJobHandler",
    );
    job.author = "jobwheel".to_string();
    job.add_time = now;
    job.update_time = now;
    job.schedule_type = ScheduleType::Cron;
    job.schedule_conf = DEMO_CRON.to_string();
    job.executor_param = "hello from jobwheel".to_string();
    job.glue_remark = "initial".to_string();
    job.trigger_status = TRIGGER_STATUS_RUNNING;
    job.trigger_next_time = timing::next_fire_time(job.schedule_type, DEMO_CRON, tz, now)
        .ok()
        .flatten()
        .unwrap_or(now);
    let id = store.insert_job(&job).await?;
    log::info!("created demo group '{LOCAL_APP_NAME}' and demo job {id} ({DEMO_CRON})");
    Ok(Some(id))
}
