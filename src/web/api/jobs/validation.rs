//! What a job body must satisfy before it is stored: each field's rules, the group and child
//! jobs the caller may use, and where an alarm webhook may point.

use super::*;

use crate::model::{
    glue_template, BlockStrategy, INSTANCE_QUEUE_MAX_LIMIT, INSTANCE_QUEUE_TTL_MAX_SECS,
    LOG_RETENTION_DAYS_MAX, LOG_RETENTION_RUNS_MAX, MAX_QUEUED_LIMIT,
};
use crate::routing::Selector;
use crate::web::api::checks::{check_alarm_fields, check_webhook_target};
pub(super) use crate::web::api::checks::{
    check_instance_cap, check_script_source, max_chars, parse_enum,
};
use crate::web::api::error::Problems;

/// Copies the given fields onto `job`, parsing enum names; a field that cannot be read is
/// left as it was and its problem kept in `p`.
fn apply_into(job: &mut JobInfo, body: JobBody, p: &mut Problems) {
    if let Some(g) = body.job_group {
        job.job_group = g;
    }
    if let Some(v) = body.job_desc {
        job.job_desc = v.trim().to_string();
    }
    if let Some(v) = body.author {
        job.author = v.trim().to_string();
    }
    if let Some(v) = body.alarm_email {
        job.alarm_email = v.trim().to_string();
    }
    if let Some(v) = body.alarm_webhook {
        job.alarm_webhook = v.trim().to_string();
    }
    if let Some(v) = body.schedule_type {
        if let Some(parsed) = p.ok(parse_enum("scheduleType", &v)) {
            job.schedule_type = parsed;
        }
    }
    if let Some(v) = body.schedule_conf {
        job.schedule_conf = v.trim().to_string();
    }
    if let Some(v) = body.timezone {
        job.timezone = v.trim().to_string();
    }
    if let Some(v) = body.misfire_strategy {
        if let Some(parsed) = p.ok(parse_enum("misfireStrategy", &v)) {
            job.misfire_strategy = parsed;
        }
    }
    if let Some(v) = body.executor_route_strategy {
        if let Some(parsed) = p.ok(parse_enum("executorRouteStrategy", &v)) {
            job.executor_route_strategy = parsed;
        }
    }
    if let Some(v) = body.executor_handler {
        job.executor_handler = v.trim().to_string();
    }
    if let Some(v) = body.executor_param {
        job.executor_param = v;
    }
    if let Some(v) = body.executor_block_strategy {
        if let Some(parsed) = p.ok(parse_enum("executorBlockStrategy", &v)) {
            job.executor_block_strategy = parsed;
        }
    }
    if let Some(v) = body.executor_timeout {
        job.executor_timeout = v;
    }
    if let Some(v) = body.executor_fail_retry_count {
        job.executor_fail_retry_count = v;
    }
    if let Some(v) = body.retry_interval_secs {
        job.retry_interval_secs = v;
    }
    if let Some(v) = body.glue_type {
        if let Some(parsed) = p.ok(parse_enum("glueType", &v)) {
            job.glue_type = parsed;
        }
    }
    if let Some(v) = body.glue_source {
        if p.ok(check_script_source(job.glue_type, &v)).is_some() {
            job.glue_source = v;
        }
    }
    // a new script job, or one switched from BEAN, starts from its type's script
    if job.glue_type != GlueType::Bean && job.glue_source.trim().is_empty() {
        job.glue_source = glue_template(job.glue_type).to_string();
    }
    if let Some(v) = body.glue_remark {
        job.glue_remark = v.trim().to_string();
    }
    if let Some(v) = body.executor_selector {
        if let Some(text) = p.ok(selector_text(v)) {
            job.executor_selector = text;
        }
    }
    if let Some(v) = body.log_retention_days {
        job.log_retention_days = v;
    }
    if let Some(v) = body.log_retention_runs {
        job.log_retention_runs = v;
    }
    if let Some(v) = body.max_queued {
        job.max_queued = v;
    }
    if let Some(v) = body.max_concurrent_instances {
        job.max_concurrent_instances = v;
    }
    if let Some(v) = body.instance_overflow {
        if let Some(parsed) = p.ok(parse_enum("instanceOverflow", &v)) {
            job.instance_overflow = parsed;
        }
    }
    if let Some(v) = body.instance_queue_max {
        job.instance_queue_max = v;
    }
    if let Some(v) = body.instance_queue_ttl_secs {
        job.instance_queue_ttl_secs = v;
    }
    if let Some(v) = body.child_job_ids {
        let mut seen = HashSet::new();
        job.child_job_ids = v.into_iter().filter(|id| seen.insert(*id)).collect();
    }
    // a job fired only by hand keeps no leftover cron from the form
    if job.schedule_type == ScheduleType::None {
        job.schedule_conf.clear();
    }
}

