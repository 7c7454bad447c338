//! Runs: following a run's log live, killing it, clearing runs; a script job run on the embedded executor.

use super::*;

#[actix_web::test]
async fn an_operator_follows_a_run_live_kills_it_and_clears_runs() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("demo-app").await;
    let executor = FakeExecutor::start(
        &app.base,
        &app.token,
        Behaviour {
            log_lines: vec!["starting".into(), "step 1".into()],
            ..Behaviour::without_results()
        },
    );
    executor.register("demo-app").await;
    let job = app.job(group, "Long import").await;
    let res = app.api.trigger_job(job, None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let run = res.body["logIds"][0].as_i64().unwrap();
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    b.click("header nav a[href='/runs']").await;
    b.wait_path("/runs").await;
    b.wait_text(&format!("tr[data-run-id='{run}']"), "Running")
        .await;
    b.wait_text(&format!("tr[data-run-id='{run}']"), "Long import")
        .await;

    // the run's page follows the executor's log as lines arrive; markup in a log stays text
    b.click(&format!("tr[data-run-id='{run}'] a[href='/runs/{run}']"))
        .await;
    b.wait_path(&format!("/runs/{run}")).await;
    b.wait_text("#run-log", "step 1").await;
    b.wait_text("#tail-state", "following").await;
    executor.set(|be| be.log_lines.push("step 2 <b>not bold</b>".into()));
    b.wait_text("#run-log", "step 2 <b>not bold</b>").await;
    let bold = c.find_all(Locator::Css("#run-log b")).await.unwrap();
    assert!(bold.is_empty(), "log text is never markup");
    // XXL-JOB's "<br>" markers are line breaks
    executor.set(|be| {
        be.log_lines.push(
            "marker<br>----------- xxl-job job execute start -----------<br>----------- Param:p"
                .into(),
        )
    });
    b.wait_text("#run-log", "xxl-job job execute start").await;
    let shown = text_of(b, "#run-log").await;
    assert!(!shown.contains("<br>"), "{shown}");
    assert!(
        shown.contains(
            "marker\n----------- xxl-job job execute start -----------\n----------- Param:p"
        ),
        "{shown}"
    );
    assert!(
        !c.find_all(Locator::Css("#run-log-download"))
            .await
            .unwrap()
            .is_empty(),
        "the log can be downloaded"
    );
    b.screenshot("run-live").await;

    // kill: the run ends as failed, and the page stops following
    b.click("button[data-call$='/kill']").await;
    c.accept_alert().await.unwrap();
    b.wait_text("#run-state", "Failed").await;
    b.wait_text("#result-msg", "Manual operation, kill job")
        .await;
    b.wait_text("#tail-state", "complete").await;
    b.screenshot("run-killed").await;

    // the list filters by outcome
    let other = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs?status=fail", app.base))
        .await
        .unwrap();
    b.wait_text("#runs tbody", "Manual operation").await;
    let rows = c
        .find_all(Locator::Css("#runs tbody tr[data-run-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    c.goto(&format!("{}/runs", app.base)).await.unwrap();
    b.wait_text(&format!("tr[data-run-id='{other}']"), "Running")
        .await;
    b.screenshot("runs").await;

    // clear by rule: keep none of this job's runs
    b.click("#clear-open").await;
    c.find(Locator::Css("#clear-form select[name=rule]"))
        .await
        .unwrap()
        .select_by_value("keepLast=0")
        .await
        .unwrap();
    b.fill("#clear-form input[name=jobId]", &job.to_string())
        .await;
    b.click("#clear-form button[type=submit]").await;
    b.wait_text("#runs tbody", "No runs match").await;
    assert_eq!(app.api.list_logs("").await.body["total"], 0);

    close(app, browser).await;
}

#[actix_web::test]
async fn a_script_job_made_in_the_console_runs_on_the_embedded_executor_live() {
    // groups are created through the form in an_administrator_manages_executors_users_and_tokens
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite).standalone()).await else {
        return;
    };
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // the embedded executor's group (its executor accepts triggers for its own app name)
    let groups = app.api.list_groups().await.body;
    let group = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["appName"] == "jobwheel-local")
        .expect("standalone's group")["id"]
        .as_i64()
        .unwrap();

    // a GLUE_SHELL job from the form, its script from the GLUE editor
    c.goto(&format!("{}/jobs/new", app.base)).await.unwrap();
    select(b, "#job-form select[name=jobGroup]", &group.to_string()).await;
    b.fill("#job-form input[name=jobDesc]", "Count to five")
        .await;
    select(b, "#job-form select[name=scheduleType]", "NONE").await;
    select(b, "#job-form select[name=glueType]", "GLUE_SHELL").await;
    b.click("#job-form button[type=submit]").await;
    b.wait_path("/jobs").await;
    let listed = app.api.list_jobs("").await.body;
    let job = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobDesc"] == "Count to five")
        .expect("the new job");
    assert_eq!(
        (job["glueType"].as_str(), job["jobGroup"].as_i64()),
        (Some("GLUE_SHELL"), Some(group)),
        "{listed}"
    );
    let job = job["id"].as_i64().unwrap();
    c.goto(&format!("{}/jobs/{job}/glue", app.base))
        .await
        .unwrap();
    // a new script job starts from its type's template, replaced here
    b.wait_text("#glue-form .cm-content", "#!/bin/bash").await;
    type_into_editor(
        b,
        "for i in 1 2 3 4 5; do echo \"line $i\"; sleep 1; done\n",
    )
    .await;
    b.fill("input[name=glueRemark]", "count").await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("#glue-versions", "count").await;

    // run once: the run's page shows the script's lines as they are written
    let run = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs/{run}", app.base)).await.unwrap();
    b.wait_text("#run-log", "line 1").await;
    let partial = text_of(b, "#run-log").await;
    assert!(
        !partial.contains("line 5"),
        "the first line arrived before the last was written: {partial}"
    );
    b.wait_text("#run-log", "line 3").await;
    b.screenshot("run-live-tail").await;
    b.wait_text("#run-log", "line 5").await;
    b.wait_text("#run-state", "Succeeded").await;

    // a long run, killed from its page
    let mut body = app.api.get_job(job).await.body;
    body["glueSource"] = json!("echo started; sleep 300; echo never");
    body["glueRemark"] = json!("long");
    assert_eq!(app.api.update_job(job, body).await.status, 200);
    let long = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs/{long}", app.base)).await.unwrap();
    b.wait_text("#run-log", "started").await;
    b.click("button[data-call$='/kill']").await;
    c.accept_alert().await.unwrap();
    b.wait_text("#run-state", "Failed").await;
    b.wait_text("#result-msg", "kill").await;
    b.screenshot("run-killed-script").await;
    let run = app.api.get_log(long).await.body;
    assert!(run["handleCode"].as_i64().unwrap() >= 500, "{run}");

    close(app, browser).await;
}

