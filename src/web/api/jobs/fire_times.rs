//! `GET /jobs/{id}/next-fire-times`: the next fire times of a job's schedule, in its zone.

use super::*;

/// Most fire times one preview returns.
pub const MAX_FIRE_TIMES: usize = 100;
/// Fire times a preview returns when `count` is not given.
pub const DEFAULT_FIRE_TIMES: usize = 5;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct CountQuery {
    count: Option<usize>,
}

/// Validates a preview count: 1–100, default 5.
pub(crate) fn fire_time_count(count: Option<usize>) -> ApiResult<usize> {
    let count = count.unwrap_or(DEFAULT_FIRE_TIMES);
    if (1..=MAX_FIRE_TIMES).contains(&count) {
        Ok(count)
    } else {
        Err(ApiError::field(
            "count",
            format!("count must be between 1 and {MAX_FIRE_TIMES}"),
        ))
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FireTimes {
    pub(crate) fire_times: Vec<i64>,
}

/// `GET /jobs/{id}/next-fire-times?count=5`: a scheduled job's coming fire times, starting from
/// its stored next fire time; for a stopped job, the times after now.
#[utoipa::path(
    get,
    path = "/jobs/{id}/next-fire-times",
    tag = "jobs",
    summary = "A job's coming fire times",
    params(("id" = i32, Path, description = "The job's id"), CountQuery),
    responses(
        (status = 200, description = "The fire times, epoch ms", body = FireTimes),
        answers::BadInput,
        answers::Forbidden,
        answers::NotFound
    )
)]
pub(crate) async fn next_fire_times(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    query: web::Query<CountQuery>,
) -> ApiResult<HttpResponse> {
    let count = fire_time_count(query.count)?;
    let job = load_job(&state, &principal, path.into_inner()).await?;
    let tz = parse_timezone(&job.timezone, state.settings.timezone)
        .map_err(|e| ApiError::schedule("timezone", e))?;
    let scheduled = job.trigger_status == TRIGGER_STATUS_RUNNING
        && job.trigger_next_time > 0
        && job.trigger_next_time != AWAITING_COMPLETION;
    let fire_times = if scheduled {
        let mut times = vec![job.trigger_next_time];
        times.extend(
            timing::preview(
                job.schedule_type,
                &job.schedule_conf,
                tz,
                job.trigger_next_time,
                count - 1,
            )
            .map_err(|e| ApiError::schedule("scheduleConf", e))?,
        );
        times
    } else {
        timing::preview(job.schedule_type, &job.schedule_conf, tz, now_ms(), count)
            .map_err(|e| ApiError::schedule("scheduleConf", e))?
    };
    Ok(HttpResponse::Ok().json(FireTimes { fire_times }))
}
