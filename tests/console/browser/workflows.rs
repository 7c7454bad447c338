//! The workflow pages: a diamond built in the editor (a cycle refused beside the graph), the
//! list, a run followed until every node succeeded, the run list; each page checked by axe-core
//! and shot at a desktop's and a phone's width in both languages.

use std::collections::HashMap;

use super::*;

/// How long the diamond's run may take to end.
const RUN_WAIT: Duration = Duration::from_secs(30);

/// Widths the pages are shot at: a desktop's and a phone's.
const WIDTHS: [u32; 2] = [1400, 390];

/// Shoots the page that `path` shows at every width, checking it fits each; the page is
/// reloaded at each width so its script lays it out for that width.
async fn shoot(b: &Browser, app: &TestApp, path: &str, name: &str, ready: &str) {
    for width in WIDTHS {
        set_width(b, width).await;
        b.client.goto(&format!("{}{path}", app.base)).await.unwrap();
        wait_shown(b, ready).await;
        assert_fits(b, &format!("{path} at {width} px")).await;
        // the whole page in one picture: the window as tall as the page
        full_shot(b, width, &format!("{name}-{width}")).await;
        wait_shown(b, ready).await;
    }
    set_width(b, 1400).await;
}

/// Waits until the element `css` exists.
async fn wait_shown(b: &Browser, css: &str) {
    let found = wait_for(WAIT, || async {
        b.client.find(Locator::Css(css)).await.ok().map(|_| ())
    })
    .await;
    assert!(found.is_some(), "{css} never appeared");
}

/// Waits until the editor has the API's verdict on the graph as it is now, and shows `text`.
async fn wait_checked(b: &Browser, text: &str) {
    wait_shown(b, "#wf-form[data-ready=ready]").await;
    b.wait_text("#wf-validity", text).await;
}

/// Waits until the element `css` shows some text.
async fn wait_filled(b: &Browser, css: &str) {
    let found = wait_for(WAIT, || async {
        let el = b.client.find(Locator::Css(css)).await.ok()?;
        let text = el.text().await.unwrap_or_default();
        (!text.trim().is_empty()).then_some(())
    })
    .await;
    assert!(found.is_some(), "{css} stayed empty");
}

/// How many elements `css` matches.
async fn count(b: &Browser, css: &str) -> usize {
    b.client
        .find_all(Locator::Css(css))
        .await
        .map(|all| all.len())
        .unwrap_or(0)
}

/// Waits until `css` matches exactly `n` elements.
async fn wait_count(b: &Browser, css: &str, n: usize) {
    let seen = &RefCell::new(0);
    let hit = wait_for(WAIT, move || async move {
        let now = count(b, css).await;
        *seen.borrow_mut() = now;
        (now == n).then_some(())
    })
    .await;
    assert!(
        hit.is_some(),
        "{css}: expected {n}, found {}",
        seen.borrow()
    );
}

/// Adds a JOB node `key` running `job` through the editor's "add node" row.
async fn add_job_node(b: &Browser, key: &str, job: i64) {
    wait_shown(b, &format!("#wf-add-job option[value='{job}']")).await;
    select(b, "#wf-add-job", &job.to_string()).await;
    b.fill("#wf-add-key", key).await;
    b.click("#wf-add-job-node").await;
    wait_shown(b, &format!("#wf-graph .wf-node[data-key='{key}']")).await;
}

/// Adds an edge `from` → `to` on `when` through the editor's "add edge" row.
async fn add_edge(b: &Browser, from: &str, to: &str, when: &str) {
    select(b, "#wf-edge-from", from).await;
    select(b, "#wf-edge-to", to).await;
    select(b, "#wf-edge-when", when).await;
    b.click("#wf-add-edge-button").await;
    wait_shown(
        b,
        &format!("#wf-graph .wf-edge[data-from='{from}'][data-to='{to}']"),
    )
    .await;
}

