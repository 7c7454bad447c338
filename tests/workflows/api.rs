//! The REST contract: bad definitions refused with what is wrong, nothing half-saved, and who may
//! do what.

use serde_json::{json, Value};

use crate::support::*;

backends!(app: cycles_dangling_edges_and_other_bad_graphs_are_refused_naming_the_problem, |admin| {
    let handlers = ["a", "b"];
    let (group, jobs) = group_with_jobs(admin, "wf-bad", &handlers).await;
    let nodes = vec![job_node("a", &jobs), job_node("b", &jobs)];
    let cases = [
        (json!([edge("a", "b", "SUCCESS"), edge("b", "a", "SUCCESS")]), "edges", "cycle"),
        (json!([edge("a", "ghost", "SUCCESS")]), "edges[0].to", "no node 'ghost'"),
        (json!([edge("a", "a", "SUCCESS")]), "edges[0].to", "its own node"),
        (json!([edge("a", "b", "TRUE")]), "edges[0].when", "only a DECISION node"),
        (json!([edge("a", "b", "SOMETIMES")]), "edges[0].when", "SUCCESS"),
    ];
    for (edges, field, words) in cases {
        let body = json!({"name": "bad", "jobGroup": group, "nodes": nodes, "edges": edges});
        let res = admin.api.request("POST", "/api/v1/workflows", Some(body.clone())).await;
        assert_eq!(res.status, 400, "{edges}: {}", res.body);
        assert_eq!(res.field(), field, "{}", res.body);
        assert!(res.error().contains(words), "{words}: {}", res.body);
        let check = admin.api.request("POST", "/api/v1/workflows/validate", Some(body)).await;
        assert_eq!((check.status, &check.body["valid"]), (200, &json!(false)), "{}", check.body);
        assert_eq!(check.body["errors"][0]["field"], field);
    }
    // unknown jobs, jobs of another group, bad expressions, too many nodes
    let other_group = admin.group("wf-other").await;
    let foreign = admin.job(other_group, "elsewhere").await;
    let cases = [
        (json!([{"key": "x", "kind": "JOB", "jobId": 999_999}]), "nodes[0].jobId", "does not exist"),
        (json!([{"key": "x", "kind": "JOB", "jobId": foreign}]), "nodes[0].jobId", "does not exist"),
        (json!([{"key": "x", "kind": "DECISION", "expression": "context.rows >"}]), "nodes[0].expression", "does not compile"),
        (json!([{"key": "x y", "kind": "JOB", "jobId": jobs["a"]}]), "nodes[0].key", "letters, digits"),
        (Value::Array((0..=200).map(|i| json!({"key": format!("n{i}"), "kind": "JOB", "jobId": jobs["a"]})).collect()), "nodes", "at most 200"),
    ];
    for (nodes, field, words) in cases {
        let body = json!({"name": "bad", "jobGroup": group, "nodes": nodes, "edges": []});
        let res = admin.api.request("POST", "/api/v1/workflows", Some(body)).await;
        assert_eq!(res.status, 400, "{}", res.body);
        assert_eq!(res.field(), field, "{}", res.body);
        assert!(res.error().contains(words), "{words}: {}", res.body);
    }
    // a body over the size limits is refused for that alone, nothing looked at node by node
    let huge: Vec<Value> = (0..5_000).map(|i| json!({"key": "", "kind": "DECISION", "expression": format!("{i} >")})).collect();
    let body = json!({"name": "big", "jobGroup": group, "nodes": huge, "edges": []});
    let check = admin.api.request("POST", "/api/v1/workflows/validate", Some(body)).await;
    assert_eq!(check.body["errors"], json!([{"field": "nodes", "error": "a workflow may have at most 200 nodes, not 5000"}]), "{}", check.body);
    // a node behind a cycle with no child of its own: the cycle is named (the walk once panicked)
    let node = |key: &str| json!({"key": key, "kind": "JOB", "jobId": jobs["a"]});
    let edges = [edge("x", "y", "SUCCESS"), edge("y", "x", "SUCCESS"), edge("x", "a", "SUCCESS")];
    let body = json!({"name": "behind", "jobGroup": group, "nodes": [node("a"), node("x"), node("y")], "edges": edges});
    let check = admin.api.request("POST", "/api/v1/workflows/validate", Some(body)).await;
    assert_eq!(check.status, 200, "{}", check.body);
    assert!(check.body["errors"][0]["error"].as_str().unwrap_or_default().contains("x → y → x"), "{}", check.body);
    // several problems at once: each named with its field, and each worded in the reader's language
    let body = json!({"name": "bad", "jobGroup": group, "nodes": nodes,
        "edges": [edge("a", "ghost", "SUCCESS"), edge("b", "b", "SUCCESS")]});
    let res = admin.api.request("POST", "/api/v1/workflows", Some(body.clone())).await;
    assert_eq!((res.status, res.field().as_str()), (400, "edges[0].to"), "{}", res.body);
    let fields: Vec<&str> = res.body["errors"].as_array().expect("every problem").iter().filter_map(|p| p["field"].as_str()).collect();
    assert_eq!(fields, ["edges[0].to", "edges[1].to"], "{}", res.body);
    let zh = admin.api.call_with(actix_web::http::Method::POST, "/api/v1/workflows", Some(body), &[("Accept-Language", "zh-CN")]).await;
    assert_eq!(zh.body["errors"][0]["error"], "连线 a → ghost 的终点不存在：没有节点 'ghost'", "{}", zh.body);
    assert_eq!(zh.body["errors"][1]["error"], "连线 b → b 指向了自身节点", "{}", zh.body);
    // nothing was saved
    let list = admin.api.request("GET", "/api/v1/workflows", None).await;
    assert_eq!(list.body["total"], 0, "{}", list.body);

    // a valid body validates to its layers
    let (good, good_jobs) = group_with_jobs(admin, "wf-good", &["a", "b", "c", "d"]).await;
    let body = diamond(good, &good_jobs);
    let check = admin.api.request("POST", "/api/v1/workflows/validate", Some(body)).await;
    assert_eq!(check.body["valid"], true, "{}", check.body);
    assert_eq!(check.body["layers"], json!([["a"], ["b", "c"], ["d"]]));
});

