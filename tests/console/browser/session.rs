//! Logging in, the dashboard and job list, the language switch, the password, logging out.

use super::*;

#[actix_web::test]
async fn an_operator_logs_in_reads_the_dashboard_and_jobs_and_logs_out() {
    // one report pass only (at start), so that the week of reports written below stays
    let builder = TestApp::builder(Backend::Sqlite)
        .monitors(|m| m.report_interval = Duration::from_secs(3600));
    let Some((app, browser)) = open(builder).await else {
        return;
    };
    let group = app.group("demo-app").await;
    for (desc, author) in [
        ("Nightly report <b>export</b>", "ops"),
        ("<script>alert(1)</script> Clean temp files", "ops"),
        ("Sync partners", "li.wei"),
    ] {
        let id = app.job(group, desc).await;
        let res = app
            .api
            .call_with(
                actix_web::http::Method::GET,
                &format!("/api/v1/jobs/{id}"),
                None,
                &[],
            )
            .await;
        let mut job = res.body;
        job["author"] = json!(author);
        assert_eq!(app.api.update_job(id, job).await.status, 200);
    }
    let first = app.api.list_jobs("").await.body["items"][0]["id"]
        .as_i64()
        .unwrap();
    assert_eq!(app.api.start_job(first).await.status, 200);

    let b = &browser;
    let c = &b.client;
    // a page without a session sends the browser to log in, and back after
    c.goto(&format!("{}/jobs", app.base)).await.unwrap();
    b.wait_path("/login?next=/jobs").await;
    b.fill("input[name=username]", "admin").await;
    b.fill("input[name=password]", "wrong-password").await;
    b.click("button[type=submit]").await;
    b.wait_text("[data-error-for='']", "wrong username or password")
        .await;
    b.screenshot("login-error").await;
    b.fill("input[name=password]", ADMIN_PASSWORD).await;
    b.click("button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Nightly report <b>export</b>")
        .await;
    // a description holding a script is shown as text and never runs
    b.wait_text("#jobs tbody", "<script>alert(1)</script> Clean temp files")
        .await;
    assert!(
        c.get_alert_text().await.is_err(),
        "no dialog: the description was not run"
    );
    let rows = c
        .find_all(Locator::Css("#jobs tbody tr[data-job-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    // next fire time, put in the browser's zone by the page's script (no "UTC" left)
    let next = text_of(b, &format!("tr[data-job-id='{first}'] time")).await;
    assert!(!next.contains("UTC") && next.len() == 19, "{next}");
    b.screenshot("jobs").await;

    // filters
    c.find(Locator::Css("select[name=status]"))
        .await
        .unwrap()
        .select_by_value("1")
        .await
        .unwrap();
    b.click(".filters button[type=submit]").await;
    b.wait_path("/jobs?group=&status=1&desc=&handler=&author=&size=20")
        .await;
    let rows = c
        .find_all(Locator::Css("#jobs tbody tr[data-job-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);

    // dashboard, over a week of daily reports, written after the start's report pass
    let tz = app.settings().timezone;
    let today = local_date(tz, now_ms());
    let first_pass = wait_for(WAIT, || async {
        let reports = app
            .store
            .list_log_reports(day_start(tz, today), day_start(tz, today + Days::new(1)))
            .await
            .unwrap();
        (!reports.is_empty()).then_some(())
    })
    .await;
    assert!(
        first_pass.is_some(),
        "the report pass at start wrote today's row"
    );
    for (back, ok, failed, running) in [
        (6, 1210, 14, 0),
        (5, 1302, 3, 0),
        (4, 1187, 41, 0),
        (3, 1244, 0, 0),
        (2, 1390, 9, 0),
        (1, 1275, 22, 0),
        (0, 640, 5, 12),
    ] {
        app.store
            .upsert_log_report(&LogReport {
                trigger_day: day_start(tz, today - Days::new(back)),
                running_count: running,
                suc_count: ok,
                fail_count: failed,
                update_time: now_ms(),
            })
            .await
            .unwrap();
    }
    b.click("header nav a[href='/']").await;
    b.wait_path("/").await;
    b.wait_text("#jobs-scheduled", "1").await;
    b.wait_text("#jobs-stopped", "2").await;
    let bars = c.find_all(Locator::Css("svg.chart g")).await.unwrap();
    assert_eq!(bars.len(), 7);
    b.wait_text("#runs-today", "657").await;
    let failed = c
        .find_all(Locator::Css("svg.chart rect.fail"))
        .await
        .unwrap();
    assert_eq!(failed.len(), 6, "a red segment on each day with failures");
    b.screenshot("dashboard").await;

    // the language switch is remembered by the browser
    c.find(Locator::Css("#lang"))
        .await
        .unwrap()
        .select_by_value("zh")
        .await
        .unwrap();
    b.wait_text("header nav", "任务管理").await;
    c.goto(&format!("{}/jobs", app.base)).await.unwrap();
    b.wait_text("h1", "任务管理").await;
    b.screenshot("jobs-zh").await;
    c.find(Locator::Css("#lang"))
        .await
        .unwrap()
        .select_by_value("en")
        .await
        .unwrap();
    b.wait_text("h1", "Jobs").await;

    // change the password: mistakes are shown beside their field
    b.click("header .me a[href='/account/password']").await;
    b.wait_path("/account/password").await;
    b.fill("input[name=currentPassword]", ADMIN_PASSWORD).await;
    b.fill("input[name=newPassword]", "brand-new-pass").await;
    b.fill("input[name=repeat]", "brand-new-typo").await;
    b.click("button[type=submit]").await;
    b.wait_text("[data-error-for='repeat'], [data-error-for='']", "differ")
        .await;
    b.fill("input[name=newPassword]", "short").await;
    b.fill("input[name=repeat]", "short").await;
    b.click("button[type=submit]").await;
    b.wait_text("[data-error-for='newPassword']", "at least 8")
        .await;
    b.screenshot("password-error").await;
    b.fill("input[name=newPassword]", "brand-new-pass").await;
    b.fill("input[name=repeat]", "brand-new-pass").await;
    b.click("button[type=submit]").await;
    b.wait_text(".notice", "Password changed").await;
    assert_eq!(
        app.anonymous()
            .login("admin", "brand-new-pass")
            .await
            .status,
        200
    );

    // log out: the session is gone, pages redirect again
    b.click("#logout").await;
    b.wait_path("/login").await;
    c.goto(&format!("{}/", app.base)).await.unwrap();
    b.wait_path("/login").await;
    b.screenshot("login").await;
    // and in again, with the new password
    b.fill("input[name=username]", "admin").await;
    b.fill("input[name=password]", "brand-new-pass").await;
    b.click("button[type=submit]").await;
    b.wait_path("/").await;
    b.wait_text("header .me", "admin").await;

    close(app, browser).await;
}
