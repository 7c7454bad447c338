//! Input that once got further than it should: a login redirect to another site, control
//! characters answered with 500, executor addresses that are not URLs, address lists one
//! database could not hold, weak group tokens, JSON sent as text, alarm webhooks aimed at the
//! admin's own network, and logins that locked the administrator out.

use std::net::IpAddr;
use std::time::Duration;

use actix_web::http::Method;
use jobwheel::store::Backend;
use serde_json::json;

use crate::kit::TestApp;

#[actix_web::test]
async fn only_a_local_path_follows_a_login() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let escapes = [
        "%2F%09%2Fevil.example",
        "%2F%5Cevil.example",
        "%2F%2Fevil.example",
        "https%3A%2F%2Fevil.example",
        "%2F%0D%0ASet-Cookie%3A%20x%3D1",
        "%2F%01",
        "%2F%7F",
        "%2F%250a",
        "%2F%252F%2Fevil.example",
    ];
    // logged in: straight on, but only to a path here; no 500 for control characters
    for next in escapes {
        let page = app.api.page(&format!("/login?next={next}")).await;
        assert_eq!((page.status, page.location.as_str()), (303, "/"), "{next}");
    }
    let page = app.api.page("/login?next=%2Fjobs%3Fgroup%3D1").await;
    assert_eq!(
        (page.status, page.location.as_str()),
        (303, "/jobs?group=1")
    );
    // logged out: the form's script is handed "/" as well
    let visitor = app.anonymous();
    for next in escapes {
        let page = visitor.page(&format!("/login?next={next}")).await;
        assert_eq!(page.status, 200, "{next}");
        assert!(
            page.html.contains("data-next=\"/\""),
            "{next}: {}",
            page.html
        );
    }
    app.finish().await;
}

backends!(app: the_registry_takes_only_http_addresses, |app| {
    app.group("reg-values").await;
    for value in [
        "http://127.0.0.1:9/\r\nX-Injected: 1",
        "<img src=x onerror=alert(1)>",
        "javascript:alert(1)",
        "127.0.0.1:9999",
        "http://exa mple/",
        &format!("http://127.0.0.1/{}", "a".repeat(250)),
    ] {
        let res = app
            .api
            .register_executor("reg-values", value)
            .await;
        assert_eq!(res.body["code"], 500, "{value:?}: {}", res.body);
        assert!(
            res.body["msg"].as_str().unwrap_or_default().contains("registryValue"),
            "{value:?}: {}",
            res.body
        );
    }
    let online = app.api.registry().await.body;
    assert_eq!(online, json!([]), "nothing registered");
    let res = app.api.register_executor("reg-values", "http://127.0.0.1:9/").await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
});

backends!(app: one_address_list_limit_on_every_database, |app| {
    // 300 addresses of about 250 characters: more than MySQL's TEXT once held
    let long: Vec<String> = (0..300)
        .map(|i| format!("http://127.0.0.1:1/{i:03}/{}", "p".repeat(230)))
        .collect();
    let res = app
        .api
        .create_group(json!({"appName": "many-addresses", "title": "many",
            "addressType": "MANUAL", "addressList": long}))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let group = res.id();
    let stored = app.api.get_group(group).await.body;
    assert_eq!(stored["addressList"].as_array().map(Vec::len), Some(300));
    // a run of the group stores its trigger message on every backend, the list summed up
    let job = app.job(group, "many").await;
    let res = app.api.trigger_job(job, None).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let run = app.api.get_log(res.body["logIds"][0].as_i64().unwrap()).await.body;
    assert!(run["triggerMsg"].as_str().unwrap_or_default().contains("(300 in all)"), "{run}");

    let too_many: Vec<String> = (0..513).map(|i| format!("http://10.0.{}.{}:9999/", i / 250, i % 250)).collect();
    let res = app
        .api
        .update_group(group, json!({"addressType": "MANUAL", "addressList": too_many}))
        .await;
    assert_eq!((res.status, res.field()), (400, "addressList".to_string()), "{}", res.body);
    assert!(res.error().contains("at most 512"), "{}", res.error());
    assert_eq!(app.api.get_group(group).await.body["addressList"], stored["addressList"]);
});

