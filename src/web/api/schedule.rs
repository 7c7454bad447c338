//! `POST /api/v1/schedule/preview`: fire times of a schedule before it is saved.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::ToSchema;

use super::error::answers;
use super::error::{ApiError, ApiResult};
use super::input::Json;
use super::jobs::{fire_time_count, FireTimes};
use crate::clock::now_ms;
use crate::model::ScheduleType;
use crate::timing::{self, parse_timezone};
use crate::web::AppState;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/schedule/preview", web::post().to(preview));
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PreviewBody {
    schedule_type: Option<String>,
    #[serde(default)]
    schedule_conf: String,
    #[serde(default)]
    timezone: String,
    count: Option<usize>,
    /// Start of the preview, epoch ms (default now); the times are strictly after it.
    from: Option<i64>,
}

/// `{scheduleType, scheduleConf, timezone, count?, from?}` → `{fireTimes: [ms, ...]}`.
#[utoipa::path(
    post,
    path = "/schedule/preview",
    tag = "schedule",
    summary = "Fire times a schedule would give",
    request_body = PreviewBody,
    responses(
        (status = 200, description = "The fire times, epoch ms", body = super::jobs::FireTimes),
        answers::BadInput
    )
)]
async fn preview(state: web::Data<AppState>, body: Json<PreviewBody>) -> ApiResult<HttpResponse> {
    let body = body.into_inner();
    let Some(schedule_type) = body.schedule_type else {
        return Err(ApiError::field("scheduleType", "scheduleType is required"));
    };
    let schedule_type: ScheduleType = schedule_type
        .trim()
        .parse()
        .map_err(|e| ApiError::field("scheduleType", format!("{e}")))?;
    let count = fire_time_count(body.count)?;
    let tz = parse_timezone(&body.timezone, state.settings.timezone)
        .map_err(|e| ApiError::schedule("timezone", e))?;
    let from = body.from.unwrap_or_else(now_ms);
    if from < 0 {
        return Err(ApiError::field("from", "from must be an epoch time in ms"));
    }
    let fire_times = timing::preview(schedule_type, body.schedule_conf.trim(), tz, from, count)
        .map_err(|e| ApiError::schedule("scheduleConf", e))?;
    Ok(HttpResponse::Ok().json(FireTimes { fire_times }))
}
