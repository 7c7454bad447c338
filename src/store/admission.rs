//! Admission: a limited fire's instance slots claimed in the transaction that inserts its run
//! rows, under a lock row per limited job and group, so a cap holds whichever admins fire at
//! once; the queue of fires waiting for a slot; and the sweep of slots whose runs closed.
//!
//! A slot counts while its run row is open (no result, not refused), so a run closed by any
//! path (its result, the lost-run monitor, a kill, a replacement) frees its slot at once; the
//! sweep only deletes rows that no longer count.

use super::rows::{bind_params, Param, RowExt};
use super::run_tx::insert_in_tx;
use super::schedule::{on_tx, Tx};
use super::{on_pool, placeholders, retry_on_deadlock, Backend, Db, Store, StoreResult};
use crate::model::{
    alarm_status, storable_text, Admission, InstanceOverflow, JobGroup, JobInfo, NewRunRow,
    TriggerType, MESSAGE_MAX_CHARS,
};

/// The caps a limited fire is admitted under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceCaps {
    /// The job.
    pub job_id: i32,
    /// Its group.
    pub group_id: i32,
    /// The job's `maxConcurrentInstances` (0: none).
    pub job_cap: i32,
    /// What a fire beyond the job's cap does.
    pub job_overflow: InstanceOverflow,
    /// The group's `maxConcurrentInstances` (0: none).
    pub group_cap: i32,
    /// What a fire beyond the group's cap does.
    pub group_overflow: InstanceOverflow,
    /// Under QUEUE, the most fires of the job waiting.
    pub queue_max: i32,
    /// Under QUEUE, how long a fire may wait, ms.
    pub queue_ttl_ms: i64,
}

impl InstanceCaps {
    /// The caps of `job` in `group`; `None` when neither has one (its fires skip admission).
    pub fn of(job: &JobInfo, group: Option<&JobGroup>) -> Option<Self> {
        let group_cap = group.map_or(0, |g| g.max_concurrent_instances.max(0));
        let job_cap = job.max_concurrent_instances.max(0);
        (job_cap > 0 || group_cap > 0).then(|| InstanceCaps {
            job_id: job.id,
            group_id: job.job_group,
            job_cap,
            job_overflow: job.instance_overflow,
            group_cap,
            group_overflow: group.map_or(InstanceOverflow::Skip, |g| g.instance_overflow),
            queue_max: job.instance_queue_max.max(1),
            queue_ttl_ms: i64::from(job.instance_queue_ttl_secs.max(1)) * 1000,
        })
    }
}

/// A run closed to make room for a new one (overflow REPLACE): its executor is asked to kill it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplacedRun {
    /// Its run row.
    pub log_id: i64,
    /// Its job.
    pub job_id: i32,
    /// The executor it was sent to, if its call's outcome was written.
    pub executor_address: Option<String>,
}

/// What admitting a fire did with its run rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admitted {
    /// Inserted with their slots: fire them. `replaced` were closed to make room.
    Ran {
        /// The run rows, in the order given.
        ids: Vec<i64>,
        /// Runs closed for these (REPLACE).
        replaced: Vec<ReplacedRun>,
    },
    /// Inserted, not to be fired now: QUEUED (the queue fires them), SKIPPED or REFUSED.
    NotRun {
        /// Why.
        admission: Admission,
        /// The run rows, in the order given.
        ids: Vec<i64>,
        /// The reason in words, as the rows' trigger messages end.
        why: String,
    },
}

/// A queued run row given its slot: fire it as itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedFire {
    /// The run row.
    pub log_id: i64,
    /// Its job.
    pub job_id: i32,
    /// Why it was fired.
    pub trigger_type: TriggerType,
    /// The fire time it stands for.
    pub schedule_time: i64,
    /// Its trigger time, moved to when it left the queue (where its executor files its log).
    pub trigger_time: i64,
    /// The parameter it was fired with.
    pub executor_param: Option<String>,
    /// `"i/n"` for a broadcast shard.
    pub sharding_param: Option<String>,
    /// Retries left.
    pub fail_retry_count: i32,
}

/// Open runs and queued fires of one job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstanceCounts {
    /// Runs holding a slot and not closed.
    pub open: i64,
    /// Fires waiting for a slot.
    pub queued: i64,
}

/// Which cap a count is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Job,
    Group,
}

