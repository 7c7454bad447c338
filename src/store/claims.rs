//! Claimed fire times and the admins that hold them (`fire_claim`, `admin_node`).
//!
//! A pre-read pass writes each fire time it claims, with its admin as owner, in the same
//! transaction as the claim; the row goes once the call's outcome is written. An admin that
//! stops beating leaves its rows behind, and a live one takes them over under the schedule
//! lock: a claimed fire outlives its admin (docs/architecture.md, "Cluster rules").

use std::collections::HashMap;

use super::jobs::parse_column;
use super::rows::RowExt;
use super::schedule::{on_tx, ScheduleTx, Tx};
use super::{on_pool, retry_on_deadlock, Store, StoreError, StoreResult};
use crate::model::{alarm_status, MisfireStrategy, TriggerType, TRIGGER_STATUS_RUNNING};

/// One claimed fire time of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClaimKey {
    /// The job.
    pub job_id: i32,
    /// The fire time, epoch ms.
    pub fire_time: i64,
}

/// What a take-over needs to know of an orphaned fire's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimJob {
    /// The job's group (for a run row that says the fire was skipped).
    pub job_group: i32,
    /// What to do with a fire that is too late.
    pub misfire_strategy: MisfireStrategy,
    /// Whether the job is still scheduled.
    pub running: bool,
    /// The job's handler (for that run row).
    pub executor_handler: String,
    /// Whether a catch-up (MISFIRE) run of the job was triggered after this fire time, so a
    /// FIRE_ONCE_NOW job has had its one late fire already.
    pub caught_up: bool,
}

/// A fire time taken over from an admin that stopped before it was dispatched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanFire {
    /// The job and fire time.
    pub key: ClaimKey,
    /// CRON, or MISFIRE for a catch-up fire.
    pub trigger_type: TriggerType,
    /// The admin that claimed it (empty: handed back at a graceful stop).
    pub from: String,
    /// The job, unless it was deleted since.
    pub job: Option<ClaimJob>,
    /// Run rows already written for this fire.
    pub runs: Vec<OrphanRun>,
}

/// A run row written for an orphaned fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrphanRun {
    /// The row's id, the log id its executor was sent.
    pub log_id: i64,
    /// Its trigger code: 0 while the call's outcome is unknown.
    pub code: i32,
    /// Its trigger time, sent as the run's `logDateTime` (where an executor files its log).
    pub trigger_time: i64,
}

/// Rows per multi-row statement.
const CHUNK: usize = 200;

/// How much earlier than its fire time a run may be stamped, at most. A run's trigger time is its
/// fire time or later (one prepared ahead is stamped with its fire time); the margin, a pre-read
/// window, covers a clock stepped back meanwhile.
const RUN_BEFORE_ITS_FIRE_MS: i64 = 5_000;

/// Jobs per statement that acts on the claims of one fire time.
const JOBS_PER_STATEMENT: usize = 500;

/// `keys` grouped by fire time, in chunks of at most [`JOBS_PER_STATEMENT`] jobs: the claims an
/// outcome batch releases mostly share their second, and `fire_time = ? AND job_id IN (…)`
/// costs a key lookup per job where a list of `OR`ed pairs costs far more to plan.
fn by_fire_time(keys: &[ClaimKey]) -> Vec<(i64, Vec<i32>)> {
    let mut sorted = keys.to_vec();
    sorted.sort_unstable_by_key(|k| (k.fire_time, k.job_id));
    let mut groups: Vec<(i64, Vec<i32>)> = Vec::new();
    for k in sorted {
        match groups.last_mut() {
            Some((at, jobs)) if *at == k.fire_time && jobs.len() < JOBS_PER_STATEMENT => {
                jobs.push(k.job_id)
            }
            _ => groups.push((k.fire_time, vec![k.job_id])),
        }
    }
    groups
}

/// `action` restricted to the claims of one fire time (first parameter) and `n` jobs.
fn at_fire_time(action: &str, n: usize) -> String {
    format!("{action} WHERE fire_time = ? AND job_id IN ({})", marks(n))
}

