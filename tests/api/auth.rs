//! REST API v1 auth: login/logout with a database session cookie, bearer tokens, 401/403.

use crate::kit::ADMIN_PASSWORD;
use jobwheel::clock::now_ms;
use jobwheel::model::{ApiToken, Role, User};
use jobwheel::password::hash_password;
use jobwheel::web::api::auth::token_hash;
use serde_json::json;

backends!(app: login_session_and_logout, |app| {
    let anon = app.anonymous();
    let res = anon.me().await;
    assert_eq!(res.status, 401);
    assert!(!res.error().is_empty(), "{}", res.body);
    assert_eq!(anon.list_jobs("").await.status, 401);
    assert_eq!(anon.list_groups().await.status, 401);
    // unknown endpoints do not reveal anything before login either
    assert_eq!(
        anon.raw(
            actix_web::http::Method::GET,
            "/api/v1/nothing",
            None,
            vec![]
        )
        .await
        .status,
        401
    );

    // wrong password and unknown user answer the same generic 401
    let wrong = anon.login("admin", "nope-nope").await;
    assert_eq!(wrong.status, 401);
    let unknown = anon.login("nobody", "admin-pass-123").await;
    assert_eq!(unknown.status, 401);
    assert_eq!(wrong.error(), unknown.error());
    assert!(!wrong.error().contains("password is"), "{}", wrong.error());
    assert!(anon.session_cookie().is_none());
    assert_eq!(anon.login("", "").await.status, 400);

    let ok = anon.login("admin", ADMIN_PASSWORD).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.body["username"], "admin");
    assert_eq!(ok.body["role"], "ADMIN");
    let cookie_header = ok
        .set_cookie
        .iter()
        .find(|c| c.starts_with("jobwheel_session="))
        .expect("session cookie");
    assert!(cookie_header.contains("HttpOnly"), "{cookie_header}");
    assert!(cookie_header.contains("SameSite=Strict"), "{cookie_header}");
    assert!(
        !cookie_header.contains("Secure"),
        "plain http without --public-url: {cookie_header}"
    );
    assert!(cookie_header.contains("Path=/"), "{cookie_header}");
    let token = anon.session_cookie().expect("cookie kept");

    // the database holds the hash of the cookie, never the cookie itself
    assert!(app
        .store
        .get_session(&token_hash(&token), now_ms())
        .await
        .unwrap()
        .is_some());
    assert!(app
        .store
        .get_session(&token, now_ms())
        .await
        .unwrap()
        .is_none());

    let me = anon.me().await;
    assert_eq!(me.status, 200);
    assert_eq!(me.body["username"], "admin");
    assert_eq!(anon.list_jobs("").await.status, 200);

    // a forged cookie is refused
    let other = app.anonymous();
    other.set_session_cookie(Some("forged-value"));
    assert_eq!(other.me().await.status, 401);

    let out = anon.logout().await;
    assert_eq!(out.status, 204);
    assert!(anon.session_cookie().is_none(), "logout clears the cookie");
    assert_eq!(anon.me().await.status, 401);
    // the old cookie is dead on the server too
    anon.set_session_cookie(Some(&token));
    assert_eq!(anon.me().await.status, 401);
    assert!(app
        .store
        .get_session(&token_hash(&token), now_ms())
        .await
        .unwrap()
        .is_none());
});

backends!(app: bearer_tokens_authenticate, |app| {
    let admin = app.store.get_user_by_name("admin").await.unwrap().unwrap();
    let now = now_ms();
    let token = |name: &str, secret: &str, expire_time: i64| ApiToken {
        id: 0,
        name: name.into(),
        token_hash: token_hash(secret),
        user_id: admin.id,
        created_time: now,
        last_used_time: 0,
        expire_time,
    };
    app.store
        .insert_api_token(&token("ci", "tok-valid-123", 0))
        .await
        .unwrap();
    app.store
        .insert_api_token(&token("old", "tok-expired-123", now - 1000))
        .await
        .unwrap();

    let script = app.anonymous();
    script.set_bearer(Some("tok-valid-123"));
    let me = script.me().await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.body["username"], "admin");
    assert_eq!(script.list_groups().await.status, 200);
    let used = app.store.list_api_tokens(admin.id).await.unwrap();
    assert!(used.iter().any(|t| t.name == "ci" && t.last_used_time > 0));

    script.set_bearer(Some("tok-expired-123"));
    assert_eq!(script.me().await.status, 401);
    script.set_bearer(Some("tok-unknown"));
    assert_eq!(script.me().await.status, 401);
});

