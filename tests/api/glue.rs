//! REST API v1 GLUE: a script job's source saved as versions, listed newest first without
//! sources, viewed one at a time, restored as a new save, pruned to the newest 30; BEAN jobs,
//! bad remarks, other groups' jobs and other jobs' versions refused.

use actix_web::http::Method;
use serde_json::{json, Value};

use crate::kit::{Api, TestApp};

/// A GLUE_SHELL job in `group` whose source is `echo v0`.
async fn shell_job(app: &TestApp, group: i64, desc: &str) -> i64 {
    let res = app
        .api
        .create_job(json!({
            "jobGroup": group,
            "jobDesc": desc,
            "glueType": "GLUE_SHELL",
            "glueSource": "echo v0",
            "glueRemark": "created",
        }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    res.id()
}

/// Saves `source` with `remark`, expecting success; the answer's body.
async fn save(api: &Api, job: i64, source: &str, remark: &str) -> Value {
    let res = api
        .save_glue(job, json!({"glueSource": source, "glueRemark": remark}))
        .await;
    assert_eq!(res.status, 200, "{}", res.body);
    res.body
}

/// The ids of the listed versions, as listed.
fn version_ids(glue: &Value) -> Vec<i64> {
    glue["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_i64().unwrap())
        .collect()
}

backends!(app: glue_is_saved_listed_viewed_and_restored, |app| {
    let api = &app.api;
    let g = app.group("glue-app").await;
    let job = shell_job(app, g, "script").await;

    let glue = api.get_glue(job).await;
    assert_eq!(glue.status, 200, "{}", glue.body);
    assert_eq!(glue.body["current"]["glueType"], "GLUE_SHELL");
    assert_eq!(glue.body["current"]["glueSource"], "echo v0");
    assert_eq!(glue.body["current"]["glueRemark"], "created");
    assert!(glue.body["current"]["glueUpdatetime"].as_i64().unwrap() > 0);
    assert_eq!(glue.body["versions"], json!([]));

    let first_source = "#!/bin/bash\necho '<script>alert(1)</script>'\n";
    let saved = save(api, job, first_source, "  first  ").await;
    assert_eq!(saved["current"]["glueSource"], first_source);
    assert_eq!(saved["current"]["glueRemark"], "first", "remarks are trimmed");
    let first = version_ids(&saved)[0];
    let item = &saved["versions"][0];
    assert_eq!(item["glueType"], "GLUE_SHELL");
    assert_eq!(item["glueRemark"], "first");
    assert!(item["addTime"].as_i64().unwrap() > 0);
    assert!(item.get("glueSource").is_none(), "the list carries no sources: {item}");

    save(api, job, "echo second", "second").await;
    let glue = api.get_glue(job).await.body;
    let ids = version_ids(&glue);
    assert_eq!(ids.len(), 2);
    assert!(ids[0] > ids[1], "newest first: {ids:?}");
    assert_eq!(ids[1], first);
    assert_eq!(glue["versions"][0]["glueRemark"], "second");
    assert_eq!(glue["current"]["glueSource"], "echo second");
    // the job itself runs the saved source
    let stored = api.get_job(job).await.body;
    assert_eq!(
        (stored["glueSource"].as_str(), stored["glueRemark"].as_str()),
        (Some("echo second"), Some("second"))
    );

    let one = api.get_glue_version(job, first).await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.body["id"], first);
    assert_eq!(one.body["glueSource"], first_source);
    assert_eq!(one.body["glueRemark"], "first");
    assert_eq!(one.body["glueType"], "GLUE_SHELL");

    // restoring saves the old source as the newest version
    let before = api.get_job(job).await.body["glueUpdatetime"].as_i64().unwrap();
    let res = api.restore_glue(job, first).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let remark = format!("restored from version {first} (first)");
    assert_eq!(res.body["current"]["glueSource"], first_source);
    assert_eq!(res.body["current"]["glueRemark"], remark.as_str());
    let ids = version_ids(&res.body);
    assert_eq!(ids.len(), 3);
    assert!(ids[0] > ids[1]);
    assert_eq!(res.body["versions"][0]["glueRemark"], remark.as_str());
    let stored = api.get_job(job).await.body;
    assert_eq!(stored["glueSource"], first_source);
    assert!(stored["glueUpdatetime"].as_i64().unwrap() >= before);
});

backends!(app: only_the_newest_thirty_versions_are_kept, |app| {
    let api = &app.api;
    let g = app.group("glue-prune").await;
    let job = shell_job(app, g, "busy script").await;
    let first = version_ids(&save(api, job, "echo 0", "save 0").await)[0];
    let mut last = Value::Null;
    for i in 1..32 {
        last = save(api, job, &format!("echo {i}"), &format!("save {i}")).await;
    }
    let glue = api.get_glue(job).await.body;
    assert_eq!(glue["versions"], last["versions"]);
    let ids = version_ids(&glue);
    assert_eq!(ids.len(), 30);
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    assert_eq!(glue["versions"][0]["glueRemark"], "save 31");
    assert_eq!(glue["versions"][29]["glueRemark"], "save 2");
    // the pruned ones are gone
    assert_eq!(api.get_glue_version(job, first).await.status, 404);
    assert_eq!(api.restore_glue(job, first).await.status, 404);
    // a restore counts as a save: the oldest kept one goes
    let res = api.restore_glue(job, ids[29]).await;
    assert_eq!(res.status, 200, "{}", res.body);
    let after = version_ids(&res.body);
    assert_eq!(after.len(), 30);
    assert!(!after.contains(&ids[29]));
    assert_eq!(res.body["current"]["glueSource"], "echo 2");
});

backends!(app: bad_glue_input_is_refused_by_field, |app| {
    let api = &app.api;
    let g = app.group("glue-bad").await;
    let job = shell_job(app, g, "script").await;
    let other = shell_job(app, g, "other script").await;
    let bean = app.job(g, "bean job").await;

    // a BEAN job has no script to save or restore; reading says what it is
    let res = api
        .save_glue(bean, json!({"glueSource": "echo", "glueRemark": "x"}))
        .await;
    assert_eq!((res.status, res.field().as_str()), (400, "glueType"), "{}", res.body);
    assert_eq!(api.restore_glue(bean, 1).await.field(), "glueType");
    let glue = api.get_glue(bean).await;
    assert_eq!(glue.status, 200);
    assert_eq!(glue.body["current"]["glueType"], "BEAN");

    for (body, field) in [
        (json!({"glueSource": "echo"}), "glueRemark"),
        (json!({"glueSource": "echo", "glueRemark": "   "}), "glueRemark"),
        (json!({"glueSource": "echo", "glueRemark": "r".repeat(129)}), "glueRemark"),
        (json!({"glueRemark": "no source"}), "glueSource"),
        (json!({"glueSource": "echo a\u{0}b", "glueRemark": "nul"}), "glueSource"),
        (json!({"glueSource": "echo", "glueRemark": "nul\u{0}"}), "glueRemark"),
    ] {
        let res = api.save_glue(job, body.clone()).await;
        assert_eq!((res.status, res.field().as_str()), (400, field), "{body}: {}", res.body);
    }
    let res = api
        .call_with(Method::PUT, &format!("/api/v1/jobs/{job}/glue"), Some(json!([1])), &[])
        .await;
    assert_eq!(res.status, 400, "{}", res.body);
    // nothing above was saved; 128 characters (not bytes) are fine
    assert_eq!(api.get_glue(job).await.body["versions"], json!([]));
    let remark = "备".repeat(128);
    let saved = save(api, job, "echo long remark", &remark).await;
    assert_eq!(saved["current"]["glueRemark"], remark.as_str());
    let version = version_ids(&saved)[0];

    // unknown jobs and versions, and another job's version, are 404
    assert_eq!(api.get_glue(999_999).await.status, 404);
    let res = api
        .save_glue(999_999, json!({"glueSource": "echo", "glueRemark": "x"}))
        .await;
    assert_eq!(res.status, 404);
    assert_eq!(api.get_glue_version(job, 999_999).await.status, 404);
    assert_eq!(api.restore_glue(job, 999_999).await.status, 404);
    assert_eq!(api.get_glue_version(other, version).await.status, 404);
    assert_eq!(api.restore_glue(other, version).await.status, 404);
    assert_eq!(api.get_glue(other).await.body["current"]["glueSource"], "echo v0");
    let res = api
        .call_with(Method::GET, &format!("/api/v1/jobs/{job}/glue/latest"), None, &[])
        .await;
    assert_eq!(res.status, 400, "{}", res.body);
});

backends!(app: normal_users_only_edit_glue_in_permitted_groups, |app| {
    let mine = app.group("glue-mine").await;
    let theirs = app.group("glue-theirs").await;
    let my_job = shell_job(app, mine, "my script").await;
    let their_job = shell_job(app, theirs, "their script").await;
    let their_version = version_ids(&save(&app.api, their_job, "echo theirs", "admin").await)[0];
    let bob = app.normal_user("bob", &[mine]).await;

    assert_eq!(bob.get_glue(their_job).await.status, 403);
    assert_eq!(bob.get_glue_version(their_job, their_version).await.status, 403);
    let res = bob
        .save_glue(their_job, json!({"glueSource": "rm -rf /", "glueRemark": "mine now"}))
        .await;
    assert_eq!(res.status, 403, "{}", res.body);
    assert_eq!(bob.restore_glue(their_job, their_version).await.status, 403);
    // a version of their job through his own job's path is still not his
    assert_eq!(bob.get_glue_version(my_job, their_version).await.status, 404);
    assert_eq!(bob.restore_glue(my_job, their_version).await.status, 404);
    let glue = app.api.get_glue(their_job).await.body;
    assert_eq!(glue["current"]["glueSource"], "echo theirs");
    assert_eq!(version_ids(&glue), vec![their_version]);

    let saved = save(&bob, my_job, "echo mine", "bob's change").await;
    assert_eq!(saved["current"]["glueSource"], "echo mine");
    assert_eq!(bob.get_glue(my_job).await.status, 200);
});

backends!(app: script_jobs_start_from_a_template_and_never_run_an_empty_script, |app| {
    let api = &app.api;
    let g = app.group("template-app").await;
    // a new script job without a source gets its type's starting script
    for (glue, mark) in [
        ("GLUE_SHELL", "#!/bin/bash"),
        ("GLUE_PYTHON", "sys.argv[1]"),
        ("GLUE_NODEJS", "process.argv"),
        ("GLUE_PHP", "<?php"),
        ("GLUE_POWERSHELL", "$args[0]"),
        ("GLUE_GROOVY", "extends IJobHandler"),
    ] {
        let res = api
            .create_job(json!({"jobGroup": g, "jobDesc": glue, "glueType": glue}))
            .await;
        assert_eq!(res.status, 201, "{glue}: {}", res.body);
        let source = res.body["glueSource"].as_str().unwrap();
        assert!(source.contains(mark), "{glue}: {source}");
    }
    // an explicitly empty or blank script is refused, on create, update and save
    for blank in ["", "  \n\t"] {
        let res = api
            .create_job(json!({"jobGroup": g, "jobDesc": "blank", "glueType": "GLUE_PYTHON",
                "glueSource": blank}))
            .await;
        assert_eq!((res.status, res.field()), (400, "glueSource".into()), "{}", res.body);
        assert!(res.error().contains("GLUE_PYTHON job with no script"), "{}", res.body);
    }
    let job = shell_job(app, g, "script").await;
    let res = api.update_job(job, json!({"glueSource": " "})).await;
    assert_eq!((res.status, res.field()), (400, "glueSource".into()), "{}", res.body);
    let res = api
        .save_glue(job, json!({"glueSource": "\n\n", "glueRemark": "nothing"}))
        .await;
    assert_eq!((res.status, res.field()), (400, "glueSource".into()), "{}", res.body);
    let glue = api.get_glue(job).await.body;
    assert_eq!(glue["current"]["glueSource"], "echo v0", "nothing was saved");
    assert_eq!(glue["versions"], json!([]));
    // a BEAN job switched to a script starts from the template; BEAN keeps no source
    let bean = app.job(g, "bean").await;
    assert_eq!(api.get_job(bean).await.body["glueSource"], "");
    let res = api.update_job(bean, json!({"glueType": "GLUE_SHELL"})).await;
    assert_eq!(res.status, 200, "{}", res.body);
    assert!(res.body["glueSource"].as_str().unwrap().starts_with("#!/bin/bash"));
});