/// `?, ?, …`: `n` placeholders.
fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// An admin of the cluster as its row stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNode {
    /// Its id (a UUID per process).
    pub id: String,
    /// The address it serves at.
    pub address: String,
    /// When it started, epoch ms.
    pub started_at: i64,
    /// Its last beat, epoch ms.
    pub beat_at: i64,
    /// It stepped down (a graceful stop under way).
    pub leaving: bool,
    /// Fire times it holds claimed, not yet dispatched.
    pub claims: i64,
}

impl Store {
    /// Records that admin `node` is alive at `now` (inserted on its first beat).
    pub async fn beat_node(
        &self,
        node: &str,
        address: &str,
        started_at: i64,
        now: i64,
    ) -> StoreResult<()> {
        let sql = self.sql(super::dialect::upsert_node(self.backend()));
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(node)
            .bind(address)
            .bind(started_at)
            .bind(now)
            .execute(pool)
            .await
            .map(|_| ())?);
        Ok(())
    }

    /// The admins whose last beat is at or after `since` and that have not stepped down, by id:
    /// the members that share the jobs.
    pub async fn live_nodes(&self, since: i64) -> StoreResult<Vec<String>> {
        let sql =
            self.sql("SELECT id FROM admin_node WHERE beat_at >= ? AND leaving = 0 ORDER BY id");
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(since)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok(r.text("id")?))
            .collect())
    }

    /// Every admin row of the cluster, with the fire times each holds claimed: what an
    /// operator reads first when fires go missing.
    pub async fn cluster_nodes(&self) -> StoreResult<Vec<ClusterNode>> {
        let sql = self.sql(
            "SELECT n.id, n.address, n.started_at, n.beat_at, n.leaving, \
             (SELECT COUNT(*) FROM fire_claim c WHERE c.owner = n.id) AS claims \
             FROM admin_node n ORDER BY n.id",
        );
        on_pool!(self, pool => sqlx::query(&sql)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| {
                Ok(ClusterNode {
                    id: r.text("id")?,
                    address: r.text("address")?,
                    started_at: r.long("started_at")?,
                    beat_at: r.long("beat_at")?,
                    leaving: r.int("leaving")? != 0,
                    claims: r.long("claims")?,
                })
            })
            .collect())
    }

    /// The first step of a graceful stop: `node` takes no share of the jobs any more (the others
    /// take it over at their next beat) but stays alive, so the fire times it holds stay its own.
    pub async fn step_down(&self, node: &str) -> StoreResult<()> {
        let sql = self.sql("UPDATE admin_node SET leaving = 1 WHERE id = ?");
        on_pool!(self, pool => sqlx::query(&sql).bind(node).execute(pool).await.map(|_| ())?);
        Ok(())
    }

    /// A graceful stop: the fire times `node` still holds get no owner, so the next pass of
    /// any live admin takes them over at once, and its row goes. Returns the fires handed back.
    pub async fn leave_cluster(&self, node: &str) -> StoreResult<u64> {
        // found through the owner index, then handed back by key: InnoDB answers
        // `UPDATE ... WHERE owner = ?` (it sets the column it would search by) with a scan of
        // the primary key, which under REPEATABLE READ locks every admin's claims and the gaps
        // between them until it commits, so the other admins' passes wait or deadlock
        let held = self.claims_of(node).await?;
        let handed = self.hand_back_own_claims(node, &held).await?;
        let remove = self.sql("DELETE FROM admin_node WHERE id = ?");
        on_pool!(self, pool => sqlx::query(&remove).bind(node).execute(pool).await.map(drop)?);
        Ok(handed)
    }

    /// Forgets claimed fire times whose outcome is written (or that will never fire).
    pub async fn release_claims(&self, keys: &[ClaimKey]) -> StoreResult<()> {
        self.on_claims("DELETE FROM fire_claim", keys, None)
            .await
            .map(drop)
    }

    /// Gives up those of `keys` that `owner` holds (others' claims of the same fire times stay
    /// theirs): for claims a pass may have committed without learning it did (the commit's
    /// answer lost), and for fire times this admin could not dispatch (their trigger failed,
    /// the database being down), which no live admin would otherwise dispatch or take over:
    /// with no owner, the next pass of any live admin takes them over under the misfire rules.
    /// Returns how many it held.
    pub async fn hand_back_own_claims(&self, owner: &str, keys: &[ClaimKey]) -> StoreResult<u64> {
        self.on_claims("UPDATE fire_claim SET owner = ''", keys, Some(owner))
            .await
    }

    /// Runs `action` on the claims of `keys` (those `owner` holds, if given), a statement per
    /// fire time and chunk of jobs; returns how many rows it changed.
    async fn on_claims(
        &self,
        action: &str,
        keys: &[ClaimKey],
        owner: Option<&str>,
    ) -> StoreResult<u64> {
        let mut changed = 0;
        for (fire_time, jobs) in by_fire_time(keys) {
            let sql = at_fire_time(action, jobs.len());
            let sql = match owner {
                Some(_) => self.sql(format!("{sql} AND owner = ?")),
                None => self.sql(sql),
            };
            // each statement is whole or nothing, so one that lost a deadlock is simply re-run
            changed += retry_on_deadlock(|| async {
                Ok(on_pool!(self, pool => {
                    let mut q = sqlx::query(&sql).persistent(false).bind(fire_time);
                    for job in &jobs {
                        q = q.bind(*job);
                    }
                    if let Some(owner) = owner {
                        q = q.bind(owner);
                    }
                    q.execute(pool).await?.rows_affected()
                }))
            })
            .await?;
        }
        Ok(changed)
    }

    /// Fire times `owner` holds (`""`: handed back), oldest first.
    pub async fn claims_of(&self, owner: &str) -> StoreResult<Vec<ClaimKey>> {
        let sql =
            self.sql("SELECT job_id, fire_time FROM fire_claim WHERE owner = ? ORDER BY fire_time");
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(owner)
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| Ok(ClaimKey { job_id: r.int("job_id")?, fire_time: r.long("fire_time")? }))
            .collect())
    }
}

