//! `GET /healthz` on an in-process admin: 200 while the database answers, 503 after it stops.

use crate::kit::{TestApp, ADMIN_PASSWORD};
use jobwheel::store::Backend;

async fn health_follows_the_database(backend: Backend) {
    let Some(app) = TestApp::start(backend).await else {
        return;
    };
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);
    let url = format!("{}/healthz", app.base);
    let mut res = client.get(&url).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "UP");

    // the first user exists with the given password, hashed with a salt
    let admin_user = app.store.get_user_by_name("admin").await.unwrap().unwrap();
    assert!(jobwheel::password::verify_password(
        ADMIN_PASSWORD,
        &admin_user.password_hash
    ));

    app.close_admin_database().await;
    let mut res = client.get(&url).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 503);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "DOWN");
    assert!(body["error"].as_str().unwrap_or_default().len() > 3);
    app.finish().await;
}

backends!(run: health_follows_the_database);
