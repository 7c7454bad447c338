//! What an import would do: each row the XXL-JOB database holds is created, found already
//! there (the same row, so a second run writes nothing), or skipped with the reason, decided by
//! comparing it with what the target database holds.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use crate::model::{AddressType, GlueVersion, JobGroup, JobInfo, RunRow, User};
use crate::password::reset_required;
use crate::store::{ImportBatch, Store, StoreResult};

/// Ids shown per skip reason; the rest are counted.
const IDS_SHOWN: usize = 10;

/// The outcome for one kind of row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Rows to create (or created).
    pub created: u64,
    /// Rows the target already holds as they are.
    pub present: u64,
    /// Ids (or names) skipped, by reason.
    pub skipped: BTreeMap<String, Vec<String>>,
}

impl Tally {
    fn skip(&mut self, reason: impl Into<String>, id: impl ToString) {
        self.skipped
            .entry(reason.into())
            .or_default()
            .push(id.to_string());
    }

    /// How many rows were skipped.
    pub fn skipped_count(&self) -> usize {
        self.skipped.values().map(Vec::len).sum()
    }

    /// `label: N created, N already present, N skipped` and a line per skip reason.
    pub fn render(&self, label: &str, dry_run: bool) -> String {
        let verb = if dry_run { "to create" } else { "created" };
        let mut out = format!(
            "{label}: {} {verb}, {} already present, {} skipped",
            self.created,
            self.present,
            self.skipped_count()
        );
        for (reason, ids) in &self.skipped {
            let shown = ids[..ids.len().min(IDS_SHOWN)].join(", ");
            let more = match ids.len().saturating_sub(IDS_SHOWN) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let _ = write!(out, "\n  skipped {shown}{more}: {reason}");
        }
        out
    }
}

/// The plan for groups, jobs, script versions and users.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// What to write.
    pub batch: ImportBatch,
    /// Groups.
    pub groups: Tally,
    /// Jobs.
    pub jobs: Tally,
    /// Saved script versions.
    pub glue_versions: Tally,
    /// Users.
    pub users: Tally,
    /// Imported users who have no password yet, by name.
    pub to_reset: Vec<String>,
    /// Jobs that exist in the target once the plan is applied (their logs can follow).
    pub usable_jobs: HashSet<i32>,
}

/// Two groups are the same when everything an operator set agrees; an automatic group's
/// address list and its update time follow the registrations and may differ.
fn same_group(a: &JobGroup, b: &JobGroup) -> bool {
    a.app_name == b.app_name
        && a.title == b.title
        && a.address_type == b.address_type
        && a.access_token == b.access_token
        && (a.address_type == AddressType::Auto || a.address_list == b.address_list)
}

/// Two jobs are the same when all but their fire times (the scheduler moves those on) and their
/// owner (jobwheel's, which XXL-JOB does not have) agree.
fn same_job(a: &JobInfo, b: &JobInfo) -> bool {
    let moving = |j: &JobInfo| JobInfo {
        trigger_last_time: 0,
        trigger_next_time: 0,
        owner_id: 0,
        ..j.clone()
    };
    moving(a) == moving(b)
}

fn same_glue(a: &GlueVersion, b: &GlueVersion) -> bool {
    a.job_id == b.job_id
        && a.glue_type == b.glue_type
        && a.glue_source == b.glue_source
        && a.glue_remark == b.glue_remark
}

