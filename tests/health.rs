//! `GET /healthz` on an in-process admin: 200 while the database answers, 503 after it stops.

mod common;

use jobwheel::config::{AdminArgs, AdminSettings, ConfigFile};
use jobwheel::startup::Admin;
use jobwheel::store::Backend;

async fn health_follows_the_database(backend: Backend) {
    let Some(db) = common::TestDb::create(backend).await else {
        return;
    };
    let args = AdminArgs {
        bind: Some("127.0.0.1:0".into()),
        database_url: Some(db.url.clone()),
        admin_password: Some("s3cret-pass".into()),
        ..Default::default()
    };
    let settings = AdminSettings::resolve(&args, &ConfigFile::none()).unwrap();
    let admin = Admin::build(&settings).await.unwrap();
    let port = admin.port();
    let store = admin.store().clone();
    actix_web::rt::spawn(admin.run_until_stopped());

    let client = awc::Client::default();
    let url = format!("http://127.0.0.1:{port}/healthz");
    let mut res = client.get(&url).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "UP");

    // the first user exists with the given password, hashed with a salt
    let admin_user = db.store.get_user_by_name("admin").await.unwrap().unwrap();
    assert!(jobwheel::password::verify_password(
        "s3cret-pass",
        &admin_user.password_hash
    ));

    store.close().await;
    let mut res = client.get(&url).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 503);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "DOWN");
    assert!(body["error"].as_str().unwrap_or_default().len() > 3);
    db.drop_db().await;
}

#[actix_web::test]
async fn sqlite() {
    health_follows_the_database(Backend::Sqlite).await;
}

#[actix_web::test]
async fn postgres() {
    health_follows_the_database(Backend::Postgres).await;
}

#[actix_web::test]
async fn mysql() {
    health_follows_the_database(Backend::MySql).await;
}
