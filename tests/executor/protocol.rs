//! Executor-side rows of wire-protocol.md, against the library and the binary.

use std::time::Duration;

use crate::executor_support::*;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

both_targets!(
    envelope_method_path_and_token,
    run_demo_callback_and_log,
    rejections_name_the_problem,
    glue_disabled_refuses_scripts,
    idle_beat_busy_and_repeat_trigger,
    accepted_runs_are_known_to_log_and_across_a_restart,
    kill_unknown_and_log_unknown,
    scripts_get_args_and_exit_codes,
    glue_version_replaces_worker,
    registration_and_remove_on_stop,
    v35_admin_protocol,
    builtin_handlers,
    oversized_body_is_refused,
    dropped_runs_lose_their_logs,
    a_connection_idle_past_javas_keep_alive_still_answers,
);

async fn envelope_method_path_and_token(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        token: Some("s3cret".into()),
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let client = crate::kit::api::client(std::time::Duration::from_secs(5), true);

    let beat = exec.post_raw("/beat", "", &[]).await;
    assert_eq!(beat, json!({"code":200,"msg":"Success"}));
    // 2.4 admins send a JSON empty string
    assert_eq!(exec.post_raw("/beat", r#""""#, &[]).await["code"], 200);

    let mut get = client
        .get(format!("{}beat", exec.base))
        .send()
        .await
        .unwrap();
    assert_eq!(get.status().as_u16(), 200);
    let body: serde_json::Value = serde_json::from_slice(&get.body().await.unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"code":500,"msg":"invalid request, HttpMethod not support."})
    );

    assert_eq!(
        exec.post_raw("/foo", "", &[]).await,
        json!({"code":500,"msg":"invalid request, uri-mapping(/foo) not found."})
    );

    for token in [None, Some("wrong")] {
        let mut req = client.post(format!("{}beat", exec.base));
        if let Some(t) = token {
            req = req.insert_header(("XXL-JOB-ACCESS-TOKEN", t));
        }
        let mut resp = req.send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        let body: serde_json::Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap();
        assert_eq!(body, json!({"code":500,"msg":"The access token is wrong."}));
    }
    // the token is checked before the path, as in Java
    let mut resp = client
        .post(format!("{}foo", exec.base))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap();
    assert_eq!(body["msg"], "The access token is wrong.");

    // 3.5 admins add XXL-JOB-APPNAME: ours passes, another is refused
    let ok = exec
        .post_raw("/beat", "", &[("XXL-JOB-APPNAME", APP)])
        .await;
    assert_eq!(ok["code"], 200);
    let other = exec
        .post_raw("/beat", "", &[("XXL-JOB-APPNAME", "someone-else")])
        .await;
    assert_eq!(
        other,
        json!({"code":500,"msg":"invalid request, accessToken or appname invalid."})
    );

    for path in [
        "/run",
        "/trigger",
        "/kill",
        "/idleBeat",
        "/log",
        "/dropLogs",
    ] {
        let a = exec.post_raw(path, "not json", &[]).await;
        assert_eq!(a["code"], 500, "{path}: {a}");
        let msg = a["msg"].as_str().unwrap();
        assert!(msg.starts_with("request error:"), "{path}: {msg}");
    }
}

