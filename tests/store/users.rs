//! Users, sessions and API tokens.

use jobwheel::model::{ApiToken, Role, Session, User};
use jobwheel::store::StoreError;

backends!(db: users_sessions_and_tokens, |db| {
    let s = &db.store;
    assert_eq!(s.count_users().await.unwrap(), 0);
    let mut u = User {
        id: 0,
        username: "alice".into(),
        password_hash: "$argon2id$x".into(),
        role: Role::User,
        permission: vec![1, 2],
    };
    let id = s.insert_user(&u).await.unwrap();
    u.id = id;
    assert_eq!(s.get_user(id).await.unwrap().unwrap(), u);
    assert_eq!(s.get_user_by_name("alice").await.unwrap().unwrap(), u);
    assert!(matches!(
        s.insert_user(&u).await,
        Err(StoreError::Duplicate(_))
    ));
    u.role = Role::Admin;
    u.permission = vec![];
    u.password_hash = "$argon2id$y".into();
    assert!(s.update_user(&u).await.unwrap());
    assert_eq!(s.get_user(id).await.unwrap().unwrap(), u);
    let bob = s
        .insert_user(&User {
            id: 0,
            username: "bob".into(),
            ..u.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        s.list_users()
            .await
            .unwrap()
            .iter()
            .map(|u| u.username.as_str())
            .collect::<Vec<_>>(),
        vec!["alice", "bob"]
    );

    let session = Session {
        token_hash: "h1".into(),
        user_id: id,
        created_time: 10,
        expire_time: 100,
    };
    s.insert_session(&session).await.unwrap();
    s.insert_session(&Session {
        token_hash: "h2".into(),
        expire_time: 50,
        ..session.clone()
    })
    .await
    .unwrap();
    assert_eq!(s.get_session("h1", 20).await.unwrap().unwrap(), session);
    assert!(s.get_session("h1", 100).await.unwrap().is_none(), "expired");
    assert_eq!(s.delete_expired_sessions(60).await.unwrap(), 1);
    assert!(s.delete_session("h1").await.unwrap());
    assert!(!s.delete_session("h1").await.unwrap());

    let token = ApiToken {
        id: 0,
        name: "ci".into(),
        token_hash: "th".into(),
        user_id: id,
        created_time: 10,
        last_used_time: 0,
        expire_time: 0,
    };
    let tid = s.insert_api_token(&token).await.unwrap();
    assert!(matches!(
        s.insert_api_token(&token).await,
        Err(StoreError::Duplicate(_))
    ));
    let used = s.use_api_token("th", 500).await.unwrap().unwrap();
    assert_eq!((used.id, used.last_used_time), (tid, 500));
    assert!(s.use_api_token("nope", 500).await.unwrap().is_none());
    let expiring = s
        .insert_api_token(&ApiToken {
            token_hash: "th2".into(),
            expire_time: 100,
            ..token.clone()
        })
        .await
        .unwrap();
    assert!(
        s.use_api_token("th2", 200).await.unwrap().is_none(),
        "expired"
    );
    assert_eq!(
        s.list_api_tokens(id)
            .await
            .unwrap()
            .iter()
            .map(|t| t.id)
            .collect::<Vec<_>>(),
        vec![expiring, tid]
    );
    assert!(s.delete_api_token(expiring).await.unwrap());
    assert!(!s.delete_api_token(expiring).await.unwrap());

    s.insert_session(&Session {
        token_hash: "h3".into(),
        ..session.clone()
    })
    .await
    .unwrap();
    assert!(s.delete_user(id).await.unwrap());
    assert!(s.get_user(id).await.unwrap().is_none());
    assert!(s.get_session("h3", 20).await.unwrap().is_none());
    assert!(s.list_api_tokens(id).await.unwrap().is_empty());
    assert!(!s.delete_user(id).await.unwrap());
    assert!(s.get_user(bob).await.unwrap().is_some());
});