/// Copies the body's fields onto `job` and checks those that need no database, answering
/// every problem at once (one 400 naming them all); the job's time zone.
pub(super) fn apply_and_validate(
    job: &mut JobInfo,
    body: JobBody,
    default_tz: Tz,
) -> ApiResult<Tz> {
    let mut p = Problems::default();
    apply_into(job, body, &mut p);
    let tz = validate_into(job, default_tz, &mut p);
    p.into_result()?;
    Ok(tz)
}

/// `executorSelector` as given (text, an object of required values, or null) → its canonical
/// text, or a 400 naming the field and what is wrong.
fn selector_text(value: serde_json::Value) -> ApiResult<String> {
    use serde_json::Value;
    let bad = |why: String| ApiError::field("executorSelector", format!("executorSelector: {why}"));
    let selector = match value {
        Value::Null => Selector::default(),
        Value::String(text) => Selector::parse(&text).map_err(bad)?,
        Value::Object(pairs) => {
            let mut labels = crate::protocol::Labels::new();
            for (key, value) in pairs {
                let Value::String(value) = value else {
                    return Err(bad(format!("the value of '{key}' must be a string")));
                };
                labels.insert(key, value);
            }
            Selector::from_pairs(&labels).map_err(bad)?
        }
        _ => {
            return Err(bad(
                "expected text such as \"gpu=true, region in (eu,us)\" or an object such as {\"gpu\": \"true\"}"
                    .to_string(),
            ))
        }
    };
    Ok(selector.to_string())
}

pub(super) use crate::model::EXECUTOR_PARAM_MAX;

pub(super) fn check_executor_param(param: &str) -> ApiResult<()> {
    if param.len() > EXECUTOR_PARAM_MAX {
        return Err(ApiError::field(
            "executorParam",
            format!("executorParam must be at most {EXECUTOR_PARAM_MAX} bytes"),
        ));
    }
    Ok(())
}