backends!(app: normal_users_only_touch_permitted_groups, |app| {
    let mine = app.group("group-mine").await;
    let theirs = app.group("group-theirs").await;
    let my_job = app.job(mine, "my job").await;
    let their_job = app.job(theirs, "their job").await;
    app.store
        .insert_user(&User {
            id: 0,
            username: "alice".into(),
            password_hash: hash_password("alice-pass-1").unwrap(),
            role: Role::User,
            permission: vec![mine as i32],
        })
        .await
        .unwrap();
    let alice = app.anonymous();
    let res = alice.login("alice", "alice-pass-1").await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.body["role"], "USER");

    let groups = alice.list_groups().await;
    assert_eq!(groups.status, 200);
    let ids: Vec<i64> = groups
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![mine]);
    assert_eq!(alice.get_group(mine).await.status, 200);
    assert_eq!(alice.get_group(theirs).await.status, 403);
    // groups are administered by admins only
    let res = alice
        .create_group(json!({"appName": "group-new", "title": "t"}))
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(alice.delete_group(mine).await.status, 403);

    let jobs = alice.list_jobs("").await;
    assert_eq!(jobs.status, 200);
    assert_eq!(jobs.body["total"], 1);
    assert_eq!(jobs.body["items"][0]["id"], my_job);
    assert_eq!(
        alice.list_jobs(&format!("jobGroup={theirs}")).await.status,
        403
    );
    assert_eq!(alice.get_job(my_job).await.status, 200);
    assert_eq!(alice.get_job(their_job).await.status, 403);
    assert_eq!(alice.start_job(their_job).await.status, 403);
    assert_eq!(alice.delete_job(their_job).await.status, 403);
    let res = alice
        .create_job(json!({"jobGroup": theirs, "jobDesc": "x", "executorHandler": "h"}))
        .await;
    assert_eq!(res.status, 403, "{}", res.body);
    // moving her job into a group she may not use is refused too
    let res = alice.update_job(my_job, json!({"jobGroup": theirs})).await;
    assert_eq!(res.status, 403, "{}", res.body);
    let res = alice
        .update_job(my_job, json!({"jobDesc": "renamed"}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);

    assert_eq!(alice.list_logs("").await.status, 200);
    assert_eq!(
        alice.list_logs(&format!("jobGroup={theirs}")).await.status,
        403
    );
    // clearing every group's logs is for admins
    assert_eq!(alice.clear_logs("keepLast=0").await.status, 403);
    assert_eq!(
        alice
            .clear_logs(&format!("jobGroup={mine}&keepLast=0"))
            .await
            .status,
        200
    );
    assert_eq!(alice.registry().await.status, 200);
});

backends!(app: changing_the_password_ends_the_other_sessions, |app| {
    let other = app.anonymous();
    assert_eq!(other.login("admin", ADMIN_PASSWORD).await.status, 200);

    // wrong current password, short new one, bad body: 4xx naming the field, nothing changed
    let res = app.api.change_password("not-it", "new-pass-456").await;
    assert_eq!((res.status, res.field().as_str()), (400, "currentPassword"), "{}", res.body);
    let res = app.api.change_password(ADMIN_PASSWORD, "short").await;
    assert_eq!((res.status, res.field().as_str()), (400, "newPassword"), "{}", res.body);
    assert!(res.error().contains("at least 8"), "{}", res.error());
    let res = app
        .api
        .call_with(
            actix_web::http::Method::POST,
            "/api/v1/auth/password",
            Some(json!({"newPassword": "new-pass-456"})),
            &[],
        )
        .await;
    assert_eq!(res.status, 400, "{}", res.body);
    assert_eq!(other.me().await.status, 200, "failed attempts end no session");

    let res = app.api.change_password(ADMIN_PASSWORD, "new-pass-456").await;
    assert_eq!(res.status, 204, "{}", res.body);
    assert_eq!(app.api.me().await.status, 200, "the changing session lives on");
    assert_eq!(other.me().await.status, 401, "every other session ended");
    let again = app.anonymous();
    assert_eq!(again.login("admin", ADMIN_PASSWORD).await.status, 401);
    assert_eq!(again.login("admin", "new-pass-456").await.status, 200);

    // an API token carries its owner's rights but cannot prove the password
    let user = app.store.get_user_by_name("admin").await.unwrap().unwrap();
    app.store
        .insert_api_token(&ApiToken {
            id: 0,
            name: "script".into(),
            token_hash: token_hash("tok-password-1"),
            user_id: user.id,
            created_time: now_ms(),
            last_used_time: 0,
            expire_time: 0,
        })
        .await
        .unwrap();
    let script = app.anonymous();
    script.set_bearer(Some("tok-password-1"));
    let res = script.change_password("new-pass-456", "other-pass-789").await;
    assert_eq!(res.status, 403, "{}", res.body);
});

backends!(app: idle_sessions_expire_and_use_keeps_them_alive, |app| {
    let cookie = app.api.session_cookie().expect("logged in");
    let hash = token_hash(&cookie);
    let now = now_ms();
    let session = app.store.get_session(&hash, now).await.unwrap().unwrap();
    assert!(
        session.expire_time <= now + 2 * 3600 * 1000 + 1000,
        "a new session expires when idle, not after 7 days"
    );
    // nearly idle for too long: a call moves the expiry on
    app.store.touch_session(&hash, now + 5_000).await.unwrap();
    assert_eq!(app.api.me().await.status, 200);
    let moved = app.store.get_session(&hash, now).await.unwrap().unwrap();
    assert!(moved.expire_time > now + 3600 * 1000, "{}", moved.expire_time - now);
    // idle past its expiry: gone
    app.store.touch_session(&hash, now - 1).await.unwrap();
    assert_eq!(app.api.me().await.status, 401);
});
