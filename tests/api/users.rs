//! `/api/v1/users` and `/api/v1/tokens`: administrators manage users; everyone their tokens.

use actix_web::http::Method;
use serde_json::json;

use crate::kit::ADMIN_PASSWORD;

backends!(app: administrators_manage_users_and_keep_one_admin, |app| {
    let group = app.group("users-app").await;
    let call = |method: Method, path: String, body: Option<serde_json::Value>| {
        let api = &app.api;
        async move { api.call_with(method, &path, body, &[]).await }
    };
    // bad input names its field; nothing is created
    for (body, field) in [
        (json!({"username": "ab", "password": "long-enough-1"}), "username"),
        (json!({"username": "dave", "password": "short"}), "password"),
        (json!({"username": "dave", "password": "long-enough-1", "role": "ROOT"}), "role"),
        (json!({"username": "dave", "password": "long-enough-1", "permission": [99999]}), "permission"),
    ] {
        let res = call(Method::POST, "/api/v1/users".into(), Some(body.clone())).await;
        assert_eq!((res.status, res.field()), (400, field.to_string()), "{body}: {}", res.body);
    }
    let res = call(
        Method::POST,
        "/api/v1/users".into(),
        Some(json!({"username": "dave", "password": "dave-pass-1", "role": "NORMAL", "permission": [group]})),
    )
    .await;
    assert_eq!(res.status, 201, "{}", res.body);
    assert_eq!((res.body["role"].as_str(), &res.body["permission"]), (Some("USER"), &json!([group])));
    assert!(res.body.get("passwordHash").is_none() && res.body.get("password").is_none());
    let dave = res.id();
    let dup = call(
        Method::POST,
        "/api/v1/users".into(),
        Some(json!({"username": "dave", "password": "dave-pass-1"})),
    )
    .await;
    assert_eq!(dup.status, 409);

    // a normal user cannot manage users
    let as_dave = app.anonymous();
    assert_eq!(as_dave.login("dave", "dave-pass-1").await.status, 200);
    let res = as_dave.call_with(Method::GET, "/api/v1/users", None, &[]).await;
    assert_eq!(res.status, 403);

    // promote, then demote; the last administrator cannot be demoted or deleted
    let res = call(Method::PUT, format!("/api/v1/users/{dave}"), Some(json!({"role": "ADMIN"}))).await;
    assert_eq!((res.status, res.body["role"].as_str()), (200, Some("ADMIN")), "{}", res.body);
    let res = call(Method::PUT, format!("/api/v1/users/{dave}"), Some(json!({"role": "USER", "permission": []}))).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let me = app.api.me().await.id();
    let res = call(Method::PUT, format!("/api/v1/users/{me}"), Some(json!({"role": "USER"}))).await;
    assert_eq!(res.status, 409, "{}", res.body);
    assert!(res.error().contains("last administrator"), "{}", res.error());
    let res = call(Method::DELETE, format!("/api/v1/users/{me}"), None).await;
    assert_eq!(res.status, 409);
    let res = call(Method::PUT, format!("/api/v1/users/{dave}"), Some(json!({"username": "eve"}))).await;
    assert_eq!((res.status, res.field()), (400, "username".to_string()));

    // a reset password ends the user's sessions
    let res = call(Method::POST, format!("/api/v1/users/{dave}/password"), Some(json!({"password": "x"}))).await;
    assert_eq!((res.status, res.field()), (400, "password".to_string()));
    let res = call(Method::POST, format!("/api/v1/users/{dave}/password"), Some(json!({"password": "dave-new-pass"}))).await;
    assert_eq!(res.status, 204, "{}", res.body);
    assert_eq!(as_dave.me().await.status, 401);
    assert_eq!(as_dave.login("dave", "dave-new-pass").await.status, 200);

    // deleting a user ends its sessions and tokens
    let res = call(Method::DELETE, format!("/api/v1/users/{dave}"), None).await;
    assert_eq!(res.status, 204);
    assert_eq!(as_dave.me().await.status, 401);
    assert_eq!(call(Method::GET, format!("/api/v1/users/{dave}"), None).await.status, 404);
    assert_eq!(app.anonymous().login("admin", ADMIN_PASSWORD).await.status, 200);
});

backends!(app: tokens_are_shown_once_act_as_their_owner_and_can_be_revoked, |app| {
    let group = app.group("tokens-app").await;
    let other = app.group("tokens-other").await;
    let res = app
        .api
        .call_with(
            Method::POST,
            "/api/v1/users",
            Some(json!({"username": "frank", "password": "frank-pass-1", "permission": [group]})),
            &[],
        )
        .await;
    assert_eq!(res.status, 201);
    let frank = app.anonymous();
    assert_eq!(frank.login("frank", "frank-pass-1").await.status, 200);

    for (body, field) in [
        (json!({"name": ""}), "name"),
        (json!({"name": "x", "expiresInDays": -1}), "expiresInDays"),
    ] {
        let res = frank.call_with(Method::POST, "/api/v1/tokens", Some(body), &[]).await;
        assert_eq!((res.status, res.field()), (400, field.to_string()), "{}", res.body);
    }
    let res = frank
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "deploy", "expiresInDays": 30})), &[])
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let secret = res.body["token"].as_str().unwrap().to_string();
    assert!(secret.starts_with("jw_") && secret.len() > 40, "{secret}");
    let id = res.id();

    // the secret is never listed, and is stored only as a hash
    let listed = frank.call_with(Method::GET, "/api/v1/tokens", None, &[]).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert!(!listed.body.to_string().contains(&secret));
    assert_eq!(listed.body[0]["lastUsedTime"], 0);

    // the token acts as frank: his group yes, another no, users never
    let script = app.anonymous();
    script.set_bearer(Some(&secret));
    assert_eq!(script.me().await.body["username"], "frank");
    let jobs = script.list_jobs(&format!("?jobGroup={group}")).await;
    assert_eq!(jobs.status, 200);
    assert_eq!(script.get_group(other).await.status, 403);
    assert_eq!(script.call_with(Method::GET, "/api/v1/users", None, &[]).await.status, 403);
    let listed = frank.call_with(Method::GET, "/api/v1/tokens", None, &[]).await;
    assert!(listed.body[0]["lastUsedTime"].as_i64().unwrap() > 0, "last use is recorded");

    // the admin sees everyone's tokens; frank cannot revoke the admin's
    let admin_token = app
        .api
        .call_with(Method::POST, "/api/v1/tokens", Some(json!({"name": "admin-ci"})), &[])
        .await
        .id();
    let all = app.api.call_with(Method::GET, "/api/v1/tokens", None, &[]).await;
    assert_eq!(all.body.as_array().unwrap().len(), 2);
    let res = frank
        .call_with(Method::DELETE, &format!("/api/v1/tokens/{admin_token}"), None, &[])
        .await;
    assert_eq!(res.status, 404);

    // revoked: the token stops working at once
    let res = frank.call_with(Method::DELETE, &format!("/api/v1/tokens/{id}"), None, &[]).await;
    assert_eq!(res.status, 204);
    assert_eq!(script.me().await.status, 401);
});