impl ScheduleTx {
    /// Writes the fire times this pass claimed, owned by `owner`.
    pub async fn insert_claims(
        &mut self,
        owner: &str,
        fires: &[(ClaimKey, TriggerType)],
    ) -> StoreResult<()> {
        for chunk in fires.chunks(CHUNK) {
            let sql = format!(
                "INSERT INTO fire_claim (job_id, fire_time, trigger_type, owner) VALUES {}",
                vec!["(?, ?, ?, ?)"; chunk.len()].join(", ")
            );
            on_tx!(self, &sql, |tx, stmt| {
                let mut q = sqlx::query(stmt).persistent(false);
                for (key, kind) in chunk {
                    q = q
                        .bind(key.job_id)
                        .bind(key.fire_time)
                        .bind(kind.as_str())
                        .bind(owner);
                }
                q.execute(&mut **tx).await?;
            });
        }
        Ok(())
    }

    /// Takes over, for admin `me`, at most `limit` fire times (oldest first) of admins whose
    /// last beat is older than `dead_before` or that handed them back, with their jobs and the
    /// run rows already written for them. A dead admin's row goes once it holds nothing.
    pub async fn take_over_claims(
        &mut self,
        me: &str,
        dead_before: i64,
        limit: i64,
    ) -> StoreResult<Vec<OrphanFire>> {
        let mut owners = vec![String::new()];
        on_tx!(
            self,
            "SELECT id FROM admin_node WHERE beat_at < ? AND id <> ?",
            |tx, stmt| {
                for row in sqlx::query(stmt)
                    .bind(dead_before)
                    .bind(me)
                    .fetch_all(&mut **tx)
                    .await?
                {
                    owners.push(row.text("id")?);
                }
            }
        );
        let sql = format!(
            "SELECT c.job_id AS job_id, c.fire_time AS fire_time, c.trigger_type AS trigger_type, \
             c.owner AS owner, j.id AS id, j.job_group AS job_group, \
             j.misfire_strategy AS misfire_strategy, j.trigger_status AS trigger_status, \
             j.executor_handler AS executor_handler, \
             CASE WHEN EXISTS (SELECT 1 FROM job_log l WHERE l.job_id = c.job_id \
               AND l.trigger_time > c.fire_time AND l.trigger_type = 'MISFIRE') \
               THEN 1 ELSE 0 END AS caught_up \
             FROM fire_claim c LEFT JOIN job_info j ON j.id = c.job_id \
             WHERE c.owner IN ({}) ORDER BY c.fire_time LIMIT ?",
            marks(owners.len())
        );
        let mut orphans = Vec::new();
        on_tx!(self, &sql, |tx, stmt| {
            let mut q = sqlx::query(stmt).persistent(false);
            for owner in &owners {
                q = q.bind(owner);
            }
            for row in q.bind(limit).fetch_all(&mut **tx).await? {
                orphans.push(orphan_from_row(&row)?);
            }
        });
        let keys: Vec<ClaimKey> = orphans.iter().map(|o| o.key).collect();
        for (fire_time, jobs) in by_fire_time(&keys) {
            let adopt = at_fire_time("UPDATE fire_claim SET owner = ?", jobs.len());
            on_tx!(self, &adopt, |tx, stmt| {
                let mut q = sqlx::query(stmt).persistent(false).bind(me).bind(fire_time);
                for job in &jobs {
                    q = q.bind(*job);
                }
                q.execute(&mut **tx).await?;
            });
        }
        // the runs already written for them, read through (job_id, trigger_time): a list of
        // (job_id, schedule_time) pairs has no index, and PostgreSQL answers it with a full
        // scan of job_log (seconds a statement at a few hundred thousand rows)
        let at: HashMap<ClaimKey, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        let mut by_job = keys;
        by_job.sort_unstable_by_key(|k| (k.job_id, k.fire_time));
        for chunk in by_job.chunks(CHUNK) {
            let mut jobs: Vec<i32> = chunk.iter().map(|k| k.job_id).collect();
            jobs.dedup();
            let first_fire = chunk.iter().map(|k| k.fire_time).min().unwrap_or_default();
            let runs = format!(
                "SELECT id, job_id, schedule_time, trigger_code, trigger_time FROM job_log \
                 WHERE trigger_type IN ('CRON', 'MISFIRE') AND job_id IN ({}) AND trigger_time >= ?",
                marks(jobs.len())
            );
            on_tx!(self, &runs, |tx, stmt| {
                let mut q = sqlx::query(stmt).persistent(false);
                for job in &jobs {
                    q = q.bind(*job);
                }
                let since = first_fire - RUN_BEFORE_ITS_FIRE_MS;
                for row in q.bind(since).fetch_all(&mut **tx).await? {
                    let key = ClaimKey {
                        job_id: row.int("job_id")?,
                        fire_time: row.long("schedule_time")?,
                    };
                    if let Some(&i) = at.get(&key) {
                        orphans[i].runs.push(OrphanRun {
                            log_id: row.long("id")?,
                            code: row.int("trigger_code")?,
                            trigger_time: row.long("trigger_time")?,
                        });
                    }
                }
            });
        }
        if owners.len() > 1 {
            let gone = format!(
                "DELETE FROM admin_node WHERE id IN ({}) \
                 AND NOT EXISTS (SELECT 1 FROM fire_claim c WHERE c.owner = admin_node.id)",
                marks(owners.len() - 1)
            );
            on_tx!(self, &gone, |tx, stmt| {
                let mut q = sqlx::query(stmt).persistent(false);
                for owner in &owners[1..] {
                    q = q.bind(owner);
                }
                q.execute(&mut **tx).await?;
            });
        }
        Ok(orphans)
    }