async fn run_demo_callback_and_log(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        token: Some("tok".into()),
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let p = bean(1, "demoJobHandler", "hello");
    assert_eq!(exec.run(&p).await, json!({"code":200,"msg":"Success"}));
    let cb = admin.wait_callback(p.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 200);
    assert_eq!(cb.log_date_time, p.log_date_time);

    let req = admin
        .requests("/api/callback")
        .into_iter()
        .find(|r| r.body.contains(&p.log_id.to_string()))
        .unwrap();
    assert_eq!(req.headers["xxl-job-access-token"], "tok");
    assert_eq!(req.headers["xxl-job-appname"], APP);
    assert!(req.headers["content-type"].starts_with("application/json"));
    let body: serde_json::Value = serde_json::from_str(&req.body).unwrap();
    let item = &body[0];
    assert_eq!(item["logId"], p.log_id);
    assert_eq!(item["logDateTim"], p.log_date_time);
    assert_eq!(item["handleCode"], 200);
    assert!(
        item.get("handleMsg").is_none(),
        "null handleMsg omitted: {item}"
    );

    // /trigger is /run for 3.5 admins
    let q = bean(1, "demoJobHandler", "again");
    let a = exec
        .post_raw("/trigger", &serde_json::to_string(&q).unwrap(), &[])
        .await;
    assert_eq!(a["code"], 200);
    admin.wait_callback(q.log_id, WAIT).await;

    let log = exec
        .post(
            "/log",
            json!({"logDateTim": p.log_date_time, "logId": p.log_id, "fromLineNum": 1}),
        )
        .await;
    assert_eq!(log["code"], 200);
    let data = &log["data"];
    assert!(data.is_object(), "{log}");
    // the `logDateTim` spelling is 2.x's and 3.3-3.4's alike: the page goes under both keys
    // (2.x reads `content`, 3.x `data`), whatever admins this executor talked to before
    assert_eq!(log["content"], *data, "{log}");
    let v35 = exec
        .post(
            "/log",
            json!({"logDateTime": p.log_date_time, "logId": p.log_id, "fromLineNum": 1}),
        )
        .await;
    assert_eq!(v35["data"], *data);
    assert!(
        v35.get("content").is_none(),
        "a 3.5 admin's page is written once: {v35}"
    );
    let content = data["logContent"].as_str().unwrap();
    assert!(content.contains("xxl-job job execute start"), "{content}");
    assert!(content.contains("Param:hello"), "{content}");
    assert!(content.contains("param: hello"), "{content}");
    assert!(content.contains("execute end(finish)"), "{content}");
    assert!(content.contains("[jobwheel]"), "{content}");
    assert_eq!(data["isEnd"], false);
    let total = data["toLineNum"].as_i64().unwrap();
    assert!(total >= 3, "{data}");
    // 3.5 spelling and a later starting line
    let tail = exec
        .post(
            "/log",
            json!({"logDateTime": p.log_date_time, "logId": p.log_id, "fromLineNum": total}),
        )
        .await;
    assert_eq!(tail["data"]["fromLineNum"], total);
    assert_eq!(tail["data"]["toLineNum"], total);
    assert_eq!(
        tail["data"]["logContent"].as_str().unwrap().lines().count(),
        1
    );
}

async fn rejections_name_the_problem(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;

    let a = exec.run(&bean(2, "nope", "")).await;
    assert_eq!(a, json!({"code":500,"msg":"job handler [nope] not found."}));

    let mut p = shell(3, "echo hi", 1);
    p.glue_type = "GLUE_RUBY".into();
    let a = exec.run(&p).await;
    assert_eq!(
        a,
        json!({"code":500,"msg":"glueType[GLUE_RUBY] is not valid."})
    );

    let mut p = shell(4, "class X {}", 1);
    p.glue_type = "GLUE_GROOVY".into();
    let a = exec.run(&p).await;
    assert_eq!(a["code"], 500);
    let msg = a["msg"].as_str().unwrap();
    assert!(
        msg.contains("GLUE_GROOVY") && msg.contains("not supported"),
        "{msg}"
    );

    // a missing interpreter fails the run (not the trigger) and names it
    let mut p = shell(5, "Write-Output 'hi'", 1);
    p.glue_type = "GLUE_POWERSHELL".into();
    if which("pwsh") {
        return;
    }
    exec.run_ok(&p).await;
    let cb = admin.wait_callback(p.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    let msg = cb.handle_msg.unwrap();
    assert!(msg.contains("[pwsh]"), "{msg}");
    assert!(exec.log_of(&p).await.contains("[pwsh]"));
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

async fn glue_disabled_refuses_scripts(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        glue_enabled: false,
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let a = exec.run(&shell(6, "echo hi", 1)).await;
    assert_eq!(
        a,
        json!({"code":500,"msg":"fail, current glue type [GLUE(Shell)] not supported."})
    );
    let mut p = shell(6, "print(1)", 1);
    p.glue_type = "GLUE_PYTHON".into();
    assert_eq!(exec.run(&p).await["code"], 500);
    // BEAN jobs still run
    exec.run_ok(&bean(7, "demoJobHandler", "")).await;
}

async fn idle_beat_busy_and_repeat_trigger(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 8})).await,
        json!({"code":200,"msg":"Success"})
    );
    let first = shell(8, "sleep 2", 1);
    exec.run_ok(&first).await;
    let queued = shell(8, "sleep 2", 1);
    exec.run_ok(&queued).await;
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 8})).await,
        json!({"code":500,"msg":"job thread is running or has trigger queue."})
    );
    // the queued logId again is refused; the running one is no longer queued
    let a = exec.run(&queued).await;
    assert_eq!(
        a,
        json!({"code":500,"msg":format!("repeat trigger job, logId:{}", queued.log_id)})
    );
    // another job is unaffected
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 9})).await["code"],
        200
    );
    admin.wait_callback(queued.log_id, WAIT).await;
    assert_eq!(
        exec.post("/idleBeat", json!({"jobId": 8})).await["code"],
        200
    );
}

