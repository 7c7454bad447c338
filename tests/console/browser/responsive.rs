//! Every page at a phone's width (390 px) and a desktop's (1400 px), in English and Chinese: no
//! page is wider than the window (wide lists scroll inside their own box), and axe-core finds no
//! violation.

use super::*;

#[actix_web::test]
async fn every_page_fits_and_is_accessible_at_both_widths() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let b = &browser;
    b.log_in(&app).await;
    let group = app.group("phone-app").await;
    let job = app
        .job(group, "a job with a rather long description to wrap")
        .await;
    let script = app
        .api
        .create_job(
            json!({"jobGroup": group, "jobDesc": "a script", "glueType": "GLUE_SHELL",
            "glueSource": "#!/bin/bash\necho hello", "scheduleType": "NONE"}),
        )
        .await;
    assert_eq!(script.status, 201, "{}", script.body);
    let script = script.id();
    // a run: no executor is online, so it fails at once, which is what the pages show
    let run = app.api.trigger_job(job, None).await;
    let run = run.body["logIds"][0].as_i64().expect("a run row");
    let flow = app
        .api
        .request(
            "POST",
            "/api/v1/workflows",
            Some(json!({"name": "phone flow", "jobGroup": group,
                "nodes": [{"key": "only", "kind": "JOB", "jobId": job}], "edges": []})),
        )
        .await;
    assert_eq!(flow.status, 201, "{}", flow.body);
    let flow = flow.id();
    let flow_run = app
        .api
        .request("POST", &format!("/api/v1/workflows/{flow}/trigger"), None)
        .await;
    let flow_run = flow_run.body["runId"].as_i64().expect("a workflow run");
    let user = app.normal_user("phone-user", &[group]).await;
    let user_id = user.me().await.body["id"].as_i64().unwrap_or(0);

    let pages = [
        "/".to_string(),
        "/jobs".into(),
        "/jobs/new".into(),
        format!("/jobs/{job}"),
        format!("/jobs/{script}/glue"),
        "/runs".into(),
        format!("/runs/{run}"),
        "/workflows".into(),
        "/workflows/new".into(),
        format!("/workflows/{flow}"),
        format!("/workflows/{flow}/runs"),
        format!("/workflow-runs/{flow_run}"),
        "/executors".into(),
        "/executors/new".into(),
        format!("/executors/{group}"),
        "/users".into(),
        "/users/new".into(),
        format!("/users/{user_id}"),
        "/tokens".into(),
        "/audit".into(),
        "/account/password".into(),
        "/api-docs".into(),
        "/system".into(),
    ];
    for width in [390, 1400] {
        set_width(b, width).await;
        for lang in ["en", "zh"] {
            use_language(b, &app, lang).await;
            for path in &pages {
                b.client.goto(&format!("{}{path}", app.base)).await.unwrap();
                wait_for(WAIT, || async {
                    b.client
                        .find(Locator::Css("main h1"))
                        .await
                        .ok()
                        .map(|_| ())
                })
                .await
                .unwrap_or_else(|| panic!("{path} shows no heading"));
                let at = format!("{path} ({lang}) at {width} px");
                assert_fits(b, &at).await;
                assert_accessible(b, &at).await;
                // every page in both languages at both widths: `scripts/docs-screenshots.sh`
                // puts them in docs/screenshots
                let slug: String = path
                    .trim_matches('/')
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                let page = if slug.is_empty() { "dashboard" } else { &slug };
                if width == 390 {
                    full_shot(b, 390, &format!("phone-{lang}-{page}")).await;
                } else {
                    b.screenshot(&format!("wide-{lang}-{page}")).await;
                }
            }
        }
    }
    set_width(b, 1400).await;
    select(b, "#lang", "en").await;
    close(app, browser).await;
}