#[actix_web::test]
async fn a_capped_jobs_queued_fire_shows_on_its_pages_and_is_cancelled() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("capped-app").await;
    // the executor never reports a result, so the first run holds the job's one slot
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::without_results());
    executor.register("capped-app").await;
    let job = app.job(group, "Capped import").await;
    let res = app
        .api
        .update_job(
            job,
            json!({"maxConcurrentInstances": 1, "instanceOverflow": "QUEUE"}),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(app.api.trigger_job(job, None).await.status, 200);
    let res = app.api.trigger_job(job, None).await;
    assert_eq!(res.body["admission"], "QUEUED", "{}", res.body);
    let queued = res.body["logIds"][0].as_i64().unwrap();
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    for (lang, open_text, reason) in [
        ("en", "Open runs 1 / 1", "1 of 1 instances open"),
        ("zh", "运行中 1 / 1", "已有 1 个实例在运行，上限为 1"),
    ] {
        c.goto(&format!("{}/jobs/{job}", app.base)).await.unwrap();
        select(b, "#lang", lang).await;
        b.wait_text("#job-instances", open_text).await;
        for width in [1400, 390] {
            set_width(b, width).await;
            full_shot(b, width, &format!("job-instances-{lang}-{width}")).await;
        }
        set_width(b, 1400).await;
        c.goto(&format!("{}/runs/{queued}", app.base))
            .await
            .unwrap();
        b.wait_text("#run-admission", "QUEUED").await;
        // the reason is stored in English and worded for the reader
        b.wait_text("#run-queued", reason).await;
        for width in [1400, 390] {
            set_width(b, width).await;
            full_shot(b, width, &format!("run-queued-{lang}-{width}")).await;
        }
        set_width(b, 1400).await;
    }
    select(b, "#lang", "en").await;

    // Kill on a queued run cancels it: it is never sent
    b.click(&format!("button[data-call='/api/v1/logs/{queued}/kill']"))
        .await;
    c.accept_alert().await.unwrap();
    wait_for(Duration::from_secs(10), || async {
        let row = app.api.get_log(queued).await.body;
        (row["handleCode"] != 0).then_some(())
    })
    .await;
    assert_eq!(
        executor.calls_to("run").len(),
        1,
        "the queued fire was never sent"
    );
}

