//! Console pages over HTTP: redirects without a session, escaping, filters, permissions.

backends!(app: pages_need_a_session_and_forbid_outside_scripts, |app| {
    let anon = app.anonymous();
    let page = anon.page("/").await;
    assert_eq!((page.status, page.location.as_str()), (303, "/login"));
    let page = anon.page("/jobs?group=1&desc=a%20b").await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location, "/login?next=/jobs%3Fgroup%3D1%26desc%3Da%2520b");
    let login = anon.page("/login?next=//evil.example/").await;
    assert_eq!(login.status, 200);
    assert!(login.html.contains(r#"data-next="/""#), "an outside next is dropped");
    assert!(login.csp.contains("script-src 'self'"), "{}", login.csp);
    assert!(login.csp.contains("frame-ancestors 'none'"), "{}", login.csp);
    assert!(!login.html.contains("<script>"), "no inline script");
    for asset in [
        "console.css",
        "console.js",
        "editor.js",
        "editor-licences.txt",
        "favicon.svg",
    ] {
        assert_eq!(anon.page(&format!("/static/{asset}")).await.status, 200, "{asset}");
    }
    let escape = anon.page("/static/..%2FCargo.toml").await;
    assert!(escape.status == 404 && !escape.html.contains("[package]"), "{escape:?}");
    assert_eq!(anon.page("/static/nothing.js").await.status, 404);

    // a logged-in browser goes from the login page straight on
    assert_eq!(app.api.page("/login?next=/jobs").await.location, "/jobs");
    // the REST API still answers 401 in JSON, never a redirect
    assert_eq!(anon.me().await.status, 401);
});

backends!(app: the_dashboard_counts_jobs_and_executors, |app| {
    let group = app.group("dash-app").await;
    let running = app.job(group, "scheduled one").await;
    app.job(group, "stopped one").await;
    assert_eq!(app.api.start_job(running).await.status, 200);
    app.api.set_executor_token(Some(&app.token));
    let res = app.api.register_executor("dash-app", "http://127.0.0.1:1/").await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let page = app.api.page("/").await;
    assert_eq!(page.status, 200);
    assert!(page.html.contains(r#"id="jobs-scheduled">1<"#), "{}", page.html);
    assert!(page.html.contains(r#"id="jobs-stopped">1<"#));
    assert!(page.html.contains(r#"id="executors-online">1<"#));
    assert_eq!(page.html.matches("<g><title>").count(), 7, "a week of bars");
    let month = app.api.page("/?days=30").await;
    assert_eq!(month.html.matches("<g><title>").count(), 30);
    let odd = app.api.page("/?days=5000").await;
    assert_eq!(odd.html.matches("<g><title>").count(), 7, "unknown ranges fall back");
});

backends!(app: the_job_list_escapes_filters_and_pages, |app| {
    let group = app.group("list-app").await;
    let evil = app.job(group, "<script>alert(1)</script>").await;
    for i in 0..25 {
        app.job(group, &format!("batch job {i:02}")).await;
    }
    let page = app.api.page("/jobs").await;
    assert_eq!(page.status, 200);
    assert!(!page.html.contains("<script>alert(1)"), "descriptions are escaped");
    assert!(page.html.contains("&#60;script&#62;alert(1)") || page.html.contains("&lt;script&gt;"));
    assert!(page.html.contains(&format!(r#"data-job-id="{evil}""#)));
    assert_eq!(page.html.matches("data-job-id=").count(), 20, "a page holds 20");
    assert!(page.html.contains("page=2"), "a link to the next page");

    let second = app.api.page("/jobs?page=2").await;
    assert_eq!(second.html.matches("data-job-id=").count(), 6);
    let found = app.api.page("/jobs?desc=job+07").await;
    assert_eq!(found.html.matches("data-job-id=").count(), 1, "{}", found.html);
    let none = app.api.page("/jobs?status=1").await;
    assert_eq!(none.html.matches("data-job-id=").count(), 0);
    // unreadable filters are ignored, not an error page
    let odd = app.api.page("/jobs?group=x&status=7&page=-3&size=7").await;
    assert_eq!(odd.status, 200);
    assert_eq!(odd.html.matches("data-job-id=").count(), 20, "an odd size is the default");

    // numbered pages at a chosen size, which the filter form keeps
    let small = app.api.page(&format!("/jobs?group={group}&size=10&page=2")).await;
    assert_eq!(small.html.matches("data-job-id=").count(), 10);
    assert!(small.html.contains(r#"<span class="current" aria-current="page">2</span>"#));
    for page in [1, 3] {
        let link = format!(r#"href="/jobs?group={group}&#38;page={page}&#38;size=10""#);
        let plain = format!(r#"href="/jobs?group={group}&amp;page={page}&amp;size=10""#);
        assert!(small.html.contains(&link) || small.html.contains(&plain), "page {page}: {}", small.html);
    }
    assert!(small.html.contains(r#"<input type="hidden" name="size" value="10">"#));
    assert!(small.html.contains(r#"<span class="current" aria-current="true">10</span>"#));
    let last = app.api.page(&format!("/jobs?group={group}&size=10&page=3")).await;
    assert_eq!(last.html.matches("data-job-id=").count(), 6);
    assert!(!last.html.contains(r#"rel="next""#), "the last page has no next");
});

backends!(app: normal_users_see_only_their_groups_on_pages, |app| {
    let mine = app.group("page-mine").await;
    let theirs = app.group("page-theirs").await;
    app.job(mine, "visible job").await;
    app.job(theirs, "hidden job").await;
    let bob = app.normal_user("bob", &[mine]).await;
    let jobs = bob.page("/jobs").await;
    assert!(jobs.html.contains("visible job"));
    assert!(!jobs.html.contains("hidden job"));
    assert!(!jobs.html.contains("page-theirs"), "other groups are not offered");
    let filtered = bob.page(&format!("/jobs?group={theirs}")).await;
    assert!(!filtered.html.contains("hidden job"));
    let dash = bob.page("/").await;
    assert!(dash.html.contains(r#"id="jobs-stopped">1<"#), "{}", dash.html);
});

backends!(app: run_pages_escape_results_and_respect_groups, |app| {
    let mine = app.group("runs-mine").await;
    let theirs = app.group("runs-theirs").await;
    let my_job = app.job(mine, "my job").await;
    let their_job = app.job(theirs, "their job").await;
    let now = jobwheel::clock::now_ms();
    let mut ids = Vec::new();
    for (group, job) in [(mine, my_job), (theirs, their_job)] {
        let log = crate::kit::db::manual_log(group as i32, job as i32, now);
        let id = app.store.insert_log(&log).await.unwrap();
        app.store
            .complete_log(id, 500, Some("<script>alert(2)</script>"), now + 5)
            .await
            .unwrap();
        ids.push(id);
    }
    let list = app.api.page("/runs").await;
    assert_eq!(list.status, 200);
    assert_eq!(list.html.matches("data-run-id=").count(), 2);
    assert!(!list.html.contains("<script>alert(2)"), "results are escaped");
    let detail = app.api.page(&format!("/runs/{}", ids[0])).await;
    assert_eq!(detail.status, 200);
    assert!(!detail.html.contains("<script>alert(2)"));
    assert_eq!(app.api.page("/runs/99999999").await.status, 404);

    let carol = app.normal_user("carol", &[mine]).await;
    let list = carol.page("/runs").await;
    assert_eq!(list.html.matches("data-run-id=").count(), 1);
    assert_eq!(carol.page(&format!("/runs/{}", ids[1])).await.status, 403);
    assert_eq!(carol.page(&format!("/jobs/{their_job}")).await.status, 403);
});

backends!(app: a_failed_run_shows_its_cause_in_the_list_and_on_its_page, |app| {
    let group = app.group("cause-app").await;
    let job = app.job(group, "cause job").await;
    // a BEAN job whose handler the (fake) executor does not have
    let exec = crate::kit::FakeExecutor::start(&app.base, &app.token, crate::kit::Behaviour {
        run_code: 500,
        run_msg: Some("job handler [demoJobHandler] not found.".into()),
        ..crate::kit::Behaviour::default()
    });
    exec.register("cause-app").await;
    let res = app
        .api
        .trigger_job(job, Some(serde_json::json!({"executorParam": "day=<b>2026-12-01</b>"})))
        .await;
    let refused = res.body["logIds"][0].as_i64().expect("a run");
    // and one never sent: its group has no executor
    let empty = app.group("cause-empty").await;
    let lonely = app.job(empty, "lonely job").await;
    let res = app.api.trigger_job(lonely, None).await;
    let unsent = res.body["logIds"][0].as_i64().expect("a run");

    let list = app.api.page("/runs").await;
    assert!(
        list.html.contains("The executor refused the run"),
        "{}",
        list.html
    );
    assert!(list.html.contains("job handler [demoJobHandler] not found."));
    assert!(list.html.contains("No executor was called"));
    let page = app.api.page(&format!("/runs/{refused}")).await;
    assert!(page.html.contains(r#"id="run-cause""#), "{}", page.html);
    assert!(page.html.contains(&format!("<code>{}</code> (code 500)", exec.address)));
    assert!(
        page.html.contains(r#"<code id="run-param">day=&#60;b&#62;2026-12-01&#60;/b&#62;</code>"#),
        "the parameter, escaped"
    );
    assert!(page.html.contains(r#"id="rerun""#) && page.html.contains(r#"id="open-job""#));
    let page = app.api.page(&format!("/runs/{unsent}")).await;
    assert!(page.html.contains("registry address is empty"), "{}", page.html);
    // in Chinese too
    let zh = app.api.page_in(&format!("/runs/{refused}"), Some("zh-CN")).await;
    assert!(zh.html.contains("执行器拒绝了运行"), "{}", zh.html);
});

backends!(app: suspect_executors_are_marked_for_those_who_may_see_them, |app| {
    let mine = app.group("sus-mine").await;
    app.group("sus-theirs").await;
    app.api.set_executor_token(Some(&app.token));
    for (name, address) in [("sus-mine", "http://127.0.0.1:1/"), ("sus-theirs", "http://127.0.0.1:2/")] {
        let res = app.api.register_executor(name, address).await;
        assert_eq!(res.body["code"], 200, "{}", res.body);
    }
    // marked after their beat, as a failed call would
    let since = jobwheel::clock::now_ms() + 1;
    for address in ["http://127.0.0.1:1/", "http://127.0.0.1:2/"] {
        let marked = app
            .store
            .mark_suspect(address, since, "connection refused <b>", "node-x")
            .await
            .unwrap();
        assert!(marked);
    }
    let all = app.api.registry_suspects().await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert_eq!(all.body.as_array().map(Vec::len), Some(2), "{}", all.body);
    assert_eq!(all.body[0]["notedBy"], "node-x");
    let page = app.api.page("/executors").await;
    assert_eq!(page.html.matches("no answer since").count(), 2, "{}", page.html);
    assert!(!page.html.contains("refused <b>"), "reasons are escaped");

    let bob = app.normal_user("bob", &[mine]).await;
    let seen = bob.registry_suspects().await;
    assert_eq!(seen.status, 200, "{}", seen.body);
    let seen = seen.body.as_array().cloned().unwrap_or_default();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["address"], "http://127.0.0.1:1/");
    assert_eq!(seen[0]["appNames"], serde_json::json!(["sus-mine"]));
    let registry = bob.registry().await.body;
    let entries = registry.as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 1, "{registry}");
    assert_eq!(entries[0]["suspectSince"], since);
    assert_eq!(entries[0]["suspectReason"], "connection refused <b>");
    let page = bob.page("/executors").await;
    assert_eq!(page.html.matches("no answer since").count(), 1, "{}", page.html);
    // anonymous callers learn nothing
    assert_eq!(app.anonymous().registry_suspects().await.status, 401);
});

#[actix_web::test]
async fn pages_and_assets_are_compressed_and_versioned_assets_cached_for_a_year() {
    let Some(app) = crate::kit::TestApp::start(jobwheel::store::Backend::Sqlite).await else {
        return;
    };
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);
    let get = |path: String| {
        client
            .get(format!("{}{path}", app.base))
            .insert_header(("Accept-Encoding", "gzip"))
            .no_decompress()
    };
    let mut login = get("/login".into()).send().await.expect("login page");
    assert_eq!(
        login
            .headers()
            .get("content-encoding")
            .map(|v| v.as_bytes()),
        Some(&b"gzip"[..])
    );
    let body = login.body().await.expect("body");
    let plain = app.anonymous().page("/login").await.html;
    assert!(
        body.len() < plain.len(),
        "{} compressed vs {} plain",
        body.len(),
        plain.len()
    );
    let version = plain
        .split("console.css?v=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a versioned stylesheet")
        .to_string();
    let css = get(format!("/static/console.css?v={version}"))
        .send()
        .await
        .expect("css");
    assert_eq!(
        css.headers().get("content-encoding").map(|v| v.as_bytes()),
        Some(&b"gzip"[..])
    );
    assert_eq!(
        css.headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("public, max-age=31536000, immutable")
    );
    // an old or missing version is checked again each time
    let stale = get("/static/console.css?v=1".into())
        .send()
        .await
        .expect("css");
    assert_eq!(
        stale
            .headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-cache")
    );
    app.finish().await;
}

backends!(app: the_system_page_shows_actors_admins_database_and_executors, |app| {
    let group = app.group("sys-app").await;
    app.api.set_executor_token(Some(&app.token));
    let res = app.api.register_executor("sys-app", "http://127.0.0.1:7/").await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let page = app.api.page("/system").await;
    assert_eq!(page.status, 200, "{}", page.html);
    for part in [
        r#"id="system-actors""#,
        "data-actor=\"schedule\"",
        r#"id="system-nodes""#,
        "this one",
        r#"id="system-executors""#,
        "http://127.0.0.1:7/",
        "answering",
        app.db_url().split(':').next().unwrap_or_default(),
    ] {
        assert!(page.html.contains(part), "{part}: {}", page.html);
    }
    let zh = app.api.page_in("/system", Some("zh-CN")).await;
    assert!(zh.html.contains("集群中的调度中心"));
    // administrators only
    let user = app.normal_user("sys-user", &[group]).await;
    assert_eq!(user.page("/system").await.status, 403);
    assert!(!user.page("/").await.html.contains(r#"href="/system""#));
});

backends!(app: only_the_glue_page_lets_the_editor_style_itself_with_a_fresh_nonce, |app| {
    let group = app.group("nonce-app").await;
    let res = app
        .api
        .create_job(serde_json::json!({"jobGroup": group, "jobDesc": "s", "glueType": "GLUE_SHELL"}))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let path = format!("/jobs/{}/glue", res.id());
    let nonce_of = |page: &crate::kit::Page| -> String {
        let (_, rest) = page.csp.split_once("style-src 'self' 'nonce-").expect("a style nonce");
        rest.split('\'').next().unwrap_or_default().to_string()
    };
    let (one, two) = (app.api.page(&path).await, app.api.page(&path).await);
    assert_eq!(one.status, 200);
    let nonce = nonce_of(&one);
    assert_eq!(nonce.len(), 32, "{}", one.csp);
    assert_ne!(nonce, nonce_of(&two), "a nonce per answer");
    assert!(one.html.contains(&format!(r#"data-style-nonce="{nonce}""#)));
    assert!(one.csp.contains("script-src 'self';"), "scripts stay 'self' only: {}", one.csp);
    assert!(one.csp.contains("frame-ancestors 'none'"), "{}", one.csp);
    assert!(one.html.contains("/static/editor.js?v="), "the editor is loaded here");
    let jobs = app.api.page("/jobs").await;
    assert!(jobs.csp.contains("style-src 'self';"), "{}", jobs.csp);
    assert!(!jobs.csp.contains("nonce"), "{}", jobs.csp);
    assert!(!jobs.html.contains("editor.js"), "and only here");
});

backends!(app: error_pages_say_what_their_status_means_in_the_readers_language, |app| {
    let en = app.api.page_in("/jobs/999999", Some("en")).await;
    assert_eq!(en.status, 404);
    assert!(en.html.contains("<h1>404 · Not found</h1>"), "{}", en.html);
    let zh = app.api.page_in("/jobs/999999", Some("zh-CN,zh;q=0.9")).await;
    assert!(zh.html.contains("<h1>404 · 页面或数据不存在</h1>"), "{}", zh.html);
    let normal = app.normal_user("plain", &[]).await;
    let denied = normal.page_in("/users", Some("zh-CN")).await;
    assert_eq!(denied.status, 403);
    assert!(denied.html.contains("403 · 无权访问"), "{}", denied.html);
});
