//! `GET /api/v1/reports/daily?from&to`: runs per day from the report the admin keeps.

use actix_web::{web, HttpResponse};
use chrono::{Days, NaiveDate};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Principal;
use super::error::answers;
use super::error::{ApiError, ApiResult};
use crate::actors::monitor_report::{day_start, local_date};
use crate::clock::now_ms;
use crate::store::Store;
use crate::web::AppState;

/// Longest range one call covers.
pub const MAX_DAYS: u64 = 366;
/// Days a range covers when `from` is not given.
pub const DEFAULT_DAYS: u64 = 7;

pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/reports/daily", web::get().to(daily));
}

/// One day's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DailyRuns {
    /// The day in the admin's zone.
    pub day: NaiveDate,
    /// Runs that succeeded.
    pub success: i64,
    /// Runs that failed.
    pub fail: i64,
    /// Runs without a result.
    pub running: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct RangeQuery {
    from: Option<String>,
    to: Option<String>,
}

/// The first day a range may name: runs are stamped in epoch milliseconds.
const FIRST_DAY: NaiveDate = NaiveDate::from_ymd_opt(1970, 1, 1).expect("a valid date");
/// The last day a range may name; chrono reads years up to ±262143, whose neighbours (the
/// day before a range's start, the day after its end) do not exist.
const LAST_DAY: NaiveDate = NaiveDate::from_ymd_opt(9999, 12, 31).expect("a valid date");

fn parse_day(field: &'static str, text: &str) -> ApiResult<NaiveDate> {
    let day = NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").map_err(|_| {
        ApiError::field(
            field,
            format!("{field} must be a date like 2026-12-01, not '{text}'"),
        )
    })?;
    if !(FIRST_DAY..=LAST_DAY).contains(&day) {
        return Err(ApiError::field(
            field,
            format!("{field} must be a date from {FIRST_DAY} to {LAST_DAY}, not '{text}'"),
        ));
    }
    Ok(day)
}

/// The days `[from, to]` a query asks for: `to` defaults to today, `from` to a week before it.
pub fn day_range(
    from: Option<&str>,
    to: Option<&str>,
    today: NaiveDate,
) -> ApiResult<(NaiveDate, NaiveDate)> {
    let to = match to.filter(|t| !t.trim().is_empty()) {
        Some(t) => parse_day("to", t)?,
        None => today,
    };
    let from = match from.filter(|t| !t.trim().is_empty()) {
        Some(t) => parse_day("from", t)?,
        None => to
            .checked_sub_days(Days::new(DEFAULT_DAYS - 1))
            .unwrap_or(FIRST_DAY)
            .max(FIRST_DAY),
    };
    if from > to {
        return Err(ApiError::field("from", "from must not be after to"));
    }
    if (to - from).num_days() as u64 >= MAX_DAYS {
        return Err(ApiError::field(
            "from",
            format!("a range covers at most {MAX_DAYS} days"),
        ));
    }
    Ok((from, to))
}

/// Every day of `[from, to]` with its counts: for all groups from the daily report (a day
/// without one counts zero), for a normal user's `groups` counted from their runs.
pub async fn daily_runs(
    store: &Store,
    tz: chrono_tz::Tz,
    from: NaiveDate,
    to: NaiveDate,
    groups: Option<&[i32]>,
) -> ApiResult<Vec<DailyRuns>> {
    if let Some(groups) = groups {
        let mut days = Vec::new();
        let mut day = from;
        while day <= to {
            let next = day + Days::new(1);
            let c = store
                .count_logs_in_groups(day_start(tz, day), day_start(tz, next), groups)
                .await?;
            days.push(DailyRuns {
                day,
                success: c.success,
                fail: c.failed(),
                running: c.running,
            });
            day = next;
        }
        return Ok(days);
    }
    let reports = store
        .list_log_reports(day_start(tz, from), day_start(tz, to + Days::new(1)))
        .await?;
    let mut days = Vec::new();
    let mut day = from;
    while day <= to {
        let start = day_start(tz, day);
        let report = reports.iter().find(|r| r.trigger_day == start);
        days.push(DailyRuns {
            day,
            success: report.map_or(0, |r| r.suc_count),
            fail: report.map_or(0, |r| r.fail_count),
            running: report.map_or(0, |r| r.running_count),
        });
        day = day + Days::new(1);
    }
    Ok(days)
}

