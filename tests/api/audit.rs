//! The audit log: every change through the API is recorded with who, when and what changed.

use actix_web::http::Method;
use serde_json::json;

backends!(app: changes_are_recorded_with_before_and_after, |app| {
    let group = app.group("audit-app").await;
    let job = app.job(group, "audited job").await;
    let mut body = app.api.get_job(job).await.body;
    body["jobDesc"] = json!("audited job v2");
    body["executorParam"] = json!("--fast");
    assert_eq!(app.api.update_job(job, body).await.status, 200);
    assert_eq!(app.api.start_job(job).await.status, 200);
    let token = app
        .api
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "audit-ci"})), &[])
        .await;
    let secret = token.body["token"].as_str().unwrap().to_string();
    assert_eq!(app.api.delete_job(job).await.status, 204);

    let res = app.api.call_with(Method::GET, "/api/v1/audit?limit=100", None, &[]).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let items = res.body["items"].as_array().unwrap();
    let actions: Vec<&str> = items.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        ["job.delete", "token.create", "job.start", "job.update", "job.create", "group.create"],
        "newest first"
    );
    assert!(items.iter().all(|e| e["username"] == "admin" && e["time"].as_i64().unwrap() > 0));
    let update = &items[3];
    assert_eq!(update["targetType"], "job");
    assert_eq!(update["targetId"], job);
    assert_eq!(
        update["changes"]["jobDesc"],
        json!({"before": "audited job", "after": "audited job v2"})
    );
    assert_eq!(update["changes"]["executorParam"]["after"], "--fast");
    assert!(update["changes"].get("author").is_none(), "unchanged fields are left out");
    assert_eq!(items[2]["changes"]["triggerStatus"], json!({"before": 0, "after": 1}));
    assert!(!res.body.to_string().contains(&secret), "a token's secret is never recorded");

    // filters
    let res = app
        .api
        .call_with(Method::GET, &format!("/api/v1/audit?targetType=job&targetId={job}"), None, &[])
        .await;
    assert_eq!(res.body["total"], 4);
    let res = app
        .api
        .call_with(Method::GET, "/api/v1/audit?action=group.create", None, &[])
        .await;
    assert_eq!(res.body["total"], 1);
    let res = app.api.call_with(Method::GET, "/api/v1/audit?limit=0", None, &[]).await;
    assert_eq!((res.status, res.field()), (400, "limit".to_string()));

    // only administrators read it
    let normal = app.normal_user("auditee", &[group]).await;
    assert_eq!(normal.call_with(Method::GET, "/api/v1/audit", None, &[]).await.status, 403);
    assert_eq!(normal.page("/audit").await.status, 403);
    let page = app.api.page("/audit").await;
    assert_eq!(page.status, 200);
    assert!(page.html.contains("job.update") && page.html.contains("audited job v2"));
});

backends!(app: the_audit_page_shows_scripts_by_line_and_instants_as_times, |app| {
    let group = app.group("audit-glue").await;
    let res = app
        .api
        .create_job(json!({"jobGroup": group, "jobDesc": "script", "glueType": "GLUE_SHELL",
            "glueSource": "#!/bin/bash\necho one\necho <b>two</b>\n"}))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let job = res.id();
    let saved = app
        .api
        .save_glue(job, json!({"glueSource": "#!/bin/bash\necho one\necho three\n",
            "glueRemark": "three"}))
        .await;
    assert_eq!(saved.status, 200, "{}", saved.body);
    let page = app.api.page(&format!("/audit?target=job&id={job}")).await;
    assert_eq!(page.status, 200);
    let html = &page.html;
    // the changed line, its neighbours as context, markup as text
    assert!(html.contains(r#"<pre class="line-diff" tabindex="0">"#), "{html}");
    assert!(html.contains(r#"<span class="l del">- echo &#60;b&#62;two&#60;/b&#62;</span>"#)
        || html.contains(r#"<span class="l del">- echo &lt;b&gt;two&lt;/b&gt;</span>"#), "{html}");
    assert!(html.contains(r#"<span class="l ins">+ echo three</span>"#), "{html}");
    assert!(html.contains(r#"<span class="l">  echo one</span>"#), "{html}");
    assert!(!html.contains("<b>two</b>"), "sources are never markup");
    // the job's creation time is a time the page shows in the reader's zone, not epoch ms
    let created = app.api.get_job(job).await.body["addTime"].as_i64().unwrap();
    assert!(html.contains(&format!(r#"<time data-ms="{created}">"#)), "{html}");
});
