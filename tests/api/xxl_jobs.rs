//! XXL-JOB 3.5's job API (`/api/addJob` …): XXL-JOB's bodies and envelope, our API tokens.

use actix_web::http::Method;
use jobwheel::clock::now_ms;
use jobwheel::model::{ApiToken, Role, User};
use jobwheel::password::hash_password;
use jobwheel::web::api::auth::token_hash;
use serde_json::{json, Value};

use crate::kit::{Api, TestApp};

/// A token for `user_id` with the secret `secret`.
async fn token(app: &TestApp, user_id: i32, secret: &str) {
    app.store
        .insert_api_token(&ApiToken {
            id: 0,
            name: secret.into(),
            token_hash: token_hash(secret),
            user_id,
            created_time: now_ms(),
            last_used_time: 0,
            expire_time: 0,
        })
        .await
        .unwrap();
}

async fn xxl(client: &Api, prefix: &str, op: &str, token: &str, body: Value) -> Value {
    let res = client
        .call_with(
            Method::POST,
            &format!("{prefix}/api/{op}"),
            Some(body),
            &[("XXL-JOB-ACCESS-TOKEN", token)],
        )
        .await;
    assert_eq!(res.status, 200, "XXL-JOB answers HTTP 200: {}", res.body);
    res.body
}

backends!(app: xxl_job_tools_manage_jobs_with_an_api_token, |app| {
    let group = app.group("xxl-tools").await;
    let other = app.group("xxl-other").await;
    let admin = app.store.get_user_by_name("admin").await.unwrap().unwrap();
    token(app, admin.id, "jw_admin_tool_token").await;
    let res = app.api.register_executor("xxl-tools", "http://127.0.0.1:1/").await;
    assert_eq!(res.body["code"], 200, "{}", res.body);
    let client = app.anonymous();
    let add = json!({
        "jobGroup": group, "name": "from a tool", "author": "ci", "alarmEmail": "",
        "scheduleType": "CRON", "scheduleConf": "0 0 4 * * ?", "misfireStrategy": "DO_NOTHING",
        "executorRouteStrategy": "FIRST", "executorHandler": "demoJobHandler", "executorParam": "p",
        "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 0,
        "executorFailRetryCount": 1, "glueType": "BEAN", "glueSource": "", "glueRemark": "",
        "childJobId": "5"
    });
    for prefix in ["", "/xxl-job-admin"] {
        let res = xxl(&client, prefix, "addJob", "jw_admin_tool_token", add.clone()).await;
        assert_eq!(res["code"], 200, "{res}");
        let id: i64 = res["data"].as_str().expect("the id, as a string").parse().unwrap();
        assert_eq!(res["content"], res["data"]);
        let job = app.api.get_job(id).await.body;
        assert_eq!((job["jobDesc"].as_str(), job["executorParam"].as_str()), (Some("from a tool"), Some("p")));
        assert_eq!(job["childJobIds"], json!([]), "no child jobs through this API");

        let res = xxl(&client, prefix, "updateJob", "jw_admin_tool_token",
            json!({"id": id, "name": "renamed", "jobGroup": other, "scheduleConf": "0 0 5 * * ?"})).await;
        assert_eq!(res["code"], 200, "{res}");
        let job = app.api.get_job(id).await.body;
        assert_eq!((job["jobDesc"].as_str(), job["jobGroup"].as_i64()), (Some("renamed"), Some(group)), "the group stays");
        assert_eq!(xxl(&client, prefix, "startJob", "jw_admin_tool_token", json!({"id": id})).await["code"], 200);
        assert_eq!(app.api.get_job(id).await.body["triggerStatus"], 1);
        assert_eq!(xxl(&client, prefix, "stopJob", "jw_admin_tool_token", json!({"id": id})).await["code"], 200);
        assert_eq!(app.api.get_job(id).await.body["triggerStatus"], 0);
        // an address the group does not have is refused; one it has is called
        let res = xxl(&client, prefix, "triggerJob", "jw_admin_tool_token",
            json!({"id": id, "executorParam": "once", "addressList": "http://127.0.0.1:2/"})).await;
        assert_eq!(res["code"], 500, "{res}");
        assert!(res["msg"].as_str().unwrap().contains("addressList"), "{res}");
        let res = xxl(&client, prefix, "triggerJob", "jw_admin_tool_token",
            json!({"id": id, "executorParam": "once", "addressList": "http://127.0.0.1:1/"})).await;
        assert_eq!(res["code"], 200, "{res}");
        let log = res["data"]["logIds"][0].as_i64().unwrap();
        let run = app.api.get_log(log).await.body;
        assert_eq!((run["triggerType"].as_str(), run["executorParam"].as_str()), (Some("MANUAL"), Some("once")));
        assert_eq!(xxl(&client, prefix, "removeJob", "jw_admin_tool_token", json!({"id": id})).await["code"], 200);
        assert_eq!(app.api.get_job(id).await.status, 404);
    }

    // bad input: XXL-JOB's envelope with code 500 and a message naming the field
    let res = xxl(&client, "", "addJob", "jw_admin_tool_token", json!({"jobGroup": group})).await;
    assert_eq!(res["code"], 500);
    assert!(res["msg"].as_str().unwrap().contains("jobDesc"), "{res}");
    let res = xxl(&client, "", "startJob", "jw_admin_tool_token", json!({})).await;
    assert!(res["msg"].as_str().unwrap().contains("id"), "{res}");
    let res = client
        .raw_with(Method::POST, "/api/stopJob", Some("application/json"), b"[1]".to_vec(),
            &[("XXL-JOB-ACCESS-TOKEN", "jw_admin_tool_token")])
        .await;
    assert_eq!(res.body["code"], 500);

    // the executors' access token is not an API token; nor is nothing
    let res = xxl(&client, "", "addJob", &app.token, add.clone()).await;
    assert_eq!(res["code"], 401, "{res}");
    let res = client.call_with(Method::POST, "/api/addJob", Some(add.clone()), &[]).await;
    assert_eq!(res.body["code"], 401);

    // a normal user's token reaches only that user's groups
    let user = app.store.insert_user(&User {
        id: 0, username: "tool-user".into(), password_hash: hash_password("tool-user-pass").unwrap(),
        role: Role::User, permission: vec![group as i32],
    }).await.unwrap();
    token(app, user, "jw_scoped_tool_token").await;
    let mut theirs = add.clone();
    theirs["jobGroup"] = json!(other);
    let res = xxl(&client, "", "addJob", "jw_scoped_tool_token", theirs).await;
    assert_eq!(res["code"], 500);
    assert!(res["msg"].as_str().unwrap().contains("permission"), "{res}");
    let res = xxl(&client, "", "addJob", "jw_scoped_tool_token", add.clone()).await;
    assert_eq!(res["code"], 200, "{res}");
    let foreign = app.job(other, "not theirs").await;
    let res = xxl(&client, "", "removeJob", "jw_scoped_tool_token", json!({"id": foreign})).await;
    assert_eq!(res["code"], 500);
    assert_eq!(app.api.get_job(foreign).await.status, 200, "nothing removed");
});