#[actix_web::test]
async fn a_group_token_is_at_least_sixteen_characters() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    for token in ["short", "fifteen-chars-x"] {
        let res = app
            .api
            .create_group(json!({"appName": "weak-token", "title": "t", "accessToken": token}))
            .await;
        assert_eq!(
            (res.status, res.field()),
            (400, "accessToken".to_string()),
            "{token}"
        );
        assert!(res.error().contains("at least 16"), "{}", res.error());
    }
    let res = app
        .api
        .create_group(
            json!({"appName": "weak-token", "title": "t", "accessToken": "sixteen-chars-xy"}),
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    app.finish().await;
}

#[actix_web::test]
async fn a_trigger_body_sent_as_text_is_refused_like_any_other() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let group = app.group("plain-text").await;
    let job = app.job(group, "typed").await;
    let body = br#"{"executorParam": "from a form"}"#.to_vec();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let res = app
            .api
            .raw(
                Method::POST,
                &format!("/api/v1/jobs/{job}/trigger"),
                content_type,
                body.clone(),
            )
            .await;
        assert_eq!(res.status, 400, "{content_type:?}: {}", res.body);
        assert!(res.error().contains("Content type"), "{}", res.error());
        // as every other endpoint answers it
        let other = app
            .api
            .raw(
                Method::POST,
                "/api/v1/groups",
                content_type,
                br#"{"appName":"x"}"#.to_vec(),
            )
            .await;
        assert_eq!(other.status, 400);
    }
    assert_eq!(
        app.api.list_logs("").await.body["total"],
        0,
        "nothing triggered"
    );
    let res = app
        .api
        .raw(
            Method::POST,
            &format!("/api/v1/jobs/{job}/trigger"),
            Some("application/json"),
            body,
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    app.finish().await;
}

fn webhook_job(group: i64, webhook: &str) -> serde_json::Value {
    json!({"jobGroup": group, "jobDesc": "hooked", "scheduleType": "NONE",
        "executorHandler": "demoJobHandler", "alarmWebhook": webhook})
}

#[actix_web::test]
async fn an_alarm_webhook_may_not_aim_at_the_admins_network() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let group = app.group("hooks").await;
    for url in [
        "http://127.0.0.1:8080/api/v1/users",
        "http://localhost:5432/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/hook",
        "http://[::1]/hook",
    ] {
        let res = app.api.create_job(webhook_job(group, url)).await;
        assert_eq!(
            (res.status, res.field()),
            (400, "alarmWebhook".to_string()),
            "{url}: {}",
            res.body
        );
        assert!(
            res.error().contains("--alarm-webhook-allow-private"),
            "{}",
            res.error()
        );
    }
    let res = app
        .api
        .create_job(webhook_job(group, "https://93.184.216.34/hook"))
        .await;
    assert_eq!(res.status, 201, "a public address: {}", res.body);
    app.finish().await;

    let open = TestApp::builder(Backend::Sqlite)
        .settings(|s| s.alarm_webhook_allow_private = true)
        .start()
        .await
        .expect("sqlite");
    let group = open.group("hooks").await;
    let res = open
        .api
        .create_job(webhook_job(group, "http://127.0.0.1:9/hook"))
        .await;
    assert_eq!(res.status, 201, "allowed by the setting: {}", res.body);
    open.finish().await;
}

/// A login from `from` (a loopback address of this machine) to the admin at `base`.
async fn login_from(from: IpAddr, base: &str, password: &str) -> u16 {
    let client = awc::Client::builder()
        .connector(awc::Connector::new().local_address(from))
        .timeout(Duration::from_secs(30))
        .finish();
    client
        .post(format!("{base}/api/v1/auth/login"))
        .send_json(&json!({"username": "admin", "password": password}))
        .await
        .expect("login call")
        .status()
        .as_u16()
}

#[actix_web::test]
async fn wrong_passwords_from_one_address_do_not_keep_the_administrator_out() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let attacker: IpAddr = "127.0.0.2".parse().unwrap();
    for _ in 0..5 {
        assert_eq!(login_from(attacker, &app.base, "guess").await, 401);
    }
    assert_eq!(login_from(attacker, &app.base, "guess").await, 429);
    assert_eq!(
        login_from(attacker, &app.base, crate::kit::ADMIN_PASSWORD).await,
        429,
        "that address waits, even with the right password"
    );
    // the administrator, elsewhere, is not locked out
    let admin: IpAddr = "127.0.0.1".parse().unwrap();
    assert_eq!(
        login_from(admin, &app.base, crate::kit::ADMIN_PASSWORD).await,
        200
    );
    app.finish().await;
}
