//! The dashboard: jobs scheduled and stopped, executors online, today's runs, runs per day.

use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::Days;
use serde::Deserialize;

use super::chart::{lay_out, Chart, DayCounts};
use super::{nav, render, Nav};
use crate::actors::monitor_report::local_date;
use crate::actors::timing_rules::EXECUTOR_DEAD_AFTER_MS;
use crate::clock::now_ms;
use crate::web::api::auth::Principal;
use crate::web::api::error::ApiResult;
use crate::web::api::reports::{daily_runs, DailyRuns};
use crate::web::AppState;

/// Ranges the page offers, in days; the first is the default.
const RANGES: [u64; 4] = [7, 14, 30, 90];

#[derive(Template)]
#[template(path = "dashboard.html")]
struct DashboardPage {
    nav: Nav,
    jobs_scheduled: i64,
    jobs_stopped: i64,
    executors_online: usize,
    today: DailyRuns,
    days: u64,
    chart: Chart,
}

#[derive(Deserialize)]
pub(super) struct DashboardQuery {
    days: Option<u64>,
}

/// `GET /?days=7`.
pub(super) async fn page(
    state: web::Data<AppState>,
    req: HttpRequest,
    principal: Principal,
    query: web::Query<DashboardQuery>,
) -> ApiResult<HttpResponse> {
    let days = query
        .days
        .filter(|d| RANGES.contains(d))
        .unwrap_or(RANGES[0]);
    let scope = principal.group_scope();
    let (jobs_scheduled, jobs_stopped) = state.store.count_jobs_by_status(scope).await?;
    let now = now_ms();
    let live = state
        .store
        .find_live_registry(now - EXECUTOR_DEAD_AFTER_MS)
        .await?;
    let executors_online = match scope {
        None => live.len(),
        Some(ids) => {
            let groups = state.store.list_groups().await?;
            let apps: Vec<&str> = groups
                .iter()
                .filter(|g| ids.contains(&g.id))
                .map(|g| g.app_name.as_str())
                .collect();
            live.iter()
                .filter(|r| apps.contains(&r.registry_key.as_str()))
                .count()
        }
    };
    let tz = state.settings.timezone;
    let today = local_date(tz, now);
    let from = today - Days::new(days - 1);
    let series = daily_runs(&state.store, tz, from, today, scope).await?;
    let counts: Vec<DayCounts> = series
        .iter()
        .map(|d| DayCounts {
            day: d.day,
            success: d.success,
            fail: d.fail,
            running: d.running,
        })
        .collect();
    let today = *series.last().unwrap_or(&DailyRuns {
        day: today,
        success: 0,
        fail: 0,
        running: 0,
    });
    Ok(render(&DashboardPage {
        nav: nav(&req, &principal, "dashboard"),
        jobs_scheduled,
        jobs_stopped,
        executors_online,
        today,
        days,
        chart: lay_out(&counts),
    }))
}
