//! The job form: create, edit, run once, copy, delete.

use super::*;

#[actix_web::test]
async fn an_operator_creates_edits_runs_copies_and_deletes_a_job() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("demo-app").await;
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    executor.register("demo-app").await;
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;
    b.click("header nav a[href='/jobs']").await;
    b.wait_path("/jobs").await;

    // a new job: the API's complaint is shown beside its field
    b.click("#new-job").await;
    b.wait_path("/jobs/new").await;
    b.fill("#job-form input[name=scheduleConf]", "0 0/15 * * * ?")
        .await;
    b.fill("#job-form input[name=timezone]", "Asia/Shanghai")
        .await;
    // the preview follows the schedule as it is typed, in the job's zone
    b.wait_text("#preview-times", "(Asia/Shanghai)").await;
    let times = c.find_all(Locator::Css("#preview-times li")).await.unwrap();
    assert_eq!(times.len(), 5);
    let first = times[0].text().await.unwrap();
    assert!(
        first.contains(":00:00")
            || first.contains(":15:00")
            || first.contains(":30:00")
            || first.contains(":45:00"),
        "{first}"
    );
    b.fill("#job-form input[name=scheduleConf]", "0 0 25 * * ?")
        .await;
    b.wait_text("#preview-error", "hour").await;
    b.screenshot("job-preview-error").await;
    b.fill("#job-form input[name=scheduleConf]", "0 0/15 * * * ?")
        .await;
    b.wait_text("#preview-times", "(Asia/Shanghai)").await;
    // every problem at once, beside its field, in the form's own words
    b.fill("#job-form input[name=executorTimeout]", "-3").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_text("[data-error-for=jobDesc]", "Description is required")
        .await;
    b.wait_text(
        "[data-error-for=executorHandler]",
        "is required for BEAN jobs",
    )
    .await;
    b.wait_text(
        "[data-error-for=executorTimeout]",
        "must be 0 (none) or more",
    )
    .await;
    let invalid = c
        .find_all(Locator::Css("#job-form [aria-invalid=true]"))
        .await
        .unwrap();
    assert_eq!(invalid.len(), 3, "the three bad fields are marked");
    let focused = c
        .execute("return document.activeElement.name;", vec![])
        .await
        .unwrap();
    assert_eq!(focused, "jobDesc", "the first bad field takes the focus");
    b.screenshot("job-new-error").await;
    b.fill("#job-form input[name=executorTimeout]", "0").await;
    b.fill("#job-form input[name=jobDesc]", "Quarter-hour sync")
        .await;
    b.fill("#job-form input[name=author]", "ops").await;
    b.fill("#job-form input[name=executorHandler]", "demoJobHandler")
        .await;
    b.fill("#job-form textarea[name=executorParam]", "--full")
        .await;
    b.fill("#job-form input[name=executorFailRetryCount]", "2")
        .await;
    b.screenshot("job-new").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Quarter-hour sync").await;
    // the next-fire column names the zone its times are in: the browser's
    let zone = b
        .client
        .execute(
            "return Intl.DateTimeFormat().resolvedOptions().timeZone;",
            vec![],
        )
        .await
        .unwrap();
    let zone = zone.as_str().unwrap_or_default().to_string();
    assert!(!zone.is_empty());
    assert_eq!(text_of(b, "#jobs thead [data-browser-zone]").await, zone);
    let listed = app.api.list_jobs("").await;
    let job = &listed.body["items"][0];
    let id = job["id"].as_i64().unwrap();
    assert_eq!(
        (
            job["jobGroup"].as_i64(),
            job["timezone"].as_str(),
            job["executorParam"].as_str()
        ),
        (Some(group), Some("Asia/Shanghai"), Some("--full"))
    );
    assert_eq!(job["executorFailRetryCount"], 2);

    // edit: the form holds the saved values
    b.click(&format!("tr[data-job-id='{id}'] a[href='/jobs/{id}']"))
        .await;
    b.wait_path(&format!("/jobs/{id}")).await;
    let param = c
        .find(Locator::Css("#job-form textarea[name=executorParam]"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(param.as_deref(), Some("--full"));
    b.fill("#job-form input[name=jobDesc]", "Quarter-hour sync v2")
        .await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Quarter-hour sync v2").await;

    // start, then stop
    b.click(&format!(
        "tr[data-job-id='{id}'] button[data-call$='/start']"
    ))
    .await;
    b.wait_text(&format!("tr[data-job-id='{id}']"), "Scheduled")
        .await;
    assert_eq!(app.api.get_job(id).await.body["triggerStatus"], 1);
    b.click(&format!(
        "tr[data-job-id='{id}'] button[data-call$='/stop']"
    ))
    .await;
    b.wait_text(&format!("tr[data-job-id='{id}']"), "Stopped")
        .await;

    // run once with a parameter: the executor receives it
    b.click(&format!("tr[data-job-id='{id}'] button[data-trigger]"))
        .await;
    b.fill("#trigger-form textarea[name=executorParam]", "once-param")
        .await;
    b.screenshot("job-trigger").await;
    b.click("#trigger-form button[type=submit]").await;
    b.wait_text("#trigger-form .notice", "Triggered").await;
    let params = wait_for(WAIT, || async {
        let runs = executor.calls_to("run");
        let params: Vec<String> = runs
            .iter()
            .map(|r| r["executorParams"].as_str().unwrap_or_default().to_string())
            .collect();
        (!params.is_empty()).then_some(params)
    })
    .await;
    assert_eq!(params, Some(vec!["once-param".to_string()]));
    // the notice links to the run it made
    let made = text_of(b, "#trigger-form .notice a.new-run").await;
    let first_run: i64 = made.trim_start_matches('#').parse().expect("a run id");
    // a bad address is refused beside its field
    b.fill("#trigger-form input[name=addressList]", "10.0.0.1:9999")
        .await;
    b.click("#trigger-form button[type=submit]").await;
    b.wait_text("#trigger-form [data-error-for=addressList]", "http://")
        .await;
    b.click("#trigger-form button[data-close]").await;

    // copy: a new stopped job with the same definition
    b.click(&format!(
        "tr[data-job-id='{id}'] a[href='/jobs/new?copy={id}']"
    ))
    .await;
    b.wait_path(&format!("/jobs/new?copy={id}")).await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Quarter-hour sync v2 (copy)")
        .await;
    let listed = app.api.list_jobs("").await;
    assert_eq!(listed.body["total"], 2);
    let copy = &listed.body["items"][1];
    assert_eq!(copy["executorParam"], "--full");
    assert_eq!(copy["scheduleConf"], "0 0/15 * * * ?");
    b.screenshot("jobs-actions").await;

    // delete, after a confirmation
    let copy_id = copy["id"].as_i64().unwrap();
    b.click(&format!("tr[data-job-id='{copy_id}'] button.danger"))
        .await;
    c.accept_alert().await.unwrap();
    let gone = wait_for(WAIT, || async {
        (app.api.get_job(copy_id).await.status == 404).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the copy was deleted");
    b.wait_path("/jobs").await;

    // that run's page runs it again with its parameter, and opens the new run
    c.goto(&format!("{}/runs/{first_run}", app.base))
        .await
        .unwrap();
    b.wait_text("#run-param", "once-param").await;
    b.click("#rerun").await;
    let again = wait_for(WAIT, || async {
        let path = b.path().await;
        (path.starts_with("/runs/") && path != format!("/runs/{first_run}")).then_some(path)
    })
    .await;
    assert!(again.is_some(), "run again opens the new run");
    b.wait_text("#run-param", "once-param").await;
    let reran = wait_for(WAIT, || async {
        let runs = executor.calls_to("run");
        (runs.len() == 2).then(|| runs[1]["executorParams"].clone())
    })
    .await;
    assert_eq!(reran, Some(json!("once-param")));

    // a job that does not exist, or a page of nonsense: an error page, not a crash
    c.goto(&format!("{}/jobs/999999", app.base)).await.unwrap();
    b.wait_text("h1", "404").await;

    // in Chinese, the server's complaints are Chinese too, under the form's Chinese labels
    use_language(b, &app, "zh").await;
    c.goto(&format!("{}/jobs/new", app.base)).await.unwrap();
    b.fill("#job-form input[name=scheduleConf]", "0 0 25 * * ?")
        .await;
    b.wait_text("#preview-error", "无效的 Cron 表达式").await;
    b.fill("#job-form input[name=executorTimeout]", "-3").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_text("[data-error-for=jobDesc]", "任务描述不能为空")
        .await;
    b.wait_text(
        "[data-error-for=executorHandler]",
        "BEAN 任务的JobHandler不能为空",
    )
    .await;
    b.screenshot("job-new-error-zh").await;

    close(app, browser).await;
}