impl Scope {
    fn column(self) -> &'static str {
        match self {
            Scope::Job => "job_id",
            Scope::Group => "job_group",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Scope::Job => "job",
            Scope::Group => "group",
        }
    }
}

/// A slot's run row is open: no result, and not refused.
const OPEN_RUN: &str = "l.handle_code = 0 AND l.trigger_code IN (0, 200)";

/// Queue rows expired per pass, and jobs whose queues are looked at per pass.
const PASS_LIMIT: i64 = 500;

struct AdmissionTx {
    tx: Tx,
    backend: Backend,
}

impl Store {
    async fn begin_admission(&self) -> StoreResult<AdmissionTx> {
        let tx = match &self.db {
            // the write lock at once: the count and the insert see the same database
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
            Db::MySql(pool) => Tx::MySql(pool.begin().await?),
        };
        Ok(AdmissionTx {
            tx,
            backend: self.backend(),
        })
    }

    /// Inserts a limited fire's run rows (one per shard) under its caps: with their slots when
    /// the caps allow (or the overflow policy makes room or allows it), else as the policy
    /// says (QUEUED, SKIPPED, REFUSED). The rows' `trigger_msg` is the head, to which a
    /// not-run row's reason is appended.
    pub async fn admit(
        &self,
        rows: &[NewRunRow],
        caps: &InstanceCaps,
        now: i64,
    ) -> StoreResult<Admitted> {
        retry_on_deadlock(|| async {
            let mut tx = self.begin_admission().await?;
            let admitted = tx.admit(rows, caps, now).await?;
            tx.commit().await?;
            Ok(admitted)
        })
        .await
    }

    /// One pass over the instance queues: fires waiting past their time to live are closed as
    /// SKIPPED; then, per job with waiting fires, the oldest are given the slots free now (under
    /// the job's and its group's caps as they are set now). Returns the fires to send and the
    /// ids of those closed.
    pub async fn take_queued(&self, now: i64) -> StoreResult<(Vec<QueuedFire>, Vec<i64>)> {
        let expired = self.expire_queued(now).await?;
        let sql = self.sql(format!(
            "SELECT DISTINCT job_id FROM run_queue ORDER BY job_id LIMIT {PASS_LIMIT}"
        ));
        let jobs: Vec<i32> = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.int("job_id"))
            .collect::<Result<Vec<_>, _>>()?);
        let mut fires = Vec::new();
        for job_id in jobs {
            let taken = retry_on_deadlock(|| async {
                let mut tx = self.begin_admission().await?;
                let taken = tx.take_for_job(job_id, now).await?;
                tx.commit().await?;
                Ok(taken)
            })
            .await?;
            fires.extend(taken);
        }
        Ok((fires, expired))
    }

    /// Closes queued fires whose time to live has passed (SKIPPED); their ids.
    async fn expire_queued(&self, now: i64) -> StoreResult<Vec<i64>> {
        let sql = self.sql(format!(
            "SELECT log_id FROM run_queue WHERE expires_at <= ? ORDER BY log_id LIMIT {PASS_LIMIT}"
        ));
        let due: Vec<i64> = on_pool!(self, pool => sqlx::query(&sql)
            .bind(now)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.long("log_id"))
            .collect::<Result<Vec<_>, _>>()?);
        let mut closed = Vec::new();
        for log_id in due {
            let mut tx = self.begin_admission().await?;
            let why = "waited in its instance queue past its time to live (instanceQueueTtlSecs); not run";
            if tx.dequeue_closed(log_id, Admission::Skipped, why).await? {
                closed.push(log_id);
            }
            tx.commit().await?;
        }
        Ok(closed)
    }

    /// Takes a queued fire off its queue unrun (a user's cancel), closing its row as SKIPPED
    /// with `why`; false when it is no longer queued (it left for its slot, or expired).
    pub async fn cancel_queued(&self, log_id: i64, why: &str) -> StoreResult<bool> {
        let mut tx = self.begin_admission().await?;
        let done = tx.dequeue_closed(log_id, Admission::Skipped, why).await?;
        tx.commit().await?;
        Ok(done)
    }

    /// Deletes slots whose run rows closed or are gone; how many.
    pub async fn sweep_slots(&self) -> StoreResult<u64> {
        let sql = self.sql(format!(
            "SELECT s.log_id AS log_id FROM run_slot s LEFT JOIN job_log l ON l.id = s.log_id \
             WHERE l.id IS NULL OR NOT ({OPEN_RUN}) ORDER BY s.log_id LIMIT 1000"
        ));
        let ids: Vec<i64> = on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| r.long("log_id"))
            .collect::<Result<Vec<_>, _>>()?);
        if ids.is_empty() {
            return Ok(0);
        }
        let sql = self.sql(format!(
            "DELETE FROM run_slot WHERE log_id IN ({})",
            placeholders(ids.len())
        ));
        let params: Vec<Param> = ids.iter().map(|i| Param::Long(*i)).collect();
        let done = on_pool!(self, pool => bind_params!(sqlx::query(&sql), params)
            .execute(pool)
            .await?
            .rows_affected());
        Ok(done)
    }

    /// A job's open runs (holding slots) and queued fires.
    pub async fn instance_counts(&self, job_id: i32) -> StoreResult<InstanceCounts> {
        let open = self.sql(format!(
            "SELECT COUNT(*) AS n FROM run_slot s JOIN job_log l ON l.id = s.log_id \
             WHERE s.job_id = ? AND {OPEN_RUN}"
        ));
        let queued = self.sql("SELECT COUNT(*) AS n FROM run_queue WHERE job_id = ?");
        let counts = on_pool!(self, pool => InstanceCounts {
            open: sqlx::query(&open).bind(job_id).fetch_one(pool).await?.long("n")?,
            queued: sqlx::query(&queued).bind(job_id).fetch_one(pool).await?.long("n")?,
        });
        Ok(counts)
    }
}