backends!(app: a_workflow_is_read_changed_drawn_and_deleted_and_its_jobs_are_kept, |admin| {
    let handlers = ["a", "b", "c", "d"];
    let (group, jobs) = group_with_jobs(admin, "wf-crud", &handlers).await;
    let id = create_workflow(admin, diamond(group, &jobs)).await;
    let got = admin.api.request("GET", &format!("/api/v1/workflows/{id}"), None).await;
    assert_eq!(got.body["version"], 1);
    assert_eq!(got.body["maxConcurrentRuns"], 1);
    assert_eq!(got.body["nodes"].as_array().unwrap().len(), 4);
    // a change of the graph counts a version; of the name does not
    let res = admin.api.request("PUT", &format!("/api/v1/workflows/{id}"), Some(json!({"name": "renamed"}))).await;
    assert_eq!((res.status, &res.body["version"]), (200, &json!(1)), "{}", res.body);
    let res = admin.api.request("PUT", &format!("/api/v1/workflows/{id}"), Some(json!({"edges": [edge("a", "b", "SUCCESS")]}))).await;
    assert_eq!((res.status, &res.body["version"]), (200, &json!(2)), "{}", res.body);
    let bad = admin.api.request("PUT", &format!("/api/v1/workflows/{id}"), Some(json!({"edges": [edge("a", "zz", "SUCCESS")]}))).await;
    assert_eq!(bad.status, 400);
    let kept = admin.api.request("GET", &format!("/api/v1/workflows/{id}"), None).await;
    assert_eq!(kept.body["edges"].as_array().unwrap().len(), 1, "a refused change changes nothing");

    let svg = admin.api.page(&format!("/api/v1/workflows/{id}/graph.svg")).await;
    assert_eq!(svg.status, 200);
    assert!(svg.html.starts_with("<svg") && svg.html.contains(r#"data-key="d""#), "{}", svg.html);
    assert!(svg.html.contains("node job a"), "captions name the jobs: {}", svg.html);

    // a job a workflow uses is not deleted, nor moved to another group
    let res = admin.api.delete_job(jobs["a"]).await;
    assert_eq!(res.status, 409, "{}", res.body);
    assert!(res.error().contains("renamed"), "{}", res.body);
    let res = admin.api.update_job(jobs["a"], json!({"executorRouteStrategy": "SHARDING_BROADCAST"})).await;
    assert_eq!((res.status, res.field().as_str()), (400, "executorRouteStrategy"), "{}", res.body);

    let res = admin.api.request("DELETE", &format!("/api/v1/workflows/{id}"), None).await;
    assert_eq!(res.status, 204, "{}", res.body);
    assert_eq!(admin.api.delete_job(jobs["a"]).await.status, 204);
    // the changes are audited
    let audit = admin.api.request("GET", "/api/v1/audit?targetType=workflow", None).await;
    let actions: Vec<&str> = audit.body["items"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    for a in ["workflow.create", "workflow.update", "workflow.delete"] {
        assert!(actions.contains(&a), "{a} in {actions:?}");
    }
});

backends!(app: users_see_and_run_only_the_workflows_of_their_groups, |admin| {
    let (mine, my_jobs) = group_with_jobs(admin, "wf-mine", &["a", "b", "c", "d"]).await;
    let (theirs, their_jobs) = group_with_jobs(admin, "wf-theirs", &["a", "b", "c", "d"]).await;
    let my_wf = create_workflow(admin, diamond(mine, &my_jobs)).await;
    let their_wf = create_workflow(admin, diamond(theirs, &their_jobs)).await;
    let user = admin.normal_user("wfuser", &[mine]).await;
    let list = user.request("GET", "/api/v1/workflows", None).await;
    assert_eq!(list.body["total"], 1, "{}", list.body);
    assert_eq!(user.request("GET", &format!("/api/v1/workflows/{their_wf}"), None).await.status, 403);
    assert_eq!(user.request("POST", &format!("/api/v1/workflows/{their_wf}/trigger"), None).await.status, 403);
    assert_eq!(user.request("GET", &format!("/api/v1/workflows/{my_wf}"), None).await.status, 200);
    // a workflow of my group may not run a job of theirs
    let mut body = diamond(mine, &my_jobs);
    body["nodes"][0]["jobId"] = json!(their_jobs["a"]);
    let res = user.request("POST", "/api/v1/workflows", Some(body)).await;
    assert_eq!((res.status, res.field().as_str()), (400, "nodes[0].jobId"), "{}", res.body);
    // nor may I put a workflow in their group
    let res = user.request("POST", "/api/v1/workflows", Some(diamond(theirs, &their_jobs))).await;
    assert_eq!(res.status, 403, "{}", res.body);
    let runs = user.request("GET", "/api/v1/workflow-runs", None).await;
    assert_eq!(runs.status, 200);
});
