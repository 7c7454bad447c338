//! What a pre-read pass does with fire times taken over from an admin that stopped.
//!
//! A taken-over fire fires once, late, unless its run already has an outcome. A fire whose one
//! run row has no outcome (its admin died during the call, or between the call and its record)
//! goes out again as that row, under the same log id, however late: its executor may have it.
//! Any other fire counts as a misfire only when later than a normal pass allows plus the time it
//! takes to notice a dead admin ([`TAKEOVER_MISFIRE_AFTER_MS`]); then the job's misfire strategy
//! decides, and a fire that is not fired leaves a run row that says why. A broadcast's shard
//! rows with no outcome are closed with a message and the fire goes out again as new rows.

use std::collections::HashSet;

use super::fire::{Fire, Resend};
use super::timing_rules::{NODE_DEAD_AFTER_MS, TAKEOVER_BATCH, TAKEOVER_MISFIRE_AFTER_MS};
use crate::model::{MisfireStrategy, TriggerType};
use crate::store::{ClaimKey, OrphanFire, ScheduleTx, StoreError};

/// What to do with the fire times one pass took over.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TakeoverPlan {
    /// Fire these (their claims, now this admin's, go with their outcome).
    pub fire: Vec<Fire>,
    /// Forget these claims: done already, or the job is gone or stopped.
    pub release: Vec<ClaimKey>,
    /// Close these run rows, whose outcome was never written, before firing again.
    pub close: Vec<i64>,
    /// Not fired (too late, DO_NOTHING): a run row says so, then the claim goes.
    pub unfired: Vec<usize>,
}

/// Decides, at `now`, what becomes of each orphaned fire.
pub fn plan_takeover(orphans: &[OrphanFire], now: i64) -> TakeoverPlan {
    let mut plan = TakeoverPlan::default();
    let mut caught_up: HashSet<i32> = HashSet::new();
    for (i, o) in orphans.iter().enumerate() {
        let Some(job) = o.job.as_ref().filter(|j| j.running) else {
            plan.release.push(o.key);
            continue;
        };
        if o.runs.iter().any(|r| r.code != 0) {
            plan.release.push(o.key);
            continue;
        }
        if let [run] = o.runs.as_slice() {
            plan.fire.push(Fire {
                job_id: o.key.job_id,
                fire_time: o.key.fire_time,
                trigger_type: o.trigger_type,
                resend: Some(Resend {
                    log_id: run.log_id,
                    trigger_time: run.trigger_time,
                }),
            });
            continue;
        }
        plan.close.extend(o.runs.iter().map(|r| r.log_id));
        let too_late = now - o.key.fire_time > TAKEOVER_MISFIRE_AFTER_MS;
        let trigger_type = if !too_late {
            o.trigger_type
        } else if job.misfire_strategy == MisfireStrategy::FireOnceNow
            && !job.caught_up
            && caught_up.insert(o.key.job_id)
        {
            TriggerType::Misfire
        } else {
            plan.unfired.push(i);
            continue;
        };
        plan.fire.push(Fire {
            job_id: o.key.job_id,
            fire_time: o.key.fire_time,
            trigger_type,
            resend: None,
        });
    }
    plan
}

