//! REST API v1 groups: CRUD, validation, 409s, live addresses of AUTO groups.

use actix_web::http::Method;
use serde_json::{json, Value};

backends!(app: group_crud_and_validation, |app| {
    let api = &app.api;
    let res = api
        .create_group(json!({
            "appName": "billing-app",
            "title": "Billing",
            "addressType": "MANUAL",
            "addressList": ["http://10.0.0.2:9999/", "http://10.0.0.1:9999/"],
            "accessToken": "group-secret-0123",
        }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let id = res.id();
    assert_eq!(res.body["appName"], "billing-app");
    assert_eq!(res.body["addressType"], "MANUAL");
    assert_eq!(
        res.body["addressList"],
        json!(["http://10.0.0.2:9999/", "http://10.0.0.1:9999/"])
    );
    // the token is stored but never shown
    assert_eq!(res.body["accessTokenSet"], true);
    assert!(!res.body.to_string().contains("group-secret-0123"));
    let stored = app.store.get_group(id as i32).await.unwrap().unwrap();
    assert_eq!(stored.access_token.as_deref(), Some("group-secret-0123"));

    let got = api.get_group(id).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body["title"], "Billing");
    let list = api.list_groups().await;
    assert_eq!(list.status, 200);
    assert_eq!(list.body.as_array().unwrap().len(), 1);

    // validation: 400 naming the field
    let cases = [
        (json!({"appName": "abc", "title": "t"}), "appName"),
        (json!({"appName": "bad name!", "title": "t"}), "appName"),
        (json!({"title": "t"}), "appName"),
        (json!({"appName": "good-app", "title": " "}), "title"),
        (
            json!({"appName": "good-app", "title": "t", "addressType": "SOMETIMES"}),
            "addressType",
        ),
        (
            json!({"appName": "good-app", "title": "t", "addressType": "MANUAL"}),
            "addressList",
        ),
        (
            json!({"appName": "good-app", "title": "t", "addressType": "MANUAL", "addressList": ["10.0.0.1:9999"]}),
            "addressList",
        ),
    ];
    for (body, field) in cases {
        let res = api.create_group(body.clone()).await;
        assert_eq!(res.status, 400, "{body} -> {}", res.body);
        assert_eq!(res.field(), field, "{body} -> {}", res.body);
    }
    let res = api
        .create_group(json!({"appName": "good-app", "title": "t", "addressType": "SOMETIMES"}))
        .await;
    assert!(
        res.error().contains("allowed: AUTO, MANUAL"),
        "{}",
        res.error()
    );
    // wrong JSON types answer serde's message
    let res = api.create_group(json!({"appName": 5, "title": "t"})).await;
    assert_eq!(res.status, 400);
    assert!(res.error().contains("invalid type"), "{}", res.error());

    // duplicate app name: 409, on create and on rename
    let res = api
        .create_group(json!({"appName": "billing-app", "title": "again"}))
        .await;
    assert_eq!(res.status, 409, "{}", res.body);
    let other = app.group("other-app").await;
    // an app name is fixed once its group exists
    let res = api
        .update_group(other, json!({"appName": "billing-app"}))
        .await;
    assert_eq!((res.status, res.field()), (400, "appName".to_string()), "{}", res.body);
    let res = api
        .update_group(other, json!({"appName": "other-app", "title": "same name"}))
        .await;
    assert_eq!(res.status, 200, "the same name is no change: {}", res.body);

    // update keeps omitted fields; "" clears the token
    let res = api
        .update_group(id, json!({"title": "Billing v2", "accessToken": ""}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["title"], "Billing v2");
    assert_eq!(res.body["addressType"], "MANUAL");
    assert_eq!(res.body["accessTokenSet"], false);
    assert_eq!(
        (&res.body["maxConcurrentInstances"], &res.body["instanceOverflow"]),
        (&json!(0), &json!("SKIP")),
        "no group cap unless set"
    );
    let res = api
        .update_group(id, json!({"maxConcurrentInstances": 4, "instanceOverflow": "REPLACE"}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(
        (&res.body["maxConcurrentInstances"], &res.body["instanceOverflow"]),
        (&json!(4), &json!("REPLACE"))
    );
    for (body, field) in [
        (json!({"maxConcurrentInstances": -1}), "maxConcurrentInstances"),
        (json!({"maxConcurrentInstances": 100_001}), "maxConcurrentInstances"),
        (json!({"instanceOverflow": "LATER"}), "instanceOverflow"),
    ] {
        let res = api.update_group(id, body.clone()).await;
        assert_eq!((res.status, res.field()), (400, field.to_string()), "{body}: {}", res.body);
    }
    assert_eq!(
        api.get_group(id).await.body["maxConcurrentInstances"],
        4,
        "a refused update changes nothing"
    );
    assert_eq!(
        api.update_group(9999, json!({"title": "x"})).await.status,
        404
    );
    assert_eq!(api.get_group(9999).await.status, 404);

    // a group used by jobs cannot be deleted; the message names the count
    app.job(id, "one").await;
    app.job(id, "two").await;
    let res = api.delete_group(id).await;
    assert_eq!(res.status, 409);
    assert!(res.error().contains("2 job"), "{}", res.error());
    assert_eq!(api.delete_group(other).await.status, 204);
    assert_eq!(api.get_group(other).await.status, 404);
    assert_eq!(api.delete_group(other).await.status, 404);
});

backends!(app: auto_groups_show_live_executors, |app| {
    let api = &app.api;
    let id = app.group("live-app").await;
    assert_eq!(api.get_group(id).await.body["addressList"], json!([]));
    let res = api
        .register_executor("live-app", "http://127.0.0.1:9/")
        .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.body["code"], 200, "{}", res.body);
    api.register_executor("live-app", "http://127.0.0.1:8/")
        .await;
    api.register_executor("someone-else", "http://127.0.0.1:7/")
        .await;
    let res = api.get_group(id).await;
    assert_eq!(
        res.body["addressList"],
        json!(["http://127.0.0.1:8/", "http://127.0.0.1:9/"])
    );
    let online = api.registry().await;
    assert_eq!(online.status, 200);
    let entries = online.body.as_array().unwrap();
    assert_eq!(entries.len(), 3, "{}", online.body);
    assert!(entries.iter().any(|e| e["appName"] == "someone-else"
        && e["address"] == "http://127.0.0.1:7/"
        && e["updateTime"].as_i64().unwrap_or_default() > 0));
});

backends!(app: an_executors_load_shows_in_the_registry_and_the_console, |app| {
    let api = &app.api;
    let group = app.group("loaded-app").await;
    let other = app.group("quiet-app").await;
    let job = app.job(group, "queued behind a slow run").await;
    api.set_executor_token(Some(&app.token));
    let beat = |app_name: &str, address: &str, load: Value| {
        json!({"registryGroup": "EXECUTOR", "registryKey": app_name, "registryValue": address,
               "load": load})
    };
    let load = json!({"running": 4, "queued": 16, "limit": 4,
        "jobs": [{"jobId": job, "queued": 3, "oldestQueuedMs": 12_500}]});
    let res = api
        .post_as_executor("/api/registry", beat("loaded-app", "http://127.0.0.1:9/", load))
        .await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    // a malformed load never costs the registration
    let res = api
        .post_as_executor("/api/registry", beat("quiet-app", "http://127.0.0.1:8/", json!("busy")))
        .await;
    assert_eq!(res.body["code"], 200, "{}", res.body);

    let online = api.registry().await;
    let entry = |address: &str| {
        online.body.as_array().unwrap().iter().find(|e| e["address"] == address).cloned()
    };
    let loaded = entry("http://127.0.0.1:9/").expect("listed");
    assert_eq!(
        loaded["load"],
        json!({"running": 4, "queued": 16, "limit": 4,
               "jobs": [{"jobId": job, "queued": 3, "oldestQueuedSeconds": 12.5}]}),
        "{}", online.body
    );
    assert_eq!(entry("http://127.0.0.1:8/").expect("listed")["load"], Value::Null);

    // a user of the other group sees neither the executor nor its queues
    let outsider = app.normal_user("outsider", &[other]).await;
    let seen = outsider.registry().await;
    assert!(!seen.body.to_string().contains("127.0.0.1:9"), "{}", seen.body);

    let page = api.page("/executors").await;
    assert!(page.html.contains("running 4 / 4 · queued 16"), "{}", page.html);
    assert!(!page.html.contains(r#"class="labels""#), "no labels reported");
    let page = api.page(&format!("/jobs/{job}")).await;
    assert!(page.html.contains(r#"id="job-queues""#), "{}", page.html);
    assert!(
        page.html.contains("<code>http://127.0.0.1:9/</code>: queued 3 · oldest waited 12 s"),
        "{}", page.html
    );

    // the next beat without a load (a Java executor's) clears it
    api.register_executor("loaded-app", "http://127.0.0.1:9/").await;
    let online = api.registry().await;
    let again = online.body.as_array().unwrap().iter()
        .find(|e| e["address"] == "http://127.0.0.1:9/").cloned().expect("listed");
    assert_eq!(again["load"], Value::Null);
    assert!(!api.page(&format!("/jobs/{job}")).await.html.contains(r#"id="job-queues""#));
});

backends!(app: administrators_cordon_and_uncordon_executors, |app| {
    let api = &app.api;
    let group = app.group("drained-app").await;
    api.set_executor_token(Some(&app.token));
    api.register_executor("drained-app", "http://127.0.0.1:9/").await;

    let res = api
        .cordon(json!({"address": "http://127.0.0.1:9", "reason": "kernel upgrade"}))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    assert_eq!(
        (&res.body["address"], &res.body["reason"], &res.body["byUser"]),
        (&json!("http://127.0.0.1:9"), &json!("kernel upgrade"), &json!("admin"))
    );
    // the same executor spelled otherwise: the first cordon stands
    let again = api.cordon(json!({"address": "HTTP://127.0.0.1:9/"})).await;
    assert_eq!((again.status, &again.body["reason"]), (200, &json!("kernel upgrade")));
    assert_eq!(api.cordons().await.body.as_array().map(Vec::len), Some(1));
    let online = api.registry().await;
    assert!(online.body[0]["cordonedSince"].as_i64().is_some(), "{}", online.body);
    let page = api.page("/executors").await;
    assert!(page.html.contains("draining since"), "{}", page.html);

    // bad input names the field
    for (body, field) in [
        (json!({"address": "ftp://h/"}), "address"),
        (json!({"address": ""}), "address"),
        (json!({"address": "http://h/", "reason": "x".repeat(513)}), "reason"),
        (json!({"address": "http://h/", "why": "x"}), ""),
    ] {
        let res = api.cordon(body.clone()).await;
        assert_eq!(res.status, 400, "{body}: {}", res.body);
        if !field.is_empty() {
            assert_eq!(res.field(), field, "{body}: {}", res.body);
        }
    }

    // a normal user, even of the group, may neither see nor change cordons
    let user = app.normal_user("drainer", &[group]).await;
    assert_eq!(user.cordons().await.status, 403);
    assert_eq!(user.cordon(json!({"address": "http://127.0.0.1:8/"})).await.status, 403);
    assert_eq!(user.uncordon("http://127.0.0.1:9").await.status, 403);

    assert_eq!(api.uncordon("http://127.0.0.1:9/").await.status, 204);
    let res = api.uncordon("http://127.0.0.1:9/").await;
    assert_eq!((res.status, res.field()), (404, "address".to_string()), "{}", res.body);
    assert_eq!(api.cordons().await.body, json!([]));
    let audit = api
        .call_with(Method::GET, "/api/v1/audit?targetType=executor", None, &[])
        .await;
    let actions: Vec<String> = audit.body["items"]
        .as_array()
        .map(|items| items.iter().map(|i| i["action"].as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default();
    assert_eq!(actions, ["executor.uncordon", "executor.cordon"], "{}", audit.body);
});
