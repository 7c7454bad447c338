//! `GET /api/v1/reports/daily`: runs per day for the dashboard.

use chrono::Days;
use jobwheel::actors::monitor_report::{day_start, local_date};
use jobwheel::clock::now_ms;
use jobwheel::model::LogReport;

backends!(app: daily_reports_fill_every_day_of_the_range, |app| {
    let tz = app.settings().timezone;
    let today = local_date(tz, now_ms());
    // five days back: the admin's report pass rewrites only the last three days
    let five_days_ago = today - Days::new(5);
    app.store
        .upsert_log_report(&LogReport {
            trigger_day: day_start(tz, five_days_ago),
            running_count: 2,
            suc_count: 40,
            fail_count: 3,
            update_time: now_ms(),
        })
        .await
        .unwrap();

    let res = app.api.daily_report("").await;
    assert_eq!(res.status, 200, "{}", res.body);
    let days = res.body.as_array().unwrap();
    assert_eq!(days.len(), 7, "the default range is a week: {}", res.body);
    assert_eq!(days[6]["day"], today.to_string());
    assert_eq!(days[1]["day"], five_days_ago.to_string());
    assert_eq!(
        (&days[1]["success"], &days[1]["fail"], &days[1]["running"]),
        (&40.into(), &3.into(), &2.into())
    );
    assert_eq!(days[0]["success"], 0, "a day without a report counts zero");
    assert_eq!(days[2]["success"], 0);

    let res = app
        .api
        .daily_report(&format!("?from={five_days_ago}&to={five_days_ago}"))
        .await;
    assert_eq!(res.body.as_array().unwrap().len(), 1, "{}", res.body);

    for (query, field) in [
        ("?from=five_days_ago", "from"),
        ("?to=2026-13-01", "to"),
        ("?from=2026-12-02&to=2026-12-01", "from"),
        ("?from=2020-01-01&to=2026-01-01", "from"),
    ] {
        let res = app.api.daily_report(query).await;
        assert_eq!((res.status, res.field()), (400, field.to_string()), "{query}: {}", res.body);
    }
    assert_eq!(app.anonymous().daily_report("").await.status, 401);
});

backends!(app: a_normal_users_daily_counts_cover_only_their_groups, |app| {
    let mine = app.group("report-mine").await;
    let theirs = app.group("report-theirs").await;
    let my_job = app.job(mine, "mine").await;
    let their_job = app.job(theirs, "theirs").await;
    let now = now_ms();
    for (group, job, code, n) in [(mine, my_job, 200, 2), (mine, my_job, 500, 1), (theirs, their_job, 200, 5)] {
        for _ in 0..n {
            let log = crate::kit::db::manual_log(group as i32, job as i32, now);
            let id = app.store.insert_log(&log).await.unwrap();
            app.store.complete_log(id, code, Some("done"), now).await.unwrap();
        }
    }
    let normal = app.normal_user("reporter", &[mine]).await;
    let res = normal.daily_report("").await;
    assert_eq!(res.status, 200, "{}", res.body);
    let today = &res.body[6];
    assert_eq!((&today["success"], &today["fail"]), (&2.into(), &1.into()), "{}", res.body);
    let page = normal.page("/").await;
    assert!(page.html.contains(r#"id="runs-today">3<"#), "{}", page.html);
});