/// Takes over what dead admins left (when `node` may), writes the plan's rows inside the pass's
/// transaction, and returns the fires to dispatch.
pub async fn take_over(
    tx: &mut ScheduleTx,
    node: &str,
    now: i64,
) -> Result<(Vec<Fire>, usize), StoreError> {
    let orphans = tx
        .take_over_claims(node, now - NODE_DEAD_AFTER_MS, TAKEOVER_BATCH)
        .await?;
    if orphans.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let plan = plan_takeover(&orphans, now);
    let mut from: Vec<&str> = orphans.iter().map(|o| o.from.as_str()).collect();
    from.sort_unstable();
    from.dedup();
    let resent = plan.fire.iter().filter(|f| f.resend.is_some()).count();
    log::warn!(
        "admin node {node} took over {} fire time(s) of stopped admin(s) {:?}: {} to fire ({resent} of them sent again under their log id, their answer never recorded), {} not fired (too late), {} done already",
        orphans.len(),
        from,
        plan.fire.len(),
        plan.unfired.len(),
        plan.release.len()
    );
    let why = format!(
        "The admin that sent this call stopped before recording its outcome; admin {node} fired it again."
    );
    tx.close_unrecorded_runs(&plan.close, &why).await?;
    let mut release = plan.release;
    for &i in &plan.unfired {
        let o = &orphans[i];
        if let Some(job) = &o.job {
            let since = match job.caught_up {
                true => "; the job has fired once since",
                false => "",
            };
            let why = format!(
                "Not fired: its admin did not dispatch it and it was {} s late when admin {node} took it over (misfire strategy {}{since}).",
                (now - o.key.fire_time) / 1_000,
                job.misfire_strategy
            );
            tx.record_unfired(o, job, now, &why).await?;
        }
        release.push(o.key);
    }
    tx.release_claims(&release).await?;
    Ok((plan.fire, orphans.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ClaimJob, OrphanRun};

    fn run(log_id: i64, code: i32) -> OrphanRun {
        OrphanRun {
            log_id,
            code,
            trigger_time: NOW - 900,
        }
    }

    const NOW: i64 = 1_800_000_000_000;

    fn orphan(job_id: i32, late_ms: i64, strategy: MisfireStrategy) -> OrphanFire {
        OrphanFire {
            key: ClaimKey {
                job_id,
                fire_time: NOW - late_ms,
            },
            trigger_type: TriggerType::Cron,
            from: "dead".into(),
            job: Some(ClaimJob {
                job_group: 1,
                misfire_strategy: strategy,
                running: true,
                executor_handler: "h".into(),
                caught_up: false,
            }),
            runs: Vec::new(),
        }
    }

    #[test]
    fn a_fire_in_time_fires_once_late() {
        let plan = plan_takeover(&[orphan(1, 6_000, MisfireStrategy::DoNothing)], NOW);
        assert_eq!(plan.fire.len(), 1);
        assert_eq!(plan.fire[0].fire_time, NOW - 6_000);
        assert_eq!(plan.fire[0].trigger_type, TriggerType::Cron);
        assert!(plan.release.is_empty() && plan.unfired.is_empty());
    }

    #[test]
    fn a_fire_with_an_outcome_is_not_fired_again() {
        let mut done = orphan(1, 1_000, MisfireStrategy::DoNothing);
        done.runs = vec![run(10, 200)];
        let plan = plan_takeover(&[done.clone()], NOW);
        assert_eq!(plan.release, vec![done.key]);
        assert!(plan.fire.is_empty() && plan.close.is_empty());
    }

    #[test]
    fn a_run_with_no_recorded_answer_goes_again_as_itself_however_late() {
        let mut unknown = orphan(2, 1_000, MisfireStrategy::DoNothing);
        unknown.runs = vec![run(11, 0)];
        let late = TAKEOVER_MISFIRE_AFTER_MS + 60_000;
        let mut late_unknown = orphan(3, late, MisfireStrategy::DoNothing);
        late_unknown.runs = vec![run(12, 0)];
        let plan = plan_takeover(&[unknown, late_unknown], NOW);
        assert!(plan.close.is_empty(), "no row is closed: {plan:?}");
        assert!(plan.unfired.is_empty(), "a resend is no misfire");
        let resent: Vec<_> = plan.fire.iter().map(|f| (f.job_id, f.resend)).collect();
        let again = |log_id| {
            Some(Resend {
                log_id,
                trigger_time: NOW - 900,
            })
        };
        assert_eq!(resent, vec![(2, again(11)), (3, again(12))]);
    }

    #[test]
    fn a_broadcasts_unrecorded_shards_are_closed_and_fired_anew() {
        let mut shards = orphan(4, 1_000, MisfireStrategy::DoNothing);
        shards.runs = vec![run(20, 0), run(21, 0)];
        let plan = plan_takeover(&[shards], NOW);
        assert_eq!(plan.close, vec![20, 21]);
        assert_eq!(plan.fire.len(), 1);
        assert_eq!(plan.fire[0].resend, None);
    }

    #[test]
    fn too_late_follows_the_misfire_strategy() {
        let late = TAKEOVER_MISFIRE_AFTER_MS + 1;
        let orphans = [
            orphan(1, late, MisfireStrategy::DoNothing),
            orphan(2, late + 1_000, MisfireStrategy::FireOnceNow),
            orphan(2, late, MisfireStrategy::FireOnceNow),
        ];
        let plan = plan_takeover(&orphans, NOW);
        assert_eq!(plan.unfired, vec![0, 2]);
        assert_eq!(plan.fire.len(), 1);
        assert_eq!(
            (plan.fire[0].job_id, plan.fire[0].trigger_type),
            (2, TriggerType::Misfire)
        );
    }

    #[test]
    fn a_job_that_caught_up_since_does_not_fire_once_more() {
        let mut fire = orphan(
            1,
            TAKEOVER_MISFIRE_AFTER_MS + 1,
            MisfireStrategy::FireOnceNow,
        );
        fire.job.as_mut().unwrap().caught_up = true;
        let plan = plan_takeover(&[fire], NOW);
        assert!(plan.fire.is_empty());
        assert_eq!(plan.unfired, vec![0]);
    }

    #[test]
    fn a_stopped_or_deleted_job_releases_its_fire() {
        let mut stopped = orphan(1, 0, MisfireStrategy::DoNothing);
        stopped.job.as_mut().unwrap().running = false;
        let mut deleted = orphan(2, 0, MisfireStrategy::DoNothing);
        deleted.job = None;
        let plan = plan_takeover(&[stopped, deleted], NOW);
        assert_eq!(plan.release.len(), 2);
        assert!(plan.fire.is_empty());
    }
}