impl AdmissionTx {
    async fn commit(self) -> StoreResult<()> {
        match self.tx {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
            Tx::MySql(tx) => tx.commit().await?,
        }
        Ok(())
    }

    /// Takes the lock row of a job or group (written, so it is held until commit on every
    /// backend; created the first time).
    async fn lock(&mut self, scope: Scope, id: i32, now: i64) -> StoreResult<()> {
        let key = format!("{}:{id}", scope.name());
        let sql = match self.backend {
            Backend::Sqlite | Backend::Postgres => {
                "INSERT INTO admission_lock (lock_key, touched) VALUES (?, ?) \
                 ON CONFLICT (lock_key) DO UPDATE SET touched = excluded.touched"
            }
            Backend::MySql => {
                "INSERT INTO admission_lock (lock_key, touched) VALUES (?, ?) \
                 ON DUPLICATE KEY UPDATE touched = VALUES(touched)"
            }
        };
        on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(&key)
            .bind(now)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        Ok(())
    }

    /// Open runs holding slots of a job or group (read after its lock, so no admission of it
    /// is in between).
    async fn open_count(&mut self, scope: Scope, id: i32) -> StoreResult<i64> {
        let sql = format!(
            "SELECT COUNT(*) AS n FROM run_slot s JOIN job_log l ON l.id = s.log_id \
             WHERE s.{} = ? AND {OPEN_RUN}",
            scope.column()
        );
        on_tx!(self, &sql, |tx, stmt| Ok(sqlx::query(stmt)
            .bind(id)
            .fetch_one(&mut **tx)
            .await?
            .long("n")?))
    }

    async fn queue_len(&mut self, job_id: i32) -> StoreResult<i64> {
        let sql = "SELECT COUNT(*) AS n FROM run_queue WHERE job_id = ?";
        on_tx!(self, sql, |tx, stmt| Ok(sqlx::query(stmt)
            .bind(job_id)
            .fetch_one(&mut **tx)
            .await?
            .long("n")?))
    }