#[actix_web::test]
async fn the_runs_filter_picks_a_job_by_its_description() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("picker-app").await;
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    executor.register("picker-app").await;
    let backup = app.job(group, "Nightly backup").await;
    let sync = app.job(group, "Hourly sync").await;
    let mut runs = Vec::new();
    for job in [backup, sync] {
        let res = app.api.trigger_job(job, None).await;
        assert_eq!(res.status, 200, "{}", res.body);
        runs.push(res.body["logIds"][0].as_i64().unwrap());
    }
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;
    c.goto(&format!("{}/runs", app.base)).await.unwrap();
    b.wait_text(&format!("tr[data-run-id='{}']", runs[1]), "Hourly sync")
        .await;

    // part of a description offers the matching jobs, and filtering takes the first
    b.fill("#runs-job-search", "backup").await;
    let offered = wait_for(WAIT, || async {
        let options = c
            .find_all(Locator::Css("#runs-job-choices option"))
            .await
            .ok()?;
        let first = options.first()?.attr("value").await.ok()??;
        Some((options.len(), first))
    })
    .await
    .expect("the matching jobs are offered");
    assert_eq!(offered, (1, format!("#{backup} Nightly backup")));
    b.click("#runs-filter button[type=submit]").await;
    let filtered = wait_for(WAIT, || async {
        let path = b.path().await;
        path.contains(&format!("job={backup}")).then_some(path)
    })
    .await;
    assert!(
        filtered.is_some(),
        "filtered by the backup job: {}",
        b.path().await
    );
    b.wait_text("#runs tbody", "Nightly backup").await;
    assert_eq!(
        field_value(b, "#runs-job-search").await,
        format!("#{backup} Nightly backup"),
        "the picker names the job filtered on"
    );
    let rows = c
        .find_all(Locator::Css("#runs tbody tr[data-run-id]"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "only the backup job's run");

    // an id works as it did; a word no job has is said, not ignored
    b.fill("#runs-job-search", &format!("#{sync}")).await;
    b.click("#runs-filter button[type=submit]").await;
    let by_id = wait_for(WAIT, || async {
        b.path()
            .await
            .contains(&format!("job={sync}"))
            .then_some(())
    })
    .await;
    assert!(by_id.is_some(), "filtered by id: {}", b.path().await);
    b.wait_text("#runs tbody", "Hourly sync").await;
    b.fill("#runs-job-search", "no such job").await;
    b.click("#runs-filter button[type=submit]").await;
    b.wait_text(
        "#runs-filter [data-error-for=job]",
        "No job you may see matches this.",
    )
    .await;
    assert_accessible(b, "the runs filter with its job picker").await;

    close(app, browser).await;
}
