//! First start on an empty database: the admin user and the standalone demo.

use crate::kit::TestDb;
use jobwheel::bootstrap::{ensure_access_token, ensure_admin_user, ensure_demo, DEMO_CRON};
use jobwheel::clock::now_ms;
use jobwheel::model::{ScheduleType, TRIGGER_STATUS_RUNNING};
use jobwheel::password::verify_password;
use jobwheel::store::ACCESS_TOKEN_SETTING;

backends!(db: first_start_creates_admin_and_demo_once, |db| {
    let s = &db.store;
    let generated = ensure_admin_user(s, None)
        .await
        .unwrap()
        .expect("a generated password");
    assert_eq!(generated.len(), 16);
    let admin = s.get_user_by_name("admin").await.unwrap().unwrap();
    assert!(verify_password(&generated, &admin.password_hash));
    // second start: nothing changes, a given password is ignored
    assert!(ensure_admin_user(s, Some("other")).await.unwrap().is_none());
    assert!(!verify_password(
        "other",
        &s.get_user_by_name("admin")
            .await
            .unwrap()
            .unwrap()
            .password_hash
    ));

    let job_id = ensure_demo(s, chrono_tz::Tz::UTC)
        .await
        .unwrap()
        .expect("demo job");
    let job = s.get_job(job_id).await.unwrap().unwrap();
    assert_eq!(job.executor_handler, "demoJobHandler");
    assert_eq!(
        (job.schedule_type, job.schedule_conf.as_str()),
        (ScheduleType::Cron, DEMO_CRON)
    );
    assert_eq!(job.trigger_status, TRIGGER_STATUS_RUNNING);
    assert!(job.trigger_next_time > now_ms() - 1_000 && job.trigger_next_time <= now_ms() + 10_000);
    assert_eq!(job.trigger_next_time % 10_000, 0);
    let group = s.get_group(job.job_group).await.unwrap().unwrap();
    assert_eq!(group.app_name, "jobwheel-local");
    assert!(
        ensure_demo(s, chrono_tz::Tz::UTC).await.unwrap().is_none(),
        "only on an empty database"
    );
});

backends!(db: the_access_token_is_generated_once_and_shared, |db| {
    let s = &db.store;
    let first = ensure_access_token(s, None).await.unwrap();
    assert_eq!(first.len(), 32);
    assert!(first.chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!(
        s.get_setting(ACCESS_TOKEN_SETTING)
            .await
            .unwrap()
            .as_deref(),
        Some(first.as_str()),
        "stored, so every admin of a cluster uses it"
    );
    // a restart (or a second admin) finds it
    assert_eq!(ensure_access_token(s, None).await.unwrap(), first);
    // the flag wins without replacing what is stored
    assert_eq!(
        ensure_access_token(s, Some("flag-token-123"))
            .await
            .unwrap(),
        "flag-token-123"
    );
    assert_eq!(ensure_access_token(s, None).await.unwrap(), first);
    // two admins starting on an empty database at once agree on one token
    let fresh = TestDb::create(db.store.backend()).await.unwrap();
    let (a, b) = tokio::join!(
        ensure_access_token(&fresh.store, None),
        ensure_access_token(&fresh.store, None)
    );
    assert_eq!(a.unwrap(), b.unwrap());
    fresh.drop_db().await;
});