    /// Forgets fire times inside the pass (taken over, but done or never to fire).
    pub async fn release_claims(&mut self, keys: &[ClaimKey]) -> StoreResult<()> {
        for (fire_time, jobs) in by_fire_time(keys) {
            let sql = at_fire_time("DELETE FROM fire_claim", jobs.len());
            on_tx!(self, &sql, |tx, stmt| {
                let mut q = sqlx::query(stmt).persistent(false).bind(fire_time);
                for job in &jobs {
                    q = q.bind(*job);
                }
                q.execute(&mut **tx).await?;
            });
        }
        Ok(())
    }

    /// Closes run rows whose call's outcome was never written (their admin stopped), saying
    /// why; no alarm or retry follows, since the fire is dispatched again.
    pub async fn close_unrecorded_runs(&mut self, ids: &[i64], why: &str) -> StoreResult<()> {
        for chunk in ids.chunks(CHUNK) {
            let sql = format!(
                "UPDATE job_log SET trigger_code = 500, trigger_msg = ?, alarm_status = {} \
                 WHERE trigger_code = 0 AND id IN ({})",
                alarm_status::NOT_NEEDED,
                marks(chunk.len())
            );
            on_tx!(self, &sql, |tx, stmt| {
                let mut q = sqlx::query(stmt).persistent(false).bind(why);
                for id in chunk {
                    q = q.bind(*id);
                }
                q.execute(&mut **tx).await?;
            });
        }
        Ok(())
    }