/// Checks the fields that need no database; returns the job's time zone (the default when
/// its own cannot be read, with that problem kept).
fn validate_into(job: &JobInfo, default_tz: Tz, p: &mut Problems) -> Tz {
    if job.job_desc.is_empty() {
        p.note(ApiError::field("jobDesc", "jobDesc is required"));
    } else {
        p.ok(max_chars("jobDesc", &job.job_desc, 255));
    }
    p.ok(max_chars("author", &job.author, 64));
    p.ok(check_alarm_fields(&job.alarm_email, &job.alarm_webhook));
    p.ok(max_chars("scheduleConf", &job.schedule_conf, 128));
    if job.schedule_type == ScheduleType::Cron && job.schedule_conf.is_empty() {
        p.note(ApiError::field(
            "scheduleConf",
            "a CRON job needs a cron expression in scheduleConf",
        ));
    }
    if !p.has("scheduleConf") {
        p.ok(timing::validate(job.schedule_type, &job.schedule_conf)
            .map_err(|e| ApiError::schedule("scheduleConf", e)));
    }
    p.ok(max_chars("timezone", &job.timezone, 64));
    let tz = p
        .ok(parse_timezone(&job.timezone, default_tz)
            .map_err(|e| ApiError::schedule("timezone", e)))
        .unwrap_or(default_tz);
    p.ok(max_chars("executorHandler", &job.executor_handler, 255));
    if job.glue_type == GlueType::Bean && job.executor_handler.is_empty() {
        p.note(ApiError::field(
            "executorHandler",
            "executorHandler is required for BEAN jobs",
        ));
    }
    p.ok(check_executor_param(&job.executor_param));
    if job.executor_timeout < 0 {
        p.note(ApiError::field(
            "executorTimeout",
            "executorTimeout must be 0 (none) or more seconds",
        ));
    }
    if job.executor_fail_retry_count < 0 {
        p.note(ApiError::field(
            "executorFailRetryCount",
            "executorFailRetryCount must be 0 or more",
        ));
    }
    if job.retry_interval_secs < 0 {
        p.note(ApiError::field(
            "retryIntervalSecs",
            "retryIntervalSecs must be 0 or more seconds",
        ));
    }
    if !(0..=LOG_RETENTION_DAYS_MAX).contains(&job.log_retention_days) {
        p.note(ApiError::field(
            "logRetentionDays",
            format!("logRetentionDays must be 0 (the admin's setting) to {LOG_RETENTION_DAYS_MAX}"),
        ));
    }
    if !(0..=LOG_RETENTION_RUNS_MAX).contains(&job.log_retention_runs) {
        p.note(ApiError::field(
            "logRetentionRuns",
            format!("logRetentionRuns must be 0 (no count bound) to {LOG_RETENTION_RUNS_MAX}"),
        ));
    }
    if !(0..=MAX_QUEUED_LIMIT).contains(&job.max_queued) {
        p.note(ApiError::field(
            "maxQueued",
            format!("maxQueued must be 0 (unbounded) to {MAX_QUEUED_LIMIT}"),
        ));
    }
    if job.max_queued > 0
        && job.executor_block_strategy != BlockStrategy::SerialExecution
        && !p.has("maxQueued")
    {
        p.note(ApiError::field(
            "maxQueued",
            format!(
                "maxQueued bounds the SERIAL_EXECUTION queue; {} keeps no queue: set it to 0",
                job.executor_block_strategy.as_str()
            ),
        ));
    }
    p.ok(check_instance_limits(job));
    p.ok(max_chars("glueRemark", &job.glue_remark, 128));
    if crate::model::join_ids(&job.child_job_ids).len() > 255 {
        p.note(ApiError::field("childJobIds", "too many child jobs"));
    }
    tz
}

/// `maxConcurrentInstances` and its queue's bounds.
fn check_instance_limits(job: &JobInfo) -> ApiResult<()> {
    check_instance_cap("maxConcurrentInstances", job.max_concurrent_instances)?;
    if !(1..=INSTANCE_QUEUE_MAX_LIMIT).contains(&job.instance_queue_max) {
        return Err(ApiError::field(
            "instanceQueueMax",
            format!("instanceQueueMax must be 1 to {INSTANCE_QUEUE_MAX_LIMIT}"),
        ));
    }
    if !(1..=INSTANCE_QUEUE_TTL_MAX_SECS).contains(&job.instance_queue_ttl_secs) {
        return Err(ApiError::field(
            "instanceQueueTtlSecs",
            format!("instanceQueueTtlSecs must be 1 to {INSTANCE_QUEUE_TTL_MAX_SECS} seconds"),
        ));
    }
    Ok(())
}

/// The shortest chain of child lists that leads from `job_id` back to itself, when its new
/// `children` would close one: `[3, 5, 3]` for 3 → 5 → 3.
async fn find_cycle(store: &Store, job_id: i32, children: &[i32]) -> ApiResult<Option<Vec<i32>>> {
    // breadth first, so the reported cycle is a shortest one; `parent` also marks visited jobs
    let mut parent: HashMap<i32, i32> = HashMap::new();
    let mut frontier = Vec::new();
    for &c in children {
        if c == job_id {
            return Ok(Some(vec![job_id, job_id]));
        }
        if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(c) {
            e.insert(job_id);
            frontier.push(c);
        }
    }
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for job in store.get_jobs(&frontier).await? {
            for &c in &job.child_job_ids {
                if c == job_id {
                    let mut back = vec![job.id];
                    let mut cur = job.id;
                    while let Some(&p) = parent.get(&cur) {
                        if p == job_id {
                            break;
                        }
                        back.push(p);
                        cur = p;
                    }
                    back.reverse();
                    let mut path = vec![job_id];
                    path.extend(back);
                    path.push(job_id);
                    return Ok(Some(path));
                }
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(c) {
                    e.insert(job.id);
                    next.push(c);
                }
            }
        }
        frontier = next;
    }
    Ok(None)
}