/// What lets an admin that sends a run again (its first admin died) not run it twice: the
/// executor that has it says so to `/log` while it is queued, and refuses it after a restart.
async fn accepted_runs_are_known_to_log_and_across_a_restart(target: Target) {
    let admin = FakeAdmin::start();
    let dir = tempfile::tempdir().unwrap();
    let opts = || Opts {
        log_dir: Some(dir.path().to_path_buf()),
        ..Opts::default()
    };
    let mut exec = Exec::start(target, &admin, opts()).await;
    let first = shell(12, "sleep 2", 1);
    exec.run_ok(&first).await;
    let queued = shell(12, "sleep 2", 1);
    exec.run_ok(&queued).await;
    let log = exec
        .post(
            "/log",
            json!({"logDateTim": queued.log_date_time, "logId": queued.log_id, "fromLineNum": 1}),
        )
        .await;
    assert_eq!(
        log["data"],
        json!({"fromLineNum":1,"toLineNum":0,"logContent":"run accepted, no log line yet","isEnd":false})
    );
    // on disk within moments of the accept, so a SIGKILL loses nothing after that
    let line = format!(" {}\n", queued.log_id);
    let kept = poll_for(WAIT, || {
        std::fs::read_to_string(dir.path().join("accepted-log-ids"))
            .ok()
            .filter(|text| text.contains(&line))
    })
    .await;
    assert!(kept.is_some(), "the accepted log ids are kept on disk");
    match target {
        Target::Binary => exec.kill(),
        Target::Library => exec.stop().await,
    }
    // a fresh admin: the first one's requests hold the first life's registration and port
    let admin = FakeAdmin::start();
    let again = Exec::start(target, &admin, opts()).await;
    for p in [&first, &queued] {
        assert_eq!(
            again.run(p).await,
            json!({"code":500,"msg":format!("repeat trigger job, logId:{}", p.log_id)}),
            "a run accepted before the restart is not run again"
        );
    }
    again.run_ok(&shell(12, "true", 1)).await;
}

async fn kill_unknown_and_log_unknown(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    assert_eq!(
        exec.post("/kill", json!({"jobId": 404})).await,
        json!({"code":200,"msg":"Success","content":"job thread already killed.","data":"job thread already killed."})
    );
    let log = exec
        .post(
            "/log",
            json!({"logDateTim": now_ms(), "logId": 987654, "fromLineNum": 1}),
        )
        .await;
    assert_eq!(
        log["data"],
        json!({"fromLineNum":1,"toLineNum":0,"logContent":"readLog fail, logFile not exists","isEnd":true})
    );
}

