//! The administrator's pages: executor groups, users and API tokens.

use super::*;

#[actix_web::test]
async fn an_administrator_manages_executors_users_and_tokens() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // executor groups: create with a bad name (the API's message beside it), then a good one
    b.click("header nav a[href='/executors']").await;
    b.wait_path("/executors").await;
    b.click("#new-group").await;
    b.wait_path("/executors/new").await;
    b.fill("#group-form input[name=appName]", "bad name!").await;
    b.fill("#group-form input[name=title]", "Orders").await;
    b.click("#group-form button[type=submit]").await;
    b.wait_text("[data-error-for=appName]", "letters, digits")
        .await;
    b.fill("#group-form input[name=appName]", "order-service")
        .await;
    b.click("#group-form button[type=submit]").await;
    b.wait_path("/executors").await;
    b.wait_text("#groups", "order-service").await;
    executor.register("order-service").await;
    c.goto(&format!("{}/executors", app.base)).await.unwrap();
    b.wait_text("#groups td.online", &executor.address).await;
    b.wait_text("#groups td.online", "beat").await;
    b.screenshot("executors").await;
    let group = app.api.list_groups().await.body[0]["id"].as_i64().unwrap();

    // a jobwheel executor's beat carries its load: shown beside its address and on the job's
    // page, in both languages, at a desktop's and a phone's width
    let job = app.job(group, "nightly export").await;
    let beat = json!({"registryGroup": "EXECUTOR", "registryKey": "order-service",
        "registryValue": executor.address, "load": {"running": 4, "queued": 16, "limit": 4,
        "jobs": [{"jobId": job, "queued": 3, "oldestQueuedMs": 42_000}]},
        "labels": {"gpu": "true", "region": "eu"}});
    let res = app
        .executor_post("/api/registry", beat, Some(&app.token))
        .await;
    assert_eq!(res["code"], 200, "{res}");
    for (lang, queued) in [("en", "queued 16"), ("zh", "排队 16")] {
        c.goto(&format!("{}/executors", app.base)).await.unwrap();
        select(b, "#lang", lang).await;
        b.wait_text("#groups td.online .load", queued).await;
        b.wait_text("#groups td.online .labels", "region=eu").await;
        for width in [1400, 390] {
            set_width(b, width).await;
            full_shot(b, width, &format!("executors-load-{lang}-{width}")).await;
        }
        set_width(b, 1400).await;
        c.goto(&format!("{}/jobs/{job}", app.base)).await.unwrap();
        b.wait_text("#job-queues", &executor.address).await;
        for width in [1400, 390] {
            set_width(b, width).await;
            full_shot(b, width, &format!("job-queues-{lang}-{width}")).await;
        }
        set_width(b, 1400).await;
    }
    select(b, "#lang", "en").await;

    // drain the executor from its row, then resume it
    c.goto(&format!("{}/executors", app.base)).await.unwrap();
    b.click("#groups td.online button[data-call='/api/v1/registry/cordons']")
        .await;
    c.accept_alert().await.unwrap();
    b.wait_text("#groups td.online .cordoned", "draining since")
        .await;
    full_shot(b, 1400, "executors-drained").await;
    assert_eq!(
        app.api.cordons().await.body[0]["address"],
        json!(executor.address)
    );
    b.click("#groups td.online button[data-method=DELETE]")
        .await;
    b.wait_text("#groups td.online", "Drain").await;
    assert_eq!(app.api.cordons().await.body, json!([]));

    // users: a normal user limited to the new group
    b.click("header nav a[href='/users']").await;
    b.wait_path("/users").await;
    b.click("#new-user").await;
    b.wait_path("/users/new").await;
    b.fill("#user-form input[name=username]", "grace").await;
    b.fill("#user-form input[name=password]", "short").await;
    b.click("#user-form button[type=submit]").await;
    b.wait_text("[data-error-for=password]", "at least 8").await;
    b.fill("#user-form input[name=password]", "grace-pass-1")
        .await;
    b.click(&format!(
        "#user-form input[name=permission][value='{group}']"
    ))
    .await;
    b.click("#user-form button[type=submit]").await;
    b.wait_path("/users").await;
    b.wait_text("#users", "grace").await;
    b.wait_text("#users", "order-service").await;
    b.screenshot("users").await;
    let grace = app.anonymous();
    assert_eq!(grace.login("grace", "grace-pass-1").await.status, 200);
    assert_eq!(grace.me().await.body["permission"], json!([group]));

    // grace, in her own browser session, sees her group's job and run, not another group's
    let billing = app.group("billing").await;
    let secret_job = app.job(billing, "Billing secret job").await;
    let order_job = app.job(group, "Order sync").await;
    let now = now_ms();
    let mut runs = Vec::new();
    for (g, j) in [(group, order_job), (billing, secret_job)] {
        let log = crate::kit::db::manual_log(g as i32, j as i32, now);
        runs.push(app.store.insert_log(&log).await.unwrap());
    }
    b.click("#logout").await;
    b.wait_path("/login").await;
    b.fill("input[name=username]", "grace").await;
    b.fill("input[name=password]", "grace-pass-1").await;
    b.click("button[type=submit]").await;
    b.wait_path("/").await;
    c.goto(&format!("{}/jobs", app.base)).await.unwrap();
    b.wait_text("#jobs tbody", "Order sync").await;
    let page = c.source().await.unwrap();
    assert!(!page.contains("Billing secret job") && !page.contains("billing title"));
    assert!(
        c.find(Locator::Css("header nav a[href='/users']"))
            .await
            .is_err(),
        "no Users tab for a normal user"
    );
    c.goto(&format!("{}/runs", app.base)).await.unwrap();
    b.wait_text(&format!("tr[data-run-id='{}']", runs[0]), "Order sync")
        .await;
    assert!(c
        .find(Locator::Css(&format!("tr[data-run-id='{}']", runs[1])))
        .await
        .is_err());
    for url in [
        format!("/api/v1/jobs/{secret_job}"),
        format!("/api/v1/logs/{}", runs[1]),
        format!("/api/v1/groups/{billing}"),
        "/api/v1/users".to_string(),
    ] {
        let status = c
            .execute(
                "return fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.status);",
                vec![json!(url)],
            )
            .await
            .unwrap();
        assert_eq!(status, json!(403), "{url}");
    }
    c.goto(&format!("{}/jobs/{secret_job}", app.base))
        .await
        .unwrap();
    b.wait_text("h1", "403").await;
    b.wait_text("header .me", "grace").await;
    b.screenshot("normal-user-403").await;
    b.click("#logout").await;
    b.wait_path("/login").await;
    b.log_in(&app).await;

    // tokens: the secret is shown once; revoking removes the row
    b.click("header nav a[href='/tokens']").await;
    b.wait_path("/tokens").await;
    b.fill("#token-form input[name=name]", "deploy-script")
        .await;
    b.click("#token-form button[type=submit]").await;
    b.wait_text("#token-value", "jw_").await;
    b.wait_text("#tokens", "deploy-script").await;
    b.screenshot("tokens").await;
    let secret = text_of(b, "#token-value").await;
    let script = app.anonymous();
    script.set_bearer(Some(&secret));
    assert_eq!(script.me().await.body["username"], "admin");
    c.goto(&format!("{}/tokens", app.base)).await.unwrap();
    assert!(
        !c.source().await.unwrap().contains(&secret),
        "never shown again"
    );
    b.click("#tokens button[data-call]").await;
    c.accept_alert().await.unwrap();
    b.wait_text("#tokens", "No tokens").await;
    assert_eq!(script.me().await.status, 401);

    // the audit log lists what this test changed, newest first
    b.click("header nav a[href='/audit']").await;
    b.wait_path("/audit").await;
    b.wait_text("#audit", "token.revoke").await;
    for action in ["token.create", "user.create", "group.create"] {
        b.wait_text("#audit", action).await;
    }
    b.wait_text("#audit", "grace").await;
    b.screenshot("audit").await;

    // the API reference, rendered from the OpenAPI document
    b.click("header nav a[href='/api-docs']").await;
    b.wait_path("/api-docs").await;
    b.wait_text("main", "/api/v1/jobs/{id}/trigger").await;
    b.screenshot("api-docs").await;
    c.goto(&format!("{}/system", app.base)).await.unwrap();
    b.wait_text("#system-actors", "schedule").await;
    full_shot(b, 1400, "system-en-1400").await;

    close(app, browser).await;
}
