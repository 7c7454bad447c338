//! The database a scenario runs on: a fresh SQLite file, or a private scratch schema/database
//! on a PostgreSQL/MySQL server, dropped afterwards. Jobs are created through [`Store`].

use std::path::Path;

use jobwheel::clock::now_ms;
use jobwheel::model::{
    AddressType, InstanceOverflow, JobGroup, JobInfo, MisfireStrategy, ScheduleType,
};
use jobwheel::store::{Backend, JobFilter, PoolSettings, Store};

/// App name of the simulated executors' group.
pub const BENCH_APP: &str = "jobwheel-bench";

/// A scenario's database.
pub struct BenchDb {
    /// URL reaching exactly this database (give it to the admin).
    pub url: String,
    /// Connected, migrated store.
    pub store: Store,
    server: Option<(String, String)>,
}

impl BenchDb {
    /// A fresh database: `None` or an `sqlite:` URL gives a new file in `work`; a PostgreSQL or
    /// MySQL URL gives a scratch schema/database on that server.
    pub async fn create(
        database_url: Option<&str>,
        work: &Path,
        tag: &str,
    ) -> Result<BenchDb, String> {
        let name = format!(
            "jwbench_{tag}_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let backend = match database_url {
            None => Backend::Sqlite,
            Some(u) => Backend::from_url(u).map_err(|e| e.to_string())?,
        };
        let (url, server) = match (backend, database_url) {
            (Backend::Sqlite, _) | (_, None) => (
                format!("sqlite://{}", work.join(format!("{name}.db")).display()),
                None,
            ),
            (_, Some(server_url)) => {
                let url = jobwheel_scratch::create_scratch_database(server_url, &name)
                    .await
                    .map_err(|e| format!("cannot create scratch database {name}: {e}"))?;
                (url, Some((server_url.to_string(), name)))
            }
        };
        let settings = PoolSettings {
            max_connections: 8,
            ..PoolSettings::default()
        };
        let store = Store::connect(&url, &settings)
            .await
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        store
            .migrate()
            .await
            .map_err(|e| format!("cannot migrate {url}: {e}"))?;
        Ok(BenchDb { url, store, server })
    }

    /// Closes the pool and drops a scratch database (SQLite files go with the work folder).
    pub async fn drop_db(self) {
        self.store.close().await;
        if let Some((server, name)) = self.server {
            if let Err(e) = jobwheel_scratch::drop_scratch_database(&server, &name).await {
                eprintln!("warning: could not drop scratch database {name}: {e}");
            }
        }
    }

    /// Creates the bench executors' group (automatic registration) and returns its id.
    pub async fn group(&self, app: &str) -> Result<i32, String> {
        self.store
            .insert_group(&JobGroup {
                id: 0,
                app_name: app.to_string(),
                title: app.to_string(),
                address_type: AddressType::Auto,
                address_list: Vec::new(),
                access_token: None,
                update_time: now_ms(),
                max_concurrent_instances: 0,
                instance_overflow: InstanceOverflow::Skip,
            })
            .await
            .map_err(|e| format!("cannot create group {app}: {e}"))
    }

    /// Inserts `n` jobs made by `make(i)` in bulk, 10,000 per transaction.
    pub async fn insert_jobs(
        &self,
        n: usize,
        make: impl Fn(usize) -> JobInfo,
    ) -> Result<(), String> {
        let mut start = 0;
        while start < n {
            let end = (start + 10_000).min(n);
            let jobs: Vec<JobInfo> = (start..end).map(&make).collect();
            self.store
                .insert_jobs_bulk(&jobs)
                .await
                .map_err(|e| format!("cannot insert jobs: {e}"))?;
            start = end;
        }
        Ok(())
    }

    /// Ids of the jobs of a group.
    pub async fn job_ids(&self, group: i32) -> Result<Vec<i32>, String> {
        let filter = JobFilter {
            job_group: Some(group),
            limit: i64::MAX / 2,
            ..Default::default()
        };
        let (_, jobs) = self
            .store
            .list_jobs(&filter)
            .await
            .map_err(|e| format!("cannot list jobs: {e}"))?;
        Ok(jobs.into_iter().map(|j| j.id).collect())
    }
}

/// A scheduled job of `group` with a trivial handler: `schedule` is (type, conf); it first
/// fires at `first_fire` (epoch ms). Misfires are skipped, so a late admin shows as gaps.
pub fn scheduled_job(
    group: i32,
    i: usize,
    schedule: (ScheduleType, &str),
    first_fire: i64,
) -> JobInfo {
    let mut job = JobInfo::new(group, format!("bench job {i}"), "benchNoop");
    let now = now_ms();
    job.add_time = now;
    job.update_time = now;
    job.author = "bench".into();
    job.schedule_type = schedule.0;
    job.schedule_conf = schedule.1.to_string();
    job.timezone = "UTC".into();
    job.misfire_strategy = MisfireStrategy::DoNothing;
    job.trigger_status = jobwheel::model::TRIGGER_STATUS_RUNNING;
    job.trigger_next_time = first_fire;
    job
}
