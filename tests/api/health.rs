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

/// Java's `HttpURLConnection` (what XXL-JOB executors call with) reuses an idle connection for
/// 5 s: the admin keeps it open longer, so a reuse never meets the close on its way.
#[actix_web::test]
async fn a_connection_idle_past_javas_keep_alive_still_answers() {
    let Some(app) = TestApp::start(Backend::Sqlite).await else {
        return;
    };
    let port = app.base.rsplit(':').next().and_then(|p| p.parse().ok());
    let port = port.expect("the base URL ends with the port");
    let idle = std::time::Duration::from_secs(6);
    let [first, second] =
        crate::kit::idle_reuse::statuses_around_idle(port, "/healthz", idle).await;
    assert_eq!(first.as_deref(), Some("http/1.1 200 ok"));
    assert_eq!(
        second.as_deref(),
        Some("http/1.1 200 ok"),
        "closed while idle"
    );
    app.finish().await;
}