#[actix_web::test]
async fn an_operator_builds_a_diamond_runs_it_and_follows_the_run() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("flow-app").await;
    // each node runs a little while, so the timeline shows bars of some length
    let executor = FakeExecutor::start(
        &app.base,
        &app.token,
        Behaviour {
            run_ms: 300,
            ..Behaviour::default()
        },
    );
    executor.register("flow-app").await;
    let mut jobs = HashMap::new();
    for (key, desc) in [
        ("a", "Extract orders"),
        ("b", "Transform left"),
        ("c", "Transform right"),
        ("d", "Load warehouse"),
    ] {
        jobs.insert(key, app.job(group, desc).await);
    }
    let b = &browser;
    let c = &b.client;
    set_width(b, 1400).await;
    b.log_in(&app).await;
    b.click("header nav a[href='/workflows']").await;
    b.wait_path("/workflows").await;
    b.wait_text("#workflows tbody", "No workflows").await;
    assert_accessible(b, "/workflows (empty)").await;

    // the diamond a → (b, c) → d, built node by node and edge by edge
    b.click("#new-workflow").await;
    b.wait_path("/workflows/new").await;
    b.wait_text("#wf-graph", "Add nodes").await;
    b.fill("#wf-form input[name=name]", "Nightly diamond").await;
    for key in ["a", "b", "c", "d"] {
        add_job_node(b, key, jobs[key]).await;
    }
    for (from, to) in [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")] {
        add_edge(b, from, to, "SUCCESS").await;
    }
    wait_checked(b, "Valid").await;
    wait_count(b, "#wf-graph .wf-node", 4).await;
    wait_count(b, "#wf-graph .wf-edge", 4).await;
    // drawn in layers: a, then b and c side by side, then d
    let column = |key: &'static str| async move {
        let x = c
            .find(Locator::Css(&format!(
                "#wf-graph .wf-node[data-key='{key}'] rect"
            )))
            .await
            .unwrap()
            .attr("x")
            .await
            .unwrap()
            .unwrap_or_default();
        x.parse::<f64>().unwrap_or(-1.0)
    };
    let (xa, xb, xc, xd) = (
        column("a").await,
        column("b").await,
        column("c").await,
        column("d").await,
    );
    assert!(
        xa < xb && xb == xc && xc < xd,
        "layers: a {xa}, b {xb}, c {xc}, d {xd}"
    );
    assert_accessible(b, "/workflows/new (diamond)").await;
    full_shot(b, 1400, "workflow-editor-diamond").await;

    // a DECISION node: its expression is checked as it is typed, its problem shown beside it
    b.click("#wf-add-decision").await;
    wait_shown(b, "#wf-graph .wf-node[data-kind=DECISION]").await;
    let expression = "#wf-nodes input[data-field='nodes[4].expression']";
    b.fill(expression, "context.rows >").await;
    wait_filled(b, "[data-error-for='nodes[4].expression']").await;
    wait_checked(b, "Problems").await;
    b.click("#wf-nodes li[data-index='4'] .wf-row-head button")
        .await;
    wait_count(b, "#wf-graph .wf-node", 4).await;
    wait_checked(b, "Valid").await;

    // d → a closes a cycle: the API's verdict is shown beside the graph and saving is refused
    add_edge(b, "d", "a", "ALWAYS").await;
    b.wait_text(".wf-graph-card [data-error-for=edges]", "cycle")
        .await;
    wait_checked(b, "1").await;
    full_shot(b, 1400, "workflow-editor-cycle").await;
    b.click("#wf-form button[type=submit]").await;
    b.wait_text(".wf-save [data-error-for='']", "cycle").await;
    b.wait_text(".wf-graph-card [data-error-for=edges]", "cycle")
        .await;
    assert_eq!(b.path().await, "/workflows/new");
    full_shot(b, 1400, "workflow-editor-refused").await;
    let listed = app.api.request("GET", "/api/v1/workflows", None).await;
    assert_eq!(listed.body["total"], 0, "nothing saved: {}", listed.body);
    assert_accessible(b, "/workflows/new (cycle)").await;

    // without it the diamond saves
    b.click("#wf-edges li[data-index='4'] button[data-remove-edge]")
        .await;
    wait_count(b, "#wf-graph .wf-edge", 4).await;
    wait_checked(b, "Valid").await;
    let edge_error = text_of(b, ".wf-graph-card [data-error-for=edges]").await;
    assert_eq!(edge_error, "");
    b.click("#wf-form button[type=submit]").await;
    b.wait_path("/workflows").await;
    b.wait_text("#workflows tbody", "Nightly diamond").await;
    let listed = app.api.request("GET", "/api/v1/workflows", None).await;
    assert_eq!(listed.body["total"], 1, "{}", listed.body);
    let saved = &listed.body["items"][0];
    let id = saved["id"].as_i64().unwrap();
    let edges: Vec<(String, String, String)> = saved["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (text("from"), text("to"), text("when"))
        })
        .collect();
    let edge = |f: &str, t: &str| (f.to_string(), t.to_string(), "SUCCESS".to_string());
    assert_eq!(
        edges,
        vec![
            edge("a", "b"),
            edge("a", "c"),
            edge("b", "d"),
            edge("c", "d")
        ]
    );
    for n in saved["nodes"].as_array().unwrap() {
        let key = n["key"].as_str().unwrap();
        assert_eq!(n["jobId"].as_i64(), Some(jobs[key]), "{n}");
    }

    // the editor of the saved workflow shows it again, checked and drawn in its layers
    c.goto(&format!("{}/workflows/{id}", app.base))
        .await
        .unwrap();
    wait_checked(b, "Valid").await;
    wait_count(b, "#wf-graph .wf-node", 4).await;
    assert_accessible(b, "/workflows/{id}").await;

    // run it once from the list: the run's page follows it until every node succeeded
    c.goto(&format!("{}/workflows", app.base)).await.unwrap();
    b.click(&format!(
        "tr[data-workflow-id='{id}'] button[data-wf-trigger]"
    ))
    .await;
    b.fill("#wf-trigger-form textarea[name=params]", "2026-12-01")
        .await;
    assert_accessible(b, "/workflows (trigger dialog)").await;
    b.click("#wf-trigger-form button[type=submit]").await;
    let seen = &RefCell::new(String::new());
    let arrived = wait_for(WAIT, move || async move {
        let now = b.path().await;
        let hit = now.starts_with("/workflow-runs/");
        *seen.borrow_mut() = now;
        hit.then_some(())
    })
    .await;
    assert!(arrived.is_some(), "at {}", seen.borrow());
    let run_path = b.path().await;
    let succeeded = wait_for(RUN_WAIT, || async {
        (count(b, "#wf-run-graph .wf-node[data-state=SUCCEEDED]").await == 4).then_some(())
    })
    .await;
    assert!(
        succeeded.is_some(),
        "every node should succeed; the page shows {:?}",
        c.find(Locator::Css("#wf-run-nodes"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap_or_default()
    );
    b.wait_text("#wf-run-state", "Succeeded").await;
    wait_count(b, "#wf-run-nodes tbody tr[data-state=SUCCEEDED]", 4).await;
    wait_count(b, "#wf-gantt rect.bar.ran", 4).await;
    // every node links its run's log
    wait_count(b, "#wf-run-nodes td.logs a[href^='/runs/']", 4).await;
    b.wait_text("#wf-run-params", "2026-12-01").await;
    assert_eq!(executor.calls_to("run").len(), 4);
    // nothing is offered that the API would refuse of a succeeded run
    for action in ["pause", "resume", "retry", "cancel"] {
        let hidden = c
            .find(Locator::Css(&format!("button[data-run-action={action}]")))
            .await
            .unwrap()
            .attr("hidden")
            .await
            .unwrap();
        assert!(hidden.is_some(), "{action} is offered for a succeeded run");
    }
    assert_accessible(b, "/workflow-runs/{id}").await;

    // the workflow's runs, and the list with its last run
    c.goto(&format!("{}/workflows/{id}/runs", app.base))
        .await
        .unwrap();
    b.wait_text("#wf-runs tbody", "Succeeded").await;
    assert_accessible(b, "/workflows/{id}/runs").await;
    c.goto(&format!("{}/workflows", app.base)).await.unwrap();
    b.wait_text(&format!("tr[data-workflow-id='{id}']"), "Succeeded")
        .await;
    assert_accessible(b, "/workflows").await;

    // a run whose first node fails: the page offers what the API allows for it, and counting
    // the failed node as succeeded lets the rest run
    executor.set(|be| be.result = Some(500));
    let res = app
        .api
        .request("POST", &format!("/api/v1/workflows/{id}/trigger"), None)
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    let failed_run = res.body["runId"].as_i64().unwrap();
    c.goto(&format!("{}/workflow-runs/{failed_run}", app.base))
        .await
        .unwrap();
    let ended = wait_for(RUN_WAIT, || async {
        (count(b, "#wf-run[data-state=FAILED]").await == 1).then_some(())
    })
    .await;
    assert!(ended.is_some(), "the run should fail");
    wait_shown(b, "#wf-run-graph .wf-node[data-key=a][data-state=FAILED]").await;
    wait_shown(b, "tr[data-key=a] button[data-mark-success]").await;
    wait_shown(b, "tr[data-key=a] button[data-retry-from]").await;
    wait_shown(b, "button[data-run-action=retry]:not([hidden])").await;
    assert_eq!(
        count(b, "button[data-run-action=cancel]:not([hidden])").await,
        0
    );
    assert_accessible(b, "/workflow-runs/{id} (failed)").await;
    full_shot(b, 1400, "workflow-run-failed-en-1400").await;
    executor.set(|be| be.result = Some(200));
    b.click("tr[data-key=a] button[data-mark-success]").await;
    c.accept_alert().await.unwrap();
    let recovered = wait_for(RUN_WAIT, || async {
        (count(b, "#wf-run-graph .wf-node[data-state=SUCCEEDED]").await == 4).then_some(())
    })
    .await;
    assert!(
        recovered.is_some(),
        "b, c and d should run after a is marked"
    );
    b.wait_text("#wf-run-state", "Succeeded").await;

    // while a run runs, another trigger is skipped (the default overlap policy): the dialog
    // says so; the running run is then cancelled from its page
    executor.set(|be| be.run_ms = 5_000);
    let res = app
        .api
        .request("POST", &format!("/api/v1/workflows/{id}/trigger"), None)
        .await;
    assert_eq!(res.body["state"], "RUNNING", "{}", res.body);
    let slow_run = res.body["runId"].as_i64().unwrap();
    c.goto(&format!("{}/workflows/{id}/runs", app.base))
        .await
        .unwrap();
    b.click("button[data-wf-trigger]").await;
    b.click("#wf-trigger-form button[type=submit]").await;
    b.wait_text("#wf-trigger-form .notice", "SKIPPED").await;
    wait_shown(b, "#wf-trigger-form .notice a[href^='/workflow-runs/']").await;
    assert_eq!(b.path().await, format!("/workflows/{id}/runs"));
    assert_accessible(b, "/workflows/{id}/runs (skipped trigger)").await;
    c.goto(&format!("{}/workflow-runs/{slow_run}", app.base))
        .await
        .unwrap();
    wait_shown(b, "#wf-run-graph .wf-node[data-key=a][data-state=RUNNING]").await;
    wait_shown(b, "button[data-run-action=pause]:not([hidden])").await;
    assert_eq!(
        count(b, "button[data-run-action=retry]:not([hidden])").await,
        0
    );
    full_shot(b, 1400, "workflow-run-running-en-1400").await;
    b.click("button[data-run-action=cancel]").await;
    c.accept_alert().await.unwrap();
    wait_shown(b, "#wf-run[data-state=CANCELLED]").await;
    wait_shown(b, "button[data-run-action=retry]:not([hidden])").await;
    assert_eq!(
        count(b, "button[data-run-action=cancel]:not([hidden])").await,
        0
    );
    executor.set(|be| be.run_ms = 300);

    // a scheduled workflow's schedule is started and stopped from the list
    let res = app
        .api
        .request(
            "PUT",
            &format!("/api/v1/workflows/{id}"),
            Some(json!({"scheduleType": "CRON", "scheduleConf": "0 0 3 * * ?"})),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    c.goto(&format!("{}/workflows", app.base)).await.unwrap();
    let row = format!("tr[data-workflow-id='{id}']");
    b.click(&format!("{row} button[data-call$='/start']")).await;
    b.wait_text(&row, "Scheduled").await;
    wait_shown(b, &format!("{row} time[data-ms]")).await;
    b.click(&format!("{row} button[data-call$='/stop']")).await;
    b.wait_text(&row, "Stopped").await;

    // every page at a desktop's and a phone's width, in English, then in Chinese
    let pages = [
        ("/workflows".to_string(), "workflows", "#workflows"),
        (
            format!("/workflows/{id}"),
            "workflow-editor",
            "#wf-graph svg",
        ),
        (
            run_path.clone(),
            "workflow-run",
            "#wf-run-nodes tbody tr[data-state=SUCCEEDED]",
        ),
        (format!("/workflows/{id}/runs"), "workflow-runs", "#wf-runs"),
    ];
    for (path, name, ready) in &pages {
        shoot(b, &app, path, &format!("{name}-en"), ready).await;
    }
    select(b, "#lang", "zh").await;
    b.wait_text("header nav", "工作流").await;
    for (path, name, ready) in &pages {
        shoot(b, &app, path, &format!("{name}-zh"), ready).await;
        assert_accessible(b, &format!("{path} (zh)")).await;
    }
    b.wait_text("#wf-runs tbody", "成功").await;
    select(b, "#lang", "en").await;
    b.wait_text("header nav", "Workflows").await;

    close(app, browser).await;
}

#[actix_web::test]
async fn a_user_sees_and_may_act_on_only_the_workflows_of_their_groups() {
    let Some(app) = TestApp::builder(Backend::Sqlite).start().await else {
        return;
    };
    let mine = app.group("mine-app").await;
    let theirs = app.group("theirs-app").await;
    let mut ids = Vec::new();
    for (group, name) in [(mine, "My flow"), (theirs, "Their secret flow")] {
        let job = app.job(group, &format!("{name} job")).await;
        let res = app
            .api
            .request(
                "POST",
                "/api/v1/workflows",
                Some(json!({
                    "name": name,
                    "jobGroup": group,
                    "nodes": [{"key": "only", "kind": "JOB", "jobId": job}],
                    "edges": [],
                })),
            )
            .await;
        assert_eq!(res.status, 201, "{}", res.body);
        ids.push(res.id());
    }
    let user = app.normal_user("flow-user", &[mine]).await;
    let list = user.page("/workflows").await;
    assert_eq!(list.status, 200);
    assert!(list.html.contains("My flow"));
    assert!(!list.html.contains("Their secret flow"));
    assert!(
        !list.html.contains("theirs-app"),
        "another group is not offered"
    );
    // asking for the other group's list shows nothing of it
    let filtered = user.page(&format!("/workflows?group={theirs}")).await;
    assert_eq!(filtered.status, 200);
    assert!(!filtered.html.contains("Their secret flow"));
    for path in [
        format!("/workflows/{}", ids[1]),
        format!("/workflows/{}/runs", ids[1]),
    ] {
        assert_eq!(user.page(&path).await.status, 403, "{path}");
    }
    for path in [
        format!("/workflows/{}", ids[0]),
        format!("/workflows/{}/runs", ids[0]),
        "/workflows/new".to_string(),
    ] {
        let page = user.page(&path).await;
        assert_eq!(page.status, 200, "{path}");
        assert!(!page.html.contains("theirs-app"), "{path}");
    }
    assert_eq!(user.page("/workflow-runs/999999").await.status, 404);
    app.finish().await;
}