/// Checks what needs the database: the group (exists, permitted), the child jobs (exist, in
/// groups the caller may use, not the job itself, no cycle) and, when it changed from `old`,
/// where the alarm webhook points.
pub(super) async fn validate_refs(
    state: &AppState,
    principal: &Principal,
    job: &JobInfo,
    old: Option<&JobInfo>,
) -> ApiResult<()> {
    load_group(state, job.job_group, Some("jobGroup")).await?;
    principal.require_group(job.job_group)?;
    if old.is_none_or(|o| o.alarm_webhook != job.alarm_webhook) {
        check_webhook_target(state, &job.alarm_webhook).await?;
    }
    if job.child_job_ids.is_empty() {
        return Ok(());
    }
    if job.id > 0 && job.child_job_ids.contains(&job.id) {
        return Err(ApiError::field(
            "childJobIds",
            format!("job {} cannot be its own child job", job.id),
        ));
    }
    let usable: HashSet<i32> = state
        .store
        .get_jobs(&job.child_job_ids)
        .await?
        .iter()
        .filter(|j| principal.can_access(j.job_group))
        .map(|j| j.id)
        .collect();
    // one answer for a job that does not exist and one of a group the caller may not use, so
    // that the error tells nobody which ids exist elsewhere
    if let Some(refused) = job.child_job_ids.iter().find(|c| !usable.contains(c)) {
        return Err(ApiError::field(
            "childJobIds",
            format!("child job {refused} does not exist or is in a group you may not use"),
        ));
    }
    // a new job has no id yet, so no other job can name it as a child: no cycle through it
    if job.id > 0 {
        if let Some(cycle) = find_cycle(&state.store, job.id, &job.child_job_ids).await? {
            let visible: HashSet<i32> = state
                .store
                .get_jobs(&cycle)
                .await?
                .iter()
                .filter(|j| principal.can_access(j.job_group))
                .map(|j| j.id)
                .collect();
            let chain = cycle
                .iter()
                .map(|i| match visible.contains(i) {
                    true => i.to_string(),
                    false => "(a job of another group)".to_string(),
                })
                .collect::<Vec<_>>()
                .join(" → ");
            return Err(ApiError::field(
                "childJobIds",
                format!("child jobs form a cycle: {chain}"),
            ));
        }
    }
    Ok(())
}