/// `?from=YYYY-MM-DD&to=YYYY-MM-DD` → `[{day, success, fail, running}]`, one per day, oldest first.
#[utoipa::path(
    get,
    path = "/reports/daily",
    tag = "reports",
    summary = "Runs per day in the admin's zone, oldest first",
    params(RangeQuery),
    responses(
        (status = 200, description = "One entry per day", body = Vec<DailyRuns>),
        answers::BadInput
    )
)]
async fn daily(
    state: web::Data<AppState>,
    principal: Principal,
    query: web::Query<RangeQuery>,
) -> ApiResult<HttpResponse> {
    let tz = state.settings.timezone;
    let today = local_date(tz, now_ms());
    let (from, to) = day_range(query.from.as_deref(), query.to.as_deref(), today)?;
    let days = daily_runs(&state.store, tz, from, to, principal.group_scope()).await?;
    Ok(HttpResponse::Ok().json(days))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_default_to_the_last_week_and_refuse_nonsense() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let (from, to) = day_range(None, None, today).unwrap();
        assert_eq!((from.to_string(), to), ("2026-11-25".to_string(), today));
        let (from, _) = day_range(Some("2026-11-30"), Some("2026-11-30"), today).unwrap();
        assert_eq!(from.to_string(), "2026-11-30");
        let bad = day_range(Some("30/11/2026"), None, today).unwrap_err();
        assert!(bad.to_string().contains("from must be a date"), "{bad}");
        assert!(day_range(Some("2026-12-02"), Some("2026-12-01"), today).is_err());
        assert!(day_range(Some("2024-01-01"), None, today).is_err());
    }

    /// Found by `day_ranges_are_walkable_or_refused`: chrono reads signed years up to ±262143,
    /// and a `to` on its first day panicked computing the default `from` (`to - 6 days`), one
    /// on its last day when the report stepped past it.
    #[test]
    fn dates_at_the_edge_of_the_calendar_are_refused() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let min = NaiveDate::MIN.format("%Y-%m-%d").to_string();
        let max = NaiveDate::MAX.format("%Y-%m-%d").to_string();
        for to in [min.as_str(), max.as_str(), "+10000-01-01", "1969-12-31"] {
            let e = day_range(None, Some(to), today).unwrap_err();
            assert!(
                e.to_string().contains("from 1970-01-01 to 9999-12-31"),
                "{e}"
            );
        }
        let (from, to) = day_range(None, Some("1970-01-02"), today).unwrap();
        assert_eq!(
            (from.to_string(), to.to_string()),
            ("1970-01-01".into(), "1970-01-02".into())
        );
    }
}

#[cfg(test)]
mod proptests {
    use chrono::Datelike;
    use proptest::prelude::*;

    use super::*;

    /// Dates as a query may spell them: any day chrono knows (signed years past 9999
    /// included), near-dates and junk.
    fn day_text() -> impl Strategy<Value = String> {
        let min = NaiveDate::MIN.num_days_from_ce();
        let max = NaiveDate::MAX.num_days_from_ce();
        prop_oneof![
            (min..=max).prop_map(|d| {
                NaiveDate::from_num_days_from_ce_opt(d)
                    .map(|d| d.format("%Y-%m-%d").to_string())
                    .unwrap_or_default()
            }),
            (1960i32..2100, 0u32..14, 0u32..33).prop_map(|(y, m, d)| format!("{y}-{m:02}-{d:02}")),
            prop::sample::select(vec![
                "-262143-01-01",
                "+262142-12-31",
                "+10000-01-01",
                "1970-01-01",
                "9999-12-31",
                "",
                " ",
            ])
            .prop_map(str::to_string),
            ".{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Any `from`/`to` gives a range the report can walk (each day and the one after it
        /// exist), or a 400 naming the field.
        #[test]
        fn day_ranges_are_walkable_or_refused(
            from in prop::option::of(day_text()),
            to in prop::option::of(day_text()),
            // the admin's clock, not input: any day a real clock shows
            today in (FIRST_DAY.num_days_from_ce()..=LAST_DAY.num_days_from_ce())
                .prop_map(|d| NaiveDate::from_num_days_from_ce_opt(d).unwrap_or(FIRST_DAY)),
        ) {
            match day_range(from.as_deref(), to.as_deref(), today) {
                Ok((from, to)) => {
                    prop_assert!(from <= to);
                    prop_assert!(((to - from).num_days() as u64) < MAX_DAYS);
                    prop_assert!(to.checked_add_days(Days::new(1)).is_some());
                }
                Err(ApiError::BadRequest { field: Some(f), message }) => {
                    prop_assert!(f == "from" || f == "to", "{f}");
                    prop_assert!(!message.is_empty());
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }
    }
}
