//! XXL-JOB rows as jobwheel's model. Enum columns hold the same names in both (jobwheel stores
//! XXL-JOB's names), so a value jobwheel does not know is an error naming the row and column,
//! never a default in its place.

use std::str::FromStr;

use crate::model::{
    parse_id_list, AddressType, GlueVersion, InstanceOverflow, JobGroup, JobInfo, MisfireStrategy,
    Role, RunRow, ScheduleType, TriggerType, User, INSTANCE_QUEUE_MAX_DEFAULT,
    INSTANCE_QUEUE_TTL_DEFAULT_SECS, TRIGGER_STATUS_RUNNING, TRIGGER_STATUS_STOPPED,
};
use crate::password::RESET_REQUIRED;
use crate::store::xxl_source::{XxlGlue, XxlGroup, XxlJob, XxlLog, XxlUser};
use crate::timing;

/// A value of the XXL-JOB database that has no jobwheel equivalent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{table} id {id}, column {column}: {problem}")]
pub struct MappingError {
    /// XXL-JOB table.
    pub table: &'static str,
    /// Row id.
    pub id: i64,
    /// Column.
    pub column: &'static str,
    /// What is wrong.
    pub problem: String,
}

/// Builds [`MappingError`]s for one row.
struct Row {
    table: &'static str,
    id: i64,
}

impl Row {
    fn err(&self, column: &'static str, problem: impl Into<String>) -> MappingError {
        MappingError {
            table: self.table,
            id: self.id,
            column,
            problem: problem.into(),
        }
    }