/// The first fire time after now + 5 s (XXL-JOB's start rule), or a 400 naming why there is none.
pub(super) fn first_fire_time(job: &JobInfo, tz: Tz, now: i64) -> ApiResult<i64> {
    match timing::next_fire_time(job.schedule_type, &job.schedule_conf, tz, now + PRE_READ_MS) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Err(ApiError::field(
            "scheduleConf",
            "the schedule has no future fire time",
        )),
        Err(e) => Err(ApiError::schedule("scheduleConf", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> JobInfo {
        let mut j = JobInfo::new(1, "desc", "demoJobHandler");
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "0 0 9 * * ?".into();
        j
    }

    fn validate_fields(j: &JobInfo, tz: Tz) -> ApiResult<Tz> {
        let mut p = Problems::default();
        let tz = validate_into(j, tz, &mut p);
        p.into_result().map(|()| tz)
    }

    fn field_of(r: ApiResult<Tz>) -> Option<String> {
        match r {
            Err(ApiError::BadRequest { field, .. }) => field.map(|f| f.into_owned()),
            _ => None,
        }
    }

    #[test]
    fn fields_are_validated() {
        assert!(validate_fields(&valid(), Tz::UTC).is_ok());
        let mut j = valid();
        j.schedule_conf = "0 0 25 * * ?".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("scheduleConf")
        );
        let mut j = valid();
        j.schedule_type = ScheduleType::FixRate;
        j.schedule_conf = "0".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("scheduleConf")
        );
        let mut j = valid();
        j.timezone = "Mars/Olympus".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("timezone")
        );
        let mut j = valid();
        j.executor_handler.clear();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("executorHandler")
        );
        let mut j = valid();
        j.executor_timeout = -1;
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("executorTimeout")
        );
        let mut j = valid();
        j.alarm_email = "ops@example.com, nope".into();
        assert_eq!(
            field_of(validate_fields(&j, Tz::UTC)).as_deref(),
            Some("alarmEmail")
        );
    }

    #[test]
    fn unknown_enum_names_list_allowed_values() {
        let mut j = valid();
        let body = JobBody {
            executor_route_strategy: Some("SOMEWHERE".into()),
            ..Default::default()
        };
        match apply_and_validate(&mut j, body, Tz::UTC) {
            Err(ApiError::BadRequest { message, field }) => {
                assert_eq!(field.as_deref(), Some("executorRouteStrategy"));
                assert!(message.contains("allowed: FIRST, LAST"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_problem_of_a_body_is_named_at_once() {
        let mut j = valid();
        let body = JobBody {
            job_desc: Some("  ".into()),
            misfire_strategy: Some("SOMETIMES".into()),
            timezone: Some("Mars/Olympus".into()),
            executor_timeout: Some(-5),
            ..Default::default()
        };
        match apply_and_validate(&mut j, body, Tz::UTC) {
            Err(ApiError::Invalid(found)) => {
                let fields: Vec<&str> = found.iter().map(|p| p.field.as_ref()).collect();
                assert_eq!(
                    fields,
                    ["misfireStrategy", "jobDesc", "timezone", "executorTimeout"]
                );
            }
            other => panic!("{other:?}"),
        }
        // a field's second rule does not repeat its first
        let mut j = valid();
        j.schedule_conf.clear();
        let mut p = Problems::default();
        validate_into(&j, Tz::UTC, &mut p);
        assert!(matches!(p.into_result(), Err(ApiError::BadRequest { .. })));
    }

    #[test]
    fn preview_counts_are_bounded() {
        assert_eq!(fire_time_count(None).unwrap(), 5);
        assert!(fire_time_count(Some(0)).is_err());
        assert!(fire_time_count(Some(101)).is_err());
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;
    use crate::model::{MisfireStrategy, RouteStrategy};
    use crate::protocol::BlockStrategy;
    use crate::web::api::input::parse_value;
    use crate::web::api::input::strategies::{int, object, text};
    use crate::web::api::jobs::fire_times::MAX_FIRE_TIMES;

    const SCHEDULE_TYPES: &[&str] = &["NONE", "CRON", "FIX_RATE", "FIX_DELAY", "cron", "EVERY"];

    /// Create/update bodies: every field, usually plausible, sometimes anything.
    fn job_json() -> BoxedStrategy<Value> {
        object(vec![
            ("jobGroup", int(1, 3)),
            ("jobDesc", text(&["nightly report", "", "  padded  "])),
            ("author", text(&["ops", ""])),
            (
                "alarmEmail",
                text(&["", "ops@example.com", "a@b.c, d@e.f", "nope", "@x."]),
            ),
            (
                "alarmWebhook",
                text(&["", "https://hooks.example.com/x", "ftp://x", "http://"]),
            ),
            ("scheduleType", text(SCHEDULE_TYPES)),
            (
                "scheduleConf",
                text(&[
                    "0 0 12 * * ?",
                    "*/5 * * * * ?",
                    "60",
                    "0",
                    "-5",
                    "0 0 25 * * ?",
                    "",
                ]),
            ),
            (
                "timezone",
                text(&["", "UTC", "Asia/Shanghai", "Mars/Olympus"]),
            ),
            (
                "misfireStrategy",
                text(&["DO_NOTHING", "FIRE_ONCE_NOW", "LATER"]),
            ),
            (
                "executorRouteStrategy",
                text(&["FIRST", "ROUND", "SHARDING_BROADCAST", "SOMEWHERE"]),
            ),
            ("executorHandler", text(&["demoJobHandler", ""])),
            ("executorParam", text(&["", "a=1"])),
            (
                "executorBlockStrategy",
                text(&["SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY", "QUEUE"]),
            ),
            ("executorTimeout", int(-1, 100)),
            ("executorFailRetryCount", int(-1, 5)),
            ("retryIntervalSecs", int(-1, 60)),
            (
                "glueType",
                text(&["BEAN", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_JAVA"]),
            ),
            ("glueSource", text(&["echo hi", ""])),
            ("glueRemark", text(&["first version", ""])),
            (
                "childJobIds",
                prop::collection::vec(any::<i32>(), 0..60)
                    .prop_map(|v| json!(v))
                    .boxed(),
            ),
        ])
    }

    fn valid() -> JobInfo {
        let mut j = JobInfo::new(1, "desc", "demoJobHandler");
        j.schedule_type = ScheduleType::Cron;
        j.schedule_conf = "0 0 9 * * ?".into();
        j
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A job body is read, applied and validated, or refused with 400 naming a field; a
        /// job that passes keeps every rule the database and the scheduler rely on.
        #[test]
        fn job_bodies_are_accepted_whole_or_refused_with_a_field(body in job_json()) {
            let outcome = parse_value::<JobBody>(body).and_then(|body| {
                let mut job = valid();
                let tz = apply_and_validate(&mut job, body, Tz::UTC)?;
                Ok((job, tz))
            });
            match outcome {
                Ok((job, tz)) => {
                    prop_assert!(!job.job_desc.is_empty() && job.job_desc.chars().count() <= 255);
                    prop_assert!(job.author.chars().count() <= 64);
                    prop_assert!(timing::validate(job.schedule_type, &job.schedule_conf).is_ok());
                    prop_assert!(job.executor_param.len() <= EXECUTOR_PARAM_MAX);
                    prop_assert!(job.executor_timeout >= 0);
                    prop_assert!(job.executor_fail_retry_count >= 0);
                    prop_assert!(job.retry_interval_secs >= 0);
                    prop_assert!(crate::model::join_ids(&job.child_job_ids).len() <= 255);
                    prop_assert!(job.glue_type != GlueType::Bean || !job.executor_handler.is_empty());
                    prop_assert!(job.glue_type == GlueType::Bean || !job.glue_source.trim().is_empty());
                    // enums hold only known names, so the row reads back
                    prop_assert!(ScheduleType::ALL.contains(&job.schedule_type));
                    prop_assert!(MisfireStrategy::ALL.contains(&job.misfire_strategy));
                    prop_assert!(RouteStrategy::ALL.contains(&job.executor_route_strategy));
                    prop_assert!(BlockStrategy::ALL.contains(&job.executor_block_strategy));
                    // starting it answers a fire time or a 400, never a panic
                    if let Err(e) = first_fire_time(&job, tz, 1_764_633_600_000) {
                        prop_assert!(matches!(e, ApiError::BadRequest { field: Some(_), .. }), "{e:?}");
                    }
                }
                Err(ApiError::BadRequest { message, .. }) => prop_assert!(!message.is_empty()),
                Err(ApiError::Invalid(found)) => {
                    prop_assert!(found.len() > 1);
                    prop_assert!(found.iter().all(|p| !p.message.is_empty() && !p.field.is_empty()));
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }

        /// Manual trigger bodies: read, or refused with 400.
        #[test]
        fn trigger_bodies_are_read_or_refused(body in object(vec![
            ("executorParam", text(&["", "x"])),
            ("addressList", prop::collection::vec(
                prop::sample::select(vec!["http://10.0.0.1:9999/", "", "10.0.0.1", "https://h"]),
                0..3,
            ).prop_map(|v| json!(v)).boxed()),
        ])) {
            match parse_value::<TriggerBody>(body) {
                Ok(body) => {
                    if let Some(param) = &body.executor_param {
                        let _ = check_executor_param(param);
                    }
                    for a in body.address_list.iter().flatten() {
                        if let Err(e) = check_executor_address("addressList", a.trim()) {
                            prop_assert!(matches!(e, ApiError::BadRequest { .. }), "{e:?}");
                        }
                    }
                }
                Err(e) => prop_assert!(matches!(e, ApiError::BadRequest { .. }), "{e:?}"),
            }
        }

        /// Preview counts from a query: 1 to 100, else 400.
        #[test]
        fn preview_counts_are_in_range_or_refused(count in prop::option::of(any::<usize>())) {
            match fire_time_count(count) {
                Ok(n) => prop_assert!((1..=MAX_FIRE_TIMES).contains(&n)),
                Err(e) => prop_assert!(matches!(e, ApiError::BadRequest { field: Some(_), .. }), "{e:?}"),
            }
        }
    }
}