    /// Writes the run row of a taken-over fire that is not fired (too late, misfire strategy
    /// DO_NOTHING): failed to trigger, with `why`, and no alarm or retry.
    pub async fn record_unfired(
        &mut self,
        fire: &OrphanFire,
        job: &ClaimJob,
        now: i64,
        why: &str,
    ) -> StoreResult<()> {
        let sql = format!(
            "INSERT INTO job_log (job_group, job_id, trigger_type, schedule_time, executor_handler, \
             trigger_time, trigger_code, trigger_msg, alarm_status) VALUES (?, ?, ?, ?, ?, ?, 500, ?, {})",
            alarm_status::NOT_NEEDED
        );
        on_tx!(self, &sql, |tx, stmt| sqlx::query(stmt)
            .bind(job.job_group)
            .bind(fire.key.job_id)
            .bind(fire.trigger_type.as_str())
            .bind(fire.key.fire_time)
            .bind(&job.executor_handler)
            .bind(now)
            .bind(why)
            .execute(&mut **tx)
            .await
            .map(|_| ())?);
        Ok(())
    }
}

fn orphan_from_row(row: &impl RowExt) -> StoreResult<OrphanFire> {
    let job_id = row.int("job_id")?;
    let trigger_type = row
        .text("trigger_type")?
        .parse()
        .map_err(|e| StoreError::Corrupt {
            table: "fire_claim",
            id: job_id.into(),
            detail: format!("{e}"),
        })?;
    let job = match row.opt_int("id")? {
        Some(_) => Some(ClaimJob {
            job_group: row.int("job_group")?,
            misfire_strategy: parse_column(row, job_id, "misfire_strategy")?,
            running: row.int("trigger_status")? == TRIGGER_STATUS_RUNNING,
            executor_handler: row.text("executor_handler")?,
            caught_up: row.int("caught_up")? != 0,
        }),
        None => None,
    };
    Ok(OrphanFire {
        key: ClaimKey {
            job_id,
            fire_time: row.long("fire_time")?,
        },
        trigger_type,
        from: row.text("owner")?,
        job,
        runs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_grouped_by_fire_time_in_bounded_chunks() {
        let mut keys: Vec<ClaimKey> = (0..(JOBS_PER_STATEMENT as i32 + 1))
            .map(|job_id| ClaimKey {
                job_id,
                fire_time: 2_000,
            })
            .collect();
        keys.push(ClaimKey {
            job_id: 7,
            fire_time: 1_000,
        });
        let groups = by_fire_time(&keys);
        let shape: Vec<(i64, usize)> = groups.iter().map(|(at, j)| (*at, j.len())).collect();
        assert_eq!(
            shape,
            vec![(1_000, 1), (2_000, JOBS_PER_STATEMENT), (2_000, 1)]
        );
        let all: usize = groups.iter().map(|(_, j)| j.len()).sum();
        assert_eq!(all, keys.len());
    }
}
