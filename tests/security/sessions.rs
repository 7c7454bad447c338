//! Attacks through the console and the REST API's sessions: guessed passwords, writes from another
//! site, cookies behind https, parameters past their limit, and who reads the executors' token.

use std::time::{Duration, Instant};

use crate::kit::{TestApp, ADMIN_PASSWORD};
use actix_web::http::Method;
use jobwheel::store::Backend;
use serde_json::json;

use crate::attacks::assert_refused;

const LOGIN_WINDOW: Duration = Duration::from_secs(5);

/// An admin whose login window is short enough to wait out in a test.
async fn quick_login_window(backend: Backend) -> Option<TestApp> {
    TestApp::builder(backend)
        .settings(|s| s.login_limit.window = LOGIN_WINDOW)
        .start()
        .await
}

#[actix_web::test]
async fn the_sixth_wrong_password_in_the_window_is_refused_then_the_right_one_works() {
    let app = quick_login_window(Backend::Sqlite).await.expect("sqlite");
    let client = app.anonymous();
    let started = Instant::now();
    for _ in 0..5 {
        assert_eq!(client.login("admin", "wrong-password").await.status, 401);
    }
    let res = client
        .raw_with(
            Method::POST,
            "/api/v1/auth/login",
            Some("application/json"),
            serde_json::to_vec(&json!({"username": "admin", "password": "wrong-again"})).unwrap(),
            &[],
        )
        .await;
    assert_eq!(res.status, 429, "{}", res.body);
    assert!(
        res.error().contains("too many failed logins"),
        "{}",
        res.error()
    );
    // the right password too, while the window lasts
    let right = client.login("admin", ADMIN_PASSWORD).await;
    assert!(
        started.elapsed() < LOGIN_WINDOW,
        "the test was too slow to tell"
    );
    assert_eq!(right.status, 429, "{}", right.body);
    actix_web::rt::time::sleep(LOGIN_WINDOW).await;
    let res = client.login("admin", ADMIN_PASSWORD).await;
    assert_eq!(res.status, 200, "after the window: {}", res.body);
    app.finish().await;
}

#[actix_web::test]
async fn a_refused_login_says_when_to_retry() {
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let client = app.anonymous();
    for _ in 0..5 {
        client.login("nobody", "x").await;
    }
    let url = format!("{}/api/v1/auth/login", app.base);
    let res = awc::Client::default()
        .post(url)
        .send_json(&json!({"username": "nobody", "password": "x"}))
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 429);
    let retry: u64 = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry), "{retry}");
    app.finish().await;
}

backends!(app: writes_from_another_site_are_refused, |app| {
    let api = &app.api;
    let evil = [("Origin", "http://evil.example")];
    let body = json!({"appName": "csrf-app", "title": "t"});
    let res = api
        .call_with(Method::POST, "/api/v1/groups", Some(body.clone()), &evil)
        .await;
    assert_eq!(res.status, 403, "{}", res.body);
    assert!(res.error().contains("cross-site"), "{}", res.error());
    let res = api
        .call_with(
            Method::POST,
            "/api/v1/groups",
            Some(body.clone()),
            &[("Referer", "http://evil.example/page")],
        )
        .await;
    assert_eq!(res.status, 403);
    // a proxy's Basic auth, added by the browser itself, does not exempt the session cookie
    let basic = [("Origin", "http://evil.example"), ("Authorization", "Basic dXNlcjpwYXNz")];
    let res = api
        .call_with(Method::POST, "/api/v1/groups", Some(body.clone()), &basic)
        .await;
    assert_eq!(res.status, 403, "{}", res.body);
    assert_eq!(
        api.list_groups().await.body.as_array().map(Vec::len),
        Some(0)
    );
    // reading is fine from anywhere; writing from the admin's own pages too
    let res = api
        .call_with(Method::GET, "/api/v1/groups", None, &evil)
        .await;
    assert_eq!(res.status, 200);
    let own = app.base.clone();
    let res = api
        .call_with(
            Method::POST,
            "/api/v1/groups",
            Some(body),
            &[("Origin", own.as_str())],
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    // a login from another site is refused as well (it would plant the attacker's session)
    let res = app
        .anonymous()
        .call_with(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "admin", "password": ADMIN_PASSWORD})),
            &evil,
        )
        .await;
    assert_eq!(res.status, 403);
});

#[actix_web::test]
async fn the_session_cookie_is_secure_behind_https() {
    let public = url::Url::parse("https://jobs.example.com/").unwrap();
    let app = TestApp::builder(Backend::Sqlite)
        .settings(|s| s.public_url = Some(public))
        .start()
        .await
        .expect("sqlite");
    let res = app.anonymous().login("admin", ADMIN_PASSWORD).await;
    let cookie = res
        .set_cookie
        .iter()
        .find(|c| c.starts_with("jobwheel_session="))
        .expect("session cookie");
    assert!(
        cookie.contains("Secure") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    // the public origin may write
    let res = app
        .api
        .call_with(
            Method::POST,
            "/api/v1/groups",
            Some(json!({"appName": "pub-app", "title": "t"})),
            &[("Origin", "https://jobs.example.com")],
        )
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    app.finish().await;

    // without --public-url, a proxy's X-Forwarded-Proto: https does the same
    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let res = app
        .anonymous()
        .call_with(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "admin", "password": ADMIN_PASSWORD})),
            &[("X-Forwarded-Proto", "https")],
        )
        .await;
    assert!(
        res.set_cookie.iter().any(|c| c.contains("Secure")),
        "{:?}",
        res.set_cookie
    );
    app.finish().await;
}

backends!(app: manual_triggers_have_the_same_param_limit_as_jobs, |app| {
    let g = app.group("limit-app").await;
    let job = app.job(g, "limits").await;
    let res = app
        .api
        .trigger_job(job, Some(json!({"executorParam": "x".repeat(65_536)})))
        .await;
    assert_refused(&res, "executorParam");
    let res = app
        .api
        .update_job(job, json!({"executorParam": "x".repeat(65_536)}))
        .await;
    assert_refused(&res, "executorParam");
    let long = format!("http://127.0.0.1:1/{}", "a".repeat(300));
    let res = app
        .api
        .trigger_job(job, Some(json!({"addressList": [long]})))
        .await;
    assert_refused(&res, "addressList");
    assert_eq!(app.api.list_logs("").await.body["total"], 0);
});

/// Three million lines, read through the admin's REST API a page at a time: every line once,
/// no answer over 1 MB.

#[actix_web::test]
async fn only_administrators_read_the_access_token() {
    use jobwheel::model::{Role, User};
    use jobwheel::password::hash_password;

    let app = TestApp::start(Backend::Sqlite).await.expect("sqlite");
    let res = app
        .api
        .call_with(Method::GET, "/api/v1/system/access-token", None, &[])
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["accessToken"], app.token.as_str());
    app.store
        .insert_user(&User {
            id: 0,
            username: "bob".into(),
            password_hash: hash_password("bob-pass-1").unwrap(),
            role: Role::User,
            permission: vec![],
        })
        .await
        .unwrap();
    let bob = app.anonymous();
    assert_eq!(bob.login("bob", "bob-pass-1").await.status, 200);
    let res = bob
        .call_with(Method::GET, "/api/v1/system/access-token", None, &[])
        .await;
    assert_eq!(res.status, 403);
    let res = app
        .anonymous()
        .call_with(Method::GET, "/api/v1/system/access-token", None, &[])
        .await;
    assert_eq!(res.status, 401);
    app.finish().await;
}