    async fn admit(
        &mut self,
        rows: &[NewRunRow],
        caps: &InstanceCaps,
        now: i64,
    ) -> StoreResult<Admitted> {
        // always the group first, then the job: admissions never wait for each other in a circle
        if caps.group_cap > 0 {
            self.lock(Scope::Group, caps.group_id, now).await?;
        }
        if caps.job_cap > 0 {
            self.lock(Scope::Job, caps.job_id, now).await?;
        }
        let need = rows.len() as i64;
        let scopes = [
            (Scope::Job, caps.job_id, caps.job_cap, caps.job_overflow),
            (
                Scope::Group,
                caps.group_id,
                caps.group_cap,
                caps.group_overflow,
            ),
        ];
        let mut replaced = Vec::new();
        for (scope, id, cap, overflow) in scopes {
            if cap <= 0 {
                continue;
            }
            let open = self.open_count(scope, id).await?;
            let excess = open + need - i64::from(cap);
            if excess <= 0 {
                continue;
            }
            let full = format!(
                "{} {id} has {open} of {cap} instances open (maxConcurrentInstances {cap}, \
                 instanceOverflow {})",
                scope.name(),
                overflow.as_str()
            );
            match overflow {
                InstanceOverflow::Allow => {}
                InstanceOverflow::Skip => {
                    let why = format!("skipped: {full}");
                    return self
                        .insert_not_run(rows, Admission::Skipped, why, now, caps)
                        .await;
                }
                InstanceOverflow::Queue => {
                    let waiting = self.queue_len(caps.job_id).await?;
                    if waiting + need > i64::from(caps.queue_max) {
                        let why = format!(
                            "refused: {full}, and {waiting} fire(s) wait in job {}'s queue \
                             (instanceQueueMax {})",
                            caps.job_id, caps.queue_max
                        );
                        return self
                            .insert_not_run(rows, Admission::Refused, why, now, caps)
                            .await;
                    }
                    let why = format!("queued: {full}; it runs when a slot frees");
                    return self
                        .insert_not_run(rows, Admission::Queued, why, now, caps)
                        .await;
                }
                InstanceOverflow::Replace => {
                    let victims = self.oldest_open(scope, id, excess).await?;
                    replaced.extend(victims);
                }
            }
        }
        let mut ids = Vec::with_capacity(rows.len());
        for row in rows {
            let id = self
                .insert_row(row, Admission::Ran, 0, alarm_status::DEFAULT)
                .await?;
            self.insert_slot(id, row, now).await?;
            ids.push(id);
        }
        for victim in &replaced {
            let why = format!(
                "replaced: closed to make room for run {} (instanceOverflow REPLACE); its \
                 executor is asked to kill it",
                ids.first().copied().unwrap_or_default()
            );
            self.close_replaced(victim.log_id, &why, now).await?;
        }
        Ok(Admitted::Ran { ids, replaced })
    }