/// Plans groups, jobs, script versions and users against `target` (`None`: an empty database).
pub async fn plan_definitions(
    target: Option<&Store>,
    groups: Vec<JobGroup>,
    jobs: Vec<JobInfo>,
    glue_versions: Vec<GlueVersion>,
    users: Vec<User>,
) -> StoreResult<Plan> {
    let mut plan = Plan::default();
    let source_groups: HashSet<i32> = groups.iter().map(|g| g.id).collect();
    let mut usable_groups = HashSet::new();
    for g in groups {
        let (by_id, by_name) = match target {
            Some(t) => (
                t.get_group(g.id).await?,
                t.get_group_by_app_name(&g.app_name).await?,
            ),
            None => (None, None),
        };
        match (by_id, by_name) {
            (Some(existing), _) if same_group(&existing, &g) => {
                plan.groups.present += 1;
                usable_groups.insert(g.id);
            }
            (Some(existing), _) => plan.groups.skip(
                format!(
                    "the target already has a group with this id ('{}') with other settings",
                    existing.app_name
                ),
                g.id,
            ),
            (None, Some(other)) => plan.groups.skip(
                format!(
                    "app name '{}' is already used by the target's group {}",
                    g.app_name, other.id
                ),
                g.id,
            ),
            (None, None) => {
                plan.groups.created += 1;
                usable_groups.insert(g.id);
                plan.batch.groups.push(g);
            }
        }
    }

    let existing_jobs: HashMap<i32, JobInfo> = match target {
        Some(t) => {
            let ids: Vec<i32> = jobs.iter().map(|j| j.id).collect();
            t.get_jobs(&ids)
                .await?
                .into_iter()
                .map(|j| (j.id, j))
                .collect()
        }
        None => HashMap::new(),
    };
    for j in jobs {
        if !usable_groups.contains(&j.job_group) {
            let reason = if source_groups.contains(&j.job_group) {
                format!("its group {} is not imported", j.job_group)
            } else {
                format!("its group {} does not exist in XXL-JOB", j.job_group)
            };
            plan.jobs.skip(reason, j.id);
            continue;
        }
        match existing_jobs.get(&j.id) {
            Some(existing) if same_job(existing, &j) => {
                plan.jobs.present += 1;
                plan.usable_jobs.insert(j.id);
            }
            Some(existing) => plan.jobs.skip(
                format!(
                    "the target already has a job with this id ('{}') with other settings",
                    existing.job_desc
                ),
                j.id,
            ),
            None => {
                plan.jobs.created += 1;
                plan.usable_jobs.insert(j.id);
                plan.batch.jobs.push(j);
            }
        }
    }

    let existing_glue: HashMap<i32, GlueVersion> = match target {
        Some(t) => {
            let ids: Vec<i32> = glue_versions.iter().map(|v| v.id).collect();
            t.get_glue_versions(&ids)
                .await?
                .into_iter()
                .map(|v| (v.id, v))
                .collect()
        }
        None => HashMap::new(),
    };
    for v in glue_versions {
        if !plan.usable_jobs.contains(&v.job_id) {
            plan.glue_versions
                .skip(format!("its job {} is not imported", v.job_id), v.id);
            continue;
        }
        match existing_glue.get(&v.id) {
            Some(existing) if same_glue(existing, &v) => plan.glue_versions.present += 1,
            Some(_) => plan.glue_versions.skip(
                "the target already has a script version with this id, of other content",
                v.id,
            ),
            None => {
                plan.glue_versions.created += 1;
                plan.batch.glue_versions.push(v);
            }
        }
    }

    for u in users {
        let existing = match target {
            Some(t) => t.get_user_by_name(&u.username).await?,
            None => None,
        };
        match existing {
            Some(e) if e.role == u.role && e.permission == u.permission => {
                plan.users.present += 1;
                if reset_required(&e.password_hash) {
                    plan.to_reset.push(u.username);
                }
            }
            Some(_) => plan.users.skip(
                "the target already has a user of this name with another role or groups",
                &u.username,
            ),
            None => {
                plan.users.created += 1;
                plan.to_reset.push(u.username.clone());
                plan.batch.users.push(u);
            }
        }
    }
    Ok(plan)
}

/// Plans one page of run logs: those of jobs the target has, not there yet.
pub async fn plan_logs(
    target: Option<&Store>,
    usable_jobs: &HashSet<i32>,
    logs: Vec<RunRow>,
    tally: &mut Tally,
) -> StoreResult<Vec<RunRow>> {
    let existing: HashMap<i64, i32> = match target {
        Some(t) => {
            let ids: Vec<i64> = logs.iter().map(|l| l.id).collect();
            t.get_log_jobs(&ids).await?.into_iter().collect()
        }
        None => HashMap::new(),
    };
    let mut create = Vec::new();
    for l in logs {
        match existing.get(&l.id) {
            Some(job) if *job == l.job_id => tally.present += 1,
            Some(job) => tally.skip(
                format!("the target already has a run with this id, of job {job}"),
                l.id,
            ),
            None if !usable_jobs.contains(&l.job_id) => tally.skip("its job is not imported", l.id),
            None => {
                tally.created += 1;
                create.push(l);
            }
        }
    }
    Ok(create)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_render_counts_and_reasons() {
        let mut t = Tally {
            created: 2,
            present: 1,
            ..Tally::default()
        };
        for id in 1..=12 {
            t.skip("its job 9 is not imported", id);
        }
        let text = t.render("run logs", true);
        assert!(
            text.starts_with("run logs: 2 to create, 1 already present, 12 skipped"),
            "{text}"
        );
        assert!(
            text.contains(
                "skipped 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more: its job 9 is not imported"
            ),
            "{text}"
        );
    }

    #[test]
    fn moving_fire_times_do_not_make_a_job_different() {
        let a = JobInfo::new(1, "a", "h");
        let b = JobInfo {
            trigger_next_time: 99,
            trigger_last_time: 98,
            ..a.clone()
        };
        assert!(same_job(&a, &b));
        let c = JobInfo {
            executor_param: "x".into(),
            ..a.clone()
        };
        assert!(!same_job(&a, &c));
    }
}