async fn scripts_get_args_and_exit_codes(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let mut p = shell(10, "echo \"args:$1|$2|$3\"; echo to-stderr >&2; exit 0", 1);
    p.executor_params = "p a r".into();
    p.broadcast_index = 2;
    p.broadcast_total = 5;
    exec.run_ok(&p).await;
    assert_eq!(admin.wait_callback(p.log_id, WAIT).await.handle_code, 200);
    let log = exec.log_of(&p).await;
    assert!(log.contains("args:p a r|2|5"), "{log}");
    assert!(log.contains("to-stderr"), "{log}");
    assert!(log.contains("script file:"), "{log}");
    assert!(exec.log_dir.join("gluesource/10_1.sh").exists());

    let q = shell(11, "exit 3", 1);
    exec.run_ok(&q).await;
    let cb = admin.wait_callback(q.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    assert_eq!(
        cb.handle_msg.as_deref(),
        Some("script exit value(3) is failed")
    );

    if which("python3") {
        let mut py = shell(12, "import sys\nprint('py', sys.argv[1:])", 1);
        py.glue_type = "GLUE_PYTHON".into();
        py.executor_params = "x".into();
        exec.run_ok(&py).await;
        assert_eq!(admin.wait_callback(py.log_id, WAIT).await.handle_code, 200);
        let log = exec.log_of(&py).await;
        assert!(log.contains("py ['x', '0', '1']"), "{log}");
    }
}

async fn glue_version_replaces_worker(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let v1 = shell(13, "echo version-one", 100);
    exec.run_ok(&v1).await;
    admin.wait_callback(v1.log_id, WAIT).await;
    let v2 = shell(13, "echo version-two", 200);
    exec.run_ok(&v2).await;
    admin.wait_callback(v2.log_id, WAIT).await;
    assert!(exec.log_of(&v2).await.contains("version-two"));
    assert!(!exec.log_dir.join("gluesource/13_100.sh").exists());
    assert!(exec.log_dir.join("gluesource/13_200.sh").exists());
    // the same version again reuses the script
    let again = shell(13, "echo ignored-source", 200);
    exec.run_ok(&again).await;
    admin.wait_callback(again.log_id, WAIT).await;
    assert!(exec.log_of(&again).await.contains("version-two"));
}

async fn registration_and_remove_on_stop(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        token: Some("tok".into()),
        ..Opts::default()
    };
    let mut exec = Exec::start(target, &admin, opts).await;
    let reg = poll_for(WAIT, || admin.requests("/api/registry").into_iter().next())
        .await
        .expect("registered");
    let body: serde_json::Value = serde_json::from_str(&reg.body).unwrap();
    // the XXL-JOB fields, and jobwheel's load (an idle executor's) that Java admins ignore
    assert_eq!(
        body,
        json!({"registryGroup":"EXECUTOR","registryKey":APP,"registryValue":exec.base,
               "load": {"running": 0, "queued": 0, "limit": 0, "jobs": []}})
    );
    assert!(exec.base.starts_with("http://127.0.0.1:") && exec.base.ends_with('/'));
    assert_eq!(reg.headers["xxl-job-access-token"], "tok");
    assert_eq!(reg.headers["xxl-job-appname"], APP);
    assert!(reg.headers["content-type"].starts_with("application/json"));
    exec.stop().await;
    let removed = poll_for(WAIT, || {
        admin.requests("/api/registryRemove").into_iter().next()
    })
    .await
    .expect("registryRemove sent");
    let removed: serde_json::Value = serde_json::from_str(&removed.body).unwrap();
    assert_eq!(
        removed,
        json!({"registryGroup":"EXECUTOR","registryKey":APP,"registryValue":exec.base})
    );
}