    fn parse<T>(&self, column: &'static str, value: &str) -> Result<T, MappingError>
    where
        T: FromStr,
        T::Err: std::fmt::Display,
    {
        value
            .trim()
            .parse()
            .map_err(|e| self.err(column, format!("{e}")))
    }

    fn int(&self, column: &'static str, value: i64) -> Result<i32, MappingError> {
        i32::try_from(value).map_err(|_| self.err(column, format!("{value} is out of range")))
    }

    fn id(&self) -> Result<i32, MappingError> {
        self.int("id", self.id)
    }
}

/// A group as jobwheel stores it.
pub fn group(g: &XxlGroup) -> Result<JobGroup, MappingError> {
    let row = Row {
        table: "xxl_job_group",
        id: g.id,
    };
    let address_type = match g.address_type {
        0 => AddressType::Auto,
        1 => AddressType::Manual,
        other => {
            return Err(row.err(
                "address_type",
                format!("unknown address type {other}; allowed: 0 (automatic), 1 (manual)"),
            ))
        }
    };
    Ok(JobGroup {
        id: row.id()?,
        app_name: g.app_name.trim().to_string(),
        title: g.title.clone(),
        address_type,
        address_list: crate::store::split_addresses(g.address_list.as_deref()),
        access_token: g.access_token.clone().filter(|t| !t.trim().is_empty()),
        update_time: g.update_time,
        max_concurrent_instances: 0,
        instance_overflow: crate::model::InstanceOverflow::Skip,
    })
}

/// A job as jobwheel stores it. A pre-2.3 database has only a cron column: a cron there means
/// a CRON schedule, none means NONE, and a missed fire was skipped (DO_NOTHING).
pub fn job(j: &XxlJob) -> Result<JobInfo, MappingError> {
    let row = Row {
        table: "xxl_job_info",
        id: j.id,
    };
    let (schedule_type, misfire_strategy) = match (&j.schedule_type, &j.misfire_strategy) {
        (Some(t), misfire) => (
            row.parse::<ScheduleType>("schedule_type", t)?,
            row.parse::<MisfireStrategy>("misfire_strategy", misfire.as_deref().unwrap_or(""))?,
        ),
        (None, _) if j.schedule_conf.trim().is_empty() => {
            (ScheduleType::None, MisfireStrategy::DoNothing)
        }
        (None, _) => (ScheduleType::Cron, MisfireStrategy::DoNothing),
    };
    let schedule_column = if j.schedule_type.is_some() {
        "schedule_conf"
    } else {
        "job_cron"
    };
    let schedule_conf = j.schedule_conf.trim().to_string();
    if schedule_type != ScheduleType::None {
        timing::validate(schedule_type, &schedule_conf)
            .map_err(|e| row.err(schedule_column, e.0))?;
    }
    let trigger_status = match j.trigger_status {
        0 => TRIGGER_STATUS_STOPPED,
        1 => TRIGGER_STATUS_RUNNING,
        other => {
            return Err(row.err(
                "trigger_status",
                format!("unknown trigger status {other}; allowed: 0 (stopped), 1 (running)"),
            ))
        }
    };
    let executor_timeout = row.int("executor_timeout", j.executor_timeout)?;
    let executor_fail_retry_count =
        row.int("executor_fail_retry_count", j.executor_fail_retry_count)?;
    if executor_timeout < 0 {
        return Err(row.err("executor_timeout", "a timeout cannot be negative"));
    }
    if executor_fail_retry_count < 0 {
        return Err(row.err(
            "executor_fail_retry_count",
            "a retry count cannot be negative",
        ));
    }
    Ok(JobInfo {
        id: row.id()?,
        job_group: row.int("job_group", j.job_group)?,
        job_desc: j.job_desc.clone(),
        add_time: j.add_time,
        update_time: j.update_time,
        author: j.author.clone(),
        alarm_email: j.alarm_email.trim().to_string(),
        alarm_webhook: String::new(),
        schedule_type,
        schedule_conf,
        // XXL-JOB computes cron times in the admin's own zone, as jobwheel does for an empty one
        timezone: String::new(),
        misfire_strategy,
        executor_route_strategy: row
            .parse("executor_route_strategy", &j.executor_route_strategy)?,
        executor_handler: j.executor_handler.trim().to_string(),
        executor_param: j.executor_param.clone(),
        executor_block_strategy: row
            .parse("executor_block_strategy", &j.executor_block_strategy)?,
        executor_timeout,
        executor_fail_retry_count,
        retry_interval_secs: 0,
        glue_type: row.parse("glue_type", &j.glue_type)?,
        glue_source: j.glue_source.clone(),
        glue_remark: j.glue_remark.clone(),
        glue_updatetime: j.glue_updatetime,
        child_job_ids: parse_id_list(&j.child_jobid).map_err(|e| row.err("child_jobid", e))?,
        trigger_status,
        trigger_last_time: j.trigger_last_time,
        trigger_next_time: if trigger_status == TRIGGER_STATUS_RUNNING {
            j.trigger_next_time
        } else {
            0
        },
        owner_id: 0,
        // XXL-JOB has no bound: the import leaves it unbounded
        max_queued: 0,
        executor_selector: String::new(),
        log_retention_days: 0,
        log_retention_runs: 0,
        // XXL-JOB has no instance limits: an imported job has none
        max_concurrent_instances: 0,
        instance_overflow: InstanceOverflow::Skip,
        instance_queue_max: INSTANCE_QUEUE_MAX_DEFAULT,
        instance_queue_ttl_secs: INSTANCE_QUEUE_TTL_DEFAULT_SECS,
    })
}

/// A saved script version as jobwheel stores it.
pub fn glue_version(v: &XxlGlue) -> Result<GlueVersion, MappingError> {
    let row = Row {
        table: "xxl_job_logglue",
        id: v.id,
    };
    Ok(GlueVersion {
        id: row.id()?,
        job_id: row.int("job_id", v.job_id)?,
        glue_type: row.parse("glue_type", &v.glue_type)?,
        glue_source: v.glue_source.clone(),
        glue_remark: v.glue_remark.clone(),
        add_time: v.add_time,
    })
}

/// A user as jobwheel stores it, without a usable password: XXL-JOB's unsalted MD5/SHA-256
/// hashes are not carried over, so an administrator sets a new one.
pub fn user(u: &XxlUser) -> Result<User, MappingError> {
    let row = Row {
        table: "xxl_job_user",
        id: u.id,
    };
    let role = match u.role {
        0 => Role::User,
        1 => Role::Admin,
        other => {
            return Err(row.err(
                "role",
                format!("unknown role {other}; allowed: 0 (user), 1 (administrator)"),
            ))
        }
    };
    let username = u.username.trim().to_string();
    if username.is_empty() {
        return Err(row.err("username", "the user name is empty"));
    }
    Ok(User {
        id: 0,
        username,
        password_hash: RESET_REQUIRED.to_string(),
        role,
        permission: parse_id_list(u.permission.as_deref().unwrap_or_default())
            .map_err(|e| row.err("permission", e.replace("job id", "group id")))?,
    })
}

/// A run log as jobwheel stores it.
///
/// XXL-JOB keeps no trigger type column, only the type's title in the trigger message, so the
/// type is read from there (CRON when the message names none). A finished run whose alarm was
/// never handled is marked as needing none: the XXL-JOB admin it ran under was in charge of
/// retrying and alarming it, and jobwheel's fail monitor would otherwise retry old runs.
pub fn log(l: &XxlLog) -> Result<RunRow, MappingError> {
    let row = Row {
        table: "xxl_job_log",
        id: l.id,
    };
    let finished = l.handle_code != 0 || (l.trigger_code != 0 && l.trigger_code != 200);
    let alarm_status = match l.alarm_status {
        0 | -1 if finished => crate::model::alarm_status::NOT_NEEDED,
        s @ -1..=3 => s as i32,
        other => {
            return Err(row.err(
                "alarm_status",
                format!("unknown alarm status {other}; allowed: -1 to 3"),
            ))
        }
    };
    Ok(RunRow {
        id: l.id,
        job_group: row.int("job_group", l.job_group)?,
        job_id: row.int("job_id", l.job_id)?,
        trigger_type: trigger_type_in(l.trigger_msg.as_deref().unwrap_or_default()),
        schedule_time: 0,
        executor_address: l.executor_address.clone(),
        executor_handler: l.executor_handler.clone(),
        executor_param: l.executor_param.clone(),
        executor_sharding_param: l.executor_sharding_param.clone(),
        executor_fail_retry_count: row
            .int("executor_fail_retry_count", l.executor_fail_retry_count)?,
        trigger_time: l.trigger_time,
        trigger_code: row.int("trigger_code", l.trigger_code)?,
        trigger_msg: l.trigger_msg.clone(),
        handle_time: l.handle_time,
        handle_code: row.int("handle_code", l.handle_code)?,
        handle_msg: l.handle_msg.clone(),
        alarm_status,
        wf_run_id: None,
        wf_node: None,
        admission: crate::model::Admission::Ran,
    })
}

/// The trigger type whose title (English or Chinese, as XXL-JOB's two languages write it)
/// a trigger message starts with.
fn trigger_type_in(message: &str) -> TriggerType {
    const TITLES: &[(&str, TriggerType)] = &[
        ("Manual trigger", TriggerType::Manual),
        ("手动触发", TriggerType::Manual),
        ("Fail retry trigger", TriggerType::Retry),
        ("失败重试触发", TriggerType::Retry),
        ("Parent job trigger", TriggerType::Parent),
        ("父任务触发", TriggerType::Parent),
        ("Api trigger", TriggerType::Api),
        ("API触发", TriggerType::Api),
        ("Misfire compensation trigger", TriggerType::Misfire),
        ("调度过期补偿", TriggerType::Misfire),
        ("Cron trigger", TriggerType::Cron),
        ("Cron触发", TriggerType::Cron),
    ];
    // the title is the first line's value, before the first <br>
    let first = message.split("<br>").next().unwrap_or_default();
    TITLES
        .iter()
        .find(|(title, _)| first.contains(title))
        .map_or(TriggerType::Cron, |(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BlockStrategy, GlueType, RouteStrategy};

    fn xxl_job() -> XxlJob {
        XxlJob {
            id: 7,
            job_group: 2,
            job_desc: "nightly".into(),
            add_time: 1,
            update_time: 2,
            author: "ops".into(),
            alarm_email: "a@example.com".into(),
            schedule_type: Some("FIX_RATE".into()),
            schedule_conf: "30".into(),
            misfire_strategy: Some("FIRE_ONCE_NOW".into()),
            executor_route_strategy: "CONSISTENT_HASH".into(),
            executor_handler: "h".into(),
            executor_param: "p".into(),
            executor_block_strategy: "COVER_EARLY".into(),
            executor_timeout: 9,
            executor_fail_retry_count: 3,
            glue_type: "GLUE_SHELL".into(),
            glue_source: "echo".into(),
            glue_remark: "r".into(),
            glue_updatetime: 5,
            child_jobid: "3, 4".into(),
            trigger_status: 1,
            trigger_last_time: 10,
            trigger_next_time: 20,
        }
    }

    #[test]
    fn jobs_keep_every_setting() {
        let j = job(&xxl_job()).unwrap();
        assert_eq!((j.id, j.job_group), (7, 2));
        assert_eq!(j.schedule_type, ScheduleType::FixRate);
        assert_eq!(j.misfire_strategy, MisfireStrategy::FireOnceNow);
        assert_eq!(j.executor_route_strategy, RouteStrategy::ConsistentHash);
        assert_eq!(j.executor_block_strategy, BlockStrategy::CoverEarly);
        assert_eq!(j.glue_type, GlueType::GlueShell);
        assert_eq!(j.child_job_ids, vec![3, 4]);
        assert_eq!((j.executor_timeout, j.executor_fail_retry_count), (9, 3));
        assert_eq!((j.trigger_status, j.trigger_next_time), (1, 20));
    }

    #[test]
    fn unknown_values_name_the_job_and_column() {
        let mut x = xxl_job();
        x.executor_route_strategy = "SOMEWHERE".into();
        let err = job(&x).unwrap_err().to_string();
        assert!(
            err.starts_with("xxl_job_info id 7, column executor_route_strategy: unknown route strategy 'SOMEWHERE'"),
            "{err}"
        );
        let mut x = xxl_job();
        x.glue_type = "GLUE_COBOL".into();
        assert_eq!(job(&x).unwrap_err().column, "glue_type");
        let mut x = xxl_job();
        x.schedule_type = Some("CRON".into());
        x.schedule_conf = "not a cron".into();
        assert_eq!(job(&x).unwrap_err().column, "schedule_conf");
        let mut x = xxl_job();
        x.child_jobid = "3,x".into();
        assert_eq!(job(&x).unwrap_err().column, "child_jobid");
        let mut x = xxl_job();
        x.trigger_status = 2;
        assert_eq!(job(&x).unwrap_err().column, "trigger_status");
    }

    #[test]
    fn the_old_cron_column_maps_to_a_cron_schedule() {
        let mut x = xxl_job();
        x.schedule_type = None;
        x.misfire_strategy = None;
        x.schedule_conf = "0 0 1 * * ?".into();
        let j = job(&x).unwrap();
        assert_eq!(j.schedule_type, ScheduleType::Cron);
        assert_eq!(j.misfire_strategy, MisfireStrategy::DoNothing);
        x.schedule_conf = String::new();
        assert_eq!(job(&x).unwrap().schedule_type, ScheduleType::None);
        x.schedule_conf = "nonsense".into();
        assert_eq!(job(&x).unwrap_err().column, "job_cron");
    }

    #[test]
    fn users_must_reset_and_keep_role_and_groups() {
        let u = user(&XxlUser {
            id: 3,
            username: "alice".into(),
            role: 0,
            permission: Some("1,2".into()),
        })
        .unwrap();
        assert_eq!(u.password_hash, RESET_REQUIRED);
        assert_eq!((u.role, u.permission), (Role::User, vec![1, 2]));
        let err = user(&XxlUser {
            id: 4,
            username: "bob".into(),
            role: 5,
            permission: None,
        })
        .unwrap_err();
        assert_eq!((err.id, err.column), (4, "role"));
    }

    #[test]
    fn log_trigger_types_come_from_the_message() {
        assert_eq!(
            trigger_type_in("任务触发类型：手动触发<br>调度机器：x"),
            TriggerType::Manual
        );
        assert_eq!(
            trigger_type_in("Trigger type：Fail retry trigger<br>"),
            TriggerType::Retry
        );
        assert_eq!(trigger_type_in(""), TriggerType::Cron);
    }

    #[test]
    fn finished_logs_need_no_alarm_but_open_ones_keep_theirs() {
        let base = XxlLog {
            id: 1,
            job_group: 1,
            job_id: 1,
            executor_address: None,
            executor_handler: None,
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
            trigger_time: 1,
            trigger_code: 200,
            trigger_msg: None,
            handle_time: 2,
            handle_code: 500,
            handle_msg: None,
            alarm_status: 0,
        };
        assert_eq!(log(&base).unwrap().alarm_status, 1);
        let open = XxlLog {
            handle_code: 0,
            ..base.clone()
        };
        assert_eq!(log(&open).unwrap().alarm_status, 0);
        let sent = XxlLog {
            alarm_status: 2,
            ..base
        };
        assert_eq!(log(&sent).unwrap().alarm_status, 2);
    }
}