    /// The `n` oldest open runs holding slots of a job or group.
    async fn oldest_open(
        &mut self,
        scope: Scope,
        id: i32,
        n: i64,
    ) -> StoreResult<Vec<ReplacedRun>> {
        let sql = format!(
            "SELECT l.id AS id, l.job_id AS job_id, l.executor_address AS executor_address \
             FROM run_slot s JOIN job_log l ON l.id = s.log_id \
             WHERE s.{} = ? AND {OPEN_RUN} ORDER BY s.log_id LIMIT {}",
            scope.column(),
            n.max(0)
        );
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(id)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| -> StoreResult<ReplacedRun> {
                Ok(ReplacedRun {
                    log_id: r.long("id")?,
                    job_id: r.int("job_id")?,
                    executor_address: r.opt_text("executor_address")?,
                })
            })
            .collect())
    }

    /// Closes a replaced run: a failure with no alarm and no retry (it was replaced on purpose).
    async fn close_replaced(&mut self, log_id: i64, why: &str, now: i64) -> StoreResult<()> {
        let sql = format!(
            "UPDATE job_log SET handle_code = 500, handle_time = ?, handle_msg = ?, \
             alarm_status = CASE WHEN alarm_status = 0 THEN {} ELSE alarm_status END \
             WHERE id = ? AND handle_code = 0",
            alarm_status::NOT_NEEDED
        );
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(now)
            .bind(why)
            .bind(log_id)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        let sql = "DELETE FROM run_slot WHERE log_id = ?";
        on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(log_id)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        Ok(())
    }

    /// Inserts rows that are not sent now; QUEUED ones join the job's queue.
    async fn insert_not_run(
        &mut self,
        rows: &[NewRunRow],
        admission: Admission,
        why: String,
        now: i64,
        caps: &InstanceCaps,
    ) -> StoreResult<Admitted> {
        let (code, alarm) = match admission {
            Admission::Queued => (0, alarm_status::QUEUED),
            // a refusal is a fault worth an alarm (its retry count is cleared: no retry)
            Admission::Refused => (500, alarm_status::DEFAULT),
            _ => (500, alarm_status::NOT_NEEDED),
        };
        let mut ids = Vec::with_capacity(rows.len());
        for row in rows {
            let mut row = row.clone();
            let head = row.trigger_msg.take().unwrap_or_default();
            row.trigger_msg = Some(admission_message(&head, admission, &why));
            if admission != Admission::Queued {
                row.executor_fail_retry_count = 0;
            }
            let id = self.insert_row(&row, admission, code, alarm).await?;
            if admission == Admission::Queued {
                let sql =
                    "INSERT INTO run_queue (log_id, job_id, job_group, queued_at, expires_at) \
                           VALUES (?, ?, ?, ?, ?)";
                on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
                    .bind(id)
                    .bind(row.job_id)
                    .bind(row.job_group)
                    .bind(now)
                    .bind(now.saturating_add(caps.queue_ttl_ms))
                    .execute(&mut **tx)
                    .await
                    .map(drop))?;
            }
            ids.push(id);
        }
        Ok(Admitted::NotRun {
            admission,
            ids,
            why,
        })
    }

    async fn insert_row(
        &mut self,
        r: &NewRunRow,
        admission: Admission,
        trigger_code: i32,
        alarm: i32,
    ) -> StoreResult<i64> {
        let sql = "INSERT INTO job_log (job_group, job_id, trigger_type, schedule_time, trigger_time, \
                   executor_handler, executor_param, executor_sharding_param, executor_fail_retry_count, \
                   trigger_msg, trigger_code, handle_code, handle_time, alarm_status, admission) \
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)";
        let msg = r
            .trigger_msg
            .as_deref()
            .map(|m| storable_text(m, MESSAGE_MAX_CHARS).into_owned());
        insert_in_tx!(&mut self.tx, sql, |q| q
            .bind(r.job_group)
            .bind(r.job_id)
            .bind(r.trigger_type.as_str())
            .bind(r.schedule_time)
            .bind(r.trigger_time)
            .bind(&r.executor_handler)
            .bind(&r.executor_param)
            .bind(&r.executor_sharding_param)
            .bind(r.executor_fail_retry_count)
            .bind(&msg)
            .bind(trigger_code)
            .bind(alarm)
            .bind(admission.as_str()))
    }

    async fn insert_slot(&mut self, log_id: i64, row: &NewRunRow, now: i64) -> StoreResult<()> {
        let sql = "INSERT INTO run_slot (log_id, job_id, job_group, taken_at) VALUES (?, ?, ?, ?)";
        on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(log_id)
            .bind(row.job_id)
            .bind(row.job_group)
            .bind(now)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        Ok(())
    }

    /// Takes a queued fire off its queue and closes its row as `admission` with `why`; false
    /// when another admin took it first.
    async fn dequeue_closed(
        &mut self,
        log_id: i64,
        admission: Admission,
        why: &str,
    ) -> StoreResult<bool> {
        if !self.dequeue(log_id).await? {
            return Ok(false);
        }
        let sql = "SELECT trigger_msg FROM job_log WHERE id = ?";
        let head: Option<String> = on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(log_id)
            .fetch_optional(&mut **tx)
            .await?
            .map(|r| r.opt_text("trigger_msg"))
            .transpose()?
            .flatten());
        let msg = admission_message(&head.unwrap_or_default(), admission, why);
        let msg = storable_text(&msg, MESSAGE_MAX_CHARS).into_owned();
        let sql = format!(
            "UPDATE job_log SET trigger_code = 500, trigger_msg = ?, admission = ?, \
             executor_fail_retry_count = 0, alarm_status = {} WHERE id = ?",
            alarm_status::NOT_NEEDED
        );
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(&msg)
            .bind(admission.as_str())
            .bind(log_id)
            .execute(&mut **tx)
            .await
            .map(drop))?;
        Ok(true)
    }

    /// Deletes a queue row; false when it was gone (another admin took it).
    async fn dequeue(&mut self, log_id: i64) -> StoreResult<bool> {
        let sql = "DELETE FROM run_queue WHERE log_id = ?";
        let n = on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(log_id)
            .execute(&mut **tx)
            .await?
            .rows_affected());
        Ok(n > 0)
    }

    /// Gives the oldest queued fires of a job the slots free now (its caps read as set now); a
    /// job gone closes its queue.
    async fn take_for_job(&mut self, job_id: i32, now: i64) -> StoreResult<Vec<QueuedFire>> {
        let sql = "SELECT j.job_group AS job_group, j.max_concurrent_instances AS job_cap, \
                   COALESCE(g.max_concurrent_instances, 0) AS group_cap \
                   FROM job_info j LEFT JOIN job_group g ON g.id = j.job_group WHERE j.id = ?";
        let caps = on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
            .bind(job_id)
            .fetch_optional(&mut **tx)
            .await?
            .map(|r| -> StoreResult<(i32, i32, i32)> {
                Ok((r.int("job_group")?, r.int("job_cap")?, r.int("group_cap")?))
            })
            .transpose()?);
        let waiting = self.queued_ids(job_id, PASS_LIMIT).await?;
        let Some((group_id, job_cap, group_cap)) = caps else {
            for log_id in waiting {
                self.dequeue_closed(log_id, Admission::Skipped, "its job was deleted; not run")
                    .await?;
            }
            return Ok(Vec::new());
        };
        if group_cap > 0 {
            self.lock(Scope::Group, group_id, now).await?;
        }
        if job_cap > 0 {
            self.lock(Scope::Job, job_id, now).await?;
        }
        let mut free = i64::MAX;
        for (scope, id, cap) in [
            (Scope::Job, job_id, job_cap),
            (Scope::Group, group_id, group_cap),
        ] {
            if cap > 0 {
                free = free.min(i64::from(cap) - self.open_count(scope, id).await?);
            }
        }
        // read again under the locks: another admin may have taken some since
        let waiting = self.queued_ids(job_id, free.clamp(0, PASS_LIMIT)).await?;
        let mut fires = Vec::with_capacity(waiting.len());
        for log_id in waiting {
            if !self.dequeue(log_id).await? {
                continue;
            }
            let sql = "UPDATE job_log SET admission = 'RAN', alarm_status = 0, trigger_time = ? \
                       WHERE id = ? AND trigger_code = 0";
            let n = on_tx!(self, sql, |tx, stmt| sqlx::query(stmt)
                .bind(now)
                .bind(log_id)
                .execute(&mut **tx)
                .await?
                .rows_affected());
            if n == 0 {
                continue; // closed meanwhile (a user's kill): nothing to send
            }
            let sql = "SELECT job_id, job_group, trigger_type, schedule_time, executor_param, \
                       executor_sharding_param, executor_fail_retry_count FROM job_log WHERE id = ?";
            let read = |r: &dyn RowExt| -> StoreResult<(NewRunRow, QueuedFire)> {
                let trigger_type = r
                    .text("trigger_type")?
                    .parse()
                    .unwrap_or(TriggerType::Manual);
                let schedule_time = r.long("schedule_time")?;
                let slot = NewRunRow {
                    job_group: r.int("job_group")?,
                    job_id,
                    trigger_type,
                    schedule_time,
                    trigger_time: now,
                    executor_handler: None,
                    executor_param: None,
                    executor_sharding_param: None,
                    executor_fail_retry_count: 0,
                    trigger_msg: None,
                };
                let fire = QueuedFire {
                    log_id,
                    job_id,
                    trigger_type,
                    schedule_time,
                    trigger_time: now,
                    executor_param: r.opt_text("executor_param")?,
                    sharding_param: r.opt_text("executor_sharding_param")?,
                    fail_retry_count: r.int("executor_fail_retry_count")?,
                };
                Ok((slot, fire))
            };
            let (slot_row, fire) = on_tx!(self, sql, |tx, stmt| read(
                &sqlx::query(stmt).bind(log_id).fetch_one(&mut **tx).await?
            ))?;
            self.insert_slot(log_id, &slot_row, now).await?;
            fires.push(fire);
        }
        Ok(fires)
    }

    async fn queued_ids(&mut self, job_id: i32, limit: i64) -> StoreResult<Vec<i64>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        let sql =
            format!("SELECT log_id FROM run_queue WHERE job_id = ? ORDER BY log_id LIMIT {limit}");
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(job_id)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| Ok(r.long("log_id")?))
            .collect())
    }
}

/// A not-run row's trigger message: the head (which ends where the call's answer would
/// follow), then the admission's verdict in its place. `why` holds only ids, numbers and fixed
/// words, never user text.
fn admission_message(head: &str, admission: Admission, why: &str) -> String {
    format!("{head}admission：{}<br>msg：{why}", admission.as_str())
}