async fn v35_admin_protocol(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        protocol: jobwheel::protocol::AdminProtocol::V35,
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let p = bean(14, "demoJobHandler", "");
    exec.run_ok(&p).await;
    admin.wait_callback(p.log_id, WAIT).await;
    let req = admin.requests("/api/callback").pop().unwrap();
    let body: serde_json::Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(
        body,
        json!({"callbackList":[{"logId":p.log_id,"logDateTime":p.log_date_time,"handleCode":200}]})
    );
}

async fn builtin_handlers(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let mut shard = bean(15, "shardingJobHandler", "");
    shard.broadcast_index = 2;
    shard.broadcast_total = 3;
    exec.run_ok(&shard).await;
    let cb = admin.wait_callback(shard.log_id, WAIT).await;
    assert_eq!(cb.handle_msg.as_deref(), Some("shard 2/3"));
    assert!(exec.log_of(&shard).await.contains("index = 2, total = 3"));

    // the fake admin doubles as the target: it answers {"code":200,"msg":"Success"} (28 bytes);
    // being on 127.0.0.1, it is out of reach by default (SSRF)
    let param = json!({"url": format!("{}/probe/http", admin.url()), "method": "post", "body": "ping", "timeout": 5});
    let refused = bean(16, "httpJobHandler", &param.to_string());
    exec.run_ok(&refused).await;
    let cb = admin.wait_callback(refused.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    let msg = cb.handle_msg.unwrap_or_default();
    assert!(
        msg.contains("127.0.0.1 is a loopback address") && msg.contains("--http-job-allow-private"),
        "{msg}"
    );
    // so is a name that resolves to one
    let hop = json!({"url": "http://localhost:1/", "timeout": 2});
    let named = bean(16, "httpJobHandler", &hop.to_string());
    exec.run_ok(&named).await;
    let cb = admin.wait_callback(named.log_id, WAIT).await;
    assert!(cb.handle_msg.unwrap_or_default().contains("loopback"));
    assert!(
        admin.requests("/probe/http").is_empty(),
        "nothing reached the target"
    );

    let allowed = Opts {
        http_job_allow_private: true,
        ..Opts::default()
    };
    // its own admin, so its registration (which carries its port) is the only one there
    let results = FakeAdmin::start();
    let exec = Exec::start(target, &results, allowed).await;
    let http = bean(16, "httpJobHandler", &param.to_string());
    exec.run_ok(&http).await;
    let cb = results.wait_callback(http.log_id, WAIT).await;
    assert_eq!(
        (cb.handle_code, cb.handle_msg.as_deref()),
        (200, Some("status 200, body 28 bytes"))
    );
    let probe = admin.requests("/probe/http");
    assert_eq!(probe.len(), 1);
    assert_eq!(probe[0].body, "ping");
    // redirects are followed, each hop to a checked address
    let param = json!({"url": format!("{}/probe/redirect", admin.url()), "timeout": 5});
    let redirected = bean(16, "httpJobHandler", &param.to_string());
    exec.run_ok(&redirected).await;
    let cb = results.wait_callback(redirected.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 200, "{:?}", cb.handle_msg);
    assert_eq!(admin.requests("/probe/http").len(), 2);

    let bad = bean(16, "httpJobHandler", "not json");
    exec.run_ok(&bad).await;
    let cb = results.wait_callback(bad.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    assert!(cb.handle_msg.unwrap().starts_with("param must be JSON"));

    let refused = json!({"url": "http://127.0.0.1:1/", "timeout": 2});
    let down = bean(16, "httpJobHandler", &refused.to_string());
    exec.run_ok(&down).await;
    let cb = results.wait_callback(down.log_id, WAIT).await;
    assert_eq!(cb.handle_code, 500);
    assert!(cb.handle_msg.unwrap().starts_with("request failed"));
}

async fn oversized_body_is_refused(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    // a 4 MiB script is fine
    let mut big = shell(17, "exit 0", 1);
    big.glue_source = format!("exit 0\n#{}", "x".repeat(4 * 1024 * 1024));
    exec.run_ok(&big).await;
    assert_eq!(admin.wait_callback(big.log_id, WAIT).await.handle_code, 200);
    let mut huge = shell(18, "exit 0", 1);
    huge.glue_source = "x".repeat(5 * 1024 * 1024 + 1);
    let a = exec.run(&huge).await;
    assert_eq!(
        a,
        json!({"code":500,"msg":"request error:request body larger than 5242880 bytes"})
    );
}

/// jobwheel's `/dropLogs`: the admin's retention removed runs by their job's own bounds, and
/// their lines go; other runs' lines, in the same segment, stay.
async fn dropped_runs_lose_their_logs(target: Target) {
    let admin = FakeAdmin::start();
    let opts = Opts {
        token: Some("tok".into()),
        ..Opts::default()
    };
    let exec = Exec::start(target, &admin, opts).await;
    let (gone, kept) = (
        bean(1, "demoJobHandler", "a"),
        bean(1, "demoJobHandler", "b"),
    );
    for p in [&gone, &kept] {
        exec.run_ok(p).await;
        assert_eq!(admin.wait_callback(p.log_id, WAIT).await.handle_code, 200);
    }
    let read = |p: &jobwheel::protocol::TriggerParam| json!({"logDateTime": p.log_date_time, "logId": p.log_id, "fromLineNum": 1});
    let body = json!({"logs": [{"logId": gone.log_id, "logDateTime": gone.log_date_time}]});

    let mut stranger = awc::Client::default()
        .post(format!("{}dropLogs", exec.base))
        .send_body(body.to_string())
        .await
        .unwrap();
    let refused: serde_json::Value =
        serde_json::from_slice(&stranger.body().await.unwrap()).unwrap();
    assert_eq!(refused["msg"], "The access token is wrong.");
    assert!(exec.post("/log", read(&gone)).await["data"]["logContent"]
        .as_str()
        .unwrap()
        .contains("param: a"));

    let too_many: Vec<_> = (0..1_001)
        .map(|i| json!({"logId": i, "logDateTime": gone.log_date_time}))
        .collect();
    let a = exec.post("/dropLogs", json!({ "logs": too_many })).await;
    assert_eq!(a["code"], 500);
    assert!(
        a["msg"].as_str().unwrap().starts_with("logs: at most 1000"),
        "{a}"
    );

    let a = exec.post("/dropLogs", body.clone()).await;
    assert_eq!(a["code"], 200, "{a}");
    assert_eq!(a["msg"], "dropped 1 run log(s)");
    // no line is left (the executor still remembers accepting the run, and says so)
    let log = exec.post("/log", read(&gone)).await;
    assert_eq!(log["data"]["toLineNum"], 0, "{log}");
    assert!(
        !log["data"]["logContent"]
            .as_str()
            .unwrap()
            .contains("param"),
        "{log}"
    );
    let log = exec.post("/log", read(&kept)).await;
    assert!(
        log["data"]["logContent"]
            .as_str()
            .unwrap()
            .contains("param: b"),
        "{log}"
    );
    // asked again, nothing is left to drop
    assert_eq!(
        exec.post("/dropLogs", body).await["msg"],
        "dropped 0 run log(s)"
    );
}

/// Java XXL-JOB admins call with `HttpURLConnection`, which reuses an idle connection for 5 s:
/// the executor keeps it open longer, so a reuse never meets the close on its way.
async fn a_connection_idle_past_javas_keep_alive_still_answers(target: Target) {
    let admin = FakeAdmin::start();
    let exec = Exec::start(target, &admin, Opts::default()).await;
    let port = exec.base.trim_end_matches('/').rsplit(':').next();
    let port = port
        .and_then(|p| p.parse().ok())
        .expect("the base URL ends with the port");
    let idle = Duration::from_secs(6);
    let [first, second] = crate::kit::idle_reuse::statuses_around_idle(port, "/beat", idle).await;
    assert_eq!(first.as_deref(), Some("http/1.1 200 ok"));
    assert_eq!(
        second.as_deref(),
        Some("http/1.1 200 ok"),
        "closed while idle"
    );
}
